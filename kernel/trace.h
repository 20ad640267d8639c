/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the module's files need to fire the tracepoints of
 * include/trace/events/ordma.h (created in trace.c): ordma_trace(). A
 * disabled event costs a jump over its call (a static key, patched in when
 * the event is enabled) and nothing else.
 */
#ifndef _ORDMA_TRACE_H
#define _ORDMA_TRACE_H

#include <trace/events/ordma.h>

#include "chan.h"
#include "plan.h"

/* The trace header prints these enums by number. */
static_assert(ORDMA_MODE_AUTO == 0 && ORDMA_MODE_COPY == 1 &&
	      ORDMA_MODE_ZEROCOPY == 2 && ORDMA_MODE_OVERLAP == 3);
static_assert(ORDMA_PHASE_CONNECTING == 0 && ORDMA_PHASE_ESTABLISHED == 1 &&
	      ORDMA_PHASE_DEAD == 2);
static_assert(ORDMA_TX_SEND == 0 && ORDMA_TX_SEND_IMM == 1 &&
	      ORDMA_TX_PLACED == 2 && ORDMA_TX_WRITE_IMM == 3 &&
	      ORDMA_TX_WRITE == 4);

/* The channel's QP number for an event, 0 while it has no QP. */
static inline u32 ordma_trace_qpn(const struct ordma_chan *chan)
{
	const struct ib_qp *qp = chan->qp;

	return qp ? qp->qp_num : 0;
}

/*
 * Fire event ordma_@name of channel @chan: trace_ordma_<name>() alone
 * evaluates its arguments before its static branch (loads, the QP number),
 * here nothing is evaluated while the event is disabled.
 */
#define ordma_trace(name, chan, ...)					\
	do {								\
		if (trace_ordma_##name##_enabled())			\
			trace_ordma_##name(ordma_trace_qpn(chan),	\
					   __VA_ARGS__);		\
	} while (0)

#endif /* _ORDMA_TRACE_H */
