/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rings of /dev/ordma from user space, written against the uapi header
 * alone (no libordma): set-up, mmap, acquire/release index helpers, pushing
 * entries, ENTER and reaping. Shared by ring_test and tools/ordma-ringbench.
 */
#ifndef _ORDMA_RING_H
#define _ORDMA_RING_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/ordma.h>

struct uring {
	int fd;
	struct ordma_ring_setup p;
	void *sq_map, *cq_map;
	__u32 *sq_head, *sq_tail, *cq_head, *cq_tail, *cq_flags, *cq_overflow;
	struct ordma_ring_sqe *sqes;
	struct ordma_cqe *cqes;
	__u32 sq_mask, cq_mask;
	__u32 sq_local_tail;	/* entries pushed, not yet published */
};

static inline __u32 uring_load_acquire(const __u32 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void uring_store_release(__u32 *p, __u32 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline int uring_setup_raw(int fd, __u32 sq, __u32 cq,
				  struct ordma_ring_setup *p)
{
	memset(p, 0, sizeof(*p));
	p->size = sizeof(*p);
	p->sq_entries = sq;
	p->cq_entries = cq;
	return ioctl(fd, ORDMA_IOC_RING_SETUP, p) < 0 ? -errno : 0;
}

/* Set up and map the rings of @fd; 0 or -errno. */
static inline int uring_init(struct uring *r, int fd, __u32 sq, __u32 cq)
{
	int ret;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	ret = uring_setup_raw(fd, sq, cq, &r->p);
	if (ret)
		return ret;
	r->sq_map = mmap(NULL, r->p.out_sq_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, ORDMA_OFF_SQ);
	if (r->sq_map == MAP_FAILED)
		return -errno;
	r->cq_map = mmap(NULL, r->p.out_cq_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, ORDMA_OFF_CQ);
	if (r->cq_map == MAP_FAILED) {
		ret = -errno;
		munmap(r->sq_map, r->p.out_sq_size);
		r->sq_map = NULL;
		return ret;
	}
	/*
	 * A child after fork() must not write into rings it would share with
	 * this process: they are not inherited.
	 */
	madvise(r->sq_map, r->p.out_sq_size, MADV_DONTFORK);
	madvise(r->cq_map, r->p.out_cq_size, MADV_DONTFORK);
	r->sq_head = (__u32 *)((char *)r->sq_map + r->p.out_sq_off.head);
	r->sq_tail = (__u32 *)((char *)r->sq_map + r->p.out_sq_off.tail);
	r->sqes = (void *)((char *)r->sq_map + r->p.out_sq_off.sqes);
	r->cq_head = (__u32 *)((char *)r->cq_map + r->p.out_cq_off.head);
	r->cq_tail = (__u32 *)((char *)r->cq_map + r->p.out_cq_off.tail);
	r->cq_flags = (__u32 *)((char *)r->cq_map + r->p.out_cq_off.flags);
	r->cq_overflow = (__u32 *)((char *)r->cq_map +
				   r->p.out_cq_off.overflow);
	r->cqes = (void *)((char *)r->cq_map + r->p.out_cq_off.cqes);
	r->sq_mask = r->p.out_sq_entries - 1;
	r->cq_mask = r->p.out_cq_entries - 1;
	r->sq_local_tail = *r->sq_tail;
	return 0;
}

static inline void uring_exit(struct uring *r)
{
	if (r->sq_map && r->sq_map != MAP_FAILED)
		munmap(r->sq_map, r->p.out_sq_size);
	if (r->cq_map && r->cq_map != MAP_FAILED)
		munmap(r->cq_map, r->p.out_cq_size);
	r->sq_map = r->cq_map = NULL;
}

/* The next free SQ entry (zeroed), or NULL when the ring is full. */
static inline struct ordma_ring_sqe *uring_get_sqe(struct uring *r)
{
	struct ordma_ring_sqe *sqe;

	if (r->sq_local_tail - uring_load_acquire(r->sq_head) >=
	    r->p.out_sq_entries)
		return NULL;
	sqe = &r->sqes[r->sq_local_tail & r->sq_mask];
	memset(sqe, 0, sizeof(*sqe));
	r->sq_local_tail++;
	return sqe;
}

static inline void uring_prep(struct ordma_ring_sqe *sqe, __u32 op, __u32 chan,
			      const void *buf, __u64 len, __u64 cookie,
			      __u64 token, __u64 offset)
{
	sqe->op = op;
	sqe->chan_id = chan;
	sqe->addr = (uintptr_t)buf;
	sqe->len = len;
	sqe->cookie = cookie;
	sqe->token = token;
	sqe->offset = offset;
}

/* Publish the pushed entries. */
static inline void uring_flush_sq(struct uring *r)
{
	uring_store_release(r->sq_tail, r->sq_local_tail);
}

static inline int uring_enter_flags(int fd, __u32 flags, __u32 to_submit,
				    __u32 min_complete, int timeout_ms,
				    __u32 *submitted)
{
	struct ordma_ring_enter e = {
		.size = sizeof(e), .flags = flags, .to_submit = to_submit,
		.min_complete = min_complete, .timeout_ms = timeout_ms,
	};

	if (ioctl(fd, ORDMA_IOC_RING_ENTER, &e) < 0)
		return -errno;
	if (submitted)
		*submitted = e.out_submitted;
	return 0;
}

static inline int uring_enter_raw(int fd, __u32 to_submit, __u32 min_complete,
				  int timeout_ms, __u32 *submitted)
{
	struct ordma_ring_enter e = {
		.size = sizeof(e), .to_submit = to_submit,
		.min_complete = min_complete, .timeout_ms = timeout_ms,
	};

	if (ioctl(fd, ORDMA_IOC_RING_ENTER, &e) < 0)
		return -errno;
	if (submitted)
		*submitted = e.out_submitted;
	return 0;
}

/* Publish and submit every pushed entry; entries taken, or -errno. */
static inline int uring_submit(struct uring *r, __u32 min_complete,
			       int timeout_ms)
{
	__u32 n = 0;
	int ret;

	uring_flush_sq(r);
	ret = uring_enter_raw(r->fd, r->sq_local_tail -
			      uring_load_acquire(r->sq_head), min_complete,
			      timeout_ms, &n);
	return ret ? ret : (int)n;
}

static inline __u32 uring_cq_ready(struct uring *r)
{
	return uring_load_acquire(r->cq_tail) - *r->cq_head;
}

/* Copy up to @max completions out of the CQ ring; how many. */
static inline unsigned int uring_reap(struct uring *r, struct ordma_cqe *out,
				      unsigned int max)
{
	__u32 head = *r->cq_head, tail = uring_load_acquire(r->cq_tail);
	unsigned int n = 0;

	while (head != tail && n < max) {
		out[n++] = r->cqes[head & r->cq_mask];
		head++;
	}
	uring_store_release(r->cq_head, head);
	return n;
}

/*
 * Wait up to @timeout_ms for one completion and take it; 0 or -errno
 * (-ETIMEDOUT).
 */
static inline int uring_wait_cqe(struct uring *r, struct ordma_cqe *cqe,
				 int timeout_ms)
{
	int ret;

	for (;;) {
		if (uring_reap(r, cqe, 1))
			return 0;
		ret = uring_enter_raw(r->fd, 0, 1, timeout_ms, NULL);
		if (ret && ret != -EINTR)
			return ret;
	}
}

#endif /* _ORDMA_RING_H */
