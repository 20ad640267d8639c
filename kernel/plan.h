/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cost model and the planner of a transfer: pure integer arithmetic,
 * compiled into the module and into a host unit test, which defines the few
 * kernel types and helpers plan.c uses first (selftests/host/plan_shim.h).
 * Nothing here allocates, sleeps or locks: the caller serializes updates of
 * a model against readers. See plan.c for the formulas.
 */
#ifndef _ORDMA_PLAN_H
#define _ORDMA_PLAN_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/math64.h>
#endif

enum ordma_mode {
	ORDMA_MODE_AUTO,
	ORDMA_MODE_COPY,
	ORDMA_MODE_ZEROCOPY,
	ORDMA_MODE_OVERLAP,
	ORDMA_MODE_NR
};

extern const char *const ordma_mode_names[ORDMA_MODE_NR];

/* Indexes of struct ordma_model.samples[], in field order. */
enum ordma_model_field {
	ORDMA_MODEL_PIN,
	ORDMA_MODEL_REG,
	ORDMA_MODEL_COPY,
	ORDMA_MODEL_WIRE,
	ORDMA_MODEL_WR,
	ORDMA_MODEL_DEREG,
	ORDMA_MODEL_NR
};

/*
 * Per-device costs, each an exponentially weighted moving average (weight
 * 1/8; the first sample sets it). Never larger than ORDMA_MODEL_MAX_NS
 * (times) or ORDMA_MODEL_MAX_PS_BYTE (per-byte costs) once updated.
 */
struct ordma_model {
	u64 pin_ns_page;	/* p : pin + DMA-map one page, ns */
	u64 reg_ns;		/* r0: fixed cost of one registration, ns */
	u64 copy_ps_byte;	/* 1/Bc: copy user -> pool chunk, ps per byte */
	u64 wire_ps_byte;	/* 1/Bw: device wire, ps per byte */
	u64 wr_ns;		/* d : post + complete one work request, ns */
	u64 dereg_ns;		/* dr: deregister (unpin) one segment, ns */
	u32 samples[ORDMA_MODEL_NR];	/* samples seen by each field */
	bool cpu_wire;		/* the wire is work of the host's CPUs */
};

/* One second per event, one millisecond per byte: beyond any device. */
#define ORDMA_MODEL_MAX_NS		1000000000ULL
#define ORDMA_MODEL_MAX_PS_BYTE		1000000000ULL

void ordma_model_init(struct ordma_model *m);
void ordma_model_pin(struct ordma_model *m, u64 pages, u64 ns);
void ordma_model_reg(struct ordma_model *m, u64 ns);
void ordma_model_copy(struct ordma_model *m, u64 bytes, u64 ns);
void ordma_model_wire(struct ordma_model *m, u64 bytes, u64 ns);
void ordma_model_wr(struct ordma_model *m, u64 ns);
void ordma_model_dereg(struct ordma_model *m, u64 ns);

/*
 * How one transfer of len bytes at user address addr is sent: the first
 * copy_len bytes through pool chunks, the rest zero-copy through registered
 * segments. Segment k (k = 0, 1, ...) spans min(seg_first << k, seg_max)
 * bytes of whole pages counted from the page holding its first byte, cut at
 * len; ordma_plan_seg_len() walks them. seg_first and seg_max are multiples
 * of the page size, seg_first <= seg_max <= seg_cap, both 0 when nothing is
 * registered (then copy_len == len). Every segment boundary inside the
 * buffer is page aligned in user address space: addr + copy_len is page
 * aligned unless copy_len is 0 or len.
 */
struct ordma_plan {
	u64 copy_len;	/* bytes from the start sent through pool chunks */
	u64 seg_first;	/* bytes of the first registered segment, 0: none */
	u64 seg_max;	/* later segments double from seg_first up to this */
};

void ordma_plan_make(const struct ordma_model *m, enum ordma_mode mode,
		     u64 addr, u64 len, u64 seg_cap, unsigned int page_shift,
		     struct ordma_plan *p);
u64 ordma_plan_estimate(const struct ordma_model *m, u64 addr, u64 len,
			const struct ordma_plan *p, unsigned int page_shift);
u64 ordma_plan_seg_len(const struct ordma_plan *p, u64 addr, u64 len,
		       u64 off, unsigned int k, unsigned int page_shift);
u64 ordma_plan_reg_ns(const struct ordma_model *m, u64 pages);

#endif /* _ORDMA_PLAN_H */
