/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordma-bench: ordma against the usual ways of moving unregistered memory
 * over RDMA, on one device, with the same sizes and buffers, in one run.
 *
 * main.c runs the workloads and interleaves the strategies, verbs.c holds
 * the rdma-core baselines (and rcache, a registration cache without memory
 * hooks), ordma.c drives libordma, stats.c summarises samples and out.c
 * writes the table, JSON, CSV and the gnuplot SVG.
 *
 * Every transfer runs between two threads of this process: the sender (the
 * main thread) and the receiver (one server thread), each with its own
 * connection end, so both sides' registration, copies and waits are timed.
 * The threads meet at barriers outside the timed region only.
 *
 * Two hosts (--serve on one, --peer on the other): the receiver's side runs
 * in the --serve process, the sender's and everything that measures in the
 * --peer one. link.c carries what the barriers and the shared job carry in
 * one process over a TCP connection between the two, and puts both hosts'
 * clocks on one time line so that a sample is still the latest end minus
 * the earliest start.
 */
#ifndef ORDMA_BENCH_H
#define ORDMA_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <pthread.h>

#define BENCH_MAX_SIZES		32
#define BENCH_MAX_RUNS		16
#define BENCH_PIECE		(64UL << 10)	/* uoverlap copy piece */
#define BENCH_FRAG		(1UL << 20)	/* pipeline fragment */
#define BENCH_INFLIGHT		4		/* pipeline fragments in flight */
#define BENCH_NCTR		24		/* sysfs counters kept per cell */
#define BENCH_SMALL		(1UL << 20)	/* below: --iters-small */
#define BENCH_RCACHE		16		/* rcache entries per side (LRU) */

/*
 * BENCH_WRITE: one-sided RDMA WRITE from a fresh source into a fresh
 * destination (neither registered; the destination's address travels per
 * transfer). BENCH_PUT: one-sided RDMA WRITE from a fresh source into a
 * standing target the writer learnt at set-up (registered once for the
 * rdma-core strategies, exposed once and never registered for ordma).
 * BENCH_SEND: a message, neither side registered.
 */
enum bench_op { BENCH_WRITE, BENCH_PUT, BENCH_SEND, BENCH_NOPS };

/*
 * Where the latency transfers' application buffers come from (--workload).
 * W_FRESH: mapped for one transfer and unmapped after it. W_REUSE: one
 * source and one destination for the whole run, new contents before each
 * transfer. W_CHURN: before each transfer each side's buffer is freed and
 * allocated again, free() then malloc(); W_CHURN_MMAP: munmap() then mmap()
 * at the same address. The receiver's buffer is zeroed, the sender's filled,
 * outside the timed region in every workload.
 */
enum bench_workload { W_FRESH, W_REUSE, W_CHURN, W_CHURN_MMAP, W_NWORKLOADS };

enum bench_kind {
	K_PREREG,	/* source and destination registered once */
	K_REGPER,	/* ibv_reg_mr + op + ibv_dereg_mr per transfer */
	K_BOUNCE,	/* copy through pre-registered buffers */
	K_THRESH,	/* bounce below a threshold, regper above (UCX) */
	K_PIPELINE,	/* 1 MiB fragments registered and sent in turn (ob1) */
	K_UOVERLAP,	/* user-space overlap: copy head while a helper registers */
	K_ORDMA,	/* libordma */
	K_RCACHE,	/* registrations cached by address, never invalidated */
};

struct bench_summary {
	double median, p99, min, lo, hi;	/* us; lo..hi: 95% CI of the median */
	int n;
};

/* The samples of one strategy at one size and operation. */
struct bench_cell {
	double *t;			/* us, one per iteration */
	int n;
	unsigned long long bytes_ok;	/* verified after each transfer */
	unsigned long long bytes_bad;	/* in transfers with a wrong byte */
	unsigned long long bytes_wrong;	/* bytes that differed */
	int xfers_wrong;		/* transfers with a wrong byte */
	struct bench_summary s;
	long long ctr[BENCH_NCTR];	/* sysfs counter deltas (ordma runs) */
};

/* One column of the interleave. */
struct bench_run {
	char name[24];
	enum bench_kind kind;
	int arg;		/* uoverlap: head = len / arg; ordma: mode or -1 */
	struct bench_cell cell[BENCH_MAX_SIZES][BENCH_NOPS];
};

/* What both threads do next (written by the sender between barriers). */
struct bench_job {
	int quit;
	enum bench_op op;
	const struct bench_run *run;
	size_t len;
	unsigned int seed;
	size_t thresh;		/* K_THRESH: regper from this size up */
	/* results, each side its own */
	double t0[2], t1[2];	/* [0] sender, [1] receiver */
	int err[2];
	size_t wrong;		/* receiver: bytes not as sent */
};

/* A side's application buffer in the reuse and churn workloads. */
struct bench_app {
	unsigned char *p;
	size_t len;
	unsigned long reallocs, same;	/* churn: allocations, at the old address */
};

/* rcache's lookups on one side. */
struct bench_rcache {
	unsigned long long hits, misses, evictions;
};

struct bench_verbs;
struct bench_ordma;

/*
 * Where the two ends run. ROLE_LOOP: both here, one thread each (the
 * default). ROLE_PEER: the sender (side 0) here, the receiver on the host
 * this one connects to; this end measures and prints. ROLE_SERVE: the
 * receiver (side 1) here, for one --peer run.
 */
enum bench_role { ROLE_LOOP, ROLE_PEER, ROLE_SERVE };

/* Most repetitions of the throughput workload (--tput-reps). */
#define BENCH_TPUT_REPS	9

struct bench {
	/* options */
	const char *dev;	/* ib device name, NULL: first active */
	const char *addr;
	unsigned short port;
	int iters;
	int iters_small;	/* sizes below BENCH_SMALL */
	int quick;
	enum bench_workload workload;
	int trace;		/* ORDMA_BENCH_TRACE set: each transfer on stderr */
	int trace_fd;		/* and into ftrace's trace_marker; -1: none */
	size_t sizes[BENCH_MAX_SIZES];
	int nsizes;
	size_t max_len;
	int do_tput, do_fair;
	int tput_chans, tput_depth, tput_reps;
	size_t tput_len;
	const char *json, *csv, *plot, *tables;
	enum bench_role role;

	/* two hosts (link.c) */
	int link_fd;		/* the control connection */
	double clock_off;	/* peer: the server's clock minus ours, us */
	double rtt_min;		/* peer: round trip of the last clock sync, us */
	double *rtts;		/* peer: each transfer's sync round trip */
	long nrtt, late_starts;	/* peer: transfers whose server started late */
	double late_max;	/* peer: by how much at most, us */
	double start_late;	/* server: how late the last start reached it, us */
	int srv_ctr[BENCH_NCTR];	/* peer: the server's counter i is our ... */
	int srv_nctr;			/* ... srv_ctr[i], or -1 */
	char srv_ibdev[64];
	unsigned long long served, served_bytes;	/* server: transfers, bytes ok */

	/* strategies */
	struct bench_run runs[BENCH_MAX_RUNS];
	int nruns;
	int have_mode;		/* /sys/class/ordma/<dev>/mode exists */
	char ibdev[64];
	char ctr_name[BENCH_NCTR][32];
	int nctr;
	long quiesce_late;	/* transfers after which the module was busy 100 ms */

	/* thresh inputs, measured */
	double reg_fixed_us, reg_per_byte_us, copy_bw, wire_bw;	/* bytes/us */
	size_t thresh;			/* formula; SIZE_MAX: always bounce */
	size_t thresh_best[BENCH_NOPS];	/* swept on the medians */

	/* throughput and fairness results */
	struct bench_tput {
		char name[24];
		double mbps;		/* median of the repetitions */
		double rep_mbps[BENCH_TPUT_REPS];
		int nrep;
		unsigned long long bytes_ok, bytes_bad;
	} tput[4];
	int ntput;
	struct bench_fair {
		char name[40];
		struct bench_summary s;
		double heavy_mbps;	/* the heavy flow meanwhile */
	} fair[4];
	int nfair;
	int fair_quota[2];

	/* the two threads; [0] sender, [1] receiver, each written by its own */
	struct bench_job job;
	struct bench_app app[2];
	struct bench_rcache rcache[2];
	pthread_barrier_t go, start, end, done;
	struct bench_verbs *vs[2];	/* [0] sender, [1] receiver */
	struct bench_ordma *os[2];
};

extern const char *const bench_mode_names[4];
extern const char *const bench_op_names[BENCH_NOPS];
extern const char *const bench_workload_names[W_NWORKLOADS];

/* main.c */
double bench_now_us(void);
int bench_iters(const struct bench *b, int s);
void bench_fill(unsigned char *p, size_t len, unsigned int seed);
int bench_check(const unsigned char *p, size_t len, unsigned int seed);
size_t bench_wrong(const unsigned char *p, size_t len, unsigned int seed);
int bench_stale_expected(const struct bench *b, const struct bench_run *r);
unsigned char *bench_fresh(size_t len);
void bench_free(unsigned char *p, size_t len);
void bench_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* link.c: two hosts */
/* Is side @side (0 sender, 1 receiver) in this process? */
static inline int bench_here(const struct bench *b, int side)
{
	return b->role == ROLE_LOOP || (b->role == ROLE_PEER) == !side;
}

enum bench_msg_type {
	MSG_HELLO = 1,	/* peer: the run's options (struct bench_hello) */
	MSG_INFO,	/* server: device, mode knob, counter names */
	MSG_READY,	/* server: listening (or posted), connect now */
	MSG_TOKEN,	/* server: the standing window's token */
	MSG_KEYS,	/* both: pre-registered buffers' addresses and rkeys */
	MSG_JOB,	/* peer: the next latency transfer (struct bench_wire_job) */
	MSG_PREPARED,	/* server: prepared, waiting for the start */
	MSG_PING,	/* peer: clock sync; the reply carries the server's time */
	MSG_PONG,
	MSG_START,	/* peer: start at this time of the server's clock */
	MSG_RESULT,	/* server: its side of the transfer (bench_wire_result) */
	MSG_LAT_END,	/* peer: latency done, tear the connections down */
	MSG_TPUT,	/* peer: a throughput run (int kind) */
	MSG_TPUT_DONE,	/* server: struct bench_tput_done */
	MSG_FAIR,	/* peer: fairness: open the two channels */
	MSG_PHASE,	/* peer: one phase (struct bench_phase) */
	MSG_PHASE_DONE,	/* server: struct bench_phase_done */
	MSG_FAIR_END,
	MSG_END,	/* peer: the run is over */
	MSG_STATS,	/* server: struct bench_wire_stats */
};

struct bench_tput_done {
	int ret;
	unsigned long long bytes_ok, bytes_bad;
};

struct bench_phase {
	int heavy, pings;
	long long quota;	/* chan_quota_chunks meanwhile */
};

struct bench_phase_done {
	int ret, bad;
	long msgs;
};

int bench_link_open(struct bench *b);
void bench_link_put(struct bench *b, int type, const void *p, size_t len);
void bench_link_get(struct bench *b, int type, void *p, size_t len);
int bench_link_next(struct bench *b, void *p, size_t max, size_t *len);
void bench_link_hello(struct bench *b);
void bench_link_info(struct bench *b);
void bench_link_start(struct bench *b, int side);
void bench_link_close(struct bench *b);

/* stats.c */
void bench_summarise(const double *t, int n, struct bench_summary *s);
int bench_tied(const struct bench_summary *a, const struct bench_summary *b);

/* verbs.c: the baselines; side 0 sends, side 1 receives */
int bench_verbs_setup(struct bench *b);
void bench_verbs_teardown(struct bench *b);
int bench_verbs_xfer(struct bench *b, int side, unsigned char *buf);
void bench_verbs_prepare(struct bench *b, int side);
void bench_verbs_after(struct bench *b, int side);
unsigned char *bench_verbs_prereg_buf(struct bench *b, int side);
int bench_verbs_calibrate(struct bench *b);
int bench_verbs_tput(struct bench *b, enum bench_kind kind, struct bench_tput *r);

/* ordma.c */
int bench_ordma_setup(struct bench *b);
void bench_ordma_teardown(struct bench *b);
int bench_ordma_xfer(struct bench *b, int side, unsigned char *buf);
void bench_ordma_prepare(struct bench *b, int side);
void bench_ordma_after(struct bench *b, int side, unsigned char *buf);
unsigned char *bench_ordma_standing_buf(struct bench *b);
int bench_ordma_set_mode(struct bench *b, int mode);
int bench_ordma_counters(struct bench *b, long long *v);
/* What the module holds (sysfs), before and after a transfer. */
struct bench_held {
	long long free, pinned, mrs;
};

void bench_ordma_held(struct bench *b, struct bench_held *q);
void bench_ordma_quiesce(struct bench *b, const struct bench_held *before);
int bench_ordma_tput(struct bench *b, struct bench_tput *r);
int bench_ordma_fair(struct bench *b);

/* out.c */
void bench_print(FILE *f, struct bench *b);
void bench_print_brief(FILE *f, const struct bench *b);
int bench_write_json(struct bench *b, const char *path);
int bench_write_csv(struct bench *b, const char *path);
int bench_write_plot(struct bench *b, const char *path);

#endif /* ORDMA_BENCH_H */
