/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ordma wire protocol, version 8. Documentation/ordma/protocol.rst
 * describes it in prose; this file is the reference.
 *
 * A channel is one RC QP set up with the RDMA CM. Both sides exchange struct
 * ordma_wire_cm in the CM private data. Every message is one IB SEND into a
 * receive buffer the peer posted from its pool: a struct ordma_wire_hdr and
 * at most (peer's rx_size - header) payload bytes. All fields are little
 * endian.
 *
 * Version 2 adds placement: a receiver that has registered (part of) the
 * buffer of the message it is receiving may offer it (PLACE, with a remote
 * key); the sender may then RDMA WRITE bytes of that range straight into
 * it, each write followed by a MSG_PLACED that tells the receiver the bytes
 * are there. A receiver accepts a MSG_PLACED only inside a range it
 * offered for that very message.
 *
 * Version 3 adds credits. Every header carries @credits: the receive
 * buffers its sender has posted since the channel was set up, minus the
 * header-only messages it has received (each used one), mod 2^32. A side
 * sends a message of the payload class (MSG, WRITE, READ_RESP) only while
 * the peer's latest @credits is ahead of the number of payload-class
 * messages it has sent; header-only messages (acks, offers, MSG_PLACED,
 * MSG_ABORT, READ_REQ, CREDIT) need no credit and are not counted. A
 * message that finds no buffer posted waits in the HCA's RNR retry (for
 * ever): slow, never lost. A side whose credit grew past what it last told,
 * with nothing else to send, sends a CREDIT once the peer is down to its
 * last credit or has fewer left than are waiting to be told.
 *
 * Version 4 adds early offers. Message ids are consecutive: a sender gives
 * a message the next id when it sends its first piece (a send that fails
 * before that uses none; a write's notification takes one too, version 5),
 * so a receiver knows the id of the message its next RECV will get and may
 * offer that buffer before anything arrives.
 * Every PLACE says how long the receive buffer is; a sender uses offers
 * only for a message that fits it, cut at the message's end, and may then
 * place the very first piece.
 *
 * Version 5 adds notifications: a WRITE may end with a NOTIFY, which takes
 * the next message id and completes the receiver's next RECV once the
 * write's bytes are in the window. The ack of a write's last piece reports
 * the first failure of any of its pieces. And placement into windows: the
 * window's side of a write may register the window's range the write
 * covers and offer it (PLACE with ORDMA_WIRE_F_WRITE); the writer then
 * RDMA WRITEs into it, each write followed by a WRITE_PLACED.
 *
 * Version 6: a write that completes carries its notification on its last
 * piece (ORDMA_WIRE_F_NOTIFY on the WRITE or WRITE_PLACED with
 * ORDMA_WIRE_F_LAST), which takes the next message id as NOTIFY does; the
 * NOTIFY message is left for a write that stops early.
 *
 * Version 7 adds standing offers. After a peer's first write into a window
 * the window's side may register the whole window for as long as it stays
 * exposed and offer it once (PLACE with ORDMA_WIRE_F_WRITE and
 * ORDMA_WIRE_F_STANDING, @op_id the window's token). The writer's later
 * writes into it are RDMA WRITEs, announced by a WRITE_PLACED with
 * ORDMA_WIRE_F_STANDING (one per piece, or one for the whole write after
 * its last piece), which needs a credit, and complete when the last piece
 * is delivered: no WRITE_ACK. Unexposing the window sends REVOKE; the
 * writer stops using the offer and answers REVOKED after the last piece it
 * posted into it, and only then is the window deregistered. A write into a
 * standing offer that is one piece is one RDMA WRITE with immediate data
 * (ORDMA_WIRE_IMM_*), no header: it uses a receive buffer and a credit.
 *
 * A message of one piece of at most ORDMA_WIRE_SIMM_MAX bytes, sent from a
 * chunk, may go as a SEND with immediate data ORDMA_WIRE_IMM_MSG and no
 * header (version 8): its bytes start the receive buffer, its id is the
 * next message id, and it tells no credits. It uses a receive buffer and
 * a credit. On a device whose wire is the CPU a header that pushes a
 * message past an MTU costs a packet: 4 KiB is four packets of 1024 bytes,
 * with a header five.
 */
#ifndef _ORDMA_WIRE_H
#define _ORDMA_WIRE_H

#include <linux/types.h>

#define ORDMA_WIRE_VERSION	8

/**
 * struct ordma_wire_cm - CM private data of connect and accept
 * @version: ORDMA_WIRE_VERSION; a listener rejects any other
 * @__reserved: zero
 * @rx_size: size of every receive buffer this side posts
 */
struct ordma_wire_cm {
	u8 version;
	u8 __reserved[3];
	__le32 rx_size;
};

enum ordma_wire_opcode {
	/* Part of a two-sided message: @total_len, @offset in the message;
	 * @op_id numbers the sender's messages from 1, consecutively.
	 */
	ORDMA_WIRE_MSG = 1,
	/* The sender failed the current message; @status says why. */
	ORDMA_WIRE_MSG_ABORT,
	/* Bytes for window @token at window offset @offset; the operation
	 * covers [@base, @base + @total_len). ORDMA_WIRE_F_LAST on the last.
	 */
	ORDMA_WIRE_WRITE,
	/* Result of write @op_id: @status 0 once every byte is placed; sent
	 * for the piece with ORDMA_WIRE_F_LAST (with the first failure of any
	 * piece of the write) and for any piece that fails.
	 */
	ORDMA_WIRE_WRITE_ACK,
	/* Send @total_len bytes of window @token from @base. */
	ORDMA_WIRE_READ_REQ,
	/* Bytes of read @op_id at @offset in the operation, or its @status. */
	ORDMA_WIRE_READ_RESP,
	/* Receiver to sender: bytes [@offset, @offset + @total_len) of message
	 * @op_id may be written at remote address @base with rkey @token; the
	 * receive buffer is @status + 1 bytes long. May come before the
	 * message's first piece (an early offer). With ORDMA_WIRE_F_WRITE:
	 * window to writer, for write @op_id (@status + 1 bytes long), the
	 * offsets within the write.
	 */
	ORDMA_WIRE_PLACE,
	/* Sender to receiver: bytes [@offset, @offset + @base) of message
	 * @op_id (of @total_len) were written into an offered range; no
	 * payload.
	 */
	ORDMA_WIRE_MSG_PLACED,
	/* Nothing but @credits (version 3); no payload. */
	ORDMA_WIRE_CREDIT,
	/* Message @op_id (the next message id) is the notification of write
	 * @base, of @total_len bytes at window offset @offset, that stopped
	 * early (a write that completes carries ORDMA_WIRE_F_NOTIFY on its
	 * last piece instead, version 6); @status its error; no payload
	 * (version 5).
	 */
	ORDMA_WIRE_NOTIFY,
	/* Writer to window: bytes [@offset, @offset + @base) of the window
	 * (write @op_id of @total_len bytes, window @token) were written into
	 * a range offered for that write; no payload. With ORDMA_WIRE_F_LAST
	 * and @base 0: the write stopped early, nothing more of it comes
	 * (version 5).
	 */
	ORDMA_WIRE_WRITE_PLACED,
	/* Window to writer: stop writing into the standing offer of window
	 * @op_id; answer REVOKED (version 7). No payload.
	 */
	ORDMA_WIRE_REVOKE,
	/* Writer to window: nothing more goes into the standing offer of
	 * window @op_id; every piece into it came before (version 7).
	 */
	ORDMA_WIRE_REVOKED,
	ORDMA_WIRE_OPCODE_MAX = ORDMA_WIRE_REVOKED,
};

#define ORDMA_WIRE_F_LAST	0x1
#define ORDMA_WIRE_F_WRITE	0x2
/* On a write's last piece: its notification, the next message id (v6). */
#define ORDMA_WIRE_F_NOTIFY	0x4
/*
 * On PLACE (with ORDMA_WIRE_F_WRITE): a standing offer of window @op_id,
 * bytes [@offset, @offset + @total_len) of it, until REVOKE. On
 * WRITE_PLACED: the bytes went into the standing offer (version 7).
 */
#define ORDMA_WIRE_F_STANDING	0x8

/*
 * Immediate data of an RDMA WRITE with immediate: a whole write into a
 * standing offer (version 7), with ORDMA_WIRE_IMM_NOTIFY its notification
 * (as ORDMA_WIRE_F_NOTIFY on a last piece). Any other value closes the
 * channel with EPROTO, and so does one while no standing offer is made.
 */
#define ORDMA_WIRE_IMM_STANDING	0x4f520000
#define ORDMA_WIRE_IMM_NOTIFY	0x1

/*
 * Immediate data of a SEND with immediate: a message of one piece, 1 to
 * ORDMA_WIRE_SIMM_MAX bytes, no header (version 8). Any other value, any
 * other length, closes the channel with EPROTO.
 */
#define ORDMA_WIRE_IMM_MSG	0x4f530000
#define ORDMA_WIRE_SIMM_MAX	(16U << 10)

/**
 * struct ordma_wire_hdr - header of every message
 * @version: ORDMA_WIRE_VERSION
 * @opcode: enum ordma_wire_opcode
 * @flags: ORDMA_WIRE_F_*
 * @payload_len: bytes after the header
 * @total_len: length of the message or operation
 * @offset: where this payload goes (see the opcodes)
 * @base: start of a one-sided operation in the window
 * @token: window token of a one-sided operation
 * @op_id: the initiator's id of a one-sided operation
 * @status: a positive errno, or 0 (PLACE: the receive buffer's length - 1)
 * @credits: the sender's receive buffers for payload-class messages, ever
 *	(see above), mod 2^32
 */
struct ordma_wire_hdr {
	u8 version;
	u8 opcode;
	__le16 flags;
	__le32 payload_len;
	__le64 total_len;
	__le64 offset;
	__le64 base;
	__le64 token;
	__le64 op_id;
	__le32 status;
	__le32 credits;
};

/* wire.c */
void ordma_hdr_start(struct ordma_wire_hdr *hdr, u8 opcode, u16 flags);
bool ordma_wire_payload_class(const struct ordma_wire_hdr *hdr);
bool ordma_wire_flags_valid(const struct ordma_wire_hdr *hdr);

#endif /* _ORDMA_WIRE_H */
