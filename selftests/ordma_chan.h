/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Channel helpers for the ordma guest selftests.
 *
 * A "pair" is a loopback channel between two processes of the guest: the
 * peer (a forked child) opens its own /dev/ordma, listens on
 * 192.0.2.1 (or 2001:db8::1) and accepts; this process opens its own file
 * and connects. Both ends then run their half of the test; the peer reports
 * through its exit status (0: every check passed) and both talk over a unix
 * socketpair ("ctl") for synchronisation that must not go over the channel
 * under test.
 *
 * The peer cannot use the harness' ASSERT_*: it would longjmp into a copy of
 * the test's frame and run the fixture teardown in the wrong process. Peer
 * code uses PEER_CHECK()/PEER_EQ(), which print the failing line and make the
 * peer exit non-zero.
 *
 * The synchronous wrappers return a completion's res (bytes or -errno), or
 * -errno of a failed ioctl; -EPROTO (an errno the ABI never uses) means the
 * helper saw a completion it did not expect.
 */
#ifndef _ORDMA_CHAN_H
#define _ORDMA_CHAN_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <linux/ordma.h>

#include "ordma_test.h"

#define CHAN_DEV	"/dev/ordma"
#define CHAN_IP4	"192.0.2.1"
#define CHAN_IP6	"2001:db8::1"
/* The rig's RDMA device (rxe0 unless ORDMA_TEST_IBDEV says otherwise). */
#define CHAN_IBDEV	ordma_ibdev()
#define CHAN_MAX	64
/* How long a synchronous helper waits for one completion. */
#define CHAN_WAIT_MS	60000
/* Most completions xreap() waits for at once. */
#define CHAN_REAP_MAX	256
/* How long the many-channel handshake waits for its 4-byte messages. */
#define CHAN_HANDSHAKE_MS 20000
/*
 * How long a CONNECT may take to end (established, refused, unreachable):
 * a bound on a hang, with room for a loaded host and the debug kernel.
 */
#define CHAN_CONNECT_MS	30000
/*
 * How long a forked peer (or a program a test spawned) may take to start
 * listening, to report back or to exit once told to: a bound on a hang.
 */
#define CHAN_PEER_MS	30000
/* A port nobody in these tests ever listens on. */
#define CHAN_PORT_UNUSED 17999

#define KiB		1024LL
#define MiB		(1024LL * 1024)

/* -- time ---------------------------------------------------------------- */

static inline long long chan_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static inline void chan_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* -- ports ----------------------------------------------------------------- */

/*
 * Every pair listens on a port of its own, so no test depends on how soon
 * the kernel frees the port of a listener that was closed just before. The
 * counter lives in a shared page mapped before the harness forks the tests,
 * so it keeps counting across them.
 */
static unsigned int *chan_port_seq;

static void __attribute__((constructor)) chan_port_seq_init(void)
{
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	chan_port_seq = m == MAP_FAILED ? NULL : m;
}

static inline unsigned short chan_port(unsigned short base)
{
	static unsigned int local;
	unsigned int n;

	if (chan_port_seq)
		n = __atomic_fetch_add(chan_port_seq, 1, __ATOMIC_RELAXED);
	else
		n = local++;
	return base + n % 1000;
}

/* -- addresses ------------------------------------------------------------- */

static inline struct ordma_addr chan_addr(int family, const char *ip,
					  unsigned short port)
{
	struct ordma_addr a;

	memset(&a, 0, sizeof(a));
	a.family = family;
	a.port = htons(port);
	if (!ip)
		ip = family == AF_INET6 ? CHAN_IP6 : CHAN_IP4;
	if (inet_pton(family, ip, a.addr) != 1)
		fprintf(stderr, "# bad test address %s\n", ip);
	return a;
}

/* -- data ------------------------------------------------------------------ */

/*
 * A deterministic pseudo-random byte stream (xorshift64), generated in pieces
 * so large buffers can be checked without a second buffer of the same size.
 */
struct chan_pat {
	uint64_t x;
};

static inline uint64_t chan_seed(uint64_t len, uint64_t salt)
{
	return len ^ (salt << 40);
}

static inline void chan_pat_init(struct chan_pat *pt, uint64_t seed)
{
	/* splitmix64: every seed bit reaches every byte of the stream */
	uint64_t z = seed + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	pt->x = z ^ (z >> 31);
	if (!pt->x)
		pt->x = 1;
}

/* Next @n bytes of the stream; @n is a multiple of 8 except on the last call. */
static inline void chan_pat_next(struct chan_pat *pt, unsigned char *dst,
				 size_t n)
{
	uint64_t x = pt->x;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(dst + i, &x, 8);
	}
	if (i < n) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(dst + i, &x, n - i);
	}
	pt->x = x;
}

static inline void chan_fill(void *buf, size_t len, uint64_t seed)
{
	struct chan_pat pt;

	chan_pat_init(&pt, seed);
	chan_pat_next(&pt, buf, len);
}

/*
 * Compare @len bytes at @buf with the stream of @seed starting at stream
 * offset @skip (a multiple of 8). Returns 0, or -1 after printing the first
 * differing offset.
 */
static inline int chan_check_at(const char *what, const void *buf, size_t len,
				uint64_t seed, size_t skip)
{
	static unsigned char ref[64 * 1024];
	const unsigned char *p = buf;
	struct chan_pat pt;
	size_t done = 0, n, i;

	chan_pat_init(&pt, seed);
	while (skip) {
		n = skip < sizeof(ref) ? skip : sizeof(ref);
		chan_pat_next(&pt, ref, n);
		skip -= n;
	}
	while (done < len) {
		n = len - done < sizeof(ref) ? len - done : sizeof(ref);
		chan_pat_next(&pt, ref, n);
		if (memcmp(p + done, ref, n)) {
			for (i = 0; i < n && p[done + i] == ref[i]; i++)
				;
			fprintf(stderr,
				"# %s: data differs at byte %zu of %zu: 0x%02x, expected 0x%02x\n",
				what, done + i, len, p[done + i], ref[i]);
			return -1;
		}
		done += n;
	}
	return 0;
}

static inline int chan_check(const char *what, const void *buf, size_t len,
			     uint64_t seed)
{
	return chan_check_at(what, buf, len, seed, 0);
}

/* -- buffers --------------------------------------------------------------- */

/*
 * A buffer of @len bytes starting @ofs bytes into a fresh anonymous mapping
 * (use an odd @ofs for an unaligned start), with guard bytes before and at
 * least a page after, all set to CHAN_GUARD.
 */
#define CHAN_GUARD 0xa5

static inline size_t chan_maplen(size_t len, size_t ofs)
{
	return (ofs + len + 4096 + 4095) & ~(size_t)4095;
}

static inline unsigned char *chan_buf(size_t len, size_t ofs)
{
	size_t ml = chan_maplen(len, ofs);
	unsigned char *m = mmap(NULL, ml, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	memset(m, CHAN_GUARD, ml);
	return m + ofs;
}

static inline void chan_buf_free(unsigned char *p, size_t len, size_t ofs)
{
	if (p)
		munmap(p - ofs, chan_maplen(len, ofs));
}

/* 0 if the guard bytes around a chan_buf() are intact. */
static inline int chan_guard_ok(const char *what, const unsigned char *p,
				size_t len, size_t ofs)
{
	const unsigned char *m = p - ofs;
	size_t ml = chan_maplen(len, ofs), i;

	for (i = 0; i < ml; i++) {
		if (i == ofs && len) {
			i += len - 1;
			continue;
		}
		if (m[i] != CHAN_GUARD) {
			fprintf(stderr, "# %s: byte %zd outside the buffer was written\n",
				what, (ssize_t)i - (ssize_t)ofs);
			return -1;
		}
	}
	return 0;
}

/* -- ioctl wrappers -------------------------------------------------------- */

static inline int chan_open(void)
{
	return open(CHAN_DEV, O_RDWR | O_CLOEXEC);
}

static inline __u64 chan_cookie(void)
{
	static __u64 seq;

	return (0xc0deULL << 48) | ++seq;
}

/* Submit one operation: 0 or -errno. */
static inline int xsubmit(int fd, __u32 op, __u32 chan, const void *buf,
			  __u64 len, __u64 cookie, __u64 token, __u64 offset,
			  __u32 flags)
{
	struct ordma_submit s;

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.flags = flags;
	s.op = op;
	s.chan_id = chan;
	s.addr = (uintptr_t)buf;
	s.len = len;
	s.cookie = cookie;
	s.token = token;
	s.offset = offset;
	return ioctl(fd, ORDMA_IOC_SUBMIT, &s) < 0 ? -errno : 0;
}

/*
 * Reap between @min and @max completions, waiting up to @timeout_ms (-1:
 * forever). Returns how many were written to @cqes, or -errno.
 */
static inline int xwait_many(int fd, struct ordma_cqe *cqes, unsigned int max,
			     unsigned int min, int timeout_ms, __u32 flags)
{
	struct ordma_wait w;

	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	w.flags = flags;
	w.cqes = (uintptr_t)cqes;
	w.max = max;
	w.min = min;
	w.timeout_ms = timeout_ms;
	if (ioctl(fd, ORDMA_IOC_WAIT, &w) < 0)
		return -errno;
	return w.out_count;
}

/* Reap exactly one completion: 0 or -errno. */
static inline int xwait(int fd, struct ordma_cqe *cqe, int timeout_ms)
{
	int n = xwait_many(fd, cqe, 1, 1, timeout_ms, 0);

	if (n < 0)
		return n;
	if (n != 1) {
		fprintf(stderr, "# WAIT for 1 returned %d completions\n", n);
		return -EPROTO;
	}
	return 0;
}

/*
 * Reap the completions of the @n operations with cookies @cookies, in any
 * order, and store each one's res in @res. Another completion, or one twice,
 * is -EPROTO. Returns 0 or -errno of WAIT (-ETIMEDOUT after @timeout_ms).
 */
static inline int xreap(int fd, int n, const __u64 *cookies, long long *res,
			int timeout_ms)
{
	long long end = chan_now_ms() + timeout_ms;
	struct ordma_cqe cqe;
	int i, k, ret, left;
	unsigned char seen[CHAN_REAP_MAX] = { 0 };

	if (n > CHAN_REAP_MAX)
		return -EINVAL;
	for (k = 0; k < n; k++) {
		left = (int)(end - chan_now_ms());
		ret = xwait(fd, &cqe, left > 0 ? left : 0);
		if (ret)
			return ret;
		for (i = 0; i < n; i++)
			if (cookies[i] == cqe.cookie && !seen[i])
				break;
		if (i == n) {
			fprintf(stderr, "# unexpected completion: cookie %#llx op %u chan %u res %lld\n",
				(unsigned long long)cqe.cookie, cqe.op,
				cqe.chan_id, (long long)cqe.res);
			return -EPROTO;
		}
		seen[i] = 1;
		res[i] = cqe.res;
	}
	return 0;
}

/*
 * Run one operation and wait for its completion, which must be the next one
 * this file reports. Returns the completion's res, or -errno of the ioctl.
 */
static inline long long do_op(int fd, __u32 op, __u32 chan, const void *buf,
			      __u64 len, __u64 token, __u64 offset)
{
	__u64 cookie = chan_cookie();
	struct ordma_cqe cqe;
	int ret;

	ret = xsubmit(fd, op, chan, buf, len, cookie, token, offset, 0);
	if (ret)
		return ret;
	ret = xwait(fd, &cqe, CHAN_WAIT_MS);
	if (ret) {
		fprintf(stderr, "# WAIT for op %u on chan %u: %s\n", op, chan,
			strerror(-ret));
		return ret;
	}
	if (cqe.cookie != cookie || cqe.op != op || cqe.chan_id != chan) {
		fprintf(stderr,
			"# unexpected completion: cookie %#llx op %u chan %u res %lld, wanted cookie %#llx op %u chan %u\n",
			(unsigned long long)cqe.cookie, cqe.op, cqe.chan_id,
			(long long)cqe.res, (unsigned long long)cookie, op,
			chan);
		return -EPROTO;
	}
	return cqe.res;
}

static inline long long do_send(int fd, __u32 chan, const void *buf, __u64 len)
{
	return do_op(fd, ORDMA_OP_SEND, chan, buf, len, 0, 0);
}

static inline long long do_recv(int fd, __u32 chan, void *buf, __u64 len)
{
	return do_op(fd, ORDMA_OP_RECV, chan, buf, len, 0, 0);
}

static inline long long do_write(int fd, __u32 chan, const void *buf,
				 __u64 len, __u64 token, __u64 offset)
{
	return do_op(fd, ORDMA_OP_WRITE, chan, buf, len, token, offset);
}

static inline long long do_read(int fd, __u32 chan, void *buf, __u64 len,
				__u64 token, __u64 offset)
{
	return do_op(fd, ORDMA_OP_READ, chan, buf, len, token, offset);
}

static inline int chan_info(int fd, __u32 chan, struct ordma_chan_info *ci)
{
	memset(ci, 0, sizeof(*ci));
	ci->size = sizeof(*ci);
	ci->chan_id = chan;
	return ioctl(fd, ORDMA_IOC_CHAN_INFO, ci) < 0 ? -errno : 0;
}

static inline int chan_close(int fd, __u32 id)
{
	struct ordma_close c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.id = id;
	return ioctl(fd, ORDMA_IOC_CLOSE, &c) < 0 ? -errno : 0;
}

static inline int chan_expose(int fd, const void *buf, __u64 len, __u32 access,
			      __u64 *token)
{
	struct ordma_expose e;

	memset(&e, 0, sizeof(e));
	e.size = sizeof(e);
	e.addr = (uintptr_t)buf;
	e.len = len;
	e.access = access;
	if (ioctl(fd, ORDMA_IOC_EXPOSE, &e) < 0)
		return -errno;
	*token = e.out_token;
	return 0;
}

static inline int chan_unexpose(int fd, __u64 token)
{
	struct ordma_unexpose u;

	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	u.token = token;
	return ioctl(fd, ORDMA_IOC_UNEXPOSE, &u) < 0 ? -errno : 0;
}

static inline int chan_listen(int fd, int family, unsigned short port,
			      __u32 backlog, __u32 *id)
{
	struct ordma_listen l;

	memset(&l, 0, sizeof(l));
	l.size = sizeof(l);
	l.addr = chan_addr(family, NULL, port);
	l.backlog = backlog;
	if (ioctl(fd, ORDMA_IOC_LISTEN, &l) < 0)
		return -errno;
	*id = l.out_id;
	return 0;
}

/*
 * Connect, retrying ECONNREFUSED for up to 2 s in case the listener is not
 * there yet. Returns 0 or -errno.
 */
static inline int chan_connect(int fd, int family, unsigned short port,
			       __u32 *id)
{
	long long end = chan_now_ms() + 2000;
	struct ordma_connect c;

	for (;;) {
		memset(&c, 0, sizeof(c));
		c.size = sizeof(c);
		c.addr = chan_addr(family, NULL, port);
		c.timeout_ms = CHAN_CONNECT_MS;
		if (!ioctl(fd, ORDMA_IOC_CONNECT, &c)) {
			*id = c.out_chan_id;
			return 0;
		}
		if (errno != ECONNREFUSED || chan_now_ms() > end)
			return -errno;
		chan_sleep_ms(20);
	}
}

/* -- ctl: the side band between the two processes ------------------------- */

static inline int ctl_send(int ctl, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = send(ctl, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -EPIPE;
		p += n;
		len -= n;
	}
	return 0;
}

/* Receive exactly @len bytes within @timeout_ms (-1: forever). */
static inline int ctl_recv(int ctl, void *buf, size_t len, int timeout_ms)
{
	long long end = chan_now_ms() + timeout_ms;
	struct pollfd pfd = { .fd = ctl, .events = POLLIN };
	char *p = buf;
	ssize_t n;
	int left;

	while (len) {
		left = timeout_ms < 0 ? -1 : (int)(end - chan_now_ms());
		if (timeout_ms >= 0 && left < 0)
			left = 0;
		n = poll(&pfd, 1, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ETIMEDOUT;
		n = recv(ctl, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -EPIPE;
		p += n;
		len -= n;
	}
	return 0;
}

static inline int ctl_signal(int ctl, char c)
{
	return ctl_send(ctl, &c, 1);
}

/* Wait for the byte @c; anything else is an error. */
static inline int ctl_expect(int ctl, char c, int timeout_ms)
{
	char got;
	int ret = ctl_recv(ctl, &got, 1, timeout_ms);

	if (ret)
		return ret;
	if (got != c) {
		fprintf(stderr, "# ctl: got '%c', expected '%c'\n", got, c);
		return -EPROTO;
	}
	return 0;
}

/* -- the pair -------------------------------------------------------------- */

/*
 * One end of a pair. In this process, chan[i] is connected to the peer's
 * chan[i]. Initialise with chan_pair_init() before anything can fail (the
 * fixture memsets to zero, and 0 is a valid fd).
 */
struct chan_pair {
	int fd;			/* this end's /dev/ordma */
	int ctl;		/* socketpair to the other process */
	pid_t peer;		/* in the test process: the peer; 0 when none */
	int family;
	unsigned short port;
	int nchan;
	__u32 chan[CHAN_MAX];
	/* peer side only */
	__u32 listener;
	struct ordma_addr peer_addr[CHAN_MAX];	/* out_peer of each accept */
	size_t accept_extra;	/* zero tail bytes added to struct ordma_accept */
};

/* The peer's half of a test: return 0 when every check passed. */
typedef int (*chan_peer_fn)(struct chan_pair *p, void *arg);

#define PEER_CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "# peer %s:%d: check failed: %s\n",	\
			__FILE__, __LINE__, #cond);			\
		return 1;						\
	}								\
} while (0)

#define PEER_EQ(expected, seen) do {					\
	long long __e = (long long)(expected), __s = (long long)(seen);	\
	if (__e != __s) {						\
		fprintf(stderr, "# peer %s:%d: %s is %lld (%s), expected %s = %lld\n", \
			__FILE__, __LINE__, #seen, __s,			\
			__s < 0 && __s > -4096 ? strerror(-__s) : "-",	\
			#expected, __e);				\
		return 1;						\
	}								\
} while (0)

static inline void chan_pair_init(struct chan_pair *p)
{
	memset(p, 0, sizeof(*p));
	p->fd = -1;
	p->ctl = -1;
}

/* Peer: accept one channel, optionally with a longer struct. */
static inline int chan_peer_accept(struct chan_pair *p, int i)
{
	size_t sz = sizeof(struct ordma_accept) + p->accept_extra;
	struct ordma_accept *a = calloc(1, sz);
	size_t k;
	int ret = 0;

	if (!a)
		return -ENOMEM;
	a->size = sz;
	a->listener_id = p->listener;
	if (ioctl(p->fd, ORDMA_IOC_ACCEPT, a) < 0) {
		ret = -errno;
	} else {
		p->chan[i] = a->out_chan_id;
		p->peer_addr[i] = a->out_peer;
		for (k = sizeof(*a); k < sz; k++)
			if (((unsigned char *)a)[k]) {
				fprintf(stderr, "# ACCEPT wrote byte %zu of the tail\n", k);
				ret = -EPROTO;
			}
	}
	free(a);
	return ret;
}

/* Peer: learn which of our channels is the test process's chan[i]. */
static inline int chan_peer_handshake(struct chan_pair *p)
{
	__u32 idx[CHAN_MAX], sorted[CHAN_MAX];
	struct ordma_addr addr[CHAN_MAX];
	struct ordma_cqe cqe;
	int i, k, ret;

	memset(sorted, 0xff, sizeof(sorted));
	for (i = 0; i < p->nchan; i++) {
		ret = xsubmit(p->fd, ORDMA_OP_RECV, p->chan[i], &idx[i],
			      sizeof(idx[i]), i, 0, 0, 0);
		if (ret)
			return ret;
	}
	for (k = 0; k < p->nchan; k++) {
		ret = xwait(p->fd, &cqe, CHAN_HANDSHAKE_MS);
		if (ret)
			return ret;
		i = cqe.cookie;
		if (cqe.cookie >= (__u64)p->nchan || cqe.res != sizeof(__u32) ||
		    idx[i] >= (__u32)p->nchan || sorted[idx[i]] != ~0U) {
			fprintf(stderr, "# handshake: bad completion %lld on %u\n",
				(long long)cqe.res, cqe.chan_id);
			return -EPROTO;
		}
		sorted[idx[i]] = p->chan[i];
		addr[idx[i]] = p->peer_addr[i];
	}
	memcpy(p->chan, sorted, sizeof(__u32) * p->nchan);
	memcpy(p->peer_addr, addr, sizeof(addr[0]) * p->nchan);
	return 0;
}

static inline int chan_peer_main(struct chan_pair *p, chan_peer_fn fn,
				 void *arg)
{
	int ret, i;

	p->fd = chan_open();
	if (p->fd < 0)
		ret = -errno;
	else
		ret = chan_listen(p->fd, p->family, p->port, p->nchan,
				  &p->listener);
	/* Tell the test process we listen (0), or why not. */
	if (ctl_send(p->ctl, &ret, sizeof(ret)) || ret)
		return 2;
	for (i = 0; i < p->nchan; i++) {
		ret = chan_peer_accept(p, i);
		if (ret) {
			fprintf(stderr, "# peer: ACCEPT %d: %s\n", i, strerror(-ret));
			return 3;
		}
	}
	if (p->nchan > 1) {
		ret = chan_peer_handshake(p);
		if (ret) {
			fprintf(stderr, "# peer: handshake: %s\n", strerror(-ret));
			return 4;
		}
	}
	return fn(p, arg);
}

/*
 * Fork the peer and wait until it listens on @port; it will accept @nchan
 * channels and then run @fn. Returns 0 or -errno (the peer's LISTEN error).
 */
static inline int chan_peer_start(struct chan_pair *p, int family,
				  unsigned short port, int nchan,
				  chan_peer_fn fn, void *arg)
{
	pid_t parent = getpid();
	int sv[2], ret, st;

	if (nchan < 1 || nchan > CHAN_MAX)
		return -EINVAL;
	p->family = family;
	p->port = port;
	p->nchan = nchan;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	p->peer = fork();
	if (p->peer < 0) {
		ret = -errno;
		close(sv[0]);
		close(sv[1]);
		p->peer = 0;
		return ret;
	}
	if (p->peer == 0) {
		int fd;

		/*
		 * Keep no file of the test process open (another pair's
		 * /dev/ordma would outlive its close() in the test).
		 */
		for (fd = 3; fd < 1024; fd++)
			if (fd != sv[1])
				close(fd);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(5);
		p->ctl = sv[1];
		p->peer = 0;
		st = chan_peer_main(p, fn, arg);
		fflush(stderr);
		_exit(st);
	}
	close(sv[1]);
	p->ctl = sv[0];
	/* The peer's word that it listens, or why not. */
	if (ctl_recv(p->ctl, &ret, sizeof(ret), CHAN_PEER_MS))
		ret = -EPIPE;
	return ret;
}

/*
 * Connect @nchan channels to a peer forked with chan_peer_start(), using
 * this process's fd (opened here if still -1).
 */
static inline int chan_pair_connect(struct chan_pair *p)
{
	struct ordma_cqe cqe;
	__u32 idx[CHAN_MAX];
	int i, ret;

	if (p->fd < 0) {
		p->fd = chan_open();
		if (p->fd < 0)
			return -errno;
	}
	for (i = 0; i < p->nchan; i++) {
		ret = chan_connect(p->fd, p->family, p->port, &p->chan[i]);
		if (ret) {
			fprintf(stderr, "# CONNECT %d to port %u: %s\n", i,
				p->port, strerror(-ret));
			return ret;
		}
	}
	if (p->nchan == 1)
		return 0;
	for (i = 0; i < p->nchan; i++) {
		idx[i] = i;
		ret = xsubmit(p->fd, ORDMA_OP_SEND, p->chan[i], &idx[i],
			      sizeof(idx[i]), i, 0, 0, 0);
		if (ret)
			return ret;
	}
	for (i = 0; i < p->nchan; i++) {
		ret = xwait(p->fd, &cqe, CHAN_HANDSHAKE_MS);
		if (ret) {
			fprintf(stderr, "# handshake: %d of %d sends completed: %s\n",
				i, p->nchan, strerror(-ret));
			return ret;
		}
		if (cqe.res != sizeof(__u32)) {
			fprintf(stderr, "# handshake send: res %lld\n",
				(long long)cqe.res);
			return cqe.res < 0 ? cqe.res : -EPROTO;
		}
	}
	return 0;
}

/* Fork a peer listening on @port and connect @nchan channels to it. */
static inline int chan_pair(struct chan_pair *p, int family,
			    unsigned short port, int nchan, chan_peer_fn fn,
			    void *arg)
{
	int ret = chan_peer_start(p, family, port, nchan, fn, arg);

	if (ret) {
		fprintf(stderr, "# peer could not listen on port %u: %s\n",
			port, strerror(-ret));
		return ret;
	}
	return chan_pair_connect(p);
}

/*
 * Wait up to @timeout_ms for the peer to exit. Returns its exit status,
 * 128 + signal if it was killed, or -ETIMEDOUT (the peer is then killed).
 */
static inline int chan_pair_join(struct chan_pair *p, int timeout_ms)
{
	long long end = chan_now_ms() + timeout_ms;
	int st;
	pid_t r;

	if (p->peer <= 0)
		return -ECHILD;
	for (;;) {
		r = waitpid(p->peer, &st, WNOHANG);
		if (r == p->peer)
			break;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (chan_now_ms() > end) {
			kill(p->peer, SIGKILL);
			waitpid(p->peer, &st, 0);
			p->peer = 0;
			fprintf(stderr, "# peer did not exit within %d ms\n",
				timeout_ms);
			return -ETIMEDOUT;
		}
		chan_sleep_ms(5);
	}
	p->peer = 0;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

/* Teardown: kill the peer if it still runs, close everything. */
static inline void chan_pair_destroy(struct chan_pair *p)
{
	if (p->peer > 0) {
		kill(p->peer, SIGKILL);
		waitpid(p->peer, NULL, 0);
		p->peer = 0;
	}
	if (p->fd >= 0)
		close(p->fd);
	if (p->ctl >= 0)
		close(p->ctl);
	p->fd = -1;
	p->ctl = -1;
}

/* -- the peer everyone can use: echo every message back ------------------- */

#define CHAN_ECHO_MAX	(1 * MiB)

/*
 * Echo each message on chan[0] back to the sender; a 1-byte message "Q"
 * ends it with status 0.
 */
static inline int peer_echo(struct chan_pair *p, void *arg)
{
	unsigned char *buf = chan_buf(CHAN_ECHO_MAX, 1);
	struct ordma_cqe cqe;
	__u64 cookie;

	(void)arg;
	PEER_CHECK(buf);
	for (;;) {
		/* The test may take its time between two messages. */
		cookie = chan_cookie();
		PEER_EQ(0, xsubmit(p->fd, ORDMA_OP_RECV, p->chan[0], buf,
				   CHAN_ECHO_MAX, cookie, 0, 0, 0));
		PEER_EQ(0, xwait(p->fd, &cqe, -1));
		PEER_CHECK(cqe.cookie == cookie);
		PEER_CHECK(cqe.res > 0);
		if (cqe.res == 1 && buf[0] == 'Q')
			return 0;
		PEER_EQ(cqe.res, do_send(p->fd, p->chan[0], buf, cqe.res));
	}
}

/* -- sysfs and the RDMA core's resource tracker ---------------------------- */

static inline int sysfs_get(const char *attr, unsigned long long *v)
{
	char path[256];
	FILE *f;
	int ok;

	f = fopen(ordma_sysfs(path, sizeof(path), attr), "r");
	if (!f)
		return -errno;
	ok = fscanf(f, "%llu", v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

/*
 * Wait up to @timeout_ms until CHAN_IBDEV holds no channel, chunk, pinned
 * page or MR: the channels of a test before may still be closing (the debug
 * kernel takes seconds), and what they hold changes what a new channel's
 * receive ring takes. 0, or -ETIMEDOUT after naming what is still held.
 */
static inline int chan_wait_device_idle(int timeout_ms)
{
	static const char *const attr[] = {
		"channels", "chunks_held", "pages_pinned", "mrs_live",
	};
	long long end = chan_now_ms() + timeout_ms;
	unsigned long long v = 0;
	unsigned int i;

	for (;;) {
		for (i = 0; i < sizeof(attr) / sizeof(attr[0]); i++)
			if (sysfs_get(attr[i], &v) || v)
				break;
		if (i == sizeof(attr) / sizeof(attr[0]))
			return 0;
		if (chan_now_ms() > end) {
			fprintf(stderr, "# %s still holds %s = %llu\n",
				CHAN_IBDEV, attr[i], v);
			return -ETIMEDOUT;
		}
		chan_sleep_ms(20);
	}
}

/* Write @val to @attr of CHAN_IBDEV in one write(2): 0 or its -errno. */
static inline int sysfs_set_str(const char *attr, const char *val)
{
	ssize_t n = strlen(val);
	char path[256];
	int fd, ret = 0;

	fd = open(ordma_sysfs(path, sizeof(path), attr), O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

static inline int sysfs_set(const char *attr, unsigned long long v)
{
	char val[32];

	snprintf(val, sizeof(val), "%llu\n", v);
	return sysfs_set_str(attr, val);
}

/* Lines of `rdma res show @what` containing @needle ("" counts them all). */
static inline int rdma_res_count(const char *what, const char *needle)
{
	char cmd[128], line[1024];
	FILE *f;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "rdma res show %s 2>/dev/null", what);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			n++;
	if (pclose(f))
		return -1;
	return n;
}

#endif /* _ORDMA_CHAN_H */
