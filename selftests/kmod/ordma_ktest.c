// SPDX-License-Identifier: GPL-2.0
/*
 * ordma_ktest - a kernel user of ordma's in-kernel API, for the guest
 * selftests (selftests/guest/kapi_test.c). It uses nothing of ordma but
 * <linux/ordma.h>.
 *
 * On load it listens on addr:port and echoes every message of every channel
 * it accepts: a RECV stays posted into kernel pages, and a message of N
 * bytes goes back as a SEND of those N bytes from the same pages. The pages
 * are blocks of 1 << KTEST_ORDER pages cut into bio_vecs of odd offsets and
 * lengths, some smaller than a page, most longer, so that messages cross
 * bvec and page boundaries at many places. The same pages are described as
 * bio_vecs, as kvecs and as a scatterlist, and the echo takes turns: message
 * k goes into the form k % 3 and back out of form (k + 1) % 3. With
 * selftest=1, load also
 * connects to that listener from a second context, sends messages of a few
 * sizes, checks every byte that comes back, and fails with EIO on a
 * difference.
 *
 * Lifetime and locking: ktest.lock (a mutex) guards the list of channels.
 * A channel's state is freed by its close work only, queued once (the
 * KTEST_CHAN_CLOSING bit) by whatever comes first: its chan_down, one of its
 * operations failing, or module exit. ordma runs the done callbacks in its
 * worker under the channel's run mutex: they submit the next operation or
 * queue the close work, never close the channel or sleep. Nothing is
 * allocated per operation: each channel's requests and pages are its own
 * from accept to close.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/completion.h>
#include <linux/highmem.h>
#include <linux/inet.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>

#include <linux/ordma.h>

static char *ktest_addr = "192.0.2.1";
module_param_named(addr, ktest_addr, charp, 0444);
MODULE_PARM_DESC(addr, "address to listen on, IPv4 or IPv6 (default 192.0.2.1)");

static ushort ktest_port = 7471;
module_param_named(port, ktest_port, ushort, 0444);
MODULE_PARM_DESC(port, "port to listen on (default 7471)");

static bool ktest_selftest;
module_param_named(selftest, ktest_selftest, bool, 0444);
MODULE_PARM_DESC(selftest, "on load, check the echo of a few messages from the kernel");

static bool ktest_idle;
module_param_named(idle, ktest_idle, bool, 0444);
MODULE_PARM_DESC(idle, "post nothing on accepted channels: only chan_down closes them");

/* The echo buffer of a channel: the largest message it takes. */
#define KTEST_ECHO_LEN		(SZ_4M + PAGE_SIZE)
/* The smallest: a command. */
#define KTEST_ECHO_MIN		64

static uint ktest_echo_len = KTEST_ECHO_LEN;
module_param_named(echo_len, ktest_echo_len, uint, 0444);
MODULE_PARM_DESC(echo_len, "bytes of each channel's echo buffer, 64 to 4 MiB + 4 KiB (default the most)");
/* The selftest's buffers. */
#define KTEST_SELF_LEN		(SZ_1M + PAGE_SIZE)
#define KTEST_SELF_WAIT		(30 * HZ)
#define KTEST_BACKLOG		16
#define KTEST_CONNECT_MS	10000

/* Each bvec lies in an allocation of its own, 1 << KTEST_ORDER pages. */
#define KTEST_ORDER		3
#define KTEST_BLOCK		(PAGE_SIZE << KTEST_ORDER)

/* The first bvecs' places in their blocks (see ktest_buf_alloc()). */
static const struct {
	unsigned int off;
	unsigned int len;
} ktest_shapes[] = {
	{ 1, 1 },				/* one byte */
	{ PAGE_SIZE - 1, 3 },			/* three, across a page end */
	{ 0, PAGE_SIZE },			/* one whole page */
	{ 7, PAGE_SIZE - 7 },			/* to the end of a page */
	{ PAGE_SIZE / 2 + 3, 2 * PAGE_SIZE },	/* across two page ends */
};

/**
 * struct ktest_buf - kernel pages as an array of bio_vecs, and the same
 *	bytes as kvecs and as a scatterlist (each form ordma takes)
 * @bvec: the array, covering @len bytes
 * @nr_bvec: entries of @bvec, of @kvec and of @sgt
 * @len: bytes @bvec covers
 * @blocks: the allocations, 1 << KTEST_ORDER pages each, one per bvec
 * @kvec: the entries of @bvec as linear-map addresses
 * @sgt: the entries of @bvec as a scatterlist, chained when it is long
 */
struct ktest_buf {
	struct bio_vec *bvec;
	unsigned int nr_bvec;
	size_t len;
	struct page **blocks;
	struct kvec *kvec;
	struct sg_table sgt;
};

/* A skew of whole blocks: every bvec a block, from its start. */
#define KTEST_PLAIN	UINT_MAX

/* Where bvec @i of a buffer skewed by @skew lies in its block. */
static void ktest_buf_shape(unsigned int i, unsigned int skew,
			    unsigned int *off, unsigned int *len)
{
	unsigned int k = i + skew;

	if (skew == KTEST_PLAIN) {
		*off = 0;
		*len = KTEST_BLOCK;
		return;
	}
	if (k < ARRAY_SIZE(ktest_shapes)) {
		*off = ktest_shapes[k].off;
		*len = ktest_shapes[k].len;
		return;
	}
	/* Longer than a page, neither end on a page boundary. */
	*off = 1 + (k * 331) % (PAGE_SIZE - 1);
	*len = KTEST_BLOCK - *off - (k % 3) * 5;
}

static void ktest_buf_free(struct ktest_buf *buf)
{
	unsigned int i;

	for (i = 0; i < buf->nr_bvec; i++)
		__free_pages(buf->blocks[i], KTEST_ORDER);
	sg_free_table(&buf->sgt);
	kfree(buf->kvec);
	buf->kvec = NULL;
	kfree(buf->blocks);
	kfree(buf->bvec);
	buf->nr_bvec = 0;
}

/* Describe @buf's bvecs as kvecs and as a scatterlist too. */
static int ktest_buf_forms(struct ktest_buf *buf)
{
	struct scatterlist *sg;
	unsigned int i;

	buf->kvec = kcalloc(buf->nr_bvec, sizeof(*buf->kvec), GFP_KERNEL);
	if (!buf->kvec ||
	    sg_alloc_table(&buf->sgt, buf->nr_bvec, GFP_KERNEL)) {
		ktest_buf_free(buf);
		return -ENOMEM;
	}
	for_each_sgtable_sg(&buf->sgt, sg, i) {
		const struct bio_vec *bv = &buf->bvec[i];

		buf->kvec[i].iov_base = page_address(bv->bv_page) + bv->bv_offset;
		buf->kvec[i].iov_len = bv->bv_len;
		sg_set_page(sg, bv->bv_page, bv->bv_len, bv->bv_offset);
	}
	return 0;
}

/* Let @req name @buf in the form @type. */
static void ktest_req_set(struct ordma_kreq *req, const struct ktest_buf *buf,
			  enum ordma_kbuf type)
{
	req->type = type;
	req->nr_segs = buf->nr_bvec;
	switch (type) {
	case ORDMA_KBUF_KVEC:
		req->kvec = buf->kvec;
		break;
	case ORDMA_KBUF_SG:
		req->sgl = buf->sgt.sgl;
		break;
	default:
		req->bvec = buf->bvec;
		break;
	}
}

/**
 * ktest_buf_alloc - allocate a buffer of @len bytes in bvecs
 * @buf: the buffer
 * @len: its length
 * @skew: where in ktest_shapes[] the first bvec starts, so that two buffers
 *	have their boundaries at different places
 *
 * Return: 0 or -ENOMEM.
 */
static int ktest_buf_alloc(struct ktest_buf *buf, size_t len,
			   unsigned int skew)
{
	/* The shapes, then bvecs of at least a block less a page each. */
	unsigned int max = ARRAY_SIZE(ktest_shapes) + 1 +
			   DIV_ROUND_UP(len, KTEST_BLOCK - PAGE_SIZE - 10);
	unsigned int off, n;
	size_t left = len;

	buf->len = len;
	buf->nr_bvec = 0;
	buf->bvec = kcalloc(max, sizeof(*buf->bvec), GFP_KERNEL);
	buf->blocks = kcalloc(max, sizeof(*buf->blocks), GFP_KERNEL);
	if (!buf->bvec || !buf->blocks)
		goto err_free;
	while (left) {
		struct page *block;

		if (WARN_ON_ONCE(buf->nr_bvec == max))
			goto err_free;
		block = alloc_pages(GFP_KERNEL, KTEST_ORDER);
		if (!block)
			goto err_free;
		ktest_buf_shape(buf->nr_bvec, skew, &off, &n);
		n = min_t(size_t, n, left);
		buf->blocks[buf->nr_bvec] = block;
		bvec_set_page(&buf->bvec[buf->nr_bvec], block, n, off);
		buf->nr_bvec++;
		left -= n;
	}
	return ktest_buf_forms(buf);

err_free:
	ktest_buf_free(buf);
	return -ENOMEM;
}

/*
 * ktest_buf_walk - call @fn on bytes [@start, @start + @len) of @buf, one
 * piece within a page at a time, in order. Stops at the first non-zero
 * return of @fn and returns it.
 */
static int ktest_buf_walk(const struct ktest_buf *buf, size_t start,
			  size_t len, int (*fn)(u8 *p, size_t n, void *arg),
			  void *arg)
{
	unsigned int i;
	size_t pos, n;
	int ret = 0;
	u8 *p;

	for (i = 0; i < buf->nr_bvec && len; i++) {
		const struct bio_vec *bv = &buf->bvec[i];
		size_t off;

		if (start >= bv->bv_len) {
			start -= bv->bv_len;
			continue;
		}
		for (off = start; off < bv->bv_len && len; off += n) {
			pos = bv->bv_offset + off;
			n = min_t(size_t, bv->bv_len - off,
				  PAGE_SIZE - offset_in_page(pos));
			n = min(n, len);
			p = kmap_local_page(bv->bv_page + pos / PAGE_SIZE);
			ret = fn(p + offset_in_page(pos), n, arg);
			kunmap_local(p);
			if (ret)
				return ret;
			len -= n;
		}
		start = 0;
	}
	return ret;
}

/* A byte stream (xorshift32) to fill a buffer with and check it against. */
struct ktest_pat {
	u32 x;
	size_t pos;	/* bytes of the stream taken so far */
	u8 got;		/* after a difference: the byte found, */
	u8 want;	/* and the byte expected */
};

#define KTEST_POISON	0xa5

static void ktest_pat_init(struct ktest_pat *pt, u32 seed)
{
	pt->x = seed * 2654435761U | 1;
	pt->pos = 0;
}

static u8 ktest_pat_byte(struct ktest_pat *pt)
{
	pt->x ^= pt->x << 13;
	pt->x ^= pt->x >> 17;
	pt->x ^= pt->x << 5;
	pt->pos++;
	return pt->x >> 24;
}

static int ktest_pat_fill(u8 *p, size_t n, void *arg)
{
	struct ktest_pat *pt = arg;
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = ktest_pat_byte(pt);
	return 0;
}

static int ktest_pat_check(u8 *p, size_t n, void *arg)
{
	struct ktest_pat *pt = arg;
	size_t i;
	u8 want;

	for (i = 0; i < n; i++) {
		want = ktest_pat_byte(pt);
		if (p[i] != want) {
			pt->got = p[i];
			pt->want = want;
			return -EIO;
		}
	}
	return 0;
}

static int ktest_get_byte(u8 *p, size_t n, void *arg)
{
	*(u8 *)arg = *p;
	return 0;
}

static int ktest_put_byte(u8 *p, size_t n, void *arg)
{
	*p = *(u8 *)arg;
	return 0;
}

static int ktest_poison_fill(u8 *p, size_t n, void *arg)
{
	memset(p, KTEST_POISON, n);
	return 0;
}

static int ktest_poison_check(u8 *p, size_t n, void *arg)
{
	return memchr_inv(p, KTEST_POISON, n) ? -EIO : 0;
}

/* -- the echo server ------------------------------------------------------ */

/* Bits of ktest_chan.flags. */
enum {
	KTEST_CHAN_CLOSING,	/* its close work is queued or done */
	KTEST_CHAN_READING,	/* its command is a READ */
};

/*
 * A message of exactly this size that starts with KTEST_CMD_MAGIC is a
 * command, not echoed: KTEST_CMD_WRITE fills @len bytes of the buffer with
 * the stream of @seed and writes them into the sender's window (@token,
 * @offset; @notify), then answers with the result as a little-endian s64;
 * KTEST_CMD_READ reads @len bytes of the window and sends them back, or
 * the result (8 bytes) if the READ failed. The window commands work on a
 * window of the module's own kernel memory (one per channel):
 * KTEST_CMD_EXPOSE exposes @len bytes filled with the stream of @seed,
 * with ORDMA_ACCESS_* @notify, in bvecs of odd shapes, or of whole blocks
 * if @offset is 1 (pages one registration can map), and answers with its
 * token (an unexposed
 * earlier one is gone); KTEST_CMD_CHECK answers 0 if its bytes at
 * @offset are @len bytes of the stream of @seed, else -EILSEQ;
 * KTEST_CMD_UNEXPOSE unexposes @token and answers with the result. All
 * little-endian.
 */
struct ktest_cmd {
	__le32 magic;
	__le32 op;
	__le64 token;
	__le64 offset;
	__le64 len;
	__le32 seed;
	__le32 notify;
};

#define KTEST_CMD_MAGIC		0x31435444	/* "DTC1" */
#define KTEST_CMD_WRITE		1
#define KTEST_CMD_READ		2
#define KTEST_CMD_EXPOSE	3
#define KTEST_CMD_CHECK		4
#define KTEST_CMD_UNEXPOSE	5

/**
 * struct ktest_chan - an accepted channel and its echo loop
 * @node: on ktest.chans, under ktest.lock
 * @chan: the channel
 * @flags: KTEST_CHAN_*, atomic bit operations
 * @err: why it is closed, set before the close work is queued
 * @close_work: closes @chan and frees all this
 * @rreq: the RECV, posted whenever no echo is in flight
 * @sreq: the echo of the message @rreq took, from the same pages
 * @oreq: a one-sided WRITE or READ a command message asked for
 * @buf: the pages
 * @win_lock: held by @win_work while it runs; taken once by the close work
 *	after KTEST_CHAN_CLOSING is set, so that no @win_work touches @chan
 *	after it
 * @win_work: runs @win_cmd (expose, check, unexpose: they may sleep, so
 *	not in a done callback)
 * @win_cmd: the window command @win_work runs
 * @win: the window's pages, while @win_token is exposed
 * @win_token: the window's token, 0 for none
 * @form: counts RECVs posted: message k is received into the buffer in
 *	form k % 3 (enum ordma_kbuf) and echoed from it in form (k + 1) % 3
 */
struct ktest_chan {
	struct list_head node;
	struct ordma_chan *chan;
	unsigned long flags;
	int err;
	struct work_struct close_work;
	struct ordma_kreq rreq;
	struct ordma_kreq sreq;
	struct ordma_kreq oreq;
	struct ktest_buf buf;
	struct mutex win_lock;		/* win_work against the close */
	struct work_struct win_work;
	struct ktest_cmd win_cmd;
	struct ktest_buf win;		/* win_lock, or the close work */
	u64 win_token;			/* as win */
	unsigned int form;		/* done callbacks, one at a time */
};

static struct {
	struct ordma_kctx *ctx;
	struct ordma_klistener *lis;
	struct workqueue_struct *wq;	/* the channels' close and window work */
	struct mutex lock;		/* guards chans */
	struct list_head chans;
	atomic_long_t nr_chans;
	atomic_long_t msgs;		/* messages echoed */
	atomic_long_t downs;		/* chan_down calls */
	atomic_long_t down_err;		/* the errno of the last one */
} ktest = {
	.lock = __MUTEX_INITIALIZER(ktest.lock),
	.chans = LIST_HEAD_INIT(ktest.chans),
};

/* Statistics, read-only module parameters for the guest test. */
static int ktest_stat_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static int ktest_stat_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(kp->arg));
}

static const struct kernel_param_ops ktest_stat_ops = {
	.set = ktest_stat_set,
	.get = ktest_stat_get,
};

module_param_cb(chans, &ktest_stat_ops, &ktest.nr_chans, 0444);
MODULE_PARM_DESC(chans, "echo channels open (read-only)");
module_param_cb(msgs, &ktest_stat_ops, &ktest.msgs, 0444);
MODULE_PARM_DESC(msgs, "messages echoed (read-only)");
module_param_cb(downs, &ktest_stat_ops, &ktest.downs, 0444);
MODULE_PARM_DESC(downs, "channels told dead by chan_down (read-only)");
module_param_cb(down_err, &ktest_stat_ops, &ktest.down_err, 0444);
MODULE_PARM_DESC(down_err, "the errno chan_down last told (read-only)");

/* Have @kc closed and freed by its close work, once; @err says why. */
static void ktest_chan_kill(struct ktest_chan *kc, int err)
{
	if (test_and_set_bit(KTEST_CHAN_CLOSING, &kc->flags))
		return;
	kc->err = err;
	queue_work(ktest.wq, &kc->close_work);
}

/* Unexpose the channel's window, if it has one, and free its pages. */
static int ktest_win_drop(struct ktest_chan *kc)
{
	int ret = 0;

	if (kc->win_token)
		ret = ordma_kunexpose(ktest.ctx, kc->win_token);
	kc->win_token = 0;
	if (kc->win.nr_bvec)
		ktest_buf_free(&kc->win);
	return ret;
}

static void ktest_chan_close_work(struct work_struct *work)
{
	struct ktest_chan *kc = container_of(work, struct ktest_chan,
					     close_work);

	/* A window command running ends; later ones see CLOSING. */
	mutex_lock(&kc->win_lock);
	mutex_unlock(&kc->win_lock);
	/* Completes both requests first: nothing of kc is ordma's after. */
	ordma_kchan_close(kc->chan);
	/* No callback queues it any more. */
	cancel_work_sync(&kc->win_work);
	ktest_win_drop(kc);
	mutex_lock(&ktest.lock);
	list_del(&kc->node);
	mutex_unlock(&ktest.lock);
	atomic_long_dec(&ktest.nr_chans);
	pr_debug("channel closed: %d\n", kc->err);
	ktest_buf_free(&kc->buf);
	kfree(kc);
}

static void ktest_echo_post(struct ktest_chan *kc)
{
	int ret;

	kc->form++;
	ktest_req_set(&kc->rreq, &kc->buf, kc->form % 3);
	ktest_req_set(&kc->sreq, &kc->buf, (kc->form + 1) % 3);
	ret = ordma_krecv(kc->chan, &kc->rreq);

	if (ret)
		ktest_chan_kill(kc, ret);
}

/* Answer a command with its result, 8 bytes from the buffer. */
static void ktest_cmd_answer(struct ktest_chan *kc, s64 res)
{
	__le64 v = cpu_to_le64(res);
	unsigned int i;
	int ret;

	/* The first bvecs are short (ktest_shapes[]): byte by byte. */
	for (i = 0; i < sizeof(v); i++)
		ktest_buf_walk(&kc->buf, i, 1, ktest_put_byte, (u8 *)&v + i);
	kc->sreq.len = sizeof(v);
	ret = ordma_ksend(kc->chan, &kc->sreq);
	if (ret)
		ktest_chan_kill(kc, ret);
}

/* The WRITE or READ a command asked for is done. In ordma's worker. */
static void ktest_cmd_done(struct ordma_kreq *req, ssize_t res)
{
	struct ktest_chan *kc = container_of(req, struct ktest_chan, oreq);
	int ret;

	if (test_bit(KTEST_CHAN_CLOSING, &kc->flags))
		return;
	if (test_bit(KTEST_CHAN_READING, &kc->flags) &&
	    res == (ssize_t)req->len) {
		/* The bytes read go back. */
		kc->sreq.len = res;
		ret = ordma_ksend(kc->chan, &kc->sreq);
		if (ret)
			ktest_chan_kill(kc, ret);
		return;
	}
	ktest_cmd_answer(kc, res);
}

/* Expose @len bytes of new pages, filled with the stream of @seed. */
static s64 ktest_win_expose(struct ktest_chan *kc, u64 len, u32 seed,
			    u32 access, bool plain)
{
	struct ktest_pat pt;
	u64 token;
	int ret;

	ktest_win_drop(kc);
	ret = ktest_buf_alloc(&kc->win, len, plain ? KTEST_PLAIN : 2);
	if (ret)
		return ret;
	ktest_pat_init(&pt, seed);
	ktest_buf_walk(&kc->win, 0, len, ktest_pat_fill, &pt);
	ret = ordma_kexpose(ktest.ctx, kc->win.bvec, kc->win.nr_bvec, len,
			    access, &token);
	if (ret) {
		ktest_buf_free(&kc->win);
		return ret;
	}
	kc->win_token = token;
	return token;
}

/* Run the window command in kc->win_cmd and answer it. */
static void ktest_win_work(struct work_struct *work)
{
	struct ktest_chan *kc = container_of(work, struct ktest_chan,
					     win_work);
	const struct ktest_cmd *cmd = &kc->win_cmd;
	u64 len = le64_to_cpu(cmd->len), off = le64_to_cpu(cmd->offset);
	struct ktest_pat pt;
	s64 res;

	mutex_lock(&kc->win_lock);
	if (test_bit(KTEST_CHAN_CLOSING, &kc->flags))
		goto out;
	switch (le32_to_cpu(cmd->op)) {
	case KTEST_CMD_EXPOSE:
		res = len && len <= KTEST_ECHO_LEN ?
		      ktest_win_expose(kc, len, le32_to_cpu(cmd->seed),
				       le32_to_cpu(cmd->notify), off == 1) :
		      -EINVAL;
		break;
	case KTEST_CMD_CHECK:
		res = -EINVAL;
		if (!kc->win.nr_bvec || !len || off > kc->win.len ||
		    len > kc->win.len - off)
			break;
		ktest_pat_init(&pt, le32_to_cpu(cmd->seed));
		res = ktest_buf_walk(&kc->win, off, len, ktest_pat_check, &pt);
		if (res)
			res = -EILSEQ;
		break;
	default:
		res = ordma_kunexpose(ktest.ctx, le64_to_cpu(cmd->token));
		if (!res && le64_to_cpu(cmd->token) == kc->win_token) {
			kc->win_token = 0;
			ktest_buf_free(&kc->win);
		}
		break;
	}
	ktest_cmd_answer(kc, res);
out:
	mutex_unlock(&kc->win_lock);
}

/* Run command @cmd, or refuse it: the answer says. */
static void ktest_cmd_run(struct ktest_chan *kc, const struct ktest_cmd *cmd)
{
	u64 len = le64_to_cpu(cmd->len);
	u32 op = le32_to_cpu(cmd->op);
	struct ktest_pat pt;
	int ret;

	if (op >= KTEST_CMD_EXPOSE && op <= KTEST_CMD_UNEXPOSE) {
		kc->win_cmd = *cmd;
		queue_work(ktest.wq, &kc->win_work);
		return;
	}
	if (!len || len > kc->buf.len) {
		ktest_cmd_answer(kc, -EINVAL);
		return;
	}
	kc->oreq.len = len;
	if (le32_to_cpu(cmd->op) == KTEST_CMD_READ) {
		set_bit(KTEST_CHAN_READING, &kc->flags);
		ret = ordma_kread(kc->chan, &kc->oreq, le64_to_cpu(cmd->token),
				  le64_to_cpu(cmd->offset));
	} else {
		clear_bit(KTEST_CHAN_READING, &kc->flags);
		ktest_pat_init(&pt, le32_to_cpu(cmd->seed));
		ktest_buf_walk(&kc->buf, 0, len, ktest_pat_fill, &pt);
		ret = ordma_kwrite(kc->chan, &kc->oreq, le64_to_cpu(cmd->token),
				   le64_to_cpu(cmd->offset),
				   le32_to_cpu(cmd->notify));
	}
	if (ret)
		ktest_cmd_answer(kc, ret);
}

/* A message of a command's size: the command, or NULL (echo it). */
static bool ktest_cmd_take(struct ktest_chan *kc, ssize_t res,
			   struct ktest_cmd *cmd)
{
	u8 *p = (u8 *)cmd;
	size_t i;

	if (res != sizeof(*cmd))
		return false;
	for (i = 0; i < sizeof(*cmd); i++)
		ktest_buf_walk(&kc->buf, i, 1, ktest_get_byte, p + i);
	return le32_to_cpu(cmd->magic) == KTEST_CMD_MAGIC;
}

/* The RECV is done: send the message back. In ordma's worker. */
static void ktest_echo_recvd(struct ordma_kreq *req, ssize_t res)
{
	struct ktest_chan *kc = container_of(req, struct ktest_chan, rreq);
	struct ktest_cmd cmd;
	int ret;

	if (res < 0) {
		/* EMSGSIZE too: the message would stay for the next RECV. */
		ktest_chan_kill(kc, res);
		return;
	}
	if (test_bit(KTEST_CHAN_CLOSING, &kc->flags))
		return;
	if (!res) {
		/* A notification of a one-sided write: nothing to echo. */
		ktest_echo_post(kc);
		return;
	}
	if (ktest_cmd_take(kc, res, &cmd)) {
		ktest_cmd_run(kc, &cmd);
		return;
	}
	kc->sreq.len = res;
	ret = ordma_ksend(kc->chan, &kc->sreq);
	if (ret)
		ktest_chan_kill(kc, ret);
}

/* The echo is sent: take the next message. In ordma's worker. */
static void ktest_echo_sent(struct ordma_kreq *req, ssize_t res)
{
	struct ktest_chan *kc = container_of(req, struct ktest_chan, sreq);

	if (res != (ssize_t)req->len) {
		ktest_chan_kill(kc, res < 0 ? res : -EIO);
		return;
	}
	atomic_long_inc(&ktest.msgs);
	if (!test_bit(KTEST_CHAN_CLOSING, &kc->flags))
		ktest_echo_post(kc);
}

/* A channel died by itself: close it. In a work item of ordma's. */
static void ktest_chan_down(struct ordma_chan *chan, void *priv, int err)
{
	struct ktest_chan *kc = priv;

	atomic_long_set(&ktest.down_err, err);
	atomic_long_inc(&ktest.downs);
	/* Told only once ktest_accept() kept it, with its state. */
	if (!WARN_ON_ONCE(!kc))
		ktest_chan_kill(kc, err);
}

static const struct ordma_kctx_ops ktest_ops = {
	.chan_down = ktest_chan_down,
};

/* A new channel: echo its messages. In the listener's thread. */
static int ktest_accept(struct ordma_klistener *lis, struct ordma_chan *chan,
			void *priv)
{
	struct ktest_chan *kc;
	int ret;

	kc = kzalloc(sizeof(*kc), GFP_KERNEL);
	if (!kc)
		return -ENOMEM;
	ret = ktest_buf_alloc(&kc->buf, ktest_echo_len, 0);
	if (ret) {
		kfree(kc);
		return ret;
	}
	kc->chan = chan;
	INIT_WORK(&kc->close_work, ktest_chan_close_work);
	INIT_WORK(&kc->win_work, ktest_win_work);
	mutex_init(&kc->win_lock);
	kc->rreq.len = kc->buf.len;
	kc->rreq.done = ktest_echo_recvd;
	kc->sreq.done = ktest_echo_sent;
	ktest_req_set(&kc->oreq, &kc->buf, ORDMA_KBUF_BVEC);
	kc->oreq.done = ktest_cmd_done;

	mutex_lock(&ktest.lock);
	list_add_tail(&kc->node, &ktest.chans);
	mutex_unlock(&ktest.lock);
	atomic_long_inc(&ktest.nr_chans);
	ordma_kchan_set_priv(chan, kc);
	/* From here on the channel is ours: a failure closes it. */
	if (!ktest_idle)
		ktest_echo_post(kc);
	return 0;
}

/* Close the listener, then every channel, and wait for them. */
static void ktest_stop(void)
{
	struct ktest_chan *kc;

	ordma_klisten_close(ktest.lis);
	mutex_lock(&ktest.lock);
	list_for_each_entry(kc, &ktest.chans, node)
		ktest_chan_kill(kc, -ESHUTDOWN);
	mutex_unlock(&ktest.lock);
	flush_workqueue(ktest.wq);
	WARN_ON(!list_empty(&ktest.chans));
}

/* -- the selftest: kernel to kernel --------------------------------------- */

/**
 * struct ktest_self - the selftest's end of its channel
 * @chan: the channel, to ordma_ktest's own listener
 * @tx: what it sends
 * @rx: where the echo lands, its boundaries elsewhere than @tx's
 * @sreq: the SEND
 * @rreq: the RECV of the echo
 * @sent: @sreq is done, with @sres
 * @recvd: @rreq is done, with @rres
 * @sres: bytes sent or -errno
 * @rres: bytes received or -errno
 */
struct ktest_self {
	struct ordma_chan *chan;
	struct ktest_buf tx;
	struct ktest_buf rx;
	struct ordma_kreq sreq;
	struct ordma_kreq rreq;
	struct completion sent;
	struct completion recvd;
	ssize_t sres;
	ssize_t rres;
};

static void ktest_self_sent(struct ordma_kreq *req, ssize_t res)
{
	struct ktest_self *st = container_of(req, struct ktest_self, sreq);

	st->sres = res;
	complete(&st->sent);
}

static void ktest_self_recvd(struct ordma_kreq *req, ssize_t res)
{
	struct ktest_self *st = container_of(req, struct ktest_self, rreq);

	st->rres = res;
	complete(&st->recvd);
}

static void ktest_self_down(struct ordma_chan *chan, void *priv, int err)
{
	/* Its requests fail: ktest_self_one() sees that. */
	pr_info("selftest: channel down: %d\n", err);
}

static const struct ordma_kctx_ops ktest_self_ops = {
	.chan_down = ktest_self_down,
};

/* One message of @len bytes there and back; 0 or -errno. */
static int ktest_self_one(struct ktest_self *st, size_t len, u32 seed)
{
	size_t guard = min_t(size_t, PAGE_SIZE, st->rx.len - len);
	struct ktest_pat pt;
	int ret;

	ktest_pat_init(&pt, seed);
	ktest_buf_walk(&st->tx, 0, len, ktest_pat_fill, &pt);
	ktest_buf_walk(&st->rx, 0, len + guard, ktest_poison_fill, NULL);
	reinit_completion(&st->sent);
	reinit_completion(&st->recvd);
	st->sres = 0;
	st->rres = 0;
	st->sreq.len = len;

	ret = ordma_krecv(st->chan, &st->rreq);
	if (ret) {
		pr_err("selftest: RECV of %zu bytes: %d\n", len, ret);
		return ret;
	}
	ret = ordma_ksend(st->chan, &st->sreq);
	if (ret) {
		pr_err("selftest: SEND of %zu bytes: %d\n", len, ret);
		return ret;
	}
	if (!wait_for_completion_timeout(&st->sent, KTEST_SELF_WAIT) ||
	    !wait_for_completion_timeout(&st->recvd, KTEST_SELF_WAIT)) {
		pr_err("selftest: %zu bytes: no echo in %d s\n", len,
		       KTEST_SELF_WAIT / HZ);
		return -ETIMEDOUT;
	}
	if (st->sres != (ssize_t)len || st->rres != (ssize_t)len) {
		pr_err("selftest: %zu bytes: SEND %zd, RECV %zd\n", len,
		       st->sres, st->rres);
		return -EIO;
	}

	ktest_pat_init(&pt, seed);
	ret = ktest_buf_walk(&st->rx, 0, len, ktest_pat_check, &pt);
	if (ret) {
		pr_err("selftest: %zu bytes: byte %zu is %#x, not %#x\n", len,
		       pt.pos - 1, pt.got, pt.want);
		return ret;
	}
	if (ktest_buf_walk(&st->rx, len, guard, ktest_poison_check, NULL)) {
		pr_err("selftest: %zu bytes: the RECV wrote past them\n", len);
		return -EIO;
	}
	/* The SEND left its buffer alone. */
	ktest_pat_init(&pt, seed);
	if (ktest_buf_walk(&st->tx, 0, len, ktest_pat_check, &pt)) {
		pr_err("selftest: %zu bytes: the SEND changed its buffer\n",
		       len);
		return -EIO;
	}
	return 0;
}

/*
 * Requests ordma must refuse with -EINVAL, before it owns them: a kvec
 * outside the linear map (vmalloc), an empty entry, entries shorter than
 * the request, an unknown form. Return: 0, or -EIO if one was taken.
 */
static int ktest_self_bad(struct ktest_self *st)
{
	struct kvec kv[2] = {};
	struct ordma_kreq req = { .done = ktest_self_sent };
	void *vbuf = vmalloc(PAGE_SIZE);
	int ret = 0, r, i;

	if (!vbuf)
		return -ENOMEM;
	for (i = 0; i < 5; i++) {
		req.kvec = kv;
		req.type = ORDMA_KBUF_KVEC;
		req.nr_segs = 2;
		req.len = 2 * 64;
		kv[0].iov_base = page_address(st->tx.blocks[0]);
		kv[0].iov_len = 64;
		kv[1].iov_base = kv[0].iov_base + 64;
		kv[1].iov_len = 64;
		if (i == 0)
			kv[1].iov_base = vbuf;		/* not in the linear map */
		else if (i == 1)
			kv[1].iov_len = 0;		/* empty */
		else if (i == 2)
			req.len++;			/* longer than the kvecs */
		else if (i == 3)
			req.type = ORDMA_KBUF_SG + 1;	/* no such form */
		else
			req.type = 0x100;		/* nor this (not 0) */
		r = ordma_ksend(st->chan, &req);
		if (r == -EINVAL)
			continue;
		pr_err("selftest: bad request %d: %d, not -EINVAL\n", i, r);
		/* Taken: req and kv are ordma's until done. */
		if (!r)
			wait_for_completion_timeout(&st->sent, KTEST_SELF_WAIT);
		ret = -EIO;
		break;
	}
	vfree(vbuf);
	return ret;
}

/**
 * ktest_self_run - echo messages through our own listener and check them
 * @addr: the listener's address
 *
 * Connects from a context of its own, checks that malformed requests are
 * refused, sends messages of 1 byte to 1 MiB + 5, each size from and into
 * every form of buffer (bio_vecs, kvecs, a scatterlist), and checks every
 * byte of each echo, and that the RECV wrote nothing past the message.
 *
 * Return: 0, or -errno (-EIO for a difference).
 */
static int ktest_self_run(const struct sockaddr *addr)
{
	static const size_t sizes[] = {
		1, 4095, 4096, 4097, SZ_64K + 3, SZ_1M + 5,
	};
	struct ordma_kctx *ctx;
	struct ktest_self *st;
	unsigned int i;
	int ret;

	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	init_completion(&st->sent);
	init_completion(&st->recvd);
	ret = ktest_buf_alloc(&st->tx, KTEST_SELF_LEN, 1);
	if (ret)
		goto err_free_st;
	ret = ktest_buf_alloc(&st->rx, KTEST_SELF_LEN, 3);
	if (ret)
		goto err_free_tx;
	st->sreq.done = ktest_self_sent;
	st->rreq.len = st->rx.len;
	st->rreq.done = ktest_self_recvd;

	ctx = ordma_kctx_create("ordma_ktest_self", &ktest_self_ops);
	if (IS_ERR(ctx)) {
		ret = PTR_ERR(ctx);
		pr_err("selftest: no context: %d\n", ret);
		goto err_free_rx;
	}
	ret = ordma_kconnect(ctx, addr, KTEST_CONNECT_MS, st, &st->chan);
	if (ret) {
		pr_err("selftest: connect to %pISpc: %d\n", addr, ret);
		goto err_destroy_ctx;
	}
	ret = ktest_self_bad(st);
	/* Each size in each pair of forms, the sender's and the receiver's. */
	for (i = 0; !ret && i < 3 * ARRAY_SIZE(sizes); i++) {
		ktest_req_set(&st->sreq, &st->tx, i % 3);
		ktest_req_set(&st->rreq, &st->rx, (i / 3 + i) % 3);
		ret = ktest_self_one(st, sizes[i / 3], i + 1);
		if (!ret)
			pr_info("selftest: %zu bytes echoed and checked (forms %u to %u)\n",
				sizes[i / 3], i % 3, (i / 3 + i) % 3);
	}
	/* Completes what is still in flight after a failure. */
	ordma_kchan_close(st->chan);
	if (!ret)
		pr_info("selftest passed\n");

err_destroy_ctx:
	ordma_kctx_destroy(ctx);
err_free_rx:
	ktest_buf_free(&st->rx);
err_free_tx:
	ktest_buf_free(&st->tx);
err_free_st:
	kfree(st);
	return ret;
}

/* -- module --------------------------------------------------------------- */

static int __init ktest_init(void)
{
	struct sockaddr_storage ss;
	char port[8];
	int ret;

	if (ktest_echo_len < KTEST_ECHO_MIN || ktest_echo_len > KTEST_ECHO_LEN)
		return -EINVAL;
	snprintf(port, sizeof(port), "%u", ktest_port);
	ret = inet_pton_with_scope(&init_net, AF_UNSPEC, ktest_addr, port, &ss);
	if (ret) {
		pr_err("bad address %s\n", ktest_addr);
		return ret;
	}
	ktest.wq = alloc_workqueue("ordma_ktest", 0, 0);
	if (!ktest.wq)
		return -ENOMEM;
	ktest.ctx = ordma_kctx_create("ordma_ktest", &ktest_ops);
	if (IS_ERR(ktest.ctx)) {
		ret = PTR_ERR(ktest.ctx);
		goto err_destroy_wq;
	}
	ret = ordma_klisten(ktest.ctx, (struct sockaddr *)&ss, KTEST_BACKLOG,
			    ktest_accept, NULL, &ktest.lis);
	if (ret) {
		pr_err("cannot listen on %pISpc: %d\n", &ss, ret);
		goto err_destroy_ctx;
	}
	if (ktest_selftest) {
		ret = ktest_self_run((struct sockaddr *)&ss);
		if (ret)
			goto err_stop;
	}
	pr_info("echoing on %pISpc\n", &ss);
	return 0;

err_stop:
	ktest_stop();
err_destroy_ctx:
	ordma_kctx_destroy(ktest.ctx);
err_destroy_wq:
	destroy_workqueue(ktest.wq);
	return ret;
}

static void __exit ktest_exit(void)
{
	ktest_stop();
	ordma_kctx_destroy(ktest.ctx);
	destroy_workqueue(ktest.wq);
	pr_info("unloaded after %ld messages\n", atomic_long_read(&ktest.msgs));
}

module_init(ktest_init);
module_exit(ktest_exit);

MODULE_DESCRIPTION("ordma in-kernel API test user: an echo server, a selftest");
MODULE_LICENSE("GPL");
