// SPDX-License-Identifier: GPL-2.0
/*
 * The link between two hosts taken away under a transfer, then given back
 * (tools/vmtest --hosts 2, tools/check's stage "twohost"). Host 1 sends
 * 64 MiB messages to host 2; half a second in, host 2 either sets its NIC
 * down for 8 s, or deletes its RDMA device (rxe0 unless ORDMA_TEST_IBDEV
 * names another) and adds it again 3 s later.
 *
 * Host 1's send fails with a documented errno (ETIMEDOUT: no progress for
 * progress_timeout_ms, set to 2000 here; EIO: the RC transport gave up;
 * ENOTCONN: the peer disconnected) within a bound; host 2's channel on a
 * deleted device fails with ENODEV. Then both close the old channel, their
 * devices hold nothing more, and a new channel between them carries a
 * checked message.
 */
#define ORDMA_GUEST_TEST
#include <sys/mman.h>
#include "ordma_test.h"
#include "kselftest_harness.h"
#include "twohost.h"

#define MSG_LEN		(64UL << 20)
#define SMALL_LEN	(1UL << 20)
#define PROGRESS_MS	2000
#define CUT_US		500000
#define FAIL_BOUND_S	30
/* How long a receive on a deleted device may take to fail: a bound. */
#define ENODEV_BOUND_MS	60000

FIXTURE(cut) {
	struct ordma *o;
	uint32_t chan;
	int host;
	unsigned char *buf;
};

/* down and up are formats: %s the device, then %s its type, if at all. */
FIXTURE_VARIANT(cut) {
	const char *down;	/* host 2 cuts the link with this */
	const char *up;		/* and gives it back with this */
	int gone_for_s;
	bool device_goes;	/* host 2's channel fails with ENODEV */
};

FIXTURE_VARIANT_ADD(cut, nic_down) {
	.down = "ip link set ordma0 down",
	.up = "ip link set ordma0 up",
	.gone_for_s = 8,
	.device_goes = false,
};

FIXTURE_VARIANT_ADD(cut, rxe_readded) {
	.down = "rdma link del %s",
	.up = "rdma link add %s type %s netdev ordma0",
	.gone_for_s = 3,
	.device_goes = true,
};

FIXTURE_SETUP(cut)
{
	const char *host = getenv("VMTEST_HOST");

	ORDMA_TEST_FILTER();
	if (!host)
		SKIP(return, "not in a guest of tools/vmtest --hosts 2");
	self->host = atoi(host);
	self->buf = mmap(NULL, MSG_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	ASSERT_EQ(0, twohost_set_progress(PROGRESS_MS));
	ASSERT_EQ(0, ordma_open(&self->o, 0));
	ASSERT_EQ(0, twohost_chan(self->o, self->host, AF_INET, "192.0.2.1",
				  twohost_port(_metadata->name, AF_INET),
				  _metadata->name, &self->chan));
}

FIXTURE_TEARDOWN(cut)
{
	if (self->o)
		ordma_close(self->o);
	/* A re-added device has the defaults already. */
	twohost_set_progress(30000);
}

/*
 * Host 2: receive messages until one fails or the child @pid has cut the
 * link and given it back (its status in *@st); a receive that neither
 * completes nor fails meanwhile (the link was down: nothing told us) is
 * left to the close; with @device_goes the receive under way must fail,
 * and is waited for up to ENODEV_BOUND_MS. Return: the last receive's
 * result, or 0 if none ended after the cut.
 */
static int64_t receive_until_cut(FIXTURE_DATA(cut) *self, pid_t pid, int *st,
				 bool device_goes)
{
	struct ordma_cqe *cqe;
	bool child = false;
	int64_t res = 0;
	int ret;

	for (;;) {
		ordma_prep_recv(ordma_get_sqe(self->o), self->chan, self->buf,
				MSG_LEN, 1);
		if (ordma_submit(self->o) != 1)
			return -EINVAL;
		do {
			ret = ordma_wait_cqe_timeout(self->o, &cqe, 500);
			if (!child && waitpid(pid, st, WNOHANG) == pid)
				child = true;
		} while (ret == -ETIMEDOUT && !child);
		if (ret)
			break;
		res = cqe->res;
		ordma_cqe_seen(self->o, cqe);
		if (res != (int64_t)MSG_LEN)
			break;
		res = 0;
	}
	if (!child)
		waitpid(pid, st, 0);
	/* A device that went: its channel's receive fails soon after. */
	if (!res && !ordma_wait_cqe_timeout(self->o, &cqe,
					    device_goes ? ENODEV_BOUND_MS :
					    10000)) {
		res = cqe->res;
		ordma_cqe_seen(self->o, cqe);
	}
	return res;
}

TEST_F_TIMEOUT(cut, under_a_transfer, 300)
{
	char msg[256];
	double took;
	int64_t n;
	int sent, st;
	pid_t pid = 0;
	size_t i;

	ASSERT_EQ(0, twohost_barrier(_metadata->name, "go"));
	if (self->host == 2) {
		/* A child cuts the link and gives it back. */
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			usleep(CUT_US);
			if (ordma_sh(variant->down, ordma_ibdev(),
				     ordma_dev_type()))
				_exit(1);
			sleep(variant->gone_for_s);
			_exit(ordma_sh(variant->up, ordma_ibdev(),
				       ordma_dev_type()) ? 2 : 0);
		}
		n = receive_until_cut(self, pid, &st, variant->device_goes);
		ASSERT_EQ(0, WEXITSTATUS(st));
		if (variant->device_goes)
			EXPECT_EQ(-ENODEV, n);
		/* Waits for the link, and for host 1's verdict. */
		ASSERT_EQ(0, twohost_barrier(_metadata->name, "back"));
	} else {
		n = twohost_send_until_fail(self->o, self->chan, self->buf,
					    MSG_LEN, FAIL_BOUND_S, &sent,
					    &took);
		TH_LOG("%d messages went through; the next failed with %lld after %.1f s",
		       sent, (long long)n, took);
		ASSERT_GT(0, n);
		EXPECT_TRUE(n == -ETIMEDOUT || n == -EIO || n == -ENOTCONN);
		EXPECT_GE(FAIL_BOUND_S, took);
		ASSERT_EQ(0, twohost_barrier(_metadata->name, "back"));
	}

	/* The old channel closed: nothing held on either host. */
	ordma_close(self->o);
	self->o = NULL;
	EXPECT_EQ(0, twohost_wait_empty(30, msg, sizeof(msg))) TH_LOG("%s", msg);

	/* A new channel over the link given back. */
	ASSERT_EQ(0, ordma_open(&self->o, 0));
	ASSERT_EQ(0, twohost_chan(self->o, self->host, AF_INET, "192.0.2.1",
				  twohost_port(_metadata->name, AF_INET) + 1,
				  "again", &self->chan));
	if (self->host == 1) {
		for (i = 0; i < SMALL_LEN; i++)
			self->buf[i] = (unsigned char)(i * 13 + 7);
		ASSERT_EQ((int64_t)SMALL_LEN,
			  ordma_send(self->o, self->chan, self->buf, SMALL_LEN));
	} else {
		memset(self->buf, 0, SMALL_LEN);
		ASSERT_EQ((int64_t)SMALL_LEN,
			  ordma_recv(self->o, self->chan, self->buf, SMALL_LEN));
		for (i = 0; i < SMALL_LEN; i++)
			if (self->buf[i] != (unsigned char)(i * 13 + 7))
				break;
		ASSERT_EQ(SMALL_LEN, i);
	}
	ASSERT_EQ(0, twohost_barrier(_metadata->name, "done"));
}

TEST_HARNESS_MAIN
