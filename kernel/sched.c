// SPDX-License-Identifier: GPL-2.0
/*
 * Who runs a channel's data path, and when: one pass (ordma_xfer_step())
 * looks at everything the other contexts left (completions, submissions,
 * registered segments) and moves receiving and sending on as far as it can.
 *
 * One worker per channel (chan->work on ordma_wq) runs the passes, with the
 * owning process's mm adopted (kthread_use_mm), so user copies happen in a
 * kernel thread on the process's behalf. A submission appends to
 * chan->submitted and then runs a few passes itself, in the owner's task,
 * when the worker is idle (ordma_chan_run_inline); a task of the owner
 * waiting for completions takes the kicks and runs the passes between its
 * sleeps (ordma_file_wait): that saves waking the worker for every step.
 * Everything in struct ordma_chan marked "worker" is touched only under
 * chan->run, by the worker or such a task (or by ordma_xfer_flush() from
 * ordma_chan_close(), which takes chan->run once both are stopped).
 *
 * Some reads are lockless on purpose: the pool's quota and free count
 * (a heuristic for ring sizes, pool.c) and chan->phase in accept's scan
 * (re-checked under chan->lock before anything depends on it).
 */
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/kthread.h>

#include "xfer.h"
#include "entry.h"
#include "trace.h"

/*
 * Completed work requests, sends first. A message that arrived is
 * dispatched even on a dead channel: bytes the peer sent before it left are
 * still delivered.
 * Only a pass in the owner's mm (@mm_ok: the worker's or a task's of the
 * owner) may dispatch: anywhere else received chunks are just given back.
 */
static void ordma_xfer_reap(struct ordma_chan *chan, struct list_head *tx_done,
			    struct list_head *done, bool dispatch, bool mm_ok)
{
	struct ordma_chunk *chunk, *tmp;
	struct ordma_tx *tx, *ttmp;

	ordma_chan_assert_run(chan);
	list_for_each_entry_safe(tx, ttmp, tx_done, node) {
		list_del(&tx->node);
		ordma_tx_complete(chan, tx);
	}
	list_for_each_entry_safe(chunk, tmp, done, node) {
		list_del(&chunk->node);
		ordma_rx_completed(chan, true);
		if (chunk->status != IB_WC_SUCCESS) {
			ordma_chan_wr_failed(chan, chunk->status);
			ordma_rx_recycle(chan, chunk);
			continue;
		}
		if (!dispatch || !ordma_rx_dispatch(chan, chunk, mm_ok))
			ordma_rx_recycle(chan, chunk);
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
	LIST_HEAD(tx_done);
	LIST_HEAD(done);
	LIST_HEAD(sub);

	ordma_chan_assert_run(chan);
	spin_lock_irq(&chan->lock);
	list_splice_init(&chan->tx_done, &tx_done);
	list_splice_init(&chan->done, &done);
	list_splice_init(&chan->submitted, &sub);
	spin_unlock_irq(&chan->lock);
	if (!err)
		err = -ENOTCONN;

	ordma_xfer_reap(chan, &tx_done, &done, keep_rx, keep_rx);
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
	ordma_rx_uncount(chan);
	chan->rx_spare = 0;
	list_for_each_entry_safe(c, ctmp, &chan->ctrl, node)
		ordma_ctrl_done(chan, c);
	ordma_places_prune(&chan->tx_early, U64_MAX);
	ordma_rx_wr_end(chan);
	ordma_tx_stand_drop(chan);
	ordma_rx_stand_drop(chan);
}

/*
 * Progress. A send completes once the peer's side took it; a peer that
 * posts no receives leaves ours retrying for ever (RNR retry is our flow
 * control, rnr_retry_count 7). When the sends posted have all stayed
 * incomplete for the device's progress_timeout_ms, the channel fails with
 * -ETIMEDOUT and gives back what it held. chan->stall brings the worker
 * round to look while sends are posted.
 */
static bool ordma_xfer_stalled(struct ordma_chan *chan)
{
	unsigned long limit;

	ordma_chan_assert_run(chan);
	if (!chan->tx_posted)
		return false;
	limit = msecs_to_jiffies(READ_ONCE(chan->odev->progress_ms));
	if (time_after(jiffies, chan->tx_moved + limit))
		return true;
	if (!timer_pending(&chan->stall))
		mod_timer(&chan->stall, chan->tx_moved + limit + 1);
	return false;
}

static void ordma_xfer_stall_timer(struct timer_list *t)
{
	struct ordma_chan *chan = from_timer(chan, t, stall);

	ordma_chan_kick(chan);
}

/*
 * A peer that left gracefully (DISCONNECTED, chan->err -ENOTCONN) had
 * acknowledged what it took before it sent its DREQ; but the CM runs apart
 * from the QP's completer (rdma_rxe from 6.5 completes a kernel QP's sends
 * from a workqueue), so a send the peer took may not have completed here
 * yet, and a drain now would flush it as failed. While sends are posted and
 * one completed within the last ORDMA_LEFT_GRACE_MS (counted from the
 * first look after the disconnect at the earliest), the drain waits, for
 * 4 * ORDMA_LEFT_GRACE_MS after that first look at most;
 * chan->stall brings the worker back. Return: true while it waits.
 */
static bool ordma_xfer_left_grace(struct ordma_chan *chan)
{
	unsigned long last, end, cap;

	ordma_chan_assert_run(chan);
	if (!chan->tx_posted)
		return false;
	if (!chan->left_seen) {
		chan->left_seen = true;
		chan->left_at = jiffies;
	}
	last = time_after(chan->tx_moved, chan->left_at) ? chan->tx_moved :
							   chan->left_at;
	end = last + msecs_to_jiffies(ORDMA_LEFT_GRACE_MS);
	/* A peer that trickles completions holds it 4 graces at most. */
	cap = chan->left_at + msecs_to_jiffies(4 * ORDMA_LEFT_GRACE_MS);
	if (time_after(end, cap))
		end = cap;
	if (!time_before(jiffies, end))
		return false;
	mod_timer(&chan->stall, end);
	return true;
}

/* One pass over everything; true if anything moved. */
static bool ordma_xfer_step(struct ordma_chan *chan, bool mm_ok)
{
	enum ordma_chan_phase phase;
	bool progress, parked;
	LIST_HEAD(tx_done);
	LIST_HEAD(done);
	LIST_HEAD(sub);
	LIST_HEAD(segs);
	int err;

	ordma_chan_assert_run(chan);
	/*
	 * One look at everything the other contexts left: a change after it
	 * comes with a kick, so the next pass sees it (the phase going dead
	 * while this one runs, too).
	 */
	spin_lock_irq(&chan->lock);
	list_splice_init(&chan->tx_done, &tx_done);
	parked = chan->parked;
	if (!parked)
		list_splice_init(&chan->done, &done);
	list_splice_init(&chan->submitted, &sub);
	phase = chan->phase;
	err = chan->err;
	if (phase == ORDMA_PHASE_ESTABLISHED && chan->qp)
		list_splice_init(&chan->reg_done, &segs);
	/* What a submitter was kicked for before now, this pass sees. */
	chan->submit_kicked = false;
	spin_unlock_irq(&chan->lock);
	progress = !list_empty(&done) || !list_empty(&tx_done) ||
		   !list_empty(&sub);

	/*
	 * Operations first: a message that arrived after an operation was
	 * submitted (an offer for the SEND, say) finds it queued.
	 */
	ordma_xfer_take_submitted(chan, &sub);
	ordma_xfer_reap(chan, &tx_done, &done, true, mm_ok);
	/*
	 * Not accepted yet: nothing the peer sent is looked at; its reserved
	 * receive is posted. Dead, accept() or the listener closes it.
	 */
	if (parked)
		return chan->qp && phase != ORDMA_PHASE_DEAD &&
		       ordma_rx_refill(chan);
	/*
	 * A message reaped above failed the channel (a peer's fault, its 8th
	 * token guess say): nothing more goes out, not even the answers
	 * queued before it. The next pass handles the death.
	 */
	if (phase != ORDMA_PHASE_DEAD &&
	    READ_ONCE(chan->phase) == ORDMA_PHASE_DEAD) {
		spin_lock_irq(&chan->lock);
		list_splice(&segs, &chan->reg_done);
		spin_unlock_irq(&chan->lock);
		return true;
	}

	if (phase == ORDMA_PHASE_DEAD) {
		/*
		 * The peer will not answer any more: drain the QP, so every
		 * work request is back, every message that arrived dispatched.
		 */
		if (chan->qp && !chan->qp_flushed) {
			if (err == -ENOTCONN && ordma_xfer_left_grace(chan))
				return progress;
			chan->qp_flushed = true;
			ib_drain_qp(chan->qp);
			spin_lock_irq(&chan->lock);
			list_splice_init(&chan->tx_done, &tx_done);
			list_splice_init(&chan->done, &done);
			spin_unlock_irq(&chan->lock);
			ordma_xfer_reap(chan, &tx_done, &done, true, mm_ok);
			ordma_tx_reclaim(chan);
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
	ordma_rx_take_segs(chan, &segs);
	/* As above, for a fault found delivering the messages. */
	if (READ_ONCE(chan->phase) == ORDMA_PHASE_DEAD)
		return true;
	progress |= ordma_tx_progress(chan, mm_ok);
	if (ordma_xfer_stalled(chan)) {
		ordma_chan_fault(chan, -ETIMEDOUT);
		return true;
	}
	return progress;
}

static void ordma_chan_work(struct work_struct *work)
{
	struct ordma_chan *chan = container_of(work, struct ordma_chan, work);
	struct mm_struct *mm = chan->ofile->mm;
	/* A kernel user's file has no mm: all its memory is reachable. */
	bool use_mm = mm && mmget_not_zero(mm);
	bool mm_ok = !mm || use_mm;
	unsigned int noio = 0;

	if (use_mm)
		kthread_use_mm(mm);
	/* A kernel user's I/O (a block device's) may be what reclaim waits for. */
	if (!mm)
		noio = memalloc_noio_save();
	mutex_lock(&chan->run);
	while (ordma_xfer_step(chan, mm_ok))
		cond_resched();
	mutex_unlock(&chan->run);
	if (!mm)
		memalloc_noio_restore(noio);
	if (use_mm) {
		kthread_unuse_mm(mm);
		mmput(mm);
	}
}

/**
 * ordma_xfer_init() - set up the data path's part of a new channel
 * @chan: the channel, just allocated
 */
void ordma_xfer_init(struct ordma_chan *chan)
{
	INIT_WORK(&chan->work, ordma_chan_work);
	timer_setup(&chan->stall, ordma_xfer_stall_timer, 0);
	ordma_wr_init(chan);
}

/**
 * ordma_xfer_setup() - reserve what a channel needs to make progress
 * @chan: the channel, on its device, before its QP is created
 *
 * Return: 0, or -ENOMEM.
 */
int ordma_xfer_setup(struct ordma_chan *chan)
{
	return ordma_rx_reserve(chan);
}

/**
 * ordma_xfer_prepost() - post the first receives before the peer can send
 * @chan: the channel, its QP created, not connected yet
 *
 * For a pair that counts every message: the peer's first credits are the
 * receives posted here, told in the CM private data.
 *
 * Return: the receives posted, 0 to ORDMA_RX_DEPTH.
 */
u16 ordma_xfer_prepost(struct ordma_chan *chan)
{
	u16 posted;

	mutex_lock(&chan->run);
	ordma_rx_refill(chan);
	posted = chan->rx_credit_posted;
	chan->rx_credit_told = posted;
	mutex_unlock(&chan->run);
	return posted;
}

/**
 * ordma_xfer_release() - free what ordma_xfer_setup() took of its own
 * @chan: the channel, flushed, its QP destroyed
 */
void ordma_xfer_release(struct ordma_chan *chan)
{
	/* Stopped, so no pass runs; taken for the data path's assertions. */
	mutex_lock(&chan->run);
	ordma_tx_reclaim(chan);
	mutex_unlock(&chan->run);
	ordma_rx_release(chan);
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
		ordma_chan_queue_work(chan, &chan->work);
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
		ordma_chan_queue_work(chan, &chan->work);
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
		ordma_chan_queue_work(chan, &chan->work);
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

/* Trace ids of operations, over every channel. */
static atomic64_t ordma_trace_ids = ATOMIC64_INIT(0);

/*
 * @op is queued (chan->lock): with ordma_submit enabled it gets a trace id,
 * which the events of its copies, segments, sends and completion carry.
 */
static void ordma_trace_submit(struct ordma_chan *chan, struct ordma_req *op)
{
	lockdep_assert_held(&chan->lock);
	if (!trace_ordma_submit_enabled())
		return;
	op->tid = atomic64_inc_return(&ordma_trace_ids);
	trace_ordma_submit(ordma_trace_qpn(chan), op->tid, op->op, op->len,
			   op->cookie);
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
		empty = !ordma_pool_has_room(&chan->odev->pool, &chan->held);
		mutex_unlock(&chan->teardown);
		if (empty)
			return -EAGAIN;
	}

	spin_lock_irqsave(&chan->lock, flags);
	ret = ordma_chan_accepts(chan, op);
	if (!ret) {
		atomic64_inc(&chan->inflight);
		ordma_trace_submit(chan, op);
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
