// SPDX-License-Identifier: GPL-2.0
/*
 * The rings of /dev/ordma (ORDMA_IOC_RING_SETUP, ORDMA_IOC_RING_ENTER, mmap
 * at ORDMA_OFF_SQ / ORDMA_OFF_CQ), through the raw ABI: every operation with
 * its data checked; hostile entries and indices get error completions or
 * -EINVAL; a full CQ ring holds completions back and loses none; a million
 * small operations in batches, each completion seen exactly once; a forked
 * hostile process scribbling over its own rings while this one keeps
 * working; the extensibility contract of both ioctls; mmap at wrong offsets
 * and sizes.
 */
#define ORDMA_GUEST_TEST
#include <stddef.h>
#include <sys/wait.h>

#include "ordma_test.h"
#include "ordma_chan.h"
#include "ordma_ring.h"
#include "kselftest_harness.h"

#define PORT_BASE	19400
#define WAIT_MS		60000

static size_t scaled(size_t full, size_t dflt, size_t small)
{
	if (getenv("ORDMA_TEST_FULL"))
		return full;
	return getenv("ORDMA_TEST_SMALL") ? small : dflt;
}

FIXTURE(ring) {
	struct chan_pair p;
	struct uring r;
};

FIXTURE_SETUP(ring)
{
	ORDMA_TEST_FILTER();
	chan_pair_init(&self->p);
	memset(&self->r, 0, sizeof(self->r));
}

FIXTURE_TEARDOWN(ring)
{
	uring_exit(&self->r);
	chan_pair_destroy(&self->p);
}

/* Connect to a peer running @fn, then give this end rings. */
static int ring_pair(struct chan_pair *p, struct uring *r, chan_peer_fn fn,
		     void *arg, __u32 sq, __u32 cq)
{
	int ret = chan_pair(p, AF_INET, chan_port(PORT_BASE), 1, fn, arg);

	return ret ? ret : uring_init(r, p->fd, sq, cq);
}

/* Push one entry; NULL-safe for the tests (the ring must have room). */
static struct ordma_ring_sqe *push(struct uring *r, __u32 op, __u32 chan,
				   const void *buf, __u64 len, __u64 cookie,
				   __u64 token, __u64 offset)
{
	struct ordma_ring_sqe *sqe = uring_get_sqe(r);

	if (sqe)
		uring_prep(sqe, op, chan, buf, len, cookie, token, offset);
	return sqe;
}

/*
 * Submit what was pushed, expecting all @n taken, then collect @n
 * completions into @cqes in the order they came.
 */
static int submit_collect(struct uring *r, int n, struct ordma_cqe *cqes)
{
	int got = 0, ret;

	ret = uring_submit(r, n, WAIT_MS);
	if (ret != n) {
		fprintf(stderr, "# submit of %d: %d (%s)\n", n, ret,
			ret < 0 ? strerror(-ret) : "short");
		return ret < 0 ? ret : -EPROTO;
	}
	while (got < n) {
		ret = uring_wait_cqe(r, &cqes[got], WAIT_MS);
		if (ret)
			return ret;
		got++;
	}
	return 0;
}

/* One operation through the ring; its res, or -EPROTO for a stray one. */
static long long ring_op(struct uring *r, __u32 op, __u32 chan,
			 const void *buf, __u64 len, __u64 token, __u64 off)
{
	__u64 cookie = chan_cookie();
	struct ordma_cqe cqe;
	int ret;

	if (!push(r, op, chan, buf, len, cookie, token, off))
		return -ENOSPC;
	ret = submit_collect(r, 1, &cqe);
	if (ret)
		return ret;
	if (cqe.cookie != cookie || cqe.op != op || cqe.chan_id != chan) {
		fprintf(stderr, "# stray completion %#llx op %u chan %u\n",
			(unsigned long long)cqe.cookie, cqe.op, cqe.chan_id);
		return -EPROTO;
	}
	return cqe.res;
}

/* A message to the echo peer and its echo, both through the ring at once. */
static void ring_echo(struct __test_metadata *_metadata, struct uring *r,
		      __u32 chan, size_t len, __u64 salt)
{
	unsigned char *sbuf = chan_buf(len, 1), *rbuf = chan_buf(len, 3);
	struct ordma_cqe cqes[2];
	int i, seen = 0;

	ASSERT_NE(NULL, sbuf);
	ASSERT_NE(NULL, rbuf);
	chan_fill(sbuf, len, chan_seed(len, salt));
	ASSERT_NE(NULL, push(r, ORDMA_OP_RECV, chan, rbuf, len, 0xe0, 0, 0));
	ASSERT_NE(NULL, push(r, ORDMA_OP_SEND, chan, sbuf, len, 0xe1, 0, 0));
	ASSERT_EQ(0, submit_collect(r, 2, cqes));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0xe0ULL, cqes[i].cookie & ~1ULL);
		seen |= 1 << (cqes[i].cookie & 1);
		ASSERT_EQ((long long)len, cqes[i].res);
		ASSERT_EQ(chan, cqes[i].chan_id);
		ASSERT_EQ((__u32)(cqes[i].cookie & 1 ? ORDMA_OP_SEND :
				  ORDMA_OP_RECV), cqes[i].op);
	}
	ASSERT_EQ(3, seen);
	ASSERT_EQ(0, chan_check("echo", rbuf, len, chan_seed(len, salt)));
	ASSERT_EQ(0, chan_guard_ok("receive buffer", rbuf, len, 3));
	chan_buf_free(sbuf, len, 1);
	chan_buf_free(rbuf, len, 3);
}

/* End of a test with the echo peer: data still flows, the peer leaves. */
static void ring_done(struct __test_metadata *_metadata, struct chan_pair *p,
		      struct uring *r)
{
	unsigned char q = 'Q';

	ring_echo(_metadata, r, p->chan[0], 4096, 77);
	ASSERT_EQ(1, ring_op(r, ORDMA_OP_SEND, p->chan[0], &q, 1, 0, 0));
	ASSERT_EQ(0, chan_pair_join(p, 20000));
	ASSERT_EQ(0U, uring_cq_ready(r));
}

/* -- set-up, layout, mmap ------------------------------------------------- */

TEST(setup_layout_and_mmap)
{
	const off_t bad_off[] = { 4096, ORDMA_OFF_CQ + 4096, ORDMA_OFF_CQ * 2,
				  ORDMA_OFF_CQ - 4096, 1LL << 40 };
	struct ordma_ring_setup s;
	unsigned int k;
	struct ordma_wait w = { .size = sizeof(w), .max = 1 };
	struct ordma_cqe cqe;
	struct uring r;
	int fd = chan_open();
	long long t0;
	void *m;

	ASSERT_LE(0, fd);
	w.cqes = (uintptr_t)&cqe;
	/* No rings yet. */
	ASSERT_EQ(-ENXIO, uring_enter_raw(fd, 0, 0, 0, NULL));
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, ORDMA_OFF_SQ));
	ASSERT_EQ(ENXIO, errno);

	/* Sizes out of range; nothing is set up by a failure. */
	ASSERT_EQ(-EINVAL, uring_setup_raw(fd, 0, 0, &s));
	ASSERT_EQ(-EINVAL, uring_setup_raw(fd, ORDMA_RING_MAX_SQ + 1, 0, &s));
	ASSERT_EQ(-EINVAL, uring_setup_raw(fd, 64, 32, &s));
	ASSERT_EQ(-EINVAL, uring_setup_raw(fd, 64, ORDMA_RING_MAX_CQ + 1, &s));
	ASSERT_EQ(-EINVAL, uring_setup_raw(fd, 1U << 31, 0, &s));

	/* Rounded up to powers of two; CQ twice the SQ by default. */
	ASSERT_EQ(0, uring_init(&r, fd, 5, 0));
	ASSERT_EQ(8U, r.p.out_sq_entries);
	ASSERT_EQ(16U, r.p.out_cq_entries);
	ASSERT_EQ(ORDMA_FEAT_NODROP | ORDMA_FEAT_SQ_REWIND,
		  r.p.out_features);
	ASSERT_EQ(sizeof(struct ordma_ring_sqe), r.p.out_sqe_size);
	ASSERT_EQ(48U, r.p.out_sqe_size);
	ASSERT_EQ(sizeof(struct ordma_cqe), r.p.out_cqe_size);
	ASSERT_LE(r.p.out_sq_off.sqes + 8 * 48ULL, r.p.out_sq_size);
	ASSERT_LE(r.p.out_cq_off.cqes + 16 * 24ULL, r.p.out_cq_size);
	/* Producer and consumer indices on cache lines of their own. */
	ASSERT_LE(64U, r.p.out_sq_off.tail - r.p.out_sq_off.head);
	ASSERT_LE(64U, r.p.out_cq_off.tail - r.p.out_cq_off.head);
	ASSERT_EQ(0U, r.p.out_sq_off.sqes % 64);
	ASSERT_EQ(0U, r.p.out_cq_off.cqes % 64);
	ASSERT_EQ(7U, *(__u32 *)((char *)r.sq_map + r.p.out_sq_off.ring_mask));
	ASSERT_EQ(8U, *(__u32 *)((char *)r.sq_map +
				 r.p.out_sq_off.ring_entries));
	ASSERT_EQ(15U, *(__u32 *)((char *)r.cq_map + r.p.out_cq_off.ring_mask));
	ASSERT_EQ(16U, *(__u32 *)((char *)r.cq_map +
				  r.p.out_cq_off.ring_entries));
	ASSERT_EQ(0U, *r.sq_head);
	ASSERT_EQ(0U, *r.cq_tail);
	ASSERT_EQ(0U, *r.cq_overflow);

	/* Once per file. */
	ASSERT_EQ(-EBUSY, uring_setup_raw(fd, 8, 0, &s));
	/* Completions go to the ring now, not to ORDMA_IOC_WAIT. */
	ASSERT_EQ(-1, ioctl(fd, ORDMA_IOC_WAIT, &w));
	ASSERT_EQ(EBUSY, errno);

	/* mmap: only the two offsets, shared, no longer than the ring. */
	for (k = 0; k < ARRAY_SIZE(bad_off); k++) {
		m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 bad_off[k]);
		ASSERT_EQ(MAP_FAILED, m) TH_LOG("offset %#llx",
						(long long)bad_off[k]);
		ASSERT_EQ(EINVAL, errno);
	}
	m = mmap(NULL, r.p.out_sq_size + 4096, PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, ORDMA_OFF_SQ);
	ASSERT_EQ(MAP_FAILED, m);
	ASSERT_EQ(EINVAL, errno);
	m = mmap(NULL, 1 << 20, PROT_READ, MAP_SHARED, fd, ORDMA_OFF_CQ);
	ASSERT_EQ(MAP_FAILED, m);
	ASSERT_EQ(EINVAL, errno);
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
		 ORDMA_OFF_SQ);
	ASSERT_EQ(MAP_FAILED, m);
	ASSERT_EQ(EINVAL, errno);
	/* A shorter mapping of the same ring shows the same words. */
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, ORDMA_OFF_CQ);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(16U, *(__u32 *)((char *)m + r.p.out_cq_off.ring_entries));
	munmap(m, 4096);

	/* ENTER's own errors. */
	ASSERT_EQ(-EINVAL, uring_enter_raw(fd, 0, 17, 0, NULL));
	ASSERT_EQ(0, uring_enter_raw(fd, 0, 0, 0, NULL));
	ASSERT_EQ(0, uring_enter_raw(fd, 100, 0, 0, NULL));
	t0 = chan_now_ms();
	ASSERT_EQ(-ETIMEDOUT, uring_enter_raw(fd, 0, 1, 100, NULL));
	ASSERT_LE(90, chan_now_ms() - t0);
	ASSERT_EQ(-ETIMEDOUT, uring_enter_raw(fd, 0, 16, 0, NULL));
	uring_exit(&r);
	close(fd);
}

/* The struct of @cmd, every way the extensibility contract allows or not. */
static void ring_ioctl_contract(struct __test_metadata *_metadata,
				unsigned long cmd, size_t size, __u32 valid)
{
	unsigned char buf[256];
	void *un;
	int fd, i;
	struct {
		long len;		/* size field */
		long tail_at;		/* byte past size set, or -1 */
		__u32 flags;
		int err;
	} cases[] = {
		{ 0, -1, 0, EINVAL },
		{ 4, -1, 0, EINVAL },
		{ 8, -1, 0, EINVAL },
		{ (long)size - 1, -1, 0, EINVAL },
		{ (long)size + 1, 0, 0, E2BIG },
		{ (long)size + 8, 7, 0, E2BIG },
		{ (long)size + 8, 0, 0, E2BIG },
		{ (long)size, -1, (valid << 1) | 1, EINVAL },
		{ (long)size, -1, 1U << 31, EINVAL },
		{ (long)size, -1, ~valid, EINVAL },
		{ (long)size, -1, ~0U, EINVAL },
		{ (long)size, -1, valid, 0 },
		{ (long)size + 8, -1, 0, 0 },
		{ (long)size + 1, -1, 0, 0 },
		{ (long)size, -1, 0, 0 },
	};

	for (i = 0; i < (int)ARRAY_SIZE(cases); i++) {
		struct ordma_ring_setup *s = (void *)buf;
		struct ordma_ring_enter *e = (void *)buf;
		size_t k;
		int ret, err;

		fd = chan_open();
		ASSERT_LE(0, fd);
		if (cmd == ORDMA_IOC_RING_ENTER) {
			struct ordma_ring_setup p;

			ASSERT_EQ(0, uring_setup_raw(fd, 4, 0, &p));
		}
		memset(buf, 0, sizeof(buf));
		if (cmd == ORDMA_IOC_RING_SETUP)
			s->sq_entries = 4;
		else
			e->to_submit = 1;
		*(__u32 *)buf = cases[i].len;
		((__u32 *)buf)[1] = cases[i].flags;
		if (cases[i].tail_at >= 0)
			buf[size + cases[i].tail_at] = 0x5a;
		ret = ioctl(fd, cmd, buf);
		err = errno;
		if (cases[i].err) {
			ASSERT_EQ(-1, ret) TH_LOG("case %d", i);
			ASSERT_EQ(cases[i].err, err) TH_LOG("case %d", i);
		} else {
			ASSERT_EQ(0, ret) TH_LOG("case %d: %s", i,
						 strerror(err));
			for (k = size; k < size + 8; k++)
				ASSERT_EQ(0, buf[k]) TH_LOG("tail byte %zu", k);
			if (cmd == ORDMA_IOC_RING_SETUP) {
				ASSERT_EQ(4U, s->out_sq_entries);
			} else {
				ASSERT_EQ(0U, e->out_submitted);
			}
		}
		/* A failed SETUP set nothing up. */
		if (cmd == ORDMA_IOC_RING_SETUP && cases[i].err) {
			struct ordma_ring_setup p;

			ASSERT_EQ(0, uring_setup_raw(fd, 4, 0, &p));
		}
		close(fd);
	}
	fd = chan_open();
	ASSERT_LE(0, fd);
	if (cmd == ORDMA_IOC_RING_ENTER) {
		struct ordma_ring_setup p;

		ASSERT_EQ(0, uring_setup_raw(fd, 4, 0, &p));
	}
	un = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, un);
	munmap(un, 4096);
	ASSERT_EQ(-1, ioctl(fd, cmd, NULL));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(fd, cmd, un));
	ASSERT_EQ(EFAULT, errno);
	close(fd);
}

TEST(setup_extensibility)
{
	ring_ioctl_contract(_metadata, ORDMA_IOC_RING_SETUP,
			    sizeof(struct ordma_ring_setup), 0);
}

TEST(enter_extensibility)
{
	ring_ioctl_contract(_metadata, ORDMA_IOC_RING_ENTER,
			    sizeof(struct ordma_ring_enter),
			    ORDMA_ENTER_F_SUBMIT_ALL);
}

/* -- every operation, data checked ------------------------------------------- */

#define WIN_LEN		(512 * KiB)

/* Expose a window (pattern of seed 30), send its token, then echo. */
static int peer_window_echo(struct chan_pair *p, void *arg)
{
	unsigned char *win = chan_buf(WIN_LEN, 5);
	__u64 tok;

	PEER_CHECK(win);
	chan_fill(win, WIN_LEN, chan_seed(WIN_LEN, 30));
	PEER_EQ(0, chan_expose(p->fd, win, WIN_LEN, ORDMA_ACCESS_REMOTE_READ |
			       ORDMA_ACCESS_REMOTE_WRITE, &tok));
	PEER_EQ(sizeof(tok), do_send(p->fd, p->chan[0], &tok, sizeof(tok)));
	return peer_echo(p, arg);
}

TEST_F_TIMEOUT(ring, every_op_with_data, 180)
{
	static const size_t sizes[] = { 1, 4096, 64 * KiB + 3, 1 * MiB };
	struct chan_pair *p = &self->p;
	struct uring *r = &self->r;
	const size_t off = 4097, wlen = 100 * KiB + 1;
	unsigned char *src = chan_buf(wlen, 7), *dst = chan_buf(WIN_LEN, 9);
	unsigned char *ref = malloc(WIN_LEN);
	__u64 tok = 0;
	unsigned int i;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	ASSERT_NE(NULL, ref);
	ASSERT_EQ(0, ring_pair(p, r, peer_window_echo, NULL, 32, 0));
	ASSERT_EQ(8, ring_op(r, ORDMA_OP_RECV, p->chan[0], &tok, sizeof(tok),
			     0, 0));
	ASSERT_NE(0ULL, tok);

	/* SEND and RECV in one ENTER, sizes up to the peer's 1 MiB. */
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		ring_echo(_metadata, r, p->chan[0], sizes[i], 40 + i);

	/* WRITE into the window, READ it back, and the rest is untouched. */
	chan_fill(src, wlen, chan_seed(wlen, 31));
	chan_fill(ref, WIN_LEN, chan_seed(WIN_LEN, 30));
	memcpy(ref + off, src, wlen);
	ASSERT_EQ((long long)wlen, ring_op(r, ORDMA_OP_WRITE, p->chan[0], src,
					   wlen, tok, off));
	ASSERT_EQ(WIN_LEN, ring_op(r, ORDMA_OP_READ, p->chan[0], dst, WIN_LEN,
				   tok, 0));
	ASSERT_EQ(0, memcmp(dst, ref, WIN_LEN));
	ASSERT_EQ(0, chan_guard_ok("read buffer", dst, WIN_LEN, 9));
	/* The window's errors come as the entry's completion. */
	ASSERT_EQ(-ERANGE, ring_op(r, ORDMA_OP_READ, p->chan[0], dst, 2, tok,
				   WIN_LEN - 1));
	ASSERT_EQ(-ENOENT, ring_op(r, ORDMA_OP_WRITE, p->chan[0], src, 1,
				   tok ^ (1ULL << 40), 0));
	ring_done(_metadata, p, r);
	chan_buf_free(src, wlen, 7);
	chan_buf_free(dst, WIN_LEN, 9);
	free(ref);
}

/* -- hostile entries ----------------------------------------------------------- */

TEST_F_TIMEOUT(ring, bad_entries_complete_with_errors, 120)
{
	struct chan_pair *p = &self->p;
	struct uring *r = &self->r;
	unsigned char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE |
				 MAP_ANONYMOUS, -1, 0);
	unsigned char *gone;
	unsigned char good[64];
	__u32 lis = 0, before;
	struct ordma_cqe cqe[2];
	unsigned int k;

	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_EQ(0, ring_pair(p, r, peer_echo, NULL, 8, 0));
	ASSERT_EQ(0, chan_listen(p->fd, AF_INET, chan_port(PORT_BASE), 1,
				 &lis));
	/* Unmapped last, so that no later mapping takes its place. */
	gone = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, gone);
	munmap(gone, 4096);
	{
		__u32 c = p->chan[0];
		struct {
			const char *what;
			__u8 op, flags;
			__u16 rsvd;
			__u32 chan;
			const void *addr;
			__u64 len, token, offset;
			int err;
		} bad[] = {
			{ "op 0", 0, 0, 0, c, good, 1, 0, 0, EINVAL },
			{ "op 5", 5, 0, 0, c, good, 1, 0, 0, EINVAL },
			{ "op 255", 255, 0, 0, c, good, 1, 0, 0, EINVAL },
			{ "flag 0x80", ORDMA_OP_SEND, 0x80, 0, c, good, 1, 0, 0, EINVAL },
			{ "flag 2", ORDMA_OP_SEND, 2, 0, c, good, 1, 0, 0, EINVAL },
			{ "reserved", ORDMA_OP_SEND, 0, 1, c, good, 1, 0, 0, EINVAL },
			{ "len 0", ORDMA_OP_SEND, 0, 0, c, good, 0, 0, 0, EINVAL },
			{ "len 4G+1", ORDMA_OP_RECV, 0, 0, c, good,
			  ORDMA_MAX_LEN + 1, 0, 0, EINVAL },
			{ "len ~0", ORDMA_OP_RECV, 0, 0, c, good, ~0ULL, 0, 0, EINVAL },
			{ "wraps", ORDMA_OP_SEND, 0, 0, c, (void *)-16L, 4096, 0, 0,
			  EOVERFLOW },
			{ "token on SEND", ORDMA_OP_SEND, 0, 0, c, good, 1, 1, 0, EINVAL },
			{ "offset on RECV", ORDMA_OP_RECV, 0, 0, c, good, 1, 0, 1, EINVAL },
			{ "unmapped", ORDMA_OP_SEND, 0, 0, c, gone, 16, 0, 0, EFAULT },
			{ "kernel address", ORDMA_OP_SEND, 0, 0, c,
			  (void *)0xffff888000000000UL, 16, 0, 0, EFAULT },
			{ "RECV into read-only", ORDMA_OP_RECV, 0, 0, c, ro, 16, 0, 0,
			  EFAULT },
			{ "READ into read-only", ORDMA_OP_READ, 0, 0, c, ro, 16, 1, 0,
			  EFAULT },
			{ "no such channel", ORDMA_OP_SEND, 0, 0, 0x7ffffff0, good, 1,
			  0, 0, ENOENT },
			{ "channel 0", ORDMA_OP_RECV, 0, 0, 0, good, 1, 0, 0, ENOENT },
			{ "a listener", ORDMA_OP_SEND, 0, 0, lis, good, 1, 0, 0,
			  ENOENT },
		};

		for (k = 0; k < ARRAY_SIZE(bad); k++) {
			struct ordma_ring_sqe *sqe = uring_get_sqe(r);
			__u64 cookie = 0xbad0000000000000ULL | k;

			ASSERT_NE(NULL, sqe);
			uring_prep(sqe, bad[k].op, bad[k].chan, bad[k].addr,
				   bad[k].len, cookie, bad[k].token,
				   bad[k].offset);
			sqe->flags = bad[k].flags;
			sqe->__reserved = bad[k].rsvd;
			ASSERT_EQ(0, submit_collect(r, 1, cqe)) TH_LOG("%s",
								    bad[k].what);
			ASSERT_EQ(cookie, cqe[0].cookie) TH_LOG("%s", bad[k].what);
			ASSERT_EQ(-bad[k].err, cqe[0].res) TH_LOG("%s", bad[k].what);
			ASSERT_EQ(bad[k].op, cqe[0].op) TH_LOG("%s", bad[k].what);
			ASSERT_EQ(bad[k].chan, cqe[0].chan_id);
		}
	}

	/* A failed entry ends the batch; the rest waits for the next ENTER. */
	chan_fill(good, sizeof(good), 5);
	ASSERT_NE(NULL, push(r, 0, p->chan[0], good, 1, 1, 0, 0));
	ASSERT_NE(NULL, push(r, ORDMA_OP_SEND, p->chan[0], good, sizeof(good),
			     2, 0, 0));
	before = uring_load_acquire(r->sq_head);
	ASSERT_EQ(1, uring_submit(r, 1, WAIT_MS));
	ASSERT_EQ(before + 1, uring_load_acquire(r->sq_head));
	ASSERT_EQ(0, uring_wait_cqe(r, &cqe[0], WAIT_MS));
	ASSERT_EQ(1ULL, cqe[0].cookie);
	ASSERT_EQ(-EINVAL, cqe[0].res);
	ASSERT_EQ(1, uring_submit(r, 1, WAIT_MS));
	ASSERT_EQ(0, uring_wait_cqe(r, &cqe[0], WAIT_MS));
	ASSERT_EQ(2ULL, cqe[0].cookie);
	ASSERT_EQ((long long)sizeof(good), cqe[0].res);
	/* ORDMA_ENTER_F_SUBMIT_ALL goes on after failures. */
	ASSERT_NE(NULL, push(r, 0, p->chan[0], good, 1, 4, 0, 0));
	ASSERT_NE(NULL, push(r, ORDMA_OP_SEND, 0x7ffffff0, good, 1, 5, 0, 0));
	ASSERT_NE(NULL, push(r, ORDMA_OP_SEND, p->chan[0], good, sizeof(good),
			     6, 0, 0));
	uring_flush_sq(r);
	ASSERT_EQ(0, uring_enter_flags(p->fd, ORDMA_ENTER_F_SUBMIT_ALL, 3, 3,
				       WAIT_MS, &before));
	ASSERT_EQ(3U, before);
	for (k = 0; k < 3; k++) {
		ASSERT_EQ(0, uring_wait_cqe(r, &cqe[0], WAIT_MS));
		if (cqe[0].cookie == 6) {
			ASSERT_EQ((long long)sizeof(good), cqe[0].res);
		} else {
			ASSERT_EQ(cqe[0].cookie == 4 ? -EINVAL : -ENOENT,
				  cqe[0].res);
		}
	}
	/* Take the extra echo. */
	ASSERT_EQ((long long)sizeof(good), ring_op(r, ORDMA_OP_RECV, p->chan[0],
						   good, sizeof(good), 0, 0));
	/* Its echo, taken with the ioctl: completions still go to the ring. */
	memset(good, 0, sizeof(good));
	ASSERT_EQ(0, xsubmit(p->fd, ORDMA_OP_RECV, p->chan[0], good,
			     sizeof(good), 3, 0, 0, 0));
	ASSERT_EQ(0, uring_wait_cqe(r, &cqe[0], WAIT_MS));
	ASSERT_EQ(3ULL, cqe[0].cookie);
	ASSERT_EQ((long long)sizeof(good), cqe[0].res);
	ASSERT_EQ(0, chan_check("echo", good, sizeof(good), 5));
	munmap(ro, 4096);
	ring_done(_metadata, p, r);
}

TEST_F_TIMEOUT(ring, hostile_indices, 120)
{
	struct chan_pair *p = &self->p;
	struct uring *r = &self->r;
	__u32 head, tail, *w;
	unsigned char msg[32];
	struct ordma_cqe cqe[2];
	struct pollfd pfd;
	long long end;
	unsigned int k = 0;

	ASSERT_EQ(0, ring_pair(p, r, peer_echo, NULL, 8, 8));
	head = uring_load_acquire(r->sq_head);

	/* An SQ tail more than the ring ahead, or behind the head. */
	ASSERT_NE(NULL, push(r, 0x77, p->chan[0], msg, 1, 9, 0, 0));
	uring_store_release(r->sq_tail, head + 9);
	ASSERT_EQ(-EINVAL, uring_enter_raw(p->fd, 1, 0, 0, NULL));
	uring_store_release(r->sq_tail, head - 1);
	ASSERT_EQ(-EINVAL, uring_enter_raw(p->fd, 1, 0, 0, NULL));
	uring_store_release(r->sq_tail, head + 0x80000000U);
	ASSERT_EQ(-EINVAL, uring_enter_raw(p->fd, 8, 0, 0, NULL));
	ASSERT_EQ(head, uring_load_acquire(r->sq_head));
	ASSERT_EQ(0U, uring_cq_ready(r));
	/* Put right, the entry runs once, to_submit above what is there. */
	uring_store_release(r->sq_tail, head + 1);
	ASSERT_EQ(0, uring_enter_raw(p->fd, 1000, 1, WAIT_MS, &k));
	ASSERT_EQ(1U, k);
	ASSERT_EQ(1U, uring_reap(r, cqe, 2));
	ASSERT_EQ(9ULL, cqe[0].cookie);
	ASSERT_EQ(-EINVAL, cqe[0].res);
	ASSERT_EQ(0, uring_enter_raw(p->fd, 1000, 0, 0, &k));
	ASSERT_EQ(0U, k);

	/* Rewinding the SQ tail between two ENTERs drops unsubmitted entries. */
	ASSERT_NE(NULL, push(r, ORDMA_OP_SEND, 0x7ffffff3, msg, 1, 10, 0, 0));
	uring_flush_sq(r);
	r->sq_local_tail--;
	uring_flush_sq(r);
	ASSERT_EQ(0, uring_enter_raw(p->fd, 8, 0, 0, &k));
	ASSERT_EQ(0U, k);
	ASSERT_EQ(0U, uring_cq_ready(r));

	/* The words the kernel owns are never read back. */
	w = (__u32 *)((char *)r->sq_map + r->p.out_sq_off.ring_mask);
	w[0] = 0xffffffff;
	w[1] = 3;
	w = (__u32 *)((char *)r->cq_map + r->p.out_cq_off.ring_mask);
	w[0] = 0x12345;
	w[1] = 0;
	*r->cq_overflow = 77;
	*r->cq_flags = ~0U;
	tail = *r->cq_tail;
	*r->cq_tail = tail + 1000;
	ring_echo(_metadata, r, p->chan[0], 100, 50);
	ASSERT_EQ(tail + 2, uring_load_acquire(r->cq_tail));
	ASSERT_EQ(0U, *r->cq_flags);

	/*
	 * A CQ head ahead of the tail leaves no sane room: completions are
	 * held back, not written over, and come once the head is put right.
	 */
	tail = uring_load_acquire(r->cq_tail);
	uring_store_release(r->cq_head, tail + 5);
	chan_fill(msg, sizeof(msg), 51);
	ASSERT_NE(NULL, push(r, ORDMA_OP_RECV, p->chan[0], msg, sizeof(msg),
			     20, 0, 0));
	ASSERT_NE(NULL, push(r, ORDMA_OP_SEND, p->chan[0], msg, sizeof(msg),
			     21, 0, 0));
	ASSERT_EQ(2, uring_submit(r, 0, 0));
	end = chan_now_ms() + WAIT_MS;
	while (*(volatile __u32 *)r->cq_overflow != 2 && chan_now_ms() < end)
		chan_sleep_ms(5);
	ASSERT_EQ(2U, *r->cq_overflow);
	ASSERT_EQ(tail, uring_load_acquire(r->cq_tail));
	ASSERT_EQ(ORDMA_CQ_F_OVERFLOW, *r->cq_flags);
	pfd.fd = p->fd;
	pfd.events = POLLIN;
	ASSERT_EQ(1, poll(&pfd, 1, 0));
	/* Held back: no new submission until they are in the ring. */
	ASSERT_NE(NULL, push(r, ORDMA_OP_SEND, p->chan[0], msg, 1, 22, 0, 0));
	ASSERT_EQ(-EBUSY, uring_submit(r, 0, 0));
	r->sq_local_tail--;
	uring_flush_sq(r);
	uring_store_release(r->cq_head, tail);
	ASSERT_EQ(0, uring_enter_raw(p->fd, 0, 0, 0, NULL));
	ASSERT_EQ(2U, uring_reap(r, cqe, 2));
	ASSERT_EQ(41ULL, cqe[0].cookie + cqe[1].cookie);
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(20ULL, cqe[k].cookie & ~1ULL);
		ASSERT_EQ((long long)sizeof(msg), cqe[k].res);
	}
	ASSERT_EQ(0U, *r->cq_flags);
	ASSERT_EQ(0, chan_check("echo", msg, sizeof(msg), 51));
	ring_done(_metadata, p, r);
}

/* -- a full CQ ring ------------------------------------------------------------- */

#define OV_N		40
#define OV_LEN		(2 * KiB + 1)

/* On 'G', send OV_N messages, message i of pattern salt 100 + i. */
static int peer_burst(struct chan_pair *p, void *arg)
{
	unsigned char *buf = chan_buf(OV_LEN, 1);
	int i;

	PEER_CHECK(buf);
	PEER_EQ(0, ctl_expect(p->ctl, 'G', 60000));
	for (i = 0; i < OV_N; i++) {
		chan_fill(buf, OV_LEN, chan_seed(OV_LEN, 100 + i));
		PEER_EQ(OV_LEN, do_send(p->fd, p->chan[0], buf, OV_LEN));
	}
	PEER_EQ(0, ctl_expect(p->ctl, 'Q', 60000));
	return 0;
}

TEST_F_TIMEOUT(ring, cq_overflow_keeps_every_completion, 120)
{
	struct chan_pair *p = &self->p;
	struct uring *r = &self->r;
	unsigned char *bufs[OV_N];
	struct ordma_cqe cqes[8];
	struct pollfd pfd = { .events = POLLIN };
	long long end;
	int i, n, got = 0;
	__u32 k;

	ASSERT_EQ(0, ring_pair(p, r, peer_burst, NULL, 8, 8));
	pfd.fd = p->fd;
	ASSERT_EQ(8U, r->p.out_cq_entries);
	for (i = 0; i < OV_N; i++) {
		bufs[i] = chan_buf(OV_LEN, 2 * i + 1);
		ASSERT_NE(NULL, bufs[i]);
		ASSERT_NE(NULL, push(r, ORDMA_OP_RECV, p->chan[0], bufs[i],
				     OV_LEN, i, 0, 0));
		if (i % 8 == 7)
			ASSERT_EQ(8, uring_submit(r, 0, 0));
	}
	ASSERT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_EQ(0, ctl_signal(p->ctl, 'G'));

	/* 8 fit in the ring, the other 32 are held back and counted. */
	end = chan_now_ms() + WAIT_MS;
	while (*(volatile __u32 *)r->cq_overflow < OV_N - 8 &&
	       chan_now_ms() < end)
		uring_enter_raw(p->fd, 0, 8, 100, NULL);
	ASSERT_EQ((__u32)(OV_N - 8), *r->cq_overflow);
	ASSERT_EQ(ORDMA_CQ_F_OVERFLOW, *r->cq_flags);
	ASSERT_EQ(8U, uring_cq_ready(r));
	ASSERT_EQ(1, poll(&pfd, 1, 0));
	/* No submission while completions are held back. */
	ASSERT_NE(NULL, push(r, ORDMA_OP_SEND, p->chan[0], bufs[0], 1, 99, 0,
			     0));
	ASSERT_EQ(-EBUSY, uring_submit(r, 0, 0));
	r->sq_local_tail--;
	uring_flush_sq(r);

	/* Each in order, each once, each with its data. */
	while (got < OV_N) {
		n = uring_reap(r, cqes, 8);
		ASSERT_LT(0, n) TH_LOG("after %d completions", got);
		for (i = 0; i < n; i++, got++) {
			ASSERT_EQ((__u64)got, cqes[i].cookie);
			ASSERT_EQ(OV_LEN, cqes[i].res);
			ASSERT_EQ(0, chan_check("message", bufs[got], OV_LEN,
						chan_seed(OV_LEN, 100 + got)));
			ASSERT_EQ(0, chan_guard_ok("buffer", bufs[got], OV_LEN,
						   2 * got + 1));
		}
		ASSERT_EQ(0, uring_enter_raw(p->fd, 0, 0, 0, &k));
	}
	ASSERT_EQ((__u32)(OV_N - 8), *r->cq_overflow);
	ASSERT_EQ(0U, *r->cq_flags);
	ASSERT_EQ(0U, uring_cq_ready(r));
	ASSERT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_EQ(0, ctl_signal(p->ctl, 'Q'));
	ASSERT_EQ(0, chan_pair_join(p, 20000));
	for (i = 0; i < OV_N; i++)
		chan_buf_free(bufs[i], OV_LEN, 2 * i + 1);
}

/* Completions waiting for ORDMA_IOC_WAIT move to the ring at set-up. */
TEST_F_TIMEOUT(ring, setup_moves_waiting_completions, 60)
{
	struct chan_pair *p = &self->p;
	struct uring *r = &self->r;
	struct pollfd pfd;
	unsigned char msg[100], back[100];
	struct ordma_cqe cqe;

	ASSERT_EQ(0, chan_pair(p, AF_INET, chan_port(PORT_BASE), 1, peer_echo,
			       NULL));
	chan_fill(msg, sizeof(msg), 60);
	ASSERT_EQ(0, xsubmit(p->fd, ORDMA_OP_RECV, p->chan[0], back,
			     sizeof(back), 1, 0, 0, 0));
	ASSERT_EQ(0, xsubmit(p->fd, ORDMA_OP_SEND, p->chan[0], msg,
			     sizeof(msg), 2, 0, 0, 0));
	pfd.fd = p->fd;
	pfd.events = POLLIN;
	ASSERT_EQ(1, poll(&pfd, 1, WAIT_MS));
	ASSERT_EQ(0, uring_init(r, p->fd, 4, 0));
	ASSERT_EQ(0, uring_wait_cqe(r, &cqe, WAIT_MS));
	ASSERT_EQ((long long)sizeof(msg), cqe.res);
	ASSERT_EQ(0, uring_wait_cqe(r, &cqe, WAIT_MS));
	ASSERT_EQ((long long)sizeof(msg), cqe.res);
	ASSERT_EQ(0, chan_check("echo", back, sizeof(back), 60));
	ASSERT_EQ(0U, *r->cq_overflow);
	ring_done(_metadata, p, r);
}

/* -- a forked child may not enter the parent's rings ----------------------------- */

TEST(forked_child_enter_eperm)
{
	struct uring r;
	struct ordma_cqe cqe;
	int fd = chan_open(), st;
	unsigned char b = 0;
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, uring_init(&r, fd, 4, 0));
	ASSERT_NE(NULL, push(&r, ORDMA_OP_SEND, 0x7ffffff5, &b, 1, 5, 0, 0));
	uring_flush_sq(&r);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(uring_enter_raw(fd, 1, 0, 0, NULL) == -EPERM ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st));
	ASSERT_EQ(0U, uring_load_acquire(r.sq_head));
	ASSERT_EQ(1, uring_submit(&r, 1, WAIT_MS));
	ASSERT_EQ(1U, uring_reap(&r, &cqe, 1));
	ASSERT_EQ(5ULL, cqe.cookie);
	ASSERT_EQ(-ENOENT, cqe.res);
	ASSERT_EQ(0, uring_enter_raw(fd, 4, 0, 0, NULL));
	ASSERT_EQ(0U, uring_cq_ready(&r));
	uring_exit(&r);
	close(fd);
}

/* -- a million small operations ----------------------------------------------------- */

#define MS_LEN		16
#define MS_BATCH	32
#define MS_WINDOW	256

struct ms_msg {
	__u64 seq;
	__u64 check;
};

static __u64 ms_check(__u64 seq)
{
	return seq * 0x9e3779b97f4a7c15ULL ^ 0x5eed;
}

/* Receive @n messages through this side's rings, in batches. */
static int peer_ms_recv(struct chan_pair *p, void *arg)
{
	__u64 n = *(__u64 *)arg, posted = 0, done = 0, i;
	struct ms_msg *bufs = calloc(MS_WINDOW, sizeof(*bufs));
	unsigned char *seen = calloc(n, 1);
	struct ordma_cqe cqes[MS_BATCH];
	struct uring r;
	int k, m;

	PEER_CHECK(bufs && seen);
	PEER_EQ(0, uring_init(&r, p->fd, MS_BATCH * 2, MS_WINDOW * 2));
	while (done < n) {
		while (posted < n && posted - done < MS_WINDOW) {
			struct ordma_ring_sqe *sqe = uring_get_sqe(&r);

			if (!sqe)
				break;
			uring_prep(sqe, ORDMA_OP_RECV, p->chan[0],
				   &bufs[posted % MS_WINDOW], MS_LEN, posted,
				   0, 0);
			posted++;
			if (posted % MS_BATCH == 0)
				break;
		}
		k = uring_submit(&r, 1, WAIT_MS);
		PEER_CHECK(k >= 0);
		m = uring_reap(&r, cqes, MS_BATCH);
		for (k = 0; k < m; k++) {
			i = cqes[k].cookie;
			PEER_CHECK(i < n && !seen[i]);
			seen[i] = 1;
			PEER_EQ(MS_LEN, cqes[k].res);
			/* RECVs match messages in order: slot i has message i. */
			PEER_EQ(i, bufs[i % MS_WINDOW].seq);
			PEER_EQ(ms_check(i), bufs[i % MS_WINDOW].check);
			done++;
		}
	}
	PEER_EQ(0, ctl_signal(p->ctl, 'D'));
	PEER_EQ(0, ctl_expect(p->ctl, 'Q', 60000));
	return 0;
}

TEST_F_TIMEOUT(ring, million_small_ops, 900)
{
	__u64 n = scaled(1000000, 100000, 10000) / 2, posted = 0, done = 0, i;
	struct chan_pair *p = &self->p;
	struct uring *r = &self->r;
	struct ms_msg *bufs = calloc(MS_WINDOW, sizeof(*bufs));
	unsigned char *seen = calloc(n, 1);
	struct ordma_cqe cqes[MS_BATCH];
	long long t0;
	int k, m;

	ASSERT_NE(NULL, bufs);
	ASSERT_NE(NULL, seen);
	ASSERT_EQ(0, ring_pair(p, r, peer_ms_recv, &n, MS_BATCH * 2,
			       MS_WINDOW * 2));
	t0 = chan_now_ms();
	while (done < n) {
		while (posted < n && posted - done < MS_WINDOW) {
			struct ordma_ring_sqe *sqe = uring_get_sqe(r);
			struct ms_msg *msg = &bufs[posted % MS_WINDOW];

			if (!sqe)
				break;
			msg->seq = posted;
			msg->check = ms_check(posted);
			uring_prep(sqe, ORDMA_OP_SEND, p->chan[0], msg, MS_LEN,
				   posted, 0, 0);
			posted++;
			if (posted % MS_BATCH == 0)
				break;
		}
		k = uring_submit(r, 1, WAIT_MS);
		ASSERT_LE(0, k);
		m = uring_reap(r, cqes, MS_BATCH);
		for (k = 0; k < m; k++) {
			i = cqes[k].cookie;
			ASSERT_GT(n, i);
			ASSERT_EQ(0, seen[i]) TH_LOG("completion %llu twice",
						     (unsigned long long)i);
			seen[i] = 1;
			ASSERT_EQ(MS_LEN, cqes[k].res);
			done++;
		}
	}
	ASSERT_EQ(0, ctl_expect(p->ctl, 'D', WAIT_MS));
	fprintf(stderr, "# %llu messages (%llu operations on both ends) in %lld ms\n",
		(unsigned long long)n, (unsigned long long)(2 * n),
		chan_now_ms() - t0);
	for (i = 0; i < n; i++)
		ASSERT_EQ(1, seen[i]);
	ASSERT_EQ(0U, *r->cq_overflow);
	ASSERT_EQ(0, ctl_signal(p->ctl, 'Q'));
	ASSERT_EQ(0, chan_pair_join(p, 30000));
	free(bufs);
	free(seen);
}

/* -- a hostile process ---------------------------------------------------------------- */

static __u64 rnd_state;

static __u64 rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

#define HOSTILE_SCRATCH	(64 * KiB)

/* An address worth trying: scratch memory, the rings, or garbage. */
static __u64 hostile_addr(struct uring *r, unsigned char *scratch)
{
	switch (rnd() % 6) {
	case 0:
	case 1:
		return (uintptr_t)scratch + rnd() % HOSTILE_SCRATCH;
	case 2:
		return (uintptr_t)r->sq_map + rnd() % r->p.out_sq_size;
	case 3:
		/*
		 * The CQ entries, not its control words: a RECV or READ into
		 * the tail the kernel wrote would lose the child the kernel's
		 * tail for good (the kernel rewrites it only when it posts,
		 * and it cannot post while the child's head, taken from that
		 * tail, makes no sense), and every later ENTER is EBUSY.
		 */
		return (uintptr_t)r->cq_map + r->p.out_cq_off.cqes +
		       rnd() % (r->p.out_cq_size - r->p.out_cq_off.cqes);
	case 4:
		return 0xffff800000000000ULL + (rnd() & 0xffffffffffULL);
	default:
		return rnd();
	}
}

/*
 * The child: its own file with two channels (connected to itself), rings,
 * and @rounds of random bytes and indices over them. Every ENTER must
 * succeed or fail with an errno of the contract; exit status 0 if so.
 */
static __attribute__((noinline)) int hostile_child(unsigned short port,
						   int rounds, __u64 seed)
{
	static const int ok_err[] = { 0, EINVAL, EBUSY, EAGAIN, ENOMEM,
				      ETIMEDOUT, EINTR };
	/* An ENTER takes at most the ring: 16. */
	unsigned char *scratch = malloc(HOSTILE_SCRATCH);
	__u32 lis = 0, chans[2] = { 0, 0 }, sub = 0, khead, ctail, junk;
	bool scribbled;
	struct ordma_accept a;
	struct uring r;
	int fd = chan_open(), i, k, ret, errs = 0, bad_cqes = 0, taken = 0;
	int hist[ARRAY_SIZE(ok_err)] = { 0 };
	long long end = chan_now_ms() + 40000;

	rnd_state = seed;
	if (fd < 0 || !scratch)
		return 10;
	if (chan_listen(fd, AF_INET, port, 4, &lis) ||
	    chan_connect(fd, AF_INET, port, &chans[0]))
		return 11;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.listener_id = lis;
	if (ioctl(fd, ORDMA_IOC_ACCEPT, &a))
		return 12;
	chans[1] = a.out_chan_id;
	if (uring_init(&r, fd, 16, 16))
		return 13;
	/*
	 * The kernel's SQ head as this process knows it; the CQ tail before a
	 * round scribbled over it, and the scribble.
	 */
	khead = 0;
	ctail = 0;
	junk = 0;
	for (i = 0; i < rounds && chan_now_ms() < end; i++) {
		__u32 *sqw = r.sq_map, *cqw = r.cq_map;
		unsigned int n;

		scribbled = false;
		switch (rnd() % 16) {
		case 0:		/* random bytes over some entries */
			for (k = 0; k < 16; k++)
				if (rnd() & 1)
					for (n = 0; n < 48 / 8; n++)
						((__u64 *)&r.sqes[k])[n] = rnd();
			*r.sq_tail = khead + rnd() % 17;
			break;
		case 1:		/* random words anywhere in the control areas */
			for (k = 0; k < 8; k++) {
				__u32 *w = &cqw[rnd() % (r.p.out_cq_off.cqes / 4)];

				sqw[rnd() % (r.p.out_sq_off.sqes / 4)] = rnd();
				if (w == r.cq_tail && !scribbled) {
					ctail = *w;
					scribbled = true;
				}
				*w = rnd();
			}
			junk = *r.cq_tail;
			break;
		case 2:		/* indices near sane values */
			*r.sq_tail = khead + rnd() % 20;
			*r.cq_head = *r.cq_tail - rnd() % 20;
			break;
		default:	/* plausible entries, a sane tail */
			for (k = 0; k < 16; k++) {
				struct ordma_ring_sqe *s = &r.sqes[k];

				s->op = rnd() % 8 ? 1 + rnd() % 4 : rnd();
				s->flags = rnd() % 8 ? rnd() & 1 : rnd();
				s->__reserved = rnd() % 16 ? 0 : rnd();
				s->chan_id = rnd() % 8 ? chans[rnd() & 1] :
					     rnd() % 8 ? lis : rnd();
				s->addr = hostile_addr(&r, scratch);
				s->len = rnd() % 8 ? 1 + rnd() % 8192 : rnd();
				s->cookie = rnd();
				s->token = rnd() % 4 ? 0 : rnd();
				s->offset = rnd() % 4 ? 0 : rnd() % 65536;
			}
			*r.sq_tail = khead + rnd() % 17;
			break;
		}
		if (rnd() % 64 == 0) {
			off_t off = rnd() % 4 ? (off_t)(rnd() & 0xfffffff000ULL) :
				    ORDMA_OFF_CQ + 4096 * (1 + rnd() % 4);
			void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
				       off);

			if (m != MAP_FAILED) {
				if (off != ORDMA_OFF_SQ && off != ORDMA_OFF_CQ)
					return 14;
				munmap(m, 4096);
			} else if (errno != EINVAL) {
				return 15;
			}
		}
		ret = uring_enter_flags(fd, rnd() % 4 ? 0 : rnd() % 4,
					rnd() % 40, rnd() % 4 ? 0 : rnd() % 20,
					rnd() % 3, &sub);
		for (k = 0; k < (int)ARRAY_SIZE(ok_err); k++)
			if (-ret == ok_err[k])
				break;
		if (k == (int)ARRAY_SIZE(ok_err)) {
			fprintf(stderr, "# hostile: ENTER: %s\n",
				strerror(-ret));
			return 16;
		}
		if (ret) {
			errs++;
		} else if (sub > 16) {
			return 17;
		} else {
			taken += sub;
			khead += sub;
		}
		hist[k]++;
		/*
		 * The kernel never reads back the CQ tail and rewrites it only
		 * when it posts: put back a tail this round scribbled over if
		 * the kernel has not posted since. (Comparing with the tail of
		 * an earlier round instead loses completions the kernel posted
		 * in between: the head then falls behind the kernel's tail by a
		 * full ring, the kernel cannot post, and every ENTER is EBUSY.)
		 */
		if (scribbled && *r.cq_tail == junk)
			*r.cq_tail = ctail;
		/* Mostly, reap: count the error completions among them. */
		if (rnd() % 4) {
			__u32 t = uring_load_acquire(r.cq_tail);

			for (n = *r.cq_head; n != t && t - n <= 16; n++)
				bad_cqes += r.cqes[n & 15].res < 0;
			uring_store_release(r.cq_head, t);
		}
	}
	fprintf(stderr, "# hostile child: %d rounds, %d entries taken, %d error completions seen\n",
		i, taken, bad_cqes);
	for (k = 0; k < (int)ARRAY_SIZE(ok_err); k++)
		fprintf(stderr, "#   ENTER %s: %d\n",
			k ? strerror(ok_err[k]) : "succeeded", hist[k]);
	uring_exit(&r);
	close(fd);
	return errs && bad_cqes && taken > i / 2 ? 0 : 18;
}

TEST_F_TIMEOUT(ring, hostile_child_parent_unharmed, 300)
{
	struct chan_pair *p = &self->p;
	struct uring *r = &self->r;
	unsigned short port = chan_port(PORT_BASE);
	int rounds = scaled(20000, 5000, 1000), st, echoes = 0;
	const char *want_seed = getenv("ORDMA_TEST_SEED");
	__u64 seed = want_seed ? strtoull(want_seed, NULL, 0) :
		     0x1234567ULL ^ (__u64)time(NULL);
	struct ordma_chan_info ci;
	pid_t pid;

	ASSERT_EQ(0, ring_pair(p, r, peer_echo, NULL, 8, 0));
	TH_LOG("hostile seed %#llx, %d rounds", (unsigned long long)seed,
	       rounds);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* Its own rings only (ours do not follow fork()), its own file. */
		close(p->fd);
		_exit(hostile_child(port, rounds, seed));
	}
	/* Meanwhile, this process's channel carries checked data. */
	while (waitpid(pid, &st, WNOHANG) == 0) {
		ring_echo(_metadata, r, p->chan[0], 1 + echoes * 997 % 65536,
			  200 + echoes);
		echoes++;
	}
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st));
	ASSERT_LT(0, echoes);
	/* Exactly our own operations ran on our channel. */
	memset(&ci, 0, sizeof(ci));
	ci.size = sizeof(ci);
	ci.chan_id = p->chan[0];
	ASSERT_EQ(0, ioctl(p->fd, ORDMA_IOC_CHAN_INFO, &ci));
	ASSERT_EQ((__u64)(2 * echoes), ci.out_ops);
	ASSERT_EQ(0ULL, ci.out_errors);
	ASSERT_EQ((__u32)ORDMA_CHAN_CONNECTED, ci.out_state);
	ring_done(_metadata, p, r);
}

TEST_HARNESS_MAIN
