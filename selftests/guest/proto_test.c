// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile peer speaks to an ordma listener with librdmacm and raw verbs:
 * a wrong protocol version is refused, malformed messages close the channel
 * with EPROTO, and nothing lands anywhere but the receive buffers.
 */
#define ORDMA_GUEST_TEST
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <rdma/rdma_cma.h>
#include <linux/ordma.h>

#include "ordma_test.h"
#include "kselftest_harness.h"

/* Version 1 of the wire protocol, as a peer must speak it. */
struct wire_cm {
	uint8_t version;
	uint8_t reserved[3];
	uint32_t rx_size;
};

struct wire_hdr {
	uint8_t version;
	uint8_t opcode;
	uint16_t flags;
	uint32_t payload_len;
	uint64_t total_len, offset, base, token, op_id;
	uint32_t status, reserved;
};

FIXTURE(proto) {
	int fd;
	__u32 listener;
	unsigned short port;
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char buf[4096];
};

FIXTURE_SETUP(proto)
{
	static unsigned short next_port = 18700;
	struct ordma_listen l = { .size = sizeof(l) };

	self->port = next_port++;
	self->fd = open("/dev/ordma", O_RDWR);
	ASSERT_LE(0, self->fd);
	l.addr.family = AF_INET;
	l.addr.port = htons(self->port);
	inet_pton(AF_INET, "192.0.2.1", l.addr.addr);
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_LISTEN, &l));
	self->listener = l.out_id;
	self->ec = rdma_create_event_channel();
	ASSERT_NE(NULL, self->ec);
	ASSERT_EQ(0, rdma_create_id(self->ec, &self->id, NULL, RDMA_PS_TCP));
}

FIXTURE_TEARDOWN(proto)
{
	if (self->id->qp)
		rdma_destroy_qp(self->id);
	if (self->mr)
		ibv_dereg_mr(self->mr);
	if (self->cq)
		ibv_destroy_cq(self->cq);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	rdma_destroy_id(self->id);
	rdma_destroy_event_channel(self->ec);
	close(self->fd);
}

static int next_event(struct rdma_event_channel *ec)
{
	struct rdma_cm_event *ev;
	int type;

	if (rdma_get_cm_event(ec, &ev))
		return -1;
	type = ev->event;
	rdma_ack_cm_event(ev);
	return type;
}

/* Resolve, build a QP and connect with @version; return the final event. */
static int hostile_connect(FIXTURE_DATA(proto) *self, uint8_t version)
{
	struct wire_cm priv = { .version = version, .rx_size = 65536 };
	struct rdma_conn_param param = {
		.private_data = &priv, .private_data_len = sizeof(priv),
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
	};
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(self->port) };

	inet_pton(AF_INET, "192.0.2.1", &sin.sin_addr);
	if (rdma_resolve_addr(self->id, NULL, (struct sockaddr *)&sin, 2000) ||
	    next_event(self->ec) != RDMA_CM_EVENT_ADDR_RESOLVED ||
	    rdma_resolve_route(self->id, 2000) ||
	    next_event(self->ec) != RDMA_CM_EVENT_ROUTE_RESOLVED)
		return -1;
	self->pd = ibv_alloc_pd(self->id->verbs);
	self->cq = ibv_create_cq(self->id->verbs, 16, NULL, NULL, 0);
	if (!self->pd || !self->cq)
		return -1;
	self->mr = ibv_reg_mr(self->pd, self->buf, sizeof(self->buf),
			      IBV_ACCESS_LOCAL_WRITE);
	qa.send_cq = self->cq;
	qa.recv_cq = self->cq;
	if (!self->mr || rdma_create_qp(self->id, self->pd, &qa) ||
	    rdma_connect(self->id, &param))
		return -1;
	return next_event(self->ec);
}

/* Send @len bytes of self->buf as one message; wait for its completion. */
static int hostile_send(FIXTURE_DATA(proto) *self, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)self->buf, .length = len,
			       .lkey = self->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	struct ibv_wc wc;
	int n, tries = 0;

	if (ibv_post_send(self->id->qp, &wr, &bad))
		return -1;
	while ((n = ibv_poll_cq(self->cq, 1, &wc)) == 0 && tries++ < 5000)
		usleep(1000);
	return n == 1 && wc.status == IBV_WC_SUCCESS ? 0 : -1;
}

/* Accept the hostile peer's channel and queue a receive on it. */
static __u32 accept_and_recv(struct __test_metadata *_metadata,
			     FIXTURE_DATA(proto) *self, void *rbuf, size_t len)
{
	struct ordma_accept a = { .size = sizeof(a),
				  .listener_id = self->listener };
	struct ordma_submit s = { .size = sizeof(s), .op = ORDMA_OP_RECV,
				  .addr = (unsigned long)rbuf, .len = len };

	EXPECT_EQ(0, ioctl(self->fd, ORDMA_IOC_ACCEPT, &a));
	s.chan_id = a.out_chan_id;
	EXPECT_EQ(0, ioctl(self->fd, ORDMA_IOC_SUBMIT, &s));
	return a.out_chan_id;
}

static long long wait_res(int fd)
{
	struct ordma_cqe c;
	struct ordma_wait w = { .size = sizeof(w), .cqes = (unsigned long)&c,
				.max = 1, .timeout_ms = 10000 };

	if (ioctl(fd, ORDMA_IOC_WAIT, &w))
		return -100000 - errno;
	return c.res;
}

static void expect_closed_with_eproto(struct __test_metadata *_metadata,
				      FIXTURE_DATA(proto) *self, __u32 chan,
				      const char *rbuf, size_t len)
{
	struct ordma_chan_info ci = { .size = sizeof(ci), .chan_id = chan };
	size_t i = 0;

	EXPECT_EQ(-EPROTO, wait_res(self->fd));
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_CHAN_INFO, &ci));
	EXPECT_EQ((__u32)ORDMA_CHAN_DISCONNECTED, ci.out_state);
	while (i < len && !rbuf[i])
		i++;
	ASSERT_EQ(len, i) TH_LOG("the receive buffer was written at %zu", i);
}

TEST_F(proto, wrong_version_is_refused)
{
	EXPECT_EQ((int)RDMA_CM_EVENT_REJECTED, hostile_connect(self, 2));
}

TEST_F(proto, bad_header_version_closes_channel)
{
	struct wire_hdr *h = (struct wire_hdr *)self->buf;
	char rbuf[4096] = { 0 };
	__u32 chan;

	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED, hostile_connect(self, 1));
	chan = accept_and_recv(_metadata, self, rbuf, sizeof(rbuf));
	memset(self->buf, 0x77, sizeof(self->buf));
	h->version = 9;
	h->opcode = 1;
	h->payload_len = 100;
	h->total_len = 100;
	h->offset = 0;
	ASSERT_EQ(0, hostile_send(self, sizeof(*h) + 100));
	expect_closed_with_eproto(_metadata, self, chan, rbuf, sizeof(rbuf));
}

TEST_F(proto, lying_payload_length_closes_channel)
{
	struct wire_hdr *h = (struct wire_hdr *)self->buf;
	char rbuf[4096] = { 0 };
	__u32 chan;

	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED, hostile_connect(self, 1));
	chan = accept_and_recv(_metadata, self, rbuf, sizeof(rbuf));
	memset(self->buf, 0x77, sizeof(self->buf));
	memset(h, 0, sizeof(*h));
	h->version = 1;
	h->opcode = 1;
	h->payload_len = 60000;	/* only 100 bytes follow */
	h->total_len = 60000;
	ASSERT_EQ(0, hostile_send(self, sizeof(*h) + 100));
	expect_closed_with_eproto(_metadata, self, chan, rbuf, sizeof(rbuf));
}

TEST_F(proto, message_piece_out_of_order_closes_channel)
{
	struct wire_hdr *h = (struct wire_hdr *)self->buf;
	char rbuf[4096] = { 0 };
	__u32 chan;

	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED, hostile_connect(self, 1));
	chan = accept_and_recv(_metadata, self, rbuf, sizeof(rbuf));
	memset(self->buf, 0x77, sizeof(self->buf));
	memset(h, 0, sizeof(*h));
	h->version = 1;
	h->opcode = 1;
	h->payload_len = 100;
	h->total_len = 1000;
	h->offset = 3000;	/* a first piece must start at 0 */
	ASSERT_EQ(0, hostile_send(self, sizeof(*h) + 100));
	expect_closed_with_eproto(_metadata, self, chan, rbuf, sizeof(rbuf));
}

TEST_F(proto, truncated_header_closes_channel)
{
	char rbuf[4096] = { 0 };
	__u32 chan;

	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED, hostile_connect(self, 1));
	chan = accept_and_recv(_metadata, self, rbuf, sizeof(rbuf));
	memset(self->buf, 1, sizeof(self->buf));
	ASSERT_EQ(0, hostile_send(self, 10));
	expect_closed_with_eproto(_metadata, self, chan, rbuf, sizeof(rbuf));
}

TEST_HARNESS_MAIN
