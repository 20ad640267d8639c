// SPDX-License-Identifier: GPL-2.0
/*
 * The module skeleton in the guest: it attaches to the test device (rxe0
 * unless ORDMA_TEST_IBDEV names another), shows the context in sysfs, holds
 * a protection domain per channel end (in the RDMA core's resource tracker)
 * and none while idle, follows the device's removal, and unloads leaving
 * nothing behind.
 */
#define ORDMA_GUEST_TEST
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <linux/ordma.h>

#include "ordma_test.h"
#include "kselftest_harness.h"

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Does ordma have a context (a sysfs directory) for the test device? */
static int context_exists(void)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/ordma/%s", ordma_ibdev());
	return exists(path);
}

static int pd_listed(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rdma res show pd dev %s 2>/dev/null",
		 ordma_ibdev());
	return ordma_sh_contains(cmd, "[ordma]");
}

/* Does the resource tracker list @n protection domains of ordma's? */
static int pds_listed(int n)
{
	return !ordma_sh("test \"$(rdma res show pd dev %s | grep -c '\\[ordma\\]')\" = %d",
			 ordma_ibdev(), n);
}

TEST(ibdev_port_active)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ibv_devinfo -d %s", ordma_ibdev());
	ASSERT_TRUE(ordma_sh_contains(cmd, "PORT_ACTIVE"));
}

TEST(module_loaded)
{
	ASSERT_TRUE(exists("/sys/module/ordma"));
}

TEST(sysfs_context_for_ibdev)
{
	char buf[64] = "", path[128], want[64];
	FILE *f = fopen(ordma_sysfs(path, sizeof(path), "ibdev"), "r");

	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(buf, sizeof(buf), f));
	fclose(f);
	snprintf(want, sizeof(want), "%s\n", ordma_ibdev());
	EXPECT_STREQ(want, buf);
}

TEST(no_pd_while_idle)
{
	ASSERT_FALSE(pd_listed());
}

/*
 * A channel connected to a listener of the same file: each end has a PD of
 * its own, the one nobody accepted yet too; closing the file frees both.
 */
TEST(a_pd_per_channel_end)
{
	struct ordma_listen l = { .size = sizeof(l) };
	struct ordma_connect c = { .size = sizeof(c), .timeout_ms = 20000 };
	int fd = open("/dev/ordma", O_RDWR | O_CLOEXEC), tries = 0;

	ASSERT_LE(0, fd);
	l.addr.family = AF_INET;
	l.addr.port = htons(18690);
	inet_pton(AF_INET, "192.0.2.1", l.addr.addr);
	ASSERT_EQ(0, ioctl(fd, ORDMA_IOC_LISTEN, &l));
	c.addr = l.addr;
	ASSERT_EQ(0, ioctl(fd, ORDMA_IOC_CONNECT, &c));
	EXPECT_TRUE(pds_listed(2));
	close(fd);
	/* The PDs go as the channel ends are torn down: 20 s at least. */
	while (pd_listed() && tries++ < 2000)
		usleep(10000);
	EXPECT_FALSE(pd_listed());
}

TEST(chardev_opens)
{
	int fd = open("/dev/ordma", O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	/* An ioctl this ABI never defined. */
	EXPECT_EQ(-1, ioctl(fd, _IO(0xd4, 0xff)));
	EXPECT_EQ(ENOTTY, errno);
	close(fd);
}

TEST(link_delete_removes_context)
{
	ASSERT_EQ(0, ordma_sh("rdma link delete %s", ordma_ibdev()));
	EXPECT_FALSE(context_exists());

	ASSERT_EQ(0, ordma_sh("rdma link add %s type %s netdev ordma0",
			      ordma_ibdev(), ordma_dev_type()));
	EXPECT_TRUE(context_exists());
}

TEST(rmmod_leaves_nothing)
{
	ASSERT_EQ(0, ordma_sh("rmmod ordma"));
	EXPECT_FALSE(exists("/sys/module/ordma"));
	EXPECT_FALSE(exists("/sys/class/ordma"));
	EXPECT_FALSE(exists("/dev/ordma"));
	EXPECT_FALSE(ordma_sh_contains("rdma res show", "[ordma]"));

	ASSERT_EQ(0, ordma_sh("insmod %s", ordma_ko()));
	EXPECT_TRUE(context_exists());
	EXPECT_FALSE(pd_listed());
}

TEST_HARNESS_MAIN
