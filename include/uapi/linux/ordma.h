/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ordma - RDMA from memory that was never registered: the user ABI of
 * /dev/ordma.
 */
#ifndef _UAPI_LINUX_ORDMA_H
#define _UAPI_LINUX_ORDMA_H

#include <linux/types.h>
#include <linux/ioctl.h>

/**
 * DOC: General ioctl format
 *
 * Every ioctl takes one struct whose first two fields are ``__u32 size`` (the
 * caller's sizeof of the struct) and ``__u32 flags``. The kernel accepts any
 * size from the first version of the struct up to ORDMA_IOC_SIZE_MAX: a
 * shorter caller gets the missing fields as zero, a longer caller must leave
 * the bytes the kernel does not know zero. Fields named ``out_*`` are written
 * by the kernel; fields named ``__reserved`` must be zero. Pointers and
 * 64-bit values are ``__aligned_u64``. A failing ioctl changes nothing.
 *
 * Errors of every ioctl:
 *
 * - ENOTTY: unknown ioctl number.
 * - EINVAL: unknown flag, non-zero reserved field, size below the first
 *   version of the struct, or a value out of its documented range (len 0,
 *   len above ORDMA_MAX_LEN, an address family other than AF_INET/AF_INET6).
 * - E2BIG: the caller's struct is longer than the kernel's and the extra
 *   bytes are not zero, or its size is above ORDMA_IOC_SIZE_MAX.
 * - EFAULT: the struct itself, or a buffer it names, is not mapped with the
 *   access the operation needs (readable for send/write/expose, writable for
 *   recv/read).
 * - EOVERFLOW: addr + len wraps around.
 * - ENOENT: no channel, listener or exposed window with that id or token in
 *   this file.
 * - ENODEV: the RDMA device the channel ran on has been removed.
 * - ENOTCONN: the channel is closed or was disconnected by the peer. A
 *   channel whose peer left still takes RECVs until it is closed: they get
 *   the messages that had arrived, then ENOTCONN.
 * - EAGAIN: ORDMA_F_NONBLOCK was given and the call would wait (no pending
 *   connection to accept, no pool chunk free for this channel, no completion).
 * - ENOMEM: out of kernel memory, or pinned pages would pass RLIMIT_MEMLOCK.
 * - EDQUOT: the caller's user holds its bound of channels and listeners
 *   (CONNECT, LISTEN), windows (EXPOSE) or operations not yet reaped
 *   (SUBMIT, a ring entry): module parameters max_chans_per_user,
 *   max_windows_per_user, max_ops_per_user. A file opened with
 *   CAP_SYS_ADMIN is not counted. A connection to a listener whose user
 *   holds its bound is refused (ECONNREFUSED at the connecting side).
 * - EINTR: a blocking call was interrupted by a signal.
 * - EPERM: SUBMIT or EXPOSE from a process other than the one that opened
 *   the file (after fork(), the child must open /dev/ordma itself).
 *
 * Completions (struct ordma_cqe, read with ORDMA_IOC_WAIT or from the CQ
 * ring) carry the bytes done, or a negative errno: EMSGSIZE (the message is
 * longer than the receive buffer; it stays queued for a later, larger
 * receive), EFAULT (the buffer
 * stopped being accessible while the operation ran), EREMOTEIO (the peer
 * failed its side: its buffer faulted, or the window refused the access),
 * ERANGE (offset + len outside the exposed window), EACCES (the window was
 * not exposed for that access), ENOENT (no such window on the peer),
 * ENODEV, ENOTCONN, ECANCELED (the file or channel was closed first), and
 * when the peer broke a rule (Documentation/ordma/security.rst): EPROTO,
 * ENOBUFS, EACCES, ETIMEDOUT.
 *
 * The rings (see DOC: Rings) add:
 *
 * - ORDMA_IOC_RING_SETUP: EBUSY (the file already has rings), EINVAL
 *   (sq_entries 0 or above ORDMA_RING_MAX_SQ, cq_entries below sq_entries
 *   or above ORDMA_RING_MAX_CQ), ENOMEM.
 * - ORDMA_IOC_RING_ENTER: ENXIO (the file has no rings), EPERM (from a
 *   process other than the one that opened the file), EINVAL (an unknown
 *   flag; min_complete above the CQ ring's entries; the SQ tail is more than
 *   the ring's entries ahead of its head, or behind it), EBUSY (entries to
 *   submit, but completions are held back because the CQ ring is full: reap,
 *   then enter again), EAGAIN and ENOMEM (the first entry could not be
 *   queued for now: ORDMA_SQE_F_NONBLOCK and the pool is full, or out of
 *   memory; it stays in the SQ), EINTR and ETIMEDOUT (while waiting; only
 *   when no entry was submitted). An ENTER that consumed entries succeeds
 *   whatever happens to its wait.
 * - ORDMA_IOC_WAIT on a file with rings: EBUSY (its completions go to the
 *   CQ ring).
 * - mmap(): ENXIO (no rings yet), EINVAL (an offset other than
 *   ORDMA_OFF_SQ / ORDMA_OFF_CQ, a length above that region's size, or a
 *   private mapping).
 *
 * Entries of the SQ ring that the kernel refuses complete on the CQ ring with
 * the errno the same fields give ORDMA_IOC_SUBMIT (EINVAL for an unknown op,
 * flag or non-zero reserved field, a bad length, token or offset for SEND
 * and RECV; EOVERFLOW; EFAULT; ENOENT for a channel id this file does not
 * have; ENOTCONN, ENODEV).
 */

/* The largest size an ioctl struct may claim: one 4 KiB page. */
#define ORDMA_IOC_SIZE_MAX	4096

#define ORDMA_TYPE		0xd4

/* Largest length of one operation: 4 GiB. */
#define ORDMA_MAX_LEN		(1ULL << 32)

enum {
	ORDMA_CMD_BASE = 0x80,
	ORDMA_CMD_LISTEN = ORDMA_CMD_BASE,
	ORDMA_CMD_ACCEPT,
	ORDMA_CMD_CONNECT,
	ORDMA_CMD_CLOSE,
	ORDMA_CMD_SUBMIT,
	ORDMA_CMD_EXPOSE,
	ORDMA_CMD_UNEXPOSE,
	ORDMA_CMD_WAIT,
	ORDMA_CMD_CHAN_INFO,
	ORDMA_CMD_RING_SETUP,
	ORDMA_CMD_RING_ENTER,
};

/* Flags of the calls that may block. */
#define ORDMA_F_NONBLOCK	(1U << 0)
/*
 * ORDMA_IOC_SUBMIT of a WRITE: once its bytes are in the window, the peer's
 * next RECV on the channel completes with res 0 (the notification), in
 * order with the messages this side sends; a WRITE that failed completes
 * that RECV with its error instead (ENOENT, ERANGE, EACCES or EREMOTEIO
 * from the window's side, EFAULT for this side's buffer), unless it failed
 * before any of it went out: then it notifies nothing.
 */
#define ORDMA_F_NOTIFY		(1U << 1)

/**
 * struct ordma_addr - an IPv4 or IPv6 endpoint
 * @family: AF_INET or AF_INET6
 * @port: port, in network byte order
 * @scope_id: IPv6 scope (interface index) for link-local addresses, else 0
 * @addr: the address, network byte order: 4 bytes for AF_INET, 16 for
 *	AF_INET6; unused bytes must be zero
 */
struct ordma_addr {
	__u16 family;
	__be16 port;
	__u32 scope_id;
	__u8 addr[16];
};

/**
 * struct ordma_listen - ORDMA_IOC_LISTEN: listen for channels
 * @size: sizeof(struct ordma_listen)
 * @flags: must be 0
 * @addr: local address and port to listen on (the address selects the
 *	RDMA device; a wildcard address listens on every device)
 * @backlog: most connections connecting or waiting for ORDMA_IOC_ACCEPT;
 *	the listener refuses one more (its ORDMA_IOC_CONNECT fails with
 *	ECONNREFUSED); 0 means the default, 128
 * @out_id: id of the new listener in this file
 *
 * Errors: EADDRINUSE (port taken), EADDRNOTAVAIL (no RDMA device has that
 * address), and the general ones.
 */
struct ordma_listen {
	__u32 size;
	__u32 flags;
	struct ordma_addr addr;
	__u32 backlog;
	__u32 out_id;
};

#define ORDMA_IOC_LISTEN	_IO(ORDMA_TYPE, ORDMA_CMD_LISTEN)

/**
 * struct ordma_accept - ORDMA_IOC_ACCEPT: take one connected channel
 * @size: sizeof(struct ordma_accept)
 * @flags: ORDMA_F_NONBLOCK, or 0 to wait for a connection
 * @listener_id: a listener of this file
 * @out_chan_id: id of the new channel in this file
 * @out_peer: the peer's address
 */
struct ordma_accept {
	__u32 size;
	__u32 flags;
	__u32 listener_id;
	__u32 out_chan_id;
	struct ordma_addr out_peer;
};

#define ORDMA_IOC_ACCEPT	_IO(ORDMA_TYPE, ORDMA_CMD_ACCEPT)

/**
 * struct ordma_connect - ORDMA_IOC_CONNECT: open a channel to a listener
 * @size: sizeof(struct ordma_connect)
 * @flags: must be 0
 * @addr: the listener's address
 * @timeout_ms: give up after this long (0: 5000 ms)
 * @out_chan_id: id of the new channel in this file
 *
 * Errors: ECONNREFUSED (nobody listens there, the peer rejected the
 * protocol version, or its user holds max_chans_per_user channels), ENOMEM
 * (no memory for the channel; a full pool is none: the channel then
 * receives in a buffer of its own), EDQUOT (the caller's user holds
 * max_chans_per_user channels), EPROTO (the peer accepted with another protocol version, or
 * with connection data that is short, names a receive size out of bounds
 * or an unknown flag, or does not count every message where the device
 * needs it: the channel is closed again),
 * ETIMEDOUT, EHOSTUNREACH / ENETUNREACH (no route, no RDMA device for the
 * address), and the general ones.
 */
struct ordma_connect {
	__u32 size;
	__u32 flags;
	struct ordma_addr addr;
	__u32 timeout_ms;
	__u32 out_chan_id;
};

#define ORDMA_IOC_CONNECT	_IO(ORDMA_TYPE, ORDMA_CMD_CONNECT)

/**
 * struct ordma_close - ORDMA_IOC_CLOSE: close a channel or a listener
 * @size: sizeof(struct ordma_close)
 * @flags: must be 0
 * @id: the channel or listener
 * @__reserved: must be 0
 *
 * Operations still in flight on a channel complete with ECANCELED; the peer's
 * complete with ENOTCONN.
 */
struct ordma_close {
	__u32 size;
	__u32 flags;
	__u32 id;
	__u32 __reserved;
};

#define ORDMA_IOC_CLOSE		_IO(ORDMA_TYPE, ORDMA_CMD_CLOSE)

/* Operations (struct ordma_submit.op, struct ordma_cqe.op). */
enum ordma_op {
	ORDMA_OP_SEND = 1,	/* a message to the peer's next receive */
	ORDMA_OP_RECV,		/* the next message from the peer */
	ORDMA_OP_WRITE,		/* into the peer's exposed window */
	ORDMA_OP_READ,		/* out of the peer's exposed window */
};

/**
 * struct ordma_submit - ORDMA_IOC_SUBMIT: start one operation on a channel
 * @size: sizeof(struct ordma_submit)
 * @flags: ORDMA_F_NONBLOCK: fail with EAGAIN instead of queueing the
 *	operation behind a full pool or channel quota; ORDMA_F_NOTIFY (WRITE
 *	only, EINVAL otherwise): notify the peer once the bytes are in place
 * @op: one of enum ordma_op
 * @chan_id: the channel
 * @addr: the local buffer (any user memory; it needs no registration)
 * @len: bytes, 1 to ORDMA_MAX_LEN; for RECV, the buffer's capacity
 * @cookie: returned untouched in the completion
 * @token: WRITE and READ: the window token the peer got from
 *	ORDMA_IOC_EXPOSE; must be 0 for SEND and RECV
 * @offset: WRITE and READ: offset in the peer's window; must be 0 for SEND
 *	and RECV
 *
 * The call returns once the operation is queued; its result comes as a
 * completion. Operations of one kind on one channel run in submission order;
 * their completions may not arrive in it: a RECV the peer wrote into
 * directly completes only once the peer can no longer reach its buffer, so a
 * smaller RECV after it may complete first. Tell them apart by @cookie.
 */
struct ordma_submit {
	__u32 size;
	__u32 flags;
	__u32 op;
	__u32 chan_id;
	__aligned_u64 addr;
	__aligned_u64 len;
	__aligned_u64 cookie;
	__aligned_u64 token;
	__aligned_u64 offset;
};

#define ORDMA_IOC_SUBMIT	_IO(ORDMA_TYPE, ORDMA_CMD_SUBMIT)

/* Access a window grants its peers (struct ordma_expose.access). */
#define ORDMA_ACCESS_REMOTE_READ	(1U << 0)
#define ORDMA_ACCESS_REMOTE_WRITE	(1U << 1)

/**
 * struct ordma_expose - ORDMA_IOC_EXPOSE: let peers write/read a buffer
 * @size: sizeof(struct ordma_expose)
 * @flags: must be 0
 * @addr: start of the window in this process
 * @len: window length, 1 to ORDMA_MAX_LEN
 * @access: ORDMA_ACCESS_* bits, at least one
 * @__reserved: must be 0
 * @out_token: opaque token; any peer of this file's channels may name it in
 *	ORDMA_OP_WRITE / ORDMA_OP_READ until ORDMA_IOC_UNEXPOSE
 */
struct ordma_expose {
	__u32 size;
	__u32 flags;
	__aligned_u64 addr;
	__aligned_u64 len;
	__u32 access;
	__u32 __reserved;
	__aligned_u64 out_token;
};

#define ORDMA_IOC_EXPOSE	_IO(ORDMA_TYPE, ORDMA_CMD_EXPOSE)

/**
 * struct ordma_unexpose - ORDMA_IOC_UNEXPOSE: revoke a window
 * @size: sizeof(struct ordma_unexpose)
 * @flags: must be 0
 * @token: the token ORDMA_IOC_EXPOSE returned
 *
 * Later accesses by peers fail (ENOENT in their completion). A peer's write
 * being placed into the window (written by RDMA straight into its memory)
 * ends first, and a window registered for a peer that writes into it
 * repeatedly is taken back from that peer and deregistered: when the call
 * returns nothing more lands there and nothing of the window stays pinned.
 */
struct ordma_unexpose {
	__u32 size;
	__u32 flags;
	__aligned_u64 token;
};

#define ORDMA_IOC_UNEXPOSE	_IO(ORDMA_TYPE, ORDMA_CMD_UNEXPOSE)

/**
 * struct ordma_cqe - one completion
 * @cookie: the cookie of the operation
 * @res: bytes transferred (RECV: the message length, or 0 for the
 *	notification of a WRITE with ORDMA_F_NOTIFY), or a negative errno (the
 *	notification of a WRITE that did not land in this side's window has
 *	the error the writer's completion has)
 * @op: enum ordma_op of the operation
 * @chan_id: its channel
 */
struct ordma_cqe {
	__aligned_u64 cookie;
	__s64 res;
	__u32 op;
	__u32 chan_id;
};

/**
 * struct ordma_wait - ORDMA_IOC_WAIT: reap completions
 * @size: sizeof(struct ordma_wait)
 * @flags: ORDMA_F_NONBLOCK: return at once (EAGAIN if none)
 * @cqes: user array of @max struct ordma_cqe
 * @max: capacity of @cqes, at least 1
 * @min: wait until at least this many are available (0 or 1: any)
 * @timeout_ms: give up waiting after this long (never earlier; later by
 *	up to a scheduler tick and the pass under way); -1 waits forever. When
 *	it runs out, whatever completions are waiting (fewer than @min) are
 *	returned; ETIMEDOUT if there are none
 * @out_count: completions written to @cqes
 *
 * poll() on the file reports EPOLLIN while completions are waiting.
 */
struct ordma_wait {
	__u32 size;
	__u32 flags;
	__aligned_u64 cqes;
	__u32 max;
	__u32 min;
	__s32 timeout_ms;
	__u32 out_count;
};

#define ORDMA_IOC_WAIT		_IO(ORDMA_TYPE, ORDMA_CMD_WAIT)

/* Channel states (struct ordma_chan_info.out_state). */
enum ordma_chan_state {
	ORDMA_CHAN_CONNECTED = 1,
	ORDMA_CHAN_DISCONNECTED,	/* the peer left, or an error */
	ORDMA_CHAN_DEVICE_REMOVED,
};

/**
 * struct ordma_chan_info - ORDMA_IOC_CHAN_INFO: state and counters
 * @size: sizeof(struct ordma_chan_info)
 * @flags: must be 0
 * @chan_id: the channel
 * @out_state: enum ordma_chan_state
 * @out_ibdev: name of the RDMA device
 * @out_bytes_tx: payload bytes sent (send, write, read responses)
 * @out_bytes_rx: payload bytes received
 * @out_ops: operations completed
 * @out_errors: operations completed with an error
 * @out_chunks_held: pool chunks the channel holds now
 * @out_pages_pinned: user pages the channel has pinned now
 * @out_mrs_live: memory regions the channel holds now
 * @out_inflight: operations submitted and not yet completed
 * @out_rx_size: largest message payload one chunk carries on this channel
 * @__reserved: must be 0
 */
struct ordma_chan_info {
	__u32 size;
	__u32 flags;
	__u32 chan_id;
	__u32 out_state;
	char out_ibdev[64];
	__aligned_u64 out_bytes_tx;
	__aligned_u64 out_bytes_rx;
	__aligned_u64 out_ops;
	__aligned_u64 out_errors;
	__aligned_u64 out_chunks_held;
	__aligned_u64 out_pages_pinned;
	__aligned_u64 out_mrs_live;
	__aligned_u64 out_inflight;
	__u32 out_rx_size;
	__u32 __reserved;
};

#define ORDMA_IOC_CHAN_INFO	_IO(ORDMA_TYPE, ORDMA_CMD_CHAN_INFO)

/**
 * DOC: Rings
 *
 * A file can trade ORDMA_IOC_SUBMIT and ORDMA_IOC_WAIT for two rings shared
 * with the kernel: a submission (SQ) ring of struct ordma_ring_sqe and a
 * completion (CQ) ring of struct ordma_cqe. ORDMA_IOC_RING_SETUP creates
 * them (once per file) and reports their sizes and the offsets of every
 * field; mmap(MAP_SHARED) of the file at ORDMA_OFF_SQ and ORDMA_OFF_CQ maps
 * them. ORDMA_IOC_RING_ENTER submits entries and may wait for completions;
 * completions are read from the CQ ring without a system call.
 *
 * Each ring has a head and a tail, free-running 32-bit counters; the slot
 * of index i is i & ring_mask, and tail - head entries are in the ring.
 *
 * Who writes what (nobody else ever writes it):
 *
 * - SQ tail, SQ entries: user space. SQ head: the kernel.
 * - CQ head: user space. CQ tail, CQ entries, CQ overflow: the kernel.
 * - ring_mask, ring_entries: the kernel, once, at set-up.
 * - SQ flags: the kernel (none defined yet). CQ flags: the kernel,
 *   ORDMA_CQ_F_OVERFLOW while completions are held back.
 *
 * The kernel never reads back what it wrote: it keeps its own copy of the SQ
 * head, the CQ tail and the sizes, so user space scribbling over them only
 * confuses user space.
 *
 * Memory ordering (the only rules; see also the top of kernel/ring.c):
 *
 * - Submitting: write the entries, then store the SQ tail with release
 *   semantics (smp_store_release, __atomic_store_n(..., __ATOMIC_RELEASE)).
 *   The kernel loads the tail with acquire semantics, copies each entry once
 *   and only then publishes the new SQ head with release semantics. Load the
 *   SQ head with acquire semantics before reusing a slot.
 * - Reaping: load the CQ tail with acquire semantics, read the entries, then
 *   store the CQ head with release semantics. The kernel loads the CQ head
 *   with acquire semantics before it writes a slot.
 *
 * The kernel reads the SQ only inside ORDMA_IOC_RING_ENTER (there is no
 * kernel thread polling it): between two calls user space may rewrite the
 * entries in [head, tail) and move the tail back, never below the head
 * (ORDMA_FEAT_SQ_REWIND). Each entry is consumed (head moves past it)
 * exactly once, so it is executed at most once.
 *
 * A completion that finds the CQ ring full is never dropped
 * (ORDMA_FEAT_NODROP): it is held back in the kernel, CQ overflow counts it
 * and ORDMA_CQ_F_OVERFLOW is set; held-back completions move to the ring, in
 * order, as soon as there is room and the kernel runs (a later completion,
 * or ORDMA_IOC_RING_ENTER, which also refuses to submit with EBUSY while any
 * are held back). poll() reports EPOLLIN while the CQ ring is not empty or
 * completions are held back. Once a file has rings, every completion (also
 * of ORDMA_IOC_SUBMIT) goes to the CQ ring.
 */

/* mmap() offsets of the rings. */
#define ORDMA_OFF_SQ		0x00000000ULL
#define ORDMA_OFF_CQ		0x08000000ULL

/* Largest rings (entries, powers of two). */
#define ORDMA_RING_MAX_SQ	4096
#define ORDMA_RING_MAX_CQ	32768

/* Features (struct ordma_ring_setup.out_features). */
#define ORDMA_FEAT_NODROP	(1U << 0)	/* a full CQ drops nothing */
#define ORDMA_FEAT_SQ_REWIND	(1U << 1)	/* SQ read only in ENTER */

/* CQ flags (the word at struct ordma_cq_offsets.flags). */
#define ORDMA_CQ_F_OVERFLOW	(1U << 0)

/* Flags of a submission entry (struct ordma_ring_sqe.flags). */
#define ORDMA_SQE_F_NONBLOCK	(1U << 0)	/* as ORDMA_F_NONBLOCK */
#define ORDMA_SQE_F_NOTIFY	(1U << 1)	/* as ORDMA_F_NOTIFY */

/**
 * struct ordma_ring_sqe - one entry of the SQ ring (48 bytes)
 * @op: enum ordma_op
 * @flags: ORDMA_SQE_F_* bits
 * @__reserved: must be 0
 * @chan_id: the channel
 * @addr: the local buffer
 * @len: bytes, 1 to ORDMA_MAX_LEN; for RECV, the buffer's capacity
 * @cookie: returned untouched in the completion
 * @token: WRITE and READ: the peer's window token; 0 for SEND and RECV
 * @offset: WRITE and READ: offset in the window; 0 for SEND and RECV
 *
 * The fields mean what they mean in struct ordma_submit. Written by user
 * space only.
 */
struct ordma_ring_sqe {
	__u8 op;
	__u8 flags;
	__u16 __reserved;
	__u32 chan_id;
	__aligned_u64 addr;
	__aligned_u64 len;
	__aligned_u64 cookie;
	__aligned_u64 token;
	__aligned_u64 offset;
};

/**
 * struct ordma_sq_offsets - where the SQ ring's fields are in its mapping
 * @head: __u32, index of the next entry the kernel takes (kernel writes)
 * @tail: __u32, index after the last entry user space filled (user writes)
 * @ring_mask: __u32, ring_entries - 1 (kernel, at set-up)
 * @ring_entries: __u32, entries of the ring (kernel, at set-up)
 * @flags: __u32, ORDMA_SQ_F_* (kernel; none defined yet)
 * @sqes: the array of struct ordma_ring_sqe (user writes)
 * @__reserved: 0
 *
 * Byte offsets from the start of the mapping at ORDMA_OFF_SQ.
 */
struct ordma_sq_offsets {
	__u32 head;
	__u32 tail;
	__u32 ring_mask;
	__u32 ring_entries;
	__u32 flags;
	__u32 sqes;
	__aligned_u64 __reserved;
};

/**
 * struct ordma_cq_offsets - where the CQ ring's fields are in its mapping
 * @head: __u32, index of the next entry user space reads (user writes)
 * @tail: __u32, index after the last entry the kernel wrote (kernel writes)
 * @ring_mask: __u32, ring_entries - 1 (kernel, at set-up)
 * @ring_entries: __u32, entries of the ring (kernel, at set-up)
 * @flags: __u32, ORDMA_CQ_F_* (kernel writes)
 * @overflow: __u32, completions that ever found the ring full and were held
 *	back, modulo 2^32 (kernel writes)
 * @cqes: the array of struct ordma_cqe (kernel writes)
 * @__reserved: 0
 *
 * Byte offsets from the start of the mapping at ORDMA_OFF_CQ.
 */
struct ordma_cq_offsets {
	__u32 head;
	__u32 tail;
	__u32 ring_mask;
	__u32 ring_entries;
	__u32 flags;
	__u32 overflow;
	__u32 cqes;
	__u32 __reserved;
};

/**
 * struct ordma_ring_setup - ORDMA_IOC_RING_SETUP: create the rings
 * @size: sizeof(struct ordma_ring_setup)
 * @flags: must be 0
 * @sq_entries: SQ ring entries, 1 to ORDMA_RING_MAX_SQ, rounded up to a
 *	power of two
 * @cq_entries: CQ ring entries, 0 (twice the SQ's) or sq_entries to
 *	ORDMA_RING_MAX_CQ, rounded up to a power of two
 * @out_features: ORDMA_FEAT_* bits
 * @out_sq_entries: entries of the SQ ring
 * @out_cq_entries: entries of the CQ ring
 * @out_sqe_size: sizeof(struct ordma_ring_sqe) as the kernel knows it
 * @out_cqe_size: sizeof(struct ordma_cqe) as the kernel knows it
 * @out_sq_size: bytes to mmap at ORDMA_OFF_SQ
 * @out_cq_size: bytes to mmap at ORDMA_OFF_CQ
 * @out_sq_off: where the SQ ring's fields are
 * @out_cq_off: where the CQ ring's fields are
 *
 * Completions already waiting for ORDMA_IOC_WAIT move to the CQ ring.
 */
struct ordma_ring_setup {
	__u32 size;
	__u32 flags;
	__u32 sq_entries;
	__u32 cq_entries;
	__u32 out_features;
	__u32 out_sq_entries;
	__u32 out_cq_entries;
	__u16 out_sqe_size;
	__u16 out_cqe_size;
	__aligned_u64 out_sq_size;
	__aligned_u64 out_cq_size;
	struct ordma_sq_offsets out_sq_off;
	struct ordma_cq_offsets out_cq_off;
};

#define ORDMA_IOC_RING_SETUP	_IO(ORDMA_TYPE, ORDMA_CMD_RING_SETUP)

/* Flags of ORDMA_IOC_RING_ENTER. */
#define ORDMA_ENTER_F_SUBMIT_ALL	(1U << 0)	/* go on after a failure */

/**
 * struct ordma_ring_enter - ORDMA_IOC_RING_ENTER: submit, then wait
 * @size: sizeof(struct ordma_ring_enter)
 * @flags: ORDMA_ENTER_F_SUBMIT_ALL, or 0
 * @to_submit: take at most this many entries from the SQ ring, in order.
 *	Taking stops after an entry that fails (it completes on the CQ ring
 *	with its errno; with ORDMA_ENTER_F_SUBMIT_ALL taking goes on), and
 *	before one that cannot be queued for now (EAGAIN, ENOMEM: it stays in
 *	the ring)
 * @min_complete: then wait until this many completions are in the CQ ring
 *	or held back (0: do not wait), at most the CQ ring's entries
 * @timeout_ms: give up waiting after this long (never earlier; later by
 *	up to a scheduler tick and the pass under way); -1 waits forever.
 *	Running out with some completions but fewer than @min_complete is no error;
 *	with none it is ETIMEDOUT unless entries were submitted
 * @out_submitted: entries taken from the SQ ring (the SQ head tells the
 *	same, also if writing this field back faulted)
 *
 * Every call also moves held-back completions to the CQ ring, as far as
 * there is room.
 */
struct ordma_ring_enter {
	__u32 size;
	__u32 flags;
	__u32 to_submit;
	__u32 min_complete;
	__s32 timeout_ms;
	__u32 out_submitted;
};

#define ORDMA_IOC_RING_ENTER	_IO(ORDMA_TYPE, ORDMA_CMD_RING_ENTER)

/* ---- Generic netlink family "ordma" -------------------------------------- */

/**
 * DOC: Generic netlink
 *
 * Operators reach every ordma device through the generic netlink family
 * ORDMA_GENL_NAME, version ORDMA_GENL_VERSION (tools/ordmactl; the spec is
 * Documentation/netlink/specs/ordma.yaml). A device is named by its RDMA
 * device name (ORDMA_NL_A_DEV_NAME, as "rdma link show" lists it).
 *
 * - ORDMA_NL_CMD_DEV_GET: a device's name, port state, pool, settings,
 *   counters and cost model; a dump returns every device (with
 *   ORDMA_NL_A_DEV_NAME, only the device of that name, if there is one).
 * - ORDMA_NL_CMD_POOL_GET: the pool and the settings alone; a dump as for
 *   DEV_GET.
 * - ORDMA_NL_CMD_POOL_SET (CAP_NET_ADMIN): change any of pool_bytes,
 *   chunk_bytes, chan_quota_chunks, user_quota_chunks, mode,
 *   progress_timeout_ms and cache_max_bytes, with the rules of their sysfs
 *   files (Documentation/ABI/testing/sysfs-class-ordma). Every value is
 *   checked before any is applied; then pool_bytes and chunk_bytes change
 *   together in one step, which may still fail (EBUSY: a new chunk_bytes
 *   while channels hold chunks; ENOMEM) and then leaves every setting as it
 *   was, and the others follow. A request changes all it names or nothing.
 * - ORDMA_NL_CMD_CHAN_GET: a channel end: its id, owner (pid, comm), device,
 *   QP number, state, local and peer address, credits, chunks held, bytes
 *   and operations each way, errors, registrations, pinned pages, live MRs,
 *   operations in flight and age; ORDMA_NL_A_CHAN_ID names it. A dump
 *   returns every channel end (and ignores ORDMA_NL_A_CHAN_ID). Both keep
 *   only the channel ends of ORDMA_NL_A_DEV_NAME's device and of
 *   ORDMA_NL_A_PID's process if given: a get of one they do not keep is
 *   ENOENT.
 * - ORDMA_NL_CMD_LISTENER_GET (dump only): every listener: its id, owner,
 *   local address and port, backlog and the channels waiting for accept.
 * - ORDMA_NL_CMD_WINDOW_GET (dump only): every exposed window: the id of
 *   its file, its own id there (the low half of its token; the high half,
 *   the secret a peer needs, is never shown), owner, length, access and
 *   the peer writes into it that began. A window's address is not shown.
 *
 *   Without CAP_NET_ADMIN these three list only the objects of files the
 *   caller's effective uid opened, and a get of another user's channel is
 *   ENOENT, as is a get of a channel that is gone. Each dump resumes from
 *   the id after the last object it sent: objects are never sent twice,
 *   and one created or closed meanwhile may or may not appear; no lock is
 *   held from one message to the next.
 * - ORDMA_NL_CMD_STATS_RESET (CAP_NET_ADMIN): zero a device's counters;
 *   gauges (channels, pages_pinned, mrs_live, cache_pages, chunks_*) keep
 *   their values, high_water restarts from the chunks held now. Counters
 *   only grow except across a reset, which is not atomic across counters:
 *   an operation completing meanwhile may be counted before it in some and
 *   after it in others.
 *
 * Every command validates strictly, with an extended ack message and the
 * offset of the attribute at fault (NLMSGERR_ATTR_OFFS): an unknown or
 * malformed attribute or a missing device name is EINVAL; a setting outside
 * its static range (pool_bytes 4096 to 1073741824, chunk_bytes 4096 to
 * 1048576, chan_quota_chunks and user_quota_chunks 1 to 65536, mode an enum
 * ordma_nl_mode, progress_timeout_ms 100 to 3600000, cache_max_bytes 0 to
 * 1099511627776) is ERANGE from the netlink core, the bounds in
 * NLMSGERR_ATTR_POLICY (so is a string whose NUL is followed by more bytes
 * than the attribute may hold); a setting refused against the others (a
 * chunk_bytes that is no power of two or larger than the pool, a
 * pool_bytes smaller than a chunk) is EINVAL; an unknown command is
 * EOPNOTSUPP; a name no ordma device has is ENODEV; a change without
 * CAP_NET_ADMIN is EPERM.
 *
 * The multicast group ORDMA_GENL_MCGRP_EVENTS carries
 * ORDMA_NL_CMD_DEV_ADD and ORDMA_NL_CMD_DEV_DEL (a device got or lost its
 * ordma context), ORDMA_NL_CMD_POOL_CHANGED, ORDMA_NL_CMD_CHAN_UP and
 * ORDMA_NL_CMD_CHAN_DOWN, ORDMA_NL_CMD_PEER_FAULT (see below). Joining it
 * needs CAP_NET_ADMIN
 * (without, NETLINK_ADD_MEMBERSHIP fails with EPERM): its events name the
 * QP numbers and peer addresses of every user's channels.
 * The family lives in the initial network namespace only.
 *
 * ORDMA_NL_CMD_POOL_CHANGED is sent after a POOL_SET, or a write to a sysfs
 * setting file, that changed the value of at least one setting
 * (pool_bytes, chunk_bytes, chan_quota_chunks, user_quota_chunks, mode,
 * progress_timeout_ms, cache_max_bytes), once per such request; never for
 * a refused request, nor for one that leaves every value as it was (the
 * values it has, or a pool_bytes that rounds down to the size the pool
 * has). It carries the attributes of POOL_GET as read when it is sent.
 *
 * ORDMA_NL_CMD_CHAN_UP is sent once for a channel end, when it is
 * established; ORDMA_NL_CMD_CHAN_DOWN once for each channel end that sent
 * CHAN_UP, after it, when the channel end is closed and its RDMA CM id is
 * gone (nothing of it follows). A channel end that never came up (a
 * connect that failed) sends neither. CHAN_DOWN's ORDMA_NL_A_ERRNO is
 * ECANCELED when its owner closed it while it was up, else the error
 * that had ended it: ENOTCONN (its peer disconnected), ENODEV (its device
 * went away), ECONNRESET (a listener's channel closed before accept() took
 * it), EIO (a QP or work request error), ENOMEM, EPROTO, ENOBUFS or EACCES
 * (its peer broke a rule), ETIMEDOUT (no progress for
 * progress_timeout_ms, or a connect() that timed out as it came up) or
 * EINTR (a connect() interrupted as it came up).
 *
 * ORDMA_NL_CMD_PEER_FAULT is sent once for a channel end whose peer broke
 * a rule, when that is found (the channel end is failed then, and its
 * device's peer_faults counter counts it; its CHAN_DOWN follows when its
 * owner closes it). It carries ORDMA_NL_A_DEV_NAME, ORDMA_NL_A_CHAN_ID
 * (for ORDMA_NL_CMD_CHAN_GET while the owner still has it),
 * ORDMA_NL_A_CHAN_QPN, the peer's address and ORDMA_NL_A_ERRNO: EPROTO (a
 * malformed or out-of-place message), ENOBUFS (it made us hold more than
 * the bound), EACCES (it guessed window tokens) or ETIMEDOUT (it stopped
 * making progress for progress_timeout_ms). A fault is found where the
 * bottom half runs, and the event is sent from a work item after it: at
 * most 64 wait to be sent at once; past that a fault is counted but
 * sends no event.
 */

#define ORDMA_GENL_NAME		"ordma"
#define ORDMA_GENL_VERSION	1
#define ORDMA_GENL_MCGRP_EVENTS	"events"

/**
 * enum ordma_nl_cmd - commands and notifications of the family
 * @ORDMA_NL_CMD_UNSPEC: never used
 * @ORDMA_NL_CMD_DEV_GET: get one device (ORDMA_NL_A_DEV_NAME) or dump all
 * @ORDMA_NL_CMD_POOL_GET: get the pool and settings of one device, or dump
 * @ORDMA_NL_CMD_POOL_SET: change settings of one device (CAP_NET_ADMIN)
 * @ORDMA_NL_CMD_STATS_RESET: zero the counters of one device (CAP_NET_ADMIN)
 * @ORDMA_NL_CMD_DEV_ADD: notification: a device got its ordma context
 * @ORDMA_NL_CMD_DEV_DEL: notification: a device is losing its context
 * @ORDMA_NL_CMD_POOL_CHANGED: notification: settings changed (the pool
 *	attributes of ORDMA_NL_CMD_POOL_GET)
 * @ORDMA_NL_CMD_CHAN_UP: notification: a channel end was established
 * @ORDMA_NL_CMD_CHAN_DOWN: notification: a channel end that was up is
 *	closed
 * @ORDMA_NL_CMD_CHAN_GET: get one channel end (ORDMA_NL_A_CHAN_ID) or dump
 * @ORDMA_NL_CMD_LISTENER_GET: dump the listeners
 * @ORDMA_NL_CMD_WINDOW_GET: dump the exposed windows
 * @ORDMA_NL_CMD_PEER_FAULT: notification: a channel end's peer broke a
 *	rule and the channel end failed
 * @__ORDMA_NL_CMD_MAX: one after the last
 * @ORDMA_NL_CMD_MAX: the last
 */
enum ordma_nl_cmd {
	ORDMA_NL_CMD_UNSPEC,
	ORDMA_NL_CMD_DEV_GET,
	ORDMA_NL_CMD_POOL_GET,
	ORDMA_NL_CMD_POOL_SET,
	ORDMA_NL_CMD_STATS_RESET,
	ORDMA_NL_CMD_DEV_ADD,
	ORDMA_NL_CMD_DEV_DEL,
	ORDMA_NL_CMD_POOL_CHANGED,
	ORDMA_NL_CMD_CHAN_UP,
	ORDMA_NL_CMD_CHAN_DOWN,
	ORDMA_NL_CMD_CHAN_GET,
	ORDMA_NL_CMD_LISTENER_GET,
	ORDMA_NL_CMD_WINDOW_GET,
	ORDMA_NL_CMD_PEER_FAULT,

	__ORDMA_NL_CMD_MAX,
	ORDMA_NL_CMD_MAX = __ORDMA_NL_CMD_MAX - 1
};

/**
 * enum ordma_nl_attr - attributes of the family's messages
 * @ORDMA_NL_A_UNSPEC: never used
 * @ORDMA_NL_A_PAD: padding of 64-bit attributes
 * @ORDMA_NL_A_DEV_NAME: string, the RDMA device's name (at most 63 bytes)
 * @ORDMA_NL_A_PORT_STATE: u8, enum ordma_nl_port_state of the device's
 *	first port (cached by the RDMA core)
 * @ORDMA_NL_A_POOL_BYTES: u64, pool size in bytes (settable)
 * @ORDMA_NL_A_CHUNK_BYTES: u32, size of each chunk (settable)
 * @ORDMA_NL_A_CHUNKS_TOTAL: u32, chunks allocated, free or held
 * @ORDMA_NL_A_CHUNKS_FREE: u32, chunks no channel holds
 * @ORDMA_NL_A_CHUNKS_HELD: u32, chunks held now
 * @ORDMA_NL_A_HIGH_WATER: u32, most chunks held at once
 * @ORDMA_NL_A_ALLOC_WAITS: u64, times a channel waited for a chunk
 * @ORDMA_NL_A_CHAN_QUOTA_CHUNKS: u32, most chunks of one channel (settable)
 * @ORDMA_NL_A_USER_QUOTA_CHUNKS: u32, most chunks of one user (settable)
 * @ORDMA_NL_A_MODE: u32, enum ordma_nl_mode (settable)
 * @ORDMA_NL_A_PROGRESS_TIMEOUT_MS: u32, ms before a stuck channel fails
 *	(settable)
 * @ORDMA_NL_A_BYTES_TX: u64, payload bytes sent
 * @ORDMA_NL_A_BYTES_RX: u64, payload bytes received
 * @ORDMA_NL_A_OPS: u64, operations completed
 * @ORDMA_NL_A_ERRORS: u64, operations completed with an error
 * @ORDMA_NL_A_CHANNELS: u64, channel ends now (a gauge)
 * @ORDMA_NL_A_PAGES_PINNED: u64, user pages pinned now (a gauge)
 * @ORDMA_NL_A_MRS_LIVE: u64, memory regions registered now (a gauge)
 * @ORDMA_NL_A_BYTES_PLACED: u64, bytes peers wrote straight into buffers
 * @ORDMA_NL_A_BYTES_COPIED: u64, bytes sent from pool chunks
 * @ORDMA_NL_A_BYTES_ZEROCOPY: u64, bytes sent from registered pages
 * @ORDMA_NL_A_REGISTRATIONS: u64, segments registered
 * @ORDMA_NL_A_REG_NS: u64, ns spent registering
 * @ORDMA_NL_A_HIDDEN_NS: u64, the part of it the data path did not wait for
 * @ORDMA_NL_A_FALLBACKS: u64, segments copied because they did not register
 * @ORDMA_NL_A_PEER_FAULTS: u64, channels failed for a peer's broken rule
 * @ORDMA_NL_A_TOKEN_GUESSES: u64, window tokens peers guessed
 * @ORDMA_NL_A_MODEL: nest of enum ordma_nl_model_attr, the cost model
 * @ORDMA_NL_A_CHAN_QPN: u32, the channel end's QP number (unique on its
 *	device while the channel lives)
 * @ORDMA_NL_A_PEER_IPV4: u32 (network byte order), the peer's IPv4 address
 * @ORDMA_NL_A_PEER_IPV6: binary (16 bytes), the peer's IPv6 address
 * @ORDMA_NL_A_PEER_PORT: u16 (network byte order), the peer's port
 * @ORDMA_NL_A_ERRNO: u32, a positive errno: why a channel end went down
 * @ORDMA_NL_A_CACHE_MAX_BYTES: u64, the most one file keeps pinned in its
 *	channels' pin caches, in bytes (settable)
 * @ORDMA_NL_A_CACHE_HITS: u64, source segments a pin cache held whole
 * @ORDMA_NL_A_CACHE_MISSES: u64, source segments that pinned some pages
 * @ORDMA_NL_A_CACHE_INVALIDATIONS: u64, cached ranges dropped because the
 *	mapping under them changed
 * @ORDMA_NL_A_CACHE_PAGES: u64, pages the pin caches hold now (a gauge)
 * @ORDMA_NL_A_CHAN_ID: u32, a channel end's id, unique among the channel
 *	ends and listeners that exist at once (not its id in its file)
 * @ORDMA_NL_A_LISTENER_ID: u32, a listener's id, from the same space
 * @ORDMA_NL_A_FILE_ID: u32, the id of an open file of /dev/ordma
 * @ORDMA_NL_A_WINDOW_ID: u32, a window's id in its file
 * @ORDMA_NL_A_PID: u32, the process that opened the owning file (as the
 *	requester's pid namespace sees it; 0 if it cannot, or once that
 *	process has exited); a filter of
 *	CHAN_GET's dump
 * @ORDMA_NL_A_COMM: string, that process's command name when it opened it
 * @ORDMA_NL_A_CHAN_STATE: u8, enum ordma_nl_chan_state
 * @ORDMA_NL_A_LOCAL_IPV4: u32 (network byte order), the local IPv4 address
 * @ORDMA_NL_A_LOCAL_IPV6: binary (16 bytes), the local IPv6 address
 * @ORDMA_NL_A_LOCAL_PORT: u16 (network byte order), the local port
 * @ORDMA_NL_A_TX_CREDITS: u32, messages the peer's receives take now
 * @ORDMA_NL_A_RX_POSTED: u32, our receives posted for the peer now
 * @ORDMA_NL_A_OPS_TX: u64, SENDs and WRITEs completed
 * @ORDMA_NL_A_OPS_RX: u64, RECVs and READs completed
 * @ORDMA_NL_A_INFLIGHT: u64, operations submitted and not complete
 * @ORDMA_NL_A_AGE_MS: u64, ms since the object was created
 * @ORDMA_NL_A_BACKLOG: u32, a listener's backlog
 * @ORDMA_NL_A_PENDING: u32, channels a listener holds for accept()
 * @ORDMA_NL_A_LEN: u64, a window's length in bytes
 * @ORDMA_NL_A_ACCESS: u32, a window's ORDMA_ACCESS_* bits
 * @ORDMA_NL_A_WRITES: u64, peer writes into a window that began
 * @ORDMA_NL_A_RX_SIZE: u32, bytes of every receive buffer a channel end
 *	posts (a chunk's and a header, or 2048: protocol.rst, "Receive
 *	buffers")
 * @ORDMA_NL_A_PEER_RX_SIZE: u32, the same, as the peer last told it
 * @__ORDMA_NL_A_MAX: one after the last
 * @ORDMA_NL_A_MAX: the last
 *
 * The names in lower case are the keys of "ordmactl -j" and, for a
 * device's attributes, the names of its sysfs files
 * (Documentation/ABI/testing/sysfs-class-ordma).
 */
enum ordma_nl_attr {
	ORDMA_NL_A_UNSPEC,
	ORDMA_NL_A_PAD,
	ORDMA_NL_A_DEV_NAME,
	ORDMA_NL_A_PORT_STATE,
	ORDMA_NL_A_POOL_BYTES,
	ORDMA_NL_A_CHUNK_BYTES,
	ORDMA_NL_A_CHUNKS_TOTAL,
	ORDMA_NL_A_CHUNKS_FREE,
	ORDMA_NL_A_CHUNKS_HELD,
	ORDMA_NL_A_HIGH_WATER,
	ORDMA_NL_A_ALLOC_WAITS,
	ORDMA_NL_A_CHAN_QUOTA_CHUNKS,
	ORDMA_NL_A_USER_QUOTA_CHUNKS,
	ORDMA_NL_A_MODE,
	ORDMA_NL_A_PROGRESS_TIMEOUT_MS,
	ORDMA_NL_A_BYTES_TX,
	ORDMA_NL_A_BYTES_RX,
	ORDMA_NL_A_OPS,
	ORDMA_NL_A_ERRORS,
	ORDMA_NL_A_CHANNELS,
	ORDMA_NL_A_PAGES_PINNED,
	ORDMA_NL_A_MRS_LIVE,
	ORDMA_NL_A_BYTES_PLACED,
	ORDMA_NL_A_BYTES_COPIED,
	ORDMA_NL_A_BYTES_ZEROCOPY,
	ORDMA_NL_A_REGISTRATIONS,
	ORDMA_NL_A_REG_NS,
	ORDMA_NL_A_HIDDEN_NS,
	ORDMA_NL_A_FALLBACKS,
	ORDMA_NL_A_PEER_FAULTS,
	ORDMA_NL_A_TOKEN_GUESSES,
	ORDMA_NL_A_MODEL,
	ORDMA_NL_A_CHAN_QPN,
	ORDMA_NL_A_PEER_IPV4,
	ORDMA_NL_A_PEER_IPV6,
	ORDMA_NL_A_PEER_PORT,
	ORDMA_NL_A_ERRNO,
	ORDMA_NL_A_CACHE_MAX_BYTES,
	ORDMA_NL_A_CACHE_HITS,
	ORDMA_NL_A_CACHE_MISSES,
	ORDMA_NL_A_CACHE_INVALIDATIONS,
	ORDMA_NL_A_CACHE_PAGES,
	ORDMA_NL_A_CHAN_ID,
	ORDMA_NL_A_LISTENER_ID,
	ORDMA_NL_A_FILE_ID,
	ORDMA_NL_A_WINDOW_ID,
	ORDMA_NL_A_PID,
	ORDMA_NL_A_COMM,
	ORDMA_NL_A_CHAN_STATE,
	ORDMA_NL_A_LOCAL_IPV4,
	ORDMA_NL_A_LOCAL_IPV6,
	ORDMA_NL_A_LOCAL_PORT,
	ORDMA_NL_A_TX_CREDITS,
	ORDMA_NL_A_RX_POSTED,
	ORDMA_NL_A_OPS_TX,
	ORDMA_NL_A_OPS_RX,
	ORDMA_NL_A_INFLIGHT,
	ORDMA_NL_A_AGE_MS,
	ORDMA_NL_A_BACKLOG,
	ORDMA_NL_A_PENDING,
	ORDMA_NL_A_LEN,
	ORDMA_NL_A_ACCESS,
	ORDMA_NL_A_WRITES,
	ORDMA_NL_A_RX_SIZE,
	ORDMA_NL_A_PEER_RX_SIZE,

	__ORDMA_NL_A_MAX,
	ORDMA_NL_A_MAX = __ORDMA_NL_A_MAX - 1
};

/**
 * enum ordma_nl_model_attr - the cost model, nested in ORDMA_NL_A_MODEL
 * @ORDMA_NL_MODEL_A_UNSPEC: never used
 * @ORDMA_NL_MODEL_A_PAD: padding of 64-bit attributes
 * @ORDMA_NL_MODEL_A_PIN_NS_PAGE: u64, ns to pin one page
 * @ORDMA_NL_MODEL_A_REG_NS: u64, fixed ns of one registration
 * @ORDMA_NL_MODEL_A_COPY_PS_BYTE: u64, ps per byte copied into a chunk
 * @ORDMA_NL_MODEL_A_WIRE_PS_BYTE: u64, ps per byte on the device's wire
 * @ORDMA_NL_MODEL_A_WR_NS: u64, fixed ns of one work request
 * @ORDMA_NL_MODEL_A_DEREG_NS: u64, ns to deregister one segment
 * @ORDMA_NL_MODEL_A_CPU_WIRE: u8, 1 if the wire is work of the host's CPUs
 * @__ORDMA_NL_MODEL_A_MAX: one after the last
 * @ORDMA_NL_MODEL_A_MAX: the last
 *
 * The sysfs files are named model_ and these names in lower case.
 */
enum ordma_nl_model_attr {
	ORDMA_NL_MODEL_A_UNSPEC,
	ORDMA_NL_MODEL_A_PAD,
	ORDMA_NL_MODEL_A_PIN_NS_PAGE,
	ORDMA_NL_MODEL_A_REG_NS,
	ORDMA_NL_MODEL_A_COPY_PS_BYTE,
	ORDMA_NL_MODEL_A_WIRE_PS_BYTE,
	ORDMA_NL_MODEL_A_WR_NS,
	ORDMA_NL_MODEL_A_DEREG_NS,
	ORDMA_NL_MODEL_A_CPU_WIRE,

	__ORDMA_NL_MODEL_A_MAX,
	ORDMA_NL_MODEL_A_MAX = __ORDMA_NL_MODEL_A_MAX - 1
};

/**
 * enum ordma_nl_port_state - ORDMA_NL_A_PORT_STATE, as the RDMA core has it
 * @ORDMA_NL_PORT_NOP: no state reported
 * @ORDMA_NL_PORT_DOWN: the link is down
 * @ORDMA_NL_PORT_INIT: initializing
 * @ORDMA_NL_PORT_ARMED: armed
 * @ORDMA_NL_PORT_ACTIVE: up: channels can be opened
 * @ORDMA_NL_PORT_ACTIVE_DEFER: active, with a deferred error
 */
enum ordma_nl_port_state {
	ORDMA_NL_PORT_NOP,
	ORDMA_NL_PORT_DOWN,
	ORDMA_NL_PORT_INIT,
	ORDMA_NL_PORT_ARMED,
	ORDMA_NL_PORT_ACTIVE,
	ORDMA_NL_PORT_ACTIVE_DEFER,
};

/**
 * enum ordma_nl_chan_state - ORDMA_NL_A_CHAN_STATE, a channel end's state
 * @ORDMA_NL_CHAN_CONNECTING: its connection is being set up
 * @ORDMA_NL_CHAN_PARKED: established on a listener, not yet taken by
 *	accept()
 * @ORDMA_NL_CHAN_ESTABLISHED: up: operations run
 * @ORDMA_NL_CHAN_DEAD: failed or closed; ORDMA_NL_A_ERRNO says why. It
 *	stays listed until its owner closes it
 */
enum ordma_nl_chan_state {
	ORDMA_NL_CHAN_CONNECTING,
	ORDMA_NL_CHAN_PARKED,
	ORDMA_NL_CHAN_ESTABLISHED,
	ORDMA_NL_CHAN_DEAD,
};

/**
 * enum ordma_nl_mode - ORDMA_NL_A_MODE, how transfers are sent (the sysfs
 *	file "mode" has these names in lower case)
 * @ORDMA_NL_MODE_AUTO: the planner chooses per transfer
 * @ORDMA_NL_MODE_COPY: through pool chunks only
 * @ORDMA_NL_MODE_ZEROCOPY: from registered pages only
 * @ORDMA_NL_MODE_OVERLAP: the head copied while the rest registers
 */
enum ordma_nl_mode {
	ORDMA_NL_MODE_AUTO,
	ORDMA_NL_MODE_COPY,
	ORDMA_NL_MODE_ZEROCOPY,
	ORDMA_NL_MODE_OVERLAP,
};

#endif /* _UAPI_LINUX_ORDMA_H */
