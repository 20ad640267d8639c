/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * libordma internals: the handle, its queues and the backend interface.
 *
 * Queues of a handle (the library's own; the ring backend copies entries into
 * the kernel's rings and completions out of them):
 *
 * - SQ: ORDMA_SQ_ENTRIES struct ordma_sqe. ordma_get_sqe() hands out
 *   sqes[sq_tail], ordma_submit() pushes sqes[sq_head .. sq_tail). Indices run
 *   free; the slot is index & (ORDMA_SQ_ENTRIES - 1).
 * - Slots: one per asynchronous operation in flight, holding the caller's
 *   cookie. The kernel never sees a caller's cookie; it gets a library cookie
 *   naming the slot (see below), so caller cookies can take any value and
 *   never collide with those of the synchronous calls.
 * - CQ: ORDMA_CQ_ENTRIES struct ordma_cqe, completions reaped from the
 *   backend and translated back to the caller's cookie, oldest at cq_head.
 *   ordma_submit() keeps inflight + (cq_tail - cq_head) <= ORDMA_CQ_ENTRIES,
 *   so a reaped completion always has a place and the pointers that
 *   ordma_peek_cqe()/ordma_wait_cqe() return never move.
 *
 * Library cookies (struct ordma_submit.cookie as the kernel sees it):
 *
 *   bit 63 = 0: asynchronous, bits 32..62 the slot's generation, bits 0..31
 *               the slot index
 *   bit 63 = 1: synchronous, bits 0..62 a sequence number; a synchronous
 *               call waits for its own number, older ones are dropped
 *
 * The generation changes every time a slot is reused, so a completion that
 * does not match a live slot (which the kernel never sends) is recognised
 * and dropped instead of being passed off as another operation's.
 *
 * The backend moves entries to the kernel and completions back. Two exist:
 *
 * - ring (ring.c), used whenever the kernel offers rings: ordma_submit()
 *   copies a batch into the kernel's SQ ring and starts it with one
 *   ORDMA_IOC_RING_ENTER; a synchronous call submits and waits in that same
 *   call; completions are read from the mapped CQ ring without a system
 *   call, one ENTER waiting only when it is empty.
 * - ioctl (ioctl.c): one ORDMA_IOC_SUBMIT per entry, ORDMA_IOC_WAIT for
 *   completions; the fallback for kernels without rings (RING_SETUP fails),
 *   or when the environment has LIBORDMA_BACKEND=ioctl.
 *
 * Every queue above is the library's own, so the public API is the same on
 * both.
 */
#ifndef _LIBORDMA_PRIVATE_H
#define _LIBORDMA_PRIVATE_H

#include "libordma.h"

#define ORDMA_API		__attribute__((visibility("default")))

#define ORDMA_COOKIE_SYNC	(1ULL << 63)
#define ORDMA_GEN_MASK		0x7fffffffU

/* Completions one backend call reaps at most (ORDMA_IOC_WAIT takes 1024). */
#define ORDMA_REAP_BATCH	64

/*
 * The kernel rings the ring backend asks for: an SQ as large as the
 * library's, and a CQ with room for every asynchronous operation the
 * library lets be in flight plus synchronous ones, so it never overflows.
 */
#define ORDMA_RING_SQ		ORDMA_SQ_ENTRIES
#define ORDMA_RING_CQ		(2 * ORDMA_CQ_ENTRIES)

struct ordma;

/*
 * struct ordma_backend - how entries reach the kernel
 * @name: for debugging
 * @init: set the backend up on the open handle; 0 or -errno (the caller
 *	then tries the next backend)
 * @submit: start @n (>= 1) entries in order, @sqes[i] with kernel cookie
 *	@cookies[i]; if @wait, also wait for one completion (the submission
 *	may return before, e.g. on a signal). Returns how many entries were
 *	consumed; taking stops after an entry that failed and before one with
 *	a transient error. The failure of the last consumed entry is either
 *	posted by the kernel as its completion (ring) or returned in *@err for
 *	the caller to post (ioctl; 0 otherwise). -errno when none was consumed
 * @reap: write up to @max (>= 1) completions to @cqes, waiting up to
 *	@timeout_ms (-1: forever, 0: not at all) for the first; returns how
 *	many, or -errno: -EAGAIN (@timeout_ms 0 and none), -ETIMEDOUT, -EINTR
 * @release: undo the backend's set-up; the file is closed after it
 */
struct ordma_backend {
	const char *name;
	int (*init)(struct ordma *o);
	int (*submit)(struct ordma *o, const struct ordma_sqe *const *sqes,
		      const __u64 *cookies, unsigned int n, int wait, int *err);
	int (*reap)(struct ordma *o, struct ordma_cqe *cqes, unsigned int max,
		    int timeout_ms);
	void (*release)(struct ordma *o);
};

/*
 * The ring backend's view of the kernel's rings (ring.c). The library owns
 * the SQ tail and the CQ head and keeps them here; it never reads them back
 * from the shared pages, and reads the kernel's indices only through the
 * acquire helpers of ring.c.
 */
struct ordma_uring {
	void *sq_map, *cq_map;
	size_t sq_size, cq_size;
	__u32 *sq_head, *sq_tail, *cq_head, *cq_tail, *cq_flags;
	struct ordma_ring_sqe *sqes;
	struct ordma_cqe *cqes;
	__u32 sq_entries, sq_mask, cq_mask;
	__u32 sq_tail_local;	/* == the kernel's SQ head between calls */
	__u32 cq_head_local;
	/*
	 * A private page with MADV_WIPEONFORK: reads 0 in a child after
	 * fork(), which must not touch the rings it shares with the parent.
	 */
	volatile __u32 *fork_guard;
};

struct ordma_slot {
	__u64 cookie;		/* the caller's */
	__u32 gen;
	__u32 next_free;	/* free list link; ORDMA_CQ_ENTRIES: end */
};

struct ordma {
	int fd;
	const struct ordma_backend *be;
	struct ordma_uring ring;

	struct ordma_sqe sqes[ORDMA_SQ_ENTRIES];
	__u32 sq_head, sq_tail;

	struct ordma_slot slots[ORDMA_CQ_ENTRIES];
	__u32 free_slot;	/* head of the free list */
	__u32 inflight;		/* asynchronous operations in flight */

	struct ordma_cqe cqes[ORDMA_CQ_ENTRIES];
	__u32 cq_head, cq_tail;

	__u64 sync_seq;		/* cookie of the last synchronous call */
	int sync_done;		/* its completion arrived ... */
	__s64 sync_res;		/* ... with this result */

	__u64 dropped;		/* completions no operation of ours matched */

	struct ordma_cqe reap_buf[ORDMA_REAP_BATCH];
};

extern const struct ordma_backend __ordma_backend_ioctl;
extern const struct ordma_backend __ordma_backend_ring;

int __ordma_sockaddr_to_addr(const struct sockaddr *sa, socklen_t len,
			     struct ordma_addr *a);
void __ordma_addr_to_sockaddr(const struct ordma_addr *a,
			      struct sockaddr *sa, socklen_t *len);

#endif /* _LIBORDMA_PRIVATE_H */
