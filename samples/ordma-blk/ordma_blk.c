// SPDX-License-Identifier: GPL-2.0
/*
 * ordma_blk - ordma-blk's initiator: a blk-mq disk (/dev/<name>) whose I/O
 * goes to an ordma_blk_target at addr:port over ordma's in-kernel API. The
 * protocol is in ordma_blk.h.
 *
 * On load it opens one channel per hardware queue, says HELLO on each and
 * learns the device's size, then adds the disk. Each queue's channel
 * carries its requests: queue_rq sends a request's header and, for a WRITE,
 * its data straight from the request's pages; the answers land in receive
 * buffers the queue keeps posted (struct oblk_resp), a READ's data is copied
 * from there into the request's pages. Every request's state is its own
 * from the tag set's allocation (struct oblk_cmd: its SEND, header and
 * bio_vec array): nothing is allocated per I/O. The tag set is
 * BLK_MQ_F_BLOCKING: ordma_ksend() is called in process context.
 *
 * A request ends when both its SEND is done and its answer came (ordma may
 * tell either first). The target vanishing (chan_down, an operation
 * failing, a protocol error, a request timing out) kills the device once:
 * the dead work quiesces the queue, closes every channel (ordma completes
 * what is queued first), fails every request still in flight with an I/O
 * error and lets the queue run again, so that every later request fails at
 * once. There is no reconnection: the module is removed and loaded again.
 *
 * Locking:
 * - oblk.lock (a mutex) serialises setting the channels up (load) with
 *   tearing them down (the dead work, unload) and guards oblk.disk.
 * - A queue's @chan changes only under oblk.lock with the disk's queue
 *   quiesced (or before it exists), so queue_rq reads it without a lock.
 * - A queue's @lock (a spinlock, process context only) guards its table of
 *   requests in flight and their sent/answered state. Whoever sets the
 *   second of sent and answered, under @lock, takes the request off the
 *   table and ends it. ordma may run a SEND's and a RECV's done at once (a
 *   registered RECV's runs in its registration worker), so an answer's
 *   data is copied outside @lock, before answered is set: the request
 *   cannot end meanwhile. The dead work fails what is left on the table
 *   only once the channels are closed, when no callback runs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/completion.h>
#include <linux/highmem.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>

#include <linux/ordma.h>

#include "ordma_blk.h"
#include "compat.h"

static char *oblk_addr = "192.0.2.1";
module_param_named(addr, oblk_addr, charp, 0444);
MODULE_PARM_DESC(addr, "the target's address, IPv4 or IPv6 (default 192.0.2.1)");

static ushort oblk_port = 7472;
module_param_named(port, oblk_port, ushort, 0444);
MODULE_PARM_DESC(port, "the target's port (default 7472)");

static char *oblk_name = "ordmablk0";
module_param_named(name, oblk_name, charp, 0444);
MODULE_PARM_DESC(name, "the disk's name (default ordmablk0)");

static uint oblk_nr_queues = 2;
module_param_named(nr_queues, oblk_nr_queues, uint, 0444);
MODULE_PARM_DESC(nr_queues, "hardware queues, a channel each (default 2, at most the CPUs)");

static uint oblk_depth = ORDMA_BLK_MAX_DEPTH;
module_param_named(queue_depth, oblk_depth, uint, 0444);
MODULE_PARM_DESC(queue_depth, "requests in flight per queue (default and most 32)");

static uint oblk_io_timeout = 30;
module_param_named(io_timeout, oblk_io_timeout, uint, 0444);
MODULE_PARM_DESC(io_timeout, "seconds a request may take before the target is given up (default 30; 0: the block layer's)");

#define OBLK_MAX_QUEUES		16
#define OBLK_HELLO_WAIT		(10 * HZ)
/*
 * Pieces of a request's data: rq_for_each_segment() cuts it at page ends,
 * and every piece is at least a sector long.
 */
#define OBLK_MAX_BVECS		(ORDMA_BLK_MAX_IO / ORDMA_BLK_SECTOR_SIZE)

/* Bits of oblk.flags. */
enum {
	OBLK_DEAD,		/* the target is given up */
};

struct oblk_queue;

/**
 * struct oblk_cmd - a request's own state (its blk-mq pdu)
 * @kreq: the SEND of the request
 * @q: its queue
 * @hdr: the request's header (kmalloc'ed: in one page)
 * @bvec: the header, then a WRITE's data
 * @sent: @kreq is done (@q->lock)
 * @answered: the answer came, with @status (@q->lock)
 * @status: the answer's status
 */
struct oblk_cmd {
	struct ordma_kreq kreq;
	struct oblk_queue *q;
	struct ordma_blk_hdr *hdr;
	struct bio_vec *bvec;
	bool sent;
	bool answered;
	blk_status_t status;
};

/**
 * struct oblk_resp - a receive buffer for answers
 * @q: its queue
 * @kreq: the RECV
 * @buf: the answer: a header and a READ's data
 */
struct oblk_resp {
	struct oblk_queue *q;
	struct ordma_kreq kreq;
	struct ordma_blk_buf buf;
};

/* The HELLO of a channel and its answer. */
struct oblk_hello_msg {
	struct ordma_blk_hdr hdr;
	struct ordma_blk_hello hello;
};

/**
 * struct oblk_queue - a hardware queue and its channel
 * @idx: its index
 * @chan: its channel (see the locking at the top)
 * @lock: guards @inflight and the sent/answered state of its requests
 * @inflight: the request of each tag in flight, or NULL (@lock)
 * @resps: receive buffers for answers, one per tag
 * @out: the HELLO (kmalloc'ed: in one page)
 * @in: its answer (kmalloc'ed: in one page)
 * @hello_kv: @out and @in as kvecs (kmalloc'ed control messages)
 * @hello_sreq: the HELLO's SEND
 * @hello_rreq: the RECV of its answer
 * @hello_sent: @hello_sreq is done, with @hello_sres
 * @hello_recvd: @hello_rreq is done, with @hello_rres
 * @hello_sres: bytes sent or -errno
 * @hello_rres: bytes received or -errno
 */
struct oblk_queue {
	unsigned int idx;
	struct ordma_chan *chan;
	spinlock_t lock;	/* inflight, cmds' sent and answered */
	struct request **inflight;
	struct oblk_resp *resps;
	struct oblk_hello_msg *out;
	struct oblk_hello_msg *in;
	struct kvec hello_kv[2];
	struct ordma_kreq hello_sreq;
	struct ordma_kreq hello_rreq;
	struct completion hello_sent;
	struct completion hello_recvd;
	ssize_t hello_sres;
	ssize_t hello_rres;
};

static struct {
	struct sockaddr_storage addr;
	unsigned long flags;		/* OBLK_*, atomic bit operations */
	struct workqueue_struct *wq;	/* dead_work */
	struct work_struct dead_work;
	struct mutex lock;		/* channels' set-up and teardown, disk */
	struct ordma_kctx *ctx;
	unsigned int nr_queues;
	unsigned int depth;
	struct oblk_queue *queues;
	u64 size;			/* bytes, from the target */
	u32 features;			/* ORDMA_BLK_FEAT_*, from the target */
	struct blk_mq_tag_set set;
	struct gendisk *disk;		/* lock */
} oblk = {
	.lock = __MUTEX_INITIALIZER(oblk.lock),
};

/* Give the target up, once: I/O fails from now on. Any process context. */
static void oblk_kill(int err)
{
	if (test_and_set_bit(OBLK_DEAD, &oblk.flags))
		return;
	pr_err("target %pISpc lost (%d): I/O fails from now on\n", &oblk.addr,
	       err);
	queue_work(oblk.wq, &oblk.dead_work);
}

/* End every request of @q still in flight with an I/O error. */
static void oblk_queue_fail(struct oblk_queue *q)
{
	struct request *rq;
	unsigned int tag;

	for (tag = 0; tag < oblk.depth; tag++) {
		spin_lock(&q->lock);
		rq = q->inflight[tag];
		q->inflight[tag] = NULL;
		spin_unlock(&q->lock);
		if (rq)
			blk_mq_end_request(rq, BLK_STS_IOERR);
	}
}

/**
 * oblk_teardown() - close every channel and fail what is in flight
 *
 * With the disk's queue quiesced, no queue_rq runs while the channels
 * close; once ordma_kchan_close() returned no callback of the channel
 * runs, and what is left in flight is ours to fail. Idempotent.
 *
 * Context: process context, may sleep; not from an ordma callback.
 */
static void oblk_teardown(void)
{
	unsigned int i;

	mutex_lock(&oblk.lock);
	if (oblk.disk)
		blk_mq_quiesce_queue(oblk.disk->queue);
	for (i = 0; i < oblk.nr_queues; i++) {
		struct oblk_queue *q = &oblk.queues[i];

		if (q->chan) {
			ordma_kchan_close(q->chan);
			q->chan = NULL;
		}
		oblk_queue_fail(q);
	}
	if (oblk.disk)
		blk_mq_unquiesce_queue(oblk.disk->queue);
	mutex_unlock(&oblk.lock);
}

static void oblk_dead_work(struct work_struct *work)
{
	oblk_teardown();
}

/* A channel died by itself. In a work item of ordma's. */
static void oblk_chan_down(struct ordma_chan *chan, void *priv, int err)
{
	oblk_kill(err);
}

static const struct ordma_kctx_ops oblk_ops = {
	.chan_down = oblk_chan_down,
};

/* -- answers ---------------------------------------------------------------- */

static void oblk_recvd(struct ordma_kreq *kreq, ssize_t res);

/* Post @r for the next answer. */
static void oblk_resp_post(struct oblk_resp *r)
{
	int ret;

	if (test_bit(OBLK_DEAD, &oblk.flags))
		return;
	r->kreq.bvec = r->buf.bvec;
	r->kreq.nr_segs = r->buf.nr_bvec;
	r->kreq.len = sizeof(struct ordma_blk_hdr) + ORDMA_BLK_MAX_IO;
	r->kreq.done = oblk_recvd;
	ret = ordma_krecv(r->q->chan, &r->kreq);
	if (ret)
		oblk_kill(ret);
}

/* Copy a READ's data from the answer into the request's pages. */
static void oblk_copy_to_rq(struct request *rq, const void *src)
{
	struct req_iterator iter;
	struct bio_vec bv;

	rq_for_each_segment(bv, rq, iter) {
		memcpy_to_bvec(&bv, src);
		flush_dcache_page(bv.bv_page);
		src += bv.bv_len;
	}
}

/**
 * oblk_answer() - take an answer for a request
 * @rq: the request
 * @hdr: the answer's header
 * @res: bytes of the answer
 * @data: a READ's data after @hdr
 * @status: the status the request ends with
 *
 * Return: 0, or -EPROTO when the answer does not fit the request.
 */
static int oblk_answer(struct request *rq, const struct ordma_blk_hdr *hdr,
		       size_t res, const void *data, blk_status_t *status)
{
	struct oblk_cmd *cmd = blk_mq_rq_to_pdu(rq);
	u32 err = le32_to_cpu(hdr->status);
	size_t len = 0;

	if (hdr->op != cmd->hdr->op)
		return -EPROTO;
	if (!err && le16_to_cpu(hdr->op) == ORDMA_BLK_OP_READ)
		len = blk_rq_bytes(rq);
	if (res != sizeof(*hdr) + len)
		return -EPROTO;
	if (err) {
		*status = errno_to_blk_status(-(int)min_t(u32, err, MAX_ERRNO));
		return 0;
	}
	if (len)
		oblk_copy_to_rq(rq, data);
	*status = BLK_STS_OK;
	return 0;
}

/* An answer came. Data path held. */
static void oblk_recvd(struct ordma_kreq *kreq, ssize_t res)
{
	struct oblk_resp *r = container_of(kreq, struct oblk_resp, kreq);
	struct ordma_blk_hdr *hdr = ordma_blk_buf_hdr(&r->buf);
	struct oblk_queue *q = r->q;
	struct oblk_cmd *cmd = NULL;
	struct request *rq = NULL;
	blk_status_t status;
	bool end;
	u32 tag;

	if (res < 0) {
		/* -ECANCELED: our teardown, which kills first. */
		oblk_kill(res);
		return;
	}
	if ((size_t)res < sizeof(*hdr) || !ordma_blk_hdr_ok(hdr))
		goto err_proto;
	tag = le32_to_cpu(hdr->tag);
	if (tag >= oblk.depth)
		goto err_proto;
	spin_lock(&q->lock);
	rq = q->inflight[tag];
	if (rq) {
		cmd = blk_mq_rq_to_pdu(rq);
		if (cmd->answered)
			cmd = NULL;
	}
	spin_unlock(&q->lock);
	if (!cmd || oblk_answer(rq, hdr, res, ordma_blk_buf_data(&r->buf),
				&status))
		goto err_proto;

	spin_lock(&q->lock);
	/* A second answer for the tag, in another callback meanwhile. */
	if (q->inflight[tag] != rq || cmd->answered) {
		spin_unlock(&q->lock);
		goto err_proto;
	}
	cmd->answered = true;
	cmd->status = status;
	end = cmd->sent;
	if (end)
		q->inflight[tag] = NULL;
	spin_unlock(&q->lock);
	oblk_resp_post(r);
	if (end)
		blk_mq_end_request(rq, status);
	return;

err_proto:
	pr_err_ratelimited("queue %u: an answer that fits no request\n",
			   q->idx);
	oblk_kill(-EPROTO);
}

/* -- requests --------------------------------------------------------------- */

/* A request's SEND is done. Data path held. */
static void oblk_sent(struct ordma_kreq *kreq, ssize_t res)
{
	struct oblk_cmd *cmd = container_of(kreq, struct oblk_cmd, kreq);
	struct request *rq = blk_mq_rq_from_pdu(cmd);
	struct oblk_queue *q = cmd->q;
	bool end;

	if (res != (ssize_t)kreq->len) {
		/* The dead work fails the request. */
		oblk_kill(res < 0 ? res : -EIO);
		return;
	}
	spin_lock(&q->lock);
	cmd->sent = true;
	end = cmd->answered;
	if (end)
		q->inflight[rq->tag] = NULL;
	spin_unlock(&q->lock);
	if (end)
		blk_mq_end_request(rq, cmd->status);
}

/**
 * oblk_cmd_prep() - make a request's message
 * @cmd: its state
 * @rq: the request
 *
 * Return: 0, -EOPNOTSUPP for an operation ordma-blk has not, or -EIO for
 * a request of more pieces than it should have.
 */
static int oblk_cmd_prep(struct oblk_cmd *cmd, struct request *rq)
{
	struct ordma_blk_hdr *hdr = cmd->hdr;
	unsigned int n = 1, flags = 0;
	struct req_iterator iter;
	enum ordma_blk_op op;
	struct bio_vec bv;
	u32 len = 0;

	switch (req_op(rq)) {
	case REQ_OP_READ:
		op = ORDMA_BLK_OP_READ;
		len = blk_rq_bytes(rq);
		break;
	case REQ_OP_WRITE:
		op = ORDMA_BLK_OP_WRITE;
		len = blk_rq_bytes(rq);
		if (rq->cmd_flags & REQ_FUA)
			flags |= ORDMA_BLK_F_FUA;
		break;
	case REQ_OP_FLUSH:
		op = ORDMA_BLK_OP_FLUSH;
		break;
	case REQ_OP_DISCARD:
		op = ORDMA_BLK_OP_DISCARD;
		len = blk_rq_bytes(rq);
		break;
	default:
		return -EOPNOTSUPP;
	}
	ordma_blk_hdr_init(hdr, op, rq->tag);
	hdr->flags = cpu_to_le32(flags);
	hdr->sector = cpu_to_le64(blk_rq_pos(rq));
	hdr->len = cpu_to_le32(len);
	cmd->kreq.len = sizeof(*hdr);
	if (op == ORDMA_BLK_OP_WRITE) {
		rq_for_each_segment(bv, rq, iter) {
			if (WARN_ON_ONCE(n > OBLK_MAX_BVECS))
				return -EIO;
			cmd->bvec[n++] = bv;
		}
		cmd->kreq.len += len;
	}
	cmd->kreq.bvec = cmd->bvec;
	cmd->kreq.nr_segs = n;
	cmd->kreq.done = oblk_sent;
	return 0;
}

static blk_status_t oblk_queue_rq(struct blk_mq_hw_ctx *hctx,
				  const struct blk_mq_queue_data *bd)
{
	struct oblk_queue *q = hctx->driver_data;
	struct request *rq = bd->rq;
	struct oblk_cmd *cmd = blk_mq_rq_to_pdu(rq);
	int ret;

	if (test_bit(OBLK_DEAD, &oblk.flags) || !q->chan)
		return BLK_STS_IOERR;
	ret = oblk_cmd_prep(cmd, rq);
	if (ret)
		return ret == -EOPNOTSUPP ? BLK_STS_NOTSUPP : BLK_STS_IOERR;
	blk_mq_start_request(rq);
	spin_lock(&q->lock);
	cmd->sent = false;
	cmd->answered = false;
	q->inflight[rq->tag] = rq;
	spin_unlock(&q->lock);
	/* Its callbacks may run (and end it) before this returns. */
	ret = ordma_ksend(q->chan, &cmd->kreq);
	if (ret) {
		spin_lock(&q->lock);
		q->inflight[rq->tag] = NULL;
		spin_unlock(&q->lock);
		oblk_kill(ret);
		return BLK_STS_IOERR;
	}
	return BLK_STS_OK;
}

/* A request took too long: give the target up (the dead work ends it). */
static enum blk_eh_timer_return oblk_timeout(struct request *rq)
{
	oblk_kill(-ETIMEDOUT);
	return BLK_EH_RESET_TIMER;
}

static int oblk_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			  unsigned int hctx_idx)
{
	hctx->driver_data = &oblk.queues[hctx_idx];
	return 0;
}

static int oblk_init_request(struct blk_mq_tag_set *set, struct request *rq,
			     unsigned int hctx_idx, unsigned int numa_node)
{
	struct oblk_cmd *cmd = blk_mq_rq_to_pdu(rq);

	cmd->q = &oblk.queues[hctx_idx];
	cmd->hdr = kzalloc_node(sizeof(*cmd->hdr), GFP_KERNEL, numa_node);
	cmd->bvec = kcalloc_node(1 + OBLK_MAX_BVECS, sizeof(*cmd->bvec),
				 GFP_KERNEL, numa_node);
	if (!cmd->hdr || !cmd->bvec) {
		kfree(cmd->bvec);
		kfree(cmd->hdr);
		return -ENOMEM;
	}
	bvec_set_page(&cmd->bvec[0], virt_to_page(cmd->hdr), sizeof(*cmd->hdr),
		      offset_in_page(cmd->hdr));
	return 0;
}

static void oblk_exit_request(struct blk_mq_tag_set *set, struct request *rq,
			      unsigned int hctx_idx)
{
	struct oblk_cmd *cmd = blk_mq_rq_to_pdu(rq);

	kfree(cmd->bvec);
	kfree(cmd->hdr);
}

static const struct blk_mq_ops oblk_mq_ops = {
	.queue_rq	= oblk_queue_rq,
	.timeout	= oblk_timeout,
	.init_hctx	= oblk_init_hctx,
	.init_request	= oblk_init_request,
	.exit_request	= oblk_exit_request,
};

static const struct block_device_operations oblk_fops = {
	.owner		= THIS_MODULE,
};

/* -- set-up ------------------------------------------------------------------ */

static void oblk_hello_sent(struct ordma_kreq *kreq, ssize_t res)
{
	struct oblk_queue *q = container_of(kreq, struct oblk_queue,
					    hello_sreq);

	q->hello_sres = res;
	complete(&q->hello_sent);
}

static void oblk_hello_recvd(struct ordma_kreq *kreq, ssize_t res)
{
	struct oblk_queue *q = container_of(kreq, struct oblk_queue,
					    hello_rreq);

	q->hello_rres = res;
	complete(&q->hello_recvd);
}

/**
 * oblk_hello() - say HELLO on a queue's channel and check the answer
 * @q: the queue, its channel just connected
 *
 * The first queue's answer sets the device's size and features; the
 * others must agree with it. On a failure the HELLO's requests may still
 * be ordma's: closing the channel completes them.
 *
 * Context: process context, may sleep; oblk.lock held.
 * Return: 0, or a negative errno: the target's status, -ETIMEDOUT, an
 * errno of the channel, or -EPROTO for an answer that is no HELLO's.
 */
static int oblk_hello(struct oblk_queue *q)
{
	struct ordma_blk_hello *h = &q->in->hello;
	u32 status;
	u64 size;
	int ret;

	lockdep_assert_held(&oblk.lock);
	ordma_blk_hdr_init(&q->out->hdr, ORDMA_BLK_OP_HELLO, 0);
	q->out->hdr.len = cpu_to_le32(sizeof(q->out->hello));
	memset(&q->out->hello, 0, sizeof(q->out->hello));
	q->out->hello.queue = cpu_to_le32(q->idx);
	q->out->hello.nr_queues = cpu_to_le32(oblk.nr_queues);
	q->out->hello.depth = cpu_to_le32(oblk.depth);
	q->hello_kv[0].iov_base = q->out;
	q->hello_kv[0].iov_len = sizeof(*q->out);
	q->hello_kv[1].iov_base = q->in;
	q->hello_kv[1].iov_len = sizeof(*q->in);
	q->hello_sreq.kvec = &q->hello_kv[0];
	q->hello_sreq.type = ORDMA_KBUF_KVEC;
	q->hello_sreq.nr_segs = 1;
	q->hello_sreq.len = sizeof(*q->out);
	q->hello_sreq.done = oblk_hello_sent;
	q->hello_rreq.kvec = &q->hello_kv[1];
	q->hello_rreq.type = ORDMA_KBUF_KVEC;
	q->hello_rreq.nr_segs = 1;
	q->hello_rreq.len = sizeof(*q->in);
	q->hello_rreq.done = oblk_hello_recvd;

	ret = ordma_krecv(q->chan, &q->hello_rreq);
	if (ret)
		return ret;
	ret = ordma_ksend(q->chan, &q->hello_sreq);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&q->hello_sent, OBLK_HELLO_WAIT) ||
	    !wait_for_completion_timeout(&q->hello_recvd, OBLK_HELLO_WAIT))
		return -ETIMEDOUT;
	if (q->hello_sres < 0)
		return q->hello_sres;
	if (q->hello_rres < 0)
		return q->hello_rres;
	if (q->hello_rres != sizeof(*q->in) || !ordma_blk_hdr_ok(&q->in->hdr) ||
	    le16_to_cpu(q->in->hdr.op) != ORDMA_BLK_OP_HELLO)
		return -EPROTO;
	status = le32_to_cpu(q->in->hdr.status);
	if (status)
		return -(int)min_t(u32, status, MAX_ERRNO);

	size = le64_to_cpu(h->size);
	if (!size || !IS_ALIGNED(size, ORDMA_BLK_SECTOR_SIZE) ||
	    le32_to_cpu(h->max_io) < ORDMA_BLK_MAX_IO ||
	    le32_to_cpu(h->depth) < oblk.depth)
		return -EPROTO;
	if (!q->idx) {
		oblk.size = size;
		oblk.features = le32_to_cpu(h->features);
	} else if (size != oblk.size ||
		   oblk.features != le32_to_cpu(h->features)) {
		return -EPROTO;
	}
	return 0;
}

/**
 * oblk_connect() - connect every queue, say HELLO, post the receives
 *
 * Channels connected stay on their queues on a failure, for
 * oblk_disconnect().
 *
 * Context: process context, may sleep.
 * Return: 0 or a negative errno.
 */
static int oblk_connect(void)
{
	unsigned int i, j;
	int ret = 0;

	mutex_lock(&oblk.lock);
	for (i = 0; i < oblk.nr_queues; i++) {
		struct oblk_queue *q = &oblk.queues[i];

		ret = ordma_kconnect(oblk.ctx, (struct sockaddr *)&oblk.addr,
				     0, q, &q->chan);
		if (ret) {
			pr_err("cannot connect to %pISpc: %d\n", &oblk.addr,
			       ret);
			goto out;
		}
		ret = oblk_hello(q);
		if (ret) {
			pr_err("target %pISpc refused queue %u: %d\n",
			       &oblk.addr, i, ret);
			goto out;
		}
	}
	for (i = 0; i < oblk.nr_queues; i++)
		for (j = 0; j < oblk.depth; j++)
			oblk_resp_post(&oblk.queues[i].resps[j]);
	/* A channel that died meanwhile. */
	if (test_bit(OBLK_DEAD, &oblk.flags))
		ret = -ENOTCONN;
out:
	mutex_unlock(&oblk.lock);
	return ret;
}

/* Stop the dead work, close the channels, fail what is in flight. */
static void oblk_disconnect(void)
{
	set_bit(OBLK_DEAD, &oblk.flags);
	cancel_work_sync(&oblk.dead_work);
	oblk_teardown();
}

static void oblk_queues_free(void)
{
	unsigned int i, j;

	for (i = 0; i < oblk.nr_queues; i++) {
		struct oblk_queue *q = &oblk.queues[i];

		if (q->resps)
			for (j = 0; j < oblk.depth; j++)
				ordma_blk_buf_free(&q->resps[j].buf);
		kfree(q->resps);
		kfree(q->inflight);
		kfree(q->in);
		kfree(q->out);
	}
	kfree(oblk.queues);
}

/* The queues and their buffers, before any channel. */
static int oblk_queues_alloc(void)
{
	unsigned int i, j;

	oblk.queues = kcalloc(oblk.nr_queues, sizeof(*oblk.queues),
			      GFP_KERNEL);
	if (!oblk.queues)
		return -ENOMEM;
	for (i = 0; i < oblk.nr_queues; i++) {
		struct oblk_queue *q = &oblk.queues[i];

		q->idx = i;
		spin_lock_init(&q->lock);
		init_completion(&q->hello_sent);
		init_completion(&q->hello_recvd);
		q->out = kzalloc(sizeof(*q->out), GFP_KERNEL);
		q->in = kzalloc(sizeof(*q->in), GFP_KERNEL);
		q->inflight = kcalloc(oblk.depth, sizeof(*q->inflight),
				      GFP_KERNEL);
		q->resps = kcalloc(oblk.depth, sizeof(*q->resps), GFP_KERNEL);
		if (!q->out || !q->in || !q->inflight || !q->resps)
			goto err_free;
		for (j = 0; j < oblk.depth; j++) {
			q->resps[j].q = q;
			if (ordma_blk_buf_alloc(&q->resps[j].buf,
						ORDMA_BLK_MAX_IO))
				goto err_free;
		}
	}
	return 0;

err_free:
	oblk_queues_free();
	return -ENOMEM;
}

/* The disk, its size and limits from the target's HELLO. */
static int oblk_disk_alloc(void)
{
	struct ordma_blk_limits lim = {
		.max_hw_sectors = ORDMA_BLK_MAX_IO >> ORDMA_BLK_SECTOR_SHIFT,
	};
	struct gendisk *disk;

	if (oblk.features & ORDMA_BLK_FEAT_DISCARD)
		lim.max_discard_sectors =
			ORDMA_BLK_MAX_DISCARD >> ORDMA_BLK_SECTOR_SHIFT;
	lim.write_cache = oblk.features & ORDMA_BLK_FEAT_FLUSH;
	disk = ordma_blk_alloc_disk(&oblk.set, &lim, NULL);
	if (IS_ERR(disk))
		return PTR_ERR(disk);
	disk->fops = &oblk_fops;
	strscpy(disk->disk_name, oblk_name, DISK_NAME_LEN);
	set_capacity(disk, oblk.size >> ORDMA_BLK_SECTOR_SHIFT);
	mutex_lock(&oblk.lock);
	oblk.disk = disk;
	mutex_unlock(&oblk.lock);
	return 0;
}

/* The dead work may quiesce the disk's queue until this returns. */
static void oblk_disk_put(void)
{
	struct gendisk *disk;

	mutex_lock(&oblk.lock);
	disk = oblk.disk;
	oblk.disk = NULL;
	mutex_unlock(&oblk.lock);
	put_disk(disk);
}

/* Check the parameters and the address. */
static int oblk_params(void)
{
	char port[8];
	int ret;

	if (!oblk_nr_queues || oblk_nr_queues > OBLK_MAX_QUEUES ||
	    !oblk_depth || oblk_depth > ORDMA_BLK_MAX_DEPTH) {
		pr_err("nr_queues must be 1 to %u, queue_depth 1 to %u\n",
		       OBLK_MAX_QUEUES, ORDMA_BLK_MAX_DEPTH);
		return -EINVAL;
	}
	if (!oblk_name || !*oblk_name || strlen(oblk_name) >= DISK_NAME_LEN) {
		pr_err("name must be 1 to %u characters\n", DISK_NAME_LEN - 1);
		return -EINVAL;
	}
	snprintf(port, sizeof(port), "%u", oblk_port);
	ret = inet_pton_with_scope(&init_net, AF_UNSPEC, oblk_addr, port,
				   &oblk.addr);
	if (ret) {
		pr_err("bad address %s\n", oblk_addr);
		return ret;
	}
	/* blk-mq maps no more hardware queues than CPUs. */
	oblk.nr_queues = min(oblk_nr_queues, nr_cpu_ids);
	oblk.depth = oblk_depth;
	return 0;
}

static int __init oblk_init(void)
{
	int ret;

	ret = oblk_params();
	if (ret)
		return ret;
	INIT_WORK(&oblk.dead_work, oblk_dead_work);
	/* It ends requests: reclaim may wait for it. */
	oblk.wq = alloc_workqueue("ordma_blk", WQ_MEM_RECLAIM, 0);
	if (!oblk.wq)
		return -ENOMEM;
	ret = oblk_queues_alloc();
	if (ret)
		goto err_destroy_wq;
	oblk.ctx = ordma_kctx_create("ordma_blk", &oblk_ops);
	if (IS_ERR(oblk.ctx)) {
		ret = PTR_ERR(oblk.ctx);
		goto err_free_queues;
	}
	ret = oblk_connect();
	if (ret)
		goto err_disconnect;

	oblk.set.ops = &oblk_mq_ops;
	oblk.set.nr_hw_queues = oblk.nr_queues;
	oblk.set.queue_depth = oblk.depth;
	oblk.set.numa_node = NUMA_NO_NODE;
	oblk.set.cmd_size = sizeof(struct oblk_cmd);
	oblk.set.flags = BLK_MQ_F_SHOULD_MERGE | BLK_MQ_F_BLOCKING;
	oblk.set.timeout = oblk_io_timeout * HZ;
	ret = blk_mq_alloc_tag_set(&oblk.set);
	if (ret)
		goto err_disconnect;
	ret = oblk_disk_alloc();
	if (ret)
		goto err_free_tag_set;
	ret = add_disk(oblk.disk);
	if (ret)
		goto err_put_disk;
	pr_info("%s: %llu bytes at %pISpc, %u queues of %u\n", oblk_name,
		oblk.size, &oblk.addr, oblk.nr_queues, oblk.depth);
	return 0;

err_put_disk:
	oblk_disk_put();
err_free_tag_set:
	blk_mq_free_tag_set(&oblk.set);
err_disconnect:
	oblk_disconnect();
	ordma_kctx_destroy(oblk.ctx);
err_free_queues:
	oblk_queues_free();
err_destroy_wq:
	destroy_workqueue(oblk.wq);
	return ret;
}

static void __exit oblk_exit(void)
{
	/* Waits for the I/O in flight: its answers, or the dead work. */
	del_gendisk(oblk.disk);
	oblk_disk_put();
	blk_mq_free_tag_set(&oblk.set);
	oblk_disconnect();
	ordma_kctx_destroy(oblk.ctx);
	oblk_queues_free();
	destroy_workqueue(oblk.wq);
	pr_info("%s removed\n", oblk_name);
}

module_init(oblk_init);
module_exit(oblk_exit);

MODULE_DESCRIPTION("ordma-blk initiator: a block device served over ordma");
MODULE_LICENSE("GPL");
