// SPDX-License-Identifier: GPL-2.0
/*
 * Channels in the guest: messages of every size class between two
 * processes over rxe0, message boundaries, a receive buffer too small, IPv6,
 * exposed windows with RDMA write and read, poll(), and the counters of
 * ORDMA_IOC_CHAN_INFO. Every byte moved is checked.
 */
#define ORDMA_GUEST_TEST
#include <sys/mman.h>
#include "ordma_test.h"
#include "ordma_chan.h"
#include "kselftest_harness.h"

#define PORT_BASE	18500

/* -- one message each way, every size class -------------------------------- */

struct echo_arg {
	size_t len;
	size_t ofs;		/* the peer's buffer offset: odd, unaligned */
	int family;
};

/*
 * Receive one message of a->len bytes (pattern salt 1), check it, send back
 * the same length with pattern salt 2 from the same buffer.
 */
static int peer_echo_once(struct chan_pair *p, void *arg)
{
	const struct echo_arg *a = arg;
	unsigned char *buf = chan_buf(a->len, a->ofs);

	PEER_CHECK(buf);
	PEER_EQ(a->len, do_recv(p->fd, p->chan[0], buf, a->len));
	PEER_EQ(0, chan_check("peer received", buf, a->len,
			      chan_seed(a->len, 1)));
	PEER_EQ(0, chan_guard_ok("peer receive buffer", buf, a->len, a->ofs));
	chan_fill(buf, a->len, chan_seed(a->len, 2));
	PEER_EQ(a->len, do_send(p->fd, p->chan[0], buf, a->len));
	/* Sending must leave the buffer alone. */
	PEER_EQ(0, chan_check("peer send buffer", buf, a->len,
			      chan_seed(a->len, 2)));
	chan_buf_free(buf, a->len, a->ofs);
	return 0;
}

/*
 * Send @len bytes from an unaligned buffer and receive the peer's answer
 * into another; both completions must report @len and every byte must match.
 */
static void echo_check(struct __test_metadata *_metadata,
		       struct chan_pair *p, size_t len, size_t sofs,
		       size_t rofs)
{
	unsigned char *sbuf = chan_buf(len, sofs), *rbuf = chan_buf(len, rofs);
	long long res[2] = { 1, 1 };
	struct ordma_cqe cqe;
	int i;

	ASSERT_NE(NULL, sbuf);
	ASSERT_NE(NULL, rbuf);
	chan_fill(sbuf, len, chan_seed(len, 1));
	ASSERT_EQ(0, xsubmit(p->fd, ORDMA_OP_RECV, p->chan[0], rbuf, len, 0,
			     0, 0, 0));
	ASSERT_EQ(0, xsubmit(p->fd, ORDMA_OP_SEND, p->chan[0], sbuf, len, 1,
			     0, 0, 0));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, xwait(p->fd, &cqe, CHAN_WAIT_MS));
		ASSERT_GT(2ULL, cqe.cookie);
		ASSERT_EQ(1, res[cqe.cookie]);
		ASSERT_EQ((__u32)(cqe.cookie ? ORDMA_OP_SEND : ORDMA_OP_RECV),
			  cqe.op);
		ASSERT_EQ(p->chan[0], cqe.chan_id);
		res[cqe.cookie] = cqe.res;
	}
	ASSERT_EQ((long long)len, res[1]);
	ASSERT_EQ((long long)len, res[0]);
	ASSERT_EQ(0, chan_check("echo received", rbuf, len, chan_seed(len, 2)));
	ASSERT_EQ(0, chan_guard_ok("receive buffer", rbuf, len, rofs));
	ASSERT_EQ(0, chan_check("send buffer", sbuf, len, chan_seed(len, 1)));
	chan_buf_free(sbuf, len, sofs);
	chan_buf_free(rbuf, len, rofs);
}

FIXTURE(size) {
	struct chan_pair p;
};

FIXTURE_VARIANT(size) {
	size_t len;
	size_t small_len;		/* under ORDMA_TEST_SMALL, if not 0 */
	size_t sofs, rofs, peer_ofs;	/* odd: unaligned on both sides */
};

FIXTURE_VARIANT_ADD(size, b1) { .len = 1, .sofs = 1, .rofs = 3, .peer_ofs = 5 };
FIXTURE_VARIANT_ADD(size, b4095) { .len = 4095, .sofs = 3, .rofs = 1, .peer_ofs = 4093 };
FIXTURE_VARIANT_ADD(size, b4096) { .len = 4096, .sofs = 5, .rofs = 7, .peer_ofs = 1 };
FIXTURE_VARIANT_ADD(size, k64_plus_3) { .len = 64 * KiB + 3, .sofs = 4095, .rofs = 1, .peer_ofs = 2049 };
FIXTURE_VARIANT_ADD(size, m1) { .len = 1 * MiB, .sofs = 1, .rofs = 2049, .peer_ofs = 3 };
FIXTURE_VARIANT_ADD(size, m16) { .len = 16 * MiB, .sofs = 7, .rofs = 4093, .peer_ofs = 9 };
FIXTURE_VARIANT_ADD(size, m64) { .len = 64 * MiB, .small_len = 16 * MiB + 5, .sofs = 9, .rofs = 11, .peer_ofs = 13 };

FIXTURE_SETUP(size)
{
	ORDMA_TEST_FILTER();
	chan_pair_init(&self->p);
}

FIXTURE_TEARDOWN(size)
{
	chan_pair_destroy(&self->p);
}

TEST_F_TIMEOUT(size, echo, 180)
{
	size_t len = ordma_scaled(variant->len,
				  variant->small_len ?: variant->len);
	struct echo_arg a = { len, variant->peer_ofs, AF_INET };

	ASSERT_EQ(0, chan_pair(&self->p, AF_INET, chan_port(PORT_BASE), 1,
			       peer_echo_once, &a));
	echo_check(_metadata, &self->p, len, variant->sofs, variant->rofs);
	ASSERT_EQ(0, chan_pair_join(&self->p, 30000));
}

/* -- the other channel tests share one fixture ----------------------------- */

FIXTURE(chan) {
	struct chan_pair p;
};

FIXTURE_SETUP(chan)
{
	ORDMA_TEST_FILTER();
	chan_pair_init(&self->p);
}

FIXTURE_TEARDOWN(chan)
{
	chan_pair_destroy(&self->p);
}

/* Three messages, sent before the peer posts a receive, keep their bounds. */
static const size_t three_sizes[3] = { 5000, 1, 200003 };
#define THREE_CAP	(256 * KiB)

static int peer_three(struct chan_pair *p, void *arg)
{
	unsigned char *buf[3];
	long long res[3] = { 1, 1, 1 };
	struct ordma_cqe cqe;
	int i;

	PEER_EQ(0, ctl_expect(p->ctl, 'S', 30000));
	for (i = 0; i < 3; i++) {
		buf[i] = chan_buf(THREE_CAP, 1 + 2 * i);
		PEER_CHECK(buf[i]);
		PEER_EQ(0, xsubmit(p->fd, ORDMA_OP_RECV, p->chan[0], buf[i],
				   THREE_CAP, i, 0, 0, 0));
	}
	for (i = 0; i < 3; i++) {
		PEER_EQ(0, xwait(p->fd, &cqe, CHAN_WAIT_MS));
		PEER_CHECK(cqe.cookie < 3 && res[cqe.cookie] == 1);
		PEER_EQ(ORDMA_OP_RECV, cqe.op);
		res[cqe.cookie] = cqe.res;
	}
	for (i = 0; i < 3; i++) {
		PEER_EQ(three_sizes[i], res[i]);
		PEER_EQ(0, chan_check("message", buf[i], three_sizes[i],
				      chan_seed(three_sizes[i], 10 + i)));
	}
	return 0;
}

TEST_F_TIMEOUT(chan, three_messages_keep_boundaries, 60)
{
	struct chan_pair *p = &self->p;
	long long res[3] = { 1, 1, 1 };
	unsigned char *buf[3];
	struct ordma_cqe cqe;
	int i;

	ASSERT_EQ(0, chan_pair(p, AF_INET, chan_port(PORT_BASE), 1,
			       peer_three, NULL));
	for (i = 0; i < 3; i++) {
		buf[i] = chan_buf(three_sizes[i], 3 + 2 * i);
		ASSERT_NE(NULL, buf[i]);
		chan_fill(buf[i], three_sizes[i],
			  chan_seed(three_sizes[i], 10 + i));
		ASSERT_EQ(0, xsubmit(p->fd, ORDMA_OP_SEND, p->chan[0], buf[i],
				     three_sizes[i], i, 0, 0, 0));
	}
	ASSERT_EQ(0, ctl_signal(p->ctl, 'S'));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, xwait(p->fd, &cqe, CHAN_WAIT_MS));
		ASSERT_GT(3ULL, cqe.cookie);
		ASSERT_EQ(1, res[cqe.cookie]);
		ASSERT_EQ((__u32)ORDMA_OP_SEND, cqe.op);
		res[cqe.cookie] = cqe.res;
	}
	for (i = 0; i < 3; i++)
		ASSERT_EQ((long long)three_sizes[i], res[i]);
	ASSERT_EQ(0, chan_pair_join(p, 30000));
}

/*
 * A receive smaller than the message fails with EMSGSIZE and leaves the
 * message queued for the next, large enough receive: once for a message that
 * fits in one chunk, once for one that does not.
 */
#define SMALL_MSG	1000
#define LARGE_MSG	300000

static int peer_emsgsize(struct chan_pair *p, void *arg)
{
	unsigned char *buf = chan_buf(LARGE_MSG + 1, 1);

	PEER_CHECK(buf);
	PEER_EQ(-EMSGSIZE, do_recv(p->fd, p->chan[0], buf, SMALL_MSG - 1));
	PEER_EQ(SMALL_MSG, do_recv(p->fd, p->chan[0], buf, SMALL_MSG));
	PEER_EQ(0, chan_check("small message", buf, SMALL_MSG,
			      chan_seed(SMALL_MSG, 30)));
	PEER_EQ(-EMSGSIZE, do_recv(p->fd, p->chan[0], buf, 4096));
	PEER_EQ(LARGE_MSG, do_recv(p->fd, p->chan[0], buf, LARGE_MSG + 1));
	PEER_EQ(0, chan_check("large message", buf, LARGE_MSG,
			      chan_seed(LARGE_MSG, 31)));
	return 0;
}

TEST_F_TIMEOUT(chan, recv_too_small_emsgsize, 60)
{
	struct chan_pair *p = &self->p;
	unsigned char *buf = chan_buf(LARGE_MSG, 5);

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, chan_pair(p, AF_INET, chan_port(PORT_BASE), 1,
			       peer_emsgsize, NULL));
	chan_fill(buf, SMALL_MSG, chan_seed(SMALL_MSG, 30));
	ASSERT_EQ(SMALL_MSG, do_send(p->fd, p->chan[0], buf, SMALL_MSG));
	chan_fill(buf, LARGE_MSG, chan_seed(LARGE_MSG, 31));
	ASSERT_EQ(LARGE_MSG, do_send(p->fd, p->chan[0], buf, LARGE_MSG));
	ASSERT_EQ(0, chan_pair_join(p, 30000));
}

/*
 * -- the sender's buffer disappears mid-message ------------------------------
 * Its SEND completes with EFAULT, the receiver's RECV with EREMOTEIO (never
 * with garbage passed off as the message), and the channel carries the next
 * message intact.
 */
#define FAULT_MSG	ordma_scaled(64 * MiB, 16 * MiB)
#define FAULT_TAIL	(4 * MiB)
#define AFTER_MSG	4096

static int peer_fault(struct chan_pair *p, void *arg)
{
	unsigned char *buf = chan_buf(FAULT_MSG, 1);

	PEER_CHECK(buf);
	PEER_EQ(-EREMOTEIO, do_recv(p->fd, p->chan[0], buf, FAULT_MSG));
	PEER_EQ(AFTER_MSG, do_recv(p->fd, p->chan[0], buf, FAULT_MSG));
	PEER_EQ(0, chan_check("message after the fault", buf, AFTER_MSG,
			      chan_seed(AFTER_MSG, 50)));
	return 0;
}

TEST_F_TIMEOUT(chan, sender_buffer_unmapped_mid_message, 90)
{
	struct chan_pair *p = &self->p;
	unsigned char *buf, *after = chan_buf(AFTER_MSG, 3);
	struct ordma_cqe cqe;

	ASSERT_NE(NULL, after);
	buf = mmap(NULL, FAULT_MSG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, chan_pair(p, AF_INET, chan_port(PORT_BASE), 1,
			       peer_fault, NULL));
	ASSERT_EQ(0, xsubmit(p->fd, ORDMA_OP_SEND, p->chan[0], buf, FAULT_MSG,
			     77, 0, 0, 0));
	/*
	 * The worker copies ~60 MB/s (1-2 MB/s on the debug kernel): the tail
	 * is gone long before it.
	 */
	ASSERT_EQ(0, munmap(buf + FAULT_MSG - FAULT_TAIL, FAULT_TAIL));
	ASSERT_EQ(0, xwait(p->fd, &cqe, CHAN_WAIT_MS));
	EXPECT_EQ(77ULL, cqe.cookie);
	EXPECT_EQ(-EFAULT, cqe.res);

	chan_fill(after, AFTER_MSG, chan_seed(AFTER_MSG, 50));
	ASSERT_EQ(AFTER_MSG, do_send(p->fd, p->chan[0], after, AFTER_MSG));
	ASSERT_EQ(0, chan_pair_join(p, 30000));
	munmap(buf, FAULT_MSG - FAULT_TAIL);
}

/* -- IPv6 ------------------------------------------------------------------ */

static int peer_ipv6(struct chan_pair *p, void *arg)
{
	struct ordma_addr want = chan_addr(AF_INET6, CHAN_IP6, 0);

	PEER_EQ(AF_INET6, p->peer_addr[0].family);
	PEER_EQ(0, memcmp(want.addr, p->peer_addr[0].addr, 16));
	PEER_CHECK(p->peer_addr[0].port != 0);
	return peer_echo_once(p, arg);
}

TEST_F_TIMEOUT(chan, ipv6_64k, 60)
{
	struct echo_arg a = { 64 * KiB, 3, AF_INET6 };
	struct ordma_chan_info ci;

	ASSERT_EQ(0, chan_pair(&self->p, AF_INET6, chan_port(PORT_BASE), 1,
			       peer_ipv6, &a));
	ASSERT_EQ(0, chan_info(self->p.fd, self->p.chan[0], &ci));
	ASSERT_EQ((__u32)ORDMA_CHAN_CONNECTED, ci.out_state);
	ASSERT_STREQ(CHAN_IBDEV, ci.out_ibdev);
	echo_check(_metadata, &self->p, 64 * KiB, 1, 5);
	ASSERT_EQ(0, chan_pair_join(&self->p, 30000));
}

/* -- exposed windows: RDMA write and read ---------------------------------- */

#define WIN_LEN		(1 * MiB)
#define RO_LEN		(256 * KiB)
#define WR_OFF		5000
#define WR_LEN		(300 * KiB)

static int peer_expose(struct chan_pair *p, void *arg)
{
	unsigned char *win = chan_buf(WIN_LEN, 3), *ro = chan_buf(RO_LEN, 5);
	__u64 tok[2];

	PEER_CHECK(win && ro);
	chan_fill(win, WIN_LEN, chan_seed(WIN_LEN, 20));
	chan_fill(ro, RO_LEN, chan_seed(RO_LEN, 21));
	PEER_EQ(0, chan_expose(p->fd, win, WIN_LEN,
			       ORDMA_ACCESS_REMOTE_READ |
			       ORDMA_ACCESS_REMOTE_WRITE, &tok[0]));
	PEER_EQ(0, chan_expose(p->fd, ro, RO_LEN, ORDMA_ACCESS_REMOTE_READ,
			       &tok[1]));
	PEER_CHECK(tok[0] != tok[1]);
	PEER_EQ(sizeof(tok), do_send(p->fd, p->chan[0], tok, sizeof(tok)));

	/* The test process wrote WR_LEN bytes at WR_OFF, and nothing else. */
	PEER_EQ(0, ctl_expect(p->ctl, 'C', 60000));
	PEER_EQ(0, chan_check("window head", win, WR_OFF,
			      chan_seed(WIN_LEN, 20)));
	PEER_EQ(0, chan_check("window written", win + WR_OFF, WR_LEN,
			      chan_seed(WR_LEN, 22)));
	PEER_EQ(0, chan_check_at("window tail", win + WR_OFF + WR_LEN,
				 WIN_LEN - WR_OFF - WR_LEN,
				 chan_seed(WIN_LEN, 20), WR_OFF + WR_LEN));
	PEER_EQ(0, chan_guard_ok("window", win, WIN_LEN, 3));
	PEER_EQ(0, chan_check("read-only window", ro, RO_LEN,
			      chan_seed(RO_LEN, 21)));
	PEER_EQ(0, chan_guard_ok("read-only window", ro, RO_LEN, 5));

	PEER_EQ(0, chan_unexpose(p->fd, tok[0]));
	PEER_EQ(0, ctl_signal(p->ctl, 'U'));
	PEER_EQ(0, ctl_expect(p->ctl, 'E', 60000));
	PEER_EQ(0, chan_unexpose(p->fd, tok[1]));
	PEER_EQ(-ENOENT, chan_unexpose(p->fd, tok[0]));
	return 0;
}

TEST_F_TIMEOUT(chan, expose_write_read, 90)
{
	struct chan_pair *p = &self->p;
	unsigned char *src = chan_buf(WR_LEN, 1), *dst = chan_buf(WIN_LEN, 7);
	unsigned char *ref = malloc(WIN_LEN), *roref = malloc(RO_LEN);
	__u32 c;
	int fd;
	__u64 tok[2];

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	ASSERT_NE(NULL, ref);
	ASSERT_NE(NULL, roref);
	ASSERT_EQ(0, chan_pair(p, AF_INET, chan_port(PORT_BASE), 1,
			       peer_expose, NULL));
	fd = p->fd;
	c = p->chan[0];
	ASSERT_EQ((long long)sizeof(tok), do_recv(fd, c, tok, sizeof(tok)));
	chan_fill(src, WR_LEN, chan_seed(WR_LEN, 22));
	chan_fill(ref, WIN_LEN, chan_seed(WIN_LEN, 20));
	memcpy(ref + WR_OFF, src, WR_LEN);
	chan_fill(roref, RO_LEN, chan_seed(RO_LEN, 21));

	/* Write 300 KiB at 5000, read it back, then the whole window. */
	ASSERT_EQ(WR_LEN, do_write(fd, c, src, WR_LEN, tok[0], WR_OFF));
	ASSERT_EQ(WR_LEN, do_read(fd, c, dst, WR_LEN, tok[0], WR_OFF));
	ASSERT_EQ(0, memcmp(dst, src, WR_LEN));
	ASSERT_EQ(WIN_LEN, do_read(fd, c, dst, WIN_LEN, tok[0], 0));
	ASSERT_EQ(0, memcmp(dst, ref, WIN_LEN));
	ASSERT_EQ(0, chan_guard_ok("read buffer", dst, WIN_LEN, 7));
	ASSERT_EQ(0, chan_check("write source", src, WR_LEN,
				chan_seed(WR_LEN, 22)));
	/* The last byte of the window is inside it. */
	ASSERT_EQ(1, do_read(fd, c, dst, 1, tok[0], WIN_LEN - 1));
	ASSERT_EQ(ref[WIN_LEN - 1], dst[0]);

	/* A read-only window: reads work, writes are refused. */
	ASSERT_EQ(RO_LEN, do_read(fd, c, dst, RO_LEN, tok[1], 0));
	ASSERT_EQ(0, memcmp(dst, roref, RO_LEN));
	ASSERT_EQ(4099, do_read(fd, c, dst, 4099, tok[1], 1001));
	ASSERT_EQ(0, memcmp(dst, roref + 1001, 4099));
	ASSERT_EQ(-EACCES, do_write(fd, c, src, 4096, tok[1], 0));
	ASSERT_EQ(-EACCES, do_write(fd, c, src, 1, tok[1], RO_LEN - 1));

	/* Outside the window, including an offset + len that wraps. */
	ASSERT_EQ(-ERANGE, do_read(fd, c, dst, 200, tok[0], WIN_LEN - 100));
	ASSERT_EQ(-ERANGE, do_write(fd, c, src, 200, tok[0], WIN_LEN - 100));
	ASSERT_EQ(-ERANGE, do_read(fd, c, dst, 1, tok[0], WIN_LEN));
	ASSERT_EQ(-ERANGE, do_write(fd, c, src, 1, tok[0], WIN_LEN));
	ASSERT_EQ(-ERANGE, do_read(fd, c, dst, WIN_LEN + 1, tok[0], 0));
	ASSERT_EQ(-ERANGE, do_read(fd, c, dst, 100, tok[0], ~0ULL - 10));
	ASSERT_EQ(-ERANGE, do_read(fd, c, dst, 2, tok[1], RO_LEN - 1));

	/* Let the peer check its memory and unexpose the first window. */
	ASSERT_EQ(0, ctl_signal(p->ctl, 'C'));
	ASSERT_EQ(0, ctl_expect(p->ctl, 'U', 60000));
	ASSERT_EQ(-ENOENT, do_read(fd, c, dst, 4096, tok[0], 0));
	ASSERT_EQ(-ENOENT, do_write(fd, c, src, 4096, tok[0], 0));
	/* The other window is still there. */
	ASSERT_EQ(4096, do_read(fd, c, dst, 4096, tok[1], 0));
	ASSERT_EQ(0, memcmp(dst, roref, 4096));
	ASSERT_EQ(0, ctl_signal(p->ctl, 'E'));
	ASSERT_EQ(0, chan_pair_join(p, 30000));
	free(ref);
	free(roref);
}

/* -- poll() ---------------------------------------------------------------- */

#define POLL_LEN	4096

static int peer_poll(struct chan_pair *p, void *arg)
{
	unsigned char *buf = chan_buf(POLL_LEN, 1);

	PEER_CHECK(buf);
	chan_fill(buf, POLL_LEN, chan_seed(POLL_LEN, 50));
	PEER_EQ(0, ctl_expect(p->ctl, 'G', 30000));
	PEER_EQ(POLL_LEN, do_send(p->fd, p->chan[0], buf, POLL_LEN));
	PEER_EQ(0, ctl_expect(p->ctl, 'Q', 30000));
	return 0;
}

TEST_F_TIMEOUT(chan, poll_reports_completions, 60)
{
	struct chan_pair *p = &self->p;
	unsigned char *buf = chan_buf(POLL_LEN, 3);
	struct pollfd pfd;
	struct ordma_cqe cqe;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, chan_pair(p, AF_INET, chan_port(PORT_BASE), 1,
			       peer_poll, NULL));
	pfd.fd = p->fd;
	pfd.events = POLLIN;

	/* Nothing waiting: no POLLIN, with or without a receive posted. */
	ASSERT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_EQ(0, xsubmit(p->fd, ORDMA_OP_RECV, p->chan[0], buf, POLL_LEN,
			     77, 0, 0, 0));
	ASSERT_EQ(0, poll(&pfd, 1, 300));

	/* The message arrives: POLLIN until the completion is reaped. */
	ASSERT_EQ(0, ctl_signal(p->ctl, 'G'));
	ASSERT_EQ(1, poll(&pfd, 1, CHAN_WAIT_MS));
	ASSERT_EQ(POLLIN, pfd.revents & (POLLIN | POLLERR | POLLHUP | POLLNVAL));
	ASSERT_EQ(1, poll(&pfd, 1, 0));
	ASSERT_EQ(0, xwait(p->fd, &cqe, 0));
	ASSERT_EQ(77ULL, cqe.cookie);
	ASSERT_EQ(POLL_LEN, cqe.res);
	ASSERT_EQ(0, chan_check("message", buf, POLL_LEN,
				chan_seed(POLL_LEN, 50)));
	ASSERT_EQ(0, poll(&pfd, 1, 0));

	ASSERT_EQ(0, ctl_signal(p->ctl, 'Q'));
	ASSERT_EQ(0, chan_pair_join(p, 30000));
}

/* -- ORDMA_IOC_CHAN_INFO ----------------------------------------------------- */

/*
 * Moved on the channel (test process -> peer): SEND 100000, WRITE 200000;
 * (peer -> test process): SEND 8 (the token), SEND 50000, READ 150000.
 */
#define I_SEND		100000
#define I_BACK		50000
#define I_WRITE		200000
#define I_READ		150000
#define I_READ_OFF	1000
#define I_WIN		(512 * KiB)
#define I_TO_PEER	(I_SEND + I_WRITE)
#define I_FROM_PEER	(8 + I_BACK + I_READ)
#define SETTLE_MS	30000

struct info_report {
	struct ordma_chan_info start, end;
};

/*
 * Wait up to SETTLE_MS for a channel to hold again what it held right after
 * connect, with nothing in flight. The ABI does not say whether a chunk
 * is returned before or after the completion that used it is reported, so
 * give the release a moment; the caller asserts exact values afterwards.
 */
static int settle(int fd, __u32 chan, const struct ordma_chan_info *start,
		  struct ordma_chan_info *now)
{
	long long end = chan_now_ms() + SETTLE_MS;
	int ret;

	for (;;) {
		ret = chan_info(fd, chan, now);
		if (ret)
			return ret;
		if ((!now->out_inflight &&
		     now->out_chunks_held == start->out_chunks_held &&
		     now->out_pages_pinned == start->out_pages_pinned) ||
		    chan_now_ms() > end)
			return 0;
		chan_sleep_ms(10);
	}
}

/*
 * A WAIT keeps its timeout while the file streams on: the waiting task runs
 * the channel's passes between its sleeps, and every completion of the
 * stream kicks it again, but it returns once its time is up, long before
 * the stream ends. How long after its time is up depends on the machine (a
 * pass may be under way; the debug kernel under TCG moves a 1 MiB message
 * in about half a second), so the bound is the stream's own length: a WAIT
 * that restarted its timeout at every kick would last about as long.
 *
 * The peer starts receiving when the WAIT starts and takes one message
 * every STREAM_GAP_MS, so the stream lasts at least STREAM_N *
 * STREAM_GAP_MS however fast the device is, and a message cannot complete
 * before (it is longer than the chunks a channel buffers ahead of the
 * receiver): a stream sent at full speed could end within the submissions,
 * which run passes themselves (seconds on the debug kernel), and leave the
 * WAIT nothing to wait for.
 */
#define STREAM_N	48
#define STREAM_LEN	(1 * MiB)
#define STREAM_GAP_MS	25

static int peer_stream(struct chan_pair *p, void *arg)
{
	unsigned char *buf = chan_buf(STREAM_LEN, 0);
	int i;

	PEER_CHECK(buf);
	PEER_EQ(0, ctl_expect(p->ctl, 'G', 120000));
	for (i = 0; i < STREAM_N; i++) {
		chan_sleep_ms(STREAM_GAP_MS);
		PEER_EQ(STREAM_LEN, do_recv(p->fd, p->chan[0], buf,
					    STREAM_LEN));
	}
	return 0;
}

TEST_F_TIMEOUT(chan, wait_timeout_kept_while_streaming, 180)
{
	struct chan_pair *p = &self->p;
	unsigned char *buf = chan_buf(STREAM_LEN, 0);
	struct ordma_cqe cqes[STREAM_N];
	long long t0, took, stream;
	int i, n, got;

	ASSERT_NE(NULL, buf);
	memset(buf, 0x5a, STREAM_LEN);
	ASSERT_EQ(0, chan_pair(p, AF_INET, chan_port(PORT_BASE), 1,
			       peer_stream, NULL));
	for (i = 0; i < STREAM_N; i++)
		ASSERT_EQ(0, xsubmit(p->fd, ORDMA_OP_SEND, p->chan[0], buf,
				     STREAM_LEN, i, 0, 0, 0));
	/* All of them: the paced peer takes far longer than 100 ms. */
	ASSERT_EQ(0, ctl_signal(p->ctl, 'G'));
	t0 = chan_now_ms();
	n = xwait_many(p->fd, cqes, STREAM_N, STREAM_N, 100, 0);
	took = chan_now_ms() - t0;
	if (n == -ETIMEDOUT)
		n = 0;
	ASSERT_LE(0, n);
	ASSERT_GT(STREAM_N, n);
	/* Not before its time (jiffies: the first one may be partial). */
	ASSERT_LE(80, took);
	for (got = 0; got < n; got++)
		ASSERT_EQ(STREAM_LEN, cqes[got].res);
	while (got < STREAM_N) {
		n = xwait_many(p->fd, cqes, STREAM_N, 1, CHAN_WAIT_MS, 0);
		ASSERT_LT(0, n);
		for (i = 0; i < n; i++)
			ASSERT_EQ(STREAM_LEN, cqes[i].res);
		got += n;
	}
	stream = chan_now_ms() - t0;
	fprintf(stderr, "# a 100 ms WAIT returned after %lld ms of a %lld ms stream\n",
		took, stream);
	ASSERT_GT(stream, 2 * took)
		TH_LOG("a 100 ms WAIT took %lld ms of a %lld ms stream", took,
		       stream);
	ASSERT_EQ(0, chan_pair_join(p, 60000));
	chan_buf_free(buf, STREAM_LEN, 0);
}

/*
 * The channel's state once it has settled after connect or accept: the
 * receive chunks a channel keeps posted may be taken asynchronously, after
 * CONNECT/ACCEPT returned, so wait until two readings 100 ms apart agree.
 */
static int info_idle(int fd, __u32 chan, struct ordma_chan_info *ci)
{
	long long end = chan_now_ms() + SETTLE_MS;
	struct ordma_chan_info prev;
	int ret;

	ret = chan_info(fd, chan, &prev);
	for (;;) {
		if (ret)
			return ret;
		chan_sleep_ms(100);
		ret = chan_info(fd, chan, ci);
		if (ret)
			return ret;
		if ((ci->out_chunks_held == prev.out_chunks_held &&
		     ci->out_pages_pinned == prev.out_pages_pinned) ||
		    chan_now_ms() > end)
			return 0;
		prev = *ci;
	}
}

static int peer_info(struct chan_pair *p, void *arg)
{
	struct ordma_addr want = chan_addr(AF_INET, CHAN_IP4, 0);
	unsigned char *win = chan_buf(I_WIN, 1), *rbuf = chan_buf(I_SEND, 3);
	unsigned char *sbuf = chan_buf(I_BACK, 5);
	struct info_report r;
	__u64 tok;
	int fd = p->fd;
	__u32 c = p->chan[0];

	PEER_CHECK(win && rbuf && sbuf);
	PEER_EQ(0, info_idle(fd, c, &r.start));
	PEER_EQ(AF_INET, p->peer_addr[0].family);
	PEER_EQ(0, memcmp(want.addr, p->peer_addr[0].addr, 4));

	PEER_EQ(0, chan_expose(fd, win, I_WIN, ORDMA_ACCESS_REMOTE_READ |
			       ORDMA_ACCESS_REMOTE_WRITE, &tok));
	/* Not a byte before the test process has taken its baseline. */
	PEER_EQ(0, ctl_expect(p->ctl, 'B', 30000));
	PEER_EQ(sizeof(tok), do_send(fd, c, &tok, sizeof(tok)));
	PEER_EQ(I_SEND, do_recv(fd, c, rbuf, I_SEND));
	PEER_EQ(0, chan_check("message", rbuf, I_SEND, chan_seed(I_SEND, 40)));
	chan_fill(sbuf, I_BACK, chan_seed(I_BACK, 41));
	PEER_EQ(I_BACK, do_send(fd, c, sbuf, I_BACK));

	PEER_EQ(0, ctl_expect(p->ctl, 'D', 60000));
	PEER_EQ(0, chan_check("written", win, I_WRITE, chan_seed(I_WRITE, 42)));
	PEER_EQ(0, chan_unexpose(fd, tok));
	PEER_EQ(0, settle(fd, c, &r.start, &r.end));
	PEER_EQ(0, ctl_send(p->ctl, &r, sizeof(r)));
	PEER_EQ(0, ctl_expect(p->ctl, 'Q', 30000));
	return 0;
}

TEST_F_TIMEOUT(chan, chan_info_counters, 120)
{
	struct chan_pair *p = &self->p;
	unsigned char *sbuf = chan_buf(I_WRITE, 1), *rbuf = chan_buf(I_READ, 3);
	struct ordma_chan_info a, b;
	struct info_report r;
	int fd;
	__u32 c;
	__u64 tok;

	ASSERT_NE(NULL, sbuf);
	ASSERT_NE(NULL, rbuf);
	/*
	 * The test before's channels gone first: what they held changes
	 * what our ends' receive rings take, and so the counts compared
	 * below (17 chunks at the start, 16 at the end, under the debug
	 * kernel once).
	 */
	ASSERT_EQ(0, chan_wait_device_idle(60000));
	ASSERT_EQ(0, chan_pair(p, AF_INET, chan_port(PORT_BASE), 1,
			       peer_info, NULL));
	fd = p->fd;
	c = p->chan[0];

	ASSERT_EQ(0, info_idle(fd, c, &a));
	ASSERT_EQ(sizeof(a), a.size);
	ASSERT_EQ(c, a.chan_id);
	ASSERT_EQ((__u32)ORDMA_CHAN_CONNECTED, a.out_state);
	ASSERT_STREQ(CHAN_IBDEV, a.out_ibdev);
	ASSERT_EQ(0ULL, a.out_bytes_tx);
	ASSERT_EQ(0ULL, a.out_bytes_rx);
	ASSERT_EQ(0ULL, a.out_ops);
	ASSERT_EQ(0ULL, a.out_errors);
	ASSERT_EQ(0ULL, a.out_inflight);
	ASSERT_LT(0U, a.out_rx_size);
	ASSERT_EQ(0U, a.__reserved);
	ASSERT_EQ(0, ctl_signal(p->ctl, 'B'));

	ASSERT_EQ((long long)sizeof(tok), do_recv(fd, c, &tok, sizeof(tok)));
	chan_fill(sbuf, I_SEND, chan_seed(I_SEND, 40));
	ASSERT_EQ(I_SEND, do_send(fd, c, sbuf, I_SEND));
	ASSERT_EQ(I_BACK, do_recv(fd, c, rbuf, I_BACK));
	ASSERT_EQ(0, chan_check("message", rbuf, I_BACK, chan_seed(I_BACK, 41)));
	chan_fill(sbuf, I_WRITE, chan_seed(I_WRITE, 42));
	ASSERT_EQ(I_WRITE, do_write(fd, c, sbuf, I_WRITE, tok, 0));
	ASSERT_EQ(I_READ, do_read(fd, c, rbuf, I_READ, tok, I_READ_OFF));
	ASSERT_EQ(0, chan_check_at("read", rbuf, I_READ,
				   chan_seed(I_WRITE, 42), I_READ_OFF));

	ASSERT_EQ(0, ctl_signal(p->ctl, 'D'));
	ASSERT_EQ(0, ctl_recv(p->ctl, &r, sizeof(r), 30000));
	ASSERT_EQ(0, settle(fd, c, &a, &b));

	/* This end. */
	ASSERT_EQ((__u32)ORDMA_CHAN_CONNECTED, b.out_state);
	ASSERT_STREQ(CHAN_IBDEV, b.out_ibdev);
	ASSERT_EQ((__u64)I_TO_PEER, b.out_bytes_tx);
	ASSERT_EQ((__u64)I_FROM_PEER, b.out_bytes_rx);
	ASSERT_EQ(5ULL, b.out_ops);
	ASSERT_EQ(0ULL, b.out_errors);
	ASSERT_EQ(0ULL, b.out_inflight);
	ASSERT_EQ(a.out_chunks_held, b.out_chunks_held);
	ASSERT_EQ(a.out_pages_pinned, b.out_pages_pinned);
	ASSERT_EQ(a.out_rx_size, b.out_rx_size);

	/* The peer's end: read responses count as sent. */
	ASSERT_EQ((__u32)ORDMA_CHAN_CONNECTED, r.start.out_state);
	ASSERT_STREQ(CHAN_IBDEV, r.start.out_ibdev);
	ASSERT_EQ(0ULL, r.start.out_bytes_tx);
	ASSERT_EQ(0ULL, r.start.out_bytes_rx);
	ASSERT_EQ(0ULL, r.start.out_inflight);
	ASSERT_EQ((__u32)ORDMA_CHAN_CONNECTED, r.end.out_state);
	ASSERT_EQ((__u64)I_FROM_PEER, r.end.out_bytes_tx);
	ASSERT_EQ((__u64)I_TO_PEER, r.end.out_bytes_rx);
	ASSERT_EQ(0ULL, r.end.out_errors);
	ASSERT_EQ(0ULL, r.end.out_inflight);
	ASSERT_EQ(r.start.out_chunks_held, r.end.out_chunks_held);
	ASSERT_EQ(r.start.out_pages_pinned, r.end.out_pages_pinned);

	ASSERT_EQ(0, ctl_signal(p->ctl, 'Q'));
	ASSERT_EQ(0, chan_pair_join(p, 30000));
}

/* -- the peer leaves ------------------------------------------------------- */

/*
 * A receive in flight when the peer's process exits completes with
 * ENOTCONN, the channel reports DISCONNECTED, and a new operation fails with
 * ENOTCONN (the ABI allows either the submit or its completion to carry it).
 * Closing the channel then forgets it.
 */
/*
 * Until channel @chan is no longer connected (30 s at most): 0 with its
 * info in @ci, or the error of reading it.
 */
static int wait_not_connected(int fd, __u32 chan, struct ordma_chan_info *ci)
{
	long long end = chan_now_ms() + 30000;
	int ret;

	do {
		ret = chan_info(fd, chan, ci);
		if (ret || ci->out_state != ORDMA_CHAN_CONNECTED)
			return ret;
		chan_sleep_ms(20);
	} while (chan_now_ms() < end);
	return 0;
}

TEST_F_TIMEOUT(chan, peer_exit_disconnects, 60)
{
	struct chan_pair *p = &self->p;
	unsigned char *buf = chan_buf(4096, 1);
	struct ordma_chan_info ci;
	long long res[2] = { 1, 1 };
	struct ordma_cqe cqe;
	int ret, i;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, chan_pair(p, AF_INET, chan_port(PORT_BASE), 1,
			       peer_echo, NULL));
	ASSERT_EQ(0, xsubmit(p->fd, ORDMA_OP_RECV, p->chan[0], buf, 4096, 5,
			     0, 0, 0));
	buf[0] = 'Q';
	ASSERT_EQ(0, xsubmit(p->fd, ORDMA_OP_SEND, p->chan[0], buf, 1, 6,
			     0, 0, 0));
	ASSERT_EQ(0, chan_pair_join(p, 30000));

	/* The send of "Q" succeeded, the receive was cut off. */
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, xwait(p->fd, &cqe, 30000));
		ASSERT_TRUE(cqe.cookie == 5 || cqe.cookie == 6);
		res[cqe.cookie - 5] = cqe.res;
	}
	ASSERT_EQ(1, res[1]);
	ASSERT_EQ(-ENOTCONN, res[0]);

	ASSERT_EQ(0, wait_not_connected(p->fd, p->chan[0], &ci));
	ASSERT_EQ((__u32)ORDMA_CHAN_DISCONNECTED, ci.out_state);
	ASSERT_EQ(0ULL, ci.out_inflight);

	ret = xsubmit(p->fd, ORDMA_OP_SEND, p->chan[0], buf, 1, 7, 0, 0, 0);
	if (ret == 0) {
		ASSERT_EQ(0, xwait(p->fd, &cqe, 30000));
		ASSERT_EQ(7ULL, cqe.cookie);
		ASSERT_EQ(-ENOTCONN, cqe.res);
	} else {
		ASSERT_EQ(-ENOTCONN, ret);
	}

	ASSERT_EQ(0, chan_close(p->fd, p->chan[0]));
	ASSERT_EQ(-ENOENT, chan_info(p->fd, p->chan[0], &ci));
	ASSERT_EQ(-ENOENT, chan_close(p->fd, p->chan[0]));
}

/*
 * Messages the peer sent before it left are still delivered: the peer
 * sends three and exits before this side posts a single receive.
 */
static const size_t outlive_len[] = { 4096, 1 * MiB + 7, 17 };

static int peer_send_and_leave(struct chan_pair *p, void *arg)
{
	unsigned char *buf = chan_buf(2 * MiB, 1);

	PEER_CHECK(buf);
	for (int i = 0; i < 3; i++) {
		chan_fill(buf, outlive_len[i], chan_seed(outlive_len[i], 60 + i));
		PEER_EQ((long long)outlive_len[i],
			do_send(p->fd, p->chan[0], buf, outlive_len[i]));
	}
	return 0;
}

TEST_F_TIMEOUT(chan, messages_outlive_the_peer, 60)
{
	struct chan_pair *p = &self->p;
	unsigned char *buf = chan_buf(2 * MiB, 3);
	struct ordma_chan_info ci;
	struct ordma_cqe cqe;
	int ret;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, chan_pair(p, AF_INET, chan_port(PORT_BASE), 1,
			       peer_send_and_leave, NULL));
	ASSERT_EQ(0, chan_pair_join(p, 30000));
	/* The disconnect arrives first: wait until the channel says so. */
	ASSERT_EQ(0, wait_not_connected(p->fd, p->chan[0], &ci));
	ASSERT_EQ((__u32)ORDMA_CHAN_DISCONNECTED, ci.out_state);

	for (int i = 0; i < 3; i++) {
		memset(buf, 0, 2 * MiB);
		ASSERT_EQ((long long)outlive_len[i],
			  do_recv(p->fd, p->chan[0], buf, 2 * MiB));
		ASSERT_EQ(0, chan_check("message sent before the peer left",
					buf, outlive_len[i],
					chan_seed(outlive_len[i], 60 + i)));
	}
	ret = xsubmit(p->fd, ORDMA_OP_RECV, p->chan[0], buf, 4096, 9, 0, 0, 0);
	if (ret == 0) {
		ASSERT_EQ(0, xwait(p->fd, &cqe, 30000));
		ASSERT_EQ(-ENOTCONN, cqe.res);
	} else {
		ASSERT_EQ(-ENOTCONN, ret);
	}
}

TEST_HARNESS_MAIN
