/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel definitions kernel/plan.c uses, for building it into a
 * host program: include this, then plan.c.
 */
#ifndef _ORDMA_PLAN_SHIM_H
#define _ORDMA_PLAN_SHIM_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t u64;
typedef uint32_t u32;

#define U64_MAX		UINT64_MAX
#define U32_MAX		UINT32_MAX

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

#define min(a, b) ({ typeof(a) _a = (a); typeof(b) _b = (b); _a < _b ? _a : _b; })
#define max(a, b) ({ typeof(a) _a = (a); typeof(b) _b = (b); _a > _b ? _a : _b; })
#define max3(a, b, c)		max(max(a, b), c)
#define clamp(v, lo, hi)	min(max(v, lo), hi)

#define check_add_overflow(a, b, d)	__builtin_add_overflow(a, b, d)
#define check_mul_overflow(a, b, d)	__builtin_mul_overflow(a, b, d)

#endif /* _ORDMA_PLAN_SHIM_H */
