// SPDX-License-Identifier: GPL-2.0
/*
 * Injected failures of the posts to the device, so that the tests reach
 * the paths a post that fails takes: rare on rdma_rxe, the first thing an
 * iWARP device does with a work request it does not support.
 *
 * A kernel with CONFIG_FAULT_INJECTION_DEBUG_FS (the debug guest kernel;
 * Debian's are built without) gets one fault attribute per kind of post
 * (enum ordma_fault) in /sys/kernel/debug/ordma/: fail_send,
 * fail_send_posted, fail_recv, fail_reg and fail_seg_source (not a post:
 * a source's segment that finds no slot), each with the knobs of
 * Documentation/fault-injection/fault-injection.rst (probability,
 * interval, times, space, task-filter, verbose). An attribute counts its
 * posts only while its probability is not 0 (all are 0 at load, and
 * verbose 0), so that a task's
 * /proc/self/fail-nth, which every attribute honours, does not meet posts
 * unless a test asked for them. Without fault injection nothing here
 * fails (fault.h).
 *
 * add_nth_begin and add_nth_end hold the calling task's fail-nth count
 * (what /proc/self/fail-nth reads) when ordma's ib_client .add last began
 * and ended: a test that sweeps a link add with fail-nth learns which of
 * the add's allocations were ordma's own, and which one its fault met.
 * add_fail_at, when not 0 and the task has no fault armed, arms its
 * fail-nth as .add begins: the add_fail_at-th allocation from there
 * fails, in .add or, past its end, after it; where .add falls among
 * the add's allocations no longer matters.
 */
#include <linux/debugfs.h>
#include <linux/fault-inject.h>

#include "fault.h"

#ifdef CONFIG_FAULT_INJECTION

static struct fault_attr ordma_faults[ORDMA_FAULT_NR] = {
	[0 ... ORDMA_FAULT_NR - 1] = FAULT_ATTR_INITIALIZER,
};

static const char *const ordma_fault_names[ORDMA_FAULT_NR] = {
	[ORDMA_FAULT_SEND] = "fail_send",
	[ORDMA_FAULT_SEND_POSTED] = "fail_send_posted",
	[ORDMA_FAULT_RECV] = "fail_recv",
	[ORDMA_FAULT_REG] = "fail_reg",
	[ORDMA_FAULT_SEG_SOURCE] = "fail_seg_source",
};

static struct dentry *ordma_fault_dir;
static u32 ordma_add_nth[2];
static u32 ordma_add_fail_at;

/**
 * ordma_fault_now() - must this post fail?
 * @what: the kind of post
 *
 * Context: any; the caller is about to post.
 * Return: true if the test armed @what and it fires now.
 */
bool ordma_fault_now(enum ordma_fault what)
{
	struct fault_attr *attr = &ordma_faults[what];

	if (!READ_ONCE(attr->probability))
		return false;
	return should_fail(attr, 1);
}

/**
 * ordma_fault_add_mark() - note where the ib_client .add is in fail-nth
 * @done: false as .add begins (where add_fail_at may arm the task's
 *	fail-nth), true as it returns
 *
 * Context: process, in the task that adds the device.
 */
void ordma_fault_add_mark(bool done)
{
	u32 at = READ_ONCE(ordma_add_fail_at);

	if (!done && at && !READ_ONCE(current->fail_nth))
		WRITE_ONCE(current->fail_nth, at);
	WRITE_ONCE(ordma_add_nth[done], READ_ONCE(current->fail_nth));
}

void ordma_fault_init(void)
{
	int i;

	if (!IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS))
		return;
	ordma_fault_dir = debugfs_create_dir("ordma", NULL);
	/* debugfs errors are not ours to handle: no knob, no injection. */
	for (i = 0; i < ORDMA_FAULT_NR; i++) {
		/* A failure leaves no stack in the log unless asked. */
		ordma_faults[i].verbose = 0;
		fault_create_debugfs_attr(ordma_fault_names[i],
					  ordma_fault_dir, &ordma_faults[i]);
	}
	debugfs_create_u32("add_nth_begin", 0600, ordma_fault_dir,
			   &ordma_add_nth[0]);
	debugfs_create_u32("add_nth_end", 0600, ordma_fault_dir,
			   &ordma_add_nth[1]);
	debugfs_create_u32("add_fail_at", 0600, ordma_fault_dir,
			   &ordma_add_fail_at);
}

void ordma_fault_exit(void)
{
	debugfs_remove_recursive(ordma_fault_dir);
	ordma_fault_dir = NULL;
}

#else /* !CONFIG_FAULT_INJECTION */

void ordma_fault_init(void)
{
}

void ordma_fault_exit(void)
{
}

#endif /* CONFIG_FAULT_INJECTION */
