// SPDX-License-Identifier: GPL-2.0
/*
 * The data path of a channel (copy path): every byte goes through pool
 * chunks. The sender copies from the user buffer into a chunk and SENDs it;
 * the receiver copies from the chunk it received into the user buffer.
 *
 * One worker per channel (chan->work on ordma_wq) does all of it, with the
 * owning process's mm adopted (kthread_use_mm), so user copies happen in a
 * kernel thread on the process's behalf. Completion handlers only append to
 * chan->done under chan->lock and kick the channel. A submission appends to
 * chan->submitted and then runs a few passes itself, in the owner's task,
 * when the worker is idle (ordma_chan_run_inline); a task of the owner
 * waiting for completions takes the kicks and runs the passes between its
 * sleeps (ordma_file_wait): that saves waking the worker for every step.
 * Everything in struct ordma_chan marked "worker" is touched only under
 * chan->run, by the worker or such a task (or by ordma_xfer_flush() once
 * both are stopped).
 *
 * Some reads are lockless on purpose: the pool's quota and free count
 * (READ_ONCE, a heuristic for ring sizes) and chan->phase in accept's scan
 * (re-checked under chan->lock before anything depends on it).
 *
 * Chunk budget of a channel: at most quota / 2 (at least 1) chunks for
 * receiving and the rest of the quota for sending, so a flood in one
 * direction cannot starve the other. Receive chunks are recycled into the
 * ring once consumed; when the pool has none, the channel registers a pool
 * waiter and the peer gets no new credits: back-pressure, no loss.
 *
 * Credits (wire.h): every header we send carries our receives posted minus
 * the header-only messages that used one; a message with payload goes out
 * only while the peer's count is ahead of our tx_credit_sent. Header-only
 * messages are outside the count: they never wait (RNR retry catches the
 * rare one that finds no buffer) and never make the peer owe a CREDIT, so
 * credits can neither deadlock nor ping-pong. Without credits the data path
 * would live in RNR retry, which costs rdma_rxe a timer tick each time.
 */
#include <linux/slab.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/kthread.h>
#include <linux/uaccess.h>

#include "chan.h"

/* A header-only message waiting for a send slot. */
struct ordma_ctrl {
	struct list_head node;
	struct ordma_wire_hdr hdr;
};

/*
 * A range of a message the receiver offered for RDMA WRITE; @msg_id and
 * @buf_len matter while it waits on chan->tx_early for its message.
 */
struct ordma_place {
	struct list_head node;
	u64 off;
	u64 len;
	u64 addr;
	u32 rkey;
	u64 msg_id;
	u64 buf_len;
};

static void ordma_chan_pool_wake(struct ordma_pool_waiter *w)
{
	ordma_chan_kick(container_of(w, struct ordma_chan, pool_waiter));
}

/*
 * The RDMA WRITE of a placed piece is unsignaled: its completion comes only
 * when it failed (bad remote key or range, retries exhausted). A flush
 * only follows a QP error that was reported already.
 */
static void ordma_write_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ordma_chan *chan = container_of(wc->wr_cqe, struct ordma_chan,
					       write_cqe);

	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		ordma_chan_fail(chan, -EIO);
}

void ordma_xfer_init(struct ordma_chan *chan)
{
	INIT_LIST_HEAD(&chan->rx_ring);
	INIT_LIST_HEAD(&chan->sendq);
	INIT_LIST_HEAD(&chan->recvq);
	INIT_LIST_HEAD(&chan->writeq);
	INIT_LIST_HEAD(&chan->readq);
	INIT_LIST_HEAD(&chan->rx_msgs);
	INIT_LIST_HEAD(&chan->remote_reads);
	INIT_LIST_HEAD(&chan->ctrl);
	INIT_LIST_HEAD(&chan->pool_waiter.node);
	chan->pool_waiter.fn = ordma_chan_pool_wake;
	INIT_LIST_HEAD(&chan->segs);
	INIT_LIST_HEAD(&chan->reg_todo);
	INIT_LIST_HEAD(&chan->reg_done);
	INIT_WORK(&chan->reg_work, ordma_mr_work);
	chan->write_cqe.done = ordma_write_done;
	chan->next_op_id = 1;
	chan->next_msg_id = 1;
	INIT_LIST_HEAD(&chan->tx_early);
	INIT_LIST_HEAD(&chan->standing);
	INIT_LIST_HEAD(&chan->tx_standing);
}

/* Wake the worker, unless ordma_chan_close() stopped it. Any context. */
static void ordma_chan_queue(struct ordma_chan *chan)
{
	unsigned long flags;

	spin_lock_irqsave(&chan->lock, flags);
	if (!chan->closing)
		queue_work(ordma_wq, &chan->work);
	spin_unlock_irqrestore(&chan->lock, flags);
}

/*
 * Hand @chan to a task of the owner waiting in ordma_file_wait(), if there
 * is one: it runs the passes itself; else to a submitter running them
 * (ordma_chan_run_submitter()), which runs them once more. Any context;
 * chan->lock is held and @chan is not closing, so it holds its file and a
 * reference can be taken.
 */
static bool ordma_file_take_kick(struct ordma_file *ofile,
				 struct ordma_chan *chan)
{
	unsigned long flags;
	bool taken, runner;

	spin_lock_irqsave(&ofile->run_lock, flags);
	runner = ofile->runners || chan->runner_busy;
	if (runner && list_empty(&chan->run_node)) {
		ordma_chan_get(chan);
		list_add_tail(&chan->run_node, &ofile->runq);
	} else if (!runner && chan->submitters) {
		chan->submit_kicked = true;
	}
	taken = runner || chan->submitters;
	spin_unlock_irqrestore(&ofile->run_lock, flags);
	/* A runner busy with the passes finds the runq before it sleeps. */
	if (runner && wq_has_sleeper(&ofile->cq_wait))
		wake_up_all(&ofile->cq_wait);
	return taken;
}

/* ordma_chan_kick() with chan->lock held. */
static void ordma_chan_kick_locked(struct ordma_chan *chan)
{
	lockdep_assert_held(&chan->lock);
	if (!chan->closing && !ordma_file_take_kick(chan->ofile, chan))
		queue_work(ordma_wq, &chan->work);
}

/**
 * ordma_chan_kick() - make the data path run
 * @chan: the channel
 *
 * Any context. A task of the owner waiting for completions runs it if there
 * is one, else the worker does. Does nothing once ordma_chan_close() stopped
 * both: a late pool wake-up (the channel is freed after an RCU grace period)
 * must not reach the file, which may be gone.
 */
void ordma_chan_kick(struct ordma_chan *chan)
{
	unsigned long flags;

	spin_lock_irqsave(&chan->lock, flags);
	ordma_chan_kick_locked(chan);
	spin_unlock_irqrestore(&chan->lock, flags);
}

/* Completion handler of every work request: hand the chunk to the worker. */
void ordma_xfer_wc_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ordma_chunk *chunk = container_of(wc->wr_cqe,
						 struct ordma_chunk, cqe);
	struct ordma_chan *chan = chunk->owner;
	unsigned long flags;

	chunk->status = wc->status;
	chunk->got_imm = false;
	chunk->sent_imm = false;
	if (wc->status == IB_WC_SUCCESS && (wc->opcode & IB_WC_RECV)) {
		chunk->len = wc->byte_len;
		if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM) {
			chunk->got_imm = true;
			chunk->imm = be32_to_cpu(wc->ex.imm_data);
		} else if (wc->wc_flags & IB_WC_WITH_IMM) {
			chunk->sent_imm = true;
			chunk->imm = be32_to_cpu(wc->ex.imm_data);
		}
	}
	spin_lock_irqsave(&chan->lock, flags);
	list_add_tail(&chunk->node, &chan->done);
	ordma_chan_kick_locked(chan);
	spin_unlock_irqrestore(&chan->lock, flags);
}

static void ordma_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	ordma_xfer_wc_done(cq, wc);
}

static void ordma_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	ordma_xfer_wc_done(cq, wc);
}

static u32 ordma_quota(struct ordma_chan *chan)
{
	return READ_ONCE(chan->odev->pool.quota);
}

static u32 ordma_rx_cap(struct ordma_chan *chan)
{
	return max(1U, ordma_quota(chan) / 2);
}

static u32 ordma_tx_cap(struct ordma_chan *chan)
{
	u32 quota = ordma_quota(chan);

	return max(1U, quota - min(quota, ordma_rx_cap(chan)));
}

/* A chunk from the pool, or NULL with a pool waiter registered. */
static struct ordma_chunk *ordma_xfer_get(struct ordma_chan *chan)
{
	struct ordma_pool *pool = &chan->odev->pool;
	struct ordma_chunk *chunk;

	for (;;) {
		chunk = ordma_chunk_get(pool, &chan->held);
		if (chunk)
			return chunk;
		if (ordma_pool_wait(pool, &chan->pool_waiter, &chan->held))
			return NULL;
	}
}

/* ---- completing operations ---------------------------------------------- */

/* Give back the segments of @op no send uses any more, up to @upto. */
static void ordma_op_put_segs(struct ordma_chan *chan, struct ordma_req *op,
			      u64 upto)
{
	struct ordma_seg *seg, *tmp;

	if (!op->planned)
		return;
	list_for_each_entry_safe(seg, tmp, &op->segs, op_node) {
		if (seg->off + seg->len > upto || seg->sends)
			break;
		list_del_init(&seg->op_node);
		ordma_seg_put(chan, seg);
	}
}

static void ordma_op_free_places(struct ordma_req *op)
{
	struct ordma_place *pl, *tmp;

	list_for_each_entry_safe(pl, tmp, &op->places, node) {
		list_del(&pl->node);
		kfree(pl);
	}
}

static void ordma_op_complete(struct ordma_chan *chan, struct ordma_req *op,
			      s64 res)
{
	ordma_op_put_segs(chan, op, U64_MAX);
	if (op->op == ORDMA_OP_SEND || op->op == ORDMA_OP_WRITE)
		ordma_op_free_places(op);
	list_del_init(&op->node);
	atomic64_inc(&chan->ops);
	atomic64_inc(&chan->odev->ops);
	if (res < 0) {
		atomic64_inc(&chan->errors);
		atomic64_inc(&chan->odev->errors);
	}
	atomic64_dec(&chan->inflight);
	ordma_file_complete(chan->ofile, op, res);
}

static struct ordma_req *ordma_op_find(struct list_head *q, u64 op_id)
{
	struct ordma_req *op;

	list_for_each_entry(op, q, node)
		if (op->op_id == op_id)
			return op;
	return NULL;
}

/* ---- receiving ------------------------------------------------------------ */

/*
 * Receive buffers to keep posted: a fair share of the pool among the
 * channels on the device (a quarter of the pool for receiving), between 1
 * and ORDMA_RX_DEPTH. Idle rings above the share shrink as messages come.
 */
static u32 ordma_rx_target(struct ordma_chan *chan)
{
	struct ordma_pool *pool = &chan->odev->pool;
	u32 ends = max(1, atomic_read(&chan->odev->nchans));
	u32 share = READ_ONCE(pool->target_chunks) / (4 * ends);

	return clamp_t(u32, share, 1,
		       min_t(u32, ORDMA_RX_DEPTH, ordma_rx_cap(chan)));
}

/*
 * Receive rings grow past their first buffer only while half of the
 * pool is free, so idle rings cannot take what senders need. A heuristic:
 * the counters are read without the pool lock.
 */
static bool ordma_pool_plenty(struct ordma_chan *chan)
{
	struct ordma_pool *pool = &chan->odev->pool;

	return READ_ONCE(pool->chunks_free) > READ_ONCE(pool->chunks_total) / 2;
}

/*
 * A receive chunk is free again: keep it for the ring or give it back. The
 * channel always keeps one (reserved when it was set up), so it can always
 * receive.
 */
static void ordma_rx_recycle(struct ordma_chan *chan, struct ordma_chunk *chunk)
{
	u32 ring = chan->rx_posted + chan->rx_spare;

	if (ordma_chunk_room(chunk) < chan->rx_size ||
	    (ring && (ring >= ordma_rx_target(chan) ||
		      chan->rx_held > ordma_rx_cap(chan) ||
		      !ordma_pool_plenty(chan)))) {
		chan->rx_held--;
		ordma_chunk_put(chunk);
		return;
	}
	list_add_tail(&chunk->node, &chan->rx_ring);
	chan->rx_spare++;
}

static int ordma_rx_post(struct ordma_chan *chan, struct ordma_chunk *chunk)
{
	struct ib_recv_wr wr = {};
	struct ib_sge sge;
	int ret;

	chunk->owner = chan;
	chunk->cqe.done = ordma_rx_done;
	ib_dma_sync_single_for_device(chan->odev->ibdev, chunk->dma,
				      chan->rx_size, DMA_FROM_DEVICE);
	sge.addr = chunk->dma;
	sge.length = chan->rx_size;
	sge.lkey = chan->odev->pd->local_dma_lkey;
	wr.wr_cqe = &chunk->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ret = ib_post_recv(chan->qp, &wr, NULL);
	if (!ret)
		chan->rx_credit_posted++;
	return ret;
}

/* Keep the receive ring full. */
static bool ordma_rx_refill(struct ordma_chan *chan)
{
	u32 target = ordma_rx_target(chan);
	struct ordma_chunk *chunk;
	bool progress = false;

	while (chan->rx_posted < target) {
		chunk = list_first_entry_or_null(&chan->rx_ring,
						 struct ordma_chunk, node);
		if (chunk) {
			list_del(&chunk->node);
			chan->rx_spare--;
		} else {
			if (chan->rx_held >= ordma_rx_cap(chan))
				break;
			if (chan->rx_posted && !ordma_pool_plenty(chan))
				break;
			chunk = ordma_xfer_get(chan);
			if (!chunk)
				break;
			chan->rx_held++;
			if (ordma_chunk_room(chunk) < chan->rx_size) {
				/* chunk_bytes shrank under us: unusable. */
				chan->rx_held--;
				ordma_chunk_put(chunk);
				ordma_chan_fail(chan, -ENOBUFS);
				break;
			}
		}
		if (ordma_rx_post(chan, chunk)) {
			ordma_rx_recycle(chan, chunk);
			ordma_chan_fail(chan, -EIO);
			break;
		}
		chan->rx_posted++;
		progress = true;
	}
	return progress;
}

/* Start a header of ours in @hdr: all zero but version, @opcode, @flags. */
static void ordma_hdr_start(struct ordma_wire_hdr *hdr, u8 opcode, u16 flags)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->version = ORDMA_WIRE_VERSION;
	hdr->opcode = opcode;
	hdr->flags = cpu_to_le16(flags);
}

/*
 * Count a received message of @len bytes of payload (of the payload class
 * if @payload: it used one of the receives we announced).
 */
static void ordma_rx_account(struct ordma_chan *chan, bool payload, u64 len)
{
	if (payload)
		chan->rx_credit_used++;
	else
		chan->rx_credit_hdr++;
	atomic64_add(len, &chan->bytes_rx);
	atomic64_add(len, &chan->odev->bytes_rx);
}

static void ordma_ctrl_queue(struct ordma_chan *chan, u8 opcode, u64 op_id,
			     int status, const struct ordma_wire_hdr *req)
{
	struct ordma_ctrl *c;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c) {
		ordma_chan_fail(chan, -ENOMEM);
		return;
	}
	if (req)
		c->hdr = *req;
	c->hdr.version = ORDMA_WIRE_VERSION;
	c->hdr.opcode = opcode;
	c->hdr.op_id = cpu_to_le64(op_id);
	if (status)
		c->hdr.status = cpu_to_le32(-status);
	list_add_tail(&c->node, &chan->ctrl);
}

/* Bytes of one of our reads, or its failure. */
static void ordma_rx_read_resp(struct ordma_chan *chan,
			       struct ordma_wire_hdr *hdr, u32 plen, bool mm_ok)
{
	struct ordma_req *op = ordma_op_find(&chan->readq,
					    le64_to_cpu(hdr->op_id));
	u64 off = le64_to_cpu(hdr->offset);
	u32 status = le32_to_cpu(hdr->status);

	if (!op)
		return;		/* it already failed */
	if (status) {
		ordma_op_complete(chan, op, -(s64)min_t(u32, status, MAX_ERRNO));
		return;
	}
	if (off != op->done || plen > op->len - op->done) {
		ordma_chan_fail(chan, -EPROTO);
		return;
	}
	if (!mm_ok ||
	    copy_to_user(u64_to_user_ptr(op->addr + off), hdr + 1, plen)) {
		ordma_op_complete(chan, op, -EFAULT);
		return;
	}
	op->done += plen;
	if (op->done == op->len)
		ordma_op_complete(chan, op, op->len);
}

/*
 * Take an offer for message @op (started, @op->op_id set) if it fits the
 * receive buffer; pieces never go past the message's end, whatever the
 * range. Consumes @pl.
 */
static void ordma_op_take_place(struct ordma_req *op, struct ordma_place *pl)
{
	if (op->len > pl->buf_len || pl->off >= op->len) {
		kfree(pl);
		return;
	}
	op->offer_end = max(op->offer_end, pl->off + pl->len);
	list_add_tail(&pl->node, &op->places);
}

/* Offers we hold for @op or for messages not started; ranges sent past go. */
static u32 ordma_places_prune(struct list_head *places, u64 posted)
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

/*
 * Message @op starts, or a notification (@op NULL): it takes the next
 * message id, a message the offers that came early for it; older early
 * offers are stale. Returns the id.
 */
static u64 ordma_tx_start_msg(struct ordma_chan *chan, struct ordma_req *op)
{
	u64 id = chan->next_msg_id++;
	struct ordma_place *pl, *tmp;

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
	struct ordma_wire_hdr nh = {};

	if (!op->notify || !op->posted)
		return;
	op->notify = false;
	nh.total_len = cpu_to_le64(op->len);
	nh.offset = cpu_to_le64(op->offset);
	nh.base = cpu_to_le64(op->op_id);
	ordma_ctrl_queue(chan, ORDMA_WIRE_NOTIFY,
			 ordma_tx_start_msg(chan, NULL), err, &nh);
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
	struct ordma_wire_hdr h = {};

	/* A window's side that never heard of the write needs no stop. */
	if (op->announced && op->posted < op->len) {
		h.flags = cpu_to_le16(ORDMA_WIRE_F_LAST);
		h.offset = cpu_to_le64(op->offset + op->posted);
		h.total_len = cpu_to_le64(op->len);
		h.token = cpu_to_le64(op->token);
		ordma_ctrl_queue(chan, ORDMA_WIRE_WRITE_PLACED, op->op_id, 0, &h);
	}
	ordma_tx_notify(chan, op, err);
	op->posted = op->len;
}

/* ---- standing offers of the peer's windows (the writer's side) ---------- */

/*
 * The window's side of our writes may offer a whole window once, for as
 * long as it stays exposed (version 7): a standing offer, on
 * chan->tx_standing (struct ordma_place, @msg_id the window's token, @off
 * and @len window offsets). A write planned while one covers its range
 * goes into it: every piece is an RDMA WRITE, the last one followed by a
 * WRITE_PLACED with ORDMA_WIRE_F_STANDING that announces the whole write
 * (a write of one piece: an RDMA WRITE with immediate data), and the write
 * completes when its last piece is delivered. A REVOKE takes the offer
 * back; writes that still have pieces to send go on through chunks (the
 * window's side fails them), and the REVOKED we answer follows every
 * piece we posted into the offer.
 */
static struct ordma_place *ordma_tx_stand_find(struct ordma_chan *chan,
					       u64 token)
{
	struct ordma_place *st;

	list_for_each_entry(st, &chan->tx_standing, node)
		if (st->msg_id == token)
			return st;
	return NULL;
}

/* A PLACE with ORDMA_WIRE_F_STANDING, its fields checked by the caller. */
static int ordma_tx_stand_offer(struct ordma_chan *chan,
				struct ordma_wire_hdr *hdr)
{
	u64 token = le64_to_cpu(hdr->op_id);
	struct ordma_place *st;

	if (!(le16_to_cpu(hdr->flags) & ORDMA_WIRE_F_WRITE) ||
	    ordma_tx_stand_find(chan, token) ||
	    chan->ntx_standing >= ORDMA_STAND_DEPTH)
		return -EPROTO;
	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return 0;	/* declined; REVOKE is still answered */
	st->msg_id = token;
	st->off = le64_to_cpu(hdr->offset);
	st->len = le64_to_cpu(hdr->total_len);
	st->addr = le64_to_cpu(hdr->base);
	st->rkey = le64_to_cpu(hdr->token);
	list_add_tail(&st->node, &chan->tx_standing);
	chan->ntx_standing++;
	return 0;
}

/* Plan @op (a WRITE) into a standing offer that covers it, if one does. */
static void ordma_tx_stand_use(struct ordma_chan *chan, struct ordma_req *op)
{
	struct ordma_place *st = ordma_tx_stand_find(chan, op->token), *pl;

	if (!st || op->offset < st->off || op->offset - st->off > st->len ||
	    op->len > st->len - (op->offset - st->off))
		return;
	pl = kzalloc(sizeof(*pl), GFP_KERNEL);
	if (!pl)
		return;
	pl->off = 0;
	pl->len = op->len;
	pl->addr = st->addr + (op->offset - st->off);
	pl->rkey = st->rkey;
	pl->msg_id = op->op_id;
	pl->buf_len = op->len;
	list_add_tail(&pl->node, &op->places);
	op->offer_end = op->len;
	op->standing = true;
}

/*
 * The fields of the header of @op's next piece (at op->posted) that name
 * the operation and where the piece goes.
 */
static void ordma_hdr_piece(struct ordma_wire_hdr *hdr, struct ordma_req *op)
{
	hdr->total_len = cpu_to_le64(op->len);
	hdr->op_id = cpu_to_le64(op->op_id);
	if (op->op == ORDMA_OP_WRITE) {
		hdr->offset = cpu_to_le64(op->offset + op->posted);
		hdr->base = cpu_to_le64(op->offset);
		hdr->token = cpu_to_le64(op->token);
	} else {
		hdr->offset = cpu_to_le64(op->posted);
	}
}

/*
 * A write stops (its buffer faulted) after pieces that went out bare, into
 * a standing offer that may have been revoked since: the window's side has
 * not heard of it. @chunk becomes an empty last WRITE piece, which any
 * window's side takes (and acks), so that the NOTIFY that follows finds
 * the write.
 */
static void ordma_tx_write_cut(struct ordma_chunk *chunk, struct ordma_req *op)
{
	struct ordma_wire_hdr *hdr = chunk->buf;

	ordma_hdr_start(hdr, ORDMA_WIRE_WRITE, ORDMA_WIRE_F_LAST);
	ordma_hdr_piece(hdr, op);
	chunk->seg = NULL;
	chunk->rkey = 0;
	chunk->len = ORDMA_HDR_LEN;
}

/* The window's side takes the standing offer of window @token back. */
static void ordma_tx_stand_revoke(struct ordma_chan *chan, u64 token)
{
	struct ordma_place *st = ordma_tx_stand_find(chan, token);
	struct ordma_req *op;

	if (st) {
		list_del(&st->node);
		kfree(st);
		chan->ntx_standing--;
	}
	list_for_each_entry(op, &chan->writeq, node) {
		if (!op->standing || op->token != token ||
		    op->posted >= op->len)
			continue;
		op->standing = false;
		ordma_op_free_places(op);
		op->offer_end = 0;
	}
	ordma_ctrl_queue(chan, ORDMA_WIRE_REVOKED, token, 0, NULL);
}

static void ordma_tx_stand_drop(struct ordma_chan *chan)
{
	struct ordma_place *st, *tmp;

	list_for_each_entry_safe(st, tmp, &chan->tx_standing, node) {
		list_del(&st->node);
		kfree(st);
	}
	chan->ntx_standing = 0;
}

/*
 * The receiver offers a range of a message's receive buffer: remember it
 * for that message if it is still going out, or for when it starts (an
 * early offer, made when the receive was posted); or the window's side
 * offers a range of one of our writes. An offer for a message
 * that is done or does not fit the buffer is ignored; a malformed one is a
 * protocol error, and so is holding more offers than a receiver has
 * segments (ranges we have sent past are forgotten first).
 */
static int ordma_rx_place(struct ordma_chan *chan, struct ordma_wire_hdr *hdr)
{
	u64 off = le64_to_cpu(hdr->offset), len = le64_to_cpu(hdr->total_len);
	u64 msg_id = le64_to_cpu(hdr->op_id);
	struct list_head *places;
	struct ordma_place *pl;
	struct ordma_req *op;

	if (!msg_id || !len || off >= ORDMA_MAX_LEN || len > ORDMA_MAX_LEN - off ||
	    !le64_to_cpu(hdr->token) || le64_to_cpu(hdr->token) > U32_MAX)
		return -EPROTO;
	if (le16_to_cpu(hdr->flags) & ORDMA_WIRE_F_STANDING)
		return ordma_tx_stand_offer(chan, hdr);
	if (le16_to_cpu(hdr->flags) & ORDMA_WIRE_F_WRITE) {
		/* For one of our writes (window offsets within it). */
		op = ordma_op_find(&chan->writeq, msg_id);
		if (!op || op->posted >= op->len)
			return 0;
		places = &op->places;
	} else if (msg_id >= chan->next_msg_id) {
		op = NULL;
		places = &chan->tx_early;
	} else {
		op = ordma_op_find(&chan->sendq, msg_id);
		if (!op || op->op != ORDMA_OP_SEND || op->posted >= op->len)
			return 0;
		places = &op->places;
	}
	if (ordma_places_prune(places, op ? op->posted : 0) >=
	    2 * ORDMA_SEG_DEPTH)
		return -EPROTO;
	pl = kzalloc(sizeof(*pl), GFP_KERNEL);
	if (!pl)
		return 0;	/* an offer may be declined */
	pl->off = off;
	pl->len = len;
	pl->addr = le64_to_cpu(hdr->base);
	pl->rkey = le64_to_cpu(hdr->token);
	pl->msg_id = msg_id;
	pl->buf_len = (u64)le32_to_cpu(hdr->status) + 1;
	if (op)
		ordma_op_take_place(op, pl);
	else
		list_add_tail(&pl->node, places);
	return 0;
}

/*
 * Does this message need a credit (wire.h)? The announcement of bytes
 * placed into a standing offer does (version 7): a writer may send one per
 * piece. The bare RDMA WRITEs before it use no receive buffer.
 */
static bool ordma_wire_payload_class(const struct ordma_wire_hdr *hdr)
{
	return hdr->opcode == ORDMA_WIRE_MSG ||
	       hdr->opcode == ORDMA_WIRE_WRITE ||
	       hdr->opcode == ORDMA_WIRE_READ_RESP ||
	       (hdr->opcode == ORDMA_WIRE_WRITE_PLACED &&
		(le16_to_cpu(hdr->flags) & ORDMA_WIRE_F_STANDING));
}

/* The credit we give the peer: our receives posted for its payload. */
static u32 ordma_rx_credit(struct ordma_chan *chan)
{
	return chan->rx_credit_posted - chan->rx_credit_hdr;
}

/*
 * Must a CREDIT tell the peer of receives it does not know about yet? When
 * it is down to its last credit, or has fewer left than we hold back.
 */
static bool ordma_rx_credit_due(struct ordma_chan *chan)
{
	s32 fresh = (s32)(ordma_rx_credit(chan) - chan->rx_credit_told);
	s32 left = (s32)(chan->rx_credit_told - chan->rx_credit_used);

	return fresh > 0 && (left <= 1 || left <= fresh);
}

/*
 * Plan @op's buffer of @total bytes with the device's cost model (in mode
 * copy, or when the channel cannot register, everything is copied): sets
 * the segment sizes; returns the mode it planned in.
 */
static int ordma_op_plan(struct ordma_chan *chan, struct ordma_req *op,
			 u64 total, struct ordma_plan *plan)
{
	struct ordma_dev *odev = chan->odev;
	int mode = READ_ONCE(odev->mode);

	op->planned = true;
	plan->copy_len = total;
	plan->seg_first = 0;
	plan->seg_max = 0;
	if (chan->nsegs_max && mode != ORDMA_MODE_COPY) {
		spin_lock(&odev->model_lock);
		ordma_plan_make(&odev->model, mode, op->addr, total,
				chan->seg_cap, PAGE_SHIFT, plan);
		spin_unlock(&odev->model_lock);
	}
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
static void ordma_op_ask_segs(struct ordma_chan *chan, struct ordma_req *op,
			      u64 upto, u64 total, bool write)
{
	u64 start, end, last = op->addr + total;
	struct ordma_seg *seg;

	if (!op->seg_len)
		return;
	while (op->seg_next < min(upto, total)) {
		start = op->addr + op->seg_next;
		end = start + min3(op->seg_len, total - op->seg_next,
				   chan->seg_cap - offset_in_page(start));
		if (end < last && (end & PAGE_MASK) > start)
			end &= PAGE_MASK;
		end = ordma_seg_end(start, end);
		seg = ordma_seg_queue(chan, start, end - start, write,
				      write && op->op == ORDMA_OP_WRITE ?
				      op->token : 0);
		if (!seg)
			return;
		seg->off = op->seg_next;
		seg->msg_id = op->op_id;
		seg->buf_len = op->len;
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
static void ordma_rx_plan_from(struct ordma_chan *chan, struct ordma_req *op,
			       u64 total, u64 first, u64 ahead)
{
	struct ordma_plan plan;
	u64 start;

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

/*
 * Early offers. The RECV next in line for a message (the first one not
 * started, once no message waits for it and the RECV in progress has the
 * segments it wants) is planned for its whole buffer before anything
 * arrives, and its segments that start in the first ORDMA_EARLY_BYTES (the
 * message may be much shorter than the buffer; the rest is asked for once
 * its first piece tells its length) are registered and offered for the
 * message the peer starts next (ids are consecutive): the sender can then
 * write in place from the first byte, and the registration overlaps with
 * the sender's.
 */
#define ORDMA_EARLY_BYTES	(4 << 20)

static bool ordma_rx_early(struct ordma_chan *chan)
{
	struct ordma_req *op;

	list_for_each_entry(op, &chan->recvq, node) {
		if (!op->started)
			break;
		/* The message coming in first: its segments first. */
		if (op->seg_len && op->seg_next < op->posted)
			return false;
	}
	if (list_entry_is_head(op, &chan->recvq, node) || op->planned)
		return false;
	/* A message waiting for it: ordma_recv_progress() plans it. */
	if (!list_empty(&chan->rx_msgs))
		return false;
	op->op_id = chan->rx_msg_last + 1;
	ordma_rx_plan_from(chan, op, op->len, 0, ORDMA_EARLY_BYTES);
	return true;
}

/*
 * A RECV has matched the head of a message of @total bytes, @first of them
 * in hand. Planned early for that very message, it keeps its segments up
 * to @total; planned for another id (a peer whose ids skip) it starts over.
 */
static void ordma_rx_plan(struct ordma_chan *chan, struct ordma_req *op,
			  u64 total, u64 first, u64 msg_id)
{
	struct ordma_seg *seg, *tmp;

	if (op->planned && op->op_id != msg_id) {
		ordma_op_put_segs(chan, op, U64_MAX);
		op->planned = false;
	}
	op->op_id = msg_id;
	if (!op->planned) {
		ordma_rx_plan_from(chan, op, total, first, U64_MAX);
		return;
	}
	list_for_each_entry_safe_reverse(seg, tmp, &op->segs, op_node) {
		if (seg->off < total)
			break;
		list_del_init(&seg->op_node);
		ordma_seg_put(chan, seg);
	}
	op->seg_next = min(op->seg_next, total);
	ordma_op_ask_segs(chan, op, total, total, true);
}

/* Is [@off, @off + @n) of @op's message inside a range we offered? */
static bool ordma_rx_offered(struct ordma_req *op, u64 off, u64 n)
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

/* ---- one-sided writes into our windows ---------------------------------- */

/*
 * A peer's write into one of our windows comes in pieces, in a row (a
 * writer sends one write at a time; messages may come between). The ack of
 * its last piece reports the first failure of any (@rx_wr_status).
 *
 * Placement. At the write's first piece the planner may choose to register
 * the window's range the write covers: that range is planned like a receive
 * buffer (chan->rx_wr, an ordma_req of our own that never completes to
 * user space), its segments are offered with PLACE and ORDMA_WIRE_F_WRITE,
 * and the writer RDMA WRITEs into them, each followed by a WRITE_PLACED.
 * Nothing is offered once the window is gone: segments are asked for
 * under windows_rwsem after a window check. The ranges stay registered
 * until the write ends (its last piece, a WRITE_PLACED saying it stopped
 * early, the next write's first piece: the RC queue pair has delivered
 * everything of it by then) or the channel dies; ORDMA_IOC_UNEXPOSE waits
 * for that (ordma_file_unplace()).
 */
static void ordma_rx_wr_end(struct ordma_chan *chan)
{
	struct ordma_req *wt = chan->rx_wr;

	if (!wt)
		return;
	chan->rx_wr = NULL;
	ordma_op_put_segs(chan, wt, U64_MAX);
	kfree(wt);
}

/*
 * Bytes up to @done of the write landed: the segments below are of no use
 * any more (the next ones are asked for by ordma_rx_ask_more()).
 */
static void ordma_rx_wr_advance(struct ordma_chan *chan, u64 done)
{
	chan->rx_wr->done = done;
	ordma_op_put_segs(chan, chan->rx_wr, done);
}

/* Is the window of the write we place into still there? windows_rwsem held. */
static bool ordma_rx_wr_window(struct ordma_chan *chan)
{
	struct ordma_req *wt = chan->rx_wr;
	u64 uaddr;

	return !ordma_window_check(chan->ofile, wt->token, wt->offset, wt->len,
				   ORDMA_ACCESS_REMOTE_WRITE, &uaddr);
}

/*
 * The first piece (@first bytes) of write @op_id, of @total bytes at window
 * offset @base of window @token (at @uaddr, checked): plan its range. The
 * caller holds windows_rwsem for read.
 */
static void ordma_rx_wr_start(struct ordma_chan *chan, u64 op_id, u64 token,
			      u64 uaddr, u64 base, u64 total, u64 first)
{
	struct ordma_req *wt = kzalloc(sizeof(*wt), GFP_KERNEL);

	if (!wt)
		return;		/* copied, then */
	wt->op = ORDMA_OP_WRITE;
	wt->op_id = op_id;
	wt->token = token;
	wt->offset = base;
	wt->addr = uaddr + base;
	wt->len = total;
	wt->done = first;
	INIT_LIST_HEAD(&wt->segs);
	INIT_LIST_HEAD(&wt->places);
	ordma_rx_plan_from(chan, wt, total, first, U64_MAX);
	if (!wt->seg_len) {
		kfree(wt);
		return;
	}
	chan->rx_wr = wt;
}

/*
 * Standing registrations (version 7). A window the peer writes into a
 * second time is registered whole in the background (up to
 * ORDMA_STAND_MAX_PAGES, ORDMA_STAND_DEPTH windows per channel, never in
 * mode copy) and stays registered while it is exposed: once ready it is
 * offered once (PLACE with ORDMA_WIRE_F_STANDING), and the peer's later
 * writes go straight into it. Unexposing the window sets @revoke
 * (ordma_file_unplace()): the worker sends REVOKE and gives the
 * registration back at the peer's REVOKED, or at once if it was never
 * offered. A registration that failed stays listed, so it is not tried
 * again. A window written once, as a fresh window per write is, costs
 * nothing.
 */
static struct ordma_seg *ordma_rx_stand_find(struct ordma_chan *chan,
					     u64 token)
{
	struct ordma_seg *seg;

	list_for_each_entry(seg, &chan->standing, op_node)
		if (seg->wtoken == token)
			return seg;
	return NULL;
}

static void ordma_rx_stand_put(struct ordma_chan *chan, struct ordma_seg *seg)
{
	list_del_init(&seg->op_node);
	chan->nstanding--;
	ordma_seg_put(chan, seg);
}

/*
 * A write into window @token (at @uaddr) begins; the caller holds
 * windows_rwsem for read and checked the window.
 */
static void ordma_rx_stand_start(struct ordma_chan *chan, u64 token, u64 uaddr)
{
	struct ordma_seg *seg;
	u64 len = 0, npages;

	if (ordma_window_written(chan->ofile, token, &len) < 2 ||
	    READ_ONCE(chan->odev->mode) == ORDMA_MODE_COPY ||
	    !chan->nsegs_max || chan->nstanding >= ORDMA_STAND_DEPTH ||
	    ordma_rx_stand_find(chan, token))
		return;
	npages = (PAGE_ALIGN(uaddr + len) - (uaddr & PAGE_MASK)) >> PAGE_SHIFT;
	if (npages > ORDMA_STAND_MAX_PAGES)
		return;
	seg = ordma_seg_queue_standing(chan, uaddr,
				       ordma_seg_end(uaddr, uaddr + len) - uaddr,
				       token);
	if (!seg)
		return;
	seg->msg_id = token;
	seg->buf_len = len;
	list_add_tail(&seg->op_node, &chan->standing);
	chan->nstanding++;
}

/*
 * Windows were unexposed (@force: and their writers did not let go within
 * ORDMA_UNPLACE_WAIT): revoke their standing offers.
 */
static void ordma_rx_stand_revoke(struct ordma_chan *chan, bool force)
{
	struct ordma_seg *seg, *tmp;

	WRITE_ONCE(chan->stand_revoke, false);
	list_for_each_entry_safe(seg, tmp, &chan->standing, op_node) {
		if (!READ_ONCE(seg->revoke))
			continue;
		if (seg->offered && !seg->revoke_sent) {
			ordma_ctrl_queue(chan, ORDMA_WIRE_REVOKE, seg->wtoken, 0,
					 NULL);
			seg->revoke_sent = true;
		}
		if (!seg->offered || force)
			ordma_rx_stand_put(chan, seg);
	}
}

/* The writer let go of the standing offer of window @token. */
static void ordma_rx_stand_revoked(struct ordma_chan *chan, u64 token)
{
	struct ordma_seg *seg = ordma_rx_stand_find(chan, token);

	if (seg && seg->revoke_sent)
		ordma_rx_stand_put(chan, seg);
}

/* The channel is dead: nothing more can land in any registration. */
static void ordma_rx_stand_drop(struct ordma_chan *chan)
{
	struct ordma_seg *seg, *tmp;

	list_for_each_entry_safe(seg, tmp, &chan->standing, op_node)
		ordma_rx_stand_put(chan, seg);
}

/*
 * A piece of the peer's write went into a standing offer: it must lie in
 * one, right after the write's earlier pieces. Nothing is acknowledged: the
 * writer completes once its last piece is delivered.
 */
static int ordma_rx_write_standing(struct ordma_chan *chan,
				   struct ordma_wire_hdr *hdr)
{
	u64 off = le64_to_cpu(hdr->offset), n = le64_to_cpu(hdr->base);
	u64 total = le64_to_cpu(hdr->total_len), op_id = le64_to_cpu(hdr->op_id);
	bool last = le16_to_cpu(hdr->flags) & ORDMA_WIRE_F_LAST;
	struct ordma_seg *seg = ordma_rx_stand_find(chan,
						    le64_to_cpu(hdr->token));

	if (!seg || !seg->offered || off < seg->off ||
	    off - seg->off > seg->len || n > seg->len - (off - seg->off))
		return -EPROTO;
	if (op_id != chan->rx_wr_id) {
		ordma_rx_wr_end(chan);
		chan->rx_wr_id = op_id;
		chan->rx_wr_status = 0;
		chan->rx_wr_notified = false;
		chan->rx_wr_standing = true;
		chan->rx_st_left = total;
	} else if (!chan->rx_wr_standing || off != chan->rx_st_next) {
		return -EPROTO;
	}
	if (n > chan->rx_st_left || (last && n != chan->rx_st_left))
		return -EPROTO;
	chan->rx_st_next = off + n;
	chan->rx_st_left -= n;
	atomic64_add(n, &chan->bytes_rx);
	atomic64_add(n, &chan->odev->bytes_rx);
	atomic64_add(n, &chan->odev->bytes_placed);
	return 0;
}

/* A piece of a write through a chunk: copy it into the window. */
static void ordma_rx_write(struct ordma_chan *chan, struct ordma_wire_hdr *hdr,
			   u32 plen, bool mm_ok)
{
	u64 base = le64_to_cpu(hdr->base), total = le64_to_cpu(hdr->total_len);
	u64 off = le64_to_cpu(hdr->offset), op_id = le64_to_cpu(hdr->op_id);
	u64 token = le64_to_cpu(hdr->token), uaddr;
	bool last = le16_to_cpu(hdr->flags) & ORDMA_WIRE_F_LAST;
	struct ordma_req *wt;
	int status;

	if (chan->rx_wr_id != op_id) {
		ordma_rx_wr_end(chan);
		chan->rx_wr_id = op_id;
		chan->rx_wr_status = 0;
		chan->rx_wr_notified = false;
		chan->rx_wr_standing = false;
	}
	down_read(&chan->ofile->windows_rwsem);
	status = ordma_window_check(chan->ofile, token, base, total,
				    ORDMA_ACCESS_REMOTE_WRITE, &uaddr);
	if (!status && (off < base || off - base > total ||
			plen > total - (off - base)))
		status = -EPROTO;
	if (!status && (!mm_ok ||
			copy_to_user(u64_to_user_ptr(uaddr + off), hdr + 1,
				     plen)))
		status = -EREMOTEIO;
	if (!status && !last && !chan->rx_wr && off == base && mm_ok)
		ordma_rx_wr_start(chan, op_id, token, uaddr, base, total, plen);
	if (!status && off == base)
		ordma_rx_stand_start(chan, token, uaddr);
	up_read(&chan->ofile->windows_rwsem);
	/* The next bytes of a placed write, copied or not. */
	wt = chan->rx_wr;
	if (wt && !last && off >= wt->offset && off - wt->offset == wt->done &&
	    plen <= wt->len - wt->done)
		ordma_rx_wr_advance(chan, wt->done + plen);
	if (status && !chan->rx_wr_status)
		chan->rx_wr_status = status;
	if (status || last)
		ordma_ctrl_queue(chan, ORDMA_WIRE_WRITE_ACK, op_id,
				 chan->rx_wr_status, NULL);
	if (last)
		ordma_rx_wr_end(chan);
}

/*
 * The writer wrote bytes into a range we offered for its write, or says
 * the write stopped early. Anything else is a protocol error.
 */
static int ordma_rx_write_placed(struct ordma_chan *chan,
				 struct ordma_wire_hdr *hdr)
{
	u64 off = le64_to_cpu(hdr->offset), n = le64_to_cpu(hdr->base);
	bool last = le16_to_cpu(hdr->flags) & ORDMA_WIRE_F_LAST;
	struct ordma_req *wt = chan->rx_wr;
	u64 rel;

	if (le16_to_cpu(hdr->flags) & ORDMA_WIRE_F_STANDING)
		return ordma_rx_write_standing(chan, hdr);
	if (le64_to_cpu(hdr->op_id) != chan->rx_wr_id)
		return -EPROTO;
	if (!n) {
		if (!last)
			return -EPROTO;
		ordma_rx_wr_end(chan);
		return 0;
	}
	if (!wt || off < wt->offset)
		return -EPROTO;
	rel = off - wt->offset;
	if (rel != wt->done || n > wt->len - rel ||
	    !ordma_rx_offered(wt, rel, n) || (last && rel + n != wt->len))
		return -EPROTO;
	atomic64_add(n, &chan->bytes_rx);
	atomic64_add(n, &chan->odev->bytes_rx);
	atomic64_add(n, &chan->odev->bytes_placed);
	if (!last) {
		ordma_rx_wr_advance(chan, rel + n);
		return 0;
	}
	ordma_ctrl_queue(chan, ORDMA_WIRE_WRITE_ACK, chan->rx_wr_id,
			 chan->rx_wr_status, NULL);
	ordma_rx_wr_end(chan);
	return 0;
}

/* Unexpose asked: give back the write's ranges if its window is gone. */
static void ordma_rx_wr_revoked(struct ordma_chan *chan)
{
	bool there;

	WRITE_ONCE(chan->rx_wr_revoke, false);
	ordma_rx_stand_revoke(chan, true);
	if (!chan->rx_wr)
		return;
	down_read(&chan->ofile->windows_rwsem);
	there = ordma_rx_wr_window(chan);
	up_read(&chan->ofile->windows_rwsem);
	if (!there)
		ordma_rx_wr_end(chan);
}

/*
 * Destination segments past those asked for, once per pass (a slot may
 * have come free): the receive in progress, and the write into our window
 * if the window is still there.
 */
static void ordma_rx_ask_more(struct ordma_chan *chan)
{
	struct ordma_req *op, *wt = chan->rx_wr;

	op = list_first_entry_or_null(&chan->recvq, struct ordma_req, node);
	if (op && op->started && op->planned && op->seg_next < op->posted)
		ordma_op_ask_segs(chan, op, op->posted, op->posted, true);
	if (!wt || wt->seg_next >= wt->len)
		return;
	down_read(&chan->ofile->windows_rwsem);
	if (ordma_rx_wr_window(chan))
		ordma_op_ask_segs(chan, wt, wt->len, wt->len, true);
	up_read(&chan->ofile->windows_rwsem);
}

/*
 * No flag we do not know; ORDMA_WIRE_F_STANDING only on a window's offer
 * or on a piece with bytes; ORDMA_WIRE_F_NOTIFY only on the last piece of a
 * write that has bytes (not on the marker of a write that stopped early).
 */
static bool ordma_wire_flags_valid(const struct ordma_wire_hdr *hdr)
{
	u16 flags = le16_to_cpu(hdr->flags);

	if (flags & ~(ORDMA_WIRE_F_LAST | ORDMA_WIRE_F_WRITE |
		      ORDMA_WIRE_F_NOTIFY | ORDMA_WIRE_F_STANDING))
		return false;
	if ((flags & ORDMA_WIRE_F_STANDING) &&
	    !(hdr->opcode == ORDMA_WIRE_PLACE && (flags & ORDMA_WIRE_F_WRITE)) &&
	    !(hdr->opcode == ORDMA_WIRE_WRITE_PLACED && hdr->base))
		return false;
	if (!(flags & ORDMA_WIRE_F_NOTIFY))
		return true;
	if (!(flags & ORDMA_WIRE_F_LAST))
		return false;
	return (hdr->opcode == ORDMA_WIRE_WRITE && hdr->payload_len) ||
	       (hdr->opcode == ORDMA_WIRE_WRITE_PLACED && hdr->base);
}

/*
 * The last piece of a write that carries its notification (version 6),
 * handled: the chunk becomes the NOTIFY of the next message id, with the
 * write's result, for the next RECV. Returns false if there is none.
 */
static bool ordma_rx_notify_rides(struct ordma_chan *chan,
				  struct ordma_chunk *chunk)
{
	struct ordma_wire_hdr *hdr = chunk->buf;

	if (!(le16_to_cpu(hdr->flags) & ORDMA_WIRE_F_NOTIFY))
		return false;
	chan->rx_wr_notified = true;
	hdr->opcode = ORDMA_WIRE_NOTIFY;
	hdr->payload_len = 0;
	chunk->len = ORDMA_HDR_LEN;
	hdr->op_id = 0;		/* the next message id */
	hdr->status = cpu_to_le32(-chan->rx_wr_status);
	list_add_tail(&chunk->node, &chan->rx_msgs);
	return true;
}

/*
 * A whole write into a standing offer came as one RDMA WRITE with immediate
 * data, into a receive buffer it left untouched: @chunk becomes its
 * notification (a NOTIFY of the next message id) if it has one. Returns
 * false to recycle @chunk.
 */
static bool ordma_rx_write_imm(struct ordma_chan *chan,
			       struct ordma_chunk *chunk)
{
	struct ordma_wire_hdr *hdr = chunk->buf;
	struct ordma_seg *seg;
	bool offered = false;

	list_for_each_entry(seg, &chan->standing, op_node)
		offered |= seg->offered;
	if ((chunk->imm & ~ORDMA_WIRE_IMM_NOTIFY) != ORDMA_WIRE_IMM_STANDING ||
	    !offered) {
		ordma_chan_fail(chan, -EPROTO);
		return false;
	}
	ordma_rx_account(chan, true, chunk->len);
	atomic64_add(chunk->len, &chan->odev->bytes_placed);
	ordma_rx_wr_end(chan);
	chan->rx_wr_id = 0;
	chan->rx_wr_status = 0;
	chan->rx_wr_notified = false;
	chan->rx_wr_standing = false;
	if (!(chunk->imm & ORDMA_WIRE_IMM_NOTIFY))
		return false;
	ordma_hdr_start(hdr, ORDMA_WIRE_WRITE_PLACED,
			ORDMA_WIRE_F_LAST | ORDMA_WIRE_F_NOTIFY);
	return ordma_rx_notify_rides(chan, chunk);
}

/*
 * A message of one piece that came as a SEND with immediate data, no header
 * (version 8): it becomes what a MSG piece looks like, its bytes moved
 * behind a header written here. Its id is the next message's, known only
 * when ordma_recv_progress() gets to it (messages wait in order).
 */
static bool ordma_rx_send_imm(struct ordma_chan *chan,
			      struct ordma_chunk *chunk)
{
	struct ordma_wire_hdr *hdr = chunk->buf;
	u32 len = chunk->len;

	if (chunk->imm != ORDMA_WIRE_IMM_MSG || !len ||
	    len > ORDMA_WIRE_SIMM_MAX || len > chan->rx_size - ORDMA_HDR_LEN) {
		ordma_chan_fail(chan, -EPROTO);
		return false;
	}
	ordma_rx_account(chan, true, len);
	memmove(hdr + 1, hdr, len);
	ordma_hdr_start(hdr, ORDMA_WIRE_MSG, ORDMA_WIRE_F_LAST);
	hdr->payload_len = cpu_to_le32(len);
	hdr->total_len = cpu_to_le64(len);
	chunk->len = ORDMA_HDR_LEN + len;
	list_add_tail(&chunk->node, &chan->rx_msgs);
	return true;
}

/* Check a received message and route it; returns false to recycle now. */
static bool ordma_rx_dispatch(struct ordma_chan *chan,
			      struct ordma_chunk *chunk, bool mm_ok)
{
	struct ordma_wire_hdr *hdr = chunk->buf;
	struct ordma_req *op;
	u32 plen;
	s64 res;

	if (chunk->got_imm)
		return ordma_rx_write_imm(chan, chunk);
	ib_dma_sync_single_for_cpu(chan->odev->ibdev, chunk->dma, chunk->len,
				   DMA_FROM_DEVICE);
	if (chunk->sent_imm)
		return ordma_rx_send_imm(chan, chunk);
	if (chunk->len < ORDMA_HDR_LEN || hdr->version != ORDMA_WIRE_VERSION ||
	    !hdr->opcode || hdr->opcode > ORDMA_WIRE_OPCODE_MAX)
		goto bad;
	plen = le32_to_cpu(hdr->payload_len);
	if (plen != chunk->len - ORDMA_HDR_LEN)
		goto bad;
	if (!ordma_wire_flags_valid(hdr))
		goto bad;
	chan->tx_credit_peer = le32_to_cpu(hdr->credits);
	ordma_rx_account(chan, ordma_wire_payload_class(hdr), plen);

	switch (hdr->opcode) {
	case ORDMA_WIRE_MSG:
		if (!plen || le64_to_cpu(hdr->total_len) > ORDMA_MAX_LEN)
			goto bad;
		fallthrough;
	case ORDMA_WIRE_MSG_ABORT:
		list_add_tail(&chunk->node, &chan->rx_msgs);
		return true;
	case ORDMA_WIRE_MSG_PLACED:
		if (plen || !le64_to_cpu(hdr->base))
			goto bad;
		list_add_tail(&chunk->node, &chan->rx_msgs);
		return true;
	case ORDMA_WIRE_PLACE:
		if (ordma_rx_place(chan, hdr))
			goto bad;
		return false;
	case ORDMA_WIRE_CREDIT:
		if (plen)
			goto bad;
		return false;
	case ORDMA_WIRE_NOTIFY:
		/* Right after the write's pieces; a message for a RECV. */
		if (plen || !le64_to_cpu(hdr->op_id) || !hdr->base ||
		    le64_to_cpu(hdr->base) != chan->rx_wr_id ||
		    chan->rx_wr_notified)
			goto bad;
		chan->rx_wr_notified = true;
		/* The write's result: ours first, else the writer's. */
		if (chan->rx_wr_status)
			hdr->status = cpu_to_le32(-chan->rx_wr_status);
		list_add_tail(&chunk->node, &chan->rx_msgs);
		return true;
	case ORDMA_WIRE_WRITE:
		ordma_rx_write(chan, hdr, plen, mm_ok);
		return ordma_rx_notify_rides(chan, chunk);
	case ORDMA_WIRE_WRITE_PLACED:
		if (plen || ordma_rx_write_placed(chan, hdr))
			goto bad;
		return ordma_rx_notify_rides(chan, chunk);
	case ORDMA_WIRE_WRITE_ACK:
		op = ordma_op_find(&chan->writeq, le64_to_cpu(hdr->op_id));
		if (!op)
			return false;
		res = hdr->status ? -(s64)min_t(u32, le32_to_cpu(hdr->status),
						MAX_ERRNO) : (s64)op->len;
		/*
		 * The first failure stays. A failed write with pieces left
		 * stops in ordma_tx_fill_op(), once no message is half sent:
		 * what it sends on stopping must not cut into one.
		 */
		if (op->res >= 0)
			op->res = res;
		if (!op->inflight && op->posted >= op->len)
			ordma_op_complete(chan, op, op->res);
		return false;
	case ORDMA_WIRE_READ_REQ:
		if (!le64_to_cpu(hdr->total_len) ||
		    le64_to_cpu(hdr->total_len) > ORDMA_MAX_LEN)
			goto bad;
		hdr->offset = 0;	/* reused: bytes sent so far */
		list_add_tail(&chunk->node, &chan->remote_reads);
		return true;
	case ORDMA_WIRE_READ_RESP:
		ordma_rx_read_resp(chan, hdr, plen, mm_ok);
		return false;
	case ORDMA_WIRE_REVOKE:
		if (plen || !le64_to_cpu(hdr->op_id))
			goto bad;
		ordma_tx_stand_revoke(chan, le64_to_cpu(hdr->op_id));
		return false;
	case ORDMA_WIRE_REVOKED:
		if (plen)
			goto bad;
		ordma_rx_stand_revoked(chan, le64_to_cpu(hdr->op_id));
		return false;
	}
bad:
	ordma_chan_fail(chan, -EPROTO);
	return false;
}

/* Match received messages with RECV operations, in order. */
static bool ordma_recv_progress(struct ordma_chan *chan, bool mm_ok)
{
	struct ordma_chunk *chunk;
	struct ordma_wire_hdr *hdr;
	struct ordma_req *op;
	bool progress = false, placed;
	u64 total, off, n;
	u32 plen, status;

	while ((op = list_first_entry_or_null(&chan->recvq, struct ordma_req,
					      node)) &&
	       (chunk = list_first_entry_or_null(&chan->rx_msgs,
						 struct ordma_chunk, node))) {
		hdr = chunk->buf;
		if (hdr->opcode == ORDMA_WIRE_MSG_ABORT) {
			list_del(&chunk->node);
			ordma_rx_recycle(chan, chunk);
			if (op->started)
				ordma_op_complete(chan, op, -EREMOTEIO);
			progress = true;
			continue;
		}
		if (hdr->opcode == ORDMA_WIRE_NOTIFY) {
			if (op->started) {
				ordma_chan_fail(chan, -EPROTO);
				return progress;
			}
			/*
			 * A message of no bytes: an early offer goes unused.
			 * Id 0: it rode on the write's last piece and has
			 * the next id.
			 */
			chan->rx_msg_last = hdr->op_id ?
					    le64_to_cpu(hdr->op_id) :
					    chan->rx_msg_last + 1;
			status = le32_to_cpu(hdr->status);
			list_del(&chunk->node);
			ordma_rx_recycle(chan, chunk);
			ordma_op_complete(chan, op, status ?
				-(s64)min_t(u32, status, MAX_ERRNO) : 0);
			progress = true;
			continue;
		}
		/* Sent with immediate data: the next id (ordma_rx_send_imm()). */
		if (chunk->sent_imm && !op->started)
			hdr->op_id = cpu_to_le64(chan->rx_msg_last + 1);
		placed = hdr->opcode == ORDMA_WIRE_MSG_PLACED;
		total = le64_to_cpu(hdr->total_len);
		off = le64_to_cpu(hdr->offset);
		plen = le32_to_cpu(hdr->payload_len);
		n = placed ? le64_to_cpu(hdr->base) : plen;
		if (!op->started) {
			/* Only an early offer lets the first piece be placed. */
			if (off || (placed &&
				    (!op->planned || op->op_id !=
				     le64_to_cpu(hdr->op_id)))) {
				ordma_chan_fail(chan, -EPROTO);
				return progress;
			}
			if (total > op->len) {
				/* The message stays for a larger buffer. */
				ordma_op_complete(chan, op, -EMSGSIZE);
				progress = true;
				continue;
			}
			op->started = true;
			op->posted = total;
			chan->rx_msg_last = le64_to_cpu(hdr->op_id);
			ordma_rx_plan(chan, op, total, n, chan->rx_msg_last);
		}
		if (off != op->done || total != op->posted || n > total - off ||
		    le64_to_cpu(hdr->op_id) != op->op_id ||
		    (placed && !ordma_rx_offered(op, off, n))) {
			ordma_chan_fail(chan, -EPROTO);
			return progress;
		}
		if (placed) {
			atomic64_add(n, &chan->bytes_rx);
			atomic64_add(n, &chan->odev->bytes_rx);
			atomic64_add(n, &chan->odev->bytes_placed);
		} else if (!op->res && (!mm_ok ||
				      copy_to_user(u64_to_user_ptr(op->addr + off),
						   hdr + 1, plen))) {
			op->res = -EFAULT;
		}
		op->done += n;
		list_del(&chunk->node);
		ordma_rx_recycle(chan, chunk);
		progress = true;
		if (op->done == total) {
			ordma_op_complete(chan, op, op->res ? op->res :
					  (s64)total);
			continue;
		}
		/* Ranges complete now go: more slots (ordma_rx_ask_more()). */
		ordma_op_put_segs(chan, op, op->done);
	}
	return progress;
}

/* ---- sending -------------------------------------------------------------- */

/*
 * Post one piece: a SEND of header and payload (the payload from the chunk
 * or from a registered segment), or for a placed piece an unsignaled RDMA
 * WRITE of the payload into the receiver's buffer followed by the SEND of
 * the header alone; the WRITE is done when the SEND completes. A piece of
 * a write into a standing offer may be its RDMA WRITE alone (@chunk->wbare,
 * announced by the header of a later piece) or one RDMA WRITE with
 * immediate data (@chunk->wimm, a whole write). A message of one small
 * piece may be a SEND with immediate data of the payload alone
 * (@chunk->simm).
 */
static int ordma_tx_post(struct ordma_chan *chan, struct ordma_chunk *chunk,
			 struct ordma_req *op)
{
	struct ordma_wire_hdr *hdr = chunk->buf;
	struct ordma_seg *seg = chunk->seg;
	struct ib_rdma_wr wwr = {};
	struct ib_send_wr wr = {};
	struct ib_sge sge[2], pay;
	u32 plen = chunk->len - ORDMA_HDR_LEN;
	int ret;

	chunk->owner = chan;
	chunk->priv = op;
	chunk->cqe.done = ordma_tx_done;
	/*
	 * Every header tells the peer of the receives we posted (a write
	 * with immediate, a bare write or a send with immediate sends none).
	 */
	if (!chunk->wimm && !chunk->wbare && !chunk->simm) {
		chan->rx_credit_told = ordma_rx_credit(chan);
		hdr->credits = cpu_to_le32(chan->rx_credit_told);
	}
	sge[0].addr = chunk->dma;
	sge[0].lkey = chan->odev->pd->local_dma_lkey;
	sge[0].length = seg || chunk->rkey ? ORDMA_HDR_LEN : chunk->len;
	wr.num_sge = 1;
	if (seg) {
		pay.addr = seg->mr->iova + chunk->seg_off;
		pay.lkey = seg->mr->lkey;
	} else {
		pay.addr = chunk->dma + ORDMA_HDR_LEN;
		pay.lkey = chan->odev->pd->local_dma_lkey;
	}
	pay.length = plen;
	if (seg && !chunk->rkey && plen) {
		sge[1] = pay;
		wr.num_sge = 2;
	}
	ib_dma_sync_single_for_device(chan->odev->ibdev, chunk->dma,
				      seg ? ORDMA_HDR_LEN : chunk->len,
				      DMA_TO_DEVICE);
	wr.wr_cqe = &chunk->cqe;
	wr.sg_list = sge;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	if (chunk->simm) {
		/* The payload alone; the immediate says what the header would. */
		sge[0] = pay;
		wr.opcode = IB_WR_SEND_WITH_IMM;
		wr.ex.imm_data = cpu_to_be32(ORDMA_WIRE_IMM_MSG);
	}
	if (chunk->rkey) {
		wwr.wr.wr_cqe = &chan->write_cqe;
		wwr.wr.opcode = IB_WR_RDMA_WRITE;
		wwr.wr.sg_list = &pay;
		wwr.wr.num_sge = 1;
		wwr.wr.next = &wr;
		wwr.remote_addr = chunk->raddr;
		wwr.rkey = chunk->rkey;
	}
	if (chunk->wimm) {
		/* The header stays here; the immediate says what it would. */
		wwr.wr.wr_cqe = &chunk->cqe;
		wwr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
		wwr.wr.send_flags = IB_SEND_SIGNALED;
		wwr.wr.ex.imm_data = cpu_to_be32(ORDMA_WIRE_IMM_STANDING |
			(hdr->flags & cpu_to_le16(ORDMA_WIRE_F_NOTIFY) ?
			 ORDMA_WIRE_IMM_NOTIFY : 0));
		wwr.wr.next = NULL;
	}
	if (chunk->wbare) {
		wwr.wr.wr_cqe = &chunk->cqe;
		wwr.wr.send_flags = IB_SEND_SIGNALED;
		wwr.wr.next = NULL;
	}
	/*
	 * rdma_rxe (6.1) runs a kernel QP's send queue in a tasklet: posted
	 * from a task, that wakes ksoftirqd and switches to it. With bottom
	 * halves off the tasklet runs when they come back on, here, as rxe
	 * runs a user QP's in the post system call. Other drivers do nothing
	 * in softirq on a post.
	 */
	local_bh_disable();
	ret = ib_post_send(chan->qp, chunk->rkey ? &wwr.wr : &wr, NULL);
	local_bh_enable();
	if (ret)
		return ret;
	if (!chunk->wbare && ordma_wire_payload_class(hdr))
		chan->tx_credit_sent++;
	if (op && !chunk->wbare && !chunk->wimm)
		op->announced = true;
	if (!chan->tx_posted++) {
		/* The queue gets busy: a new wire window. */
		chan->tx_mark = ordma_now();
		chan->tx_bytes = 0;
	}
	if (op) {
		op->inflight++;
		atomic64_add(plen, seg ? &chan->odev->bytes_zerocopy :
				   &chan->odev->bytes_copied);
	}
	if (seg)
		seg->sends++;
	atomic64_add(plen, &chan->bytes_tx);
	atomic64_add(plen, &chan->odev->bytes_tx);
	return 0;
}

static u32 ordma_payload_max(struct ordma_chan *chan, struct ordma_chunk *chunk)
{
	return min(ordma_chunk_room(chunk), chan->peer_rx_size) - ORDMA_HDR_LEN;
}

static void ordma_tx_put(struct ordma_chan *chan, struct ordma_chunk *chunk)
{
	chan->tx_held--;
	ordma_chunk_put(chunk);
}

/*
 * The planner splits a SEND or WRITE the first time the worker looks at it:
 * a prefix through pool chunks, the rest from registered segments.
 */
static void ordma_tx_plan(struct ordma_chan *chan, struct ordma_req *op)
{
	struct ordma_plan plan;
	int mode = ordma_op_plan(chan, op, op->len, &plan);

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

/* Offer a registered destination segment to the sender. */
static void ordma_rx_offer(struct ordma_chan *chan, struct ordma_seg *seg)
{
	struct ordma_wire_hdr req = {};

	req.offset = cpu_to_le64(seg->off);
	req.total_len = cpu_to_le64(seg->len);
	req.base = cpu_to_le64(seg->mr->iova);
	req.token = cpu_to_le64(seg->mr->rkey);
	/* 1 <= buf_len <= ORDMA_MAX_LEN = 2^32 */
	req.status = cpu_to_le32(seg->buf_len - 1);
	if (seg->wtoken)
		req.flags = cpu_to_le16(ORDMA_WIRE_F_WRITE);
	if (seg->standing)
		req.flags |= cpu_to_le16(ORDMA_WIRE_F_STANDING);
	ordma_ctrl_queue(chan, ORDMA_WIRE_PLACE, seg->msg_id, 0, &req);
	seg->offered = true;
}

/*
 * Segments registered (or not) since the last look: @done, which
 * ordma_xfer_step() took off chan->reg_done, READY or FAILED. The pass owns
 * them from then on; one the pass gave back meanwhile (ordma_seg_put())
 * left the list.
 */
static void ordma_tx_take_segs(struct ordma_chan *chan, struct list_head *done)
{
	struct ordma_dev *odev = chan->odev;
	struct ordma_seg *seg, *tmp;

	list_for_each_entry_safe(seg, tmp, done, q_node) {
		list_del_init(&seg->q_node);
		if (seg->state == ORDMA_SEG_READY)
			WRITE_ONCE(seg->state, ORDMA_SEG_USED);
		if (seg->state == ORDMA_SEG_FAILED)
			atomic64_inc(&odev->fallbacks);
		else if (seg->write && !(seg->standing && READ_ONCE(seg->revoke)))
			ordma_rx_offer(chan, seg);
	}
}

/*
 * First send from @seg: the part of its registration time nobody waited
 * for was hidden behind the copies and the wire.
 */
static void ordma_seg_account(struct ordma_chan *chan, struct ordma_req *op,
			      struct ordma_seg *seg)
{
	u64 stall = 0;

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

static struct ordma_seg *ordma_op_seg(struct ordma_req *op, u64 off)
{
	struct ordma_seg *seg;

	list_for_each_entry(seg, &op->segs, op_node)
		if (off >= seg->off && off - seg->off < seg->len)
			return seg;
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
	struct ordma_seg *seg;

	if (off < op->zc_start) {
		*n = min(*n, op->zc_start - off);
		return NULL;
	}
	seg = ordma_op_seg(op, off);
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
 * Fill @chunk with the next piece of a SEND or WRITE: 1 if filled, 0 if
 * the operation failed instead, -EAGAIN to wait for a segment, or for the
 * receiver's offer or the first piece's completion (a kick comes with
 * either).
 */
static int ordma_tx_fill_op(struct ordma_chan *chan, struct ordma_chunk *chunk,
			    struct ordma_req *op, bool mm_ok)
{
	struct ordma_wire_hdr *hdr = chunk->buf;
	u64 n = op->len - op->posted, pmax = ordma_payload_max(chan, chunk);
	bool write = op->op == ORDMA_OP_WRITE;
	struct ordma_place *pl;
	struct ordma_seg *seg;
	u64 t0;

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
	 * Zero-copy with no offer for these bytes, while a piece is on the
	 * wire. Before any offer, a SEND sends one piece until a piece comes
	 * back or an offer comes: a receiver planning zero-copy offers its
	 * buffer as early as it can (before the message when it can), and
	 * every piece sent ahead of the offer costs it a copy; a receiver that
	 * copies anyway costs one round trip. A WRITE's window side learns of
	 * the write from its first piece, and its offer comes well after that
	 * piece's completion: a WRITE keeps one piece on the wire until then,
	 * for its first ORDMA_WRITE_PROBE pieces (a window side that copies
	 * sends no offer).
	 * Past the furthest offer: the receiver offers its segments in order,
	 * each once it has a slot again, that is once earlier bytes landed;
	 * the pieces posted meanwhile keep the wire busy. Bytes below it that
	 * no offer covers (a copied prefix, a segment that failed) go through
	 * chunks.
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

	chunk->seg = seg;
	t0 = ordma_now();
	if (!op->posted)
		op->t_start = t0;
	if (seg) {
		chunk->seg_off = op->addr + op->posted - seg->uaddr;
	} else if (!mm_ok ||
		   copy_from_user(hdr + 1,
				  u64_to_user_ptr(op->addr + op->posted), n)) {
		op->res = -EFAULT;
		/*
		 * A buffer that faulted aborts the message. Without the mm the
		 * owner is exiting: its channels close, and the peer's receive
		 * fails with ENOTCONN, not with an abort. A message that faulted
		 * before its first byte never started: its id is the next one's.
		 */
		if (op->posted && !write && mm_ok &&
		    !fatal_signal_pending(current))
			ordma_ctrl_queue(chan, ORDMA_WIRE_MSG_ABORT, 0,
					 -EFAULT, NULL);
		if (!op->posted && !write) {
			list_splice_init(&op->places, &chan->tx_early);
			chan->next_msg_id--;
			op->op_id = 0;
		}
		if (write && op->posted && !op->announced) {
			/* Its pieces went out bare: name it, then stop. */
			ordma_tx_write_cut(chunk, op);
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
		/* The bytes go by RDMA WRITE; the header says where. */
		hdr->opcode = write ? ORDMA_WIRE_WRITE_PLACED :
				      ORDMA_WIRE_MSG_PLACED;
		hdr->payload_len = 0;
		hdr->base = cpu_to_le64(n);
		chunk->raddr = pl->addr + (op->posted - pl->off);
		chunk->rkey = pl->rkey;
		if (op->standing) {
			hdr->flags = cpu_to_le16(ORDMA_WIRE_F_STANDING);
			/* A whole write: one RDMA WRITE with immediate. */
			chunk->wimm = !op->posted && n == op->len;
			/*
			 * Of several pieces, all but the last are RDMA WRITEs
			 * alone; the last one's header announces the whole
			 * write, which RC ordering has placed by then.
			 */
			chunk->wbare = op->posted + n < op->len;
			if (op->posted && !chunk->wbare) {
				hdr->offset = cpu_to_le64(op->offset);
				hdr->base = cpu_to_le64(op->len);
			}
		}
	}
	/*
	 * A message of one small piece from the chunk goes without its header
	 * (a packet less where the header would cross an MTU), unless the
	 * header is due to tell the peer of our receives.
	 */
	chunk->simm = !write && !seg && !pl && !op->posted && n == op->len &&
		      n <= ORDMA_WIRE_SIMM_MAX && !ordma_rx_credit_due(chan);
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
	u64 total, sent, uaddr, n;
	int status;

	req = list_first_entry_or_null(&chan->remote_reads,
				       struct ordma_chunk, node);
	if (!req)
		return false;
	rh = req->buf;
	total = le64_to_cpu(rh->total_len);
	sent = le64_to_cpu(rh->offset);
	down_read(&chan->ofile->windows_rwsem);
	status = ordma_window_check(chan->ofile, le64_to_cpu(rh->token),
				    le64_to_cpu(rh->base), total,
				    ORDMA_ACCESS_REMOTE_READ, &uaddr);
	n = min_t(u64, total - sent, ordma_payload_max(chan, chunk));

	ordma_hdr_start(hdr, ORDMA_WIRE_READ_RESP, 0);
	hdr->op_id = rh->op_id;
	hdr->total_len = rh->total_len;
	hdr->offset = cpu_to_le64(sent);
	if (!status && (!mm_ok ||
			copy_from_user(hdr + 1,
				       u64_to_user_ptr(uaddr +
						       le64_to_cpu(rh->base) +
						       sent), n)))
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
	rh->offset = cpu_to_le64(sent);
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

	list_for_each_entry(op, &chan->sendq, node)
		if (op->posted < op->len)
			return op;
	list_for_each_entry(op, &chan->writeq, node)
		if (op->posted < op->len)
			return op;
	return NULL;
}

/* May a message with payload go? Only while the peer has a credit left. */
static bool ordma_tx_credit(struct ordma_chan *chan)
{
	return (s32)(chan->tx_credit_peer - chan->tx_credit_sent) > 0;
}

static void ordma_tx_fill_credit(struct ordma_chunk *chunk)
{
	struct ordma_wire_hdr *hdr = chunk->buf;

	ordma_hdr_start(hdr, ORDMA_WIRE_CREDIT, 0);
	chunk->len = ORDMA_HDR_LEN;
}

static bool ordma_tx_progress(struct ordma_chan *chan, bool mm_ok,
			      struct list_head *segs)
{
	struct ordma_chunk *chunk;
	struct ordma_ctrl *c;
	struct ordma_req *op;
	bool progress = false, data;
	int filled;

	ordma_tx_take_segs(chan, segs);
	while (chan->tx_posted < ORDMA_TX_DEPTH) {
		c = list_first_entry_or_null(&chan->ctrl, struct ordma_ctrl,
					     node);
		op = NULL;
		data = false;
		if (!c && ordma_tx_credit(chan)) {
			op = ordma_tx_next_op(chan);
			data = op || !list_empty(&chan->remote_reads);
		}
		if (!c && !data && !ordma_rx_credit_due(chan))
			break;
		if (chan->tx_held >= ordma_tx_cap(chan))
			break;
		chunk = ordma_xfer_get(chan);
		if (!chunk)
			break;
		chan->tx_held++;
		chunk->seg = NULL;
		chunk->rkey = 0;
		chunk->wimm = false;
		chunk->wbare = false;
		chunk->simm = false;

		if (c) {
			memcpy(chunk->buf, &c->hdr, sizeof(c->hdr));
			chunk->len = ORDMA_HDR_LEN;
			list_del(&c->node);
			kfree(c);
			filled = true;
		} else if (!data) {
			ordma_tx_fill_credit(chunk);
			filled = true;
		} else if (!list_empty(&chan->remote_reads)) {
			filled = ordma_tx_fill_read_resp(chan, chunk, mm_ok);
			op = NULL;
		} else {
			filled = ordma_tx_fill_op(chan, chunk, op, mm_ok);
			if (filled == -EAGAIN && ordma_rx_credit_due(chan)) {
				/* Tell the credits while the segment registers. */
				ordma_tx_fill_credit(chunk);
				filled = true;
				op = NULL;
			} else if (filled == -EAGAIN) {
				/* Kicked again when the segment is ready. */
				ordma_tx_put(chan, chunk);
				break;
			}
			if (!filled && !op->inflight)
				ordma_op_complete(chan, op, op->res);
			else if (!filled)
				ordma_op_put_segs(chan, op, op->posted);
		}
		progress = true;
		if (!filled) {
			ordma_tx_put(chan, chunk);
			continue;
		}
		if (ordma_tx_post(chan, chunk, op)) {
			ordma_tx_put(chan, chunk);
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

static void ordma_tx_sample(struct ordma_chan *chan, struct ordma_chunk *chunk,
			    struct ordma_req *op)
{
	struct ordma_dev *odev = chan->odev;
	u64 now;

	/* Most completions sample nothing: no clock, no device-wide lock. */
	chan->tx_bytes += chunk->len;
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
static void ordma_tx_complete(struct ordma_chan *chan,
			      struct ordma_chunk *chunk)
{
	struct ordma_req *op = chunk->priv;
	struct ordma_seg *seg = chunk->seg;

	chan->tx_posted--;
	if (op) {
		op->inflight--;
		op->echoed = true;
	}
	if (chunk->status == IB_WC_SUCCESS) {
		ordma_tx_sample(chan, chunk, op && !op->inflight ? op : NULL);
	} else {
		if (chunk->status != IB_WC_WR_FLUSH_ERR)
			ordma_chan_fail(chan, -EIO);
		/* Not delivered: the operation fails, as the channel did. */
		if (op && !op->res) {
			spin_lock_irq(&chan->lock);
			op->res = chan->err ? chan->err : -EIO;
			spin_unlock_irq(&chan->lock);
		}
	}
	if (seg) {
		seg->sends--;
		chunk->seg = NULL;
	}
	ordma_tx_put(chan, chunk);
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

/* ---- the worker ----------------------------------------------------------- */

/*
 * Completed work requests. A message that arrived is dispatched even on a
 * dead channel: bytes the peer sent before it left are still delivered.
 * Only a pass in the owner's mm (@mm_ok: the worker's or a task's of the
 * owner) may dispatch: anywhere else received chunks are just given back.
 */
static void ordma_xfer_reap(struct ordma_chan *chan, struct list_head *done,
			    bool dispatch, bool mm_ok)
{
	struct ordma_chunk *chunk, *tmp;

	list_for_each_entry_safe(chunk, tmp, done, node) {
		list_del(&chunk->node);
		if (chunk->cqe.done == ordma_tx_done) {
			ordma_tx_complete(chan, chunk);
			continue;
		}
		chan->rx_posted--;
		if (chunk->status != IB_WC_SUCCESS) {
			if (chunk->status != IB_WC_WR_FLUSH_ERR &&
			    chunk->status != IB_WC_SUCCESS)
				ordma_chan_fail(chan, -EIO);
			ordma_rx_recycle(chan, chunk);
			continue;
		}
		if (!dispatch || !ordma_rx_dispatch(chan, chunk, mm_ok))
			ordma_rx_recycle(chan, chunk);
	}
}

static void ordma_queue_read_req(struct ordma_chan *chan,
				 struct ordma_req *op)
{
	struct ordma_wire_hdr req = {};

	req.token = cpu_to_le64(op->token);
	req.base = cpu_to_le64(op->offset);
	req.total_len = cpu_to_le64(op->len);
	ordma_ctrl_queue(chan, ORDMA_WIRE_READ_REQ, op->op_id, 0, &req);
}

static void ordma_xfer_take_submitted(struct ordma_chan *chan,
				      struct list_head *sub)
{
	struct ordma_req *op, *tmp;

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

static void ordma_fail_queue(struct ordma_chan *chan, struct list_head *q,
			     int err)
{
	struct ordma_req *op, *tmp;

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

static void ordma_free_chunks(struct ordma_chan *chan, struct list_head *q)
{
	struct ordma_chunk *chunk, *tmp;

	list_for_each_entry_safe(chunk, tmp, q, node) {
		list_del(&chunk->node);
		chan->rx_held--;
		ordma_chunk_put(chunk);
	}
}

/**
 * ordma_xfer_flush() - fail everything queued on a dead channel
 * @chan: the channel, dead; called by a pass under chan->run or, once the
 *	worker and the owner's tasks are stopped, by ordma_chan_close()
 * @err: negative errno for the operations
 * @keep_rx: keep the messages that arrived, for later RECVs (the peer left
 *	but the channel is not closed yet); only a pass in the owner's mm
 *	passes true, and only it dispatches what completes meanwhile
 *
 * Posted work requests keep their chunks until they complete (flushed);
 * operations that still have chunks posted complete then.
 */
void ordma_xfer_flush(struct ordma_chan *chan, int err, bool keep_rx)
{
	struct ordma_ctrl *c, *ctmp;
	struct ordma_req *op, *tmp;
	LIST_HEAD(done);
	LIST_HEAD(sub);

	spin_lock_irq(&chan->lock);
	list_splice_init(&chan->done, &done);
	list_splice_init(&chan->submitted, &sub);
	spin_unlock_irq(&chan->lock);
	if (!err)
		err = -ENOTCONN;

	ordma_xfer_reap(chan, &done, keep_rx, keep_rx);
	list_for_each_entry_safe(op, tmp, &sub, node) {
		list_del(&op->node);
		INIT_LIST_HEAD(&op->segs);
		INIT_LIST_HEAD(&op->places);
		list_add_tail(&op->node, &chan->sendq);
	}
	ordma_fail_queue(chan, &chan->sendq, err);
	ordma_fail_queue(chan, &chan->recvq, err);
	ordma_fail_queue(chan, &chan->writeq, err);
	ordma_fail_queue(chan, &chan->readq, err);
	if (!keep_rx)
		ordma_free_chunks(chan, &chan->rx_msgs);
	ordma_free_chunks(chan, &chan->remote_reads);
	ordma_free_chunks(chan, &chan->rx_ring);
	chan->rx_spare = 0;
	list_for_each_entry_safe(c, ctmp, &chan->ctrl, node) {
		list_del(&c->node);
		kfree(c);
	}
	ordma_places_prune(&chan->tx_early, U64_MAX);
	ordma_rx_wr_end(chan);
	ordma_tx_stand_drop(chan);
	ordma_rx_stand_drop(chan);
}

/* One pass over everything; true if anything moved. */
static bool ordma_xfer_step(struct ordma_chan *chan, bool mm_ok)
{
	enum ordma_chan_phase phase;
	bool progress;
	LIST_HEAD(done);
	LIST_HEAD(sub);
	LIST_HEAD(segs);
	int err;

	/*
	 * One look at everything the other contexts left: a change after it
	 * comes with a kick, so the next pass sees it (the phase going dead
	 * while this one runs, too).
	 */
	spin_lock_irq(&chan->lock);
	list_splice_init(&chan->done, &done);
	list_splice_init(&chan->submitted, &sub);
	phase = chan->phase;
	err = chan->err;
	if (phase == ORDMA_PHASE_ESTABLISHED && chan->qp)
		list_splice_init(&chan->reg_done, &segs);
	/* What a submitter was kicked for before now, this pass sees. */
	chan->submit_kicked = false;
	spin_unlock_irq(&chan->lock);
	progress = !list_empty(&done) || !list_empty(&sub);

	/*
	 * Operations first: a message that arrived after an operation was
	 * submitted (an offer for the SEND, say) finds it queued.
	 */
	ordma_xfer_take_submitted(chan, &sub);
	ordma_xfer_reap(chan, &done, true, mm_ok);

	if (phase == ORDMA_PHASE_DEAD) {
		/*
		 * The peer will not answer any more: drain the QP, so every
		 * work request is back, every message that arrived dispatched.
		 */
		if (chan->qp && !chan->qp_flushed) {
			chan->qp_flushed = true;
			ib_drain_qp(chan->qp);
			spin_lock_irq(&chan->lock);
			list_splice_init(&chan->done, &done);
			spin_unlock_irq(&chan->lock);
			ordma_xfer_reap(chan, &done, true, mm_ok);
		}
		/* A peer that left gracefully: deliver what it sent. */
		if (err == -ENOTCONN)
			ordma_recv_progress(chan, mm_ok);
		ordma_xfer_flush(chan, err, err == -ENOTCONN && mm_ok);
		return false;
	}
	if (!chan->qp)
		return false;
	if (phase != ORDMA_PHASE_ESTABLISHED)
		return ordma_rx_refill(chan) || progress;
	if (READ_ONCE(chan->rx_wr_revoke))
		ordma_rx_wr_revoked(chan);
	/* Pairs with ordma_file_unstand(): a seg->revoke set before is seen. */
	if (smp_load_acquire(&chan->stand_revoke))
		ordma_rx_stand_revoke(chan, false);
	/*
	 * Messages first: the receives they complete are reported before the
	 * ring is refilled, with the chunks they free (ordma_rx_recycle()).
	 */
	progress |= ordma_recv_progress(chan, mm_ok);
	progress |= ordma_rx_refill(chan);
	ordma_rx_ask_more(chan);
	progress |= ordma_rx_early(chan);
	progress |= ordma_tx_progress(chan, mm_ok, &segs);
	return progress;
}

void ordma_chan_work(struct work_struct *work)
{
	struct ordma_chan *chan = container_of(work, struct ordma_chan, work);
	struct mm_struct *mm = chan->ofile->mm;
	bool mm_ok = mmget_not_zero(mm);

	if (mm_ok)
		kthread_use_mm(mm);
	mutex_lock(&chan->run);
	while (ordma_xfer_step(chan, mm_ok))
		cond_resched();
	mutex_unlock(&chan->run);
	if (mm_ok) {
		kthread_unuse_mm(mm);
		mmput(mm);
	}
}

/*
 * Passes an operation's submitter runs itself before it leaves the rest to
 * the worker: one takes the operation and posts what credits and chunks
 * allow, the next usually finds nothing to do.
 */
#define ORDMA_INLINE_PASSES	4

/*
 * Run the data path in a task of the owner (its mm is the file's), instead
 * of waking the worker: the submitter of an operation, so that a small
 * transfer is on the wire before the ioctl returns, and a task waiting for
 * completions (ordma_file_wait()), so that the completion it waits for is
 * posted without a detour through the worker. The worker takes over if it
 * holds chan->run already and when passes are left over, or once @deadline
 * (jiffies; a waiter's, NULL for none) has passed: a pass that copies a
 * whole quota may take long on a slow machine, and a wait keeps its
 * timeout.
 */
static void ordma_chan_run_inline(struct ordma_chan *chan,
				  const unsigned long *deadline)
{
	unsigned int passes = ORDMA_INLINE_PASSES;
	bool more = true;

	if (fatal_signal_pending(current) || !mutex_trylock(&chan->run)) {
		ordma_chan_queue(chan);
		return;
	}
	/* ordma_chan_close() sets closing, then waits for chan->run. */
	spin_lock_irq(&chan->lock);
	if (chan->closing)
		more = false;
	spin_unlock_irq(&chan->lock);
	while (more && passes--) {
		if (deadline && time_after_eq(jiffies, *deadline))
			break;
		more = ordma_xfer_step(chan, true);
	}
	mutex_unlock(&chan->run);
	if (more)
		ordma_chan_queue(chan);
}

/*
 * The submitter of an operation runs the passes itself: what completes
 * meanwhile (rxe completes a small send within its post) is left to it, and
 * it runs the passes once more, instead of waking the worker, which would
 * take the CPU of the task the message went to. A runner waiting in
 * ordma_file_wait() still takes precedence.
 */
static void ordma_chan_run_submitter(struct ordma_chan *chan)
{
	struct ordma_file *ofile = chan->ofile;
	bool kicked;

	spin_lock_irq(&ofile->run_lock);
	chan->submitters++;
	spin_unlock_irq(&ofile->run_lock);
	ordma_chan_run_inline(chan, NULL);
	spin_lock_irq(&chan->lock);
	spin_lock(&ofile->run_lock);
	chan->submitters--;
	spin_unlock(&ofile->run_lock);
	kicked = chan->submit_kicked;
	chan->submit_kicked = false;
	spin_unlock_irq(&chan->lock);
	if (kicked)
		ordma_chan_run_inline(chan, NULL);
}

static bool ordma_file_kicked(struct ordma_file *ofile)
{
	return !list_empty_careful(&ofile->runq);
}

/*
 * A runner runs the passes of channels it took off the runq, until its
 * @deadline (NULL: none); then the workers take the rest.
 */
static void ordma_file_run_kicked(struct ordma_file *ofile,
				  struct list_head *mine,
				  const unsigned long *deadline)
{
	struct ordma_chan *chan, *tmp;

	list_for_each_entry_safe(chan, tmp, mine, run_node) {
		spin_lock_irq(&ofile->run_lock);
		list_del_init(&chan->run_node);
		chan->runner_busy = true;
		spin_unlock_irq(&ofile->run_lock);
		ordma_chan_run_inline(chan, deadline);
		spin_lock_irq(&ofile->run_lock);
		chan->runner_busy = false;
		spin_unlock_irq(&ofile->run_lock);
		ordma_chan_put(chan);
	}
}

/*
 * A runner leaves: with no runner asleep, what was kicked while it ran
 * goes to the workers (later kicks find no runner and go there directly).
 */
static void ordma_file_hand_off(struct ordma_file *ofile)
{
	struct ordma_chan *chan;

	for (;;) {
		spin_lock_irq(&ofile->run_lock);
		chan = ofile->runners ? NULL :
		       list_first_entry_or_null(&ofile->runq,
						struct ordma_chan, run_node);
		if (chan)
			list_del_init(&chan->run_node);
		spin_unlock_irq(&ofile->run_lock);
		if (!chan)
			return;
		ordma_chan_queue(chan);
		ordma_chan_put(chan);
	}
}

/**
 * ordma_file_wait() - wait for completions, running the data path meanwhile
 * @ofile: the file
 * @done: true when the wait is over; called without locks
 * @arg: for @done
 * @timeout: in jiffies, or MAX_SCHEDULE_TIMEOUT
 *
 * A task of the owner becomes a runner while it waits: kicks of the file's
 * channels (completions, mostly) come to it instead of waking the workers,
 * and it runs their passes between sleeps: those kicked before it woke, and
 * then again those kicked while it ran them. While it runs, kicks of other
 * channels go to runners asleep or the workers, so a runner held up (a page
 * fault) holds up only the channel it runs. When it stops waiting with no
 * runner asleep, what is left goes to the workers.
 *
 * Return: as wait_event_interruptible_timeout(): -ERESTARTSYS, 0 if the time
 * ran out, else the jiffies left.
 */
long ordma_file_wait(struct ordma_file *ofile,
		     bool (*done)(struct ordma_file *ofile, void *arg),
		     void *arg, long timeout)
{
	unsigned long deadline = jiffies + timeout;
	bool forever = timeout == MAX_SCHEDULE_TIMEOUT;
	long left = timeout;
	LIST_HEAD(mine);

	if (current->mm != ofile->mm)
		return wait_event_interruptible_timeout(ofile->cq_wait,
							done(ofile, arg),
							timeout);
	for (;;) {
		spin_lock_irq(&ofile->run_lock);
		ofile->runners++;
		spin_unlock_irq(&ofile->run_lock);
		left = wait_event_interruptible_timeout
			(ofile->cq_wait,
			 done(ofile, arg) || ordma_file_kicked(ofile), left);
		/* Busy from here on; what was kicked before is ours. */
		spin_lock_irq(&ofile->run_lock);
		ofile->runners--;
		list_splice_init(&ofile->runq, &mine);
		spin_unlock_irq(&ofile->run_lock);
		ordma_file_run_kicked(ofile, &mine, forever ? NULL : &deadline);
		if (left < 0 || done(ofile, arg))
			break;
		if (!forever) {
			left = (long)(deadline - jiffies);
			if (left <= 0) {
				left = 0;
				break;
			}
		}
	}
	ordma_file_hand_off(ofile);
	return left;
}

/*
 * May @op be queued? A channel the peer left still takes RECVs: they get
 * the messages that arrived before it left, then -ENOTCONN.
 */
static int ordma_chan_accepts(struct ordma_chan *chan, struct ordma_req *op)
{
	lockdep_assert_held(&chan->lock);
	if (chan->closing)
		return chan->err ? chan->err : -ENOTCONN;
	if (chan->phase == ORDMA_PHASE_ESTABLISHED)
		return 0;
	if (chan->phase == ORDMA_PHASE_DEAD) {
		if (chan->err == -ENOTCONN && op->op == ORDMA_OP_RECV)
			return 0;
		return chan->err ? chan->err : -ENOTCONN;
	}
	return -ENOTCONN;
}

/**
 * ordma_chan_submit() - queue an operation on a channel
 * @chan: the channel
 * @op: the operation, validated by the caller; the channel owns it after
 * @nonblock: fail with -EAGAIN when the pool or the channel's quota is full
 *
 * Return: 0, or a negative errno and @op is still the caller's.
 */
int ordma_chan_submit(struct ordma_chan *chan, struct ordma_req *op,
		      bool nonblock)
{
	struct ordma_pool *pool;
	unsigned long flags;
	bool empty;
	int ret = 0;

	if (nonblock && op->op != ORDMA_OP_RECV) {
		spin_lock_irqsave(&chan->lock, flags);
		ret = ordma_chan_accepts(chan, op);
		spin_unlock_irqrestore(&chan->lock, flags);
		if (ret)
			return ret;
		/*
		 * chan->odev stays until ordma_chan_close(), which we exclude;
		 * a close in progress may take long (draining): do not wait.
		 */
		if (!mutex_trylock(&chan->teardown))
			return -EAGAIN;
		if (!chan->odev) {
			mutex_unlock(&chan->teardown);
			return -ENOTCONN;
		}
		pool = &chan->odev->pool;
		spin_lock_irqsave(&pool->lock, flags);
		empty = !pool->chunks_free ||
			(u32)atomic_read(&chan->held) >= pool->quota;
		spin_unlock_irqrestore(&pool->lock, flags);
		mutex_unlock(&chan->teardown);
		if (empty)
			return -EAGAIN;
	}

	spin_lock_irqsave(&chan->lock, flags);
	ret = ordma_chan_accepts(chan, op);
	if (!ret) {
		atomic64_inc(&chan->inflight);
		list_add_tail(&op->node, &chan->submitted);
	}
	spin_unlock_irqrestore(&chan->lock, flags);
	/* A nonblocking submitter does not wait for a pass either. */
	if (!ret && nonblock)
		ordma_chan_kick(chan);
	else if (!ret)
		ordma_chan_run_submitter(chan);
	return ret;
}
