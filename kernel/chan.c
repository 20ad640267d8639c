// SPDX-License-Identifier: GPL-2.0
/*
 * Channel and listener objects: references, the channel's failure, and the
 * kick that makes its data path run. Below everything that runs a channel:
 * the RDMA CM side (cm.c) builds and tears channels down, the scheduler
 * (sched.c) runs their passes, and the layers between only kick.
 *
 * Locking:
 * - chan->lock (spinlock, taken from softirq: irqsave) protects the phase,
 *   the error, the closing flag and the queues that ioctls and completion
 *   handlers feed (the fields marked "lock" in chan.h).
 * - chan->run (mutex) is held by whoever runs the data path: the worker or
 *   a task of the owner (sched.c); the fields marked "worker" are its.
 * - chan->teardown (mutex) serialises ordma_chan_close() (cm.c).
 * - ofile->run_lock (spinlock) protects the file's runq and the runner
 *   counts; it nests inside chan->lock.
 * Order: chan->teardown, then chan->run, then odev->chans_lock; the
 * spinlocks are innermost.
 *
 * Channel ends and listeners are listed by id in ordma_objs for netlink: an
 * object is stored once it is built far enough to be described
 * (ordma_chan_publish(), ordma_listener_publish()) and erased by its
 * release, under the xarray's lock, before it is freed, so a lookup under
 * that lock that gets a reference with kref_get_unless_zero() holds a live
 * object. The xarray's lock nests inside no other lock of ordma.
 */
#include <linux/notifier.h>
#include <linux/slab.h>

#include "chan.h"
#include "trace.h"

struct workqueue_struct *ordma_wq;

static DEFINE_XARRAY_FLAGS(ordma_objs, XA_FLAGS_ALLOC1);
static u32 ordma_objs_next;

static int ordma_obj_publish(struct ordma_obj *obj)
{
	int ret;

	ret = xa_alloc_cyclic(&ordma_objs, &obj->id, obj, xa_limit_31b,
			      &ordma_objs_next, GFP_KERNEL_ACCOUNT);
	return ret < 0 ? ret : 0;
}

static void ordma_obj_unpublish(struct ordma_obj *obj)
{
	if (obj->id)
		xa_erase(&ordma_objs, obj->id);
}

static void ordma_listener_release(struct kref *kref)
{
	struct ordma_listener *lis;

	lis = container_of(kref, struct ordma_listener, kref);
	ordma_obj_unpublish(&lis->obj);
	ordma_user_uncharge(lis->ofile->tenant, ORDMA_USER_CHANS);
	ordma_file_put(lis->ofile);
	kfree(lis);
}

void ordma_listener_get(struct ordma_listener *lis)
{
	kref_get(&lis->kref);
}

void ordma_listener_put(struct ordma_listener *lis)
{
	kref_put(&lis->kref, ordma_listener_release);
}

static void ordma_chan_release(struct kref *kref)
{
	struct ordma_chan *chan = container_of(kref, struct ordma_chan, kref);

	WARN_ON_ONCE(chan->cm_id);
	ordma_obj_unpublish(&chan->obj);
	if (chan->listener)
		ordma_listener_put(chan->listener);
	ordma_user_uncharge(chan->ofile->tenant, ORDMA_USER_CHANS);
	ordma_file_put(chan->ofile);
	kfree(chan);
}

void ordma_chan_get(struct ordma_chan *chan)
{
	kref_get(&chan->kref);
}

void ordma_chan_put(struct ordma_chan *chan)
{
	kref_put(&chan->kref, ordma_chan_release);
}

/**
 * ordma_obj_get() - look up an object of a file by id, with a reference
 * @ofile: the file
 * @id: the object's id in @ofile
 * @kind: the kind it must be
 *
 * Return: the object, or NULL if @ofile has no object of @kind with @id.
 */
struct ordma_obj *ordma_obj_get(struct ordma_file *ofile, u32 id,
				enum ordma_chan_kind kind)
{
	struct ordma_obj *obj;

	xa_lock(&ofile->objs);
	obj = xa_load(&ofile->objs, id);
	if (obj && obj->kind == kind) {
		if (kind == ORDMA_KIND_CHAN)
			ordma_chan_get((struct ordma_chan *)obj);
		else
			ordma_listener_get((struct ordma_listener *)obj);
	} else {
		obj = NULL;
	}
	xa_unlock(&ofile->objs);
	return obj;
}

/**
 * ordma_obj_put() - drop the reference ordma_obj_get() took
 * @obj: the object
 */
void ordma_obj_put(struct ordma_obj *obj)
{
	if (obj->kind == ORDMA_KIND_CHAN)
		ordma_chan_put((struct ordma_chan *)obj);
	else
		ordma_listener_put((struct ordma_listener *)obj);
}

/* The pool has a chunk again, maybe: once per ordma_pool_wait(). */
static int ordma_chan_pool_wake(struct wait_queue_entry *w, unsigned int mode,
				int flags, void *key)
{
	list_del_init(&w->entry);
	ordma_chan_kick(container_of(w, struct ordma_chan, pool_waiter));
	return 1;
}

static void ordma_chan_down_work(struct work_struct *work)
{
	struct ordma_chan *chan = container_of(work, struct ordma_chan,
					       down_work);
	bool held;
	int err;

	spin_lock_irq(&chan->lock);
	held = chan->kheld;
	err = chan->err ? chan->err : -ENOTCONN;
	spin_unlock_irq(&chan->lock);
	if (held)
		chan->ofile->kern->chan_down(chan, err);
	ordma_chan_put(chan);
}

/**
 * ordma_chan_alloc() - a new channel object, not connected to anything
 * @ofile: the file that owns it (referenced)
 *
 * Every list and lock of the object is initialised here; the layers above
 * set up what is theirs (work items, completion handlers) before the
 * channel is used (cm.c).
 *
 * Return: the channel with one reference, or ERR_PTR(-EDQUOT) (its user
 * holds its bound of channels) or ERR_PTR(-ENOMEM).
 */
struct ordma_chan *ordma_chan_alloc(struct ordma_file *ofile)
{
	struct ordma_chan *chan;
	int ret;

	ret = ordma_user_charge(ofile->tenant, ORDMA_USER_CHANS);
	if (ret)
		return ERR_PTR(ret);
	chan = kzalloc(sizeof(*chan), GFP_KERNEL_ACCOUNT);
	if (!chan) {
		ordma_user_uncharge(ofile->tenant, ORDMA_USER_CHANS);
		return ERR_PTR(-ENOMEM);
	}
	chan->obj.kind = ORDMA_KIND_CHAN;
	chan->obj.born = jiffies;
	chan->held.user = ordma_user_chunks(ofile->tenant);
	kref_init(&chan->kref);
	kref_get(&ofile->kref);
	chan->ofile = ofile;
	mutex_init(&chan->teardown);
	mutex_init(&chan->run);
	spin_lock_init(&chan->lock);
	chan->phase = ORDMA_PHASE_CONNECTING;
	INIT_LIST_HEAD(&chan->submitted);
	INIT_LIST_HEAD(&chan->run_node);
	INIT_LIST_HEAD(&chan->done);
	INIT_LIST_HEAD(&chan->tx_done);
	INIT_LIST_HEAD(&chan->dev_node);
	INIT_LIST_HEAD(&chan->pending_node);
	init_completion(&chan->connected);
	init_waitqueue_head(&chan->connect_wait);
	INIT_LIST_HEAD(&chan->rx_ring);
	INIT_LIST_HEAD(&chan->sendq);
	INIT_LIST_HEAD(&chan->recvq);
	INIT_LIST_HEAD(&chan->writeq);
	INIT_LIST_HEAD(&chan->readq);
	INIT_LIST_HEAD(&chan->rx_msgs);
	INIT_LIST_HEAD(&chan->remote_reads);
	INIT_LIST_HEAD(&chan->ctrl);
	init_waitqueue_func_entry(&chan->pool_waiter, ordma_chan_pool_wake);
	/* Not queued: ordma_pool_wait() and cancel test the entry. */
	INIT_LIST_HEAD(&chan->pool_waiter.entry);
	INIT_LIST_HEAD(&chan->segs);
	INIT_LIST_HEAD(&chan->reg_todo);
	INIT_LIST_HEAD(&chan->reg_done);
	chan->next_op_id = 1;
	chan->next_msg_id = 1;
	INIT_LIST_HEAD(&chan->tx_early);
	INIT_LIST_HEAD(&chan->standing);
	INIT_LIST_HEAD(&chan->tx_standing);
	INIT_WORK(&chan->down_work, ordma_chan_down_work);
	INIT_LIST_HEAD(&chan->knode);
	init_completion(&chan->kclosed);
	return chan;
}

/**
 * ordma_chan_down_locked() - tell a kernel user that its channel died
 * @chan: the channel, DEAD (chan->lock held)
 *
 * Once, if a kernel user holds it: ofile->kern->chan_down runs from a work
 * item. Any context.
 */
void ordma_chan_down_locked(struct ordma_chan *chan)
{
	lockdep_assert_held(&chan->lock);
	if (!chan->kheld || chan->down_told)
		return;
	chan->down_told = true;
	kref_get(&chan->kref);
	queue_work(ordma_wq, &chan->down_work);
}

/* DEAD with @err, unless it was already: true if this made it so. */
static bool ordma_chan_die(struct ordma_chan *chan, int err)
{
	unsigned long flags;
	bool first;

	spin_lock_irqsave(&chan->lock, flags);
	first = chan->phase != ORDMA_PHASE_DEAD;
	if (first) {
		ordma_trace(chan_state, chan, chan->phase, ORDMA_PHASE_DEAD, err);
		chan->phase = ORDMA_PHASE_DEAD;
		chan->err = err;
		ordma_chan_down_locked(chan);
	}
	spin_unlock_irqrestore(&chan->lock, flags);
	return first;
}

/**
 * ordma_chan_own() - a kernel user holds a channel from now on
 * @chan: the channel, of a kernel user's file
 *
 * Its death is told from now on (ordma_chan_down_locked()), already if it
 * died before.
 */
void ordma_chan_own(struct ordma_chan *chan)
{
	spin_lock_irq(&chan->lock);
	chan->kheld = true;
	if (chan->phase == ORDMA_PHASE_DEAD)
		ordma_chan_down_locked(chan);
	spin_unlock_irq(&chan->lock);
}

/**
 * ordma_chan_disown() - a kernel user lets go of a channel
 * @chan: the channel
 *
 * Its death is not told from now on: a telling that has not called its
 * user yet does nothing. One that has may still run: see
 * ordma_chan_down_wait().
 */
void ordma_chan_disown(struct ordma_chan *chan)
{
	spin_lock_irq(&chan->lock);
	chan->kheld = false;
	spin_unlock_irq(&chan->lock);
}

/**
 * ordma_chan_down_wait() - wait for the telling of a channel's death
 * @chan: the channel, disowned
 *
 * Process context. Once this returns no telling runs, but the one calling
 * this (a user closing its channel from its chan_down).
 */
void ordma_chan_down_wait(struct ordma_chan *chan)
{
	if (current_work() != &chan->down_work &&
	    cancel_work_sync(&chan->down_work))
		ordma_chan_put(chan);
}

/**
 * ordma_chan_fail() - mark a channel dead and fail what it has queued
 * @chan: the channel
 * @err: negative errno for the operations, such as -ENOTCONN
 *
 * Any context. The resources stay until ordma_chan_close().
 */
void ordma_chan_fail(struct ordma_chan *chan, int err)
{
	ordma_chan_die(chan, err);
	ordma_chan_kick(chan);
}

/**
 * ordma_chan_wr_failed() - a work request of a channel's QP failed
 * @chan: the channel
 * @status: the completion's status, not IB_WC_SUCCESS
 *
 * Any context. An error fails the channel with -EIO. So does a flush while
 * the channel is not dead: ordma moves its QP to the error state only once
 * the channel died, so the QP went there by itself, and the device may not
 * have said so (rdma_rxe's responder raises no event when it refuses a
 * peer's RDMA WRITE; only the receives it flushes tell). On a device whose
 * QP ends with its connection (iWARP: the peer closed the TCP stream, and
 * the CM says so after the flush) such a flush is the peer leaving:
 * -ENOTCONN, as its disconnect gives.
 */
void ordma_chan_wr_failed(struct ordma_chan *chan, enum ib_wc_status status)
{
	if (status != IB_WC_WR_FLUSH_ERR)
		ordma_chan_fail(chan, -EIO);
	else if (READ_ONCE(chan->phase) != ORDMA_PHASE_DEAD)
		ordma_chan_fail(chan, chan->odev->close_flushes ? -ENOTCONN :
				-EIO);
}

/* Told of each channel a peer's fault failed; see ordma_chan_fault(). */
static ATOMIC_NOTIFIER_HEAD(ordma_fault_chain);

/**
 * ordma_chan_fault() - fail a channel whose peer broke a rule
 * @chan: the channel
 * @err: what its operations get: -EPROTO (a malformed or out-of-place
 *	message), -ENOBUFS (it made us hold more than the bound), -EACCES (it
 *	guessed window tokens), -ETIMEDOUT (it stopped making progress)
 *
 * Any context. Counted in the device's peer_faults, once per channel; the
 * chain of ordma_fault_notifier_register() is called then, here.
 */
void ordma_chan_fault(struct ordma_chan *chan, int err)
{
	if (ordma_chan_die(chan, err) && chan->odev) {
		atomic64_inc(&chan->odev->peer_faults);
		atomic_notifier_call_chain(&ordma_fault_chain, -err, chan);
	}
	ordma_chan_kick(chan);
}

/**
 * ordma_fault_notifier_register() - be told of each peer's fault
 * @nb: called with the errno (positive) as its action and the struct
 *	ordma_chan that ordma_chan_fault() failed as its data, in any
 *	context, with the channel valid for the call only
 *
 * Return: 0 or a negative errno.
 */
int ordma_fault_notifier_register(struct notifier_block *nb)
{
	return atomic_notifier_chain_register(&ordma_fault_chain, nb);
}

/**
 * ordma_fault_notifier_unregister() - undo ordma_fault_notifier_register()
 * @nb: the notifier; no call of it runs once this returns
 */
void ordma_fault_notifier_unregister(struct notifier_block *nb)
{
	atomic_notifier_chain_unregister(&ordma_fault_chain, nb);
}

/**
 * ordma_chan_queue_work() - queue a work item of a channel
 * @chan: the channel
 * @work: its data path worker or its registration worker
 *
 * Any context. Does nothing once ordma_chan_close() has stopped the
 * channel's workers: they are not run again.
 */
void ordma_chan_queue_work(struct ordma_chan *chan, struct work_struct *work)
{
	unsigned long flags;

	spin_lock_irqsave(&chan->lock, flags);
	if (!chan->closing)
		queue_work(ordma_wq, work);
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

/**
 * ordma_chan_kick_locked() - ordma_chan_kick() with chan->lock held
 * @chan: the channel
 */
void ordma_chan_kick_locked(struct ordma_chan *chan)
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
 * both: nothing may run them after that.
 */
void ordma_chan_kick(struct ordma_chan *chan)
{
	unsigned long flags;

	spin_lock_irqsave(&chan->lock, flags);
	ordma_chan_kick_locked(chan);
	spin_unlock_irqrestore(&chan->lock, flags);
}

/**
 * ordma_chan_info() - fill ORDMA_IOC_CHAN_INFO's outputs
 * @chan: the channel
 * @info: the reply
 */
void ordma_chan_info(struct ordma_chan *chan, struct ordma_chan_info *info)
{
	unsigned long flags;
	int err;

	spin_lock_irqsave(&chan->lock, flags);
	switch (chan->phase) {
	case ORDMA_PHASE_DEAD:
		err = chan->err;
		info->out_state = err == -ENODEV ? ORDMA_CHAN_DEVICE_REMOVED :
						   ORDMA_CHAN_DISCONNECTED;
		break;
	default:
		info->out_state = ORDMA_CHAN_CONNECTED;
		break;
	}
	spin_unlock_irqrestore(&chan->lock, flags);

	mutex_lock(&chan->teardown);
	if (chan->odev)
		strscpy(info->out_ibdev, dev_name(&chan->odev->ibdev->dev),
			sizeof(info->out_ibdev));
	mutex_unlock(&chan->teardown);
	info->out_bytes_tx = atomic64_read(&chan->bytes_tx);
	info->out_bytes_rx = atomic64_read(&chan->bytes_rx);
	info->out_ops = atomic64_read(&chan->ops);
	info->out_errors = atomic64_read(&chan->errors);
	info->out_inflight = atomic64_read(&chan->inflight);
	info->out_chunks_held = atomic_read(&chan->held.chunks);
	info->out_pages_pinned = atomic64_read(&chan->pages_pinned);
	info->out_mrs_live = atomic_read(&chan->mrs_live);
	info->out_rx_size = READ_ONCE(chan->rx_size) - ORDMA_HDR_LEN;
}

/**
 * ordma_chan_peer() - the peer's address
 * @chan: the channel
 *
 * Return: the address, valid while @chan is.
 */
struct sockaddr *ordma_chan_peer(struct ordma_chan *chan)
{
	return (struct sockaddr *)&chan->peer;
}

/**
 * ordma_chan_err() - why a channel died
 * @chan: the channel
 *
 * Return: the negative errno that ended it, or 0 while it lives.
 */
int ordma_chan_err(struct ordma_chan *chan)
{
	unsigned long flags;
	int err;

	spin_lock_irqsave(&chan->lock, flags);
	err = chan->phase == ORDMA_PHASE_DEAD ? chan->err : 0;
	spin_unlock_irqrestore(&chan->lock, flags);
	return err;
}

/**
 * ordma_chan_publish() - list a channel end for netlink
 * @chan: the channel, whose QP was just made on @cm_id's device
 * @cm_id: its CM id, bound to the local address
 *
 * Context: process context (a CM handler or a request handler).
 * Return: 0, -ENOMEM or -EBUSY (no id left).
 */
int ordma_chan_publish(struct ordma_chan *chan, struct rdma_cm_id *cm_id)
{
	chan->qpn = chan->qp->qp_num;
	strscpy(chan->ibdev, dev_name(&cm_id->device->dev), sizeof(chan->ibdev));
	memcpy(&chan->local, &cm_id->route.addr.src_addr, sizeof(chan->local));
	return ordma_obj_publish(&chan->obj);
}

/**
 * ordma_listener_publish() - list a listener for netlink
 * @lis: the listener, listening on @lis->local
 *
 * Return: 0, -ENOMEM or -EBUSY (no id left).
 */
int ordma_listener_publish(struct ordma_listener *lis)
{
	lis->obj.born = jiffies;
	return ordma_obj_publish(&lis->obj);
}

static bool ordma_obj_tryget(struct ordma_obj *obj)
{
	if (obj->kind == ORDMA_KIND_CHAN)
		return kref_get_unless_zero(&((struct ordma_chan *)obj)->kref);
	return kref_get_unless_zero(&((struct ordma_listener *)obj)->kref);
}

/**
 * ordma_obj_next() - the published object of @kind of the lowest id from
 *	@id on
 * @id: where to start; set to the object's id
 * @kind: channel ends or listeners
 *
 * Return: the object with a reference (ordma_obj_put()), or NULL.
 */
struct ordma_obj *ordma_obj_next(unsigned long *id, enum ordma_chan_kind kind)
{
	struct ordma_obj *obj;

	xa_lock(&ordma_objs);
	for (obj = xa_find(&ordma_objs, id, ULONG_MAX, XA_PRESENT); obj;
	     obj = xa_find_after(&ordma_objs, id, ULONG_MAX, XA_PRESENT))
		if (obj->kind == kind && ordma_obj_tryget(obj))
			break;
	xa_unlock(&ordma_objs);
	return obj;
}

/**
 * ordma_chan_lookup() - the published channel end of an id
 * @id: its id (struct ordma_obj)
 *
 * Return: the channel with a reference (ordma_chan_put()), or NULL.
 */
struct ordma_chan *ordma_chan_lookup(u32 id)
{
	struct ordma_obj *obj;

	xa_lock(&ordma_objs);
	obj = xa_load(&ordma_objs, id);
	if (obj && (obj->kind != ORDMA_KIND_CHAN || !ordma_obj_tryget(obj)))
		obj = NULL;
	xa_unlock(&ordma_objs);
	return (struct ordma_chan *)obj;
}

/**
 * ordma_chan_stat() - what netlink shows of a channel end
 * @chan: a published channel (referenced)
 * @st: filled in
 *
 * Reads the data path's credits and receive count without its lock: a
 * snapshot that may be one message old.
 */
void ordma_chan_stat(struct ordma_chan *chan, struct ordma_chan_stat *st)
{
	unsigned long flags;
	u64 ops;
	s32 credits;

	st->id = chan->obj.id;
	st->qpn = chan->qpn;
	memcpy(st->ibdev, chan->ibdev, sizeof(st->ibdev));
	memcpy(&st->local, &chan->local, sizeof(st->local));
	memcpy(&st->peer, &chan->peer, sizeof(st->peer));

	spin_lock_irqsave(&chan->lock, flags);
	st->err = 0;
	switch (chan->phase) {
	case ORDMA_PHASE_CONNECTING:
		st->state = ORDMA_NL_CHAN_CONNECTING;
		break;
	case ORDMA_PHASE_ESTABLISHED:
		st->state = chan->parked ? ORDMA_NL_CHAN_PARKED :
					   ORDMA_NL_CHAN_ESTABLISHED;
		break;
	default:
		st->state = ORDMA_NL_CHAN_DEAD;
		st->err = chan->err;
		break;
	}
	spin_unlock_irqrestore(&chan->lock, flags);

	credits = (s32)(READ_ONCE(chan->tx_credit_peer) -
			READ_ONCE(chan->tx_credit_sent));
	st->tx_credits = max(credits, 0);
	st->rx_posted = READ_ONCE(chan->rx_posted);
	st->rx_size = READ_ONCE(chan->rx_size);
	st->peer_rx_size = READ_ONCE(chan->peer_rx_size);
	st->chunks_held = atomic_read(&chan->held.chunks);
	st->mrs_live = atomic_read(&chan->mrs_live);
	st->bytes_tx = atomic64_read(&chan->bytes_tx);
	st->bytes_rx = atomic64_read(&chan->bytes_rx);
	ops = atomic64_read(&chan->ops);
	st->ops_tx = atomic64_read(&chan->ops_tx);
	st->ops_rx = ops - min(ops, st->ops_tx);
	st->errors = atomic64_read(&chan->errors);
	st->inflight = atomic64_read(&chan->inflight);
	st->registrations = atomic64_read(&chan->registrations);
	st->pages_pinned = atomic64_read(&chan->pages_pinned);
	st->age_ms = jiffies64_to_msecs(jiffies - chan->obj.born);
}

int ordma_chan_init(void)
{
	ordma_wq = alloc_workqueue("ordma", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	return ordma_wq ? 0 : -ENOMEM;
}

void ordma_chan_exit(void)
{
	destroy_workqueue(ordma_wq);
}
