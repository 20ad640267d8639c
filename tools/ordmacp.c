// SPDX-License-Identifier: GPL-2.0
/*
 * ordmacp - copy a file to another host over ordma.
 *
 *   ordmacp [-q] SRC HOST:PORT:DST     send SRC, stored there as DST
 *   ordmacp [-q] --listen [ADDR:]PORT  receive one file, then exit
 *
 * HOST and ADDR are an IPv4 address, a host name or an IPv6 address in
 * brackets ([2001:db8::1]); the listener's default address is 0.0.0.0.
 *
 * The protocol is a few messages on one channel:
 *   sender -> receiver   hello: magic, version, chunk size, file size, DST
 *   receiver -> sender   status: 0, or the errno of opening DST
 *   sender -> receiver   the file, in messages of one chunk (the last shorter)
 *   sender -> receiver   status: the sender's checksum of what it sent
 *   receiver -> sender   status: the receiver's checksum of what it got and
 *                        wrote, and 0 or EBADMSG when they differ
 * and the sender hangs up first: the kernel drops a message that reached a
 * channel but met no receive yet when the channel closes, so the receiver
 * waits (10 s at most) for the sender to leave after its last status.
 * Both ends compare the two checksums (FNV-1a 64 over 64-bit little-endian
 * words, the length mixed in last) and exit with status 3 when they differ.
 * Data moves with up to CP_NBUF messages in flight.
 *
 * Exit status: 0 copied and checked, 1 error, 2 usage, 3 checksum mismatch.
 * A progress bar goes to stderr when it is a terminal and the file is larger
 * than 16 MiB. The environment variable ORDMACP_TEST_CORRUPT=1 makes the
 * receiver flip one bit of the first chunk it gets (to test the check).
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <libordma.h>

#define CP_MAGIC	"ORDMACP"
#define CP_VERSION	1
#define CP_CHUNK	(4U << 20)
#define CP_MIN_CHUNK	4096U
#define CP_MAX_CHUNK	(64U << 20)
#define CP_NBUF		4
#define CP_PATH_MAX	4096
#define CP_BAR_MIN	(16ULL << 20)
#define CP_TIMEOUT_MS	60000

#define EXIT_USAGE	2
#define EXIT_MISMATCH	3

struct cp_hello {
	char magic[8];
	__le32 version;
	__le32 chunk;
	__le64 size;
	__le32 mode;
	__le32 pathlen;
	char path[CP_PATH_MAX];
};

struct cp_status {
	char magic[8];
	__le32 error;		/* a positive errno, or 0 */
	__le32 __pad;
	__le64 checksum;
};

static int quiet;

/* -- checksum: FNV-1a 64 over little-endian 64-bit words ------------------ */

#define FNV_OFFSET	0xcbf29ce484222325ULL
#define FNV_PRIME	0x100000001b3ULL

struct cp_sum {
	__u64 h;
	__u64 len;
	unsigned char part[8];
	unsigned int npart;
};

static void sum_init(struct cp_sum *s)
{
	memset(s, 0, sizeof(*s));
	s->h = FNV_OFFSET;
}

static void sum_word(struct cp_sum *s, const unsigned char *p)
{
	__u64 w;

	memcpy(&w, p, 8);
	s->h = (s->h ^ le64toh(w)) * FNV_PRIME;
}

static void sum_update(struct cp_sum *s, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t n;

	s->len += len;
	if (s->npart) {
		n = 8 - s->npart < len ? 8 - s->npart : len;
		memcpy(s->part + s->npart, p, n);
		s->npart += n;
		p += n;
		len -= n;
		if (s->npart < 8)
			return;
		sum_word(s, s->part);
		s->npart = 0;
	}
	for (; len >= 8; p += 8, len -= 8)
		sum_word(s, p);
	memcpy(s->part, p, len);
	s->npart = len;
}

static __u64 sum_final(struct cp_sum *s)
{
	struct cp_sum t = *s;

	if (t.npart) {
		memset(t.part + t.npart, 0, 8 - t.npart);
		sum_word(&t, t.part);
	}
	return (t.h ^ t.len) * FNV_PRIME;
}

/* -- output ------------------------------------------------------------------ */

static void err(const char *what, long long e)
{
	fprintf(stderr, "ordmacp: %s: %s\n", what, strerror((int)-e));
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

struct cp_bar {
	int on;
	__u64 total;
	double start, last;
};

static void bar_init(struct cp_bar *b, __u64 total)
{
	b->on = !quiet && total > CP_BAR_MIN && isatty(STDERR_FILENO);
	b->total = total;
	b->start = now_s();
	b->last = 0;
}

static void bar_show(struct cp_bar *b, __u64 done)
{
	double t = now_s(), rate;
	char line[31];
	int width = sizeof(line) - 1, fill, i;

	if (!b->on || (done < b->total && t - b->last < 0.1))
		return;
	b->last = t;
	fill = b->total ? (int)(done * width / b->total) : width;
	for (i = 0; i < width; i++)
		line[i] = i < fill ? '#' : ' ';
	line[width] = 0;
	rate = t > b->start ? done / (t - b->start) / (1 << 20) : 0;
	fprintf(stderr, "\r[%s] %3d%% %.1f/%.1f MiB %.1f MiB/s", line,
		b->total ? (int)(done * 100 / b->total) : 100,
		done / 1048576.0, b->total / 1048576.0, rate);
	if (done >= b->total) {
		fputc('\n', stderr);
		b->on = 0;
	}
}

static void summary(const char *verb, __u64 size, double start, __u64 mine,
		    __u64 theirs)
{
	double t = now_s() - start;

	if (quiet)
		return;
	printf("ordmacp: %s %llu bytes in %.2f s (%.1f MiB/s), checksum %016llx, peer %016llx: %s\n",
	       verb, (unsigned long long)size, t,
	       t > 0 ? size / t / 1048576.0 : 0.0, (unsigned long long)mine,
	       (unsigned long long)theirs, mine == theirs ? "match" : "MISMATCH");
	fflush(stdout);
}

/* -- addresses ---------------------------------------------------------------- */

/* "[v6]" or "v4/name"; *rest points after the host part. */
static int split_host(char *s, char **host, char **rest)
{
	char *e;

	if (*s == '[') {
		e = strchr(s, ']');
		if (!e || e[1] != ':')
			return -1;
		*e = 0;
		*host = s + 1;
		*rest = e + 2;
		return 0;
	}
	e = strchr(s, ':');
	if (!e)
		return -1;
	*e = 0;
	*host = s;
	*rest = e + 1;
	return 0;
}

static int resolve(const char *host, const char *port,
		   struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints, *res;
	int ret;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	ret = getaddrinfo(host, port, &hints, &res);
	if (ret) {
		fprintf(stderr, "ordmacp: %s: %s\n", host, gai_strerror(ret));
		return -1;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* -- messages ------------------------------------------------------------------ */

static void status_fill(struct cp_status *st, int error, __u64 sum)
{
	memset(st, 0, sizeof(*st));
	memcpy(st->magic, CP_MAGIC, 8);
	st->error = htole32(error);
	st->checksum = htole64(sum);
}

static int send_status(struct ordma *o, __u32 chan, int error, __u64 sum)
{
	struct cp_status st;
	long long ret;

	status_fill(&st, error, sum);
	ret = ordma_send(o, chan, &st, sizeof(st));
	if (ret != sizeof(st)) {
		err("sending status", ret < 0 ? ret : -EPROTO);
		return -1;
	}
	return 0;
}

static int recv_status(struct ordma *o, __u32 chan, struct cp_status *st)
{
	long long ret = ordma_recv(o, chan, st, sizeof(*st));

	if (ret != sizeof(*st) || memcmp(st->magic, CP_MAGIC, 8)) {
		err("receiving status", ret < 0 ? ret : -EPROTO);
		return -1;
	}
	return 0;
}

static void *alloc_bufs(size_t chunk)
{
	void *p = malloc((size_t)CP_NBUF * chunk);

	if (!p)
		err("buffers", -ENOMEM);
	return p;
}

/* -- sender ------------------------------------------------------------------------ */

static int cp_send(const char *src, char *target)
{
	char *host, *port, *dst;
	struct sockaddr_storage ss;
	struct cp_status st;
	struct cp_hello h;
	struct cp_bar bar;
	struct cp_sum sum;
	struct ordma *o;
	struct stat sb;
	socklen_t slen;
	__u64 size, nchunks, next = 0, done = 0, sent = 0, mysum;
	/* Bit d: chunk done + d was sent (completions may come out of order). */
	unsigned int early = 0;
	size_t chunk = CP_CHUNK, len;
	long long n;
	unsigned char *bufs;
	int fd, ret, rc = 1;
	double start;
	__u32 chan;

	dst = split_host(target, &host, &port) ? NULL : strchr(port, ':');
	if (!dst || !dst[1]) {
		fprintf(stderr, "ordmacp: want HOST:PORT:DST, not %s\n", target);
		return EXIT_USAGE;
	}
	*dst++ = 0;
	if (strlen(dst) >= CP_PATH_MAX) {
		err(dst, -ENAMETOOLONG);
		return 1;
	}
	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb)) {
		err(src, -errno);
		return 1;
	}
	if (!S_ISREG(sb.st_mode)) {
		fprintf(stderr, "ordmacp: %s: not a regular file\n", src);
		return 1;
	}
	size = sb.st_size;
	nchunks = (size + chunk - 1) / chunk;
	if (resolve(host, port, &ss, &slen))
		return 1;
	bufs = alloc_bufs(chunk);
	if (!bufs)
		return 1;
	ret = ordma_open(&o, 0);
	if (ret) {
		err("/dev/ordma", ret);
		return 1;
	}
	ret = ordma_connect(o, (struct sockaddr *)&ss, slen, 0, &chan);
	if (ret) {
		err("connect", ret);
		goto out;
	}
	start = now_s();

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CP_MAGIC, 8);
	h.version = htole32(CP_VERSION);
	h.chunk = htole32(chunk);
	h.size = htole64(size);
	h.mode = htole32(sb.st_mode & 07777);
	h.pathlen = htole32(strlen(dst));
	memcpy(h.path, dst, strlen(dst));
	len = offsetof(struct cp_hello, path) + strlen(dst);
	n = ordma_send(o, chan, &h, len);
	if (n != (long long)len) {
		err("sending hello", n < 0 ? n : -EPROTO);
		goto out;
	}
	if (recv_status(o, chan, &st))
		goto out;
	if (st.error) {
		fprintf(stderr, "ordmacp: %s:%s: %s\n", host, dst,
			strerror(le32toh(st.error)));
		goto out;
	}

	/* The file, CP_NBUF chunks in flight; chunk i uses buffer i % CP_NBUF. */
	sum_init(&sum);
	bar_init(&bar, size);
	while (done < nchunks) {
		struct ordma_cqe *cqe;
		struct ordma_sqe *sqe;

		while (next < nchunks && next - done < CP_NBUF) {
			unsigned char *b = bufs + (next % CP_NBUF) * chunk;
			__u64 off = next * chunk;
			size_t want = size - off < chunk ? size - off : chunk;
			size_t got = 0;

			while (got < want) {
				n = pread(fd, b + got, want - got, off + got);
				if (n < 0 && errno == EINTR)
					continue;
				if (n <= 0) {
					err(src, n ? -errno : -EIO);
					goto out;
				}
				got += n;
			}
			sum_update(&sum, b, want);
			sqe = ordma_get_sqe(o);
			ordma_prep_send(sqe, chan, b, want, next);
			ret = ordma_submit(o);
			if (ret != 1) {
				err("submit", ret < 0 ? ret : -EPROTO);
				goto out;
			}
			next++;
		}
		ret = ordma_wait_cqe_timeout(o, &cqe, CP_TIMEOUT_MS);
		if (ret) {
			err("waiting", ret);
			goto out;
		}
		if (cqe->cookie < done || cqe->cookie >= next ||
		    early >> (cqe->cookie - done) & 1 || cqe->res < 0 ||
		    (__u64)cqe->res != (size - cqe->cookie * chunk < chunk ?
					size - cqe->cookie * chunk : chunk)) {
			err("sending", cqe->res < 0 ? cqe->res : -EPROTO);
			goto out;
		}
		early |= 1U << (cqe->cookie - done);
		sent += cqe->res;
		ordma_cqe_seen(o, cqe);
		for (; early & 1; early >>= 1)
			done++;
		bar_show(&bar, sent);
	}
	bar_show(&bar, size);

	mysum = sum_final(&sum);
	if (send_status(o, chan, 0, mysum) || recv_status(o, chan, &st))
		goto out;
	summary("sent", size, start, mysum, le64toh(st.checksum));
	if (le64toh(st.checksum) != mysum) {
		fprintf(stderr, "ordmacp: checksum mismatch: sent %016llx, %s got %016llx\n",
			(unsigned long long)mysum, host,
			(unsigned long long)le64toh(st.checksum));
		rc = EXIT_MISMATCH;
	} else if (st.error) {
		fprintf(stderr, "ordmacp: %s:%s: %s\n", host, dst,
			strerror(le32toh(st.error)));
	} else {
		rc = 0;
	}
out:
	ordma_close(o);
	free(bufs);
	close(fd);
	return rc;
}

/* -- receiver ---------------------------------------------------------------------- */

#define COOKIE_LINGER	(~0ULL - 1)

/*
 * After our last message, wait (a while) for the sender to hang up: a
 * message that reached it but met no receive yet would be dropped if we
 * closed first.
 */
static void linger(struct ordma *o, __u32 chan)
{
	struct ordma_sqe *sqe = ordma_get_sqe(o);
	struct ordma_cqe *cqe;
	char c;

	if (!sqe)
		return;
	ordma_prep_recv(sqe, chan, &c, 1, COOKIE_LINGER);
	if (ordma_submit(o) != 1)
		return;
	while (!ordma_wait_cqe_timeout(o, &cqe, 10000)) {
		int last = cqe->cookie == COOKIE_LINGER;

		ordma_cqe_seen(o, cqe);
		if (last)
			break;
	}
}

static int write_all(int fd, const unsigned char *p, size_t len, __u64 off)
{
	ssize_t n;

	while (len) {
		n = pwrite(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -EIO;
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

#define COOKIE_TRAILER	(~0ULL)

static int cp_recv_file(struct ordma *o, __u32 chan, int fd,
			const char *dst, __u64 size, size_t chunk)
{
	__u64 nchunks = (size + chunk - 1) / chunk, next = 0, done = 0;
	long long res[CP_NBUF];
	int corrupt = getenv("ORDMACP_TEST_CORRUPT") != NULL;
	int trailer_posted = 0, trailer_done = 0, ret, i;
	struct cp_status trailer, st;
	unsigned char *bufs;
	struct cp_bar bar;
	struct cp_sum sum;
	double start = now_s();
	__u64 mysum;

	bufs = alloc_bufs(chunk);
	if (!bufs)
		return 1;
	for (i = 0; i < CP_NBUF; i++)
		res[i] = 0;
	sum_init(&sum);
	bar_init(&bar, size);
	while (done < nchunks || !trailer_done) {
		struct ordma_cqe *cqe;
		struct ordma_sqe *sqe;

		/* Receives match messages in the order they are posted. */
		while (next < nchunks && next - done < CP_NBUF) {
			sqe = ordma_get_sqe(o);
			ordma_prep_recv(sqe, chan, bufs + (next % CP_NBUF) * chunk,
					chunk, next);
			res[next % CP_NBUF] = 0;
			next++;
		}
		if (next == nchunks && !trailer_posted) {
			sqe = ordma_get_sqe(o);
			ordma_prep_recv(sqe, chan, &trailer, sizeof(trailer),
					COOKIE_TRAILER);
			trailer_posted = 1;
		}
		ret = ordma_submit(o);
		if (ret < 0 && ret != -EAGAIN) {
			err("submit", ret);
			goto fail;
		}
		ret = ordma_wait_cqe_timeout(o, &cqe, CP_TIMEOUT_MS);
		if (ret) {
			err("waiting", ret);
			goto fail;
		}
		if (cqe->res < 0) {
			err("receiving", cqe->res);
			goto fail;
		}
		if (cqe->cookie == COOKIE_TRAILER) {
			if (cqe->res != sizeof(trailer) ||
			    memcmp(trailer.magic, CP_MAGIC, 8)) {
				err("receiving status", -EPROTO);
				goto fail;
			}
			trailer_done = 1;
		} else {
			res[cqe->cookie % CP_NBUF] = cqe->res;
		}
		ordma_cqe_seen(o, cqe);

		/* Checksum and write the chunks in order. */
		while (done < next && res[done % CP_NBUF]) {
			unsigned char *b = bufs + (done % CP_NBUF) * chunk;
			__u64 off = done * chunk;
			size_t want = size - off < chunk ? size - off : chunk;

			if ((__u64)res[done % CP_NBUF] != want) {
				err("receiving", -EPROTO);
				goto fail;
			}
			if (corrupt && done == 0)
				b[want / 2] ^= 0x10;
			sum_update(&sum, b, want);
			ret = write_all(fd, b, want, off);
			if (ret) {
				err(dst, ret);
				goto fail;
			}
			res[done % CP_NBUF] = 0;
			done++;
			bar_show(&bar, off + want);
		}
	}
	bar_show(&bar, size);
	free(bufs);
	mysum = sum_final(&sum);
	st = trailer;
	if (fsync(fd) && errno != EINVAL) {
		ret = errno;
		err(dst, -ret);
		if (!send_status(o, chan, ret, mysum))
			linger(o, chan);
		return 1;
	}
	if (send_status(o, chan, mysum == le64toh(st.checksum) ? 0 : EBADMSG,
			mysum))
		return 1;
	linger(o, chan);
	summary("received", size, start, mysum, le64toh(st.checksum));
	if (mysum != le64toh(st.checksum)) {
		fprintf(stderr, "ordmacp: checksum mismatch: got %016llx, sender sent %016llx\n",
			(unsigned long long)mysum,
			(unsigned long long)le64toh(st.checksum));
		return EXIT_MISMATCH;
	}
	return 0;
fail:
	free(bufs);
	return 1;
}

static int cp_listen(char *arg)
{
	char *host = "0.0.0.0", *port = arg, *dst;
	struct sockaddr_storage ss;
	struct cp_hello h;
	struct ordma *o;
	socklen_t slen;
	__u32 lis, chan, pathlen;
	size_t chunk;
	long long n;
	int fd, ret, rc = 1;

	if (strchr(arg, ':') && split_host(arg, &host, &port)) {
		fprintf(stderr, "ordmacp: want [ADDR:]PORT, not %s\n", arg);
		return EXIT_USAGE;
	}
	if (resolve(host, port, &ss, &slen))
		return 1;
	ret = ordma_open(&o, 0);
	if (ret) {
		err("/dev/ordma", ret);
		return 1;
	}
	ret = ordma_listen(o, (struct sockaddr *)&ss, slen, 1, &lis);
	if (ret) {
		err("listen", ret);
		goto out;
	}
	if (!quiet)
		fprintf(stderr, "ordmacp: listening on %s port %s\n", host, port);
	ret = ordma_accept(o, lis, 0, &chan, NULL, NULL);
	if (ret) {
		err("accept", ret);
		goto out;
	}
	ordma_chan_close(o, lis);

	n = ordma_recv(o, chan, &h, sizeof(h));
	if (n < 0) {
		err("receiving hello", n);
		goto out;
	}
	pathlen = le32toh(h.pathlen);
	chunk = le32toh(h.chunk);
	if (n < (long long)offsetof(struct cp_hello, path) ||
	    memcmp(h.magic, CP_MAGIC, 8) || le32toh(h.version) != CP_VERSION ||
	    !pathlen || pathlen != n - offsetof(struct cp_hello, path) ||
	    chunk < CP_MIN_CHUNK || chunk > CP_MAX_CHUNK) {
		fprintf(stderr, "ordmacp: the peer does not speak ordmacp %d\n",
			CP_VERSION);
		goto out;
	}
	if (pathlen >= CP_PATH_MAX) {
		err("destination", -ENAMETOOLONG);
		if (!send_status(o, chan, ENAMETOOLONG, 0))
			linger(o, chan);
		goto out;
	}
	dst = h.path;
	dst[pathlen] = 0;
	fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		  le32toh(h.mode) & 0777);
	if (fd < 0) {
		ret = errno;
		err(dst, -ret);
		if (!send_status(o, chan, ret, 0))
			linger(o, chan);
		goto out;
	}
	if (send_status(o, chan, 0, 0)) {
		close(fd);
		goto out;
	}
	rc = cp_recv_file(o, chan, fd, dst, le64toh(h.size), chunk);
	if (close(fd) && !rc) {
		err(dst, -errno);
		rc = 1;
	}
out:
	ordma_close(o);
	return rc;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: ordmacp [-q] SRC HOST:PORT:DST\n"
		"       ordmacp [-q] --listen [ADDR:]PORT\n");
}

int main(int argc, char **argv)
{
	int i = 1;

	if (i < argc && !strcmp(argv[i], "-q")) {
		quiet = 1;
		i++;
	}
	if (argc - i == 2 && !strcmp(argv[i], "--listen"))
		return cp_listen(argv[i + 1]);
	if (argc - i == 2 && argv[i][0] != '-')
		return cp_send(argv[i], argv[i + 1]);
	usage();
	return EXIT_USAGE;
}
