// SPDX-License-Identifier: GPL-2.0
/*
 * The RDMA device goes away under running transfers: every operation
 * completes with an error (none hangs), the channels report the removal,
 * later calls on them get ENODEV, a new device works, the module unloads.
 */
#define ORDMA_GUEST_TEST
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/ordma.h>

#include "ordma_test.h"
#include "kselftest_harness.h"

#define BIG	(64UL << 20)

static struct ordma_addr addr4(unsigned short port)
{
	struct ordma_addr a = { .family = AF_INET, .port = htons(port) };

	inet_pton(AF_INET, "192.0.2.1", a.addr);
	return a;
}

static int submit(int fd, __u32 op, __u32 chan, void *buf, __u64 len)
{
	struct ordma_submit s = {
		.size = sizeof(s), .op = op, .chan_id = chan,
		.addr = (unsigned long)buf, .len = len, .cookie = op,
	};

	return ioctl(fd, ORDMA_IOC_SUBMIT, &s) ? -errno : 0;
}

static long long wait_one(int fd, int timeout_ms)
{
	struct ordma_cqe c;
	struct ordma_wait w = {
		.size = sizeof(w), .cqes = (unsigned long)&c, .max = 1,
		.timeout_ms = timeout_ms,
	};

	if (ioctl(fd, ORDMA_IOC_WAIT, &w))
		return -100000 - errno;
	return c.res;
}

/* Child: accept one channel, receive into a big buffer, report the result. */
static void receiver(unsigned short port, int ready, int result)
{
	struct ordma_listen l = { .size = sizeof(l), .addr = addr4(port) };
	struct ordma_accept a = { .size = sizeof(a) };
	void *buf = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open("/dev/ordma", O_RDWR);
	long long res;

	if (fd < 0 || buf == MAP_FAILED || ioctl(fd, ORDMA_IOC_LISTEN, &l))
		_exit(2);
	if (write(ready, "r", 1) != 1)
		_exit(2);
	a.listener_id = l.out_id;
	if (ioctl(fd, ORDMA_IOC_ACCEPT, &a))
		_exit(3);
	res = submit(fd, ORDMA_OP_RECV, a.out_chan_id, buf, BIG);
	if (!res)
		res = wait_one(fd, 60000);
	if (write(result, &res, sizeof(res)) != sizeof(res))
		_exit(4);
	_exit(0);
}

static int connect_to(int fd, unsigned short port, __u32 *chan)
{
	/* Not the 5 s default: a slow guest may take longer to connect. */
	struct ordma_connect c = { .size = sizeof(c), .addr = addr4(port),
				   .timeout_ms = 20000 };

	if (ioctl(fd, ORDMA_IOC_CONNECT, &c))
		return -errno;
	*chan = c.out_chan_id;
	return 0;
}

/*
 * Its own waits (a connect, a failed send and receive, a new device and a
 * transfer over it) run past the harness's default 30 s on a slow debug
 * guest: a fixture, for a timeout that bounds them (stop 42).
 */
FIXTURE(remove) {};
FIXTURE_SETUP(remove) {}
FIXTURE_TEARDOWN(remove) {}

TEST_F_TIMEOUT(remove, link_delete_during_transfer, 180)
{
	int ready[2], result[2], fd, st;
	struct ordma_chan_info ci = { .size = sizeof(ci) };
	long long res, peer_res;
	unsigned short port = 18901;
	void *buf;
	__u32 chan;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(result));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		receiver(port, ready[1], result[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));

	buf = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	fd = open("/dev/ordma", O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, connect_to(fd, port, &chan));
	ASSERT_EQ(0, submit(fd, ORDMA_OP_SEND, chan, buf, BIG));
	usleep(200000);

	ASSERT_EQ(0, ordma_sh("rdma link delete %s", ordma_ibdev()));
	res = wait_one(fd, 30000);
	EXPECT_GT(0, res);
	EXPECT_LT(-100000, res);	/* an error completion, not a timeout */
	ASSERT_EQ((ssize_t)sizeof(peer_res), read(result[0], &peer_res, sizeof(peer_res)));
	EXPECT_GT(0, peer_res);
	EXPECT_LT(-100000, peer_res);

	ci.chan_id = chan;
	ASSERT_EQ(0, ioctl(fd, ORDMA_IOC_CHAN_INFO, &ci));
	EXPECT_EQ((__u32)ORDMA_CHAN_DEVICE_REMOVED, ci.out_state);
	EXPECT_EQ(0ULL, ci.out_chunks_held);
	EXPECT_EQ(0ULL, ci.out_inflight);
	EXPECT_EQ(-ENODEV, submit(fd, ORDMA_OP_SEND, chan, buf, 4096));
	struct ordma_close cl = { .size = sizeof(cl), .id = chan };

	EXPECT_EQ(0, ioctl(fd, ORDMA_IOC_CLOSE, &cl));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* The same fd works on the next device. */
	ASSERT_EQ(0, ordma_sh("rdma link add %s type %s netdev ordma0",
			      ordma_ibdev(), ordma_dev_type()));
	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		receiver(port + 1, ready[1], result[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ(0, connect_to(fd, port + 1, &chan));
	memset(buf, 0x5a, 1 << 20);
	ASSERT_EQ(0, submit(fd, ORDMA_OP_SEND, chan, buf, 1 << 20));
	EXPECT_EQ(1 << 20, wait_one(fd, 30000));
	ASSERT_EQ((ssize_t)sizeof(peer_res), read(result[0], &peer_res, sizeof(peer_res)));
	EXPECT_EQ(1 << 20, peer_res);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	close(fd);
	munmap(buf, BIG);
	EXPECT_FALSE(ordma_sh_contains("rdma res show qp", "[ordma]"));
}

TEST(rmmod_after_removal)
{
	ASSERT_EQ(0, ordma_sh("rmmod ordma"));
	EXPECT_FALSE(ordma_sh_contains("rdma res show", "[ordma]"));
	ASSERT_EQ(0, ordma_sh("insmod %s", ordma_ko()));
}

TEST_HARNESS_MAIN
