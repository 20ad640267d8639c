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
#include <time.h>
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

static int set_progress(int64_t ms)
{
	return ordma_sh("echo %lld >/sys/class/ordma/rxe0/progress_timeout_ms",
			(long long)ms);
}

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
	ASSERT_EQ(0, set_progress(PROGRESS_MS));
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
		set_progress(self->progress_was);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait up to @s seconds for the device to hold nothing; 0 once it does. */
static int wait_empty(struct __test_metadata *_metadata, int s)
{
	int i;

	for (i = 0; i < s * 10; i++) {
		if (twohost_counter("channels") == 0 &&
		    twohost_counter("pages_pinned") == 0 &&
		    twohost_counter("mrs_live") == 0 &&
		    twohost_counter("chunks_free") ==
		    twohost_counter("chunks_total"))
			return 0;
		usleep(100000);
	}
	TH_LOG("channels %lld pages_pinned %lld mrs_live %lld chunks free %lld of %lld",
	       (long long)twohost_counter("channels"),
	       (long long)twohost_counter("pages_pinned"),
	       (long long)twohost_counter("mrs_live"),
	       (long long)twohost_counter("chunks_free"),
	       (long long)twohost_counter("chunks_total"));
	return -1;
}

TEST_F_TIMEOUT(vanish, peer_gone_mid_transfer, 300)
{
	double last, failed;
	int64_t n = 0;
	int sent = 0;

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

	last = now_s();
	while (n >= 0 && now_s() - last < FAIL_BOUND_S) {
		n = ordma_send(self->o, self->chan, self->buf, MSG_LEN);
		if (n == (int64_t)MSG_LEN) {
			sent++;
			last = now_s();
		}
	}
	failed = now_s();
	TH_LOG("%d messages went through; the next failed with %lld after %.1f s",
	       sent, (long long)n, failed - last);
	ASSERT_GT(0, n);
	EXPECT_TRUE(n == -ETIMEDOUT || n == -EIO);
	EXPECT_GE(FAIL_BOUND_S, failed - last);

	/* Everything back, and the module goes. */
	EXPECT_EQ(0, ordma_chan_close(self->o, self->chan));
	ordma_close(self->o);
	self->o = NULL;
	EXPECT_EQ(0, wait_empty(_metadata, 30));
	EXPECT_EQ(0, ordma_sh("rmmod ordma"));
	EXPECT_EQ(0, ordma_sh("insmod %s", ordma_ko()));
}

TEST_HARNESS_MAIN
