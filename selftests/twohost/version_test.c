// SPDX-License-Identifier: GPL-2.0
/*
 * A peer of another wire protocol version across two hosts (tools/vmtest
 * --hosts 2, tools/check's stage "twohost"): host 2 plays a raw librdmacm
 * peer (ordma_rawcm.h) against host 1's ordma.
 *
 * - listener: host 2 connects to host 1's listener with versions 7 and 9;
 *   ordma rejects both (a consumer-defined reject, not "nobody listens"),
 *   nothing waits in the listener, no channel is left, and an ordma connect
 *   to that listener then works.
 * - connector: host 1 connects with ordma to a raw listener of host 2 that
 *   accepts with version 9; the connect fails with EPROTO
 *   (Documentation/ordma/protocol.rst), host 2 sees the channel
 *   disconnected, and host 1 holds nothing.
 */
#define ORDMA_GUEST_TEST
#include <poll.h>
#include "ordma_test.h"
#include "ordma_rawcm.h"
#include "kselftest_harness.h"
#include "twohost.h"

/* IB_CM_REJ_CONSUMER_DEFINED: the listener's owner said no. */
#define REJ_CONSUMER	28

FIXTURE(version) {
	int host;
	struct ordma *o;
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;		/* the raw peer's, host 2 */
	struct rdma_cm_id *conn;	/* a connect request's, host 2 */
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char buf[4096];
};

FIXTURE_SETUP(version)
{
	const char *host = getenv("VMTEST_HOST");

	ORDMA_TEST_FILTER();
	if (!host)
		SKIP(return, "not in a guest of tools/vmtest --hosts 2");
	self->host = atoi(host);
	ASSERT_EQ(0, ordma_open(&self->o, 0));
	if (self->host == 2) {
		self->ec = rdma_create_event_channel();
		ASSERT_NE(NULL, self->ec);
	}
}

/* The raw peer's connection: its QP, PD, CQ and MR. */
static void raw_free(FIXTURE_DATA(version) *self, struct rdma_cm_id *id)
{
	if (id && id->qp) {
		rawcm_drain(id, self->cq, -1);
		rdma_destroy_qp(id);
	}
	if (self->mr)
		ibv_dereg_mr(self->mr);
	if (self->cq)
		ibv_destroy_cq(self->cq);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	self->mr = NULL;
	self->cq = NULL;
	self->pd = NULL;
}

FIXTURE_TEARDOWN(version)
{
	raw_free(self, self->conn ? self->conn : self->id);
	if (self->conn)
		rdma_destroy_id(self->conn);
	if (self->id)
		rdma_destroy_id(self->id);
	if (self->ec)
		rdma_destroy_event_channel(self->ec);
	if (self->o)
		ordma_close(self->o);
}

TEST_F_TIMEOUT(version, listener, 120)
{
	unsigned short port = twohost_port(_metadata->name, AF_INET);
	struct sockaddr_storage ss;
	socklen_t len = twohost_sockaddr(AF_INET, "192.0.2.1", port, &ss);
	uint8_t versions[] = { WIRE_VERSION - 1, WIRE_VERSION + 1 };
	uint32_t lis, chan;
	char msg[256];
	int i, status;

	if (self->host == 1) {
		ASSERT_EQ(0, ordma_listen(self->o, (struct sockaddr *)&ss, len,
					  1, &lis));
		ASSERT_EQ(0, twohost_barrier(_metadata->name, "listen"));
		ASSERT_EQ(0, twohost_barrier(_metadata->name, "refused"));
		EXPECT_EQ(-EAGAIN, ordma_accept(self->o, lis, ORDMA_F_NONBLOCK,
						&chan, NULL, NULL));
		EXPECT_EQ(0, twohost_counter("channels"));
		/* The listener still takes an ordma peer. */
		ASSERT_EQ(0, twohost_barrier(_metadata->name, "again"));
		ASSERT_EQ(0, ordma_accept(self->o, lis, 0, &chan, NULL, NULL));
		/* Host 2 keeps its end open until then (see below). */
		ASSERT_EQ(0, twohost_barrier(_metadata->name, "accepted"));
		EXPECT_EQ(0, ordma_chan_close(self->o, chan));
		EXPECT_EQ(0, ordma_chan_close(self->o, lis));
		EXPECT_EQ(0, twohost_wait_empty(30, msg, sizeof(msg)))
			TH_LOG("%s", msg);
		return;
	}

	ASSERT_EQ(0, twohost_barrier(_metadata->name, "listen"));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, rdma_create_id(self->ec, &self->id, NULL,
					    RDMA_PS_TCP));
		status = 0;
		EXPECT_EQ((int)RDMA_CM_EVENT_REJECTED,
			  rawcm_connect(self->ec, self->id,
					(struct sockaddr *)&ss, versions[i],
					self->buf, sizeof(self->buf), &self->pd,
					&self->cq, &self->mr, &status))
			TH_LOG("version %u", versions[i]);
		EXPECT_EQ(REJ_CONSUMER, status) TH_LOG("version %u", versions[i]);
		raw_free(self, self->id);
		rdma_destroy_id(self->id);
		self->id = NULL;
	}
	ASSERT_EQ(0, twohost_barrier(_metadata->name, "refused"));
	ASSERT_EQ(0, twohost_barrier(_metadata->name, "again"));
	ASSERT_EQ(0, ordma_connect(self->o, (struct sockaddr *)&ss, len,
				   TWOHOST_CONNECT_MS, &chan));
	/*
	 * Closed only once host 1 accepted it: a channel that dies before
	 * accept takes it is no channel to accept, and host 1 would wait.
	 */
	ASSERT_EQ(0, twohost_barrier(_metadata->name, "accepted"));
	EXPECT_EQ(0, ordma_chan_close(self->o, chan));
}

TEST_F_TIMEOUT(version, connector, 120)
{
	unsigned short port = twohost_port(_metadata->name, AF_INET);
	struct rdma_conn_param param;
	struct sockaddr_storage ss;
	socklen_t len = twohost_sockaddr(AF_INET, "192.0.2.2", port, &ss);
	const struct wire_cm *req;
	struct rdma_cm_event *ev;
	struct wire_cm priv;
	struct pollfd p;
	uint32_t chan;
	char msg[256];

	if (self->host == 1) {
		ASSERT_EQ(0, twohost_barrier(_metadata->name, "listen"));
		EXPECT_EQ(-EPROTO, ordma_connect(self->o, (struct sockaddr *)&ss,
						 len, TWOHOST_CONNECT_MS,
						 &chan));
		EXPECT_EQ(0, twohost_wait_empty(30, msg, sizeof(msg)))
			TH_LOG("%s", msg);
		ASSERT_EQ(0, twohost_barrier(_metadata->name, "done"));
		return;
	}

	/* A raw listener that answers with version 9. */
	ASSERT_EQ(0, rdma_create_id(self->ec, &self->id, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_bind_addr(self->id, (struct sockaddr *)&ss));
	ASSERT_EQ(0, rdma_listen(self->id, 1));
	ASSERT_EQ(0, twohost_barrier(_metadata->name, "listen"));
	p.fd = self->ec->fd;
	p.events = POLLIN;
	ASSERT_EQ(1, poll(&p, 1, RAWCM_EVENT_MS));
	ASSERT_EQ(0, rdma_get_cm_event(self->ec, &ev));
	ASSERT_EQ((int)RDMA_CM_EVENT_CONNECT_REQUEST, (int)ev->event);
	/* What ordma asks with: its own version. */
	req = ev->param.conn.private_data;
	ASSERT_LE(sizeof(*req), ev->param.conn.private_data_len);
	EXPECT_EQ(WIRE_VERSION, req->version);
	self->conn = ev->id;
	rdma_ack_cm_event(ev);

	ASSERT_EQ(0, rawcm_qp(self->conn, self->buf, sizeof(self->buf),
			      &self->pd, &self->cq, &self->mr));
	rawcm_param(&param, &priv, WIRE_VERSION + 1);
	ASSERT_EQ(0, rdma_accept(self->conn, &param));
	/* Up, then dropped by ordma. */
	EXPECT_EQ((int)RDMA_CM_EVENT_ESTABLISHED, rawcm_event(self->ec));
	EXPECT_EQ((int)RDMA_CM_EVENT_DISCONNECTED, rawcm_event(self->ec));
	ASSERT_EQ(0, twohost_barrier(_metadata->name, "done"));
}

TEST_HARNESS_MAIN
