/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A kernel user's memory, in the three forms <linux/ordma.h> takes: an
 * array of bio_vecs, of kvecs (linear-map addresses), or a scatterlist.
 * kmem.c counts, copies and walks it; nothing above it looks at the form.
 */
#ifndef _ORDMA_KMEM_H
#define _ORDMA_KMEM_H

#include <linux/bvec.h>
#include <linux/scatterlist.h>
#include <linux/types.h>
#include <linux/uio.h>

/**
 * struct ordma_kmem - a kernel user's buffer
 * @bvec: its bio_vecs (@type ORDMA_KBUF_BVEC)
 * @kvec: its kvecs (ORDMA_KBUF_KVEC)
 * @sgl: its scatterlist (ORDMA_KBUF_SG)
 * @nr: entries that cover the buffer (ordma_kmem_count()); 0: no kernel
 *	buffer (the operation or window is a process's)
 * @type: enum ordma_kbuf
 *
 * The owner keeps the array and the memory until ordma is done with them.
 */
struct ordma_kmem {
	union {
		const struct bio_vec *bvec;
		const struct kvec *kvec;
		struct scatterlist *sgl;
	};
	u32 nr;
	u8 type;
};

/**
 * struct ordma_kmem_iter - a walk over a buffer's entries
 * @mem: the buffer
 * @i: entries walked
 * @sg: the next scatterlist entry (ORDMA_KBUF_SG)
 */
struct ordma_kmem_iter {
	const struct ordma_kmem *mem;
	u32 i;
	struct scatterlist *sg;
};

int ordma_kmem_count(struct ordma_kmem *mem, u32 nr_segs, u64 len);
unsigned long ordma_kmem_copy(const struct ordma_kmem *mem, u64 len, u64 off,
			      void *buf, u64 n, bool from_mem);
void ordma_kmem_iter_init(struct ordma_kmem_iter *it,
			  const struct ordma_kmem *mem);
bool ordma_kmem_next(struct ordma_kmem_iter *it, struct bio_vec *bv);

#endif /* _ORDMA_KMEM_H */
