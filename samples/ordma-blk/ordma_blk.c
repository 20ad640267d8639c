// SPDX-License-Identifier: GPL-2.0
/*
 * ordma_blk - ordma-blk's initiator: blk-mq disks (/dev/<name>) whose I/O
 * goes to an ordma_blk_target at addr:port over ordma's in-kernel API. The
 * protocol is in ordma_blk.h.
 *
 * A disk is added on load (the module parameters; name= empty for none) and
 * by a write to /sys/class/ordma-blk/add ("name=N addr=A port=P ...", the
 * same keys), and removed by a write of its name to /sys/class/ordma-blk/
 * remove or on unload. Adding one opens a channel per hardware queue, says
 * HELLO on each and learns the device's size, then adds the disk. A name
 * in use by another ordma-blk disk is refused (-EEXIST). Each queue's channel
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
 * once. There is no reconnection: the disk is removed and added again.
 *
 * Locking:
 * - oblk.lock (a mutex) guards the list of disks; it is held across a
 *   disk's whole addition and removal, so that two of the same name cannot
 *   race.
 * - A disk's @lock (a mutex) serialises setting its channels up with
 *   tearing them down (the dead work, removal) and guards its @disk.
 * - A queue's @chan changes only under its disk's @lock with the queue
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
MODULE_PARM_DESC(name, "the name of the disk added on load (default ordmablk0; empty: none)");

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

/* Bits of oblk_dev.flags. */
enum {
	OBLK_DEAD,		/* the target is given up */
};

struct oblk_queue;
struct oblk_dev;

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
 * @dev: its disk
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
	struct oblk_dev *dev;
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

/**
 * struct oblk_conf - what a disk is asked to be
 * @name: its name
 * @addr: the target's address
 * @nr_queues: hardware queues, a channel each
 * @depth: requests in flight per queue
 * @io_timeout: seconds a request may take (0: the block layer's)
 */
struct oblk_conf {
	char name[DISK_NAME_LEN];
	struct sockaddr_storage addr;
	unsigned int nr_queues;
	unsigned int depth;
	unsigned int io_timeout;
};

/**
 * struct oblk_dev - a disk and its target
 * @node: on oblk.devs (oblk.lock)
 * @conf: its configuration; @conf.nr_queues is what blk-mq maps
 * @flags: OBLK_*, atomic bit operations
 * @dead_work: tears the channels down once the target is given up
 * @lock: its channels' set-up and teardown, @disk
 * @ctx: its ordma context
 * @queues: @conf.nr_queues of them
 * @size: bytes, from the target
 * @features: ORDMA_BLK_FEAT_*, from the target
 * @set: its tag set
 * @disk: the disk, once allocated (@lock)
 */
struct oblk_dev {
	struct list_head node;
	struct oblk_conf conf;
	unsigned long flags;
	struct work_struct dead_work;
	struct mutex lock;		/* channels' set-up and teardown, disk */
	struct ordma_kctx *ctx;
	struct oblk_queue *queues;
	u64 size;
	u32 features;
	struct blk_mq_tag_set set;
	struct gendisk *disk;		/* lock */
};

static struct {
	struct mutex lock;		/* devs; a disk's addition and removal */
	struct list_head devs;
	struct workqueue_struct *wq;	/* the disks' dead_work */
} oblk = {
	.lock = __MUTEX_INITIALIZER(oblk.lock),
	.devs = LIST_HEAD_INIT(oblk.devs),
};

/* Give @dev's target up, once: I/O fails from now on. Any process context. */
static void oblk_kill(struct oblk_dev *dev, int err)
{
	if (test_and_set_bit(OBLK_DEAD, &dev->flags))
		return;
	pr_err("%s: target %pISpc lost (%d): I/O fails from now on\n",
	       dev->conf.name, &dev->conf.addr, err);
	queue_work(oblk.wq, &dev->dead_work);
}

/* End every request of @q still in flight with an I/O error. */
static void oblk_queue_fail(struct oblk_queue *q)
{
	struct request *rq;
	unsigned int tag;

	for (tag = 0; tag < q->dev->conf.depth; tag++) {
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
 * @dev: the disk
 *
 * With the disk's queue quiesced, no queue_rq runs while the channels
 * close; once ordma_kchan_close() returned no callback of the channel
 * runs, and what is left in flight is ours to fail. Idempotent.
 *
 * Context: process context, may sleep; not from an ordma callback.
 */
static void oblk_teardown(struct oblk_dev *dev)
{
	unsigned int i;

	mutex_lock(&dev->lock);
	if (dev->disk)
		blk_mq_quiesce_queue(dev->disk->queue);
	for (i = 0; i < dev->conf.nr_queues; i++) {
		struct oblk_queue *q = &dev->queues[i];

		if (q->chan) {
			ordma_kchan_close(q->chan);
			q->chan = NULL;
		}
		oblk_queue_fail(q);
	}
	if (dev->disk)
		blk_mq_unquiesce_queue(dev->disk->queue);
	mutex_unlock(&dev->lock);
}

static void oblk_dead_work(struct work_struct *work)
{
	oblk_teardown(container_of(work, struct oblk_dev, dead_work));
}

/* A channel died by itself. In a work item of ordma's. */
static void oblk_chan_down(struct ordma_chan *chan, void *priv, int err)
{
	struct oblk_queue *q = priv;

	oblk_kill(q->dev, err);
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

	if (test_bit(OBLK_DEAD, &r->q->dev->flags))
		return;
	r->kreq.bvec = r->buf.bvec;
	r->kreq.nr_segs = r->buf.nr_bvec;
	r->kreq.len = sizeof(struct ordma_blk_hdr) + ORDMA_BLK_MAX_IO;
	r->kreq.done = oblk_recvd;
	ret = ordma_krecv(r->q->chan, &r->kreq);
	if (ret)
		oblk_kill(r->q->dev, ret);
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
		oblk_kill(q->dev, res);
		return;
	}
	if ((size_t)res < sizeof(*hdr) || !ordma_blk_hdr_ok(hdr))
		goto err_proto;
	tag = le32_to_cpu(hdr->tag);
	if (tag >= q->dev->conf.depth)
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
	pr_err_ratelimited("%s: queue %u: an answer that fits no request\n",
			   q->dev->conf.name, q->idx);
	oblk_kill(q->dev, -EPROTO);
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
		oblk_kill(q->dev, res < 0 ? res : -EIO);
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

	if (test_bit(OBLK_DEAD, &q->dev->flags) || !q->chan)
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
		oblk_kill(q->dev, ret);
		return BLK_STS_IOERR;
	}
	return BLK_STS_OK;
}

/* A request took too long: give the target up (the dead work ends it). */
static enum blk_eh_timer_return oblk_timeout(struct request *rq)
{
	struct oblk_cmd *cmd = blk_mq_rq_to_pdu(rq);

	oblk_kill(cmd->q->dev, -ETIMEDOUT);
	return BLK_EH_RESET_TIMER;
}

static int oblk_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			  unsigned int hctx_idx)
{
	struct oblk_dev *dev = data;

	hctx->driver_data = &dev->queues[hctx_idx];
	return 0;
}

static int oblk_init_request(struct blk_mq_tag_set *set, struct request *rq,
			     unsigned int hctx_idx, unsigned int numa_node)
{
	struct oblk_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct oblk_dev *dev = set->driver_data;

	cmd->q = &dev->queues[hctx_idx];
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
 * Context: process context, may sleep; the disk's lock held.
 * Return: 0, or a negative errno: the target's status, -ETIMEDOUT, an
 * errno of the channel, or -EPROTO for an answer that is no HELLO's.
 */
static int oblk_hello(struct oblk_queue *q)
{
	struct ordma_blk_hello *h = &q->in->hello;
	struct oblk_dev *dev = q->dev;
	u32 status;
	u64 size;
	int ret;

	lockdep_assert_held(&dev->lock);
	ordma_blk_hdr_init(&q->out->hdr, ORDMA_BLK_OP_HELLO, 0);
	q->out->hdr.len = cpu_to_le32(sizeof(q->out->hello));
	memset(&q->out->hello, 0, sizeof(q->out->hello));
	q->out->hello.queue = cpu_to_le32(q->idx);
	q->out->hello.nr_queues = cpu_to_le32(dev->conf.nr_queues);
	q->out->hello.depth = cpu_to_le32(dev->conf.depth);
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
	    le32_to_cpu(h->depth) < dev->conf.depth)
		return -EPROTO;
	if (!q->idx) {
		dev->size = size;
		dev->features = le32_to_cpu(h->features);
	} else if (size != dev->size ||
		   dev->features != le32_to_cpu(h->features)) {
		return -EPROTO;
	}
	return 0;
}

/**
 * oblk_connect() - connect every queue, say HELLO, post the receives
 * @dev: the disk
 *
 * Channels connected stay on their queues on a failure, for
 * oblk_disconnect().
 *
 * Context: process context, may sleep.
 * Return: 0 or a negative errno.
 */
static int oblk_connect(struct oblk_dev *dev)
{
	const struct oblk_conf *c = &dev->conf;
	unsigned int i, j;
	int ret = 0;

	mutex_lock(&dev->lock);
	for (i = 0; i < c->nr_queues; i++) {
		struct oblk_queue *q = &dev->queues[i];

		ret = ordma_kconnect(dev->ctx, (struct sockaddr *)&c->addr, 0,
				     q, &q->chan);
		if (ret) {
			pr_err("%s: cannot connect to %pISpc: %d\n", c->name,
			       &c->addr, ret);
			goto out;
		}
		ret = oblk_hello(q);
		if (ret) {
			pr_err("%s: target %pISpc refused queue %u: %d\n",
			       c->name, &c->addr, i, ret);
			goto out;
		}
	}
	for (i = 0; i < c->nr_queues; i++)
		for (j = 0; j < c->depth; j++)
			oblk_resp_post(&dev->queues[i].resps[j]);
	/* A channel that died meanwhile. */
	if (test_bit(OBLK_DEAD, &dev->flags))
		ret = -ENOTCONN;
out:
	mutex_unlock(&dev->lock);
	return ret;
}

/* Stop the dead work, close the channels, fail what is in flight. */
static void oblk_disconnect(struct oblk_dev *dev)
{
	set_bit(OBLK_DEAD, &dev->flags);
	cancel_work_sync(&dev->dead_work);
	oblk_teardown(dev);
}

static void oblk_queues_free(struct oblk_dev *dev)
{
	unsigned int i, j;

	for (i = 0; i < dev->conf.nr_queues; i++) {
		struct oblk_queue *q = &dev->queues[i];

		if (q->resps)
			for (j = 0; j < dev->conf.depth; j++)
				ordma_blk_buf_free(&q->resps[j].buf);
		kfree(q->resps);
		kfree(q->inflight);
		kfree(q->in);
		kfree(q->out);
	}
	kfree(dev->queues);
}

/* The queues and their buffers, before any channel. */
static int oblk_queues_alloc(struct oblk_dev *dev)
{
	unsigned int i, j;

	dev->queues = kcalloc(dev->conf.nr_queues, sizeof(*dev->queues),
			      GFP_KERNEL);
	if (!dev->queues)
		return -ENOMEM;
	for (i = 0; i < dev->conf.nr_queues; i++) {
		struct oblk_queue *q = &dev->queues[i];

		q->dev = dev;
		q->idx = i;
		spin_lock_init(&q->lock);
		init_completion(&q->hello_sent);
		init_completion(&q->hello_recvd);
		q->out = kzalloc(sizeof(*q->out), GFP_KERNEL);
		q->in = kzalloc(sizeof(*q->in), GFP_KERNEL);
		q->inflight = kcalloc(dev->conf.depth, sizeof(*q->inflight),
				      GFP_KERNEL);
		q->resps = kcalloc(dev->conf.depth, sizeof(*q->resps),
				   GFP_KERNEL);
		if (!q->out || !q->in || !q->inflight || !q->resps)
			goto err_free;
		for (j = 0; j < dev->conf.depth; j++) {
			q->resps[j].q = q;
			if (ordma_blk_buf_alloc(&q->resps[j].buf,
						ORDMA_BLK_MAX_IO))
				goto err_free;
		}
	}
	return 0;

err_free:
	oblk_queues_free(dev);
	return -ENOMEM;
}

/* The disk, its size and limits from the target's HELLO. */
static int oblk_disk_alloc(struct oblk_dev *dev)
{
	struct ordma_blk_limits lim = {
		.max_hw_sectors = ORDMA_BLK_MAX_IO >> ORDMA_BLK_SECTOR_SHIFT,
	};
	struct gendisk *disk;

	if (dev->features & ORDMA_BLK_FEAT_DISCARD)
		lim.max_discard_sectors =
			ORDMA_BLK_MAX_DISCARD >> ORDMA_BLK_SECTOR_SHIFT;
	lim.write_cache = dev->features & ORDMA_BLK_FEAT_FLUSH;
	disk = ordma_blk_alloc_disk(&dev->set, &lim, dev);
	if (IS_ERR(disk))
		return PTR_ERR(disk);
	disk->fops = &oblk_fops;
	strscpy(disk->disk_name, dev->conf.name, DISK_NAME_LEN);
	set_capacity(disk, dev->size >> ORDMA_BLK_SECTOR_SHIFT);
	mutex_lock(&dev->lock);
	dev->disk = disk;
	mutex_unlock(&dev->lock);
	return 0;
}

/* The dead work may quiesce the disk's queue until this returns. */
static void oblk_disk_put(struct oblk_dev *dev)
{
	struct gendisk *disk;

	mutex_lock(&dev->lock);
	disk = dev->disk;
	dev->disk = NULL;
	mutex_unlock(&dev->lock);
	put_disk(disk);
}

/* The disk named @name, or NULL. oblk.lock held. */
static struct oblk_dev *oblk_dev_find(const char *name)
{
	struct oblk_dev *dev;

	lockdep_assert_held(&oblk.lock);
	list_for_each_entry(dev, &oblk.devs, node)
		if (!strcmp(dev->conf.name, name))
			return dev;
	return NULL;
}

/**
 * oblk_dev_add() - connect to a target and add its disk
 * @c: the disk's configuration, checked (oblk_conf_parse())
 *
 * Context: process context, may sleep (as long as the connections take).
 * Return: 0, or a negative errno: -EEXIST (an ordma-blk disk of that name
 * is there), -ENOMEM, an errno of the connection or of the target's
 * HELLO, or of the block layer's (add_disk()).
 */
static int oblk_dev_add(const struct oblk_conf *c)
{
	struct oblk_dev *dev;
	int ret;

	mutex_lock(&oblk.lock);
	if (oblk_dev_find(c->name)) {
		pr_err("%s: there is a disk of that name\n", c->name);
		ret = -EEXIST;
		goto out_unlock;
	}
	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	dev->conf = *c;
	/* blk-mq maps no more hardware queues than CPUs. */
	dev->conf.nr_queues = min(c->nr_queues, nr_cpu_ids);
	mutex_init(&dev->lock);
	INIT_WORK(&dev->dead_work, oblk_dead_work);
	ret = oblk_queues_alloc(dev);
	if (ret)
		goto err_free_dev;
	dev->ctx = ordma_kctx_create(c->name, &oblk_ops);
	if (IS_ERR(dev->ctx)) {
		ret = PTR_ERR(dev->ctx);
		goto err_free_queues;
	}
	ret = oblk_connect(dev);
	if (ret)
		goto err_disconnect;

	dev->set.ops = &oblk_mq_ops;
	dev->set.nr_hw_queues = dev->conf.nr_queues;
	dev->set.queue_depth = dev->conf.depth;
	dev->set.numa_node = NUMA_NO_NODE;
	dev->set.cmd_size = sizeof(struct oblk_cmd);
	dev->set.flags = BLK_MQ_F_SHOULD_MERGE | BLK_MQ_F_BLOCKING;
	dev->set.timeout = dev->conf.io_timeout * HZ;
	dev->set.driver_data = dev;
	ret = blk_mq_alloc_tag_set(&dev->set);
	if (ret)
		goto err_disconnect;
	ret = oblk_disk_alloc(dev);
	if (ret)
		goto err_free_tag_set;
	ret = add_disk(dev->disk);
	if (ret)
		goto err_put_disk;
	list_add_tail(&dev->node, &oblk.devs);
	mutex_unlock(&oblk.lock);
	pr_info("%s: %llu bytes at %pISpc, %u queues of %u\n", c->name,
		dev->size, &c->addr, dev->conf.nr_queues, dev->conf.depth);
	return 0;

err_put_disk:
	oblk_disk_put(dev);
err_free_tag_set:
	blk_mq_free_tag_set(&dev->set);
err_disconnect:
	oblk_disconnect(dev);
	ordma_kctx_destroy(dev->ctx);
err_free_queues:
	oblk_queues_free(dev);
err_free_dev:
	kfree(dev);
out_unlock:
	mutex_unlock(&oblk.lock);
	return ret;
}

/*
 * Remove @dev's disk, close its channels, free it. Waits for the I/O in
 * flight: its answers, or the dead work. oblk.lock held.
 */
static void oblk_dev_remove(struct oblk_dev *dev)
{
	lockdep_assert_held(&oblk.lock);
	list_del(&dev->node);
	del_gendisk(dev->disk);
	oblk_disk_put(dev);
	blk_mq_free_tag_set(&dev->set);
	oblk_disconnect(dev);
	ordma_kctx_destroy(dev->ctx);
	oblk_queues_free(dev);
	pr_info("%s removed\n", dev->conf.name);
	kfree(dev);
}

/* -- configuration ----------------------------------------------------------- */

/**
 * oblk_conf_set() - take one "key=value" of a disk's configuration
 * @c: the configuration
 * @key: the key
 * @val: its value
 * @port: where a port goes (the address is resolved with it at the end)
 * @addr: where the address goes, as given
 *
 * Return: 0, or -EINVAL (an unknown key, a value out of range).
 */
static int oblk_conf_set(struct oblk_conf *c, const char *key, const char *val,
			 u16 *port, const char **addr)
{
	unsigned int v;

	if (!strcmp(key, "name")) {
		if (!*val || strlen(val) >= DISK_NAME_LEN || strchr(val, '/'))
			return -EINVAL;
		strscpy(c->name, val, DISK_NAME_LEN);
		return 0;
	}
	if (!strcmp(key, "addr")) {
		*addr = val;
		return 0;
	}
	if (!strcmp(key, "port"))
		return kstrtou16(val, 10, port);
	if (kstrtouint(val, 10, &v))
		return -EINVAL;
	if (!strcmp(key, "nr_queues") && v && v <= OBLK_MAX_QUEUES)
		c->nr_queues = v;
	else if (!strcmp(key, "queue_depth") && v && v <= ORDMA_BLK_MAX_DEPTH)
		c->depth = v;
	else if (!strcmp(key, "io_timeout"))
		c->io_timeout = v;
	else
		return -EINVAL;
	return 0;
}

/**
 * oblk_conf_parse() - a disk's configuration from "key=value ..."
 * @c: filled in: the module parameters' values, then what @spec says
 * @spec: keys name, addr, port, nr_queues, queue_depth, io_timeout; each
 *	at most once; name is required
 *
 * Context: process context, may sleep.
 * Return: 0, or -EINVAL (with the reason in the log), -ENOMEM.
 */
static int oblk_conf_parse(struct oblk_conf *c, const char *spec)
{
	const char *addr = oblk_addr;
	char *buf, *p, *word, *val;
	u16 port = oblk_port;
	char portstr[8];
	int ret = 0;

	memset(c, 0, sizeof(*c));
	c->nr_queues = oblk_nr_queues;
	c->depth = oblk_depth;
	c->io_timeout = oblk_io_timeout;
	buf = kstrdup(spec, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	p = strim(buf);
	while (!ret && (word = strsep(&p, " \t\n"))) {
		if (!*word)
			continue;
		val = strchr(word, '=');
		if (!val) {
			ret = -EINVAL;
			break;
		}
		*val++ = '\0';
		ret = oblk_conf_set(c, word, val, &port, &addr);
	}
	if (ret) {
		pr_err("bad configuration \"%s\": keys are name, addr, port, nr_queues (1 to %u), queue_depth (1 to %u), io_timeout\n",
		       word, OBLK_MAX_QUEUES, ORDMA_BLK_MAX_DEPTH);
		goto out;
	}
	if (!*c->name || !c->nr_queues || c->nr_queues > OBLK_MAX_QUEUES ||
	    !c->depth || c->depth > ORDMA_BLK_MAX_DEPTH) {
		pr_err("a disk needs a name, nr_queues 1 to %u, queue_depth 1 to %u\n",
		       OBLK_MAX_QUEUES, ORDMA_BLK_MAX_DEPTH);
		ret = -EINVAL;
		goto out;
	}
	snprintf(portstr, sizeof(portstr), "%u", port);
	ret = inet_pton_with_scope(&init_net, AF_UNSPEC, addr, portstr,
				   &c->addr);
	if (ret)
		pr_err("%s: bad address %s\n", c->name, addr);
out:
	kfree(buf);
	return ret;
}

/* -- /sys/class/ordma-blk ----------------------------------------------------- */

/* "key=value ...": add a disk. */
static ssize_t add_store(ORDMA_BLK_CLASS_CONST struct class *cls,
			 ORDMA_BLK_CLASS_CONST struct class_attribute *attr,
			 const char *buf, size_t count)
{
	struct oblk_conf *c;
	int ret;

	c = kmalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	ret = oblk_conf_parse(c, buf);
	if (!ret)
		ret = oblk_dev_add(c);
	kfree(c);
	return ret ? ret : count;
}
static CLASS_ATTR_WO(add);

/* A disk's name: remove it. */
static ssize_t remove_store(ORDMA_BLK_CLASS_CONST struct class *cls,
			    ORDMA_BLK_CLASS_CONST struct class_attribute *attr,
			    const char *buf, size_t count)
{
	char name[DISK_NAME_LEN];
	struct oblk_dev *dev;

	if (strscpy(name, buf, sizeof(name)) < 0)
		return -EINVAL;
	mutex_lock(&oblk.lock);
	dev = oblk_dev_find(strim(name));
	if (dev)
		oblk_dev_remove(dev);
	mutex_unlock(&oblk.lock);
	return dev ? count : -ENOENT;
}
static CLASS_ATTR_WO(remove);

static struct attribute *oblk_class_attrs[] = {
	&class_attr_add.attr,
	&class_attr_remove.attr,
	NULL,
};
ATTRIBUTE_GROUPS(oblk_class);

static struct class oblk_class = {
	.name = "ordma-blk",
	.class_groups = oblk_class_groups,
};

/* -- module -------------------------------------------------------------------- */

/* Remove every disk. */
static void oblk_remove_all(void)
{
	struct oblk_dev *dev, *tmp;

	mutex_lock(&oblk.lock);
	list_for_each_entry_safe(dev, tmp, &oblk.devs, node)
		oblk_dev_remove(dev);
	mutex_unlock(&oblk.lock);
}

static int __init oblk_init(void)
{
	struct oblk_conf *c = NULL;
	char *spec = NULL;
	int ret;

	/* It ends requests: reclaim may wait for it. */
	oblk.wq = alloc_workqueue("ordma_blk", WQ_MEM_RECLAIM, 0);
	if (!oblk.wq)
		return -ENOMEM;
	ret = class_register(&oblk_class);
	if (ret)
		goto err_destroy_wq;
	if (!oblk_name || !*oblk_name)
		return 0;
	/* The disk of the module parameters. */
	ret = -ENOMEM;
	c = kmalloc(sizeof(*c), GFP_KERNEL);
	spec = kasprintf(GFP_KERNEL, "name=%s", oblk_name);
	if (!c || !spec)
		goto err_unregister;
	ret = oblk_conf_parse(c, spec);
	if (!ret)
		ret = oblk_dev_add(c);
	if (ret)
		goto err_unregister;
	kfree(spec);
	kfree(c);
	return 0;

err_unregister:
	kfree(spec);
	kfree(c);
	class_unregister(&oblk_class);
err_destroy_wq:
	destroy_workqueue(oblk.wq);
	return ret;
}

static void __exit oblk_exit(void)
{
	/* No add or remove runs from here on. */
	class_unregister(&oblk_class);
	oblk_remove_all();
	destroy_workqueue(oblk.wq);
}

module_init(oblk_init);
module_exit(oblk_exit);

MODULE_DESCRIPTION("ordma-blk initiator: block devices served over ordma");
MODULE_LICENSE("GPL");
