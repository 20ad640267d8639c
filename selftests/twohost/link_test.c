// SPDX-License-Identifier: GPL-2.0
/*
 * ordma between two hosts: run by tools/vmtest --hosts 2 in both guests at
 * once (tools/check's stage "twohost"), each guest with its own kernel,
 * ordma.ko and rxe0, linked only to each other. Host 1 listens, host 2
 * connects; both run the same tests in the same order and meet over the
 * link (tools/vmtest-barrier) before each channel is made.
 *
 * Every operation in both directions, over IPv4 and IPv6: SEND/RECV, WRITE
 * into a window exposed for the one transfer, READ from one, and WRITE into
 * a standing window at odd offsets ("put"), at sizes from 1 byte to 64 MiB
 * across page and chunk boundaries, every byte checked on the side that
 * receives it (and the bytes around a put untouched). Each test then holds
 * each host's device counters to what that host sent and received: its
 * bytes_tx and bytes_rx grew by exactly the payload bytes of the test.
 */
#define ORDMA_GUEST_TEST
#include <arpa/inet.h>
#include <sys/mman.h>
#include <libordma.h>
#include "ordma_test.h"
#include "kselftest_harness.h"
#include "twohost.h"

#define WIN_SLACK	8192	/* bytes of a standing window past its largest put */

static const size_t sizes[] = {
	1, 4095, 4096, 4097, 65535, 65536, 65537, (1 << 20) + 5,
	16 << 20, 64 << 20,
};

#define MAX_SIZE	(64UL << 20)

FIXTURE(link) {
	struct ordma *o;
	uint32_t chan;
	int host;
	unsigned char *src;
	unsigned char *dst;
	uint64_t tx, rx;	/* payload bytes this host sent, received */
	uint64_t tx0, rx0;	/* the device's counters before */
};

FIXTURE_VARIANT(link) {
	int family;
	const char *addr[2];
};

FIXTURE_VARIANT_ADD(link, ipv4) {
	.family = AF_INET,
	.addr = { "192.0.2.1", "192.0.2.2" },
};

FIXTURE_VARIANT_ADD(link, ipv6) {
	.family = AF_INET6,
	.addr = { "2001:db8::1", "2001:db8::2" },
};

/* The byte @i of the pattern of transfer @seed. */
static inline unsigned char pat(uint64_t seed, size_t i)
{
	return (unsigned char)(seed * 131 + i * 7 + (i >> 9) * 13);
}

static void fill(unsigned char *buf, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = pat(seed, i);
}

/* The first byte of @buf that is not the pattern, or @len. */
static size_t check(const unsigned char *buf, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != pat(seed, i))
			return i;
	return len;
}

static size_t zeros(const unsigned char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i])
			return i;
	return len;
}

FIXTURE_SETUP(link)
{
	const char *host = getenv("VMTEST_HOST");

	ORDMA_TEST_FILTER();
	if (!host)
		SKIP(return, "not in a guest of tools/vmtest --hosts 2");
	self->host = atoi(host);
	ASSERT_TRUE(self->host == 1 || self->host == 2);
	self->src = mmap(NULL, MAX_SIZE + WIN_SLACK, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	self->dst = mmap(NULL, MAX_SIZE + WIN_SLACK, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->src);
	ASSERT_NE(MAP_FAILED, self->dst);
	ASSERT_EQ(0, ordma_open(&self->o, 0));

	ASSERT_EQ(0, twohost_chan(self->o, self->host, variant->family,
				  variant->addr[0],
				  twohost_port(_metadata->name, variant->family),
				  _metadata->name, &self->chan));
	/* Both read their counters before either sends. */
	self->tx0 = twohost_counter("bytes_tx");
	self->rx0 = twohost_counter("bytes_rx");
	ASSERT_LE(0, (int64_t)self->tx0);
	ASSERT_EQ(0, twohost_barrier(_metadata->name, "counted"));
}

FIXTURE_TEARDOWN(link)
{
	if (self->o)
		ordma_close(self->o);
	if (self->src && self->src != MAP_FAILED)
		munmap(self->src, MAX_SIZE + WIN_SLACK);
	if (self->dst && self->dst != MAP_FAILED)
		munmap(self->dst, MAX_SIZE + WIN_SLACK);
}

/* A small control message: a token, an offset, "done". */
static int ctl_send(FIXTURE_DATA(link) *self, uint64_t v)
{
	int64_t n = ordma_send(self->o, self->chan, &v, sizeof(v));

	if (n != sizeof(v))
		return -1;
	self->tx += sizeof(v);
	return 0;
}

static int ctl_recv(FIXTURE_DATA(link) *self, uint64_t *v)
{
	int64_t n = ordma_recv(self->o, self->chan, v, sizeof(*v));

	if (n != sizeof(*v))
		return -1;
	self->rx += sizeof(*v);
	return 0;
}

/* Both hosts: each device counted exactly this test's payload bytes. */
static void counters_exact(struct __test_metadata *_metadata,
			   FIXTURE_DATA(link) *self)
{
	EXPECT_EQ((int64_t)self->tx, twohost_counter("bytes_tx") - (int64_t)self->tx0);
	EXPECT_EQ((int64_t)self->rx, twohost_counter("bytes_rx") - (int64_t)self->rx0);
}

static uint64_t seed_of(int sender, size_t len, int op)
{
	return (uint64_t)sender << 40 | (uint64_t)len << 4 | op;
}

TEST_F_TIMEOUT(link, send_recv_both_ways, 300)
{
	size_t i, len, bad;
	int from;
	int64_t n;

	for (from = 1; from <= 2; from++) {
		for (i = 0; i < ARRAY_SIZE(sizes); i++) {
			len = sizes[i];
			if (self->host == from) {
				fill(self->src, len, seed_of(from, len, 1));
				n = ordma_send(self->o, self->chan, self->src, len);
				ASSERT_EQ((int64_t)len, n);
				self->tx += len;
				continue;
			}
			n = ordma_recv(self->o, self->chan, self->dst, len);
			ASSERT_EQ((int64_t)len, n);
			self->rx += len;
			bad = check(self->dst, len, seed_of(from, len, 1));
			ASSERT_EQ(len, bad) TH_LOG("send of %zu from host %d: byte %zu wrong",
						   len, from, bad);
		}
	}
	counters_exact(_metadata, self);
}

/*
 * One WRITE (@read false) or READ of @len bytes between the owner of a
 * window exposed for it and the other host.
 */
static void one_sided(struct __test_metadata *_metadata,
		      FIXTURE_DATA(link) *self, int owner, size_t len, bool read)
{
	uint64_t seed = seed_of(owner, len, read ? 2 : 3), token, done;
	size_t bad;
	int64_t n;

	if (self->host == owner) {
		if (read)
			fill(self->dst, len, seed);
		else
			memset(self->dst, 0, len);
		ASSERT_EQ(0, ordma_expose(self->o, self->dst, len,
					  read ? ORDMA_ACCESS_REMOTE_READ :
						 ORDMA_ACCESS_REMOTE_WRITE,
					  &token));
		ASSERT_EQ(0, ctl_send(self, token));
		ASSERT_EQ(0, ctl_recv(self, &done));
		ASSERT_EQ(len, done);
		ASSERT_EQ(0, ordma_unexpose(self->o, token));
		if (read) {
			self->tx += len;
			return;
		}
		self->rx += len;
		bad = check(self->dst, len, seed);
		ASSERT_EQ(len, bad) TH_LOG("write of %zu into host %d: byte %zu wrong",
					   len, owner, bad);
		return;
	}
	ASSERT_EQ(0, ctl_recv(self, &token));
	if (read) {
		memset(self->src, 0, len);
		n = ordma_read(self->o, self->chan, self->src, len, token, 0);
		ASSERT_EQ((int64_t)len, n);
		self->rx += len;
		bad = check(self->src, len, seed);
		ASSERT_EQ(len, bad) TH_LOG("read of %zu from host %d: byte %zu wrong",
					   len, owner, bad);
	} else {
		fill(self->src, len, seed);
		n = ordma_write(self->o, self->chan, self->src, len, token, 0);
		ASSERT_EQ((int64_t)len, n);
		self->tx += len;
	}
	ASSERT_EQ(0, ctl_send(self, len));
}

TEST_F_TIMEOUT(link, write_both_ways, 300)
{
	size_t i;
	int owner;

	for (owner = 2; owner >= 1; owner--)
		for (i = 0; i < ARRAY_SIZE(sizes); i++)
			one_sided(_metadata, self, owner, sizes[i], false);
	counters_exact(_metadata, self);
}

TEST_F_TIMEOUT(link, read_both_ways, 300)
{
	size_t i;
	int owner;

	for (owner = 1; owner <= 2; owner++)
		for (i = 0; i < ARRAY_SIZE(sizes); i++)
			one_sided(_metadata, self, owner, sizes[i], true);
	counters_exact(_metadata, self);
}

/*
 * Puts: the owner exposes one window for the whole test and the other host
 * writes every size into it at an odd offset, one at a time; the owner
 * checks the bytes put and that those around them stayed 0, zeroes them
 * again and lets the next one come.
 */
TEST_F_TIMEOUT(link, put_both_ways, 300)
{
	size_t win = MAX_SIZE + WIN_SLACK, i, len, bad;
	uint64_t token, off, got;
	int owner;
	int64_t n;

	for (owner = 1; owner <= 2; owner++) {
		if (self->host == owner) {
			memset(self->dst, 0, win);
			ASSERT_EQ(0, ordma_expose(self->o, self->dst, win,
						  ORDMA_ACCESS_REMOTE_WRITE,
						  &token));
			ASSERT_EQ(0, ctl_send(self, token));
		} else {
			ASSERT_EQ(0, ctl_recv(self, &token));
		}
		for (i = 0; i < ARRAY_SIZE(sizes); i++) {
			len = sizes[i];
			off = (len * 7 + 1) % (WIN_SLACK - 1);
			if (self->host != owner) {
				fill(self->src, len, seed_of(owner, len, 4));
				n = ordma_write(self->o, self->chan, self->src,
						len, token, off);
				ASSERT_EQ((int64_t)len, n);
				self->tx += len;
				ASSERT_EQ(0, ctl_send(self, off));
				/* The next put once the owner has checked. */
				ASSERT_EQ(0, ctl_recv(self, &got));
				continue;
			}
			ASSERT_EQ(0, ctl_recv(self, &got));
			ASSERT_EQ(off, got);
			self->rx += len;
			bad = check(self->dst + off, len, seed_of(owner, len, 4));
			ASSERT_EQ(len, bad) TH_LOG("put of %zu at %llu into host %d: byte %zu wrong",
						   len, (unsigned long long)off,
						   owner, bad);
			ASSERT_EQ(off, zeros(self->dst, off));
			ASSERT_EQ(win - off - len,
				  zeros(self->dst + off + len, win - off - len));
			memset(self->dst + off, 0, len);
			ASSERT_EQ(0, ctl_send(self, 0));
		}
		if (self->host == owner)
			ASSERT_EQ(0, ordma_unexpose(self->o, token));
	}
	counters_exact(_metadata, self);
}

TEST_HARNESS_MAIN
