// SPDX-License-Identifier: GPL-2.0
/*
 * Channels whose pair counts every message against the credits: on soft
 * iWARP (siw), the device of the other protocol family the kernel has in
 * software, and on the rig's device (CHAN_IBDEV: rxe0 unless
 * ORDMA_TEST_IBDEV names another) with the module's credit_all knob, which
 * makes a RoCE pair count the same way.
 *
 * iWARP has no receiver-not-ready retry: a SEND that finds no receive
 * posted ends the connection. So a pair on it counts every message, header
 * only or not, against the receives the peer told (protocol.rst, "Flow
 * control"), and tells its first receives at connect. Before stop 43 the
 * first message over siw panicked the kernel; from stop 43 to 46 ordma
 * refused channels on it (EOPNOTSUPP).
 *
 * The rig builds siw from Debian's linux-source (tools/sw-module) and
 * names it in ORDMA_SIW_KO; the siw variant takes the rig's device off
 * ordma0, brings up siw0 there, and puts the rig's device back afterwards.
 */
#define ORDMA_GUEST_TEST
#include <errno.h>
#include <sys/stat.h>
#include <linux/ordma.h>

#include "ordma_test.h"
#include "ordma_chan.h"
#include "kselftest_harness.h"

#define SIW_DEV		"siw0"
#define SIW_SYSFS	"/sys/class/ordma/" SIW_DEV "/"
#define SIW_NETDEV	"ordma0"
/* Port 1 of the rig's device in the RDMA core's sysfs, with CHAN_IBDEV. */
#define IBDEV_PORT	"/sys/class/infiniband/%s/ports/1/"
#define SIW_PORT_BASE	18900

/*
 * The rig's device is whole again: ordma's context, the port up,
 * 192.0.2.1's GID.
 */
static int ibdev_ready(void)
{
	char ctx[128];

	snprintf(ctx, sizeof(ctx), "/sys/class/ordma/%s", CHAN_IBDEV);
	return !access(ctx, F_OK) &&
	       !ordma_sh("grep -q ACTIVE " IBDEV_PORT "state", CHAN_IBDEV) &&
	       !ordma_sh("grep -q '^0000:0000:0000:0000:0000:ffff:c000:0201$' "
			 IBDEV_PORT "gids/*", CHAN_IBDEV);
}

static long long siw_count(const char *attr)
{
	char path[128];

	snprintf(path, sizeof(path), SIW_SYSFS "%s", attr);
	return ordma_read_ll(path);
}

#define CREDIT_ALL_KNOB	"/sys/module/ordma/parameters/credit_all"

/* The device's count of @attr in ordma's sysfs. */
static long long dev_count(const char *dev, const char *attr)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/ordma/%s/%s", dev, attr);
	return ordma_read_ll(path);
}

FIXTURE(iw) {
	int up;		/* the rig's device is off: the teardown puts it back */
	int knob;	/* credit_all was set: the teardown clears it */
	int ran;	/* the device is up: the test runs */
	struct chan_pair p;
};

/*
 * @siw: the channels run on siw0; otherwise on the rig's device with
 * credit_all set.
 * @dev: the device they run on; NULL: the rig's, CHAN_IBDEV (see IW_DEV).
 */
FIXTURE_VARIANT(iw) {
	int siw;
	const char *dev;
};

FIXTURE_VARIANT_ADD(iw, siw) {
	.siw = 1,
	.dev = SIW_DEV,
};

FIXTURE_VARIANT_ADD(iw, rxe_credit_all) {
	.siw = 0,
	.dev = NULL,
};

/* The device the variant's channels run on. */
#define IW_DEV		(variant->dev ? variant->dev : CHAN_IBDEV)

/* The harness runs a test after its setup skipped: it must skip again. */
#define IW_NEED() do {							\
	if (!self->ran)							\
		SKIP(return, "%s is not up", IW_DEV);			\
} while (0)

FIXTURE_SETUP(iw)
{
	const char *ko = getenv("ORDMA_SIW_KO");
	long long end;

	ORDMA_TEST_FILTER();
	chan_pair_init(&self->p);
	self->up = 0;
	self->knob = 0;
	self->ran = 0;
	if (!variant->siw) {
		ASSERT_EQ(0, ordma_sh("echo 1 > " CREDIT_ALL_KNOB));
		self->knob = 1;
		self->ran = 1;
		return;
	}
	if (!ko || !*ko)
		SKIP(return, "no siw.ko (ORDMA_SIW_KO): tools/vmtest builds one for Debian's kernels only");
	if (!strcmp(ordma_dev_type(), "siw"))
		SKIP(return, "the rig's device is siw already: every suite runs on it (tools/vmtest --dev siw)");
	ASSERT_EQ(0, ordma_sh("modprobe -a libcrc32c crc32c_generic"));
	ASSERT_EQ(0, ordma_sh("rdma link del %s", CHAN_IBDEV));
	self->up = 1;
	ASSERT_EQ(0, ordma_sh("insmod %s", ko));
	ASSERT_EQ(0, ordma_sh("rdma link add %s type siw netdev %s", SIW_DEV,
			      SIW_NETDEV));
	/* ordma's ib_client attaches to it as to any device. */
	end = chan_now_ms() + CHAN_PEER_MS;
	while (access(SIW_SYSFS, F_OK) && chan_now_ms() < end)
		chan_sleep_ms(20);
	ASSERT_EQ(0, access(SIW_SYSFS, F_OK));
	self->ran = 1;
}

FIXTURE_TEARDOWN(iw)
{
	long long end = chan_now_ms() + CHAN_PEER_MS;

	chan_pair_destroy(&self->p);
	/* Every channel of the test is gone before the device is. */
	if (self->ran)
		while (dev_count(IW_DEV, "channels") > 0 &&
		       chan_now_ms() < end)
			chan_sleep_ms(20);
	if (self->knob)
		ordma_sh("echo 0 > " CREDIT_ALL_KNOB);
	if (!self->up)
		return;
	ordma_sh("rdma link del %s", SIW_DEV);
	ordma_sh("rmmod siw");
	if (ordma_sh("rdma link add %s type %s netdev %s", CHAN_IBDEV,
		     ordma_dev_type(), SIW_NETDEV))
		TH_LOG("cannot add %s on %s again", CHAN_IBDEV, SIW_NETDEV);
	/* The test binaries after this one need it whole. */
	while (!ibdev_ready() && chan_now_ms() < end)
		chan_sleep_ms(20);
	if (!ibdev_ready())
		TH_LOG("%s is not back", CHAN_IBDEV);
}

TEST_F(iw, context_and_pool)
{
	IW_NEED();
	if (!variant->siw)
		SKIP(return, "siw only");
	ASSERT_TRUE(ordma_sh_contains("cat " SIW_SYSFS "ibdev", SIW_DEV));
	EXPECT_EQ(0, siw_count("channels"));
	EXPECT_LT(0, siw_count("chunks_total"));
	EXPECT_EQ(siw_count("chunks_total"), siw_count("chunks_free"));
}

/*
 * Messages of every path: a header alone, one chunk, several, and large
 * ones whose receive is registered and offered (placed), echoed back and
 * checked byte for byte.
 */
static const size_t echo_sizes[] = {
	1, 56, 1000, 4096, 16384, 65536 + 7, 300 * 1024, 1024 * 1024,
};

TEST_F_TIMEOUT(iw, echo_every_size, 120)
{
	unsigned char *src = chan_buf(CHAN_ECHO_MAX, 1);
	unsigned char *dst = chan_buf(CHAN_ECHO_MAX, 3);
	struct chan_pair *p = &self->p;
	size_t i, n;
	int round;

	IW_NEED();
	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	ASSERT_EQ(0, chan_pair(p, AF_INET, chan_port(SIW_PORT_BASE), 1,
			       peer_echo, NULL));
	ASSERT_LT(0, dev_count(IW_DEV, "channels"));
	/* Twice: the second round finds the receives registered before. */
	for (round = 0; round < 2; round++) {
		for (i = 0; i < ARRAY_SIZE(echo_sizes); i++) {
			n = echo_sizes[i];
			chan_fill(src, n, chan_seed(n, 70 + round));
			memset(dst, 0, n);
			ASSERT_EQ((long long)n, do_send(p->fd, p->chan[0], src, n));
			ASSERT_EQ((long long)n, do_recv(p->fd, p->chan[0], dst, n));
			ASSERT_EQ(0, chan_check("echo", dst, n,
						chan_seed(n, 70 + round)));
		}
	}
	ASSERT_EQ(1, do_send(p->fd, p->chan[0], "Q", 1));
	ASSERT_EQ(0, chan_pair_join(p, 30000));
}

/*
 * Both ends send BURST small messages at once, every receive posted
 * first: the credits, not a receive-not-ready retry, keep each message
 * off a queue with no receive. Every message says whose and which it is.
 */
#define BURST		200
#define BURST_LEN	100

static int burst_side(int fd, __u32 chan, unsigned char salt)
{
	static unsigned char in[BURST][BURST_LEN], out[BURST][BURST_LEN];
	struct ordma_cqe cqe[64];
	int i, k, n, got = 0, sent = 0;

	for (i = 0; i < BURST; i++) {
		memset(in[i], 0, BURST_LEN);
		if (xsubmit(fd, ORDMA_OP_RECV, chan, in[i], BURST_LEN, i, 0, 0, 0))
			return -1;
	}
	for (i = 0; i < BURST; i++) {
		chan_fill(out[i], BURST_LEN, chan_seed(i, salt));
		if (xsubmit(fd, ORDMA_OP_SEND, chan, out[i], BURST_LEN,
			    BURST + i, 0, 0, 0))
			return -2;
	}
	while (got < BURST || sent < BURST) {
		n = xwait_many(fd, cqe, 64, 1, CHAN_WAIT_MS, 0);
		if (n <= 0)
			return -3;
		for (k = 0; k < n; k++) {
			if (cqe[k].res != BURST_LEN)
				return -4;
			if (cqe[k].cookie >= BURST) {
				sent++;
				continue;
			}
			/* Receives complete in the order they were posted. */
			if (cqe[k].cookie != (__u64)got)
				return -5;
			got++;
		}
	}
	/* The other side's messages, in its order. */
	for (i = 0; i < BURST; i++)
		if (chan_check("burst", in[i], BURST_LEN,
			       chan_seed(i, salt ^ 1)))
			return -6;
	return 0;
}

static int peer_burst(struct chan_pair *p, void *arg)
{
	(void)arg;
	PEER_EQ(0, ctl_expect(p->ctl, 'B', 30000));
	PEER_EQ(0, burst_side(p->fd, p->chan[0], 81));
	return 0;
}

TEST_F_TIMEOUT(iw, burst_both_ways, 120)
{
	struct chan_pair *p = &self->p;

	IW_NEED();
	ASSERT_EQ(0, chan_pair(p, AF_INET, chan_port(SIW_PORT_BASE), 1,
			       peer_burst, NULL));
	ASSERT_EQ(0, ctl_signal(p->ctl, 'B'));
	ASSERT_EQ(0, burst_side(p->fd, p->chan[0], 80));
	ASSERT_EQ(0, chan_pair_join(p, 60000));
}

/* One-sided: write into the peer's window, read it back, and its tail. */
#define WIN_LEN		(1024 * 1024)
#define WR_OFF		5000
#define WR_LEN		(300 * 1024)

static int peer_window(struct chan_pair *p, void *arg)
{
	unsigned char *win = chan_buf(WIN_LEN, 3);
	__u64 tok;

	(void)arg;
	PEER_CHECK(win);
	chan_fill(win, WIN_LEN, chan_seed(WIN_LEN, 90));
	PEER_EQ(0, chan_expose(p->fd, win, WIN_LEN,
			       ORDMA_ACCESS_REMOTE_READ |
			       ORDMA_ACCESS_REMOTE_WRITE, &tok));
	PEER_EQ(sizeof(tok), do_send(p->fd, p->chan[0], &tok, sizeof(tok)));
	PEER_EQ(0, ctl_expect(p->ctl, 'C', 60000));
	PEER_EQ(0, chan_check("window head", win, WR_OFF,
			      chan_seed(WIN_LEN, 90)));
	PEER_EQ(0, chan_check("window written", win + WR_OFF, WR_LEN,
			      chan_seed(WR_LEN, 91)));
	PEER_EQ(0, chan_check_at("window tail", win + WR_OFF + WR_LEN,
				 WIN_LEN - WR_OFF - WR_LEN,
				 chan_seed(WIN_LEN, 90), WR_OFF + WR_LEN));
	PEER_EQ(0, chan_unexpose(p->fd, tok));
	return 0;
}

TEST_F_TIMEOUT(iw, window_write_read, 120)
{
	unsigned char *src = chan_buf(WR_LEN, 1), *dst = chan_buf(WIN_LEN, 7);
	unsigned char *ref = malloc(WIN_LEN);
	struct chan_pair *p = &self->p;
	__u64 tok;

	IW_NEED();
	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	ASSERT_NE(NULL, ref);
	ASSERT_EQ(0, chan_pair(p, AF_INET, chan_port(SIW_PORT_BASE), 1,
			       peer_window, NULL));
	ASSERT_EQ((long long)sizeof(tok),
		  do_recv(p->fd, p->chan[0], &tok, sizeof(tok)));
	chan_fill(src, WR_LEN, chan_seed(WR_LEN, 91));
	chan_fill(ref, WIN_LEN, chan_seed(WIN_LEN, 90));
	memcpy(ref + WR_OFF, src, WR_LEN);
	ASSERT_EQ(WR_LEN, do_write(p->fd, p->chan[0], src, WR_LEN, tok, WR_OFF));
	ASSERT_EQ(WIN_LEN, do_read(p->fd, p->chan[0], dst, WIN_LEN, tok, 0));
	ASSERT_EQ(0, memcmp(dst, ref, WIN_LEN));
	ASSERT_EQ(0, ctl_signal(p->ctl, 'C'));
	ASSERT_EQ(0, chan_pair_join(p, 60000));
	free(ref);
}

/*
 * A peer that sends and leaves: what it sent is delivered, then the next
 * receive fails with ENOTCONN, as a disconnect gives (on iWARP the QP's
 * flush comes before the CM's DISCONNECTED: not an EIO). The peer leaves
 * once this side's channel has the message: on iWARP a send completes when
 * TCP took its bytes, and one run in about 120 on 6.12 lost the message
 * of a peer that closed at once (testing.rst).
 */
static int peer_send_and_leave(struct chan_pair *p, void *arg)
{
	unsigned char buf[4096];

	(void)arg;
	chan_fill(buf, sizeof(buf), chan_seed(sizeof(buf), 95));
	PEER_EQ(sizeof(buf), do_send(p->fd, p->chan[0], buf, sizeof(buf)));
	PEER_EQ(0, ctl_expect(p->ctl, 'L', 60000));
	return 0;
}

TEST_F_TIMEOUT(iw, peer_leaves_gracefully, 90)
{
	struct chan_pair *p = &self->p;
	unsigned char buf[4096];
	struct ordma_chan_info ci;
	struct ordma_cqe cqe;
	long long end;
	int ret;

	IW_NEED();
	ASSERT_EQ(0, chan_pair(p, AF_INET, chan_port(SIW_PORT_BASE), 1,
			       peer_send_and_leave, NULL));
	/* The message is in: its bytes are counted when it arrives. */
	end = chan_now_ms() + 30000;
	do {
		ASSERT_EQ(0, chan_info(p->fd, p->chan[0], &ci));
		if (ci.out_bytes_rx >= sizeof(buf))
			break;
		chan_sleep_ms(5);
	} while (chan_now_ms() < end);
	ASSERT_LE(sizeof(buf), ci.out_bytes_rx);
	ASSERT_EQ(0, ctl_signal(p->ctl, 'L'));
	ASSERT_EQ(0, chan_pair_join(p, 30000));
	end = chan_now_ms() + 30000;
	do {
		ASSERT_EQ(0, chan_info(p->fd, p->chan[0], &ci));
		if (ci.out_state != ORDMA_CHAN_CONNECTED)
			break;
		chan_sleep_ms(20);
	} while (chan_now_ms() < end);
	ASSERT_EQ((__u32)ORDMA_CHAN_DISCONNECTED, ci.out_state);
	ASSERT_EQ((long long)sizeof(buf),
		  do_recv(p->fd, p->chan[0], buf, sizeof(buf)));
	ASSERT_EQ(0, chan_check("sent before leaving", buf, sizeof(buf),
				chan_seed(sizeof(buf), 95)));
	ret = xsubmit(p->fd, ORDMA_OP_RECV, p->chan[0], buf, sizeof(buf), 9,
		      0, 0, 0);
	if (ret == 0) {
		ASSERT_EQ(0, xwait(p->fd, &cqe, 30000));
		ASSERT_EQ(-ENOTCONN, cqe.res);
	} else {
		ASSERT_EQ(-ENOTCONN, ret);
	}
}

TEST_HARNESS_MAIN
