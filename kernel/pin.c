// SPDX-License-Identifier: GPL-2.0
/*
 * Pinned user ranges, and the cache that keeps them between transfers.
 *
 * A send needs no memory region for its source: every PD has a
 * local_dma_lkey, and pages the kernel pinned and DMA-mapped can be the
 * scatter entries of a SEND or an RDMA WRITE under it. So a source segment
 * (mr.c) is made of pinned ranges (struct ordma_pin): user pages pinned with
 * FOLL_LONGTERM, charged to the owner's RLIMIT_MEMLOCK first, and mapped
 * for the device once. Only memory the peer writes into needs an rkey: a
 * destination is made of ranges pinned for writing (@write, mapped both
 * ways, so they serve sources too), which frwr.c fast-registers for each
 * receive; the registration is new each time, the pinning is not.
 *
 * Applications send from and receive into the same buffers again and
 * again, so a range the last segment holding it let go of is kept, on the
 * channel's cache, for the next segment over the same pages: a hit costs a
 * tree lookup. A destination that meets read-only ranges takes them out of
 * the tree and pins its pages again for writing. What
 * makes that safe is an mmu_interval_notifier on every range: any change
 * of the range's mapping (munmap, mremap, madvise, a copy-on-write fault,
 * fork, migration, compaction, swap, exit) invalidates it before it
 * happens, and a range found in the tree is therefore still what the
 * process has mapped there. An invalidation never waits for a transfer in
 * flight: the pages stay pinned until the last segment holding them lets
 * go, so what was submitted is what is sent, and a munmap or an exit never
 * waits for a peer. Such a range only leaves the tree.
 *
 * Bounds: a file's caches keep at most its device's cache_max_bytes (the
 * least recently used idle range goes first), never more than the memlock
 * limit allows (a charge that fails evicts idle ranges and tries again), and
 * give idle ranges back under memory pressure (a shrinker). A channel's
 * cache is emptied when it closes.
 *
 * Locking: pcache->lock (a spinlock, taken in notifier callbacks that may
 * not sleep) protects the tree, the lists, @users and @live of every range.
 * Pinning, mapping and releasing run outside it, in process context; a
 * range is released only once it is dead (not live) and idle (no users),
 * by whoever made it so, through the dead list and release_work when that
 * context cannot sleep. ordma_pin_caches_lock (a mutex) protects the list
 * of caches and is taken outside every pcache->lock.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sched/mm.h>
#include <linux/shrinker.h>

#include "chan.h"
#include "plan.h"
#include "compat.h"

static DEFINE_MUTEX(ordma_pin_caches_lock);
static LIST_HEAD(ordma_pin_caches);
/* Pages of idle live ranges over every cache: what the shrinker may take. */
static atomic_long_t ordma_pin_idle_pages = ATOMIC_LONG_INIT(0);

/**
 * ordma_memlock_charge() - reserve pages of the owner's RLIMIT_MEMLOCK
 * @ofile: the file whose owner pins
 * @npages: pages about to be pinned
 *
 * Every page ordma pins is reserved here first, as io_uring does: what
 * bounds them is the owner's user_struct locked_vm, against the limit the
 * owner had when it opened the file, reserved with a compare-and-exchange
 * so channels pinning at once never take more than the limit together
 * (with every other file and io_uring ring of that user). CAP_IPC_LOCK at
 * open lifts the limit.
 *
 * Return: 0, or -ENOMEM past the limit.
 */
int ordma_memlock_charge(struct ordma_file *ofile, u32 npages)
{
	unsigned long cur, next;

	if (ofile->lock_limit == ULONG_MAX)
		return 0;
	cur = atomic_long_read(&ofile->user->locked_vm);
	do {
		next = cur + npages;
		if (next > ofile->lock_limit || next < cur)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&ofile->user->locked_vm, &cur, next));
	return 0;
}

/**
 * ordma_memlock_uncharge() - undo ordma_memlock_charge()
 * @ofile: the file
 * @npages: pages unpinned
 */
void ordma_memlock_uncharge(struct ordma_file *ofile, u32 npages)
{
	if (ofile->lock_limit != ULONG_MAX)
		atomic_long_sub(npages, &ofile->user->locked_vm);
}

static struct ordma_chan *ordma_pcache_chan(struct ordma_pcache *pc)
{
	return container_of(pc, struct ordma_chan, pcache);
}

static u64 ordma_pin_start(const struct ordma_pin *pin)
{
	return pin->it.start;
}

static u64 ordma_pin_end(const struct ordma_pin *pin)
{
	return pin->it.last + 1;
}

/* How @pin's pages are mapped for the device. */
static enum dma_data_direction ordma_pin_dir(const struct ordma_pin *pin)
{
	return pin->write ? DMA_BIDIRECTIONAL : DMA_TO_DEVICE;
}

/*
 * Undo the DMA mapping of the first @n pages of @pin. A range pinned for
 * writing was synced for the CPU at the end of every receive into it
 * (frwr.c); the owner may have written its pages since, so an unmap that
 * synced the whole pages back (a bounce buffer, a device that does not
 * snoop) would put old bytes over theirs: it syncs nothing.
 */
static void ordma_pin_unmap(struct ib_device *ibdev, struct ordma_pin *pin,
			    u32 n)
{
	if (ib_uses_virt_dma(ibdev))
		return;
	while (n--)
		dma_unmap_page_attrs(ibdev->dma_device, pin->dma[n], PAGE_SIZE,
				     ordma_pin_dir(pin),
				     pin->write ? DMA_ATTR_SKIP_CPU_SYNC : 0);
}

/*
 * Map each page on its own, so that a send may sync just the bytes it
 * sends (ordma_pin_sync()). Returns 0 or -ENOMEM.
 */
static int ordma_pin_map(struct ib_device *ibdev, struct ordma_pin *pin,
			 u32 npages)
{
	u32 i;

	for (i = 0; i < npages; i++) {
		pin->dma[i] = ib_dma_map_page(ibdev, pin->pages[i], 0,
					      PAGE_SIZE, ordma_pin_dir(pin));
		if (ib_dma_mapping_error(ibdev, pin->dma[i])) {
			ordma_pin_unmap(ibdev, pin, i);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Unpin, unmap and free a range that no lookup can find and nobody holds. */
static void ordma_pin_release(struct ordma_chan *chan, struct ordma_pin *pin)
{
	struct ordma_dev *odev = chan->odev;

	might_sleep();
	if (pin->mni.mm)
		mmu_interval_notifier_remove(&pin->mni);
	ordma_pin_unmap(odev->ibdev, pin, pin->npages);
	if (pin->npages) {
		/* The peer may have written a destination's pages. */
		unpin_user_pages_dirty_lock(pin->pages, pin->npages,
					    pin->write);
		ordma_memlock_uncharge(chan->ofile, pin->npages);
		atomic_long_sub(pin->npages, &chan->ofile->cache_pages);
		atomic64_sub(pin->npages, &odev->cache_pages);
		spin_lock(&chan->pcache.lock);
		chan->pcache.pages -= pin->npages;
		spin_unlock(&chan->pcache.lock);
	}
	kvfree(pin->dma);
	kvfree(pin->pages);
	kfree(pin);
}

/*
 * Take a live range out of the tree (and off the lru if idle): from now on
 * it is released when its last user lets go. Returns true if it is idle,
 * so the caller must see it released (on its own or through the dead list).
 */
static bool ordma_pin_kill(struct ordma_pcache *pc, struct ordma_pin *pin)
{
	lockdep_assert_held(&pc->lock);
	if (!pin->live)
		return false;
	pin->live = false;
	interval_tree_remove(&pin->it, &pc->tree);
	if (pin->users)
		return false;
	list_del_init(&pin->link);
	atomic_long_sub(pin->npages, &ordma_pin_idle_pages);
	return true;
}

static void ordma_pin_release_work(struct work_struct *work)
{
	struct ordma_pcache *pc = container_of(work, struct ordma_pcache,
					       release_work);
	struct ordma_pin *pin, *tmp;
	LIST_HEAD(dead);

	spin_lock(&pc->lock);
	list_splice_init(&pc->dead, &dead);
	spin_unlock(&pc->lock);
	list_for_each_entry_safe(pin, tmp, &dead, link) {
		list_del(&pin->link);
		ordma_pin_release(ordma_pcache_chan(pc), pin);
	}
}

/*
 * The range's mapping is about to change. Whatever the event, and whether
 * or not the caller may sleep, the range leaves the tree at once; its
 * pages are unpinned when no segment holds them any more.
 */
static bool ordma_pin_invalidate(struct mmu_interval_notifier *mni,
				 const struct mmu_notifier_range *range,
				 unsigned long cur_seq)
{
	struct ordma_pin *pin = container_of(mni, struct ordma_pin, mni);
	struct ordma_pcache *pc = pin->cache;
	bool was_live, idle;

	spin_lock(&pc->lock);
	mmu_interval_set_seq(mni, cur_seq);
	was_live = pin->live;
	idle = ordma_pin_kill(pc, pin);
	if (idle)
		list_add_tail(&pin->link, &pc->dead);
	spin_unlock(&pc->lock);
	if (was_live)
		atomic64_inc(&ordma_pcache_chan(pc)->odev->cache_invalidations);
	if (idle)
		queue_work(ordma_wq, &pc->release_work);
	return true;
}

static const struct mmu_interval_notifier_ops ordma_pin_mni_ops = {
	.invalidate = ordma_pin_invalidate,
};

/*
 * Take idle ranges off @pc, least recently used first, until @pages pages
 * are taken or none is left; they go on @out. Returns pages taken.
 */
static u64 ordma_pcache_evict(struct ordma_pcache *pc, u64 pages,
			      struct list_head *out)
{
	struct ordma_pin *pin;
	u64 taken = 0;

	lockdep_assert_held(&pc->lock);
	while (taken < pages) {
		pin = list_first_entry_or_null(&pc->lru, struct ordma_pin,
					       link);
		if (!pin)
			break;
		ordma_pin_kill(pc, pin);
		list_add_tail(&pin->link, out);
		taken += pin->npages;
	}
	return taken;
}

/* Evict at least @pages idle pages of @chan's cache now; may sleep. */
static u64 ordma_pcache_shrink_now(struct ordma_chan *chan, u64 pages)
{
	struct ordma_pin *pin, *tmp;
	LIST_HEAD(out);
	u64 taken;

	spin_lock(&chan->pcache.lock);
	taken = ordma_pcache_evict(&chan->pcache, pages, &out);
	spin_unlock(&chan->pcache.lock);
	list_for_each_entry_safe(pin, tmp, &out, link) {
		list_del(&pin->link);
		ordma_pin_release(chan, pin);
	}
	return taken;
}

/* Pages of cache the file of @chan may hold on its device. */
static u64 ordma_pcache_max_pages(struct ordma_chan *chan)
{
	return READ_ONCE(chan->odev->cache_max) >> PAGE_SHIFT;
}

/*
 * Pin (for writing if @write), charge and map [@start, @start + @npages
 * pages) of the owner's mm, which the caller has adopted, and insert it
 * into the tree. Returns the range, held once, or an ERR_PTR.
 */
static struct ordma_pin *ordma_pin_new(struct ordma_chan *chan, u64 start,
				       u32 npages, bool write)
{
	struct ordma_pcache *pc = &chan->pcache;
	struct ordma_file *ofile = chan->ofile;
	struct ordma_pin *pin;
	unsigned long seq;
	u64 max, held;
	int ret, got;

	/* The shrinker finds a cache once it has pinned anything. */
	if (list_empty(&pc->node)) {
		mutex_lock(&ordma_pin_caches_lock);
		list_add_tail(&pc->node, &ordma_pin_caches);
		mutex_unlock(&ordma_pin_caches_lock);
	}
	/* Room in the file's bound first, then in the memlock limit. */
	max = ordma_pcache_max_pages(chan);
	held = atomic_long_read(&ofile->cache_pages);
	if (held + npages > max)
		ordma_pcache_shrink_now(chan, held + npages - max);
	ret = ordma_memlock_charge(ofile, npages);
	if (ret && ordma_pcache_shrink_now(chan, npages))
		ret = ordma_memlock_charge(ofile, npages);
	if (ret)
		return ERR_PTR(ret);

	ret = -ENOMEM;
	pin = kzalloc(sizeof(*pin), GFP_KERNEL);
	if (!pin)
		goto err_uncharge;
	pin->cache = pc;
	pin->write = write;
	INIT_LIST_HEAD(&pin->link);
	pin->it.start = start;
	pin->it.last = start + ((u64)npages << PAGE_SHIFT) - 1;
	pin->pages = kvmalloc_array(npages, sizeof(*pin->pages), GFP_KERNEL);
	pin->dma = kvmalloc_array(npages, sizeof(*pin->dma), GFP_KERNEL);
	if (!pin->pages || !pin->dma)
		goto err_free;

	ret = mmu_interval_notifier_insert(&pin->mni, current->mm, start,
					   (u64)npages << PAGE_SHIFT,
					   &ordma_pin_mni_ops);
	if (ret) {
		pin->mni.mm = NULL;
		goto err_free;
	}
	seq = mmu_interval_read_begin(&pin->mni);
	/* A source is only read: read-only mappings can be sent from. */
	got = pin_user_pages_fast(start, npages,
				  FOLL_LONGTERM | (write ? FOLL_WRITE : 0),
				  pin->pages);
	if (got != npages) {
		if (got > 0)
			unpin_user_pages(pin->pages, got);
		ret = got < 0 ? got : -EFAULT;
		goto err_remove;
	}
	ret = ordma_pin_map(chan->odev->ibdev, pin, npages);
	if (ret)
		goto err_unpin;
	pin->npages = npages;
	pin->users = 1;
	atomic_long_add(npages, &ofile->cache_pages);
	atomic64_add(npages, &chan->odev->cache_pages);
	spin_lock(&pc->lock);
	pc->pages += npages;
	/* Changed while we pinned: this is no longer what is mapped there. */
	if (!mmu_interval_read_retry(&pin->mni, seq)) {
		pin->live = true;
		interval_tree_insert(&pin->it, &pc->tree);
	}
	spin_unlock(&pc->lock);
	return pin;

err_unpin:
	unpin_user_pages(pin->pages, npages);
err_remove:
	mmu_interval_notifier_remove(&pin->mni);
err_free:
	kvfree(pin->dma);
	kvfree(pin->pages);
	kfree(pin);
err_uncharge:
	ordma_memlock_uncharge(ofile, npages);
	return ERR_PTR(ret);
}

/*
 * Take every read-only live range that meets [@addr, @end) out of the tree,
 * for a destination to pin those pages for writing; idle ones go to the
 * dead list. Returns true if any did (release_work must run).
 */
static bool ordma_pcache_drop_ro(struct ordma_pcache *pc, u64 addr, u64 end)
{
	struct interval_tree_node *it;
	struct ordma_pin *pin;
	bool dead = false;

	lockdep_assert_held(&pc->lock);
restart:
	for (it = interval_tree_iter_first(&pc->tree, addr, end - 1); it;
	     it = interval_tree_iter_next(it, addr, end - 1)) {
		pin = container_of(it, struct ordma_pin, it);
		if (pin->write)
			continue;
		if (ordma_pin_kill(pc, pin)) {
			list_add_tail(&pin->link, &pc->dead);
			dead = true;
		}
		/* It left the tree: walk it again from the start. */
		goto restart;
	}
	return dead;
}

/*
 * The live range that holds @addr and reaches furthest, or NULL; the
 * first live range starting in (@addr, @end) goes to *@next (or NULL).
 * With @write only ranges pinned for writing count.
 */
static struct ordma_pin *ordma_pcache_find(struct ordma_pcache *pc, u64 addr,
					   u64 end, bool write,
					   struct ordma_pin **next)
{
	struct ordma_pin *best = NULL, *pin;
	struct interval_tree_node *it;

	lockdep_assert_held(&pc->lock);
	if (next)
		*next = NULL;
	for (it = interval_tree_iter_first(&pc->tree, addr, end - 1); it;
	     it = interval_tree_iter_next(it, addr, end - 1)) {
		pin = container_of(it, struct ordma_pin, it);
		if (write && !pin->write)
			continue;
		if (it->start <= addr) {
			if (!best || it->last > best->it.last)
				best = pin;
		} else if (next && (!*next || it->start < (*next)->it.start)) {
			*next = pin;
		}
	}
	return best;
}

static void ordma_pin_hold(struct ordma_pcache *pc, struct ordma_pin *pin)
{
	lockdep_assert_held(&pc->lock);
	if (!pin->users++) {
		list_del_init(&pin->link);
		atomic_long_sub(pin->npages, &ordma_pin_idle_pages);
	}
}

/**
 * ordma_pin_put() - a segment lets go of a pinned range
 * @chan: the channel whose cache holds @pin
 * @pin: the range, held by the caller
 *
 * An idle range stays cached if it is still live and the file's bound
 * allows; otherwise it is released by release_work. Does not sleep.
 */
void ordma_pin_put(struct ordma_chan *chan, struct ordma_pin *pin)
{
	struct ordma_pcache *pc = &chan->pcache;
	bool release = false;

	spin_lock(&pc->lock);
	if (--pin->users) {
		spin_unlock(&pc->lock);
		return;
	}
	if (pin->live &&
	    atomic_long_read(&chan->ofile->cache_pages) <=
	    ordma_pcache_max_pages(chan)) {
		list_add_tail(&pin->link, &pc->lru);
		atomic_long_add(pin->npages, &ordma_pin_idle_pages);
	} else {
		if (pin->live) {
			pin->live = false;
			interval_tree_remove(&pin->it, &pc->tree);
		}
		list_add_tail(&pin->link, &pc->dead);
		release = true;
	}
	spin_unlock(&pc->lock);
	if (release)
		queue_work(ordma_wq, &pc->release_work);
}

/**
 * ordma_pin_get() - hold pinned ranges covering a segment
 * @chan: the channel; called by its registration worker with the owner's
 *	mm adopted, or by its worker with @may_pin false
 * @uaddr: the segment's first byte
 * @len: its length
 * @may_pin: pin what the cache does not hold; else only look
 * @write: for a destination: ranges pinned for writing; read-only ones
 *	over the same pages leave the tree (only with @may_pin)
 * @pins: filled with the ranges, in address order
 * @npins: how many (at most ORDMA_SEG_PINS)
 * @pinned: pages pinned by this call (0 on a hit)
 *
 * Return: 0, -EAGAIN when the cache does not hold all of it and @may_pin
 * is false, or an error from pinning (-ENOMEM past the memlock limit,
 * -EFAULT for a range not mapped, -E2BIG for one made of too many pieces).
 */
int ordma_pin_get(struct ordma_chan *chan, u64 uaddr, u64 len, bool may_pin,
		  bool write, struct ordma_pin **pins, u8 *npins, u32 *pinned)
{
	struct ordma_pcache *pc = &chan->pcache;
	u64 addr = uaddr & PAGE_MASK, end = PAGE_ALIGN(uaddr + len);
	struct ordma_pin *pin, *next;
	bool dead = false;
	u64 upto;
	int ret;

	*npins = 0;
	*pinned = 0;
	while (addr < end) {
		ret = -E2BIG;
		if (*npins == ORDMA_SEG_PINS)
			goto err;
		spin_lock(&pc->lock);
		if (write && may_pin)
			dead |= ordma_pcache_drop_ro(pc, addr, end);
		pin = ordma_pcache_find(pc, addr, end, write, &next);
		if (pin)
			ordma_pin_hold(pc, pin);
		spin_unlock(&pc->lock);
		if (!pin) {
			ret = -EAGAIN;
			if (!may_pin)
				goto err;
			upto = next ? ordma_pin_start(next) : end;
			pin = ordma_pin_new(chan, addr,
					    (upto - addr) >> PAGE_SHIFT, write);
			if (IS_ERR(pin)) {
				ret = PTR_ERR(pin);
				goto err;
			}
			*pinned += pin->npages;
		}
		pins[(*npins)++] = pin;
		addr = ordma_pin_end(pin);
	}
	if (dead)
		queue_work(ordma_wq, &pc->release_work);
	if (*pinned)
		atomic64_inc(&chan->odev->cache_misses);
	else
		atomic64_inc(&chan->odev->cache_hits);
	return 0;

err:
	if (dead)
		queue_work(ordma_wq, &pc->release_work);
	while (*npins)
		ordma_pin_put(chan, pins[--(*npins)]);
	*pinned = 0;
	return ret;
}

/**
 * ordma_pin_cached() - does the cache hold all of a source now?
 * @chan: the channel
 * @uaddr: first byte
 * @len: length
 *
 * Return: true if live ranges cover it (a hint: one may go at any time).
 */
bool ordma_pin_cached(struct ordma_chan *chan, u64 uaddr, u64 len)
{
	struct ordma_pcache *pc = &chan->pcache;
	u64 addr = uaddr & PAGE_MASK, end = PAGE_ALIGN(uaddr + len);
	struct ordma_pin *pin;

	spin_lock(&pc->lock);
	while (addr < end) {
		pin = ordma_pcache_find(pc, addr, end, false, NULL);
		if (!pin)
			break;
		addr = ordma_pin_end(pin);
	}
	spin_unlock(&pc->lock);
	return addr >= end;
}

/* The range of @pins (in address order) holding @addr, from *@i on. */
static struct ordma_pin *ordma_pin_at(struct ordma_pin * const *pins,
				      u8 npins, u8 *i, u64 addr)
{
	while (*i < npins && ordma_pin_end(pins[*i]) <= addr)
		(*i)++;
	if (WARN_ON_ONCE(*i == npins || addr < ordma_pin_start(pins[*i])))
		return NULL;
	return pins[*i];
}

/**
 * ordma_pin_sges() - scatter entries for bytes of a source segment
 * @pins: the segment's ranges
 * @npins: how many
 * @addr: user address of the first byte to send, inside the ranges
 * @len: bytes to send
 * @lkey: the PD's local_dma_lkey
 * @sge: filled with up to @max entries, or NULL only to count
 * @max: entries available
 * @nsge: entries used
 *
 * Pages whose DMA addresses follow each other share an entry.
 *
 * Return: bytes the entries cover: @len, or less when @max ran out.
 */
u64 ordma_pin_sges(struct ordma_pin * const *pins, u8 npins, u64 addr,
		   u64 len, u32 lkey, struct ib_sge *sge, u32 max, u32 *nsge)
{
	u64 done = 0, off, n;
	struct ordma_pin *pin;
	struct ib_sge cur = {};
	dma_addr_t dma;
	u8 i = 0;

	*nsge = 0;
	while (done < len) {
		pin = ordma_pin_at(pins, npins, &i, addr);
		if (!pin)
			break;
		off = addr - ordma_pin_start(pin);
		n = min(len - done, PAGE_SIZE - offset_in_page(off));
		dma = pin->dma[off >> PAGE_SHIFT] + offset_in_page(off);
		if (*nsge && cur.addr + cur.length == dma &&
		    (u64)cur.length + n <= U32_MAX) {
			cur.length += n;
		} else {
			if (*nsge == max)
				break;
			if (*nsge && sge)
				sge[*nsge - 1] = cur;
			cur.addr = dma;
			cur.length = n;
			cur.lkey = lkey;
			(*nsge)++;
		}
		done += n;
		addr += n;
	}
	if (*nsge && sge)
		sge[*nsge - 1] = cur;
	return done;
}

/**
 * ordma_pin_sync() - hand bytes of a segment to the device or back
 * @ibdev: the device the ranges are mapped for
 * @pins: the segment's ranges
 * @npins: how many
 * @addr: user address of the first byte
 * @len: bytes
 * @for_cpu: the device wrote them (a destination whose registration
 *	ended): make them visible to the CPU; else the CPU may have written
 *	them: make them visible to the device
 *
 * The pages were mapped once, when pinned, and stay mapped while cached:
 * where the mapping bounces (swiotlb) or the device does not snoop, the
 * bytes must be synced around every use.
 */
void ordma_pin_sync(struct ib_device *ibdev, struct ordma_pin * const *pins,
		    u8 npins, u64 addr, u64 len, bool for_cpu)
{
	u64 end = addr + len, off, n;
	struct ordma_pin *pin;
	dma_addr_t dma;
	u8 i = 0;

	if (ib_uses_virt_dma(ibdev))
		return;
	while (addr < end) {
		pin = ordma_pin_at(pins, npins, &i, addr);
		if (!pin)
			return;
		off = addr - ordma_pin_start(pin);
		n = min(end - addr, PAGE_SIZE - offset_in_page(off));
		dma = pin->dma[off >> PAGE_SHIFT] + offset_in_page(off);
		if (for_cpu)
			ib_dma_sync_single_for_cpu(ibdev, dma, n,
						   ordma_pin_dir(pin));
		else
			ib_dma_sync_single_for_device(ibdev, dma, n,
						      ordma_pin_dir(pin));
		addr += n;
	}
}

/**
 * ordma_pin_sg() - scatter entries of a destination's mapped pages
 * @pins: the segment's ranges, pinned for writing
 * @npins: how many
 * @addr: user address of its first byte
 * @len: its length
 * @sgl: filled with one entry per page, with its DMA address (the ranges
 *	own the mapping), for ib_map_mr_sg()
 * @max: entries of @sgl
 *
 * Return: the entries used, -E2BIG when @max is too few, or -EINVAL when
 * the ranges do not cover the bytes for writing.
 */
int ordma_pin_sg(struct ordma_pin * const *pins, u8 npins, u64 addr,
		 u64 len, struct scatterlist *sgl, u32 max)
{
	u64 end = addr + len, off, n;
	struct ordma_pin *pin;
	u32 pg, nents = 0;
	u8 i = 0;

	if ((PAGE_ALIGN(end) - (addr & PAGE_MASK)) >> PAGE_SHIFT > max)
		return -E2BIG;
	for (; addr < end; nents++) {
		pin = ordma_pin_at(pins, npins, &i, addr);
		if (!pin || !pin->write)
			return -EINVAL;
		off = addr - ordma_pin_start(pin);
		pg = off >> PAGE_SHIFT;
		n = min(end - addr, PAGE_SIZE - offset_in_page(off));
		sg_set_page(&sgl[nents], pin->pages[pg], n,
			    offset_in_page(off));
		sg_dma_address(&sgl[nents]) = pin->dma[pg] +
					      offset_in_page(off);
		sg_dma_len(&sgl[nents]) = n;
		addr += n;
	}
	return nents;
}

/**
 * ordma_pin_dirty() - a destination's pages were written
 * @pins: the segment's ranges
 * @npins: how many
 * @addr: user address of its first byte
 * @len: its length
 *
 * Pages of a file stay pinned in the cache after the write, and writeback
 * may clean them meanwhile: they are marked dirty after every write, or
 * the bytes could be lost. Anonymous pages are marked when unpinned
 * (ordma_pin_release()): pinned, they are neither swapped nor written
 * back. May sleep (page lock).
 */
void ordma_pin_dirty(struct ordma_pin * const *pins, u8 npins, u64 addr,
		     u64 len)
{
	u64 end = PAGE_ALIGN(addr + len);
	struct ordma_pin *pin;
	struct page *page;
	u8 i = 0;

	might_sleep();
	for (addr &= PAGE_MASK; addr < end; addr += PAGE_SIZE) {
		pin = ordma_pin_at(pins, npins, &i, addr);
		if (!pin)
			return;
		page = pin->pages[(addr - ordma_pin_start(pin)) >> PAGE_SHIFT];
		if (!PageAnon(page))
			set_page_dirty_lock(page);
	}
}

/**
 * ordma_pin_init() - an empty cache for a new channel
 * @chan: the channel, just allocated
 */
void ordma_pin_init(struct ordma_chan *chan)
{
	struct ordma_pcache *pc = &chan->pcache;

	spin_lock_init(&pc->lock);
	pc->tree = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&pc->lru);
	INIT_LIST_HEAD(&pc->dead);
	INIT_WORK(&pc->release_work, ordma_pin_release_work);
	INIT_LIST_HEAD(&pc->node);
}

/**
 * ordma_pin_flush() - release every range of a channel's cache
 * @chan: the channel; no segment of it holds a range any more
 */
void ordma_pin_flush(struct ordma_chan *chan)
{
	struct ordma_pcache *pc = &chan->pcache;
	struct interval_tree_node *it;

	if (!list_empty(&pc->node)) {
		mutex_lock(&ordma_pin_caches_lock);
		list_del_init(&pc->node);
		mutex_unlock(&ordma_pin_caches_lock);
	}
	spin_lock(&pc->lock);
	while ((it = interval_tree_iter_first(&pc->tree, 0, ULONG_MAX))) {
		struct ordma_pin *pin = container_of(it, struct ordma_pin, it);

		if (ordma_pin_kill(pc, pin))
			list_add_tail(&pin->link, &pc->dead);
	}
	spin_unlock(&pc->lock);
	ordma_pin_release_work(&pc->release_work);
	flush_work(&pc->release_work);
	WARN_ON_ONCE(pc->pages);
}

/* Memory pressure: idle ranges over every cache, least recently used. */
static unsigned long ordma_pin_shrink_count(struct shrinker *s,
					    struct shrink_control *sc)
{
	long n = atomic_long_read(&ordma_pin_idle_pages);

	return n > 0 ? n : SHRINK_EMPTY;
}

static unsigned long ordma_pin_shrink_scan(struct shrinker *s,
					   struct shrink_control *sc)
{
	struct ordma_pcache *pc;
	unsigned long freed = 0;
	LIST_HEAD(out);

	if (!mutex_trylock(&ordma_pin_caches_lock))
		return SHRINK_STOP;
	list_for_each_entry(pc, &ordma_pin_caches, node) {
		if (freed >= sc->nr_to_scan)
			break;
		spin_lock(&pc->lock);
		freed += ordma_pcache_evict(pc, sc->nr_to_scan - freed, &out);
		list_splice_tail_init(&out, &pc->dead);
		spin_unlock(&pc->lock);
		/* Notifiers are removed in a work: never from reclaim. */
		queue_work(ordma_wq, &pc->release_work);
	}
	mutex_unlock(&ordma_pin_caches_lock);
	return freed;
}

static struct shrinker *ordma_pin_shrinker;

/**
 * ordma_pin_module_init() - register the caches' shrinker
 *
 * Return: 0 or -ENOMEM.
 */
int ordma_pin_module_init(void)
{
	ordma_pin_shrinker = ordma_shrinker_create("ordma-pin",
						   ordma_pin_shrink_count,
						   ordma_pin_shrink_scan);
	return ordma_pin_shrinker ? 0 : -ENOMEM;
}

/**
 * ordma_pin_module_exit() - undo ordma_pin_module_init()
 */
void ordma_pin_module_exit(void)
{
	ordma_shrinker_destroy(ordma_pin_shrinker);
}
