// SPDX-License-Identifier: GPL-2.0
/*
 * Output: the perftest-style tables on stdout (or a short table of verdicts
 * there and the tables in a file), JSON, CSV, and an SVG drawn by gnuplot
 * (per operation, latency against size, log-log: ordma, prereg and the best
 * simple way with their confidence intervals, the others faint; below, the
 * tax against prereg).
 *
 * The table shows one column per strategy: uoverlap is the best of its
 * head fractions at each size (the fraction follows the number), ordma is
 * the module's own choice ("auto" when the mode knob exists; the forced
 * modes get columns of their own). The wrong-bytes table (churn workloads,
 * or whenever a byte was wrong) has a row per strategy, every uoverlap
 * fraction its own.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

struct col {
	const char *name;
	int run;		/* index in b->runs, -1: best uoverlap */
};

#define MAX_COLS	12

static int churned(const struct bench *b)
{
	return b->workload == W_CHURN || b->workload == W_CHURN_MMAP;
}

static int cols_of(const struct bench *b, struct col *c)
{
	int n = 0, uo = 0;

	for (int r = 0; r < b->nruns; r++) {
		if (b->runs[r].kind == K_UOVERLAP) {
			if (!uo++)
				c[n++] = (struct col){ "uoverlap", -1 };
			continue;
		}
		c[n++] = (struct col){ b->runs[r].name, r };
	}
	return n;
}

/* The summary behind a column; for uoverlap, the best fraction's run. */
static const struct bench_summary *col_s(const struct bench *b,
					 const struct col *c, int s, int op,
					 int *run)
{
	int best = -1;

	if (c->run >= 0) {
		if (run)
			*run = c->run;
		return &b->runs[c->run].cell[s][op].s;
	}
	for (int r = 0; r < b->nruns; r++) {
		if (b->runs[r].kind != K_UOVERLAP)
			continue;
		if (best < 0 || b->runs[r].cell[s][op].s.median <
				b->runs[best].cell[s][op].s.median)
			best = r;
	}
	if (run)
		*run = best;
	return &b->runs[best].cell[s][op].s;
}

static int ordma_run(const struct bench *b)
{
	for (int r = 0; r < b->nruns; r++)
		if (b->runs[r].kind == K_ORDMA)
			return r;
	return -1;
}

/*
 * (best static baseline - ordma) / (best static baseline - prereg); -1 when
 * the baseline is not slower than prereg at all, 1 (and *h set) when it is
 * but within noise.
 */
static int hidden_of(const struct bench *b, int s, int op, double *h)
{
	const struct bench_summary *pre = &b->runs[0].cell[s][op].s;
	const struct bench_summary *reg = &b->runs[1].cell[s][op].s;
	const struct bench_summary *bnc = &b->runs[2].cell[s][op].s;
	const struct bench_summary *st = reg->median < bnc->median ? reg : bnc;
	const struct bench_summary *o = &b->runs[ordma_run(b)].cell[s][op].s;

	if (!pre->n || !st->n || !o->n || st->median <= pre->median)
		return -1;
	*h = (st->median - o->median) / (st->median - pre->median);
	return bench_tied(st, pre);
}

/* Room for a column: its name, or a median with its mark (and /F). */
static int colw(const struct col *c)
{
	int w = strlen(c->name) + 1;
	int min = c->run < 0 ? 13 : 11;

	return w > min ? w : min;
}

static const char *op_title(int op)
{
	static const char *const title[BENCH_NOPS] = {
		[BENCH_WRITE] = "RDMA WRITE",
		[BENCH_PUT] = "RDMA WRITE into a standing target",
		[BENCH_SEND] = "send/recv",
	};

	return title[op];
}

static void print_size(char *buf, size_t len, size_t v)
{
	if (v == (size_t)-1)
		snprintf(buf, len, "none (always bounce)");
	else
		snprintf(buf, len, "%zu bytes", v);
}

static void print_ctrs(FILE *f, struct bench *b, int op)
{
	static const char *const want[] = {
		"bytes_copied", "bytes_zerocopy", "reg_ns", "hidden_ns",
	};
	int idx[4], n = 0;

	for (int w = 0; w < 4; w++)
		for (int i = 0; i < b->nctr; i++)
			if (!strcmp(b->ctr_name[i], want[w]))
				idx[n++] = i;
	if (!n)
		return;
	fprintf(f, "# %s: ordma breakdown per transfer (sysfs counters)\n", op_title(op));
	fprintf(f, "%-14s %9s", "strategy", "#bytes");
	for (int i = 0; i < n; i++)
		fprintf(f, " %15s", b->ctr_name[idx[i]]);
	fprintf(f, "\n");
	for (int r = 0; r < b->nruns; r++) {
		if (b->runs[r].kind != K_ORDMA)
			continue;
		for (int s = 0; s < b->nsizes; s++) {
			const struct bench_cell *c = &b->runs[r].cell[s][op];

			fprintf(f, "%-14s %9zu", b->runs[r].name, b->sizes[s]);
			for (int i = 0; i < n; i++)
				fprintf(f, " %15.0f", c->n ? (double)c->ctr[idx[i]] / c->n : 0.0);
			fprintf(f, "\n");
		}
	}
	fprintf(f, "\n");
}

/*
 * Mismatches, one line per strategy, operation and size; rcache's in a churn
 * workload are what it is there to show, and are summed up on a line of
 * their own instead.
 */
static void print_verified(FILE *f, const struct bench *b)
{
	unsigned long long ok = 0, n = 0, stale = 0, stale_x = 0, stale_n = 0;
	int bad = 0;

	for (int r = 0; r < b->nruns; r++) {
		int expected = bench_stale_expected(b, &b->runs[r]);

		for (int s = 0; s < b->nsizes; s++) {
			for (int op = 0; op < BENCH_NOPS; op++) {
				const struct bench_cell *c = &b->runs[r].cell[s][op];

				if (expected) {
					stale += c->bytes_wrong;
					stale_x += c->xfers_wrong;
					stale_n += c->n;
					continue;
				}
				ok += c->bytes_ok;
				n += c->n;
				if (!c->bytes_bad)
					continue;
				fprintf(f, "# DATA MISMATCH: %s %s %zu bytes: %llu bytes in bad transfers, %llu of them wrong\n",
				       b->runs[r].name, bench_op_names[op],
				       b->sizes[s], c->bytes_bad, c->bytes_wrong);
				bad = 1;
			}
		}
	}
	if (!bad)
		fprintf(f, "# verified: all %llu transfers%s, %llu bytes, every byte as sent\n",
		       n, stale_n ? " but rcache's" : "", ok);
	if (stale_n)
		fprintf(f, "# rcache (no memory hooks) after the churn: %llu bytes wrong in %llu of %llu transfers\n",
		       stale, stale_x, stale_n);
	if (b->quiesce_late)
		fprintf(f, "# ordma still held chunks, pinned pages or MRs 100 ms after %ld transfers\n",
		       b->quiesce_late);
}

/* What the latency transfers moved, from where to where. */
static void print_workload(FILE *f, const struct bench *b)
{
	static const char *const what[W_NWORKLOADS] = {
		[W_FRESH] = "# fresh buffers each transfer (mmap'd and touched, never registered), every byte verified\n",
		[W_REUSE] = "# reuse: one source and one destination for every transfer (mmap'd once, never\n"
			    "# registered), new contents before each, every byte verified\n",
		[W_CHURN] = "# churn: before each transfer each side's buffer freed and allocated again\n"
			    "# (free() and malloc() of the transfer's size), new contents, every byte verified\n",
		[W_CHURN_MMAP] = "# churn-mmap: before each transfer each side's buffer unmapped and mapped again\n"
				 "# at the same address (munmap(), mmap() MAP_FIXED_NOREPLACE), new contents,\n"
				 "# every byte verified\n",
	};
	const struct bench_rcache *rc = b->rcache;

	fprintf(f, "%s", what[b->workload]);
	if (churned(b)) {
		fprintf(f, "# churn: the sender's buffer came back at its old address %lu of %lu times, the receiver's %lu of %lu\n",
		       b->app[0].same, b->app[0].reallocs, b->app[1].same,
		       b->app[1].reallocs);
		fprintf(f, "# prereg is not churned: its buffers stay registered, the floor of the tax\n");
	}
	if (b->workload != W_FRESH)
		fprintf(f, "# rcache (%d entries a side, LRU): sender %llu hits, %llu misses, %llu evictions; receiver %llu, %llu, %llu\n",
		       BENCH_RCACHE, rc[0].hits, rc[0].misses, rc[0].evictions,
		       rc[1].hits, rc[1].misses, rc[1].evictions);
}

/*
 * Bytes received wrong per strategy and size, with how many transfers had
 * any: every run its own row (each uoverlap fraction too).
 */
static void print_wrong(FILE *f, const struct bench *b, int op)
{
	char cell[48];

	fprintf(f, "# %s: wrong bytes received (transfers with any / transfers)\n",
	       op_title(op));
	fprintf(f, "%-14s", "#strategy");
	for (int s = 0; s < b->nsizes; s++)
		fprintf(f, " %22zu", b->sizes[s]);
	fprintf(f, "\n");
	for (int r = 0; r < b->nruns; r++) {
		fprintf(f, "%-14s", b->runs[r].name);
		for (int s = 0; s < b->nsizes; s++) {
			const struct bench_cell *c = &b->runs[r].cell[s][op];

			snprintf(cell, sizeof(cell), "%llu (%d/%d)",
				 c->bytes_wrong, c->xfers_wrong, c->n);
			fprintf(f, " %22s", cell);
		}
		fprintf(f, "\n");
	}
	fprintf(f, "\n");
}

static int any_wrong(const struct bench *b, int op)
{
	for (int r = 0; r < b->nruns; r++)
		for (int s = 0; s < b->nsizes; s++)
			if (b->runs[r].cell[s][op].xfers_wrong)
				return 1;
	return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Two hosts: the median round trip of the clock syncs, us. */
static double rtt_median(const struct bench *b)
{
	double *v, m;

	if (!b->nrtt)
		return 0;
	v = malloc(b->nrtt * sizeof(*v));
	if (!v)
		return 0;
	memcpy(v, b->rtts, b->nrtt * sizeof(*v));
	qsort(v, b->nrtt, sizeof(*v), cmp_dbl);
	m = v[b->nrtt / 2];
	free(v);
	return m;
}

/* Two hosts: where each end ran, and how the clocks were joined. */
static void print_hosts(FILE *f, const struct bench *b)
{
	if (b->role != ROLE_PEER)
		return;
	fprintf(f, "# two hosts: the sending ends here on %s, the receiving ends on %s's %s\n"
	       "# (ordma-bench --serve); the breakdown adds both hosts' counters\n",
	       b->ibdev, b->addr, b->srv_ibdev);
	fprintf(f, "# clocks compared over TCP before each transfer: median round trip %.0f us;\n"
	       "# the start reached the server late %ld times of %ld, by at most %.0f us\n",
	       rtt_median(b), b->late_starts, b->nrtt, b->late_max);
}

void bench_print(FILE *f, struct bench *b)
{
	struct col c[MAX_COLS];
	int nc = cols_of(b, c), o = ordma_run(b);
	char t1[32], t2[32], t3[32], t4[32];

	fprintf(f, "# ordma-bench on %s: %d iterations per size (%d below %lu KiB), strategies interleaved;\n",
	       b->ibdev, b->iters, b->iters_small, BENCH_SMALL >> 10);
	print_hosts(f, b);
	print_workload(f, b);
	if (b->have_mode)
		fprintf(f, "# ordma: mode knob found: auto plus every forced mode\n");
	else
		fprintf(f, "# ordma: no /sys/class/ordma/%s/mode: one column, the module's own path\n",
		       b->ibdev);
	fprintf(f, "# thresh: reg_fixed %.1f us, reg_per_byte %.3f ns, copy %.0f MB/s, wire %.0f MB/s\n",
	       b->reg_fixed_us, b->reg_per_byte_us * 1e3, b->copy_bw, b->wire_bw);
	print_size(t1, sizeof(t1), b->thresh);
	print_size(t2, sizeof(t2), b->thresh_best[BENCH_WRITE]);
	print_size(t3, sizeof(t3), b->thresh_best[BENCH_PUT]);
	print_size(t4, sizeof(t4), b->thresh_best[BENCH_SEND]);
	fprintf(f, "#   UCX's rule reg_fixed / (1/copy_bw - 1/wire_bw - reg_per_byte): %s (thresh uses it)\n"
	       "#   best threshold swept over these sizes: write %s, put %s, send %s\n",
	       t1, t2, t3, t4);
	print_verified(f, b);
	fprintf(f, "# '*' best, '=' tied with the best (95%% bootstrap CIs of the medians overlap)\n");
	fprintf(f, "# hidden = (best of regper, bounce - ordma) / (that - prereg); '~': that baseline\n"
	       "# is within noise of prereg, '-': not slower than prereg (nothing to hide)\n\n");

	for (int op = 0; op < BENCH_NOPS; op++) {
		fprintf(f, "# %s: median latency, us\n", op_title(op));
		fprintf(f, "%9s", "#bytes");
		for (int k = 0; k < nc; k++)
			fprintf(f, " %*s", colw(&c[k]), c[k].name);
		fprintf(f, "  %7s\n", "hidden");
		for (int s = 0; s < b->nsizes; s++) {
			const struct bench_summary *best = NULL;
			double h;
			int ret;

			for (int k = 0; k < nc; k++) {
				const struct bench_summary *x = col_s(b, &c[k], s, op, NULL);

				if (!best || x->median < best->median)
					best = x;
			}
			fprintf(f, "%9zu", b->sizes[s]);
			for (int k = 0; k < nc; k++) {
				int run;
				const struct bench_summary *x = col_s(b, &c[k], s, op, &run);
				char mark = x == best ? '*' : bench_tied(x, best) ? '=' : ' ';

				if (c[k].run < 0)
					fprintf(f, " %*.1f%c/%-2d", colw(&c[k]) - 4, x->median,
					       mark, b->runs[run].arg);
				else
					fprintf(f, " %*.1f%c", colw(&c[k]) - 1, x->median, mark);
			}
			ret = hidden_of(b, s, op, &h);
			if (ret < 0) {
				fprintf(f, "  %7s\n", "-");
				continue;
			}
			/* a tiny denominator makes huge fractions: say "beyond" */
			if (fabs(h) > 9.99)
				fprintf(f, "  %s999%%", h > 0 ? " >" : "<-");
			else
				fprintf(f, "  %6.0f%%", h * 100);
			fprintf(f, "%s\n", ret ? "~" : "");
		}
		fprintf(f, "\n# %s: p99 latency, us\n%9s", op_title(op), "#bytes");
		for (int k = 0; k < nc; k++)
			fprintf(f, " %*s", colw(&c[k]), c[k].name);
		fprintf(f, "\n");
		for (int s = 0; s < b->nsizes; s++) {
			fprintf(f, "%9zu", b->sizes[s]);
			for (int k = 0; k < nc; k++)
				fprintf(f, " %*.1f", colw(&c[k]),
				       col_s(b, &c[k], s, op, NULL)->p99);
			fprintf(f, "\n");
		}
		fprintf(f, "\n# %s: min latency, us\n%9s", op_title(op), "#bytes");
		for (int k = 0; k < nc; k++)
			fprintf(f, " %*s", colw(&c[k]), c[k].name);
		fprintf(f, "\n");
		for (int s = 0; s < b->nsizes; s++) {
			fprintf(f, "%9zu", b->sizes[s]);
			for (int k = 0; k < nc; k++)
				fprintf(f, " %*.1f", colw(&c[k]),
				       col_s(b, &c[k], s, op, NULL)->min);
			fprintf(f, "\n");
		}
		fprintf(f, "\n# %s: %stax = median / prereg median ('~' within noise of prereg)\n%9s",
		       op_title(op), b->workload == W_FRESH ? "" : b->workload == W_REUSE ?
		       "reuse " : "churn ", "#bytes");
		for (int k = 1; k < nc; k++)
			fprintf(f, " %*s", colw(&c[k]), c[k].name);
		fprintf(f, " %11s %11s\n", "prereg MB/s", "ordma MB/s");
		for (int s = 0; s < b->nsizes; s++) {
			const struct bench_summary *pre = col_s(b, &c[0], s, op, NULL);

			fprintf(f, "%9zu", b->sizes[s]);
			for (int k = 1; k < nc; k++) {
				const struct bench_summary *x = col_s(b, &c[k], s, op, NULL);

				fprintf(f, " %*s%5.2f", colw(&c[k]) - 5,
				       bench_tied(x, pre) ? "~" : "", x->median / pre->median);
			}
			fprintf(f, " %11.1f %11.1f\n", b->sizes[s] / pre->median,
			       b->sizes[s] / b->runs[o].cell[s][op].s.median);
		}
		fprintf(f, "\n");
		if (churned(b) || any_wrong(b, op))
			print_wrong(f, b, op);
		print_ctrs(f, b, op);
	}
	if (b->ntput) {
		fprintf(f, "# throughput: %d channels x %d outstanding sends of %zu bytes from never\n"
		       "# registered buffers (prereg: registered once), every byte checked at the end;\n"
		       "# median of %d repetitions, the strategies in another order each time\n",
		       b->tput_chans, b->tput_depth, b->tput_len, b->tput[0].nrep);
		fprintf(f, "%-10s %10s %8s %8s %8s %14s %10s\n", "#strategy", "MB/s",
		       "min", "max", "x prereg", "bytes_verified", "bytes_bad");
		for (int i = 0; i < b->ntput; i++) {
			const struct bench_tput *t = &b->tput[i];
			double lo = t->rep_mbps[0], hi = t->rep_mbps[0];

			for (int k = 1; k < t->nrep; k++) {
				lo = t->rep_mbps[k] < lo ? t->rep_mbps[k] : lo;
				hi = t->rep_mbps[k] > hi ? t->rep_mbps[k] : hi;
			}
			fprintf(f, "%-10s %10.1f %8.1f %8.1f %8.2f %14llu %10llu\n", t->name,
			       t->mbps, lo, hi, t->mbps / b->tput[0].mbps,
			       t->bytes_ok, t->bytes_bad);
		}
		fprintf(f, "\n");
	}
	if (b->nfair) {
		fprintf(f, "# fairness, ordma: one-way latency of a 4 KiB ping-pong, us\n");
		fprintf(f, "%-26s %10s %10s %10s %12s\n", "# light flow", "median", "p99",
		       "min", "heavy MB/s");
		for (int i = 0; i < b->nfair; i++)
			fprintf(f, "%-26s %10.1f %10.1f %10.1f %12.1f\n", b->fair[i].name,
			       b->fair[i].s.median, b->fair[i].s.p99, b->fair[i].s.min,
			       b->fair[i].heavy_mbps);
		fprintf(f, "\n");
	}
}

/* "4 KiB", "1 MiB": a size as a person reads it. */
static void brief_size(char *buf, size_t len, size_t v)
{
	if (v >= (1UL << 20) && !(v & ((1UL << 20) - 1)))
		snprintf(buf, len, "%zu MiB", v >> 20);
	else if (v >= 1024 && !(v & 1023))
		snprintf(buf, len, "%zu KiB", v >> 10);
	else
		snprintf(buf, len, "%zu B", v);
}

/* ordma against @x: "1.4x faster", "2.1x slower" or "as fast" (tied). */
static void brief_cmp(char *buf, size_t len, const struct bench_summary *o,
		      const struct bench_summary *x)
{
	if (bench_tied(o, x))
		snprintf(buf, len, "as fast");
	else if (o->median < x->median)
		snprintf(buf, len, "%.1fx faster", x->median / o->median);
	else
		snprintf(buf, len, "%.1fx slower", o->median / x->median);
}

/**
 * bench_print_brief() - the run in one short table: per operation and size,
 * ordma's median against registered memory (prereg) and against the
 * better of the two simple ways (regper, bounce), with the verdict
 * @f: where to print it
 * @b: the run
 */
void bench_print_brief(FILE *f, const struct bench *b)
{
	int o = ordma_run(b);
	char sz[32], v1[32], v2[32];

	if (o < 0)
		return;
	fprintf(f, "# ordma (%s) on %s, median latency in us; 'as fast': the 95%% confidence\n"
		"# intervals overlap. prereg: memory registered once (the floor); simple: the\n"
		"# better of registering each time (regper) and copying through a\n"
		"# registered buffer (bounce)\n",
		b->runs[o].name, b->ibdev);
	fprintf(f, "%-34s %8s %10s %10s %16s %-14s %s\n", "#operation", "size",
		"prereg", "ordma", "simple", "vs prereg", "vs simple");
	for (int op = 0; op < BENCH_NOPS; op++) {
		for (int s = 0; s < b->nsizes; s++) {
			const struct bench_summary *pre = &b->runs[0].cell[s][op].s;
			const struct bench_summary *reg = &b->runs[1].cell[s][op].s;
			const struct bench_summary *bnc = &b->runs[2].cell[s][op].s;
			const struct bench_summary *x = &b->runs[o].cell[s][op].s;
			int st = reg->median < bnc->median ? 1 : 2;
			const struct bench_summary *sim = &b->runs[st].cell[s][op].s;

			if (!pre->n || !x->n || !sim->n)
				continue;
			brief_size(sz, sizeof(sz), b->sizes[s]);
			brief_cmp(v1, sizeof(v1), x, pre);
			brief_cmp(v2, sizeof(v2), x, sim);
			fprintf(f, "%-34s %8s %10.1f %10.1f %6s %9.1f %-14s %s\n",
				op_title(op), sz, pre->median, x->median,
				b->runs[st].name, sim->median, v1, v2);
		}
	}
	if (b->quiesce_late)
		fprintf(f, "# %ld transfers left ordma holding chunks, pinned pages or MRs 100 ms after\n"
			"# they completed: ordma gives them back off the caller's path, and the benchmark\n"
			"# waits up to 100 ms before the next transfer so that work is not charged to it.\n"
			"# Under load that can take longer; it is not a leak (the test suites check that\n"
			"# everything comes back), but the next transfer paid for some of it.\n",
			b->quiesce_late);
}

/* ---- JSON and CSV ---------------------------------------------------------- */

static void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.3f", v);
	else
		fprintf(f, "null");
}

static void json_size(FILE *f, size_t v)
{
	if (v == (size_t)-1)
		fprintf(f, "null");
	else
		fprintf(f, "%zu", v);
}

static void json_summary(FILE *f, const struct bench_summary *s)
{
	fprintf(f, "\"n\": %d, \"median_us\": ", s->n);
	json_num(f, s->median);
	fprintf(f, ", \"p99_us\": ");
	json_num(f, s->p99);
	fprintf(f, ", \"min_us\": ");
	json_num(f, s->min);
	fprintf(f, ", \"ci95_us\": [");
	json_num(f, s->lo);
	fprintf(f, ", ");
	json_num(f, s->hi);
	fprintf(f, "]");
}

int bench_write_json(struct bench *b, const char *path)
{
	FILE *f = fopen(path, "w");
	struct col c[MAX_COLS];
	int first = 1;

	cols_of(b, c);

	if (!f)
		return -1;
	fprintf(f, "{\n  \"tool\": \"ordma-bench\",\n  \"device\": \"%s\",\n", b->ibdev);
	fprintf(f, "  \"iters\": %d,\n  \"iters_small\": %d,\n  \"quick\": %s,\n  \"mode_knob\": %s,\n",
		b->iters, b->iters_small, b->quick ? "true" : "false", b->have_mode ? "true" : "false");
	fprintf(f, "  \"workload\": \"%s\",\n", bench_workload_names[b->workload]);
	if (b->role == ROLE_PEER)
		fprintf(f, "  \"two_hosts\": { \"server\": \"%s\", \"server_device\": \"%s\", \"clock_rtt_median_us\": %.1f, \"late_starts\": %ld, \"late_max_us\": %.1f, \"transfers\": %ld },\n",
			b->addr, b->srv_ibdev, rtt_median(b), b->late_starts,
			b->late_max, b->nrtt);
	if (churned(b))
		fprintf(f, "  \"churn\": { \"sender_reallocs\": %lu, \"sender_same_address\": %lu, \"receiver_reallocs\": %lu, \"receiver_same_address\": %lu },\n",
			b->app[0].reallocs, b->app[0].same, b->app[1].reallocs,
			b->app[1].same);
	if (b->workload != W_FRESH)
		fprintf(f, "  \"rcache\": { \"entries\": %d, \"sender\": { \"hits\": %llu, \"misses\": %llu, \"evictions\": %llu }, \"receiver\": { \"hits\": %llu, \"misses\": %llu, \"evictions\": %llu } },\n",
			BENCH_RCACHE, b->rcache[0].hits, b->rcache[0].misses,
			b->rcache[0].evictions, b->rcache[1].hits,
			b->rcache[1].misses, b->rcache[1].evictions);
	fprintf(f, "  \"sizes\": [");
	for (int s = 0; s < b->nsizes; s++)
		fprintf(f, "%s%zu", s ? ", " : "", b->sizes[s]);
	fprintf(f, "],\n  \"strategies\": [");
	for (int r = 0; r < b->nruns; r++)
		fprintf(f, "%s\"%s\"", r ? ", " : "", b->runs[r].name);
	fprintf(f, "],\n  \"thresh\": { \"reg_fixed_us\": ");
	json_num(f, b->reg_fixed_us);
	fprintf(f, ", \"reg_per_byte_us\": %.9f, \"copy_MBps\": ", b->reg_per_byte_us);
	json_num(f, b->copy_bw);
	fprintf(f, ", \"wire_MBps\": ");
	json_num(f, b->wire_bw);
	fprintf(f, ", \"formula_bytes\": ");
	json_size(f, b->thresh);
	fprintf(f, ", \"best_write_bytes\": ");
	json_size(f, b->thresh_best[BENCH_WRITE]);
	fprintf(f, ", \"best_put_bytes\": ");
	json_size(f, b->thresh_best[BENCH_PUT]);
	fprintf(f, ", \"best_send_bytes\": ");
	json_size(f, b->thresh_best[BENCH_SEND]);
	fprintf(f, " },\n  \"latency\": [");
	for (int r = 0; r < b->nruns; r++) {
		for (int s = 0; s < b->nsizes; s++) {
			for (int op = 0; op < BENCH_NOPS; op++) {
				const struct bench_cell *x = &b->runs[r].cell[s][op];
				const struct bench_summary *pre = &b->runs[0].cell[s][op].s;

				fprintf(f, "%s\n    { \"strategy\": \"%s\", \"op\": \"%s\", \"bytes\": %zu, ",
					first ? "" : ",", b->runs[r].name,
					bench_op_names[op], b->sizes[s]);
				first = 0;
				json_summary(f, &x->s);
				fprintf(f, ", \"MBps\": ");
				json_num(f, b->sizes[s] / x->s.median);
				fprintf(f, ", \"tax\": ");
				json_num(f, x->s.median / pre->median);
				fprintf(f, ", \"bytes_verified\": %llu, \"bytes_bad\": %llu, \"bytes_wrong\": %llu, \"transfers_wrong\": %d, \"stale_expected\": %s, \"samples_us\": [",
					x->bytes_ok, x->bytes_bad, x->bytes_wrong,
					x->xfers_wrong,
					bench_stale_expected(b, &b->runs[r]) ? "true" : "false");
				for (int i = 0; i < x->n; i++)
					fprintf(f, "%s%.1f", i ? ", " : "", x->t[i]);
				fprintf(f, "]");
				if (b->runs[r].kind == K_ORDMA && b->nctr) {
					fprintf(f, ", \"counters_per_transfer\": {");
					for (int i = 0; i < b->nctr; i++) {
						fprintf(f, "%s\"%s\": ", i ? ", " : " ",
							b->ctr_name[i]);
						json_num(f, x->n ? (double)x->ctr[i] / x->n : 0);
					}
					fprintf(f, " }");
				}
				fprintf(f, " }");
			}
		}
	}
	fprintf(f, "\n  ],\n  \"summary\": [");
	first = 1;
	for (int s = 0; s < b->nsizes; s++) {
		for (int op = 0; op < BENCH_NOPS; op++) {
			int run, ret;
			double h;

			col_s(b, &c[5], s, op, &run);
			fprintf(f, "%s\n    { \"op\": \"%s\", \"bytes\": %zu, \"uoverlap_best\": \"%s\", \"hidden\": ",
				first ? "" : ",", bench_op_names[op], b->sizes[s],
				b->runs[run].name);
			first = 0;
			ret = hidden_of(b, s, op, &h);
			if (ret < 0)
				fprintf(f, "null");
			else
				json_num(f, h);
			fprintf(f, ", \"hidden_within_noise\": %s }",
				ret > 0 ? "true" : "false");
		}
	}
	fprintf(f, "\n  ],\n  \"throughput\": [");
	for (int i = 0; i < b->ntput; i++) {
		fprintf(f, "%s\n    { \"strategy\": \"%s\", \"channels\": %d, \"outstanding\": %d, \"bytes\": %zu, \"MBps\": %.3f, \"MBps_reps\": [",
			i ? "," : "", b->tput[i].name, b->tput_chans, b->tput_depth,
			b->tput_len, b->tput[i].mbps);
		for (int k = 0; k < b->tput[i].nrep; k++)
			fprintf(f, "%s%.3f", k ? ", " : "", b->tput[i].rep_mbps[k]);
		fprintf(f, "], \"bytes_verified\": %llu, \"bytes_bad\": %llu }",
			b->tput[i].bytes_ok, b->tput[i].bytes_bad);
	}
	fprintf(f, "\n  ],\n  \"fairness\": [");
	for (int i = 0; i < b->nfair; i++) {
		fprintf(f, "%s\n    { \"phase\": \"%s\", ", i ? "," : "", b->fair[i].name);
		json_summary(f, &b->fair[i].s);
		fprintf(f, ", \"heavy_MBps\": %.3f }", b->fair[i].heavy_mbps);
	}
	fprintf(f, "\n  ]\n}\n");
	return fclose(f) ? -1 : 0;
}

int bench_write_csv(struct bench *b, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "strategy,op,bytes,n,median_us,p99_us,min_us,ci_lo_us,ci_hi_us,MBps,tax,bytes_verified,bytes_bad,workload,bytes_wrong,transfers_wrong\n");
	for (int r = 0; r < b->nruns; r++) {
		for (int s = 0; s < b->nsizes; s++) {
			for (int op = 0; op < BENCH_NOPS; op++) {
				const struct bench_cell *x = &b->runs[r].cell[s][op];
				const struct bench_summary *pre = &b->runs[0].cell[s][op].s;

				fprintf(f, "%s,%s,%zu,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.4f,%llu,%llu,%s,%llu,%d\n",
					b->runs[r].name, bench_op_names[op],
					b->sizes[s], x->s.n, x->s.median, x->s.p99,
					x->s.min, x->s.lo, x->s.hi,
					b->sizes[s] / x->s.median,
					x->s.median / pre->median, x->bytes_ok,
					x->bytes_bad,
					bench_workload_names[b->workload],
					x->bytes_wrong, x->xfers_wrong);
			}
		}
	}
	return fclose(f) ? -1 : 0;
}

/* ---- the plot --------------------------------------------------------------- */

/* Median and 95% CI of @x, and the same divided by @pre's median. */
static void plot_point(FILE *g, const struct bench_summary *x,
		       const struct bench_summary *pre)
{
	fprintf(g, " %.3f %.3f %.3f %.4f %.4f %.4f", x->median, x->lo, x->hi,
		x->median / pre->median, x->lo / pre->median,
		x->hi / pre->median);
}

/*
 * One panel per operation, latency above and tax below: ordma (its own
 * choice), prereg and the best simple way at each size (the faster of
 * regper and bounce) with their 95% confidence intervals as bars; every
 * other strategy a faint line; the legend under the panels.
 */
int bench_write_plot(struct bench *b, const char *path)
{
	struct col c[MAX_COLS];
	int nc = cols_of(b, c), o = ordma_run(b);
	size_t len = strlen(path);
	FILE *g;

	if (o < 0)
		return -1;
	g = popen("gnuplot", "w");
	if (!g)
		return -1;
	/*
	 * Columns: bytes, then six per series (median, lo, hi, and the
	 * three over prereg's median): ordma, prereg, best simple, then
	 * every table column but prereg and ordma's.
	 */
	for (int op = 0; op < BENCH_NOPS; op++) {
		fprintf(g, "$d%d << EOD\n", op);
		for (int s = 0; s < b->nsizes; s++) {
			const struct bench_summary *pre = &b->runs[0].cell[s][op].s;
			const struct bench_summary *reg = &b->runs[1].cell[s][op].s;
			const struct bench_summary *bnc = &b->runs[2].cell[s][op].s;

			fprintf(g, "%zu", b->sizes[s]);
			plot_point(g, &b->runs[o].cell[s][op].s, pre);
			plot_point(g, pre, pre);
			plot_point(g, reg->median < bnc->median ? reg : bnc, pre);
			for (int k = 1; k < nc; k++)
				if (c[k].run != o)
					plot_point(g, col_s(b, &c[k], s, op, NULL),
						   pre);
			fprintf(g, "\n");
		}
		fprintf(g, "EOD\n");
	}
	if (len > 4 && !strcmp(path + len - 4, ".png"))
		fprintf(g, "set terminal pngcairo size 1500,900 font 'sans,9'\n");
	else
		fprintf(g, "set terminal svg size 1500,900 dynamic font 'sans,11'\n");
	fprintf(g, "set output '%s'\n", path);
	fprintf(g, "set multiplot layout 2,%d title 'ordma-bench on %s%s%s: medians and 95%% confidence intervals of %d iterations (%d below %lu KiB)'\n",
		BENCH_NOPS, b->ibdev, b->workload == W_FRESH ? "" : ", workload ",
		b->workload == W_FRESH ? "" : bench_workload_names[b->workload],
		b->iters, b->iters_small, BENCH_SMALL >> 10);
	/* room at both ends, so the first and last bars are not cut */
	fprintf(g, "set logscale x 2\nset grid lc rgb 'gray85'\n"
		"set offsets graph 0.04, graph 0.04, 0, 0\n"
		"set key outside below horizontal font ',9'\nset xtics (");
	for (int s = 0; s < b->nsizes; s++) {
		size_t v = b->sizes[s];

		fprintf(g, "%s\"%zu%s\" %zu", s ? ", " : "",
			v >= 1 << 20 ? v >> 20 : v >= 1 << 10 ? v >> 10 : v,
			v >= 1 << 20 ? "M" : v >= 1 << 10 ? "K" : "", v);
	}
	fprintf(g, ")\nset logscale y\n");
	for (int tax = 0; tax < 2; tax++) {
		for (int op = 0; op < BENCH_NOPS; op++) {
			/* median, lo and hi of series i, in us or x prereg */
			int base = tax ? 5 : 2, n = 3;

			fprintf(g, "unset arrow\n");
			fprintf(g, "set ylabel '%s'\n", tax ? "tax (x prereg)" : "latency (us)");
			if (tax)
				fprintf(g, "set arrow from graph 0, first 1 to graph 1, first 1 nohead lc rgb 'gray60'\n");
			fprintf(g, "set xlabel 'bytes'\nset title '%s%s'\nplot ",
				op_title(op), tax ? ": median / prereg median" : ": latency");
			/* the others first, faint, so the three stay on top */
			for (int k = 1; k < nc; k++) {
				if (c[k].run == o)
					continue;
				fprintf(g, "$d%d using 1:%d with lines lw 1 lc rgb 'gray75' %s, ",
					op, base + 6 * n,
					n == 3 ? "title 'other strategies'" : "notitle");
				n++;
			}
			if (!tax)
				fprintf(g, "$d%d using 1:%d:%d:%d with yerrorlines lw 2 lc rgb 'black' pt 7 ps 0.6 title 'prereg (registered once)', ",
					op, base + 6, base + 7, base + 8);
			fprintf(g, "$d%d using 1:%d:%d:%d with yerrorlines lw 2 lc rgb '#2060c0' pt 5 ps 0.6 title 'best simple (regper or bounce)', ",
				op, base + 12, base + 13, base + 14);
			fprintf(g, "$d%d using 1:%d:%d:%d with yerrorlines lw 3 lc rgb '#d03020' pt 9 ps 0.8 title '%s'\n",
				op, base, base + 1, base + 2, c[0].run == o ? c[0].name :
				b->runs[o].name);
		}
	}
	fprintf(g, "unset multiplot\n");
	return pclose(g) ? -1 : 0;
}
