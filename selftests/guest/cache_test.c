// SPDX-License-Identifier: GPL-2.0
/*
 * The registration cache (issue 24). Sources of zero-copy sends stay pinned
 * per channel after the send completed, and a later send from the same
 * range takes them again; whatever changes which pages back a range
 * (munmap, mmap over it, mremap, madvise, fork and copy-on-write, shmdt and
 * shmat, truncation, a huge page split) must drop them first.
 *
 * The fixture reuse puts new pages, with new bytes, at an address a
 * previous send came from, again and again, in mode zerocopy so every send
 * goes through the cache: the peer receives each message into a fresh
 * buffer and every byte must be what the sender's buffer held when it was
 * submitted. Those tests need no cache to pass; without one they check the
 * same paths through plain registrations.
 *
 * The fixture cache reads the cache's counters and knob (cache_max_bytes,
 * cache_hits, cache_misses, cache_invalidations, cache_pages): hits happen,
 * munmap invalidates, the bound of cache_max_bytes and of RLIMIT_MEMLOCK
 * hold, and a process that dies leaves nothing pinned. It skips on a module
 * without cache_max_bytes.
 */
#define ORDMA_GUEST_TEST
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/falloc.h>
#include "ordma_test.h"
#include "ordma_chan.h"
#include "kselftest_harness.h"

#define PORT_BASE	19500
#define PAGE		4096UL

/*
 * Rounds of the address-reuse loops: 10^4 with ORDMA_TEST_FULL=1, 500
 * under the debug kernel (ORDMA_TEST_SMALL), 2000 otherwise. A round of a
 * buffer of 60-128 KiB takes 15-40 ms under TCG: 10^4 of each loop would
 * add 7 minutes or more to make check, whose guest timeout is 25.
 */
static int scaled(int full, int dflt, int small)
{
	if (getenv("ORDMA_TEST_FULL"))
		return full;
	return getenv("ORDMA_TEST_SMALL") ? small : dflt;
}

#define ROUNDS		scaled(10000, 2000, 500)
/* The other reuse tests: each round sends several messages. */
#define FEW		scaled(20, 20, 5)

/* -- knobs and counters of CHAN_IBDEV -------------------------------------- */

static int knob_read(const char *attr, char *buf, size_t len)
{
	char path[256];
	FILE *f;
	int ret = 0;

	buf[0] = 0;
	ordma_sysfs(path, sizeof(path), attr);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		ret = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return ret;
}

static int knob_write(const char *attr, const char *val)
{
	char path[256];
	FILE *f;
	int ret = 0;

	ordma_sysfs(path, sizeof(path), attr);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	if (fputs(val, f) < 0)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

/* A counter's value; 0 when the file is not there, ~0 when unreadable. */
static unsigned long long counter(const char *attr)
{
	unsigned long long v;
	int ret = sysfs_get(attr, &v);

	if (ret == -ENOENT)
		return 0;
	return ret ? ~0ULL : v;
}

static int have_cache(void)
{
	char path[256];

	ordma_sysfs(path, sizeof(path), "cache_max_bytes");
	return !access(path, F_OK);
}

/*
 * Everything given back: no page pinned for a transfer, no MR, no page
 * held by a cache (no such file without a cache). Unpinning runs after
 * completion and after close: poll for up to @timeout_ms.
 */
static int wait_released(int timeout_ms)
{
	long long end = chan_now_ms() + timeout_ms;
	unsigned long long pinned, mrs, cached;

	for (;;) {
		pinned = counter("pages_pinned");
		mrs = counter("mrs_live");
		cached = counter("cache_pages");
		if (!pinned && !mrs && !cached)
			return 0;
		if (chan_now_ms() > end) {
			fprintf(stderr, "# still held: %llu pages pinned, %llu MRs, %llu pages cached\n",
				pinned, mrs, cached);
			return -1;
		}
		chan_sleep_ms(20);
	}
}

/* Until @attr is above @old, for up to @timeout_ms: 0, or -1. */
static int wait_above(const char *attr, unsigned long long old, int timeout_ms)
{
	long long end = chan_now_ms() + timeout_ms;
	unsigned long long v;

	for (;;) {
		v = counter(attr);
		if (v != ~0ULL && v > old)
			return 0;
		if (chan_now_ms() > end) {
			fprintf(stderr, "# %s stayed at %llu\n", attr, v);
			return -1;
		}
		chan_sleep_ms(10);
	}
}

/* No transfer holds a page or an MR any more (the cache may). */
static int wait_idle(int timeout_ms)
{
	long long end = chan_now_ms() + timeout_ms;

	while (counter("pages_pinned") || counter("mrs_live")) {
		if (chan_now_ms() > end) {
			fprintf(stderr, "# transfers still hold %llu pages, %llu MRs\n",
				counter("pages_pinned"), counter("mrs_live"));
			return -1;
		}
		chan_sleep_ms(10);
	}
	return 0;
}

/* -- the peer: checks every message against what the test says it holds --- */

/*
 * Before each send the test tells the peer, over ctl, what the message
 * must hold; the peer receives it into a buffer mapped for it alone,
 * checks every byte and the guard bytes around it, and answers 'k' (all
 * right) or 'x'. A length of 0 ends the peer with status 0. With W_SEND
 * the peer sends such a message instead, from a buffer mapped for it
 * alone, for the test to receive.
 */
#define W_ZERO		1	/* the message is all zero bytes */
#define W_SEND		2	/* the peer sends it */

struct want {
	__u64 len;
	__u64 seed;
	__u32 flags;
	__u32 aborted_ok;	/* failed sends before it: aborted messages */
};

static int all_zero(const char *what, const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (p[i]) {
			fprintf(stderr, "# %s: byte %zu of %zu is 0x%02x, expected 0\n",
				what, i, len, p[i]);
			return -1;
		}
	}
	return 0;
}

static int peer_verify(struct chan_pair *p, void *arg)
{
	unsigned char *buf;
	unsigned long n;
	struct want w;
	long long res;
	int ok, ret;

	for (n = 0; ; n++) {
		ret = ctl_recv(p->ctl, &w, sizeof(w), -1);
		/* The test process is gone (a test that failed, or exited). */
		if (ret == -EPIPE)
			return 6;
		PEER_EQ(0, ret);
		if (!w.len)
			return 0;
		buf = chan_buf(w.len, 0);
		PEER_CHECK(buf);
		if (w.flags & W_SEND) {
			chan_fill(buf, w.len, w.seed);
			res = do_send(p->fd, p->chan[0], buf, w.len);
			chan_buf_free(buf, w.len, 0);
			PEER_EQ((long long)w.len, res);
			continue;
		}
		do
			res = do_recv(p->fd, p->chan[0], buf, w.len);
		while (res == -EREMOTEIO && w.aborted_ok-- > 0);
		ok = res == (long long)w.len;
		if (!ok)
			fprintf(stderr, "# peer: message %lu: %lld, expected %llu bytes\n",
				n, res, (unsigned long long)w.len);
		else if (w.flags & W_ZERO)
			ok = !all_zero("peer received", buf, w.len);
		else
			ok = !chan_check("peer received", buf, w.len, w.seed);
		if (ok)
			ok = !chan_guard_ok("peer buffer", buf, w.len, 0);
		chan_buf_free(buf, w.len, 0);
		PEER_EQ(0, ctl_signal(p->ctl, ok ? 'k' : 'x'));
		if (!ok) {
			fprintf(stderr, "# peer: message %lu was wrong\n", n);
			return 1;
		}
	}
}

/* -- the sending end --------------------------------------------------------- */

struct link {
	struct chan_pair p;
	unsigned int aborted;	/* sends that failed since the last message */
	unsigned long sent;	/* messages the peer found right */
};

static void link_init(struct link *l)
{
	chan_pair_init(&l->p);
	l->aborted = 0;
	l->sent = 0;
}

static int link_up(struct link *l)
{
	return chan_pair(&l->p, AF_INET, chan_port(PORT_BASE), 1, peer_verify,
			 NULL);
}

/* The stream of message @n of part @tag of a test. */
static uint64_t seed_of(unsigned int tag, unsigned long n)
{
	return ((uint64_t)tag << 40) ^ ((uint64_t)n << 4) ^ 0x5eed;
}

/*
 * Send @len bytes at @buf, which hold the stream of @seed (all zero with
 * W_ZERO), and wait for the peer's verdict. 0, or -1 after saying why.
 */
static int link_send(struct link *l, const char *what, const void *buf,
		     size_t len, uint64_t seed, unsigned int flags)
{
	struct want w = {
		.len = len, .seed = seed, .flags = flags,
		.aborted_ok = l->aborted,
	};
	long long res;

	if (ctl_send(l->p.ctl, &w, sizeof(w)))
		return -1;
	res = do_send(l->p.fd, l->p.chan[0], buf, len);
	if (res != (long long)len) {
		fprintf(stderr, "# %s: message %lu, %zu bytes at %p: send %lld\n",
			what, l->sent, len, buf, res);
		return -1;
	}
	l->aborted = 0;
	if (ctl_expect(l->p.ctl, 'k', CHAN_WAIT_MS)) {
		fprintf(stderr, "# %s: message %lu, %zu bytes at %p: the peer got other bytes\n",
			what, l->sent, len, buf);
		return -1;
	}
	l->sent++;
	return 0;
}

/* Fill @len bytes at @buf with the stream of @seed and send them. */
static int link_fill_send(struct link *l, const char *what, void *buf,
			  size_t len, uint64_t seed)
{
	chan_fill(buf, len, seed);
	return link_send(l, what, buf, len, seed, 0);
}

/*
 * A send from memory that is not there (unmapped, past the end of its
 * file) fails with EFAULT: pages a cache still holds for the range must not
 * go out instead. The peer may see an aborted message before the next one.
 */
static int link_send_fault(struct link *l, const char *what, const void *buf,
			   size_t len)
{
	long long res = do_send(l->p.fd, l->p.chan[0], buf, len);

	if (res != -EFAULT) {
		fprintf(stderr, "# %s: send of %zu bytes at %p with no memory there: %lld, expected -EFAULT\n",
			what, len, buf, res);
		return -1;
	}
	l->aborted++;
	return 0;
}

/*
 * Receive @len bytes into @buf, zeroed first, from the peer, which sends
 * the stream of @seed; the RECV is posted before the peer is asked, so
 * that its buffer is a destination the peer may write into. 0, or -1
 * after saying why.
 */
static int link_recv(struct link *l, const char *what, void *buf, size_t len,
		     uint64_t seed)
{
	struct want w = { .len = len, .seed = seed, .flags = W_SEND };
	__u64 cookie = chan_cookie();
	long long res = -1;
	int ret;

	memset(buf, 0, len);
	ret = xsubmit(l->p.fd, ORDMA_OP_RECV, l->p.chan[0], buf, len, cookie,
		      0, 0, 0);
	if (!ret)
		ret = ctl_send(l->p.ctl, &w, sizeof(w));
	if (!ret)
		ret = xreap(l->p.fd, 1, &cookie, &res, CHAN_WAIT_MS);
	if (ret || res != (long long)len) {
		fprintf(stderr, "# %s: message %lu, %zu bytes at %p: receive %d/%lld\n",
			what, l->sent, len, buf, ret, res);
		return -1;
	}
	if (chan_check(what, buf, len, seed))
		return -1;
	l->sent++;
	return 0;
}

/* Tell the peer the test is over and wait for it: its exit status. */
static int link_end(struct link *l)
{
	struct want w = { 0 };

	if (ctl_send(l->p.ctl, &w, sizeof(w)))
		return -1;
	return chan_pair_join(&l->p, 60000);
}

static void *map_anon(void *addr, size_t len, int flags)
{
	return mmap(addr, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
}

/* A memory file of @len bytes, mapped shared; its descriptor in *@fd. */
static void *map_memfd(const char *name, size_t len, int *fd)
{
	*fd = memfd_create(name, MFD_CLOEXEC);
	if (*fd < 0)
		return MAP_FAILED;
	if (ftruncate(*fd, len))
		return MAP_FAILED;
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
}

/* -- reuse: new pages where a send came from --------------------------------- */

FIXTURE(reuse) {
	struct link l;
	char mode[32];
	int shm[2];
};

FIXTURE_SETUP(reuse)
{
	ORDMA_TEST_FILTER();
	link_init(&self->l);
	self->shm[0] = -1;
	self->shm[1] = -1;
	ASSERT_EQ(0, knob_read("mode", self->mode, sizeof(self->mode)));
	ASSERT_EQ(0, knob_write("mode", "zerocopy"));
}

FIXTURE_TEARDOWN(reuse)
{
	int i;

	chan_pair_destroy(&self->l.p);
	for (i = 0; i < 2; i++)
		if (self->shm[i] >= 0)
			shmctl(self->shm[i], IPC_RMID, NULL);
	if (knob_write("mode", self->mode))
		fprintf(stderr, "# could not restore mode %s\n", self->mode);
	EXPECT_EQ(0, wait_released(CHAN_WAIT_MS));
}

/*
 * free() and malloc() of the same size, new contents each round: glibc
 * hands back the same address. Below the mmap threshold the chunk is in
 * the brk heap, and every other round malloc_trim() gives the heap's free
 * pages back, so that round's malloc() gets new pages at the old address;
 * above it every free() is a munmap() and every malloc() an mmap().
 */
#define HEAP_LEN	(60 * KiB + 7)
#define CHUNK_LEN	(128 * KiB + 3)
/*
 * glibc's default, fixed: glibc would raise it to the size of the first
 * chunk freed, and serve the next ones from the heap.
 */
#define MMAP_THRESHOLD	(128 * KiB)

static void malloc_rounds(struct __test_metadata *_metadata, struct link *l,
			  size_t len, unsigned int tag)
{
	uintptr_t prev = 0;
	unsigned char *buf;
	int i, same = 0, trimmed = 0;

	ASSERT_EQ(1, mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD));
	ASSERT_EQ(0, link_up(l));
	for (i = 0; i < ROUNDS; i++) {
		buf = malloc(len);
		ASSERT_NE(NULL, buf);
		same += (uintptr_t)buf == prev;
		prev = (uintptr_t)buf;
		ASSERT_EQ(0, link_fill_send(l, "malloc", buf, len,
					    seed_of(tag, i)));
		free(buf);
		if (i & 1)
			trimmed += malloc_trim(0);
	}
	fprintf(stderr, "# %d of %d rounds got the address of the round before, %d trimmed the heap\n",
		same, ROUNDS - 1, trimmed);
	ASSERT_EQ(0, link_end(l));
}

TEST_F_TIMEOUT(reuse, malloc_heap, 1200)
{
	malloc_rounds(_metadata, &self->l, HEAP_LEN, 1);
}

TEST_F_TIMEOUT(reuse, malloc_mmap, 1200)
{
	malloc_rounds(_metadata, &self->l, CHUNK_LEN, 2);
}

/*
 * mmap() and munmap() with no allocator in between, of 1 to 64 pages, the
 * message from an offset inside the first page: each mapping covers part or
 * all of the ranges earlier ones were sent from.
 */
#define LOOP_PAGES	64
#define LOOP_ROUNDS	(ROUNDS / 4)

TEST_F_TIMEOUT(reuse, mmap_munmap, 1200)
{
	struct link *l = &self->l;
	uintptr_t prev = 0, prev_end = 0, a;
	size_t len, ofs;
	unsigned char *buf;
	int i, overlap = 0;

	ASSERT_EQ(0, link_up(l));
	for (i = 0; i < LOOP_ROUNDS; i++) {
		len = (1 + (i * 7) % LOOP_PAGES) * PAGE;
		ofs = (i * 13) % 512;
		buf = map_anon(NULL, len, 0);
		ASSERT_NE(MAP_FAILED, buf);
		a = (uintptr_t)buf;
		overlap += a < prev_end && a + len > prev;
		prev = a;
		prev_end = a + len;
		ASSERT_EQ(0, link_fill_send(l, "mmap", buf + ofs, len - ofs,
					    seed_of(3, i)));
		ASSERT_EQ(0, munmap(buf, len));
	}
	fprintf(stderr, "# %d of %d mappings overlapped the one before\n",
		overlap, LOOP_ROUNDS - 1);
	ASSERT_EQ(0, link_end(l));
}

/*
 * Other pages at the same address by MAP_FIXED: after munmap() (a send
 * from the hole fails with EFAULT), over the live mapping (a shared memory
 * file's pages) and over its middle pages only. The message starts and
 * ends inside a page.
 */
#define FIX_LEN		(512 * KiB)
#define FIX_OFS		123
#define FIX_MSG		(FIX_LEN - FIX_OFS - 45)
#define FIX_MID		(64 * KiB)
#define FIX_MID_LEN	(128 * KiB)

TEST_F_TIMEOUT(reuse, map_fixed, 600)
{
	struct link *l = &self->l;
	unsigned char *buf, *msg;
	int i, memfd;

	memfd = memfd_create("cache_fixed", MFD_CLOEXEC);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, ftruncate(memfd, FIX_LEN));
	buf = map_anon(NULL, FIX_LEN, 0);
	ASSERT_NE(MAP_FAILED, buf);
	msg = buf + FIX_OFS;
	ASSERT_EQ(0, link_up(l));
	for (i = 0; i < FEW; i++) {
		ASSERT_EQ(0, link_fill_send(l, "anonymous", msg, FIX_MSG,
					    seed_of(10, i)));

		ASSERT_EQ(0, munmap(buf, FIX_LEN));
		if (i < 3)
			ASSERT_EQ(0, link_send_fault(l, "unmapped", msg,
						     FIX_MSG));
		ASSERT_EQ(buf, map_anon(buf, FIX_LEN, MAP_FIXED));
		ASSERT_EQ(0, link_fill_send(l, "mapped again", msg, FIX_MSG,
					    seed_of(11, i)));

		ASSERT_EQ(buf, mmap(buf, FIX_LEN, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_FIXED, memfd, 0));
		ASSERT_EQ(0, link_fill_send(l, "file over it", msg, FIX_MSG,
					    seed_of(12, i)));

		ASSERT_EQ(buf + FIX_MID, map_anon(buf + FIX_MID, FIX_MID_LEN,
						  MAP_FIXED));
		ASSERT_EQ(0, link_fill_send(l, "anonymous middle", msg,
					    FIX_MSG, seed_of(13, i)));

		ASSERT_EQ(buf, map_anon(buf, FIX_LEN, MAP_FIXED));
	}
	ASSERT_EQ(0, link_end(l));
	munmap(buf, FIX_LEN);
	close(memfd);
}

/*
 * mremap(): the pages move to another address and new ones are mapped at
 * the old; the mapping shrinks and grows back in place (new pages in its
 * tail); MREMAP_DONTUNMAP leaves the old range mapped and empty (zeros,
 * then new bytes written there). Both addresses send what they hold.
 */
#define MR_LEN		(1 * MiB)

TEST_F_TIMEOUT(reuse, mremap, 600)
{
	struct link *l = &self->l;
	unsigned char *x, *y, *z;
	int i, dontunmap = 1;

	x = map_anon(NULL, MR_LEN, 0);
	ASSERT_NE(MAP_FAILED, x);
	ASSERT_EQ(0, link_up(l));
	for (i = 0; i < FEW; i++) {
		ASSERT_EQ(0, link_fill_send(l, "before the move", x, MR_LEN,
					    seed_of(20, i)));

		y = mmap(NULL, MR_LEN, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, y);
		ASSERT_EQ(y, mremap(x, MR_LEN, MR_LEN,
				    MREMAP_MAYMOVE | MREMAP_FIXED, y));
		if (i < 3)
			ASSERT_EQ(0, link_send_fault(l, "moved away", x,
						     MR_LEN));
		ASSERT_EQ(x, map_anon(x, MR_LEN, MAP_FIXED));
		chan_fill(x, MR_LEN, seed_of(21, i));
		ASSERT_EQ(0, link_send(l, "moved", y, MR_LEN, seed_of(20, i),
				       0));
		ASSERT_EQ(0, link_send(l, "mapped at the old address", x,
				       MR_LEN, seed_of(21, i), 0));
		ASSERT_EQ(0, munmap(y, MR_LEN));

		ASSERT_EQ(x, mremap(x, MR_LEN, MR_LEN / 2, 0));
		ASSERT_EQ(x, mremap(x, MR_LEN / 2, MR_LEN, 0));
		ASSERT_EQ(0, link_fill_send(l, "shrunk and grown", x, MR_LEN,
					    seed_of(22, i)));

		if (!dontunmap)
			continue;
		z = mremap(x, MR_LEN, MR_LEN,
			   MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL);
		if (z == MAP_FAILED && errno == EINVAL) {
			fprintf(stderr, "# no MREMAP_DONTUNMAP here\n");
			dontunmap = 0;
			continue;
		}
		ASSERT_NE(MAP_FAILED, z);
		ASSERT_EQ(0, link_send(l, "left empty", x, MR_LEN, 0, W_ZERO));
		ASSERT_EQ(0, link_fill_send(l, "left empty, written", x,
					    MR_LEN, seed_of(23, i)));
		ASSERT_EQ(0, link_send(l, "moved, not unmapped", z, MR_LEN,
				       seed_of(22, i), 0));
		ASSERT_EQ(0, munmap(z, MR_LEN));
	}
	ASSERT_EQ(0, link_end(l));
	munmap(x, MR_LEN);
}

/*
 * madvise(MADV_DONTNEED) drops the pages: the range reads zeros (sent as
 * such), then new bytes written land in new pages; the same for one page
 * in the middle; MADV_FREE, then new bytes.
 */
#define MA_LEN		(1 * MiB)
#define MA_OFS		777
#define MA_MSG		(MA_LEN - MA_OFS - 3)

TEST_F_TIMEOUT(reuse, madvise, 600)
{
	struct link *l = &self->l;
	unsigned char *buf, *msg;
	int i, k, lazyfree = 1;

	buf = map_anon(NULL, MA_LEN, 0);
	ASSERT_NE(MAP_FAILED, buf);
	msg = buf + MA_OFS;
	ASSERT_EQ(0, link_up(l));
	for (i = 0; i < FEW; i++) {
		ASSERT_EQ(0, link_fill_send(l, "written", msg, MA_MSG,
					    seed_of(30, i)));
		ASSERT_EQ(0, madvise(buf, MA_LEN, MADV_DONTNEED));
		ASSERT_EQ(0, link_send(l, "dropped", msg, MA_MSG, 0, W_ZERO));
		ASSERT_EQ(0, link_fill_send(l, "dropped, written", msg, MA_MSG,
					    seed_of(31, i)));

		k = 1 + (i * 37) % (MA_LEN / PAGE - 2);
		ASSERT_EQ(0, madvise(buf + k * PAGE, PAGE, MADV_DONTNEED));
		ASSERT_EQ(0, link_fill_send(l, "one page dropped, written",
					    msg, MA_MSG, seed_of(32, i)));

		if (!lazyfree)
			continue;
		if (madvise(buf, MA_LEN, MADV_FREE)) {
			ASSERT_EQ(EINVAL, errno);
			fprintf(stderr, "# no MADV_FREE here\n");
			lazyfree = 0;
			continue;
		}
		ASSERT_EQ(0, link_fill_send(l, "freed lazily, written", msg,
					    MA_MSG, seed_of(33, i)));
	}
	ASSERT_EQ(0, link_end(l));
	munmap(buf, MA_LEN);
}

/*
 * fork() after a send, the child holding on to the pages: the parent's
 * writes land in pages of its own (copy-on-write, or pages fork() copied
 * for the child because they were pinned) and its new bytes go out, while
 * the child's copy keeps the old ones; a child that writes its own copy
 * changes nothing the parent sends.
 */
#define FK_LEN		(1 * MiB + 5)
#define FK_OFS		9

struct holder {
	pid_t pid;
	int ready;	/* the child is set */
	int go;		/* the child may check its copy and exit */
};

/*
 * Fork a child that writes the stream of @scribble into its copy of @buf
 * (unless 0), says it is ready, waits, then checks its copy holds
 * @scribble or, without one, @seed: its exit status says.
 */
static int holder_start(struct holder *h, unsigned char *buf, size_t len,
			uint64_t seed, uint64_t scribble)
{
	int r[2], g[2];

	if (pipe2(r, O_CLOEXEC) || pipe2(g, O_CLOEXEC))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	h->pid = fork();
	if (h->pid < 0)
		return -errno;
	if (h->pid == 0) {
		char c = 'r';

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(r[0]);
		close(g[1]);
		if (scribble)
			chan_fill(buf, len, scribble);
		if (write(r[1], &c, 1) != 1 || read(g[0], &c, 1) != 1)
			_exit(2);
		_exit(chan_check("child's copy", buf, len,
				 scribble ? scribble : seed) ? 1 : 0);
	}
	close(r[1]);
	close(g[0]);
	h->ready = r[0];
	h->go = g[1];
	return 0;
}

static int holder_wait_ready(struct holder *h)
{
	char c;

	return read(h->ready, &c, 1) == 1 ? 0 : -1;
}

/* Let the child check and exit: its exit status. */
static int holder_end(struct holder *h)
{
	char c = 'g';
	int st;

	if (write(h->go, &c, 1) != 1)
		return -1;
	close(h->go);
	close(h->ready);
	if (waitpid(h->pid, &st, 0) != h->pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

TEST_F_TIMEOUT(reuse, fork_cow, 600)
{
	struct link *l = &self->l;
	unsigned char *buf;
	struct holder h;
	int i;

	buf = chan_buf(FK_LEN, FK_OFS);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, link_up(l));
	for (i = 0; i < FEW; i++) {
		ASSERT_EQ(0, link_fill_send(l, "before fork", buf, FK_LEN,
					    seed_of(40, i)));

		ASSERT_EQ(0, holder_start(&h, buf, FK_LEN, seed_of(40, i), 0));
		ASSERT_EQ(0, holder_wait_ready(&h));
		ASSERT_EQ(0, link_fill_send(l, "parent wrote", buf, FK_LEN,
					    seed_of(41, i)));
		ASSERT_EQ(0, holder_end(&h));

		ASSERT_EQ(0, holder_start(&h, buf, FK_LEN, 0, seed_of(42, i)));
		ASSERT_EQ(0, holder_wait_ready(&h));
		ASSERT_EQ(0, link_send(l, "child wrote", buf, FK_LEN,
				       seed_of(41, i), 0));
		ASSERT_EQ(0, holder_end(&h));

		ASSERT_EQ(0, link_fill_send(l, "child gone", buf, FK_LEN,
					    seed_of(43, i)));
	}
	ASSERT_EQ(0, link_end(l));
	chan_buf_free(buf, FK_LEN, FK_OFS);
}

/*
 * System V shared memory: segment A attached at an address, sent from,
 * detached (a send from there fails with EFAULT); B attached at the same
 * address sends B's bytes, and A attached there again its own, unchanged.
 */
#define SHM_LEN		(384 * KiB)
#define SHM_OFS		5
#define SHM_MSG		(SHM_LEN - SHM_OFS - 11)

TEST_F_TIMEOUT(reuse, shm_reattach, 600)
{
	struct link *l = &self->l;
	uint64_t held[2];
	unsigned char *at, *a;
	int i, s;

	for (s = 0; s < 2; s++) {
		self->shm[s] = shmget(IPC_PRIVATE, SHM_LEN, IPC_CREAT | 0600);
		ASSERT_LE(0, self->shm[s]);
	}
	at = shmat(self->shm[0], NULL, 0);
	ASSERT_NE((void *)-1, at);
	held[0] = seed_of(50, 0);
	chan_fill(at + SHM_OFS, SHM_MSG, held[0]);
	ASSERT_EQ(0, shmdt(at));
	a = shmat(self->shm[1], at, 0);
	ASSERT_EQ(at, a);
	held[1] = seed_of(51, 0);
	chan_fill(at + SHM_OFS, SHM_MSG, held[1]);
	ASSERT_EQ(0, shmdt(at));

	ASSERT_EQ(0, link_up(l));
	for (i = 0; i < 2 * FEW; i++) {
		s = i & 1;
		a = shmat(self->shm[s], at, 0);
		ASSERT_EQ(at, a);
		ASSERT_EQ(0, link_send(l, "attached", at + SHM_OFS, SHM_MSG,
				       held[s], 0));
		/* Every third round new bytes in the same segment. */
		if (i % 3 == 2) {
			held[s] = seed_of(50 + s, i);
			ASSERT_EQ(0, link_fill_send(l, "rewritten",
						    at + SHM_OFS, SHM_MSG,
						    held[s]));
		}
		ASSERT_EQ(0, shmdt(at));
		if (i < 3)
			ASSERT_EQ(0, link_send_fault(l, "detached",
						     at + SHM_OFS, SHM_MSG));
	}
	ASSERT_EQ(0, link_end(l));
}

/*
 * A shared mapping of a memory file whose pages go away under it: truncated
 * to 0 (a send from the mapping fails with EFAULT: the pages past the end
 * raise SIGBUS) and extended again, a hole punched and refilled through
 * write(), truncated to the middle of a page and extended.
 */
#define TR_LEN		(768 * KiB)
#define TR_HOLE		(64 * KiB)
#define TR_HALF		(TR_LEN / 2 + 100)

TEST_F_TIMEOUT(reuse, file_truncate, 600)
{
	struct link *l = &self->l;
	unsigned char *m, *tmp;
	off_t hole;
	int i, fd;

	tmp = malloc(TR_LEN);
	ASSERT_NE(NULL, tmp);
	m = map_memfd("cache_trunc", TR_LEN, &fd);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, link_up(l));
	for (i = 0; i < FEW; i++) {
		ASSERT_EQ(0, link_fill_send(l, "file", m, TR_LEN,
					    seed_of(60, i)));

		ASSERT_EQ(0, ftruncate(fd, 0));
		if (i < 3)
			ASSERT_EQ(0, link_send_fault(l, "truncated", m,
						     TR_LEN));
		ASSERT_EQ(0, ftruncate(fd, TR_LEN));
		ASSERT_EQ(0, link_fill_send(l, "truncated, extended", m,
					    TR_LEN, seed_of(61, i)));

		hole = (1 + i % 8) * TR_HOLE;
		ASSERT_EQ(0, fallocate(fd, FALLOC_FL_PUNCH_HOLE |
				       FALLOC_FL_KEEP_SIZE, hole, TR_HOLE));
		chan_fill(tmp, TR_LEN, seed_of(62, i));
		ASSERT_EQ(TR_LEN, pwrite(fd, tmp, TR_LEN, 0));
		ASSERT_EQ(0, link_send(l, "hole punched, written", m, TR_LEN,
				       seed_of(62, i), 0));

		ASSERT_EQ(0, ftruncate(fd, TR_HALF));
		ASSERT_EQ(0, ftruncate(fd, TR_LEN));
		ASSERT_EQ(0, link_fill_send(l, "halved, extended", m, TR_LEN,
					    seed_of(63, i)));
	}
	ASSERT_EQ(0, link_end(l));
	munmap(m, TR_LEN);
	close(fd);
	free(tmp);
}

/*
 * A transparent huge page sent whole, then split: one 4 KiB page of it
 * dropped (the PMD splits; a message across that page too), and a
 * subrange made read-only (the VMA splits) and writable again. Each round
 * maps a fresh huge page (where the kernel gives one), most often at the
 * address of the round before.
 */
#define HP_LEN		(2 * MiB)

/* AnonHugePages of the mapping holding @addr, KiB; -1 if not found. */
static long anon_huge_kb(const void *addr)
{
	unsigned long lo, hi, a = (uintptr_t)addr;
	char line[256];
	long kb = -1;
	int in = 0;
	FILE *f;

	f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

TEST_F_TIMEOUT(reuse, thp_split, 600)
{
	struct link *l = &self->l;
	unsigned char *raw, *hp;
	int i, k, huge = 0;
	size_t across;

	if (access("/sys/kernel/mm/transparent_hugepage", F_OK))
		SKIP(return, "this kernel has no transparent huge pages (CONFIG_TRANSPARENT_HUGEPAGE)");
	ASSERT_EQ(0, link_up(l));
	for (i = 0; i < FEW; i++) {
		raw = map_anon(NULL, 2 * HP_LEN, 0);
		ASSERT_NE(MAP_FAILED, raw);
		hp = (unsigned char *)(((uintptr_t)raw + HP_LEN - 1) &
				       ~(HP_LEN - 1));
		ASSERT_EQ(0, madvise(hp, HP_LEN, MADV_HUGEPAGE));
		chan_fill(hp, HP_LEN, seed_of(70, i));
		huge += anon_huge_kb(hp) >= (long)(HP_LEN / KiB);
		ASSERT_EQ(0, link_send(l, "huge page", hp, HP_LEN,
				       seed_of(70, i), 0));

		k = 1 + (i * 97) % (HP_LEN / PAGE - 2);
		ASSERT_EQ(0, madvise(hp + k * PAGE, PAGE, MADV_DONTNEED));
		ASSERT_EQ(0, link_fill_send(l, "split by a dropped page", hp,
					    HP_LEN, seed_of(71, i)));
		across = k * PAGE - 104;
		ASSERT_EQ(0, link_fill_send(l, "across the dropped page",
					    hp + across, PAGE + 208,
					    seed_of(72, i)));

		chan_fill(hp, HP_LEN, seed_of(73, i));
		ASSERT_EQ(0, mprotect(hp + HP_LEN / 4, 2 * PAGE, PROT_READ));
		ASSERT_EQ(0, link_send(l, "split by mprotect", hp, HP_LEN,
				       seed_of(73, i), 0));
		ASSERT_EQ(0, mprotect(hp + HP_LEN / 4, 2 * PAGE,
				      PROT_READ | PROT_WRITE));
		ASSERT_EQ(0, link_fill_send(l, "writable again", hp, HP_LEN,
					    seed_of(74, i)));
		ASSERT_EQ(0, munmap(raw, 2 * HP_LEN));
	}
	fprintf(stderr, "# %d of %d rounds sent from a huge page\n", huge,
		FEW);
	ASSERT_EQ(0, link_end(l));
}

/*
 * Receives into one buffer. The pin cache keeps a destination's pages
 * pinned for writing between receives (only the registration is new each
 * time), and must let go of them when other pages come to back the buffer,
 * or the bytes would land in pages the process no longer maps. Round by
 * round: the same pages again (a hit), new ones mapped over them
 * (MAP_FIXED), dropped ones (MADV_DONTNEED), and a forked child that keeps
 * its copy of the buffer as it was (checked when it exits). The peer sends
 * from a buffer mapped for each message: every hit is a destination's.
 */
#define RV_LEN		(256 * KiB + 3)
#define RV_MAP		(256 * KiB + PAGE)

TEST_F_TIMEOUT(reuse, recv_into_new_pages, 600)
{
	struct link *l = &self->l;
	unsigned long long hits, inv;
	unsigned char *buf;
	struct holder h;
	int i;

	buf = map_anon(NULL, RV_MAP, 0);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, link_up(l));
	hits = counter("cache_hits");
	inv = counter("cache_invalidations");
	for (i = 0; i < FEW; i++) {
		ASSERT_EQ(0, link_recv(l, "first", buf, RV_LEN,
				       seed_of(100, i)));
		ASSERT_EQ(0, link_recv(l, "same pages", buf, RV_LEN,
				       seed_of(101, i)));
		ASSERT_EQ(buf, map_anon(buf, RV_MAP, MAP_FIXED));
		ASSERT_EQ(0, link_recv(l, "mapped again", buf, RV_LEN,
				       seed_of(102, i)));
		ASSERT_EQ(0, madvise(buf, RV_MAP, MADV_DONTNEED));
		ASSERT_EQ(0, link_recv(l, "dropped", buf, RV_LEN,
				       seed_of(103, i)));
		ASSERT_EQ(0, holder_start(&h, buf, RV_LEN, seed_of(103, i), 0));
		ASSERT_EQ(0, holder_wait_ready(&h));
		ASSERT_EQ(0, link_recv(l, "child holds a copy", buf, RV_LEN,
				       seed_of(104, i)));
		ASSERT_EQ(0, holder_end(&h));
	}
	TH_LOG("%llu cache hits, %llu invalidations",
	       counter("cache_hits") - hits,
	       counter("cache_invalidations") - inv);
	/* Destinations were cached, and the changes dropped them. */
	ASSERT_LT(hits, counter("cache_hits"));
	ASSERT_LT(inv, counter("cache_invalidations"));
	ASSERT_EQ(0, link_end(l));
	munmap(buf, RV_MAP);
}

/*
 * One buffer sent from, received into, and sent from again on the same
 * channel: the source's read-only pinning must give way to one for
 * writing, and a source may use pages pinned for writing. Then the same
 * with a buffer of a memory file mapped shared (pages of the page cache,
 * marked dirty after each receive), read back through the file.
 */
TEST_F_TIMEOUT(reuse, recv_into_a_source, 600)
{
	struct link *l = &self->l;
	unsigned char *buf, *shared, *back;
	int i, fd;

	buf = map_anon(NULL, RV_MAP, 0);
	ASSERT_NE(MAP_FAILED, buf);
	back = malloc(RV_LEN);
	ASSERT_NE(NULL, back);
	shared = map_memfd("cache_recv", RV_MAP, &fd);
	ASSERT_NE(MAP_FAILED, shared);
	ASSERT_EQ(0, link_up(l));
	for (i = 0; i < FEW; i++) {
		ASSERT_EQ(0, link_fill_send(l, "sent from", buf, RV_LEN,
					    seed_of(110, i)));
		ASSERT_EQ(0, link_recv(l, "then received into", buf, RV_LEN,
				       seed_of(111, i)));
		ASSERT_EQ(0, link_send(l, "then sent from again", buf, RV_LEN,
				       seed_of(111, i), 0));

		ASSERT_EQ(0, link_fill_send(l, "shared, sent from", shared,
					    RV_LEN, seed_of(112, i)));
		ASSERT_EQ(0, link_recv(l, "shared, received into", shared,
				       RV_LEN, seed_of(113, i)));
		ASSERT_EQ((ssize_t)RV_LEN, pread(fd, back, RV_LEN, 0));
		ASSERT_EQ(0, chan_check("read back from the file", back,
					RV_LEN, seed_of(113, i)));
	}
	ASSERT_EQ(0, link_end(l));
	munmap(shared, RV_MAP);
	close(fd);
	free(back);
	munmap(buf, RV_MAP);
}

/* -- cache: its counters and bounds ------------------------------------------ */

#define CACHE_DEFAULT	(64ULL * MiB)

FIXTURE(cache) {
	struct link l;
	char mode[32];
	char max_bytes[32];
};

FIXTURE_SETUP(cache)
{
	ORDMA_TEST_FILTER();
	if (!have_cache())
		SKIP(_exit(255), "no /sys/class/ordma/%s/cache_max_bytes: this ordma.ko has no registration cache",
		     CHAN_IBDEV);
	link_init(&self->l);
	ASSERT_EQ(0, knob_read("mode", self->mode, sizeof(self->mode)));
	ASSERT_EQ(0, knob_read("cache_max_bytes", self->max_bytes,
			       sizeof(self->max_bytes)));
	ASSERT_EQ(0, knob_write("mode", "zerocopy"));
}

FIXTURE_TEARDOWN(cache)
{
	chan_pair_destroy(&self->l.p);
	if (knob_write("cache_max_bytes", self->max_bytes))
		fprintf(stderr, "# could not restore cache_max_bytes %s\n",
			self->max_bytes);
	if (knob_write("mode", self->mode))
		fprintf(stderr, "# could not restore mode %s\n", self->mode);
	EXPECT_EQ(0, wait_released(CHAN_WAIT_MS));
}

/* The knob: 64 MiB until changed, reads back what was written. */
TEST_F(cache, knob)
{
	unsigned long long v;

	ASSERT_EQ(CACHE_DEFAULT, strtoull(self->max_bytes, NULL, 10));
	ASSERT_EQ(0, sysfs_set("cache_max_bytes", 1 * MiB));
	ASSERT_EQ(0, sysfs_get("cache_max_bytes", &v));
	ASSERT_EQ((unsigned long long)(1 * MiB), v);
	ASSERT_EQ(0, sysfs_set("cache_max_bytes", 0));
	ASSERT_EQ(0, sysfs_get("cache_max_bytes", &v));
	ASSERT_EQ(0ULL, v);
}

/*
 * The first send from a buffer misses; once it completed its pages are the
 * cache's (cache_pages), not a transfer's (pages_pinned); the same buffer
 * sent again hits, and so does it with new bytes in the same pages. munmap
 * invalidates, and the pages go back.
 */
#define HIT_LEN		(1 * MiB)

TEST_F_TIMEOUT(cache, hits, 120)
{
	struct link *l = &self->l;
	unsigned long long misses, hits, inv;
	unsigned char *buf;

	buf = map_anon(NULL, HIT_LEN, 0);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, link_up(l));
	misses = counter("cache_misses");
	ASSERT_EQ(0, link_fill_send(l, "first", buf, HIT_LEN, seed_of(80, 0)));
	ASSERT_LT(misses, counter("cache_misses"));
	ASSERT_EQ(0, wait_idle(CHAN_WAIT_MS));
	ASSERT_LE(HIT_LEN / PAGE, counter("cache_pages"));

	hits = counter("cache_hits");
	ASSERT_EQ(0, link_send(l, "again", buf, HIT_LEN, seed_of(80, 0), 0));
	ASSERT_LT(hits, counter("cache_hits"));

	hits = counter("cache_hits");
	ASSERT_EQ(0, link_fill_send(l, "new bytes", buf, HIT_LEN,
				    seed_of(80, 1)));
	ASSERT_LT(hits, counter("cache_hits"));
	ASSERT_EQ(0, wait_idle(CHAN_WAIT_MS));

	inv = counter("cache_invalidations");
	ASSERT_EQ(0, munmap(buf, HIT_LEN));
	ASSERT_EQ(0, wait_above("cache_invalidations", inv, CHAN_WAIT_MS));
	ASSERT_EQ(0, wait_released(CHAN_WAIT_MS));
	ASSERT_EQ(0, link_end(l));
}

/*
 * cache_max_bytes 0: nothing is kept (every range is released once its
 * transfer ends), nothing hits, the bytes are right.
 */
TEST_F_TIMEOUT(cache, disabled, 120)
{
	struct link *l = &self->l;
	unsigned long long hits;
	unsigned char *buf;
	int i;

	ASSERT_EQ(0, sysfs_set("cache_max_bytes", 0));
	buf = map_anon(NULL, HIT_LEN, 0);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, link_up(l));
	hits = counter("cache_hits");
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, link_fill_send(l, "uncached", buf, HIT_LEN,
					    seed_of(81, i / 2)));
		/*
		 * A range nobody keeps is released by the cache's work item,
		 * after the transfer let go of it (pages_pinned): wait for
		 * that; a range kept would stay.
		 */
		ASSERT_EQ(0, wait_released(CHAN_WAIT_MS));
	}
	ASSERT_EQ(hits, counter("cache_hits"));
	ASSERT_EQ(0, link_end(l));
	munmap(buf, HIT_LEN);
}

/*
 * Many distinct buffers, each sent from (or received into) twice round:
 * what the caches hold, sampled all along and after every transfer, stays
 * within the bound of this process's file, plus what the peer's file
 * caches: the buffer it receives into or sends from, and the one before
 * while its release is under way (each is mapped for one message).
 */
#define BD_N		16
#define BD_LEN		(512 * KiB)

struct cache_watch {
	volatile int stop;
	unsigned long long max;		/* cache_pages */
	unsigned long long max_sum;	/* cache_pages + pages_pinned */
};

static void cache_watch_sample(struct cache_watch *w)
{
	unsigned long long c = counter("cache_pages");
	unsigned long long p = counter("pages_pinned");

	if (c == ~0ULL || p == ~0ULL)
		return;
	if (c > w->max)
		w->max = c;
	if (c + p > w->max_sum)
		w->max_sum = c + p;
}

static void *cache_watch_run(void *arg)
{
	struct cache_watch *w = arg;

	while (!w->stop) {
		cache_watch_sample(w);
		usleep(200);
	}
	return NULL;
}

static void many_buffers(struct __test_metadata *_metadata, struct link *l,
			 struct cache_watch *w, bool recv)
{
	unsigned char *buf[BD_N];
	pthread_t t;
	int i, r;

	for (i = 0; i < BD_N; i++) {
		buf[i] = map_anon(NULL, BD_LEN, 0);
		ASSERT_NE(MAP_FAILED, buf[i]);
	}
	ASSERT_EQ(0, link_up(l));
	ASSERT_EQ(0, pthread_create(&t, NULL, cache_watch_run, w));
	for (r = 0; r < 2; r++) {
		for (i = 0; i < BD_N; i++) {
			if (recv) {
				ASSERT_EQ(0, link_recv(l, "one of many",
						       buf[i], BD_LEN,
						       seed_of(92 + r, i)));
			} else {
				ASSERT_EQ(0, link_fill_send(l, "one of many",
							    buf[i], BD_LEN,
							    seed_of(90 + r,
								    i)));
			}
			cache_watch_sample(w);
		}
	}
	w->stop = 1;
	pthread_join(t, NULL);
	ASSERT_EQ(0, link_end(l));
	for (i = 0; i < BD_N; i++)
		munmap(buf[i], BD_LEN);
}

TEST_F_TIMEOUT(cache, bound, 300)
{
	struct cache_watch w = { 0 };

	ASSERT_EQ(0, sysfs_set("cache_max_bytes", 1 * MiB));
	many_buffers(_metadata, &self->l, &w, false);
	TH_LOG("at most %llu pages cached (with pinned: %llu), bound %llu, the peer's %llu",
	       w.max, w.max_sum, 1 * MiB / PAGE, 2 * BD_LEN / PAGE);
	ASSERT_GE(1 * MiB / PAGE + 2 * BD_LEN / PAGE, w.max);
	/* It did cache: the bound was what held it. */
	ASSERT_LT(0ULL, w.max);
}

/* Drop CAP_IPC_LOCK, so RLIMIT_MEMLOCK applies to this process. */
static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	unsigned int bit = 1U << (CAP_IPC_LOCK % 32);

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[CAP_IPC_LOCK / 32].effective &= ~bit;
	data[CAP_IPC_LOCK / 32].permitted &= ~bit;
	data[CAP_IPC_LOCK / 32].inheritable &= ~bit;
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

/*
 * RLIMIT_MEMLOCK of 2 MiB without CAP_IPC_LOCK (the harness runs each
 * test in a process of its own, the peer is forked from it), the cache's
 * own bound left at 64 MiB: the pages cached never pass the limit.
 */
#define ML_LIMIT	(2 * MiB)

TEST_F_TIMEOUT(cache, memlock_bound, 300)
{
	struct rlimit rl = { ML_LIMIT, ML_LIMIT };
	struct cache_watch w = { 0 };

	ASSERT_EQ(0, drop_ipc_lock());
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	many_buffers(_metadata, &self->l, &w, false);
	TH_LOG("at most %llu pages cached (with pinned: %llu), limit %llu",
	       w.max, w.max_sum, ML_LIMIT / PAGE);
	ASSERT_GE(ML_LIMIT / PAGE, w.max);
}

/*
 * The same limit, receiving into the many buffers: destinations are cached
 * too, pinned for writing, and charged the same way; every byte lands
 * where it should, and the pages cached and pinned never pass the limit
 * (the peer, of the same user, counts against it too).
 */
TEST_F_TIMEOUT(cache, memlock_bound_receiving, 300)
{
	struct rlimit rl = { ML_LIMIT, ML_LIMIT };
	struct cache_watch w = { 0 };
	unsigned long long hits = counter("cache_hits");

	ASSERT_EQ(0, drop_ipc_lock());
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	many_buffers(_metadata, &self->l, &w, true);
	TH_LOG("at most %llu pages cached (with pinned: %llu), limit %llu, %llu hits",
	       w.max, w.max_sum, ML_LIMIT / PAGE,
	       counter("cache_hits") - hits);
	ASSERT_GE(ML_LIMIT / PAGE, w.max);
	ASSERT_LT(0ULL, w.max);
}

/*
 * A process with a channel sends from a few buffers (they stay cached),
 * reports cache_pages, and exits without closing anything, or is killed
 * with sends under way: once it is gone nothing stays pinned, registered or
 * cached.
 */
#define EX_N		4
#define EX_LEN		(1 * MiB)
#define EX_BIG		(8 * MiB)

static int exit_child(int report, int killed)
{
	unsigned long long cached;
	struct ordma_chan_info ci;
	unsigned char *buf;
	struct link l;
	long long end;
	int i;

	link_init(&l);
	PEER_EQ(0, link_up(&l));
	for (i = 0; i < EX_N; i++) {
		buf = map_anon(NULL, EX_LEN, 0);
		PEER_CHECK(buf != MAP_FAILED);
		PEER_EQ(0, link_fill_send(&l, "before exit", buf, EX_LEN,
					  seed_of(100, i)));
	}
	PEER_EQ(0, wait_idle(CHAN_WAIT_MS));
	cached = counter("cache_pages");
	PEER_EQ(sizeof(cached), write(report, &cached, sizeof(cached)));
	if (!killed)
		_exit(0);
	/* Sends nobody receives: they pin their sources and wait. */
	for (i = 0; i < 2; i++) {
		buf = map_anon(NULL, EX_BIG, 0);
		PEER_CHECK(buf != MAP_FAILED);
		memset(buf, 0x3c + i, EX_BIG);
		PEER_EQ(0, xsubmit(l.p.fd, ORDMA_OP_SEND, l.p.chan[0], buf,
				   EX_BIG, i, 0, 0, 0));
	}
	/* Killed once they pin (the state this is about), however slow. */
	end = chan_now_ms() + CHAN_WAIT_MS;
	do {
		PEER_EQ(0, chan_info(l.p.fd, l.p.chan[0], &ci));
		chan_sleep_ms(5);
	} while (!ci.out_pages_pinned && chan_now_ms() < end);
	raise(SIGKILL);
	return 3;
}

static void exit_releases(struct __test_metadata *_metadata, int killed)
{
	unsigned long long cached = 0;
	int fds[2], st;
	pid_t pid;

	ASSERT_EQ(0, pipe2(fds, O_CLOEXEC));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(fds[0]);
		_exit(exit_child(fds[1], killed));
	}
	close(fds[1]);
	ASSERT_EQ((ssize_t)sizeof(cached),
		  read(fds[0], &cached, sizeof(cached)));
	close(fds[0]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	if (killed) {
		ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			TH_LOG("child status %#x", st);
	} else {
		ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
			TH_LOG("child status %#x", st);
	}
	TH_LOG("%llu pages cached before the child went", cached);
	/* It had cached its buffers: there was something to give back. */
	ASSERT_LE(EX_N * EX_LEN / PAGE, cached);
	ASSERT_EQ(0, wait_released(CHAN_WAIT_MS));
}

TEST_F_TIMEOUT(cache, exit_releases, 120)
{
	exit_releases(_metadata, 0);
}

TEST_F_TIMEOUT(cache, kill_releases, 120)
{
	exit_releases(_metadata, 1);
}

TEST_HARNESS_MAIN
