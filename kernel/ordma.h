/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordma - RDMA from memory that was never registered.
 *
 * Core structures shared by the files of the module.
 */
#ifndef _ORDMA_H
#define _ORDMA_H

#include <linux/device.h>
#include <linux/kref.h>
#include <linux/completion.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/socket.h>
#include <rdma/ib_verbs.h>
#include <uapi/linux/ordma.h>

#include "compat.h"
#include "plan.h"
#include "wire.h"

struct ordma_dev;

/**
 * struct ordma_chunk - one DMA-mapped intermediate buffer of a pool
 * @node: on the pool's free list while free; the owner's queue otherwise
 * @pool: the pool it belongs to
 * @buf: kernel address of the buffer
 * @dma: its DMA address for @pool's device (use with pd->local_dma_lkey)
 * @size: payload capacity in bytes (the pool's chunk_bytes when it was
 *	allocated); the buffer has ORDMA_HDR_LEN bytes more, so that a
 *	message of @size bytes and its header are one piece
 * @len: bytes in use; owned by the holder
 * @cqe: completion entry for the holder's work request
 * @owner: the holder's context (its channel), set by the holder
 * @priv: the holder's: what the chunk carries (the operation of a send)
 * @seg: the holder's: the registered segment a send's payload comes from
 * @seg_off: the holder's: where in @seg that payload starts
 * @raddr: the holder's: where the peer offered to take the payload (placed
 *	sends: an RDMA WRITE there, then the header alone)
 * @rkey: the holder's: the peer's key for @raddr; 0: a plain send
 * @held: the holder's chunk counter, charged by ordma_chunk_get()
 * @status: the holder's: work completion status of @cqe
 * @wimm: the holder's: post the payload as one RDMA WRITE with immediate
 *	data at @raddr, and no header
 * @wbare: the holder's: post the payload as one RDMA WRITE at @raddr, and
 *	no header (a piece of a write that a later header announces)
 * @simm: the holder's: post the payload alone, as a SEND with immediate
 *	data ORDMA_WIRE_IMM_MSG (a message of one piece)
 * @got_imm: the holder's: a receive completed by an RDMA WRITE with
 *	immediate data @imm (@len: the bytes it wrote elsewhere)
 * @sent_imm: the holder's: a receive completed by a SEND with immediate
 *	data @imm (@len bytes from the start of @buf, no header)
 * @imm: see @got_imm and @sent_imm
 */
struct ordma_chunk {
	struct list_head node;
	struct ordma_pool *pool;
	void *buf;
	u64 dma;
	u32 size;
	u32 len;
	struct ib_cqe cqe;
	void *owner;
	void *priv;
	void *seg;
	u64 seg_off;
	u64 raddr;
	u32 rkey;
	atomic_t *held;
	int status;
	bool wimm;
	bool wbare;
	bool simm;
	bool got_imm;
	bool sent_imm;
	u32 imm;
};

/* A message's header; every chunk has room for one in front of its payload. */
#define ORDMA_HDR_LEN	sizeof(struct ordma_wire_hdr)

/* Bytes of a chunk's buffer: a header and @size bytes of payload. */
static inline u32 ordma_chunk_room(const struct ordma_chunk *chunk)
{
	return chunk->size + ORDMA_HDR_LEN;
}

/**
 * struct ordma_pool_waiter - callback run when chunks come back to a pool
 * @node: on the pool's waiter list, protected by the pool lock
 * @fn: called without the pool lock, from any context (it must not sleep;
 *	it typically queues work), once per ordma_pool_wait() registration
 */
struct ordma_pool_waiter {
	struct list_head node;
	void (*fn)(struct ordma_pool_waiter *w);
};

/**
 * struct ordma_pool - the intermediate buffers of one device
 *
 * All counters are protected by @lock; sysfs reads them under it.
 */
struct ordma_pool {
	struct ordma_dev *odev;
	spinlock_t lock;		/* see the top of pool.c */
	struct list_head free;		/* lock: free chunks */
	struct list_head waiters;	/* lock: struct ordma_pool_waiter */
	u32 chunk_bytes;		/* lock: size of new chunks */
	u32 target_chunks;		/* lock: pool_bytes / chunk_bytes */
	u32 chunks_total;		/* lock: allocated, free or held */
	u32 chunks_free;		/* lock */
	u32 high_water;			/* lock: most chunks held at once */
	u64 alloc_waits;		/* lock: gets that found none */
	u32 quota;			/* lock: chan_quota_chunks */
};

/* pool.c */
int ordma_pool_init(struct ordma_pool *pool, struct ordma_dev *odev);
void ordma_pool_destroy(struct ordma_pool *pool);
struct ordma_chunk *ordma_chunk_get(struct ordma_pool *pool, atomic_t *held);
void ordma_chunk_put(struct ordma_chunk *chunk);
bool ordma_pool_wait(struct ordma_pool *pool, struct ordma_pool_waiter *w,
		     atomic_t *held);
void ordma_pool_cancel_wait(struct ordma_pool *pool,
			    struct ordma_pool_waiter *w);
int ordma_pool_set_bytes(struct ordma_pool *pool, u64 bytes);
int ordma_pool_set_chunk_bytes(struct ordma_pool *pool, u32 bytes);
int ordma_pool_set_quota(struct ordma_pool *pool, u32 chunks);

/**
 * struct ordma_dev - per-ib_device context, built by the ib_client .add
 * @ibdev: the RDMA device this context serves
 * @pd: protection domain for everything ordma allocates on @ibdev
 * @cdev: class device, /sys/class/ordma/<ibdev>/
 * @kref: users of the context; the ib_client owns the first reference
 * @released: completed when the last reference is dropped, so .remove can
 *	wait for every user before tearing down
 * @node: entry in ordma_devs, protected by ordma_devs_lock
 * @pool: the intermediate buffers
 * @chans_lock: protects @chans
 * @chans: every channel on this device (struct ordma_chan)
 * @dying: the device is being removed; no channel may join @chans
 * @nchans: channels on @chans, for their fair share of the pool
 * @bytes_tx: payload bytes sent by every channel, ever
 * @bytes_rx: payload bytes received by every channel, ever
 * @ops: operations completed
 * @errors: operations completed with an error
 * @mode: enum ordma_mode, the sysfs knob (READ_ONCE)
 * @model_lock: protects @model
 * @model: the cost model the planner uses, measured online
 * @bytes_copied: payload bytes sent through pool chunks
 * @bytes_zerocopy: payload bytes sent from registered user pages
 * @registrations: segments registered
 * @reg_ns: time spent pinning and registering, ns
 * @hidden_ns: the part of @reg_ns the data path did not wait for, ns
 * @fallbacks: segments that could not be registered and were copied
 * @bytes_placed: payload bytes the peer wrote straight into receive buffers
 * @pages_pinned: user pages pinned now
 * @mrs_live: MRs holding a registration now
 */
struct ordma_dev {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ordma_pool pool;
	struct mutex chans_lock;	/* chans, dying */
	struct list_head chans;		/* chans_lock */
	bool dying;			/* chans_lock */
	atomic_t nchans;
	atomic64_t bytes_tx;
	atomic64_t bytes_rx;
	atomic64_t ops;
	atomic64_t errors;
	int mode;
	spinlock_t model_lock;		/* model */
	struct ordma_model model;	/* model_lock */
	atomic64_t bytes_copied;
	atomic64_t bytes_zerocopy;
	atomic64_t registrations;
	atomic64_t reg_ns;
	atomic64_t hidden_ns;
	atomic64_t fallbacks;
	atomic64_t bytes_placed;
	atomic64_t pages_pinned;
	atomic_t mrs_live;
	struct device *cdev;
	struct kref kref;
	struct completion released;
	struct list_head node;		/* ordma_devs_lock */
};

extern struct ib_client ordma_client;

/**
 * struct ordma_file - one open /dev/ordma
 * @mm: the address space of the process that opened it; every buffer an
 *	operation names lives there (grabbed, not pinned: mmget_not_zero()
 *	before use)
 * @objs: channels and listeners by id, protected by the xarray's lock;
 *	each entry holds a reference
 * @windows: exposed windows by index (the low 32 bits of the token)
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
 * @lock_limit: pages the owner may pin (RLIMIT_MEMLOCK at open, or
 *	ULONG_MAX with CAP_IPC_LOCK); charged to mm->pinned_vm
 */
struct ordma_file {
	struct mm_struct *mm;
	unsigned long lock_limit;
	struct xarray objs;
	struct xarray windows;
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
};

/**
 * struct ordma_window - a buffer exposed with ORDMA_IOC_EXPOSE
 * @addr: start in the owning file's mm
 * @len: length
 * @access: ORDMA_ACCESS_* bits
 * @salt: random high half of the token
 * @writes: peer writes into it that began, over all channels
 * @rcu: freed after a grace period; lookups run under rcu_read_lock()
 */
struct ordma_window {
	u64 addr;
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
 * @addr: user buffer
 * @len: its length
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
 */
struct ordma_req {
	struct list_head node;
	u32 op;
	u32 chan_id;
	u64 addr;
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
	bool planned;
	struct list_head segs;
	u64 zc_start;
	u64 seg_next;
	u64 seg_len;
	u64 seg_max;
	u64 t_start;
	u64 t_wait;
	bool zc_only;
	bool echoed;
	struct list_head places;
	u64 offer_end;
	bool notify;
	bool standing;
	bool announced;
};

/* file.c */
struct ordma_file *ordma_file_alloc(void);
void ordma_file_put(struct ordma_file *ofile);
void ordma_reqs_free(struct list_head *list);
void ordma_file_complete(struct ordma_file *ofile, struct ordma_req *op,
			 s64 res);
int ordma_file_expose(struct ordma_file *ofile, u64 addr, u64 len, u32 access,
		      u64 *token);
int ordma_file_unexpose(struct ordma_file *ofile, u64 token);
int ordma_window_check(struct ordma_file *ofile, u64 token, u64 off, u64 len,
		       u32 access, u64 *uaddr);
u32 ordma_window_written(struct ordma_file *ofile, u64 token, u64 *len);
int ordma_check_user_range(struct mm_struct *mm, u64 addr, u64 len,
			   bool write);

/* mr.c */
void ordma_file_unplace(struct ordma_file *ofile, u64 token);

/* xfer.c */
long ordma_file_wait(struct ordma_file *ofile,
		     bool (*done)(struct ordma_file *ofile, void *arg),
		     void *arg, long timeout);

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

/* ring.c */
struct ordma_ring;
struct vm_area_struct;
struct ordma_ring *ordma_file_ring(struct ordma_file *ofile);
int ordma_ring_setup(struct ordma_file *ofile, struct ordma_ring_setup *cmd);
int ordma_ring_enter(struct ordma_file *ofile, struct ordma_ring_enter *cmd);
int ordma_ring_mmap(struct ordma_file *ofile, struct vm_area_struct *vma);
void ordma_ring_complete(struct ordma_file *ofile, struct ordma_ring *ring,
			 struct ordma_req *op, struct list_head *done);
bool ordma_ring_pending(struct ordma_file *ofile, struct ordma_ring *ring);
void ordma_ring_destroy(struct ordma_ring *ring);

enum ordma_chan_kind {
	ORDMA_KIND_CHAN,
	ORDMA_KIND_LISTENER,
};

/* Objects in struct ordma_file.objs start with this. */
struct ordma_obj {
	enum ordma_chan_kind kind;
	u32 id;
};

/* chan.c */
struct ordma_chan;
struct ordma_listener;
int ordma_listener_create(struct ordma_file *ofile, struct sockaddr *addr,
			  u32 backlog, struct ordma_listener **out);
int ordma_listener_accept(struct ordma_listener *lis, bool nonblock,
			  struct ordma_chan **out);
void ordma_listener_close(struct ordma_listener *lis);
void ordma_listener_get(struct ordma_listener *lis);
void ordma_listener_put(struct ordma_listener *lis);
int ordma_chan_connect(struct ordma_file *ofile, struct sockaddr *addr,
		       u32 timeout_ms, struct ordma_chan **out);
void ordma_chan_close(struct ordma_chan *chan, int err);
void ordma_chan_get(struct ordma_chan *chan);
void ordma_chan_put(struct ordma_chan *chan);
void ordma_dev_kill_chans(struct ordma_dev *odev);
int ordma_chan_submit(struct ordma_chan *chan, struct ordma_req *op,
		      bool nonblock);
void ordma_chan_info(struct ordma_chan *chan, struct ordma_chan_info *info);
struct sockaddr *ordma_chan_peer(struct ordma_chan *chan);

/* dev.c */
int ordma_dev_add(struct ib_device *ibdev);
void ordma_dev_remove(struct ib_device *ibdev, void *client_data);
struct ordma_dev *ordma_dev_get_by_name(const char *name);
struct ordma_dev *ordma_dev_get(struct ib_device *ibdev);
void ordma_dev_put(struct ordma_dev *odev);

/* sysfs.c */
int ordma_sysfs_init(void);
void ordma_sysfs_exit(void);
struct device *ordma_sysfs_add_dev(struct ordma_dev *odev);
void ordma_sysfs_remove_dev(struct ordma_dev *odev);

/* uapi.c */
int ordma_file_submit(struct ordma_file *ofile, const struct ordma_submit *cmd);
int ordma_cdev_init(void);
void ordma_cdev_exit(void);

#endif /* _ORDMA_H */
