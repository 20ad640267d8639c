// SPDX-License-Identifier: GPL-2.0
/*
 * Receiving. Every message that arrives is checked and routed
 * (ordma_rx_dispatch()); two-sided messages are matched with RECVs in order
 * (ordma_recv_progress()) and copied into their buffers, unless the sender
 * placed them there. A RECV's buffer is planned like a send's: segments of
 * it are registered and offered to the sender (PLACE), early when the RECV
 * is next in line, so that the sender writes in place. Runs under
 * chan->run; copies need the owner's mm (@mm_ok).
 */
#include <linux/slab.h>

#include "xfer.h"

/*
 * The errno an operation gets for a peer's non-zero status: the peer's, if
 * a user may see it; -EREMOTEIO for anything else (above MAX_ERRNO, or the
 * kernel's own from ERESTARTSYS on, which must never reach a system call's
 * return or a kernel user).
 */
static s64 ordma_rx_errno(u32 status)
{
	return status < ERESTARTSYS ? -(s64)status : -EREMOTEIO;
}

/* Bytes of one of our reads, or its failure. */
static void ordma_rx_read_resp(struct ordma_chan *chan,
			       struct ordma_wire_hdr *hdr, u32 plen, bool mm_ok)
{
	struct ordma_req *op = ordma_op_find(&chan->readq,
					    le64_to_cpu(hdr->read.read_id));
	u64 off = le64_to_cpu(hdr->read.offset);
	u32 status = le32_to_cpu(hdr->status);

	ordma_chan_assert_run(chan);
	if (!op)
		return;		/* it already failed */
	if (status) {
		ordma_op_complete(chan, op, ordma_rx_errno(status));
		return;
	}
	if (off != op->done || plen > op->len - op->done) {
		ordma_chan_fault(chan, -EPROTO);
		return;
	}
	if (!ordma_op_reachable(op, mm_ok) ||
	    ordma_copy_to_op(chan, op, off, hdr + 1, plen)) {
		ordma_op_complete(chan, op, -EFAULT);
		return;
	}
	op->done += plen;
	if (op->done == op->len)
		ordma_op_complete(chan, op, op->len);
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
	u64 off = le64_to_cpu(hdr->place.offset), len = le64_to_cpu(hdr->place.len);
	u64 msg_id = le64_to_cpu(hdr->place.id);
	u64 rkey = le64_to_cpu(hdr->place.rkey);
	struct list_head *places;
	struct ordma_place *pl;
	struct ordma_req *op;

	ordma_chan_assert_run(chan);
	if (!msg_id || !len || off >= ORDMA_MAX_LEN || len > ORDMA_MAX_LEN - off ||
	    !rkey || rkey > U32_MAX)
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
	pl->addr = le64_to_cpu(hdr->place.addr);
	pl->rkey = rkey;
	pl->msg_id = msg_id;
	pl->buf_len = (u64)le32_to_cpu(hdr->size_m1) + 1;
	if (op)
		ordma_op_take_place(op, pl);
	else
		list_add_tail(&pl->node, places);
	return 0;
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

bool ordma_rx_early(struct ordma_chan *chan)
{
	struct ordma_req *op;

	ordma_chan_assert_run(chan);
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

	ordma_chan_assert_run(chan);
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

/*
 * Destination segments past those asked for, once per pass (a slot may
 * have come free): the receive in progress, and the write into our window
 * if the window is still there.
 */
void ordma_rx_ask_more(struct ordma_chan *chan)
{
	struct ordma_req *op, *wt = chan->rx_wr;

	ordma_chan_assert_run(chan);
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
 * A message of one piece that came as a SEND with immediate data, no
 * header: it becomes what a MSG piece looks like, its bytes moved
 * behind a header written here. Its id is the next message's, known only
 * when ordma_recv_progress() gets to it (messages wait in order).
 */
static bool ordma_rx_send_imm(struct ordma_chan *chan,
			      struct ordma_chunk *chunk)
{
	struct ordma_wire_hdr *hdr = chunk->buf;
	u32 len = chunk->len;

	ordma_chan_assert_run(chan);
	/*
	 * The bytes move behind a header: they must fit the chunk's payload,
	 * whatever size it was posted with (@rx_small, posted before the
	 * channel grew, is shorter than rx_size says now).
	 */
	if (chunk->imm != ORDMA_WIRE_IMM_MSG || !len ||
	    len > ORDMA_WIRE_SIMM_MAX || len > chunk->size ||
	    len > chan->rx_size - ORDMA_HDR_LEN) {
		ordma_chan_fault(chan, -EPROTO);
		return false;
	}
	ordma_rx_account(chan, true, len);
	memmove(hdr + 1, hdr, len);
	ordma_hdr_start(hdr, ORDMA_WIRE_MSG, ORDMA_WIRE_F_LAST);
	hdr->payload_len = cpu_to_le32(len);
	hdr->msg.msg_len = cpu_to_le64(len);
	chunk->len = ORDMA_HDR_LEN + len;
	list_add_tail(&chunk->node, &chan->rx_msgs);
	return true;
}

/* Check a received message and route it; returns false to recycle now. */
bool ordma_rx_dispatch(struct ordma_chan *chan,
		       struct ordma_chunk *chunk, bool mm_ok)
{
	struct ordma_wire_hdr *hdr = chunk->buf;
	struct ordma_req *op;
	u32 plen, size;
	s64 res;

	ordma_chan_assert_run(chan);
	if (chunk->rx_kind == ORDMA_RX_WRITE_IMM)
		return ordma_rx_write_imm(chan, chunk);
	ib_dma_sync_single_for_cpu(chan->odev->ibdev, chunk->dma, chunk->len,
				   DMA_FROM_DEVICE);
	if (chunk->rx_kind == ORDMA_RX_SEND_IMM)
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
		if (!plen || le64_to_cpu(hdr->msg.msg_len) > ORDMA_MAX_LEN)
			goto bad;
		fallthrough;
	case ORDMA_WIRE_MSG_ABORT:
		list_add_tail(&chunk->node, &chan->rx_msgs);
		return true;
	case ORDMA_WIRE_MSG_PLACED:
		if (plen || !le64_to_cpu(hdr->msg.placed))
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
		if (hdr->flags & cpu_to_le16(ORDMA_WIRE_F_GROW)) {
			size = le32_to_cpu(hdr->size_m1);
			/* Only up, and within what a connect may tell. */
			if (size >= ORDMA_WIRE_RX_MAX ||
			    size + 1 <= chan->peer_rx_size)
				goto bad;
			WRITE_ONCE(chan->peer_rx_size, size + 1);
		}
		return false;
	case ORDMA_WIRE_NOTIFY:
		/* Right after the write's pieces; a message for a RECV. */
		if (plen || !le64_to_cpu(hdr->notify.msg_id) ||
		    !hdr->notify.write_id ||
		    le64_to_cpu(hdr->notify.write_id) != chan->rx_wr_id ||
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
		op = ordma_op_find(&chan->writeq,
				   le64_to_cpu(hdr->ack.write_id));
		if (!op)
			return false;
		res = hdr->status ? ordma_rx_errno(le32_to_cpu(hdr->status)) :
				    (s64)op->len;
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
		if (!le64_to_cpu(hdr->read.read_len) ||
		    le64_to_cpu(hdr->read.read_len) > ORDMA_MAX_LEN)
			goto bad;
		hdr->read.offset = 0;	/* from now on: the bytes sent */
		list_add_tail(&chunk->node, &chan->remote_reads);
		return true;
	case ORDMA_WIRE_READ_RESP:
		ordma_rx_read_resp(chan, hdr, plen, mm_ok);
		return false;
	case ORDMA_WIRE_REVOKE:
		if (plen || !le64_to_cpu(hdr->revoke.token))
			goto bad;
		ordma_tx_stand_revoke(chan, le64_to_cpu(hdr->revoke.token));
		return false;
	case ORDMA_WIRE_REVOKED:
		if (plen)
			goto bad;
		ordma_rx_stand_revoked(chan, le64_to_cpu(hdr->revoke.token));
		return false;
	}
bad:
	ordma_chan_fault(chan, -EPROTO);
	return false;
}

/* Match received messages with RECV operations, in order. */
bool ordma_recv_progress(struct ordma_chan *chan, bool mm_ok)
{
	struct ordma_chunk *chunk;
	struct ordma_wire_hdr *hdr;
	struct ordma_req *op;
	bool progress = false, placed;
	u64 total, off, n;
	u32 plen, status;

	ordma_chan_assert_run(chan);
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
				ordma_chan_fault(chan, -EPROTO);
				return progress;
			}
			/*
			 * A message of no bytes: an early offer goes unused.
			 * Id 0: it rode on the write's last piece and has
			 * the next id.
			 */
			chan->rx_msg_last = hdr->notify.msg_id ?
					    le64_to_cpu(hdr->notify.msg_id) :
					    chan->rx_msg_last + 1;
			status = le32_to_cpu(hdr->status);
			list_del(&chunk->node);
			ordma_rx_recycle(chan, chunk);
			ordma_op_complete(chan, op, status ?
					  ordma_rx_errno(status) : 0);
			progress = true;
			continue;
		}
		/* Sent with immediate data: the next id (ordma_rx_send_imm()). */
		if (chunk->rx_kind == ORDMA_RX_SEND_IMM && !op->started)
			hdr->msg.msg_id = cpu_to_le64(chan->rx_msg_last + 1);
		placed = hdr->opcode == ORDMA_WIRE_MSG_PLACED;
		total = le64_to_cpu(hdr->msg.msg_len);
		off = le64_to_cpu(hdr->msg.offset);
		plen = le32_to_cpu(hdr->payload_len);
		n = placed ? le64_to_cpu(hdr->msg.placed) : plen;
		if (!op->started) {
			/* Only an early offer lets the first piece be placed. */
			if (off || (placed &&
				    (!op->planned || op->op_id !=
				     le64_to_cpu(hdr->msg.msg_id)))) {
				ordma_chan_fault(chan, -EPROTO);
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
			chan->rx_msg_last = le64_to_cpu(hdr->msg.msg_id);
			ordma_rx_plan(chan, op, total, n, chan->rx_msg_last);
		}
		if (off != op->done || total != op->posted || n > total - off ||
		    le64_to_cpu(hdr->msg.msg_id) != op->op_id ||
		    (placed && !ordma_rx_offered(op, off, n))) {
			ordma_chan_fault(chan, -EPROTO);
			return progress;
		}
		if (placed) {
			ordma_rx_placed(chan, n);
		} else if (!op->res && (!ordma_op_reachable(op, mm_ok) ||
				      ordma_copy_to_op(chan, op, off, hdr + 1,
						       plen))) {
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

/* Offer a registered destination segment to the sender. */
static void ordma_rx_offer(struct ordma_chan *chan, struct ordma_seg *seg)
{
	struct ordma_wire_hdr req;
	u16 flags = 0;

	ordma_chan_assert_run(chan);
	if (seg->wtoken)
		flags |= ORDMA_WIRE_F_WRITE;
	if (seg->standing)
		flags |= ORDMA_WIRE_F_STANDING;
	ordma_hdr_start(&req, ORDMA_WIRE_PLACE, flags);
	req.place.len = cpu_to_le64(seg->len);
	req.place.offset = cpu_to_le64(seg->off);
	req.place.addr = cpu_to_le64(seg->mr->iova);
	req.place.rkey = cpu_to_le64(seg->mr->rkey);
	req.place.id = cpu_to_le64(seg->msg_id);
	/* 1 <= buf_len <= ORDMA_MAX_LEN = 2^32 */
	req.size_m1 = cpu_to_le32(seg->buf_len - 1);
	ordma_ctrl_queue(chan, &req);
	seg->offered = true;
}

/*
 * Segments registered (or not) since the last look: @done, which
 * ordma_xfer_step() took off chan->reg_done, READY or FAILED. The pass owns
 * them from then on; one the pass gave back meanwhile (ordma_seg_put())
 * left the list. Destinations are offered to the peer; sources wait for
 * the send path to find them USED.
 */
void ordma_rx_take_segs(struct ordma_chan *chan, struct list_head *done)
{
	struct ordma_dev *odev = chan->odev;
	struct ordma_seg *seg, *tmp;

	ordma_chan_assert_run(chan);
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
