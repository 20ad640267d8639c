// SPDX-License-Identifier: GPL-2.0
/*
 * Fast registration of destinations: the memory a peer writes into.
 *
 * A destination's pages are pinned for writing (FOLL_LONGTERM) and
 * DMA-mapped, charged to the owner's RLIMIT_MEMLOCK: by the channel's pin
 * cache (pin.c), which keeps them for the next receive into the same
 * buffer, or here (mr.c has charged them) for a standing registration, or
 * a destination made of more ranges than a segment holds.
 * They are made reachable through an MR of the channel's PD by an
 * IB_WR_REG_MR work request. The rkey changes at every registration (ib_inc_rkey()), and the
 * registration ends before the segment is given back, so before the RECV
 * that owned it completes or the window that owned it is unexposed: once
 * the application has its completion, no write of the peer's reaches the
 * buffer, and a peer holding an old rkey holds nothing.
 *
 * How it ends depends on who moves the bytes. A device that DMAs stops
 * using the MR when a LOCAL_INV completes; the MR is then kept for the
 * next segment. A software device (rdma_rxe, siw: ib_uses_virt_dma())
 * copies with the CPU under a reference to the MR that it takes when a
 * packet passes the rkey check and drops once the packet is copied: its
 * LOCAL_INV completes without waiting for that copy, so up to a packet
 * could still be written after we unpinned the pages. There the MR is
 * deregistered instead: ib_dereg_mr() waits for the device's references,
 * and the next segment gets a new MR (and so a new key).
 *
 * The work requests do not go on the channel's QP: rdma_rxe (6.1) runs
 * local work requests again when a retry (RNR, a lost ack) rewinds the send
 * queue, and a REG_MR run twice fails the QP. They go on a queue pair of
 * their own in the same PD, connected to itself, which never carries a
 * packet and so never retries. An MR belongs to its PD, not to a QP: the
 * channel's QP honours the rkey as if it had registered it.
 *
 * The queue pair and its CQ are made at the channel's first destination
 * and kept until it closes. On a device that DMAs, an MR for a segment (at
 * most ORDMA_SEG_MAX_PAGES) goes back to a small stash when invalidated,
 * so a steady stream of receives allocates none; on a software device the
 * registration worker fills the stash with new MRs when it is idle
 * (ordma_frwr_refill()), so the allocation is not on a receive's way. A
 * standing registration (a window, up to ORDMA_STAND_MAX_PAGES) gets an MR
 * of its own size. A destination whose pages the pin cache holds is
 * mapped from a scatter list of the channel's (@sgl): the worker registers
 * one at a time.
 *
 * A device without memory management extensions, an iWARP device (its QPs
 * cannot be connected to themselves), a window larger than the device's
 * page lists, or a registration QP that failed once: ordma_frwr_reg() says
 * -EOPNOTSUPP and mr.c falls back to ib_reg_user_mr().
 *
 * Context: the channel's registration worker, or ordma_mr_flush() once it
 * has stopped: one caller at a time, one work request at a time, sleeping
 * until it completes (completions come in softirq context).
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/scatterlist.h>

#include "chan.h"
#include "fault.h"

/* Page list of a segment's MR (op.c cuts segments to span no more pages). */
#define ORDMA_FRWR_SEG_SG	ORDMA_SEG_MAX_PAGES

static void ordma_frwr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ordma_frwr *fr = container_of(wc->wr_cqe, struct ordma_frwr,
					     cqe);

	fr->status = wc->status;
	complete(&fr->done);
}

/* Post @wr on the registration QP and wait for its completion. */
static int ordma_frwr_run(struct ordma_frwr *fr, struct ib_send_wr *wr)
{
	int ret;

	wr->wr_cqe = &fr->cqe;
	wr->send_flags = IB_SEND_SIGNALED;
	reinit_completion(&fr->done);
	/*
	 * As wr.c posts: rdma_rxe (6.1) runs the work request in a tasklet,
	 * which with bottom halves off runs here when they come back on,
	 * with the CQ's softirq that completes @fr->done, instead of in
	 * ksoftirqd after a switch to it and back.
	 */
	local_bh_disable();
	if (ordma_fault_now(ORDMA_FAULT_REG))
		ret = -EIO;
	else
		ret = ib_post_send(fr->qp, wr, NULL);
	local_bh_enable();
	if (ret)
		goto broken;
	wait_for_completion(&fr->done);
	if (fr->status == IB_WC_SUCCESS)
		return 0;
	ret = -EIO;
broken:
	/* In the error state now, or unusable: nothing more is posted. */
	fr->broken = true;
	return ret;
}

/*
 * Bring @qp to RTS connected to itself, on the port and path of the
 * channel's QP. It never sends, so the address only has to be valid.
 */
static int ordma_frwr_connect(struct ordma_chan *chan, struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr cur = {}, attr = {};
	int ret;

	ret = ib_query_qp(chan->qp, &cur, IB_QP_AV | IB_QP_PATH_MTU |
			  IB_QP_PORT | IB_QP_PKEY_INDEX, &init);
	if (ret)
		return ret;

	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = cur.pkey_index;
	attr.port_num = rdma_ah_get_port_num(&cur.ah_attr);
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.ah_attr = cur.ah_attr;
	attr.path_mtu = cur.path_mtu;
	attr.dest_qp_num = qp->qp_num;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = IB_RNR_TIMER_000_32;
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/* Make the registration QP and its CQ, or say why there is none. */
static int ordma_frwr_setup(struct ordma_chan *chan)
{
	struct ordma_frwr *fr = &chan->frwr;
	struct ib_device *ibdev = chan->pd->device;
	struct ib_qp_init_attr init = {
		.cap = {
			.max_send_wr = 2,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_cq *cq;
	struct ib_qp *qp;
	int ret;

	if (!(ibdev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) ||
	    ibdev->attrs.max_fast_reg_page_list_len < ORDMA_FRWR_SEG_SG ||
	    rdma_protocol_iwarp(ibdev, chan->qp->port))
		return -EOPNOTSUPP;

	fr->sgl = kvmalloc_array(ORDMA_FRWR_SEG_SG, sizeof(*fr->sgl),
				 GFP_KERNEL);
	if (!fr->sgl)
		return -ENOMEM;
	sg_init_table(fr->sgl, ORDMA_FRWR_SEG_SG);
	cq = ib_alloc_cq(ibdev, NULL, 2, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(cq)) {
		ret = PTR_ERR(cq);
		goto free_sgl;
	}
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ib_create_qp(chan->pd, &init);
	if (IS_ERR(qp)) {
		ret = PTR_ERR(qp);
		goto free_cq;
	}
	ret = ordma_frwr_connect(chan, qp);
	if (ret)
		goto destroy_qp;
	fr->cq = cq;
	fr->qp = qp;
	return 0;

destroy_qp:
	ib_destroy_qp(qp);
free_cq:
	ib_free_cq(cq);
free_sgl:
	kvfree(fr->sgl);
	fr->sgl = NULL;
	return ret;
}

/* An MR for @seg: from the stash, or new. */
static struct ib_mr *ordma_frwr_mr_get(struct ordma_chan *chan,
				       struct ordma_seg *seg, u32 nsg)
{
	struct ordma_frwr *fr = &chan->frwr;

	if (!seg->standing && fr->nidle)
		return fr->idle[--fr->nidle];
	return ib_alloc_mr(chan->pd, IB_MR_TYPE_MEM_REG,
			   seg->standing ? nsg : ORDMA_FRWR_SEG_SG);
}

/**
 * ordma_frwr_refill() - make MRs for the next destinations ahead of them
 * @chan: the channel; called by its registration worker when it has
 *	nothing left to do
 *
 * A software device's MRs are not kept once used (see the top of the
 * file), so each destination would allocate one on its way to the peer.
 * Once a channel has registered destinations, this keeps two never
 * registered ones at hand, made while nothing waits.
 */
void ordma_frwr_refill(struct ordma_chan *chan)
{
	struct ordma_frwr *fr = &chan->frwr;
	struct ib_mr *mr;

	if (!fr->qp || fr->broken || !ib_uses_virt_dma(chan->pd->device))
		return;
	while (fr->nidle < 2) {
		mr = ib_alloc_mr(chan->pd, IB_MR_TYPE_MEM_REG,
				 ORDMA_FRWR_SEG_SG);
		if (IS_ERR(mr))
			return;
		fr->idle[fr->nidle++] = mr;
	}
}

/*
 * Keep @mr, invalid now (or never valid), for the next segment, or free
 * it; a software device's MRs are never kept (see the top of the file).
 */
static void ordma_frwr_mr_put(struct ordma_chan *chan, struct ordma_seg *seg,
			      struct ib_mr *mr)
{
	struct ordma_frwr *fr = &chan->frwr;

	if (!seg->standing && !fr->broken &&
	    !ib_uses_virt_dma(chan->pd->device) &&
	    fr->nidle < ARRAY_SIZE(fr->idle))
		fr->idle[fr->nidle++] = mr;
	else
		ib_dereg_mr(mr);
}

/*
 * Undo the mapping of @seg (ordma_frwr_pin()'s or mr.c's for a kernel
 * user's), and the pinning; @seg->mr is invalid. @dirty: the peer may have
 * written into the pages. Pages of the pin cache stay pinned and mapped:
 * mr.c lets go of the ranges.
 */
static void ordma_frwr_release(struct ordma_chan *chan, struct ordma_seg *seg,
			       bool dirty)
{
	struct ib_device *ibdev = chan->pd->device;

	if (seg->npins) {
		if (dirty) {
			ordma_pin_sync(ibdev, seg->pins, seg->npins,
				       seg->uaddr, seg->len, true);
			ordma_pin_dirty(seg->pins, seg->npins, seg->uaddr,
					seg->len);
		}
		return;
	}
	ib_dma_unmap_sgtable_attrs(ibdev, &seg->sgt, DMA_FROM_DEVICE, 0);
	sg_free_table(&seg->sgt);
	if (seg->kern)
		return;
	if (dirty)
		unpin_user_pages_dirty_lock(seg->dpages, seg->ndpages, true);
	else
		unpin_user_pages(seg->dpages, seg->ndpages);
	kvfree(seg->dpages);
	seg->dpages = NULL;
	seg->ndpages = 0;
}

/* Pin a user's destination for writing and DMA-map it into @seg->sgt. */
static int ordma_frwr_pin(struct ordma_chan *chan, struct ordma_seg *seg,
			  u32 npages)
{
	struct ib_device *ibdev = chan->pd->device;
	int got, ret;

	seg->dpages = kvmalloc_array(npages, sizeof(*seg->dpages), GFP_KERNEL);
	if (!seg->dpages)
		return -ENOMEM;
	got = pin_user_pages_fast(seg->uaddr & PAGE_MASK, npages,
				  FOLL_WRITE | FOLL_LONGTERM, seg->dpages);
	if (got != npages) {
		ret = got < 0 ? got : -EFAULT;
		if (got > 0)
			unpin_user_pages(seg->dpages, got);
		goto free_pages;
	}
	seg->ndpages = npages;
	ret = sg_alloc_table_from_pages(&seg->sgt, seg->dpages, npages,
					offset_in_page(seg->uaddr), seg->len,
					GFP_KERNEL);
	if (ret)
		goto unpin;
	ret = ib_dma_map_sgtable_attrs(ibdev, &seg->sgt, DMA_FROM_DEVICE, 0);
	if (ret)
		goto free_sgt;
	return 0;

free_sgt:
	sg_free_table(&seg->sgt);
unpin:
	unpin_user_pages(seg->dpages, npages);
	seg->ndpages = 0;
free_pages:
	kvfree(seg->dpages);
	seg->dpages = NULL;
	return ret;
}

/**
 * ordma_frwr_ready() - can this channel fast-register a destination?
 * @chan: the channel; called by the registration worker
 * @npages: the pages the destination spans
 *
 * Makes the registration QP at the first call.
 *
 * Return: 0; -EOPNOTSUPP when it cannot (the caller registers another
 * way); -ENOMEM.
 */
int ordma_frwr_ready(struct ordma_chan *chan, u32 npages)
{
	struct ordma_frwr *fr = &chan->frwr;
	int ret;

	if (fr->broken ||
	    npages > chan->pd->device->attrs.max_fast_reg_page_list_len)
		return -EOPNOTSUPP;
	if (fr->qp)
		return 0;
	ret = ordma_frwr_setup(chan);
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		/* Do not try again for every segment. */
		fr->broken = true;
		return -EOPNOTSUPP;
	}
	return 0;
}

/**
 * ordma_frwr_reg() - register a destination by fast registration
 * @chan: its channel; called by the registration worker, with the owner's
 *	mm adopted
 * @seg: the destination (@seg->write), not registered: its pages held in
 *	ranges of the pin cache (@seg->npins), or to be pinned here (their
 *	pages are charged to the owner's RLIMIT_MEMLOCK), or a kernel
 *	user's, mapped already (@seg->kern)
 * @npages: the pages it spans
 * @iova_base: the page-aligned address its first page has for the peer
 *
 * On success @seg->mr is valid for local and remote write with a new rkey,
 * and ordma_frwr_unreg() must end it.
 *
 * Return: 0; -EOPNOTSUPP when this channel cannot fast-register @seg (the
 * caller registers it another way); -ENOMEM; -EFAULT when the range is not
 * writable memory; -EIO when the device failed the registration; for
 * ranges of the pin cache, -E2BIG when they span more pages than an MR
 * of a segment holds (the caller registers it another way), -EINVAL when
 * they do not cover it for writing.
 */
int ordma_frwr_reg(struct ordma_chan *chan, struct ordma_seg *seg,
		   u32 npages, u64 iova_base)
{
	struct ordma_frwr *fr = &chan->frwr;
	struct ib_device *ibdev = chan->pd->device;
	struct ib_reg_wr wr = {};
	struct scatterlist *sgl;
	struct ib_mr *mr;
	int got, ret, nents;

	ret = ordma_frwr_ready(chan, npages);
	if (ret)
		return ret;

	if (seg->npins) {
		/* The pin cache's pages: entries only for ib_map_mr_sg(). */
		nents = ordma_pin_sg(seg->pins, seg->npins, seg->uaddr,
				     seg->len, fr->sgl, ORDMA_FRWR_SEG_SG);
		if (nents < 0)
			return nents;
		sgl = fr->sgl;
		/* The owner may have written them since they were mapped. */
		ordma_pin_sync(ibdev, seg->pins, seg->npins, seg->uaddr,
			       seg->len, false);
	} else {
		/* A kernel user's pages are not pinned: mr.c mapped them. */
		if (!seg->kern) {
			ret = ordma_frwr_pin(chan, seg, npages);
			if (ret)
				return ret;
		}
		sgl = seg->sgt.sgl;
		nents = seg->sgt.nents;
	}

	mr = ordma_frwr_mr_get(chan, seg, npages);
	if (IS_ERR(mr)) {
		ret = PTR_ERR(mr);
		goto unmap;
	}
	/* Short where entries inside the range do not fill whole pages. */
	got = ib_map_mr_sg(mr, sgl, nents, NULL, PAGE_SIZE);
	if (got != nents) {
		ret = got < 0 ? got : -EINVAL;
		goto put_mr;
	}
	/*
	 * The peer sees where in a page the buffer starts, nothing more: the
	 * offset of the first byte in its DMA page (which a bounce buffer
	 * may move), on @iova_base.
	 */
	mr->iova = iova_base + (mr->iova & ~PAGE_MASK);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));

	wr.wr.opcode = IB_WR_REG_MR;
	wr.mr = mr;
	wr.key = mr->rkey;
	wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	ret = ordma_frwr_run(fr, &wr.wr);
	if (ret)
		goto put_mr;
	seg->mr = mr;
	seg->fast = true;
	return 0;

put_mr:
	/* fr->broken when the device failed it: the MR is freed, not kept. */
	ordma_frwr_mr_put(chan, seg, mr);
unmap:
	/* A kernel user's mapping is mr.c's to undo. */
	if (!seg->kern)
		ordma_frwr_release(chan, seg, false);
	return ret;
}

/**
 * ordma_frwr_unreg() - end a fast registration and let its pages go
 * @chan: its channel; called by the registration worker, or by
 *	ordma_mr_flush() once that has stopped
 * @seg: a segment ordma_frwr_reg() registered
 *
 * When this returns the peer can no longer write into @seg's pages: the
 * MR was invalidated (or deregistered: on a software device, or when the
 * registration QP has failed), and only then were the pages unmapped and
 * unpinned, or, when they are the pin cache's, synced for the CPU and
 * marked dirty (a file's): mr.c then lets go of the ranges.
 */
void ordma_frwr_unreg(struct ordma_chan *chan, struct ordma_seg *seg)
{
	struct ordma_frwr *fr = &chan->frwr;
	struct ib_send_wr wr = {};
	struct ib_mr *mr = seg->mr;

	if (!fr->broken && !ib_uses_virt_dma(chan->pd->device)) {
		wr.opcode = IB_WR_LOCAL_INV;
		wr.ex.invalidate_rkey = mr->rkey;
		ordma_frwr_run(fr, &wr);
	}
	/* Else, or if the LOCAL_INV failed (fr->broken): deregistered. */
	ordma_frwr_mr_put(chan, seg, mr);
	seg->mr = NULL;
	seg->fast = false;
	ordma_frwr_release(chan, seg, true);
}

/**
 * ordma_frwr_init() - a new channel has no registration QP yet
 * @chan: the channel, just allocated
 */
void ordma_frwr_init(struct ordma_chan *chan)
{
	struct ordma_frwr *fr = &chan->frwr;

	init_completion(&fr->done);
	fr->cqe.done = ordma_frwr_done;
}

/**
 * ordma_frwr_destroy() - free the registration QP, its CQ and the MRs
 * @chan: the channel; every segment has been given back
 * (ordma_mr_flush()), before its PD goes
 */
void ordma_frwr_destroy(struct ordma_chan *chan)
{
	struct ordma_frwr *fr = &chan->frwr;

	while (fr->nidle)
		ib_dereg_mr(fr->idle[--fr->nidle]);
	if (fr->qp) {
		ib_destroy_qp(fr->qp);
		fr->qp = NULL;
	}
	if (fr->cq) {
		ib_free_cq(fr->cq);
		fr->cq = NULL;
	}
	kvfree(fr->sgl);
	fr->sgl = NULL;
	fr->broken = false;
}
