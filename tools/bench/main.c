// SPDX-License-Identifier: GPL-2.0
/*
 * ordma-bench - ordma against the usual ways of moving memory nobody
 * registered over RDMA, on one device, in one run. See ordma-bench(1).
 *
 * Latency: for every size, every iteration runs every strategy once, in a
 * new random order each round (C A B ... then B C A ...), for RDMA WRITE and for
 * messages, each from a fresh source buffer (mmap'd and filled) into a fresh
 * destination buffer (mmap'd and zeroed), neither registered, and for RDMA
 * WRITE from a fresh source into a standing target (zeroed before each
 * transfer); the receiver counts the bytes that differ after the timed
 * region. --workload reuse keeps one source and one destination for the
 * whole run, --workload churn and churn-mmap free and allocate them again
 * before every transfer (enum bench_workload). Then throughput and fairness
 * over ordma, then the tables.
 *
 * Two hosts: --serve runs the receiving side of all of that for one --peer
 * run (serve() below, driven by the peer's messages), --peer the sending
 * side and everything else; the order, the checks and the tables are the
 * loopback run's.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>
#include "bench.h"

const char *const bench_op_names[BENCH_NOPS] = { "write", "put", "send" };
const char *const bench_workload_names[W_NWORKLOADS] = {
	"fresh", "reuse", "churn", "churn-mmap",
};

double bench_now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/*
 * With ORDMA_BENCH_TRACE, a line in the kernel's trace buffer too (when
 * tracefs is mounted), so that a trace of the guest shows where each
 * transfer starts and each side ends.
 */
static void trace_mark(struct bench *b, const char *fmt, ...)
{
	char line[160];
	va_list ap;
	ssize_t w;
	int n;

	if (b->trace_fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	/*
	 * Both sides' threads write here: a mark that cannot be written is
	 * lost, and the descriptor stays for the next one.
	 */
	w = write(b->trace_fd, line,
		  (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	(void)w;
}

void bench_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "\nordma-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void bench_progress(const char *fmt, ...)
{
	static int tty = -1;
	va_list ap;

	if (tty < 0)
		tty = isatty(2);
	fprintf(stderr, tty ? "\r\033[Kordma-bench: " : "ordma-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (!tty)
		fputc('\n', stderr);
}

/* The byte pattern of a transfer: depends on the seed and the offset. */
static inline uint64_t pattern(unsigned int seed, size_t i)
{
	return (i + 1) * 0x9e3779b97f4a7c15ULL ^ (seed + 1) * 0xd1b54a32d192ed03ULL;
}

void bench_fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t w = len / 8;

	for (size_t i = 0; i < w; i++)
		((uint64_t *)p)[i] = pattern(seed, i);
	for (size_t i = w * 8; i < len; i++)
		p[i] = (unsigned char)pattern(seed, i);
}

int bench_check(const unsigned char *p, size_t len, unsigned int seed)
{
	size_t w = len / 8;

	for (size_t i = 0; i < w; i++)
		if (((const uint64_t *)p)[i] != pattern(seed, i))
			return -1;
	for (size_t i = w * 8; i < len; i++)
		if (p[i] != (unsigned char)pattern(seed, i))
			return -1;
	return 0;
}

/* How many bytes of @p differ from the pattern of @seed. */
size_t bench_wrong(const unsigned char *p, size_t len, unsigned int seed)
{
	size_t w = len / 8, n = 0;

	for (size_t i = 0; i < w; i++) {
		uint64_t d = ((const uint64_t *)p)[i] ^ pattern(seed, i);

		for (; d; d >>= 8)
			n += (d & 0xff) != 0;
	}
	for (size_t i = w * 8; i < len; i++)
		n += p[i] != (unsigned char)pattern(seed, i);
	return n;
}

/*
 * rcache in a churn workload serves the registration of memory that is gone:
 * the wrong bytes are what it measures, not a failure of the benchmark.
 */
int bench_stale_expected(const struct bench *b, const struct bench_run *r)
{
	return r->kind == K_RCACHE &&
	       (b->workload == W_CHURN || b->workload == W_CHURN_MMAP);
}

static unsigned char *map_only(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		bench_die("mmap %zu bytes: %s", len, strerror(errno));
	return p;
}

/* A buffer nobody registered, touched so that its pages exist. */
unsigned char *bench_fresh(size_t len)
{
	unsigned char *p = map_only(len);

	memset(p, 0, len);
	return p;
}

void bench_free(unsigned char *p, size_t len)
{
	munmap(p, len);
}

/* Iterations at size index @s: --iters-small below BENCH_SMALL. */
int bench_iters(const struct bench *b, int s)
{
	return b->sizes[s] < BENCH_SMALL ? b->iters_small : b->iters;
}

/* ---- one transfer ---------------------------------------------------------- */

/*
 * churn-mmap: the old mapping goes, a new one is asked for at its address.
 * MAP_FIXED_NOREPLACE rather than MAP_FIXED: should another thread have
 * mapped something there in between, the new buffer goes elsewhere instead
 * of over it (and counts as moved).
 */
static unsigned char *remap(unsigned char *old, size_t old_len, size_t len)
{
	void *p;

	if (munmap(old, old_len))
		bench_die("munmap: %s", strerror(errno));
	p = mmap(old, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		return map_only(len);
	return p;
}

/*
 * The application buffer of @side for this transfer, filled (sender) or
 * zeroed (receiver), outside the timed region. app_put() ends its use.
 */
static unsigned char *app_get(struct bench *b, int side, size_t len)
{
	struct bench_app *a = &b->app[side];
	unsigned char *old = a->p;

	switch (b->workload) {
	case W_FRESH:
		a->p = side ? bench_fresh(len) : map_only(len);
		a->len = len;
		break;
	case W_REUSE:
		if (!a->p) {
			a->p = bench_fresh(b->max_len);
			a->len = b->max_len;
		}
		break;
	case W_CHURN:
		free(old);
		a->p = malloc(len);
		if (!a->p)
			bench_die("malloc %zu bytes", len);
		break;
	default:	/* W_CHURN_MMAP */
		a->p = old ? remap(old, a->len, len) : map_only(len);
		break;
	}
	if (b->workload == W_CHURN || b->workload == W_CHURN_MMAP) {
		a->len = len;
		if (old) {
			a->reallocs++;
			a->same += a->p == old;
		}
	}
	if (side == 0)
		bench_fill(a->p, len, b->job.seed);
	else if (b->workload != W_FRESH)
		memset(a->p, 0, len);
	return a->p;
}

static void app_put(struct bench *b, int side)
{
	struct bench_app *a = &b->app[side];

	if (b->workload != W_FRESH)
		return;
	bench_free(a->p, a->len);
	a->p = NULL;
}

/* After the run: what the reuse and churn workloads kept. */
static void app_free(struct bench *b)
{
	for (int side = 0; side < 2; side++) {
		struct bench_app *a = &b->app[side];

		if (!a->p)
			continue;
		if (b->workload == W_CHURN)
			free(a->p);
		else
			munmap(a->p, a->len);
		a->p = NULL;
	}
}

/*
 * A barrier of the two sides. Between two hosts only the start is one: the
 * end and done barriers keep one side's untimed work off the other's CPU in
 * one guest, and the peer's wait for the server's result orders the rest.
 */
static void meet(struct bench *b, int side, pthread_barrier_t *bar)
{
	if (b->role == ROLE_LOOP)
		pthread_barrier_wait(bar);
	else if (bar == &b->start)
		bench_link_start(b, side);
}

static void side_run(struct bench *b, int side)
{
	struct bench_job *j = &b->job;
	int ordma = j->run->kind == K_ORDMA;
	unsigned char *buf, *dst;

	buf = app_get(b, side, j->len);
	if (ordma)
		bench_ordma_prepare(b, side);
	else
		bench_verbs_prepare(b, side);
	meet(b, side, &b->start);
	j->t0[side] = bench_now_us();
	j->err[side] = ordma ? bench_ordma_xfer(b, side, buf) :
			       bench_verbs_xfer(b, side, buf);
	j->t1[side] = bench_now_us();
	trace_mark(b, "ordma-bench side %d t0 %.1f t1 %.1f\n", side,
		   j->t0[side], j->t1[side]);
	if (j->err[side])
		bench_die("%s %s of %zu bytes failed on the %s side",
			  j->run->name, bench_op_names[j->op], j->len,
			  side ? "receiving" : "sending");
	meet(b, side, &b->end);
	if (ordma)
		bench_ordma_after(b, side, buf);
	else
		bench_verbs_after(b, side);
	if (side == 1) {
		dst = buf;
		if (j->op == BENCH_PUT)
			dst = ordma ? bench_ordma_standing_buf(b) :
			      bench_verbs_prereg_buf(b, 1);
		else if (!ordma && j->run->kind == K_PREREG)
			dst = bench_verbs_prereg_buf(b, 1);
		j->wrong = bench_wrong(dst, j->len, j->seed);
	}
	app_put(b, side);
	meet(b, side, &b->done);
}

static void *server_main(void *arg)
{
	struct bench *b = arg;

	for (;;) {
		pthread_barrier_wait(&b->go);
		if (b->job.quit)
			break;
		side_run(b, 1);
	}
	return NULL;
}

static unsigned int seed_next;

/* A latency transfer, peer to server. */
struct bench_wire_job {
	int run, op;
	char name[24];
	uint64_t len, thresh;
	unsigned int seed;
};

/* The server's side of it: times on its clock, counter deltas. */
struct bench_wire_result {
	double t0, t1, late;
	uint64_t wrong;
	long quiesce_late;
	long long ctr[BENCH_NCTR];
};

/* What the server counted over the run. */
struct bench_wire_stats {
	struct bench_rcache rcache;
	unsigned long reallocs, same;
};

/* Peer: the server's side of the transfer, its times on our clock. */
static void peer_result(struct bench *b, struct bench_cell *c)
{
	struct bench_job *j = &b->job;
	struct bench_wire_result r;

	bench_link_get(b, MSG_RESULT, &r, sizeof(r));
	j->t0[1] = r.t0 - b->clock_off;
	j->t1[1] = r.t1 - b->clock_off;
	j->wrong = r.wrong;
	b->late_starts += r.late > 0;
	if (r.late > b->late_max)
		b->late_max = r.late;
	b->quiesce_late += r.quiesce_late;
	for (int i = 0; c && i < b->srv_nctr; i++)
		if (b->srv_ctr[i] >= 0)
			c->ctr[b->srv_ctr[i]] += r.ctr[i];
}

/* One transfer of @run; returns the time in us, both sides included. */
static double one_xfer(struct bench *b, struct bench_run *run, enum bench_op op,
		       int si, size_t len)
{
	struct bench_job *j = &b->job;
	struct bench_cell *c = si >= 0 ? &run->cell[si][op] : NULL;
	long long before[BENCH_NCTR], after[BENCH_NCTR];
	struct bench_held held = { .free = -1 };
	int ordma = run->kind == K_ORDMA;
	double t;

	memset(j, 0, sizeof(*j));
	j->op = op;
	j->run = run;
	j->len = len;
	j->seed = ++seed_next;
	j->thresh = b->thresh;
	if (ordma) {
		if (b->have_mode && bench_ordma_set_mode(b, run->arg))
			bench_die("cannot set mode %s", bench_mode_names[run->arg]);
		bench_ordma_counters(b, before);
		bench_ordma_held(b, &held);
	}
	if (b->trace)
		fprintf(stderr, "\n[trace] %s %s %zu\n", run->name,
			bench_op_names[op], len);
	trace_mark(b, "ordma-bench start %s %s %zu\n", run->name,
		   bench_op_names[op], len);
	if (b->role == ROLE_PEER) {
		struct bench_wire_job w = {
			.run = run - b->runs, .op = op, .len = len,
			.thresh = j->thresh, .seed = j->seed,
		};

		memcpy(w.name, run->name, sizeof(w.name));
		bench_link_put(b, MSG_JOB, &w, sizeof(w));
	} else {
		pthread_barrier_wait(&b->go);
	}
	side_run(b, 0);
	if (b->role == ROLE_PEER)
		peer_result(b, ordma ? c : NULL);
	t = (j->t1[0] > j->t1[1] ? j->t1[0] : j->t1[1]) -
	    (j->t0[0] < j->t0[1] ? j->t0[0] : j->t0[1]);
	trace_mark(b, "ordma-bench end %.1f\n", t);
	if (!c)
		return j->wrong ? -1 : t;
	if (ordma) {
		bench_ordma_quiesce(b, &held);
		bench_ordma_counters(b, after);
		for (int i = 0; i < b->nctr; i++)
			c->ctr[i] += after[i] - before[i];
	}
	c->t[c->n++] = t;
	if (!j->wrong) {
		c->bytes_ok += len;
	} else {
		c->bytes_bad += len;
		c->bytes_wrong += j->wrong;
		c->xfers_wrong++;
	}
	return t;
}

/* ---- the receiving host ---------------------------------------------------- */

/* Server: the receiving side of the peer's transfer @w, and its result. */
static int serve_job(struct bench *b, const struct bench_wire_job *w)
{
	struct bench_job *j = &b->job;
	struct bench_wire_result r;
	long long before[BENCH_NCTR], after[BENCH_NCTR];
	struct bench_held held = { .free = -1 };
	long late = b->quiesce_late;
	struct bench_run *run;
	int ordma;

	if (w->run < 0 || w->run >= b->nruns || w->op < 0 ||
	    w->op >= BENCH_NOPS || !w->len || w->len > b->max_len ||
	    strncmp(b->runs[w->run].name, w->name, sizeof(w->name)))
		bench_die("the peer asked for %.24s, which this end does not run",
			  w->name);
	run = &b->runs[w->run];
	ordma = run->kind == K_ORDMA;
	memset(j, 0, sizeof(*j));
	memset(&r, 0, sizeof(r));
	j->op = w->op;
	j->run = run;
	j->len = w->len;
	j->seed = w->seed;
	j->thresh = w->thresh;
	if (ordma) {
		if (b->have_mode && bench_ordma_set_mode(b, run->arg))
			bench_die("cannot set mode %s", bench_mode_names[run->arg]);
		bench_ordma_counters(b, before);
		bench_ordma_held(b, &held);
	}
	side_run(b, 1);
	if (ordma) {
		bench_ordma_quiesce(b, &held);
		bench_ordma_counters(b, after);
		for (int i = 0; i < b->nctr; i++)
			r.ctr[i] = after[i] - before[i];
	}
	r.t0 = j->t0[1];
	r.t1 = j->t1[1];
	r.late = b->start_late;
	r.wrong = j->wrong;
	r.quiesce_late = b->quiesce_late - late;
	bench_link_put(b, MSG_RESULT, &r, sizeof(r));
	b->served++;
	if (!j->wrong)
		b->served_bytes += j->len;
	return j->wrong && !bench_stale_expected(b, run);
}

/*
 * Server: whatever the peer asks for, in its order, until it says the run
 * is over. Return: the number of transfers that arrived wrong (rcache's
 * under churn not counted).
 */
static long serve(struct bench *b)
{
	union {
		struct bench_wire_job job;
		int kind;
	} m;
	struct bench_wire_stats st;
	struct bench_tput t;
	long bad = 0;
	size_t n;

	for (;;) {
		int type = bench_link_next(b, &m, sizeof(m), &n);

		switch (type) {
		case MSG_JOB:
			if (n != sizeof(m.job))
				bench_die("the peer sent a transfer of %zu bytes", n);
			bad += serve_job(b, &m.job);
			break;
		case MSG_LAT_END:
			bench_verbs_teardown(b);
			app_free(b);
			break;
		case MSG_TPUT:
			if (n != sizeof(m.kind))
				bench_die("the peer sent a throughput run of %zu bytes", n);
			if (b->have_mode && bench_ordma_set_mode(b, 0))
				bench_die("cannot set mode auto");
			memset(&t, 0, sizeof(t));
			if ((m.kind == K_ORDMA ? bench_ordma_tput(b, &t) :
			     bench_verbs_tput(b, m.kind, &t)))
				bench_die("throughput run failed");
			break;
		case MSG_FAIR:
			if (b->have_mode && bench_ordma_set_mode(b, 0))
				bench_die("cannot set mode auto");
			if (bench_ordma_fair(b))
				bench_die("fairness run failed");
			break;
		case MSG_END:
			memset(&st, 0, sizeof(st));
			st.rcache = b->rcache[1];
			st.reallocs = b->app[1].reallocs;
			st.same = b->app[1].same;
			bench_link_put(b, MSG_STATS, &st, sizeof(st));
			return bad;
		default:
			bench_die("out of step with the peer: message %d", type);
		}
	}
}

/* ---- set-up ---------------------------------------------------------------- */

static void add_run(struct bench *b, const char *name, enum bench_kind kind,
		    int arg)
{
	struct bench_run *r = &b->runs[b->nruns++];

	snprintf(r->name, sizeof(r->name), "%s", name);
	r->kind = kind;
	r->arg = arg;
	for (int s = 0; s < b->nsizes; s++) {
		for (int op = 0; op < BENCH_NOPS; op++) {
			r->cell[s][op].t = calloc(bench_iters(b, s),
						  sizeof(double));
			if (!r->cell[s][op].t)
				bench_die("out of memory");
		}
	}
}

static void make_runs(struct bench *b)
{
	static const int fracs[] = { 16, 8, 4, 2 };
	char name[24];

	add_run(b, "prereg", K_PREREG, 0);
	add_run(b, "regper", K_REGPER, 0);
	add_run(b, "bounce", K_BOUNCE, 0);
	add_run(b, "thresh", K_THRESH, 0);
	add_run(b, "pipeline", K_PIPELINE, 0);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "uoverlap/%d", fracs[i]);
		add_run(b, name, K_UOVERLAP, fracs[i]);
	}
	/*
	 * A fresh buffer is unmapped after its transfer and the next one
	 * often lands at the same address: exactly what a cache without
	 * memory hooks gets wrong, so rcache runs in the other workloads.
	 */
	if (b->workload != W_FRESH)
		add_run(b, "rcache", K_RCACHE, 0);
	if (!b->have_mode) {
		add_run(b, "ordma", K_ORDMA, -1);
		return;
	}
	for (int m = 0; m < 4; m++) {
		snprintf(name, sizeof(name), "ordma-%s", bench_mode_names[m]);
		add_run(b, name, K_ORDMA, m);
	}
}

/* First device with an active port, unless --dev named one. */
static void pick_dev(struct bench *b)
{
	struct ibv_device **l = ibv_get_device_list(NULL);

	if (!l)
		bench_die("no RDMA devices: %s", strerror(errno));
	for (int i = 0; l[i] && !b->ibdev[0]; i++) {
		struct ibv_context *ctx;
		struct ibv_device_attr da;

		if (b->dev && strcmp(ibv_get_device_name(l[i]), b->dev))
			continue;
		ctx = ibv_open_device(l[i]);
		if (!ctx)
			continue;
		if (!ibv_query_device(ctx, &da)) {
			for (int p = 1; p <= da.phys_port_cnt; p++) {
				struct ibv_port_attr pa;

				if (!ibv_query_port(ctx, p, &pa) &&
				    pa.state == IBV_PORT_ACTIVE) {
					snprintf(b->ibdev, sizeof(b->ibdev), "%s",
						 ibv_get_device_name(l[i]));
					break;
				}
			}
		}
		ibv_close_device(ctx);
	}
	ibv_free_device_list(l);
	if (!b->ibdev[0])
		bench_die(b->dev ? "device %s has no active port" :
			  "no RDMA device with an active port%s", b->dev ? b->dev : "");
}

static size_t parse_size(const char *s)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	}
	if (!strcmp(end, "iB") || !strcmp(end, "B"))
		end += strlen(end);
	if (*end || !v || errno || strchr(s, '-') || v > (SIZE_MAX >> shift))
		bench_die("bad size '%s'", s);
	return (size_t)v << shift;
}

static void add_size(struct bench *b, size_t v)
{
	if (b->nsizes >= BENCH_MAX_SIZES)
		bench_die("at most %d sizes", BENCH_MAX_SIZES);
	b->sizes[b->nsizes++] = v;
}

static void parse_sizes(struct bench *b, char *list)
{
	for (char *t = strtok(list, ","); t; t = strtok(NULL, ","))
		add_size(b, parse_size(t));
}

static enum bench_workload parse_workload(const char *s)
{
	for (int w = 0; w < W_NWORKLOADS; w++)
		if (!strcmp(s, bench_workload_names[w]))
			return w;
	fprintf(stderr, "ordma-bench: unknown workload '%s' (fresh, reuse, churn or churn-mmap)\n",
		s);
	exit(2);
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
"usage: ordma-bench [--quick] [--iters N] [--iters-small N] [--sizes S1,S2,...]\n"
"                   [--dev IBDEV]\n"
"                   [--json FILE] [--csv FILE] [--plot FILE.svg] [--tables FILE]\n"
"                   [--addr IPV4] [--port PORT] [--chans N] [--depth M]\n"
"                   [--tput-size S] [--tput-reps N] [--no-tput] [--no-fair]\n"
"                   [--workload fresh|reuse|churn|churn-mmap] [SIZE...]\n"
"                   [--peer IPV4]\n"
"       ordma-bench --serve [--addr IPV4] [--port PORT] [--dev IBDEV]\n"
"Sizes take K, M, G suffixes (KiB, MiB, GiB). Two hosts: --serve on one (the\n"
"receiving ends, listening on --addr), --peer SERVER-ADDR with the run's\n"
"options on the other (the sending ends; it measures). See ordma-bench(1).\n");
	exit(status);
}

static void parse_opts(struct bench *b, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iters", required_argument, NULL, 'n' },
		{ "iters-small", required_argument, NULL, 'N' },
		{ "sizes", required_argument, NULL, 's' },
		{ "dev", required_argument, NULL, 'd' },
		{ "quick", no_argument, NULL, 'q' },
		{ "json", required_argument, NULL, 'j' },
		{ "csv", required_argument, NULL, 'c' },
		{ "plot", required_argument, NULL, 'P' },
		{ "tables", required_argument, NULL, 'X' },
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "chans", required_argument, NULL, 'C' },
		{ "depth", required_argument, NULL, 'D' },
		{ "tput-size", required_argument, NULL, 'T' },
		{ "tput-reps", required_argument, NULL, 'R' },
		{ "no-tput", no_argument, NULL, 't' },
		{ "no-fair", no_argument, NULL, 'f' },
		{ "workload", required_argument, NULL, 'w' },
		{ "serve", no_argument, NULL, 'S' },
		{ "peer", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, iters = 0, iters_small = 0;
	const char *peer = NULL;

	b->addr = "192.0.2.1";
	b->port = 18790;
	b->do_tput = 1;
	b->do_fair = 1;
	b->tput_chans = 4;
	b->tput_depth = 4;
	b->tput_len = 1UL << 20;
	b->tput_reps = 3;
	while ((opt = getopt_long(argc, argv, "n:s:d:qa:p:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			iters = atoi(optarg);
			break;
		case 'N':
			iters_small = atoi(optarg);
			break;
		case 's':
			parse_sizes(b, optarg);
			break;
		case 'd':
			b->dev = optarg;
			break;
		case 'q':
			b->quick = 1;
			break;
		case 'j':
			b->json = optarg;
			break;
		case 'c':
			b->csv = optarg;
			break;
		case 'P':
			b->plot = optarg;
			break;
		case 'X':
			b->tables = optarg;
			break;
		case 'a':
			b->addr = optarg;
			break;
		case 'p':
			b->port = atoi(optarg);
			break;
		case 'C':
			b->tput_chans = atoi(optarg);
			break;
		case 'D':
			b->tput_depth = atoi(optarg);
			break;
		case 'T':
			b->tput_len = parse_size(optarg);
			break;
		case 'R':
			b->tput_reps = atoi(optarg);
			break;
		case 't':
			b->do_tput = 0;
			break;
		case 'f':
			b->do_fair = 0;
			break;
		case 'w':
			b->workload = parse_workload(optarg);
			break;
		case 'S':
			if (b->role == ROLE_PEER)
				bench_die("--serve or --peer, not both");
			b->role = ROLE_SERVE;
			break;
		case 'A':
			if (b->role == ROLE_SERVE)
				bench_die("--serve or --peer, not both");
			b->role = ROLE_PEER;
			peer = optarg;
			break;
		case 'h':
			usage(0);
			break;
		default:
			usage(2);
		}
	}
	for (; optind < argc; optind++)
		add_size(b, parse_size(argv[optind]));
	/* the peer meets the server at the server's address */
	if (peer)
		b->addr = peer;
	if (!b->nsizes) {
		size_t hi = b->quick ? 4UL << 20 : 64UL << 20;

		for (size_t s = 4096; s <= hi; s *= b->quick ? 16 : 4)
			add_size(b, s);
		if (b->quick && b->sizes[b->nsizes - 1] != hi)
			add_size(b, hi);
	}
	b->iters = iters ? iters : b->quick ? 5 : 11;
	/* small transfers are quick and noisy: more samples for their medians */
	b->iters_small = iters_small ? iters_small :
			 b->quick ? b->iters : 3 * b->iters;
	if (b->iters < 1 || b->iters_small < 1 || b->tput_chans < 1 ||
	    b->tput_depth < 1 || b->tput_chans * b->tput_depth > 256 ||
	    b->tput_reps < 1 || b->tput_reps > BENCH_TPUT_REPS)
		bench_die("bad --iters, --iters-small, --chans, --depth or --tput-reps");
	for (int i = 0; i < b->nsizes; i++)
		if (b->sizes[i] > b->max_len)
			b->max_len = b->sizes[i];
	if (b->max_len < (4UL << 20))
		b->max_len = 4UL << 20;		/* room for the calibration */
	b->max_len = (b->max_len + 4095) & ~4095UL;
}

/*
 * A new order for every round (Fisher-Yates, fixed seed: reproducible), so
 * that no strategy always follows the same one and inherits its leftovers.
 */
static void shuffle(int *v, int n, uint64_t *rng)
{
	for (int i = n - 1; i > 0; i--) {
		int j, t;

		*rng ^= *rng << 13;
		*rng ^= *rng >> 7;
		*rng ^= *rng << 17;
		j = *rng % (i + 1);
		t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

/* UCX's rule with what this device measured; then the best swept one. */
static void calibrate(struct bench *b)
{
	struct bench_run *pre = &b->runs[0];
	size_t n = 4UL << 20;
	double t[3], den;
	enum bench_workload w = b->workload;
	struct bench_summary s;

	if (bench_verbs_calibrate(b))
		bench_die("calibration failed");
	/*
	 * On fresh buffers whatever the workload: the churn's malloc() of
	 * 4 MiB would raise glibc's mmap threshold for the measured sizes.
	 */
	b->workload = W_FRESH;
	for (int i = 0; i < 3; i++) {
		t[i] = one_xfer(b, pre, BENCH_WRITE, -1, n);
		if (t[i] < 0)
			bench_die("calibration transfer corrupted data");
	}
	b->workload = w;
	bench_summarise(t, 3, &s);
	b->wire_bw = n / s.median;
	den = 1 / b->copy_bw - 1 / b->wire_bw - b->reg_per_byte_us;
	/* at or below zero: copying never costs more, always bounce */
	if (den <= 0)
		b->thresh = (size_t)-1;
	else
		b->thresh = (size_t)(b->reg_fixed_us / den);
}

static void sweep_thresh(struct bench *b)
{
	for (int op = 0; op < BENCH_NOPS; op++) {
		double best = -1;

		for (int k = 0; k <= b->nsizes; k++) {
			double cost = 0;

			for (int s = 0; s < b->nsizes; s++) {
				int regper = k < b->nsizes && b->sizes[s] >= b->sizes[k];

				cost += b->runs[regper ? 1 : 2].cell[s][op].s.median /
					b->runs[0].cell[s][op].s.median;
			}
			if (best < 0 || cost < best) {
				best = cost;
				b->thresh_best[op] = k < b->nsizes ? b->sizes[k] : (size_t)-1;
			}
		}
	}
}

int main(int argc, char **argv)
{
	static struct bench bench;
	struct bench *b = &bench;
	pthread_t server;
	double t_start = bench_now_us();
	uint64_t rng = 0x2545f4914f6cdd1dULL;
	int order[BENCH_MAX_RUNS];
	int bad = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	b->trace = !!getenv("ORDMA_BENCH_TRACE");
	b->trace_fd = b->trace ? open("/sys/kernel/tracing/trace_marker",
				      O_WRONLY | O_CLOEXEC) : -1;
	b->link_fd = -1;
	parse_opts(b, argc, argv);
	pick_dev(b);
	if (b->role != ROLE_LOOP) {
		if (bench_link_open(b))
			bench_die(b->role == ROLE_SERVE ?
				  "no --peer came to %s: %s" :
				  "cannot reach ordma-bench --serve at %s: %s",
				  b->addr, strerror(errno));
		bench_link_hello(b);
	}
	if (bench_ordma_setup(b))
		bench_die("cannot open an ordma channel on %s (is ordma loaded?)",
			  b->addr);
	if (b->role != ROLE_LOOP)
		bench_link_info(b);
	make_runs(b);
	if (bench_verbs_setup(b))
		bench_die("cannot connect the verbs baselines");
	if (b->role == ROLE_SERVE) {
		long wrong;

		bench_progress("serving the peer's run on %s", b->ibdev);
		wrong = serve(b);
		bench_ordma_teardown(b);
		bench_link_close(b);
		bench_progress("done in %.0f s\n", (bench_now_us() - t_start) / 1e6);
		printf("# ordma-bench --serve on %s: received %llu transfers, %llu bytes as sent; %ld transfers with wrong bytes\n",
		       b->ibdev, b->served, b->served_bytes, wrong);
		return wrong ? 1 : 0;
	}
	if (b->role == ROLE_PEER) {
		long n = 3;	/* the calibration's */

		for (int s = 0; s < b->nsizes; s++)
			n += (long)bench_iters(b, s) * b->nruns * BENCH_NOPS;
		b->rtts = calloc(n, sizeof(*b->rtts));
		if (!b->rtts)
			bench_die("out of memory");
	} else {
		pthread_barrier_init(&b->go, NULL, 2);
		pthread_barrier_init(&b->start, NULL, 2);
		pthread_barrier_init(&b->end, NULL, 2);
		pthread_barrier_init(&b->done, NULL, 2);
		if (pthread_create(&server, NULL, server_main, b))
			bench_die("pthread_create");
	}

	for (int k = 0; k < b->nruns; k++)
		order[k] = k;
	bench_progress("calibrating on %s", b->ibdev);
	calibrate(b);

	for (int s = 0; s < b->nsizes; s++) {
		for (int it = 0; it < bench_iters(b, s); it++) {
			bench_progress("latency (%s) %zu bytes, iteration %d/%d, %.0f s",
				       bench_workload_names[b->workload],
				       b->sizes[s], it + 1, bench_iters(b, s),
				       (bench_now_us() - t_start) / 1e6);
			for (int op = 0; op < BENCH_NOPS; op++) {
				shuffle(order, b->nruns, &rng);
				for (int k = 0; k < b->nruns; k++)
					one_xfer(b, &b->runs[order[k]], op, s,
						 b->sizes[s]);
			}
		}
	}
	if (b->role == ROLE_PEER) {
		bench_link_put(b, MSG_LAT_END, NULL, 0);
	} else {
		b->job.quit = 1;
		pthread_barrier_wait(&b->go);
		pthread_join(server, NULL);
	}
	bench_verbs_teardown(b);
	app_free(b);

	for (int r = 0; r < b->nruns; r++)
		for (int s = 0; s < b->nsizes; s++)
			for (int op = 0; op < BENCH_NOPS; op++) {
				struct bench_cell *c = &b->runs[r].cell[s][op];

				bench_summarise(c->t, c->n, &c->s);
				if (!bench_stale_expected(b, &b->runs[r]))
					bad |= c->bytes_bad != 0;
			}
	sweep_thresh(b);
	/* throughput and fairness: the module's own choice */
	if (b->have_mode && bench_ordma_set_mode(b, 0))
		bench_die("cannot set mode auto");

	if (b->do_tput) {
		static const struct {
			const char *name;
			enum bench_kind kind;
		} tp[] = {
			{ "prereg", K_PREREG }, { "bounce", K_BOUNCE },
			{ "regper", K_REGPER }, { "ordma", K_ORDMA },
		};

		/* Repetitions, each in another order; the median of each. */
		for (int rep = 0; rep < b->tput_reps; rep++) {
			for (int k = 0; k < 4; k++) {
				int i = (k + rep) % 4;
				struct bench_tput *t = &b->tput[i];
				int ret;

				bench_progress("throughput: %s, %d channels x %d outstanding, %zu bytes, %d/%d",
					       tp[i].name, b->tput_chans,
					       b->tput_depth, b->tput_len, rep + 1,
					       b->tput_reps);
				snprintf(t->name, sizeof(t->name), "%s",
					 tp[i].name);
				if (b->role == ROLE_PEER) {
					int kind = tp[i].kind;

					bench_link_put(b, MSG_TPUT, &kind,
						       sizeof(kind));
				}
				if (tp[i].kind == K_ORDMA)
					ret = bench_ordma_tput(b, t);
				else
					ret = bench_verbs_tput(b, tp[i].kind, t);
				if (ret)
					bench_die("%s throughput run failed",
						  tp[i].name);
				t->rep_mbps[t->nrep++] = t->mbps;
				bad |= t->bytes_bad != 0;
			}
		}
		for (int i = 0; i < 4; i++) {
			struct bench_summary s;

			bench_summarise(b->tput[i].rep_mbps, b->tput[i].nrep, &s);
			b->tput[i].mbps = s.median;
		}
		b->ntput = 4;
	}
	if (b->do_fair) {
		int ret;

		bench_progress("fairness: 4 KiB ping beside a 16 MiB stream");
		ret = bench_ordma_fair(b);
		if (ret == -ENOENT)
			b->nfair = 0;
		else if (ret)
			bench_die("fairness run failed (%d)", ret);
	}
	if (b->role == ROLE_PEER) {
		struct bench_wire_stats st;

		bench_link_put(b, MSG_END, NULL, 0);
		bench_link_get(b, MSG_STATS, &st, sizeof(st));
		b->rcache[1] = st.rcache;
		b->app[1].reallocs = st.reallocs;
		b->app[1].same = st.same;
		bench_link_close(b);
	}
	bench_ordma_teardown(b);
	bench_progress("done in %.0f s\n", (bench_now_us() - t_start) / 1e6);

	if (b->tables) {
		/* The verdicts here, every table in the file. */
		FILE *f = fopen(b->tables, "w");

		if (!f)
			bench_die("cannot write %s", b->tables);
		bench_print(f, b);
		if (fclose(f))
			bench_die("cannot write %s", b->tables);
		bench_print_brief(stdout, b);
	} else {
		bench_print(stdout, b);
	}
	if (b->json && bench_write_json(b, b->json))
		bench_die("cannot write %s", b->json);
	if (b->csv && bench_write_csv(b, b->csv))
		bench_die("cannot write %s", b->csv);
	if (b->plot && bench_write_plot(b, b->plot))
		bench_die("cannot write %s (is gnuplot installed?)", b->plot);
	if (bad) {
		fprintf(stderr, "ordma-bench: DATA MISMATCH: see the verified column\n");
		return 1;
	}
	return 0;
}
