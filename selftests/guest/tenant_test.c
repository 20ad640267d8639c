// SPDX-License-Identifier: GPL-2.0
/*
 * Tenants. One user's files together hold at most max_chans_per_user
 * channels and listeners, max_windows_per_user windows and
 * max_ops_per_user operations not yet reaped: one more fails with EDQUOT.
 * Another user, and root (not counted), are not affected, and what a user
 * gives back it can take again. The bounds are set small for the test and
 * put back after it.
 */
#define ORDMA_GUEST_TEST
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <linux/ordma.h>

#include "ordma_test.h"
#include "kselftest_harness.h"

#define PARAM		"/sys/module/ordma/parameters/"
#define MAX_CHANS	8
#define MAX_WINDOWS	16
#define MAX_OPS		32
#define NOBODY		65534
#define OTHER		65533
/*
 * How long a connect or a wait for a completion may take: a bound on a
 * hang, with room for a loaded host and the debug kernel.
 */
#define TENANT_WAIT_MS	30000

static int param_rw(const char *name, const char *set, char *old, size_t n)
{
	char path[256];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), PARAM "%s", name);
	if (old) {
		f = fopen(path, "r");
		if (!f || !fgets(old, n, f))
			ret = -1;
		if (f)
			fclose(f);
	}
	if (set) {
		f = fopen(path, "w");
		if (!f)
			return -1;
		if (fputs(set, f) < 0)
			ret = -1;
		if (fclose(f))
			ret = -1;
	}
	return ret;
}

FIXTURE(tenant) {
	char chans[32], windows[32], ops[32];
	int fd;			/* root's: the listener every tenant connects to */
	__u32 listener;
	unsigned short port;
};

FIXTURE_SETUP(tenant)
{
	static unsigned short next_port = 18900;
	struct ordma_listen l = { .size = sizeof(l), .backlog = 256 };
	char v[16];

	ORDMA_TEST_FILTER();
	ASSERT_EQ(0, param_rw("max_chans_per_user", NULL, self->chans, 32));
	ASSERT_EQ(0, param_rw("max_windows_per_user", NULL, self->windows,
			      32));
	ASSERT_EQ(0, param_rw("max_ops_per_user", NULL, self->ops, 32));
	snprintf(v, sizeof(v), "%d", MAX_CHANS);
	ASSERT_EQ(0, param_rw("max_chans_per_user", v, NULL, 0));
	snprintf(v, sizeof(v), "%d", MAX_WINDOWS);
	ASSERT_EQ(0, param_rw("max_windows_per_user", v, NULL, 0));
	snprintf(v, sizeof(v), "%d", MAX_OPS);
	ASSERT_EQ(0, param_rw("max_ops_per_user", v, NULL, 0));

	self->port = next_port++;
	self->fd = open("/dev/ordma", O_RDWR);
	ASSERT_LE(0, self->fd);
	l.addr.family = AF_INET;
	l.addr.port = htons(self->port);
	inet_pton(AF_INET, "192.0.2.1", l.addr.addr);
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_LISTEN, &l));
	self->listener = l.out_id;
}

FIXTURE_TEARDOWN(tenant)
{
	close(self->fd);
	param_rw("max_chans_per_user", self->chans, NULL, 0);
	param_rw("max_windows_per_user", self->windows, NULL, 0);
	param_rw("max_ops_per_user", self->ops, NULL, 0);
}

/* Connect @fd to the fixture's listener: 0 or errno. */
static int tconnect(FIXTURE_DATA(tenant) *self, int fd, __u32 *id)
{
	struct ordma_connect c = { .size = sizeof(c),
				   .timeout_ms = TENANT_WAIT_MS };

	c.addr.family = AF_INET;
	c.addr.port = htons(self->port);
	inet_pton(AF_INET, "192.0.2.1", c.addr.addr);
	if (ioctl(fd, ORDMA_IOC_CONNECT, &c))
		return errno;
	if (id)
		*id = c.out_chan_id;
	return 0;
}

static int texpose(int fd, void *buf, __u64 *token)
{
	struct ordma_expose e = { .size = sizeof(e), .addr = (uintptr_t)buf,
				  .len = 64,
				  .access = ORDMA_ACCESS_REMOTE_WRITE };

	if (ioctl(fd, ORDMA_IOC_EXPOSE, &e))
		return errno;
	if (token)
		*token = e.out_token;
	return 0;
}

static int trecv(int fd, __u32 chan, void *buf)
{
	struct ordma_submit s = { .size = sizeof(s), .op = ORDMA_OP_RECV,
				  .chan_id = chan, .addr = (uintptr_t)buf,
				  .len = 64 };

	return ioctl(fd, ORDMA_IOC_SUBMIT, &s) ? errno : 0;
}

/* Become @uid; 0 or why not. */
static int become(uid_t uid)
{
	return setgid(uid) || setuid(uid) ? errno : 0;
}

/*
 * Run @fn as @uid in a child; its exit status: 0 when every step went as
 * expected, else the number of the step that did not. @go, when not -1, is
 * read once before the child gives back what it holds.
 */
static int as_user(FIXTURE_DATA(tenant) *self, uid_t uid,
		   int (*fn)(FIXTURE_DATA(tenant) *self, int go), int go)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(become(uid) ? 100 : fn(self, go));
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* The child at its bound tells the parent so, here. */
static int tenant_ready = -1;

static void wait_go(int go)
{
	char c;

	if (tenant_ready >= 0 && write(tenant_ready, "r", 1) != 1)
		_exit(98);
	if (go >= 0 && read(go, &c, 1) != 1)
		_exit(99);
}

/* Channels and a listener: 8 in all, then EDQUOT; one closed, one more. */
static int fill_chans(FIXTURE_DATA(tenant) *self, int go)
{
	struct ordma_listen l = { .size = sizeof(l) };
	struct ordma_close cl = { .size = sizeof(cl) };
	int fd = open("/dev/ordma", O_RDWR), fd2, i;
	__u32 id = 0;

	if (fd < 0)
		return 1;
	l.addr.family = AF_INET;
	l.addr.port = htons(self->port + 500);
	inet_pton(AF_INET, "192.0.2.1", l.addr.addr);
	if (ioctl(fd, ORDMA_IOC_LISTEN, &l))
		return 2;
	for (i = 1; i < MAX_CHANS; i++)
		if (tconnect(self, fd, &id))
			return 3;
	if (tconnect(self, fd, NULL) != EDQUOT)
		return 4;
	if (!ioctl(fd, ORDMA_IOC_LISTEN, &l) || errno != EDQUOT)
		return 5;
	/* The bound is the user's, not the file's. */
	fd2 = open("/dev/ordma", O_RDWR);
	if (fd2 < 0 || tconnect(self, fd2, NULL) != EDQUOT)
		return 6;
	wait_go(go);
	cl.id = id;
	if (ioctl(fd, ORDMA_IOC_CLOSE, &cl))
		return 7;
	if (tconnect(self, fd2, NULL))
		return 8;
	return 0;
}

/* Another user at the same time: its own 8. */
static int other_chans(FIXTURE_DATA(tenant) *self, int go)
{
	int fd = open("/dev/ordma", O_RDWR), i;

	if (fd < 0)
		return 1;
	for (i = 0; i < MAX_CHANS; i++)
		if (tconnect(self, fd, NULL))
			return 2;
	return tconnect(self, fd, NULL) == EDQUOT ? 0 : 3;
}

/*
 * Spawn a child of @fn as NOBODY that stops at its bound and waits; check
 * another user and root meanwhile; let it go on.
 */
static void while_capped(struct __test_metadata *_metadata,
			 FIXTURE_DATA(tenant) *self,
			 int (*fn)(FIXTURE_DATA(tenant) *self, int go),
			 int (*other)(FIXTURE_DATA(tenant) *self, int go))
{
	int p[2], r[2], st;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(r));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(p[1]);
		close(r[0]);
		tenant_ready = r[1];
		_exit(become(NOBODY) ? 100 : fn(self, p[0]));
	}
	close(p[0]);
	close(r[1]);
	/* At its bound (or failed: EOF); the other user is not held up. */
	if (read(r[0], &c, 1) == 1)
		EXPECT_EQ(0, as_user(self, OTHER, other, -1));
	close(r[0]);
	ASSERT_EQ(1, write(p[1], "g", 1));
	close(p[1]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("step %d", WEXITSTATUS(st));
}

TEST_F_TIMEOUT(tenant, channels_stop_at_the_bound, 120)
{
	int fd = open("/dev/ordma", O_RDWR), i;

	ASSERT_LE(0, fd);
	while_capped(_metadata, self, fill_chans, other_chans);
	/* Root is not counted. */
	for (i = 0; i < MAX_CHANS + 2; i++)
		ASSERT_EQ(0, tconnect(self, fd, NULL));
	close(fd);
	/* Everything given back: the same user takes its 8 again. */
	EXPECT_EQ(0, as_user(self, NOBODY, other_chans, -1));
}

static int fill_windows(FIXTURE_DATA(tenant) *self, int go)
{
	static char buf[64];
	int fd = open("/dev/ordma", O_RDWR), fd2, i;
	struct ordma_unexpose u = { .size = sizeof(u) };
	__u64 token = 0;

	if (fd < 0)
		return 1;
	for (i = 0; i < MAX_WINDOWS; i++)
		if (texpose(fd, buf, &token))
			return 2;
	if (texpose(fd, buf, NULL) != EDQUOT)
		return 3;
	fd2 = open("/dev/ordma", O_RDWR);
	if (fd2 < 0 || texpose(fd2, buf, NULL) != EDQUOT)
		return 4;
	wait_go(go);
	u.token = token;
	if (ioctl(fd, ORDMA_IOC_UNEXPOSE, &u))
		return 5;
	return texpose(fd2, buf, NULL) ? 6 : 0;
}

static int other_windows(FIXTURE_DATA(tenant) *self, int go)
{
	static char buf[64];
	int fd = open("/dev/ordma", O_RDWR), i;

	if (fd < 0)
		return 1;
	for (i = 0; i < MAX_WINDOWS; i++)
		if (texpose(fd, buf, NULL))
			return 2;
	return texpose(fd, buf, NULL) == EDQUOT ? 0 : 3;
}

TEST_F(tenant, windows_stop_at_the_bound)
{
	static char buf[64];
	int i;

	while_capped(_metadata, self, fill_windows, other_windows);
	for (i = 0; i < MAX_WINDOWS + 2; i++)
		ASSERT_EQ(0, texpose(self->fd, buf, NULL));
	EXPECT_EQ(0, as_user(self, NOBODY, other_windows, -1));
}

/* RECVs that nothing completes: 32, then EDQUOT; a reaped one is back. */
static int fill_ops(FIXTURE_DATA(tenant) *self, int go)
{
	static char buf[64];
	struct ordma_close cl = { .size = sizeof(cl) };
	struct ordma_cqe c[MAX_OPS];
	struct ordma_wait w = { .size = sizeof(w), .cqes = (uintptr_t)c,
				.max = MAX_OPS, .min = 1,
				.timeout_ms = TENANT_WAIT_MS };
	int fd = open("/dev/ordma", O_RDWR), i;
	__u32 a = 0, b = 0;

	if (fd < 0 || tconnect(self, fd, &a) || tconnect(self, fd, &b))
		return 1;
	for (i = 0; i < MAX_OPS; i++)
		if (trecv(fd, i % 2 ? a : b, buf))
			return 2;
	if (trecv(fd, a, buf) != EDQUOT)
		return 3;
	wait_go(go);
	/* Closing b completes its RECVs (ECANCELED): still held until reaped. */
	cl.id = b;
	if (ioctl(fd, ORDMA_IOC_CLOSE, &cl))
		return 4;
	if (trecv(fd, a, buf) != EDQUOT)
		return 5;
	if (ioctl(fd, ORDMA_IOC_WAIT, &w) || !w.out_count)
		return 6;
	return trecv(fd, a, buf) ? 7 : 0;
}

static int other_ops(FIXTURE_DATA(tenant) *self, int go)
{
	static char buf[64];
	int fd = open("/dev/ordma", O_RDWR), i;
	__u32 a = 0;

	if (fd < 0 || tconnect(self, fd, &a))
		return 1;
	for (i = 0; i < MAX_OPS; i++)
		if (trecv(fd, a, buf))
			return 2;
	return trecv(fd, a, buf) == EDQUOT ? 0 : 3;
}

TEST_F_TIMEOUT(tenant, operations_stop_at_the_bound, 120)
{
	while_capped(_metadata, self, fill_ops, other_ops);
	EXPECT_EQ(0, as_user(self, NOBODY, other_ops, -1));
}

#define USER_CHUNKS	16

static int sysfs_rw(const char *name, const char *set, char *old, size_t n)
{
	char path[128];

	snprintf(path, sizeof(path), "../../../class/ordma/%s/%s",
		 ordma_ibdev(), name);
	return param_rw(path, set, old, n);
}

static unsigned long long chunks_held(void)
{
	char v[32] = "";

	if (sysfs_rw("chunks_held", NULL, v, sizeof(v)))
		return ~0ULL;
	return strtoull(v, NULL, 10);
}

/* A loopback channel of @fd on @port: 0 or errno. */
static int loop_pair(int fd, unsigned short port, __u32 *a, __u32 *c)
{
	struct ordma_listen l = { .size = sizeof(l) };
	struct ordma_connect cn = { .size = sizeof(cn),
				    .timeout_ms = TENANT_WAIT_MS };
	struct ordma_accept ac = { .size = sizeof(ac) };

	l.addr.family = AF_INET;
	l.addr.port = htons(port);
	inet_pton(AF_INET, "192.0.2.1", l.addr.addr);
	if (ioctl(fd, ORDMA_IOC_LISTEN, &l))
		return errno;
	cn.addr = l.addr;
	if (ioctl(fd, ORDMA_IOC_CONNECT, &cn))
		return errno;
	ac.listener_id = l.out_id;
	if (ioctl(fd, ORDMA_IOC_ACCEPT, &ac))
		return errno;
	*a = ac.out_chan_id;
	*c = cn.out_chan_id;
	return 0;
}

/*
 * Channels until the user's bound on them, then messages on each that
 * nobody receives: they hold the receiving ends' chunks, and the sends
 * wait for more, until the user's share of the pool runs out.
 */
static int fill_chunks(FIXTURE_DATA(tenant) *self, int go)
{
	static unsigned char src[65536];
	struct ordma_submit s = { .size = sizeof(s), .op = ORDMA_OP_SEND,
				  .addr = (uintptr_t)src, .len = sizeof(src) };
	int fd = open("/dev/ordma", O_RDWR), i, k, n, ret = 0;
	unsigned long long held, peak = 0;
	__u32 a[MAX_CHANS], c[MAX_CHANS];

	if (fd < 0)
		return 1;
	for (n = 0; n < MAX_CHANS; n++) {
		ret = loop_pair(fd, self->port + 600 + n, &a[n], &c[n]);
		if (ret)
			break;
	}
	/* The passive end over the bound refuses the connection. */
	if ((ret != EDQUOT && ret != ECONNREFUSED) || !n)
		return 2;
	memset(src, 0x5a, sizeof(src));
	for (i = 0; i < n; i++) {
		s.chan_id = c[i];
		for (k = 0; k < 8; k++)
			if (ioctl(fd, ORDMA_IOC_SUBMIT, &s))
				return 4;
	}
	/*
	 * Let the sends take what they can, for 2 s at least and until they
	 * reach half the share (60 s at most on a slow guest); never past it.
	 */
	for (i = 0; i < 20 || (peak < USER_CHUNKS / 2 && i < 600); i++) {
		usleep(100000);
		held = chunks_held();
		if (held > USER_CHUNKS)
			return 3;
		if (held > peak)
			peak = held;
	}
	/* The messages did reach the bound: it is what held them back. */
	if (peak < USER_CHUNKS / 2)
		return 5;
	wait_go(go);
	return 0;
}

/* Another user's own channel moves 64 KiB meanwhile. */
static int other_chunks(FIXTURE_DATA(tenant) *self, int go)
{
	static unsigned char src[65536], dst[65536];
	struct ordma_submit s = { .size = sizeof(s), .len = sizeof(src) };
	struct ordma_cqe cqe;
	struct ordma_wait w = { .size = sizeof(w), .cqes = (uintptr_t)&cqe,
				.max = 1, .timeout_ms = TENANT_WAIT_MS };
	int fd = open("/dev/ordma", O_RDWR), i;
	__u32 a = 0, c = 0;

	if (fd < 0 || loop_pair(fd, self->port + 700, &a, &c))
		return 1;
	for (i = 0; i < (int)sizeof(src); i++)
		src[i] = (unsigned char)(i * 13 + 1);
	s.op = ORDMA_OP_RECV;
	s.chan_id = a;
	s.addr = (uintptr_t)dst;
	if (ioctl(fd, ORDMA_IOC_SUBMIT, &s))
		return 2;
	s.op = ORDMA_OP_SEND;
	s.chan_id = c;
	s.addr = (uintptr_t)src;
	if (ioctl(fd, ORDMA_IOC_SUBMIT, &s))
		return 3;
	for (i = 0; i < 2; i++) {
		if (ioctl(fd, ORDMA_IOC_WAIT, &w))
			return 100 + errno;
		if (cqe.res != sizeof(src))
			return cqe.res < 0 && cqe.res > -50 ? 50 - cqe.res : 6;
	}
	return memcmp(src, dst, sizeof(src)) ? 5 : 0;
}

/*
 * The channels of one user hold at most user_quota_chunks of the pool
 * together, however much they have to move: another user's channel moves
 * its bytes meanwhile.
 */
TEST_F_TIMEOUT(tenant, pool_share_stops_at_the_bound, 180)
{
	char old[32], v[16];

	ASSERT_EQ(0, sysfs_rw("user_quota_chunks", NULL, old, sizeof(old)));
	snprintf(v, sizeof(v), "%d", USER_CHUNKS);
	ASSERT_EQ(0, sysfs_rw("user_quota_chunks", v, NULL, 0));
	while_capped(_metadata, self, fill_chunks, other_chunks);
	EXPECT_EQ(0, sysfs_rw("user_quota_chunks", old, NULL, 0));
}

TEST_HARNESS_MAIN
