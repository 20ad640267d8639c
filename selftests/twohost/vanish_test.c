// SPDX-License-Identifier: GPL-2.0
/*
 * A peer that vanishes mid-transfer, across two hosts (tools/vmtest --hosts
 * 2, tools/check's stage "twohost"): host 2 receives 64 MiB messages from
 * host 1 and, half a second into them, ends its guest at once
 * (tools/vmtest-vanish: no disconnect, no close, nothing more on the link).
 *
 * Host 1, the survivor, with progress_timeout_ms set to 2000: the send
 * under way fails with ETIMEDOUT (no progress for progress_timeout_ms) or
 * EIO (the RC transport gave up), within a bound; once it closes the
 * channel its device holds no pinned page, memory region or chunk, no
 * channel is left, and ordma.ko unloads.
 */
#define ORDMA_GUEST_TEST
#include <sys/mman.h>
#include "ordma_test.h"
#include "kselftest_harness.h"
#include "twohost.h"

#define MSG_LEN		(64UL << 20)
#define PROGRESS_MS	2000
#define VANISH_US	500000
/* The send under way may have 64 MiB to move first (18 MiB/s in TCG). */
#define FAIL_BOUND_S	30

FIXTURE(vanish) {
	struct ordma *o;
	uint32_t chan;
	int host;
	unsigned char *buf;
	int64_t progress_was;
};

FIXTURE_SETUP(vanish)
{
	const char *host = getenv("VMTEST_HOST");

	ORDMA_TEST_FILTER();
	if (!host)
		SKIP(return, "not in a guest of tools/vmtest --hosts 2");
	self->host = atoi(host);
	self->buf = mmap(NULL, MSG_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	memset(self->buf, 0x5a, MSG_LEN);
	self->progress_was = twohost_counter("progress_timeout_ms");
	ASSERT_LT(0, self->progress_was);
	ASSERT_EQ(0, twohost_set_progress(PROGRESS_MS));
	ASSERT_EQ(0, ordma_open(&self->o, 0));
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

TEST_F_TIMEOUT(vanish, peer_gone_mid_transfer, 300)
{
	char msg[256];
	double took;
	int64_t n;
	int sent;

	ASSERT_EQ(0, twohost_barrier(_metadata->name, "go"));
	if (self->host == 2) {
		/* A child pulls the plug while the parent receives. */
		if (!fork()) {
			usleep(VANISH_US);
			execl("tools/vmtest-vanish", "vmtest-vanish", NULL);
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

	/* Everything back, and the module goes. */
	EXPECT_EQ(0, ordma_chan_close(self->o, self->chan));
	ordma_close(self->o);
	self->o = NULL;
	EXPECT_EQ(0, twohost_wait_empty(30, msg, sizeof(msg))) TH_LOG("%s", msg);
	EXPECT_EQ(0, ordma_sh("rmmod ordma"));
	EXPECT_EQ(0, ordma_sh("insmod %s", ordma_ko()));
}

TEST_HARNESS_MAIN
