/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordma-blk's kernel-version shims, here and nowhere else: the queue limits
 * of a new blk-mq disk are set before it exists from 6.9 on (struct
 * queue_limits given to blk_mq_alloc_disk(): ORDMA_BLK_HAVE_DISK_LIMITS),
 * and its write cache is a feature of those limits from 6.11 on
 * (ORDMA_BLK_HAVE_FEATURES); before, setters change them on the disk's
 * queue. A class attribute's store takes const pointers from 6.4 on
 * (ORDMA_BLK_HAVE_CONST_CLASS). The Kbuild looks for them in the kernel's
 * headers.
 */
#ifndef _ORDMA_BLK_COMPAT_H
#define _ORDMA_BLK_COMPAT_H

#include <linux/blk-mq.h>
#include <linux/blkdev.h>

#ifdef ORDMA_BLK_HAVE_CONST_CLASS
#define ORDMA_BLK_CLASS_CONST const
#else
#define ORDMA_BLK_CLASS_CONST
#endif

/**
 * struct ordma_blk_limits - what the initiator's disk is like
 * @max_hw_sectors: the largest READ or WRITE, in sectors
 * @max_discard_sectors: the largest DISCARD, in sectors; 0 for none
 * @write_cache: it has a volatile cache (FLUSH and FUA are passed on)
 */
struct ordma_blk_limits {
	unsigned int max_hw_sectors;
	unsigned int max_discard_sectors;
	bool write_cache;
};

/**
 * ordma_blk_alloc_disk() - a blk-mq disk of 512-byte sectors
 * @set: its tag set
 * @l: its limits
 * @queuedata: the queue's queuedata
 *
 * Context: process context, may sleep.
 * Return: the disk, or an ERR_PTR().
 */
static inline struct gendisk *
ordma_blk_alloc_disk(struct blk_mq_tag_set *set,
		     const struct ordma_blk_limits *l, void *queuedata)
{
#ifdef ORDMA_BLK_HAVE_DISK_LIMITS
	struct queue_limits lim = {
		.logical_block_size = SECTOR_SIZE,
		.max_hw_sectors = l->max_hw_sectors,
		.max_hw_discard_sectors = l->max_discard_sectors,
		.discard_granularity = l->max_discard_sectors ? PAGE_SIZE : 0,
	};
	struct gendisk *disk;

#ifdef ORDMA_BLK_HAVE_FEATURES
	if (l->write_cache)
		lim.features |= BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA;
#endif
	disk = blk_mq_alloc_disk(set, &lim, queuedata);
#ifndef ORDMA_BLK_HAVE_FEATURES
	if (!IS_ERR(disk))
		blk_queue_write_cache(disk->queue, l->write_cache,
				      l->write_cache);
#endif
	return disk;
#else
	struct gendisk *disk = blk_mq_alloc_disk(set, queuedata);
	struct request_queue *q;

	if (IS_ERR(disk))
		return disk;
	q = disk->queue;
	blk_queue_logical_block_size(q, SECTOR_SIZE);
	blk_queue_max_hw_sectors(q, l->max_hw_sectors);
	if (l->max_discard_sectors) {
		blk_queue_max_discard_sectors(q, l->max_discard_sectors);
		q->limits.discard_granularity = PAGE_SIZE;
	}
	blk_queue_write_cache(q, l->write_cache, l->write_cache);
	return disk;
#endif
}

#endif /* _ORDMA_BLK_COMPAT_H */
