/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Injected failures of ordma's posts to the device (fault.c), for the
 * tests: the kernel's fault-injection attributes, in debugfs.
 */
#ifndef _ORDMA_FAULT_H
#define _ORDMA_FAULT_H

#include <linux/types.h>

/**
 * enum ordma_fault - the posts a test can make fail
 * @ORDMA_FAULT_SEND: a post on a channel's send queue fails; nothing is
 *	posted
 * @ORDMA_FAULT_SEND_POSTED: a post on a channel's send queue is made and
 *	still reports failure, as a driver may (siw leaves a work request it
 *	rejected on its queue, where the QP's flush completes it): its
 *	completion comes later
 * @ORDMA_FAULT_RECV: a post on a channel's receive queue fails
 * @ORDMA_FAULT_REG: a post on a channel's registration QP fails
 * @ORDMA_FAULT_SEG_SOURCE: a send's source finds no segment slot free, as
 *	when the channel's other operations hold them all: the copy path
 *	goes on
 * @ORDMA_FAULT_NR: how many there are
 */
enum ordma_fault {
	ORDMA_FAULT_SEND,
	ORDMA_FAULT_SEND_POSTED,
	ORDMA_FAULT_RECV,
	ORDMA_FAULT_REG,
	ORDMA_FAULT_SEG_SOURCE,
	ORDMA_FAULT_NR,
};

#ifdef CONFIG_FAULT_INJECTION
bool ordma_fault_now(enum ordma_fault what);
void ordma_fault_add_mark(bool done);
#else
static inline bool ordma_fault_now(enum ordma_fault what)
{
	return false;
}

static inline void ordma_fault_add_mark(bool done)
{
}
#endif

void ordma_fault_init(void);
void ordma_fault_exit(void);

#endif /* _ORDMA_FAULT_H */
