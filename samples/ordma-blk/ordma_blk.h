/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordma-blk's wire protocol, shared by the initiator (ordma_blk.c) and the
 * target (ordma_blk_target.c), and the message buffer both use.
 *
 * Usage (the modules' parameters say more; modinfo lists them):
 *
 *	target$    insmod ordma_blk_target.ko backing=/srv/disk.img \
 *			addr=192.0.2.1 port=7472
 *	initiator$ insmod ordma_blk.ko addr=192.0.2.1 port=7472 \
 *			name=ordmablk0 nr_queues=2 queue_depth=32
 *	initiator$ mkfs.ext4 /dev/ordmablk0
 *
 * More disks, of this target or others, at run time (the same keys; those
 * left out take the module parameters' values), and one removed:
 *
 *	initiator$ echo "name=ordmablk1 addr=192.0.2.1 port=7472" \
 *			> /sys/class/ordma-blk/add
 *	initiator$ echo ordmablk1 > /sys/class/ordma-blk/remove
 *
 * An add fails with EEXIST for a name an ordma-blk disk has, EINVAL for
 * an unknown key or a value out of range, or the errno of the connection
 * (ECONNREFUSED: no target there) or of the target's HELLO; a remove with
 * ENOENT for no such disk. Loading with name= empty adds no disk.
 *
 * selftests/guest/blk_test runs both in one guest.
 *
 * One ordma channel per hardware queue of the initiator. Every message
 * starts with a struct ordma_blk_hdr, little-endian:
 *
 * - The first message on a channel is a HELLO each way: the initiator
 *   sends its queue and depth in a struct ordma_blk_hello after the
 *   header; the target answers with the device's size, its largest I/O
 *   and its features, or a status.
 * - Then the initiator sends requests: READ, WRITE (the data follows the
 *   header), FLUSH and DISCARD, at most the depth of the queue in flight,
 *   each with a tag unique among those in flight on the channel.
 * - The target answers each request with the same op and tag and a status
 *   (0 or a positive errno), and for a READ that succeeded the data after
 *   the header. Answers come in any order.
 *
 * The target keeps a receive posted for every request the initiator may
 * have in flight, and the initiator one for every answer, each as large as
 * the largest message: header and ORDMA_BLK_MAX_IO bytes.
 */
#ifndef _ORDMA_BLK_H
#define _ORDMA_BLK_H

#include <linux/bits.h>
#include <linux/bvec.h>
#include <linux/build_bug.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/types.h>
#include <linux/vmalloc.h>

#define ORDMA_BLK_MAGIC		0x6b6c426fU	/* "oBlk" */
#define ORDMA_BLK_VERSION	1

/*
 * The largest READ or WRITE, the largest DISCARD (its length fits the
 * header's), and requests in flight per channel at most.
 */
#define ORDMA_BLK_MAX_IO	SZ_128K
#define ORDMA_BLK_MAX_DISCARD	SZ_1G
#define ORDMA_BLK_MAX_DEPTH	32

#define ORDMA_BLK_SECTOR_SHIFT	9
#define ORDMA_BLK_SECTOR_SIZE	BIT(ORDMA_BLK_SECTOR_SHIFT)

enum ordma_blk_op {
	ORDMA_BLK_OP_HELLO	= 1,
	ORDMA_BLK_OP_READ	= 2,
	ORDMA_BLK_OP_WRITE	= 3,
	ORDMA_BLK_OP_FLUSH	= 4,
	ORDMA_BLK_OP_DISCARD	= 5,
};

/* Flags of a request. */
#define ORDMA_BLK_F_FUA		BIT(0)	/* WRITE: on stable storage when answered */

/* Features of a target, in its HELLO. */
#define ORDMA_BLK_FEAT_FLUSH	BIT(0)	/* FLUSH and FUA */
#define ORDMA_BLK_FEAT_DISCARD	BIT(1)

/**
 * struct ordma_blk_hdr - the head of every message
 * @magic: ORDMA_BLK_MAGIC
 * @version: ORDMA_BLK_VERSION
 * @op: enum ordma_blk_op
 * @tag: the request's, echoed by its answer
 * @flags: ORDMA_BLK_F_* (requests)
 * @sector: where the request starts, in 512-byte sectors
 * @len: bytes the request covers (READ, WRITE, DISCARD), or of the HELLO
 * @status: answers: 0, or a positive errno
 */
struct ordma_blk_hdr {
	__le32 magic;
	__le16 version;
	__le16 op;
	__le32 tag;
	__le32 flags;
	__le64 sector;
	__le32 len;
	__le32 status;
};

static_assert(sizeof(struct ordma_blk_hdr) == 32);

/**
 * struct ordma_blk_hello - after the header of a HELLO
 * @size: answer: bytes of the device, a multiple of 512
 * @queue: request: which of the initiator's queues the channel serves
 * @nr_queues: request: the initiator's queues
 * @depth: request: requests the initiator keeps in flight at most;
 *	answer: the most the target takes
 * @max_io: answer: the largest READ or WRITE, bytes
 * @features: answer: ORDMA_BLK_FEAT_*
 * @reserved: zero
 */
struct ordma_blk_hello {
	__le64 size;
	__le32 queue;
	__le32 nr_queues;
	__le32 depth;
	__le32 max_io;
	__le32 features;
	__le32 reserved;
};

static_assert(sizeof(struct ordma_blk_hello) == 32);

/**
 * struct ordma_blk_buf - a message buffer: a header, then up to its data
 *	length of bytes, virtually contiguous
 * @va: the header page (the header at its end), then the data pages
 * @bvec: the header, then each data page: no hole between them, so that
 *	ordma can register a RECV's pages as one range and the sender place
 *	the message in them
 * @nr_bvec: entries of @bvec
 */
struct ordma_blk_buf {
	void *va;
	struct bio_vec *bvec;
	unsigned int nr_bvec;
};

static inline struct ordma_blk_hdr *
ordma_blk_buf_hdr(const struct ordma_blk_buf *buf)
{
	return buf->va + PAGE_SIZE - sizeof(struct ordma_blk_hdr);
}

static inline void *ordma_blk_buf_data(const struct ordma_blk_buf *buf)
{
	return buf->va + PAGE_SIZE;
}

static inline void ordma_blk_buf_free(struct ordma_blk_buf *buf)
{
	vfree(buf->va);
	kfree(buf->bvec);
	buf->va = NULL;
	buf->bvec = NULL;
	buf->nr_bvec = 0;
}

/**
 * ordma_blk_buf_alloc() - allocate a message buffer
 * @buf: the buffer
 * @data_len: the data it holds after the header, at most
 *
 * Context: process context, may sleep.
 * Return: 0 or -ENOMEM.
 */
static inline int ordma_blk_buf_alloc(struct ordma_blk_buf *buf,
				      size_t data_len)
{
	unsigned int i, pages = DIV_ROUND_UP(data_len, PAGE_SIZE);

	buf->nr_bvec = 1 + pages;
	buf->va = vzalloc((size_t)buf->nr_bvec * PAGE_SIZE);
	buf->bvec = kcalloc(buf->nr_bvec, sizeof(*buf->bvec), GFP_KERNEL);
	if (!buf->va || !buf->bvec) {
		ordma_blk_buf_free(buf);
		return -ENOMEM;
	}
	bvec_set_page(&buf->bvec[0], vmalloc_to_page(buf->va),
		      sizeof(struct ordma_blk_hdr),
		      PAGE_SIZE - sizeof(struct ordma_blk_hdr));
	for (i = 1; i <= pages; i++)
		bvec_set_page(&buf->bvec[i],
			      vmalloc_to_page(buf->va + i * PAGE_SIZE),
			      PAGE_SIZE, 0);
	return 0;
}

/* Fill the constant part of a header. */
static inline void ordma_blk_hdr_init(struct ordma_blk_hdr *hdr,
				      enum ordma_blk_op op, u32 tag)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->magic = cpu_to_le32(ORDMA_BLK_MAGIC);
	hdr->version = cpu_to_le16(ORDMA_BLK_VERSION);
	hdr->op = cpu_to_le16(op);
	hdr->tag = cpu_to_le32(tag);
}

/* True if @hdr is of our protocol. */
static inline bool ordma_blk_hdr_ok(const struct ordma_blk_hdr *hdr)
{
	return le32_to_cpu(hdr->magic) == ORDMA_BLK_MAGIC &&
	       le16_to_cpu(hdr->version) == ORDMA_BLK_VERSION;
}

#endif /* _ORDMA_BLK_H */
