/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordma - RDMA from memory that was never registered.
 *
 * The lowest layer's structures, shared by every file of the module: a
 * device's context (dev.c), its pool of chunks (pool.c) and class device
 * (sysfs.c), and the cost model (plan.h).
 */
#ifndef _ORDMA_H
#define _ORDMA_H

#include <linux/device.h>
#include <linux/kref.h>
#include <linux/completion.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/socket.h>
#include <linux/sched/clock.h>
#include <linux/sizes.h>
#include <rdma/ib_verbs.h>
#include <uapi/linux/ordma.h>

#include "compat.h"
#include "plan.h"
#include "wire.h"

struct ordma_dev;

/**
 * enum ordma_rx_kind - what completed a receive posted with a chunk
 * @ORDMA_RX_HDR: a SEND: a header, then its payload
 * @ORDMA_RX_SEND_IMM: a SEND with immediate data: a payload alone
 * @ORDMA_RX_WRITE_IMM: an RDMA WRITE with immediate data, which wrote
 *	elsewhere and left the chunk untouched
 */
enum ordma_rx_kind {
	ORDMA_RX_HDR,
	ORDMA_RX_SEND_IMM,
	ORDMA_RX_WRITE_IMM,
};

/**
 * struct ordma_hold - who holds chunks of a pool, for its quotas
 * @chunks: chunks this holder (a channel) holds, at most the pool's quota
 * @user: chunks its user holds over all its channels, at most the pool's
 *	user_quota; NULL for a holder of no counted user
 */
struct ordma_hold {
	atomic_t chunks;
	atomic_t *user;
};

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
 * @held: its holder's counts, charged by ordma_chunk_get()
 * @cqe: the holder's: completion entry of the receive posted into it
 * @owner: the holder's: its channel, for the receive's completion
 * @status: the holder's: work completion status of that receive
 * @rx_kind: the holder's: enum ordma_rx_kind of that receive
 * @imm: the holder's: its immediate data, unless ORDMA_RX_HDR
 *
 * A chunk a send uses is named by a send descriptor (struct ordma_tx),
 * which holds what the send needs besides the bytes.
 */
struct ordma_chunk {
	struct list_head node;
	struct ordma_pool *pool;
	void *buf;
	u64 dma;
	u32 size;
	u32 len;
	struct ordma_hold *held;
	struct ib_cqe cqe;
	void *owner;
	int status;
	enum ordma_rx_kind rx_kind;
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
 * struct ordma_pool - the intermediate buffers of one device
 * @odev: the device
 * @lock: see the top of pool.c
 * @free: free chunks (@lock)
 * @waiters: gets that wait for a chunk (see the top of pool.c)
 * @chunk_bytes: size of new chunks (@lock)
 * @target_chunks: pool_bytes / chunk_bytes (@lock)
 * @chunks_total: chunks allocated, free or held (@lock)
 * @chunks_free: chunks on @free (@lock)
 * @high_water: most chunks held at once (@lock)
 * @alloc_waits: gets that found none (@lock)
 * @quota: chan_quota_chunks (@lock)
 * @user_quota: user_quota_chunks (@lock)
 * @rx_extra: receive chunks past each channel's reserve (atomic)
 *
 * All counters are protected by @lock; sysfs reads them under it.
 */
struct ordma_pool {
	struct ordma_dev *odev;
	spinlock_t lock;		/* see the top of pool.c */
	struct list_head free;		/* lock: free chunks */
	wait_queue_head_t waiters;	/* see the top of pool.c */
	u32 chunk_bytes;		/* lock: size of new chunks */
	u32 target_chunks;		/* lock: pool_bytes / chunk_bytes */
	u32 chunks_total;		/* lock: allocated, free or held */
	u32 chunks_free;		/* lock */
	u32 high_water;			/* lock: most chunks held at once */
	u64 alloc_waits;		/* lock: gets that found none */
	u32 quota;			/* lock: chan_quota_chunks */
	u32 user_quota;			/* lock: user_quota_chunks */
	atomic_t rx_extra;		/* receive chunks past each reserve */
};

/**
 * struct ordma_pool_info - one consistent reading of a pool (ordma_pool_read())
 * @pool_bytes: target size, bytes (pool_bytes)
 * @chunk_bytes: size of new chunks
 * @chunks_total: chunks allocated, free or held
 * @chunks_free: chunks on the free list
 * @high_water: most chunks held at once
 * @alloc_waits: gets that found none
 * @quota: chan_quota_chunks
 * @user_quota: user_quota_chunks
 */
struct ordma_pool_info {
	u64 pool_bytes;
	u32 chunk_bytes;
	u32 chunks_total;
	u32 chunks_free;
	u32 high_water;
	u64 alloc_waits;
	u32 quota;
	u32 user_quota;
};

/* Bounds of the pool's settings (pool.c checks them, nl.c's policies too). */
#define ORDMA_CHUNK_MIN		SZ_4K
#define ORDMA_CHUNK_MAX		SZ_1M
#define ORDMA_POOL_MAX		SZ_1G
#define ORDMA_QUOTA_MIN		1
#define ORDMA_QUOTA_MAX		65536

/* pool.c */
bool ordma_chunk_bytes_valid(u64 bytes);
bool ordma_pool_bytes_valid(u64 bytes, u32 chunk_bytes);
bool ordma_quota_valid(u64 chunks);
void ordma_pool_read(struct ordma_pool *pool, struct ordma_pool_info *pi);
void ordma_pool_reset_stats(struct ordma_pool *pool);
int ordma_pool_init(struct ordma_pool *pool, struct ordma_dev *odev);
void ordma_pool_destroy(struct ordma_pool *pool);
struct ordma_chunk *ordma_chunk_get(struct ordma_pool *pool,
				    struct ordma_hold *held);
void ordma_chunk_put(struct ordma_chunk *chunk);
bool ordma_pool_wait(struct ordma_pool *pool, struct wait_queue_entry *w,
		     struct ordma_hold *held);
void ordma_pool_cancel_wait(struct ordma_pool *pool,
			    struct wait_queue_entry *w);
u32 ordma_pool_quota(struct ordma_pool *pool);
u32 ordma_pool_target(struct ordma_pool *pool);
bool ordma_pool_plenty(struct ordma_pool *pool);
bool ordma_pool_rx_room(struct ordma_pool *pool);
bool ordma_pool_has_free(struct ordma_pool *pool);
bool ordma_pool_user_below(struct ordma_pool *pool, struct ordma_hold *held,
			   u32 div);
bool ordma_pool_has_room(struct ordma_pool *pool, struct ordma_hold *held);
u32 ordma_pool_chunk_bytes(struct ordma_pool *pool);
int ordma_pool_resize(struct ordma_pool *pool, u32 chunk_bytes, u64 bytes);
int ordma_pool_set_quota(struct ordma_pool *pool, u32 chunks);
int ordma_pool_set_user_quota(struct ordma_pool *pool, u32 chunks);

/**
 * struct ordma_dev - per-ib_device context, built by the ib_client .add
 * @ibdev: the RDMA device this context serves
 * @cdev: class device, /sys/class/ordma/<ibdev>/
 * @kref: users of the context; the ib_client owns the first reference
 * @released: completed when the last reference is dropped, so .remove can
 *	wait for every user before tearing down
 * @node: entry in ordma_devs, protected by ordma_devs_lock
 * @pool: the intermediate buffers
 * @chans_lock: protects @chans
 * @chans: every channel on this device (struct ordma_chan)
 * @dying: the device is being removed; no channel may join @chans
 * @nbuilding: channels on @chans that a listener's request handler is still
 *	building (their in_setup); device removal waits for them
 * @chans_wait: woken when @nbuilding drops
 * @nchans: channels on @chans, for their fair share of the pool
 * @bytes_tx: payload bytes sent by every channel, ever
 * @bytes_rx: payload bytes received by every channel, ever
 * @ops: operations completed
 * @errors: operations completed with an error
 * @imm: the device's work requests carry immediate data (an iWARP device's
 *	do not): without it messages carry their header and a write into a
 *	standing offer is named by a SEND (tx.c)
 * @rnr: a SEND that finds no receive posted waits for one (receiver not
 *	ready retry; on iWARP it ends the connection). The credits (wr.c)
 *	leave header-only messages to it: on a device without it the pair
 *	counts every message (chan->credit_all)
 * @initiator_first: the side that connected sends the first message, and
 *	the side that accepted sends nothing before it arrived (iWARP without
 *	RTR negotiation: RFC 5044 lets the responder send only after the
 *	initiator's first frame; siw ends a connection whose reply it finds
 *	followed by one)
 * @user_mr_va: a user registration is addressed where the user sees its
 *	memory, so ordma asks for that address (mr.c): soft iWARP takes no
 *	other (siw_reg_user_mr() ignores the iova it is given), and iWARP
 *	takes no fast registration on a QP of no connection (frwr.c). The
 *	peer then learns where the buffer is in the owner's address space
 * @close_flushes: the QP ends with the connection (iWARP: the peer's close
 *	of the TCP stream), and its flushed completions come before the CM's
 *	DISCONNECTED (ordma_chan_wr_failed())
 * @connect_settles: a connect in flight must end (its reply, or the
 *	device's own timeout) before its id is disconnected or destroyed:
 *	iw_cm BUG()s on an id in CONN_SENT (ordma_chan_close())
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
 * @peer_faults: channels failed because their peer broke a rule
 *	(ordma_chan_fault(): EPROTO, ENOBUFS, EACCES, ETIMEDOUT)
 * @token_guesses: window tokens peers named that no window of the file
 *	ever had (not counting those unexposed since)
 * @progress_ms: a channel whose posted sends all stay incomplete this long
 *	fails with -ETIMEDOUT, the sysfs knob progress_timeout_ms (READ_ONCE)
 * @cache_max: the most one file's pin caches keep on this device, bytes,
 *	the knob cache_max_bytes (READ_ONCE); 0: nothing is kept
 * @cache_hits: segments found pinned in a cache
 * @cache_misses: source segments that had to pin some of their pages
 * @cache_invalidations: cached ranges dropped because their mapping changed
 * @cache_pages: pages the caches of the device's channels hold now
 */
struct ordma_dev {
	struct ib_device *ibdev;
	struct ordma_pool pool;
	struct mutex chans_lock;	/* chans, dying, nbuilding */
	struct list_head chans;		/* chans_lock */
	bool dying;			/* chans_lock */
	u32 nbuilding;			/* chans_lock; READ_ONCE to wait */
	wait_queue_head_t chans_wait;
	atomic_t nchans;
	atomic64_t bytes_tx;
	atomic64_t bytes_rx;
	atomic64_t ops;
	atomic64_t errors;
	bool imm;
	bool rnr;
	bool close_flushes;
	bool connect_settles;
	bool initiator_first;
	bool user_mr_va;
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
	atomic64_t peer_faults;
	atomic64_t token_guesses;
	u32 progress_ms;
	u64 cache_max;
	atomic64_t cache_hits;
	atomic64_t cache_misses;
	atomic64_t cache_invalidations;
	atomic64_t cache_pages;
	struct device *cdev;
	struct kref kref;
	struct completion released;
	struct list_head node;		/* ordma_devs_lock */
};

/* Default of progress_timeout_ms, and its bounds. */
#define ORDMA_PROGRESS_MS	30000
#define ORDMA_PROGRESS_MS_MIN	100
#define ORDMA_PROGRESS_MS_MAX	3600000
/* Default of cache_max_bytes, and its bound (1 TiB). */
#define ORDMA_CACHE_MAX		(64ULL << 20)
#define ORDMA_CACHE_MAX_MAX	BIT_ULL(40)

/**
 * enum ordma_user_res - what user.c counts per user
 * @ORDMA_USER_CHANS: channels and listeners
 * @ORDMA_USER_WINDOWS: exposed windows
 * @ORDMA_USER_OPS: operations submitted and not yet reaped
 * @ORDMA_USER_CHUNKS: pool chunks its channels hold (bounded by each
 *	pool's user_quota_chunks, pool.c)
 * @ORDMA_USER_NR: how many
 */
enum ordma_user_res {
	ORDMA_USER_CHANS,
	ORDMA_USER_WINDOWS,
	ORDMA_USER_OPS,
	ORDMA_USER_CHUNKS,
	ORDMA_USER_NR,
};

struct ordma_user;

/* user.c */
struct ordma_user *ordma_user_get(kuid_t uid);
void ordma_user_put(struct ordma_user *u);
int ordma_user_charge(struct ordma_user *u, enum ordma_user_res res);
void ordma_user_uncharge(struct ordma_user *u, enum ordma_user_res res);
atomic_t *ordma_user_chunks(struct ordma_user *u);

/* dev.c */
struct ordma_dev *ordma_dev_create(struct ib_device *ibdev);
struct ordma_dev *ordma_dev_get_by_name(const char *name);
struct ordma_dev *ordma_dev_get_at(unsigned long pos, u32 *gen);
void ordma_dev_reset_stats(struct ordma_dev *odev);
void ordma_dev_list(struct ordma_dev *odev);
void ordma_dev_unlist(struct ordma_dev *odev);
void ordma_dev_destroy(struct ordma_dev *odev);
struct ordma_dev *ordma_dev_get(struct ib_device *ibdev);
void ordma_dev_put(struct ordma_dev *odev);

/**
 * enum ordma_knob - the settings of a device (sysfs files, netlink POOL_SET)
 * @ORDMA_KNOB_POOL_BYTES: pool_bytes
 * @ORDMA_KNOB_CHUNK_BYTES: chunk_bytes
 * @ORDMA_KNOB_CHAN_QUOTA: chan_quota_chunks
 * @ORDMA_KNOB_USER_QUOTA: user_quota_chunks
 * @ORDMA_KNOB_MODE: mode, an index of ordma_mode_names
 * @ORDMA_KNOB_PROGRESS_MS: progress_timeout_ms
 * @ORDMA_KNOB_CACHE_MAX: cache_max_bytes
 * @ORDMA_KNOB_NR: how many
 */
enum ordma_knob {
	ORDMA_KNOB_POOL_BYTES,
	ORDMA_KNOB_CHUNK_BYTES,
	ORDMA_KNOB_CHAN_QUOTA,
	ORDMA_KNOB_USER_QUOTA,
	ORDMA_KNOB_MODE,
	ORDMA_KNOB_PROGRESS_MS,
	ORDMA_KNOB_CACHE_MAX,
	ORDMA_KNOB_NR,
};

/**
 * struct ordma_knobs - new values of some settings, for ordma_knobs_set()
 * @set: the settings given, BIT(enum ordma_knob) each
 * @val: their values, indexed by enum ordma_knob
 */
struct ordma_knobs {
	u32 set;
	u64 val[ORDMA_KNOB_NR];
};

/* sysfs.c */
int ordma_knobs_set(struct ordma_dev *odev, const struct ordma_knobs *k,
		    enum ordma_knob *bad);
int ordma_knobs_notifier_register(struct notifier_block *nb);
void ordma_knobs_notifier_unregister(struct notifier_block *nb);
int ordma_sysfs_init(void);
void ordma_sysfs_exit(void);
struct device *ordma_sysfs_add_dev(struct ordma_dev *odev);
void ordma_sysfs_remove_dev(struct ordma_dev *odev);

/*
 * Timestamps of the cost model and the counters, ns. local_clock() reads
 * the CPU's clock where ktime_get_ns() reads the clocksource, which may be
 * slow: the HPET of an emulated guest costs microseconds a read, and the
 * data path stamps every operation a few times. Stamps from two CPUs may
 * disagree a little; an interval is never negative.
 */
static inline u64 ordma_now(void)
{
	return local_clock();
}

static inline u64 ordma_ns_since(u64 t0)
{
	u64 now = local_clock();

	return now > t0 ? now - t0 : 0;
}

#endif /* _ORDMA_H */
