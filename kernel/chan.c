// SPDX-License-Identifier: GPL-2.0
/*
 * Channels: reliable connections between two ordma endpoints, set up with
 * the in-kernel RDMA CM, one RC QP each; and the listeners that accept them.
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
 * Locking:
 * - chan->teardown (mutex) serialises ordma_chan_close().
 * - chan->run (mutex) is held by whoever runs the data path: the worker or
 *   a task of the owner (xfer.c). Close sets chan->closing, then waits for
 *   both; ofile->run_lock (spinlock) nests inside chan->lock.
 * - chan->lock (spinlock, taken from softirq: irqsave) protects the phase,
 *   the error and the queues that ioctls and completion handlers feed.
 * - odev->chans_lock (mutex) protects odev->chans and odev->dying.
 * - ordma_listeners_lock (mutex) protects ordma_listeners.
 * - lis->lock (spinlock) protects a listener's pending list and dead flag.
 * Order: chan->teardown, then chan->run, then odev->chans_lock; the
 * spinlocks are innermost.
 */
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <net/net_namespace.h>
#include <rdma/rdma_cm.h>
#include <rdma/ib_cm.h>

#include "chan.h"

#define ORDMA_CONNECT_TIMEOUT_MS	5000
#define ORDMA_RESOLVE_TIMEOUT_MS	2000
#define ORDMA_BACKLOG			128
#define ORDMA_MIN_RNR_TIMER		IB_RNR_TIMER_000_32
/* 4.096 us << 20: about 4 s per retry, patient with slow (emulated) peers. */
#define ORDMA_ACK_TIMEOUT		20

struct workqueue_struct *ordma_wq;

static LIST_HEAD(ordma_listeners);
static DEFINE_MUTEX(ordma_listeners_lock);

static void ordma_listener_release(struct kref *kref)
{
	struct ordma_listener *lis;

	lis = container_of(kref, struct ordma_listener, kref);
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
	if (chan->listener)
		ordma_listener_put(chan->listener);
	ordma_file_put(chan->ofile);
	kfree_rcu(chan, rcu);
}

void ordma_chan_get(struct ordma_chan *chan)
{
	kref_get(&chan->kref);
}

void ordma_chan_put(struct ordma_chan *chan)
{
	kref_put(&chan->kref, ordma_chan_release);
}

static struct ordma_chan *ordma_chan_alloc(struct ordma_file *ofile)
{
	struct ordma_chan *chan;

	chan = kzalloc(sizeof(*chan), GFP_KERNEL);
	if (!chan)
		return NULL;
	chan->obj.kind = ORDMA_KIND_CHAN;
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
	INIT_LIST_HEAD(&chan->dev_node);
	INIT_LIST_HEAD(&chan->pending_node);
	init_completion(&chan->connected);
	INIT_WORK(&chan->work, ordma_chan_work);
	ordma_xfer_init(chan);
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
	unsigned long flags;

	spin_lock_irqsave(&chan->lock, flags);
	if (chan->phase != ORDMA_PHASE_DEAD) {
		chan->phase = ORDMA_PHASE_DEAD;
		chan->err = err;
	}
	spin_unlock_irqrestore(&chan->lock, flags);
	ordma_chan_kick(chan);
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

static int ordma_chan_reserve_rx(struct ordma_chan *chan)
{
	struct ordma_pool *pool = &chan->odev->pool;
	struct ordma_chunk *chunk;
	bool room;

	chunk = ordma_chunk_get(pool, &chan->held);
	if (!chunk)
		return -ENOBUFS;
	spin_lock_irq(&pool->lock);
	room = pool->chunks_free > 0;
	spin_unlock_irq(&pool->lock);
	if (!room || ordma_chunk_room(chunk) < chan->rx_size) {
		ordma_chunk_put(chunk);
		return -ENOBUFS;
	}
	chan->rx_held = 1;
	chan->rx_spare = 1;
	list_add_tail(&chunk->node, &chan->rx_ring);
	return 0;
}

/* Build CQ and QP on the device the CM id is bound to. */
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
	atomic_inc(&odev->nchans);
	mutex_unlock(&odev->chans_lock);
	chan->odev = odev;

	spin_lock_irq(&odev->pool.lock);
	chan->rx_size = odev->pool.chunk_bytes + ORDMA_HDR_LEN;
	spin_unlock_irq(&odev->pool.lock);

	/*
	 * Reserve the first receive buffer now, and leave one chunk for
	 * sending, so every channel can make progress; a pool too small for
	 * one more channel refuses it.
	 */
	ret = ordma_chan_reserve_rx(chan);
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

	attr.event_handler = ordma_qp_event;
	attr.qp_context = chan;
	attr.send_cq = chan->cq;
	attr.recv_cq = chan->cq;
	/* One more of each for ib_drain_qp()'s marker. */
	attr.cap.max_send_wr = 2 * ORDMA_TX_DEPTH + 1;
	attr.cap.max_recv_wr = ORDMA_RX_DEPTH + 1;
	/* A header from a chunk and a payload from a registered segment. */
	attr.cap.max_send_sge = min(2, cm_id->device->attrs.max_send_sge);
	attr.cap.max_recv_sge = 1;
	/* A placed send's RDMA WRITE completes with the send after it. */
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(cm_id, odev->pd, &attr);
	if (ret)
		return ret;
	chan->qp = cm_id->qp;
	ordma_mr_init(chan);
	return 0;
}

static void ordma_conn_param(struct ordma_chan *chan,
			     struct rdma_conn_param *param,
			     struct ordma_wire_cm *priv)
{
	memset(priv, 0, sizeof(*priv));
	priv->version = ORDMA_WIRE_VERSION;
	priv->rx_size = cpu_to_le32(chan->rx_size);

	memset(param, 0, sizeof(*param));
	param->private_data = priv;
	param->private_data_len = sizeof(*priv);
	param->retry_count = 7;
	param->rnr_retry_count = 7;	/* forever: RNR is our flow control */
}

/* Check the peer's CM private data; return its receive size or 0. */
static u32 ordma_peer_rx_size(const void *data, u8 len)
{
	const struct ordma_wire_cm *priv = data;
	u32 rx;

	if (!data || len < sizeof(*priv) || priv->version != ORDMA_WIRE_VERSION)
		return 0;
	rx = le32_to_cpu(priv->rx_size);
	if (rx < sizeof(struct ordma_wire_hdr) + 512 || rx > SZ_16M)
		return 0;
	return rx;
}

static void ordma_chan_connected(struct ordma_chan *chan, int err)
{
	chan->cm_err = err;
	complete(&chan->connected);
}

/* Events of a channel's CM id; returns 0 (the id is destroyed by close). */
static int ordma_chan_cm_event(struct ordma_chan *chan,
			       struct rdma_cm_id *cm_id,
			       struct rdma_cm_event *ev)
{
	struct rdma_conn_param param;
	struct ordma_wire_cm priv;
	unsigned long flags;
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(cm_id, ORDMA_RESOLVE_TIMEOUT_MS);
		if (ret)
			ordma_chan_connected(chan, ret);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = ordma_chan_setup_qp(chan, cm_id);
		if (!ret) {
			ordma_conn_param(chan, &param, &priv);
			ret = rdma_connect_locked(cm_id, &param);
		}
		if (ret)
			ordma_chan_connected(chan, ret);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (!chan->listener) {
			chan->peer_rx_size =
				ordma_peer_rx_size(ev->param.conn.private_data,
						   ev->param.conn.private_data_len);
			if (!chan->peer_rx_size) {
				ordma_chan_connected(chan, -EPROTO);
				break;
			}
		}
		spin_lock_irqsave(&chan->lock, flags);
		if (chan->phase == ORDMA_PHASE_CONNECTING)
			chan->phase = ORDMA_PHASE_ESTABLISHED;
		spin_unlock_irqrestore(&chan->lock, flags);
		ordma_chan_kick(chan);
		if (chan->listener)
			wake_up(&chan->listener->wait);
		else
			ordma_chan_connected(chan, 0);
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
		ordma_chan_fail(chan, -ENODEV);
		ordma_chan_connected(chan, -ENODEV);
		break;
	default:
		break;
	}
	return 0;
}

/*
 * A connection request on a listener: build the channel and accept it.
 * A non-zero return makes the CM reject and destroy @cm_id.
 */
static int ordma_listener_request(struct ordma_listener *lis,
				  struct rdma_cm_id *cm_id,
				  struct rdma_cm_event *ev)
{
	struct rdma_conn_param param;
	struct ordma_wire_cm priv;
	struct ordma_chan *chan;
	u32 peer_rx;
	int ret;

	peer_rx = ordma_peer_rx_size(ev->param.conn.private_data,
				     ev->param.conn.private_data_len);
	if (!peer_rx || READ_ONCE(lis->dead)) {
		rdma_reject(cm_id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return -ECONNREFUSED;
	}

	chan = ordma_chan_alloc(lis->ofile);
	if (!chan) {
		ret = -ENOMEM;
		goto err_reject;
	}
	chan->peer_rx_size = peer_rx;
	chan->listener = lis;
	kref_get(&lis->kref);
	memcpy(&chan->peer, &cm_id->route.addr.dst_addr, sizeof(chan->peer));

	ret = rdma_set_min_rnr_timer(cm_id, ORDMA_MIN_RNR_TIMER);
	if (!ret)
		ret = rdma_set_ack_timeout(cm_id, ORDMA_ACK_TIMEOUT);
	if (ret)
		goto err_chan;
	ret = ordma_chan_setup_qp(chan, cm_id);
	if (ret)
		goto err_chan;
	chan->cm_id = cm_id;
	cm_id->context = chan;
	/* Closable from now on, unless the device is going away. */
	mutex_lock(&chan->odev->chans_lock);
	chan->in_setup = false;
	ret = chan->odev->dying ? -ENODEV : 0;
	mutex_unlock(&chan->odev->chans_lock);
	if (ret)
		goto err_chan;

	spin_lock_irq(&lis->lock);
	if (lis->dead) {
		spin_unlock_irq(&lis->lock);
		ret = -ECONNREFUSED;
		goto err_chan;
	}
	list_add_tail(&chan->pending_node, &lis->pending);
	spin_unlock_irq(&lis->lock);

	ordma_conn_param(chan, &param, &priv);
	ret = rdma_accept(cm_id, &param);
	if (ret)
		goto err_unlist;
	return 0;

err_unlist:
	spin_lock_irq(&lis->lock);
	list_del_init(&chan->pending_node);
	spin_unlock_irq(&lis->lock);
err_chan:
	/* A QP event may have kicked the worker: stop it first. */
	spin_lock_irq(&chan->lock);
	chan->closing = true;
	spin_unlock_irq(&chan->lock);
	ordma_chan_stop(chan);
	/* The CM destroys cm_id when we return an error: not ours to do. */
	chan->cm_id = NULL;
	cm_id->context = NULL;
	ordma_xfer_flush(chan, ret, false);
	ordma_mr_flush(chan);
	if (chan->qp)
		rdma_destroy_qp(cm_id);
	chan->qp = NULL;
	if (chan->cq)
		ib_cq_pool_put(chan->cq, ORDMA_CQES);
	chan->cq = NULL;
	if (chan->odev) {
		ordma_pool_cancel_wait(&chan->odev->pool, &chan->pool_waiter);
		mutex_lock(&chan->odev->chans_lock);
		if (!list_empty(&chan->dev_node)) {
			list_del_init(&chan->dev_node);
			atomic_dec(&chan->odev->nchans);
		}
		mutex_unlock(&chan->odev->chans_lock);
		ordma_dev_put(chan->odev);
		chan->odev = NULL;
	}
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
	struct ordma_dev *odev;
	unsigned long flags;

	mutex_lock(&chan->teardown);
	spin_lock_irqsave(&chan->lock, flags);
	if (chan->phase != ORDMA_PHASE_DEAD) {
		chan->phase = ORDMA_PHASE_DEAD;
		chan->err = err;
	}
	/* From here on kicks do nothing: the worker is ours to stop. */
	chan->closing = true;
	spin_unlock_irqrestore(&chan->lock, flags);
	ordma_chan_stop(chan);
	/* A connect() still waiting (device removal) stops waiting. */
	if (!completion_done(&chan->connected)) {
		chan->cm_err = chan->err;
		complete(&chan->connected);
	}

	if (chan->cm_id) {
		if (chan->qp) {
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
	/* No worker, no completion, no CM event any more: take it all back. */
	ordma_xfer_flush(chan, chan->err, false);
	ordma_mr_flush(chan);
	if (chan->qp) {
		ib_destroy_qp(chan->qp);
		chan->qp = NULL;
	}
	if (chan->cq) {
		ib_cq_pool_put(chan->cq, ORDMA_CQES);
		chan->cq = NULL;
	}

	odev = chan->odev;
	if (odev) {
		ordma_pool_cancel_wait(&odev->pool, &chan->pool_waiter);
		mutex_lock(&odev->chans_lock);
		if (!list_empty(&chan->dev_node)) {
			list_del_init(&chan->dev_node);
			atomic_dec(&chan->odev->nchans);
		}
		mutex_unlock(&odev->chans_lock);
		chan->odev = NULL;
		ordma_dev_put(odev);
	}
	mutex_unlock(&chan->teardown);
}

/**
 * ordma_chan_connect() - open a channel to a listener
 * @ofile: the file that will own the channel
 * @addr: the listener's address (AF_INET or AF_INET6)
 * @timeout_ms: give up after this long, 0 for the default
 * @out: the channel, with a reference, once established
 *
 * Return: 0 or a negative errno (ECONNREFUSED, ETIMEDOUT, EHOSTUNREACH,
 * ENETUNREACH, ENODEV, EINTR, ENOMEM).
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

	chan = ordma_chan_alloc(ofile);
	if (!chan)
		return -ENOMEM;
	memcpy(&chan->peer, addr, addr->sa_family == AF_INET ?
	       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));

	cm_id = rdma_create_id(current->nsproxy->net_ns, ordma_cm_handler,
			       chan, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(cm_id)) {
		ret = PTR_ERR(cm_id);
		goto err_put;
	}
	chan->cm_id = cm_id;
	/* A receiver out of buffers NAKs; the sender retries soon. */
	ret = rdma_set_min_rnr_timer(cm_id, ORDMA_MIN_RNR_TIMER);
	if (!ret)
		ret = rdma_set_ack_timeout(cm_id, ORDMA_ACK_TIMEOUT);
	if (ret)
		goto err_close;

	ret = rdma_resolve_addr(cm_id, NULL, addr, ORDMA_RESOLVE_TIMEOUT_MS);
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
 * Return: 0 or a negative errno (EADDRINUSE, EADDRNOTAVAIL, ENOMEM).
 */
int ordma_listener_create(struct ordma_file *ofile, struct sockaddr *addr,
			  u32 backlog, struct ordma_listener **out)
{
	struct ordma_listener *lis;
	struct rdma_cm_id *cm_id;
	int ret;

	lis = kzalloc(sizeof(*lis), GFP_KERNEL);
	if (!lis)
		return -ENOMEM;
	lis->obj.kind = ORDMA_KIND_LISTENER;
	kref_init(&lis->kref);
	kref_get(&ofile->kref);
	lis->ofile = ofile;
	spin_lock_init(&lis->lock);
	INIT_LIST_HEAD(&lis->pending);
	init_waitqueue_head(&lis->wait);

	cm_id = rdma_create_id(current->nsproxy->net_ns, ordma_cm_handler,
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
	ret = rdma_listen(cm_id, backlog ? backlog : ORDMA_BACKLOG);
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
			list_del_init(&chan->pending_node);
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
				list_del_init(&chan->pending_node);
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

/**
 * ordma_dev_kill_chans() - close every channel and listener on a device
 * @odev: the device being removed
 *
 * Their queued operations fail with -ENODEV; the objects stay in their files
 * (later calls get -ENODEV) until closed.
 */
void ordma_dev_kill_chans(struct ordma_dev *odev)
{
	struct ordma_listener *lis, *found;
	struct ordma_chan *chan;

	mutex_lock(&odev->chans_lock);
	odev->dying = true;
	mutex_unlock(&odev->chans_lock);

	for (;;) {
		bool building = false;

		mutex_lock(&odev->chans_lock);
		list_for_each_entry(chan, &odev->chans, dev_node) {
			if (!chan->in_setup)
				goto found;
			building = true;
		}
		chan = NULL;
found:
		if (chan) {
			list_del_init(&chan->dev_node);
			atomic_dec(&chan->odev->nchans);
			ordma_chan_get(chan);
		}
		mutex_unlock(&odev->chans_lock);
		if (!chan && !building)
			break;
		if (!chan) {
			/* Its request handler sees @dying and undoes it. */
			usleep_range(1000, 2000);
			continue;
		}
		ordma_chan_close(chan, -ENODEV);
		ordma_chan_put(chan);
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
	info->out_chunks_held = atomic_read(&chan->held);
	info->out_pages_pinned = atomic64_read(&chan->pages_pinned);
	info->out_mrs_live = atomic_read(&chan->mrs_live);
	info->out_rx_size = chan->rx_size - ORDMA_HDR_LEN;
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

int ordma_chan_init(void)
{
	ordma_wq = alloc_workqueue("ordma", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	return ordma_wq ? 0 : -ENOMEM;
}

void ordma_chan_exit(void)
{
	destroy_workqueue(ordma_wq);
}
