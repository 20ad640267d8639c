// SPDX-License-Identifier: GPL-2.0
/*
 * The RDMA CM side of channels: connect, listen, accept, close, and the
 * channels of a device that goes away.
 *
 * Life cycle of a channel. The active side (ordma_chan_connect) creates a CM
 * id and resolves the address; the CM handler resolves the route, builds the
 * CQ and QP on the device the route chose and connects. The passive side
 * builds the same from the listener's CONNECT_REQUEST event and accepts.
 * ESTABLISHED makes the channel usable; on the passive side it then waits on
 * the listener's pending list for ordma_listener_accept().
 *
 * Teardown (ordma_chan_close) runs in process context, never from the CM
 * handler of the channel's own id: disconnect, drain the QP (every posted
 * work request completes, flushed), stop the worker, fail every operation
 * still queued, give every chunk back, destroy QP, CQ and CM id, and drop
 * the device reference. It runs once, serialised by chan->teardown; callers
 * are ORDMA_IOC_CLOSE, the file's release, device removal and failed set-up.
 * A peer's disconnect or a fatal QP event only marks the channel dead
 * (ordma_chan_fail); its resources stay until one of those callers closes it.
 *
 * Locking (with chan.c's):
 * - chan->teardown (mutex) serialises ordma_chan_close(); close sets
 *   chan->closing, then waits for the workers and for chan->run.
 * - odev->chans_lock (mutex) protects odev->chans, odev->dying and
 *   odev->nbuilding, and each channel's in_setup.
 * - ordma_listeners_lock (mutex) protects ordma_listeners.
 * - lis->lock (spinlock) protects a listener's pending list and dead flag.
 */
#include <linux/slab.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <net/net_namespace.h>
#include <rdma/rdma_cm.h>
#include <rdma/ib_cm.h>

#include "entry.h"
#include "nl.h"
#include "trace.h"

static bool ordma_credit_all;
module_param_named(credit_all, ordma_credit_all, bool, 0644);
MODULE_PARM_DESC(credit_all,
		 "Count every message against the credits on every device, as on a device without RNR retry (iWARP), for channels connected from now on");

#define ORDMA_CONNECT_TIMEOUT_MS	5000
#define ORDMA_BACKLOG			128
#define ORDMA_MIN_RNR_TIMER		IB_RNR_TIMER_000_32
/*
 * What a parked channel (not accepted yet, one receive posted) tells a peer
 * that finds no receive: come back in 82 ms, not in 0.32. A peer streaming
 * into a parked channel otherwise has the device retry its sends every
 * jiffy until accept(), for as long as it likes, on as many connections as
 * the backlog holds; the price is at most that long a wait, once, for a
 * peer that sent more than one message before it was accepted.
 */
#define ORDMA_PARKED_RNR_TIMER		IB_RNR_TIMER_081_92
/* 4.096 us << 20: about 4 s per retry, patient with slow (emulated) peers. */
#define ORDMA_ACK_TIMEOUT		20

static LIST_HEAD(ordma_listeners);
static DEFINE_MUTEX(ordma_listeners_lock);

/*
 * A receiver out of buffers NAKs and the sender retries soon; an ACK may
 * take long from a slow (emulated) peer.
 */
static int ordma_cm_set_timers(struct rdma_cm_id *cm_id, u8 min_rnr_timer)
{
	int ret = rdma_set_min_rnr_timer(cm_id, min_rnr_timer);

	return ret ? ret : rdma_set_ack_timeout(cm_id, ORDMA_ACK_TIMEOUT);
}

/* The namespace a file's ids are made in: its opener's, init's for the kernel. */
static struct net *ordma_cm_net(struct ordma_file *ofile)
{
	return ofile->kern ? &init_net : current->nsproxy->net_ns;
}

/*
 * A new channel with every layer's part set up: the data path's work items
 * and completion handlers (sched.c) and the registration worker (mr.c).
 */
static struct ordma_chan *ordma_chan_create(struct ordma_file *ofile)
{
	struct ordma_chan *chan = ordma_chan_alloc(ofile);

	if (IS_ERR(chan))
		return chan;
	ordma_xfer_init(chan);
	ordma_mr_init(chan);
	return chan;
}

/*
 * After chan->closing is set: wait for the worker, a task of the owner
 * running the data path (ordma_chan_run_inline() checks closing under
 * chan->run) and the registration worker. Nothing runs them again.
 */
static void ordma_chan_stop(struct ordma_chan *chan)
{
	cancel_work_sync(&chan->work);
	mutex_lock(&chan->run);
	mutex_unlock(&chan->run);
	cancel_work_sync(&chan->reg_work);
	/* No pass arms it again; one firing now kicks for nothing. */
	del_timer_sync(&chan->stall);
}

static void ordma_qp_event(struct ib_event *event, void *context)
{
	struct ordma_chan *chan = context;

	switch (event->event) {
	case IB_EVENT_COMM_EST:
		/* Close destroys the QP before the CM id: cm_id is valid. */
		rdma_notify(chan->cm_id, event->event);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		ordma_chan_fail(chan, -EIO);
		break;
	default:
		break;
	}
}

/* Build CQ, PD and QP on the device the CM id is bound to. */
static int ordma_chan_setup_qp(struct ordma_chan *chan,
			       struct rdma_cm_id *cm_id)
{
	struct ib_qp_init_attr attr = {};
	struct ordma_dev *odev;
	int ret;

	odev = ordma_dev_get(cm_id->device);
	if (!odev)
		return -ENODEV;

	mutex_lock(&odev->chans_lock);
	if (odev->dying) {
		mutex_unlock(&odev->chans_lock);
		ordma_dev_put(odev);
		return -ENODEV;
	}
	list_add_tail(&chan->dev_node, &odev->chans);
	/* A passive channel has no CM id of its own yet: not closable. */
	chan->in_setup = !chan->cm_id;
	if (chan->in_setup)
		odev->nbuilding++;
	atomic_inc(&odev->nchans);
	mutex_unlock(&odev->chans_lock);
	chan->odev = odev;

	/*
	 * The first receive buffer now, and with it the size of every one
	 * (told to the peer at connect), so every channel can make progress.
	 */
	ret = ordma_xfer_setup(chan);
	if (ret)
		return ret;

	/* Completion queues are shared by the channels of a device. */
	chan->cq = ib_cq_pool_get(cm_id->device, ORDMA_CQES, -1,
				  IB_POLL_SOFTIRQ);
	if (IS_ERR(chan->cq)) {
		ret = PTR_ERR(chan->cq);
		chan->cq = NULL;
		return ret;
	}

	chan->pd = ib_alloc_pd(cm_id->device, 0);
	if (IS_ERR(chan->pd)) {
		ret = PTR_ERR(chan->pd);
		chan->pd = NULL;
		return ret;
	}

	attr.event_handler = ordma_qp_event;
	attr.qp_context = chan;
	attr.send_cq = chan->cq;
	attr.recv_cq = chan->cq;
	/* One more of each for ib_drain_qp()'s marker. */
	attr.cap.max_send_wr = 2 * ORDMA_TX_DEPTH + 1;
	attr.cap.max_recv_wr = ORDMA_RX_DEPTH + 1;
	/*
	 * A header from a chunk, and a payload from a chunk or from pinned
	 * user pages, one entry for each run of contiguous pages.
	 */
	attr.cap.max_send_sge = min(ORDMA_TX_SGE,
				    cm_id->device->attrs.max_send_sge);
	attr.cap.max_recv_sge = 1;
	/* A placed send's RDMA WRITE completes with the send after it. */
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(cm_id, chan->pd, &attr);
	if (ret)
		return ret;
	chan->qp = cm_id->qp;
	chan->send_sge = min_t(u32, attr.cap.max_send_sge, ORDMA_TX_SGE);
	ordma_mr_setup(chan);
	return ordma_chan_publish(chan, cm_id);
}

/*
 * Does this side need the pair to count every message? On a device without
 * RNR retry (iWARP) it must; elsewhere when the knob says so.
 */
static bool ordma_own_credit_all(struct ordma_dev *odev)
{
	return !odev->rnr || READ_ONCE(ordma_credit_all);
}

/*
 * The private data of connect and accept. With chan->credit_all, the
 * receives posted before it go with it: they are the peer's first credits.
 */
static void ordma_conn_param(struct ordma_chan *chan,
			     struct rdma_conn_param *param,
			     struct ordma_wire_cm *priv)
{
	memset(priv, 0, sizeof(*priv));
	priv->version = ORDMA_WIRE_VERSION;
	priv->rx_size = cpu_to_le32(chan->rx_size);
	if (chan->credit_all) {
		priv->flags = ORDMA_WIRE_CM_F_CREDIT_ALL;
		priv->credits = cpu_to_le16(ordma_xfer_prepost(chan));
	}

	memset(param, 0, sizeof(*param));
	param->private_data = priv;
	param->private_data_len = sizeof(*priv);
	param->retry_count = 7;
	param->rnr_retry_count = 7;	/* forever: RNR is our flow control */
}

/*
 * Check the peer's CM private data and copy it to @out. Return 0, or
 * -EPROTO for another version, an unknown flag or a receive size out of
 * bounds.
 */
static int ordma_peer_cm(const void *data, u8 len, struct ordma_wire_cm *out)
{
	const struct ordma_wire_cm *priv = data;
	u32 rx;

	if (!data || len < sizeof(*priv) || priv->version != ORDMA_WIRE_VERSION ||
	    priv->flags & ~ORDMA_WIRE_CM_F_CREDIT_ALL)
		return -EPROTO;
	rx = le32_to_cpu(priv->rx_size);
	if (rx < ORDMA_WIRE_RX_MIN || rx > ORDMA_WIRE_RX_MAX)
		return -EPROTO;
	*out = *priv;
	return 0;
}

/*
 * What the peer told at connect: its receive size, and whether the pair
 * counts every message (either side may ask), with the peer's first
 * credits. On a device whose connecting side speaks first, who does.
 * Before the channel is established: only a refill runs.
 */
static void ordma_chan_take_peer_cm(struct ordma_chan *chan,
				    const struct ordma_wire_cm *peer)
{
	chan->peer_rx_size = le32_to_cpu(peer->rx_size);
	mutex_lock(&chan->run);
	if (chan->credit_all || peer->flags & ORDMA_WIRE_CM_F_CREDIT_ALL) {
		chan->credit_all = true;
		chan->tx_credit_peer = le16_to_cpu(peer->credits);
	}
	if (chan->odev->initiator_first) {
		chan->tx_hello = !chan->listener;
		chan->tx_wait_peer = !!chan->listener;
	}
	mutex_unlock(&chan->run);
}

static void ordma_chan_connected(struct ordma_chan *chan, int err)
{
	chan->cm_err = err;
	complete(&chan->connected);
}

/* A connect sent has its outcome: ordma_chan_close() may go on. */
static void ordma_chan_connect_ended(struct ordma_chan *chan)
{
	unsigned long flags;

	spin_lock_irqsave(&chan->lock, flags);
	WRITE_ONCE(chan->connect_sent, false);
	spin_unlock_irqrestore(&chan->lock, flags);
	wake_up_all(&chan->connect_wait);
}

/*
 * rdma_connect(), unless the channel is closing: ordma_chan_close() waits
 * for a connect it finds sent (on a device whose connects settle) and
 * none starts after it set chan->closing. Under the id's handler.
 */
static int ordma_chan_connect_send(struct ordma_chan *chan,
				   struct rdma_cm_id *cm_id,
				   struct rdma_conn_param *param)
{
	unsigned long flags;
	bool closing;
	int ret;

	spin_lock_irqsave(&chan->lock, flags);
	closing = chan->closing;
	if (!closing)
		WRITE_ONCE(chan->connect_sent, true);
	spin_unlock_irqrestore(&chan->lock, flags);
	if (closing)
		return -ECANCELED;
	ret = rdma_connect_locked(cm_id, param);
	if (ret)
		ordma_chan_connect_ended(chan);
	return ret;
}

/* Events of a channel's CM id; returns 0 (the id is destroyed by close). */
static int ordma_chan_cm_event(struct ordma_chan *chan,
			       struct rdma_cm_id *cm_id,
			       struct rdma_cm_event *ev)
{
	struct rdma_conn_param param;
	struct ordma_wire_cm priv;
	unsigned long flags;
	bool up;
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(cm_id, chan->resolve_ms);
		if (ret)
			ordma_chan_connected(chan, ret);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = ordma_chan_setup_qp(chan, cm_id);
		if (!ret) {
			chan->credit_all = ordma_own_credit_all(chan->odev);
			ordma_conn_param(chan, &param, &priv);
			ret = ordma_chan_connect_send(chan, cm_id, &param);
		}
		if (ret)
			ordma_chan_connected(chan, ret);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (!chan->listener) {
			ordma_chan_connect_ended(chan);
			ret = ordma_peer_cm(ev->param.conn.private_data,
					    ev->param.conn.private_data_len,
					    &priv);
			/* A listener answers with what the pair uses. */
			if (!ret && chan->credit_all &&
			    !(priv.flags & ORDMA_WIRE_CM_F_CREDIT_ALL)) {
				ibdev_info_ratelimited(cm_id->device,
						       "ordma: the peer does not count every message, as this device needs\n");
				ret = -EPROTO;
			}
			if (ret) {
				ordma_chan_connected(chan, ret);
				break;
			}
			ordma_chan_take_peer_cm(chan, &priv);
		}
		spin_lock_irqsave(&chan->lock, flags);
		up = chan->phase == ORDMA_PHASE_CONNECTING;
		if (up) {
			ordma_trace(chan_state, chan, chan->phase,
				    ORDMA_PHASE_ESTABLISHED, 0);
			chan->phase = ORDMA_PHASE_ESTABLISHED;
			chan->announced = true;
		}
		/* Failed meanwhile (its device going away): connect fails. */
		ret = up ? 0 : (chan->err ? chan->err : -ENOTCONN);
		spin_unlock_irqrestore(&chan->lock, flags);
		if (up)
			ordma_nl_chan_event(chan->odev, true, chan->qpn,
					    ordma_chan_peer(chan), 0);
		ordma_chan_kick(chan);
		if (chan->listener)
			wake_up(&chan->listener->wait);
		else
			ordma_chan_connected(chan, ret);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		ordma_chan_connected(chan, ev->status ? ev->status :
				     -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		ret = ev->event == RDMA_CM_EVENT_UNREACHABLE ? -EHOSTUNREACH :
							      -ECONNREFUSED;
		ordma_chan_connect_ended(chan);
		if (chan->listener) {
			/* accept() finds it dead and closes it. */
			ordma_chan_fail(chan, ret);
			wake_up(&chan->listener->wait);
		} else {
			ordma_chan_connected(chan, ret);
		}
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		ordma_chan_fail(chan, -ENOTCONN);
		if (chan->listener)
			wake_up(&chan->listener->wait);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		ordma_chan_connect_ended(chan);
		ordma_chan_fail(chan, -ENODEV);
		ordma_chan_connected(chan, -ENODEV);
		break;
	default:
		break;
	}
	return 0;
}

/*
 * A channel that became usable no longer blocks device removal. Under
 * odev->chans_lock.
 */
static void ordma_chan_built(struct ordma_chan *chan)
{
	struct ordma_dev *odev = chan->odev;

	lockdep_assert_held(&odev->chans_lock);
	if (!chan->in_setup)
		return;
	chan->in_setup = false;
	odev->nbuilding--;
	wake_up_all(&odev->chans_wait);
}

/*
 * Give back everything set-up built, once no worker, completion or CM event
 * is left: the queues (failed with @err), the segments, the QP (through
 * @cm_id, the CM id it was made on, when the channel no longer holds it),
 * the CQ and the device. The common tail of ordma_chan_close() and of a
 * passive set-up that failed.
 */
static void ordma_chan_unbuild(struct ordma_chan *chan, int err,
			       struct rdma_cm_id *cm_id)
{
	struct ordma_dev *odev = chan->odev;

	/* Stopped, so no pass runs; taken for the data path's assertions. */
	mutex_lock(&chan->run);
	ordma_xfer_flush(chan, err, false);
	mutex_unlock(&chan->run);
	ordma_mr_flush(chan);
	if (chan->qp) {
		if (cm_id)
			rdma_destroy_qp(cm_id);
		else
			ib_destroy_qp(chan->qp);
		chan->qp = NULL;
	}
	if (chan->cq) {
		ib_cq_pool_put(chan->cq, ORDMA_CQES);
		chan->cq = NULL;
	}
	/* Its MRs and its QP are gone. */
	if (chan->pd) {
		ib_dealloc_pd(chan->pd);
		chan->pd = NULL;
	}
	if (!odev)
		return;
	ordma_xfer_release(chan);
	ordma_pool_cancel_wait(&odev->pool, &chan->pool_waiter);
	mutex_lock(&odev->chans_lock);
	if (!list_empty(&chan->dev_node)) {
		ordma_chan_built(chan);
		list_del_init(&chan->dev_node);
		atomic_dec(&odev->nchans);
	}
	mutex_unlock(&odev->chans_lock);
	chan->odev = NULL;
	ordma_dev_put(odev);
}

/*
 * @chan leaves the listener's pending list, if it is still on it: accept
 * may have taken it while its request handler was failing. Under
 * lis->lock.
 */
static void ordma_listener_unlist(struct ordma_listener *lis,
				  struct ordma_chan *chan)
{
	lockdep_assert_held(&lis->lock);
	if (list_empty(&chan->pending_node))
		return;
	list_del_init(&chan->pending_node);
	WRITE_ONCE(lis->npending, lis->npending - 1);
}

/*
 * A connection request on a listener: build the channel and accept it.
 * A non-zero return makes the CM reject and destroy @cm_id.
 */
static int ordma_listener_request(struct ordma_listener *lis,
				  struct rdma_cm_id *cm_id,
				  struct rdma_cm_event *ev)
{
	struct ordma_wire_cm priv, peer;
	struct rdma_conn_param param;
	struct ordma_chan *chan;
	int ret;

	ret = ordma_peer_cm(ev->param.conn.private_data,
			    ev->param.conn.private_data_len, &peer);
	/*
	 * The backlog is ours to keep: rdma_listen() passes it to iWARP only.
	 * A first look before anything is built; the place is taken below,
	 * before rdma_accept().
	 */
	if (ret || READ_ONCE(lis->dead) ||
	    READ_ONCE(lis->npending) >= lis->backlog) {
		rdma_reject(cm_id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return -ECONNREFUSED;
	}

	chan = ordma_chan_create(lis->ofile);
	if (IS_ERR(chan)) {
		ret = PTR_ERR(chan);
		goto err_reject;
	}
	chan->listener = lis;
	chan->parked = true;
	kref_get(&lis->kref);
	memcpy(&chan->peer, &cm_id->route.addr.dst_addr, sizeof(chan->peer));

	ret = ordma_cm_set_timers(cm_id, ORDMA_PARKED_RNR_TIMER);
	if (ret)
		goto err_chan;
	ret = ordma_chan_setup_qp(chan, cm_id);
	if (ret)
		goto err_chan;
	chan->credit_all = ordma_own_credit_all(chan->odev);
	ordma_chan_take_peer_cm(chan, &peer);
	chan->cm_id = cm_id;
	cm_id->context = chan;

	/* A place in the backlog, kept from here on. */
	spin_lock_irq(&lis->lock);
	if (lis->dead || lis->npending >= lis->backlog) {
		spin_unlock_irq(&lis->lock);
		ret = -ECONNREFUSED;
		goto err_chan;
	}
	WRITE_ONCE(lis->npending, lis->npending + 1);
	spin_unlock_irq(&lis->lock);

	ordma_conn_param(chan, &param, &priv);
	ret = rdma_accept(cm_id, &param);
	if (ret)
		goto err_unreserve;
	/*
	 * Nothing fails after this: closable from now on (device removal
	 * skipped it while in set-up, and waited), unless the device is
	 * going away; then on the pending list, where accept() finds it
	 * (its ESTABLISHED comes after we return). The listener cannot have
	 * been drained meanwhile: its close waits for this handler.
	 */
	mutex_lock(&chan->odev->chans_lock);
	ret = chan->odev->dying ? -ENODEV : 0;
	if (!ret)
		ordma_chan_built(chan);
	mutex_unlock(&chan->odev->chans_lock);
	if (ret)
		goto err_unreserve;
	spin_lock_irq(&lis->lock);
	list_add_tail(&chan->pending_node, &lis->pending);
	spin_unlock_irq(&lis->lock);
	return 0;

err_unreserve:
	spin_lock_irq(&lis->lock);
	WRITE_ONCE(lis->npending, lis->npending - 1);
	spin_unlock_irq(&lis->lock);
err_chan:
	/* A QP event may have kicked the worker: stop it first. */
	spin_lock_irq(&chan->lock);
	chan->closing = true;
	spin_unlock_irq(&chan->lock);
	ordma_chan_stop(chan);
	/* The receives posted for the peer's first credits come back. */
	if (chan->qp && chan->credit_all)
		ib_drain_qp(chan->qp);
	/* The CM destroys cm_id when we return an error: not ours to do. */
	chan->cm_id = NULL;
	cm_id->context = NULL;
	ordma_chan_unbuild(chan, ret, cm_id);
	ordma_listener_put(lis);
	chan->listener = NULL;
	ordma_chan_put(chan);
err_reject:
	rdma_reject(cm_id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	return ret;
}

static int ordma_cm_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev)
{
	struct ordma_obj *obj = cm_id->context;

	if (!obj)
		return 0;
	if (obj->kind == ORDMA_KIND_LISTENER) {
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			return ordma_listener_request(cm_id->context, cm_id, ev);
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			struct ordma_listener *lis = cm_id->context;

			spin_lock_irq(&lis->lock);
			lis->dead = true;
			spin_unlock_irq(&lis->lock);
			wake_up(&lis->wait);
		}
		return 0;
	}
	return ordma_chan_cm_event(cm_id->context, cm_id, ev);
}

/**
 * ordma_chan_close() - tear a channel down
 * @chan: the channel
 * @err: negative errno for operations still queued (-ECANCELED on close)
 *
 * Process context; not from the CM handler of the channel's own id. Safe to
 * call more than once: later calls find nothing to do. The caller keeps its
 * reference.
 */
void ordma_chan_close(struct ordma_chan *chan, int err)
{
	unsigned long flags;
	bool announced;
	u32 qpn = 0;

	mutex_lock(&chan->teardown);
	spin_lock_irqsave(&chan->lock, flags);
	if (chan->phase != ORDMA_PHASE_DEAD) {
		ordma_trace(chan_state, chan, chan->phase, ORDMA_PHASE_DEAD, err);
		chan->phase = ORDMA_PHASE_DEAD;
		chan->err = err;
		ordma_chan_down_locked(chan);
	}
	/* From here on kicks do nothing: the worker is ours to stop. */
	chan->closing = true;
	announced = chan->announced;
	chan->announced = false;
	spin_unlock_irqrestore(&chan->lock, flags);
	ordma_chan_stop(chan);
	/* A connect() still waiting (device removal) stops waiting. */
	if (!completion_done(&chan->connected)) {
		chan->cm_err = chan->err;
		complete(&chan->connected);
	}

	/*
	 * A connect in flight on iWARP ends first, by its reply or by the
	 * device's own connect timeout (siw's: 10 s): iw_cm may neither
	 * disconnect nor destroy an id in CONN_SENT. None starts once
	 * chan->closing is set (above). TASK_IDLE: a connect() given up on a
	 * signal or its timeout waits here without counting as hung.
	 */
	if (chan->odev && chan->odev->connect_settles)
		wait_event_idle(chan->connect_wait,
				!READ_ONCE(chan->connect_sent));
	if (chan->cm_id) {
		if (chan->qp) {
			qpn = chan->qp->qp_num;
			rdma_disconnect(chan->cm_id);
			/* Every posted work request lands on chan->done. */
			ib_drain_qp(chan->qp);
		}
		if (chan->qp) {
			rdma_destroy_qp(chan->cm_id);
			chan->qp = NULL;
		}
		/* Waits for the CM handler; no event comes after this. */
		rdma_destroy_id(chan->cm_id);
		chan->cm_id = NULL;
	}
	if (announced)
		ordma_nl_chan_event(chan->odev, false, qpn,
				    ordma_chan_peer(chan), ordma_chan_err(chan));
	ordma_chan_unbuild(chan, chan->err, NULL);
	mutex_unlock(&chan->teardown);
}

static void ordma_chan_close_work(struct work_struct *work)
{
	struct ordma_chan *chan = container_of(work, struct ordma_chan,
					       close_work);

	ordma_chan_close(chan, -ECANCELED);
	ordma_chan_put(chan);
}

/*
 * A connect given up (timeout, signal) whose iWARP connect is still in
 * flight: close would wait for its outcome, as long as the device takes to
 * give up (a TCP connect to nobody: minutes). The channel fails now and a
 * work item closes it once the connect settled, with the caller's
 * reference; it counts against the user's channels until then. True if it
 * took the channel.
 */
static bool ordma_chan_close_later(struct ordma_chan *chan, int err)
{
	if (!chan->odev || !chan->odev->connect_settles ||
	    !READ_ONCE(chan->connect_sent))
		return false;
	ordma_chan_fail(chan, err);
	INIT_WORK(&chan->close_work, ordma_chan_close_work);
	queue_work(ordma_wq, &chan->close_work);
	return true;
}

/**
 * ordma_chan_connect() - open a channel to a listener
 * @ofile: the file that will own the channel
 * @addr: the listener's address (AF_INET or AF_INET6)
 * @timeout_ms: give up after this long, 0 for the default
 * @out: the channel, with a reference, once established
 *
 * Return: 0 or a negative errno (ECONNREFUSED, ETIMEDOUT, EHOSTUNREACH,
 * ENETUNREACH, ENODEV, EINTR, ENOMEM, EDQUOT, EPROTO).
 */
int ordma_chan_connect(struct ordma_file *ofile, struct sockaddr *addr,
		       u32 timeout_ms, struct ordma_chan **out)
{
	struct ordma_chan *chan;
	struct rdma_cm_id *cm_id;
	long left;
	int ret;

	if (!timeout_ms)
		timeout_ms = ORDMA_CONNECT_TIMEOUT_MS;

	chan = ordma_chan_create(ofile);
	if (IS_ERR(chan))
		return PTR_ERR(chan);
	memcpy(&chan->peer, addr, addr->sa_family == AF_INET ?
	       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));

	cm_id = rdma_create_id(ordma_cm_net(ofile), ordma_cm_handler,
			       chan, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(cm_id)) {
		ret = PTR_ERR(cm_id);
		goto err_put;
	}
	chan->cm_id = cm_id;
	ret = ordma_cm_set_timers(cm_id, ORDMA_MIN_RNR_TIMER);
	if (ret)
		goto err_close;

	/*
	 * The caller's timeout bounds the whole connect: the resolutions get
	 * all of it, not a shorter limit of their own.
	 */
	chan->resolve_ms = timeout_ms;
	ret = rdma_resolve_addr(cm_id, NULL, addr, timeout_ms);
	if (ret)
		goto err_close;

	left = msecs_to_jiffies(timeout_ms);
	left = wait_for_completion_interruptible_timeout(&chan->connected,
							 left);
	if (left == 0)
		ret = -ETIMEDOUT;
	else if (left < 0)
		ret = -EINTR;
	else
		ret = chan->cm_err;
	if (ret)
		goto err_close;

	*out = chan;
	return 0;

err_close:
	if (ordma_chan_close_later(chan, ret))
		return ret;
	ordma_chan_close(chan, ret);
err_put:
	ordma_chan_put(chan);
	return ret;
}

/**
 * ordma_listener_create() - listen for channels on an address
 * @ofile: the file that will own the listener
 * @addr: local address and port
 * @backlog: connections waiting for accept, 0 for the default
 * @out: the listener, with a reference
 *
 * Return: 0 or a negative errno (EADDRINUSE, EADDRNOTAVAIL, ENOMEM,
 * EDQUOT).
 */
int ordma_listener_create(struct ordma_file *ofile, struct sockaddr *addr,
			  u32 backlog, struct ordma_listener **out)
{
	struct ordma_listener *lis;
	struct rdma_cm_id *cm_id;
	int ret;

	ret = ordma_user_charge(ofile->tenant, ORDMA_USER_CHANS);
	if (ret)
		return ret;
	lis = kzalloc(sizeof(*lis), GFP_KERNEL_ACCOUNT);
	if (!lis) {
		ordma_user_uncharge(ofile->tenant, ORDMA_USER_CHANS);
		return -ENOMEM;
	}
	lis->obj.kind = ORDMA_KIND_LISTENER;
	kref_init(&lis->kref);
	kref_get(&ofile->kref);
	lis->ofile = ofile;
	spin_lock_init(&lis->lock);
	INIT_LIST_HEAD(&lis->pending);
	init_waitqueue_head(&lis->wait);

	cm_id = rdma_create_id(ordma_cm_net(ofile), ordma_cm_handler,
			       lis, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(cm_id)) {
		ret = PTR_ERR(cm_id);
		goto err_put;
	}
	ret = rdma_set_min_rnr_timer(cm_id, ORDMA_MIN_RNR_TIMER);
	if (ret)
		goto err_id;
	ret = rdma_bind_addr(cm_id, addr);
	if (ret)
		goto err_id;
	lis->backlog = backlog ? backlog : ORDMA_BACKLOG;
	ret = rdma_listen(cm_id, lis->backlog);
	if (ret)
		goto err_id;
	memcpy(&lis->local, &cm_id->route.addr.src_addr, sizeof(lis->local));
	ret = ordma_listener_publish(lis);
	if (ret)
		goto err_id;
	lis->cm_id = cm_id;

	mutex_lock(&ordma_listeners_lock);
	list_add_tail(&lis->all_node, &ordma_listeners);
	mutex_unlock(&ordma_listeners_lock);
	*out = lis;
	return 0;

err_id:
	rdma_destroy_id(cm_id);
err_put:
	ordma_listener_put(lis);
	return ret;
}

static bool ordma_listener_ready(struct ordma_listener *lis)
{
	struct ordma_chan *chan;
	bool ready = false;

	spin_lock_irq(&lis->lock);
	list_for_each_entry(chan, &lis->pending, pending_node)
		if (READ_ONCE(chan->phase) != ORDMA_PHASE_CONNECTING)
			ready = true;
	spin_unlock_irq(&lis->lock);
	return ready;
}

/* Close every channel still waiting for accept(). */
static void ordma_listener_drain(struct ordma_listener *lis)
{
	struct ordma_chan *chan;

	for (;;) {
		spin_lock_irq(&lis->lock);
		chan = list_first_entry_or_null(&lis->pending,
						struct ordma_chan,
						pending_node);
		if (chan)
			ordma_listener_unlist(lis, chan);
		spin_unlock_irq(&lis->lock);
		if (!chan)
			break;
		ordma_chan_close(chan, -ECONNRESET);
		ordma_chan_put(chan);
	}
}

/**
 * ordma_listener_close() - stop listening and drop unaccepted channels
 * @lis: the listener; the caller keeps its reference
 */
void ordma_listener_close(struct ordma_listener *lis)
{
	struct rdma_cm_id *cm_id;

	mutex_lock(&ordma_listeners_lock);
	if (!list_empty(&lis->all_node))
		list_del_init(&lis->all_node);
	cm_id = lis->cm_id;
	lis->cm_id = NULL;
	mutex_unlock(&ordma_listeners_lock);

	spin_lock_irq(&lis->lock);
	lis->dead = true;
	spin_unlock_irq(&lis->lock);
	wake_up_all(&lis->wait);

	/* Waits for the handler: no request adds a channel after this. */
	if (cm_id)
		rdma_destroy_id(cm_id);
	ordma_listener_drain(lis);
}

/*
 * A peer that finds no receive from now on retries as soon as any other
 * (ORDMA_PARKED_RNR_TIMER). Under chan->teardown, so close cannot destroy
 * the QP meanwhile; a QP that has just failed refuses, which is harmless.
 */
static void ordma_chan_unpark_qp(struct ordma_chan *chan)
{
	struct ib_qp_attr attr = { .min_rnr_timer = ORDMA_MIN_RNR_TIMER };

	mutex_lock(&chan->teardown);
	if (chan->qp && READ_ONCE(chan->phase) != ORDMA_PHASE_DEAD)
		ib_modify_qp(chan->qp, &attr, IB_QP_MIN_RNR_TIMER);
	mutex_unlock(&chan->teardown);
}

/**
 * ordma_listener_accept() - take one established channel
 * @lis: the listener
 * @nonblock: return -EAGAIN instead of waiting
 * @out: the channel, with a reference
 *
 * Return: 0, -EAGAIN, -EINTR, or -ENODEV / -EINVAL once the listener died.
 */
int ordma_listener_accept(struct ordma_listener *lis, bool nonblock,
			  struct ordma_chan **out)
{
	struct ordma_chan *chan, *found;
	int ret;

	for (;;) {
		found = NULL;
		spin_lock_irq(&lis->lock);
		list_for_each_entry(chan, &lis->pending, pending_node) {
			if (READ_ONCE(chan->phase) != ORDMA_PHASE_CONNECTING) {
				found = chan;
				ordma_listener_unlist(lis, chan);
				break;
			}
		}
		ret = lis->dead ? -ENODEV : 0;
		spin_unlock_irq(&lis->lock);

		if (found && READ_ONCE(found->phase) == ORDMA_PHASE_DEAD) {
			/* The peer left before we accepted. */
			ordma_chan_close(found, -ECONNRESET);
			ordma_chan_put(found);
			continue;
		}
		if (found) {
			/* From now on the data path serves the peer. */
			spin_lock_irq(&found->lock);
			WRITE_ONCE(found->parked, false);
			spin_unlock_irq(&found->lock);
			ordma_chan_unpark_qp(found);
			ordma_chan_kick(found);
			*out = found;
			return 0;
		}
		if (ret)
			return ret;
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(lis->wait,
					       READ_ONCE(lis->dead) ||
					       ordma_listener_ready(lis));
		if (ret)
			return -EINTR;
	}
}

/* A channel of @odev that can be closed, taken off its list, or NULL. */
static struct ordma_chan *ordma_cm_take_chan(struct ordma_dev *odev)
{
	struct ordma_chan *chan;

	mutex_lock(&odev->chans_lock);
	list_for_each_entry(chan, &odev->chans, dev_node) {
		if (chan->in_setup)
			continue;
		list_del_init(&chan->dev_node);
		atomic_dec(&odev->nchans);
		ordma_chan_get(chan);
		mutex_unlock(&odev->chans_lock);
		return chan;
	}
	mutex_unlock(&odev->chans_lock);
	return NULL;
}

/**
 * ordma_cm_remove_dev() - close every channel and listener on a device
 * @odev: the device being removed
 *
 * Their queued operations fail with -ENODEV; the objects stay in their files
 * (later calls get -ENODEV) until closed. A channel a listener's request
 * handler is still building is left to it: it sees @odev->dying and undoes
 * its work, and this waits for that.
 */
void ordma_cm_remove_dev(struct ordma_dev *odev)
{
	struct ordma_listener *lis, *found;
	struct ordma_chan *chan;

	/*
	 * Every channel fails with -ENODEV first, so that none of them dies
	 * of its peer's disconnect instead when both ends are on @odev.
	 */
	mutex_lock(&odev->chans_lock);
	odev->dying = true;
	list_for_each_entry(chan, &odev->chans, dev_node)
		if (!chan->in_setup)
			ordma_chan_fail(chan, -ENODEV);
	mutex_unlock(&odev->chans_lock);

	for (;;) {
		chan = ordma_cm_take_chan(odev);
		if (chan) {
			ordma_chan_close(chan, -ENODEV);
			ordma_chan_put(chan);
			continue;
		}
		if (!READ_ONCE(odev->nbuilding))
			break;
		wait_event(odev->chans_wait, !READ_ONCE(odev->nbuilding));
	}

	/* Listeners bound to an address of this device. */
	for (;;) {
		found = NULL;
		mutex_lock(&ordma_listeners_lock);
		list_for_each_entry(lis, &ordma_listeners, all_node) {
			if (lis->cm_id && lis->cm_id->device == odev->ibdev) {
				found = lis;
				kref_get(&lis->kref);
				break;
			}
		}
		mutex_unlock(&ordma_listeners_lock);
		if (!found)
			break;
		ordma_listener_close(found);
		ordma_listener_put(found);
	}
}
