/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel definitions kernel/wire.c and wire.h use, for building
 * them into a host program: include this, then wire.c.
 */
#ifndef _ORDMA_WIRE_SHIM_H
#define _ORDMA_WIRE_SHIM_H

#include <assert.h>
#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/types.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define cpu_to_le16(x)	((__le16)htole16(x))
#define cpu_to_le32(x)	((__le32)htole32(x))
#define cpu_to_le64(x)	((__le64)htole64(x))
#define le16_to_cpu(x)	le16toh(x)
#define le32_to_cpu(x)	le32toh(x)
#define le64_to_cpu(x)	le64toh(x)

#endif /* _ORDMA_WIRE_SHIM_H */
