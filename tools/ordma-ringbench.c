// SPDX-License-Identifier: GPL-2.0
/*
 * ordma-ringbench: the rings against the plain ioctls, for one message size
 * (default 4 KiB) on rxe0, in the tools/vmtest guest:
 *
 *   tools/vmtest -- tools/ordma-ringbench [-n LAT_ITER] [-m MSGS] [-s SIZE]
 *
 * A receiver process keeps RECVs posted (through its rings) on two channels;
 * the sender has one file with rings and one without, a channel each, and
 * measures on each:
 *
 *   latency: one SEND at a time, from submission to its completion seen by
 *            the sender (ring: one ENTER that submits and waits, then the
 *            completion read from the CQ ring; ioctl: SUBMIT, then WAIT);
 *   rate:    MSGS messages, at most 256 in flight (ring: batches of 32, one
 *            ENTER per batch; ioctl: one SUBMIT per message, WAIT reaping
 *            up to 32 at a time).
 *
 * Prints median, mean and 99th percentile latency, and messages per second.
 * Measures; asserts nothing but the data (each sequence number once, in the
 * order receives were posted; a large receive may complete after the ones
 * posted behind it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <signal.h>

#include "ordma_ring.h"

#define PORT		7390
#define WINDOW		256
#define BATCH		32
#define RX_DEPTH	64	/* at most 64: the receiver keeps a bit per receive */

static size_t msg_size = 4096;

static void die(const char *what, int err)
{
	fprintf(stderr, "ordma-ringbench: %s: %s\n", what, strerror(err));
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static struct ordma_addr addr4(unsigned short port)
{
	struct ordma_addr a;

	memset(&a, 0, sizeof(a));
	a.family = AF_INET;
	a.port = htons(port);
	inet_pton(AF_INET, "192.0.2.1", a.addr);
	return a;
}

static __u32 xconnect(int fd)
{
	struct ordma_connect c;
	int tries;

	for (tries = 0; tries < 200; tries++) {
		memset(&c, 0, sizeof(c));
		c.size = sizeof(c);
		c.addr = addr4(PORT);
		if (!ioctl(fd, ORDMA_IOC_CONNECT, &c))
			return c.out_chan_id;
		if (errno != ECONNREFUSED)
			die("connect", errno);
		usleep(20000);
	}
	die("connect", ECONNREFUSED);
	return 0;
}

/* -- the receiver ------------------------------------------------------------ */

static int receiver(int ready)
{
	struct ordma_listen l = { .size = sizeof(l) };
	struct ordma_accept a = { .size = sizeof(a) };
	struct ordma_cqe cqes[BATCH];
	unsigned char *bufs;
	/* Per channel: the next sequence number; bit d: expect + d came. */
	__u64 expect[2] = { 0, 0 }, early[2] = { 0, 0 };
	__u32 chans[2];
	struct uring r;
	int fd, c, s, open_chans = 2, i, n, err;

	fd = open("/dev/ordma", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("open", errno);
	l.addr = addr4(PORT);
	l.backlog = 2;
	if (ioctl(fd, ORDMA_IOC_LISTEN, &l))
		die("listen", errno);
	if (write(ready, "L", 1) != 1)
		die("ready", errno);
	for (c = 0; c < 2; c++) {
		a.listener_id = l.out_id;
		if (ioctl(fd, ORDMA_IOC_ACCEPT, &a))
			die("accept", errno);
		chans[c] = a.out_chan_id;
	}
	err = uring_init(&r, fd, 2 * RX_DEPTH, 4 * RX_DEPTH);
	if (err)
		die("receiver rings", -err);
	bufs = malloc(2 * RX_DEPTH * msg_size);
	if (!bufs)
		die("malloc", ENOMEM);
	for (c = 0; c < 2; c++)
		for (s = 0; s < RX_DEPTH; s++)
			uring_prep(uring_get_sqe(&r), ORDMA_OP_RECV, chans[c],
				   bufs + (c * RX_DEPTH + s) * msg_size,
				   msg_size, (__u64)c << 32 | s, 0, 0);
	if (uring_submit(&r, 0, 0) != 2 * RX_DEPTH)
		die("receiver submit", EIO);
	while (open_chans) {
		err = uring_enter_raw(fd, 0, 1, -1, NULL);
		if (err && err != -EINTR)
			die("receiver wait", -err);
		n = uring_reap(&r, cqes, BATCH);
		for (i = 0; i < n; i++) {
			unsigned char *b;
			__u64 seq, d;

			c = cqes[i].cookie >> 32;
			s = (__u32)cqes[i].cookie;
			b = bufs + (c * RX_DEPTH + s) * msg_size;
			if (cqes[i].res == 1 && b[0] == 'Q') {
				open_chans--;
				continue;
			}
			if (cqes[i].res != (long long)msg_size)
				die("receive", cqes[i].res < 0 ? -cqes[i].res : EIO);
			memcpy(&seq, b, sizeof(seq));
			d = seq - expect[c];
			if (d >= RX_DEPTH || (early[c] >> d & 1))
				die("message out of order", EBADMSG);
			early[c] |= 1ULL << d;
			for (; early[c] & 1; early[c] >>= 1)
				expect[c]++;
			uring_prep(uring_get_sqe(&r), ORDMA_OP_RECV, chans[c],
				   b, msg_size, cqes[i].cookie, 0, 0);
		}
		if (n && uring_submit(&r, 0, 0) < 0)
			die("receiver resubmit", EIO);
	}
	return 0;
}

/* -- the sender -------------------------------------------------------------- */

struct sender {
	int fd;
	__u32 chan;
	struct uring r;		/* ring mode */
	int ring;
	unsigned char *bufs;	/* WINDOW messages */
	__u64 seq;
};

static unsigned char *slot(struct sender *s, __u64 seq)
{
	unsigned char *b = s->bufs + (seq % WINDOW) * msg_size;

	memcpy(b, &seq, sizeof(seq));
	return b;
}

/* Reap at least @min completions (ring or ioctl); how many. */
static int reap(struct sender *s, int min)
{
	struct ordma_cqe cqes[BATCH];
	int n, i, err;

	if (s->ring) {
		n = uring_reap(&s->r, cqes, BATCH);
		while (n < min) {
			err = uring_enter_raw(s->fd, 0, min - n, -1, NULL);
			if (err && err != -EINTR)
				die("enter", -err);
			n += uring_reap(&s->r, cqes + n, BATCH - n);
		}
	} else {
		struct ordma_wait w = {
			.size = sizeof(w), .cqes = (uintptr_t)cqes,
			.max = BATCH, .min = min, .timeout_ms = -1,
			.flags = min ? 0 : ORDMA_F_NONBLOCK,
		};

		if (ioctl(s->fd, ORDMA_IOC_WAIT, &w)) {
			if (errno == EAGAIN && !min)
				return 0;
			die("wait", errno);
		}
		n = w.out_count;
	}
	for (i = 0; i < n; i++)
		if (cqes[i].res != (long long)msg_size)
			die("send", cqes[i].res < 0 ? -cqes[i].res : EIO);
	return n;
}

static void submit_ioctl(struct sender *s, const void *buf, size_t len)
{
	struct ordma_submit sb = {
		.size = sizeof(sb), .op = ORDMA_OP_SEND, .chan_id = s->chan,
		.addr = (uintptr_t)buf, .len = len,
	};

	if (ioctl(s->fd, ORDMA_IOC_SUBMIT, &sb))
		die("submit", errno);
}

/*
 * The submission path alone: entries that fail at once (a channel id the
 * file does not have), so no data path runs. Ring: batches of 32 in one
 * ENTER (ORDMA_ENTER_F_SUBMIT_ALL), each completing on the CQ ring with
 * -ENOENT; ioctl: one SUBMIT each, failing with ENOENT.
 */
static void null_ops(struct sender *s, int ops)
{
	struct ordma_cqe cqes[BATCH];
	double t0 = now_us(), dt;
	int done = 0, k, n, i;
	unsigned char b = 0;
	__u32 sub = 0;

	while (done < ops) {
		n = ops - done < BATCH ? ops - done : BATCH;
		if (s->ring) {
			for (k = 0; k < n; k++)
				uring_prep(uring_get_sqe(&s->r), ORDMA_OP_SEND,
					   0x7ffffff0, &b, 1, k, 0, 0);
			uring_flush_sq(&s->r);
			if (uring_enter_flags(s->fd, ORDMA_ENTER_F_SUBMIT_ALL,
					      n, 0, 0, &sub) || sub != (__u32)n)
				die("null enter", EIO);
			s->r.sq_local_tail = uring_load_acquire(s->r.sq_head);
			for (k = 0; k < n; k += i) {
				i = uring_reap(&s->r, cqes, BATCH);
				if (!i || cqes[0].res != -ENOENT)
					die("null completion", EIO);
			}
		} else {
			struct ordma_submit sb = {
				.size = sizeof(sb), .op = ORDMA_OP_SEND,
				.chan_id = 0x7ffffff0, .addr = (uintptr_t)&b,
				.len = 1,
			};

			for (k = 0; k < n; k++)
				if (!ioctl(s->fd, ORDMA_IOC_SUBMIT, &sb) ||
				    errno != ENOENT)
					die("null submit", EIO);
		}
		done += n;
	}
	dt = now_us() - t0;
	printf("  null    %-6s: %8.0f submissions/s  %6.2f us each  (%d failing at once)\n",
	       s->ring ? "ring" : "ioctl", ops / dt * 1e6, dt / ops, ops);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One SEND from submission to its completion; microseconds. */
static double one_send(struct sender *s)
{
	unsigned char *b = slot(s, s->seq++);
	struct ordma_cqe cqe;
	double t0 = now_us();
	int err;

	if (s->ring) {
		uring_prep(uring_get_sqe(&s->r), ORDMA_OP_SEND, s->chan, b,
			   msg_size, 0, 0, 0);
		/* Submit and wait in one call; read it from the ring. */
		if (uring_submit(&s->r, 1, -1) != 1)
			die("enter", EIO);
		while (!uring_reap(&s->r, &cqe, 1)) {
			err = uring_enter_raw(s->fd, 0, 1, -1, NULL);
			if (err && err != -EINTR)
				die("enter", -err);
		}
		if (cqe.res != (long long)msg_size)
			die("send", EIO);
	} else {
		submit_ioctl(s, b, msg_size);
		reap(s, 1);
	}
	return now_us() - t0;
}

/* Both paths, alternating send by send so both see the same machine. */
static void latency(struct sender *s, int iters)
{
	double *t[2], sum[2] = { 0, 0 };
	int i, j, k;

	t[0] = calloc(iters, sizeof(double));
	t[1] = calloc(iters, sizeof(double));
	if (!t[0] || !t[1])
		die("calloc", ENOMEM);
	for (i = 0; i < iters; i++)
		for (j = 0; j < 2; j++) {
			k = (i & 1) ^ j;
			t[k][i] = one_send(&s[k]);
			sum[k] += t[k][i];
		}
	for (k = 0; k < 2; k++) {
		qsort(t[k], iters, sizeof(double), cmp_double);
		printf("  latency %-6s %zu B: median %7.1f us  mean %7.1f us  p90 %7.1f us  p99 %7.1f us  (%d sends)\n",
		       s[k].ring ? "ring" : "ioctl", msg_size, t[k][iters / 2],
		       sum[k] / iters, t[k][iters * 9 / 10],
		       t[k][iters * 99 / 100], iters);
		free(t[k]);
	}
}

/* @msgs messages, at most WINDOW in flight; microseconds taken. */
static double rate_run(struct sender *s, int msgs)
{
	__u64 posted = 0, done = 0;
	double t0 = now_us();
	int k;

	while (done < (__u64)msgs) {
		for (k = 0; k < BATCH && posted < (__u64)msgs &&
		     posted - done < WINDOW; k++, posted++) {
			unsigned char *b = slot(s, s->seq++);

			if (s->ring)
				uring_prep(uring_get_sqe(&s->r), ORDMA_OP_SEND,
					   s->chan, b, msg_size, posted, 0, 0);
			else
				submit_ioctl(s, b, msg_size);
		}
		if (s->ring && k && uring_submit(&s->r, 0, 0) != k)
			die("batch", EIO);
		done += reap(s, posted - done >= WINDOW || posted == (__u64)msgs);
	}
	return now_us() - t0;
}

/* Both paths, in alternating rounds of @msgs / 4 messages. */
static void rate(struct sender *s, int msgs)
{
	double dt[2] = { 0, 0 };
	int r, k;

	for (r = 0; r < 4; r++)
		for (k = 0; k < 2; k++)
			dt[(r & 1) ^ k] += rate_run(&s[(r & 1) ^ k], msgs / 4);
	for (k = 0; k < 2; k++)
		printf("  rate    %-6s %zu B: %8.0f msg/s  %6.1f MB/s  (%d messages, %s)\n",
		       s[k].ring ? "ring" : "ioctl", msg_size,
		       (msgs / 4 * 4) / dt[k] * 1e6,
		       (msgs / 4 * 4) * (double)msg_size / dt[k], msgs / 4 * 4,
		       s[k].ring ? "batches of 32, one ENTER each" :
				   "one SUBMIT ioctl per message");
}

int main(int argc, char **argv)
{
	int iters = 2000, msgs = 20000, opt, pfd[2], st, err;
	struct sender s[2];
	unsigned char q = 'Q';
	char c;
	pid_t pid;

	while ((opt = getopt(argc, argv, "n:m:s:")) != -1) {
		if (opt == 'n')
			iters = atoi(optarg);
		else if (opt == 'm')
			msgs = atoi(optarg);
		else if (opt == 's')
			msg_size = strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	/* Rates average 4 rounds; buffers are WINDOW and 2 * RX_DEPTH slots. */
	if (iters < 1 || msgs < 4 || msg_size < 8 || msg_size > ORDMA_MAX_LEN ||
	    msg_size > SIZE_MAX / (2 * RX_DEPTH + WINDOW))
		return 2;
	if (pipe(pfd))
		die("pipe", errno);
	pid = fork();
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[0]);
		_exit(receiver(pfd[1]));
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1)
		die("receiver", EPIPE);

	for (opt = 0; opt < 2; opt++) {
		memset(&s[opt], 0, sizeof(s[opt]));
		s[opt].ring = !opt;
		s[opt].fd = open("/dev/ordma", O_RDWR | O_CLOEXEC);
		if (s[opt].fd < 0)
			die("open", errno);
		s[opt].chan = xconnect(s[opt].fd);
		s[opt].bufs = calloc(WINDOW, msg_size);
		if (!s[opt].bufs)
			die("calloc", ENOMEM);
		if (s[opt].ring) {
			err = uring_init(&s[opt].r, s[opt].fd, 2 * BATCH,
					 2 * WINDOW);
			if (err)
				die("rings", -err);
		}
	}
	printf("ordma-ringbench: rxe0, %zu-byte SENDs, receiver keeps %d RECVs posted\n",
	       msg_size, RX_DEPTH);
	/* Warm up, then both paths interleaved: they see the same machine. */
	latency(s, iters / 10 + 1);
	printf("(warm-up above)\n");
	latency(s, iters);
	rate(s, msgs);
	null_ops(&s[0], 20 * msgs);
	null_ops(&s[1], 20 * msgs);

	for (opt = 0; opt < 2; opt++) {
		if (s[opt].ring) {
			uring_prep(uring_get_sqe(&s[opt].r), ORDMA_OP_SEND,
				   s[opt].chan, &q, 1, 0, 0, 0);
			if (uring_submit(&s[opt].r, 1, -1) != 1)
				die("quit", EIO);
		} else {
			submit_ioctl(&s[opt], &q, 1);
		}
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		die("receiver failed", EIO);
	return 0;
}
