// SPDX-License-Identifier: GPL-2.0
/*
 * The rdma-core baselines: prereg, regper, bounce, thresh, pipeline,
 * uoverlap and rcache, all over the same two RC connections made with RDMA
 * CM.
 *
 * Each side (0 sends, 1 receives) has one PD, one CQ with a completion
 * channel, and two QPs: "ctrl" carries small messages (READY: this range of
 * the receiver's buffer is registered, here is its address and rkey; for
 * messages it also means a receive is posted for it) and "data" carries the
 * payload. Only a side's main thread polls its CQ; a uoverlap helper thread
 * registers, posts and sends READY itself (rdma-core's posting calls are
 * thread-safe).
 *
 * A transfer follows a plan both sides derive from the strategy and size:
 * a head of @head bytes goes through the pre-registered bounce buffers in
 * pieces of @piece bytes (copied in on the sender, out on the receiver), the
 * rest zero-copy in @nfrag fragments registered inline, by the helper, or
 * not at all (prereg: both buffers registered at start-up), or looked up in
 * the side's registration cache (rcache, below). RDMA WRITE ends
 * with an immediate (on the single op, or a zero-byte write after several),
 * which is what the receiver waits for; messages end when every posted
 * receive has completed. A PUT is a WRITE whose target is the receiver's
 * pre-registered buffer, known since set-up: only the sender's plan
 * differs by strategy (no READY, no copy out). Receives for the bounce
 * pieces and the prereg buffer are posted before the timed region, as a
 * real receiver keeps them posted; receives for buffers registered per
 * transfer are posted inside it.
 *
 * Two hosts: each process has its own side only; the server listens and
 * says so over the link (MSG_READY), the peer connects, and the two trade
 * their pre-registered buffers' addresses and rkeys over the link.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include "bench.h"

#define NCTRL		1024	/* ctrl receive slots, and as many send slots */
#define DATA_DEPTH	4096
#define CQ_DEPTH	(2 * NCTRL + 2 * DATA_DEPTH)
#define MAX_PIECES	1024

enum { READY = 1 };

struct ctrl_msg {
	uint32_t type;
	uint32_t k;		/* fragment */
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
	uint64_t __pad;
};

/* wr_id: tag in the top byte, an index below. */
enum { T_CRECV = 1, T_CSEND, T_DSEND, T_DRECV };
#define WR(tag, idx)	(((uint64_t)(tag) << 56) | (uint64_t)(idx))
#define WR_TAG(id)	((int)((id) >> 56))
#define WR_IDX(id)	((id) & ((1ULL << 56) - 1))
/* T_DSEND / T_DRECV indices: head piece i, fragment k, the immediate */
#define IDX_PIECE(i)	((uint64_t)(i))
#define IDX_FRAG(k)	((1ULL << 40) | (uint64_t)(k))
#define IDX_IMM		(2ULL << 40)

enum { REG_COPY, REG_PRE, REG_INLINE, REG_HELPER, REG_CACHE };

struct plan {
	size_t len, head, piece, frag;
	int npieces, nfrag;
	int reg;
	int inflight;
};

enum { H_IDLE, H_REG, H_DEREG, H_QUIT };

struct helper {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int job;			/* H_*, under lock */
	void *addr;
	size_t len;
	int access;
	enum bench_op op;
	struct ibv_mr *mr;
	int ready;			/* atomic: 1 registered, -1 failed */
};

/* One registration rcache keeps: the range it was made for, when last used. */
struct rcache_ent {
	uintptr_t addr;
	size_t len;
	struct ibv_mr *mr;
	unsigned long used;
};

struct bench_verbs {
	int side;
	struct bench *b;
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listen, *ctrl, *data;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	int armed;
	struct ctrl_msg *cmsg;		/* NCTRL receive slots, then NCTRL send */
	struct ibv_mr *cmsg_mr;
	unsigned int csend;		/* atomic: next send slot */
	unsigned char *pre, *bnc;	/* max_len each, registered once */
	struct ibv_mr *pre_mr, *bnc_mr;
	unsigned char *zbuf;		/* target of zero-byte receives */
	struct ibv_mr *zmr;
	/* the peer's pre-registered buffers (exchanged at set-up) */
	uint64_t peer_pre, peer_bnc;
	uint32_t peer_pre_rkey, peer_bnc_rkey;

	/* per transfer */
	struct plan p;
	unsigned char *buf;		/* fresh application buffer */
	int nfrag_max;
	struct ctrl_msg *ready;		/* sender: READY per fragment */
	int *ready_ok;
	struct ibv_mr **frag_mr;	/* inline registrations per fragment */
	unsigned long dposted, ddone;	/* data sends posted / completed */
	unsigned long rwant, rdone;	/* data receives awaited / done */
	int err;
	struct helper h;

	/* rcache: this side's main thread alone */
	struct rcache_ent rc[BENCH_RCACHE];
	int nrc;
	unsigned long rc_clock;
};

static size_t min_sz(size_t a, size_t b)
{
	return a < b ? a : b;
}

static void plan_of(const struct bench_job *j, struct plan *p)
{
	enum bench_kind kind = j->run->kind;
	size_t n = j->len;

	memset(p, 0, sizeof(*p));
	p->len = n;
	p->inflight = 1;
	if (kind == K_THRESH)
		kind = n >= j->thresh ? K_REGPER : K_BOUNCE;
	switch (kind) {
	case K_PREREG:
		p->frag = n;
		p->nfrag = 1;
		p->reg = REG_PRE;
		break;
	case K_BOUNCE:
		p->head = n;
		p->piece = n;
		p->reg = REG_COPY;
		break;
	case K_REGPER:
		p->frag = n;
		p->nfrag = 1;
		p->reg = REG_INLINE;
		break;
	case K_RCACHE:
		p->frag = n;
		p->nfrag = 1;
		p->reg = REG_CACHE;
		break;
	case K_PIPELINE:
		p->frag = BENCH_FRAG;
		p->nfrag = (n + BENCH_FRAG - 1) / BENCH_FRAG;
		p->reg = REG_INLINE;
		p->inflight = BENCH_INFLIGHT;
		break;
	case K_UOVERLAP:
	default:
		p->head = (n / j->run->arg) & ~4095UL;
		p->piece = BENCH_PIECE;
		if (p->head / p->piece >= MAX_PIECES)
			p->piece = (p->head / MAX_PIECES + 4095) & ~4095UL;
		p->frag = n - p->head;
		p->nfrag = p->frag ? 1 : 0;
		p->reg = REG_HELPER;
		break;
	}
	if (p->head)
		p->npieces = (p->head + p->piece - 1) / p->piece;
}

/* ---- rcache ---------------------------------------------------------------- */

/*
 * What a library that keeps registrations and installs no memory hooks
 * does: an entry whose range covers [addr, addr + len) is used again, for
 * whatever the application did with that memory since (freed it, unmapped
 * it, mapped something new there: the MR still holds the pages it pinned
 * then); a miss registers exactly that range, for every access so that one
 * entry serves sends, receives and writes, and when the cache is full the
 * least recently used entry is deregistered first. Nothing is ever
 * invalidated.
 */
static struct ibv_mr *rcache_get(struct bench_verbs *v, void *addr, size_t len)
{
	struct bench_rcache *st = &v->b->rcache[v->side];
	uintptr_t a = (uintptr_t)addr;
	struct rcache_ent *e, *lru = NULL;

	v->rc_clock++;
	for (int i = 0; i < v->nrc; i++) {
		e = &v->rc[i];
		if (e->addr <= a && a + len <= e->addr + e->len) {
			e->used = v->rc_clock;
			st->hits++;
			return e->mr;
		}
		if (!lru || e->used < lru->used)
			lru = e;
	}
	st->misses++;
	if (v->nrc < BENCH_RCACHE) {
		lru = &v->rc[v->nrc++];
	} else {
		st->evictions++;
		if (ibv_dereg_mr(lru->mr))
			return NULL;
	}
	lru->addr = a;
	lru->len = len;
	lru->used = v->rc_clock;
	lru->mr = ibv_reg_mr(v->pd, addr, len, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!lru->mr) {
		*lru = v->rc[--v->nrc];
		return NULL;
	}
	return lru->mr;
}

static void rcache_drop(struct bench_verbs *v)
{
	for (int i = 0; i < v->nrc; i++)
		ibv_dereg_mr(v->rc[i].mr);
	v->nrc = 0;
}

/* ---- completions --------------------------------------------------------- */

static int post_crecv(struct bench_verbs *v, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&v->cmsg[slot], .length = sizeof(struct ctrl_msg),
		.lkey = v->cmsg_mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = WR(T_CRECV, slot), .sg_list = &sge, .num_sge = 1,
	}, *bad;

	return ibv_post_recv(v->ctrl->qp, &wr, &bad);
}

static int send_ready(struct bench_verbs *v, int k, void *addr, size_t len,
		      uint32_t rkey)
{
	unsigned int slot = NCTRL + __atomic_fetch_add(&v->csend, 1, __ATOMIC_RELAXED) % NCTRL;
	struct ctrl_msg *m = &v->cmsg[slot];
	struct ibv_sge sge = {
		.addr = (uintptr_t)m, .length = sizeof(*m), .lkey = v->cmsg_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = WR(T_CSEND, slot), .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	m->type = READY;
	m->k = k;
	m->addr = (uintptr_t)addr;
	m->len = len;
	m->rkey = rkey;
	return ibv_post_send(v->ctrl->qp, &wr, &bad);
}

static int post_drecv(struct bench_verbs *v, uint64_t idx, void *addr,
		      size_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = {
		.wr_id = WR(T_DRECV, idx), .sg_list = len ? &sge : NULL,
		.num_sge = len ? 1 : 0,
	}, *bad;

	return ibv_post_recv(v->data->qp, &wr, &bad);
}

static int post_op(struct bench_verbs *v, enum bench_op op, uint64_t idx,
		   void *laddr, size_t len, uint32_t lkey, uint64_t raddr,
		   uint32_t rkey, int imm)
{
	struct ibv_sge sge = { .addr = (uintptr_t)laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = WR(T_DSEND, idx), .sg_list = len ? &sge : NULL,
		.num_sge = len ? 1 : 0, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op != BENCH_SEND) {
		wr.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
		wr.imm_data = htonl(1);
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	} else {
		wr.opcode = IBV_WR_SEND;
	}
	if (ibv_post_send(v->data->qp, &wr, &bad))
		return -1;
	v->dposted++;
	return 0;
}

static int handle_wc(struct bench_verbs *v, const struct ibv_wc *wc)
{
	uint64_t idx = WR_IDX(wc->wr_id);
	const struct plan *p = &v->p;

	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "ordma-bench: side %d: completion %s (tag %d)\n",
			v->side, ibv_wc_status_str(wc->status), WR_TAG(wc->wr_id));
		v->err = -1;
		return -1;
	}
	switch (WR_TAG(wc->wr_id)) {
	case T_CRECV: {
		const struct ctrl_msg *m = &v->cmsg[idx];

		if (m->type == READY && (int)m->k < v->nfrag_max) {
			v->ready[m->k] = *m;
			v->ready_ok[m->k] = 1;
		}
		return post_crecv(v, idx);
	}
	case T_CSEND:
		return 0;
	case T_DSEND:
		v->ddone++;
		if ((idx & IDX_FRAG(0)) && p->reg == REG_INLINE) {
			int k = idx & 0xffffffff;

			if (v->frag_mr[k] && ibv_dereg_mr(v->frag_mr[k]))
				return -1;
			v->frag_mr[k] = NULL;
		}
		return 0;
	case T_DRECV:
		v->rdone++;
		if (idx == IDX_IMM || !(idx & IDX_FRAG(0))) {
			if (idx != IDX_IMM && p->head) {	/* a head piece */
				size_t off = idx * p->piece;

				memcpy(v->buf + off, v->bnc + off,
				       min_sz(p->piece, p->head - off));
			}
			return 0;
		}
		if (p->reg == REG_INLINE) {
			int k = idx & 0xffffffff;

			if (v->frag_mr[k] && ibv_dereg_mr(v->frag_mr[k]))
				return -1;
			v->frag_mr[k] = NULL;
		}
		return 0;
	}
	return 0;
}

/* One completion, handled; blocks on the completion channel if none. */
static int wait_one(struct bench_verbs *v, int block)
{
	struct ibv_wc wc;
	struct ibv_cq *cq;
	void *ctx;
	int n;

	for (;;) {
		n = ibv_poll_cq(v->cq, 1, &wc);
		if (n < 0)
			return -1;
		if (n)
			return handle_wc(v, &wc) ? -1 : 1;
		if (!block)
			return 0;
		if (!v->armed) {
			if (ibv_req_notify_cq(v->cq, 0))
				return -1;
			v->armed = 1;
			continue;
		}
		if (ibv_get_cq_event(v->ch, &cq, &ctx))
			return -1;
		ibv_ack_cq_events(cq, 1);
		v->armed = 0;
	}
}

/* ---- the uoverlap helper ------------------------------------------------- */

static void *helper_main(void *arg)
{
	struct bench_verbs *v = arg;
	struct helper *h = &v->h;
	struct ibv_mr *mr;
	int ok;

	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (h->job == H_IDLE)
			pthread_cond_wait(&h->cond, &h->lock);
		if (h->job == H_QUIT)
			break;
		pthread_mutex_unlock(&h->lock);
		if (h->job == H_REG) {
			mr = ibv_reg_mr(v->pd, h->addr, h->len, h->access);
			ok = mr ? 1 : -1;
			h->mr = mr;
			/* the receiver's tail: post its receive, then tell */
			if (mr && v->side == 1 &&
			    ((h->op == BENCH_SEND &&
			      post_drecv(v, IDX_FRAG(0), h->addr, h->len, mr->lkey)) ||
			     send_ready(v, 0, h->addr, h->len, mr->rkey)))
				ok = -1;
			__atomic_store_n(&h->ready, ok, __ATOMIC_RELEASE);
		} else {
			if (h->mr)
				ibv_dereg_mr(h->mr);
			h->mr = NULL;
		}
		pthread_mutex_lock(&h->lock);
		h->job = H_IDLE;
		pthread_cond_broadcast(&h->cond);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static void helper_submit(struct bench_verbs *v, int job)
{
	struct helper *h = &v->h;

	pthread_mutex_lock(&h->lock);
	while (h->job != H_IDLE)
		pthread_cond_wait(&h->cond, &h->lock);
	if (job == H_REG)
		h->ready = 0;
	h->job = job;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

static void helper_idle(struct bench_verbs *v)
{
	struct helper *h = &v->h;

	pthread_mutex_lock(&h->lock);
	while (h->job != H_IDLE)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
}

/* ---- one transfer, each side --------------------------------------------- */

static int frag_bounds(const struct plan *p, int k, size_t *off, size_t *len)
{
	*off = p->head + (size_t)k * p->frag;
	*len = min_sz(p->frag, p->len - *off);
	return 0;
}

/* Sender: the zero-copy fragment k, once registered here and there. */
static int send_frag(struct bench_verbs *v, enum bench_op op, unsigned char *src,
		     int k, int imm)
{
	const struct plan *p = &v->p;
	uint64_t raddr = 0;
	uint32_t lkey, rkey = 0;
	size_t off, len;

	frag_bounds(p, k, &off, &len);
	switch (p->reg) {
	case REG_PRE:
		lkey = v->pre_mr->lkey;
		raddr = v->peer_pre + off;
		rkey = v->peer_pre_rkey;
		break;
	case REG_INLINE:
		while (v->dposted - v->ddone >= (unsigned long)p->inflight)
			if (wait_one(v, 1) < 0)
				return -1;
		v->frag_mr[k] = ibv_reg_mr(v->pd, src + off, len, 0);
		if (!v->frag_mr[k])
			return -1;
		lkey = v->frag_mr[k]->lkey;
		break;
	case REG_CACHE: {
		struct ibv_mr *mr = rcache_get(v, src + off, len);

		if (!mr)
			return -1;
		lkey = mr->lkey;
		break;
	}
	default:
		helper_idle(v);
		if (v->h.ready < 0)
			return -1;
		lkey = v->h.mr->lkey;
		break;
	}
	if (op == BENCH_PUT) {
		raddr = v->peer_pre + off;
		rkey = v->peer_pre_rkey;
	} else if (p->reg != REG_PRE) {
		while (!v->ready_ok[k])
			if (wait_one(v, 1) < 0)
				return -1;
		raddr = v->ready[k].addr;
		rkey = v->ready[k].rkey;
	}
	return post_op(v, op, IDX_FRAG(k), src + off, len, lkey, raddr, rkey, imm);
}

static int send_side(struct bench_verbs *v, const struct bench_job *j,
		     unsigned char *buf)
{
	const struct plan *p = &v->p;
	unsigned char *src = p->reg == REG_PRE ? v->pre : buf;
	int single = p->npieces + p->nfrag == 1;
	int imm = j->op != BENCH_SEND && single;
	int put = j->op == BENCH_PUT;
	int next = 0;

	if (p->reg == REG_HELPER && p->nfrag) {
		v->h.addr = src + p->head;
		v->h.len = p->len - p->head;
		v->h.access = 0;
		v->h.op = j->op;
		helper_submit(v, H_REG);
	}
	for (int i = 0; i < p->npieces; i++) {
		size_t off = i * p->piece, len = min_sz(p->piece, p->head - off);

		memcpy(v->bnc + off, src + off, len);
		if (post_op(v, j->op, IDX_PIECE(i), v->bnc + off, len,
			    v->bnc_mr->lkey,
			    (put ? v->peer_pre : v->peer_bnc) + off,
			    put ? v->peer_pre_rkey : v->peer_bnc_rkey, imm))
			return -1;
		/* WRITE: the tail may overtake the head once both ends are ready */
		if (j->op != BENCH_SEND && p->reg == REG_HELPER && next < p->nfrag) {
			while (wait_one(v, 0) > 0)
				;
			if (v->err)
				return -1;
			if (__atomic_load_n(&v->h.ready, __ATOMIC_ACQUIRE) &&
			    (put || v->ready_ok[0])) {
				if (send_frag(v, j->op, src, 0, 0))
					return -1;
				next = 1;
			}
		}
	}
	for (; next < p->nfrag; next++)
		if (send_frag(v, j->op, src, next, imm))
			return -1;
	if (j->op != BENCH_SEND && !single &&
	    post_op(v, j->op, IDX_IMM, NULL, 0, 0, 0, 0, 1))
		return -1;
	while (v->ddone < v->dposted)
		if (wait_one(v, 1) < 0)
			return -1;
	return v->err;
}

static int recv_side(struct bench_verbs *v, const struct bench_job *j,
		     unsigned char *buf)
{
	const struct plan *p = &v->p;
	unsigned char *dst = p->reg == REG_PRE ? v->pre : buf;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	if (j->op == BENCH_PUT) {	/* into the standing buffer */
		while (v->rdone < v->rwant)
			if (wait_one(v, 1) < 0)
				return -1;
		return v->err;
	}
	if (p->reg == REG_HELPER && p->nfrag) {
		v->h.addr = dst + p->head;
		v->h.len = p->len - p->head;
		v->h.access = access;
		v->h.op = j->op;
		helper_submit(v, H_REG);
	}
	if (p->reg == REG_INLINE || p->reg == REG_CACHE) {
		for (int k = 0; k < p->nfrag; k++) {
			size_t off, len;
			struct ibv_mr *mr;

			frag_bounds(p, k, &off, &len);
			mr = p->reg == REG_CACHE ? rcache_get(v, dst + off, len) :
			     ibv_reg_mr(v->pd, dst + off, len, access);
			if (!mr)
				return -1;
			if (p->reg == REG_INLINE)	/* rcache keeps its own */
				v->frag_mr[k] = mr;
			if (j->op == BENCH_SEND &&
			    post_drecv(v, IDX_FRAG(k), dst + off, len, mr->lkey))
				return -1;
			if (send_ready(v, k, dst + off, len, mr->rkey))
				return -1;
			while (wait_one(v, 0) > 0)
				;
			if (v->err)
				return -1;
		}
	}
	while (v->rdone < v->rwant)
		if (wait_one(v, 1) < 0)
			return -1;
	if (j->op == BENCH_WRITE) {
		if (p->head)
			memcpy(dst, v->bnc, p->head);
		for (int k = 0; p->reg == REG_INLINE && k < p->nfrag; k++) {
			if (v->frag_mr[k] && ibv_dereg_mr(v->frag_mr[k]))
				return -1;
			v->frag_mr[k] = NULL;
		}
	}
	if (p->reg == REG_HELPER && p->nfrag && v->h.ready < 0)
		return -1;
	return v->err;
}

/* Before the timed region: plan, reset, post the receives kept posted. */
void bench_verbs_prepare(struct bench *b, int side)
{
	struct bench_verbs *v = b->vs[side];
	const struct bench_job *j = &b->job;
	struct plan *p = &v->p;

	plan_of(j, p);
	if (p->nfrag > v->nfrag_max)
		bench_die("too many fragments");
	memset(v->ready_ok, 0, v->nfrag_max * sizeof(*v->ready_ok));
	v->dposted = 0;
	v->ddone = 0;
	v->rdone = 0;
	v->rwant = 0;
	v->err = 0;
	v->h.ready = 0;
	if (side == 0) {
		if (p->reg == REG_PRE)
			bench_fill(v->pre, p->len, j->seed);
		return;
	}
	if (p->reg == REG_PRE || j->op == BENCH_PUT)
		memset(v->pre, 0, p->len);
	if (j->op != BENCH_SEND) {
		v->rwant = 1;
		if (post_drecv(v, IDX_IMM, NULL, 0, 0))
			v->err = -1;
		return;
	}
	if (p->reg == REG_PRE) {
		v->rwant = 1;
		if (post_drecv(v, IDX_FRAG(0), v->pre, p->len, v->pre_mr->lkey))
			v->err = -1;
		return;
	}
	for (int i = 0; i < p->npieces; i++) {
		size_t off = i * p->piece;

		if (post_drecv(v, IDX_PIECE(i), v->bnc + off,
			       min_sz(p->piece, p->head - off), v->bnc_mr->lkey))
			v->err = -1;
	}
	v->rwant = p->npieces + p->nfrag;
}

int bench_verbs_xfer(struct bench *b, int side, unsigned char *buf)
{
	struct bench_verbs *v = b->vs[side];

	if (v->err)
		return -1;
	v->buf = buf;
	return side ? recv_side(v, &b->job, buf) : send_side(v, &b->job, buf);
}

/* After the timed region: the helper deregisters, inline leftovers go. */
void bench_verbs_after(struct bench *b, int side)
{
	struct bench_verbs *v = b->vs[side];

	if (v->p.reg == REG_HELPER && v->p.nfrag) {
		helper_idle(v);
		helper_submit(v, H_DEREG);
		helper_idle(v);
	}
	for (int k = 0; k < v->nfrag_max; k++) {
		if (v->frag_mr[k])
			ibv_dereg_mr(v->frag_mr[k]);
		v->frag_mr[k] = NULL;
	}
	/* a failed transfer leaves receives posted: drain what completes */
	while (!v->err && wait_one(v, 0) > 0)
		;
}

unsigned char *bench_verbs_prereg_buf(struct bench *b, int side)
{
	return b->vs[side]->pre;
}

/* ---- set-up --------------------------------------------------------------- */

static int cm_wait(struct rdma_event_channel *ec, enum rdma_cm_event_type want,
		   struct rdma_cm_id **id)
{
	struct rdma_cm_event *e;

	if (rdma_get_cm_event(ec, &e))
		return -1;
	if (e->event != want) {
		fprintf(stderr, "ordma-bench: RDMA CM: %s, wanted %s (status %d)\n",
			rdma_event_str(e->event), rdma_event_str(want), e->status);
		rdma_ack_cm_event(e);
		return -1;
	}
	if (id)
		*id = e->id;
	rdma_ack_cm_event(e);
	return 0;
}

static void *reg_big(struct bench_verbs *v, size_t len, struct ibv_mr **mr)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		bench_die("mmap %zu bytes: %s", len, strerror(errno));
	*mr = ibv_reg_mr(v->pd, p, len, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	if (!*mr)
		bench_die("ibv_reg_mr %zu bytes: %s", len, strerror(errno));
	return p;
}

/*
 * PD, CQ, buffers: once per side, on the device of its first CM id, before
 * any connection request: a passive side that takes long between the
 * request and rdma_accept() gets a connection that looks established but
 * carries nothing the other way.
 */
static int side_init(struct bench_verbs *v, struct ibv_context *ctx)
{
	struct bench *b = v->b;

	if (strcmp(ibv_get_device_name(ctx->device), b->ibdev)) {
		fprintf(stderr, "ordma-bench: %s is on %s, not %s\n", b->addr,
			ibv_get_device_name(ctx->device), b->ibdev);
		return -1;
	}
	v->pd = ibv_alloc_pd(ctx);
	v->ch = ibv_create_comp_channel(ctx);
	if (!v->pd || !v->ch)
		return -1;
	v->cq = ibv_create_cq(ctx, CQ_DEPTH, NULL, v->ch, 0);
	if (!v->cq)
		return -1;
	v->cmsg = calloc(2 * NCTRL, sizeof(*v->cmsg));
	if (!v->cmsg)
		return -1;
	v->cmsg_mr = ibv_reg_mr(v->pd, v->cmsg, 2 * NCTRL * sizeof(*v->cmsg),
				IBV_ACCESS_LOCAL_WRITE);
	if (!v->cmsg_mr)
		return -1;
	v->pre = reg_big(v, b->max_len, &v->pre_mr);
	v->bnc = reg_big(v, b->max_len, &v->bnc_mr);
	v->nfrag_max = b->max_len / BENCH_FRAG + 2;
	v->ready = calloc(v->nfrag_max, sizeof(*v->ready));
	v->ready_ok = calloc(v->nfrag_max, sizeof(*v->ready_ok));
	v->frag_mr = calloc(v->nfrag_max, sizeof(*v->frag_mr));
	if (!v->ready || !v->ready_ok || !v->frag_mr)
		return -1;
	pthread_mutex_init(&v->h.lock, NULL);
	pthread_cond_init(&v->h.cond, NULL);
	return pthread_create(&v->h.th, NULL, helper_main, v) ? -1 : 0;
}

static int make_qp(struct bench_verbs *v, struct rdma_cm_id *id, int ctrl)
{
	struct ibv_qp_init_attr a = {
		.send_cq = v->cq, .recv_cq = v->cq, .qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = ctrl ? NCTRL : DATA_DEPTH,
			.max_recv_wr = ctrl ? NCTRL : DATA_DEPTH,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
	};

	if (rdma_create_qp(id, v->pd, &a))
		return -1;
	if (ctrl) {
		v->ctrl = id;
		for (unsigned int i = 0; i < NCTRL; i++)
			if (post_crecv(v, i))
				return -1;
	} else {
		v->data = id;
	}
	return 0;
}

/* The pre-registered buffers of a side, as the other side needs them. */
struct keys {
	uint64_t pre, bnc;
	uint32_t pre_rkey, bnc_rkey;
};

/* Two hosts: this host's side of the two connections, then the keys. */
static int setup_split(struct bench *b, struct sockaddr_in *sa,
		       struct rdma_conn_param *cp)
{
	struct bench_verbs *v = b->vs[b->role == ROLE_SERVE];
	struct keys mine, theirs;
	struct rdma_cm_id *id;

	if (b->role == ROLE_SERVE) {
		if (rdma_create_id(v->ec, &v->listen, NULL, RDMA_PS_TCP) ||
		    rdma_bind_addr(v->listen, (struct sockaddr *)sa) ||
		    rdma_listen(v->listen, 4) || side_init(v, v->listen->verbs)) {
			fprintf(stderr, "ordma-bench: RDMA CM listen on %s:%u: %s\n",
				b->addr, b->port, strerror(errno));
			return -1;
		}
		bench_link_put(b, MSG_READY, NULL, 0);
		for (int ctrl = 1; ctrl >= 0; ctrl--)
			if (cm_wait(v->ec, RDMA_CM_EVENT_CONNECT_REQUEST, &id) ||
			    make_qp(v, id, ctrl) || rdma_accept(id, cp) ||
			    cm_wait(v->ec, RDMA_CM_EVENT_ESTABLISHED, NULL))
				return -1;
	} else {
		bench_link_get(b, MSG_READY, NULL, 0);
		for (int ctrl = 1; ctrl >= 0; ctrl--)
			if (rdma_create_id(v->ec, &id, NULL, RDMA_PS_TCP) ||
			    rdma_resolve_addr(id, NULL, (struct sockaddr *)sa, 5000) ||
			    cm_wait(v->ec, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) ||
			    (!v->pd && side_init(v, id->verbs)) ||
			    rdma_resolve_route(id, 5000) ||
			    cm_wait(v->ec, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL) ||
			    make_qp(v, id, ctrl) || rdma_connect(id, cp) ||
			    cm_wait(v->ec, RDMA_CM_EVENT_ESTABLISHED, NULL))
				return -1;
	}
	mine.pre = (uintptr_t)v->pre;
	mine.pre_rkey = v->pre_mr->rkey;
	mine.bnc = (uintptr_t)v->bnc;
	mine.bnc_rkey = v->bnc_mr->rkey;
	bench_link_put(b, MSG_KEYS, &mine, sizeof(mine));
	bench_link_get(b, MSG_KEYS, &theirs, sizeof(theirs));
	v->peer_pre = theirs.pre;
	v->peer_pre_rkey = theirs.pre_rkey;
	v->peer_bnc = theirs.bnc;
	v->peer_bnc_rkey = theirs.bnc_rkey;
	return 0;
}

int bench_verbs_setup(struct bench *b)
{
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(b->port) };
	struct bench_verbs *c, *s;
	struct rdma_cm_id *id;

	if (inet_pton(AF_INET, b->addr, &sa.sin_addr) != 1)
		bench_die("bad IPv4 address %s", b->addr);
	for (int i = 0; i < 2; i++) {
		if (!bench_here(b, i))
			continue;
		b->vs[i] = calloc(1, sizeof(*b->vs[i]));
		if (!b->vs[i])
			return -1;
		b->vs[i]->side = i;
		b->vs[i]->b = b;
		b->vs[i]->ec = rdma_create_event_channel();
		if (!b->vs[i]->ec)
			return -1;
	}
	if (b->role != ROLE_LOOP) {
		if (setup_split(b, &sa, &cp))
			goto err;
		return 0;
	}
	c = b->vs[0];
	s = b->vs[1];
	if (rdma_create_id(s->ec, &s->listen, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(s->listen, (struct sockaddr *)&sa) ||
	    rdma_listen(s->listen, 4) || side_init(s, s->listen->verbs)) {
		fprintf(stderr, "ordma-bench: RDMA CM listen on %s:%u: %s\n",
			b->addr, b->port, strerror(errno));
		return -1;
	}
	/* two connections, ctrl then data; one thread drives both ends */
	for (int ctrl = 1; ctrl >= 0; ctrl--) {
		if (rdma_create_id(c->ec, &id, NULL, RDMA_PS_TCP) ||
		    rdma_resolve_addr(id, NULL, (struct sockaddr *)&sa, 5000) ||
		    cm_wait(c->ec, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) ||
		    (!c->pd && side_init(c, id->verbs)) ||
		    rdma_resolve_route(id, 5000) ||
		    cm_wait(c->ec, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL) ||
		    make_qp(c, id, ctrl) || rdma_connect(id, &cp))
			goto err;
		if (cm_wait(s->ec, RDMA_CM_EVENT_CONNECT_REQUEST, &id) ||
		    make_qp(s, id, ctrl) || rdma_accept(id, &cp))
			goto err;
		if (cm_wait(c->ec, RDMA_CM_EVENT_ESTABLISHED, NULL) ||
		    cm_wait(s->ec, RDMA_CM_EVENT_ESTABLISHED, NULL))
			goto err;
	}
	for (int i = 0; i < 2; i++) {
		struct bench_verbs *v = b->vs[i], *peer = b->vs[!i];

		v->peer_pre = (uintptr_t)peer->pre;
		v->peer_pre_rkey = peer->pre_mr->rkey;
		v->peer_bnc = (uintptr_t)peer->bnc;
		v->peer_bnc_rkey = peer->bnc_mr->rkey;
	}
	return 0;
err:
	fprintf(stderr, "ordma-bench: RDMA CM connection to %s:%u failed: %s\n",
		b->addr, b->port, strerror(errno));
	return -1;
}

void bench_verbs_teardown(struct bench *b)
{
	for (int i = 0; i < 2; i++) {
		struct bench_verbs *v = b->vs[i];

		if (!v)
			continue;
		if (v->h.th) {
			helper_submit(v, H_QUIT);
			pthread_join(v->h.th, NULL);
		}
		if (v->data) {
			rdma_disconnect(v->data);
			rdma_destroy_qp(v->data);
		}
		if (v->ctrl) {
			rdma_disconnect(v->ctrl);
			rdma_destroy_qp(v->ctrl);
		}
	}
	for (int i = 0; i < 2; i++) {
		struct bench_verbs *v = b->vs[i];

		if (!v)
			continue;
		rcache_drop(v);
		if (v->data)
			rdma_destroy_id(v->data);
		if (v->ctrl)
			rdma_destroy_id(v->ctrl);
		if (v->listen)
			rdma_destroy_id(v->listen);
		if (v->pre_mr)
			ibv_dereg_mr(v->pre_mr);
		if (v->bnc_mr)
			ibv_dereg_mr(v->bnc_mr);
		if (v->pre)
			munmap(v->pre, b->max_len);
		if (v->bnc)
			munmap(v->bnc, b->max_len);
		if (v->cmsg_mr)
			ibv_dereg_mr(v->cmsg_mr);
		if (v->cq)
			ibv_destroy_cq(v->cq);
		if (v->ch)
			ibv_destroy_comp_channel(v->ch);
		if (v->pd)
			ibv_dealloc_pd(v->pd);
		rdma_destroy_event_channel(v->ec);
		free(v->cmsg);
		free(v->ready);
		free(v->ready_ok);
		free(v->frag_mr);
		free(v);
		b->vs[i] = NULL;
	}
}

/*
 * Inputs of the UCX-style threshold: registration cost r(n) = reg_fixed +
 * reg_per_byte * n (register plus deregister, fresh touched memory, fitted
 * through 4 KiB and 4 MiB) and the copy bandwidth (fresh source into the
 * pre-registered bounce buffer). The wire bandwidth is measured by main.c.
 */
int bench_verbs_calibrate(struct bench *b)
{
	struct bench_verbs *v = b->vs[0];
	size_t lens[2] = { 4096, 4UL << 20 };
	double med[2], cmed = 0;

	for (int l = 0; l < 2; l++) {
		double t[5];

		for (int i = 0; i < 5; i++) {
			unsigned char *p = bench_fresh(lens[l]);
			double t0 = bench_now_us();
			struct ibv_mr *mr = ibv_reg_mr(v->pd, p, lens[l],
						       IBV_ACCESS_LOCAL_WRITE);

			if (!mr || ibv_dereg_mr(mr))
				return -1;
			t[i] = bench_now_us() - t0;
			bench_free(p, lens[l]);
		}
		{
			struct bench_summary s;

			bench_summarise(t, 5, &s);
			med[l] = s.median;
		}
	}
	b->reg_per_byte_us = (med[1] - med[0]) / (lens[1] - lens[0]);
	if (b->reg_per_byte_us < 0)
		b->reg_per_byte_us = 0;
	b->reg_fixed_us = med[0] - b->reg_per_byte_us * lens[0];
	if (b->reg_fixed_us < 0)
		b->reg_fixed_us = 0;
	{
		double t[5];
		struct bench_summary s;
		size_t n = min_sz(lens[1], b->max_len);

		for (int i = 0; i < 5; i++) {
			unsigned char *p = bench_fresh(n);
			double t0 = bench_now_us();

			memcpy(v->bnc, p, n);
			t[i] = bench_now_us() - t0;
			bench_free(p, n);
		}
		bench_summarise(t, 5, &s);
		cmed = s.median;
		b->copy_bw = n / cmed;
	}
	return 0;
}

/* ---- throughput: N connections x M outstanding sends --------------------- */

struct tside {
	struct bench_verbs v;		/* pd, cq, channel, ec; no ctrl */
	struct rdma_cm_id **ids;
	unsigned char *app;		/* nch * depth slots of len, unregistered */
	unsigned char *stage;		/* registered: the slots (prereg) or bounce */
	struct ibv_mr *stage_mr;
	struct ibv_mr **mr;		/* regper: per slot */
	enum bench_kind kind;
	int nch, depth;
	size_t len;
	long per_chan;
	int ret;
};

static int tput_post(struct tside *t, int recv, int slot)
{
	unsigned char *app = t->app + slot * t->len;
	unsigned char *stg = t->stage + slot * t->len;
	struct ibv_sge sge = { .length = t->len };
	struct ibv_qp *qp = t->ids[slot / t->depth]->qp;

	switch (t->kind) {
	case K_PREREG:
		sge.addr = (uintptr_t)stg;
		sge.lkey = t->stage_mr->lkey;
		break;
	case K_BOUNCE:
		if (!recv)
			memcpy(stg, app, t->len);
		sge.addr = (uintptr_t)stg;
		sge.lkey = t->stage_mr->lkey;
		break;
	default:
		t->mr[slot] = ibv_reg_mr(t->v.pd, app, t->len, recv ?
					 IBV_ACCESS_LOCAL_WRITE : 0);
		if (!t->mr[slot])
			return -1;
		sge.addr = (uintptr_t)app;
		sge.lkey = t->mr[slot]->lkey;
		break;
	}
	if (recv) {
		struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

		return ibv_post_recv(qp, &wr, &bad);
	} else {
		struct ibv_send_wr wr = {
			.wr_id = slot, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *bad;

		return ibv_post_send(qp, &wr, &bad);
	}
}

/* Keep depth operations outstanding per connection until per_chan each. */
static int tput_run(struct tside *t, int recv)
{
	int n = t->nch * t->depth;
	long *issued = calloc(t->nch, sizeof(long)), left = t->per_chan * t->nch;
	struct ibv_wc wc;
	struct ibv_cq *cq;
	void *ctx;
	int armed = 0, got;

	if (!issued)
		return -1;
	for (int s = 0; s < n; s++) {
		if (issued[s / t->depth] >= t->per_chan)
			continue;
		if (tput_post(t, recv, s))
			goto err;
		issued[s / t->depth]++;
	}
	while (left) {
		got = ibv_poll_cq(t->v.cq, 1, &wc);
		if (got < 0)
			goto err;
		if (!got) {
			if (!armed) {
				if (ibv_req_notify_cq(t->v.cq, 0))
					goto err;
				armed = 1;
				continue;
			}
			if (ibv_get_cq_event(t->v.ch, &cq, &ctx))
				goto err;
			ibv_ack_cq_events(cq, 1);
			armed = 0;
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "ordma-bench: throughput: %s\n",
				ibv_wc_status_str(wc.status));
			goto err;
		}
		left--;
		if (t->kind == K_BOUNCE && recv)
			memcpy(t->app + wc.wr_id * t->len,
			       t->stage + wc.wr_id * t->len, t->len);
		if (t->kind == K_REGPER) {
			ibv_dereg_mr(t->mr[wc.wr_id]);
			t->mr[wc.wr_id] = NULL;
		}
		if (issued[wc.wr_id / t->depth] < t->per_chan) {
			if (tput_post(t, recv, wc.wr_id))
				goto err;
			issued[wc.wr_id / t->depth]++;
		}
	}
	free(issued);
	return 0;
err:
	free(issued);
	return -1;
}

static void *tput_recv_thread(void *arg)
{
	struct tside *t = arg;

	t->ret = tput_run(t, 1);
	return NULL;
}

static int tside_init(struct tside *t, struct ibv_context *ctx)
{
	size_t total = (size_t)t->nch * t->depth * t->len;

	t->v.pd = ibv_alloc_pd(ctx);
	t->v.ch = ibv_create_comp_channel(ctx);
	if (!t->v.pd || !t->v.ch)
		return -1;
	t->v.cq = ibv_create_cq(ctx, 2 * t->nch * t->depth + 16, NULL, t->v.ch, 0);
	if (!t->v.cq)
		return -1;
	t->stage = reg_big(&t->v, total, &t->stage_mr);
	return 0;
}

static void tside_free(struct tside *t)
{
	size_t total = (size_t)t->nch * t->depth * t->len;

	for (int i = 0; i < t->nch; i++) {
		if (!t->ids[i])
			continue;
		if (t->ids[i]->qp) {
			rdma_disconnect(t->ids[i]);
			rdma_destroy_qp(t->ids[i]);
		}
	}
	for (int i = 0; i < t->nch; i++)
		if (t->ids[i])
			rdma_destroy_id(t->ids[i]);
	for (int i = 0; t->mr && i < t->nch * t->depth; i++)
		if (t->mr[i])
			ibv_dereg_mr(t->mr[i]);
	if (t->v.listen)
		rdma_destroy_id(t->v.listen);
	if (t->stage_mr)
		ibv_dereg_mr(t->stage_mr);
	if (t->stage)
		munmap(t->stage, total);
	if (t->app)
		bench_free(t->app, total);
	if (t->v.cq)
		ibv_destroy_cq(t->v.cq);
	if (t->v.ch)
		ibv_destroy_comp_channel(t->v.ch);
	if (t->v.pd)
		ibv_dealloc_pd(t->v.pd);
	if (t->v.ec)
		rdma_destroy_event_channel(t->v.ec);
	free(t->ids);
	free(t->mr);
}

/*
 * The same workload as ordma's throughput run, over rdma-core: @kind is
 * K_PREREG (the slots registered once), K_BOUNCE (copied through registered
 * slots) or K_REGPER (each slot registered for each message). Two hosts:
 * the server runs the receiving side and reports what it checked; the
 * peer's time runs until that report is in.
 */
int bench_verbs_tput(struct bench *b, enum bench_kind kind, struct bench_tput *r)
{
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(b->port + 5) };
	struct tside side[2], *c = &side[0], *s = &side[1];
	size_t total = b->quick ? 32UL << 20 : 128UL << 20;
	int n = b->tput_chans * b->tput_depth, ret = -1;
	int hc = bench_here(b, 0), hs = bench_here(b, 1);
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = b->tput_depth + 1, .max_recv_wr = b->tput_depth + 1,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
	};
	struct bench_tput_done done = { .ret = -1 };
	struct rdma_cm_id *id;
	pthread_t th;
	double t0;

	memset(side, 0, sizeof(side));
	inet_pton(AF_INET, b->addr, &sa.sin_addr);
	for (int i = 0; i < 2; i++) {
		if (!bench_here(b, i))
			continue;
		side[i].kind = kind;
		side[i].nch = b->tput_chans;
		side[i].depth = b->tput_depth;
		side[i].len = b->tput_len;
		side[i].per_chan = total / b->tput_len / b->tput_chans;
		if (side[i].per_chan < b->tput_depth)
			side[i].per_chan = b->tput_depth;
		side[i].ids = calloc(side[i].nch, sizeof(*side[i].ids));
		side[i].mr = calloc(n, sizeof(*side[i].mr));
		side[i].v.ec = rdma_create_event_channel();
		if (!side[i].ids || !side[i].mr || !side[i].v.ec)
			goto out;
		side[i].app = bench_fresh(n * b->tput_len);
	}
	for (int i = 0; hc && i < n; i++)
		bench_fill(c->app + i * b->tput_len, b->tput_len, 2000 + i);
	if (hs && (rdma_create_id(s->v.ec, &s->v.listen, NULL, RDMA_PS_TCP) ||
		   rdma_bind_addr(s->v.listen, (struct sockaddr *)&sa) ||
		   rdma_listen(s->v.listen, b->tput_chans) ||
		   tside_init(s, s->v.listen->verbs)))
		goto out;
	if (b->role == ROLE_SERVE)
		bench_link_put(b, MSG_READY, NULL, 0);
	else if (b->role == ROLE_PEER)
		bench_link_get(b, MSG_READY, NULL, 0);
	for (int i = 0; i < b->tput_chans; i++) {
		if (hc) {
			if (rdma_create_id(c->v.ec, &id, NULL, RDMA_PS_TCP))
				goto out;
			c->ids[i] = id;
			if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&sa, 5000) ||
			    cm_wait(c->v.ec, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) ||
			    (!c->v.pd && tside_init(c, id->verbs)) ||
			    rdma_resolve_route(id, 5000) ||
			    cm_wait(c->v.ec, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL))
				goto out;
			qa.send_cq = c->v.cq;
			qa.recv_cq = c->v.cq;
			if (rdma_create_qp(id, c->v.pd, &qa) || rdma_connect(id, &cp))
				goto out;
		}
		if (hs) {
			if (cm_wait(s->v.ec, RDMA_CM_EVENT_CONNECT_REQUEST, &id))
				goto out;
			s->ids[i] = id;
			qa.send_cq = s->v.cq;
			qa.recv_cq = s->v.cq;
			if (rdma_create_qp(id, s->v.pd, &qa) || rdma_accept(id, &cp))
				goto out;
		}
		if ((hc && cm_wait(c->v.ec, RDMA_CM_EVENT_ESTABLISHED, NULL)) ||
		    (hs && cm_wait(s->v.ec, RDMA_CM_EVENT_ESTABLISHED, NULL)))
			goto out;
	}
	/* prereg sends what the registered slots hold: the same pattern */
	if (hc && kind == K_PREREG)
		memcpy(c->stage, c->app, n * b->tput_len);
	if (b->role == ROLE_SERVE) {
		/* the receives are posted before the peer's first send lands */
		bench_link_put(b, MSG_READY, NULL, 0);
		ret = tput_run(s, 1);
	} else if (b->role == ROLE_PEER) {
		bench_link_get(b, MSG_READY, NULL, 0);
		t0 = bench_now_us();
		ret = tput_run(c, 0);
		bench_link_get(b, MSG_TPUT_DONE, &done, sizeof(done));
		r->mbps = (double)c->per_chan * c->nch * c->len / (bench_now_us() - t0);
		r->bytes_ok += done.bytes_ok;
		r->bytes_bad += done.bytes_bad;
		if (!ret)
			ret = done.ret;
		goto out;
	} else {
		if (pthread_create(&th, NULL, tput_recv_thread, s))
			goto out;
		t0 = bench_now_us();
		ret = tput_run(c, 0);
		pthread_join(th, NULL);
		r->mbps = (double)c->per_chan * c->nch * c->len / (bench_now_us() - t0);
		if (!ret)
			ret = s->ret;
	}
	for (int i = 0; i < n; i++) {
		unsigned char *p = (kind == K_PREREG ? s->stage : s->app) + i * b->tput_len;

		if (!ret && !bench_check(p, b->tput_len, 2000 + i))
			r->bytes_ok += b->tput_len;
		else
			r->bytes_bad += b->tput_len;
	}
	if (b->role == ROLE_SERVE) {
		done.ret = ret;
		done.bytes_ok = r->bytes_ok;
		done.bytes_bad = r->bytes_bad;
		bench_link_put(b, MSG_TPUT_DONE, &done, sizeof(done));
	}
out:
	tside_free(c);
	tside_free(s);
	return ret;
}
