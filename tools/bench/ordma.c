// SPDX-License-Identifier: GPL-2.0
/*
 * The ordma side of the benchmark, through libordma: latency transfers
 * (one per call, sender and receiver thread each with its own handle), the
 * mode knob, the sysfs counters, throughput over N channels with M
 * operations outstanding each, and the fairness of a light flow beside a
 * heavy one.
 *
 * A WRITE needs a window on the receiver: it exposes its fresh buffer, sends
 * the token as a small message, and waits in a receive for the write's
 * notification (ORDMA_SQE_NOTIFY, the counterpart of the baselines' write
 * with immediate data); all of that is timed. A PUT writes into a standing
 * window instead: the receiver exposed a buffer of the largest size once at
 * set-up (never registered by anyone) and the writer knows its token since;
 * the receiver only waits for the notification.
 *
 * Two hosts: each process opens only its own ends' handles; the server
 * listens and accepts, the peer connects once the server said it listens
 * (MSG_READY), and each host's mode and quota knobs are written on both.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <libordma.h>
#include "bench.h"

const char *const bench_mode_names[4] = { "auto", "copy", "zerocopy", "overlap" };

struct bench_ordma {
	struct ordma *o;
	uint32_t chan;
	uint64_t token;		/* receiver: the window of this transfer */
	unsigned char *standing;	/* receiver: PUT's target, max_len */
	uint64_t standing_token;	/* both: its window */
};

/* ---- sysfs ---------------------------------------------------------------- */

static int sysfs_path(const struct bench *b, const char *attr, char *path,
		      size_t len)
{
	return snprintf(path, len, "/sys/class/ordma/%s/%s", b->ibdev, attr) >=
	       (int)len ? -1 : 0;
}

static int sysfs_read(const struct bench *b, const char *attr, long long *v)
{
	char path[256], buf[64], *end;
	FILE *f;

	if (sysfs_path(b, attr, path, sizeof(path)))
		return -1;
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	*v = strtoll(buf, &end, 0);
	return end == buf || (*end && *end != '\n') ? -1 : 0;
}

static int sysfs_write(const struct bench *b, const char *attr, const char *val)
{
	char path[256];
	FILE *f;
	int ret;

	if (sysfs_path(b, attr, path, sizeof(path)))
		return -1;
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = fputs(val, f) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/* Knobs and gauges: their differences mean nothing. */
static const char *const not_counters[] = {
	"pool_bytes", "chunk_bytes", "chan_quota_chunks", "chunks_total",
	"chunks_free", "high_water", "chunks_held", "channels",
	"pages_pinned", "mrs_live", "mode", NULL,
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Every numeric attribute that counts: whatever this module version has. */
static void find_counters(struct bench *b)
{
	char path[256];
	struct dirent *d;
	long long v;
	DIR *dir;

	b->nctr = 0;
	if (sysfs_path(b, "", path, sizeof(path)))
		return;
	dir = opendir(path);
	if (!dir)
		return;
	while ((d = readdir(dir)) && b->nctr < BENCH_NCTR) {
		int skip = d->d_name[0] == '.' || strlen(d->d_name) >= 32;

		for (int i = 0; !skip && not_counters[i]; i++)
			skip = !strcmp(d->d_name, not_counters[i]);
		if (skip || sysfs_read(b, d->d_name, &v))
			continue;
		strcpy(b->ctr_name[b->nctr++], d->d_name);
	}
	closedir(dir);
	qsort(b->ctr_name, b->nctr, sizeof(b->ctr_name[0]), cmp_str);
}

int bench_ordma_counters(struct bench *b, long long *v)
{
	for (int i = 0; i < b->nctr; i++)
		if (sysfs_read(b, b->ctr_name[i], &v[i]))
			v[i] = 0;
	return 0;
}

/*
 * What the module holds now: chunks free in the pool (the receive rings
 * hold theirs always), pinned pages and MRs (a window written more than
 * once stays registered while it is exposed). -1 in @q->free if unknown.
 */
void bench_ordma_held(struct bench *b, struct bench_held *q)
{
	q->pinned = 0;
	q->mrs = 0;
	if (sysfs_read(b, "chunks_free", &q->free))
		q->free = -1;
	sysfs_read(b, "pages_pinned", &q->pinned);
	sysfs_read(b, "mrs_live", &q->mrs);
}

/*
 * After a transfer, outside the timed region: wait (up to 100 ms) until the
 * module holds no more than it held before the transfer (@before): as many
 * chunks free, no more pinned pages or MRs; so that work it left for later
 * is not charged to whatever runs next. A transfer after which it does not
 * is counted (the output says how many).
 */
void bench_ordma_quiesce(struct bench *b, const struct bench_held *before)
{
	struct bench_held now;

	if (before->free < 0)
		return;
	for (int i = 0; i < 100; i++) {
		bench_ordma_held(b, &now);
		if (now.free < 0)
			return;
		if (now.free >= before->free && now.pinned <= before->pinned &&
		    now.mrs <= before->mrs)
			return;
		usleep(1000);
	}
	b->quiesce_late++;
}

int bench_ordma_set_mode(struct bench *b, int mode)
{
	if (mode < 0)
		return 0;
	return sysfs_write(b, "mode", bench_mode_names[mode]);
}

/* ---- channels ------------------------------------------------------------- */

struct acceptor {
	struct ordma *o;
	uint32_t listener;
	int n;
	uint32_t *chans;
	int ret;
};

static void *accept_main(void *arg)
{
	struct acceptor *a = arg;

	for (int i = 0; i < a->n && !a->ret; i++)
		a->ret = ordma_accept(a->o, a->listener, 0, &a->chans[i], NULL,
				      NULL);
	return NULL;
}

static void bench_sockaddr(const struct bench *b, unsigned short port,
			   struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	if (inet_pton(AF_INET, b->addr, &sa->sin_addr) != 1)
		bench_die("bad IPv4 address %s", b->addr);
}

/*
 * n channels from handle @c to handle @s on @port: listen, accept in a
 * thread, connect here. Two hosts: the server listens and accepts on @s,
 * the peer connects @c.
 */
static int chans_open(struct bench *b, unsigned short port,
		      struct ordma *c, uint32_t *cch, struct ordma *s,
		      uint32_t *sch, int n)
{
	struct acceptor a = { .o = s, .n = n, .chans = sch };
	struct sockaddr_in sa;
	pthread_t th;
	int ret = 0;

	bench_sockaddr(b, port, &sa);
	if (b->role == ROLE_PEER) {
		bench_link_get(b, MSG_READY, NULL, 0);
		for (int i = 0; i < n && !ret; i++)
			ret = ordma_connect(c, (struct sockaddr *)&sa,
					    sizeof(sa), 0, &cch[i]);
		return ret;
	}
	ret = ordma_listen(s, (struct sockaddr *)&sa, sizeof(sa), n, &a.listener);
	if (ret)
		return ret;
	if (b->role == ROLE_SERVE) {
		bench_link_put(b, MSG_READY, NULL, 0);
		accept_main(&a);
		ordma_chan_close(s, a.listener);
		return a.ret;
	}
	if (pthread_create(&th, NULL, accept_main, &a))
		return -EAGAIN;
	for (int i = 0; i < n && !ret; i++)
		ret = ordma_connect(c, (struct sockaddr *)&sa, sizeof(sa), 0,
				    &cch[i]);
	pthread_join(th, NULL);
	ordma_chan_close(s, a.listener);
	return ret ? ret : a.ret;
}

int bench_ordma_setup(struct bench *b)
{
	char path[256];
	FILE *f;
	int ret;

	struct bench_ordma none = { 0 }, *os[2];

	for (int i = 0; i < 2; i++) {
		os[i] = &none;
		if (!bench_here(b, i))
			continue;
		b->os[i] = calloc(1, sizeof(*b->os[i]));
		if (!b->os[i])
			return -ENOMEM;
		ret = ordma_open(&b->os[i]->o, 0);
		if (ret)
			return ret;
		os[i] = b->os[i];
	}
	ret = chans_open(b, b->port + 1, os[0]->o, &os[0]->chan,
			 os[1]->o, &os[1]->chan, 1);
	if (ret)
		return ret;
	b->have_mode = 0;
	if (!sysfs_path(b, "mode", path, sizeof(path))) {
		f = fopen(path, "r");
		if (f) {
			b->have_mode = 1;
			fclose(f);
		}
	}
	find_counters(b);

	/* PUT's standing window: exposed once, the writer told at set-up */
	if (b->role == ROLE_PEER) {
		bench_link_get(b, MSG_TOKEN, &b->os[0]->standing_token,
			       sizeof(b->os[0]->standing_token));
		return 0;
	}
	b->os[1]->standing = bench_fresh(b->max_len);
	ret = ordma_expose(b->os[1]->o, b->os[1]->standing, b->max_len,
			   ORDMA_ACCESS_REMOTE_WRITE, &b->os[1]->standing_token);
	if (ret)
		return ret;
	if (b->role == ROLE_SERVE)
		bench_link_put(b, MSG_TOKEN, &b->os[1]->standing_token,
			       sizeof(b->os[1]->standing_token));
	else
		b->os[0]->standing_token = b->os[1]->standing_token;
	return 0;
}

void bench_ordma_teardown(struct bench *b)
{
	for (int i = 0; i < 2; i++) {
		if (!b->os[i])
			continue;
		if (b->os[i]->o)
			ordma_close(b->os[i]->o);
		if (b->os[i]->standing)
			bench_free(b->os[i]->standing, b->max_len);
		free(b->os[i]);
		b->os[i] = NULL;
	}
	if (b->have_mode)
		sysfs_write(b, "mode", "auto");
}

/* ---- latency --------------------------------------------------------------- */

int bench_ordma_xfer(struct bench *b, int side, unsigned char *buf)
{
	struct bench_ordma *s = b->os[side];
	const struct bench_job *j = &b->job;
	int64_t n = j->len;
	uint64_t token = 0, done = 1;
	struct ordma_cqe *cqe;
	struct ordma_sqe *sqe;
	int64_t res;

	if (j->op == BENCH_SEND) {
		if (side)
			return ordma_recv(s->o, s->chan, buf, n) == n ? 0 : -1;
		return ordma_send(s->o, s->chan, buf, n) == n ? 0 : -1;
	}
	if (side) {
		/* WRITE: a window on this fresh buffer, its token to the writer */
		if (j->op == BENCH_WRITE &&
		    (ordma_expose(s->o, buf, n, ORDMA_ACCESS_REMOTE_WRITE,
				  &s->token) ||
		     ordma_send(s->o, s->chan, &s->token, sizeof(s->token)) !=
		     sizeof(s->token)))
			return -1;
		/* The notification: no bytes. */
		return ordma_recv(s->o, s->chan, &done, sizeof(done)) == 0 ?
		       0 : -1;
	}
	if (j->op == BENCH_PUT)
		token = s->standing_token;
	else if (ordma_recv(s->o, s->chan, &token, sizeof(token)) !=
		 sizeof(token))
		return -1;
	sqe = ordma_get_sqe(s->o);
	if (!sqe)
		return -1;
	ordma_prep_write(sqe, s->chan, buf, n, token, 0, 0);
	sqe->flags |= ORDMA_SQE_NOTIFY;
	if (ordma_submit_and_wait(s->o, &cqe) != 1)
		return -1;
	res = cqe->res;
	ordma_cqe_seen(s->o, cqe);
	return res == n ? 0 : -1;
}

/* Before the timed region: PUT's target is zeroed, as prereg's is. */
void bench_ordma_prepare(struct bench *b, int side)
{
	if (side && b->job.op == BENCH_PUT)
		memset(b->os[1]->standing, 0, b->job.len);
}

unsigned char *bench_ordma_standing_buf(struct bench *b)
{
	return b->os[1]->standing;
}

void bench_ordma_after(struct bench *b, int side, unsigned char *buf)
{
	struct bench_ordma *s = b->os[side];

	if (side && b->job.op == BENCH_WRITE && s->token) {
		ordma_unexpose(s->o, s->token);
		s->token = 0;
	}
}

/* ---- throughput: N channels x M outstanding sends -------------------------- */

struct tput {
	const struct bench *b;
	struct ordma *o;
	uint32_t *chans;
	int nch, depth;
	size_t len;
	long per_chan;		/* messages per channel */
	unsigned char **bufs;	/* [nch * depth] */
	int ret;
};

/* Keep depth operations outstanding on every channel until per_chan each. */
static int tput_loop(struct tput *t, int recv)
{
	long *issued = calloc(t->nch, sizeof(long));
	long left = t->per_chan * t->nch;
	struct ordma_cqe *cqe;
	int ret = 0;

	if (!issued)
		return -ENOMEM;
	for (int c = 0; c < t->nch; c++) {
		for (int d = 0; d < t->depth && issued[c] < t->per_chan; d++) {
			struct ordma_sqe *sqe = ordma_get_sqe(t->o);
			unsigned char *p = t->bufs[c * t->depth + d];

			if (!sqe) {
				free(issued);
				return -EBUSY;
			}
			if (recv)
				ordma_prep_recv(sqe, t->chans[c], p, t->len,
						(uint64_t)c << 32 | d);
			else
				ordma_prep_send(sqe, t->chans[c], p, t->len,
						(uint64_t)c << 32 | d);
			issued[c]++;
		}
	}
	ret = ordma_submit(t->o);
	while (ret >= 0 && left) {
		uint64_t cookie;
		int c, d;

		ret = ordma_wait_cqe(t->o, &cqe);
		if (ret)
			break;
		cookie = cqe->cookie;
		c = cookie >> 32;
		d = cookie & 0xffffffff;
		if (cqe->res != (int64_t)t->len)
			ret = cqe->res < 0 ? (int)cqe->res : -EIO;
		ordma_cqe_seen(t->o, cqe);
		left--;
		if (ret || issued[c] >= t->per_chan)
			continue;
		{
			struct ordma_sqe *sqe = ordma_get_sqe(t->o);
			unsigned char *p = t->bufs[c * t->depth + d];

			if (!sqe) {
				ret = -EBUSY;
				break;
			}
			if (recv)
				ordma_prep_recv(sqe, t->chans[c], p, t->len, cookie);
			else
				ordma_prep_send(sqe, t->chans[c], p, t->len, cookie);
			issued[c]++;
			ret = ordma_submit(t->o);
		}
	}
	free(issued);
	return ret < 0 ? ret : 0;
}

static void *tput_recv_main(void *arg)
{
	struct tput *t = arg;

	t->ret = tput_loop(t, 1);
	return NULL;
}

static unsigned char **tput_bufs(int n, size_t len, int fill)
{
	unsigned char **v = calloc(n, sizeof(*v));

	if (!v)
		bench_die("out of memory");
	for (int i = 0; i < n; i++) {
		v[i] = bench_fresh(len);
		if (fill)
			bench_fill(v[i], len, 1000 + i);
	}
	return v;
}

/*
 * Is receive buffer @i (of channel @i / @depth) what one of that channel's
 * send slots sends? Completions of one channel may come out of submission
 * order (ordma_submit()'s contract), and the sender posts a slot again when
 * its completion comes, so the last message a receive slot took may be
 * any send slot's of the same channel: each slot's bytes are whole or the
 * check fails.
 */
static int tput_check(const unsigned char *buf, size_t len, int i, int depth)
{
	int first = i - i % depth;

	for (int d = 0; d < depth; d++)
		if (!bench_check(buf, len, 1000 + first + d))
			return 1;
	return 0;
}

/*
 * Messages of tput_len from fresh, never registered buffers (one per slot,
 * reused by the slot; each receive buffer is checked once at the end
 * against its channel's send slots, tput_check()). Two hosts: the server
 * receives and reports what it checked; the peer's time runs until that
 * report is in.
 */
int bench_ordma_tput(struct bench *b, struct bench_tput *r)
{
	int nch = b->tput_chans, depth = b->tput_depth, n = nch * depth;
	uint32_t *cch = calloc(nch, sizeof(*cch)), *sch = calloc(nch, sizeof(*sch));
	struct tput snd = { .b = b, .nch = nch, .depth = depth, .len = b->tput_len };
	struct tput rcv;
	size_t total = b->quick ? 32UL << 20 : 128UL << 20;
	struct bench_tput_done done = { .ret = -EIO };
	pthread_t th;
	double t0 = 0, t1 = 0;
	int ret = 0;

	if (!cch || !sch)
		return -ENOMEM;
	snd.per_chan = total / b->tput_len / nch;
	if (snd.per_chan < depth)
		snd.per_chan = depth;
	rcv = snd;
	if (bench_here(b, 0))
		ret = ordma_open(&snd.o, 0);
	if (!ret && bench_here(b, 1))
		ret = ordma_open(&rcv.o, 0);
	if (!ret)
		ret = chans_open(b, b->port + 2, snd.o, cch, rcv.o, sch, nch);
	if (ret)
		goto out;
	snd.chans = cch;
	rcv.chans = sch;
	if (bench_here(b, 0))
		snd.bufs = tput_bufs(n, snd.len, 1);
	if (bench_here(b, 1))
		rcv.bufs = tput_bufs(n, rcv.len, 0);
	if (b->role == ROLE_SERVE) {
		bench_link_put(b, MSG_READY, NULL, 0);
		ret = tput_loop(&rcv, 1);
	} else if (b->role == ROLE_PEER) {
		bench_link_get(b, MSG_READY, NULL, 0);
		t0 = bench_now_us();
		ret = tput_loop(&snd, 0);
		bench_link_get(b, MSG_TPUT_DONE, &done, sizeof(done));
		t1 = bench_now_us();
		if (!ret)
			ret = done.ret;
		r->bytes_ok += done.bytes_ok;
		r->bytes_bad += done.bytes_bad;
	} else {
		if (pthread_create(&th, NULL, tput_recv_main, &rcv)) {
			ret = -EAGAIN;
			goto out;
		}
		t0 = bench_now_us();
		ret = tput_loop(&snd, 0);
		pthread_join(th, NULL);
		t1 = bench_now_us();
		if (!ret)
			ret = rcv.ret;
	}
	if (b->role != ROLE_SERVE)
		r->mbps = (double)snd.per_chan * nch * snd.len / (t1 - t0);
	for (int i = 0; i < n; i++) {
		if (rcv.bufs) {
			if (!ret && tput_check(rcv.bufs[i], rcv.len, i, depth))
				r->bytes_ok += rcv.len;
			else
				r->bytes_bad += rcv.len;
			bench_free(rcv.bufs[i], rcv.len);
		}
		if (snd.bufs)
			bench_free(snd.bufs[i], snd.len);
	}
	free(snd.bufs);
	free(rcv.bufs);
	if (b->role == ROLE_SERVE) {
		done.ret = ret;
		done.bytes_ok = r->bytes_ok;
		done.bytes_bad = r->bytes_bad;
		bench_link_put(b, MSG_TPUT_DONE, &done, sizeof(done));
	}
out:
	if (snd.o)
		ordma_close(snd.o);
	if (rcv.o)
		ordma_close(rcv.o);
	free(cch);
	free(sch);
	return ret;
}

/* ---- fairness: a 4 KiB ping beside a 16 MiB stream ------------------------- */

#define FAIR_LIGHT	4096
#define FAIR_HEAVY	(16UL << 20)

struct flow {
	struct ordma *o;
	uint32_t chan;
	int pings;		/* light: round trips */
	int stop;		/* heavy sender: finish now (atomic) */
	long msgs;
	int bad;
	int ret;
};

static void *light_echo_main(void *arg)
{
	struct flow *f = arg;
	unsigned char *p = bench_fresh(FAIR_LIGHT);

	for (int i = 0; i < f->pings && !f->ret; i++) {
		if (ordma_recv(f->o, f->chan, p, FAIR_LIGHT) != FAIR_LIGHT ||
		    ordma_send(f->o, f->chan, p, FAIR_LIGHT) != FAIR_LIGHT)
			f->ret = -1;
	}
	bench_free(p, FAIR_LIGHT);
	return NULL;
}

static void *heavy_send_main(void *arg)
{
	struct flow *f = arg;
	unsigned char *p = bench_fresh(FAIR_HEAVY);
	char end = 0;

	bench_fill(p, FAIR_HEAVY, 7);
	while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED) && !f->ret) {
		if (ordma_send(f->o, f->chan, p, FAIR_HEAVY) != (int64_t)FAIR_HEAVY)
			f->ret = -1;
		f->msgs++;
	}
	if (!f->ret && ordma_send(f->o, f->chan, &end, 1) != 1)
		f->ret = -1;
	bench_free(p, FAIR_HEAVY);
	return NULL;
}

static void *heavy_recv_main(void *arg)
{
	struct flow *f = arg;
	unsigned char *p = bench_fresh(FAIR_HEAVY);
	int64_t n;

	for (;;) {
		n = ordma_recv(f->o, f->chan, p, FAIR_HEAVY);
		if (n == 1)
			break;
		if (n != (int64_t)FAIR_HEAVY) {
			f->ret = -1;
			break;
		}
		f->msgs++;
		f->bad += bench_check(p, FAIR_HEAVY, 7) != 0;
	}
	bench_free(p, FAIR_HEAVY);
	return NULL;
}

/*
 * One phase: pings round trips of the light flow, heavy flow on or off.
 * Two hosts: the peer asks the server (MSG_PHASE) to echo and, with the
 * heavy flow, to receive it, with chan_quota_chunks at @quota (-1: as it
 * is), and learns from MSG_PHASE_DONE what its ends saw.
 */
static int fair_phase(struct bench *b, struct flow *lc, struct flow *ls,
		      struct flow *hs, struct flow *hr, int heavy,
		      long long quota, struct bench_fair *out)
{
	struct bench_summary *s = &out->s;
	double t_start = bench_now_us();
	unsigned char *p = bench_fresh(FAIR_LIGHT);
	double *t = calloc(lc->pings, sizeof(*t));
	int local = b->role == ROLE_LOOP;
	pthread_t le, hst, hrt;
	int ret = 0;

	if (!t)
		return -ENOMEM;
	ls->pings = lc->pings;
	if (!local) {
		struct bench_phase ph = {
			.heavy = heavy, .pings = lc->pings, .quota = quota,
		};

		bench_link_put(b, MSG_PHASE, &ph, sizeof(ph));
		bench_link_get(b, MSG_READY, NULL, 0);
	} else if (pthread_create(&le, NULL, light_echo_main, ls)) {
		return -EAGAIN;
	}
	if (heavy) {
		hs->stop = 0;
		hs->msgs = 0;
		hr->msgs = 0;
		if ((local && pthread_create(&hrt, NULL, heavy_recv_main, hr)) ||
		    pthread_create(&hst, NULL, heavy_send_main, hs))
			return -EAGAIN;
		/* let the stream get going before the first ping */
		usleep(200000);
	}
	for (int i = 0; i < lc->pings && !ret; i++) {
		double t0;

		bench_fill(p, FAIR_LIGHT, i);
		t0 = bench_now_us();
		if (ordma_send(lc->o, lc->chan, p, FAIR_LIGHT) != FAIR_LIGHT ||
		    ordma_recv(lc->o, lc->chan, p, FAIR_LIGHT) != FAIR_LIGHT)
			ret = -1;
		t[i] = (bench_now_us() - t0) / 2;
		if (!ret && bench_check(p, FAIR_LIGHT, i))
			ret = -EIO;
	}
	if (local)
		pthread_join(le, NULL);
	if (heavy) {
		__atomic_store_n(&hs->stop, 1, __ATOMIC_RELAXED);
		pthread_join(hst, NULL);
		if (local)
			pthread_join(hrt, NULL);
	}
	if (!local) {
		struct bench_phase_done d;

		bench_link_get(b, MSG_PHASE_DONE, &d, sizeof(d));
		hr->msgs = d.msgs;
		hr->bad = d.bad;
		hr->ret = d.ret;
		ls->ret = d.ret;
	}
	if (heavy) {
		out->heavy_mbps = hr->msgs * (double)FAIR_HEAVY /
				  (bench_now_us() - t_start);
		if (hs->ret || hr->ret || hr->bad)
			ret = -EIO;
	}
	if (ls->ret)
		ret = -EIO;
	bench_summarise(t, lc->pings, s);
	free(t);
	bench_free(p, FAIR_LIGHT);
	return ret;
}

/*
 * Server: the echo and the heavy flow's receiver, phase by phase as the
 * peer asks, with the quota it names; the knob restored at the end.
 */
static int fair_serve(struct bench *b, struct flow *ls, struct flow *hr)
{
	long long quota = 0;
	char val[32];
	int ret = 0;

	if (sysfs_read(b, "chan_quota_chunks", &quota))
		return -ENOENT;
	for (;;) {
		struct bench_phase ph;
		struct bench_phase_done d = { 0 };
		pthread_t le, hrt;
		size_t n;
		int type = bench_link_next(b, &ph, sizeof(ph), &n);

		if (type == MSG_FAIR_END)
			break;
		if (type != MSG_PHASE || n != sizeof(ph))
			bench_die("out of step with the peer: message %d in the fairness run",
				  type);
		if (ph.quota >= 0) {
			snprintf(val, sizeof(val), "%lld", ph.quota);
			if (sysfs_write(b, "chan_quota_chunks", val))
				bench_die("cannot set chan_quota_chunks");
		}
		ls->pings = ph.pings;
		ls->ret = 0;
		hr->msgs = 0;
		hr->bad = 0;
		hr->ret = 0;
		if (pthread_create(&le, NULL, light_echo_main, ls) ||
		    (ph.heavy && pthread_create(&hrt, NULL, heavy_recv_main, hr)))
			bench_die("pthread_create");
		bench_link_put(b, MSG_READY, NULL, 0);
		pthread_join(le, NULL);
		if (ph.heavy)
			pthread_join(hrt, NULL);
		d.ret = ls->ret ? ls->ret : hr->ret;
		d.bad = hr->bad;
		d.msgs = hr->msgs;
		ret = ret ? ret : d.ret;
		bench_link_put(b, MSG_PHASE_DONE, &d, sizeof(d));
	}
	snprintf(val, sizeof(val), "%lld", quota);
	sysfs_write(b, "chan_quota_chunks", val);
	return ret;
}

int bench_ordma_fair(struct bench *b)
{
	struct flow lc = { 0 }, ls = { 0 }, hs = { 0 }, hr = { 0 };
	long long quota = 0, total = 0;
	int ret = 0;
	char val[32];

	lc.pings = b->quick ? 40 : 200;
	if (b->role != ROLE_SERVE &&
	    (sysfs_read(b, "chan_quota_chunks", &quota) ||
	     sysfs_read(b, "chunks_total", &total)))
		return -ENOENT;
	b->fair_quota[0] = total;
	b->fair_quota[1] = quota < total ? quota : total / 4;
	if (b->role == ROLE_PEER)
		bench_link_put(b, MSG_FAIR, NULL, 0);
	if (bench_here(b, 0)) {
		ret = ordma_open(&lc.o, 0);
		if (!ret)
			ret = ordma_open(&hs.o, 0);
	}
	if (!ret && bench_here(b, 1)) {
		ret = ordma_open(&ls.o, 0);
		if (!ret)
			ret = ordma_open(&hr.o, 0);
	}
	if (!ret)
		ret = chans_open(b, b->port + 3, lc.o, &lc.chan, ls.o, &ls.chan, 1);
	if (!ret)
		ret = chans_open(b, b->port + 4, hs.o, &hs.chan, hr.o, &hr.chan, 1);
	if (ret)
		goto out;
	if (b->role == ROLE_SERVE) {
		ret = fair_serve(b, &ls, &hr);
		goto out;
	}
	b->nfair = 0;
	snprintf(b->fair[0].name, sizeof(b->fair[0].name), "idle");
	ret = fair_phase(b, &lc, &ls, &hs, &hr, 0, -1, &b->fair[0]);
	for (int q = 0; q < 2 && !ret; q++) {
		struct bench_fair *f = &b->fair[1 + q];

		snprintf(val, sizeof(val), "%d", b->fair_quota[q]);
		if (sysfs_write(b, "chan_quota_chunks", val)) {
			ret = -EIO;
			break;
		}
		snprintf(f->name, sizeof(f->name), "heavy, quota %d%s",
			 b->fair_quota[q], q ? "" : " (none)");
		ret = fair_phase(b, &lc, &ls, &hs, &hr, 1, b->fair_quota[q], f);
	}
	if (b->role == ROLE_PEER)
		bench_link_put(b, MSG_FAIR_END, NULL, 0);
	if (!ret)
		b->nfair = 3;
	snprintf(val, sizeof(val), "%lld", quota);
	sysfs_write(b, "chan_quota_chunks", val);
out:
	if (lc.o)
		ordma_close(lc.o);
	if (ls.o)
		ordma_close(ls.o);
	if (hs.o)
		ordma_close(hs.o);
	if (hr.o)
		ordma_close(hr.o);
	return ret;
}
