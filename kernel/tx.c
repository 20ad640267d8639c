// SPDX-License-Identifier: GPL-2.0
/*
 * Sending. The next piece of each SEND or WRITE comes from a pool chunk
 * (copied from the user buffer) or from a registered segment, and goes into
 * the peer's offer when it made one; the head remote read is served from
 * the window; header-only messages go first. The completions of sends
 * complete operations and feed the cost model. Runs under chan->run;
 * copies need the owner's mm (@mm_ok).
 */
#include <linux/slab.h>
#include <linux/sched/signal.h>

#include "xfer.h"
#include "trace.h"

/*
 * Message @op starts, or a notification (@op NULL): it takes the next
 * message id, a message the offers that came early for it; older early
 * offers are stale. Returns the id.
 */
static u64 ordma_tx_start_msg(struct ordma_chan *chan, struct ordma_req *op)
{
	u64 id = chan->next_msg_id++;
	struct ordma_place *pl, *tmp;

	ordma_chan_assert_run(chan);
	list_for_each_entry_safe(pl, tmp, &chan->tx_early, node) {
		if (pl->msg_id > id)
			continue;
		list_del(&pl->node);
		if (op && pl->msg_id == id)
			ordma_op_take_place(op, pl);
		else
			kfree(pl);
	}
	return id;
}

/*
 * A WRITE with ORDMA_F_NOTIFY that put a piece on the wire and stops early
 * (@err: our buffer faulted; or the window failed it, which the peer
 * knows) ends with a NOTIFY; one that completes carries it on its last
 * piece (ORDMA_WIRE_F_NOTIFY, in ordma_tx_fill_op()). The NOTIFY goes
 * before any more data (header-only messages go first) and takes a message
 * id, in order with our messages.
 */
static void ordma_tx_notify(struct ordma_chan *chan, struct ordma_req *op,
			    int err)
{
	struct ordma_wire_hdr nh;

	ordma_chan_assert_run(chan);
	if (!op->notify || !op->posted)
		return;
	op->notify = false;
	ordma_hdr_start(&nh, ORDMA_WIRE_NOTIFY, 0);
	nh.notify.write_len = cpu_to_le64(op->len);
	nh.notify.offset = cpu_to_le64(op->offset);
	nh.notify.write_id = cpu_to_le64(op->op_id);
	nh.notify.msg_id = cpu_to_le64(ordma_tx_start_msg(chan, NULL));
	nh.status = cpu_to_le32(-err);
	ordma_ctrl_queue(chan, &nh);
}

/*
 * A WRITE stops before its last piece (the window failed it, or our buffer
 * faulted with @err): if pieces went out, tell the window's side that
 * nothing more comes (it may hold ranges registered for the write), then
 * notify if asked to. Nothing more of it goes out.
 */
static void ordma_tx_write_stop(struct ordma_chan *chan, struct ordma_req *op,
				int err)
{
	struct ordma_wire_hdr h;

	ordma_chan_assert_run(chan);
	/* A window's side that never heard of the write needs no stop. */
	if (op->announced && op->posted < op->len) {
		ordma_hdr_start(&h, ORDMA_WIRE_WRITE_PLACED, ORDMA_WIRE_F_LAST);
		h.placed.write_len = cpu_to_le64(op->len);
		h.placed.offset = cpu_to_le64(op->offset + op->posted);
		h.placed.token = cpu_to_le64(op->token);
		h.placed.write_id = cpu_to_le64(op->op_id);
		ordma_ctrl_queue(chan, &h);
	}
	ordma_tx_notify(chan, op, err);
	op->posted = op->len;
}

/*
 * The fields of the header of @op's next piece (at op->posted) that name
 * the operation and where the piece goes: a WRITE's, or a MSG's.
 */
static void ordma_hdr_piece(struct ordma_wire_hdr *hdr, struct ordma_req *op)
{
	if (op->op == ORDMA_OP_WRITE) {
		hdr->write.write_len = cpu_to_le64(op->len);
		hdr->write.offset = cpu_to_le64(op->offset + op->posted);
		hdr->write.start = cpu_to_le64(op->offset);
		hdr->write.token = cpu_to_le64(op->token);
		hdr->write.write_id = cpu_to_le64(op->op_id);
	} else {
		hdr->msg.msg_len = cpu_to_le64(op->len);
		hdr->msg.offset = cpu_to_le64(op->posted);
		hdr->msg.msg_id = cpu_to_le64(op->op_id);
	}
}

/*
 * A write stops (its buffer faulted) after pieces that went out bare, into
 * a standing offer that may have been revoked since: the window's side has
 * not heard of it. @tx becomes an empty last WRITE piece, which any
 * window's side takes (and acks), so that the NOTIFY that follows finds
 * the write.
 */
static void ordma_tx_write_cut(struct ordma_tx *tx, struct ordma_req *op)
{
	struct ordma_wire_hdr *hdr = tx->chunk->buf;

	ordma_hdr_start(hdr, ORDMA_WIRE_WRITE, ORDMA_WIRE_F_LAST);
	ordma_hdr_piece(hdr, op);
	tx->seg = NULL;
	tx->kind = ORDMA_TX_SEND;
	tx->chunk->len = ORDMA_HDR_LEN;
}

/*
 * The planner splits a SEND or WRITE the first time the worker looks at it:
 * a prefix through pool chunks, the rest from registered segments.
 */
static void ordma_tx_plan(struct ordma_chan *chan, struct ordma_req *op)
{
	struct ordma_plan plan;
	int mode = ordma_op_plan(chan, op, op->len, &plan);

	ordma_chan_assert_run(chan);
	if (op->op == ORDMA_OP_WRITE && mode != ORDMA_MODE_COPY)
		ordma_tx_stand_use(chan, op);

	op->zc_start = min(plan.copy_len, op->len);
	op->seg_next = op->seg_len ? op->zc_start : op->len;
	/*
	 * Where the wire is CPU work, copying while a segment registers
	 * delays the wire as much as waiting does, and costs the receiver a
	 * copy too: the planner's zero-copy choice waits.
	 */
	op->zc_only = mode == ORDMA_MODE_ZEROCOPY ||
		      (mode == ORDMA_MODE_AUTO && op->seg_len &&
		       !op->zc_start && chan->odev->model.cpu_wire);
}

/*
 * First send from @seg: the part of its registration time nobody waited
 * for was hidden behind the copies and the wire.
 */
static void ordma_seg_account(struct ordma_chan *chan, struct ordma_req *op,
			      struct ordma_seg *seg)
{
	u64 stall = 0;

	ordma_chan_assert_run(chan);
	if (seg->counted)
		return;
	seg->counted = true;
	if (op->t_wait) {
		stall = ordma_ns_since(op->t_wait);
		op->t_wait = 0;
	}
	atomic64_add(seg->reg_ns - min(seg->reg_ns, stall),
		     &chan->odev->hidden_ns);
}

/* The range the receiver offered that holds offset @off, if any. */
static struct ordma_place *ordma_tx_place(struct ordma_req *op, u64 off)
{
	struct ordma_place *pl;

	list_for_each_entry(pl, &op->places, node)
		if (off >= pl->off && off - pl->off < pl->len)
			return pl;
	return NULL;
}

/*
 * Where the next piece of @op comes from: a registered segment (returned,
 * with *n cut to it), or the copy path (NULL). -EAGAIN: wait for a segment
 * (@op->zc_only: mode zerocopy, or auto on a cpu_wire device; otherwise
 * the copy path goes on while the segment registers).
 */
static struct ordma_seg *ordma_tx_source(struct ordma_chan *chan,
					 struct ordma_req *op, u64 *n)
{
	enum ordma_seg_state state;
	u64 off = op->posted;
	struct ordma_seg *seg, *next;

	ordma_chan_assert_run(chan);
	if (off < op->zc_start) {
		*n = min(*n, op->zc_start - off);
		return NULL;
	}
	seg = ordma_op_seg(op, off);
	/*
	 * Bytes below the next segment that no segment covers: the copy path
	 * went on while no slot was free, and ordma_op_ask_segs() started the
	 * next segment at the page past them. Copy them, up to that segment.
	 */
	if (!seg && off < op->seg_next) {
		list_for_each_entry(next, &op->segs, op_node) {
			if (next->off > off) {
				*n = min(*n, next->off - off);
				break;
			}
		}
		return NULL;
	}
	/*
	 * Not asked for yet: no slot was free, or no memory. Wait only if
	 * this operation's own segments will free one as it goes on: the
	 * slots may be held by a WRITE queued behind this SEND, which cannot
	 * go on before it (a deadlock), and a failed allocation kicks
	 * nobody. Else copy.
	 */
	if (!seg)
		return op->zc_only && op->seg_next < op->len &&
		       !list_empty(&op->segs) ? ERR_PTR(-EAGAIN) : NULL;
	*n = min(*n, seg->off + seg->len - off);
	/* Without the lock (mr.c): FAILED may show before reg_done has it. */
	state = READ_ONCE(seg->state);
	if (state == ORDMA_SEG_USED) {
		ordma_seg_account(chan, op, seg);
		return seg;
	}
	if (state == ORDMA_SEG_FAILED || !op->zc_only)
		return NULL;
	return ERR_PTR(-EAGAIN);
}

/* Pieces a WRITE from segments sends one at a time, waiting for an offer. */
#define ORDMA_WRITE_PROBE	4

/*
 * Fill @tx with the next piece of a SEND or WRITE: 1 if filled, 0 if
 * the operation failed instead, -EAGAIN to wait for a segment, or for the
 * receiver's offer or the first piece's completion (a kick comes with
 * either).
 */
static int ordma_tx_fill_op(struct ordma_chan *chan, struct ordma_tx *tx,
			    struct ordma_req *op, bool mm_ok)
{
	struct ordma_chunk *chunk = tx->chunk;
	struct ordma_wire_hdr *hdr = chunk->buf;
	u64 n = op->len - op->posted, pmax = ordma_payload_max(chan, chunk);
	bool write = op->op == ORDMA_OP_WRITE;
	struct ordma_wire_hdr abort;
	struct ordma_place *pl;
	struct ordma_seg *seg;
	u64 t0;

	ordma_chan_assert_run(chan);
	if (write && op->res < 0) {
		/* The window failed it. */
		ordma_tx_write_stop(chan, op, 0);
		return 0;
	}
	if (!op->planned)
		ordma_tx_plan(chan, op);
	ordma_op_ask_segs(chan, op, op->len, op->len, false);
	seg = ordma_tx_source(chan, op, &n);
	if (IS_ERR(seg)) {
		if (!op->t_wait)
			op->t_wait = ordma_now();
		return PTR_ERR(seg);
	}
	if (!write && !op->op_id)
		op->op_id = ordma_tx_start_msg(chan, op);
	pl = ordma_tx_place(op, op->posted);
	/*
	 * Zero-copy with no offer for these bytes while a piece is on the
	 * wire: wait for the offer (Documentation/ordma/overlap.rst, "Pacing
	 * zero-copy pieces").
	 */
	if (seg && !pl && op->inflight &&
	    (op->offer_end ? op->posted >= op->offer_end :
	     write ? op->posted < ORDMA_WRITE_PROBE * pmax : !op->echoed))
		return -EAGAIN;
	if (pl)
		n = min(n, pl->off + pl->len - op->posted);
	/*
	 * A placed piece from a segment is one RDMA WRITE of any size, but
	 * the first piece of a message is at most a chunk's: its header tells
	 * the receiver the message's length, and with it which segments to
	 * register past the early offers.
	 */
	if (!pl || !seg || !op->posted)
		n = min(n, pmax);

	/* As much as the pages' scatter entries can carry, behind a header. */
	if (seg) {
		u32 nsge;

		n = ordma_seg_sges(seg, op->addr + op->posted, n, 0, NULL,
				   chan->send_sge - 1, &nsge);
	}
	tx->seg = seg;
	t0 = ordma_now();
	if (!op->posted)
		op->t_start = t0;
	if (seg) {
		tx->seg_off = op->addr + op->posted - seg->uaddr;
	} else if (!ordma_op_reachable(op, mm_ok) ||
		   ordma_copy_from_op(chan, op, op->posted, hdr + 1, n)) {
		op->res = -EFAULT;
		/*
		 * A buffer that faulted aborts the message. Without the mm the
		 * owner is exiting: its channels close, and the peer's receive
		 * fails with ENOTCONN, not with an abort. A message that faulted
		 * before its first byte never started: its id is the next one's.
		 */
		if (op->posted && !write && mm_ok &&
		    !fatal_signal_pending(current)) {
			ordma_hdr_start(&abort, ORDMA_WIRE_MSG_ABORT, 0);
			abort.status = cpu_to_le32(EFAULT);
			ordma_ctrl_queue(chan, &abort);
		}
		if (!op->posted && !write) {
			list_splice_init(&op->places, &chan->tx_early);
			chan->next_msg_id--;
			op->op_id = 0;
		}
		if (write && op->posted && !op->announced) {
			/* Its pieces went out bare: name it, then stop. */
			ordma_tx_write_cut(tx, op);
			ordma_tx_notify(chan, op, -EFAULT);
			op->posted = op->len;
			return 1;
		}
		if (write)
			ordma_tx_write_stop(chan, op, -EFAULT);
		op->posted = op->len;	/* nothing more goes out */
		return 0;
	} else if (n >= PAGE_SIZE) {
		spin_lock(&chan->odev->model_lock);
		ordma_model_copy(&chan->odev->model, n, ordma_ns_since(t0));
		spin_unlock(&chan->odev->model_lock);
	}
	ordma_hdr_start(hdr, write ? ORDMA_WIRE_WRITE : ORDMA_WIRE_MSG, 0);
	ordma_hdr_piece(hdr, op);
	hdr->payload_len = cpu_to_le32(n);
	if (pl) {
		/*
		 * The bytes go by RDMA WRITE; the header says where. The
		 * placed layouts keep the WRITE's and the MSG's other fields.
		 */
		hdr->payload_len = 0;
		if (write) {
			hdr->opcode = ORDMA_WIRE_WRITE_PLACED;
			hdr->placed.placed = cpu_to_le64(n);
		} else {
			hdr->opcode = ORDMA_WIRE_MSG_PLACED;
			hdr->msg.placed = cpu_to_le64(n);
		}
		tx->raddr = pl->addr + (op->posted - pl->off);
		tx->rkey = pl->rkey;
		tx->kind = ORDMA_TX_PLACED;
		if (op->standing) {
			hdr->flags = cpu_to_le16(ORDMA_WIRE_F_STANDING);
			/*
			 * A whole write is one RDMA WRITE with immediate. Of
			 * several pieces, all but the last are RDMA WRITEs
			 * alone; the last one's header announces the whole
			 * write, which RC ordering has placed by then. Without
			 * immediate data (odev->imm) a whole write is such a
			 * last piece.
			 */
			if (!op->posted && n == op->len && chan->odev->imm) {
				tx->kind = ORDMA_TX_WRITE_IMM;
			} else if (op->posted + n < op->len) {
				tx->kind = ORDMA_TX_WRITE;
			} else {
				hdr->placed.offset = cpu_to_le64(op->offset);
				hdr->placed.placed = cpu_to_le64(op->len);
			}
		}
	}
	/*
	 * A message of one small piece from the chunk goes without its header
	 * (a packet less where the header would cross an MTU), unless the
	 * header is due to tell the peer of our receives.
	 */
	if (!write && !seg && !pl && !op->posted && n == op->len &&
	    n <= ORDMA_WIRE_SIMM_MAX && chan->odev->imm &&
	    !ordma_rx_credit_due(chan))
		tx->kind = ORDMA_TX_SEND_IMM;
	op->posted += n;
	if (op->posted == op->len) {
		hdr->flags |= cpu_to_le16(ORDMA_WIRE_F_LAST);
		if (write && op->notify) {
			/* The notification rides on the last piece. */
			op->notify = false;
			ordma_tx_start_msg(chan, NULL);
			hdr->flags |= cpu_to_le16(ORDMA_WIRE_F_NOTIFY);
		}
	}
	chunk->len = ORDMA_HDR_LEN + n;
	return 1;
}

/* Serve the head remote read into @chunk; false if nothing to send. */
static bool ordma_tx_fill_read_resp(struct ordma_chan *chan,
				    struct ordma_chunk *chunk, bool mm_ok)
{
	struct ordma_chunk *req;
	struct ordma_wire_hdr *rh, *hdr = chunk->buf;
	u64 total, sent, start, n;
	struct ordma_winmem mem = {};
	int status;

	ordma_chan_assert_run(chan);
	req = list_first_entry_or_null(&chan->remote_reads,
				       struct ordma_chunk, node);
	if (!req)
		return false;
	rh = req->buf;
	total = le64_to_cpu(rh->read.read_len);
	sent = le64_to_cpu(rh->read.offset);
	start = le64_to_cpu(rh->read.start);
	down_read(&chan->ofile->windows_rwsem);
	status = ordma_window_check(chan->ofile, le64_to_cpu(rh->read.token),
				    start, total, ORDMA_ACCESS_REMOTE_READ,
				    &mem);
	status = ordma_rx_token_status(chan, status);
	n = min_t(u64, total - sent, ordma_payload_max(chan, chunk));

	ordma_hdr_start(hdr, ORDMA_WIRE_READ_RESP, 0);
	hdr->read.read_len = rh->read.read_len;
	hdr->read.offset = cpu_to_le64(sent);
	hdr->read.read_id = rh->read.read_id;
	if (!status && ((!mem.kmem.nr && (!mm_ok || !chan->ofile->mm)) ||
			ordma_copy_from_win(chan, &mem, start + sent, hdr + 1,
					    n)))
		status = -EREMOTEIO;
	up_read(&chan->ofile->windows_rwsem);
	if (status) {
		hdr->status = cpu_to_le32(-status);
		n = 0;
		sent = total;
	} else {
		sent += n;
	}
	hdr->payload_len = cpu_to_le32(n);
	chunk->len = ORDMA_HDR_LEN + n;
	rh->read.offset = cpu_to_le64(sent);
	if (sent == total) {
		list_del(&req->node);
		ordma_rx_recycle(chan, req);
	}
	return true;
}

/* The next SEND or WRITE with bytes left to put on the wire. */
static struct ordma_req *ordma_tx_next_op(struct ordma_chan *chan)
{
	struct ordma_req *op;

	ordma_chan_assert_run(chan);
	list_for_each_entry(op, &chan->sendq, node)
		if (op->posted < op->len)
			return op;
	list_for_each_entry(op, &chan->writeq, node)
		if (op->posted < op->len)
			return op;
	return NULL;
}

static void ordma_tx_fill_credit(struct ordma_chunk *chunk)
{
	struct ordma_wire_hdr *hdr = chunk->buf;

	ordma_hdr_start(hdr, ORDMA_WIRE_CREDIT, 0);
	chunk->len = ORDMA_HDR_LEN;
}

/* No credit: is anything waiting for one? Only with the event enabled. */
static void ordma_tx_trace_stall(struct ordma_chan *chan)
{
	struct ordma_req *op = ordma_tx_next_op(chan);

	if (op || !list_empty(&chan->remote_reads))
		trace_ordma_credit_stall(ordma_trace_qpn(chan),
					 op ? op->tid : 0, chan->tx_credit_peer,
					 chan->tx_credit_sent);
}

bool ordma_tx_progress(struct ordma_chan *chan, bool mm_ok)
{
	struct ordma_ctrl *c;
	struct ordma_req *op;
	struct ordma_tx *tx;
	bool progress = false, data;
	int filled;

	ordma_chan_assert_run(chan);
	/* The connecting side speaks first (odev->initiator_first). */
	if (chan->tx_wait_peer)
		return false;
	while (chan->tx_posted < ORDMA_TX_DEPTH) {
		c = list_first_entry_or_null(&chan->ctrl, struct ordma_ctrl,
					     node);
		op = NULL;
		data = false;
		/*
		 * When every message counts, a header-only one may wait for
		 * a credit too; nothing overtakes it, but a CREDIT may.
		 */
		if (c && !ordma_tx_ctrl_credit(chan, &c->hdr)) {
			c = NULL;
		} else if (!c && ordma_tx_credit(chan)) {
			op = ordma_tx_next_op(chan);
			data = op || !list_empty(&chan->remote_reads);
		} else if (!c && trace_ordma_credit_stall_enabled()) {
			ordma_tx_trace_stall(chan);
		}
		if (!c && !data &&
		    ((!ordma_rx_credit_due(chan) && !chan->tx_hello) ||
		     !ordma_tx_ctrl_credit(chan, NULL)))
			break;
		tx = ordma_tx_get(chan);
		if (!tx)
			break;

		if (c) {
			memcpy(tx->chunk->buf, &c->hdr, sizeof(c->hdr));
			tx->chunk->len = ORDMA_HDR_LEN;
			ordma_ctrl_done(chan, c);
			filled = true;
		} else if (!data) {
			ordma_tx_fill_credit(tx->chunk);
			filled = true;
		} else if (!list_empty(&chan->remote_reads)) {
			filled = ordma_tx_fill_read_resp(chan, tx->chunk, mm_ok);
			op = NULL;
		} else {
			filled = ordma_tx_fill_op(chan, tx, op, mm_ok);
			if (filled == -EAGAIN && ordma_rx_credit_due(chan)) {
				/* Tell the credits while the segment registers. */
				ordma_tx_fill_credit(tx->chunk);
				filled = true;
				op = NULL;
			} else if (filled == -EAGAIN) {
				/* Kicked again when the segment is ready. */
				ordma_tx_put(chan, tx);
				break;
			}
			if (!filled && !op->inflight)
				ordma_op_complete(chan, op, op->res);
			else if (!filled)
				ordma_op_put_segs(chan, op, op->posted);
		}
		progress = true;
		if (!filled) {
			ordma_tx_put(chan, tx);
			continue;
		}
		if (ordma_tx_post(chan, tx, op)) {
			ordma_chan_fail(chan, -EIO);
			break;
		}
		/* Segments the copy path overtook are of no use any more. */
		if (op)
			ordma_op_put_segs(chan, op, op->posted);
	}
	return progress;
}

/*
 * Feed the cost model from the send completions. While the send queue
 * stays busy the wire is the bottleneck: bytes completed over the busy time
 * (sampled every ORDMA_WIRE_WINDOW bytes, and when the queue drains) is its
 * rate. Completions arrive in batches, so single intervals would not do. A
 * small operation alone on an idle queue measures the fixed cost of a work
 * request.
 */
#define ORDMA_WIRE_WINDOW	(4U << 20)

#define ORDMA_WIRE_MIN		(256U << 10)

static void ordma_tx_sample(struct ordma_chan *chan, u32 len,
			    struct ordma_req *op)
{
	struct ordma_dev *odev = chan->odev;
	u64 now;

	ordma_chan_assert_run(chan);
	/* Most completions sample nothing: no clock, no device-wide lock. */
	chan->tx_bytes += len;
	if (chan->tx_bytes >= ORDMA_WIRE_WINDOW ||
	    (!chan->tx_posted && chan->tx_bytes >= ORDMA_WIRE_MIN)) {
		now = ordma_now();
		spin_lock(&odev->model_lock);
		ordma_model_wire(&odev->model, chan->tx_bytes,
				 ordma_ns_since(chan->tx_mark));
		spin_unlock(&odev->model_lock);
		chan->tx_bytes = 0;
		chan->tx_mark = now;
	}
	if (op && !op->res && op->t_start && op->len <= PAGE_SIZE &&
	    !chan->tx_posted) {
		spin_lock(&odev->model_lock);
		ordma_model_wr(&odev->model, ordma_ns_since(op->t_start));
		spin_unlock(&odev->model_lock);
	}
}

/* A send of ours completed: the peer's HCA has the bytes. */
void ordma_tx_complete(struct ordma_chan *chan, struct ordma_tx *tx)
{
	struct ordma_req *op = tx->op;
	struct ordma_seg *seg = tx->seg;

	ordma_chan_assert_run(chan);
	if (unlikely(tx->lost)) {
		/* Its post failed, and the driver had queued it after all. */
		tx->lost = false;
		ordma_tx_put(chan, tx);
		return;
	}
	chan->tx_posted--;
	chan->tx_moved = jiffies;
	if (op) {
		op->inflight--;
		op->echoed = true;
	}
	if (tx->status == IB_WC_SUCCESS) {
		ordma_tx_sample(chan, tx->chunk->len,
				op && !op->inflight ? op : NULL);
	} else {
		ordma_chan_wr_failed(chan, tx->status);
		/* Not delivered: the operation fails, as the channel did. */
		if (op && !op->res) {
			spin_lock_irq(&chan->lock);
			op->res = chan->err ? chan->err : -EIO;
			spin_unlock_irq(&chan->lock);
		}
	}
	if (seg) {
		seg->sends--;
		tx->seg = NULL;
	}
	ordma_tx_put(chan, tx);
	if (!op)
		return;
	/* Once nothing of it is on the wire, this gives back every segment. */
	ordma_op_put_segs(chan, op, op->posted);
	if (op->inflight || op->posted < op->len)
		return;
	if (op->op == ORDMA_OP_SEND || op->res || op->standing)
		ordma_op_complete(chan, op, op->res ? op->res : (s64)op->len);
	/*
	 * A successful WRITE completes when the peer acknowledges it, or
	 * here if it went into a standing offer.
	 */
}
