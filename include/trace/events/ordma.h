/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordma's tracepoints: where the time of a transfer goes. Each event takes
 * scalars only, so this header needs none of the module's structures:
 *
 *   qpn	the channel's QP number (0 before it has one, or once it is
 *		torn down)
 *   id		the operation's trace id, given at submission while
 *		ordma_submit is enabled (0: none, or no operation)
 *   op		ORDMA_OP_* of the uapi header
 *
 * Documentation/ordma/tracing.rst says when each event fires.
 * kernel/trace.c creates them; the module's files include kernel/trace.h,
 * which includes this.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ordma

#if !defined(_TRACE_ORDMA_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_ORDMA_H

#include <linux/tracepoint.h>
#include <uapi/linux/ordma.h>

/* Kinds of a registration (reg_start, reg_done, dereg). */
#define ORDMA_TRACE_REG_PIN	0	/* a source: pinned and DMA-mapped */
#define ORDMA_TRACE_REG_DST	1	/* a destination, way not chosen yet */
#define ORDMA_TRACE_REG_FRWR	2	/* a destination, fast-registered */
#define ORDMA_TRACE_REG_UMR	3	/* a destination, ib_reg_user_mr() */

/* Directions of a copy through a pool chunk. */
#define ORDMA_TRACE_COPY_OUT	0	/* user buffer to chunk, to be sent */
#define ORDMA_TRACE_COPY_IN	1	/* chunk to user buffer, received */

#define ordma_show_op(op)						\
	__print_symbolic(op,						\
			 { ORDMA_OP_SEND, "send" },			\
			 { ORDMA_OP_RECV, "recv" },			\
			 { ORDMA_OP_WRITE, "write" },			\
			 { ORDMA_OP_READ, "read" })

/* enum ordma_mode (kernel/plan.h); kernel/trace.h checks the numbers. */
#define ordma_show_mode(mode)						\
	__print_symbolic(mode,						\
			 { 0, "auto" },					\
			 { 1, "copy" },					\
			 { 2, "zerocopy" },				\
			 { 3, "overlap" })

/* enum ordma_chan_phase (kernel/chan.h); kernel/trace.h checks them. */
#define ordma_show_phase(phase)						\
	__print_symbolic(phase,						\
			 { 0, "connecting" },				\
			 { 1, "established" },				\
			 { 2, "dead" })

/* enum ordma_tx_kind (kernel/chan.h); kernel/trace.h checks them. */
#define ordma_show_tx(kind)						\
	__print_symbolic(kind,						\
			 { 0, "send" },					\
			 { 1, "send_imm" },				\
			 { 2, "placed" },				\
			 { 3, "write_imm" },				\
			 { 4, "write" })

#define ordma_show_reg(kind)						\
	__print_symbolic(kind,						\
			 { ORDMA_TRACE_REG_PIN, "pin" },		\
			 { ORDMA_TRACE_REG_DST, "dst" },		\
			 { ORDMA_TRACE_REG_FRWR, "frwr" },		\
			 { ORDMA_TRACE_REG_UMR, "umr" })

#define ordma_show_dir(dir)						\
	__print_symbolic(dir,						\
			 { ORDMA_TRACE_COPY_OUT, "out" },		\
			 { ORDMA_TRACE_COPY_IN, "in" })

/* An operation is queued on its channel (submission and SQ ring alike). */
TRACE_EVENT(ordma_submit,
	TP_PROTO(u32 qpn, u64 id, u32 op, u64 len, u64 cookie),
	TP_ARGS(qpn, id, op, len, cookie),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, op)
		__field(u64, id)
		__field(u64, len)
		__field(u64, cookie)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->op = op;
		__entry->id = id;
		__entry->len = len;
		__entry->cookie = cookie;
	),
	TP_printk("qpn=%u id=%llu op=%s len=%llu cookie=%#llx",
		  __entry->qpn, __entry->id, ordma_show_op(__entry->op),
		  __entry->len, __entry->cookie)
);

/*
 * The planner split a buffer: @copy bytes through pool chunks first, the
 * rest from registered segments of @seg_first bytes, doubling up to
 * @seg_max. @est_ns: the model's time for the whole transfer; @reg_ns: for
 * registering the first segment. A source the pin cache holds (@cached)
 * is planned as free to register.
 */
TRACE_EVENT(ordma_plan,
	TP_PROTO(u32 qpn, u64 id, u32 op, u32 mode, u64 len, u64 copy,
		 u64 seg_first, u64 seg_max, bool cached, u64 est_ns,
		 u64 reg_ns),
	TP_ARGS(qpn, id, op, mode, len, copy, seg_first, seg_max, cached,
		est_ns, reg_ns),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, op)
		__field(u64, id)
		__field(u32, mode)
		__field(bool, cached)
		__field(u64, len)
		__field(u64, copy)
		__field(u64, seg_first)
		__field(u64, seg_max)
		__field(u64, est_ns)
		__field(u64, reg_ns)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->op = op;
		__entry->id = id;
		__entry->mode = mode;
		__entry->cached = cached;
		__entry->len = len;
		__entry->copy = copy;
		__entry->seg_first = seg_first;
		__entry->seg_max = seg_max;
		__entry->est_ns = est_ns;
		__entry->reg_ns = reg_ns;
	),
	TP_printk("qpn=%u id=%llu op=%s mode=%s len=%llu copy=%llu zc=%llu seg_first=%llu seg_max=%llu cached=%d est_ns=%llu reg_ns=%llu",
		  __entry->qpn, __entry->id, ordma_show_op(__entry->op),
		  ordma_show_mode(__entry->mode), __entry->len, __entry->copy,
		  __entry->len - __entry->copy, __entry->seg_first,
		  __entry->seg_max, __entry->cached, __entry->est_ns,
		  __entry->reg_ns)
);

/*
 * A copy between a user buffer and a pool chunk: of an operation's bytes,
 * or (id 0) for the peer's READ or its WRITE into one of our windows.
 * @left: bytes that could not be copied (the buffer faulted), at the end.
 */
DECLARE_EVENT_CLASS(ordma_copy_class,
	TP_PROTO(u32 qpn, u64 id, u32 dir, u64 len, u64 left),
	TP_ARGS(qpn, id, dir, len, left),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, dir)
		__field(u64, id)
		__field(u64, len)
		__field(u64, left)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->dir = dir;
		__entry->id = id;
		__entry->len = len;
		__entry->left = left;
	),
	TP_printk("qpn=%u id=%llu dir=%s len=%llu left=%llu",
		  __entry->qpn, __entry->id, ordma_show_dir(__entry->dir),
		  __entry->len, __entry->left)
);

DEFINE_EVENT_PRINT(ordma_copy_class, ordma_copy_start,
	TP_PROTO(u32 qpn, u64 id, u32 dir, u64 len, u64 left),
	TP_ARGS(qpn, id, dir, len, left),
	TP_printk("qpn=%u id=%llu dir=%s len=%llu",
		  __entry->qpn, __entry->id, ordma_show_dir(__entry->dir),
		  __entry->len)
);

DEFINE_EVENT(ordma_copy_class, ordma_copy_end,
	TP_PROTO(u32 qpn, u64 id, u32 dir, u64 len, u64 left),
	TP_ARGS(qpn, id, dir, len, left)
);

/*
 * A segment of an operation's buffer (id 0: a window's standing
 * registration) is readied by the channel's registration worker:
 * reg_start before, reg_done after, with the pages pinned for it now, the
 * time it took (@ns) and its errno; dereg when it is let go of (a source's
 * ranges back to the pin cache, a destination invalidated or
 * deregistered, and unpinned).
 */
DECLARE_EVENT_CLASS(ordma_reg_class,
	TP_PROTO(u32 qpn, u64 id, u32 kind, u64 len, u32 pages, u64 ns,
		 int err),
	TP_ARGS(qpn, id, kind, len, pages, ns, err),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, kind)
		__field(u64, id)
		__field(u64, len)
		__field(u64, ns)
		__field(u32, pages)
		__field(int, err)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->kind = kind;
		__entry->id = id;
		__entry->len = len;
		__entry->ns = ns;
		__entry->pages = pages;
		__entry->err = err;
	),
	TP_printk("qpn=%u id=%llu kind=%s len=%llu pages=%u ns=%llu err=%d",
		  __entry->qpn, __entry->id, ordma_show_reg(__entry->kind),
		  __entry->len, __entry->pages, __entry->ns, __entry->err)
);

DEFINE_EVENT_PRINT(ordma_reg_class, ordma_reg_start,
	TP_PROTO(u32 qpn, u64 id, u32 kind, u64 len, u32 pages, u64 ns,
		 int err),
	TP_ARGS(qpn, id, kind, len, pages, ns, err),
	TP_printk("qpn=%u id=%llu kind=%s len=%llu pages=%u",
		  __entry->qpn, __entry->id, ordma_show_reg(__entry->kind),
		  __entry->len, __entry->pages)
);

DEFINE_EVENT(ordma_reg_class, ordma_reg_done,
	TP_PROTO(u32 qpn, u64 id, u32 kind, u64 len, u32 pages, u64 ns,
		 int err),
	TP_ARGS(qpn, id, kind, len, pages, ns, err)
);

DEFINE_EVENT_PRINT(ordma_reg_class, ordma_dereg,
	TP_PROTO(u32 qpn, u64 id, u32 kind, u64 len, u32 pages, u64 ns,
		 int err),
	TP_ARGS(qpn, id, kind, len, pages, ns, err),
	TP_printk("qpn=%u id=%llu kind=%s len=%llu pages=%u ns=%llu",
		  __entry->qpn, __entry->id, ordma_show_reg(__entry->kind),
		  __entry->len, __entry->pages, __entry->ns)
);

/*
 * A send was posted: @len payload bytes (0 for a header-only message,
 * id 0), from a registered segment if @zc, else from the chunk.
 */
TRACE_EVENT(ordma_post,
	TP_PROTO(u32 qpn, u64 id, u32 kind, u32 len, bool zc),
	TP_ARGS(qpn, id, kind, len, zc),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, kind)
		__field(u64, id)
		__field(u32, len)
		__field(bool, zc)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->kind = kind;
		__entry->id = id;
		__entry->len = len;
		__entry->zc = zc;
	),
	TP_printk("qpn=%u id=%llu kind=%s len=%u zc=%d",
		  __entry->qpn, __entry->id, ordma_show_tx(__entry->kind),
		  __entry->len, __entry->zc)
);

/*
 * An operation is done: @res is its byte count or -errno. A RECV whose
 * destination segments are still registered (@deferred) reaches the
 * application once the last of them is deregistered.
 */
TRACE_EVENT(ordma_complete,
	TP_PROTO(u32 qpn, u64 id, u32 op, u64 len, s64 res, bool deferred),
	TP_ARGS(qpn, id, op, len, res, deferred),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, op)
		__field(u64, id)
		__field(u64, len)
		__field(s64, res)
		__field(bool, deferred)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->op = op;
		__entry->id = id;
		__entry->len = len;
		__entry->res = res;
		__entry->deferred = deferred;
	),
	TP_printk("qpn=%u id=%llu op=%s len=%llu res=%lld deferred=%d",
		  __entry->qpn, __entry->id, ordma_show_op(__entry->op),
		  __entry->len, __entry->res, __entry->deferred)
);

/*
 * Bytes wait to go (operation @id next, 0 for the peer's READ) and the
 * peer has no receive left for them: @credit, the peer's latest count,
 * is what it had announced; @sent, the messages we sent against it.
 */
TRACE_EVENT(ordma_credit_stall,
	TP_PROTO(u32 qpn, u64 id, u32 credit, u32 sent),
	TP_ARGS(qpn, id, credit, sent),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, credit)
		__field(u64, id)
		__field(u32, sent)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->credit = credit;
		__entry->id = id;
		__entry->sent = sent;
	),
	TP_printk("qpn=%u id=%llu credit=%u sent=%u",
		  __entry->qpn, __entry->id, __entry->credit, __entry->sent)
);

/* A channel's phase changed; @err: why it died. */
TRACE_EVENT(ordma_chan_state,
	TP_PROTO(u32 qpn, u32 old, u32 new, int err),
	TP_ARGS(qpn, old, new, err),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, old)
		__field(u32, new)
		__field(int, err)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->old = old;
		__entry->new = new;
		__entry->err = err;
	),
	TP_printk("qpn=%u %s -> %s err=%d", __entry->qpn,
		  ordma_show_phase(__entry->old),
		  ordma_show_phase(__entry->new), __entry->err)
);

#endif /* _TRACE_ORDMA_H */

/* This part must be outside the protection. */
#include <trace/define_trace.h>
