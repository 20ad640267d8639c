// SPDX-License-Identifier: GPL-2.0
/*
 * A peer that vanishes mid-transfer and comes back, across two hosts
 * (tools/vmtest --hosts 2, tools/check's stage "twohost"): host 2 receives
 * 64 MiB messages from host 1 and, half a second into them, ends its guest
 * at once (tools/vmtest-vanish --restart: no disconnect, no close, nothing
 * more on the link); the rig boots it again, and its second boot
 * (VMTEST_BOOT=2) listens on its own address, as it was.
 *
 * Host 1, the survivor, with progress_timeout_ms set to 2000: the send
 * under way fails with ETIMEDOUT (no progress for progress_timeout_ms) or
 * EIO (the RC transport gave up), within a bound; once it closes the
 * channel its device holds no pinned page, memory region or chunk and no
 * channel is left. Then it opens a new channel to the restarted host 2, a
 * checked message crosses it each way, and, that channel closed, ordma.ko
 * unloads.
 */
#define ORDMA_GUEST_TEST
#include <sys/mman.h>
#include "ordma_test.h"
#include "kselftest_harness.h"
#include "twohost.h"

#define MSG_LEN		(64UL << 20)
#define SMALL_LEN	(1UL << 20)
#define PROGRESS_MS	2000
#define VANISH_US	500000
/* The send under way may have 64 MiB to move first (18 MiB/s in TCG). */
#define FAIL_BOUND_S	30
/* Host 2's second boot, under TCG on cores shared with host 1 (~20 s). */
#define BACK_BOUND_S	300

FIXTURE(vanish) {
	struct ordma *o;
	uint32_t chan;
	int host;
	int boot;
	unsigned char *buf;
	int64_t progress_was;
};

FIXTURE_SETUP(vanish)
{
	const char *host = getenv("VMTEST_HOST");
	const char *boot = getenv("VMTEST_BOOT");

	ORDMA_TEST_FILTER();
	if (!host)
		SKIP(return, "not in a guest of tools/vmtest --hosts 2");
	self->host = atoi(host);
	self->boot = boot ? atoi(boot) : 1;
	self->buf = mmap(NULL, MSG_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	memset(self->buf, 0x5a, MSG_LEN);
	self->progress_was = twohost_counter("progress_timeout_ms");
	ASSERT_LT(0, self->progress_was);
	ASSERT_EQ(0, twohost_set_progress(PROGRESS_MS));
	ASSERT_EQ(0, ordma_open(&self->o, 0));
	/* The restarted host 2 has no channel of the first boot to set up. */
	if (self->boot > 1)
		return;
	ASSERT_EQ(0, twohost_chan(self->o, self->host, AF_INET, "192.0.2.1",
				  twohost_port(_metadata->name, AF_INET),
				  _metadata->name, &self->chan));
}

FIXTURE_TEARDOWN(vanish)
{
	if (self->o)
		ordma_close(self->o);
	if (self->progress_was > 0)
		twohost_set_progress(self->progress_was);
}

static unsigned char pattern(size_t i, int from)
{
	return (unsigned char)(i * 13 + 7 * from);
}

/*
 * The channel to host 2's second boot: host 2 listens on its own address,
 * host 1 connects; host 1 sends SMALL_LEN bytes, then host 2 sends them
 * back, each checked by the receiver.
 */
static void restarted_exchange(struct __test_metadata *_metadata,
			       FIXTURE_DATA(vanish) *self)
{
	unsigned short port = twohost_port(_metadata->name, AF_INET) + 1;
	int from, to;
	size_t i;

	ASSERT_EQ(0, twohost_chan(self->o, 3 - self->host, AF_INET,
				  "192.0.2.2", port, "restarted", &self->chan));
	for (from = 1; from <= 2; from++) {
		to = 3 - from;
		if (self->host == from) {
			for (i = 0; i < SMALL_LEN; i++)
				self->buf[i] = pattern(i, from);
			ASSERT_EQ((int64_t)SMALL_LEN,
				  ordma_send(self->o, self->chan, self->buf,
					     SMALL_LEN));
		} else if (self->host == to) {
			memset(self->buf, 0, SMALL_LEN);
			ASSERT_EQ((int64_t)SMALL_LEN,
				  ordma_recv(self->o, self->chan, self->buf,
					     SMALL_LEN));
			for (i = 0; i < SMALL_LEN; i++)
				if (self->buf[i] != pattern(i, from))
					break;
			ASSERT_EQ(SMALL_LEN, i);
		}
	}
	ASSERT_EQ(0, twohost_barrier("restarted", "done"));
}

TEST_F_TIMEOUT(vanish, peer_gone_mid_transfer, 600)
{
	char msg[256];
	double took, t0;
	int64_t n;
	int sent;

	if (self->boot > 1) {
		/* Host 2 again: up as it was, waited for by host 1. */
		ASSERT_EQ(2, self->host);
		ASSERT_EQ(0, twohost_barrier_s(_metadata->name, "back",
					       BACK_BOUND_S));
		restarted_exchange(_metadata, self);
		return;
	}
	ASSERT_EQ(0, twohost_barrier(_metadata->name, "go"));
	if (self->host == 2) {
		/* A child pulls the plug while the parent receives. */
		if (!fork()) {
			usleep(VANISH_US);
			execl("tools/vmtest-vanish", "vmtest-vanish",
			      "--restart", NULL);
			_exit(1);
		}
		for (;;)
			ordma_recv(self->o, self->chan, self->buf, MSG_LEN);
	}

	n = twohost_send_until_fail(self->o, self->chan, self->buf, MSG_LEN,
				    FAIL_BOUND_S, &sent, &took);
	TH_LOG("%d messages went through; the next failed with %lld after %.1f s",
	       sent, (long long)n, took);
	ASSERT_GT(0, n);
	EXPECT_TRUE(n == -ETIMEDOUT || n == -EIO);
	EXPECT_GE(FAIL_BOUND_S, took);

	/* Everything back. */
	t0 = twohost_now();
	EXPECT_EQ(0, ordma_chan_close(self->o, self->chan));
	ordma_close(self->o);
	self->o = NULL;
	EXPECT_EQ(0, twohost_wait_empty(30, msg, sizeof(msg))) TH_LOG("%s", msg);

	/* The restarted peer takes a new channel. */
	ASSERT_EQ(0, twohost_barrier_s(_metadata->name, "back", BACK_BOUND_S));
	TH_LOG("host 2 was back %.1f s after the failure", twohost_now() - t0);
	ASSERT_EQ(0, ordma_open(&self->o, 0));
	restarted_exchange(_metadata, self);

	/* That channel gone too, nothing is held and the module goes. */
	EXPECT_EQ(0, ordma_chan_close(self->o, self->chan));
	ordma_close(self->o);
	self->o = NULL;
	EXPECT_EQ(0, twohost_wait_empty(30, msg, sizeof(msg))) TH_LOG("%s", msg);
	EXPECT_EQ(0, ordma_sh("rmmod ordma"));
	EXPECT_EQ(0, ordma_sh("insmod %s", ordma_ko()));
}

TEST_HARNESS_MAIN
