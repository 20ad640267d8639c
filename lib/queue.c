// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The data path: submission entries, completions, and the synchronous calls
 * built on them. The queues are described at the top of private.h.
 */
#include <errno.h>
#include <string.h>

#include "private.h"

#define SQ_MASK		(ORDMA_SQ_ENTRIES - 1)
#define CQ_MASK		(ORDMA_CQ_ENTRIES - 1)
#define SLOT_BUSY	0xffffffffU

_Static_assert(!(ORDMA_SQ_ENTRIES & SQ_MASK), "SQ size: a power of two");
_Static_assert(!(ORDMA_CQ_ENTRIES & CQ_MASK), "CQ size: a power of two");
_Static_assert(sizeof(struct ordma_sqe) == 64, "struct ordma_sqe is ABI");

static __u32 cq_count(const struct ordma *o)
{
	return o->cq_tail - o->cq_head;
}

static void cq_post(struct ordma *o, __u64 cookie, __s64 res, __u32 op,
		    __u32 chan)
{
	struct ordma_cqe *cqe = &o->cqes[o->cq_tail & CQ_MASK];

	cqe->cookie = cookie;
	cqe->res = res;
	cqe->op = op;
	cqe->chan_id = chan;
	o->cq_tail++;
}

/* One completion from the backend: the synchronous call's, or a slot's. */
static void complete(struct ordma *o, const struct ordma_cqe *k)
{
	struct ordma_slot *slot;
	__u32 idx, gen;

	if (k->cookie & ORDMA_COOKIE_SYNC) {
		if (k->cookie == (ORDMA_COOKIE_SYNC | o->sync_seq)) {
			o->sync_done = 1;
			o->sync_res = k->res;
		} else {
			o->dropped++;
		}
		return;
	}
	idx = (__u32)k->cookie;
	gen = (__u32)(k->cookie >> 32) & ORDMA_GEN_MASK;
	if (idx >= ORDMA_CQ_ENTRIES) {
		o->dropped++;
		return;
	}
	slot = &o->slots[idx];
	if (slot->next_free != SLOT_BUSY || slot->gen != gen) {
		o->dropped++;
		return;
	}
	/* inflight + queued stays within ORDMA_CQ_ENTRIES: there is room. */
	cq_post(o, slot->cookie, k->res, k->op, k->chan_id);
	slot->gen = (slot->gen + 1) & ORDMA_GEN_MASK;
	slot->next_free = o->free_slot;
	o->free_slot = idx;
	o->inflight--;
}

/*
 * Reap what the backend has, waiting up to @timeout_ms for the first.
 * Returns how many completions came (some may have been the synchronous
 * call's), or -errno of the backend.
 */
static int reap(struct ordma *o, int timeout_ms)
{
	/*
	 * The kernel holds at most inflight (<= room) asynchronous
	 * completions and one synchronous: room + 1 always fits.
	 */
	unsigned int room = ORDMA_CQ_ENTRIES - cq_count(o);
	unsigned int max = room + 1 < ORDMA_REAP_BATCH ? room + 1 :
			   ORDMA_REAP_BATCH;
	int n, i;

	n = o->be->reap(o, o->reap_buf, max, timeout_ms);
	for (i = 0; i < n; i++)
		complete(o, &o->reap_buf[i]);
	return n;
}

/* Fill an entry; the rest of it zero. */
static void prep(struct ordma_sqe *sqe, __u32 op, __u32 chan, const void *buf,
		 size_t len, __u64 token, __u64 offset, __u64 cookie)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->op = op;
	sqe->chan_id = chan;
	sqe->addr = (uintptr_t)buf;
	sqe->len = len;
	sqe->token = token;
	sqe->offset = offset;
	sqe->cookie = cookie;
}

/*
 * Run one operation and wait for its completion, however many signals come
 * meanwhile: the kernel uses the buffer until then. Completions of
 * asynchronous operations reaped on the way are queued in the CQ.
 */
static int64_t sync_op(struct ordma *o, __u32 op, __u32 chan, const void *buf,
		       size_t len, __u64 token, __u64 offset)
{
	struct ordma_sqe sqe_buf, *sqe = &sqe_buf;
	const struct ordma_sqe *batch = sqe;
	__u64 cookie;
	int ret, err;

	if (!o)
		return -EINVAL;
	o->sync_seq = (o->sync_seq + 1) & ~ORDMA_COOKIE_SYNC;
	o->sync_done = 0;
	cookie = ORDMA_COOKIE_SYNC | o->sync_seq;
	prep(sqe, op, chan, buf, len, token, offset, cookie);
	/* Submitted and, on the ring, waited for in one system call. */
	ret = o->be->submit(o, &batch, &cookie, 1, 1, &err);
	if (ret < 0)
		return ret;
	if (err)
		return err;
	while (!o->sync_done) {
		ret = reap(o, -1);
		if (ret < 0 && ret != -EINTR && ret != -ETIMEDOUT)
			return ret;
	}
	return o->sync_res;
}

/**
 * ordma_send() - send a message and wait until it is done
 * @o: the handle
 * @chan: the channel
 * @buf: the message
 * @len: its length
 *
 * Return: bytes sent, or -errno of the submission or of the completion.
 */
ORDMA_API int64_t ordma_send(struct ordma *o, uint32_t chan, const void *buf,
			     size_t len)
{
	return sync_op(o, ORDMA_OP_SEND, chan, buf, len, 0, 0);
}

/**
 * ordma_recv() - receive the next message and wait for it
 * @o: the handle
 * @chan: the channel
 * @buf: where to store it
 * @len: the capacity of @buf
 *
 * Return: the message's length, or -errno (-EMSGSIZE: longer than @len).
 */
ORDMA_API int64_t ordma_recv(struct ordma *o, uint32_t chan, void *buf,
			     size_t len)
{
	return sync_op(o, ORDMA_OP_RECV, chan, buf, len, 0, 0);
}

/**
 * ordma_write() - write into a peer's window and wait until it is done
 * @o: the handle
 * @chan: the channel
 * @buf: the data
 * @len: its length
 * @token: the peer's window
 * @offset: where in the window
 *
 * Return: bytes written, or -errno.
 */
ORDMA_API int64_t ordma_write(struct ordma *o, uint32_t chan, const void *buf,
			      size_t len, uint64_t token, uint64_t offset)
{
	return sync_op(o, ORDMA_OP_WRITE, chan, buf, len, token, offset);
}

/**
 * ordma_read() - read from a peer's window and wait until it is done
 * @o: the handle
 * @chan: the channel
 * @buf: where to store the data
 * @len: how many bytes
 * @token: the peer's window
 * @offset: where in the window
 *
 * Return: bytes read, or -errno.
 */
ORDMA_API int64_t ordma_read(struct ordma *o, uint32_t chan, void *buf,
			     size_t len, uint64_t token, uint64_t offset)
{
	return sync_op(o, ORDMA_OP_READ, chan, buf, len, token, offset);
}

/* -- asynchronous ----------------------------------------------------------- */

/**
 * ordma_get_sqe() - take the next free submission entry, zeroed
 * @o: the handle
 *
 * Return: the entry, or NULL when ORDMA_SQ_ENTRIES are waiting for
 * ordma_submit().
 */
ORDMA_API struct ordma_sqe *ordma_get_sqe(struct ordma *o)
{
	struct ordma_sqe *sqe;

	if (!o || o->sq_tail - o->sq_head >= ORDMA_SQ_ENTRIES)
		return NULL;
	sqe = &o->sqes[o->sq_tail & SQ_MASK];
	memset(sqe, 0, sizeof(*sqe));
	o->sq_tail++;
	return sqe;
}

/**
 * ordma_prep_send() - fill @sqe to send a message
 * @sqe: from ordma_get_sqe()
 * @chan: the channel
 * @buf: the message
 * @len: its length
 * @cookie: returned untouched in the completion
 */
ORDMA_API void ordma_prep_send(struct ordma_sqe *sqe, uint32_t chan,
			       const void *buf, size_t len, uint64_t cookie)
{
	prep(sqe, ORDMA_OP_SEND, chan, buf, len, 0, 0, cookie);
}

/**
 * ordma_prep_recv() - fill @sqe to receive the next message
 * @sqe: from ordma_get_sqe()
 * @chan: the channel
 * @buf: where to store it
 * @len: the capacity of @buf
 * @cookie: returned untouched in the completion
 */
ORDMA_API void ordma_prep_recv(struct ordma_sqe *sqe, uint32_t chan,
			       void *buf, size_t len, uint64_t cookie)
{
	prep(sqe, ORDMA_OP_RECV, chan, buf, len, 0, 0, cookie);
}

/**
 * ordma_prep_write() - fill @sqe to write into a peer's window
 * @sqe: from ordma_get_sqe()
 * @chan: the channel
 * @buf: the data
 * @len: its length
 * @token: the peer's window
 * @offset: where in the window
 * @cookie: returned untouched in the completion
 */
ORDMA_API void ordma_prep_write(struct ordma_sqe *sqe, uint32_t chan,
				const void *buf, size_t len, uint64_t token,
				uint64_t offset, uint64_t cookie)
{
	prep(sqe, ORDMA_OP_WRITE, chan, buf, len, token, offset, cookie);
}

/**
 * ordma_prep_read() - fill @sqe to read from a peer's window
 * @sqe: from ordma_get_sqe()
 * @chan: the channel
 * @buf: where to store the data
 * @len: how many bytes
 * @token: the peer's window
 * @offset: where in the window
 * @cookie: returned untouched in the completion
 */
ORDMA_API void ordma_prep_read(struct ordma_sqe *sqe, uint32_t chan,
			       void *buf, size_t len, uint64_t token,
			       uint64_t offset, uint64_t cookie)
{
	prep(sqe, ORDMA_OP_READ, chan, buf, len, token, offset, cookie);
}

static int sqe_check(const struct ordma_sqe *sqe)
{
	if (sqe->flags & ~(ORDMA_SQE_NONBLOCK | ORDMA_SQE_NOTIFY) ||
	    sqe->__pad || sqe->__reserved)
		return -EINVAL;
	return 0;
}

/* Give a slot taken for an entry the kernel did not keep back. */
static void slot_put(struct ordma *o, __u32 idx)
{
	o->slots[idx].next_free = o->free_slot;
	o->free_slot = idx;
}

/* ordma_submit(); @wait: the last batch also waits for a completion. */
static int submit(struct ordma *o, int wait)
{
	const struct ordma_sqe *batch[ORDMA_SQ_ENTRIES];
	__u64 cookies[ORDMA_SQ_ENTRIES];
	__u32 slots[ORDMA_SQ_ENTRIES];
	enum { GO, FULL, BAD } stop;
	struct ordma_slot *slot;
	struct ordma_sqe *sqe;
	int done = 0, ret = 0, err, k, i, n;

	if (!o)
		return -EINVAL;
	while (o->sq_head != o->sq_tail) {
		/* The batch: up to the first entry the library refuses. */
		stop = GO;
		for (n = 0; o->sq_head + n != o->sq_tail; n++) {
			sqe = &o->sqes[(o->sq_head + n) & SQ_MASK];
			if (o->inflight + n + cq_count(o) >= ORDMA_CQ_ENTRIES) {
				stop = FULL;
				break;
			}
			if (sqe_check(sqe)) {
				stop = BAD;
				break;
			}
			/* inflight + n < ORDMA_CQ_ENTRIES: a slot is free. */
			slots[n] = o->free_slot;
			slot = &o->slots[slots[n]];
			o->free_slot = slot->next_free;
			slot->next_free = SLOT_BUSY;
			cookies[n] = (__u64)slot->gen << 32 | slots[n];
			batch[n] = sqe;
		}
		if (n) {
			err = 0;
			/* Only a batch that empties the queue may wait. */
			k = o->be->submit(o, batch, cookies, n,
					  wait && o->sq_head + n == o->sq_tail,
					  &err);
			if (k < 0) {
				ret = k;
				k = 0;
			}
			for (i = 0; i < n; i++) {
				slot = &o->slots[slots[i]];
				if (i < k && !(err && i == k - 1)) {
					slot->cookie = batch[i]->cookie;
					o->inflight++;
				} else {
					slot_put(o, slots[i]);
				}
			}
			if (err)
				cq_post(o, batch[k - 1]->cookie, err,
					batch[k - 1]->op, batch[k - 1]->chan_id);
			o->sq_head += k;
			done += k;
			if (ret || err || k < n)
				break;
		}
		if (stop == FULL) {
			ret = -EBUSY;
			break;
		}
		/*
		 * An entry the library refuses goes only at the head of a
		 * call: after a batch, the ring backend cannot tell whether
		 * the kernel refused the batch's last entry (and so stopped).
		 */
		if (stop == BAD) {
			if (n)
				break;
			sqe = &o->sqes[o->sq_head & SQ_MASK];
			o->sq_head++;
			done++;
			cq_post(o, sqe->cookie, -EINVAL, sqe->op, sqe->chan_id);
			break;
		}
	}
	return done ? done : ret;
}

/**
 * ordma_submit() - start the entries filled since the last call, in order
 * @o: the handle
 *
 * An entry the kernel (or the library) refuses is consumed and completes
 * with the error, and submission stops after it (an entry the library
 * refuses is left for the next call when entries before it went in this
 * one, so both backends stop at the same place); a transient error
 * (-EAGAIN, -ENOMEM, -EINTR, -EBUSY: too many operations in flight or
 * unseen, or completions held back in the kernel) stops before the entry
 * and leaves it and the rest queued. This is io_uring's rule. With the ring
 * backend the entries go to the kernel as one batch in one system call, and
 * the completion of a refused entry may come after those of operations
 * submitted before it.
 *
 * Return: the number of entries consumed, or the transient -errno when
 * none was.
 */
ORDMA_API int ordma_submit(struct ordma *o)
{
	return submit(o, 0);
}

/**
 * ordma_submit_and_wait() - submit, and wait for a completion in the same call
 * @o: the handle
 * @cqe: where to store a pointer to the oldest completion, valid until
 *	 ordma_cqe_seen()
 *
 * Submits as ordma_submit() does; with the ring backend the last batch and
 * the wait go to the kernel in one system call, and the kernel runs the
 * data path of the handle's channels itself while it waits (no detour
 * through a worker for what completes meanwhile). Then returns the oldest
 * completion, as ordma_wait_cqe() does.
 *
 * Return: the number of entries consumed, or -errno: the transient error
 * of ordma_submit() when none was consumed, or that of ordma_wait_cqe()
 * (-EINTR, -EAGAIN: nothing in flight and no completion waiting).
 */
ORDMA_API int ordma_submit_and_wait(struct ordma *o, struct ordma_cqe **cqe)
{
	int ret, err;

	if (!o || !cqe)
		return -EINVAL;
	ret = submit(o, 1);
	if (ret < 0)
		return ret;
	err = ordma_wait_cqe(o, cqe);
	return err ? err : ret;
}

/**
 * ordma_wait_cqe_timeout() - the oldest completion, waiting for one
 * @o: the handle
 * @cqe: where to store a pointer to it, valid until ordma_cqe_seen()
 * @timeout_ms: wait at most this long; -1: forever, 0: not at all
 *
 * Return: 0, or -errno: -ETIMEDOUT, -EINTR, -EAGAIN (@timeout_ms 0 and none
 * waiting, or nothing in flight at all: waiting would never end).
 */
ORDMA_API int ordma_wait_cqe_timeout(struct ordma *o, struct ordma_cqe **cqe,
				     int timeout_ms)
{
	int ret;

	if (!o || !cqe)
		return -EINVAL;
	for (;;) {
		if (cq_count(o)) {
			*cqe = &o->cqes[o->cq_head & CQ_MASK];
			return 0;
		}
		/* Nothing in flight: waiting would never end. */
		if (!o->inflight)
			return -EAGAIN;
		ret = reap(o, timeout_ms < 0 ? -1 : timeout_ms);
		if (ret < 0)
			return ret;
	}
}

/**
 * ordma_wait_cqe() - the oldest completion, waiting as long as it takes
 * @o: the handle
 * @cqe: where to store a pointer to it, valid until ordma_cqe_seen()
 *
 * Return: 0, or -errno: -EINTR, -EAGAIN (nothing in flight at all).
 */
ORDMA_API int ordma_wait_cqe(struct ordma *o, struct ordma_cqe **cqe)
{
	return ordma_wait_cqe_timeout(o, cqe, -1);
}

/**
 * ordma_peek_cqe() - the oldest completion if there is one
 * @o: the handle
 * @cqe: where to store a pointer to it, valid until ordma_cqe_seen()
 *
 * Return: 0, or -EAGAIN when none is waiting.
 */
ORDMA_API int ordma_peek_cqe(struct ordma *o, struct ordma_cqe **cqe)
{
	return ordma_wait_cqe_timeout(o, cqe, 0);
}

/**
 * ordma_cqe_seen() - release the completion the wait/peek calls returned
 * @o: the handle
 * @cqe: that completion
 */
ORDMA_API void ordma_cqe_seen(struct ordma *o, struct ordma_cqe *cqe)
{
	if (o && cqe && cq_count(o))
		o->cq_head++;
}
