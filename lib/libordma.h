/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * libordma - the user library of ordma (RDMA from memory that was never
 * registered). Installed as <libordma.h>; the kernel ABI it drives is
 * <linux/ordma.h>, which this header includes.
 *
 * Return values: every call returns 0 or a positive value on success and a
 * negative errno on failure (errno itself is left alone). The library never
 * prints and never exits.
 *
 * Thread safety: a handle (struct ordma) is NOT thread-safe. Every call on
 * one handle, and the use of the submission entries and completions it hands
 * out, must be serialised by the caller; the simplest rule is one handle per
 * thread, each with its own channels. Different handles share nothing (the
 * library has no global state), so threads with a handle each need no
 * locking at all. A handle must not be used in a child after fork(): the
 * kernel refuses the child's submissions with EPERM; open a new handle there.
 *
 * Two ways to move data:
 *
 * - Synchronous calls (ordma_send(), ordma_recv(), ordma_write(),
 *   ordma_read()) start one operation and return when it has completed: the
 *   bytes done, or -errno. A signal does not interrupt them: the kernel uses
 *   the buffer until the operation completes, so they keep waiting.
 * - Asynchronous: take a submission entry with ordma_get_sqe(), fill it with
 *   an ordma_prep_*() call, start every filled entry with ordma_submit(),
 *   then take completions with ordma_wait_cqe() / ordma_peek_cqe() and
 *   release each with ordma_cqe_seen(). A completion carries the cookie
 *   given to ordma_prep_*(), untouched.
 *
 * Both can be mixed on one handle: completions of asynchronous operations
 * that finish while a synchronous call waits are kept, in the order they
 * completed, for ordma_wait_cqe() and ordma_peek_cqe(); none is lost.
 *
 * Underneath, a handle uses the kernel's submission and completion rings
 * when it offers them (one system call per ordma_submit() batch and per
 * synchronous call, none to take completions) and one ioctl per operation
 * otherwise, or when the environment has LIBORDMA_BACKEND=ioctl; the calls
 * behave the same on both (see libordma(7)).
 */
#ifndef _LIBORDMA_H
#define _LIBORDMA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <linux/ordma.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Entries of the submission queue of a handle (ordma_get_sqe()). */
#define ORDMA_SQ_ENTRIES	256

/*
 * Most asynchronous operations a handle keeps in flight plus completed and
 * not yet released with ordma_cqe_seen(); ordma_submit() stops with -EBUSY
 * at this bound, so completions never overflow.
 */
#define ORDMA_CQ_ENTRIES	1024

/*
 * Flags of a submission entry (struct ordma_sqe.flags). ORDMA_SQE_NONBLOCK:
 * fail with EAGAIN at ordma_submit() instead of queueing a send, write or
 * read behind a full pool. ORDMA_SQE_NOTIFY (writes only): once the bytes
 * are in the window, the peer's next receive on the channel completes with
 * res 0, in order with this side's sends.
 */
#define ORDMA_SQE_NONBLOCK	(1U << 0)
#define ORDMA_SQE_NOTIFY	(1U << 1)

/*
 * struct ordma_sqe - one submission entry, filled by ordma_prep_*()
 * @op: enum ordma_op of <linux/ordma.h>
 * @flags: ORDMA_SQE_* bits
 * @chan_id: the channel
 * @addr: the local buffer
 * @len: bytes (RECV: the buffer's capacity)
 * @token: WRITE and READ: the peer's window token, else 0
 * @offset: WRITE and READ: offset in that window, else 0
 * @cookie: returned untouched in the completion
 * @__pad, @__reserved: zero
 */
struct ordma_sqe {
	__u32 op;
	__u32 flags;
	__u32 chan_id;
	__u32 __pad;
	__u64 addr;
	__u64 len;
	__u64 token;
	__u64 offset;
	__u64 cookie;
	__u64 __reserved;
};

/* A handle: one open /dev/ordma, its queues and its channels. Opaque. */
struct ordma;

/* Handles. */
int ordma_open(struct ordma **o, unsigned int flags);
void ordma_close(struct ordma *o);

/* Channels and listeners. Addresses are struct sockaddr_in or _in6. */
int ordma_listen(struct ordma *o, const struct sockaddr *addr,
		 socklen_t addrlen, unsigned int backlog, uint32_t *listener);
int ordma_accept(struct ordma *o, uint32_t listener, unsigned int flags,
		 uint32_t *chan, struct sockaddr *peer, socklen_t *peerlen);
int ordma_connect(struct ordma *o, const struct sockaddr *addr,
		  socklen_t addrlen, unsigned int timeout_ms, uint32_t *chan);
int ordma_chan_close(struct ordma *o, uint32_t id);

/* Exposed windows. */
int ordma_expose(struct ordma *o, void *buf, size_t len, unsigned int access,
		 uint64_t *token);
int ordma_unexpose(struct ordma *o, uint64_t token);

/* Synchronous data calls: bytes done, or -errno. */
int64_t ordma_send(struct ordma *o, uint32_t chan, const void *buf,
		   size_t len);
int64_t ordma_recv(struct ordma *o, uint32_t chan, void *buf, size_t len);
int64_t ordma_write(struct ordma *o, uint32_t chan, const void *buf,
		    size_t len, uint64_t token, uint64_t offset);
int64_t ordma_read(struct ordma *o, uint32_t chan, void *buf, size_t len,
		   uint64_t token, uint64_t offset);

/* Asynchronous data path. */
struct ordma_sqe *ordma_get_sqe(struct ordma *o);
void ordma_prep_send(struct ordma_sqe *sqe, uint32_t chan, const void *buf,
		     size_t len, uint64_t cookie);
void ordma_prep_recv(struct ordma_sqe *sqe, uint32_t chan, void *buf,
		     size_t len, uint64_t cookie);
void ordma_prep_write(struct ordma_sqe *sqe, uint32_t chan, const void *buf,
		      size_t len, uint64_t token, uint64_t offset,
		      uint64_t cookie);
void ordma_prep_read(struct ordma_sqe *sqe, uint32_t chan, void *buf,
		     size_t len, uint64_t token, uint64_t offset,
		     uint64_t cookie);
int ordma_submit(struct ordma *o);
int ordma_submit_and_wait(struct ordma *o, struct ordma_cqe **cqe);
int ordma_wait_cqe(struct ordma *o, struct ordma_cqe **cqe);
int ordma_wait_cqe_timeout(struct ordma *o, struct ordma_cqe **cqe,
			   int timeout_ms);
int ordma_peek_cqe(struct ordma *o, struct ordma_cqe **cqe);
void ordma_cqe_seen(struct ordma *o, struct ordma_cqe *cqe);

#ifdef __cplusplus
}
#endif

#endif /* _LIBORDMA_H */
