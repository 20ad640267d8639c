/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Index arithmetic of the rings (ring.c), pure: no locks, no shared memory.
 * Compiled in the module and in the host test selftests/host/ring_idx_test,
 * which defines u32 and bool itself.
 *
 * Heads and tails are free-running 32-bit counters; @entries is a power of
 * two. One side of each pair is written by user space and may hold
 * anything.
 */
#ifndef _ORDMA_RING_IDX_H
#define _ORDMA_RING_IDX_H

/*
 * Entries the SQ holds from the kernel's @head to the user's @tail, or
 * false when @tail is more than @entries ahead of @head or behind it.
 */
static inline bool ordma_ring_sq_avail(u32 head, u32 tail, u32 entries,
				       u32 *avail)
{
	u32 n = tail - head;

	if (n > entries)
		return false;
	*avail = n;
	return true;
}

/*
 * Completions in the CQ between the user's @head and the kernel's @tail; a
 * @head that makes no sense (ahead of @tail, or more than @entries behind)
 * counts as a full ring, so nothing unread is ever written over.
 */
static inline u32 ordma_ring_cq_used(u32 head, u32 tail, u32 entries)
{
	u32 used = tail - head;

	return used > entries ? entries : used;
}

/* Free slots of the CQ, as the kernel may fill them. */
static inline u32 ordma_ring_cq_room_idx(u32 head, u32 tail, u32 entries)
{
	return entries - ordma_ring_cq_used(head, tail, entries);
}

/* The slot of index @i. */
static inline u32 ordma_ring_slot(u32 i, u32 entries)
{
	return i & (entries - 1);
}

#endif /* _ORDMA_RING_IDX_H */
