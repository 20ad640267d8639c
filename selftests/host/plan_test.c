// SPDX-License-Identifier: GPL-2.0
/*
 * The cost model and planner of kernel/plan.c, built for the host: plans for
 * a table of buffers (sizes 1 B .. 1 GiB, odd start addresses, MR limits
 * from one page to 256 MiB and below a page) under several device models
 * (rxe under TCG, a real NIC, pinning slower than the wire, copying slower
 * than the wire, all zeros, saturating) keep their structural rules, honour
 * their mode and meet the timing promises of the header of plan.c; the
 * estimate agrees with a plain segment-by-segment simulation; the moving
 * averages start, converge and resist outliers; the mode names are the
 * knob's.
 */
#include <inttypes.h>
#include <stdio.h>

#include "plan_shim.h"
#include "plan.c"

#include "kselftest_harness.h"

#define SHIFT		12
#define PG		(1ULL << SHIFT)
#define KIB		1024ULL
#define MIB		(1024 * KIB)
#define GIB		(1024 * MIB)
#define BASE		0x7f1234560000ULL
/* The pool chunk size: the fluid model ignores up to one chunk. */
#define CHUNK		(64 * KIB)

static const u64 sizes[] = {
	1, 100, PG - 1, PG, PG + 1, 2 * PG - 1, 2 * PG, 12345, 16 * KIB,
	31 * KIB, 64 * KIB, 64 * KIB + 1, 200 * KIB + 3, MIB - 1, MIB,
	2 * MIB, 3 * MIB + 17, 8 * MIB, 16 * MIB, 64 * MIB, 100 * MIB + 4097,
	256 * MIB, 512 * MIB, GIB - 1, GIB,
};
static const u64 offsets[] = { 0, 1, 100, 2048, PG - 1 };
static const u64 caps[] = { PG, 2 * MIB, 2 * MIB + 100, 256 * MIB, 1000 };

#define NROWS	(ARRAY_SIZE(sizes) * ARRAY_SIZE(offsets) * ARRAY_SIZE(caps))

struct row {
	u64 addr;
	u64 len;
	u64 cap;
	unsigned int shift;
};

static void row_at(unsigned int i, struct row *r)
{
	r->len = sizes[i % ARRAY_SIZE(sizes)];
	i /= ARRAY_SIZE(sizes);
	r->addr = BASE + offsets[i % ARRAY_SIZE(offsets)];
	i /= ARRAY_SIZE(offsets);
	r->cap = caps[i];
	r->shift = SHIFT;
}

#define ROW_FMT "addr %#" PRIx64 " len %" PRIu64 " cap %" PRIu64 \
		" -> copy %" PRIu64 " first %" PRIu64 " max %" PRIu64
#define ROW_ARGS(r, p) (r)->addr, (r)->len, (r)->cap, (p)->copy_len, \
		(p)->seg_first, (p)->seg_max

/* Pages of 1 << shift bytes spanned by [from, to) of the address space. */
static u64 span_pages_of(u64 from, u64 to, unsigned int shift)
{
	return ((to + (1ULL << shift) - 1) >> shift) - (from >> shift);
}

static u64 span_pages(u64 from, u64 to)
{
	return span_pages_of(from, to, SHIFT);
}

/* Does the buffer cross a page boundary, and can one page be registered? */
static bool splittable(const struct row *r)
{
	return r->cap >= PG &&
	       ((r->addr + r->len - 1) & ~(PG - 1)) > r->addr;
}

/*
 * The structural rules of struct ordma_plan, and the segments walked one by
 * one: NULL, or what is broken.
 */
static const char *check_plan(const struct row *r, const struct ordma_plan *p)
{
	u64 off, s, top, pg = 1ULL << r->shift;
	unsigned int k;

	if (p->copy_len > r->len)
		return "copy_len > len";
	if (!p->seg_first) {
		if (p->copy_len != r->len || p->seg_max)
			return "nothing registered but not all copied";
		return NULL;
	}
	if (p->copy_len == r->len)
		return "segments but nothing left for them";
	if (p->seg_first % pg || p->seg_max % pg)
		return "segment sizes not page multiples";
	if (p->seg_first > p->seg_max || p->seg_max > r->cap)
		return "not seg_first <= seg_max <= seg_cap";
	if (p->copy_len && (r->addr + p->copy_len) % pg)
		return "prefix does not end on a page boundary";
	top = p->seg_max >> r->shift;
	for (off = p->copy_len, k = 0; off < r->len; k++) {
		s = ordma_plan_seg_len(p, r->addr, r->len, off, k, r->shift);
		if (!s)
			return "empty segment before the end";
		if (span_pages_of(r->addr + off, r->addr + off + s, r->shift) > top)
			return "segment spans more pages than seg_max";
		if (off + s < r->len && (r->addr + off + s) % pg)
			return "segment ends inside a page";
		if (k && (r->addr + off) % pg)
			return "later segment starts inside a page";
		off += s;
	}
	if (off != r->len)
		return "segments do not end at len";
	if (ordma_plan_seg_len(p, r->addr, r->len, off, k, r->shift))
		return "a segment past the end";
	return NULL;
}

typedef unsigned __int128 u128;

/* Time, ns, to move @bytes at @ps picoseconds a byte, exactly. */
static u128 ns_of(u64 bytes, u64 ps)
{
	return (u128)bytes * ps / 1000;
}

/*
 * The estimate, segment by segment, in 128-bit picoseconds: no batching, no
 * saturation.
 */
static u128 ref_estimate(const struct ordma_model *m, const struct row *r,
			 const struct ordma_plan *p)
{
	u64 a = max(m->copy_ps_byte, m->wire_ps_byte);
	u64 c = p->seg_first ? p->copy_len : r->len, off, s;
	u128 wire, reg = 0;
	unsigned int k;

	wire = (u128)c * a;
	for (off = c, k = 0; off < r->len; k++) {
		s = ordma_plan_seg_len(p, r->addr, r->len, off, k, r->shift);
		reg += ((u128)m->pin_ns_page *
			span_pages_of(r->addr + off, r->addr + off + s, r->shift) +
			m->reg_ns) * 1000;
		wire = (wire > reg ? wire : reg) + (u128)s * m->wire_ps_byte;
		off += s;
	}
	return (wire + (u128)m->wr_ns * 1000) / 1000;
}

static u64 estimate(const struct ordma_model *m, const struct row *r,
		    const struct ordma_plan *p)
{
	return ordma_plan_estimate(m, r->addr, r->len, p, r->shift);
}

static void plan(const struct ordma_model *m, enum ordma_mode mode,
		 const struct row *r, struct ordma_plan *p)
{
	ordma_plan_make(m, mode, r->addr, r->len, r->cap, r->shift, p);
}

FIXTURE(plan) {
	struct ordma_model m;
};

FIXTURE_VARIANT(plan) {
	bool defaults;		/* ordma_model_init() */
	u64 p, r0, cp, w, d;
	bool saturating;	/* estimates may saturate */
};

/* ordma_model_init(): rxe in a TCG guest. */
FIXTURE_VARIANT_ADD(plan, rxe_tcg) {
	.defaults = true,
};

/* 16 us + 0.25 us a page to register, 62 ns a page to pin, 10 / 12 GB/s. */
FIXTURE_VARIANT_ADD(plan, real_nic) {
	.p = 62 + 250, .r0 = 16000, .cp = 100, .w = 83, .d = 3000,
};

/* 8 us a page (1953 ps a byte) against a 1 GB/s wire. */
FIXTURE_VARIANT_ADD(plan, pin_slow) {
	.p = 8000, .r0 = 10000, .cp = 250, .w = 1000, .d = 5000,
};

/* 1 GB/s copy against a 10 GB/s wire, cheap registration. */
FIXTURE_VARIANT_ADD(plan, copy_slow) {
	.p = 100, .r0 = 5000, .cp = 1000, .w = 100, .d = 2000,
};

FIXTURE_VARIANT_ADD(plan, zero) {
};

FIXTURE_VARIANT_ADD(plan, saturating) {
	.p = U64_MAX / 3, .r0 = U64_MAX / 2, .cp = U64_MAX / 5,
	.w = U64_MAX / 7, .d = U64_MAX / 2, .saturating = true,
};

FIXTURE_SETUP(plan)
{
	if (variant->defaults) {
		ordma_model_init(&self->m);
		return;
	}
	memset(&self->m, 0, sizeof(self->m));
	self->m.pin_ns_page = variant->p;
	self->m.reg_ns = variant->r0;
	self->m.copy_ps_byte = variant->cp;
	self->m.wire_ps_byte = variant->w;
	self->m.wr_ns = variant->d;
}

FIXTURE_TEARDOWN(plan)
{
}

/* Every plan of every mode keeps the rules of struct ordma_plan. */
TEST_F(plan, rules)
{
	struct ordma_plan p;
	const char *err;
	struct row r;
	unsigned int i;
	int mode;

	for (mode = 0; mode < ORDMA_MODE_NR; mode++) {
		for (i = 0; i < NROWS; i++) {
			row_at(i, &r);
			plan(&self->m, mode, &r, &p);
			err = check_plan(&r, &p);
			ASSERT_EQ(NULL, err)
				TH_LOG("%s: %s: " ROW_FMT, ordma_mode_names[mode],
				       err, ROW_ARGS(&r, &p));
		}
	}
}

/* COPY copies, ZEROCOPY registers first, OVERLAP always splits. */
TEST_F(plan, modes)
{
	struct ordma_plan p;
	struct row r;
	unsigned int i;

	for (i = 0; i < NROWS; i++) {
		row_at(i, &r);
		plan(&self->m, ORDMA_MODE_COPY, &r, &p);
		ASSERT_TRUE(p.copy_len == r.len && !p.seg_first)
			TH_LOG("copy: " ROW_FMT, ROW_ARGS(&r, &p));

		plan(&self->m, ORDMA_MODE_ZEROCOPY, &r, &p);
		if (r.cap < PG) {
			ASSERT_TRUE(p.copy_len == r.len && !p.seg_first)
				TH_LOG("zerocopy: " ROW_FMT, ROW_ARGS(&r, &p));
		} else {
			/* the first segment is as large as one MR maps */
			ASSERT_TRUE(p.copy_len == 0 &&
				    p.seg_first == min(r.cap & ~(PG - 1),
						       span_pages(r.addr, r.addr + r.len) << SHIFT))
				TH_LOG("zerocopy: " ROW_FMT, ROW_ARGS(&r, &p));
		}

		plan(&self->m, ORDMA_MODE_OVERLAP, &r, &p);
		if (splittable(&r)) {
			ASSERT_TRUE(p.copy_len > 0 && p.copy_len < r.len &&
				    p.seg_first)
				TH_LOG("overlap: " ROW_FMT, ROW_ARGS(&r, &p));
		} else {
			ASSERT_TRUE(p.copy_len == r.len && !p.seg_first)
				TH_LOG("overlap: " ROW_FMT, ROW_ARGS(&r, &p));
		}
	}
}

/*
 * AUTO copies all when copying costs less than registering, and is never
 * slower than the better of all copy and register-first.
 */
TEST_F(plan, auto_never_worse)
{
	struct ordma_plan p, copy, zc;
	u64 t, t_copy, t_zc;
	struct row r;
	unsigned int i;

	for (i = 0; i < NROWS; i++) {
		row_at(i, &r);
		plan(&self->m, ORDMA_MODE_AUTO, &r, &p);
		plan(&self->m, ORDMA_MODE_COPY, &r, &copy);
		plan(&self->m, ORDMA_MODE_ZEROCOPY, &r, &zc);
		t = estimate(&self->m, &r, &p);
		t_copy = estimate(&self->m, &r, &copy);
		t_zc = estimate(&self->m, &r, &zc);
		ASSERT_LE(t, min(t_copy, t_zc))
			TH_LOG("auto %" PRIu64 " copy %" PRIu64 " zerocopy %" PRIu64
			       ": " ROW_FMT, t, t_copy, t_zc, ROW_ARGS(&r, &p));
		if ((u128)r.len * self->m.copy_ps_byte <=
		    (u128)ordma_plan_reg_ns(&self->m,
					    span_pages(r.addr, r.addr + r.len)) * 1000)
			ASSERT_EQ(r.len, p.copy_len)
				TH_LOG("small, not all copy: " ROW_FMT, ROW_ARGS(&r, &p));
	}
}

/*
 * The OVERLAP prefix keeps the wire busy until the first segment is
 * registered, c / min(Bc, Bw) >= R(s1), unless no longer prefix exists.
 */
TEST_F(plan, overlap_prefix)
{
	u64 a = max(self->m.copy_ps_byte, self->m.wire_ps_byte), s1, last;
	struct ordma_plan p;
	struct row r;
	unsigned int i;

	if (variant->saturating)
		SKIP(return, "saturated times compare equal");
	for (i = 0; i < NROWS; i++) {
		row_at(i, &r);
		if (!splittable(&r))
			continue;
		plan(&self->m, ORDMA_MODE_OVERLAP, &r, &p);
		s1 = ordma_plan_seg_len(&p, r.addr, r.len, p.copy_len, 0, SHIFT);
		last = ((r.addr + r.len - 1) & ~(PG - 1)) - r.addr;
		if (p.copy_len == last)
			continue;
		ASSERT_TRUE((u128)p.copy_len * a >=
			    (u128)ordma_plan_reg_ns(&self->m,
						    span_pages(r.addr + p.copy_len,
							       r.addr + p.copy_len + s1)) * 1000)
			TH_LOG(ROW_FMT, ROW_ARGS(&r, &p));
	}
}

/*
 * When copying keeps up with the wire, OVERLAP is within one chunk of the
 * pre-registered floor len / Bw + d, and so is AUTO.
 */
TEST_F(plan, overlap_floor)
{
	const struct ordma_model *m = &self->m;
	u64 t, floor, slack;
	struct ordma_plan p;
	struct row r;
	unsigned int i;
	int mode;

	if (variant->saturating || m->copy_ps_byte > m->wire_ps_byte)
		SKIP(return, "copying is slower than the wire");
	slack = ns_of(CHUNK, m->wire_ps_byte);
	for (mode = ORDMA_MODE_AUTO; mode <= ORDMA_MODE_OVERLAP;
	     mode += ORDMA_MODE_OVERLAP - ORDMA_MODE_AUTO) {
		for (i = 0; i < NROWS; i++) {
			row_at(i, &r);
			if (!splittable(&r))
				continue;
			plan(m, mode, &r, &p);
			t = estimate(m, &r, &p);
			floor = ns_of(r.len, m->wire_ps_byte) + m->wr_ns;
			ASSERT_LE(t, floor + slack)
				TH_LOG("%s: %" PRIu64 " ns, floor %" PRIu64 ": " ROW_FMT,
				       ordma_mode_names[mode], t, floor,
				       ROW_ARGS(&r, &p));
		}
	}
}

/*
 * The estimate, which jumps over runs of equal segments, matches the plain
 * simulation, within the rounding of each segment's wire time to a ns.
 */
TEST_F(plan, estimate_matches_simulation)
{
	struct ordma_plan p;
	u128 ref;
	struct row r;
	unsigned int i;
	int mode;
	u64 t;

	for (mode = 0; mode < ORDMA_MODE_NR; mode++) {
		for (i = 0; i < NROWS; i++) {
			row_at(i, &r);
			plan(&self->m, mode, &r, &p);
			t = estimate(&self->m, &r, &p);
			ref = ref_estimate(&self->m, &r, &p);
			/* products that overflow saturate the estimate */
			if (ref >= U64_MAX || (variant->saturating && t == U64_MAX)) {
				ASSERT_EQ(U64_MAX, t);
				continue;
			}
			ASSERT_EQ((u64)ref, t)
				TH_LOG("%s: " ROW_FMT, ordma_mode_names[mode],
				       ROW_ARGS(&r, &p));
		}
	}
}

/* The planner prints what it chose: reference for the benchmark. */
TEST_F(plan, table)
{
	static const u64 show[] = { 4 * KIB, 64 * KIB, MIB, 64 * MIB, GIB };
	static const char *const tag[] = { "au", "cp", "zc", "ov" };
	struct row r = { .addr = BASE + 100, .cap = 2 * MIB, .shift = SHIFT };
	struct ordma_plan p;
	char line[256];
	unsigned int i;
	int mode, n;

	ksft_print_msg("p %" PRIu64 " ns/page, r0 %" PRIu64 " ns, cp %" PRIu64
		       " ps/B, w %" PRIu64 " ps/B, d %" PRIu64
		       " ns; estimate/prefix at addr %% page = 100:\n",
		       self->m.pin_ns_page, self->m.reg_ns, self->m.copy_ps_byte,
		       self->m.wire_ps_byte, self->m.wr_ns);
	for (i = 0; i < ARRAY_SIZE(show); i++) {
		r.len = show[i];
		n = snprintf(line, sizeof(line), "%10" PRIu64 " B:", r.len);
		for (mode = 0; mode < ORDMA_MODE_NR; mode++) {
			plan(&self->m, mode, &r, &p);
			n += snprintf(line + n, sizeof(line) - n,
				      " %s %" PRIu64 "us/%" PRIu64 "K", tag[mode],
				      (u64)(estimate(&self->m, &r, &p) / 1000),
				      (u64)(p.copy_len / KIB));
		}
		ksft_print_msg("%s\n", line);
	}
	/* the harness ends the test process with _exit() */
	fflush(stdout);
}

/* Pinning slower than the wire: the copy path carries a share all along. */
TEST(pin_slow_share)
{
	struct ordma_model m = {
		.pin_ns_page = 8000, .reg_ns = 10000, .copy_ps_byte = 250,
		.wire_ps_byte = 1000, .wr_ns = 5000,
	};
	struct row r = { .addr = BASE, .len = 256 * MIB, .cap = 2 * MIB, .shift = SHIFT };
	/*
	 * No idle wire: c * a = (n - c) * (P - w) with P = p / PAGE per byte,
	 * a = max(cp, w): c = n (P - w) / (P - w + a), give or take the fixed
	 * costs and the last segment.
	 */
	u64 pps = m.pin_ns_page * 1000 / PG, expect;
	struct ordma_plan p;

	expect = r.len / 1000 * (pps - m.wire_ps_byte) * 1000 /
		 (pps - m.wire_ps_byte + m.wire_ps_byte);
	plan(&m, ORDMA_MODE_OVERLAP, &r, &p);
	ASSERT_LE(expect - r.len / 50, p.copy_len)
		TH_LOG("expected about %" PRIu64 ": " ROW_FMT, expect, ROW_ARGS(&r, &p));
	ASSERT_GE(expect + r.len / 50, p.copy_len)
		TH_LOG("expected about %" PRIu64 ": " ROW_FMT, expect, ROW_ARGS(&r, &p));
	/* and that hides every registration behind the wire */
	ASSERT_EQ((u64)ns_of(r.len, m.wire_ps_byte) + m.wr_ns, estimate(&m, &r, &p));
	plan(&m, ORDMA_MODE_AUTO, &r, &p);
	ASSERT_EQ((u64)ns_of(r.len, m.wire_ps_byte) + m.wr_ns, estimate(&m, &r, &p));
}

/*
 * A real NIC copies slower than its wire: from a few MiB on, overlapping
 * beats both copying everything and registering first, and AUTO takes it.
 */
TEST(real_nic_overlap_wins)
{
	struct ordma_model m = {
		.pin_ns_page = 312, .reg_ns = 16000, .copy_ps_byte = 100,
		.wire_ps_byte = 83, .wr_ns = 3000,
	};
	static const u64 big[] = { 4 * MIB, 64 * MIB, GIB };
	struct ordma_plan ov, copy, zc, au;
	u64 t_ov, t_copy, t_zc;
	struct row r = { .addr = BASE + 1, .cap = 256 * MIB, .shift = SHIFT };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(big); i++) {
		r.len = big[i];
		plan(&m, ORDMA_MODE_OVERLAP, &r, &ov);
		plan(&m, ORDMA_MODE_COPY, &r, &copy);
		plan(&m, ORDMA_MODE_ZEROCOPY, &r, &zc);
		plan(&m, ORDMA_MODE_AUTO, &r, &au);
		t_ov = estimate(&m, &r, &ov);
		t_copy = estimate(&m, &r, &copy);
		t_zc = estimate(&m, &r, &zc);
		ASSERT_LT(t_ov, t_copy) TH_LOG(ROW_FMT, ROW_ARGS(&r, &ov));
		ASSERT_LT(t_ov, t_zc) TH_LOG(ROW_FMT, ROW_ARGS(&r, &ov));
		ASSERT_TRUE(au.copy_len > 0 && au.copy_len < r.len)
			TH_LOG(ROW_FMT, ROW_ARGS(&r, &au));
		/* a small prefix, not a share of the buffer */
		ASSERT_LT(ov.copy_len, r.len / 2) TH_LOG(ROW_FMT, ROW_ARGS(&r, &ov));
	}
}

/*
 * Soft-RoCE: the wire is CPU work, so nothing overlaps. AUTO copies small
 * buffers whole and registers large ones whole, switching where copying
 * costs one registration and its deregistration (n * cp = R(n) + dr), and
 * never splits.
 */
TEST(cpu_wire_copies_or_registers)
{
	struct ordma_model m = {
		.pin_ns_page = 400, .reg_ns = 112000, .copy_ps_byte = 545,
		.wire_ps_byte = 11000, .wr_ns = 30000, .dereg_ns = 50000,
		.cpu_wire = true,
	};
	struct row r = { .addr = BASE, .cap = 2 * MIB, .shift = SHIFT };
	struct ordma_plan p, copy, zc;
	u64 len, cross;

	/* n * cp = r0 + dr + n * p / PAGE */
	cross = (m.reg_ns + m.dereg_ns) * 1000 /
		(m.copy_ps_byte - m.pin_ns_page * 1000 / PG);
	for (len = 4096; len <= 64 * MIB; len <<= 1) {
		r.len = len;
		plan(&m, ORDMA_MODE_AUTO, &r, &p);
		plan(&m, ORDMA_MODE_COPY, &r, &copy);
		plan(&m, ORDMA_MODE_ZEROCOPY, &r, &zc);
		if (len < cross / 2)
			ASSERT_EQ(len, p.copy_len) TH_LOG(ROW_FMT, ROW_ARGS(&r, &p));
		if (len > cross * 2)
			ASSERT_EQ(0ULL, p.copy_len) TH_LOG(ROW_FMT, ROW_ARGS(&r, &p));
		ASSERT_TRUE(p.copy_len == 0 || p.copy_len == len)
			TH_LOG(ROW_FMT, ROW_ARGS(&r, &p));
		/* the costs add up */
		ASSERT_EQ((u64)ns_of(len, m.copy_ps_byte + m.wire_ps_byte) + m.wr_ns,
			  estimate(&m, &r, &copy));
		ASSERT_LE(min(estimate(&m, &r, &copy), estimate(&m, &r, &zc)),
			  estimate(&m, &r, &p));
		ASSERT_GE(min(estimate(&m, &r, &copy), estimate(&m, &r, &zc)),
			  estimate(&m, &r, &p));
	}
	/* one segment of 2 MiB: r0 + 512 pages + dr, and the wire */
	r.len = 2 * MIB;
	plan(&m, ORDMA_MODE_ZEROCOPY, &r, &zc);
	ASSERT_EQ(m.reg_ns + 512 * m.pin_ns_page + m.dereg_ns +
		  (u64)ns_of(r.len, m.wire_ps_byte) + m.wr_ns, estimate(&m, &r, &zc));
	/* 300 KiB: registering (r0 + 75 p = 142 us) is cheaper than copying
	 * (167 us), registering and deregistering (192 us) is not */
	r.len = 300 * KIB;
	plan(&m, ORDMA_MODE_AUTO, &r, &p);
	ASSERT_EQ(r.len, p.copy_len) TH_LOG(ROW_FMT, ROW_ARGS(&r, &p));
	/* where the wire is not CPU work, deregistering is off the path */
	m.cpu_wire = false;
	plan(&m, ORDMA_MODE_ZEROCOPY, &r, &zc);
	ASSERT_EQ(m.reg_ns + 75 * m.pin_ns_page +
		  (u64)ns_of(r.len, m.wire_ps_byte) + m.wr_ns, estimate(&m, &r, &zc));
	plan(&m, ORDMA_MODE_AUTO, &r, &p);
	ASSERT_GT(r.len, p.copy_len) TH_LOG(ROW_FMT, ROW_ARGS(&r, &p));
}

/* xorshift64: the same pseudo-random rows on every run. */
static u64 rnd_state = 0x9e3779b97f4a7c15ULL;

static u64 rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* A value of up to @bits bits, its magnitude uniformly distributed. */
static u64 rnd_bits(unsigned int bits)
{
	unsigned int b = rnd() % (bits + 1);

	return b ? rnd() >> (64 - b) : 0;
}

/*
 * Random models (each cost from 0 to far beyond any device), pages of 4, 16
 * and 64 KiB, addresses, lengths up to 2 GiB and MR limits: every plan keeps
 * the rules, and AUTO is never slower than all copy or register-first.
 */
TEST(random_rows)
{
	static const unsigned int shifts[] = { 12, 14, 16 };
	struct ordma_plan p, copy, zc;
	struct ordma_model m = { 0 };
	u64 t, t_copy, t_zc;
	const char *err;
	struct row r;
	int i, mode;

	for (i = 0; i < 20000; i++) {
		m.pin_ns_page = rnd_bits(24);
		m.reg_ns = rnd_bits(30);
		m.copy_ps_byte = rnd_bits(20);
		m.wire_ps_byte = rnd_bits(20);
		m.wr_ns = rnd_bits(30);
		m.dereg_ns = rnd_bits(30);
		m.cpu_wire = rnd() & 1;
		r.shift = shifts[rnd() % ARRAY_SIZE(shifts)];
		r.addr = BASE + rnd_bits(24);
		r.len = rnd_bits(31);
		r.cap = rnd_bits(32);
		for (mode = 0; mode < ORDMA_MODE_NR; mode++) {
			plan(&m, mode, &r, &p);
			err = check_plan(&r, &p);
			ASSERT_EQ(NULL, err)
				TH_LOG("row %d %s: %s: " ROW_FMT, i,
				       ordma_mode_names[mode], err, ROW_ARGS(&r, &p));
		}
		plan(&m, ORDMA_MODE_AUTO, &r, &p);
		plan(&m, ORDMA_MODE_COPY, &r, &copy);
		plan(&m, ORDMA_MODE_ZEROCOPY, &r, &zc);
		t = estimate(&m, &r, &p);
		t_copy = estimate(&m, &r, &copy);
		t_zc = estimate(&m, &r, &zc);
		ASSERT_LE(t, min(t_copy, t_zc))
			TH_LOG("row %d: " ROW_FMT, i, ROW_ARGS(&r, &p));
	}
}

/* Hand-computed estimates of simple plans, rxe defaults. */
TEST(estimate_values)
{
	struct row r = { .addr = BASE, .len = MIB, .cap = 2 * MIB, .shift = SHIFT };
	struct ordma_plan p = { .copy_len = MIB };
	struct ordma_model m;

	ordma_model_init(&m);
	/* all copy: n * max(cp, w) + d */
	ASSERT_EQ(MIB * 10 + 30000, estimate(&m, &r, &p));
	/* register first: R(256 pages) + n * w + d */
	p = (struct ordma_plan){ .copy_len = 0, .seg_first = MIB, .seg_max = 2 * MIB };
	ASSERT_EQ(20000 + 256 * 1500 + MIB * 10 + 30000, estimate(&m, &r, &p));
	/* one page off: the segment spans 257 pages */
	r.addr += 1;
	p.seg_first = 257 * PG;
	ASSERT_EQ(20000 + 257 * 1500 + MIB * 10 + 30000, estimate(&m, &r, &p));
	/* prefix of 64 KiB: ready long before, the wire never waits */
	r.addr = BASE;
	p = (struct ordma_plan){ .copy_len = 64 * KIB, .seg_first = PG, .seg_max = 2 * MIB };
	ASSERT_EQ(MIB * 10 + 30000, estimate(&m, &r, &p));
	/* a 4 KiB prefix: its 41 us on the wire cover R(1 page) = 21.5 us */
	p.copy_len = PG;
	ASSERT_EQ(MIB * 10 + 30000, estimate(&m, &r, &p));
	/* no prefix, one page first: the wire starts at R(1) = 21.5 us */
	p.copy_len = 0;
	ASSERT_EQ(21500 + MIB * 10 + 30000, estimate(&m, &r, &p));
	/* len 0: one work request */
	r.len = 0;
	ASSERT_EQ(30000ULL, estimate(&m, &r, &p));
}

/* Degenerate inputs give all copy (or nothing), never a fault. */
TEST(edges)
{
	struct ordma_model m, zero = { 0 };
	struct ordma_plan p;
	int mode;

	ordma_model_init(&m);
	for (mode = 0; mode < ORDMA_MODE_NR; mode++) {
		/* len 0 */
		ordma_plan_make(&m, mode, BASE, 0, 2 * MIB, SHIFT, &p);
		ASSERT_TRUE(!p.copy_len && !p.seg_first && !p.seg_max);
		/* an MR maps less than a page */
		ordma_plan_make(&m, mode, BASE, GIB, PG - 1, SHIFT, &p);
		ASSERT_TRUE(p.copy_len == GIB && !p.seg_first);
		ordma_plan_make(&m, mode, BASE, GIB, 0, SHIFT, &p);
		ASSERT_TRUE(p.copy_len == GIB && !p.seg_first);
		/* the end wraps the address space */
		ordma_plan_make(&m, mode, U64_MAX - MIB, 2 * MIB, 2 * MIB, SHIFT, &p);
		ASSERT_TRUE(p.copy_len == 2 * MIB && !p.seg_first);
		ordma_plan_make(&m, mode, 0, U64_MAX, 2 * MIB, SHIFT, &p);
		ASSERT_TRUE(p.copy_len == U64_MAX && !p.seg_first);
		ASSERT_EQ(U64_MAX, ordma_plan_estimate(&m, 0, U64_MAX, &p, SHIFT));
		/* no such page size */
		ordma_plan_make(&m, mode, BASE, GIB, 2 * MIB, 40, &p);
		ASSERT_TRUE(p.copy_len == GIB && !p.seg_first);
		ASSERT_EQ(0ULL, ordma_plan_seg_len(&p, BASE, GIB, 0, 0, 40));
		/* all zeros: nothing costs anything */
		ordma_plan_make(&zero, mode, BASE + 1, GIB, 2 * MIB, SHIFT, &p);
		ASSERT_EQ(0ULL, ordma_plan_estimate(&zero, BASE + 1, GIB, &p, SHIFT));
		/* an unknown mode copies */
		ordma_plan_make(&m, ORDMA_MODE_NR + mode, BASE, GIB, 2 * MIB, SHIFT, &p);
		ASSERT_TRUE(p.copy_len == GIB && !p.seg_first);
	}
	/* a hand-made plan with a huge first segment walks to the end */
	p = (struct ordma_plan){ .copy_len = 0, .seg_first = U64_MAX, .seg_max = 1 };
	ASSERT_EQ(GIB, ordma_plan_seg_len(&p, BASE, GIB, 0, 0, SHIFT));
	ASSERT_EQ(GIB, ordma_plan_seg_len(&p, BASE + PG - 1, GIB, 0, 70, SHIFT));
	/* a malformed one with segments below a page still moves on */
	p = (struct ordma_plan){ .copy_len = 0, .seg_first = 1, .seg_max = 0 };
	ASSERT_EQ(PG - 100, ordma_plan_seg_len(&p, BASE + 100, GIB, 0, 0, SHIFT));
	ASSERT_EQ(PG, ordma_plan_seg_len(&p, BASE + 100, GIB, PG - 100, 1, SHIFT));
}

TEST(model_defaults)
{
	struct ordma_model m;
	int i;

	memset(&m, 0xa5, sizeof(m));
	ordma_model_init(&m);
	ASSERT_EQ(1500ULL, m.pin_ns_page);
	ASSERT_EQ(20000ULL, m.reg_ns);
	ASSERT_EQ(1000ULL, m.copy_ps_byte);	/* 1 GB/s */
	ASSERT_EQ(10000ULL, m.wire_ps_byte);	/* 100 MB/s */
	ASSERT_EQ(30000ULL, m.wr_ns);
	ASSERT_EQ(40000ULL, m.dereg_ns);
	for (i = 0; i < ORDMA_MODEL_NR; i++)
		ASSERT_EQ(0U, m.samples[i]);
}

/* The first sample of each field replaces the default; units convert. */
TEST(model_first_sample)
{
	struct ordma_model m;

	ordma_model_init(&m);
	ordma_model_pin(&m, 4, 1000);
	ASSERT_EQ(250ULL, m.pin_ns_page);
	ordma_model_reg(&m, 123456);
	ASSERT_EQ(123456ULL, m.reg_ns);
	ordma_model_copy(&m, MIB, MIB / 4);	/* 4 GB/s */
	ASSERT_EQ(250ULL, m.copy_ps_byte);
	ordma_model_wire(&m, 1000, 20000);	/* 50 MB/s */
	ASSERT_EQ(20000ULL, m.wire_ps_byte);
	ordma_model_wr(&m, 0);
	ASSERT_EQ(0ULL, m.wr_ns);
	ordma_model_dereg(&m, 77000);
	ASSERT_EQ(77000ULL, m.dereg_ns);
	ASSERT_EQ(1U, m.samples[ORDMA_MODEL_PIN]);
	ASSERT_EQ(1U, m.samples[ORDMA_MODEL_REG]);
	ASSERT_EQ(1U, m.samples[ORDMA_MODEL_COPY]);
	ASSERT_EQ(1U, m.samples[ORDMA_MODEL_WIRE]);
	ASSERT_EQ(1U, m.samples[ORDMA_MODEL_WR]);
	ASSERT_EQ(1U, m.samples[ORDMA_MODEL_DEREG]);
}

/* Samples of nothing are ignored. */
TEST(model_empty_samples)
{
	struct ordma_model m, before;

	ordma_model_init(&m);
	before = m;
	ordma_model_pin(&m, 0, 5000);
	ordma_model_copy(&m, 0, 5000);
	ordma_model_wire(&m, 0, 5000);
	ASSERT_EQ(0, memcmp(&m, &before, sizeof(m)));
}

/* A steady value is reached, from above and below, and then held. */
TEST(model_converges)
{
	struct ordma_model m;
	int i;

	ordma_model_init(&m);
	ordma_model_reg(&m, 1000);
	for (i = 0; i < 200; i++)
		ordma_model_reg(&m, 50000);
	ASSERT_EQ(50000ULL, m.reg_ns);
	for (i = 0; i < 200; i++)
		ordma_model_reg(&m, 3);
	ASSERT_EQ(3ULL, m.reg_ns);
	/* small averages still move */
	for (i = 0; i < 100; i++)
		ordma_model_reg(&m, 7);
	ASSERT_EQ(7ULL, m.reg_ns);
	/* and so do noisy ones: the average lands inside the noise */
	for (i = 0; i < 400; i++)
		ordma_model_wire(&m, 1000, i % 2 ? 9000 : 11000);
	ASSERT_LE(9000ULL, m.wire_ps_byte);
	ASSERT_GE(11000ULL, m.wire_ps_byte);
	ASSERT_EQ(501U, m.samples[ORDMA_MODEL_REG]);
}

/* One outlier moves the average by at most an eighth. */
TEST(model_outliers)
{
	struct ordma_model m;
	u64 v;
	int i;

	ordma_model_init(&m);
	for (i = 0; i < 50; i++)
		ordma_model_copy(&m, 4096, 4096);	/* 1000 ps/byte */
	v = m.copy_ps_byte;
	ASSERT_EQ(1000ULL, v);
	ordma_model_copy(&m, 4096, 100 * 4096);
	ASSERT_LE(m.copy_ps_byte, v + v / 8 + 1);
	ASSERT_GT(m.copy_ps_byte, v);
	ordma_model_copy(&m, 4096, 4096);
	ordma_model_copy(&m, 4096, 4096);
	v = m.copy_ps_byte;
	ordma_model_copy(&m, 4096, 0);
	ASSERT_GE(m.copy_ps_byte, v - v / 8 - 1);
	ASSERT_LT(m.copy_ps_byte, v);
	/* absurd samples saturate at the limits */
	ordma_model_init(&m);
	ordma_model_reg(&m, U64_MAX);
	ASSERT_EQ(ORDMA_MODEL_MAX_NS, m.reg_ns);
	ordma_model_wire(&m, 1, U64_MAX);
	ASSERT_EQ(ORDMA_MODEL_MAX_PS_BYTE, m.wire_ps_byte);
	ordma_model_pin(&m, 1, U64_MAX);
	ASSERT_EQ(ORDMA_MODEL_MAX_NS, m.pin_ns_page);
	for (i = 0; i < 10; i++)
		ordma_model_reg(&m, U64_MAX);
	ASSERT_EQ(ORDMA_MODEL_MAX_NS, m.reg_ns);
}

/* The names sysfs shows and takes (sysfs_match_string()), in enum order. */
TEST(mode_names)
{
	ASSERT_STREQ("auto", ordma_mode_names[ORDMA_MODE_AUTO]);
	ASSERT_STREQ("copy", ordma_mode_names[ORDMA_MODE_COPY]);
	ASSERT_STREQ("zerocopy", ordma_mode_names[ORDMA_MODE_ZEROCOPY]);
	ASSERT_STREQ("overlap", ordma_mode_names[ORDMA_MODE_OVERLAP]);
	ASSERT_EQ(4, ORDMA_MODE_NR);
}

TEST_HARNESS_MAIN
