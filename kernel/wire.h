/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ordma wire protocol, version 10 (ORDMA_WIRE_VERSION): the layouts.
 * How they are used, and what a receiver checks, is
 * Documentation/ordma/protocol.rst.
 *
 * A channel is one RC QP set up with the RDMA CM; both sides exchange
 * struct ordma_wire_cm in the CM private data. Every message is one IB SEND
 * into a receive buffer the peer posted from its pool: a struct
 * ordma_wire_hdr, then at most (the peer's rx_size - the header) payload
 * bytes; or, without a header, an RDMA WRITE with immediate data into a
 * standing offer (ORDMA_WIRE_IMM_STANDING) or a SEND with immediate data of
 * a message of one piece (ORDMA_WIRE_IMM_MSG). All fields are little
 * endian. Between the fixed fields at both ends, each opcode has its own
 * layout (the union), and the fields it does not name are sent as zero.
 * wire.c builds and checks headers; a host test (selftests/host/wire_test)
 * defines the few kernel types it uses first (selftests/host/wire_shim.h).
 */
#ifndef _ORDMA_WIRE_H
#define _ORDMA_WIRE_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>
#endif

#define ORDMA_WIRE_VERSION	10

/*
 * On struct ordma_wire_cm: this side counts every message against the
 * credits, header-only ones too (protocol.rst, "Flow control"); the pair
 * does if either side says so.
 */
#define ORDMA_WIRE_CM_F_CREDIT_ALL	0x1

/**
 * struct ordma_wire_cm - CM private data of connect and accept
 * @version: ORDMA_WIRE_VERSION; a listener rejects any other
 * @flags: ORDMA_WIRE_CM_F_*; a listener rejects any other bit, and answers
 *	with the flags the pair uses
 * @credits: receives this side posted before it connected or accepted, the
 *	credits the peer starts with when the pair counts every message
 *	(ORDMA_WIRE_CM_F_CREDIT_ALL); 0 otherwise
 * @rx_size: size of every receive buffer this side posts
 */
struct ordma_wire_cm {
	u8 version;
	u8 flags;
	__le16 credits;
	__le32 rx_size;
};

/**
 * enum ordma_wire_opcode - what a message is, and which layout it has
 * @ORDMA_WIRE_MSG: a piece of a two-sided message (@msg)
 * @ORDMA_WIRE_MSG_ABORT: the sender failed its current message (@msg,
 *	@status)
 * @ORDMA_WIRE_WRITE: a piece of a one-sided write, with its bytes (@write)
 * @ORDMA_WIRE_WRITE_ACK: the window's side's result of a write (@ack,
 *	@status)
 * @ORDMA_WIRE_READ_REQ: a one-sided read asked for (@read)
 * @ORDMA_WIRE_READ_RESP: bytes of a read, or its failure (@read, @status)
 * @ORDMA_WIRE_PLACE: a range the receiver registered, offered for RDMA
 *	WRITE (@place, @size_m1)
 * @ORDMA_WIRE_MSG_PLACED: a piece of a message written into an offer just
 *	before (@msg)
 * @ORDMA_WIRE_CREDIT: nothing but @credits
 * @ORDMA_WIRE_NOTIFY: the notification of a write, a message for the
 *	peer's next RECV (@notify, @status)
 * @ORDMA_WIRE_WRITE_PLACED: a piece of a write written into an offer just
 *	before (@placed)
 * @ORDMA_WIRE_REVOKE: take the standing offer of a window back (@revoke)
 * @ORDMA_WIRE_REVOKED: nothing more goes into that offer (@revoke)
 * @ORDMA_WIRE_OPCODE_MAX: the last opcode
 */
enum ordma_wire_opcode {
	ORDMA_WIRE_MSG = 1,
	ORDMA_WIRE_MSG_ABORT,
	ORDMA_WIRE_WRITE,
	ORDMA_WIRE_WRITE_ACK,
	ORDMA_WIRE_READ_REQ,
	ORDMA_WIRE_READ_RESP,
	ORDMA_WIRE_PLACE,
	ORDMA_WIRE_MSG_PLACED,
	ORDMA_WIRE_CREDIT,
	ORDMA_WIRE_NOTIFY,
	ORDMA_WIRE_WRITE_PLACED,
	ORDMA_WIRE_REVOKE,
	ORDMA_WIRE_REVOKED,
	ORDMA_WIRE_OPCODE_MAX = ORDMA_WIRE_REVOKED,
};

/* The last piece of a message or write; on WRITE_PLACED, also a stop. */
#define ORDMA_WIRE_F_LAST	0x1
/* On PLACE: the offer is for a write into a window, not for a message. */
#define ORDMA_WIRE_F_WRITE	0x2
/* On a write's last piece: its notification, the next message id. */
#define ORDMA_WIRE_F_NOTIFY	0x4
/* On PLACE (with F_WRITE): a standing offer; on WRITE_PLACED: into one. */
#define ORDMA_WIRE_F_STANDING	0x8
/*
 * On CREDIT: every receive buffer the sender has posted, and posts from now
 * on, is @size_m1 + 1 bytes, more than it told before.
 */
#define ORDMA_WIRE_F_GROW	0x10

/*
 * Immediate data of an RDMA WRITE with immediate: a whole write into a
 * standing offer, with ORDMA_WIRE_IMM_NOTIFY its notification.
 */
#define ORDMA_WIRE_IMM_STANDING	0x4f520000
#define ORDMA_WIRE_IMM_NOTIFY	0x1

/*
 * Immediate data of a SEND with immediate: a message of one piece, 1 to
 * ORDMA_WIRE_SIMM_MAX bytes at the start of the receive buffer, no header.
 */
#define ORDMA_WIRE_IMM_MSG	0x4f530000
#define ORDMA_WIRE_SIMM_MAX	(16U << 10)

/* The receive sizes a side may tell (struct ordma_wire_cm, CREDIT). */
#define ORDMA_WIRE_RX_MIN	(56U + 512)
#define ORDMA_WIRE_RX_MAX	(16U << 20)

/**
 * struct ordma_wire_msg - MSG, MSG_ABORT and MSG_PLACED
 * @msg_len: length of the whole message
 * @offset: where in the message this piece goes
 * @placed: MSG_PLACED: bytes written at @offset into an offered range
 * @__unused: zero
 * @msg_id: the sender's number of the message: 1, 2, ... consecutive
 */
struct ordma_wire_msg {
	__le64 msg_len;
	__le64 offset;
	__le64 placed;
	__le64 __unused;
	__le64 msg_id;
};

/**
 * struct ordma_wire_write - WRITE
 * @write_len: length of the whole write
 * @offset: window offset of this piece's bytes
 * @start: window offset of the write's first byte
 * @token: the window
 * @write_id: the writer's number of the write
 */
struct ordma_wire_write {
	__le64 write_len;
	__le64 offset;
	__le64 start;
	__le64 token;
	__le64 write_id;
};

/**
 * struct ordma_wire_placed - WRITE_PLACED
 * @write_len: length of the whole write
 * @offset: window offset of the bytes placed
 * @placed: bytes placed; 0 with ORDMA_WIRE_F_LAST: the write stopped
 * @token: the window
 * @write_id: the writer's number of the write
 */
struct ordma_wire_placed {
	__le64 write_len;
	__le64 offset;
	__le64 placed;
	__le64 token;
	__le64 write_id;
};

/**
 * struct ordma_wire_ack - WRITE_ACK
 * @__unused: zero
 * @write_id: the write, as the writer numbered it
 */
struct ordma_wire_ack {
	__le64 __unused[4];
	__le64 write_id;
};

/**
 * struct ordma_wire_read - READ_REQ and READ_RESP
 * @read_len: length of the whole read
 * @offset: READ_RESP: where in the read this payload goes; READ_REQ: zero
 *	on the wire, and the bytes sent so far once received
 * @start: READ_REQ: window offset of the first byte
 * @token: READ_REQ: the window
 * @read_id: the reader's number of the read
 */
struct ordma_wire_read {
	__le64 read_len;
	__le64 offset;
	__le64 start;
	__le64 token;
	__le64 read_id;
};

/**
 * struct ordma_wire_place - PLACE
 * @len: bytes of the range offered
 * @offset: where the range starts: in the message's receive buffer, in the
 *	write (ORDMA_WIRE_F_WRITE), or in the window (ORDMA_WIRE_F_STANDING)
 * @addr: remote address of the range
 * @rkey: the key for @addr (below 2^32)
 * @id: the message's id, the write's id (ORDMA_WIRE_F_WRITE), or the
 *	window's token (ORDMA_WIRE_F_STANDING)
 */
struct ordma_wire_place {
	__le64 len;
	__le64 offset;
	__le64 addr;
	__le64 rkey;
	__le64 id;
};

/**
 * struct ordma_wire_notify - NOTIFY
 * @write_len: length of the write it notifies of
 * @offset: window offset of that write's first byte
 * @write_id: that write, as the writer numbered it
 * @__unused: zero
 * @msg_id: its own number, a message's: the sender's next one
 */
struct ordma_wire_notify {
	__le64 write_len;
	__le64 offset;
	__le64 write_id;
	__le64 __unused;
	__le64 msg_id;
};

/**
 * struct ordma_wire_revoke - REVOKE and REVOKED
 * @__unused: zero
 * @token: the window whose standing offer it is
 */
struct ordma_wire_revoke {
	__le64 __unused[4];
	__le64 token;
};

/**
 * struct ordma_wire_hdr - header of every message
 * @version: ORDMA_WIRE_VERSION
 * @opcode: enum ordma_wire_opcode
 * @flags: ORDMA_WIRE_F_*
 * @payload_len: bytes after the header
 * @msg: MSG, MSG_ABORT, MSG_PLACED
 * @write: WRITE
 * @placed: WRITE_PLACED
 * @ack: WRITE_ACK
 * @read: READ_REQ, READ_RESP
 * @place: PLACE
 * @notify: NOTIFY
 * @revoke: REVOKE, REVOKED
 * @status: MSG_ABORT, WRITE_ACK, READ_RESP, NOTIFY: a positive errno, or 0
 * @size_m1: PLACE: length of the message's receive buffer, of the write
 *	(ORDMA_WIRE_F_WRITE) or of the window (ORDMA_WIRE_F_STANDING), minus 1
 *	(1 to ORDMA_MAX_LEN = 2^32 bytes); CREDIT with ORDMA_WIRE_F_GROW: the
 *	sender's new receive buffer size, minus 1
 * @credits: the sender's receive buffers posted for messages that need
 *	one, ever, minus the header-only messages it received (each used
 *	one) unless the pair counts every message, mod 2^32 (protocol.rst,
 *	"Flow control")
 */
struct ordma_wire_hdr {
	u8 version;
	u8 opcode;
	__le16 flags;
	__le32 payload_len;
	union {
		struct ordma_wire_msg msg;
		struct ordma_wire_write write;
		struct ordma_wire_placed placed;
		struct ordma_wire_ack ack;
		struct ordma_wire_read read;
		struct ordma_wire_place place;
		struct ordma_wire_notify notify;
		struct ordma_wire_revoke revoke;
	};
	union {
		__le32 status;
		__le32 size_m1;
	};
	__le32 credits;
};

/* The header of version 10 (as of 8): every opcode's fields where they always were. */
static_assert(sizeof(struct ordma_wire_cm) == 8);
static_assert(sizeof(struct ordma_wire_hdr) == 56);
static_assert(sizeof(struct ordma_wire_hdr) + 512 == ORDMA_WIRE_RX_MIN);
static_assert(offsetof(struct ordma_wire_hdr, msg.msg_id) == 40);
static_assert(offsetof(struct ordma_wire_hdr, status) == 48);
static_assert(offsetof(struct ordma_wire_hdr, credits) == 52);

/* wire.c */
void ordma_hdr_start(struct ordma_wire_hdr *hdr, u8 opcode, u16 flags);
bool ordma_wire_payload_class(const struct ordma_wire_hdr *hdr);
bool ordma_wire_flags_valid(const struct ordma_wire_hdr *hdr);

#endif /* _ORDMA_WIRE_H */
