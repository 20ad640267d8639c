// SPDX-License-Identifier: GPL-2.0
/*
 * The module skeleton in the guest: it attaches to rxe0, shows the context in
 * sysfs and in the RDMA core's resource tracker, follows the device's
 * removal, and unloads leaving nothing behind.
 */
#define ORDMA_GUEST_TEST
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "ordma_test.h"
#include "kselftest_harness.h"

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static int pd_listed(void)
{
	return ordma_sh_contains("rdma res show pd dev rxe0 2>/dev/null", "[ordma]");
}

TEST(rxe0_port_active)
{
	ASSERT_TRUE(ordma_sh_contains("ibv_devinfo -d rxe0", "PORT_ACTIVE"));
}

TEST(module_loaded)
{
	ASSERT_TRUE(exists("/sys/module/ordma"));
}

TEST(sysfs_context_for_rxe0)
{
	char buf[64] = "";
	FILE *f = fopen("/sys/class/ordma/rxe0/ibdev", "r");

	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(buf, sizeof(buf), f));
	fclose(f);
	EXPECT_STREQ("rxe0\n", buf);
}

TEST(pd_in_resource_tracker)
{
	ASSERT_TRUE(pd_listed());
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
	ASSERT_EQ(0, ordma_sh("rdma link delete rxe0"));
	EXPECT_FALSE(exists("/sys/class/ordma/rxe0"));
	EXPECT_FALSE(pd_listed());

	ASSERT_EQ(0, ordma_sh("rdma link add rxe0 type rxe netdev ordma0"));
	EXPECT_TRUE(exists("/sys/class/ordma/rxe0"));
	EXPECT_TRUE(pd_listed());
}

TEST(rmmod_leaves_nothing)
{
	ASSERT_EQ(0, ordma_sh("rmmod ordma"));
	EXPECT_FALSE(exists("/sys/module/ordma"));
	EXPECT_FALSE(exists("/sys/class/ordma"));
	EXPECT_FALSE(exists("/dev/ordma"));
	EXPECT_FALSE(ordma_sh_contains("rdma res show", "[ordma]"));

	ASSERT_EQ(0, ordma_sh("insmod %s", ordma_ko()));
	EXPECT_TRUE(exists("/sys/class/ordma/rxe0"));
	EXPECT_TRUE(pd_listed());
}

TEST_HARNESS_MAIN
