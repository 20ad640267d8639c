// SPDX-License-Identifier: GPL-2.0
/*
 * ordma under load and when things go away: 64 channels with a megabyte in
 * flight on each, a pool much smaller than the demand, the per-channel chunk
 * quota, and a peer that dies, closes its file or closes its channel in the
 * middle of a 64 MiB transfer (the survivor's operation fails, and every QP
 * and pool chunk comes back). Every byte that arrives is checked.
 */
#define ORDMA_GUEST_TEST
#include <signal.h>
#include <sys/wait.h>
#include "ordma_test.h"
#include "ordma_chan.h"
#include "kselftest_harness.h"

#define PORT_BASE	18900

FIXTURE(stress) {
	struct chan_pair p;
	int saved_pool, saved_quota;
	unsigned long long pool_bytes, quota;
};

FIXTURE_SETUP(stress)
{
	ORDMA_TEST_FILTER();
	chan_pair_init(&self->p);
}

FIXTURE_TEARDOWN(stress)
{
	chan_pair_destroy(&self->p);
	/* Put the knobs back even when the test failed half-way. */
	if (self->saved_pool && sysfs_set("pool_bytes", self->pool_bytes))
		fprintf(stderr, "# could not restore pool_bytes\n");
	if (self->saved_quota && sysfs_set("chan_quota_chunks", self->quota))
		fprintf(stderr, "# could not restore chan_quota_chunks\n");
}

/* Set a sysfs knob of CHAN_IBDEV; remember its old value for the teardown. */
static void set_knob(struct __test_metadata *_metadata, const char *attr,
		     unsigned long long val, unsigned long long *old,
		     int *saved)
{
	unsigned long long now;

	ASSERT_EQ(0, sysfs_get(attr, old));
	*saved = 1;
	ASSERT_EQ(0, sysfs_set(attr, val));
	ASSERT_EQ(0, sysfs_get(attr, &now));
	ASSERT_EQ(val, now);
}

static void restore_knob(struct __test_metadata *_metadata, const char *attr,
			 unsigned long long old, int *saved)
{
	unsigned long long now;

	ASSERT_EQ(0, sysfs_set(attr, old));
	ASSERT_EQ(0, sysfs_get(attr, &now));
	ASSERT_EQ(old, now);
	*saved = 0;
}

/*
 * Both ends of a many-channel transfer: post a receive of @len on each of
 * the @n channels, then a send of @len (if @send), and reap them all.
 * Sends carry pattern salt (@tx_salt + i), receives must match
 * (@rx_salt + i). Returns 0, or a line to blame.
 */
struct bulk {
	int n;
	size_t len;
	int send, recv;
	__u64 tx_salt, rx_salt;
	int reap_ms;		/* how long to wait for them all; 0: 90 s */
};

#define COOKIE(op, i)	(((__u64)(op) << 32) | (i))

/* What the channels and the pool hold, for a transfer that stopped. */
static void bulk_dump(int fd, const __u32 *chan, int n)
{
	static const char *const attr[] = {
		"chunks_total", "chunks_free", "chunks_held", "alloc_waits",
		"channels", "pages_pinned", "mrs_live",
	};
	struct ordma_chan_info ci;
	unsigned long long v;
	unsigned int k;
	int i;

	for (k = 0; k < sizeof(attr) / sizeof(attr[0]); k++)
		if (!sysfs_get(attr[k], &v))
			fprintf(stderr, "# %s %llu\n", attr[k], v);
	for (i = 0; i < n; i++) {
		if (chan_info(fd, chan[i], &ci))
			continue;
		fprintf(stderr, "# channel %d: state %u tx %llu rx %llu ops %llu inflight %llu chunks %llu pages %llu mrs %llu rx_size %u\n",
			i, ci.out_state, (unsigned long long)ci.out_bytes_tx,
			(unsigned long long)ci.out_bytes_rx,
			(unsigned long long)ci.out_ops,
			(unsigned long long)ci.out_inflight,
			(unsigned long long)ci.out_chunks_held,
			(unsigned long long)ci.out_pages_pinned,
			(unsigned long long)ci.out_mrs_live, ci.out_rx_size);
	}
}

static int run_bulk(int fd, const __u32 *chan, const struct bulk *b)
{
	unsigned char *rbuf[CHAN_MAX] = { NULL }, *sbuf[CHAN_MAX] = { NULL };
	__u64 cookies[2 * CHAN_MAX];
	long long res[2 * CHAN_MAX];
	int i, n = 0, ret = 0;

	for (i = 0; i < b->n && b->recv; i++) {
		rbuf[i] = chan_buf(b->len, 1 + 2 * (i % 64));
		if (!rbuf[i])
			return __LINE__;
		cookies[n] = COOKIE(ORDMA_OP_RECV, i);
		ret = xsubmit(fd, ORDMA_OP_RECV, chan[i], rbuf[i], b->len,
			      cookies[n++], 0, 0, 0);
		if (ret) {
			fprintf(stderr, "# RECV on channel %d: %s\n", i,
				strerror(-ret));
			return __LINE__;
		}
	}
	for (i = 0; i < b->n && b->send; i++) {
		sbuf[i] = chan_buf(b->len, 3 + 2 * (i % 64));
		if (!sbuf[i])
			return __LINE__;
		chan_fill(sbuf[i], b->len, chan_seed(b->len, b->tx_salt + i));
		cookies[n] = COOKIE(ORDMA_OP_SEND, i);
		ret = xsubmit(fd, ORDMA_OP_SEND, chan[i], sbuf[i], b->len,
			      cookies[n++], 0, 0, 0);
		if (ret) {
			fprintf(stderr, "# SEND on channel %d: %s\n", i,
				strerror(-ret));
			return __LINE__;
		}
	}
	ret = xreap(fd, n, cookies, res, b->reap_ms ? b->reap_ms : 90000);
	if (ret) {
		fprintf(stderr, "# reaping %d completions: %s\n", n,
			strerror(-ret));
		bulk_dump(fd, chan, b->n);
		return __LINE__;
	}
	for (i = 0; i < n; i++) {
		if (res[i] != (long long)b->len) {
			fprintf(stderr, "# %s on channel %u: res %lld, expected %zu\n",
				cookies[i] >> 32 == ORDMA_OP_SEND ? "SEND" : "RECV",
				(unsigned int)cookies[i], res[i], b->len);
			ret = __LINE__;
		}
	}
	for (i = 0; i < b->n && b->recv; i++) {
		if (chan_check("received", rbuf[i], b->len,
			       chan_seed(b->len, b->rx_salt + i)) ||
		    chan_guard_ok("receive buffer", rbuf[i], b->len,
				  1 + 2 * (i % 64))) {
			fprintf(stderr, "# ... on channel %d\n", i);
			ret = __LINE__;
		}
		chan_buf_free(rbuf[i], b->len, 1 + 2 * (i % 64));
	}
	for (i = 0; i < b->n && b->send; i++)
		chan_buf_free(sbuf[i], b->len, 3 + 2 * (i % 64));
	return ret;
}

static int peer_bulk(struct chan_pair *p, void *arg)
{
	return run_bulk(p->fd, p->chan, arg) ? 1 : 0;
}

/* -- 64 channels, 1 MiB each way on every one at the same time ------------- */

TEST_F_TIMEOUT(stress, sixty_four_channels, 240)
{
	int n = ordma_scaled(64, 16);
	struct bulk mine = { n, 1 * MiB, 1, 1, 1000, 2000, 0 };
	struct bulk peer = { n, 1 * MiB, 1, 1, 2000, 1000, 0 };

	ASSERT_EQ(0, chan_pair(&self->p, AF_INET, chan_port(PORT_BASE), n,
			       peer_bulk, &peer));
	ASSERT_EQ(0, run_bulk(self->p.fd, self->p.chan, &mine));
	ASSERT_EQ(0, chan_pair_join(&self->p, 60000));
}

/* -- one message of 1 GiB, every byte checked -------------------------------- */

TEST_F_TIMEOUT(stress, one_gib_message, 300)
{
	size_t len = ordma_scaled(1024 * MiB, 32 * MiB);
	struct bulk mine = { 1, len, 1, 0, 7000, 0, 0 };
	struct bulk peer = { 1, len, 0, 1, 0, 7000, 0 };

	ASSERT_EQ(0, chan_pair(&self->p, AF_INET, chan_port(PORT_BASE), 1,
			       peer_bulk, &peer));
	ASSERT_EQ(0, run_bulk(self->p.fd, self->p.chan, &mine));
	ASSERT_EQ(0, chan_pair_join(&self->p, 120000));
}

/* -- the pool is resized again and again while 4 x 16 MiB move ------------- */

TEST_F_TIMEOUT(stress, pool_resized_under_load, 240)
{
	static const unsigned long long sizes[] = { 2 * MiB, 32 * MiB, 4 * MiB,
						    64 * MiB, 3 * MiB };
	size_t len = ordma_scaled(16 * MiB, 2 * MiB);
	struct bulk mine = { 4, len, 1, 1, 5000, 6000, 0 };
	struct bulk peer = { 4, len, 1, 1, 6000, 5000, 0 };
	unsigned long long tx0, tx1, ops0, ops1, old;
	int st, saved;
	pid_t resizer;

	ASSERT_EQ(0, sysfs_get("bytes_tx", &tx0));
	ASSERT_EQ(0, sysfs_get("ops", &ops0));
	ASSERT_EQ(0, sysfs_get("pool_bytes", &old));
	self->pool_bytes = old;
	self->saved_pool = 1;
	ASSERT_EQ(0, chan_pair(&self->p, AF_INET, chan_port(PORT_BASE), 4,
			       peer_bulk, &peer));
	resizer = fork();
	ASSERT_LE(0, resizer);
	if (!resizer) {
		for (unsigned int i = 0;; i++) {
			if (sysfs_set("pool_bytes", sizes[i % 5]))
				_exit(1);
			chan_sleep_ms(20);
		}
	}
	saved = run_bulk(self->p.fd, self->p.chan, &mine);
	kill(resizer, SIGKILL);
	ASSERT_EQ(resizer, waitpid(resizer, &st, 0));
	ASSERT_TRUE(WIFSIGNALED(st)) TH_LOG("a resize failed");
	ASSERT_EQ(0, saved);
	ASSERT_EQ(0, chan_pair_join(&self->p, 60000));

	/* Both ends are on CHAN_IBDEV: the device saw both directions. */
	ASSERT_EQ(0, sysfs_get("bytes_tx", &tx1));
	ASSERT_EQ(0, sysfs_get("ops", &ops1));
	ASSERT_LE(tx0 + 2 * mine.n * mine.len, tx1);
	ASSERT_LE(ops0 + 4 * 4, ops1);
	restore_knob(_metadata, "pool_bytes", old, &self->saved_pool);
}

/*
 * -- a pool of 32 chunks (2 per channel end) for 8 x 16 MiB -------------------
 *
 * The ends made once the pool is half held (7 to 10 of the 16, as the first
 * rings' passes and the later connects interleave) receive in their own
 * 2 KiB buffer for good: 1992 bytes a message. A slow guest takes long
 * over 16 MiB that way, so the reaps wait up to 200 s.
 */
TEST_F_TIMEOUT(stress, pool_smaller_than_demand, 300)
{
	size_t len = ordma_scaled(16 * MiB, 2 * MiB);
	struct bulk mine = { 8, len, 1, 0, 3000, 0, 200000 };
	struct bulk peer = { 8, len, 0, 1, 0, 3000, 200000 };

	set_knob(_metadata, "pool_bytes", 2 * MiB, &self->pool_bytes,
		 &self->saved_pool);
	ASSERT_EQ(0, chan_pair(&self->p, AF_INET, chan_port(PORT_BASE), 8,
			       peer_bulk, &peer));
	ASSERT_EQ(0, run_bulk(self->p.fd, self->p.chan, &mine));
	ASSERT_EQ(0, chan_pair_join(&self->p, 60000));
	chan_pair_destroy(&self->p);
	restore_knob(_metadata, "pool_bytes", self->pool_bytes,
		     &self->saved_pool);
}

/* -- chan_quota_chunks ------------------------------------------------------ */

#define QUOTA		4
#define QUOTA_LEN	(4 * MiB)

struct quota_report {
	__u64 max_held;
	int samples;
};

/*
 * Receive QUOTA_LEN and send QUOTA_LEN at once on chan[0], sampling
 * out_chunks_held until both complete. Returns 0, or a line to blame.
 */
static int quota_run(int fd, __u32 chan, __u64 rx_salt, __u64 tx_salt,
		     struct quota_report *r)
{
	unsigned char *rbuf = chan_buf(QUOTA_LEN, 1), *sbuf = chan_buf(QUOTA_LEN, 3);
	long long end = chan_now_ms() + 120000, res[2] = { 1, 1 };
	struct ordma_chan_info ci;
	struct ordma_cqe cqe[2];
	int done = 0, n, k, ret;

	if (!rbuf || !sbuf)
		return __LINE__;
	memset(r, 0, sizeof(*r));
	if (chan_info(fd, chan, &ci))
		return __LINE__;
	r->max_held = ci.out_chunks_held;
	r->samples = 1;
	chan_fill(sbuf, QUOTA_LEN, chan_seed(QUOTA_LEN, tx_salt));
	if (xsubmit(fd, ORDMA_OP_RECV, chan, rbuf, QUOTA_LEN, 0, 0, 0, 0) ||
	    xsubmit(fd, ORDMA_OP_SEND, chan, sbuf, QUOTA_LEN, 1, 0, 0, 0))
		return __LINE__;
	while (done < 2) {
		ret = chan_info(fd, chan, &ci);
		if (ret)
			return __LINE__;
		if (ci.out_chunks_held > r->max_held)
			r->max_held = ci.out_chunks_held;
		r->samples++;
		n = xwait_many(fd, cqe, 2, 1, 0, ORDMA_F_NONBLOCK);
		if (n == -EAGAIN) {
			if (chan_now_ms() > end)
				return __LINE__;
			usleep(200);
			continue;
		}
		if (n < 0)
			return __LINE__;
		for (k = 0; k < n; k++) {
			if (cqe[k].cookie > 1 || res[cqe[k].cookie] != 1)
				return __LINE__;
			res[cqe[k].cookie] = cqe[k].res;
			done++;
		}
	}
	if (res[0] != QUOTA_LEN || res[1] != QUOTA_LEN) {
		fprintf(stderr, "# quota transfer: recv %lld, send %lld\n",
			res[0], res[1]);
		return __LINE__;
	}
	if (chan_check("received under quota", rbuf, QUOTA_LEN,
		       chan_seed(QUOTA_LEN, rx_salt)))
		return __LINE__;
	chan_buf_free(rbuf, QUOTA_LEN, 1);
	chan_buf_free(sbuf, QUOTA_LEN, 3);
	return 0;
}

static int peer_quota(struct chan_pair *p, void *arg)
{
	struct quota_report r;

	PEER_EQ(0, quota_run(p->fd, p->chan[0], 71, 72, &r));
	PEER_EQ(0, ctl_send(p->ctl, &r, sizeof(r)));
	return 0;
}

TEST_F_TIMEOUT(stress, chan_quota_chunks_enforced, 180)
{
	struct quota_report mine, peer;

	set_knob(_metadata, "chan_quota_chunks", QUOTA, &self->quota,
		 &self->saved_quota);
	ASSERT_EQ(0, chan_pair(&self->p, AF_INET, chan_port(PORT_BASE), 1,
			       peer_quota, NULL));
	ASSERT_EQ(0, quota_run(self->p.fd, self->p.chan[0], 72, 71, &mine));
	ASSERT_EQ(0, ctl_recv(self->p.ctl, &peer, sizeof(peer), 60000));
	ASSERT_EQ(0, chan_pair_join(&self->p, 30000));
	TH_LOG("chunks held at most: %llu here (%d samples), %llu at the peer (%d samples)",
	       (unsigned long long)mine.max_held, mine.samples,
	       (unsigned long long)peer.max_held, peer.samples);
	ASSERT_GE((__u64)QUOTA, mine.max_held);
	ASSERT_GE((__u64)QUOTA, peer.max_held);
	ASSERT_LT(2, mine.samples);
	chan_pair_destroy(&self->p);
	restore_knob(_metadata, "chan_quota_chunks", self->quota,
		     &self->saved_quota);
}

/* -- the peer goes away in the middle of a 64 MiB transfer ------------------ */

#define ABORT_LEN	(64 * MiB)

enum how { BY_KILL, BY_CLOSE_FD, BY_CLOSE_CHAN };

FIXTURE(abort) {
	struct chan_pair p;
};

FIXTURE_VARIANT(abort) {
	enum how how;
	int peer_sends;		/* the peer is the sender, else the receiver */
};

FIXTURE_VARIANT_ADD(abort, kill_sender) { .how = BY_KILL, .peer_sends = 1 };
FIXTURE_VARIANT_ADD(abort, kill_receiver) { .how = BY_KILL, .peer_sends = 0 };
FIXTURE_VARIANT_ADD(abort, close_fd_sender) { .how = BY_CLOSE_FD, .peer_sends = 1 };
FIXTURE_VARIANT_ADD(abort, close_fd_receiver) { .how = BY_CLOSE_FD, .peer_sends = 0 };
FIXTURE_VARIANT_ADD(abort, close_chan_sender) { .how = BY_CLOSE_CHAN, .peer_sends = 1 };
FIXTURE_VARIANT_ADD(abort, close_chan_receiver) { .how = BY_CLOSE_CHAN, .peer_sends = 0 };

FIXTURE_SETUP(abort)
{
	ORDMA_TEST_FILTER();
	chan_pair_init(&self->p);
}

FIXTURE_TEARDOWN(abort)
{
	chan_pair_destroy(&self->p);
}

/*
 * The peer: on 'G' start its half of the 64 MiB transfer, say 'S'; on 'K'
 * close its file ('k' when done) or its channel ('k' and the res of its
 * own operation, which must be ECANCELED); on 'X' leave. When it is killed
 * it never gets further than 'S'.
 */
static int peer_abort(struct chan_pair *p, void *arg)
{
	const FIXTURE_VARIANT(abort) *v = arg;
	unsigned char *buf = chan_buf(ABORT_LEN, 1);
	struct ordma_cqe cqe;
	long long res;
	char cmd;

	PEER_CHECK(buf);
	memset(buf, 0x5a, ABORT_LEN);
	PEER_EQ(0, ctl_expect(p->ctl, 'G', 60000));
	PEER_EQ(0, xsubmit(p->fd, v->peer_sends ? ORDMA_OP_SEND : ORDMA_OP_RECV,
			   p->chan[0], buf, ABORT_LEN, 42, 0, 0, 0));
	PEER_EQ(0, ctl_signal(p->ctl, 'S'));
	PEER_EQ(0, ctl_recv(p->ctl, &cmd, 1, 60000));
	if (cmd == 'K' && v->how == BY_CLOSE_FD) {
		PEER_EQ(0, close(p->fd));
		p->fd = -1;
		PEER_EQ(0, ctl_signal(p->ctl, 'k'));
		PEER_EQ(0, ctl_recv(p->ctl, &cmd, 1, 60000));
	} else if (cmd == 'K' && v->how == BY_CLOSE_CHAN) {
		PEER_EQ(0, chan_close(p->fd, p->chan[0]));
		PEER_EQ(0, xwait(p->fd, &cqe, 30000));
		PEER_EQ(42, cqe.cookie);
		res = cqe.res;
		PEER_EQ(0, ctl_signal(p->ctl, 'k'));
		PEER_EQ(0, ctl_send(p->ctl, &res, sizeof(res)));
		PEER_EQ(-ENOENT, chan_info(p->fd, p->chan[0], &(struct ordma_chan_info){ 0 }));
		PEER_EQ(0, ctl_recv(p->ctl, &cmd, 1, 60000));
	}
	PEER_EQ('X', cmd);
	return 0;
}

/* Nothing of ordma left in the RDMA core, the pool whole, within 30 s. */
static void check_released(struct __test_metadata *_metadata, int qps_before)
{
	long long end = chan_now_ms() + 30000;
	unsigned long long total = 0, free_ = 0, held = 0, chans = 0;
	unsigned long long pinned = 1, mrs = 1;
	int qps = -1, ours = -1;

	for (;;) {
		qps = rdma_res_count("qp", "");
		ours = rdma_res_count("qp", "[ordma]");
		ASSERT_EQ(0, sysfs_get("chunks_total", &total));
		ASSERT_EQ(0, sysfs_get("chunks_free", &free_));
		ASSERT_EQ(0, sysfs_get("chunks_held", &held));
		ASSERT_EQ(0, sysfs_get("channels", &chans));
		ASSERT_EQ(0, sysfs_get("pages_pinned", &pinned));
		ASSERT_EQ(0, sysfs_get("mrs_live", &mrs));
		if ((qps == qps_before && ours == 0 && total == free_ &&
		     !held && !chans && !pinned && !mrs) ||
		    chan_now_ms() > end)
			break;
		chan_sleep_ms(50);
	}
	ASSERT_EQ(0, ours) TH_LOG("an [ordma] QP is left");
	ASSERT_EQ(qps_before, qps) TH_LOG("QPs left over");
	ASSERT_EQ(total, free_) TH_LOG("pool chunks still held");
	ASSERT_EQ(0ULL, held) TH_LOG("chunks_held is not back to 0");
	ASSERT_EQ(0ULL, chans) TH_LOG("channels is not back to 0");
	ASSERT_EQ(0ULL, pinned) TH_LOG("pages still pinned");
	ASSERT_EQ(0ULL, mrs) TH_LOG("memory regions still live");
}

TEST_F_TIMEOUT(abort, mid_transfer, 120)
{
	struct chan_pair *p = &self->p;
	unsigned char *buf = chan_buf(ABORT_LEN, 3);
	__u32 my_op = variant->peer_sends ? ORDMA_OP_RECV : ORDMA_OP_SEND;
	struct ordma_chan_info ci;
	struct ordma_cqe cqe;
	long long end, peer_res = 0;
	int qps_before, st, ret;
	__u64 moved;

	ASSERT_NE(NULL, buf);
	memset(buf, 0xa5, ABORT_LEN);
	qps_before = rdma_res_count("qp", "");
	ASSERT_LE(0, qps_before);
	ASSERT_EQ(0, chan_pair(p, AF_INET, chan_port(PORT_BASE), 1,
			       peer_abort, (void *)variant));

	/* Both halves in flight, then wait until bytes move. */
	ASSERT_EQ(0, xsubmit(p->fd, my_op, p->chan[0], buf, ABORT_LEN, 7, 0,
			     0, 0));
	ASSERT_EQ(0, ctl_signal(p->ctl, 'G'));
	ASSERT_EQ(0, ctl_expect(p->ctl, 'S', 30000));
	end = chan_now_ms() + 30000;
	do {
		ASSERT_EQ(0, chan_info(p->fd, p->chan[0], &ci));
		moved = variant->peer_sends ? ci.out_bytes_rx : ci.out_bytes_tx;
		if (moved)
			break;
		usleep(500);
	} while (chan_now_ms() < end);
	if (!moved)
		TH_LOG("no byte counted after 30 s; going on regardless");
	ASSERT_EQ(1ULL, ci.out_inflight)
		TH_LOG("the transfer finished before the peer went away");

	switch (variant->how) {
	case BY_KILL:
		ASSERT_EQ(0, kill(p->peer, SIGKILL));
		ASSERT_EQ(128 + SIGKILL, chan_pair_join(p, 30000));
		break;
	case BY_CLOSE_FD:
		ASSERT_EQ(0, ctl_signal(p->ctl, 'K'));
		ASSERT_EQ(0, ctl_expect(p->ctl, 'k', 30000));
		break;
	case BY_CLOSE_CHAN:
		ASSERT_EQ(0, ctl_signal(p->ctl, 'K'));
		ASSERT_EQ(0, ctl_expect(p->ctl, 'k', 30000));
		ASSERT_EQ(0, ctl_recv(p->ctl, &peer_res, sizeof(peer_res),
				      30000));
		/* In flight on the closed channel: cancelled. */
		ASSERT_EQ(-ECANCELED, peer_res);
		break;
	}

	/* The survivor's operation fails: the peer is not connected anymore. */
	ret = xwait(p->fd, &cqe, 30000);
	if (ret) {
		memset(&ci, 0, sizeof(ci));
		chan_info(p->fd, p->chan[0], &ci);
		TH_LOG("no completion 30 s after the peer went away: channel state %u, inflight %llu, chunks held %llu, bytes tx %llu rx %llu",
		       ci.out_state, (unsigned long long)ci.out_inflight,
		       (unsigned long long)ci.out_chunks_held,
		       (unsigned long long)ci.out_bytes_tx,
		       (unsigned long long)ci.out_bytes_rx);
	}
	ASSERT_EQ(0, ret);
	ASSERT_EQ(7ULL, cqe.cookie);
	ASSERT_NE(ABORT_LEN, cqe.res) TH_LOG("the transfer succeeded");
	ASSERT_EQ(-ENOTCONN, cqe.res);
	ASSERT_EQ(0, chan_info(p->fd, p->chan[0], &ci));
	ASSERT_EQ((__u32)ORDMA_CHAN_DISCONNECTED, ci.out_state);
	ASSERT_EQ(0ULL, ci.out_inflight);

	/*
	 * Once this end lets go too, everything comes back. When the peer
	 * only closed something, it is still alive: the release must not
	 * wait for its exit.
	 */
	if (variant->how == BY_CLOSE_CHAN) {
		ASSERT_EQ(0, chan_close(p->fd, p->chan[0]));
	} else {
		close(p->fd);
		p->fd = -1;
	}
	check_released(_metadata, qps_before);
	if (p->peer) {
		ASSERT_EQ(0, ctl_signal(p->ctl, 'X'));
		st = chan_pair_join(p, 30000);
		ASSERT_EQ(0, st);
	}
	/* The peer's file is gone now too: no ordma object at all. */
	ASSERT_EQ(0, rdma_res_count("cm_id", "[ordma]"));
	chan_buf_free(buf, ABORT_LEN, 3);
}

TEST_HARNESS_MAIN
