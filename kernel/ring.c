// SPDX-License-Identifier: GPL-2.0
/*
 * The submission and completion rings of an open file (ORDMA_IOC_RING_SETUP,
 * ORDMA_IOC_RING_ENTER, mmap at ORDMA_OFF_SQ / ORDMA_OFF_CQ). The user's view
 * is the DOC: Rings block of include/uapi/linux/ordma.h.
 *
 * Memory ordering. Each ring has one producer and one consumer, and each
 * index has one writer:
 *
 *   SQ: user space writes the entries, then the tail (store-release); the
 *       kernel loads the tail (load-acquire, pairs with that store), copies
 *       each entry once with READ_ONCE(), and only then stores the head
 *       (store-release), so user space, loading the head with acquire, never
 *       rewrites a slot the kernel is still reading.
 *   CQ: the kernel loads the head (load-acquire, pairs with user space's
 *       store-release of the head after it read the entries), writes the
 *       entries, then stores the tail (store-release); user space loads the
 *       tail with acquire before reading the entries.
 *
 * The CQ flags and overflow words are hints written with WRITE_ONCE(); no
 * decision of the kernel depends on them, and a waiter in ENTER checks the
 * kernel's own state, so a stale hint costs user space a system call, never
 * a completion.
 *
 * The shared pages are hostile: user space may write anything anywhere at
 * any time. The kernel keeps its own SQ head, CQ tail and ring sizes in
 * struct ordma_ring and never reads back a word it wrote; of the words user
 * space owns, an SQ tail more than the ring's entries ahead of the head fails
 * ENTER with -EINVAL, and a CQ head that leaves no sane room makes the ring
 * count as full (completions are held back, not written over). Every entry
 * is copied field by field into kernel memory before it is looked at, and
 * goes through the same checks as ORDMA_IOC_SUBMIT (ordma_file_submit(),
 * submit.c, which hands ordma_ring_submit() the function that starts one),
 * which reach only the file's own channels and the caller's own memory.
 *
 * Locking. ring->submit_lock (a mutex) serialises ENTERs taking entries from
 * the SQ: the head moves past each entry exactly once, so no entry runs
 * twice. The CQ side is protected by ofile->cq_lock (irqsave: completions
 * come from any context), which already protects the file's completion list:
 * with rings, that list holds the completions held back because the CQ ring
 * was full, oldest first, and every completion first flushes it, so order is
 * kept. ofile->ring is set once, under cq_lock, and published with a release
 * store for the lockless readers (ENTER, mmap, poll); it lives as long as
 * the file.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/log2.h>
#include <linux/sched/signal.h>

#include "file.h"
#include "ring_idx.h"

/*
 * The control words at the start of each mapping; head, tail and the rest
 * on cache lines of their own. The layout is reported by offsets, never
 * assumed by user space.
 */
struct ordma_ring_ctl {
	u32 head;
	u32 __pad0[15];
	u32 tail;
	u32 __pad1[15];
	u32 ring_mask;
	u32 ring_entries;
	u32 flags;
	u32 overflow;
	u32 __pad2[12];
};

#define ORDMA_RING_CTL_SIZE	sizeof(struct ordma_ring_ctl)

static_assert(sizeof(struct ordma_ring_ctl) == 192);
static_assert(sizeof(struct ordma_ring_sqe) == 48);
static_assert(sizeof(struct ordma_cqe) == 24);

/**
 * struct ordma_ring - the rings of one file
 * @sq: the SQ mapping (control words, then the entries)
 * @sqes: the SQ entries
 * @cq: the CQ mapping
 * @cqes: the CQ entries
 * @sq_entries: entries of the SQ ring (the kernel's copy)
 * @cq_entries: entries of the CQ ring (the kernel's copy)
 * @submit_lock: serialises taking SQ entries
 * @sq_head: next SQ entry to take (submit_lock)
 * @cq_tail: next CQ slot to write (ofile->cq_lock)
 * @overflow: completions ever held back (ofile->cq_lock)
 */
struct ordma_ring {
	struct ordma_ring_ctl *sq;
	struct ordma_ring_sqe *sqes;
	struct ordma_ring_ctl *cq;
	struct ordma_cqe *cqes;
	u32 sq_entries;
	u32 cq_entries;
	struct mutex submit_lock;	/* sq_head */
	u32 sq_head;			/* submit_lock */
	u32 cq_tail;			/* ofile->cq_lock */
	u32 overflow;			/* ofile->cq_lock */
};

/**
 * ordma_file_ring() - the rings of a file, for lockless readers
 * @ofile: the file
 *
 * Return: the rings, or NULL before ORDMA_IOC_RING_SETUP.
 */
struct ordma_ring *ordma_file_ring(struct ordma_file *ofile)
{
	/* Pairs with the release in ordma_ring_setup(): fields initialised. */
	return smp_load_acquire(&ofile->ring);
}

/**
 * ordma_req_alloc() - a request of @ofile, counted against its user
 * @ofile: the file
 *
 * Process context.
 *
 * Return: the request, zeroed, or ERR_PTR(-EDQUOT / -ENOMEM).
 */
struct ordma_req *ordma_req_alloc(struct ordma_file *ofile)
{
	struct ordma_req *op;
	int ret;

	ret = ordma_user_charge(ofile->tenant, ORDMA_USER_OPS);
	if (ret)
		return ERR_PTR(ret);
	op = kzalloc(sizeof(*op), GFP_KERNEL_ACCOUNT);
	if (!op) {
		ordma_user_uncharge(ofile->tenant, ORDMA_USER_OPS);
		return ERR_PTR(-ENOMEM);
	}
	return op;
}

/**
 * ordma_req_free() - free a request of @ofile
 * @ofile: the file
 * @op: from ordma_req_alloc()
 */
void ordma_req_free(struct ordma_file *ofile, struct ordma_req *op)
{
	kfree(op);
	ordma_user_uncharge(ofile->tenant, ORDMA_USER_OPS);
}

/**
 * ordma_reqs_free() - free requests whose completion was delivered
 * @ofile: their file
 * @list: the requests, linked by their node
 */
void ordma_reqs_free(struct ordma_file *ofile, struct list_head *list)
{
	struct ordma_req *op, *tmp;

	list_for_each_entry_safe(op, tmp, list, node)
		ordma_req_free(ofile, op);
}

/* ---- completions ----------------------------------------------------------- */

/* Free CQ slots before the kernel's @tail; a hostile head leaves none. */
static u32 ordma_ring_cq_room(struct ordma_ring *ring, u32 tail)
{
	/* Pairs with user space's release of the head: slots it read are free. */
	u32 head = smp_load_acquire(&ring->cq->head);

	return ordma_ring_cq_room_idx(head, tail, ring->cq_entries);
}

/* Make the completions written before @tail visible. */
static void ordma_ring_publish(struct ordma_ring *ring, u32 tail)
{
	WRITE_ONCE(ring->cq_tail, tail);
	/* The entries before the tail that makes them visible. */
	smp_store_release(&ring->cq->tail, tail);
}

/* Write the completion of slot @tail; the caller publishes the tail. */
static void ordma_ring_write_cqe(struct ordma_ring *ring, u32 tail, u64 cookie,
				 s64 res, u32 op, u32 chan_id)
{
	struct ordma_cqe *cqe;

	cqe = &ring->cqes[ordma_ring_slot(tail, ring->cq_entries)];
	WRITE_ONCE(cqe->cookie, cookie);
	WRITE_ONCE(cqe->res, res);
	WRITE_ONCE(cqe->op, op);
	WRITE_ONCE(cqe->chan_id, chan_id);
}

/*
 * Move held-back completions (ofile->cq) into the CQ ring while there is
 * room; the requests moved go to @done, for kfree() outside the lock.
 * Return: true if none is held back any more.
 */
static bool ordma_ring_flush_locked(struct ordma_file *ofile,
				    struct ordma_ring *ring,
				    struct list_head *done)
{
	u32 room, tail = ring->cq_tail;
	struct ordma_req *op, *tmp;

	lockdep_assert_held(&ofile->cq_lock);
	if (list_empty(&ofile->cq))
		return true;
	room = ordma_ring_cq_room(ring, tail);
	list_for_each_entry_safe(op, tmp, &ofile->cq, node) {
		if (!room)
			break;
		ordma_ring_write_cqe(ring, tail, op->cookie, op->res, op->op,
				     op->chan_id);
		tail++;
		room--;
		ofile->cq_len--;
		list_move_tail(&op->node, done);
	}
	if (tail != ring->cq_tail)
		ordma_ring_publish(ring, tail);
	WRITE_ONCE(ring->cq->flags,
		   list_empty(&ofile->cq) ? 0 : ORDMA_CQ_F_OVERFLOW);
	return list_empty(&ofile->cq);
}

/**
 * ordma_ring_complete() - post a completion on a file with rings
 * @ofile: the file; its cq_lock is held
 * @ring: its rings
 * @op: the completed operation (res set), not on any list
 * @done: requests whose completion reached the ring, to kfree() after
 *	the lock is dropped
 *
 * Older held-back completions go first; if the ring has no room, @op is
 * held back too and counted in the overflow word.
 */
void ordma_ring_complete(struct ordma_file *ofile, struct ordma_ring *ring,
			 struct ordma_req *op, struct list_head *done)
{
	list_add_tail(&op->node, &ofile->cq);
	ofile->cq_len++;
	/* Still on the list: it found the ring full. */
	if (!ordma_ring_flush_locked(ofile, ring, done)) {
		ring->overflow++;
		WRITE_ONCE(ring->cq->overflow, ring->overflow);
	}
}

/**
 * ordma_ring_flush() - move held-back completions into the CQ ring
 * @ofile: the file
 * @ring: its rings
 *
 * Return: true if none is held back any more.
 */
bool ordma_ring_flush(struct ordma_file *ofile, struct ordma_ring *ring)
{
	LIST_HEAD(done);
	bool empty;

	spin_lock_irq(&ofile->cq_lock);
	empty = ordma_ring_flush_locked(ofile, ring, &done);
	spin_unlock_irq(&ofile->cq_lock);
	ordma_reqs_free(ofile, &done);
	return empty;
}

/**
 * ordma_ring_ready() - completions a waiter can count on
 * @ofile: the file
 * @ring: its rings
 *
 * Return: completions in the CQ ring or held back.
 */
u32 ordma_ring_ready(struct ordma_file *ofile, struct ordma_ring *ring)
{
	return ring->cq_entries -
	       ordma_ring_cq_room(ring, READ_ONCE(ring->cq_tail)) +
	       READ_ONCE(ofile->cq_len);
}

/**
 * ordma_ring_pending() - does a file with rings have completions to read?
 * @ofile: the file
 * @ring: its rings
 *
 * Return: true if the CQ ring is not empty or completions are held back.
 */
bool ordma_ring_pending(struct ordma_file *ofile, struct ordma_ring *ring)
{
	return ordma_ring_ready(ofile, ring) != 0;
}

/* ---- submissions ------------------------------------------------------------ */

/* Errors that leave the entry in the SQ: it may work later. */
static bool ordma_ring_transient(int err)
{
	return err == -EAGAIN || err == -ENOMEM;
}

/*
 * Post the error of a refused entry: straight into the CQ ring when nothing
 * is held back and there is room (no allocation; @wake tells ENTER to wake
 * waiters once at its end), else held back like any completion.
 * Return: 0, or -ENOMEM and nothing was posted.
 */
static int ordma_ring_post_error(struct ordma_file *ofile,
				 struct ordma_ring *ring,
				 const struct ordma_ring_sqe *sqe, int err,
				 bool *wake)
{
	struct ordma_req *op;
	bool posted = false;
	LIST_HEAD(done);
	u32 tail;

	spin_lock_irq(&ofile->cq_lock);
	tail = ring->cq_tail;
	if (list_empty(&ofile->cq) && ordma_ring_cq_room(ring, tail)) {
		ordma_ring_write_cqe(ring, tail, sqe->cookie, err, sqe->op,
				     sqe->chan_id);
		ordma_ring_publish(ring, tail + 1);
		posted = true;
	}
	spin_unlock_irq(&ofile->cq_lock);
	if (posted) {
		*wake = true;
		return 0;
	}
	op = ordma_req_alloc(ofile);
	if (IS_ERR(op))
		return PTR_ERR(op);
	op->op = sqe->op;
	op->chan_id = sqe->chan_id;
	op->cookie = sqe->cookie;
	op->res = err;
	spin_lock_irq(&ofile->cq_lock);
	ordma_ring_complete(ofile, ring, op, &done);
	spin_unlock_irq(&ofile->cq_lock);
	ordma_reqs_free(ofile, &done);
	*wake = true;
	return 0;
}

static void ordma_ring_read_sqe(const struct ordma_ring_sqe *src,
				struct ordma_ring_sqe *dst)
{
	dst->op = READ_ONCE(src->op);
	dst->flags = READ_ONCE(src->flags);
	dst->__reserved = READ_ONCE(src->__reserved);
	dst->chan_id = READ_ONCE(src->chan_id);
	dst->addr = READ_ONCE(src->addr);
	dst->len = READ_ONCE(src->len);
	dst->cookie = READ_ONCE(src->cookie);
	dst->token = READ_ONCE(src->token);
	dst->offset = READ_ONCE(src->offset);
}

/**
 * ordma_ring_submit() - take entries off the SQ ring
 * @ofile: the file
 * @ring: its rings
 * @want: most entries to take
 * @all: go on after an entry that failed
 * @submit: starts one entry, copied out of the ring (submit.c); its error
 *	is the entry's
 *
 * Stops after an entry that failed (consumed, its error posted as a
 * completion) unless @all, and before one that met a transient error.
 *
 * Return: entries consumed, or a negative errno when none was.
 */
int ordma_ring_submit(struct ordma_file *ofile, struct ordma_ring *ring,
		      u32 want, bool all,
		      int (*submit)(struct ordma_file *ofile,
				    const struct ordma_ring_sqe *sqe))
{
	u32 avail, tail, slot, n = 0;
	struct ordma_ring_sqe sqe;
	bool wake = false;
	int ret = 0;

	mutex_lock(&ring->submit_lock);
	/* Back-pressure: the CQ ring must drain before more can complete. */
	if (!ordma_ring_flush(ofile, ring)) {
		ret = -EBUSY;
		goto out;
	}
	/* Pairs with user space's release of the tail: entries are written. */
	tail = smp_load_acquire(&ring->sq->tail);
	if (!ordma_ring_sq_avail(ring->sq_head, tail, ring->sq_entries,
				 &avail)) {
		ret = -EINVAL;
		goto out;
	}
	want = min(want, avail);
	while (n < want) {
		slot = ordma_ring_slot(ring->sq_head, ring->sq_entries);
		ordma_ring_read_sqe(&ring->sqes[slot], &sqe);
		ret = submit(ofile, &sqe);
		if (ordma_ring_transient(ret))
			break;
		/*
		 * Refused: the error is its completion. A refused entry did
		 * nothing, so if even that cannot be posted it stays.
		 */
		if (ret && ordma_ring_post_error(ofile, ring, &sqe, ret, &wake)) {
			ret = -ENOMEM;
			break;
		}
		ring->sq_head++;
		n++;
		if (ret && !all)
			break;
	}
	if (n)
		/* Done reading the entries before their slots are reused. */
		smp_store_release(&ring->sq->head, ring->sq_head);
out:
	mutex_unlock(&ring->submit_lock);
	if (wake)
		wake_up_all(&ofile->cq_wait);
	return n ? n : ret;
}

/**
 * ordma_ring_cq_entries() - size of the CQ ring
 * @ring: the rings
 *
 * Return: its entries.
 */
u32 ordma_ring_cq_entries(struct ordma_ring *ring)
{
	return ring->cq_entries;
}

/* ---- set-up, mmap, teardown ---------------------------------------------------- */

/**
 * ordma_ring_destroy() - free rings
 * @ring: the rings, or NULL
 *
 * For a file being released every mapping is gone (each holds the file).
 */
void ordma_ring_destroy(struct ordma_ring *ring)
{
	if (!ring)
		return;
	vfree(ring->cq);
	vfree(ring->sq);
	kfree(ring);
}

/**
 * ordma_ring_setup() - ORDMA_IOC_RING_SETUP
 * @ofile: the file
 * @cmd: the caller's struct, copied in; the out_ fields are filled
 *
 * Return: 0 or a negative errno (see the uapi header).
 */
int ordma_ring_setup(struct ordma_file *ofile, struct ordma_ring_setup *cmd)
{
	struct ordma_ring *ring;
	u32 sq_entries, cq_entries;
	size_t sq_size, cq_size;
	LIST_HEAD(done);
	bool busy;

	if (cmd->flags)
		return -EINVAL;
	if (!cmd->sq_entries || cmd->sq_entries > ORDMA_RING_MAX_SQ)
		return -EINVAL;
	sq_entries = roundup_pow_of_two(cmd->sq_entries);
	cq_entries = cmd->cq_entries ? cmd->cq_entries : 2 * sq_entries;
	if (cq_entries < cmd->sq_entries || cq_entries > ORDMA_RING_MAX_CQ)
		return -EINVAL;
	cq_entries = roundup_pow_of_two(cq_entries);
	if (ordma_file_ring(ofile))
		return -EBUSY;

	ring = kzalloc(sizeof(*ring), GFP_KERNEL);
	if (!ring)
		return -ENOMEM;
	mutex_init(&ring->submit_lock);
	ring->sq_entries = sq_entries;
	ring->cq_entries = cq_entries;
	sq_size = ORDMA_RING_CTL_SIZE + sq_entries * sizeof(struct ordma_ring_sqe);
	cq_size = ORDMA_RING_CTL_SIZE + cq_entries * sizeof(struct ordma_cqe);
	ring->sq = vmalloc_user(sq_size);
	ring->cq = vmalloc_user(cq_size);
	if (!ring->sq || !ring->cq) {
		ordma_ring_destroy(ring);
		return -ENOMEM;
	}
	ring->sqes = (void *)ring->sq + ORDMA_RING_CTL_SIZE;
	ring->cqes = (void *)ring->cq + ORDMA_RING_CTL_SIZE;
	ring->sq->ring_mask = sq_entries - 1;
	ring->sq->ring_entries = sq_entries;
	ring->cq->ring_mask = cq_entries - 1;
	ring->cq->ring_entries = cq_entries;

	spin_lock_irq(&ofile->cq_lock);
	busy = ofile->ring;
	if (!busy) {
		/* Initialised before lockless readers see it (ordma_file_ring()). */
		smp_store_release(&ofile->ring, ring);
		/* Completions waiting for ORDMA_IOC_WAIT move to the ring. */
		ordma_ring_flush_locked(ofile, ring, &done);
	}
	spin_unlock_irq(&ofile->cq_lock);
	ordma_reqs_free(ofile, &done);
	if (busy) {
		ordma_ring_destroy(ring);
		return -EBUSY;
	}

	cmd->out_features = ORDMA_FEAT_NODROP | ORDMA_FEAT_SQ_REWIND;
	cmd->out_sq_entries = sq_entries;
	cmd->out_cq_entries = cq_entries;
	cmd->out_sqe_size = sizeof(struct ordma_ring_sqe);
	cmd->out_cqe_size = sizeof(struct ordma_cqe);
	cmd->out_sq_size = sq_size;
	cmd->out_cq_size = cq_size;
	cmd->out_sq_off.head = offsetof(struct ordma_ring_ctl, head);
	cmd->out_sq_off.tail = offsetof(struct ordma_ring_ctl, tail);
	cmd->out_sq_off.ring_mask = offsetof(struct ordma_ring_ctl, ring_mask);
	cmd->out_sq_off.ring_entries = offsetof(struct ordma_ring_ctl,
						ring_entries);
	cmd->out_sq_off.flags = offsetof(struct ordma_ring_ctl, flags);
	cmd->out_sq_off.sqes = ORDMA_RING_CTL_SIZE;
	cmd->out_cq_off.head = offsetof(struct ordma_ring_ctl, head);
	cmd->out_cq_off.tail = offsetof(struct ordma_ring_ctl, tail);
	cmd->out_cq_off.ring_mask = offsetof(struct ordma_ring_ctl, ring_mask);
	cmd->out_cq_off.ring_entries = offsetof(struct ordma_ring_ctl,
						ring_entries);
	cmd->out_cq_off.flags = offsetof(struct ordma_ring_ctl, flags);
	cmd->out_cq_off.overflow = offsetof(struct ordma_ring_ctl, overflow);
	cmd->out_cq_off.cqes = ORDMA_RING_CTL_SIZE;
	return 0;
}

/**
 * ordma_ring_mmap() - map the SQ or the CQ ring
 * @ofile: the file
 * @vma: the new mapping: MAP_SHARED, at ORDMA_OFF_SQ or ORDMA_OFF_CQ, no
 *	longer than the ring
 *
 * Return: 0, -ENXIO (no rings yet) or -EINVAL.
 */
int ordma_ring_mmap(struct ordma_file *ofile, struct vm_area_struct *vma)
{
	struct ordma_ring *ring = ordma_file_ring(ofile);
	void *mem;

	if (!ring)
		return -ENXIO;
	if (vma->vm_pgoff == ORDMA_OFF_SQ >> PAGE_SHIFT)
		mem = ring->sq;
	else if (vma->vm_pgoff == ORDMA_OFF_CQ >> PAGE_SHIFT)
		mem = ring->cq;
	else
		return -EINVAL;
	/* A private mapping would copy pages on write. */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	/* Refuses (EINVAL) a mapping longer than the ring. */
	return remap_vmalloc_range(vma, mem, 0);
}
