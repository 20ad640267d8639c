// SPDX-License-Identifier: GPL-2.0
/*
 * kernel/wire.c built for the host: the header's layout is version 8's
 * byte for byte, whatever an opcode's field is called; a header we start
 * is zero but for what we set; which messages need a credit; which flags
 * go on which message.
 */
#include <stdio.h>

#include "wire_shim.h"
#include "wire.c"

#include "kselftest_harness.h"

#define OFF(f)	((int)offsetof(struct ordma_wire_hdr, f))

/* Every field of every opcode, at the offset version 8 has it at. */
TEST(layout_is_version_8)
{
	ASSERT_EQ(56, (int)sizeof(struct ordma_wire_hdr));
	ASSERT_EQ(1, OFF(opcode));
	ASSERT_EQ(2, OFF(flags));
	ASSERT_EQ(4, OFF(payload_len));
	/* The five 64-bit slots: length, offset, third, fourth, id. */
	ASSERT_EQ(8, OFF(msg.msg_len));
	ASSERT_EQ(16, OFF(msg.offset));
	ASSERT_EQ(24, OFF(msg.placed));
	ASSERT_EQ(40, OFF(msg.msg_id));
	ASSERT_EQ(8, OFF(write.write_len));
	ASSERT_EQ(16, OFF(write.offset));
	ASSERT_EQ(24, OFF(write.start));
	ASSERT_EQ(32, OFF(write.token));
	ASSERT_EQ(40, OFF(write.write_id));
	ASSERT_EQ(8, OFF(placed.write_len));
	ASSERT_EQ(16, OFF(placed.offset));
	ASSERT_EQ(24, OFF(placed.placed));
	ASSERT_EQ(32, OFF(placed.token));
	ASSERT_EQ(40, OFF(placed.write_id));
	ASSERT_EQ(40, OFF(ack.write_id));
	ASSERT_EQ(8, OFF(read.read_len));
	ASSERT_EQ(16, OFF(read.offset));
	ASSERT_EQ(24, OFF(read.start));
	ASSERT_EQ(32, OFF(read.token));
	ASSERT_EQ(40, OFF(read.read_id));
	ASSERT_EQ(8, OFF(place.len));
	ASSERT_EQ(16, OFF(place.offset));
	ASSERT_EQ(24, OFF(place.addr));
	ASSERT_EQ(32, OFF(place.rkey));
	ASSERT_EQ(40, OFF(place.id));
	ASSERT_EQ(8, OFF(notify.write_len));
	ASSERT_EQ(16, OFF(notify.offset));
	ASSERT_EQ(24, OFF(notify.write_id));
	ASSERT_EQ(40, OFF(notify.msg_id));
	ASSERT_EQ(40, OFF(revoke.token));
	ASSERT_EQ(48, OFF(status));
	ASSERT_EQ(48, OFF(size_m1));
	ASSERT_EQ(52, OFF(credits));
	ASSERT_EQ(8, (int)sizeof(struct ordma_wire_cm));
}

/* Little endian on the wire: the bytes of a PLACE as a peer sees them. */
TEST(fields_are_little_endian)
{
	struct ordma_wire_hdr h;
	unsigned char *b = (unsigned char *)&h;

	ordma_hdr_start(&h, ORDMA_WIRE_PLACE, ORDMA_WIRE_F_WRITE);
	h.place.rkey = cpu_to_le64(0x11223344);
	h.size_m1 = cpu_to_le32(0xfffffffe);
	ASSERT_EQ(ORDMA_WIRE_VERSION, b[0]);
	ASSERT_EQ(ORDMA_WIRE_PLACE, b[1]);
	ASSERT_EQ(ORDMA_WIRE_F_WRITE, b[2]);
	ASSERT_EQ(0, b[3]);
	ASSERT_EQ(0x44, b[32]);
	ASSERT_EQ(0x11, b[35]);
	ASSERT_EQ(0xfe, b[48]);
	ASSERT_EQ(0xff, b[51]);
}

/* Whatever the buffer held, a started header is zero but the three. */
TEST(start_clears_the_rest)
{
	struct ordma_wire_hdr h;
	unsigned char *b = (unsigned char *)&h;
	size_t i;

	memset(&h, 0xa5, sizeof(h));
	ordma_hdr_start(&h, ORDMA_WIRE_NOTIFY, ORDMA_WIRE_F_LAST);
	ASSERT_EQ(ORDMA_WIRE_VERSION, h.version);
	ASSERT_EQ(ORDMA_WIRE_NOTIFY, h.opcode);
	ASSERT_EQ(ORDMA_WIRE_F_LAST, le16_to_cpu(h.flags));
	for (i = 4; i < sizeof(h); i++)
		ASSERT_EQ(0, b[i]) TH_LOG("byte %zu", i);
}

/* Messages that use a receive buffer the peer announced. */
TEST(payload_class)
{
	struct ordma_wire_hdr h;
	int op;

	for (op = 1; op <= ORDMA_WIRE_OPCODE_MAX; op++) {
		bool want = op == ORDMA_WIRE_MSG || op == ORDMA_WIRE_WRITE ||
			    op == ORDMA_WIRE_READ_RESP;

		ordma_hdr_start(&h, op, 0);
		ASSERT_EQ(want, ordma_wire_payload_class(&h)) TH_LOG("opcode %d", op);
	}
	ordma_hdr_start(&h, ORDMA_WIRE_WRITE_PLACED, ORDMA_WIRE_F_STANDING);
	ASSERT_TRUE(ordma_wire_payload_class(&h));
	ordma_hdr_start(&h, ORDMA_WIRE_WRITE_PLACED, ORDMA_WIRE_F_LAST);
	ASSERT_FALSE(ordma_wire_payload_class(&h));
}

struct flags_case {
	u8 opcode;
	u16 flags;
	u32 payload_len;
	u64 placed;
	bool valid;
};

/* Which flags go on which message. */
TEST(flags_valid)
{
	static const struct flags_case cases[] = {
		{ ORDMA_WIRE_MSG, 0, 1, 0, true },
		{ ORDMA_WIRE_MSG, ORDMA_WIRE_F_LAST, 1, 0, true },
		{ ORDMA_WIRE_MSG, ORDMA_WIRE_F_GROW, 1, 0, false },
		{ ORDMA_WIRE_MSG, 0x20, 1, 0, false },
		{ ORDMA_WIRE_MSG, 0x8000, 1, 0, false },
		/* A receive size grows on a CREDIT alone, with no other flag. */
		{ ORDMA_WIRE_CREDIT, ORDMA_WIRE_F_GROW, 0, 0, true },
		{ ORDMA_WIRE_CREDIT, ORDMA_WIRE_F_GROW | ORDMA_WIRE_F_LAST, 0, 0,
		  false },
		{ ORDMA_WIRE_PLACE, ORDMA_WIRE_F_GROW, 0, 0, false },
		{ ORDMA_WIRE_PLACE, ORDMA_WIRE_F_WRITE, 0, 0, true },
		{ ORDMA_WIRE_PLACE, ORDMA_WIRE_F_WRITE | ORDMA_WIRE_F_STANDING,
		  0, 0, true },
		{ ORDMA_WIRE_PLACE, ORDMA_WIRE_F_STANDING, 0, 0, false },
		{ ORDMA_WIRE_WRITE_PLACED, ORDMA_WIRE_F_STANDING, 0, 4096, true },
		{ ORDMA_WIRE_WRITE_PLACED, ORDMA_WIRE_F_STANDING, 0, 0, false },
		{ ORDMA_WIRE_WRITE, ORDMA_WIRE_F_STANDING, 8, 0, false },
		{ ORDMA_WIRE_MSG_PLACED, ORDMA_WIRE_F_STANDING, 0, 8, false },
		/* A notification rides on a write's last piece with bytes. */
		{ ORDMA_WIRE_WRITE, ORDMA_WIRE_F_LAST | ORDMA_WIRE_F_NOTIFY,
		  8, 0, true },
		{ ORDMA_WIRE_WRITE, ORDMA_WIRE_F_LAST | ORDMA_WIRE_F_NOTIFY,
		  0, 0, false },
		{ ORDMA_WIRE_WRITE, ORDMA_WIRE_F_NOTIFY, 8, 0, false },
		{ ORDMA_WIRE_WRITE_PLACED, ORDMA_WIRE_F_LAST |
		  ORDMA_WIRE_F_NOTIFY, 0, 8, true },
		{ ORDMA_WIRE_WRITE_PLACED, ORDMA_WIRE_F_LAST |
		  ORDMA_WIRE_F_NOTIFY | ORDMA_WIRE_F_STANDING, 0, 8, true },
		/* Not on the marker of a write that stopped early. */
		{ ORDMA_WIRE_WRITE_PLACED, ORDMA_WIRE_F_LAST |
		  ORDMA_WIRE_F_NOTIFY, 0, 0, false },
		{ ORDMA_WIRE_MSG, ORDMA_WIRE_F_LAST | ORDMA_WIRE_F_NOTIFY,
		  8, 0, false },
		{ ORDMA_WIRE_NOTIFY, ORDMA_WIRE_F_LAST | ORDMA_WIRE_F_NOTIFY,
		  0, 0, false },
	};
	struct ordma_wire_hdr h;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct flags_case *c = &cases[i];

		ordma_hdr_start(&h, c->opcode, c->flags);
		h.payload_len = cpu_to_le32(c->payload_len);
		h.placed.placed = cpu_to_le64(c->placed);
		ASSERT_EQ(c->valid, ordma_wire_flags_valid(&h))
			TH_LOG("case %zu: opcode %u flags %#x", i, c->opcode,
			       c->flags);
	}
}

TEST_HARNESS_MAIN
