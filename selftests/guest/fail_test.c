// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection over every ioctl path (the fail-nth idea of iommufd's
 * selftests): for n = 1, 2, ... the n-th failable allocation of the calling
 * task fails, until the call runs through without meeting one. Each failed
 * call must return an error and leave nothing behind; the file stays usable.
 *
 * Needs CONFIG_FAULT_INJECTION and FAILSLAB (the debug guest kernel of
 * tools/debug-kernel); skipped on kernels without /proc/self/fail-nth.
 */
#define ORDMA_GUEST_TEST
#include <poll.h>
#include <sys/syscall.h>
#include "ordma_test.h"
#include "ordma_chan.h"
#include "kselftest_harness.h"

#define PORT_BASE	18600
#define MAX_NTH		5000

static int debugfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, val, strlen(val)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

/* Open this thread's fail-nth file and make sleeping allocations failable. */
static int fail_nth_open(void)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%ld/fail-nth",
		 (long)syscall(SYS_gettid));
	if (access(path, W_OK))
		return -1;
	debugfs_write("/sys/kernel/debug/failslab/ignore-gfp-wait", "N");
	debugfs_write("/sys/kernel/debug/failslab/verbose", "0");
	debugfs_write("/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N");
	debugfs_write("/sys/kernel/debug/fail_page_alloc/verbose", "0");
	return open(path, O_RDWR);
}

static void fail_nth_set(int fd, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (pwrite(fd, buf, len, 0) != len)
		abort();
}

/* Non-zero while the armed fault has not been hit yet. */
static int fail_nth_pending(int fd)
{
	char buf[16] = "";

	if (pread(fd, buf, sizeof(buf) - 1, 0) <= 0)
		abort();
	return atoi(buf) != 0;
}

struct sweep {
	int ofd;		/* the /dev/ordma under test */
	__u32 chan;		/* an established channel, for data calls */
	unsigned short port;	/* a listening peer, for connect */
	void *buf;
};

typedef int (*sweep_fn)(struct sweep *s);

/*
 * Run @fn with the n-th allocation failing, n = 1, 2, ... until no fault
 * was hit. Returns the number of injected failures, or -1 if a failing call
 * reported success with nothing to show, or the sweep did not end.
 */
static int run_sweep(int nth, struct sweep *s, sweep_fn prepare, sweep_fn fn,
		     int *failed)
{
	unsigned int n;
	int ret;

	*failed = 0;
	for (n = 1; n < MAX_NTH; n++) {
		if (prepare && prepare(s))
			return -1;
		fail_nth_set(nth, n);
		ret = fn(s);
		if (fail_nth_pending(nth)) {
			fail_nth_set(nth, 0);
			return ret ? -1 : (int)n - 1;	/* clean run must pass */
		}
		fail_nth_set(nth, 0);
		if (ret)
			(*failed)++;
	}
	return -1;
}

static int op_open_close(struct sweep *s)
{
	int fd = open("/dev/ordma", O_RDWR);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int op_listen_close(struct sweep *s)
{
	__u32 id = 0;
	int ret = chan_listen(s->ofd, AF_INET, s->port + 1, 0, &id);

	if (!ret)
		ret = chan_close(s->ofd, id);
	return ret;
}

static int op_expose_unexpose(struct sweep *s)
{
	__u64 tok = 0;
	int ret = chan_expose(s->ofd, s->buf, 65536, ORDMA_ACCESS_REMOTE_READ,
			      &tok);

	if (!ret)
		ret = chan_unexpose(s->ofd, tok);
	return ret;
}

static int op_connect_close(struct sweep *s)
{
	struct ordma_connect c = { .size = sizeof(c) };

	c.addr = chan_addr(AF_INET, NULL, s->port);
	if (ioctl(s->ofd, ORDMA_IOC_CONNECT, &c))
		return -errno;
	return chan_close(s->ofd, c.out_chan_id);
}

/* Completions pile up; the test drains and checks them at the end. */
static int op_submit(struct sweep *s)
{
	return xsubmit(s->ofd, ORDMA_OP_SEND, s->chan, s->buf, 4096, 1, 0, 0,
		       0);
}

/* A completion is waiting before the armed WAIT. */
static int prep_completion(struct sweep *s)
{
	struct pollfd pfd = { .fd = s->ofd, .events = POLLIN };

	if (op_submit(s))
		return -1;
	return poll(&pfd, 1, CHAN_WAIT_MS) == 1 ? 0 : -1;
}

static int op_wait(struct sweep *s)
{
	struct ordma_cqe cqe[4];
	struct ordma_wait w = { .size = sizeof(w), .cqes = (unsigned long)cqe,
				.max = 4, .flags = ORDMA_F_NONBLOCK };

	if (ioctl(s->ofd, ORDMA_IOC_WAIT, &w))
		return -errno;
	for (unsigned int i = 0; i < w.out_count; i++)
		if (cqe[i].res != 4096)
			return -EIO;
	return 0;
}

static int op_chan_info(struct sweep *s)
{
	struct ordma_chan_info ci;

	return chan_info(s->ofd, s->chan, &ci);
}

/* The peer: accept whatever comes, drain every message, until killed. */
static void sink(unsigned short port, int ready)
{
	int fd = chan_open();
	__u32 lis = 0, id;
	static unsigned char buf[65536];

	if (fd < 0 || chan_listen(fd, AF_INET, port, 0, &lis))
		_exit(2);
	if (write(ready, "r", 1) != 1)
		_exit(2);
	for (;;) {
		struct ordma_accept a = { .size = sizeof(a),
					  .listener_id = lis,
					  .flags = ORDMA_F_NONBLOCK };
		struct ordma_cqe cqe;

		if (!ioctl(fd, ORDMA_IOC_ACCEPT, &a)) {
			id = a.out_chan_id;
			for (int i = 0; i < 64; i++)
				xsubmit(fd, ORDMA_OP_RECV, id, buf, sizeof(buf),
					i, 0, 0, 0);
		}
		while (!xwait(fd, &cqe, 0))
			if (cqe.res >= 0)
				xsubmit(fd, ORDMA_OP_RECV, cqe.chan_id, buf,
					sizeof(buf), 0, 0, 0, 0);
		chan_sleep_ms(5);
	}
}

FIXTURE(fail) {
	int nth;
	pid_t peer;
	struct sweep s;
};

FIXTURE_SETUP(fail)
{
	static unsigned short port = PORT_BASE;
	int ready[2];
	char c;

	self->nth = fail_nth_open();
	if (self->nth < 0)
		SKIP(return, "no fail-nth: needs the debug guest kernel (tools/vmtest --debug-kernel)");
	self->s.port = port;
	port += 2;
	self->s.buf = chan_buf(65536, 0);
	ASSERT_NE(NULL, self->s.buf);
	ASSERT_EQ(0, pipe(ready));
	self->peer = fork();
	ASSERT_LE(0, self->peer);
	if (!self->peer)
		sink(self->s.port, ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	self->s.ofd = chan_open();
	ASSERT_LE(0, self->s.ofd);
	ASSERT_EQ(0, chan_connect(self->s.ofd, AF_INET, self->s.port,
				  &self->s.chan));
}

FIXTURE_TEARDOWN(fail)
{
	if (self->nth < 0)
		return;
	close(self->s.ofd);
	kill(self->peer, SIGKILL);
	waitpid(self->peer, NULL, 0);
	close(self->nth);
}

FIXTURE_VARIANT(fail) {
	const char *name;
	sweep_fn prepare;
	sweep_fn fn;
};

FIXTURE_VARIANT_ADD(fail, open) { "open", NULL, op_open_close };
FIXTURE_VARIANT_ADD(fail, listen) { "listen", NULL, op_listen_close };
FIXTURE_VARIANT_ADD(fail, expose) { "expose", NULL, op_expose_unexpose };
FIXTURE_VARIANT_ADD(fail, connect) { "connect", NULL, op_connect_close };
FIXTURE_VARIANT_ADD(fail, submit) { "submit", NULL, op_submit };
FIXTURE_VARIANT_ADD(fail, wait) { "wait", prep_completion, op_wait };
FIXTURE_VARIANT_ADD(fail, chan_info) { "chan_info", NULL, op_chan_info };

TEST_F_TIMEOUT(fail, sweep, 600)
{
	unsigned long long total, free_;
	struct ordma_cqe cqe;
	int failed, hit;

	if (self->nth < 0)
		SKIP(return, "no fail-nth on this kernel");
	hit = run_sweep(self->nth, &self->s, variant->prepare, variant->fn,
			&failed);
	ASSERT_LE(0, hit) TH_LOG("%s: the sweep did not end cleanly", variant->name);
	TH_LOG("%s: %d injected failures, %d calls failed", variant->name,
	       hit, failed);

	/* Every queued send completed, and the file still works. */
	while (!xwait(self->s.ofd, &cqe, 1000))
		ASSERT_EQ(4096, cqe.res);
	ASSERT_EQ(4096, do_send(self->s.ofd, self->s.chan, self->s.buf, 4096));
	ASSERT_EQ(0, sysfs_get("chunks_total", &total));
	ASSERT_EQ(0, sysfs_get("chunks_free", &free_));
	ASSERT_LE(free_, total);
}

TEST_HARNESS_MAIN
