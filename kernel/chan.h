/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Channels, listeners and registered segments: the objects (chan.c, mr.c)
 * that the RDMA CM side (cm.c) builds and the data path (sched.c and the
 * engine below it) runs.
 */
#ifndef _ORDMA_CHAN_H
#define _ORDMA_CHAN_H

#include <linux/workqueue.h>
#include <linux/timer.h>
#include <linux/lockdep.h>
#include <linux/interval_tree.h>
#include <linux/mmu_notifier.h>
#include <linux/scatterlist.h>
#include <linux/completion.h>
#include <rdma/rdma_cm.h>

#include "file.h"

/* Most receive buffers a channel keeps posted. */
#define ORDMA_RX_DEPTH		16
/*
 * Fewest a channel keeps posted when the pair counts every message
 * (credit_all), whatever its share of the pool: the credits need three
 * (wr.c).
 */
#define ORDMA_CREDIT_ALL_RX	3
/*
 * Bytes of the receive buffer of its own a channel keeps when the pool
 * gives it no reserve (ordma_rx_reserve()): its header and 1992 bytes of
 * payload are every receive buffer it posts, so an idle channel holds no
 * chunk of the pool.
 */
#define ORDMA_RX_SMALL		2048
/* Most sends a channel keeps posted (each may have an unsignaled RDMA WRITE
 * before it: the send queue holds twice as many work requests).
 */
#define ORDMA_TX_DEPTH		32
/* How long a graceful disconnect lets posted sends complete before a drain. */
#define ORDMA_LEFT_GRACE_MS	500
/*
 * Answers to the peer's messages (acks, REVOKED) a channel queues at most
 * while its sends do not go out; one more fails it with -ENOBUFS.
 */
#define ORDMA_ANSWERS_MAX	1024
/*
 * Window tokens a peer may name that its channel's file never gave out;
 * the last of them fails the channel with -EACCES.
 */
#define ORDMA_GUESSES_MAX	8
/* Where the addresses of every MR of ours start (mr.c, ordma_seg_iova()). */
#define ORDMA_IOVA_BASE		BIT_ULL(40)
/* Registered segments a channel has at once, all stages. */
#define ORDMA_SEG_DEPTH		4
/* Largest segment, in pages (2 MiB). */
#define ORDMA_SEG_MAX_PAGES	512
/*
 * Standing registrations of our windows a channel holds at once, and the
 * standing offers of the peer's windows it keeps; the largest window
 * registered whole, in pages (64 MiB).
 */
#define ORDMA_STAND_DEPTH	4
#define ORDMA_STAND_MAX_PAGES	16384
/* Registrations this small measure the fixed cost of one. */
#define ORDMA_SEG_SMALL_PAGES	4
/* Cached pinned ranges (pin.c) one segment is made of, at most. */
#define ORDMA_SEG_PINS		8
/* Scatter entries of one send work request, at most (the device may allow fewer). */
#define ORDMA_TX_SGE		32
/* Completion queue entries a channel takes from the device's CQ pool: a
 * send may be an RDMA WRITE and a SEND, both completing when flushed; one
 * more each for ib_drain_qp()'s markers.
 */
#define ORDMA_CQES		(ORDMA_RX_DEPTH + 2 * ORDMA_TX_DEPTH + 2)

enum ordma_seg_state {
	ORDMA_SEG_QUEUED,
	ORDMA_SEG_PINNING,
	ORDMA_SEG_READY,
	ORDMA_SEG_USED,
	ORDMA_SEG_FAILED,
	ORDMA_SEG_DEREG,
};

/**
 * struct ordma_pin - a range of user pages pinned and DMA-mapped (pin.c)
 * @mni: tells us when the range's mapping changes in any way
 * @it: its place in the cache's tree, [@start, @start + npages pages - 1]
 * @cache: the cache it belongs to
 * @link: idle and live: on the cache's lru; dead and idle: on its dead
 *	list (cache lock)
 * @users: segments holding it (cache lock)
 * @live: in the tree, found by lookups (cache lock); false once
 *	invalidated, evicted or never cached
 * @write: pinned for writing and mapped both ways, so it serves
 *	destinations as well as sources; else read-only, sources alone
 * @npages: pages pinned
 * @pages: the pinned pages
 * @dma: the DMA address of each page, mapped one by one
 */
struct ordma_pin {
	struct mmu_interval_notifier mni;
	struct interval_tree_node it;
	struct ordma_pcache *cache;
	struct list_head link;
	u32 users;
	bool live;
	bool write;
	u32 npages;
	struct page **pages;
	dma_addr_t *dma;
};

/**
 * struct ordma_pcache - a channel's cache of pinned user ranges (pin.c)
 * @lock: protects everything below but @node; taken inside the mm's
 *	notifier callbacks, so nothing that sleeps runs under it
 * @tree: live ranges, by user address
 * @lru: live ranges no segment holds, least recently used first
 * @dead: ranges to release (unpin, unmap), for @release_work
 * @release_work: releases @dead (it may sleep: notifiers are removed)
 * @pages: pages of every range not yet released
 * @node: on the list of caches the shrinker walks (ordma_pin_caches_lock),
 *	from its first pin until ordma_pin_flush(); only the registration
 *	worker adds it, so it may test @node without the lock
 */
struct ordma_pcache {
	spinlock_t lock;		/* see above */
	struct rb_root_cached tree;
	struct list_head lru;
	struct list_head dead;
	struct work_struct release_work;
	u64 pages;
	struct list_head node;
};

/**
 * struct ordma_frwr - a channel's fast registration of destinations (frwr.c)
 * @qp: a queue pair of the channel's PD connected to itself, for REG_MR
 *	and LOCAL_INV alone; NULL until the first destination
 * @cq: its completion queue
 * @cqe: the completion of the one work request in flight
 * @done: completed with it
 * @status: its status
 * @broken: no fast registration on this channel (no support, or @qp
 *	failed): destinations are registered with ib_reg_user_mr()
 * @idle: invalid MRs of a segment's size kept for the next segments (a
 *	device that DMAs), or on a software device MRs never registered,
 *	made while the worker has nothing else to do (see frwr.c)
 * @nidle: how many
 * @sgl: scatter entries of the destination being registered, when its
 *	pages are the pin cache's (ORDMA_SEG_MAX_PAGES, not chained)
 *
 * Only the registration worker touches it (or ordma_mr_flush() once the
 * worker has stopped); the completion handler writes @status, then
 * completes @done.
 */
struct ordma_frwr {
	struct ib_qp *qp;
	struct ib_cq *cq;
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status status;
	bool broken;
	struct ib_mr *idle[ORDMA_SEG_DEPTH];
	u8 nidle;
	struct scatterlist *sgl;
};

/**
 * struct ordma_seg - a range of a user buffer, pinned and registered
 * @op_node: on its operation's list of segments, or on chan->standing for
 *	a standing one (worker)
 * @q_node: on chan->reg_todo or chan->reg_done (chan->lock)
 * @all_node: on chan->segs while it lives (chan->lock)
 * @uaddr: start of the range in the owner's mm
 * @off: offset of the range in its operation's buffer (worker)
 * @len: length of the range
 * @write: a destination: registered for the peer's RDMA WRITE
 * @msg_id: the message it receives, or the peer's write (destination,
 *	worker)
 * @buf_len: length of the receive buffer or of the write it is part of
 *	(destination, worker)
 * @offered: a PLACE for it was queued (destination, worker)
 * @wtoken: the window it is part of, for a peer's write, or 0 (a receive
 *	buffer, or a source)
 * @w_node: on the file's wsegs while it lives, if @wtoken (file wsegs_lock)
 * @chan: its channel (window segments: for ordma_file_unplace())
 * @state: enum ordma_seg_state; see the top of mr.c for who writes it,
 *	and where it is read without the lock
 * @abandoned: the worker gave it up while it was being registered (lock)
 * @pinned: pages the registration pinned, or the pinned ranges hold
 * @mr: a destination's registration (iova ordma_seg_iova(@uaddr))
 * @fast: @mr is a fast registration (frwr.c), else from ib_reg_user_mr()
 * @dpages: a fast-registered destination's pinned pages
 * @ndpages: entries of @dpages
 * @sgt: and their DMA mapping; or a kernel user's range's (@kern)
 * @kern: a range of a kernel user's buffer (its offsets are @uaddr): its
 *	pages DMA-mapped in @sgt, not pinned; a source is sent from with
 *	local_dma_lkey, a destination fast-registered (no @dpages)
 * @kmem: the kernel buffer a destination is of (@kern): a RECV's (which
 *	completes only once the segment is gone) or a window's (which is
 *	unexposed only once no segment of @wtoken lives), for its pages
 * @pins: a source's pinned ranges from the channel's cache (pin.c), in
 *	address order, together covering [@uaddr, @uaddr + @len); sent from
 *	with the PD's local_dma_lkey
 * @npins: how many of @pins are held
 * @sends: sends from this segment posted and not completed (worker)
 * @reg_ns: time pinning and registering it took, ns
 * @counted: its hidden time is accounted (worker)
 * @standing: the whole window @wtoken, registered for as long as it is
 *	exposed and offered once (a standing offer); not counted in nsegs
 * @revoke: the window is being unexposed (WRITE_ONCE/READ_ONCE)
 * @revoke_sent: the REVOKE went out; deregistered at the peer's REVOKED
 *	(worker)
 * @owner: a RECV's destination: the operation whose completion waits until
 *	this is deregistered (its dereg_wait), or NULL
 * @tid: the trace id of the operation it was asked for, or 0
 */
struct ordma_seg {
	struct list_head op_node;	/* run */
	struct list_head q_node;	/* chan->lock */
	struct list_head all_node;	/* chan->lock */
	u64 uaddr;
	u64 off;			/* run */
	u64 len;
	bool write;
	u64 msg_id;			/* run */
	u64 buf_len;			/* run */
	bool offered;			/* run */
	u64 wtoken;
	struct list_head w_node;	/* ofile->wsegs_lock */
	struct ordma_chan *chan;
	enum ordma_seg_state state;	/* see the top of mr.c */
	bool abandoned;			/* chan->lock */
	u32 pinned;
	struct ib_mr *mr;
	bool fast;
	struct page **dpages;
	u32 ndpages;
	struct sg_table sgt;
	bool kern;
	struct ordma_kmem kmem;
	struct ordma_pin *pins[ORDMA_SEG_PINS];
	u8 npins;
	u32 sends;			/* run */
	u64 reg_ns;
	bool counted;			/* run */
	bool standing;
	bool revoke;			/* READ_ONCE, WRITE_ONCE */
	bool revoke_sent;		/* run */
	struct ordma_req *owner;
	u64 tid;
};

/**
 * enum ordma_tx_kind - the work requests of one send
 * @ORDMA_TX_SEND: a SEND of the header and the payload (from the chunk,
 *	or from a registered segment as a second SGE)
 * @ORDMA_TX_SEND_IMM: a SEND with immediate data of the payload alone, no
 *	header (a message of one small piece from the chunk)
 * @ORDMA_TX_PLACED: an unsignaled RDMA WRITE of the payload into the
 *	peer's offer, then the SEND of the header alone, whose completion
 *	says the WRITE is done too
 * @ORDMA_TX_WRITE_IMM: one RDMA WRITE with immediate data of the payload
 *	into a standing offer, no header (a whole write of one piece)
 * @ORDMA_TX_WRITE: one RDMA WRITE of the payload into a standing offer,
 *	no header (a piece of a write that a later piece's header announces)
 */
enum ordma_tx_kind {
	ORDMA_TX_SEND,
	ORDMA_TX_SEND_IMM,
	ORDMA_TX_PLACED,
	ORDMA_TX_WRITE_IMM,
	ORDMA_TX_WRITE,
};

/**
 * struct ordma_tx - a send descriptor: one piece on the wire
 * @node: on chan->tx_free (chan->run), or on chan->tx_done once its work
 *	request completed (chan->lock)
 * @cqe: completion entry of its signaled work request
 * @chan: its channel
 * @chunk: the pool chunk that holds the header, and the payload unless
 *	@seg has it
 * @op: the operation the piece is of, or NULL (control messages, credits,
 *	read responses)
 * @seg: the registered segment the payload comes from, or NULL
 * @seg_off: where in @seg the payload starts
 * @raddr: for the RDMA WRITE kinds, where in the peer's memory
 * @rkey: the peer's key for @raddr
 * @kind: enum ordma_tx_kind
 * @status: work completion status, set by the completion handler
 * @lost: its post failed (worker). A driver may still have queued the
 *	work request (siw does, for one it rejects, and completes it when
 *	the QP is flushed), so the descriptor keeps its chunk until its
 *	completion comes or the QP is drained or destroyed
 *	(ordma_tx_reclaim()), and is in nobody's count meanwhile
 *
 * A channel has ORDMA_TX_DEPTH of them, in struct ordma_chan: no send
 * allocates.
 */
struct ordma_tx {
	struct list_head node;
	struct ib_cqe cqe;
	struct ordma_chan *chan;
	struct ordma_chunk *chunk;
	struct ordma_req *op;
	struct ordma_seg *seg;
	u64 seg_off;
	u64 raddr;
	u32 rkey;
	enum ordma_tx_kind kind;
	int status;
	bool lost;
};

enum ordma_chan_phase {
	ORDMA_PHASE_CONNECTING,
	ORDMA_PHASE_ESTABLISHED,
	ORDMA_PHASE_DEAD,
};

/**
 * struct ordma_chan - one RC connection between two ordma endpoints
 * @obj: its kind, for the owning file's table
 * @kref: the file's id, the CM, the worker and entries on the file's runq
 *	hold references
 * @ofile: the owning file (referenced)
 * @odev: the device context (referenced until teardown)
 * @cm_id: the RDMA CM id
 * @pd: the channel's own protection domain, for its QP and its MRs: a key
 *	offered on this channel is no key on any other QP
 * @qp: the RC QP
 * @cq: send and receive completions
 * @work: the worker
 * @run: held by whoever runs the data path, the worker or a submitter
 *	(ordma_chan_run_inline()); the fields marked "worker" (and "run" in
 *	their trailing comment) are touched only under it, and the functions
 *	that touch them say so with ordma_chan_assert_run()
 * @run_node: on the file's runq, waiting for a task in ordma_file_wait()
 *	(ofile->run_lock)
 * @runner_busy: such a task is running the channel's passes now: kicks
 *	go to the runq for it to take when done (ofile->run_lock)
 * @submitters: tasks running the passes after submitting an operation
 *	(ordma_chan_run_submitter()) (ofile->run_lock)
 * @submit_kicked: a kick came while they ran and no runner took it: the
 *	first of them to finish runs the passes once more, unless a pass
 *	that began after the kick cleared it (lock)
 * @teardown: serialises ordma_chan_close(); held while destroying
 * @lock: protects the fields marked "lock"
 * @closing: ordma_chan_close() stopped the worker; kicks do nothing (lock)
 * @phase: enum ordma_chan_phase (lock)
 * @err: why the channel died, once @phase is DEAD (lock)
 * @announced: its CM handler made it ESTABLISHED (from CONNECTING, so at
 *	most once) and netlink's CHAN_UP is sent; ordma_chan_close() owes a
 *	CHAN_DOWN (lock)
 * @submitted: operations handed over by ioctls (lock)
 * @done: receive chunks whose work request completed, status set (lock)
 * @tx_done: send descriptors whose work request completed (lock)
 * @tx_free: send descriptors not in use (worker)
 * @txd: the send descriptors
 * @connected: completed on ESTABLISHED or failure, for connect and accept
 * @cm_err: error of a failed connection attempt
 * @resolve_ms: how long connect's address and route resolutions may each
 *	take: the whole of its timeout, which bounds both
 * @dev_node: on odev->chans (odev->chans_lock)
 * @in_setup: on odev->chans but still being built by a listener's request
 *	handler; device removal waits for it rather than closing it
 *	(odev->chans_lock)
 * @listener: the listener that accepted it, until accept() takes it
 * @pending_node: on the listener's pending list (listener lock)
 * @parked: a listener's channel that accept() has not handed out yet: what
 *	the peer sends stays on @done, neither dispatched nor answered, and
 *	only the receive reserved at set-up is posted, so a connection nobody
 *	accepted reaches no window and holds no more than its reserve (lock;
 *	read once without it by ordma_rx_target())
 * @peer: the peer's address
 * @rx_size: size of our receive buffers: a chunk's and a header, or
 *	ORDMA_RX_SMALL when the pool gave the channel no reserve, until it
 *	grows (ordma_rx_try_grow(); worker, WRITE_ONCE: chan_info reads it)
 * @peer_rx_size: size of the peer's receive buffers (worker once the
 *	channel is up: the peer's CREDIT with ORDMA_WIRE_F_GROW raises it)
 * @held: chunks held from the pool (all kinds), and its user's count,
 *	charged by the pool
 * @rx_held: chunks held for receiving, @rx_small among them (worker)
 * @rx_small: with an @rx_size of ORDMA_RX_SMALL, the channel's own
 *	receive buffer, in place of a reserved chunk: no pool's (@rx_small.pool
 *	NULL), never given back to one, freed when the channel is unbuilt;
 *	no longer posted once the channel grew
 * @rx_small_left: since the channel grew, receives posted small that have
 *	not completed yet (worker)
 * @rx_grow_due: the peer is to be told of the grown @rx_size once
 *	@rx_small_left is 0 (worker)
 * @rx_extra: of those, past the reserved one, counted in the pool's
 *	rx_extra (worker)
 * @rx_uncounted: the channel is dead and flushed: its chunks count no more
 *	in the pool's rx_extra (worker)
 * @tx_held: chunks held for sending (worker)
 * @rx_posted: receives posted (worker)
 * @tx_posted: sends posted (worker)
 * @rx_credit_posted: receives ever posted, mod 2^32 (worker)
 * @rx_credit_hdr: header-only messages ever received, mod 2^32; the
 *	credit every header we send carries is @rx_credit_posted minus this
 *	(worker)
 * @rx_credit_told: that credit as our last header told it (worker)
 * @rx_credit_used: messages with payload ever received (every message
 *	with @credit_all), mod 2^32 (worker)
 * @tx_credit_peer: the peer's credit, as its latest header said (worker)
 * @tx_credit_sent: messages with payload ever sent (every message with
 *	@credit_all), mod 2^32 (worker)
 * @credit_all: the pair counts every message against the credits, as a
 *	device without receiver-not-ready retry needs (iWARP); set before the
 *	channel is up, constant after
 * @tx_hello: the connecting side of a device whose connecting side speaks
 *	first (odev->initiator_first) has sent nothing yet: a CREDIT goes if
 *	nothing else does (worker)
 * @tx_wait_peer: the accepting side of such a device has received nothing
 *	yet, so it sends nothing (worker)
 * @tx_moved: when a send of ours last completed, or the send queue got
 *	busy, jiffies (worker)
 * @stall: fires when the sends posted may have been stuck for the
 *	device's progress_timeout_ms, or a graceful disconnect's grace ends;
 *	kicks the worker, which checks
 * @tx_mark: start of the cost model's current wire window, ns (worker)
 * @tx_bytes: bytes completed in that window (worker)
 * @rx_ring: receive chunks taken off the ring and reusable (worker)
 * @rx_spare: chunks on @rx_ring (worker)
 * @qp_flushed: the worker moved the QP to the error state (worker)
 * @left_seen: the worker saw the peer's graceful disconnect; sends posted
 *	then get a grace before the drain (ordma_xfer_left_grace()) (worker)
 * @left_at: when it saw it, jiffies (worker)
 * @sendq: SEND operations in order (worker)
 * @recvq: RECV operations in order (worker)
 * @writeq: WRITE operations not yet acknowledged (worker)
 * @readq: READ operations not yet complete (worker)
 * @rx_msgs: received chunks waiting for RECVs: MSG, MSG_PLACED, MSG_ABORT,
 *	NOTIFY, and a write's last piece that carried its notification
 *	(rewritten as a NOTIFY) (worker)
 * @remote_reads: READ_REQ chunks being served (worker)
 * @ctrl: header-only messages to send: acks and read requests (worker)
 * @ctrl_answers: those on @ctrl that answer the peer (worker)
 * @guesses: window tokens the peer named that were never given out (worker)
 * @next_op_id: ids of one-sided operations (worker)
 * @next_msg_id: id of our next message to start, from 1 (worker)
 * @tx_early: offers for messages we have not started yet (worker)
 * @rx_msg_last: id of the peer's message we last started receiving (worker)
 * @rx_wr_id: the peer's write whose pieces came last (worker)
 * @rx_wr_status: its first failure, or 0 (worker)
 * @rx_wr_notified: its notification came; another closes the channel
 *	(worker)
 * @rx_wr: the ranges of our window that write may be placed into, or NULL
 *	(worker, or close once the worker is stopped; see ordma_rx_write())
 * @rx_wr_revoke: unexpose asks the worker to give back @rx_wr if its
 *	window is gone (WRITE_ONCE/READ_ONCE)
 * @rx_wr_standing: the peer's write @rx_wr_id goes into a standing offer
 *	(worker)
 * @rx_st_next: window offset its next piece starts at (worker)
 * @rx_st_left: bytes of it still to come (worker)
 * @standing: standing registrations of our windows (struct ordma_seg,
 *	op_node; worker)
 * @nstanding: segments on @standing (worker)
 * @stand_revoke: unexpose asks the worker to revoke standing offers
 *	(WRITE_ONCE/READ_ONCE)
 * @tx_standing: standing offers of the peer's windows (worker)
 * @ntx_standing: offers on @tx_standing (worker)
 * @pool_waiter: queued on the pool's waiters when it had no chunk for us
 * @reg_work: the registration worker (mr.c)
 * @segs: every live segment (lock)
 * @reg_todo: segments for the registration worker (lock)
 * @reg_done: segments registered (or failed) for the worker (lock)
 * @nsegs: live segments (lock; the worker may peek, see mr.c)
 * @nsegs_max: most live segments, 0 when sends cannot use segments
 * @seg_cap: largest segment one MR maps, bytes
 * @send_sge: scatter entries a send work request of the QP may have
 * @tx_sge: where ordma_tx_post() builds a work request's entries
 * @pcache: pinned source ranges kept for the next sends (pin.c)
 * @frwr: fast registration of destinations (frwr.c)
 * @write_cqe: completion of the unsignaled RDMA WRITEs, seen only when one
 *	failed
 * @bytes_tx: payload bytes sent (atomic)
 * @bytes_rx: payload bytes received (atomic)
 * @ops: operations completed (atomic)
 * @errors: operations that failed (atomic)
 * @inflight: operations submitted and not completed (atomic)
 * @ops_tx: of @ops, the SENDs and WRITEs (atomic)
 * @registrations: segments registered (atomic)
 * @pages_pinned: pages its segments hold pinned (atomic)
 * @mrs_live: memory regions of its segments that exist (atomic)
 * @qpn: the QP number, for netlink: this and the next two are set once
 *	by ordma_chan_publish() and read by lookups that found the channel
 *	published
 * @ibdev: the device's name, for netlink
 * @local: the local address, for netlink
 * @kheld: a kernel user's channel that its user holds (ordma_chan_own()
 *	until ordma_chan_disown()): its death is told (lock)
 * @down_told: its death was told, or is being (lock)
 * @down_work: tells it (ofile->kern->chan_down), holding a reference
 * @kpriv: the kernel user's pointer for the channel (kapi.c;
 *	WRITE_ONCE/READ_ONCE)
 * @knode: on its kernel user's list of channels (kapi.c, under the
 *	context's lock)
 * @kclosed: completed once its kernel user's close is over (kapi.c)
 *
 * @odev, @cm_id, @pd, @qp and @cq are set while the channel is built (connect's
 * CM handler, or the listener's request handler) and cleared only by
 * ordma_chan_close() under @teardown, after it has stopped the worker and
 * destroyed the CM id (which waits for the handler). @listener, @peer_rx_size
 * and @cm_err are written by the CM handler before it completes @connected
 * or wakes the listener; readers come after that wake-up. @resolve_ms is
 * set before the CM id can deliver an event. Later only the
 * worker raises @peer_rx_size (WRITE_ONCE; netlink reads it).
 */
struct ordma_chan {
	struct ordma_obj obj;
	struct kref kref;
	struct ordma_file *ofile;
	struct ordma_dev *odev;
	struct rdma_cm_id *cm_id;
	struct ib_pd *pd;
	struct ib_qp *qp;
	struct ib_cq *cq;
	struct work_struct work;
	struct mutex teardown;		/* serialises ordma_chan_close() */
	struct mutex run;		/* held while running the data path */
	struct list_head run_node;	/* ofile->run_lock */
	bool runner_busy;		/* ofile->run_lock */
	unsigned int submitters;	/* ofile->run_lock */

	spinlock_t lock;		/* see the top of chan.c */
	bool submit_kicked;		/* lock */
	enum ordma_chan_phase phase;	/* lock */
	bool closing;			/* lock */
	int err;			/* lock */
	bool announced;			/* lock */
	struct list_head submitted;	/* lock */
	struct list_head done;		/* lock */
	struct list_head tx_done;	/* lock */

	struct completion connected;
	int cm_err;
	bool connect_sent;		/* lock; see ordma_chan_close() */
	wait_queue_head_t connect_wait;	/* connect_sent went false */
	struct work_struct close_work;	/* a given-up iWARP connect's close */
	u32 resolve_ms;
	struct list_head dev_node;	/* odev->chans_lock */
	bool in_setup;			/* odev->chans_lock */
	struct ordma_listener *listener;
	struct list_head pending_node;	/* listener lock */
	bool parked;			/* lock */
	struct sockaddr_storage peer;
	u32 rx_size;
	u32 peer_rx_size;

	struct ordma_hold held;
	u32 rx_held;			/* run */
	struct ordma_chunk rx_small;
	u32 rx_small_left;		/* run */
	bool rx_grow_due;		/* run */
	u32 rx_extra;			/* run */
	bool rx_uncounted;		/* run */
	u32 tx_held;			/* run */
	u32 rx_posted;			/* run */
	u32 tx_posted;			/* run */
	u32 rx_credit_posted;		/* run */
	u32 rx_credit_hdr;		/* run */
	u32 rx_credit_told;		/* run */
	u32 rx_credit_used;		/* run */
	u32 tx_credit_peer;		/* run */
	u32 tx_credit_sent;		/* run */
	bool credit_all;
	bool tx_hello;			/* run */
	bool tx_wait_peer;		/* run */
	unsigned long tx_moved;		/* run */
	struct timer_list stall;
	u64 tx_mark;			/* run */
	u64 tx_bytes;			/* run */
	struct list_head rx_ring;	/* run */
	u32 rx_spare;			/* run */
	bool qp_flushed;		/* run */
	bool left_seen;			/* run */
	unsigned long left_at;		/* run */
	struct list_head sendq;		/* run */
	struct list_head recvq;		/* run */
	struct list_head writeq;	/* run */
	struct list_head readq;		/* run */
	struct list_head rx_msgs;	/* run */
	struct list_head remote_reads;	/* run */
	struct list_head ctrl;		/* run */
	u32 ctrl_answers;		/* run */
	u32 guesses;			/* run */
	u64 next_op_id;			/* run */
	u64 next_msg_id;		/* run */
	struct list_head tx_early;	/* run */
	u64 rx_msg_last;		/* run */
	u64 rx_wr_id;			/* run */
	int rx_wr_status;		/* run */
	bool rx_wr_notified;		/* run */
	struct ordma_req *rx_wr;	/* run */
	bool rx_wr_revoke;		/* READ_ONCE, WRITE_ONCE */
	bool rx_wr_standing;		/* run */
	u64 rx_st_next;			/* run */
	u64 rx_st_left;			/* run */
	struct list_head standing;	/* run */
	u32 nstanding;			/* run */
	bool stand_revoke;		/* acquire, release */
	struct list_head tx_standing;	/* run */
	u32 ntx_standing;		/* run */
	struct wait_queue_entry pool_waiter;

	struct work_struct reg_work;
	struct list_head segs;		/* lock */
	struct list_head reg_todo;	/* lock */
	struct list_head reg_done;	/* lock */
	u32 nsegs;			/* lock */
	u32 nsegs_max;
	u64 seg_cap;
	u32 send_sge;
	struct ib_sge tx_sge[ORDMA_TX_SGE];	/* run */
	struct ordma_pcache pcache;
	struct ordma_frwr frwr;
	atomic64_t pages_pinned;
	atomic_t mrs_live;

	atomic64_t bytes_tx;
	atomic64_t bytes_rx;
	atomic64_t ops;
	atomic64_t errors;
	atomic64_t inflight;
	atomic64_t ops_tx;
	atomic64_t registrations;
	u32 qpn;
	char ibdev[IB_DEVICE_NAME_MAX];
	struct sockaddr_storage local;
	struct ib_cqe write_cqe;
	bool kheld;			/* lock */
	bool down_told;			/* lock */
	struct work_struct down_work;	/* holds a reference while queued */
	void *kpriv;			/* READ_ONCE, WRITE_ONCE */
	struct list_head knode;		/* kapi.c: ctx->lock */
	struct completion kclosed;
	struct list_head tx_free;	/* run */
	struct ordma_tx txd[ORDMA_TX_DEPTH];
};

/**
 * struct ordma_listener - a listening RDMA CM id
 * @obj: its kind, for the owning file's table
 * @kref: the file's id and the CM hold references
 * @ofile: the owning file (referenced)
 * @cm_id: the listening CM id
 * @lock: protects @pending, @npending and @dead
 * @pending: channels connecting or established, waiting for accept; a
 *	channel joins it once its request handler cannot fail any more
 * @npending: channels on @pending, and those a request handler is still
 *	building (it took their place before rdma_accept())
 * @backlog: most channels counted in @npending; a connection beyond is
 *	rejected
 * @dead: the listener is closed; refuse new connections
 * @wait: accept() waits here
 * @all_node: on ordma_listeners (ordma_listeners_lock)
 * @local: the address it listens on, set before ordma_listener_publish()
 *
 * @cm_id is cleared under ordma_listeners_lock by ordma_listener_close(); the
 * device-removal scan reads it under the same lock.
 */
struct ordma_listener {
	struct ordma_obj obj;
	struct kref kref;
	struct ordma_file *ofile;
	struct rdma_cm_id *cm_id;
	spinlock_t lock;		/* pending, dead */
	struct list_head pending;	/* lock */
	u32 npending;			/* lock; READ_ONCE for a first look */
	u32 backlog;
	bool dead;			/* lock */
	wait_queue_head_t wait;
	struct list_head all_node;
	struct sockaddr_storage local;
};

/**
 * struct ordma_chan_stat - what netlink shows of a channel end
 * @id: its id (struct ordma_obj)
 * @qpn: its QP number
 * @ibdev: its device's name
 * @local: the local address
 * @peer: the peer's address
 * @state: enum ordma_nl_chan_state
 * @err: once dead, why (a negative errno)
 * @tx_credits: messages the peer's receives take now
 * @rx_posted: receives posted now
 * @rx_size: bytes of each of our receive buffers
 * @peer_rx_size: bytes of each of the peer's, as it told
 * @chunks_held: pool chunks held
 * @mrs_live: memory regions held
 * @bytes_tx: payload bytes sent
 * @bytes_rx: payload bytes received
 * @ops_tx: SENDs and WRITEs completed
 * @ops_rx: other operations completed
 * @errors: operations that failed
 * @inflight: operations submitted and not completed
 * @registrations: segments registered
 * @pages_pinned: pages its segments hold pinned
 * @age_ms: ms since it was created
 *
 * The counters are read one by one without a lock: a snapshot of each, not
 * of all at one instant.
 */
struct ordma_chan_stat {
	u32 id;
	u32 qpn;
	char ibdev[IB_DEVICE_NAME_MAX];
	struct sockaddr_storage local;
	struct sockaddr_storage peer;
	u8 state;
	int err;
	u32 tx_credits;
	u32 rx_posted;
	u32 rx_size;
	u32 peer_rx_size;
	u32 chunks_held;
	u32 mrs_live;
	u64 bytes_tx;
	u64 bytes_rx;
	u64 ops_tx;
	u64 ops_rx;
	u64 errors;
	u64 inflight;
	u64 registrations;
	u64 pages_pinned;
	u64 age_ms;
};

/* chan.c */
extern struct workqueue_struct *ordma_wq;
int ordma_chan_init(void);
void ordma_chan_exit(void);
struct ordma_chan *ordma_chan_alloc(struct ordma_file *ofile);
void ordma_chan_get(struct ordma_chan *chan);
void ordma_chan_put(struct ordma_chan *chan);
void ordma_listener_get(struct ordma_listener *lis);
void ordma_listener_put(struct ordma_listener *lis);
struct ordma_obj *ordma_obj_get(struct ordma_file *ofile, u32 id,
				enum ordma_chan_kind kind);
void ordma_obj_put(struct ordma_obj *obj);
void ordma_chan_fail(struct ordma_chan *chan, int err);
void ordma_chan_wr_failed(struct ordma_chan *chan, enum ib_wc_status status);
void ordma_chan_down_locked(struct ordma_chan *chan);
void ordma_chan_own(struct ordma_chan *chan);
void ordma_chan_disown(struct ordma_chan *chan);
void ordma_chan_down_wait(struct ordma_chan *chan);
void ordma_chan_fault(struct ordma_chan *chan, int err);
int ordma_fault_notifier_register(struct notifier_block *nb);
void ordma_fault_notifier_unregister(struct notifier_block *nb);
void ordma_chan_kick(struct ordma_chan *chan);
void ordma_chan_kick_locked(struct ordma_chan *chan);
void ordma_chan_queue_work(struct ordma_chan *chan, struct work_struct *work);
void ordma_chan_info(struct ordma_chan *chan, struct ordma_chan_info *info);
struct sockaddr *ordma_chan_peer(struct ordma_chan *chan);
int ordma_chan_publish(struct ordma_chan *chan, struct rdma_cm_id *cm_id);
int ordma_listener_publish(struct ordma_listener *lis);
struct ordma_obj *ordma_obj_next(unsigned long *id,
				 enum ordma_chan_kind kind);
struct ordma_chan *ordma_chan_lookup(u32 id);
void ordma_chan_stat(struct ordma_chan *chan, struct ordma_chan_stat *st);
int ordma_chan_err(struct ordma_chan *chan);

/*
 * The fields marked "worker" belong to whoever holds chan->run; a function
 * that touches them says so with this.
 */
static inline void ordma_chan_assert_run(struct ordma_chan *chan)
{
	lockdep_assert_held(&chan->run);
}

/* mr.c */
void ordma_mr_init(struct ordma_chan *chan);
void ordma_mr_setup(struct ordma_chan *chan);
struct ordma_seg *ordma_seg_queue(struct ordma_chan *chan, u64 uaddr, u64 len,
				  bool write, u64 wtoken, u64 tid);
struct ordma_seg *ordma_seg_queue_standing(struct ordma_chan *chan, u64 uaddr,
					   u64 len, u64 wtoken);
struct ordma_seg *ordma_seg_queue_kern(struct ordma_chan *chan,
				       const struct ordma_req *op, u64 off,
				       u64 len, bool write, u64 wtoken);
u64 ordma_seg_sges(const struct ordma_seg *seg, u64 addr, u64 len, u32 lkey,
		   struct ib_sge *sge, u32 max, u32 *nsge);
void ordma_seg_sync(struct ib_device *ibdev, const struct ordma_seg *seg,
		    u64 addr, u64 len);
void ordma_seg_put(struct ordma_chan *chan, struct ordma_seg *seg);
u64 ordma_seg_end(u64 start, u64 end);
void ordma_mr_flush(struct ordma_chan *chan);

/* frwr.c */
void ordma_frwr_init(struct ordma_chan *chan);
int ordma_frwr_ready(struct ordma_chan *chan, u32 npages);
void ordma_frwr_refill(struct ordma_chan *chan);
int ordma_frwr_reg(struct ordma_chan *chan, struct ordma_seg *seg,
		   u32 npages, u64 iova_base);
void ordma_frwr_unreg(struct ordma_chan *chan, struct ordma_seg *seg);
void ordma_frwr_destroy(struct ordma_chan *chan);

/* pin.c */
int ordma_memlock_charge(struct ordma_file *ofile, u32 npages);
void ordma_memlock_uncharge(struct ordma_file *ofile, u32 npages);
void ordma_pin_init(struct ordma_chan *chan);
void ordma_pin_flush(struct ordma_chan *chan);
int ordma_pin_get(struct ordma_chan *chan, u64 uaddr, u64 len, bool may_pin,
		  bool write, struct ordma_pin **pins, u8 *npins, u32 *pinned);
void ordma_pin_put(struct ordma_chan *chan, struct ordma_pin *pin);
bool ordma_pin_cached(struct ordma_chan *chan, u64 uaddr, u64 len);
u64 ordma_pin_sges(struct ordma_pin * const *pins, u8 npins, u64 addr,
		   u64 len, u32 lkey, struct ib_sge *sge, u32 max, u32 *nsge);
void ordma_pin_sync(struct ib_device *ibdev, struct ordma_pin * const *pins,
		    u8 npins, u64 addr, u64 len, bool for_cpu);
int ordma_pin_sg(struct ordma_pin * const *pins, u8 npins, u64 addr,
		 u64 len, struct scatterlist *sgl, u32 max);
void ordma_pin_dirty(struct ordma_pin * const *pins, u8 npins, u64 addr,
		     u64 len);
int ordma_pin_module_init(void);
void ordma_pin_module_exit(void);

#endif /* _ORDMA_CHAN_H */
