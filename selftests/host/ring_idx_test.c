// SPDX-License-Identifier: GPL-2.0
/*
 * The rings' index arithmetic (kernel/ring_idx.h), compiled for user space:
 * wrap-around of the free-running counters, and what a hostile user index
 * turns into (an SQ tail out of range is refused, a CQ head out of range
 * makes a full ring).
 */
#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

typedef uint32_t u32;

#include "../../kernel/ring_idx.h"
#include "kselftest_harness.h"

TEST(sq_avail_in_range_and_across_wrap)
{
	u32 avail = 99;

	ASSERT_TRUE(ordma_ring_sq_avail(0, 0, 8, &avail));
	ASSERT_EQ(0U, avail);
	ASSERT_TRUE(ordma_ring_sq_avail(5, 13, 8, &avail));
	ASSERT_EQ(8U, avail);
	ASSERT_TRUE(ordma_ring_sq_avail(0xfffffffeU, 3, 8, &avail));
	ASSERT_EQ(5U, avail);
	ASSERT_TRUE(ordma_ring_sq_avail(0xffffffffU, 0xffffffffU, 4096,
					&avail));
	ASSERT_EQ(0U, avail);
}

TEST(sq_tail_out_of_range_refused)
{
	const u32 heads[] = { 0, 7, 0x7fffffffU, 0xfffffff0U, 0xffffffffU };
	u32 avail = 1234, k, d;

	for (k = 0; k < sizeof(heads) / sizeof(heads[0]); k++) {
		/* One past the ring, behind the head, far away. */
		const u32 bad[] = { 9, 0xffffffffU, 0x80000000U, 1000 };

		for (d = 0; d < sizeof(bad) / sizeof(bad[0]); d++) {
			ASSERT_FALSE(ordma_ring_sq_avail(heads[k],
							 heads[k] + bad[d], 8,
							 &avail));
			ASSERT_EQ(1234U, avail);
		}
	}
}

TEST(cq_used_and_room)
{
	ASSERT_EQ(0U, ordma_ring_cq_used(10, 10, 16));
	ASSERT_EQ(16U, ordma_ring_cq_room_idx(10, 10, 16));
	ASSERT_EQ(16U, ordma_ring_cq_used(10, 26, 16));
	ASSERT_EQ(0U, ordma_ring_cq_room_idx(10, 26, 16));
	ASSERT_EQ(3U, ordma_ring_cq_used(0xfffffffeU, 1, 16));
	ASSERT_EQ(13U, ordma_ring_cq_room_idx(0xfffffffeU, 1, 16));
}

TEST(cq_hostile_head_is_a_full_ring)
{
	u32 tail, h;

	for (tail = 0xfffffff0U; tail != 0x10; tail++)
		for (h = 1; h < 40; h++) {
			/* A head ahead of the tail, or too far behind. */
			ASSERT_EQ(0U, ordma_ring_cq_room_idx(tail + h, tail, 16));
			if (h > 16) {
				ASSERT_EQ(0U, ordma_ring_cq_room_idx(tail - h, tail,
								 16));
			} else {
				ASSERT_EQ(16 - h, ordma_ring_cq_room_idx(tail - h,
								     tail, 16));
			}
		}
}

TEST(slots_wrap)
{
	ASSERT_EQ(0U, ordma_ring_slot(0, 8));
	ASSERT_EQ(7U, ordma_ring_slot(0xffffffffU, 8));
	ASSERT_EQ(0U, ordma_ring_slot(0x100000000ULL - 4096, 4096));
	ASSERT_EQ(5U, ordma_ring_slot(13, 8));
}

TEST_HARNESS_MAIN
