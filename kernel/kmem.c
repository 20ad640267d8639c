// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel user's memory (struct ordma_kmem): how many entries cover a
 * request, copies between it and a pool chunk, and a walk of its entries
 * as bio_vecs for the DMA mapping of a zero-copy segment. The three forms
 * differ here only.
 *
 * A kvec's range must lie in the linear map (kmalloc, the page allocator):
 * it is walked as pages for zero-copy, which vmalloc and stack memory are
 * not.
 */
#include <linux/mm.h>
#include <linux/ordma.h>
#include <linux/scatterlist.h>
#include <linux/uio.h>

#include "compat.h"
#include "kmem.h"

/* The entry after @it's last as a bio_vec, or false past the last. */
static bool ordma_kmem_entry(struct ordma_kmem_iter *it, u32 nr_segs,
			     struct bio_vec *bv)
{
	const struct ordma_kmem *mem = it->mem;
	const struct kvec *kv;

	if (it->i >= nr_segs)
		return false;
	switch (mem->type) {
	case ORDMA_KBUF_BVEC:
		*bv = mem->bvec[it->i];
		break;
	case ORDMA_KBUF_KVEC:
		kv = &mem->kvec[it->i];
		bv->bv_page = virt_to_page(kv->iov_base);
		bv->bv_offset = offset_in_page(kv->iov_base);
		bv->bv_len = kv->iov_len;
		break;
	case ORDMA_KBUF_SG:
		if (!it->sg)
			return false;
		bv->bv_page = sg_page(it->sg);
		bv->bv_offset = it->sg->offset;
		bv->bv_len = it->sg->length;
		it->sg = sg_next(it->sg);
		break;
	default:
		return false;
	}
	it->i++;
	return true;
}

/* Is the kvec entry @kv memory ordma may walk as pages? */
static bool ordma_kvec_ok(const struct kvec *kv)
{
	const char *p = kv->iov_base;

	return p && virt_addr_valid(p) && virt_addr_valid(p + kv->iov_len - 1);
}

/**
 * ordma_kmem_count() - check a kernel user's buffer and count its entries
 * @mem: the buffer, @type and its array set; @nr is set here
 * @nr_segs: entries the array has
 * @len: bytes the operation covers, from the start
 *
 * None of the entries that cover @len may be empty (an empty entry would
 * put a page nobody offered into a registration), they must cover @len,
 * and a kvec's must lie in the linear map.
 *
 * Return: 0, or -EINVAL.
 */
int ordma_kmem_count(struct ordma_kmem *mem, u32 nr_segs, u64 len)
{
	struct ordma_kmem_iter it;
	struct bio_vec bv;
	u64 have = 0;

	mem->nr = 0;
	if (!mem->bvec || !len || len > ORDMA_KREQ_MAX_LEN ||
	    mem->type > ORDMA_KBUF_SG)
		return -EINVAL;
	ordma_kmem_iter_init(&it, mem);
	while (have < len && ordma_kmem_entry(&it, nr_segs, &bv)) {
		if (!bv.bv_len)
			return -EINVAL;
		if (mem->type == ORDMA_KBUF_KVEC &&
		    !ordma_kvec_ok(&mem->kvec[it.i - 1]))
			return -EINVAL;
		have += bv.bv_len;
	}
	if (have < len)
		return -EINVAL;
	mem->nr = it.i;
	return 0;
}

/**
 * ordma_kmem_copy() - copy between a buffer and a pool chunk
 * @mem: the buffer, counted (ordma_kmem_count())
 * @len: bytes of it that may be touched, from its start
 * @off: where in it
 * @buf: the chunk's bytes
 * @n: bytes; [@off, @off + @n) lies within @len
 * @from_mem: copy out of @mem into @buf, else into @mem
 *
 * Context: process context (copies with the CPU; the pages need no
 * mapping of the caller's).
 * Return: bytes not copied.
 */
unsigned long ordma_kmem_copy(const struct ordma_kmem *mem, u64 len, u64 off,
			      void *buf, u64 n, bool from_mem)
{
	unsigned int dir = from_mem ? ITER_SOURCE : ITER_DEST;
	struct iov_iter it;
	size_t done;

	switch (mem->type) {
	case ORDMA_KBUF_BVEC:
		iov_iter_bvec(&it, dir, mem->bvec, mem->nr, len);
		break;
	case ORDMA_KBUF_KVEC:
		iov_iter_kvec(&it, dir, mem->kvec, mem->nr, len);
		break;
	case ORDMA_KBUF_SG:
		if (from_mem)
			done = sg_pcopy_to_buffer(mem->sgl, mem->nr, buf, n, off);
		else
			done = sg_pcopy_from_buffer(mem->sgl, mem->nr, buf, n,
						    off);
		return n - done;
	default:
		return n;
	}
	iov_iter_advance(&it, off);
	if (from_mem)
		return n - copy_from_iter(buf, n, &it);
	return n - copy_to_iter(buf, n, &it);
}

/**
 * ordma_kmem_iter_init() - start a walk of a buffer's entries
 * @it: the walk
 * @mem: the buffer, counted (ordma_kmem_count())
 */
void ordma_kmem_iter_init(struct ordma_kmem_iter *it,
			  const struct ordma_kmem *mem)
{
	it->mem = mem;
	it->i = 0;
	it->sg = mem->type == ORDMA_KBUF_SG ? mem->sgl : NULL;
}

/**
 * ordma_kmem_next() - the next entry of a walk
 * @it: the walk
 * @bv: set to the entry, as a bio_vec (a kvec's page is that of its
 *	first byte, its offset in that page)
 *
 * Return: false once the counted entries are all walked.
 */
bool ordma_kmem_next(struct ordma_kmem_iter *it, struct bio_vec *bv)
{
	return ordma_kmem_entry(it, it->mem->nr, bv);
}
