// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel API (include/linux/ordma.h): a kernel user is a file of its
 * own (ordma_file_alloc_kern(): no mm, completions called back instead of
 * queued), its channels are the channels user space gets, and its requests
 * are struct ordma_req inside the caller's struct ordma_kreq, naming kernel
 * memory by bio_vec. Beside uapi.c at the top: it calls the RDMA CM side
 * (cm.c) and the data path's entry (sched.c), nothing calls it.
 *
 * Locking: ctx->lock (mutex) protects the context's lists of channels and
 * listeners; it is taken by the API's calls only, in process context, and
 * nests outside chan->lock (ordma_chan_own() runs under it, so that a
 * channel its user closed meanwhile is not owned again); nothing that
 * sleeps on ordma's other locks runs under it. A channel is closed by
 * whoever takes it off the list; chan->kclosed tells a second closer. A listener's thread accepts
 * channels and calls the user's accept.
 */
#include <linux/module.h>
#include <linux/kthread.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/ordma.h>

#include "entry.h"

/**
 * struct ordma_kctx - a kernel user
 * @kern: what its file calls (container_of() leads back here)
 * @ops: the user's callbacks
 * @ofile: its file
 * @lock: protects @chans and @listeners
 * @chans: the channels it holds (struct ordma_chan knode)
 * @listeners: its listeners (struct ordma_klistener node)
 * @ndown: chan_down calls running; ordma_kctx_destroy() waits for 0
 */
struct ordma_kctx {
	struct ordma_kern kern;
	const struct ordma_kctx_ops *ops;
	struct ordma_file *ofile;
	struct mutex lock;		/* chans, listeners */
	struct list_head chans;		/* lock */
	struct list_head listeners;	/* lock */
	atomic_t ndown;
};

/**
 * struct ordma_klistener - a kernel user's listener and its thread
 * @ctx: its user
 * @lis: the listener
 * @task: the thread that accepts its channels
 * @accept: the user's callback
 * @priv: for @accept
 * @node: on @ctx's listeners
 */
struct ordma_klistener {
	struct ordma_kctx *ctx;
	struct ordma_listener *lis;
	struct task_struct *task;
	ordma_kaccept_t accept;
	void *priv;
	struct list_head node;
};

static struct ordma_kctx *ordma_kctx_of(const struct ordma_file *ofile)
{
	return container_of(ofile->kern, struct ordma_kctx, kern);
}

static struct ordma_req *ordma_kreq_op(struct ordma_kreq *req)
{
	return (struct ordma_req *)req->__ordma;
}

static void ordma_kapi_complete(struct ordma_req *op, s64 res)
{
	struct ordma_kreq *req = container_of((u64 *)op, struct ordma_kreq,
					      __ordma[0]);

	req->done(req, res);
}

static void ordma_kapi_chan_down(struct ordma_chan *chan, int err)
{
	struct ordma_kctx *ctx = ordma_kctx_of(chan->ofile);

	if (!ctx->ops || !ctx->ops->chan_down)
		return;
	atomic_inc(&ctx->ndown);
	ctx->ops->chan_down(chan, READ_ONCE(chan->kpriv), err);
	if (atomic_dec_and_test(&ctx->ndown))
		wake_up_var(&ctx->ndown);
}

/**
 * ordma_kctx_create() - become a kernel user of ordma
 * @name: the user's name, shown by netlink as its channels' command
 * @ops: its callbacks (copied by reference: must outlive the context), or
 *	NULL
 *
 * Context: process context, may sleep.
 * Its channels' connections are made in the initial network namespace.
 *
 * Return: the context, or ERR_PTR(-EINVAL) without @name, or
 * ERR_PTR(-ENOMEM).
 */
struct ordma_kctx *ordma_kctx_create(const char *name,
				     const struct ordma_kctx_ops *ops)
{
	struct ordma_kctx *ctx;

	if (!name)
		return ERR_PTR(-EINVAL);
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return ERR_PTR(-ENOMEM);
	ctx->kern.complete = ordma_kapi_complete;
	ctx->kern.chan_down = ordma_kapi_chan_down;
	ctx->ops = ops;
	mutex_init(&ctx->lock);
	INIT_LIST_HEAD(&ctx->chans);
	INIT_LIST_HEAD(&ctx->listeners);
	ctx->ofile = ordma_file_alloc_kern(name, &ctx->kern);
	if (!ctx->ofile) {
		kfree(ctx);
		return ERR_PTR(-ENOMEM);
	}
	return ctx;
}
EXPORT_SYMBOL_GPL(ordma_kctx_create);

/*
 * Close @chan, taken off its user's list by the caller (who holds the
 * user's reference now): no chan_down starts from here on; its operations
 * complete; then those waiting in ordma_kchan_close() go on, and a
 * chan_down still running (which may be one of them) returns, before the
 * reference goes.
 */
static void ordma_kchan_shut(struct ordma_chan *chan)
{
	ordma_chan_disown(chan);
	ordma_chan_close(chan, -ECANCELED);
	complete_all(&chan->kclosed);
	ordma_chan_down_wait(chan);
	ordma_chan_put(chan);
}

/**
 * ordma_kctx_destroy() - stop being a kernel user
 * @ctx: the context
 *
 * Closes its listeners, then the channels it still holds (their queued
 * operations complete with -ECANCELED first). No callback of @ctx runs
 * once this returns.
 *
 * Context: process context, may sleep; not from a callback of ordma.
 */
void ordma_kctx_destroy(struct ordma_kctx *ctx)
{
	struct ordma_klistener *kl;
	struct ordma_chan *chan;

	for (;;) {
		mutex_lock(&ctx->lock);
		kl = list_first_entry_or_null(&ctx->listeners,
					      struct ordma_klistener, node);
		mutex_unlock(&ctx->lock);
		if (!kl)
			break;
		ordma_klisten_close(kl);
	}
	for (;;) {
		mutex_lock(&ctx->lock);
		chan = list_first_entry_or_null(&ctx->chans, struct ordma_chan,
						knode);
		if (chan)
			list_del_init(&chan->knode);
		mutex_unlock(&ctx->lock);
		if (!chan)
			break;
		ordma_kchan_shut(chan);
	}
	/* A chan_down that closed its own channel meanwhile has returned. */
	wait_var_event(&ctx->ndown, !atomic_read(&ctx->ndown));
	ordma_file_put(ctx->ofile);
	kfree(ctx);
}
EXPORT_SYMBOL_GPL(ordma_kctx_destroy);

/* A copy of a caller's AF_INET or AF_INET6 address, or -EAFNOSUPPORT. */
static int ordma_kaddr(const struct sockaddr *addr,
		       struct sockaddr_storage *ss)
{
	size_t len;

	if (!addr)
		return -EINVAL;
	if (addr->sa_family == AF_INET)
		len = sizeof(struct sockaddr_in);
	else if (addr->sa_family == AF_INET6)
		len = sizeof(struct sockaddr_in6);
	else
		return -EAFNOSUPPORT;
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, addr, len);
	return 0;
}

/* @chan is @ctx's user's from now on: listed, its death not told yet. */
static void ordma_kchan_hold(struct ordma_kctx *ctx, struct ordma_chan *chan,
			     void *priv)
{
	WRITE_ONCE(chan->kpriv, priv);
	mutex_lock(&ctx->lock);
	list_add_tail(&chan->knode, &ctx->chans);
	mutex_unlock(&ctx->lock);
}

/* Tell @chan's death from now on, unless its user closed it already. */
static void ordma_kchan_own(struct ordma_kctx *ctx, struct ordma_chan *chan)
{
	mutex_lock(&ctx->lock);
	if (!list_empty(&chan->knode))
		ordma_chan_own(chan);
	mutex_unlock(&ctx->lock);
}

/**
 * ordma_kconnect() - open a channel to a listener
 * @ctx: the kernel user
 * @addr: the listener's address (AF_INET or AF_INET6): a process's
 *	ordma_listen() or a kernel user's ordma_klisten()
 * @timeout_ms: give up after this long, 0 for the default (as
 *	ORDMA_IOC_CONNECT)
 * @priv: the channel's pointer for the user (ordma_kchan_priv(), and
 *	the @priv of chan_down)
 * @out: the channel, established
 *
 * Context: process context, may sleep (until the connection is up).
 * Return: 0, or a negative errno: -EAFNOSUPPORT or -EINVAL for @addr, else
 * as ORDMA_IOC_CONNECT (ECONNREFUSED, ETIMEDOUT, EHOSTUNREACH, ENETUNREACH,
 * ENODEV, EINTR, ENOMEM, EPROTO).
 */
int ordma_kconnect(struct ordma_kctx *ctx, const struct sockaddr *addr,
		   u32 timeout_ms, void *priv, struct ordma_chan **out)
{
	struct sockaddr_storage ss;
	struct ordma_chan *chan;
	int ret;

	ret = ordma_kaddr(addr, &ss);
	if (ret)
		return ret;
	ret = ordma_chan_connect(ctx->ofile, (struct sockaddr *)&ss,
				 timeout_ms, &chan);
	if (ret)
		return ret;
	ordma_kchan_hold(ctx, chan, priv);
	ordma_kchan_own(ctx, chan);
	*out = chan;
	return 0;
}
EXPORT_SYMBOL_GPL(ordma_kconnect);

/**
 * ordma_kchan_close() - close a channel of a kernel user
 * @chan: the channel
 *
 * Its operations still queued complete with -ECANCELED (their callbacks
 * run before this returns); no callback names @chan once this returns.
 * Closed once: a second close (from chan_down, say, while
 * ordma_kctx_destroy() closes it) waits for the first.
 *
 * Context: process context, may sleep; from the channel's own chan_down
 * too, but not from an operation's done callback nor from the chan_down
 * of another channel.
 */
void ordma_kchan_close(struct ordma_chan *chan)
{
	struct ordma_kctx *ctx = ordma_kctx_of(chan->ofile);
	bool held;

	mutex_lock(&ctx->lock);
	held = !list_empty(&chan->knode);
	list_del_init(&chan->knode);
	mutex_unlock(&ctx->lock);
	if (held)
		ordma_kchan_shut(chan);
	else
		wait_for_completion(&chan->kclosed);
}
EXPORT_SYMBOL_GPL(ordma_kchan_close);

/**
 * ordma_kchan_priv() - the user's pointer for a channel
 * @chan: the channel
 *
 * Return: what ordma_kconnect() or ordma_kchan_set_priv() set, or NULL.
 */
void *ordma_kchan_priv(struct ordma_chan *chan)
{
	return READ_ONCE(chan->kpriv);
}
EXPORT_SYMBOL_GPL(ordma_kchan_priv);

/**
 * ordma_kchan_set_priv() - set the user's pointer for a channel
 * @chan: the channel
 * @priv: the pointer, passed to chan_down from now on
 */
void ordma_kchan_set_priv(struct ordma_chan *chan, void *priv)
{
	WRITE_ONCE(chan->kpriv, priv);
}
EXPORT_SYMBOL_GPL(ordma_kchan_set_priv);

/**
 * ordma_kchan_peer() - the address of a channel's other end
 * @chan: the channel
 * @peer: its address
 */
void ordma_kchan_peer(struct ordma_chan *chan, struct sockaddr_storage *peer)
{
	memcpy(peer, ordma_chan_peer(chan), sizeof(*peer));
}
EXPORT_SYMBOL_GPL(ordma_kchan_peer);

/* Sleep until kthread_stop(). */
static void ordma_klisten_idle(void)
{
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
}

/*
 * The listener's thread: accept a channel, give it to the user; once the
 * listener is closed (by ordma_klisten_close() or the device's removal),
 * wait to be stopped.
 */
static int ordma_klisten_thread(void *arg)
{
	struct ordma_klistener *kl = arg;
	struct ordma_chan *chan;
	int ret;

	while (!kthread_should_stop()) {
		ret = ordma_listener_accept(kl->lis, false, &chan);
		if (ret == -EINTR)
			continue;
		if (ret)
			break;
		/*
		 * Listed first, so that accept may close it; its death is
		 * told once accept has kept it (and set its pointer).
		 */
		ordma_kchan_hold(kl->ctx, chan, NULL);
		/* Ours till the end of this, whatever accept does. */
		ordma_chan_get(chan);
		if (kl->accept(kl, chan, kl->priv))
			ordma_kchan_close(chan);
		else
			ordma_kchan_own(kl->ctx, chan);
		ordma_chan_put(chan);
	}
	ordma_klisten_idle();
	return 0;
}

/**
 * ordma_klisten() - listen for channels, handed to a callback
 * @ctx: the kernel user
 * @addr: local address and port (AF_INET or AF_INET6)
 * @backlog: connections waiting for the callback, 0 for the default
 * @accept: called for each channel established, in the listener's thread
 * @priv: for @accept
 * @out: the listener
 *
 * A listener whose device goes away stops accepting; close it still.
 *
 * Context: process context, may sleep.
 * Return: 0, or a negative errno: -EAFNOSUPPORT or -EINVAL for @addr or
 * @accept, else as ORDMA_IOC_LISTEN (EADDRINUSE, EADDRNOTAVAIL, ENOMEM).
 */
int ordma_klisten(struct ordma_kctx *ctx, const struct sockaddr *addr,
		  u32 backlog, ordma_kaccept_t accept, void *priv,
		  struct ordma_klistener **out)
{
	struct ordma_klistener *kl;
	struct sockaddr_storage ss;
	int ret;

	if (!accept)
		return -EINVAL;
	ret = ordma_kaddr(addr, &ss);
	if (ret)
		return ret;
	kl = kzalloc(sizeof(*kl), GFP_KERNEL);
	if (!kl)
		return -ENOMEM;
	kl->ctx = ctx;
	kl->accept = accept;
	kl->priv = priv;
	ret = ordma_listener_create(ctx->ofile, (struct sockaddr *)&ss, backlog,
				    &kl->lis);
	if (ret)
		goto err_free;
	kl->task = kthread_run(ordma_klisten_thread, kl, "ordma-listen/%u",
			       kl->lis->obj.id);
	if (IS_ERR(kl->task)) {
		ret = PTR_ERR(kl->task);
		goto err_close;
	}
	mutex_lock(&ctx->lock);
	list_add_tail(&kl->node, &ctx->listeners);
	mutex_unlock(&ctx->lock);
	*out = kl;
	return 0;

err_close:
	ordma_listener_close(kl->lis);
	ordma_listener_put(kl->lis);
err_free:
	kfree(kl);
	return ret;
}
EXPORT_SYMBOL_GPL(ordma_klisten);

/**
 * ordma_klisten_close() - stop listening
 * @lis: the listener
 *
 * Channels not handed to the callback yet are closed; those handed stay
 * the user's. Its accept does not run once this returns.
 *
 * Context: process context, may sleep; not from its accept.
 */
void ordma_klisten_close(struct ordma_klistener *lis)
{
	struct ordma_kctx *ctx = lis->ctx;

	mutex_lock(&ctx->lock);
	list_del(&lis->node);
	mutex_unlock(&ctx->lock);
	/* Wakes the thread's accept, which fails from now on. */
	ordma_listener_close(lis->lis);
	kthread_stop(lis->task);
	ordma_listener_put(lis->lis);
	kfree(lis);
}
EXPORT_SYMBOL_GPL(ordma_klisten_close);

/* Check @req and submit it as operation @op_code (@token, @offset: WRITE, READ). */
static int ordma_kreq_submit(struct ordma_chan *chan, struct ordma_kreq *req,
			     u32 op_code, u64 token, u64 offset, bool notify)
{
	struct ordma_req *op = ordma_kreq_op(req);
	unsigned int noio;
	int ret;

	BUILD_BUG_ON(sizeof(struct ordma_req) > sizeof(req->__ordma));
	BUILD_BUG_ON(__alignof__(struct ordma_req) > __alignof__(req->__ordma));
	if (!chan->ofile->kern || !req->done)
		return -EINVAL;
	if ((unsigned int)req->type > ORDMA_KBUF_SG)
		return -EINVAL;
	memset(op, 0, sizeof(*op));
	op->kmem.bvec = req->bvec;
	op->kmem.type = req->type;
	ret = ordma_kmem_count(&op->kmem, req->nr_segs, req->len);
	if (ret)
		return ret;
	op->op = op_code;
	op->len = req->len;
	op->token = token;
	op->offset = offset;
	op->notify = notify;
	/*
	 * The submitter may run the channel's passes: what they allocate must
	 * not wait for I/O, which may be this very I/O (a block device's).
	 */
	noio = memalloc_noio_save();
	ret = ordma_chan_submit(chan, op, false);
	memalloc_noio_restore(noio);
	return ret;
}

/**
 * ordma_ksend() - send a message out of kernel memory
 * @chan: a channel of a kernel user
 * @req: the request: its buffer, @len (the message) and @done
 *
 * The message goes to the peer's next RECV; messages go out in submission
 * order.
 * @done gets @len once the peer's side took every byte, or a negative
 * errno: -ECANCELED (closed), -ENOTCONN (the peer left), -ENODEV (the
 * device went away), -EIO (the device failed the channel), -EREMOTEIO
 * (the peer failed its side), -EPROTO,
 * -ETIMEDOUT, -ENOBUFS or -EACCES (the peer broke a rule). @done runs in
 * process context (one of ordma's workers, or a task submitting on the
 * same channel: it may run inside this very call, so the caller must not
 * hold a lock that @done takes): it may submit on any channel, must not
 * sleep for long and must not close a channel.
 *
 * The bytes go zero-copy from the pages (DMA-mapped, sent with the PD's
 * local_dma_lkey), or through the channel's pool chunks where the planner
 * says so.
 *
 * Context: process context, may sleep.
 * Return: 0 (@done will be called), or a negative errno and @done will not
 * be: -EINVAL (a malformed request), or the channel's errno if it is dead.
 */
int ordma_ksend(struct ordma_chan *chan, struct ordma_kreq *req)
{
	return ordma_kreq_submit(chan, req, ORDMA_OP_SEND, 0, 0, false);
}
EXPORT_SYMBOL_GPL(ordma_ksend);

/**
 * ordma_krecv() - receive a message into kernel memory
 * @chan: a channel of a kernel user
 * @req: the request: its buffer, @len (the most it takes) and @done
 *
 * Takes the peer's next message not taken yet, in order. Pages the
 * planner offers to the peer are fast-registered and invalidated before
 * @done runs; the rest arrives through pool chunks and is copied. @done gets the
 * message's length, or a negative errno as for ordma_ksend(), or -EMSGSIZE
 * (the message is longer than @len: it stays for a later, larger RECV),
 * in the same context. A peer that left gracefully: RECVs get what it sent before
 * leaving, then -ENOTCONN.
 *
 * Context: process context, may sleep.
 * Return: as ordma_ksend().
 */
int ordma_krecv(struct ordma_chan *chan, struct ordma_kreq *req)
{
	return ordma_kreq_submit(chan, req, ORDMA_OP_RECV, 0, 0, false);
}
EXPORT_SYMBOL_GPL(ordma_krecv);

/**
 * ordma_kwrite() - write kernel memory into a window the peer exposed
 * @chan: a channel of a kernel user
 * @req: the request: its buffer, @len (the bytes to write) and @done
 * @token: the window's token, as the peer's ordma_expose() gave it
 * @offset: where in the window
 * @notify: the peer's next RECV completes with 0 once the bytes are there
 *
 * One-sided: the peer posts nothing for it (but with @notify). @done gets
 * @len once every byte is in the window, or a negative errno as for
 * ordma_ksend(), or one the window's side gave: -ENOENT (no such window),
 * -EACCES (not exposed for remote write), -ERANGE (outside it),
 * -EREMOTEIO. The bytes go zero-copy or through pool chunks as for a SEND.
 *
 * Context: process context, may sleep.
 * Return: as ordma_ksend().
 */
int ordma_kwrite(struct ordma_chan *chan, struct ordma_kreq *req, u64 token,
		 u64 offset, bool notify)
{
	return ordma_kreq_submit(chan, req, ORDMA_OP_WRITE, token, offset,
				 notify);
}
EXPORT_SYMBOL_GPL(ordma_kwrite);

/**
 * ordma_kread() - read a window the peer exposed into kernel memory
 * @chan: a channel of a kernel user
 * @req: the request: its buffer, @len (the bytes to read) and @done
 * @token: the window's token
 * @offset: where in the window
 *
 * One-sided: the peer posts nothing for it. @done gets @len once every byte
 * is in @bvec, or a negative errno as for ordma_kwrite() (-EACCES: not
 * exposed for remote read). The bytes come through pool chunks.
 *
 * Context: process context, may sleep.
 * Return: as ordma_ksend().
 */
int ordma_kread(struct ordma_chan *chan, struct ordma_kreq *req, u64 token,
		u64 offset)
{
	return ordma_kreq_submit(chan, req, ORDMA_OP_READ, token, offset,
				 false);
}
EXPORT_SYMBOL_GPL(ordma_kread);

/**
 * ordma_kexpose() - expose kernel memory to the peers of a user's channels
 * @ctx: the kernel user
 * @bvec: the memory; the caller keeps the array and its pages until
 *	ordma_kunexpose() of the window returned
 * @nr_bvec: entries of @bvec; none of those @len covers may be empty
 * @len: bytes of @bvec exposed, from its start (1 to ORDMA_KREQ_MAX_LEN)
 * @access: ORDMA_ACCESS_REMOTE_READ, ORDMA_ACCESS_REMOTE_WRITE or both
 * @token: the window's token, for the peers (a process's
 *	ordma_write()/ordma_read(), a kernel user's ordma_kwrite()/ordma_kread())
 *
 * Any peer of any channel of @ctx that knows the token may access the
 * window as @access allows until it is unexposed. A peer's READ and the
 * head of its WRITE are copied by ordma's workers, through the pool; where
 * the planner finds it pays, the rest of a WRITE is placed: the range it
 * covers is fast-registered (a new rkey each time), offered to that writer
 * only, and invalidated when the write ends, before unexpose returns. A
 * write may change the memory at any moment while exposed for write; a
 * notification (ordma_kwrite()'s @notify) tells the user when a write is
 * complete.
 *
 * Context: process context, may sleep.
 * Return: 0, or -EINVAL (@bvec, @len or @access), -ENOMEM, -EBUSY (no
 * token left).
 */
int ordma_kexpose(struct ordma_kctx *ctx, const struct bio_vec *bvec,
		  unsigned int nr_bvec, size_t len, u32 access, u64 *token)
{
	struct ordma_winmem mem = { .kmem = { .bvec = bvec } };
	int ret;

	if (!access || access & ~(ORDMA_ACCESS_REMOTE_READ |
				  ORDMA_ACCESS_REMOTE_WRITE))
		return -EINVAL;
	ret = ordma_kmem_count(&mem.kmem, nr_bvec, len);
	if (ret)
		return ret;
	return ordma_file_expose(ctx->ofile, &mem, len, access, token);
}
EXPORT_SYMBOL_GPL(ordma_kexpose);

/**
 * ordma_kunexpose() - take a window back
 * @ctx: the kernel user
 * @token: the window, as ordma_kexpose() gave it
 *
 * Peer accesses to it that are running end first; once this returns, none
 * touches its memory, and later ones fail (-ENOENT at the peer).
 *
 * Context: process context, may sleep; not from a done callback.
 * Return: 0, or -ENOENT (no such window of @ctx).
 */
int ordma_kunexpose(struct ordma_kctx *ctx, u64 token)
{
	return ordma_window_unexpose(ctx->ofile, token);
}
EXPORT_SYMBOL_GPL(ordma_kunexpose);
