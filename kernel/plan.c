// SPDX-License-Identifier: GPL-2.0
/*
 * The cost model of a device and the planner that splits a transfer between
 * the copy path (pre-registered pool chunks) and the zero-copy path (the
 * user's pages, pinned and registered while the copy path keeps the wire
 * busy). Pure integer arithmetic: no floating point, no allocation, no
 * locking (the caller serializes model updates against readers), every
 * multiplication saturates and every division is guarded, so any model
 * (all zeros included) and any length up to U64_MAX give a valid plan.
 *
 * Costs (struct ordma_model, per device, moving averages):
 *   p   pin + DMA-map one page                  pin_ns_page
 *   r0  fixed cost of one registration          reg_ns
 *   cp  copy user -> pool chunk, = 1/Bc         copy_ps_byte
 *   w   wire, = 1/Bw                            wire_ps_byte
 *   d   post + complete one work request        wr_ns
 *   dr  deregister and unpin one segment        dereg_ns
 * Registering a segment spanning P pages costs R(P) = r0 + p * P. The copy
 * path feeds the wire at the slower of copy and wire, a = max(cp, w) =
 * 1/min(Bc, Bw).
 *
 * Timing (struct ordma_plan: prefix c, segments s_1, s_2, ... doubling from
 * seg_first up to seg_max; see ordma_plan_seg_len()). Three resources work
 * in parallel from t = 0:
 *   copy path  copies the prefix, the wire sends it as it comes: the wire
 *              is done with it at W_0 = c * a;
 *   reg path   registers the segments one after the other: segment k is
 *              ready at T_k = R(s_1) + ... + R(s_k);
 *   wire       sends segment k after the previous one and once it is
 *              ready: W_k = max(W_(k-1), T_k) + s_k * w.
 * The transfer completes at W_K + d (ordma_plan_estimate()). Times are
 * kept in picoseconds, so no rounding makes one plan look faster than
 * another; only the estimate returned is rounded down to ns. This is a
 * fluid model: it ignores the granularity of pool chunks (the first chunk
 * is copied before the wire starts), so real transfers take up to one chunk
 * of wire time more. On rxe the wire is the CPU too; the measured w absorbs
 * that contention. Deregistration is off the critical path and not modelled
 * (but see cpu_wire below).
 *
 * The wire never idles when the prefix outlasts every registration,
 * c * a >= max_k (T_k - w * (s_1 + ... + s_(k-1))); then the transfer takes
 * c * a + (n - c) * w + d, the pre-registered floor n * w + d when Bc >= Bw.
 * For the first segment alone this is the smallest useful prefix
 * c / min(Bc, Bw) >= R(s_1). Later segments keep up once
 * R(s_(k+1)) <= s_k * w: equal segments keep up from
 * s* = r0 / (w - p / PAGE) on, so they double from a small s_1 (small
 * prefix) to the device's largest, seg_cap. When pinning is slower than the
 * wire (p / PAGE >= w) no segment size keeps up: the prefix then carries a
 * share all along, the smallest c with no idle wire, which is where both
 * paths finish together, c * a = R(n - c) roughly, bounded by the wire.
 *
 * Modes (ordma_plan_make()):
 *   COPY      c = n.
 *   ZEROCOPY  c = 0, the first segment as large as one MR maps (all of a
 *             buffer up to seg_cap): register first, then send.
 *   OVERLAP   always a split when the buffer crosses a page boundary: for
 *             each first segment s_1 = PAGE, 2 PAGE, ... the planner tries
 *             the smallest useful prefix and the smallest prefix with no idle
 *             wire, and keeps the fastest plan (the smaller prefix on a tie).
 *   AUTO      all copy when copying is cheaper than registering,
 *             n * cp <= R(pages(n)) (R' on a cpu_wire device); otherwise
 *             the OVERLAP plan unless its estimate is worse than the better
 *             of all copy (n * a + d) and ZEROCOPY (at most R(n) + n * w +
 *             d), which is then taken.
 * Nothing can be registered when seg_cap is below one page: every mode then
 * copies.
 *
 * A device whose wire is work of the host's CPUs (cpu_wire: Soft-RoCE and
 * soft iWARP, whose packet work runs on the same cores as the copies and
 * registrations) has no idle resource to hide anything behind: copying and
 * registering delay the wire by their own time, and so does deregistering
 * afterwards (unpinning a segment cost 30-100 us under TCG, half as much
 * again as registering it): a segment costs R'(P) = R(P) + dr there. Its
 * estimates add up, c * (cp + w) + sum_k (R'(s_k) + s_k * w) + d, and AUTO
 * takes the cheaper of all copy and ZEROCOPY: a split is never cheaper than
 * both, since the cost is linear in c apart from one fixed r0 + dr per
 * segment.
 *
 * Cost of planning: an estimate walks at most ~64 segments (equal ones in
 * closed form, however long the buffer), and OVERLAP tries one first
 * segment per power of two with a binary search over the prefix: a few
 * microseconds for 1 GiB natively. Callers may cache plans per size class.
 */
#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#endif

#include "plan.h"

/* Largest page size planned for: 1 GiB. */
#define ORDMA_PLAN_MAX_SHIFT	30U

const char *const ordma_mode_names[ORDMA_MODE_NR] = {
	[ORDMA_MODE_AUTO]	= "auto",
	[ORDMA_MODE_COPY]	= "copy",
	[ORDMA_MODE_ZEROCOPY]	= "zerocopy",
	[ORDMA_MODE_OVERLAP]	= "overlap",
};

static u64 plan_add(u64 a, u64 b)
{
	u64 r;

	return check_add_overflow(a, b, &r) ? U64_MAX : r;
}

static u64 plan_mul(u64 a, u64 b)
{
	u64 r;

	return check_mul_overflow(a, b, &r) ? U64_MAX : r;
}

/* a - b, or 0 when b >= a. */
static u64 plan_sub(u64 a, u64 b)
{
	return a > b ? a - b : 0;
}

/* ns -> ps, and back (rounded down); U64_MAX stays U64_MAX. */
static u64 plan_ps(u64 ns)
{
	return plan_mul(ns, 1000);
}

static u64 plan_ps_to_ns(u64 ps)
{
	return ps == U64_MAX ? U64_MAX : div_u64(ps, 1000);
}

/* Bytes moved in @t ps at @ps picoseconds per byte, rounded up. */
static u64 plan_bytes(u64 t, u64 ps)
{
	if (!t)
		return 0;
	if (!ps)
		return U64_MAX;
	return div64_u64(plan_add(t, ps - 1), ps);
}

/* The wire time per byte of the copy path: 1 / min(Bc, Bw). */
static u64 plan_copy_ps(const struct ordma_model *m)
{
	return max(m->copy_ps_byte, m->wire_ps_byte);
}

/**
 * ordma_plan_reg_ns() - predicted time to register one segment
 * @m: the device's model
 * @pages: pages the segment spans
 *
 * Return: R(@pages) = r0 + p * @pages, ns, saturated at U64_MAX.
 */
u64 ordma_plan_reg_ns(const struct ordma_model *m, u64 pages)
{
	return plan_add(m->reg_ns, plan_mul(m->pin_ns_page, pages));
}

static u64 plan_reg_ps(const struct ordma_model *m, u64 pages)
{
	return plan_ps(ordma_plan_reg_ns(m, pages));
}

/*
 * What a segment costs the transfer: R(pages), and on a cpu_wire device
 * R'(pages), deregistering it later included.
 */
static u64 plan_seg_ps(const struct ordma_model *m, u64 pages)
{
	u64 r = plan_reg_ps(m, pages);

	return m->cpu_wire ? plan_add(r, plan_ps(m->dereg_ns)) : r;
}

/**
 * ordma_model_init() - start a device's model from defaults
 * @m: the model
 *
 * The defaults describe Soft-RoCE (rxe) in a QEMU guest under TCG, where the
 * test suite runs; every field is replaced by its first measurement. rxe
 * there moves 100-120 MB/s (w = 10000 ps/byte, Bw = 100 MB/s); a 4 KiB RDMA
 * WRITE from a registered buffer takes about 90 us, of which 41 us is wire
 * time at that rate, leaving some 30 us to post and complete the request
 * (d) and a little for the copy. copy_from_user() runs at about 1 GB/s
 * under TCG (cp = 1000 ps/byte). Pinning and DMA-mapping a page, 62 ns
 * natively, costs some 1.5 us through binary translation (p), and a fast
 * registration is itself a software work request of rxe, posted and
 * completed through its tasklets: about 20 us (r0). Registering per
 * transfer measured about 2.2x the registered time at 4 KiB and bouncing
 * 1.1x, which this model orders the same way. Deregistering a segment
 * (ib_dereg_mr(): unpin, free the page map) took 30-100 us (dr).
 */
void ordma_model_init(struct ordma_model *m)
{
	int i;

	m->pin_ns_page = 1500;
	m->reg_ns = 20000;
	m->copy_ps_byte = 1000;
	m->wire_ps_byte = 10000;
	m->wr_ns = 30000;
	m->dereg_ns = 40000;
	for (i = 0; i < ORDMA_MODEL_NR; i++)
		m->samples[i] = 0;
	m->cpu_wire = false;
}

/*
 * One sample into a moving average of weight 1/8. The first sample sets it.
 * Later samples are clamped to [avg / 2, 2 * avg], so an outlier moves the
 * average by at most avg / 8 while a real change of any size still wins
 * within a few dozen samples. The step is rounded away from zero so that
 * small averages still converge.
 */
static void plan_ewma(struct ordma_model *m, enum ordma_model_field f,
		      u64 *avg, u64 sample, u64 limit)
{
	u64 v = *avg;

	sample = min(sample, limit);
	if (!m->samples[f]) {
		v = sample;
	} else {
		if (v)
			sample = clamp(sample, v / 2, min(v, limit) * 2);
		if (sample > v)
			v += (sample - v + 7) / 8;
		else
			v -= (v - sample + 7) / 8;
	}
	*avg = min(v, limit);
	if (m->samples[f] < U32_MAX)
		m->samples[f]++;
}

/**
 * ordma_model_pin() - account one measured pinning
 * @m: the device's model
 * @pages: pages pinned and DMA-mapped; a sample of 0 pages is ignored
 * @ns: how long it took
 */
void ordma_model_pin(struct ordma_model *m, u64 pages, u64 ns)
{
	if (!pages)
		return;
	plan_ewma(m, ORDMA_MODEL_PIN, &m->pin_ns_page, div64_u64(ns, pages),
		  ORDMA_MODEL_MAX_NS);
}

/**
 * ordma_model_reg() - account one measured registration
 * @m: the device's model
 * @ns: its fixed cost, measured on a registration of a few pages (the
 *	device's work for one MR), pinning apart
 */
void ordma_model_reg(struct ordma_model *m, u64 ns)
{
	plan_ewma(m, ORDMA_MODEL_REG, &m->reg_ns, ns, ORDMA_MODEL_MAX_NS);
}

/* ps per byte of @bytes moved in @ns. */
static u64 plan_ps_byte(u64 bytes, u64 ns)
{
	return div64_u64(plan_mul(ns, 1000), bytes);
}

/**
 * ordma_model_copy() - account one measured copy into a pool chunk
 * @m: the device's model
 * @bytes: bytes copied; a sample of 0 bytes is ignored
 * @ns: how long it took
 */
void ordma_model_copy(struct ordma_model *m, u64 bytes, u64 ns)
{
	if (!bytes)
		return;
	plan_ewma(m, ORDMA_MODEL_COPY, &m->copy_ps_byte,
		  plan_ps_byte(bytes, ns), ORDMA_MODEL_MAX_PS_BYTE);
}

/**
 * ordma_model_wire() - account one measured transmission
 * @m: the device's model
 * @bytes: bytes the device moved; a sample of 0 bytes is ignored
 * @ns: how long it took, the fixed cost of the work request(s) excluded
 */
void ordma_model_wire(struct ordma_model *m, u64 bytes, u64 ns)
{
	if (!bytes)
		return;
	plan_ewma(m, ORDMA_MODEL_WIRE, &m->wire_ps_byte,
		  plan_ps_byte(bytes, ns), ORDMA_MODEL_MAX_PS_BYTE);
}

/**
 * ordma_model_wr() - account the fixed cost of one work request
 * @m: the device's model
 * @ns: time from posting to completion, transmission excluded
 */
void ordma_model_wr(struct ordma_model *m, u64 ns)
{
	plan_ewma(m, ORDMA_MODEL_WR, &m->wr_ns, ns, ORDMA_MODEL_MAX_NS);
}

/**
 * ordma_model_dereg() - account one measured deregistration
 * @m: the device's model
 * @ns: how long deregistering and unpinning one segment took
 */
void ordma_model_dereg(struct ordma_model *m, u64 ns)
{
	plan_ewma(m, ORDMA_MODEL_DEREG, &m->dereg_ns, ns, ORDMA_MODEL_MAX_NS);
}

/* The buffer's end, rounded up to a page, wraps; or no such page size. */
static bool plan_wraps(u64 addr, u64 len, unsigned int shift)
{
	u64 page;

	if (shift > ORDMA_PLAN_MAX_SHIFT)
		return true;
	page = 1ULL << shift;
	return len > U64_MAX - page || addr > U64_MAX - page - len;
}

/*
 * The page geometry of a buffer: where a copied prefix may end (cmin, the
 * first page boundary after addr, up to cmax, the last one before the end;
 * cmin > cmax when the buffer crosses none) and the largest segment, capb,
 * a multiple of the page size.
 */
struct plan_geo {
	u64 addr;
	u64 len;
	u64 page;
	u64 capb;
	u64 cmin;
	u64 cmax;
	unsigned int shift;
};

/* False when nothing of the buffer can be registered. */
static bool plan_geo_init(struct plan_geo *g, u64 addr, u64 len, u64 seg_cap,
			  unsigned int page_shift)
{
	u64 mask, last;

	if (!len || plan_wraps(addr, len, page_shift))
		return false;
	g->page = 1ULL << page_shift;
	mask = g->page - 1;
	g->capb = seg_cap & ~mask;
	if (g->capb < g->page)
		return false;
	g->addr = addr;
	g->len = len;
	g->shift = page_shift;
	g->cmin = g->page - (addr & mask);
	last = (addr + len - 1) & ~mask;
	g->cmax = last > addr ? last - addr : 0;
	return true;
}

/* Pages spanned by bytes [off, end) of the buffer at addr. */
static u64 plan_pages(u64 addr, u64 off, u64 end, unsigned int shift)
{
	u64 page = 1ULL << shift;

	return ((addr + end + page - 1) >> shift) - ((addr + off) >> shift);
}

/* The span of segment k before it is cut at the end of the buffer. */
static u64 plan_seg_span(const struct ordma_plan *p, unsigned int k, u64 page)
{
	u64 first = max(p->seg_first & ~(page - 1), page);
	u64 top = max(p->seg_max & ~(page - 1), first);

	if (k >= 64 || first > top >> k)
		return top;
	return min(first << k, top);
}

/**
 * ordma_plan_seg_len() - the length of one registered segment of a plan
 * @p: the plan
 * @addr: user address of the buffer
 * @len: its length
 * @off: where the segment starts: @p->copy_len for the first one, then the
 *       end of the previous one
 * @k: its index, 0 for the first
 * @page_shift: PAGE_SHIFT
 *
 * Segment @k spans min(seg_first << @k, seg_max) bytes of whole pages from
 * the page holding its first byte, and is cut at @len: so it ends on a page
 * boundary unless it is the last, and it never spans more pages than one
 * MR of seg_max bytes maps, however @addr + @off is aligned.
 *
 * Return: its length in bytes, 0 past the end or when @p registers nothing.
 */
u64 ordma_plan_seg_len(const struct ordma_plan *p, u64 addr, u64 len,
		       u64 off, unsigned int k, unsigned int page_shift)
{
	u64 page, span, in_page;

	if (!p->seg_first || off >= len || page_shift > ORDMA_PLAN_MAX_SHIFT)
		return 0;
	page = 1ULL << page_shift;
	span = plan_seg_span(p, k, page);
	in_page = (addr + off) & (page - 1);
	return min(span - in_page, len - off);
}

/* What a walk through a plan found. */
struct plan_walk {
	u64 end_ps;	/* the estimate, ps */
	u64 need_ps;	/* max_k (T_k - w * (s_1 + ... + s_(k-1))), ps */
};

/*
 * plan_walk() for a cpu_wire device: every cost adds up. Once segments reach
 * seg_max, q equal ones at once.
 */
static void plan_walk_serial(const struct ordma_model *m, u64 addr, u64 len,
			     const struct ordma_plan *p, unsigned int shift,
			     struct plan_walk *res)
{
	u64 c = min(p->copy_len, len), t, off, page, top, s, q;
	unsigned int k = 0;

	if (!p->seg_first || plan_wraps(addr, len, shift))
		c = len;
	t = plan_add(plan_mul(c, m->copy_ps_byte),
		     plan_mul(len, m->wire_ps_byte));
	page = 1ULL << min(shift, ORDMA_PLAN_MAX_SHIFT);
	top = plan_seg_span(p, 64, page);
	for (off = c; off < len; k++) {
		if (k && plan_seg_span(p, k, page) == top && len - off > top) {
			q = div64_u64(len - off, top);
			t = plan_add(t, plan_mul(q, plan_seg_ps(m, top >> shift)));
			off += q * top;
			continue;
		}
		s = ordma_plan_seg_len(p, addr, len, off, k, shift);
		t = plan_add(t, plan_seg_ps(m, plan_pages(addr, off, off + s,
							  shift)));
		off += s;
	}
	res->end_ps = plan_add(t, plan_ps(m->wr_ns));
	res->need_ps = 0;
}

/*
 * Follow the model of the header comment segment by segment. Once segments
 * reach seg_max, q equal ones at once: with R and S = s * w for each,
 * starting from W and T,
 *   W_q = max(W + q * S, T + R + q * S, T + q * R + S)
 * (the wire is bound either by its own work or by one of the registrations,
 * and max_j (T + j * R + (q - j + 1) * S) is reached at j = 1 or j = q), and
 * the largest lead of the registrations over the wire is at either end too.
 */
static void plan_walk(const struct ordma_model *m, u64 addr, u64 len,
		      const struct ordma_plan *p, unsigned int shift,
		      struct plan_walk *res)
{
	u64 w = m->wire_ps_byte, wire, reg = 0, sent = 0, need = 0;
	u64 c = min(p->copy_len, len), off, page, top, s, q, r, sw;
	unsigned int k = 0;

	if (m->cpu_wire) {
		plan_walk_serial(m, addr, len, p, shift, res);
		return;
	}
	if (!p->seg_first || plan_wraps(addr, len, shift))
		c = len;
	wire = plan_mul(c, plan_copy_ps(m));
	page = 1ULL << min(shift, ORDMA_PLAN_MAX_SHIFT);
	top = plan_seg_span(p, 64, page);
	for (off = c; off < len; k++) {
		if (k && plan_seg_span(p, k, page) == top && len - off > top) {
			/* addr + off is page aligned after the first segment */
			q = div64_u64(len - off, top);
			r = plan_reg_ps(m, top >> shift);
			sw = plan_mul(top, w);
			need = max3(need, plan_sub(plan_add(reg, r), sent),
				    plan_sub(plan_add(reg, plan_mul(q, r)),
					     plan_add(sent, plan_mul(q - 1, sw))));
			wire = max3(plan_add(wire, plan_mul(q, sw)),
				    plan_add(plan_add(reg, r), plan_mul(q, sw)),
				    plan_add(plan_add(reg, plan_mul(q, r)), sw));
			reg = plan_add(reg, plan_mul(q, r));
			sent = plan_add(sent, plan_mul(q, sw));
			off += q * top;
			continue;
		}
		s = ordma_plan_seg_len(p, addr, len, off, k, shift);
		r = plan_reg_ps(m, plan_pages(addr, off, off + s, shift));
		reg = plan_add(reg, r);
		need = max(need, plan_sub(reg, sent));
		sw = plan_mul(s, w);
		wire = plan_add(max(wire, reg), sw);
		sent = plan_add(sent, sw);
		off += s;
	}
	res->end_ps = plan_add(wire, plan_ps(m->wr_ns));
	res->need_ps = need;
}

/**
 * ordma_plan_estimate() - predicted completion time of a plan
 * @m: the device's model
 * @addr: user address of the buffer
 * @len: its length
 * @p: the plan, from ordma_plan_make() for the same buffer
 * @page_shift: PAGE_SHIFT
 *
 * The model of the header comment: the prefix on the wire at the pace of
 * the slower of copy and wire, each segment after its registration and
 * after the previous segment, plus one work request's fixed cost. A plan
 * that registers nothing is all copy. Saturates at U64_MAX.
 *
 * Return: the predicted time from submission to completion, ns.
 */
u64 ordma_plan_estimate(const struct ordma_model *m, u64 addr, u64 len,
			const struct ordma_plan *p, unsigned int page_shift)
{
	struct plan_walk res;

	plan_walk(m, addr, len, p, page_shift, &res);
	return plan_ps_to_ns(res.end_ps);
}

static void plan_set(struct ordma_plan *p, u64 copy_len, u64 seg_first,
		     u64 seg_max)
{
	p->copy_len = copy_len;
	p->seg_first = seg_first;
	p->seg_max = seg_max;
}

static void plan_zerocopy(const struct plan_geo *g, struct ordma_plan *p)
{
	u64 span = plan_pages(g->addr, 0, g->len, g->shift) << g->shift;

	plan_set(p, 0, min(span, g->capb), g->capb);
}

/* A legal end of the prefix for at least @bytes: a page boundary. */
static u64 plan_prefix(const struct plan_geo *g, u64 bytes)
{
	u64 mask = g->page - 1;

	if (bytes <= g->cmin)
		return g->cmin;
	if (bytes >= g->cmax)
		return g->cmax;
	return ((g->addr + bytes + mask) & ~mask) - g->addr;
}

/* Keep @p, estimated at @t ps, if it is faster, or as fast and copies less. */
static void plan_keep(struct ordma_plan *best, u64 *best_ps,
		      const struct ordma_plan *p, u64 t)
{
	if (t < *best_ps || (t == *best_ps && p->copy_len < best->copy_len)) {
		*best = *p;
		*best_ps = t;
	}
}

/*
 * The prefix for first segment @p->seg_first: the smallest useful one, and
 * the smallest one with which the wire never waits for a registration
 * (monotone in the prefix: a longer prefix leaves fewer and shorter
 * segments, so a binary search over page boundaries finds it).
 */
static void plan_overlap_try(const struct ordma_model *m,
			     const struct plan_geo *g, struct ordma_plan *p,
			     struct ordma_plan *best, u64 *best_ps)
{
	u64 a = plan_copy_ps(m), lo, hi, mid;
	u64 r1 = plan_reg_ps(m, p->seg_first >> g->shift);
	struct plan_walk res;

	p->copy_len = plan_prefix(g, plan_bytes(r1, a));
	plan_walk(m, g->addr, g->len, p, g->shift, &res);
	plan_keep(best, best_ps, p, res.end_ps);
	if (res.need_ps <= plan_mul(p->copy_len, a))
		return;

	/* lo idles the wire; hi does not, or is the longest prefix there is */
	lo = p->copy_len;
	hi = plan_prefix(g, plan_bytes(res.need_ps, a));
	p->copy_len = hi;
	plan_walk(m, g->addr, g->len, p, g->shift, &res);
	if (res.need_ps <= plan_mul(hi, a)) {
		while (hi - lo > g->page) {
			mid = plan_prefix(g, lo + (hi - lo) / 2);
			if (mid >= hi)
				break;
			p->copy_len = mid;
			plan_walk(m, g->addr, g->len, p, g->shift, &res);
			if (res.need_ps <= plan_mul(mid, a))
				hi = mid;
			else
				lo = mid;
		}
		p->copy_len = hi;
		plan_walk(m, g->addr, g->len, p, g->shift, &res);
	}
	plan_keep(best, best_ps, p, res.end_ps);
}

/* The estimate of @p, ps. */
static u64 plan_estimate_ps(const struct ordma_model *m,
			    const struct plan_geo *g, const struct ordma_plan *p)
{
	struct plan_walk res;

	plan_walk(m, g->addr, g->len, p, g->shift, &res);
	return res.end_ps;
}

/* OVERLAP, and its estimate in ps; all copy without a page boundary. */
static u64 plan_overlap(const struct ordma_model *m, const struct plan_geo *g,
			struct ordma_plan *best)
{
	u64 best_ps = U64_MAX, rest, s1;
	struct ordma_plan p;

	plan_set(best, g->len, 0, 0);
	if (g->cmin > g->cmax)
		return plan_estimate_ps(m, g, best);
	/* the most a first segment can span after the shortest prefix */
	rest = plan_pages(g->addr, g->cmin, g->len, g->shift) << g->shift;
	for (s1 = g->page; ; s1 <<= 1) {
		plan_set(&p, 0, s1, g->capb);
		plan_overlap_try(m, g, &p, best, &best_ps);
		if (s1 >= rest || s1 > g->capb >> 1)
			break;
	}
	return best_ps;
}

static void plan_auto(const struct ordma_model *m, const struct plan_geo *g,
		      struct ordma_plan *p)
{
	u64 pages = plan_pages(g->addr, 0, g->len, g->shift);
	u64 copy_ps, zc_ps, ov_ps;
	struct ordma_plan zc, ov;

	plan_set(p, g->len, 0, 0);
	/* registration cannot pay off */
	if (plan_mul(g->len, m->copy_ps_byte) <= plan_seg_ps(m, pages))
		return;
	copy_ps = plan_estimate_ps(m, g, p);
	plan_zerocopy(g, &zc);
	zc_ps = plan_estimate_ps(m, g, &zc);
	if (m->cpu_wire) {
		if (zc_ps < copy_ps)
			*p = zc;
		return;
	}
	ov_ps = plan_overlap(m, g, &ov);
	if (ov_ps <= min(copy_ps, zc_ps))
		*p = ov;
	else if (zc_ps < copy_ps)
		*p = zc;
}

/**
 * ordma_plan_make() - split one transfer between copy and registration
 * @m: the device's model
 * @mode: the policy (an unknown value copies)
 * @addr: user address of the buffer
 * @len: its length; 0 gives an empty plan
 * @seg_cap: the most one MR maps, max_fast_reg_page_list_len pages <<
 *           @page_shift; below one page nothing is registered
 * @page_shift: PAGE_SHIFT
 * @p: the plan
 *
 * Applies the policy of the header comment. The plan obeys the rules of
 * struct ordma_plan: copy_len <= @len, the segments cover the rest, each
 * ends on a page boundary unless it ends the buffer, seg_max <= @seg_cap.
 * A buffer whose end (rounded up to a page) wraps the address space is all
 * copy.
 */
void ordma_plan_make(const struct ordma_model *m, enum ordma_mode mode,
		     u64 addr, u64 len, u64 seg_cap, unsigned int page_shift,
		     struct ordma_plan *p)
{
	struct plan_geo g;

	plan_set(p, len, 0, 0);
	if (!plan_geo_init(&g, addr, len, seg_cap, page_shift))
		return;
	switch (mode) {
	case ORDMA_MODE_AUTO:
		plan_auto(m, &g, p);
		break;
	case ORDMA_MODE_ZEROCOPY:
		plan_zerocopy(&g, p);
		break;
	case ORDMA_MODE_OVERLAP:
		plan_overlap(m, &g, p);
		break;
	default:
		break;
	}
}
