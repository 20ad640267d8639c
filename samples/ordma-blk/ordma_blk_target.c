// SPDX-License-Identifier: GPL-2.0
/*
 * ordma_blk_target - ordma-blk's target: serves a file or a block device
 * (backing=) to ordma-blk initiators over ordma's in-kernel API, listening
 * on addr:port. The protocol is in ordma_blk.h.
 *
 * Objects: one struct oblkt_conn per channel accepted (one per hardware
 * queue of an initiator), with ORDMA_BLK_MAX_DEPTH slots. A slot is a
 * request in flight: its receive buffer takes a request (header and, for a
 * WRITE, its data), its work item does the I/O on the backing file in
 * process context, and the answer goes out of the same buffer (the header,
 * and a READ's data where a WRITE's was). When the answer is sent the slot
 * takes the next request. Nothing is allocated per request. FLUSH is
 * vfs_fsync(); DISCARD punches a hole (a block device zeroes the range if
 * it can, else keeps it, which a DISCARD allows). For tests, drop=1 makes
 * it a target that hangs: requests are taken and never answered.
 *
 * Contexts: ordma calls oblkt_recvd() and oblkt_sent() with the channel's
 * data path held (they must not sleep for long): they only queue the slot's
 * work or post its next receive. The I/O runs in oblkt.wq.
 *
 * Lifetime and locking: a connection is closed and freed by its close work
 * only, queued once (the OBLKT_CONN_DEAD bit) by whatever comes first: its
 * chan_down, one of its operations failing, a protocol error, or module
 * exit. The close work sets conn->closing under conn->lock, which
 * oblkt_recvd() tests under that lock before queueing a slot's work; so once
 * it has cancelled every slot's work none runs again, and it closes the
 * channel (ordma completes what is queued first) and frees the slots.
 * oblkt.lock (a mutex) guards the list of connections.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/inet.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>

#include <linux/ordma.h>

#include "ordma_blk.h"

static char *oblkt_backing;
module_param_named(backing, oblkt_backing, charp, 0444);
MODULE_PARM_DESC(backing, "path of the file or block device to serve (required)");

static char *oblkt_addr = "192.0.2.1";
module_param_named(addr, oblkt_addr, charp, 0444);
MODULE_PARM_DESC(addr, "address to listen on, IPv4 or IPv6 (default 192.0.2.1)");

static ushort oblkt_port = 7472;
module_param_named(port, oblkt_port, ushort, 0444);
MODULE_PARM_DESC(port, "port to listen on (default 7472)");

static bool oblkt_drop;
module_param_named(drop, oblkt_drop, bool, 0644);
MODULE_PARM_DESC(drop, "for tests: take requests and answer none, as a target that hangs");

#define OBLKT_SLOTS		ORDMA_BLK_MAX_DEPTH
#define OBLKT_BACKLOG		16

/* Bits of oblkt_conn.flags. */
enum {
	OBLKT_CONN_DEAD,	/* its close work is queued or done */
	OBLKT_CONN_HELLO,	/* the initiator's HELLO came */
};

struct oblkt_conn;

/**
 * struct oblkt_slot - a request in flight on a connection
 * @conn: the connection
 * @kreq: its RECV, then the SEND of its answer
 * @buf: the request, then the answer
 * @work: serves the request
 * @got: bytes of the request received
 */
struct oblkt_slot {
	struct oblkt_conn *conn;
	struct ordma_kreq kreq;
	struct ordma_blk_buf buf;
	struct work_struct work;
	size_t got;
};

/**
 * struct oblkt_conn - a channel of an initiator
 * @node: on oblkt.conns (oblkt.lock)
 * @chan: the channel
 * @flags: OBLKT_CONN_*, atomic bit operations
 * @err: why it is closed, set before the close work is queued
 * @lock: orders @closing against queueing a slot's work
 * @closing: no slot's work is queued any more (@lock)
 * @close_work: closes @chan and frees all this
 * @slots: the requests in flight
 */
struct oblkt_conn {
	struct list_head node;
	struct ordma_chan *chan;
	unsigned long flags;
	int err;
	spinlock_t lock;	/* closing */
	bool closing;
	struct work_struct close_work;
	struct oblkt_slot slots[OBLKT_SLOTS];
};

static struct {
	struct file *backing;
	u64 size;			/* bytes served, a multiple of 512 */
	struct ordma_kctx *ctx;
	struct ordma_klistener *lis;
	struct workqueue_struct *wq;	/* slots' I/O, connections' close */
	struct mutex lock;		/* conns */
	struct list_head conns;
	atomic_long_t nr_conns;
	atomic_long_t reads, writes, flushes, discards, errors, dropped;
} oblkt = {
	.lock = __MUTEX_INITIALIZER(oblkt.lock),
	.conns = LIST_HEAD_INIT(oblkt.conns),
};

/* Counters, read-only module parameters. */
static int oblkt_stat_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static int oblkt_stat_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(kp->arg));
}

static const struct kernel_param_ops oblkt_stat_ops = {
	.set = oblkt_stat_set,
	.get = oblkt_stat_get,
};

module_param_cb(conns, &oblkt_stat_ops, &oblkt.nr_conns, 0444);
MODULE_PARM_DESC(conns, "channels open (read-only)");
module_param_cb(reads, &oblkt_stat_ops, &oblkt.reads, 0444);
MODULE_PARM_DESC(reads, "READs served (read-only)");
module_param_cb(writes, &oblkt_stat_ops, &oblkt.writes, 0444);
MODULE_PARM_DESC(writes, "WRITEs served (read-only)");
module_param_cb(flushes, &oblkt_stat_ops, &oblkt.flushes, 0444);
MODULE_PARM_DESC(flushes, "FLUSHes and FUA WRITEs served (read-only)");
module_param_cb(discards, &oblkt_stat_ops, &oblkt.discards, 0444);
MODULE_PARM_DESC(discards, "DISCARDs served (read-only)");
module_param_cb(errors, &oblkt_stat_ops, &oblkt.errors, 0444);
MODULE_PARM_DESC(errors, "requests answered with an error (read-only)");
module_param_cb(dropped, &oblkt_stat_ops, &oblkt.dropped, 0444);
MODULE_PARM_DESC(dropped, "requests not answered, as drop= asks (read-only)");

/* Have @conn closed and freed by its close work, once; @err says why. */
static void oblkt_conn_kill(struct oblkt_conn *conn, int err)
{
	if (test_and_set_bit(OBLKT_CONN_DEAD, &conn->flags))
		return;
	conn->err = err;
	queue_work(oblkt.wq, &conn->close_work);
}

static void oblkt_conn_free(struct oblkt_conn *conn)
{
	unsigned int i;

	for (i = 0; i < OBLKT_SLOTS; i++)
		ordma_blk_buf_free(&conn->slots[i].buf);
	kvfree(conn);
}

static void oblkt_close_work(struct work_struct *work)
{
	struct oblkt_conn *conn = container_of(work, struct oblkt_conn,
					       close_work);
	unsigned int i;

	spin_lock(&conn->lock);
	conn->closing = true;
	spin_unlock(&conn->lock);
	for (i = 0; i < OBLKT_SLOTS; i++)
		cancel_work_sync(&conn->slots[i].work);
	/* Completes what is queued first: nothing of conn is ordma's after. */
	ordma_kchan_close(conn->chan);
	mutex_lock(&oblkt.lock);
	list_del(&conn->node);
	mutex_unlock(&oblkt.lock);
	atomic_long_dec(&oblkt.nr_conns);
	pr_debug("channel closed: %d\n", conn->err);
	oblkt_conn_free(conn);
}

static void oblkt_recvd(struct ordma_kreq *req, ssize_t res);

/* Take the next request into @slot. */
static void oblkt_post(struct oblkt_slot *slot)
{
	int ret;

	slot->kreq.bvec = slot->buf.bvec;
	slot->kreq.nr_segs = slot->buf.nr_bvec;
	slot->kreq.len = sizeof(struct ordma_blk_hdr) + ORDMA_BLK_MAX_IO;
	slot->kreq.done = oblkt_recvd;
	ret = ordma_krecv(slot->conn->chan, &slot->kreq);
	if (ret)
		oblkt_conn_kill(slot->conn, ret);
}

/* A request came: serve it in process context. Data path held. */
static void oblkt_recvd(struct ordma_kreq *req, ssize_t res)
{
	struct oblkt_slot *slot = container_of(req, struct oblkt_slot, kreq);
	struct oblkt_conn *conn = slot->conn;

	if (res <= 0) {
		/* 0: a notification, which this protocol has none of. */
		oblkt_conn_kill(conn, res ? res : -EPROTO);
		return;
	}
	slot->got = res;
	spin_lock(&conn->lock);
	if (!conn->closing)
		queue_work(oblkt.wq, &slot->work);
	spin_unlock(&conn->lock);
}

/* The answer is sent: take the next request. Data path held. */
static void oblkt_sent(struct ordma_kreq *req, ssize_t res)
{
	struct oblkt_slot *slot = container_of(req, struct oblkt_slot, kreq);

	if (res != (ssize_t)req->len) {
		oblkt_conn_kill(slot->conn, res < 0 ? res : -EIO);
		return;
	}
	if (!test_bit(OBLKT_CONN_DEAD, &slot->conn->flags))
		oblkt_post(slot);
}

/* All of @len bytes at @pos of the backing file, or -errno. */
static int oblkt_rw(bool write, void *data, size_t len, loff_t pos)
{
	ssize_t n;

	while (len) {
		if (write)
			n = kernel_write(oblkt.backing, data, len, &pos);
		else
			n = kernel_read(oblkt.backing, data, len, &pos);
		if (n < 0)
			return n;
		if (!n)
			return -EIO;
		data += n;
		len -= n;
	}
	return 0;
}

/* Punch a hole; a backing that cannot (a block device without discard)
 * keeps its data, which a DISCARD allows.
 */
static int oblkt_discard(loff_t pos, size_t len)
{
	int ret = vfs_fallocate(oblkt.backing,
				FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				pos, len);

	return ret == -EOPNOTSUPP ? 0 : ret;
}

/**
 * oblkt_hello() - answer an initiator's HELLO
 * @conn: its connection
 * @slot: the HELLO, then the answer
 * @out: bytes of the answer after its header
 * @status: the answer's status, a negative errno or 0
 *
 * Return: 0, or -EPROTO for a malformed or second HELLO (the channel is
 * closed).
 */
static int oblkt_hello(struct oblkt_conn *conn, struct oblkt_slot *slot,
		       size_t *out, int *status)
{
	struct ordma_blk_hdr *hdr = ordma_blk_buf_hdr(&slot->buf);
	struct ordma_blk_hello *hello = ordma_blk_buf_data(&slot->buf);
	u32 depth = le32_to_cpu(hello->depth);

	if (slot->got != sizeof(*hdr) + sizeof(*hello) ||
	    le32_to_cpu(hdr->len) != sizeof(*hello))
		return -EPROTO;
	if (test_and_set_bit(OBLKT_CONN_HELLO, &conn->flags))
		return -EPROTO;
	pr_debug("queue %u of %u, depth %u\n", le32_to_cpu(hello->queue),
		 le32_to_cpu(hello->nr_queues), depth);
	*status = depth && depth <= OBLKT_SLOTS ? 0 : -EINVAL;
	memset(hello, 0, sizeof(*hello));
	hello->size = cpu_to_le64(oblkt.size);
	hello->depth = cpu_to_le32(OBLKT_SLOTS);
	hello->max_io = cpu_to_le32(ORDMA_BLK_MAX_IO);
	hello->features = cpu_to_le32(ORDMA_BLK_FEAT_FLUSH |
				      ORDMA_BLK_FEAT_DISCARD);
	*out = sizeof(*hello);
	return 0;
}

/* The request's range lies in the device: 0, or -EINVAL. */
static int oblkt_range(u64 sector, u32 len, u32 max)
{
	u64 pos;

	if (!len || len > max || !IS_ALIGNED(len, ORDMA_BLK_SECTOR_SIZE) ||
	    check_shl_overflow(sector, ORDMA_BLK_SECTOR_SHIFT, &pos) ||
	    pos > oblkt.size || len > oblkt.size - pos)
		return -EINVAL;
	return 0;
}

/**
 * oblkt_io() - serve a READ, WRITE, FLUSH or DISCARD
 * @slot: the request, then the answer
 * @out: bytes of the answer after its header (a READ's data)
 * @status: the answer's status, a negative errno or 0
 *
 * Return: 0, or -EPROTO for a malformed request (the channel is closed).
 */
static int oblkt_io(struct oblkt_slot *slot, size_t *out, int *status)
{
	struct ordma_blk_hdr *hdr = ordma_blk_buf_hdr(&slot->buf);
	void *data = ordma_blk_buf_data(&slot->buf);
	u64 sector = le64_to_cpu(hdr->sector);
	u32 len = le32_to_cpu(hdr->len);
	loff_t pos = sector << ORDMA_BLK_SECTOR_SHIFT;
	size_t want = sizeof(*hdr);
	int ret;

	switch (le16_to_cpu(hdr->op)) {
	case ORDMA_BLK_OP_READ:
		if (slot->got != want)
			return -EPROTO;
		ret = oblkt_range(sector, len, ORDMA_BLK_MAX_IO);
		if (!ret)
			ret = oblkt_rw(false, data, len, pos);
		if (!ret)
			*out = len;
		atomic_long_inc(&oblkt.reads);
		break;
	case ORDMA_BLK_OP_WRITE:
		if (len > ORDMA_BLK_MAX_IO || slot->got != want + len)
			return -EPROTO;
		ret = oblkt_range(sector, len, ORDMA_BLK_MAX_IO);
		if (!ret)
			ret = oblkt_rw(true, data, len, pos);
		if (!ret && (le32_to_cpu(hdr->flags) & ORDMA_BLK_F_FUA)) {
			ret = vfs_fsync_range(oblkt.backing, pos,
					      pos + len - 1, 1);
			atomic_long_inc(&oblkt.flushes);
		}
		atomic_long_inc(&oblkt.writes);
		break;
	case ORDMA_BLK_OP_FLUSH:
		if (slot->got != want || len)
			return -EPROTO;
		ret = vfs_fsync(oblkt.backing, 0);
		atomic_long_inc(&oblkt.flushes);
		break;
	case ORDMA_BLK_OP_DISCARD:
		if (slot->got != want)
			return -EPROTO;
		ret = oblkt_range(sector, len, ORDMA_BLK_MAX_DISCARD);
		if (!ret)
			ret = oblkt_discard(pos, len);
		atomic_long_inc(&oblkt.discards);
		break;
	default:
		return -EPROTO;
	}
	*status = ret;
	return 0;
}

/* Serve a slot's request and send the answer. In oblkt.wq. */
static void oblkt_slot_work(struct work_struct *work)
{
	struct oblkt_slot *slot = container_of(work, struct oblkt_slot, work);
	struct oblkt_conn *conn = slot->conn;
	struct ordma_blk_hdr *hdr = ordma_blk_buf_hdr(&slot->buf);
	int ret, status = 0;
	size_t out = 0;

	if (READ_ONCE(oblkt_drop) &&
	    test_bit(OBLKT_CONN_HELLO, &conn->flags)) {
		/* A target that hangs: the request is taken, never answered. */
		atomic_long_inc(&oblkt.dropped);
		oblkt_post(slot);
		return;
	}
	if (slot->got < sizeof(*hdr) || !ordma_blk_hdr_ok(hdr))
		ret = -EPROTO;
	else if (le16_to_cpu(hdr->op) == ORDMA_BLK_OP_HELLO)
		ret = oblkt_hello(conn, slot, &out, &status);
	else if (!test_bit(OBLKT_CONN_HELLO, &conn->flags))
		ret = -EPROTO;
	else
		ret = oblkt_io(slot, &out, &status);
	if (ret) {
		pr_warn_ratelimited("protocol error from an initiator: channel closed\n");
		oblkt_conn_kill(conn, ret);
		return;
	}
	if (status) {
		atomic_long_inc(&oblkt.errors);
		out = 0;
	}
	/* The answer: the request's header, its status, a READ's data. */
	hdr->flags = 0;
	hdr->status = cpu_to_le32(-status);
	slot->kreq.len = sizeof(*hdr) + out;
	slot->kreq.done = oblkt_sent;
	ret = ordma_ksend(conn->chan, &slot->kreq);
	if (ret)
		oblkt_conn_kill(conn, ret);
}

/* A channel died by itself: close it. In a work item of ordma's. */
static void oblkt_chan_down(struct ordma_chan *chan, void *priv, int err)
{
	struct oblkt_conn *conn = priv;

	/*
	 * NULL: it died before oblkt_accept() gave it its state; the
	 * receives that accept then posts fail and close it.
	 */
	if (conn)
		oblkt_conn_kill(conn, err);
}

static const struct ordma_kctx_ops oblkt_ops = {
	.chan_down = oblkt_chan_down,
};

/* A new channel: serve it. In the listener's thread. */
static int oblkt_accept(struct ordma_klistener *lis, struct ordma_chan *chan,
			void *priv)
{
	struct oblkt_conn *conn;
	unsigned int i;

	conn = kvzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		return -ENOMEM;
	for (i = 0; i < OBLKT_SLOTS; i++) {
		struct oblkt_slot *slot = &conn->slots[i];

		if (ordma_blk_buf_alloc(&slot->buf, ORDMA_BLK_MAX_IO)) {
			oblkt_conn_free(conn);
			return -ENOMEM;
		}
		slot->conn = conn;
		INIT_WORK(&slot->work, oblkt_slot_work);
	}
	conn->chan = chan;
	spin_lock_init(&conn->lock);
	INIT_WORK(&conn->close_work, oblkt_close_work);

	mutex_lock(&oblkt.lock);
	list_add_tail(&conn->node, &oblkt.conns);
	mutex_unlock(&oblkt.lock);
	atomic_long_inc(&oblkt.nr_conns);
	ordma_kchan_set_priv(chan, conn);
	/* From here on the channel is ours: a failure closes it. */
	for (i = 0; i < OBLKT_SLOTS; i++)
		oblkt_post(&conn->slots[i]);
	return 0;
}

/* Open the backing file or block device and learn its size. */
static int oblkt_open_backing(void)
{
	struct file *file;
	umode_t mode;
	int ret;

	if (!oblkt_backing || !*oblkt_backing) {
		pr_err("no backing= file or block device given\n");
		return -EINVAL;
	}
	file = filp_open(oblkt_backing, O_RDWR | O_LARGEFILE, 0);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		pr_err("cannot open backing %s: %d\n", oblkt_backing, ret);
		return ret;
	}
	mode = file_inode(file)->i_mode;
	if (!S_ISREG(mode) && !S_ISBLK(mode)) {
		pr_err("backing %s is neither a file nor a block device\n",
		       oblkt_backing);
		ret = -EINVAL;
		goto err_close;
	}
	/* A block device's size is its inode's, not the device node's. */
	oblkt.size = round_down(i_size_read(file->f_mapping->host),
				ORDMA_BLK_SECTOR_SIZE);
	if (!oblkt.size) {
		pr_err("backing %s is empty\n", oblkt_backing);
		ret = -EINVAL;
		goto err_close;
	}
	oblkt.backing = file;
	return 0;

err_close:
	filp_close(file, NULL);
	return ret;
}

/* Close the listener, then every channel, and wait for them. */
static void oblkt_stop(void)
{
	struct oblkt_conn *conn;

	ordma_klisten_close(oblkt.lis);
	mutex_lock(&oblkt.lock);
	list_for_each_entry(conn, &oblkt.conns, node)
		oblkt_conn_kill(conn, -ESHUTDOWN);
	mutex_unlock(&oblkt.lock);
	flush_workqueue(oblkt.wq);
	WARN_ON(!list_empty(&oblkt.conns));
}

static int __init oblkt_init(void)
{
	struct sockaddr_storage ss;
	char port[8];
	int ret;

	snprintf(port, sizeof(port), "%u", oblkt_port);
	ret = inet_pton_with_scope(&init_net, AF_UNSPEC, oblkt_addr, port, &ss);
	if (ret) {
		pr_err("bad address %s\n", oblkt_addr);
		return ret;
	}
	ret = oblkt_open_backing();
	if (ret)
		return ret;
	/* Reclaim may write to a disk we serve: the I/O must go on. */
	oblkt.wq = alloc_workqueue("ordma_blk_target",
				   WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!oblkt.wq) {
		ret = -ENOMEM;
		goto err_close_backing;
	}
	oblkt.ctx = ordma_kctx_create("ordma_blk_target", &oblkt_ops);
	if (IS_ERR(oblkt.ctx)) {
		ret = PTR_ERR(oblkt.ctx);
		goto err_destroy_wq;
	}
	ret = ordma_klisten(oblkt.ctx, (struct sockaddr *)&ss, OBLKT_BACKLOG,
			    oblkt_accept, NULL, &oblkt.lis);
	if (ret) {
		pr_err("cannot listen on %pISpc: %d\n", &ss, ret);
		goto err_destroy_ctx;
	}
	pr_info("serving %s (%llu bytes) on %pISpc\n", oblkt_backing,
		oblkt.size, &ss);
	return 0;

err_destroy_ctx:
	ordma_kctx_destroy(oblkt.ctx);
err_destroy_wq:
	destroy_workqueue(oblkt.wq);
err_close_backing:
	filp_close(oblkt.backing, NULL);
	return ret;
}

static void __exit oblkt_exit(void)
{
	oblkt_stop();
	ordma_kctx_destroy(oblkt.ctx);
	destroy_workqueue(oblkt.wq);
	filp_close(oblkt.backing, NULL);
	pr_info("stopped serving %s\n", oblkt_backing);
}

module_init(oblkt_init);
module_exit(oblkt_exit);

MODULE_DESCRIPTION("ordma-blk target: a file or block device served over ordma");
MODULE_LICENSE("GPL");
