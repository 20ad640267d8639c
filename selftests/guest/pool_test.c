// SPDX-License-Identifier: GPL-2.0
/*
 * The intermediate buffer pool of the device through its sysfs knobs and the
 * module parameters: defaults, limits (every bad value fails with EINVAL and
 * changes nothing), immediate growth and shrinking, chunk size changes,
 * permissions, and channels made while more than half the pool is held
 * receiving in small buffers of their own. Every test puts the defaults
 * back, even when it fails.
 */
#define ORDMA_GUEST_TEST
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "ordma_test.h"
#include "ordma_chan.h"
#include "kselftest_harness.h"

#define PARAM_DIR	"/sys/module/ordma/parameters/"

#define DEF_POOL	(16ULL << 20)
#define DEF_CHUNK	(64ULL << 10)
#define DEF_QUOTA	64ULL

/* Read a decimal value from @dir@name; -1 (errno set) on failure. */
static int read_u64_at(const char *dir, const char *name, uint64_t *val)
{
	char path[256], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	*val = strtoull(buf, NULL, 10);
	return 0;
}

/* The value of a pool attribute of CHAN_IBDEV, or UINT64_MAX if unreadable. */
static uint64_t attr(const char *name)
{
	char dir[128];
	uint64_t v;

	ordma_sysfs(dir, sizeof(dir), "");
	return read_u64_at(dir, name, &v) ? UINT64_MAX : v;
}

/* Write @val to a pool attribute: 0, or the errno of open() or write(). */
static int attr_write(const char *name, const char *val)
{
	char path[256];
	ssize_t n;
	int fd, err = 0;

	fd = open(ordma_sysfs(path, sizeof(path), name), O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		err = errno;
	else if ((size_t)n != strlen(val))
		err = EIO;
	close(fd);
	return err;
}

static int attr_write_u64(const char *name, uint64_t val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64 "\n", val);
	return attr_write(name, buf);
}

/*
 * Back to the defaults from any valid state: the pool size first when it is
 * too small for the default chunk, and again once the chunk size is back.
 */
static void restore_defaults(void)
{
	attr_write_u64("pool_bytes", DEF_POOL);
	attr_write_u64("chunk_bytes", DEF_CHUNK);
	attr_write_u64("pool_bytes", DEF_POOL);
	attr_write_u64("chan_quota_chunks", DEF_QUOTA);
}

static int at_defaults(void)
{
	return attr("pool_bytes") == DEF_POOL &&
	       attr("chunk_bytes") == DEF_CHUNK &&
	       attr("chan_quota_chunks") == DEF_QUOTA &&
	       attr("chunks_total") == DEF_POOL / DEF_CHUNK;
}

static mode_t mode_of(const char *path, uid_t *uid)
{
	struct stat st;

	if (stat(path, &st))
		return (mode_t)-1;
	*uid = st.st_uid;
	return st.st_mode & 07777;
}

FIXTURE(pool) {
	int unused;
};

FIXTURE_SETUP(pool)
{
	ORDMA_TEST_FILTER();
	/* A test that left the pool changed must not pass the next one. */
	ASSERT_TRUE(at_defaults());
	/* Nothing uses the pool in these tests: every chunk is free. */
	ASSERT_EQ(attr("chunks_total"), attr("chunks_free"));
}

FIXTURE_TEARDOWN(pool)
{
	restore_defaults();
}

TEST_F(pool, defaults_consistent)
{
	uint64_t total = attr("chunks_total");
	uint64_t nfree = attr("chunks_free");

	EXPECT_EQ(DEF_POOL, attr("pool_bytes"));
	EXPECT_EQ(DEF_CHUNK, attr("chunk_bytes"));
	EXPECT_EQ(DEF_QUOTA, attr("chan_quota_chunks"));
	EXPECT_EQ(attr("pool_bytes"), total * attr("chunk_bytes"));
	EXPECT_LE(nfree, total);
	EXPECT_LE(attr("high_water"), total);
	EXPECT_NE(UINT64_MAX, attr("alloc_waits"));
}

TEST_F(pool, module_params_are_the_defaults)
{
	uint64_t v;

	ASSERT_EQ(0, read_u64_at(PARAM_DIR, "pool_bytes", &v));
	EXPECT_EQ(DEF_POOL, v);
	ASSERT_EQ(0, read_u64_at(PARAM_DIR, "chunk_bytes", &v));
	EXPECT_EQ(DEF_CHUNK, v);
	ASSERT_EQ(0, read_u64_at(PARAM_DIR, "chan_quota_chunks", &v));
	EXPECT_EQ(DEF_QUOTA, v);
}

TEST_F(pool, grow_is_immediate)
{
	ASSERT_EQ(0, attr_write_u64("pool_bytes", 2 * DEF_POOL));
	EXPECT_EQ(2 * DEF_POOL, attr("pool_bytes"));
	EXPECT_EQ(2 * DEF_POOL / DEF_CHUNK, attr("chunks_total"));
	EXPECT_EQ(2 * DEF_POOL / DEF_CHUNK, attr("chunks_free"));

	ASSERT_EQ(0, attr_write_u64("pool_bytes", DEF_POOL));
	EXPECT_EQ(DEF_POOL / DEF_CHUNK, attr("chunks_total"));
	EXPECT_EQ(DEF_POOL / DEF_CHUNK, attr("chunks_free"));
}

TEST_F(pool, shrink_frees_idle_chunks)
{
	ASSERT_EQ(0, attr_write_u64("pool_bytes", DEF_POOL / 4));
	EXPECT_EQ(DEF_POOL / 4, attr("pool_bytes"));
	EXPECT_EQ(DEF_POOL / 4 / DEF_CHUNK, attr("chunks_total"));
	EXPECT_EQ(DEF_POOL / 4 / DEF_CHUNK, attr("chunks_free"));

	/* Down to a single chunk, then back. */
	ASSERT_EQ(0, attr_write_u64("pool_bytes", DEF_CHUNK));
	EXPECT_EQ(1ULL, attr("chunks_total"));
	EXPECT_EQ(1ULL, attr("chunks_free"));

	ASSERT_EQ(0, attr_write_u64("pool_bytes", DEF_POOL));
	EXPECT_EQ(DEF_POOL / DEF_CHUNK, attr("chunks_total"));
}

TEST_F(pool, size_rounds_down_to_chunks)
{
	ASSERT_EQ(0, attr_write_u64("pool_bytes", DEF_POOL + DEF_CHUNK - 1));
	EXPECT_EQ(DEF_POOL, attr("pool_bytes"));
	EXPECT_EQ(DEF_POOL / DEF_CHUNK, attr("chunks_total"));

	ASSERT_EQ(0, attr_write_u64("pool_bytes", 2 * DEF_CHUNK - 1));
	EXPECT_EQ(DEF_CHUNK, attr("pool_bytes"));
	EXPECT_EQ(1ULL, attr("chunks_total"));
}

TEST_F(pool, upper_limit_accepted)
{
	/* 1 GiB in 1 MiB chunks: 1024 chunks, well within the guest's RAM. */
	ASSERT_EQ(0, attr_write_u64("chunk_bytes", 1 << 20));
	ASSERT_EQ(0, attr_write_u64("pool_bytes", 1ULL << 30));
	EXPECT_EQ(1ULL << 30, attr("pool_bytes"));
	EXPECT_EQ(1024ULL, attr("chunks_total"));
	EXPECT_EQ(1024ULL, attr("chunks_free"));
}

TEST_F(pool, chunk_bytes_change_when_idle)
{
	ASSERT_EQ(0, attr_write_u64("chunk_bytes", 2 * DEF_CHUNK));
	EXPECT_EQ(2 * DEF_CHUNK, attr("chunk_bytes"));
	EXPECT_EQ(DEF_POOL, attr("pool_bytes"));
	EXPECT_EQ(DEF_POOL / (2 * DEF_CHUNK), attr("chunks_total"));
	EXPECT_EQ(DEF_POOL / (2 * DEF_CHUNK), attr("chunks_free"));

	ASSERT_EQ(0, attr_write_u64("chunk_bytes", DEF_CHUNK));
	EXPECT_EQ(DEF_CHUNK, attr("chunk_bytes"));
	EXPECT_EQ(DEF_POOL, attr("pool_bytes"));
	EXPECT_EQ(DEF_POOL / DEF_CHUNK, attr("chunks_total"));
	EXPECT_EQ(DEF_POOL / DEF_CHUNK, attr("chunks_free"));

	/* The limits themselves are accepted. */
	ASSERT_EQ(0, attr_write_u64("chunk_bytes", 4096));
	EXPECT_EQ(DEF_POOL / 4096, attr("chunks_total"));
	ASSERT_EQ(0, attr_write_u64("chunk_bytes", 1 << 20));
	EXPECT_EQ(DEF_POOL / (1 << 20), attr("chunks_total"));
	EXPECT_EQ(DEF_POOL, attr("pool_bytes"));
}

TEST_F(pool, chunk_bytes_above_pool_bytes)
{
	ASSERT_EQ(0, attr_write_u64("pool_bytes", DEF_CHUNK));
	EXPECT_EQ(EINVAL, attr_write_u64("chunk_bytes", 2 * DEF_CHUNK));
	EXPECT_EQ(DEF_CHUNK, attr("chunk_bytes"));
	EXPECT_EQ(1ULL, attr("chunks_total"));
	/* And pool_bytes cannot go below chunk_bytes. */
	EXPECT_EQ(EINVAL, attr_write_u64("pool_bytes", DEF_CHUNK - 1));
	EXPECT_EQ(DEF_CHUNK, attr("pool_bytes"));
}

TEST_F(pool, quota_limits_accepted)
{
	ASSERT_EQ(0, attr_write("chan_quota_chunks", "1"));
	EXPECT_EQ(1ULL, attr("chan_quota_chunks"));
	ASSERT_EQ(0, attr_write("chan_quota_chunks", "65536"));
	EXPECT_EQ(65536ULL, attr("chan_quota_chunks"));
	ASSERT_EQ(0, attr_write_u64("chan_quota_chunks", DEF_QUOTA));
	EXPECT_EQ(DEF_QUOTA, attr("chan_quota_chunks"));
}

TEST_F(pool, modes)
{
	static const char * const rw[] = {
		"pool_bytes", "chunk_bytes", "chan_quota_chunks",
	};
	static const char * const ro[] = {
		"chunks_total", "chunks_free", "high_water", "alloc_waits",
	};
	char path[256];
	unsigned int i;
	uid_t uid = (uid_t)-1;

	for (i = 0; i < ARRAY_SIZE(rw); i++) {
		ordma_sysfs(path, sizeof(path), rw[i]);
		EXPECT_EQ((mode_t)0644, mode_of(path, &uid)) TH_LOG("%s", path);
		EXPECT_EQ((uid_t)0, uid);
		snprintf(path, sizeof(path), PARAM_DIR "%s", rw[i]);
		EXPECT_EQ((mode_t)0444, mode_of(path, &uid)) TH_LOG("%s", path);
	}
	for (i = 0; i < ARRAY_SIZE(ro); i++) {
		ordma_sysfs(path, sizeof(path), ro[i]);
		EXPECT_EQ((mode_t)0444, mode_of(path, &uid)) TH_LOG("%s", path);
		/* Not even root can write a counter. */
		EXPECT_EQ(EACCES, attr_write(ro[i], "0"));
	}
}

/* A loopback channel on @port: connected end *c, accepted end *a; -errno. */
static int short_pair(int fd, unsigned short port, __u32 *a, __u32 *c)
{
	struct ordma_accept ac = { .size = sizeof(ac) };
	__u32 lis = 0;
	int ret;

	ret = chan_listen(fd, AF_INET, port, 4, &lis);
	if (ret)
		return ret;
	ret = chan_connect(fd, AF_INET, port, c);
	if (!ret) {
		ac.listener_id = lis;
		ret = ioctl(fd, ORDMA_IOC_ACCEPT, &ac) ? -errno : 0;
		*a = ac.out_chan_id;
	}
	chan_close(fd, lis);
	return ret;
}

/* @len bytes from @from to @to, through a RECV, and checked. */
static int short_move(int fd, __u32 from, __u32 to, size_t len, uint64_t salt)
{
	unsigned char *src = chan_buf(len, 3), *dst = chan_buf(len, 5);
	__u64 ck[2];
	long long res[2];
	int ret = -ENOMEM;

	if (!src || !dst)
		goto out;
	chan_fill(src, len, chan_seed(len, salt));
	ck[0] = chan_cookie();
	ck[1] = chan_cookie();
	ret = xsubmit(fd, ORDMA_OP_RECV, to, dst, len, ck[0], 0, 0, 0);
	if (!ret)
		ret = xsubmit(fd, ORDMA_OP_SEND, from, src, len, ck[1], 0, 0, 0);
	if (!ret)
		ret = xreap(fd, 2, ck, res, CHAN_WAIT_MS);
	if (!ret && (res[0] != (long long)len || res[1] != (long long)len))
		ret = -EIO;
	if (!ret && chan_check("short", dst, len, chan_seed(len, salt)))
		ret = -EBADMSG;
out:
	if (src)
		chan_buf_free(src, len, 3);
	if (dst)
		chan_buf_free(dst, len, 5);
	return ret;
}

/*
 * Do all channel ends of this process, as ordmactl lists them, receive in
 * buffers of @size bytes, and do their peers know it? 0 if so.
 */
static int rx_sizes_are(unsigned int size)
{
	return ordma_sh("tools/ordmactl -j chan show pid %d | python3 -c "
			"'import json, sys; c = json.load(sys.stdin); "
			"sys.exit(0 if c and all(e[\"rx_size\"] == %u and "
			"e[\"peer_rx_size\"] == %u for e in c) else 1)'",
			(int)getpid(), size, size);
}

/* Loopback pairs short_pool_gives_small_receive_buffers makes at most. */
#define SHORT_PAIRS	6

/*
 * chunks_held once it is @max or less, or after CHAN_WAIT_MS (a set-up's
 * send may hold one more for a while).
 */
static uint64_t held_at_most(uint64_t max)
{
	long long end = chan_now_ms() + CHAN_WAIT_MS;
	uint64_t v = attr("chunks_held");

	while (v > max && chan_now_ms() < end) {
		usleep(100000);
		v = attr("chunks_held");
	}
	return v;
}

/*
 * A pool more than half held gives a new channel no chunk to receive in:
 * both its ends receive in ORDMA_RX_SMALL buffers of their own (1992 bytes
 * of payload, ORDMA_IOC_CHAN_INFO says), hold nothing of the pool while
 * idle, and still move every size both ways, sends and RECVs, WRITEs and
 * READs, byte for byte. Once the pool is back to its size, they grow to
 * chunk-sized buffers as their traffic comes, tell their peers (ordmactl
 * shows both sizes), and move every size again.
 */
TEST_F_TIMEOUT(pool, short_pool_gives_small_receive_buffers, 240)
{
	static const size_t lens[] = { 1, 1991, 1992, 1993, 4096,
				       64 * 1024 + 3, 1024 * 1024 + 7 };
	unsigned short port = chan_port(19400);
	struct ordma_chan_info ci;
	__u32 a[SHORT_PAIRS], c[SHORT_PAIRS];
	int n, k, s = -1, m = -1, sizes[SHORT_PAIRS];
	unsigned char *win, *buf;
	size_t wlen = 1024 * 1024 + 7, i;
	__u64 token = 0;
	long long end;
	int fd;

	/*
	 * Five chunks: the first pair takes two; then, with more than half
	 * the pool held (a send of a set-up may hold one more for a while),
	 * the ends made receive in buffers of their own. Pairs until one of
	 * two small ends; one of each kind on the way, if it comes.
	 */
	ASSERT_EQ(0, attr_write_u64("pool_bytes", 5 * DEF_CHUNK));
	fd = chan_open();
	ASSERT_LE(0, fd);
	for (n = 0; n < SHORT_PAIRS && s < 0; n++) {
		ASSERT_EQ(0, short_pair(fd, port + n, &a[n], &c[n]));
		ASSERT_EQ(0, chan_info(fd, c[n], &ci));
		sizes[n] = ci.out_rx_size == 2048 - 56;
		ASSERT_EQ(0, chan_info(fd, a[n], &ci));
		sizes[n] += ci.out_rx_size == 2048 - 56;
		if (sizes[n] == 2)
			s = n;
		else if (sizes[n] == 1 && m < 0)
			m = n;
		/* The pool was all free: the first pair had chunks. */
		if (!n)
			ASSERT_EQ(0, sizes[0]);
	}
	ASSERT_LE(0, s) TH_LOG("no pair of small ends in %d", n);
	if (m < 0)
		TH_LOG("no pair of one end of each kind this time");
	EXPECT_GE(3ULL, held_at_most(3));

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		EXPECT_EQ(0, short_move(fd, c[s], a[s], lens[i], 2 * i))
			TH_LOG("%zu bytes to the accepted end", lens[i]);
		EXPECT_EQ(0, short_move(fd, a[s], c[s], lens[i], 2 * i + 1))
			TH_LOG("%zu bytes to the connected end", lens[i]);
		if (m < 0)
			continue;
		EXPECT_EQ(0, short_move(fd, c[m], a[m], lens[i], 3 * i))
			TH_LOG("%zu bytes, two kinds, one way", lens[i]);
		EXPECT_EQ(0, short_move(fd, a[m], c[m], lens[i], 3 * i + 1))
			TH_LOG("%zu bytes, two kinds, the other way", lens[i]);
	}

	/* WRITE into a window, READ it back, through the small buffers. */
	win = chan_buf(wlen, 1);
	buf = chan_buf(wlen, 7);
	ASSERT_NE(NULL, win);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, chan_expose(fd, win, wlen, ORDMA_ACCESS_REMOTE_READ |
				 ORDMA_ACCESS_REMOTE_WRITE, &token));
	chan_fill(buf, wlen, chan_seed(wlen, 77));
	EXPECT_EQ((long long)wlen, do_write(fd, c[s], buf, wlen, token, 0));
	EXPECT_EQ(0, chan_check("window", win, wlen, chan_seed(wlen, 77)));
	memset(buf, 0, wlen);
	EXPECT_EQ((long long)wlen, do_read(fd, c[s], buf, wlen, token, 0));
	EXPECT_EQ(0, chan_check("read", buf, wlen, chan_seed(wlen, 77)));
	EXPECT_EQ(0, chan_unexpose(fd, token));
	chan_buf_free(win, wlen, 1);
	chan_buf_free(buf, wlen, 7);

	/* Not yet all of a chunk's size: the check can tell. */
	EXPECT_NE(0, rx_sizes_are(DEF_CHUNK + 56));
	/* The pool back: the small ends grow with their next messages. */
	ASSERT_EQ(0, attr_write_u64("pool_bytes", DEF_POOL));
	for (i = 0; i < 4; i++) {
		for (k = 0; k < n; k++) {
			EXPECT_EQ(0, short_move(fd, c[k], a[k], 4096, 100 + i));
			EXPECT_EQ(0, short_move(fd, a[k], c[k], 4096, 200 + i));
		}
	}
	EXPECT_EQ(0, rx_sizes_are(DEF_CHUNK + 56));
	ASSERT_EQ(0, chan_info(fd, c[s], &ci));
	EXPECT_EQ(DEF_CHUNK, (uint64_t)ci.out_rx_size);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		EXPECT_EQ(0, short_move(fd, c[s], a[s], lens[i], 5 * i))
			TH_LOG("%zu bytes to the grown accepted end", lens[i]);
		EXPECT_EQ(0, short_move(fd, a[s], c[s], lens[i], 5 * i + 1))
			TH_LOG("%zu bytes to the grown connected end", lens[i]);
	}

	close(fd);
	/* Every chunk back once the channels are gone. */
	end = chan_now_ms() + CHAN_WAIT_MS;
	while (attr("chunks_held") && chan_now_ms() < end)
		usleep(100000);
	EXPECT_EQ(0ULL, attr("chunks_held"));
}

TEST_F(pool, only_root_writes)
{
	pid_t pid;
	int st;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(2);
		_exit(attr_write("pool_bytes", "33554432") == EACCES &&
		      attr_write("chunk_bytes", "131072") == EACCES &&
		      attr_write("chan_quota_chunks", "1") == EACCES ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_TRUE(at_defaults());
}

/* Every bad write fails with EINVAL and leaves the value as it was. */
FIXTURE(bad_write) {
	uint64_t before;
};

FIXTURE_VARIANT(bad_write) {
	const char *attr;
	const char *val;
};

FIXTURE_SETUP(bad_write)
{
	ORDMA_TEST_FILTER();
	ASSERT_TRUE(at_defaults());
	self->before = attr(variant->attr);
}

FIXTURE_TEARDOWN(bad_write)
{
	restore_defaults();
}

#define BAD_WRITE(_name, _attr, _val)				\
	FIXTURE_VARIANT_ADD(bad_write, _name) {			\
		.attr = _attr,					\
		.val = _val,					\
	}

BAD_WRITE(pool_zero, "pool_bytes", "0");
BAD_WRITE(pool_3g, "pool_bytes", "3221225472");
BAD_WRITE(pool_1g_plus_1, "pool_bytes", "1073741825");
BAD_WRITE(pool_below_chunk, "pool_bytes", "65535");
BAD_WRITE(pool_u64_overflow, "pool_bytes", "18446744073709551616");
BAD_WRITE(pool_negative, "pool_bytes", "-1");
BAD_WRITE(pool_garbage, "pool_bytes", "lots");
BAD_WRITE(pool_trailing_garbage, "pool_bytes", "33554432 bytes");
BAD_WRITE(pool_empty_line, "pool_bytes", "\n");
BAD_WRITE(chunk_zero, "chunk_bytes", "0");
BAD_WRITE(chunk_not_pow2, "chunk_bytes", "5000");
BAD_WRITE(chunk_below_min, "chunk_bytes", "2048");
BAD_WRITE(chunk_above_max, "chunk_bytes", "2097152");
BAD_WRITE(chunk_u32_overflow, "chunk_bytes", "4294967296");
BAD_WRITE(chunk_garbage, "chunk_bytes", "big");
BAD_WRITE(quota_zero, "chan_quota_chunks", "0");
BAD_WRITE(quota_above_max, "chan_quota_chunks", "65537");
BAD_WRITE(quota_negative, "chan_quota_chunks", "-1");
BAD_WRITE(quota_garbage, "chan_quota_chunks", "many");

TEST_F(bad_write, einval_and_unchanged)
{
	uint64_t total = attr("chunks_total");

	EXPECT_EQ(EINVAL, attr_write(variant->attr, variant->val));
	EXPECT_EQ(self->before, attr(variant->attr));
	EXPECT_EQ(total, attr("chunks_total"));
	EXPECT_TRUE(at_defaults());
}

/*
 * Module parameters: checked at load time (a bad one fails the load with
 * EINVAL) and used for the pools of the devices attached afterwards.
 */
static int load(const char *params)
{
	int fd, ret;

	fd = open(ordma_ko(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	ret = syscall(SYS_finit_module, fd, params, 0);
	ret = ret ? errno : 0;
	close(fd);
	return ret;
}

static int loaded(void)
{
	return access("/sys/module/ordma", F_OK) == 0;
}

FIXTURE(params) {
	int unused;
};

FIXTURE_SETUP(params)
{
	ORDMA_TEST_FILTER();
	ASSERT_EQ(0, ordma_sh("rmmod ordma"));
}

FIXTURE_TEARDOWN(params)
{
	if (loaded())
		ordma_sh("rmmod ordma");
	if (load(""))
		TH_LOG("cannot load %s again", ordma_ko());
}

TEST_F(params, bad_values_fail_the_load)
{
	static const char * const bad[] = {
		"chunk_bytes=5000", "chunk_bytes=2048", "chunk_bytes=2097152",
		"pool_bytes=0", "pool_bytes=3221225472", "pool_bytes=lots",
		"chan_quota_chunks=0", "chan_quota_chunks=65537",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(EINVAL, load(bad[i])) TH_LOG("%s", bad[i]);
		EXPECT_FALSE(loaded());
	}
}

TEST_F(params, values_reach_the_pool)
{
	uint64_t v;

	ASSERT_EQ(0, load("pool_bytes=1048576 chunk_bytes=4096 chan_quota_chunks=8"));
	EXPECT_EQ(1048576ULL, attr("pool_bytes"));
	EXPECT_EQ(4096ULL, attr("chunk_bytes"));
	EXPECT_EQ(8ULL, attr("chan_quota_chunks"));
	EXPECT_EQ(256ULL, attr("chunks_total"));
	EXPECT_EQ(256ULL, attr("chunks_free"));
	ASSERT_EQ(0, read_u64_at(PARAM_DIR, "chunk_bytes", &v));
	EXPECT_EQ(4096ULL, v);
}

TEST_F(params, pool_below_chunk_gives_one_chunk)
{
	/* Each parameter is checked alone; the pool takes at least a chunk. */
	ASSERT_EQ(0, load("pool_bytes=4096"));
	EXPECT_EQ(DEF_CHUNK, attr("pool_bytes"));
	EXPECT_EQ(1ULL, attr("chunks_total"));
}

TEST_HARNESS_MAIN
