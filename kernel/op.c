// SPDX-License-Identifier: GPL-2.0
/*
 * The operations of a channel: how submitted ones join the channel's
 * queues, how they complete, how their buffers are planned into registered
 * segments, and the receiver's offers a sending operation holds. Runs
 * under chan->run.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "xfer.h"
#include "compat.h"
#include "trace.h"

/* Give back the segments of @op no send uses any more, up to @upto. */
void ordma_op_put_segs(struct ordma_chan *chan, struct ordma_req *op,
		       u64 upto)
{
	struct ordma_seg *seg, *tmp;

	ordma_chan_assert_run(chan);
	if (!op->planned)
		return;
	list_for_each_entry_safe(seg, tmp, &op->segs, op_node) {
		if (seg->off + seg->len > upto || seg->sends)
			break;
		list_del_init(&seg->op_node);
		ordma_seg_put(chan, seg);
	}
}

/**
 * ordma_copy_from_user() - copy_from_user() between copy trace events
 * @chan: the channel
 * @id: the trace id of the operation the bytes are of, or 0
 * @dst: where in a pool chunk
 * @uaddr: the user address, in the mm the caller runs in
 * @n: bytes
 *
 * Return: bytes not copied.
 */
unsigned long ordma_copy_from_user(struct ordma_chan *chan, u64 id, void *dst,
				   u64 uaddr, u64 n)
{
	unsigned long left;

	ordma_trace(copy_start, chan, id, ORDMA_TRACE_COPY_OUT, n, 0);
	left = copy_from_user(dst, u64_to_user_ptr(uaddr), n);
	ordma_trace(copy_end, chan, id, ORDMA_TRACE_COPY_OUT, n, left);
	return left;
}

/**
 * ordma_copy_to_user() - copy_to_user() between copy trace events
 * @chan: the channel
 * @id: the trace id of the operation the bytes are for, or 0
 * @uaddr: the user address, in the mm the caller runs in
 * @src: where in a pool chunk
 * @n: bytes
 *
 * Return: bytes not copied.
 */
unsigned long ordma_copy_to_user(struct ordma_chan *chan, u64 id, u64 uaddr,
				 const void *src, u64 n)
{
	unsigned long left;

	ordma_trace(copy_start, chan, id, ORDMA_TRACE_COPY_IN, n, 0);
	left = copy_to_user(u64_to_user_ptr(uaddr), src, n);
	ordma_trace(copy_end, chan, id, ORDMA_TRACE_COPY_IN, n, left);
	return left;
}

/**
 * ordma_copy_to_win() - copy a peer's bytes into a window
 * @chan: the channel they came on
 * @mem: the window's memory (ordma_window_check()); a user's is written
 *	only in its mm
 * @off: where in the window
 * @src: the bytes
 * @n: bytes, within the window
 *
 * Return: bytes not copied.
 */
unsigned long ordma_copy_to_win(struct ordma_chan *chan,
				const struct ordma_winmem *mem, u64 off,
				const void *src, u64 n)
{
	unsigned long left;

	if (!mem->kmem.nr)
		return ordma_copy_to_user(chan, 0, mem->addr + off, src, n);
	ordma_trace(copy_start, chan, 0, ORDMA_TRACE_COPY_IN, n, 0);
	left = ordma_kmem_copy(&mem->kmem, off + n, off, (void *)src, n, false);
	ordma_trace(copy_end, chan, 0, ORDMA_TRACE_COPY_IN, n, left);
	return left;
}

/**
 * ordma_copy_from_win() - copy bytes of a window for a peer's read
 * @chan: the channel the read came on
 * @mem: the window's memory (ordma_window_check()); a user's is read
 *	only in its mm
 * @off: where in the window
 * @dst: where they go
 * @n: bytes, within the window
 *
 * Return: bytes not copied.
 */
unsigned long ordma_copy_from_win(struct ordma_chan *chan,
				  const struct ordma_winmem *mem, u64 off,
				  void *dst, u64 n)
{
	unsigned long left;

	if (!mem->kmem.nr)
		return ordma_copy_from_user(chan, 0, dst, mem->addr + off, n);
	ordma_trace(copy_start, chan, 0, ORDMA_TRACE_COPY_OUT, n, 0);
	left = ordma_kmem_copy(&mem->kmem, off + n, off, dst, n, true);
	ordma_trace(copy_end, chan, 0, ORDMA_TRACE_COPY_OUT, n, left);
	return left;
}

/**
 * ordma_op_reachable() - may this pass touch @op's buffer?
 * @op: the operation
 * @mm_ok: the pass runs in the owner's mm
 *
 * Return: true for a user's buffer in its mm, and for a kernel user's.
 */
bool ordma_op_reachable(const struct ordma_req *op, bool mm_ok)
{
	return mm_ok || op->kmem.nr;
}

/**
 * ordma_copy_from_op() - copy bytes of an operation's buffer into a chunk
 * @chan: the channel
 * @op: the operation, reachable (ordma_op_reachable())
 * @off: where in its buffer
 * @dst: where in a pool chunk
 * @n: bytes, within the buffer
 *
 * Return: bytes not copied.
 */
unsigned long ordma_copy_from_op(struct ordma_chan *chan, struct ordma_req *op,
				 u64 off, void *dst, u64 n)
{
	unsigned long left;

	if (!op->kmem.nr)
		return ordma_copy_from_user(chan, op->tid, dst, op->addr + off, n);
	ordma_trace(copy_start, chan, op->tid, ORDMA_TRACE_COPY_OUT, n, 0);
	left = ordma_kmem_copy(&op->kmem, op->len, off, dst, n, true);
	ordma_trace(copy_end, chan, op->tid, ORDMA_TRACE_COPY_OUT, n, left);
	return left;
}

/**
 * ordma_copy_to_op() - copy bytes of a chunk into an operation's buffer
 * @chan: the channel
 * @op: the operation, reachable (ordma_op_reachable())
 * @off: where in its buffer
 * @src: where in a pool chunk
 * @n: bytes, within the buffer
 *
 * Return: bytes not copied.
 */
unsigned long ordma_copy_to_op(struct ordma_chan *chan, struct ordma_req *op,
			       u64 off, const void *src, u64 n)
{
	unsigned long left;

	if (!op->kmem.nr)
		return ordma_copy_to_user(chan, op->tid, op->addr + off, src, n);
	ordma_trace(copy_start, chan, op->tid, ORDMA_TRACE_COPY_IN, n, 0);
	left = ordma_kmem_copy(&op->kmem, op->len, off, (void *)src, n, false);
	ordma_trace(copy_end, chan, op->tid, ORDMA_TRACE_COPY_IN, n, left);
	return left;
}

void ordma_op_free_places(struct ordma_req *op)
{
	struct ordma_place *pl, *tmp;

	list_for_each_entry_safe(pl, tmp, &op->places, node) {
		list_del(&pl->node);
		kfree(pl);
	}
}

void ordma_op_complete(struct ordma_chan *chan, struct ordma_req *op,
		       s64 res)
{
	ordma_chan_assert_run(chan);

	ordma_op_put_segs(chan, op, U64_MAX);
	if (op->op == ORDMA_OP_SEND || op->op == ORDMA_OP_WRITE)
		ordma_op_free_places(op);
	list_del_init(&op->node);
	atomic64_inc(&chan->ops);
	atomic64_inc(&chan->odev->ops);
	if (op->op == ORDMA_OP_SEND || op->op == ORDMA_OP_WRITE)
		atomic64_inc(&chan->ops_tx);
	if (res < 0) {
		atomic64_inc(&chan->errors);
		atomic64_inc(&chan->odev->errors);
	}
	atomic64_dec(&chan->inflight);
	/*
	 * A RECV's destination segments are on their way to deregistration;
	 * the last one gone posts it (ordma_seg_free()), so nothing can land
	 * in the buffer once the application hears it is complete.
	 */
	op->res = res;
	ordma_trace(complete, chan, op->tid, op->op, op->len, res,
		    atomic_read(&op->dereg_wait) > 0);
	if (atomic_dec_return(&op->dereg_wait) < 0)
		ordma_file_complete(chan->ofile, op, res);
}

struct ordma_req *ordma_op_find(struct list_head *q, u64 op_id)
{
	struct ordma_req *op;

	list_for_each_entry(op, q, node)
		if (op->op_id == op_id)
			return op;
	return NULL;
}

/*
 * Take an offer for message @op (started, @op->op_id set) if it fits the
 * receive buffer; pieces never go past the message's end, whatever the
 * range. Consumes @pl.
 */
void ordma_op_take_place(struct ordma_req *op, struct ordma_place *pl)
{
	if (op->len > pl->buf_len || pl->off >= op->len) {
		kfree(pl);
		return;
	}
	op->offer_end = max(op->offer_end, pl->off + pl->len);
	list_add_tail(&pl->node, &op->places);
}

/* Offers we hold for @op or for messages not started; ranges sent past go. */
u32 ordma_places_prune(struct list_head *places, u64 posted)
{
	struct ordma_place *pl, *tmp;
	u32 n = 0;

	list_for_each_entry_safe(pl, tmp, places, node) {
		if (pl->off + pl->len <= posted) {
			list_del(&pl->node);
			kfree(pl);
		} else {
			n++;
		}
	}
	return n;
}

/* The plan event, with the model's estimates (not computed otherwise). */
static void ordma_op_trace_plan(struct ordma_chan *chan, struct ordma_req *op,
				int mode, u64 total,
				const struct ordma_plan *plan,
				const struct ordma_model *m, bool cached)
{
	u64 est = ordma_plan_estimate(m, op->addr, total, plan, PAGE_SHIFT);
	u64 reg = plan->seg_first ?
		  ordma_plan_reg_ns(m, plan->seg_first >> PAGE_SHIFT) : 0;

	trace_ordma_plan(ordma_trace_qpn(chan), op->tid, op->op, mode, total,
			 plan->copy_len, plan->seg_first, plan->seg_max, cached,
			 est, reg);
}

/*
 * Plan @op's buffer of @total bytes with the device's cost model (in mode
 * copy, or when the channel cannot register, everything is copied): sets
 * the segment sizes; returns the mode it planned in.
 */
int ordma_op_plan(struct ordma_chan *chan, struct ordma_req *op,
		  u64 total, struct ordma_plan *plan)
{
	struct ordma_dev *odev = chan->odev;
	int mode = READ_ONCE(odev->mode);
	bool cached = false;
	struct ordma_model m;

	ordma_chan_assert_run(chan);
	op->planned = true;
	plan->copy_len = total;
	plan->seg_first = 0;
	plan->seg_max = 0;
	if (!chan->nsegs_max || mode == ORDMA_MODE_COPY) {
		ordma_trace(plan, chan, op->tid, op->op, mode, total, total,
			    0, 0, false, 0, 0);
		goto out;
	}
	spin_lock(&odev->model_lock);
	m = odev->model;
	spin_unlock(&odev->model_lock);
	/*
	 * A source the cache holds, or a kernel user's (DMA-mapped as it
	 * is), costs nothing to pin, nor to let go of.
	 */
	if (op->op != ORDMA_OP_RECV &&
	    (op->kmem.nr || ordma_pin_cached(chan, op->addr, total))) {
		cached = true;
		m.reg_ns = 0;
		m.pin_ns_page = 0;
		m.dereg_ns = 0;
	}
	/*
	 * A kernel user's destination is registered, not pinned. A user's
	 * the pin cache holds is pinned already too, but is planned as if
	 * not: what a destination costs on its receive's way is mostly the
	 * registration, the offer and the end of the registration, and on
	 * rxe registering 64 and 256 KiB destinations that the cache held
	 * made receives of those sizes no faster (benchmarks.rst, "Reuse
	 * and churn").
	 */
	if (op->kmem.nr)
		m.pin_ns_page = 0;
	ordma_plan_make(&m, mode, op->addr, total, chan->seg_cap, PAGE_SHIFT,
			plan);
	if (trace_ordma_plan_enabled())
		ordma_op_trace_plan(chan, op, mode, total, plan, &m, cached);
out:
	op->seg_len = plan->seg_first;
	op->seg_max = clamp_t(u64, plan->seg_max, PAGE_SIZE, chan->seg_cap);
	return mode;
}

/*
 * Ask for the next segments of @op's buffer that start below @upto, none
 * past @total, as many as the channel has slots: sources for a SEND or
 * WRITE, destinations (offered to the sender once registered) for a RECV.
 * Later segments start on a page boundary.
 */
void ordma_op_ask_segs(struct ordma_chan *chan, struct ordma_req *op,
		       u64 upto, u64 total, bool write)
{
	u64 start, end, last = op->addr + total, wtoken;
	struct ordma_seg *seg;

	ordma_chan_assert_run(chan);
	if (!op->seg_len)
		return;
	/*
	 * Bytes of a source the copy path sent already (it went on while no
	 * slot was free) need no segment: the next starts at the page after.
	 */
	if (!write && op->seg_next < op->posted)
		op->seg_next = min(PAGE_ALIGN(op->addr + op->posted) - op->addr,
				   total);
	while (op->seg_next < min(upto, total)) {
		start = op->addr + op->seg_next;
		end = start + min3(op->seg_len, total - op->seg_next,
				   chan->seg_cap - offset_in_page(start));
		if (end < last && (end & PAGE_MASK) > start)
			end &= PAGE_MASK;
		end = ordma_seg_end(start, end);
		wtoken = write && op->op == ORDMA_OP_WRITE ? op->token : 0;
		if (op->kmem.nr)
			seg = ordma_seg_queue_kern(chan, op, start, end - start,
						   write, wtoken);
		else
			seg = ordma_seg_queue(chan, start, end - start, write,
					      wtoken, op->tid);
		if (!seg)
			return;
		seg->off = op->seg_next;
		seg->msg_id = op->op_id;
		seg->buf_len = op->len;
		/* Complete once the peer can write into none of them. */
		if (write && op->op == ORDMA_OP_RECV) {
			seg->owner = op;
			atomic_inc(&op->dereg_wait);
		}
		list_add_tail(&seg->op_node, &op->segs);
		op->seg_next += end - start;
		op->seg_len = min(op->seg_len * 2, op->seg_max);
	}
}

/*
 * Plan a RECV's buffer like a send, for @total bytes of which @first are in
 * hand: destination segments from the next page boundary past the
 * planner's copied prefix (what arrives through chunks before registration
 * can help) and past @first; those that start within @ahead bytes from
 * there are asked for now, whole.
 */
void ordma_rx_plan_from(struct ordma_chan *chan, struct ordma_req *op,
			u64 total, u64 first, u64 ahead)
{
	struct ordma_plan plan;
	u64 start;

	ordma_chan_assert_run(chan);
	ordma_op_plan(chan, op, total, &plan);
	if (!op->seg_len)
		return;
	start = max(plan.copy_len, first);
	start = PAGE_ALIGN(op->addr + start) - op->addr;
	/* Never the bytes before @start, now or when more are asked for. */
	op->seg_next = min(start, total);
	start = op->seg_next + min(total - op->seg_next, ahead);
	ordma_op_ask_segs(chan, op, start, total, true);
}

/* Is [@off, @off + @n) of @op's message inside a range we offered? */
bool ordma_rx_offered(struct ordma_req *op, u64 off, u64 n)
{
	struct ordma_seg *seg;

	if (!op->planned)
		return false;
	list_for_each_entry(seg, &op->segs, op_node)
		if (seg->offered && off >= seg->off &&
		    off - seg->off <= seg->len && n <= seg->len - (off - seg->off))
			return true;
	return false;
}

struct ordma_seg *ordma_op_seg(struct ordma_req *op, u64 off)
{
	struct ordma_seg *seg;

	list_for_each_entry(seg, &op->segs, op_node)
		if (off >= seg->off && off - seg->off < seg->len)
			return seg;
	return NULL;
}

static void ordma_queue_read_req(struct ordma_chan *chan,
				 struct ordma_req *op)
{
	struct ordma_wire_hdr req;

	ordma_chan_assert_run(chan);
	ordma_hdr_start(&req, ORDMA_WIRE_READ_REQ, 0);
	req.read.read_len = cpu_to_le64(op->len);
	req.read.start = cpu_to_le64(op->offset);
	req.read.token = cpu_to_le64(op->token);
	req.read.read_id = cpu_to_le64(op->op_id);
	ordma_ctrl_queue(chan, &req);
}

void ordma_xfer_take_submitted(struct ordma_chan *chan,
			       struct list_head *sub)
{
	struct ordma_req *op, *tmp;

	ordma_chan_assert_run(chan);
	list_for_each_entry_safe(op, tmp, sub, node) {
		list_del(&op->node);
		switch (op->op) {
		case ORDMA_OP_SEND:
			INIT_LIST_HEAD(&op->segs);
			INIT_LIST_HEAD(&op->places);
			list_add_tail(&op->node, &chan->sendq);
			break;
		case ORDMA_OP_RECV:
			INIT_LIST_HEAD(&op->segs);
			list_add_tail(&op->node, &chan->recvq);
			break;
		case ORDMA_OP_WRITE:
			INIT_LIST_HEAD(&op->segs);
			INIT_LIST_HEAD(&op->places);
			op->op_id = chan->next_op_id++;
			list_add_tail(&op->node, &chan->writeq);
			break;
		case ORDMA_OP_READ:
			op->op_id = chan->next_op_id++;
			list_add_tail(&op->node, &chan->readq);
			ordma_queue_read_req(chan, op);
			break;
		}
	}
}

void ordma_fail_queue(struct ordma_chan *chan, struct list_head *q,
		      int err)
{
	struct ordma_req *op, *tmp;

	ordma_chan_assert_run(chan);
	list_for_each_entry_safe(op, tmp, q, node) {
		if (op->inflight) {
			/* Completes when its last chunk comes back. */
			op->posted = op->len;
			if (!op->res)
				op->res = err;
			continue;
		}
		ordma_op_complete(chan, op, op->res ? op->res : err);
	}
}
