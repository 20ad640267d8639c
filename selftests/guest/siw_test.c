// SPDX-License-Identifier: GPL-2.0
/*
 * ordma on soft iWARP (siw): the device of the other protocol family the
 * kernel has in software. The rig builds siw from Debian's linux-source
 * (tools/sw-module) and names it in ORDMA_SIW_KO; the fixture takes rxe0
 * off ordma0, brings up siw0 there, and puts rxe0 back afterwards.
 *
 * iWARP has no receiver-not-ready retry: a SEND that finds no receive
 * posted ends the connection, and ordma's credits leave header-only
 * messages to that retry. Until they cover every message, ordma attaches
 * to the device (its context, its pool, its counters) but carries no
 * channel over it: a connect fails at once with EOPNOTSUPP, a connection
 * request is rejected, nothing is left behind and the kernel log says why.
 * Before stop 43, the first message over siw panicked the kernel.
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
#define RXE_PORT	"/sys/class/infiniband/" CHAN_IBDEV "/ports/1/"
#define SIW_PORT_BASE	18900

/* rxe0 is whole again: ordma's context, the port up, 192.0.2.1's GID. */
static int rxe_ready(void)
{
	return !access("/sys/class/ordma/" CHAN_IBDEV, F_OK) &&
	       ordma_sh_contains("cat " RXE_PORT "state", "ACTIVE") &&
	       !ordma_sh("grep -q '^0000:0000:0000:0000:0000:ffff:c000:0201$' "
			 RXE_PORT "gids/*");
}

static long long siw_count(const char *attr)
{
	char path[128];

	snprintf(path, sizeof(path), SIW_SYSFS "%s", attr);
	return ordma_read_ll(path);
}

FIXTURE(siw) {
	int up;		/* rxe0 was taken off: the teardown puts it back */
	int ran;	/* siw0 is up: the test runs */
};

/* The harness runs a test after its setup skipped: it must skip again. */
#define SIW_NEED() do {							\
	if (!self->ran)							\
		SKIP(return, "siw0 is not up");				\
} while (0)

FIXTURE_SETUP(siw)
{
	const char *ko = getenv("ORDMA_SIW_KO");
	long long end;

	ORDMA_TEST_FILTER();
	self->up = 0;
	self->ran = 0;
	if (!ko || !*ko)
		SKIP(return, "no siw.ko (ORDMA_SIW_KO): tools/vmtest builds one for Debian's kernels only");
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

FIXTURE_TEARDOWN(siw)
{
	long long end = chan_now_ms() + CHAN_PEER_MS;

	if (!self->up)
		return;
	ordma_sh("rdma link del %s", SIW_DEV);
	ordma_sh("rmmod siw");
	if (ordma_sh("rdma link add %s type rxe netdev %s", CHAN_IBDEV,
		     SIW_NETDEV))
		TH_LOG("cannot add %s on %s again", CHAN_IBDEV, SIW_NETDEV);
	/* The test binaries after this one need it whole. */
	while (!rxe_ready() && chan_now_ms() < end)
		chan_sleep_ms(20);
	if (!rxe_ready())
		TH_LOG("%s is not back", CHAN_IBDEV);
}

TEST_F(siw, context_and_pool)
{
	SIW_NEED();
	ASSERT_TRUE(ordma_sh_contains("cat " SIW_SYSFS "ibdev", SIW_DEV));
	EXPECT_EQ(0, siw_count("channels"));
	EXPECT_LT(0, siw_count("chunks_total"));
	EXPECT_EQ(siw_count("chunks_total"), siw_count("chunks_free"));
}

/*
 * Connect to a listener over siw0: EOPNOTSUPP at once, the listener sees
 * nothing to accept, and neither end leaves a channel.
 */
TEST_F(siw, connect_is_refused)
{
	unsigned short port = chan_port(SIW_PORT_BASE);
	struct ordma_accept a = { .size = sizeof(a) };
	__u32 lis = 0, chan = 0;
	int lfd, cfd;

	SIW_NEED();
	lfd = chan_open();
	cfd = chan_open();
	ASSERT_LE(0, lfd);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0, chan_listen(lfd, AF_INET, port, 0, &lis));
	ASSERT_EQ(-EOPNOTSUPP, chan_connect(cfd, AF_INET, port, &chan));
	a.listener_id = lis;
	a.flags = ORDMA_F_NONBLOCK;
	EXPECT_EQ(-1, ioctl(lfd, ORDMA_IOC_ACCEPT, &a));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0, siw_count("channels"));
	EXPECT_EQ(siw_count("chunks_total"), siw_count("chunks_free"));
	EXPECT_TRUE(ordma_sh_contains("dmesg", "no channel on a device without RNR retry"));
	close(cfd);
	close(lfd);
}

/* ordmacp says why, and fails. */
TEST_F(siw, ordmacp_says_why)
{
	unsigned short port = chan_port(SIW_PORT_BASE);
	char cmd[256];

	SIW_NEED();
	snprintf(cmd, sizeof(cmd),
		 "tools/ordmacp -q README %s:%u:/dev/null 2>&1; echo status $?",
		 CHAN_IP4, port);
	EXPECT_TRUE(ordma_sh_contains(cmd, "Operation not supported"));
	EXPECT_TRUE(ordma_sh_contains(cmd, "status 1"));
}

TEST_HARNESS_MAIN
