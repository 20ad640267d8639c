// SPDX-License-Identifier: GPL-2.0
/*
 * Registered segments: the zero-copy half of a transfer.
 *
 * A segment is a range of a user buffer that the channel's registration
 * worker (chan->reg_work) readies, with the owner's mm adopted. A source
 * is pinned and DMA-mapped, with no MR: its pages are sent from with the
 * PD's local_dma_lkey, and the channel's pin cache (pin.c) keeps them for
 * the next sends, so a source the cache holds whole is ready at once,
 * without the worker. A destination, which the peer writes into, is pinned
 * for writing (in ranges of the pin cache too, kept for the next receives)
 * and fast-registered (frwr.c) in the channel's own PD, with a new rkey
 * each time, so it works on that channel's QP alone; where the device
 * cannot, an MR from ib_reg_user_mr(). Its pages are reserved against the
 * owner's RLIMIT_MEMLOCK first. While a segment readies, the
 * data path worker keeps copying the head of the buffer through pool
 * chunks; it sends straight from the segment once the segment comes back
 * ready. When the last send from a source has completed the worker lets
 * go of its pinned ranges; a destination's registration is ended
 * (invalidated or deregistered) by the registration worker, which then
 * lets go of its ranges the same way: none of that is on the
 * critical path of a send. A receive's segments are destinations the peer
 * may write into, so a RECV completes only once the last of them is
 * invalidated (struct ordma_req dereg_wait); those the peer filled earlier
 * are invalidated while the rest arrives.
 *
 * Life of a segment (enum ordma_seg_state), and who moves it:
 *
 *   QUEUED   on chan->reg_todo         worker creates it; reg_work takes it
 *   PINNING  reg_work only             pin (and register)
 *   READY    on chan->reg_done         reg_work hands it to the worker,
 *            then on a pass's list     which takes the queue at once
 *   USED     worker only               sends from it (a source the cache
 *                                      held whole starts here)
 *   FAILED   on chan->reg_done (same)  could not register: copied instead
 *   DEREG    on chan->reg_todo         worker gave it back; deregister
 *
 * chan->lock protects the queue links, @state while the segment is on a
 * queue, @abandoned and chan->nsegs. The worker, the only one to add
 * segments, may peek at nsegs and at the state of its own segments without
 * it (READ_ONCE; writers use WRITE_ONCE): a stale value only delays using a
 * segment. chan->segs lists every live segment (lock) so ordma_mr_flush()
 * finds them all once both workers are stopped.
 * The worker may give up a segment it has not got back yet (the copy path
 * overtook it): it sets @abandoned and reg_work gives it back itself.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/kthread.h>
#include <linux/sched/user.h>

#include "chan.h"
#include "fault.h"
#include "trace.h"

/*
 * The address an MR of ours gives its first byte: the peer learns where in
 * a page a buffer starts, not where in our address space it lies.
 */
static u64 ordma_seg_iova(u64 uaddr)
{
	return ORDMA_IOVA_BASE + offset_in_page(uaddr);
}

/* How @seg was readied, for the registration events. */
static u32 ordma_seg_trace_kind(const struct ordma_seg *seg)
{
	if (!seg->write)
		return ORDMA_TRACE_REG_PIN;
	if (!seg->mr)
		return ORDMA_TRACE_REG_DST;
	return seg->fast ? ORDMA_TRACE_REG_FRWR : ORDMA_TRACE_REG_UMR;
}

/* Undo ordma_seg_hold(), and let go of the ranges. */
static void ordma_seg_let_go(struct ordma_chan *chan, struct ordma_seg *seg)
{
	atomic64_sub(seg->pinned, &chan->odev->pages_pinned);
	atomic64_sub(seg->pinned, &chan->pages_pinned);
	seg->pinned = 0;
	while (seg->npins)
		ordma_pin_put(chan, seg->pins[--seg->npins]);
}

/* Undo ordma_seg_prepare(); feeds the model the time it took. */
static void ordma_seg_unprepare(struct ordma_chan *chan, struct ordma_seg *seg)
{
	struct ordma_dev *odev = chan->odev;
	u32 kind;
	u64 t0, ns;

	if (seg->kern && !seg->mr) {
		ib_dma_unmap_sgtable_attrs(chan->pd->device, &seg->sgt,
					   seg->write ? DMA_FROM_DEVICE :
					   DMA_TO_DEVICE, 0);
		sg_free_table(&seg->sgt);
		seg->kern = false;
		return;
	}
	if (seg->mr) {
		t0 = ordma_now();
		if (seg->fast) {
			ordma_frwr_unreg(chan, seg);
			kind = ORDMA_TRACE_REG_FRWR;
		} else {
			ib_dereg_mr(seg->mr);
			kind = ORDMA_TRACE_REG_UMR;
		}
		ns = ordma_ns_since(t0);
		seg->mr = NULL;
		seg->kern = false;
		ordma_trace(dereg, chan, seg->tid, kind, seg->len, seg->pinned,
			    ns, 0);
		spin_lock(&odev->model_lock);
		ordma_model_dereg(&odev->model, ns);
		spin_unlock(&odev->model_lock);
		atomic_dec(&odev->mrs_live);
		atomic_dec(&chan->mrs_live);
	} else if (seg->npins) {
		ordma_trace(dereg, chan, seg->tid, ORDMA_TRACE_REG_PIN,
			    seg->len, seg->pinned, 0, 0);
	}
	/* The cache's ranges carry their own charge. */
	if (!seg->npins)
		ordma_memlock_uncharge(chan->ofile, seg->pinned);
	ordma_seg_let_go(chan, seg);
}

/* A window's segment is deregistered: unexpose may wait for that. */
static void ordma_seg_unlist(struct ordma_chan *chan, struct ordma_seg *seg)
{
	struct ordma_file *ofile = chan->ofile;

	if (!seg->wtoken)
		return;
	spin_lock(&ofile->wsegs_lock);
	list_del(&seg->w_node);
	spin_unlock(&ofile->wsegs_lock);
	wake_up_all(&ofile->unplace_wait);
}

/*
 * A RECV's segment is deregistered: the RECV completes if it is done and
 * this was the last (struct ordma_req dereg_wait).
 */
static void ordma_seg_disown(struct ordma_chan *chan, struct ordma_seg *seg)
{
	struct ordma_req *op = seg->owner;

	seg->owner = NULL;
	if (op && atomic_dec_return(&op->dereg_wait) < 0)
		ordma_file_complete(chan->ofile, op, op->res);
}

static void ordma_seg_free(struct ordma_chan *chan, struct ordma_seg *seg)
{
	unsigned long flags;

	ordma_seg_unprepare(chan, seg);
	ordma_seg_disown(chan, seg);
	ordma_seg_unlist(chan, seg);
	spin_lock_irqsave(&chan->lock, flags);
	list_del(&seg->all_node);
	if (!seg->standing)
		WRITE_ONCE(chan->nsegs, chan->nsegs - 1);
	spin_unlock_irqrestore(&chan->lock, flags);
	kfree(seg);
	/* A segment slot is free: the worker may want it. */
	ordma_chan_kick(chan);
}

/* The pages of [@uaddr, @uaddr + @len). */
static u32 ordma_seg_npages(u64 uaddr, u64 len)
{
	return (PAGE_ALIGN(uaddr + len) - (uaddr & PAGE_MASK)) >> PAGE_SHIFT;
}

/* A segment holds its pinned ranges: count its pages as pinned. */
static void ordma_seg_hold(struct ordma_chan *chan, struct ordma_seg *seg)
{
	seg->pinned = ordma_seg_npages(seg->uaddr, seg->len);
	atomic64_add(seg->pinned, &chan->odev->pages_pinned);
	atomic64_add(seg->pinned, &chan->pages_pinned);
}

/* Count a registration of @seg that took @ns. */
static void ordma_seg_counted(struct ordma_chan *chan, struct ordma_seg *seg,
			      u64 ns)
{
	atomic64_inc(&chan->odev->registrations);
	atomic64_inc(&chan->registrations);
	atomic64_add(ns, &chan->odev->reg_ns);
	seg->reg_ns = ns;
}

/*
 * Readying @seg took @ns for @npages pages pinned now: count it and feed the
 * cost model (small segments measure the fixed cost of a registration,
 * larger ones the cost per page).
 */
static void ordma_seg_measured(struct ordma_chan *chan, struct ordma_seg *seg,
			       u32 npages, u64 ns)
{
	struct ordma_dev *odev = chan->odev;

	spin_lock(&odev->model_lock);
	if (npages <= ORDMA_SEG_SMALL_PAGES)
		ordma_model_reg(&odev->model, ns);
	else
		ordma_model_pin(&odev->model, npages,
				ns - min(ns, odev->model.reg_ns));
	spin_unlock(&odev->model_lock);
	ordma_seg_counted(chan, seg, ns);
}

/*
 * A source is pinned and DMA-mapped, no MR (pin.c): what the cache does not
 * hold yet is pinned now. Feeds the cost model what pinning cost.
 */
static int ordma_seg_pin(struct ordma_chan *chan, struct ordma_seg *seg)
{
	u32 pinned;
	u64 t0, ns;
	int ret;

	t0 = ordma_now();
	ret = ordma_pin_get(chan, seg->uaddr, seg->len, true, false, seg->pins,
			    &seg->npins, &pinned);
	if (ret)
		return ret;
	ns = ordma_ns_since(t0);
	ordma_seg_hold(chan, seg);
	if (pinned)
		ordma_seg_measured(chan, seg, pinned, ns);
	return 0;
}

/*
 * A kernel user's range: [@seg->uaddr, + @seg->len) of @kmem (its
 * offsets are @seg's addresses), DMA-mapped as it is: kernel pages need no
 * pinning. A source is sent from with the PD's local_dma_lkey; a
 * destination is still fast-registered by the registration worker.
 */
static int ordma_seg_map_kern(struct ordma_chan *chan, struct ordma_seg *seg,
			      const struct ordma_kmem *kmem)
{
	enum dma_data_direction dir = seg->write ? DMA_FROM_DEVICE :
						   DMA_TO_DEVICE;
	u64 start = seg->uaddr, end = seg->uaddr + seg->len, pos, off, take;
	struct ordma_kmem_iter it;
	struct scatterlist *sg;
	unsigned int n = 0;
	struct bio_vec bv;
	int ret;

	/* The entries the range touches, then each one's part of it. */
	ordma_kmem_iter_init(&it, kmem);
	for (pos = 0; pos < end && ordma_kmem_next(&it, &bv); pos += bv.bv_len)
		n += pos + bv.bv_len > start;
	if (WARN_ON_ONCE(pos < end || !n))
		return -EINVAL;
	ret = sg_alloc_table(&seg->sgt, n, GFP_KERNEL);
	if (ret)
		return ret;
	sg = seg->sgt.sgl;
	ordma_kmem_iter_init(&it, kmem);
	for (pos = 0; pos < end && ordma_kmem_next(&it, &bv); pos += bv.bv_len) {
		if (pos + bv.bv_len <= start)
			continue;
		off = start > pos ? start - pos : 0;
		take = min_t(u64, end - pos, bv.bv_len) - off;
		off += bv.bv_offset;
		sg_set_page(sg, nth_page(bv.bv_page, off >> PAGE_SHIFT), take,
			    offset_in_page(off));
		sg = sg_next(sg);
	}
	ret = ib_dma_map_sgtable_attrs(chan->pd->device, &seg->sgt, dir, 0);
	if (ret) {
		sg_free_table(&seg->sgt);
		return ret;
	}
	seg->kern = true;
	return 0;
}

/*
 * rdma_rxe (6.1) keeps an MR's pages in maps of 256 and, copying to or from
 * the MR, steps to the next map after the last page of a full one even when
 * nothing is left to copy: with a page count that is a multiple of 256, a
 * transfer that ends in the MR's last page reads past its array of maps
 * (KASAN: slab-out-of-bounds in rxe_mr_copy). No segment has such a page
 * count; it costs one page to the next segment.
 */
#define ORDMA_SEG_PAGES_AVOID	256

/* The pages a kernel user's segment spans, entry by entry. */
static u32 ordma_seg_kern_pages(struct ordma_seg *seg)
{
	struct scatterlist *sg;
	unsigned int i;
	u32 n = 0;

	for_each_sgtable_sg(&seg->sgt, sg, i)
		n += DIV_ROUND_UP(sg->offset + sg->length, PAGE_SIZE);
	return n;
}

/*
 * A kernel user's destination: mapped now (not at queueing: nothing may
 * write into pages mapped for the device but the device) and
 * fast-registered; where that fails, unmapped again before the bytes are
 * copied into the pages instead. Nothing is pinned, and the cost is not
 * what the model measures.
 */
static int ordma_seg_prepare_kern(struct ordma_chan *chan,
				  struct ordma_seg *seg)
{
	u32 npages;
	u64 t0;
	int ret;

	ret = ordma_seg_map_kern(chan, seg, &seg->kmem);
	if (ret)
		return ret;
	npages = ordma_seg_kern_pages(seg);
	/* Its pages need not follow its offsets: copied instead. */
	if (ib_uses_virt_dma(chan->pd->device) && npages > 1 &&
	    !(npages % ORDMA_SEG_PAGES_AVOID)) {
		ret = -EINVAL;
		goto unmap;
	}
	t0 = ordma_now();
	ret = ordma_frwr_reg(chan, seg, npages, ORDMA_IOVA_BASE);
	if (ret)
		goto unmap;
	atomic_inc(&chan->odev->mrs_live);
	atomic_inc(&chan->mrs_live);
	ordma_seg_counted(chan, seg, ordma_ns_since(t0));
	return 0;

unmap:
	ordma_seg_unprepare(chan, seg);
	return ret;
}

/*
 * A user's destination whose pages the pin cache holds, pinned for writing
 * (what it does not hold yet is pinned now), fast-registered. Feeds the
 * cost model: a hit measures the registration alone.
 * Return: as ordma_frwr_reg(), or -E2BIG (more ranges than a segment
 * holds): the caller then registers it the other way.
 */
static int ordma_seg_prepare_dst(struct ordma_chan *chan,
				 struct ordma_seg *seg, u32 npages)
{
	struct ordma_dev *odev = chan->odev;
	u32 pinned;
	u64 t0, ns;
	int ret;

	ret = ordma_frwr_ready(chan, npages);
	if (ret)
		return ret;
	t0 = ordma_now();
	ret = ordma_pin_get(chan, seg->uaddr, seg->len, true, true, seg->pins,
			    &seg->npins, &pinned);
	if (ret)
		return ret;
	ordma_seg_hold(chan, seg);
	ret = ordma_frwr_reg(chan, seg, npages, ORDMA_IOVA_BASE);
	if (ret) {
		ordma_seg_let_go(chan, seg);
		return ret;
	}
	ns = ordma_ns_since(t0);
	atomic_inc(&odev->mrs_live);
	atomic_inc(&chan->mrs_live);
	/*
	 * The model learns what it learnt before the cache: from segments
	 * pinned whole, and from small ones (a registration's fixed cost).
	 */
	if (pinned == npages || npages <= ORDMA_SEG_SMALL_PAGES)
		ordma_seg_measured(chan, seg, npages, ns);
	else
		ordma_seg_counted(chan, seg, ns);
	return 0;
}

/*
 * Pin @seg, and register it if it is a destination. Runs in reg_work with
 * the owner's mm adopted (frwr.c, the RDMA core and pin.c pin
 * current->mm). Feeds the cost model what it took.
 */
static int ordma_seg_prepare(struct ordma_chan *chan, struct ordma_seg *seg)
{
	struct ordma_dev *odev = chan->odev;
	u32 npages = ordma_seg_npages(seg->uaddr, seg->len);
	struct ib_mr *mr;
	u64 t0, ns;
	int ret;

	if (!seg->write)
		return ordma_seg_pin(chan, seg);
	/* A kernel user's pages are mapped already, and not pinned. */
	if (seg->kmem.nr)
		return ordma_seg_prepare_kern(chan, seg);
	/* A standing one stays registered: the cache would not help. */
	if (!seg->standing) {
		ret = ordma_seg_prepare_dst(chan, seg, npages);
		if (ret != -EOPNOTSUPP && ret != -E2BIG)
			return ret;
	}
	ret = ordma_memlock_charge(chan->ofile, npages);
	if (ret)
		return ret;
	t0 = ordma_now();
	/* A destination is offered to the peer for RDMA WRITE. */
	ret = ordma_frwr_reg(chan, seg, npages, ORDMA_IOVA_BASE);
	if (ret == -EOPNOTSUPP) {
		mr = ib_reg_user_mr(chan->pd, seg->uaddr, seg->len,
				    odev->user_mr_va ? seg->uaddr :
				    ordma_seg_iova(seg->uaddr),
				    IB_ACCESS_LOCAL_WRITE |
				    IB_ACCESS_REMOTE_WRITE);
		ret = PTR_ERR_OR_ZERO(mr);
		if (!ret)
			seg->mr = mr;
	}
	if (ret) {
		ordma_memlock_uncharge(chan->ofile, npages);
		return ret;
	}
	ns = ordma_ns_since(t0);
	atomic_inc(&odev->mrs_live);
	atomic_inc(&chan->mrs_live);
	seg->pinned = npages;
	atomic64_add(npages, &odev->pages_pinned);
	atomic64_add(npages, &chan->pages_pinned);
	ordma_seg_measured(chan, seg, npages, ns);
	return 0;
}

/* Register a segment taken off reg_todo and hand it to the worker. */
static void ordma_seg_register(struct ordma_chan *chan, struct ordma_seg *seg,
			       bool mm_ok)
{
	bool abandoned;
	int ret;

	ordma_trace(reg_start, chan, seg->tid, ordma_seg_trace_kind(seg),
		    seg->len, ordma_seg_npages(seg->uaddr, seg->len), 0, 0);
	ret = mm_ok ? ordma_seg_prepare(chan, seg) : -EFAULT;
	ordma_trace(reg_done, chan, seg->tid, ordma_seg_trace_kind(seg),
		    seg->len, seg->pinned, seg->reg_ns, ret);
	spin_lock_irq(&chan->lock);
	abandoned = seg->abandoned;
	if (!abandoned) {
		/* Read without the lock by ordma_tx_source(). */
		WRITE_ONCE(seg->state, ret ? ORDMA_SEG_FAILED : ORDMA_SEG_READY);
		list_add_tail(&seg->q_node, &chan->reg_done);
	}
	spin_unlock_irq(&chan->lock);
	if (abandoned)
		ordma_seg_free(chan, seg);
	else
		ordma_chan_kick(chan);
}

/**
 * ordma_seg_end() - where a segment from @start to @end should end
 * @start: user address of its first byte
 * @end: user address just past its last byte, as planned
 *
 * Return: @end, or one page boundary earlier (see above).
 */
u64 ordma_seg_end(u64 start, u64 end)
{
	u64 first = start & PAGE_MASK;
	u64 npages = (PAGE_ALIGN(end) - first) >> PAGE_SHIFT;

	if (npages > 1 && !(npages % ORDMA_SEG_PAGES_AVOID))
		return first + ((npages - 1) << PAGE_SHIFT);
	return end;
}

/* The registration worker: segments in the order they were queued. */
static void ordma_mr_work(struct work_struct *work)
{
	struct ordma_chan *chan = container_of(work, struct ordma_chan,
					       reg_work);
	struct mm_struct *mm = chan->ofile->mm;
	/* A kernel user's file has no mm: its segments need none. */
	bool use_mm = mm && mmget_not_zero(mm);
	bool mm_ok = !mm || use_mm;
	unsigned int noio = 0;
	struct ordma_seg *seg;

	if (use_mm)
		kthread_use_mm(mm);
	/* A kernel user's I/O may be what reclaim waits for (sched.c). */
	if (!mm)
		noio = memalloc_noio_save();
	for (;;) {
		spin_lock_irq(&chan->lock);
		seg = list_first_entry_or_null(&chan->reg_todo,
					       struct ordma_seg, q_node);
		if (seg) {
			list_del_init(&seg->q_node);
			if (seg->state == ORDMA_SEG_QUEUED)
				WRITE_ONCE(seg->state, ORDMA_SEG_PINNING);
		}
		spin_unlock_irq(&chan->lock);
		if (!seg)
			break;
		if (seg->state == ORDMA_SEG_PINNING)
			ordma_seg_register(chan, seg, mm_ok);
		else	/* ORDMA_SEG_DEREG */
			ordma_seg_free(chan, seg);
		cond_resched();
	}
	/* Off every operation's path now: ready the next registrations. */
	ordma_frwr_refill(chan);
	if (!mm)
		memalloc_noio_restore(noio);
	if (use_mm) {
		kthread_unuse_mm(mm);
		mmput(mm);
	}
}

/**
 * ordma_seg_sges() - scatter entries for bytes of a source segment
 * @seg: the segment, ready
 * @addr: address of the first byte to send, inside @seg (an offset in its
 *	operation's buffer for a kernel user's)
 * @len: bytes to send
 * @lkey: the PD's local_dma_lkey
 * @sge: filled with up to @max entries, or NULL only to count
 * @max: entries available
 * @nsge: entries used
 *
 * Return: bytes the entries cover: @len, or less when @max ran out.
 */
u64 ordma_seg_sges(const struct ordma_seg *seg, u64 addr, u64 len, u32 lkey,
		   struct ib_sge *sge, u32 max, u32 *nsge)
{
	u64 off = addr - seg->uaddr, done = 0, n, l;
	struct scatterlist *sg;
	unsigned int i;

	if (!seg->kern)
		return ordma_pin_sges(seg->pins, seg->npins, addr, len, lkey,
				      sge, max, nsge);
	*nsge = 0;
	for_each_sgtable_dma_sg(&seg->sgt, sg, i) {
		l = sg_dma_len(sg);
		if (off >= l) {
			off -= l;
			continue;
		}
		if (*nsge == max)
			break;
		n = min(len - done, l - off);
		if (sge) {
			sge[*nsge].addr = sg_dma_address(sg) + off;
			sge[*nsge].length = n;
			sge[*nsge].lkey = lkey;
		}
		(*nsge)++;
		done += n;
		off = 0;
		if (done == len)
			break;
	}
	return done;
}

/**
 * ordma_seg_sync() - make bytes of a source segment visible to the device
 * @ibdev: the device
 * @seg: the segment
 * @addr: address of the first byte about to be sent (as ordma_seg_sges())
 * @len: bytes
 *
 * A kernel user's source was mapped after its bytes were final: nothing.
 */
void ordma_seg_sync(struct ib_device *ibdev, const struct ordma_seg *seg,
		    u64 addr, u64 len)
{
	if (!seg->kern)
		ordma_pin_sync(ibdev, seg->pins, seg->npins, addr, len, false);
}

/*
 * A new segment of @len bytes at @uaddr (a kernel user's: at offset @uaddr
 * of @kmem, which the segment keeps a copy of), of the operation of trace
 * id @tid. Every field the
 * registration worker reads is set before the segment is queued to it.
 */
static struct ordma_seg *ordma_seg_add(struct ordma_chan *chan, u64 uaddr,
				       u64 len, bool write, u64 wtoken,
				       bool standing,
				       const struct ordma_kmem *kmem, u64 tid)
{
	struct ordma_seg *seg;
	u32 limit, pinned;

	if (chan->nsegs_max == 0)
		return NULL;
	/*
	 * A destination leaves one slot to sources, so two channel ends
	 * receiving from each other in zerocopy mode can still send.
	 */
	limit = chan->nsegs_max - (write && chan->nsegs_max > 1);
	/* No allocation for nothing: only the worker adds segments. */
	if (!standing && READ_ONCE(chan->nsegs) >= limit)
		return NULL;
	if (!write && !standing && ordma_fault_now(ORDMA_FAULT_SEG_SOURCE))
		return NULL;
	seg = kzalloc(sizeof(*seg), GFP_KERNEL);
	if (!seg)
		return NULL;
	seg->uaddr = uaddr;
	seg->len = len;
	seg->write = write;
	seg->wtoken = wtoken;
	seg->standing = standing;
	seg->chan = chan;
	seg->tid = tid;
	seg->state = ORDMA_SEG_QUEUED;
	INIT_LIST_HEAD(&seg->op_node);
	INIT_LIST_HEAD(&seg->q_node);
	/*
	 * A kernel user's source, or a source the cache holds whole, is
	 * ready now: no work to queue.
	 */
	if (kmem && write) {
		/* Mapped by the registration worker. */
		seg->kmem = *kmem;
	} else if (kmem) {
		if (ordma_seg_map_kern(chan, seg, kmem)) {
			kfree(seg);
			return NULL;
		}
		seg->state = ORDMA_SEG_USED;
	} else if (!write && !ordma_pin_get(chan, uaddr, len, false, false,
					    seg->pins, &seg->npins, &pinned)) {
		ordma_seg_hold(chan, seg);
		seg->state = ORDMA_SEG_USED;
	}
	spin_lock_irq(&chan->lock);
	if (!standing && chan->nsegs >= limit) {
		spin_unlock_irq(&chan->lock);
		ordma_seg_unprepare(chan, seg);
		kfree(seg);
		return NULL;
	}
	if (!standing)
		WRITE_ONCE(chan->nsegs, chan->nsegs + 1);
	list_add_tail(&seg->all_node, &chan->segs);
	if (seg->state == ORDMA_SEG_QUEUED)
		list_add_tail(&seg->q_node, &chan->reg_todo);
	spin_unlock_irq(&chan->lock);
	if (wtoken) {
		spin_lock(&chan->ofile->wsegs_lock);
		list_add_tail(&seg->w_node, &chan->ofile->wsegs);
		spin_unlock(&chan->ofile->wsegs_lock);
	}
	if (seg->state == ORDMA_SEG_QUEUED)
		ordma_chan_queue_work(chan, &chan->reg_work);
	return seg;
}

/**
 * ordma_seg_queue() - ask for a range of a user buffer to be registered
 * @chan: the channel; called by its worker
 * @uaddr: start of the range
 * @len: its length
 * @write: the range is a destination, for the peer to RDMA WRITE into
 * @wtoken: for a destination in a window (a peer's write), the window's
 *	token, else 0; the caller holds the file's windows_rwsem for read and
 *	checked the window is there
 * @tid: the trace id of the operation it is of (0: none)
 *
 * Return: the segment (QUEUED) or NULL when out of memory or out of
 * segment slots.
 */
struct ordma_seg *ordma_seg_queue(struct ordma_chan *chan, u64 uaddr, u64 len,
				  bool write, u64 wtoken, u64 tid)
{
	ordma_chan_assert_run(chan);

	return ordma_seg_add(chan, uaddr, len, write, wtoken, false, NULL, tid);
}

/**
 * ordma_seg_queue_kern() - a range of a kernel user's buffer
 * @chan: the channel; called by its worker
 * @op: the SEND or RECV of a kernel user's file, or the placed write
 *	into a kernel user's window (chan->rx_wr)
 * @off: start of the range in @op's buffer
 * @len: its length
 * @write: a destination, for the peer to RDMA WRITE into
 * @wtoken: a window's destination: the window's token (the window is
 *	unexposed only once the segment is gone); else 0
 *
 * Return: the segment or NULL when out of memory or out of segment slots.
 * A source is ready at once (USED: DMA-mapped, sent from with the PD's
 * local_dma_lkey); a destination is mapped and QUEUED for its registration
 * (which fails, and the bytes are copied, where the bio_vecs have holes
 * inside pages that one registration cannot map).
 */
struct ordma_seg *ordma_seg_queue_kern(struct ordma_chan *chan,
				       const struct ordma_req *op, u64 off,
				       u64 len, bool write, u64 wtoken)
{
	ordma_chan_assert_run(chan);

	return ordma_seg_add(chan, off, len, write, wtoken, false, &op->kmem,
			     op->tid);
}

/**
 * ordma_seg_queue_standing() - register a window for as long as it lives
 * @chan: the channel whose peer writes into it; called by its worker
 * @uaddr: start of the window's range to register
 * @len: its length
 * @wtoken: the window's token; the caller holds the file's windows_rwsem
 *	for read and checked the window is there
 *
 * The segment takes no slot of @chan (the caller bounds how many it keeps,
 * on chan->standing); it lives until the window is unexposed and the peer
 * has let go of it, or the channel dies.
 *
 * Return: the segment (QUEUED) or NULL when out of memory.
 */
struct ordma_seg *ordma_seg_queue_standing(struct ordma_chan *chan, u64 uaddr,
					   u64 len, u64 wtoken)
{
	ordma_chan_assert_run(chan);

	return ordma_seg_add(chan, uaddr, len, true, wtoken, true, NULL, 0);
}

/**
 * ordma_seg_put() - the worker is done with a segment
 * @chan: the channel; called by its worker
 * @seg: a segment the worker queued; no send from it is still posted
 *
 * A registered segment is deregistered by the registration worker, off the
 * data path; one the worker never got back is abandoned to it.
 */
void ordma_seg_put(struct ordma_chan *chan, struct ordma_seg *seg)
{
	bool free_now = false;

	ordma_chan_assert_run(chan);
	spin_lock_irq(&chan->lock);
	switch (seg->state) {
	case ORDMA_SEG_PINNING:
		seg->abandoned = true;
		break;
	case ORDMA_SEG_QUEUED:
	case ORDMA_SEG_READY:
	case ORDMA_SEG_FAILED:
		/* Still on reg_todo or reg_done. */
		list_del_init(&seg->q_node);
		fallthrough;
	default:
		if (seg->mr) {
			seg->state = ORDMA_SEG_DEREG;
			list_add_tail(&seg->q_node, &chan->reg_todo);
		} else {
			free_now = true;
		}
		break;
	}
	spin_unlock_irq(&chan->lock);
	if (free_now)
		ordma_seg_free(chan, seg);
	else
		ordma_chan_queue_work(chan, &chan->reg_work);
}

/**
 * ordma_mr_flush() - give back every segment of a channel
 * @chan: the channel; its worker and registration worker are stopped and
 *	its QP drained, so nothing else touches a segment
 */
void ordma_mr_flush(struct ordma_chan *chan)
{
	struct ordma_seg *seg, *tmp;
	LIST_HEAD(all);

	spin_lock_irq(&chan->lock);
	list_splice_init(&chan->segs, &all);
	INIT_LIST_HEAD(&chan->reg_todo);
	INIT_LIST_HEAD(&chan->reg_done);
	spin_unlock_irq(&chan->lock);
	list_for_each_entry_safe(seg, tmp, &all, all_node) {
		list_del(&seg->all_node);
		list_del_init(&seg->op_node);
		ordma_seg_unprepare(chan, seg);
		ordma_seg_disown(chan, seg);
		ordma_seg_unlist(chan, seg);
		kfree(seg);
	}
	chan->nsegs = 0;
	ordma_frwr_destroy(chan);
	ordma_pin_flush(chan);
}

/**
 * ordma_mr_setup() - may a new channel send from registered segments?
 * @chan: the channel, its QP just created
 *
 * It needs two send SGEs (a header from a chunk and a payload from a
 * segment's pages, more for pages that are not contiguous); without them
 * everything goes through the copy path.
 */
void ordma_mr_setup(struct ordma_chan *chan)
{
	chan->nsegs_max = 0;
	if (chan->send_sge < 2)
		return;
	chan->nsegs_max = ORDMA_SEG_DEPTH;
	chan->seg_cap = (u64)ORDMA_SEG_MAX_PAGES << PAGE_SHIFT;
}

/**
 * ordma_mr_init() - the registration worker of a new channel
 * @chan: the channel, just allocated
 */
void ordma_mr_init(struct ordma_chan *chan)
{
	INIT_WORK(&chan->reg_work, ordma_mr_work);
	ordma_frwr_init(chan);
	ordma_pin_init(chan);
}
