// SPDX-License-Identifier: GPL-2.0
/*
 * Building and checking wire headers (wire.h): functions of a header alone,
 * with no channel state.
 */
#ifdef __KERNEL__
#include <linux/string.h>
#include <asm/byteorder.h>
#endif

#include "wire.h"

/* Start a header of ours in @hdr: all zero but version, @opcode, @flags. */
void ordma_hdr_start(struct ordma_wire_hdr *hdr, u8 opcode, u16 flags)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->version = ORDMA_WIRE_VERSION;
	hdr->opcode = opcode;
	hdr->flags = cpu_to_le16(flags);
}

/*
 * Does this message need a credit (wire.h)? The announcement of bytes
 * placed into a standing offer does: a writer may send one per
 * piece. The bare RDMA WRITEs before it use no receive buffer.
 */
bool ordma_wire_payload_class(const struct ordma_wire_hdr *hdr)
{
	return hdr->opcode == ORDMA_WIRE_MSG ||
	       hdr->opcode == ORDMA_WIRE_WRITE ||
	       hdr->opcode == ORDMA_WIRE_READ_RESP ||
	       (hdr->opcode == ORDMA_WIRE_WRITE_PLACED &&
		(le16_to_cpu(hdr->flags) & ORDMA_WIRE_F_STANDING));
}

/*
 * No flag we do not know; ORDMA_WIRE_F_STANDING only on a window's offer
 * or on a piece with bytes; ORDMA_WIRE_F_NOTIFY only on the last piece of a
 * write that has bytes (not on the marker of a write that stopped early).
 */
bool ordma_wire_flags_valid(const struct ordma_wire_hdr *hdr)
{
	u16 flags = le16_to_cpu(hdr->flags);

	if (flags & ~(ORDMA_WIRE_F_LAST | ORDMA_WIRE_F_WRITE |
		      ORDMA_WIRE_F_NOTIFY | ORDMA_WIRE_F_STANDING |
		      ORDMA_WIRE_F_GROW))
		return false;
	if ((flags & ORDMA_WIRE_F_GROW) &&
	    (hdr->opcode != ORDMA_WIRE_CREDIT || flags != ORDMA_WIRE_F_GROW))
		return false;
	if ((flags & ORDMA_WIRE_F_STANDING) &&
	    !(hdr->opcode == ORDMA_WIRE_PLACE && (flags & ORDMA_WIRE_F_WRITE)) &&
	    !(hdr->opcode == ORDMA_WIRE_WRITE_PLACED && hdr->placed.placed))
		return false;
	if (!(flags & ORDMA_WIRE_F_NOTIFY))
		return true;
	if (!(flags & ORDMA_WIRE_F_LAST))
		return false;
	return (hdr->opcode == ORDMA_WIRE_WRITE && hdr->payload_len) ||
	       (hdr->opcode == ORDMA_WIRE_WRITE_PLACED && hdr->placed.placed);
}
