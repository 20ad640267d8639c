/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordma's in-kernel API: channels to ordma peers (a process with libordma,
 * or another kernel user) and messages out of and into kernel memory.
 *
 * A kernel user makes a context (ordma_kctx_create()); its channels come
 * from ordma_kconnect() or from a listener's accept callback
 * (ordma_klisten()). Operations are requests the caller owns, embedded in
 * its own per-I/O state: nothing is allocated per operation. A request
 * names its memory as an array of bio_vecs or kvecs or a scatterlist, sent
 * from zero-copy (no pinning, no memory region) or through ordma's
 * pre-registered pool (Documentation/ordma/kernel-api.rst).
 */
#ifndef _LINUX_ORDMA_H
#define _LINUX_ORDMA_H

#include <linux/types.h>
#include <linux/bvec.h>
#include <linux/uio.h>
#include <linux/socket.h>
#include <linux/bits.h>
#include <uapi/linux/ordma.h>

struct ordma_kctx;
struct ordma_chan;
struct ordma_klistener;
struct scatterlist;

/* Words of struct ordma_kreq that belong to ordma. */
#define ORDMA_KREQ_WORDS	40

/**
 * enum ordma_kbuf - the form of a request's memory
 * @ORDMA_KBUF_BVEC: an array of bio_vecs (the default)
 * @ORDMA_KBUF_KVEC: an array of kvecs whose ranges lie in the linear map
 *	(kmalloc, the page allocator; not vmalloc, not the stack): for small
 *	control messages in a kmalloc'ed buffer
 * @ORDMA_KBUF_SG: a scatterlist, possibly chained, that the caller has not
 *	DMA-mapped (ordma maps what it sends from or places into)
 */
enum ordma_kbuf {
	ORDMA_KBUF_BVEC,
	ORDMA_KBUF_KVEC,
	ORDMA_KBUF_SG,
};

/**
 * struct ordma_kreq - one operation of a kernel user, in its own memory
 * @bvec: the buffer as bio_vecs (@type ORDMA_KBUF_BVEC): what a SEND or
 *	WRITE sends, where a RECV puts the message or a READ the bytes
 * @kvec: the buffer as kvecs (ORDMA_KBUF_KVEC)
 * @sgl: the buffer as a scatterlist (ORDMA_KBUF_SG)
 * @nr_segs: entries of the array (of the scatterlist: its nents); none of
 *	those @len covers may be empty
 * @type: enum ordma_kbuf: which of @bvec, @kvec and @sgl is set
 * @len: bytes of the buffer the operation covers, from its start (1 to
 *	ORDMA_KREQ_MAX_LEN); a RECV takes a message of at most @len bytes
 * @done: called once when the operation is over, with the bytes sent or
 *	received, or a negative errno; see ordma_ksend() for its context
 * @__ordma: ordma's, from submission until @done is called
 *
 * The caller sets the fields above @__ordma, submits, and leaves the request
 * and the memory its buffer names alone until @done is called; then the
 * request may be submitted again. Every form goes the same way: zero-copy
 * or through ordma's pool, as the planner chooses.
 */
struct ordma_kreq {
	union {
		const struct bio_vec *bvec;
		const struct kvec *kvec;
		struct scatterlist *sgl;
	};
	unsigned int nr_segs;
	enum ordma_kbuf type;
	size_t len;
	void (*done)(struct ordma_kreq *req, ssize_t res);
	u64 __ordma[ORDMA_KREQ_WORDS];
};

/* The largest operation, bytes (as ORDMA_MAX_LEN for user space). */
#define ORDMA_KREQ_MAX_LEN	BIT_ULL(32)

/**
 * struct ordma_kctx_ops - what a kernel user is told
 * @chan_down: a channel of the context died by itself (the peer left or
 *	broke the protocol, the device went away: @err is the errno its
 *	operations fail with, negative). Called once per channel, from a
 *	work item, never after ordma_kchan_close() of that channel has
 *	returned; it may call ordma_kchan_close() on that channel, not on
 *	another. May be NULL.
 */
struct ordma_kctx_ops {
	void (*chan_down)(struct ordma_chan *chan, void *priv, int err);
};

struct ordma_kctx *ordma_kctx_create(const char *name,
				     const struct ordma_kctx_ops *ops);
void ordma_kctx_destroy(struct ordma_kctx *ctx);

int ordma_kconnect(struct ordma_kctx *ctx, const struct sockaddr *addr,
		   u32 timeout_ms, void *priv, struct ordma_chan **out);
void ordma_kchan_close(struct ordma_chan *chan);
void *ordma_kchan_priv(struct ordma_chan *chan);
void ordma_kchan_set_priv(struct ordma_chan *chan, void *priv);
void ordma_kchan_peer(struct ordma_chan *chan, struct sockaddr_storage *peer);

/**
 * typedef ordma_kaccept_t - a listener's callback for a new channel
 * @lis: the listener
 * @chan: the channel, established
 * @priv: the listener's @priv
 *
 * @chan is the caller's from the moment this is called: it may submit on
 * it, and close it with ordma_kchan_close() (then return an errno). Return
 * 0 to keep it, or a negative errno to refuse it (ordma closes it). Its
 * chan_down is told only once this returned 0, with the pointer set by
 * ordma_kchan_set_priv() meanwhile. Runs in the listener's thread, process
 * context; may sleep.
 */
typedef int (*ordma_kaccept_t)(struct ordma_klistener *lis,
			       struct ordma_chan *chan, void *priv);

int ordma_klisten(struct ordma_kctx *ctx, const struct sockaddr *addr,
		  u32 backlog, ordma_kaccept_t accept, void *priv,
		  struct ordma_klistener **out);
void ordma_klisten_close(struct ordma_klistener *lis);

int ordma_ksend(struct ordma_chan *chan, struct ordma_kreq *req);
int ordma_krecv(struct ordma_chan *chan, struct ordma_kreq *req);
int ordma_kwrite(struct ordma_chan *chan, struct ordma_kreq *req, u64 token,
		 u64 offset, bool notify);
int ordma_kread(struct ordma_chan *chan, struct ordma_kreq *req, u64 token,
		u64 offset);

/* Windows of kernel memory (ORDMA_ACCESS_REMOTE_READ and _WRITE). */
int ordma_kexpose(struct ordma_kctx *ctx, const struct bio_vec *bvec,
		  unsigned int nr_bvec, size_t len, u32 access, u64 *token);
int ordma_kunexpose(struct ordma_kctx *ctx, u64 token);

#endif /* _LINUX_ORDMA_H */
