// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The ring backend: the kernel's SQ and CQ rings of the handle's file,
 * mapped at ORDMA_OFF_SQ / ORDMA_OFF_CQ (see DOC: Rings in <linux/ordma.h>).
 *
 * Memory ordering, the user side of the contract written at the top of the
 * module's ring.c: the kernel's indices (SQ head, CQ tail) are read with
 * acquire loads, ours (SQ tail, CQ head) are published with release stores,
 * and those are the only accesses to the four index words. Entries are
 * written before the SQ tail is released; completions are read after the CQ
 * tail is acquired and before the CQ head is released.
 *
 * The kernel reads the SQ only inside ORDMA_IOC_RING_ENTER
 * (ORDMA_FEAT_SQ_REWIND), so a batch is written at the kernel's head and
 * whatever ENTER did not take is dropped again by moving the tail back: the
 * entries stay queued in the library's own SQ, exactly as with the ioctl
 * backend.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "private.h"

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK	18
#endif

static inline __u32 ring_load_acquire(const __u32 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void ring_store_release(__u32 *p, __u32 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static int ring_enter(struct ordma *o, __u32 to_submit, __u32 min_complete,
		      int timeout_ms, __u32 *submitted)
{
	struct ordma_ring_enter e;

	memset(&e, 0, sizeof(e));
	e.size = sizeof(e);
	e.to_submit = to_submit;
	e.min_complete = min_complete;
	e.timeout_ms = timeout_ms < 0 ? -1 : timeout_ms;
	if (ioctl(o->fd, ORDMA_IOC_RING_ENTER, &e) < 0)
		return -errno;
	if (submitted)
		*submitted = e.out_submitted;
	return 0;
}

/* A child after fork() shares the rings with its parent: hands off. */
static int ring_forked(struct ordma *o)
{
	return !*o->ring.fork_guard;
}

static void ring_unmap(struct ordma_uring *r)
{
	if (r->sq_map)
		munmap(r->sq_map, r->sq_size);
	if (r->cq_map)
		munmap(r->cq_map, r->cq_size);
	if (r->fork_guard)
		munmap((void *)r->fork_guard, sysconf(_SC_PAGESIZE));
	memset(r, 0, sizeof(*r));
}

static void *ring_map(int fd, size_t len, off_t off)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);

	return m == MAP_FAILED ? NULL : m;
}

static int ring_init(struct ordma *o)
{
	struct ordma_uring *r = &o->ring;
	struct ordma_ring_setup s;
	long page = sysconf(_SC_PAGESIZE);
	void *guard;

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.sq_entries = ORDMA_RING_SQ;
	s.cq_entries = ORDMA_RING_CQ;
	if (ioctl(o->fd, ORDMA_IOC_RING_SETUP, &s) < 0)
		return -errno;
	/* The layout this library knows, or the ioctl path. */
	if (s.out_sqe_size != sizeof(struct ordma_ring_sqe) ||
	    s.out_cqe_size != sizeof(struct ordma_cqe) ||
	    !(s.out_features & ORDMA_FEAT_SQ_REWIND) ||
	    !(s.out_features & ORDMA_FEAT_NODROP) ||
	    s.out_sq_entries < ORDMA_RING_SQ ||
	    s.out_cq_entries < ORDMA_RING_CQ)
		return -EOPNOTSUPP;

	guard = mmap(NULL, page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guard == MAP_FAILED)
		return -errno;
	r->fork_guard = guard;
	if (madvise(guard, page, MADV_WIPEONFORK))
		goto err;
	*r->fork_guard = 1;

	r->sq_size = s.out_sq_size;
	r->cq_size = s.out_cq_size;
	r->sq_map = ring_map(o->fd, r->sq_size, ORDMA_OFF_SQ);
	r->cq_map = ring_map(o->fd, r->cq_size, ORDMA_OFF_CQ);
	if (!r->sq_map || !r->cq_map)
		goto err;
	/*
	 * Not inherited by fork(): a child's stray writes cannot reach the
	 * parent's rings (and the fork guard keeps the library off them).
	 */
	if (madvise(r->sq_map, r->sq_size, MADV_DONTFORK) ||
	    madvise(r->cq_map, r->cq_size, MADV_DONTFORK))
		goto err;
	r->sq_head = (__u32 *)((char *)r->sq_map + s.out_sq_off.head);
	r->sq_tail = (__u32 *)((char *)r->sq_map + s.out_sq_off.tail);
	r->sqes = (void *)((char *)r->sq_map + s.out_sq_off.sqes);
	r->cq_head = (__u32 *)((char *)r->cq_map + s.out_cq_off.head);
	r->cq_tail = (__u32 *)((char *)r->cq_map + s.out_cq_off.tail);
	r->cq_flags = (__u32 *)((char *)r->cq_map + s.out_cq_off.flags);
	r->cqes = (void *)((char *)r->cq_map + s.out_cq_off.cqes);
	r->sq_entries = s.out_sq_entries;
	r->sq_mask = s.out_sq_entries - 1;
	r->cq_mask = s.out_cq_entries - 1;
	/* A new file: every index starts at 0. */
	r->sq_tail_local = ring_load_acquire(r->sq_head);
	r->cq_head_local = 0;
	return 0;
err:
	ring_unmap(r);
	/* The file has rings now; the ioctl path cannot reap any more. */
	return -ENOMEM;
}

static int ring_submit(struct ordma *o, const struct ordma_sqe *const *sqes,
		       const __u64 *cookies, unsigned int n, int wait,
		       int *err)
{
	struct ordma_uring *r = &o->ring;
	struct ordma_ring_sqe *k;
	__u32 head = r->sq_tail_local, taken = 0;
	unsigned int i;
	int ret;

	*err = 0;
	if (ring_forked(o))
		return -EPERM;
	if (n > r->sq_entries)
		n = r->sq_entries;
	for (i = 0; i < n; i++) {
		k = &r->sqes[(head + i) & r->sq_mask];
		k->op = sqes[i]->op;
		k->flags = (sqes[i]->flags & ORDMA_SQE_NONBLOCK ?
			    ORDMA_SQE_F_NONBLOCK : 0) |
			   (sqes[i]->flags & ORDMA_SQE_NOTIFY ?
			    ORDMA_SQE_F_NOTIFY : 0);
		k->__reserved = 0;
		k->chan_id = sqes[i]->chan_id;
		k->addr = sqes[i]->addr;
		k->len = sqes[i]->len;
		k->cookie = cookies[i];
		k->token = sqes[i]->token;
		k->offset = sqes[i]->offset;
	}
	/* The entries, then the tail that hands them over. */
	ring_store_release(r->sq_tail, head + n);
	ret = ring_enter(o, n, wait ? 1 : 0, -1, NULL);
	/* The kernel's head says what it took, whatever ENTER returned. */
	taken = ring_load_acquire(r->sq_head) - head;
	if (taken > n)
		taken = n;
	/* What ENTER did not take stays in the library's SQ only. */
	r->sq_tail_local = head + taken;
	ring_store_release(r->sq_tail, r->sq_tail_local);
	return taken ? (int)taken : ret;
}

/* Copy up to @max completions out of the CQ ring. */
static unsigned int ring_copy(struct ordma_uring *r, struct ordma_cqe *cqes,
			      unsigned int max)
{
	__u32 head = r->cq_head_local, tail = ring_load_acquire(r->cq_tail);
	unsigned int n = 0;

	while (head != tail && n < max)
		cqes[n++] = r->cqes[head++ & r->cq_mask];
	if (n) {
		r->cq_head_local = head;
		/* Read the entries before the kernel may reuse their slots. */
		ring_store_release(r->cq_head, head);
	}
	return n;
}

static int ring_reap(struct ordma *o, struct ordma_cqe *cqes,
		     unsigned int max, int timeout_ms)
{
	struct ordma_uring *r = &o->ring;
	int flushed = 0, ret;
	unsigned int n;

	if (ring_forked(o))
		return -EPERM;
	for (;;) {
		n = ring_copy(r, cqes, max);
		if (n)
			return n;
		/* Completions held back in the kernel: have them moved. */
		if (!flushed && (__atomic_load_n(r->cq_flags, __ATOMIC_RELAXED) &
				 ORDMA_CQ_F_OVERFLOW)) {
			flushed = 1;
			ret = ring_enter(o, 0, 0, 0, NULL);
			if (ret)
				return ret;
			continue;
		}
		if (!timeout_ms)
			return -EAGAIN;
		/* Returns once one is in the ring (or held back, then moved). */
		ret = ring_enter(o, 0, 1, timeout_ms, NULL);
		if (ret)
			return ret;
		flushed = 0;
	}
}

static void ring_release(struct ordma *o)
{
	/* A child has no rings (MADV_DONTFORK): its addresses may be reused. */
	if (o->ring.fork_guard && ring_forked(o))
		o->ring.sq_map = o->ring.cq_map = NULL;
	ring_unmap(&o->ring);
}

const struct ordma_backend __ordma_backend_ring = {
	.name = "ring",
	.init = ring_init,
	.submit = ring_submit,
	.reap = ring_reap,
	.release = ring_release,
};
