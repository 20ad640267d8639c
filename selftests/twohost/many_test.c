// SPDX-License-Identifier: GPL-2.0
/*
 * Many channels between two hosts (tools/vmtest --hosts 2, tools/check's
 * stage "twohost"): host 2 opens MANY channels to host 1's listener, all
 * open at once, and each moves a checked message each way; then all are
 * closed and both devices hold nothing again (no channel, pinned page,
 * memory region or chunk held).
 *
 * It measures, on each host, what opening them took (channels/s, host 2)
 * and the kernel memory an idle channel end costs (the growth of Slab and
 * of all memory in use, /proc/meminfo, divided by MANY), and the same for
 * the floor: as many bare RC QPs of the same depth (send 65, receive 17,
 * one CQ shared by all, as the CQ pool shares ordma's) connected with
 * librdmacm over the same link. It prints them; it does not judge them.
 *
 * MANY is 1024 channels with the default pool (256 chunks of 64 KiB): a
 * channel end takes a chunk to receive in only while more than half the
 * pool is free, and otherwise receives in a small buffer of its own
 * (ORDMA_RX_SMALL), so the idle ends hold at most half the pool, however
 * many there are; the test checks that bound.
 */
#define ORDMA_GUEST_TEST
#include <stdlib.h>
#include <rdma/rdma_cma.h>
#include "ordma_test.h"
#include "kselftest_harness.h"
#include "ordma_rawcm.h"
#include "twohost.h"

#define MANY		1024
#define MSG_LEN		4096
/* The floor: ordma's QP (kernel/cm.c, ordma_chan_setup_qp()). */
#define RAW_SEND_WR	65
#define RAW_RECV_WR	17
#define RAW_SEND_SGE	32

struct mem {
	long long slab_kb, vmalloc_kb, used_kb;
};

/*
 * Slab, vmalloc (where rdma_rxe keeps a QP's queues) and memory in use
 * (MemTotal - MemFree), from /proc/meminfo.
 */
static int mem_read(struct mem *m)
{
	long long total = -1, free_kb = -1, v;
	char key[64];
	FILE *f;

	/* Freed slab objects and RCU callbacks settle first. */
	ordma_sh("sync; echo 3 >/proc/sys/vm/drop_caches");
	usleep(300000);
	f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	m->slab_kb = -1;
	m->vmalloc_kb = -1;
	while (fscanf(f, "%63s %lld kB\n", key, &v) == 2) {
		if (!strcmp(key, "MemTotal:"))
			total = v;
		else if (!strcmp(key, "MemFree:"))
			free_kb = v;
		else if (!strcmp(key, "Slab:"))
			m->slab_kb = v;
		else if (!strcmp(key, "VmallocUsed:"))
			m->vmalloc_kb = v;
	}
	fclose(f);
	m->used_kb = total - free_kb;
	return total < 0 || free_kb < 0 || m->slab_kb < 0 ||
	       m->vmalloc_kb < 0 ? -1 : 0;
}

static void mem_log(struct __test_metadata *_metadata, const char *what,
		    int host, const struct mem *a, const struct mem *b, int n)
{
	TH_LOG("host %d: %d %s: slab %.1f KiB, vmalloc %.1f KiB, all memory %.1f KiB each",
	       host, n, what, (double)(b->slab_kb - a->slab_kb) / n,
	       (double)(b->vmalloc_kb - a->vmalloc_kb) / n,
	       (double)(b->used_kb - a->used_kb) / n);
}

static void fill(unsigned char *buf, int i, int dir)
{
	int k;

	for (k = 0; k < MSG_LEN; k++)
		buf[k] = (unsigned char)(i * 31 + k * 7 + dir * 101);
}

FIXTURE(many) {
	int host;
	struct ordma *o;
	uint32_t chan[MANY];
	int n;
};

FIXTURE_SETUP(many)
{
	const char *host = getenv("VMTEST_HOST");

	ORDMA_TEST_FILTER();
	if (!host)
		SKIP(return, "not in a guest of tools/vmtest --hosts 2");
	self->host = atoi(host);
	ASSERT_EQ(0, ordma_open(&self->o, 0));
}

FIXTURE_TEARDOWN(many)
{
	if (self->o)
		ordma_close(self->o);
}

TEST_F_TIMEOUT(many, channels_open_move_and_close, 600)
{
	unsigned short port = twohost_port(_metadata->name, AF_INET);
	unsigned char *out = malloc(MSG_LEN), *in = malloc(MSG_LEN);
	struct sockaddr_storage ss;
	socklen_t len = twohost_sockaddr(AF_INET, "192.0.2.1", port, &ss);
	struct mem m0, m1;
	int64_t tx0, rx0;
	char msg[256];
	uint32_t lis;
	double t0, t;
	int i, tries;

	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, in);
	ASSERT_EQ(0, twohost_wait_empty(30, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, mem_read(&m0));
	/* The tests before this one in the same boot moved bytes too. */
	tx0 = twohost_counter("bytes_tx");
	rx0 = twohost_counter("bytes_rx");
	if (self->host == 1) {
		ASSERT_EQ(0, ordma_listen(self->o, (struct sockaddr *)&ss, len,
					  MANY, &lis));
		ASSERT_EQ(0, twohost_barrier(_metadata->name, "listen"));
		for (i = 0; i < MANY; i++)
			ASSERT_EQ(0, ordma_accept(self->o, lis, 0,
						  &self->chan[i], NULL, NULL))
				TH_LOG("channel %d", i);
		ordma_chan_close(self->o, lis);
	} else {
		ASSERT_EQ(0, twohost_barrier(_metadata->name, "listen"));
		t0 = twohost_now();
		for (i = 0; i < MANY; i++) {
			int ret;

			for (tries = 0; tries < 50; tries++) {
				ret = ordma_connect(self->o,
						    (struct sockaddr *)&ss, len,
						    TWOHOST_CONNECT_MS,
						    &self->chan[i]);
				if (ret != -ECONNREFUSED)
					break;
				usleep(100000);
			}
			ASSERT_EQ(0, ret) TH_LOG("channel %d", i);
		}
		t = twohost_now() - t0;
		TH_LOG("host 2: %d channels opened in %.2f s: %.0f channels/s",
		       MANY, t, MANY / t);
	}
	self->n = MANY;
	ASSERT_EQ(MANY, twohost_counter("channels"));
	ASSERT_EQ(0, twohost_barrier(_metadata->name, "open"));
	ASSERT_EQ(0, mem_read(&m1));
	mem_log(_metadata, "idle channel ends", self->host, &m0, &m1, MANY);
	TH_LOG("host %d: %lld chunks held by %d idle channel ends",
	       self->host, (long long)twohost_counter("chunks_held"), MANY);
	EXPECT_LE(twohost_counter("chunks_held"),
		  twohost_counter("chunks_total") / 2 + 1);

	/* Each channel: host 2 sends, host 1 answers; every byte checked. */
	for (i = 0; i < MANY; i++) {
		if (self->host == 2) {
			fill(out, i, 0);
			ASSERT_EQ(MSG_LEN, ordma_send(self->o, self->chan[i],
						      out, MSG_LEN));
			ASSERT_EQ(MSG_LEN, ordma_recv(self->o, self->chan[i],
						      in, MSG_LEN));
			fill(out, i, 1);
		} else {
			ASSERT_EQ(MSG_LEN, ordma_recv(self->o, self->chan[i],
						      in, MSG_LEN));
			fill(out, i, 0);
			ASSERT_EQ(0, memcmp(out, in, MSG_LEN)) TH_LOG("channel %d", i);
			fill(out, i, 1);
			ASSERT_EQ(MSG_LEN, ordma_send(self->o, self->chan[i],
						      out, MSG_LEN));
			continue;
		}
		ASSERT_EQ(0, memcmp(out, in, MSG_LEN)) TH_LOG("channel %d", i);
	}
	EXPECT_EQ((int64_t)MANY * MSG_LEN, twohost_counter("bytes_tx") - tx0);
	EXPECT_EQ((int64_t)MANY * MSG_LEN, twohost_counter("bytes_rx") - rx0);
	ASSERT_EQ(0, twohost_barrier(_metadata->name, "moved"));

	for (i = 0; i < MANY; i++)
		EXPECT_EQ(0, ordma_chan_close(self->o, self->chan[i]));
	self->n = 0;
	ordma_close(self->o);
	self->o = NULL;
	EXPECT_EQ(0, twohost_wait_empty(60, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, twohost_barrier(_metadata->name, "closed"));
	free(out);
	free(in);
}

/* ---- the floor: bare RC QPs over librdmacm ------------------------------ */

static int raw_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = RAW_SEND_WR,
			 .max_recv_wr = RAW_RECV_WR,
			 .max_send_sge = RAW_SEND_SGE, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
	};

	return rdma_create_qp(id, pd, &qa);
}

TEST_F_TIMEOUT(many, floor_of_bare_qps, 600)
{
	unsigned short port = twohost_port(_metadata->name, AF_INET);
	struct rdma_conn_param param = { .retry_count = 7,
					 .rnr_retry_count = 7 };
	struct rdma_cm_id *ids[MANY] = { 0 }, *lid = NULL, *id;
	struct sockaddr_storage ss;
	struct rdma_event_channel *ec;
	struct rdma_cm_event *ev;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct mem m0, m1;
	double t0, t;
	int i;

	twohost_sockaddr(AF_INET, "192.0.2.1", port, &ss);
	ec = rdma_create_event_channel();
	ASSERT_NE(NULL, ec);
	ASSERT_EQ(0, mem_read(&m0));
	if (self->host == 1) {
		ASSERT_EQ(0, rdma_create_id(ec, &lid, NULL, RDMA_PS_TCP));
		ASSERT_EQ(0, rdma_bind_addr(lid, (struct sockaddr *)&ss));
		ASSERT_EQ(0, rdma_listen(lid, MANY));
		ASSERT_EQ(0, twohost_barrier(_metadata->name, "listen"));
		for (i = 0; i < MANY;) {
			ASSERT_EQ(0, rdma_get_cm_event(ec, &ev));
			id = ev->id;
			if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
				if (!pd) {
					pd = ibv_alloc_pd(id->verbs);
					cq = ibv_create_cq(id->verbs, 4096,
							   NULL, NULL, 0);
				}
				ASSERT_NE(NULL, cq);
				ASSERT_EQ(0, raw_qp(id, pd, cq));
				ASSERT_EQ(0, rdma_accept(id, &param));
			} else if (ev->event == RDMA_CM_EVENT_ESTABLISHED) {
				ids[i++] = id;
			} else {
				ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED, (int)ev->event);
			}
			rdma_ack_cm_event(ev);
		}
	} else {
		ASSERT_EQ(0, twohost_barrier(_metadata->name, "listen"));
		t0 = twohost_now();
		for (i = 0; i < MANY; i++) {
			ASSERT_EQ(0, rdma_create_id(ec, &ids[i], NULL,
						    RDMA_PS_TCP));
			ASSERT_EQ(0, rdma_resolve_addr(ids[i], NULL,
						       (struct sockaddr *)&ss,
						       RAWCM_EVENT_MS));
			ASSERT_EQ((int)RDMA_CM_EVENT_ADDR_RESOLVED, rawcm_event(ec));
			ASSERT_EQ(0, rdma_resolve_route(ids[i], RAWCM_EVENT_MS));
			ASSERT_EQ((int)RDMA_CM_EVENT_ROUTE_RESOLVED, rawcm_event(ec));
			if (!pd) {
				pd = ibv_alloc_pd(ids[i]->verbs);
				cq = ibv_create_cq(ids[i]->verbs, 4096, NULL,
						   NULL, 0);
			}
			ASSERT_NE(NULL, cq);
			ASSERT_EQ(0, raw_qp(ids[i], pd, cq));
			ASSERT_EQ(0, rdma_connect(ids[i], &param));
			ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED, rawcm_event(ec))
				TH_LOG("QP %d", i);
		}
		t = twohost_now() - t0;
		TH_LOG("host 2: %d bare RC QPs connected in %.2f s: %.0f QPs/s",
		       MANY, t, MANY / t);
	}
	ASSERT_EQ(0, twohost_barrier(_metadata->name, "open"));
	ASSERT_EQ(0, mem_read(&m1));
	mem_log(_metadata, "idle bare RC QPs", self->host, &m0, &m1, MANY);
	ASSERT_EQ(0, twohost_barrier(_metadata->name, "measured"));
	for (i = 0; i < MANY; i++) {
		rdma_disconnect(ids[i]);
		rdma_destroy_qp(ids[i]);
		rdma_destroy_id(ids[i]);
	}
	if (lid)
		rdma_destroy_id(lid);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	rdma_destroy_event_channel(ec);
	ASSERT_EQ(0, twohost_barrier(_metadata->name, "closed"));
}

TEST_HARNESS_MAIN
