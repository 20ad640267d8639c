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
 * size from the first version of the struct upward: a shorter caller gets the
 * missing fields as zero, a longer caller must leave the bytes the kernel does
 * not know zero. Fields named ``out_*`` are written by the kernel; fields
 * named ``__reserved`` must be zero. Pointers and 64-bit values are
 * ``__aligned_u64``. A failing ioctl changes nothing.
 *
 * Errors of every ioctl:
 *
 * - ENOTTY: unknown ioctl number.
 * - EINVAL: unknown flag, non-zero reserved field, size below the first
 *   version of the struct, or a value out of its documented range (len 0,
 *   len above ORDMA_MAX_LEN, an address family other than AF_INET/AF_INET6).
 * - E2BIG: the caller's struct is longer than the kernel's and the extra
 *   bytes are not zero.
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
 * - EINTR: a blocking call was interrupted by a signal.
 * - EPERM: SUBMIT or EXPOSE from a process other than the one that opened
 *   the file (after fork(), the child must open /dev/ordma itself).
 *
 * Completions (struct ordma_cqe, read with ORDMA_IOC_WAIT) carry the bytes
 * done, or a negative errno: EMSGSIZE (the message is longer than the receive
 * buffer; it stays queued for a later, larger receive), EFAULT (the buffer
 * stopped being accessible while the operation ran), EREMOTEIO (the peer
 * failed its side: its buffer faulted, or the window refused the access),
 * ERANGE (offset + len outside the exposed window), EACCES (the window was
 * not exposed for that access), ENOENT (no such window on the peer),
 * ENODEV, ENOTCONN, ECANCELED (the file or channel was closed first).
 */

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
};

/* Flags of the calls that may block. */
#define ORDMA_F_NONBLOCK	(1U << 0)

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
 * @backlog: most connections waiting for ORDMA_IOC_ACCEPT; 0 means a default
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
 * protocol version, or its pool has no room for one more channel), ENOBUFS
 * (our pool has no room: every channel keeps one receive buffer and leaves
 * one chunk for sending), ETIMEDOUT, EHOSTUNREACH / ENETUNREACH (no route, no
 * RDMA device for the address), and the general ones.
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
 *	operation behind a full pool or channel quota
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
 * completion. Operations of one kind on one channel run in submission order.
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
 * Later accesses by peers fail (ENOENT in their completion).
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
 * @res: bytes transferred (RECV: the message length), or a negative errno
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
 * @timeout_ms: give up waiting after this long; -1 waits forever. When
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

#endif /* _UAPI_LINUX_ORDMA_H */
