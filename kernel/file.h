/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An open /dev/ordma: its windows, its submitted operations and their
 * completions (file.c), and its rings (ring.c). Below the channels: nothing
 * here knows a channel but as an object of the file.
 */
#ifndef _ORDMA_FILE_H
#define _ORDMA_FILE_H

#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/xarray.h>
#include <linux/bvec.h>

#include "ordma.h"
#include "kmem.h"

struct ordma_req;
struct ordma_chan;

/**
 * struct ordma_kern - what the file of a kernel user calls (kapi.c)
 * @complete: an operation is over, with @res; instead of the completion
 *	queue. Called where ordma_file_complete() is: process context.
 * @chan_down: a channel of the file that its user holds died by itself,
 *	@err its errno (chan.c, from a work item)
 */
struct ordma_kern {
	void (*complete)(struct ordma_req *op, s64 res);
	void (*chan_down)(struct ordma_chan *chan, int err);
};

/**
 * struct ordma_file - one open /dev/ordma, or one kernel user
 * @mm: the address space of the process that opened it; every buffer an
 *	operation names lives there (grabbed, not pinned: mmget_not_zero()
 *	before use). NULL for a kernel user: its operations name kernel
 *	memory (struct ordma_req @bvec)
 * @kern: a kernel user's calls, or NULL for an open /dev/ordma
 * @objs: channels and listeners by id, protected by the xarray's lock;
 *	each entry holds a reference
 * @windows: exposed windows by index (the low 32 bits of the token)
 * @windows_next: the next index to give out (xa_alloc_cyclic(), under the
 *	xarray's lock; read once without it)
 * @windows_wrapped: indices are given out again: a token naming no window
 *	may be a stale one whatever its index (WRITE_ONCE, READ_ONCE)
 * @windows_rwsem: held for read by the data path from the window check to
 *	the end of the copy, for write by ORDMA_IOC_UNEXPOSE: once unexpose
 *	returns, no peer access to that window is still running
 * @cq_lock: protects @cq and @cq_len
 * @cq: completed operations (struct ordma_req) not yet reaped
 * @cq_len: entries on @cq
 * @cq_wait: woken when an operation completes; poll() waits here
 * @ring: the submission and completion rings, once ORDMA_IOC_RING_SETUP
 *	made them (set once under @cq_lock, see ring.c); with rings, @cq holds
 *	the completions the full CQ ring could not take yet
 * @kref: the file and every channel of it hold a reference
 * @run_lock: protects @runq and @runners (irqsave: kicks come from
 *	completion handlers)
 * @runq: channels kicked while a task of the owner waited for completions;
 *	each entry holds a channel reference (see ordma_file_wait())
 * @runners: tasks of the owner asleep in ordma_file_wait()
 * @unplace_wait: unexpose waits here for the window's registered ranges
 *	to go (see ordma_file_unplace())
 * @wsegs_lock: protects @wsegs; taken inside no other lock of ordma
 * @wsegs: segments of our windows registered for peers' writes, on every
 *	channel of the file (struct ordma_seg w_node)
 * @tenant: what the owner's user holds over all its files (user.c), or NULL
 *	for a file opened with CAP_SYS_ADMIN, which is not counted
 * @user: the owner's user (referenced): its locked_vm carries the pages
 *	our registrations pin, reserved before they are pinned (mr.c)
 * @lock_limit: pages the owner may pin (RLIMIT_MEMLOCK at open, or
 *	ULONG_MAX with CAP_IPC_LOCK); the RDMA core charges them to
 *	mm->pinned_vm as well
 * @cache_pages: pages the pin caches of all the file's channels hold
 *	(pin.c), bounded by their device's cache_max_bytes
 * @id: the file's id among the open files, for netlink (never 0)
 * @pid: the process that opened it (its thread group, referenced); NULL
 *	for a kernel user
 * @euid: its effective uid then (root for a kernel user)
 * @comm: its command name then (a kernel user's name)
 */
struct ordma_file {
	struct mm_struct *mm;
	const struct ordma_kern *kern;
	struct user_struct *user;
	struct ordma_user *tenant;
	unsigned long lock_limit;
	atomic_long_t cache_pages;
	struct xarray objs;
	struct xarray windows;
	u32 windows_next;
	bool windows_wrapped;
	struct rw_semaphore windows_rwsem;	/* see above */
	spinlock_t cq_lock;		/* cq, cq_len */
	struct list_head cq;		/* cq_lock */
	u32 cq_len;			/* cq_lock */
	wait_queue_head_t cq_wait;
	struct ordma_ring *ring;	/* cq_lock; see above */
	struct kref kref;
	spinlock_t run_lock;		/* runq, runners */
	struct list_head runq;		/* run_lock */
	unsigned int runners;		/* run_lock */
	wait_queue_head_t unplace_wait;
	spinlock_t wsegs_lock;		/* wsegs */
	struct list_head wsegs;		/* wsegs_lock */
	u32 id;
	struct pid *pid;
	kuid_t euid;
	char comm[TASK_COMM_LEN];
};

/**
 * struct ordma_window_stat - what netlink shows of a window
 * @id: its index in the file, the low half of its token
 * @len: its length
 * @access: ORDMA_ACCESS_* bits
 * @writes: peer writes into it that began
 */
struct ordma_window_stat {
	u32 id;
	u64 len;
	u32 access;
	u32 writes;
};

/**
 * struct ordma_winmem - where a window's bytes are
 * @addr: start in the owning file's mm (a user's window)
 * @kmem: a kernel user's window (ordma_kexpose(); @addr is 0): its
 *	pages, from the start of the first entry, which the user keeps until
 *	the window is unexposed; @kmem.nr is 0 for a process's window
 */
struct ordma_winmem {
	u64 addr;
	struct ordma_kmem kmem;
};

/**
 * struct ordma_window - a buffer exposed with ORDMA_IOC_EXPOSE or
 *	ordma_kexpose()
 * @mem: its memory
 * @len: length
 * @access: ORDMA_ACCESS_* bits
 * @salt: random high half of the token
 * @writes: peer writes into it that began, over all channels
 * @rcu: freed after a grace period; lookups run under rcu_read_lock()
 */
struct ordma_window {
	struct ordma_winmem mem;
	u64 len;
	u32 access;
	u32 salt;
	atomic_t writes;
	struct rcu_head rcu;
};

/**
 * struct ordma_req - one submitted operation, then its completion
 * @node: on its channel's queue while running, on the file's cq after
 * @op: enum ordma_op
 * @chan_id: the channel's id in the file
 * @addr: user buffer (an operation of a user's file)
 * @kmem: kernel buffer, from the start of its first entry (an operation
 *	of a kernel user's file; @addr is 0); @kmem.nr is 0 for a process's
 *	operation
 * @len: the buffer's length
 * @cookie: the caller's cookie
 * @token: window token (WRITE, READ)
 * @offset: offset in the window (WRITE, READ)
 * @op_id: this side's id of the operation on the wire (WRITE, READ), the
 *	message id of a SEND once started, the expected or received message
 *	id of a RECV
 * @posted: bytes put on the wire or asked for so far
 * @done: bytes acknowledged, received or copied so far
 * @inflight: chunks of this operation posted and not completed
 * @res: result once complete: bytes or -errno
 * @started: a RECV has matched the head message
 * @planned: the planner has split this SEND or WRITE (worker)
 * @segs: its registered segments, in buffer order (worker)
 * @zc_start: offset where registered segments start; bytes before it are
 *	copied (worker)
 * @seg_next: offset of the next segment to ask for (worker)
 * @seg_len: size of the next segment (worker)
 * @seg_max: largest segment (worker)
 * @t_start: when its first byte was posted, ns (worker)
 * @t_wait: since when it waits for a segment, ns, or 0 (worker)
 * @zc_only: wait for segments rather than copy: mode zerocopy, or auto
 *	on a device whose wire is CPU work (worker)
 * @echoed: a piece of this SEND came back completed (worker)
 * @places: ranges the receiver (the window's side) offered for RDMA WRITE
 *	(SEND, WRITE, worker)
 * @offer_end: end of the furthest range offered (SEND, WRITE, worker)
 * @notify: a WRITE notifies the peer (ORDMA_F_NOTIFY): on its last piece,
 *	or with a NOTIFY if it stops early
 * @standing: a WRITE goes into the window's standing offer (its @places
 *	come from it) and completes when its last piece is delivered, with no
 *	WRITE_ACK (worker)
 * @announced: a header of this WRITE went out: the window's side knows
 *	its id (worker)
 * @dereg_wait: its destination segments (a RECV's) still registered, which
 *	the peer may write into: the completion waits for them.
 *	ordma_op_complete() takes one more off; whoever takes it below zero
 *	posts the completion (atomic)
 * @tid: its id in ordma's trace events, given when it is queued while
 *	ordma_submit is enabled, else 0
 */
struct ordma_req {
	struct list_head node;
	u32 op;
	u32 chan_id;
	u64 addr;
	struct ordma_kmem kmem;
	u64 len;
	u64 cookie;
	u64 token;
	u64 offset;
	u64 op_id;
	u64 posted;
	u64 done;
	u32 inflight;
	s64 res;
	bool started;
	bool planned;			/* chan->run */
	struct list_head segs;		/* chan->run */
	u64 zc_start;			/* chan->run */
	u64 seg_next;			/* chan->run */
	u64 seg_len;			/* chan->run */
	u64 seg_max;			/* chan->run */
	u64 t_start;			/* chan->run */
	u64 t_wait;			/* chan->run */
	bool zc_only;			/* chan->run */
	bool echoed;			/* chan->run */
	struct list_head places;	/* chan->run */
	u64 offer_end;			/* chan->run */
	bool notify;
	bool standing;			/* chan->run */
	bool announced;			/* chan->run */
	atomic_t dereg_wait;
	u64 tid;
};

void ordma_ring_destroy(struct ordma_ring *ring);

enum ordma_chan_kind {
	ORDMA_KIND_CHAN,
	ORDMA_KIND_LISTENER,
};

/**
 * struct ordma_obj - the head of a channel or listener
 * @kind: which of the two
 * @id: its id among all channels and listeners, for netlink (chan.c);
 *	not its id in its file's @objs
 * @born: when it was created, jiffies
 */
struct ordma_obj {
	enum ordma_chan_kind kind;
	u32 id;
	unsigned long born;
};

/*
 * The jiffies a wait of @ms milliseconds (-1: forever) sleeps: one more
 * than @ms holds, since the jiffy it starts in may be nearly over, so that
 * a wait never ends before its time.
 */
static inline long ordma_wait_jiffies(s32 ms)
{
	if (ms < 0)
		return MAX_SCHEDULE_TIMEOUT;
	return ms ? (long)msecs_to_jiffies(ms) + 1 : 0;
}

/* file.c */
struct ordma_file *ordma_file_alloc(void);
struct ordma_file *ordma_file_alloc_kern(const char *name,
					 const struct ordma_kern *kern);
void ordma_file_put(struct ordma_file *ofile);
struct ordma_file *ordma_file_next(unsigned long *id);
bool ordma_file_window_next(struct ordma_file *ofile, unsigned long *idx,
			    struct ordma_window_stat *st);
void ordma_file_complete(struct ordma_file *ofile, struct ordma_req *op,
			 s64 res);
int ordma_file_expose(struct ordma_file *ofile,
		      const struct ordma_winmem *mem, u64 len, u32 access,
		      u64 *token);
int ordma_file_unexpose(struct ordma_file *ofile, u64 token);
int ordma_window_check(struct ordma_file *ofile, u64 token, u64 off, u64 len,
		       u32 access, struct ordma_winmem *mem);
u32 ordma_window_written(struct ordma_file *ofile, u64 token, u64 *len);
int ordma_file_check_buf(struct ordma_file *ofile, u64 addr, u64 len);
int ordma_check_user_range(struct mm_struct *mm, u64 addr, u64 len,
			   bool write);

/* ring.c */
struct ordma_ring;
struct vm_area_struct;
struct ordma_req *ordma_req_alloc(struct ordma_file *ofile);
void ordma_req_free(struct ordma_file *ofile, struct ordma_req *op);
void ordma_reqs_free(struct ordma_file *ofile, struct list_head *list);
struct ordma_ring *ordma_file_ring(struct ordma_file *ofile);
int ordma_ring_setup(struct ordma_file *ofile, struct ordma_ring_setup *cmd);
int ordma_ring_mmap(struct ordma_file *ofile, struct vm_area_struct *vma);
void ordma_ring_complete(struct ordma_file *ofile, struct ordma_ring *ring,
			 struct ordma_req *op, struct list_head *done);
bool ordma_ring_flush(struct ordma_file *ofile, struct ordma_ring *ring);
u32 ordma_ring_ready(struct ordma_file *ofile, struct ordma_ring *ring);
bool ordma_ring_pending(struct ordma_file *ofile, struct ordma_ring *ring);
u32 ordma_ring_cq_entries(struct ordma_ring *ring);
int ordma_ring_submit(struct ordma_file *ofile, struct ordma_ring *ring,
		      u32 want, bool all,
		      int (*submit)(struct ordma_file *ofile,
				    const struct ordma_ring_sqe *sqe));
void ordma_ring_destroy(struct ordma_ring *ring);

#endif /* _ORDMA_FILE_H */
