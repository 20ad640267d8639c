// SPDX-License-Identifier: GPL-2.0
/*
 * Work requests of a channel: its receive ring, posting sends, credits,
 * the control messages waiting for a send slot, and the completion
 * handlers. The lowest layer of the data path: it knows chunks, headers
 * and counts, not what an operation is doing.
 *
 * Completion handlers run in softirq: they only append to chan->done under
 * chan->lock and kick the channel. Everything else here runs under
 * chan->run (the fields marked "worker" in chan.h).
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
 *
 * A pair that counts every message (chan->credit_all: a device without RNR
 * retry, iWARP, where a SEND that finds no receive ends the connection)
 * counts header-only messages too, and keeps the peer's last credit for a
 * CREDIT: any other message goes only while the peer has two or more left,
 * and a CREDIT alone only when it tells two receives or more. Each side
 * keeps at least ORDMA_CREDIT_ALL_RX receives posted, so a peer down to its
 * last credit always finds two untold ones (no deadlock), and the CREDIT a
 * side receives frees one receive, never two (no ping-pong): every lone
 * CREDIT answers at least two messages.
 */
#include <linux/slab.h>

#include "xfer.h"
#include "fault.h"
#include "trace.h"

/*
 * The RDMA WRITE of a placed piece is unsignaled: its completion comes only
 * when it failed (bad remote key or range, retries exhausted) or was
 * flushed.
 */
static void ordma_write_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ordma_chan *chan = container_of(wc->wr_cqe, struct ordma_chan,
					       write_cqe);

	if (wc->status != IB_WC_SUCCESS)
		ordma_chan_wr_failed(chan, wc->status);
}

/* A receive completed: hand its chunk to the data path. */
static void ordma_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ordma_chunk *chunk = container_of(wc->wr_cqe,
						 struct ordma_chunk, cqe);
	struct ordma_chan *chan = chunk->owner;
	unsigned long flags;

	chunk->status = wc->status;
	chunk->rx_kind = ORDMA_RX_HDR;
	if (wc->status == IB_WC_SUCCESS) {
		chunk->len = wc->byte_len;
		if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM) {
			chunk->rx_kind = ORDMA_RX_WRITE_IMM;
			chunk->imm = be32_to_cpu(wc->ex.imm_data);
		} else if (wc->wc_flags & IB_WC_WITH_IMM) {
			chunk->rx_kind = ORDMA_RX_SEND_IMM;
			chunk->imm = be32_to_cpu(wc->ex.imm_data);
		}
	}
	spin_lock_irqsave(&chan->lock, flags);
	list_add_tail(&chunk->node, &chan->done);
	ordma_chan_kick_locked(chan);
	spin_unlock_irqrestore(&chan->lock, flags);
}

/* A send completed: hand its descriptor to the data path. */
static void ordma_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ordma_tx *tx = container_of(wc->wr_cqe, struct ordma_tx, cqe);
	struct ordma_chan *chan = tx->chan;
	unsigned long flags;

	tx->status = wc->status;
	spin_lock_irqsave(&chan->lock, flags);
	list_add_tail(&tx->node, &chan->tx_done);
	ordma_chan_kick_locked(chan);
	spin_unlock_irqrestore(&chan->lock, flags);
}

static u32 ordma_quota(struct ordma_chan *chan)
{
	return ordma_pool_quota(&chan->odev->pool);
}

/* The fewest receives the channel keeps posted, pool or no pool. */
static u32 ordma_rx_floor(struct ordma_chan *chan)
{
	return chan->credit_all ? ORDMA_CREDIT_ALL_RX : 1;
}

static u32 ordma_rx_cap(struct ordma_chan *chan)
{
	return max(ordma_rx_floor(chan), ordma_quota(chan) / 2);
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

	ordma_chan_assert_run(chan);
	for (;;) {
		chunk = ordma_chunk_get(pool, &chan->held);
		if (chunk)
			return chunk;
		if (ordma_pool_wait(pool, &chan->pool_waiter, &chan->held))
			return NULL;
	}
}

/*
 * Receive buffers to keep posted: a fair share of the pool among the
 * channels on the device (a quarter of the pool for receiving), between 1
 * and ORDMA_RX_DEPTH. Idle rings above the share shrink as messages come.
 */
static u32 ordma_rx_target(struct ordma_chan *chan)
{
	u32 ends = max(1, atomic_read(&chan->odev->nchans));
	u32 share = ordma_pool_target(&chan->odev->pool) / (4 * ends);

	/* Stale at worst by one pass: accept() kicks after it clears it. */
	if (READ_ONCE(chan->parked))
		return ordma_rx_floor(chan);

	return clamp_t(u32, share, ordma_rx_floor(chan),
		       min_t(u32, ORDMA_RX_DEPTH, ordma_rx_cap(chan)));
}

/*
 * @rx_held moves by @d; the chunks past the reserved one are counted in the
 * pool's rx_extra (ordma_pool_rx_room()) until the channel is flushed.
 */
static void ordma_rx_held_add(struct ordma_chan *chan, int d)
{
	u32 extra;

	ordma_chan_assert_run(chan);
	chan->rx_held += d;
	if (chan->rx_uncounted)
		return;
	extra = chan->rx_held > 1 ? chan->rx_held - 1 : 0;
	atomic_add((int)extra - (int)chan->rx_extra,
		   &chan->odev->pool.rx_extra);
	chan->rx_extra = extra;
}

/**
 * ordma_rx_uncount() - a dead channel's receive chunks count no more
 * @chan: the channel, being flushed
 */
void ordma_rx_uncount(struct ordma_chan *chan)
{
	ordma_chan_assert_run(chan);
	if (chan->rx_uncounted)
		return;
	/* A channel that never had a device never counted anything. */
	if (chan->rx_extra)
		atomic_sub(chan->rx_extra, &chan->odev->pool.rx_extra);
	chan->rx_extra = 0;
	chan->rx_uncounted = true;
}

/*
 * A receive chunk is free again: keep it for the ring or give it back. The
 * channel always keeps one (reserved when it was set up), so it can always
 * receive.
 */
void ordma_rx_recycle(struct ordma_chan *chan, struct ordma_chunk *chunk)
{
	u32 ring = chan->rx_posted + chan->rx_spare;

	ordma_chan_assert_run(chan);
	if (!chunk->pool) {
		/*
		 * The channel's own (@rx_small): first on the ring, always,
		 * until the channel grew past it.
		 */
		if (ordma_chunk_room(chunk) < chan->rx_size) {
			ordma_rx_held_add(chan, -1);
			return;
		}
		list_add(&chunk->node, &chan->rx_ring);
		chan->rx_spare++;
		return;
	}
	if (ordma_chunk_room(chunk) < chan->rx_size ||
	    (ring >= ordma_rx_floor(chan) && (ring >= ordma_rx_target(chan) ||
		      chan->rx_held > ordma_rx_cap(chan) ||
		      !ordma_pool_plenty(&chan->odev->pool) ||
		      !ordma_pool_user_below(&chan->odev->pool, &chan->held,
					     2)))) {
		ordma_rx_held_add(chan, -1);
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

	ordma_chan_assert_run(chan);
	chunk->owner = chan;
	chunk->cqe.done = ordma_rx_done;
	ib_dma_sync_single_for_device(chan->odev->ibdev, chunk->dma,
				      chan->rx_size, DMA_FROM_DEVICE);
	sge.addr = chunk->dma;
	sge.length = chan->rx_size;
	sge.lkey = chan->pd->local_dma_lkey;
	wr.wr_cqe = &chunk->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	/* A receive queue takes nothing of a list from its bad_wr on. */
	if (ordma_fault_now(ORDMA_FAULT_RECV))
		return -EIO;
	ret = ib_post_recv(chan->qp, &wr, NULL);
	if (!ret)
		chan->rx_credit_posted++;
	return ret;
}

/*
 * A channel that receives in its own small buffer takes chunks as one set up
 * now would, once the pool is more than half free, its owner holds less
 * than half its share and the device has few enough channels for its ring
 * to hold more than one: its receives are a chunk's size from now on, and
 * the peer hears so once the last receive posted small has completed
 * (ordma_rx_completed()), so that nothing it sends finds a buffer too short.
 */
static void ordma_rx_try_grow(struct ordma_chan *chan)
{
	struct ordma_pool *pool = &chan->odev->pool;
	struct ordma_chunk *chunk;
	u32 size;

	/* Every refill comes here: the pool's lock only past these. */
	if (chan->rx_size != ORDMA_RX_SMALL || chan->qp_flushed ||
	    READ_ONCE(chan->parked) || ordma_rx_target(chan) < 2 ||
	    !ordma_pool_plenty(pool) ||
	    !ordma_pool_user_below(pool, &chan->held, 2))
		return;
	/*
	 * The chunk first, without waiting: it takes the place of @rx_small
	 * as the buffer the channel always keeps (ordma_rx_recycle()).
	 */
	size = ordma_pool_chunk_bytes(pool) + ORDMA_HDR_LEN;
	chunk = ordma_chunk_get(pool, &chan->held);
	if (!chunk)
		return;
	if (ordma_chunk_room(chunk) < size) {
		ordma_chunk_put(chunk);
		return;
	}
	ordma_rx_held_add(chan, 1);
	list_add_tail(&chunk->node, &chan->rx_ring);
	chan->rx_spare++;
	WRITE_ONCE(chan->rx_size, size);
	chan->rx_small_left = chan->rx_posted;
	chan->rx_grow_due = true;
	ordma_rx_completed(chan, false);
}

/**
 * ordma_rx_completed() - a receive of the channel completed, or none
 * @chan: the channel
 * @one: a receive completed (its chunk is off the queue)
 *
 * Receives complete in the order they were posted: once every one posted
 * small before the channel grew has, a CREDIT with ORDMA_WIRE_F_GROW tells
 * the peer the new size.
 */
void ordma_rx_completed(struct ordma_chan *chan, bool one)
{
	struct ordma_wire_hdr hdr;

	ordma_chan_assert_run(chan);
	if (one)
		chan->rx_posted--;
	if (one && chan->rx_small_left)
		chan->rx_small_left--;
	if (!chan->rx_grow_due || chan->rx_small_left)
		return;
	chan->rx_grow_due = false;
	ordma_hdr_start(&hdr, ORDMA_WIRE_CREDIT, ORDMA_WIRE_F_GROW);
	hdr.size_m1 = cpu_to_le32(chan->rx_size - 1);
	ordma_ctrl_queue(chan, &hdr);
}

/* Keep the receive ring full. */
bool ordma_rx_refill(struct ordma_chan *chan)
{
	struct ordma_chunk *chunk;
	bool progress = false;
	u32 target;

	ordma_chan_assert_run(chan);
	ordma_rx_try_grow(chan);
	target = ordma_rx_target(chan);
	while (chan->rx_posted < target) {
		chunk = list_first_entry_or_null(&chan->rx_ring,
						 struct ordma_chunk, node);
		if (chunk && ordma_chunk_room(chunk) < chan->rx_size) {
			/* @rx_small past a growth, or an old smaller chunk. */
			list_del(&chunk->node);
			chan->rx_spare--;
			ordma_rx_held_add(chan, -1);
			if (chunk->pool)
				ordma_chunk_put(chunk);
			continue;
		}
		if (chunk) {
			list_del(&chunk->node);
			chan->rx_spare--;
		} else {
			if (chan->rx_held >= ordma_rx_cap(chan))
				break;
			if (chan->rx_posted >= ordma_rx_floor(chan) &&
			    (!ordma_pool_plenty(&chan->odev->pool) ||
			     !ordma_pool_rx_room(&chan->odev->pool) ||
			     !ordma_pool_user_below(&chan->odev->pool,
						    &chan->held, 2)))
				break;
			chunk = ordma_xfer_get(chan);
			if (!chunk)
				break;
			ordma_rx_held_add(chan, 1);
			if (ordma_chunk_room(chunk) < chan->rx_size) {
				/* chunk_bytes shrank under us: unusable. */
				ordma_rx_held_add(chan, -1);
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

/*
 * Count a received message of @len bytes of payload (of the payload class
 * if @payload: it used one of the receives we announced).
 */
void ordma_rx_account(struct ordma_chan *chan, bool payload, u64 len)
{
	ordma_chan_assert_run(chan);

	if (payload || chan->credit_all)
		chan->rx_credit_used++;
	else
		chan->rx_credit_hdr++;
	chan->tx_wait_peer = false;
	atomic64_add(len, &chan->bytes_rx);
	atomic64_add(len, &chan->odev->bytes_rx);
}

/* Count @n bytes the peer placed straight into our memory (RDMA WRITE). */
void ordma_rx_placed(struct ordma_chan *chan, u64 n)
{
	atomic64_add(n, &chan->bytes_rx);
	atomic64_add(n, &chan->odev->bytes_rx);
	atomic64_add(n, &chan->odev->bytes_placed);
}

static void ordma_ctrl_add(struct ordma_chan *chan,
			   const struct ordma_wire_hdr *hdr, bool answer)
{
	struct ordma_ctrl *c;

	ordma_chan_assert_run(chan);
	c = kmalloc(sizeof(*c), GFP_KERNEL);
	if (!c) {
		ordma_chan_fail(chan, -ENOMEM);
		return;
	}
	c->hdr = *hdr;
	c->answer = answer;
	chan->ctrl_answers += answer;
	list_add_tail(&c->node, &chan->ctrl);
}

/* Queue a header-only message, built with ordma_hdr_start(), to send. */
void ordma_ctrl_queue(struct ordma_chan *chan, const struct ordma_wire_hdr *hdr)
{
	ordma_ctrl_add(chan, hdr, false);
}

/*
 * Queue the answer to a message of the peer (a WRITE_ACK, a REVOKED). The
 * peer decides how many it asks for; if it does not take them (it posts no
 * receives, so our sends stall), more than ORDMA_ANSWERS_MAX waiting fail
 * the channel instead of growing kernel memory.
 */
void ordma_ctrl_answer(struct ordma_chan *chan,
		       const struct ordma_wire_hdr *hdr)
{
	ordma_chan_assert_run(chan);
	if (chan->ctrl_answers >= ORDMA_ANSWERS_MAX) {
		ordma_chan_fault(chan, -ENOBUFS);
		return;
	}
	ordma_ctrl_add(chan, hdr, true);
}

/**
 * ordma_rx_token_status() - what the peer hears of the window it named
 * @chan: the channel
 * @status: ordma_window_check()'s verdict on the token
 *
 * A guess (-EKEYREJECTED: a token the file never gave out) is counted, and
 * the peer told -ENOENT, as for a window unexposed since; the
 * ORDMA_GUESSES_MAX-th guess on a channel fails it with -EACCES.
 *
 * Return: @status, or -ENOENT for a guess.
 */
int ordma_rx_token_status(struct ordma_chan *chan, int status)
{
	ordma_chan_assert_run(chan);
	if (status != -EKEYREJECTED)
		return status;
	atomic64_inc(&chan->odev->token_guesses);
	if (++chan->guesses >= ORDMA_GUESSES_MAX)
		ordma_chan_fault(chan, -EACCES);
	return -ENOENT;
}

/* A queued header-only message goes out (or is dropped): forget it. */
void ordma_ctrl_done(struct ordma_chan *chan, struct ordma_ctrl *c)
{
	ordma_chan_assert_run(chan);
	chan->ctrl_answers -= c->answer;
	list_del(&c->node);
	kfree(c);
}

/* The credit we give the peer: our receives posted for its payload. */
static u32 ordma_rx_credit(struct ordma_chan *chan)
{
	ordma_chan_assert_run(chan);

	return chan->rx_credit_posted - chan->rx_credit_hdr;
}

/*
 * Must a CREDIT tell the peer of receives it does not know about yet? When
 * it is down to its last credit, or has fewer left than we hold back.
 */
bool ordma_rx_credit_due(struct ordma_chan *chan)
{
	s32 fresh = (s32)(ordma_rx_credit(chan) - chan->rx_credit_told);
	s32 left = (s32)(chan->rx_credit_told - chan->rx_credit_used);

	ordma_chan_assert_run(chan);
	return fresh > (chan->credit_all ? 1 : 0) &&
	       (left <= 1 || left <= fresh);
}

/*
 * A post of @tx failed: the work requests of the list from the one the
 * driver names on are not posted, by the verbs' contract, and the
 * descriptor's own is the list's last. But a driver may have queued it
 * all the same and complete it later (siw leaves a work request it rejects
 * in its send queue, and its flush completes it): the descriptor and its
 * chunk wait for that completion, or for the QP's drain, and then go back
 * (ordma_tx_reclaim()). Nothing else of it is kept: the operation it was
 * of fails with the channel, which the caller fails.
 */
static void ordma_tx_lost(struct ordma_chan *chan, struct ordma_tx *tx)
{
	ordma_chan_assert_run(chan);
	tx->lost = true;
	tx->op = NULL;
	tx->seg = NULL;
}

/**
 * ordma_tx_reclaim() - give back the send descriptors whose post failed
 * @chan: the channel, its QP drained or destroyed: no completion comes any
 *	more
 */
void ordma_tx_reclaim(struct ordma_chan *chan)
{
	struct ordma_tx *tx;

	ordma_chan_assert_run(chan);
	for (tx = chan->txd; tx < chan->txd + ORDMA_TX_DEPTH; tx++) {
		if (!tx->lost)
			continue;
		tx->lost = false;
		ordma_tx_put(chan, tx);
	}
}

/*
 * Post one piece as @tx->kind says (enum ordma_tx_kind). Every header
 * that goes out tells the peer of the receives we posted. On an error @tx
 * is no longer the caller's: given back if nothing was posted, or waiting
 * for a completion the driver may still deliver (ordma_tx_lost()).
 */
int ordma_tx_post(struct ordma_chan *chan, struct ordma_tx *tx,
		  struct ordma_req *op)
{
	struct ordma_chunk *chunk = tx->chunk;
	struct ordma_wire_hdr *hdr = chunk->buf;
	u32 lkey = chan->pd->local_dma_lkey;
	u32 plen = chunk->len - ORDMA_HDR_LEN;
	struct ordma_seg *seg = tx->seg;
	struct ib_send_wr wr = {}, *first = &wr;
	struct ib_rdma_wr wwr = {};
	/* The header, then the payload's entries. */
	struct ib_sge *sge = chan->tx_sge, *pay = sge + 1;
	u32 npay = 1;
	int ret;

	ordma_chan_assert_run(chan);
	tx->op = op;
	if (tx->kind == ORDMA_TX_SEND || tx->kind == ORDMA_TX_PLACED) {
		chan->rx_credit_told = ordma_rx_credit(chan);
		hdr->credits = cpu_to_le32(chan->rx_credit_told);
	}
	/*
	 * The payload: behind the header in the chunk, or in a segment's
	 * pinned pages (cut by ordma_tx_fill_op() to fit the entries).
	 */
	if (seg) {
		if (ordma_seg_sges(seg, seg->uaddr + tx->seg_off, plen, lkey,
				   pay, chan->send_sge - 1, &npay) != plen) {
			ordma_tx_put(chan, tx);
			return -EINVAL;
		}
		ordma_seg_sync(chan->odev->ibdev, seg,
			       seg->uaddr + tx->seg_off, plen);
	} else {
		pay->addr = chunk->dma + ORDMA_HDR_LEN;
		pay->lkey = lkey;
		pay->length = plen;
	}
	ib_dma_sync_single_for_device(chan->odev->ibdev, chunk->dma,
				      seg ? ORDMA_HDR_LEN : chunk->len,
				      DMA_TO_DEVICE);
	sge[0].addr = chunk->dma;
	sge[0].lkey = lkey;
	sge[0].length = ORDMA_HDR_LEN;
	wr.wr_cqe = &tx->cqe;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	wwr.wr.opcode = IB_WR_RDMA_WRITE;
	wwr.wr.sg_list = pay;
	wwr.wr.num_sge = npay;
	wwr.remote_addr = tx->raddr;
	wwr.rkey = tx->rkey;

	switch (tx->kind) {
	case ORDMA_TX_SEND:
		if (!seg)
			sge[0].length = chunk->len;
		else if (plen)
			wr.num_sge += npay;
		break;
	case ORDMA_TX_SEND_IMM:
		/* The immediate says what the header would. */
		wr.sg_list = pay;
		wr.opcode = IB_WR_SEND_WITH_IMM;
		wr.ex.imm_data = cpu_to_be32(ORDMA_WIRE_IMM_MSG);
		break;
	case ORDMA_TX_PLACED:
		/* Done when the SEND after it completes. */
		wwr.wr.wr_cqe = &chan->write_cqe;
		wwr.wr.next = &wr;
		first = &wwr.wr;
		break;
	case ORDMA_TX_WRITE_IMM:
		/* The header stays here; the immediate says what it would. */
		wwr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
		wwr.wr.ex.imm_data = cpu_to_be32(ORDMA_WIRE_IMM_STANDING |
			(hdr->flags & cpu_to_le16(ORDMA_WIRE_F_NOTIFY) ?
			 ORDMA_WIRE_IMM_NOTIFY : 0));
		fallthrough;
	case ORDMA_TX_WRITE:
		wwr.wr.wr_cqe = &tx->cqe;
		wwr.wr.send_flags = IB_SEND_SIGNALED;
		first = &wwr.wr;
		break;
	}
	/* Before the post, which may carry the whole send (rxe, below). */
	ordma_trace(post, chan, op ? op->tid : 0, tx->kind, plen, seg);
	/*
	 * rdma_rxe (6.1) runs a kernel QP's send queue in a tasklet: posted
	 * from a task, that wakes ksoftirqd and switches to it. With bottom
	 * halves off the tasklet runs when they come back on, here, as rxe
	 * runs a user QP's in the post system call. Other drivers do nothing
	 * in softirq on a post.
	 */
	local_bh_disable();
	if (ordma_fault_now(ORDMA_FAULT_SEND)) {
		ret = -EIO;
	} else {
		ret = ib_post_send(chan->qp, first, NULL);
		if (!ret && ordma_fault_now(ORDMA_FAULT_SEND_POSTED))
			ret = -EIO;
	}
	local_bh_enable();
	if (ret) {
		ordma_tx_lost(chan, tx);
		return ret;
	}
	if (tx->kind != ORDMA_TX_WRITE &&
	    (chan->credit_all || ordma_wire_payload_class(hdr)))
		chan->tx_credit_sent++;
	chan->tx_hello = false;
	if (op && tx->kind != ORDMA_TX_WRITE && tx->kind != ORDMA_TX_WRITE_IMM)
		op->announced = true;
	if (!chan->tx_posted++) {
		/* The queue gets busy: a new wire window. */
		chan->tx_moved = jiffies;
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

u32 ordma_payload_max(struct ordma_chan *chan, struct ordma_chunk *chunk)
{
	return min(ordma_chunk_room(chunk), chan->peer_rx_size) - ORDMA_HDR_LEN;
}

/*
 * A send descriptor with a chunk of the channel's send budget, its fields
 * reset for a plain SEND; NULL when none is free or the pool has no chunk
 * (a pool waiter is then registered).
 */
struct ordma_tx *ordma_tx_get(struct ordma_chan *chan)
{
	struct ordma_chunk *chunk;
	struct ordma_tx *tx;

	ordma_chan_assert_run(chan);
	tx = list_first_entry_or_null(&chan->tx_free, struct ordma_tx, node);
	if (!tx || chan->tx_held >= ordma_tx_cap(chan))
		return NULL;
	chunk = ordma_xfer_get(chan);
	if (!chunk)
		return NULL;
	list_del(&tx->node);
	chan->tx_held++;
	tx->chunk = chunk;
	tx->op = NULL;
	tx->seg = NULL;
	tx->rkey = 0;
	tx->kind = ORDMA_TX_SEND;
	return tx;
}

/* Give back a send descriptor and its chunk. */
void ordma_tx_put(struct ordma_chan *chan, struct ordma_tx *tx)
{
	ordma_chan_assert_run(chan);
	chan->tx_held--;
	ordma_chunk_put(tx->chunk);
	tx->chunk = NULL;
	list_add(&tx->node, &chan->tx_free);
}

static s32 ordma_tx_credits(struct ordma_chan *chan)
{
	ordma_chan_assert_run(chan);

	return (s32)(chan->tx_credit_peer - chan->tx_credit_sent);
}

/*
 * May a message with payload go? Only while the peer has a credit left, or
 * two when every message counts (the last is for a CREDIT).
 */
bool ordma_tx_credit(struct ordma_chan *chan)
{
	return ordma_tx_credits(chan) > (chan->credit_all ? 1 : 0);
}

/*
 * May the header-only message @hdr go? Always, unless every message
 * counts: then a CREDIT takes the peer's last credit, anything else leaves
 * it.
 */
bool ordma_tx_ctrl_credit(struct ordma_chan *chan,
			  const struct ordma_wire_hdr *hdr)
{
	if (!chan->credit_all)
		return true;
	return ordma_tx_credits(chan) >
	       (hdr && hdr->opcode != ORDMA_WIRE_CREDIT ? 1 : 0);
}

void ordma_free_chunks(struct ordma_chan *chan, struct list_head *q)
{
	struct ordma_chunk *chunk, *tmp;

	ordma_chan_assert_run(chan);
	list_for_each_entry_safe(chunk, tmp, q, node) {
		list_del(&chunk->node);
		ordma_rx_held_add(chan, -1);
		/* @rx_small stays the channel's until ordma_rx_release(). */
		if (chunk->pool)
			ordma_chunk_put(chunk);
	}
}

/*
 * The channel's own receive buffer, in place of a reserved chunk, mapped
 * for the device as a chunk is; charged to the memory cgroup of the
 * context that sets the channel up (the RDMA CM's handler, as the QP).
 */
static int ordma_rx_small_alloc(struct ordma_chan *chan)
{
	struct ib_device *ibdev = chan->odev->ibdev;
	struct ordma_chunk *chunk = &chan->rx_small;
	void *buf;
	u64 dma;

	buf = kmalloc(ORDMA_RX_SMALL, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	dma = ib_dma_map_single(ibdev, buf, ORDMA_RX_SMALL, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ibdev, dma)) {
		kfree(buf);
		return -ENOMEM;
	}
	chunk->buf = buf;
	chunk->dma = dma;
	chunk->size = ORDMA_RX_SMALL - ORDMA_HDR_LEN;
	chunk->pool = NULL;
	chunk->held = NULL;
	return 0;
}

/**
 * ordma_rx_reserve() - the first receive buffer of a new channel
 * @chan: the channel, on its device, before its QP exists: no pass runs
 *	yet, so the worker's fields are the caller's
 *
 * A chunk of the pool, and receive buffers of a chunk's size, while the
 * pool is more than half free and the user holds less than half its share
 * (receives then leave the rest to sends); otherwise the channel's own
 * small buffer (ORDMA_RX_SMALL), so that an idle channel holds nothing of
 * the pool and the pool bounds what receives hold whatever the number of
 * channels. The size is told to the peer at connect; a small one may grow
 * later (ordma_rx_try_grow()), never shrink.
 *
 * Return: 0 or -ENOMEM.
 */
int ordma_rx_reserve(struct ordma_chan *chan)
{
	struct ordma_pool *pool = &chan->odev->pool;
	struct ordma_chunk *chunk = NULL;
	int ret;

	chan->rx_size = ordma_pool_chunk_bytes(pool) + ORDMA_HDR_LEN;
	if (ordma_pool_plenty(pool) &&
	    ordma_pool_user_below(pool, &chan->held, 2))
		chunk = ordma_chunk_get(pool, &chan->held);
	if (chunk && ordma_chunk_room(chunk) < chan->rx_size) {
		/* chunk_bytes grew under us: an old, smaller chunk. */
		ordma_chunk_put(chunk);
		chunk = NULL;
	}
	if (!chunk) {
		ret = ordma_rx_small_alloc(chan);
		if (ret)
			return ret;
		chan->rx_size = ORDMA_RX_SMALL;
		chunk = &chan->rx_small;
	}
	chan->rx_held = 1;
	chan->rx_spare = 1;
	list_add_tail(&chunk->node, &chan->rx_ring);
	return 0;
}

/**
 * ordma_rx_release() - free the channel's own receive buffer, if it has one
 * @chan: the channel, its QP destroyed: nothing is posted into it
 */
void ordma_rx_release(struct ordma_chan *chan)
{
	struct ordma_chunk *chunk = &chan->rx_small;

	if (!chunk->buf)
		return;
	ib_dma_unmap_single(chan->odev->ibdev, chunk->dma, ORDMA_RX_SMALL,
			    DMA_BIDIRECTIONAL);
	kfree(chunk->buf);
	chunk->buf = NULL;
}

/**
 * ordma_wr_init() - the send descriptors of a new channel
 * @chan: the channel, just allocated
 */
void ordma_wr_init(struct ordma_chan *chan)
{
	struct ordma_tx *tx;

	chan->write_cqe.done = ordma_write_done;
	INIT_LIST_HEAD(&chan->tx_free);
	for (tx = chan->txd; tx < chan->txd + ORDMA_TX_DEPTH; tx++) {
		tx->cqe.done = ordma_tx_done;
		tx->chan = chan;
		list_add_tail(&tx->node, &chan->tx_free);
	}
}
