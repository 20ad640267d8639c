// SPDX-License-Identifier: GPL-2.0
/*
 * One-sided writes into windows, on both sides of a channel: the window's
 * side places a peer's write (it registers the range the write covers and
 * offers it, or, for a window written again, the whole window: a standing
 * registration), the writer's side keeps the standing offers the peer made;
 * and unexpose waits until no registered range of a window is left. Runs
 * under chan->run, but for the unexpose side (ordma_window_unexpose()),
 * which only flags and kicks the channels concerned.
 */
#include <linux/slab.h>

#include "xfer.h"
#include "entry.h"

/*
 * A REVOKE of the standing offer of window @token, or the REVOKED that
 * answers the peer's.
 */
static void ordma_ctrl_revoke(struct ordma_chan *chan, u8 opcode, u64 token)
{
	struct ordma_wire_hdr h;

	ordma_hdr_start(&h, opcode, 0);
	h.revoke.token = cpu_to_le64(token);
	if (opcode == ORDMA_WIRE_REVOKED)
		ordma_ctrl_answer(chan, &h);
	else
		ordma_ctrl_queue(chan, &h);
}

/* The WRITE_ACK of write @write_id: @err 0 or a negative errno. */
static void ordma_rx_write_ack(struct ordma_chan *chan, u64 write_id, int err)
{
	struct ordma_wire_hdr h;

	ordma_hdr_start(&h, ORDMA_WIRE_WRITE_ACK, 0);
	h.ack.write_id = cpu_to_le64(write_id);
	h.status = cpu_to_le32(-err);
	ordma_ctrl_answer(chan, &h);
}

/*
 * The window's side of our writes may offer a whole window once, for as
 * long as it stays exposed: a standing offer, on
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

	ordma_chan_assert_run(chan);
	list_for_each_entry(st, &chan->tx_standing, node)
		if (st->msg_id == token)
			return st;
	return NULL;
}

/* A PLACE with ORDMA_WIRE_F_STANDING, its fields checked by the caller. */
int ordma_tx_stand_offer(struct ordma_chan *chan,
			 struct ordma_wire_hdr *hdr)
{
	u64 token = le64_to_cpu(hdr->place.id);
	struct ordma_place *st;

	ordma_chan_assert_run(chan);
	if (!(le16_to_cpu(hdr->flags) & ORDMA_WIRE_F_WRITE) ||
	    ordma_tx_stand_find(chan, token) ||
	    chan->ntx_standing >= ORDMA_STAND_DEPTH)
		return -EPROTO;
	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return 0;	/* declined; REVOKE is still answered */
	st->msg_id = token;
	st->off = le64_to_cpu(hdr->place.offset);
	st->len = le64_to_cpu(hdr->place.len);
	st->addr = le64_to_cpu(hdr->place.addr);
	st->rkey = le64_to_cpu(hdr->place.rkey);
	list_add_tail(&st->node, &chan->tx_standing);
	chan->ntx_standing++;
	return 0;
}

/* Plan @op (a WRITE) into a standing offer that covers it, if one does. */
void ordma_tx_stand_use(struct ordma_chan *chan, struct ordma_req *op)
{
	struct ordma_place *st = ordma_tx_stand_find(chan, op->token), *pl;

	ordma_chan_assert_run(chan);
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

/* The window's side takes the standing offer of window @token back. */
void ordma_tx_stand_revoke(struct ordma_chan *chan, u64 token)
{
	struct ordma_place *st = ordma_tx_stand_find(chan, token);
	struct ordma_req *op;

	ordma_chan_assert_run(chan);
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
	ordma_ctrl_revoke(chan, ORDMA_WIRE_REVOKED, token);
}

void ordma_tx_stand_drop(struct ordma_chan *chan)
{
	struct ordma_place *st, *tmp;

	ordma_chan_assert_run(chan);
	list_for_each_entry_safe(st, tmp, &chan->tx_standing, node) {
		list_del(&st->node);
		kfree(st);
	}
	chan->ntx_standing = 0;
}

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
void ordma_rx_wr_end(struct ordma_chan *chan)
{
	struct ordma_req *wt = chan->rx_wr;

	ordma_chan_assert_run(chan);
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
	ordma_chan_assert_run(chan);

	chan->rx_wr->done = done;
	ordma_op_put_segs(chan, chan->rx_wr, done);
}

/* Is the window of the write we place into still there? windows_rwsem held. */
bool ordma_rx_wr_window(struct ordma_chan *chan)
{
	struct ordma_req *wt = chan->rx_wr;
	struct ordma_winmem mem = {};

	ordma_chan_assert_run(chan);
	return !ordma_window_check(chan->ofile, wt->token, wt->offset, wt->len,
				   ORDMA_ACCESS_REMOTE_WRITE, &mem);
}

/*
 * The first piece (@first bytes) of write @op_id, of @total bytes at window
 * offset @base of window @token (its memory @mem, checked): plan its range.
 * The caller holds windows_rwsem for read. A kernel user's window is placed
 * into as a process's is: its range's pages are fast-registered (segments
 * of @wt's copy of @mem, at offsets from its start).
 */
static void ordma_rx_wr_start(struct ordma_chan *chan, u64 op_id, u64 token,
			      const struct ordma_winmem *mem, u64 base,
			      u64 total, u64 first)
{
	struct ordma_req *wt = kzalloc(sizeof(*wt), GFP_KERNEL);

	ordma_chan_assert_run(chan);
	if (!wt)
		return;		/* copied, then */
	wt->op = ORDMA_OP_WRITE;
	wt->op_id = op_id;
	wt->token = token;
	wt->offset = base;
	wt->kmem = mem->kmem;
	wt->addr = mem->addr + base;
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
 * Standing registrations. A window the peer writes into a
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

	ordma_chan_assert_run(chan);
	list_for_each_entry(seg, &chan->standing, op_node)
		if (seg->wtoken == token)
			return seg;
	return NULL;
}

static void ordma_rx_stand_put(struct ordma_chan *chan, struct ordma_seg *seg)
{
	ordma_chan_assert_run(chan);

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

	ordma_chan_assert_run(chan);
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
void ordma_rx_stand_revoke(struct ordma_chan *chan, bool force)
{
	struct ordma_seg *seg, *tmp;

	ordma_chan_assert_run(chan);
	WRITE_ONCE(chan->stand_revoke, false);
	list_for_each_entry_safe(seg, tmp, &chan->standing, op_node) {
		if (!READ_ONCE(seg->revoke))
			continue;
		if (seg->offered && !seg->revoke_sent) {
			ordma_ctrl_revoke(chan, ORDMA_WIRE_REVOKE,
					  seg->wtoken);
			seg->revoke_sent = true;
		}
		if (!seg->offered || force)
			ordma_rx_stand_put(chan, seg);
	}
}

/* The writer let go of the standing offer of window @token. */
void ordma_rx_stand_revoked(struct ordma_chan *chan, u64 token)
{
	struct ordma_seg *seg = ordma_rx_stand_find(chan, token);

	ordma_chan_assert_run(chan);
	if (seg && seg->revoke_sent)
		ordma_rx_stand_put(chan, seg);
}

/* The channel is dead: nothing more can land in any registration. */
void ordma_rx_stand_drop(struct ordma_chan *chan)
{
	struct ordma_seg *seg, *tmp;

	ordma_chan_assert_run(chan);
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
	u64 off = le64_to_cpu(hdr->placed.offset);
	u64 n = le64_to_cpu(hdr->placed.placed);
	u64 total = le64_to_cpu(hdr->placed.write_len);
	u64 op_id = le64_to_cpu(hdr->placed.write_id);
	bool last = le16_to_cpu(hdr->flags) & ORDMA_WIRE_F_LAST;
	struct ordma_seg *seg = ordma_rx_stand_find(chan,
						    le64_to_cpu(hdr->placed.token));

	ordma_chan_assert_run(chan);
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
	ordma_rx_placed(chan, n);
	return 0;
}

/* A piece of a write through a chunk: copy it into the window. */
void ordma_rx_write(struct ordma_chan *chan, struct ordma_wire_hdr *hdr,
		    u32 plen, bool mm_ok)
{
	u64 base = le64_to_cpu(hdr->write.start);
	u64 total = le64_to_cpu(hdr->write.write_len);
	u64 off = le64_to_cpu(hdr->write.offset);
	u64 op_id = le64_to_cpu(hdr->write.write_id);
	u64 token = le64_to_cpu(hdr->write.token);
	bool last = le16_to_cpu(hdr->flags) & ORDMA_WIRE_F_LAST;
	struct ordma_winmem mem = {};
	struct ordma_req *wt;
	int status;

	ordma_chan_assert_run(chan);
	if (chan->rx_wr_id != op_id) {
		ordma_rx_wr_end(chan);
		chan->rx_wr_id = op_id;
		chan->rx_wr_status = 0;
		chan->rx_wr_notified = false;
		chan->rx_wr_standing = false;
	}
	down_read(&chan->ofile->windows_rwsem);
	status = ordma_window_check(chan->ofile, token, base, total,
				    ORDMA_ACCESS_REMOTE_WRITE, &mem);
	status = ordma_rx_token_status(chan, status);
	if (!status && (off < base || off - base > total ||
			plen > total - (off - base)))
		status = -EPROTO;
	if (!status && ((!mem.kmem.nr && (!mm_ok || !chan->ofile->mm)) ||
			ordma_copy_to_win(chan, &mem, off, hdr + 1, plen)))
		status = -EREMOTEIO;
	if (!status && !last && !chan->rx_wr && off == base &&
	    (mm_ok || mem.kmem.nr))
		ordma_rx_wr_start(chan, op_id, token, &mem, base, total, plen);
	if (!status && off == base && !mem.kmem.nr)
		ordma_rx_stand_start(chan, token, mem.addr);
	up_read(&chan->ofile->windows_rwsem);
	/* The next bytes of a placed write, copied or not. */
	wt = chan->rx_wr;
	if (wt && !last && off >= wt->offset && off - wt->offset == wt->done &&
	    plen <= wt->len - wt->done)
		ordma_rx_wr_advance(chan, wt->done + plen);
	if (status && !chan->rx_wr_status)
		chan->rx_wr_status = status;
	if (status || last)
		ordma_rx_write_ack(chan, op_id, chan->rx_wr_status);
	if (last)
		ordma_rx_wr_end(chan);
}

/*
 * The writer wrote bytes into a range we offered for its write, or says
 * the write stopped early. Anything else is a protocol error.
 */
int ordma_rx_write_placed(struct ordma_chan *chan,
			  struct ordma_wire_hdr *hdr)
{
	u64 off = le64_to_cpu(hdr->placed.offset);
	u64 n = le64_to_cpu(hdr->placed.placed);
	bool last = le16_to_cpu(hdr->flags) & ORDMA_WIRE_F_LAST;
	struct ordma_req *wt = chan->rx_wr;
	u64 rel;

	ordma_chan_assert_run(chan);
	if (le16_to_cpu(hdr->flags) & ORDMA_WIRE_F_STANDING)
		return ordma_rx_write_standing(chan, hdr);
	if (le64_to_cpu(hdr->placed.write_id) != chan->rx_wr_id)
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
	ordma_rx_placed(chan, n);
	if (!last) {
		ordma_rx_wr_advance(chan, rel + n);
		return 0;
	}
	ordma_rx_write_ack(chan, chan->rx_wr_id, chan->rx_wr_status);
	ordma_rx_wr_end(chan);
	return 0;
}

/* Unexpose asked: give back the write's ranges if its window is gone. */
void ordma_rx_wr_revoked(struct ordma_chan *chan)
{
	bool there;

	ordma_chan_assert_run(chan);
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
 * The last piece of a write that carries its notification, handled: the
 * chunk becomes the NOTIFY of the next message id, with the
 * write's result, for the next RECV. Returns false if there is none.
 */
bool ordma_rx_notify_rides(struct ordma_chan *chan,
			   struct ordma_chunk *chunk)
{
	struct ordma_wire_hdr *hdr = chunk->buf;

	ordma_chan_assert_run(chan);
	if (!(le16_to_cpu(hdr->flags) & ORDMA_WIRE_F_NOTIFY))
		return false;
	chan->rx_wr_notified = true;
	hdr->opcode = ORDMA_WIRE_NOTIFY;
	hdr->payload_len = 0;
	chunk->len = ORDMA_HDR_LEN;
	hdr->notify.msg_id = 0;		/* the next message id */
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
bool ordma_rx_write_imm(struct ordma_chan *chan,
			struct ordma_chunk *chunk)
{
	struct ordma_wire_hdr *hdr = chunk->buf;
	struct ordma_seg *seg;
	bool offered = false;

	ordma_chan_assert_run(chan);
	list_for_each_entry(seg, &chan->standing, op_node)
		offered |= seg->offered;
	if ((chunk->imm & ~ORDMA_WIRE_IMM_NOTIFY) != ORDMA_WIRE_IMM_STANDING ||
	    !offered) {
		ordma_chan_fault(chan, -EPROTO);
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
 * ordma_file_places() - is a range of window @token still registered?
 * @ofile: the file that exposed it
 * @token: the window
 *
 * Every channel of the file counts, accepted or not, closing or not.
 *
 * Return: true while a segment registered (or being registered) for a
 * peer's write into that window lives.
 */
static bool ordma_file_places(struct ordma_file *ofile, u64 token)
{
	struct ordma_seg *seg;
	bool held = false;

	spin_lock(&ofile->wsegs_lock);
	list_for_each_entry(seg, &ofile->wsegs, w_node) {
		if (seg->wtoken == token) {
			held = true;
			break;
		}
	}
	spin_unlock(&ofile->wsegs_lock);
	return held;
}

/*
 * ordma_file_revoke() - make the channels holding window @token give it back
 * @ofile: the file
 * @token: a window that is gone
 *
 * Each such channel's worker ends the write it places into the window
 * (ordma_xfer_step()); the segments go as usual.
 */
static void ordma_file_revoke(struct ordma_file *ofile, u64 token)
{
	struct ordma_seg *seg;

	spin_lock(&ofile->wsegs_lock);
	list_for_each_entry(seg, &ofile->wsegs, w_node) {
		if (seg->wtoken == token) {
			WRITE_ONCE(seg->chan->rx_wr_revoke, true);
			ordma_chan_kick(seg->chan);
		}
	}
	spin_unlock(&ofile->wsegs_lock);
}

/*
 * ordma_file_unstand() - revoke the standing offers of window @token
 * @ofile: the file
 * @token: a window that is gone
 *
 * Each channel holding a standing registration of it asks its peer to let
 * go (REVOKE) and deregisters it at the answer (ordma_rx_stand_revoke()).
 */
static void ordma_file_unstand(struct ordma_file *ofile, u64 token)
{
	struct ordma_seg *seg;

	spin_lock(&ofile->wsegs_lock);
	list_for_each_entry(seg, &ofile->wsegs, w_node) {
		if (seg->standing && seg->wtoken == token) {
			WRITE_ONCE(seg->revoke, true);
			/* Seen with @revoke (ordma_xfer_step()). */
			smp_store_release(&seg->chan->stand_revoke, true);
			ordma_chan_kick(seg->chan);
		}
	}
	spin_unlock(&ofile->wsegs_lock);
}

/* How long unexpose lets a write being placed into the window go on. */
#define ORDMA_UNPLACE_WAIT	(10 * HZ)

/*
 * ordma_file_unplace() - wait until no peer can write into a window
 * @ofile: the file
 * @token: a window just unexposed
 *
 * Writes into the window that were being placed go on until they end
 * (later pieces through chunks fail with ENOENT, so the writers stop), and
 * their ranges are deregistered; standing offers are revoked, and
 * deregistered once the writers answer. A writer that does not end its
 * write or answer within ORDMA_UNPLACE_WAIT loses the ranges anyway: its
 * next RDMA WRITE into them fails its channel. A fatal signal ends the
 * wait (the file's channels then close).
 */
static void ordma_file_unplace(struct ordma_file *ofile, u64 token)
{
	ordma_file_unstand(ofile, token);
	if (wait_event_timeout(ofile->unplace_wait,
			       !ordma_file_places(ofile, token),
			       ORDMA_UNPLACE_WAIT))
		return;
	ordma_file_revoke(ofile, token);
	wait_event_killable(ofile->unplace_wait,
			    !ordma_file_places(ofile, token));
}

/**
 * ordma_window_unexpose() - ORDMA_IOC_UNEXPOSE
 * @ofile: the file
 * @token: the window
 *
 * Once it returns, no peer access to the window is running, and no range
 * of it is registered for a peer (see ordma_file_unplace()).
 *
 * Return: 0 or -ENOENT.
 */
int ordma_window_unexpose(struct ordma_file *ofile, u64 token)
{
	int ret = ordma_file_unexpose(ofile, token);

	if (!ret)
		ordma_file_unplace(ofile, token);
	return ret;
}
