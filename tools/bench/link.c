// SPDX-License-Identifier: GPL-2.0
/*
 * Two hosts: what joins the --peer process (the sender, which measures and
 * prints) to the --serve one (the receiver), besides the RDMA connections
 * under test.
 *
 * One TCP connection over the link (port --port + 8), messages of a type
 * and a length in the hosts' byte order (both ends are this program; the
 * hello checks its version and sizes). It carries the peer's options (the
 * server takes sizes, workload and the rest from them), the server's device,
 * mode knob and counter names, and then, step by step, what the barriers
 * and the shared struct bench_job carry between the two threads of one
 * process. Nothing on it is timed.
 *
 * Clocks: a sample is the latest end minus the earliest start of the two
 * sides, as in one process, but here the sides read two guests' clocks,
 * which neither agree nor need to run at quite the same rate. So before
 * each transfer the peer pings the server LINK_PINGS times and takes the
 * server's time in the reply with the shortest round trip as read half-way
 * through it (wrong by at most the asymmetry of that round trip), names a
 * start some round trips ahead on the server's clock, and both spin until
 * it, as two threads wait at a barrier. The server's start and end come
 * back in its clock and are moved onto the peer's.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include "bench.h"

#define LINK_MAGIC	0x6f62656eU	/* "oben" */
#define LINK_VERSION	1
#define LINK_PORT_OFF	8		/* RDMA CM uses --port to --port + 5 */
#define LINK_PINGS	4
#define LINK_ACCEPT_S	600		/* the server waits this long for a peer */
#define LINK_CONNECT_S	60		/* the peer tries this long to connect */

struct link_hdr {
	uint32_t type;
	uint32_t len;
};

/* The peer's options: the server runs what they say. */
struct bench_hello {
	uint32_t magic, version, size;
	int workload, quick, iters, iters_small, nsizes;
	int do_tput, do_fair, tput_chans, tput_depth, tput_reps;
	uint64_t sizes[BENCH_MAX_SIZES], max_len, tput_len;
};

/* The server's device, mode knob and counters. */
struct bench_info {
	char ibdev[64];
	int have_mode, nctr;
	char ctr_name[BENCH_NCTR][32];
};

static void xwrite(struct bench *b, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(b->link_fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			bench_die("the link to the other host: %s", strerror(errno));
		c += w;
		n -= w;
	}
}

static void xread(struct bench *b, void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t r = read(b->link_fd, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			bench_die("the link to the other host: %s", strerror(errno));
		if (!r)
			bench_die("the other host hung up (its output says why)");
		c += r;
		n -= r;
	}
}

void bench_link_put(struct bench *b, int type, const void *p, size_t len)
{
	struct link_hdr h = { .type = type, .len = len };
	char *m = malloc(sizeof(h) + len);

	if (!m)
		bench_die("out of memory");
	memcpy(m, &h, sizeof(h));
	if (len)
		memcpy(m + sizeof(h), p, len);
	xwrite(b, m, sizeof(h) + len);
	free(m);
}

/* The next message, whatever its type, into @p (at most @max bytes). */
int bench_link_next(struct bench *b, void *p, size_t max, size_t *len)
{
	struct link_hdr h;

	xread(b, &h, sizeof(h));
	if (h.len > max)
		bench_die("the other host sent %u bytes of message %u, at most %zu expected",
			  h.len, h.type, max);
	xread(b, p, h.len);
	*len = h.len;
	return h.type;
}

/* The next message, which must be of @type and @len bytes. */
void bench_link_get(struct bench *b, int type, void *p, size_t len)
{
	char buf[sizeof(struct bench_info) + sizeof(struct bench_hello)];
	size_t n;
	int t = bench_link_next(b, buf, sizeof(buf), &n);

	if (t != type || n != len)
		bench_die("out of step with the other host: message %d of %zu bytes, expected %d of %zu",
			  t, n, type, len);
	if (len)
		memcpy(p, buf, len);
}

static int link_listen(struct bench *b, const struct sockaddr_in *sa)
{
	struct pollfd pfd = { .events = POLLIN };
	int one = 1, fd;

	pfd.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (pfd.fd < 0)
		return -1;
	setsockopt(pfd.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(pfd.fd, (const struct sockaddr *)sa, sizeof(*sa)) ||
	    listen(pfd.fd, 1)) {
		close(pfd.fd);
		return -1;
	}
	bench_progress("serving on %s, control port %u: waiting for a --peer",
		       b->addr, ntohs(sa->sin_port));
	if (poll(&pfd, 1, LINK_ACCEPT_S * 1000) != 1) {
		close(pfd.fd);
		errno = ETIMEDOUT;
		return -1;
	}
	fd = accept4(pfd.fd, NULL, NULL, SOCK_CLOEXEC);
	close(pfd.fd);
	return fd;
}

static int link_connect(const struct sockaddr_in *sa)
{
	double until = bench_now_us() + LINK_CONNECT_S * 1e6;
	int fd;

	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		if (!connect(fd, (const struct sockaddr *)sa, sizeof(*sa)))
			return fd;
		close(fd);
		/* the server may not listen yet */
		if (bench_now_us() > until)
			return -1;
		usleep(100000);
	}
}

/* The control connection: the server accepts one peer, the peer connects. */
int bench_link_open(struct bench *b)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET, .sin_port = htons(b->port + LINK_PORT_OFF),
	};
	int one = 1;

	if (inet_pton(AF_INET, b->addr, &sa.sin_addr) != 1)
		bench_die("bad IPv4 address %s", b->addr);
	b->link_fd = b->role == ROLE_SERVE ? link_listen(b, &sa) :
		     link_connect(&sa);
	if (b->link_fd < 0)
		return -1;
	setsockopt(b->link_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

void bench_link_close(struct bench *b)
{
	if (b->link_fd >= 0)
		close(b->link_fd);
	b->link_fd = -1;
}

/* The peer's options to the server, which takes them as its own. */
void bench_link_hello(struct bench *b)
{
	struct bench_hello h = {
		.magic = LINK_MAGIC, .version = LINK_VERSION, .size = sizeof(h),
	};

	if (b->role == ROLE_PEER) {
		h.workload = b->workload;
		h.quick = b->quick;
		h.iters = b->iters;
		h.iters_small = b->iters_small;
		h.nsizes = b->nsizes;
		for (int i = 0; i < b->nsizes; i++)
			h.sizes[i] = b->sizes[i];
		h.max_len = b->max_len;
		h.do_tput = b->do_tput;
		h.do_fair = b->do_fair;
		h.tput_chans = b->tput_chans;
		h.tput_depth = b->tput_depth;
		h.tput_reps = b->tput_reps;
		h.tput_len = b->tput_len;
		bench_link_put(b, MSG_HELLO, &h, sizeof(h));
		return;
	}
	bench_link_get(b, MSG_HELLO, &h, sizeof(h));
	if (h.magic != LINK_MAGIC || h.version != LINK_VERSION ||
	    h.size != sizeof(h) || h.nsizes < 1 || h.nsizes > BENCH_MAX_SIZES ||
	    h.workload < 0 || h.workload >= W_NWORKLOADS)
		bench_die("the peer is another version of ordma-bench");
	b->workload = h.workload;
	b->quick = h.quick;
	b->iters = h.iters;
	b->iters_small = h.iters_small;
	b->nsizes = h.nsizes;
	for (int i = 0; i < h.nsizes; i++)
		b->sizes[i] = h.sizes[i];
	b->max_len = h.max_len;
	b->do_tput = h.do_tput;
	b->do_fair = h.do_fair;
	b->tput_chans = h.tput_chans;
	b->tput_depth = h.tput_depth;
	b->tput_reps = h.tput_reps;
	b->tput_len = h.tput_len;
}

/*
 * The server's device, mode knob and counter names to the peer, which adds
 * the server's counters to its own of the same name (the breakdown counts
 * both ends' work, as one device counts both ends' in one guest).
 */
void bench_link_info(struct bench *b)
{
	struct bench_info in;

	memset(&in, 0, sizeof(in));
	if (b->role == ROLE_SERVE) {
		snprintf(in.ibdev, sizeof(in.ibdev), "%s", b->ibdev);
		in.have_mode = b->have_mode;
		in.nctr = b->nctr;
		memcpy(in.ctr_name, b->ctr_name, sizeof(in.ctr_name));
		bench_link_put(b, MSG_INFO, &in, sizeof(in));
		return;
	}
	bench_link_get(b, MSG_INFO, &in, sizeof(in));
	if (in.have_mode != b->have_mode)
		bench_die("one host's ordma has the mode knob, the other's not: load the same module on both");
	snprintf(b->srv_ibdev, sizeof(b->srv_ibdev), "%.63s", in.ibdev);
	b->srv_nctr = in.nctr < BENCH_NCTR ? in.nctr : BENCH_NCTR;
	for (int i = 0; i < b->srv_nctr; i++) {
		b->srv_ctr[i] = -1;
		for (int k = 0; k < b->nctr; k++)
			if (!strncmp(in.ctr_name[i], b->ctr_name[k], 32))
				b->srv_ctr[i] = k;
	}
}

/* Clock sync (peer): the server's clock minus ours, from the best ping. */
static void link_sync(struct bench *b)
{
	double best = -1;

	for (int i = 0; i < LINK_PINGS; i++) {
		double ta = bench_now_us(), ts, tb;

		bench_link_put(b, MSG_PING, NULL, 0);
		bench_link_get(b, MSG_PONG, &ts, sizeof(ts));
		tb = bench_now_us();
		if (best < 0 || tb - ta < best) {
			best = tb - ta;
			b->clock_off = ts - (ta + tb) / 2;
		}
	}
	b->rtt_min = best;
	if (b->rtts)
		b->rtts[b->nrtt++] = best;
}

static void spin_until(double t)
{
	while (bench_now_us() < t)
		;
}

/*
 * The start barrier of a transfer between two hosts: both prepared, the
 * clocks compared, then both start at one instant (each on its own clock).
 * The server notes in b->start_late how late the start reached it.
 */
void bench_link_start(struct bench *b, int side)
{
	double t, now;
	size_t n;

	if (side) {
		bench_link_put(b, MSG_PREPARED, NULL, 0);
		for (;;) {
			int type = bench_link_next(b, &t, sizeof(t), &n);

			if (type == MSG_PING && !n) {
				now = bench_now_us();
				bench_link_put(b, MSG_PONG, &now, sizeof(now));
				continue;
			}
			if (type != MSG_START || n != sizeof(t))
				bench_die("out of step with the peer: message %d at the start", type);
			break;
		}
		now = bench_now_us();
		b->start_late = now > t ? now - t : 0;
		spin_until(t);
		return;
	}
	bench_link_get(b, MSG_PREPARED, NULL, 0);
	link_sync(b);
	/*
	 * Far enough ahead that the start reaches the server before it: a
	 * message on the link can take several times the best round trip.
	 */
	t = bench_now_us() + 4 * b->rtt_min + 1000;
	now = t + b->clock_off;
	bench_link_put(b, MSG_START, &now, sizeof(now));
	spin_until(t);
}
