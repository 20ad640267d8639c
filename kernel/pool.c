// SPDX-License-Identifier: GPL-2.0
/*
 * Intermediate buffer pools: one per device, made of equal DMA-mapped chunks
 * that carry the head of a transfer while its user buffer is being pinned and
 * registered.
 *
 * Locking: pool->lock, a spinlock taken with interrupts disabled, protects
 * the free list, additions to the waiters and every counter and setting of
 * the pool
 * (chunk_bytes, target_chunks, chunks_total, chunks_free, high_water,
 * alloc_waits, quota, user_quota). It is taken from process context (sysfs, channel
 * setup and submission), from softirq and from hard irq: chunks come back
 * through ordma_chunk_put() in CQ completion handlers. Nothing sleeps,
 * allocates or frees memory under it, and only the waiters' own lock nests
 * inside it.
 * The atomic counters of a holder (struct ordma_hold: its own, and its
 * user's over all its channels) are raised only under the lock, in
 * ordma_chunk_get(), so neither can pass its quota; they drop without the
 * lock, before the put takes the lock, so a waiter that checks them under
 * the lock either sees the drop or is already queued to be woken.
 *
 * Waiters are entries of a wait queue (pool->waiters) with a wake function
 * of their own: a waker calls wake_up_all() without pool->lock, and each
 * function runs under the queue's lock, takes its entry off and kicks its
 * holder. An entry is added under pool->lock (then the queue's lock), after
 * the holder found no chunk, so a chunk put back after that check finds it
 * queued. ordma_pool_cancel_wait() takes the queue's lock: once it returns,
 * no call of the entry's function is running or to come.
 *
 * ordma_pool_cfg_lock, a mutex, serializes the reconfigurations of every pool
 * (ordma_pool_resize(), from sysfs.c's ordma_knobs_set(): a sysfs write or
 * netlink's POOL_SET), which allocate and free chunks outside pool->lock.
 * Their caller holds sysfs.c's ordma_knobs_lock, taken outside this one:
 * ordma_knobs_lock, then ordma_pool_cfg_lock, then pool->lock. Gets and
 * puts take neither mutex.
 *
 * Freeing a chunk (ib_dma_unmap_single(), free_pages_exact(), kfree())
 * happens without the lock, and may happen in ordma_chunk_put() in any
 * context: the streaming DMA API may be called from interrupt context, and
 * free_pages_exact() (free_page() of each page) and kfree() are irq-safe,
 * so nothing is deferred to a work item.
 */
#include <linux/gfp.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "ordma.h"

static DEFINE_MUTEX(ordma_pool_cfg_lock);

/*
 * Settings of the pools of devices attached later; read-only once the module
 * is loaded. Each is checked alone when it is parsed; pool_bytes below
 * chunk_bytes (which may follow it on the command line) gives one chunk.
 */
static unsigned long long ordma_pool_bytes = SZ_16M;
static unsigned int ordma_chunk_bytes = SZ_64K;
static unsigned int ordma_chan_quota = 64;
static unsigned int ordma_user_quota = 192;

/**
 * ordma_chunk_bytes_valid() - may chunks have this size?
 * @bytes: the size
 *
 * Return: true for a power of two from 4 KiB to 1 MiB.
 */
bool ordma_chunk_bytes_valid(u64 bytes)
{
	return bytes >= ORDMA_CHUNK_MIN && bytes <= ORDMA_CHUNK_MAX &&
	       is_power_of_2(bytes);
}

/**
 * ordma_pool_bytes_valid() - may a pool of chunks this size have this size?
 * @bytes: the pool's size
 * @chunk_bytes: the size of its chunks
 *
 * Return: true from @chunk_bytes (one chunk) to 1 GiB.
 */
bool ordma_pool_bytes_valid(u64 bytes, u32 chunk_bytes)
{
	return bytes >= chunk_bytes && bytes <= ORDMA_POOL_MAX;
}

/**
 * ordma_quota_valid() - is this a valid chan_quota or user_quota?
 * @chunks: the quota
 *
 * Return: true from 1 to 65536.
 */
bool ordma_quota_valid(u64 chunks)
{
	return chunks >= ORDMA_QUOTA_MIN && chunks <= ORDMA_QUOTA_MAX;
}

static int ordma_param_set_pool_bytes(const char *val,
				      const struct kernel_param *kp)
{
	u64 v;

	if (kstrtou64(val, 10, &v) || v < ORDMA_CHUNK_MIN || v > ORDMA_POOL_MAX)
		return -EINVAL;
	*(unsigned long long *)kp->arg = v;
	return 0;
}

static int ordma_param_set_chunk_bytes(const char *val,
				       const struct kernel_param *kp)
{
	u32 v;

	if (kstrtou32(val, 10, &v) || !ordma_chunk_bytes_valid(v))
		return -EINVAL;
	*(unsigned int *)kp->arg = v;
	return 0;
}

static int ordma_param_set_quota(const char *val,
				 const struct kernel_param *kp)
{
	u32 v;

	if (kstrtou32(val, 10, &v) || !ordma_quota_valid(v))
		return -EINVAL;
	*(unsigned int *)kp->arg = v;
	return 0;
}

static const struct kernel_param_ops ordma_pool_bytes_ops = {
	.set = ordma_param_set_pool_bytes,
	.get = param_get_ullong,
};

static const struct kernel_param_ops ordma_chunk_bytes_ops = {
	.set = ordma_param_set_chunk_bytes,
	.get = param_get_uint,
};

static const struct kernel_param_ops ordma_quota_ops = {
	.set = ordma_param_set_quota,
	.get = param_get_uint,
};

module_param_cb(pool_bytes, &ordma_pool_bytes_ops, &ordma_pool_bytes, 0444);
MODULE_PARM_DESC(pool_bytes,
		 "Intermediate buffer bytes per device, 4096 to 1 GiB, rounded down to a multiple of chunk_bytes (default 16 MiB)");
module_param_cb(chunk_bytes, &ordma_chunk_bytes_ops, &ordma_chunk_bytes, 0444);
MODULE_PARM_DESC(chunk_bytes,
		 "Bytes per intermediate buffer chunk, a power of two from 4096 to 1 MiB (default 64 KiB)");
module_param_cb(chan_quota_chunks, &ordma_quota_ops, &ordma_chan_quota, 0444);
module_param_cb(user_quota_chunks, &ordma_quota_ops, &ordma_user_quota, 0444);
MODULE_PARM_DESC(user_quota_chunks,
		 "Most chunks of a pool the channels of one user (not CAP_SYS_ADMIN) hold together, 1 to 65536 (default 192: three quarters of the default pool)");
MODULE_PARM_DESC(chan_quota_chunks,
		 "Most chunks one channel holds at once, 1 to 65536 (default 64)");

static void ordma_chunk_free(struct ordma_pool *pool, struct ordma_chunk *chunk)
{
	ib_dma_unmap_single(pool->odev->ibdev, chunk->dma,
			    ordma_chunk_room(chunk), DMA_BIDIRECTIONAL);
	free_pages_exact(chunk->buf, ordma_chunk_room(chunk));
	kfree(chunk);
}

static struct ordma_chunk *ordma_chunk_alloc(struct ordma_pool *pool, u32 size)
{
	struct ib_device *ibdev = pool->odev->ibdev;
	struct ordma_chunk *chunk;

	chunk = kzalloc(sizeof(*chunk), GFP_KERNEL);
	if (!chunk)
		return NULL;
	chunk->size = size;
	chunk->buf = alloc_pages_exact(ordma_chunk_room(chunk),
				       GFP_KERNEL | __GFP_NOWARN);
	if (!chunk->buf)
		goto err_chunk;
	chunk->dma = ib_dma_map_single(ibdev, chunk->buf,
				       ordma_chunk_room(chunk),
				       DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ibdev, chunk->dma))
		goto err_pages;
	chunk->pool = pool;
	INIT_LIST_HEAD(&chunk->node);
	return chunk;

err_pages:
	free_pages_exact(chunk->buf, ordma_chunk_room(chunk));
err_chunk:
	kfree(chunk);
	return NULL;
}

/* Process context, without pool->lock: the chunks are off every list. */
static void ordma_chunks_free(struct ordma_pool *pool, struct list_head *list)
{
	struct ordma_chunk *chunk, *tmp;

	list_for_each_entry_safe(chunk, tmp, list, node) {
		list_del(&chunk->node);
		ordma_chunk_free(pool, chunk);
		cond_resched();
	}
}

/* Allocate @n chunks of @size onto @list: all of them, or none and -ENOMEM. */
static int ordma_chunks_alloc(struct ordma_pool *pool, u32 size, u32 n,
			      struct list_head *list)
{
	struct ordma_chunk *chunk;
	LIST_HEAD(new);

	while (n--) {
		chunk = ordma_chunk_alloc(pool, size);
		if (!chunk) {
			ordma_chunks_free(pool, &new);
			return -ENOMEM;
		}
		list_add_tail(&chunk->node, &new);
		cond_resched();
	}
	list_splice_tail(&new, list);
	return 0;
}

/* Move free chunks above target_chunks to @list, for freeing after unlock. */
static void ordma_pool_take_surplus(struct ordma_pool *pool,
				    struct list_head *list)
{
	struct ordma_chunk *chunk;

	lockdep_assert_held(&pool->lock);
	while (pool->chunks_total > pool->target_chunks &&
	       !list_empty(&pool->free)) {
		chunk = list_first_entry(&pool->free, struct ordma_chunk, node);
		list_move_tail(&chunk->node, list);
		pool->chunks_total--;
		pool->chunks_free--;
	}
}

/* Add the freshly allocated @n chunks on @list to the free list. */
static void ordma_pool_add_free(struct ordma_pool *pool, struct list_head *list,
				u32 n)
{
	lockdep_assert_held(&pool->lock);
	list_splice_tail_init(list, &pool->free);
	pool->chunks_total += n;
	pool->chunks_free += n;
}

/*
 * Must the waiters be woken once pool->lock is dropped? Under the lock,
 * which every addition holds: a waiter that leaves meanwhile costs a call
 * of wake_up_all() for nothing.
 */
static bool ordma_pool_has_waiters(struct ordma_pool *pool)
{
	lockdep_assert_held(&pool->lock);
	/* Additions hold pool->lock: no barrier needed to see them. */
	return waitqueue_active(&pool->waiters);
}

/**
 * ordma_pool_init() - build the intermediate buffer pool of a device
 * @pool: the pool, embedded in @odev
 * @odev: the device context; its ibdev maps the chunks
 *
 * Allocates pool_bytes / chunk_bytes chunks (the module parameters, at least
 * one chunk) and maps each for DMA on the device.
 *
 * Context: process context, may sleep.
 * Return: 0, or -ENOMEM with nothing left allocated.
 */
int ordma_pool_init(struct ordma_pool *pool, struct ordma_dev *odev)
{
	LIST_HEAD(chunks);
	u32 target;
	int ret;

	pool->odev = odev;
	spin_lock_init(&pool->lock);
	INIT_LIST_HEAD(&pool->free);
	init_waitqueue_head(&pool->waiters);
	pool->chunk_bytes = ordma_chunk_bytes;
	pool->quota = ordma_chan_quota;
	pool->user_quota = ordma_user_quota;
	target = max_t(u64, div_u64(ordma_pool_bytes, ordma_chunk_bytes), 1);
	pool->target_chunks = target;
	pool->chunks_total = 0;
	pool->chunks_free = 0;
	pool->high_water = 0;
	pool->alloc_waits = 0;

	ret = ordma_chunks_alloc(pool, pool->chunk_bytes, target, &chunks);
	if (ret)
		return ret;
	/* Not visible to anyone yet; the lock only keeps lockdep informed. */
	spin_lock_irq(&pool->lock);
	ordma_pool_add_free(pool, &chunks, target);
	spin_unlock_irq(&pool->lock);
	return 0;
}

/**
 * ordma_pool_destroy() - free every chunk of a pool
 * @pool: the pool
 *
 * Every chunk must have been put back and every waiter cancelled; chunks
 * still held are reported and leaked.
 *
 * Context: process context, may sleep.
 */
void ordma_pool_destroy(struct ordma_pool *pool)
{
	LIST_HEAD(chunks);

	spin_lock_irq(&pool->lock);
	WARN_ON_ONCE(pool->chunks_free != pool->chunks_total);
	/* Every channel of the device is gone, and cancelled its wait. */
	WARN_ON_ONCE(waitqueue_active(&pool->waiters));
	list_splice_init(&pool->free, &chunks);
	pool->chunks_total -= pool->chunks_free;
	pool->chunks_free = 0;
	spin_unlock_irq(&pool->lock);

	ordma_chunks_free(pool, &chunks);
}

/* Is @held below its quotas? Under pool->lock. */
static bool ordma_pool_allows(struct ordma_pool *pool, struct ordma_hold *held)
{
	lockdep_assert_held(&pool->lock);
	return (u32)atomic_read(&held->chunks) < pool->quota &&
	       (!held->user || (u32)atomic_read(held->user) < pool->user_quota);
}

/**
 * ordma_chunk_get() - take a free chunk for a holder
 * @pool: the pool
 * @held: the holder's counts, checked against the pool's quota and user
 *	quota and raised on success
 *
 * Never waits: on NULL, the caller may queue itself with ordma_pool_wait()
 * and retry when woken.
 *
 * Context: any context except NMI.
 * Return: the chunk, with @len 0, @owner NULL and @held set; NULL if the
 * pool has no free chunk or the holder already has its quota.
 */
struct ordma_chunk *ordma_chunk_get(struct ordma_pool *pool,
				    struct ordma_hold *held)
{
	struct ordma_chunk *chunk = NULL;
	unsigned long flags;
	u32 in_use;

	spin_lock_irqsave(&pool->lock, flags);
	if (list_empty(&pool->free) || !ordma_pool_allows(pool, held))
		goto out;
	chunk = list_first_entry(&pool->free, struct ordma_chunk, node);
	list_del_init(&chunk->node);
	pool->chunks_free--;
	in_use = pool->chunks_total - pool->chunks_free;
	if (in_use > pool->high_water)
		pool->high_water = in_use;
	atomic_inc(&held->chunks);
	if (held->user)
		atomic_inc(held->user);
out:
	spin_unlock_irqrestore(&pool->lock, flags);
	if (chunk) {
		chunk->held = held;
		chunk->len = 0;
		chunk->owner = NULL;
	}
	return chunk;
}

/**
 * ordma_chunk_put() - give a chunk back to its pool
 * @chunk: a chunk from ordma_chunk_get(), off every list of its holder
 *
 * Uncharges the holder, returns the chunk to the free list, or frees it if
 * the pool is shrinking or the chunk has an old size, then calls every
 * queued waiter.
 *
 * Context: any context except NMI (CQ completion handlers included).
 */
void ordma_chunk_put(struct ordma_chunk *chunk)
{
	struct ordma_pool *pool = chunk->pool;
	unsigned long flags;
	bool release, wake;

	atomic_dec(&chunk->held->chunks);
	if (chunk->held->user)
		atomic_dec(chunk->held->user);
	chunk->held = NULL;

	spin_lock_irqsave(&pool->lock, flags);
	release = pool->chunks_total > pool->target_chunks ||
		  chunk->size != pool->chunk_bytes;
	if (release) {
		pool->chunks_total--;
	} else {
		list_add(&chunk->node, &pool->free);
		pool->chunks_free++;
	}
	wake = ordma_pool_has_waiters(pool);
	spin_unlock_irqrestore(&pool->lock, flags);

	if (release)
		ordma_chunk_free(pool, chunk);
	if (wake)
		wake_up_all(&pool->waiters);
}

/**
 * ordma_pool_wait() - ask to be called back when a chunk comes back
 * @pool: the pool
 * @w: the waiter, made with init_waitqueue_func_entry(); its function
 *	takes @w off the queue (list_del_init()) before anything else, and
 *	must not sleep
 * @held: the holder's count of chunks
 *
 * Called after ordma_chunk_get() failed. If a chunk has become available for
 * this holder since, returns false and the caller retries at once. Otherwise
 * queues @w (once: a queued waiter is not queued again) and counts the wait
 * in alloc_waits; @w's function is called at the next ordma_chunk_put() or pool
 * reconfiguration, whether or not a chunk is then available to this holder,
 * so the callback retries and may wait again.
 *
 * Context: any context except NMI.
 * Return: true if @w is queued, false if the caller should retry now.
 */
bool ordma_pool_wait(struct ordma_pool *pool, struct wait_queue_entry *w,
		     struct ordma_hold *held)
{
	unsigned long flags;
	bool queued = false;

	spin_lock_irqsave(&pool->lock, flags);
	if (!list_empty(&pool->free) && ordma_pool_allows(pool, held))
		goto out;
	spin_lock(&pool->waiters.lock);
	if (list_empty(&w->entry)) {
		__add_wait_queue_entry_tail(&pool->waiters, w);
		pool->alloc_waits++;
	}
	spin_unlock(&pool->waiters.lock);
	queued = true;
out:
	spin_unlock_irqrestore(&pool->lock, flags);
	return queued;
}

/**
 * ordma_pool_cancel_wait() - withdraw a waiter
 * @pool: the pool @w waits on
 * @w: the waiter
 *
 * After this, no call of @w's function is running or to come: @w may be
 * freed.
 *
 * Context: any context except NMI.
 */
void ordma_pool_cancel_wait(struct ordma_pool *pool,
			    struct wait_queue_entry *w)
{
	unsigned long flags;

	spin_lock_irqsave(&pool->waiters.lock, flags);
	if (!list_empty(&w->entry))
		list_del_init(&w->entry);
	spin_unlock_irqrestore(&pool->waiters.lock, flags);
}

/*
 * Readings of a pool for the data path's heuristics (how many receive
 * buffers to keep posted): without the lock, as a hint that may be stale.
 */

/**
 * ordma_pool_quota() - chunks one holder may hold, a hint
 * @pool: the pool
 *
 * Return: chan_quota_chunks.
 */
u32 ordma_pool_quota(struct ordma_pool *pool)
{
	return READ_ONCE(pool->quota);
}

/**
 * ordma_pool_target() - chunks the pool is sized for, a hint
 * @pool: the pool
 *
 * Return: pool_bytes / chunk_bytes.
 */
u32 ordma_pool_target(struct ordma_pool *pool)
{
	return READ_ONCE(pool->target_chunks);
}

/**
 * ordma_pool_plenty() - is more than half of the pool free? A hint
 * @pool: the pool
 *
 * Return: true if so.
 */
bool ordma_pool_plenty(struct ordma_pool *pool)
{
	return READ_ONCE(pool->chunks_free) > READ_ONCE(pool->chunks_total) / 2;
}

/**
 * ordma_pool_rx_room() - may a receive ring take one more chunk past its
 *	channel's reserve?
 * @pool: the pool
 *
 * A hint, read without the lock: the receive rings of a device together
 * hold at most a quarter of the pool past the one chunk each channel
 * reserved, so rings that grew while few channels were open leave the
 * reserves of the channels that come after them (@rx_extra, counted by
 * wr.c).
 *
 * Return: true if so.
 */
bool ordma_pool_rx_room(struct ordma_pool *pool)
{
	return (u32)atomic_read(&pool->rx_extra) <
	       max(1U, READ_ONCE(pool->target_chunks) / 4);
}

/**
 * ordma_pool_user_below() - does a holder's user hold less than a part of
 *	its share?
 * @pool: the pool
 * @held: the holder
 * @div: the part: user_quota_chunks / @div
 *
 * A hint, read without the lock: receive rings grow only while their user
 * holds less than half its share (@div 2), so its sends keep the rest; a new
 * channel needs room for one more chunk (@div 1).
 *
 * Return: true if so, or if the holder has no counted user.
 */
bool ordma_pool_user_below(struct ordma_pool *pool, struct ordma_hold *held,
			   u32 div)
{
	return !held->user ||
	       (u32)atomic_read(held->user) < max(1U, READ_ONCE(pool->user_quota) / div);
}

/**
 * ordma_pool_has_free() - is a chunk free now?
 * @pool: the pool
 *
 * Return: true if so.
 */
bool ordma_pool_has_free(struct ordma_pool *pool)
{
	unsigned long flags;
	bool room;

	spin_lock_irqsave(&pool->lock, flags);
	room = pool->chunks_free > 0;
	spin_unlock_irqrestore(&pool->lock, flags);
	return room;
}

/**
 * ordma_pool_has_room() - could a holder get a chunk now?
 * @pool: the pool
 * @held: the holder's counts
 *
 * Return: true if a chunk is free and the holder is below its quotas.
 */
bool ordma_pool_has_room(struct ordma_pool *pool, struct ordma_hold *held)
{
	unsigned long flags;
	bool room;

	spin_lock_irqsave(&pool->lock, flags);
	room = pool->chunks_free && ordma_pool_allows(pool, held);
	spin_unlock_irqrestore(&pool->lock, flags);
	return room;
}

/**
 * ordma_pool_chunk_bytes() - payload size of the chunks made from now on
 * @pool: the pool
 *
 * Return: chunk_bytes.
 */
u32 ordma_pool_chunk_bytes(struct ordma_pool *pool)
{
	unsigned long flags;
	u32 bytes;

	spin_lock_irqsave(&pool->lock, flags);
	bytes = pool->chunk_bytes;
	spin_unlock_irqrestore(&pool->lock, flags);
	return bytes;
}

/**
 * ordma_pool_read() - one consistent reading of a pool's sizes and counters
 * @pool: the pool
 * @pi: filled in under the pool's lock
 *
 * Context: any context except NMI.
 */
void ordma_pool_read(struct ordma_pool *pool, struct ordma_pool_info *pi)
{
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	pi->pool_bytes = (u64)pool->target_chunks * pool->chunk_bytes;
	pi->chunk_bytes = pool->chunk_bytes;
	pi->chunks_total = pool->chunks_total;
	pi->chunks_free = pool->chunks_free;
	pi->high_water = pool->high_water;
	pi->alloc_waits = pool->alloc_waits;
	pi->quota = pool->quota;
	pi->user_quota = pool->user_quota;
	spin_unlock_irqrestore(&pool->lock, flags);
}

/**
 * ordma_pool_reset_stats() - start a pool's counters over
 * @pool: the pool
 *
 * alloc_waits drops to 0 and high_water to the chunks held now; sizes,
 * settings and the chunk counts are left alone.
 *
 * Context: any context except NMI.
 */
void ordma_pool_reset_stats(struct ordma_pool *pool)
{
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	pool->alloc_waits = 0;
	pool->high_water = pool->chunks_total - pool->chunks_free;
	spin_unlock_irqrestore(&pool->lock, flags);
}

/*
 * A pool of @target chunks of the size it has: grow by allocating the
 * missing chunks at once, shrink by freeing free chunks above @target now
 * and the rest as they are put back. Under ordma_pool_cfg_lock. On -ENOMEM
 * the pool is as it was.
 */
static int ordma_pool_set_target(struct ordma_pool *pool, u32 target)
{
	u32 old_target, n = 0;
	LIST_HEAD(chunks);
	bool wake;
	int ret;

	lockdep_assert_held(&ordma_pool_cfg_lock);
	spin_lock_irq(&pool->lock);
	old_target = pool->target_chunks;
	/* Raised now so that no put frees a chunk we would reallocate. */
	pool->target_chunks = target;
	ordma_pool_take_surplus(pool, &chunks);
	if (target > pool->chunks_total)
		n = target - pool->chunks_total;
	spin_unlock_irq(&pool->lock);

	if (!n) {
		ordma_chunks_free(pool, &chunks);
		return 0;
	}

	/*
	 * chunks_total stays put meanwhile: it is below target_chunks, so puts
	 * free nothing, and other reconfigurations wait for the cfg lock.
	 */
	ret = ordma_chunks_alloc(pool, pool->chunk_bytes, n, &chunks);
	spin_lock_irq(&pool->lock);
	if (ret)
		pool->target_chunks = old_target;
	else
		ordma_pool_add_free(pool, &chunks, n);
	wake = !ret && ordma_pool_has_waiters(pool);
	spin_unlock_irq(&pool->lock);
	if (wake)
		wake_up_all(&pool->waiters);
	return ret;
}

/*
 * A pool of @target chunks of @bytes each, a size it has not: only while
 * no chunk is held. The whole new set is allocated first, then swapped in
 * under pool->lock (the one point where the pool changes), then the old
 * chunks are freed. Under ordma_pool_cfg_lock. On an error the pool is as
 * it was.
 */
static int ordma_pool_rebuild(struct ordma_pool *pool, u32 bytes, u32 target)
{
	bool busy, wake = false;
	LIST_HEAD(chunks);
	LIST_HEAD(old);
	int ret;

	lockdep_assert_held(&ordma_pool_cfg_lock);
	spin_lock_irq(&pool->lock);
	busy = pool->chunks_free != pool->chunks_total;
	spin_unlock_irq(&pool->lock);
	if (busy)
		return -EBUSY;

	ret = ordma_chunks_alloc(pool, bytes, target, &chunks);
	if (ret)
		return ret;

	spin_lock_irq(&pool->lock);
	/* A chunk may have been taken while we allocated. */
	if (pool->chunks_free != pool->chunks_total) {
		ret = -EBUSY;
	} else {
		list_splice_init(&pool->free, &old);
		list_splice_init(&chunks, &pool->free);
		pool->chunk_bytes = bytes;
		pool->target_chunks = target;
		pool->chunks_total = target;
		pool->chunks_free = target;
		wake = ordma_pool_has_waiters(pool);
	}
	spin_unlock_irq(&pool->lock);

	/* The old chunks, or the new ones if busy. */
	ordma_chunks_free(pool, &old);
	ordma_chunks_free(pool, &chunks);
	if (wake)
		wake_up_all(&pool->waiters);
	return ret;
}

/**
 * ordma_pool_resize() - give a pool a new size and chunk size at once
 * @pool: the pool
 * @chunk_bytes: the chunk size, a power of two from 4096 to 1 MiB, at most
 *	@bytes; the pool's own to keep it
 * @bytes: the pool size, from @chunk_bytes to 1 GiB, rounded down to a
 *	multiple of @chunk_bytes; the pool's own to keep it
 *
 * With the chunk size it has, the pool grows (the new chunks allocated at
 * once, the waiters woken) or shrinks (free chunks above the new size freed
 * at once, the rest as they are put back). A new chunk size is taken only
 * while no chunk is held: every chunk of the new size is allocated first
 * and the pool takes them, with its new size, in one step under its lock.
 * Either way the pool is unchanged when this fails.
 *
 * Context: process context, may sleep.
 * Return: 0; -EINVAL for a size out of range; -EBUSY if the chunk size
 * changes while a chunk is held; -ENOMEM.
 */
int ordma_pool_resize(struct ordma_pool *pool, u32 chunk_bytes, u64 bytes)
{
	bool same;
	u32 target;
	int ret;

	if (!ordma_chunk_bytes_valid(chunk_bytes) ||
	    !ordma_pool_bytes_valid(bytes, chunk_bytes))
		return -EINVAL;
	target = div_u64(bytes, chunk_bytes);

	mutex_lock(&ordma_pool_cfg_lock);
	/* The chunk size changes only under the cfg lock: this holds. */
	spin_lock_irq(&pool->lock);
	same = pool->chunk_bytes == chunk_bytes;
	spin_unlock_irq(&pool->lock);
	if (same)
		ret = ordma_pool_set_target(pool, target);
	else
		ret = ordma_pool_rebuild(pool, chunk_bytes, target);
	mutex_unlock(&ordma_pool_cfg_lock);
	return ret;
}

/**
 * ordma_pool_set_quota() - set the most chunks one holder may have at once
 * @pool: the pool
 * @chunks: 1 to 65536
 *
 * Applies to the next ordma_chunk_get(); chunks held above a lowered quota
 * stay held. Wakes the waiters, some of which may now proceed.
 *
 * Context: any context except NMI.
 * Return: 0, or -EINVAL for a value out of range.
 */
int ordma_pool_set_quota(struct ordma_pool *pool, u32 chunks)
{
	unsigned long flags;
	bool wake;

	if (!ordma_quota_valid(chunks))
		return -EINVAL;

	spin_lock_irqsave(&pool->lock, flags);
	pool->quota = chunks;
	wake = ordma_pool_has_waiters(pool);
	spin_unlock_irqrestore(&pool->lock, flags);
	if (wake)
		wake_up_all(&pool->waiters);
	return 0;
}

/**
 * ordma_pool_set_user_quota() - set the most chunks one user's channels hold
 * @pool: the pool
 * @chunks: 1 to 65536
 *
 * As ordma_pool_set_quota(), for the count of a user over all its channels.
 *
 * Context: any context except NMI.
 * Return: 0, or -EINVAL for a value out of range.
 */
int ordma_pool_set_user_quota(struct ordma_pool *pool, u32 chunks)
{
	unsigned long flags;
	bool wake;

	if (!ordma_quota_valid(chunks))
		return -EINVAL;

	spin_lock_irqsave(&pool->lock, flags);
	pool->user_quota = chunks;
	wake = ordma_pool_has_waiters(pool);
	spin_unlock_irqrestore(&pool->lock, flags);
	if (wake)
		wake_up_all(&pool->waiters);
	return 0;
}
