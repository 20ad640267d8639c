/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The data path's own header: included by the engine's files (wr.c, op.c,
 * rx.c, tx.c, window.c) and by sched.c, which runs them; nothing else.
 * Everything here runs under chan->run unless it says otherwise.
 */
#ifndef _ORDMA_XFER_H
#define _ORDMA_XFER_H

#include "chan.h"

/*
 * A header-only message waiting for a send slot; @answer: to a message of
 * the peer, counted in chan->ctrl_answers.
 */
struct ordma_ctrl {
	struct list_head node;
	struct ordma_wire_hdr hdr;
	bool answer;
};

/*
 * A range of a message the receiver offered for RDMA WRITE; @msg_id and
 * @buf_len matter while it waits on chan->tx_early for its message. A
 * standing offer of a window (window.c) is one too: @msg_id the window's
 * token, @off and @len window offsets.
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

/* wr.c */
void ordma_wr_init(struct ordma_chan *chan);
int ordma_rx_reserve(struct ordma_chan *chan);
void ordma_rx_release(struct ordma_chan *chan);
void ordma_rx_completed(struct ordma_chan *chan, bool one);
void ordma_rx_recycle(struct ordma_chan *chan, struct ordma_chunk *chunk);
bool ordma_rx_refill(struct ordma_chan *chan);
void ordma_rx_account(struct ordma_chan *chan, bool payload, u64 len);
void ordma_rx_placed(struct ordma_chan *chan, u64 n);
void ordma_ctrl_queue(struct ordma_chan *chan, const struct ordma_wire_hdr *hdr);
void ordma_ctrl_answer(struct ordma_chan *chan,
		       const struct ordma_wire_hdr *hdr);
void ordma_ctrl_done(struct ordma_chan *chan, struct ordma_ctrl *c);
int ordma_rx_token_status(struct ordma_chan *chan, int status);
bool ordma_rx_credit_due(struct ordma_chan *chan);
struct ordma_tx *ordma_tx_get(struct ordma_chan *chan);
int ordma_tx_post(struct ordma_chan *chan, struct ordma_tx *tx,
		  struct ordma_req *op);
u32 ordma_payload_max(struct ordma_chan *chan, struct ordma_chunk *chunk);
void ordma_tx_put(struct ordma_chan *chan, struct ordma_tx *tx);
void ordma_tx_reclaim(struct ordma_chan *chan);
bool ordma_tx_credit(struct ordma_chan *chan);
bool ordma_tx_ctrl_credit(struct ordma_chan *chan,
			  const struct ordma_wire_hdr *hdr);
void ordma_free_chunks(struct ordma_chan *chan, struct list_head *q);

/* op.c */
unsigned long ordma_copy_from_user(struct ordma_chan *chan, u64 id, void *dst,
				   u64 uaddr, u64 n);
unsigned long ordma_copy_to_user(struct ordma_chan *chan, u64 id, u64 uaddr,
				 const void *src, u64 n);
bool ordma_op_reachable(const struct ordma_req *op, bool mm_ok);
unsigned long ordma_copy_to_win(struct ordma_chan *chan,
				const struct ordma_winmem *mem, u64 off,
				const void *src, u64 n);
unsigned long ordma_copy_from_win(struct ordma_chan *chan,
				  const struct ordma_winmem *mem, u64 off,
				  void *dst, u64 n);
unsigned long ordma_copy_from_op(struct ordma_chan *chan, struct ordma_req *op,
				 u64 off, void *dst, u64 n);
unsigned long ordma_copy_to_op(struct ordma_chan *chan, struct ordma_req *op,
			       u64 off, const void *src, u64 n);
void ordma_xfer_take_submitted(struct ordma_chan *chan, struct list_head *sub);
void ordma_op_complete(struct ordma_chan *chan, struct ordma_req *op, s64 res);
void ordma_fail_queue(struct ordma_chan *chan, struct list_head *q, int err);
struct ordma_req *ordma_op_find(struct list_head *q, u64 op_id);
void ordma_op_put_segs(struct ordma_chan *chan, struct ordma_req *op,
		       u64 upto);
struct ordma_seg *ordma_op_seg(struct ordma_req *op, u64 off);
int ordma_op_plan(struct ordma_chan *chan, struct ordma_req *op, u64 total,
		  struct ordma_plan *plan);
void ordma_op_ask_segs(struct ordma_chan *chan, struct ordma_req *op,
		       u64 upto, u64 total, bool write);
void ordma_rx_plan_from(struct ordma_chan *chan, struct ordma_req *op,
			u64 total, u64 first, u64 ahead);
bool ordma_rx_offered(struct ordma_req *op, u64 off, u64 n);
void ordma_op_take_place(struct ordma_req *op, struct ordma_place *pl);
void ordma_op_free_places(struct ordma_req *op);
u32 ordma_places_prune(struct list_head *places, u64 posted);

/* window.c */
int ordma_tx_stand_offer(struct ordma_chan *chan, struct ordma_wire_hdr *hdr);
void ordma_tx_stand_use(struct ordma_chan *chan, struct ordma_req *op);
void ordma_tx_stand_revoke(struct ordma_chan *chan, u64 token);
void ordma_tx_stand_drop(struct ordma_chan *chan);
void ordma_rx_write(struct ordma_chan *chan, struct ordma_wire_hdr *hdr,
		    u32 plen, bool mm_ok);
int ordma_rx_write_placed(struct ordma_chan *chan, struct ordma_wire_hdr *hdr);
bool ordma_rx_write_imm(struct ordma_chan *chan, struct ordma_chunk *chunk);
bool ordma_rx_notify_rides(struct ordma_chan *chan, struct ordma_chunk *chunk);
bool ordma_rx_wr_window(struct ordma_chan *chan);
void ordma_rx_wr_end(struct ordma_chan *chan);
void ordma_rx_uncount(struct ordma_chan *chan);
void ordma_rx_wr_revoked(struct ordma_chan *chan);
void ordma_rx_stand_revoke(struct ordma_chan *chan, bool force);
void ordma_rx_stand_revoked(struct ordma_chan *chan, u64 token);
void ordma_rx_stand_drop(struct ordma_chan *chan);

/* rx.c */
bool ordma_rx_dispatch(struct ordma_chan *chan, struct ordma_chunk *chunk,
		       bool mm_ok);
bool ordma_recv_progress(struct ordma_chan *chan, bool mm_ok);
void ordma_rx_take_segs(struct ordma_chan *chan, struct list_head *done);
void ordma_rx_ask_more(struct ordma_chan *chan);
bool ordma_rx_early(struct ordma_chan *chan);

/* tx.c */
bool ordma_tx_progress(struct ordma_chan *chan, bool mm_ok);
void ordma_tx_complete(struct ordma_chan *chan, struct ordma_tx *tx);

#endif /* _ORDMA_XFER_H */
