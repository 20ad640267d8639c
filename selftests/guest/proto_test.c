// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile peer speaks to an ordma listener with librdmacm and raw verbs:
 * a wrong protocol version is refused, malformed messages close the channel
 * with EPROTO, and nothing lands anywhere but the receive buffers.
 */
#define ORDMA_GUEST_TEST
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <rdma/rdma_cma.h>
#include <linux/ordma.h>

#include "ordma_test.h"
#include "ordma_rawcm.h"
#include "ordma_gnl.h"
#include "kselftest_harness.h"

/*
 * The wire protocol (kernel/wire.h), as a peer must speak it (its version
 * and CM private data: ordma_rawcm.h).
 */
struct wire_hdr {
	uint8_t version;
	uint8_t opcode;
	uint16_t flags;
	uint32_t payload_len;
	uint64_t total_len, offset, base, token, op_id;
	uint32_t status, credits;
};

#define WIRE_MSG	1
#define WIRE_WRITE	3
#define WIRE_WRITE_ACK	4
#define WIRE_PLACE	7
#define WIRE_MSG_PLACED	8
#define WIRE_CREDIT	9
#define WIRE_NOTIFY	10
#define WIRE_WRITE_PLACED 11
#define WIRE_REVOKE	12
#define WIRE_REVOKED	13
#define WIRE_F_LAST	1
#define WIRE_F_WRITE	2
#define WIRE_F_NOTIFY	4
#define WIRE_F_STANDING	8
#define WIRE_F_GROW	0x10
#define WIRE_IMM_STANDING 0x4f520000
#define WIRE_IMM_NOTIFY	1
#define WIRE_IMM_MSG	0x4f530000
#define WIRE_SIMM_MAX	16384
#define IOVA_BASE	(1ULL << 40)	/* kernel/chan.h, ORDMA_IOVA_BASE */

/*
 * How long the hostile peer waits for ordma's answer, a completion or a
 * state: a bound on a hang, with room for a loaded host and the debug
 * kernel. Its loops poll 1 ms apart and count the polls, so they wait at
 * least this long.
 */
#define PROTO_WAIT_MS	RAWCM_EVENT_MS

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

/*
 * Listen on 192.0.2.1 at the first free port from a base that is the test's
 * own (a hash of its name): a test the harness killed while its listener was
 * still held cannot take the next test's port with it. @l gets the port.
 */
static int proto_listen(int fd, const char *name, unsigned int salt,
			struct ordma_listen *l)
{
	unsigned int h = 2166136261u + salt, i;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	memset(l, 0, sizeof(*l));
	l->size = sizeof(*l);
	l->addr.family = AF_INET;
	inet_pton(AF_INET, "192.0.2.1", l->addr.addr);
	for (i = 0; i < 64; i++) {
		l->addr.port = htons(20000 + (h + i) % 30000);
		if (!ioctl(fd, ORDMA_IOC_LISTEN, l))
			return 0;
		if (errno != EADDRINUSE)
			return -1;
	}
	return -1;
}

FIXTURE_SETUP(proto)
{
	struct ordma_listen l;

	ORDMA_TEST_FILTER();
	self->fd = open("/dev/ordma", O_RDWR);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, proto_listen(self->fd, _metadata->name, 0, &l));
	self->port = ntohs(l.addr.port);
	self->listener = l.out_id;
	self->ec = rdma_create_event_channel();
	ASSERT_NE(NULL, self->ec);
	ASSERT_EQ(0, rdma_create_id(self->ec, &self->id, NULL, RDMA_PS_TCP));
}

FIXTURE_TEARDOWN(proto)
{
	if (self->id->qp) {
		rawcm_drain(self->id, self->cq, -1);
		rdma_destroy_qp(self->id);
	}
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

/* Resolve, build a QP and connect with @version; return the final event. */
/* Connect with the private data *@cm; it gets the answer's. */
static int hostile_connect_cm(FIXTURE_DATA(proto) *self, struct wire_cm *cm)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(self->port) };

	inet_pton(AF_INET, "192.0.2.1", &sin.sin_addr);
	return rawcm_connect_cm(self->ec, self->id, (struct sockaddr *)&sin,
				cm, self->buf, sizeof(self->buf), &self->pd,
				&self->cq, &self->mr, NULL);
}

static int hostile_connect(FIXTURE_DATA(proto) *self, uint8_t version)
{
	struct wire_cm cm = { .version = version, .rx_size = 65536 };

	return hostile_connect_cm(self, &cm);
}

/* Post receive buffer @k: 1 KiB of self->buf at 1024 * k (0 is for sending). */
static int credit_post_recv(FIXTURE_DATA(proto) *self, int k)
{
	struct ibv_sge sge = { .addr = (uintptr_t)self->buf + 1024 * k,
			       .length = 1024, .lkey = self->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = k, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(self->id->qp, &wr, &bad);
}

/*
 * Post @wr and wait for its completion (@done). Messages from ordma
 * arriving meanwhile (its CREDITs, into buffers posted with
 * credit_post_recv()) give their buffer back.
 */
static int hostile_post(FIXTURE_DATA(proto) *self, struct ibv_send_wr *wr,
			enum ibv_wc_opcode done)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int n, tries = 0;

	if (ibv_post_send(self->id->qp, wr, &bad))
		return -1;
	while (tries++ < PROTO_WAIT_MS) {
		n = ibv_poll_cq(self->cq, 1, &wc);
		if (n < 0 || (n == 1 && wc.status != IBV_WC_SUCCESS))
			return -1;
		if (n == 0) {
			usleep(1000);
			continue;
		}
		if (wc.opcode == done)
			return 0;
		if (credit_post_recv(self, wc.wr_id))
			return -1;
	}
	return -1;
}

/* Send @len bytes of self->buf as one message. */
static int hostile_send(FIXTURE_DATA(proto) *self, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)self->buf, .length = len,
			       .lkey = self->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND };

	return hostile_post(self, &wr, IBV_WC_SEND);
}

/*
 * An RDMA WRITE of no bytes with immediate data @imm (no key needed): it
 * completes one of ordma's receives as a write into a standing offer would.
 */
static int hostile_write_imm(FIXTURE_DATA(proto) *self, uint32_t imm)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htonl(imm) };

	return hostile_post(self, &wr, IBV_WC_RDMA_WRITE);
}

/* Send @len bytes of self->buf as a SEND with immediate data @imm. */
static int hostile_send_imm(FIXTURE_DATA(proto) *self, uint32_t len,
			    uint32_t imm)
{
	struct ibv_sge sge = { .addr = (uintptr_t)self->buf, .length = len,
			       .lkey = self->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = len ? 1 : 0,
				  .opcode = IBV_WR_SEND_WITH_IMM,
				  .imm_data = htonl(imm) };

	return hostile_post(self, &wr, IBV_WC_SEND);
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
				.max = 1, .timeout_ms = 20000 };

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

TEST_F(proto, older_version_is_refused)
{
	EXPECT_EQ((int)RDMA_CM_EVENT_REJECTED,
		  hostile_connect(self, WIRE_VERSION - 1));
}

TEST_F(proto, newer_version_is_refused)
{
	EXPECT_EQ((int)RDMA_CM_EVENT_REJECTED,
		  hostile_connect(self, WIRE_VERSION + 1));
}

TEST_F(proto, unknown_cm_flag_is_refused)
{
	struct wire_cm cm = { .version = WIRE_VERSION, .flags = 0x2,
			      .rx_size = 65536 };

	EXPECT_EQ((int)RDMA_CM_EVENT_REJECTED, hostile_connect_cm(self, &cm));
}

/* A peer that does not ask to count every message is not asked either. */
TEST_F(proto, no_cm_flag_is_answered_without)
{
	struct wire_cm cm = { .version = WIRE_VERSION, .rx_size = 65536 };

	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect_cm(self, &cm));
	EXPECT_EQ(WIRE_VERSION, cm.version);
	EXPECT_EQ(0, cm.flags);
	EXPECT_EQ(0, cm.credits);
	EXPECT_LE(56U + 512, cm.rx_size);	/* ORDMA_WIRE_RX_MIN */
}

/*
 * A peer that asks the pair to count every message (an iWARP side must)
 * gets the flag back, and ordma's first credits: the receives it posted
 * before it accepted, at least three (ORDMA_CREDIT_ALL_RX), at most 16.
 */
TEST_F(proto, cm_credit_all_is_answered_with_first_credits)
{
	struct wire_cm cm = { .version = WIRE_VERSION,
			      .flags = WIRE_CM_F_CREDIT_ALL, .credits = 4,
			      .rx_size = 65536 };

	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect_cm(self, &cm));
	EXPECT_EQ(WIRE_VERSION, cm.version);
	EXPECT_EQ(WIRE_CM_F_CREDIT_ALL, cm.flags);
	EXPECT_LE(3, cm.credits);
	EXPECT_GE(16, cm.credits);
	EXPECT_LE(56U + 512, cm.rx_size);	/* ORDMA_WIRE_RX_MIN */
}

/*
 * Connect, let ordma accept with a receive posted, send @h followed by
 * 0x77 bytes, @len bytes in all: the channel must close with EPROTO and
 * leave the receive buffer untouched.
 */
static void hostile_expect_eproto(struct __test_metadata *_metadata,
				  FIXTURE_DATA(proto) *self,
				  const struct wire_hdr *h, uint32_t len)
{
	char rbuf[4096] = { 0 };
	__u32 chan;

	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	chan = accept_and_recv(_metadata, self, rbuf, sizeof(rbuf));
	memset(self->buf, 0x77, sizeof(self->buf));
	memcpy(self->buf, h, sizeof(*h));
	ASSERT_EQ(0, hostile_send(self, len));
	expect_closed_with_eproto(_metadata, self, chan, rbuf, sizeof(rbuf));
}

TEST_F(proto, bad_header_version_closes_channel)
{
	struct wire_hdr h = { .version = WIRE_VERSION + 1, .opcode = 1,
			      .payload_len = 100,
			      .total_len = 100 };

	hostile_expect_eproto(_metadata, self, &h, sizeof(h) + 100);
}

/*
 * A CREDIT with ORDMA_WIRE_F_GROW may only raise the receive size the peer
 * told (65536 at connect here), and only up to 16 MiB: 1000 bytes, the
 * same size, or 16 MiB + 1 close the channel.
 */
TEST_F(proto, grow_that_does_not_grow_closes_channel)
{
	struct wire_hdr h = { .version = WIRE_VERSION, .opcode = WIRE_CREDIT,
			      .flags = WIRE_F_GROW, .status = 1000 - 1 };

	hostile_expect_eproto(_metadata, self, &h, sizeof(h));
}

TEST_F(proto, grow_to_the_same_size_closes_channel)
{
	struct wire_hdr h = { .version = WIRE_VERSION, .opcode = WIRE_CREDIT,
			      .flags = WIRE_F_GROW, .status = 65536 - 1 };

	hostile_expect_eproto(_metadata, self, &h, sizeof(h));
}

TEST_F(proto, grow_past_16m_closes_channel)
{
	struct wire_hdr h = { .version = WIRE_VERSION, .opcode = WIRE_CREDIT,
			      .flags = WIRE_F_GROW, .status = 16 << 20 };

	hostile_expect_eproto(_metadata, self, &h, sizeof(h));
}

/* The QP number of the ordma end our raw QP is connected to. */
static uint32_t peer_qpn(FIXTURE_DATA(proto) *self)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_query_qp(self->id->qp, &attr, IBV_QP_DEST_QPN, &init))
		return 0;
	return attr.dest_qp_num;
}

/*
 * The fault is an event: a member of the family's events group gets one
 * PEER_FAULT naming the device, the channel end, its QP, the peer's
 * address and EPROTO, and no second one.
 */
TEST_F(proto, fault_is_an_event)
{
	struct wire_hdr h = { .version = WIRE_VERSION + 1, .opcode = 1,
			      .payload_len = 100,
			      .total_len = 100 };
	uint32_t v, addr, qpn, id;
	char rbuf[4096] = { 0 };
	struct req r;
	struct gnl g;

	ASSERT_EQ(0, gnl_open(&g));
	ASSERT_EQ(0, gnl_join_events(&g));
	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	accept_and_recv(_metadata, self, rbuf, sizeof(rbuf));
	memset(self->buf, 0x77, sizeof(self->buf));
	memcpy(self->buf, &h, sizeof(h));
	ASSERT_EQ(0, hostile_send(self, sizeof(h) + 100));
	EXPECT_EQ(-EPROTO, wait_res(self->fd));

	ASSERT_EQ(0, gnl_event_wait(&g, ORDMA_NL_CMD_PEER_FAULT,
				    PROTO_WAIT_MS));
	EXPECT_STREQ(ordma_ibdev(), reply_str(&g, ORDMA_NL_A_DEV_NAME));
	ASSERT_TRUE(reply_u32(&g, ORDMA_NL_A_ERRNO, &v));
	EXPECT_EQ((uint32_t)EPROTO, v);
	ASSERT_TRUE(reply_u32(&g, ORDMA_NL_A_PEER_IPV4, &addr));
	EXPECT_EQ(htonl(0xc0000201), addr);	/* 192.0.2.1 */
	ASSERT_TRUE(reply_u32(&g, ORDMA_NL_A_CHAN_QPN, &qpn));
	EXPECT_EQ(peer_qpn(self), qpn);
	ASSERT_TRUE(reply_u32(&g, ORDMA_NL_A_CHAN_ID, &id));
	/* Once per channel end. */
	EXPECT_EQ(-ETIMEDOUT, gnl_event_wait(&g, ORDMA_NL_CMD_PEER_FAULT, 500));
	/* The id names this process's channel end, with that QP, dead. */
	req_init(&r, g.family, ORDMA_NL_CMD_CHAN_GET, 0);
	req_put_u32(&r, ORDMA_NL_A_CHAN_ID, id);
	ASSERT_EQ(0, gnl_xfer(&g, &r));
	ASSERT_TRUE(reply_u32(&g, ORDMA_NL_A_PID, &v));
	EXPECT_EQ((uint32_t)getpid(), v);
	ASSERT_TRUE(reply_u32(&g, ORDMA_NL_A_CHAN_QPN, &v));
	EXPECT_EQ(qpn, v);
	ASSERT_TRUE(reply_u32(&g, ORDMA_NL_A_ERRNO, &v));
	EXPECT_EQ((uint32_t)EPROTO, v);
	close(g.fd);
}

TEST_F(proto, lying_payload_length_closes_channel)
{
	/* Only 100 bytes follow. */
	struct wire_hdr h = { .version = WIRE_VERSION, .opcode = 1,
			      .payload_len = 60000, .total_len = 60000 };

	hostile_expect_eproto(_metadata, self, &h, sizeof(h) + 100);
}

TEST_F(proto, message_piece_out_of_order_closes_channel)
{
	/* A first piece must start at 0. */
	struct wire_hdr h = { .version = WIRE_VERSION, .opcode = 1,
			      .payload_len = 100, .total_len = 1000,
			      .offset = 3000 };

	hostile_expect_eproto(_metadata, self, &h, sizeof(h) + 100);
}

/* A header-only message with these fields closes the channel with EPROTO. */
static void hostile_header(struct __test_metadata *_metadata,
			   FIXTURE_DATA(proto) *self, uint8_t opcode,
			   uint16_t flags, uint64_t base, uint64_t op_id)
{
	struct wire_hdr h = { .version = WIRE_VERSION, .opcode = opcode,
			      .flags = flags, .total_len = 4096, .base = base,
			      .token = 0x1234, .op_id = op_id };

	hostile_expect_eproto(_metadata, self, &h, sizeof(h));
}

/* Bytes placed into a standing offer nobody made. */
TEST_F(proto, standing_piece_without_offer_closes_channel)
{
	hostile_header(_metadata, self, WIRE_WRITE_PLACED,
		       WIRE_F_STANDING | WIRE_F_LAST, 4096, 1);
}

/* A standing offer that is not a window's (no ORDMA_WIRE_F_WRITE). */
TEST_F(proto, standing_offer_of_no_window_closes_channel)
{
	hostile_header(_metadata, self, WIRE_PLACE, WIRE_F_STANDING,
		       0x10000, 5);
}

/* ORDMA_WIRE_F_STANDING on a write's stop marker (no bytes). */
TEST_F(proto, standing_flag_without_bytes_closes_channel)
{
	hostile_header(_metadata, self, WIRE_WRITE_PLACED,
		       WIRE_F_STANDING | WIRE_F_LAST, 0, 1);
}

/* A REVOKE must name a window. */
TEST_F(proto, revoke_of_token_zero_closes_channel)
{
	hostile_header(_metadata, self, WIRE_REVOKE, 0, 0, 0);
}

/* A write with immediate data: unknown data, or no standing offer made. */
static void hostile_imm(struct __test_metadata *_metadata,
			FIXTURE_DATA(proto) *self, uint32_t imm)
{
	char rbuf[4096] = { 0 };
	__u32 chan;

	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	chan = accept_and_recv(_metadata, self, rbuf, sizeof(rbuf));
	ASSERT_EQ(0, hostile_write_imm(self, imm));
	expect_closed_with_eproto(_metadata, self, chan, rbuf, sizeof(rbuf));
}

TEST_F(proto, write_imm_unknown_closes_channel)
{
	hostile_imm(_metadata, self, 0x12345678);
}

TEST_F(proto, write_imm_without_standing_offer_closes_channel)
{
	hostile_imm(_metadata, self, WIRE_IMM_STANDING | WIRE_IMM_NOTIFY);
}

TEST_F(proto, truncated_header_closes_channel)
{
	char rbuf[4096] = { 0 };
	__u32 chan;

	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	chan = accept_and_recv(_metadata, self, rbuf, sizeof(rbuf));
	memset(self->buf, 1, sizeof(self->buf));
	ASSERT_EQ(0, hostile_send(self, 10));
	expect_closed_with_eproto(_metadata, self, chan, rbuf, sizeof(rbuf));
}

/*
 * A message of one piece may come as a SEND with immediate data and no
 * header (version 8): the receive gets its bytes, nothing more.
 */
TEST_F(proto, send_imm_message_is_received)
{
	char rbuf[4096] = { 0 };
	int i;

	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	accept_and_recv(_metadata, self, rbuf, sizeof(rbuf));
	for (i = 0; i < 1000; i++)
		self->buf[i] = (char)(i * 13 + 1);
	ASSERT_EQ(0, hostile_send_imm(self, 1000, WIRE_IMM_MSG));
	ASSERT_EQ(1000, wait_res(self->fd));
	EXPECT_EQ(0, memcmp(rbuf, self->buf, 1000));
	for (i = 1000; i < (int)sizeof(rbuf); i++)
		ASSERT_EQ(0, rbuf[i]) TH_LOG("written past the message at %d", i);
}

/* Any other immediate data on a SEND, or no bytes, is a protocol error. */
static void hostile_send_imm_eproto(struct __test_metadata *_metadata,
				    FIXTURE_DATA(proto) *self, uint32_t len,
				    uint32_t imm)
{
	char rbuf[4096] = { 0 };
	__u32 chan;

	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	chan = accept_and_recv(_metadata, self, rbuf, sizeof(rbuf));
	memset(self->buf, 0x55, sizeof(self->buf));
	ASSERT_EQ(0, hostile_send_imm(self, len, imm));
	expect_closed_with_eproto(_metadata, self, chan, rbuf, sizeof(rbuf));
}

TEST_F(proto, send_imm_unknown_closes_channel)
{
	hostile_send_imm_eproto(_metadata, self, 100, 0x12345678);
}

TEST_F(proto, send_imm_standing_data_closes_channel)
{
	hostile_send_imm_eproto(_metadata, self, 100, WIRE_IMM_STANDING);
}

TEST_F(proto, send_imm_of_no_bytes_closes_channel)
{
	hostile_send_imm_eproto(_metadata, self, 0, WIRE_IMM_MSG);
}

/* Past WIRE_SIMM_MAX a message needs its header, even if it fits a chunk. */
TEST_F(proto, send_imm_too_long_closes_channel)
{
	static char big[WIRE_SIMM_MAX + 1];
	char rbuf[4096] = { 0 };
	struct ibv_sge sge = { .addr = (uintptr_t)big, .length = sizeof(big) };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_IMM,
				  .imm_data = htonl(WIRE_IMM_MSG) };
	struct ibv_mr *mr;
	__u32 chan;

	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	chan = accept_and_recv(_metadata, self, rbuf, sizeof(rbuf));
	mr = ibv_reg_mr(self->pd, big, sizeof(big), IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	sge.lkey = mr->lkey;
	memset(big, 0x66, sizeof(big));
	EXPECT_EQ(0, hostile_post(self, &wr, IBV_WC_SEND));
	expect_closed_with_eproto(_metadata, self, chan, rbuf, sizeof(rbuf));
	ibv_dereg_mr(mr);
}

/* -- credits: ordma sends payload only into buffers the peer granted ------- */

#define CR_LEN		900	/* a message that fits one 1 KiB receive */

/*
 * Wait up to @ms for a message from ordma; header-only ones (its CREDITs)
 * are noted and their buffer posted again. Returns the buffer index of the
 * first message with payload, -1 if none came, -2 on an error; @imm_len is
 * set to its length if it came as a SEND with immediate data.
 */
static int credit_wait_payload(FIXTURE_DATA(proto) *self, int ms,
			       uint32_t *imm_len)
{
	struct wire_hdr *h;
	struct ibv_wc wc;
	int n;

	while (ms-- > 0) {
		n = ibv_poll_cq(self->cq, 1, &wc);
		if (n < 0 || (n == 1 && wc.status != IBV_WC_SUCCESS))
			return -2;
		if (n == 0) {
			usleep(1000);
			continue;
		}
		if (wc.opcode != IBV_WC_RECV)
			continue;	/* our own CREDIT went out */
		if (wc.wc_flags & IBV_WC_WITH_IMM) {
			/* A message of one piece, no header (version 8). */
			if (ntohl(wc.imm_data) != WIRE_IMM_MSG)
				return -2;
			*imm_len = wc.byte_len;
			return wc.wr_id;
		}
		h = (struct wire_hdr *)(self->buf + 1024 * wc.wr_id);
		if (wc.byte_len < sizeof(*h) || h->version != WIRE_VERSION)
			return -2;
		if (!h->payload_len && h->opcode != WIRE_MSG) {
			if (credit_post_recv(self, wc.wr_id))
				return -2;
			continue;
		}
		return wc.wr_id;
	}
	return -1;
}

/*
 * A peer that posts receive buffers but grants no credit gets no payload:
 * ordma's SEND waits (its CREDIT telling the peer of ordma's own buffers
 * goes out meanwhile). One credit from the peer lets exactly that message
 * out, intact.
 */
TEST_F(proto, send_waits_for_credit)
{
	struct wire_hdr *h = (struct wire_hdr *)self->buf, *m;
	struct ordma_accept a = { .size = sizeof(a),
				  .listener_id = self->listener };
	struct ordma_submit s = { .size = sizeof(s), .op = ORDMA_OP_SEND,
				  .len = CR_LEN };
	static unsigned char msg[CR_LEN];
	struct ibv_send_wr wr = { .num_sge = 1, .opcode = IBV_WR_SEND }, *bad;
	struct ibv_sge sge = { .addr = (uintptr_t)self->buf,
			       .length = sizeof(*h) };
	uint32_t imm_len;
	int k, i;

	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	for (k = 1; k < 4; k++)
		ASSERT_EQ(0, credit_post_recv(self, k));
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_ACCEPT, &a));
	for (i = 0; i < CR_LEN; i++)
		msg[i] = (unsigned char)(i * 7 + 3);
	s.chan_id = a.out_chan_id;
	s.addr = (unsigned long)msg;
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_SUBMIT, &s));

	/* No credit: nothing with payload may arrive. */
	ASSERT_EQ(-1, credit_wait_payload(self, 1500, &imm_len));

	/* One credit: ordma has sent no payload yet, so 1 is ahead by one. */
	memset(h, 0, sizeof(*h));
	h->version = WIRE_VERSION;
	h->opcode = WIRE_CREDIT;
	h->credits = 1;
	sge.lkey = self->mr->lkey;
	wr.sg_list = &sge;
	ASSERT_EQ(0, ibv_post_send(self->id->qp, &wr, &bad));
	imm_len = UINT32_MAX;
	k = credit_wait_payload(self, PROTO_WAIT_MS, &imm_len);
	ASSERT_LT(0, k);
	m = (struct wire_hdr *)(self->buf + 1024 * k);
	if (imm_len != UINT32_MAX) {
		/* One piece with immediate data, no header. */
		EXPECT_EQ((uint32_t)CR_LEN, imm_len);
		EXPECT_EQ(0, memcmp(m, msg, CR_LEN));
	} else {
		EXPECT_EQ(WIRE_MSG, m->opcode);
		EXPECT_EQ((uint32_t)CR_LEN, m->payload_len);
		EXPECT_EQ((uint64_t)CR_LEN, m->total_len);
		EXPECT_EQ((uint64_t)0, m->offset);
		EXPECT_EQ(0, memcmp(m + 1, msg, CR_LEN));
	}
	EXPECT_EQ(CR_LEN, wait_res(self->fd));
}

/* Send a CREDIT telling @credits, from the first KiB of self->buf. */
static int credit_tell(FIXTURE_DATA(proto) *self, uint32_t credits)
{
	struct wire_hdr *h = (struct wire_hdr *)self->buf;
	struct ibv_sge sge = { .addr = (uintptr_t)self->buf,
			       .length = sizeof(*h), .lkey = self->mr->lkey };
	struct ibv_send_wr wr = { .num_sge = 1, .opcode = IBV_WR_SEND,
				  .sg_list = &sge }, *bad;

	memset(h, 0, sizeof(*h));
	h->version = WIRE_VERSION;
	h->opcode = WIRE_CREDIT;
	h->credits = credits;
	return ibv_post_send(self->id->qp, &wr, &bad);
}

/*
 * Take the messages ordma sends until none came for @quiet_ms (or for
 * PROTO_WAIT_MS before the first): each one's buffer index goes to
 * @slots[*@n], and a payload message must be message *@payload of @msgs
 * (then counted). Return: 0, or -1 on an error or a payload out of place.
 */
static int credit_take(FIXTURE_DATA(proto) *self, int quiet_ms,
		       const unsigned char (*msgs)[CR_LEN], int nmsgs,
		       int *slots, int *n, int *payload)
{
	int idle = 0, limit = *n ? quiet_ms : PROTO_WAIT_MS;
	const struct wire_hdr *m;
	struct ibv_wc wc;
	int got;

	while (idle < limit) {
		got = ibv_poll_cq(self->cq, 1, &wc);
		if (got < 0 || (got == 1 && wc.status != IBV_WC_SUCCESS))
			return -1;
		if (got == 0) {
			usleep(1000);
			idle++;
			continue;
		}
		if (wc.opcode != IBV_WC_RECV)
			continue;	/* our own CREDIT went out */
		idle = 0;
		limit = quiet_ms;
		slots[(*n)++] = wc.wr_id;
		m = (const void *)(self->buf + 1024 * wc.wr_id);
		if (wc.wc_flags & IBV_WC_WITH_IMM) {
			/* A message of one piece without its header. */
			if (*payload >= nmsgs || wc.byte_len != CR_LEN ||
			    memcmp(m, msgs[*payload], CR_LEN))
				return -1;
			++*payload;
			continue;
		}
		if (m->opcode == WIRE_CREDIT)
			continue;
		if (*payload >= nmsgs || m->opcode != WIRE_MSG ||
		    m->payload_len != CR_LEN || m->total_len != CR_LEN ||
		    memcmp(m + 1, msgs[*payload], CR_LEN))
			return -1;
		++*payload;
	}
	return 0;
}

/*
 * A peer that asks the pair to count every message (as on iWARP, where a
 * SEND past the receives posted ends the connection) never gets more
 * messages than it told receives, nor a message other than a CREDIT into
 * the last one: told 3 receives at connect, and each time what it has
 * taken is posted again, the four messages arrive intact and in order,
 * within those bounds.
 */
TEST_F(proto, credit_all_peer_gets_its_credits_less_one)
{
	struct wire_cm cm = { .version = WIRE_VERSION,
			      .flags = WIRE_CM_F_CREDIT_ALL, .credits = 3,
			      .rx_size = 1024 };
	struct ordma_accept a = { .size = sizeof(a),
				  .listener_id = self->listener };
	struct ordma_submit s = { .size = sizeof(s), .op = ORDMA_OP_SEND,
				  .len = CR_LEN };
	static unsigned char msgs[4][CR_LEN];
	int slots[64], n = 0, taken = 0, payload = 0, round, i;
	uint32_t posted = 3;

	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect_cm(self, &cm));
	ASSERT_EQ(WIRE_CM_F_CREDIT_ALL, cm.flags);
	/* The 3 receives told, before ordma's side is accepted. */
	for (i = 1; i < 4; i++)
		ASSERT_EQ(0, credit_post_recv(self, i));
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_ACCEPT, &a));
	s.chan_id = a.out_chan_id;
	for (i = 0; i < 4; i++) {
		memset(msgs[i], 0x41 + i, CR_LEN);
		s.addr = (unsigned long)msgs[i];
		ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_SUBMIT, &s));
	}
	for (round = 0; payload < 4 && round < 8; round++) {
		ASSERT_EQ(0, credit_take(self, 1500, msgs, 4, slots, &n,
					 &payload))
			TH_LOG("message %d out of place", payload);
		ASSERT_LT(taken, n) TH_LOG("nothing came in round %d", round);
		ASSERT_GE((int)posted - 1, payload)
			TH_LOG("a message into the last credit");
		/*
		 * One receive more, not told: a message sent past the
		 * credits waits in RNR retry on RoCE, and would land in it.
		 */
		ASSERT_EQ(0, credit_post_recv(self, slots[taken++]));
		posted++;
		i = n;
		ASSERT_EQ(0, credit_take(self, 500, msgs, 4, slots, &n,
					 &payload));
		ASSERT_EQ(i, n) TH_LOG("a message past the credits");
		/* The rest of what was taken is posted again, and told. */
		for (; taken < n; taken++, posted++)
			ASSERT_EQ(0, credit_post_recv(self, slots[taken]));
		ASSERT_EQ(0, credit_tell(self, posted));
	}
	ASSERT_EQ(4, payload);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(CR_LEN, wait_res(self->fd));
}

/*
 * Connect the peer (3 receive buffers posted, no credit granted) and have
 * ordma SEND message 1 of 64 KiB to it: the message waits for a credit.
 * Returns ordma's channel id, or -1.
 */
static int offer_peer_start(FIXTURE_DATA(proto) *self)
{
	struct ordma_accept a = { .size = sizeof(a),
				  .listener_id = self->listener };
	struct ordma_submit s = { .size = sizeof(s), .op = ORDMA_OP_SEND,
				  .len = 65536 };
	static unsigned char msg[65536];
	int k;

	if (hostile_connect(self, WIRE_VERSION) != RDMA_CM_EVENT_ESTABLISHED)
		return -1;
	for (k = 1; k < 4; k++)
		if (credit_post_recv(self, k))
			return -1;
	if (ioctl(self->fd, ORDMA_IOC_ACCEPT, &a))
		return -1;
	s.chan_id = a.out_chan_id;
	s.addr = (unsigned long)msg;
	if (ioctl(self->fd, ORDMA_IOC_SUBMIT, &s))
		return -1;
	return a.out_chan_id;
}

/*
 * A receiver has a few segments at a time, so a sender holds only a few of
 * its offers: a peer that piles up offers for a message ordma cannot send
 * yet (it grants no credit) closes the channel instead of growing a list.
 */
TEST_F(proto, too_many_offers_close_channel)
{
	struct wire_hdr *h = (struct wire_hdr *)self->buf;
	int k;

	ASSERT_LE(0, offer_peer_start(self));
	for (k = 0; k < 9; k++) {
		memset(h, 0, sizeof(*h));
		h->version = WIRE_VERSION;
		h->opcode = WIRE_PLACE;
		h->op_id = 1;
		h->offset = 4096 * k;
		h->total_len = 4096;
		h->base = 0x10000 + 4096 * k;
		h->token = 0x1234;
		h->status = 0xffffffff;	/* a 4 GiB receive buffer */
		ASSERT_EQ(0, hostile_send(self, sizeof(*h)));
	}
	EXPECT_EQ(-EPROTO, wait_res(self->fd));
}

/*
 * An offer with a key the peer never registered: ordma's RDMA WRITE into it
 * fails, and the message fails with it (the WRITE is unsignaled; the SEND
 * behind it is only flushed) instead of completing as if delivered.
 */
TEST_F(proto, write_into_bad_offer_fails_send)
{
	struct wire_hdr *h = (struct wire_hdr *)self->buf;
	struct ordma_chan_info ci = { .size = sizeof(ci) };
	int chan;

	chan = offer_peer_start(self);
	ASSERT_LE(0, chan);
	memset(h, 0, sizeof(*h));
	h->version = WIRE_VERSION;
	h->opcode = WIRE_PLACE;
	h->op_id = 1;
	h->total_len = 65536;
	h->base = 0x10000;
	h->token = 0x1234;	/* no such key */
	h->status = 0xffffffff;	/* a 4 GiB receive buffer */
	ASSERT_EQ(0, hostile_send(self, sizeof(*h)));
	memset(h, 0, sizeof(*h));
	h->version = WIRE_VERSION;
	h->opcode = WIRE_CREDIT;
	h->credits = 2;
	/*
	 * ordma's WRITE with the bad key may come first: our responder NAKs
	 * it and our QP goes to the error state, and this SEND fails (rxe
	 * from 6.5 runs our responder from a workqueue, so either order
	 * happens). ordma needs no more credit to fail the message.
	 */
	hostile_send(self, sizeof(*h));
	EXPECT_EQ(-EIO, wait_res(self->fd));
	/* The failed WRITE itself closed the channel. */
	ci.chan_id = chan;
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_CHAN_INFO, &ci));
	EXPECT_EQ((__u32)ORDMA_CHAN_DISCONNECTED, ci.out_state);
}

/* -- placement: the peer writes into ranges ordma offered ------------------- */

#define PL_LEN		(1024 * 1024)
/*
 * The peer registers one page more than it sends: rdma_rxe reads past the
 * maps of an MR of 256 * k pages when a transfer ends in its last page.
 */
#define PL_SRC_LEN	(PL_LEN + 4096)
#define PL_FIRST	4096

/* The hostile side's buffers for placement: what it sends and receives. */
struct place_peer {
	unsigned char *src;	/* PL_LEN bytes: the message */
	struct ibv_mr *src_mr;
	struct wire_hdr hdrs[8];	/* receive buffers for ordma's PLACEs */
	struct ibv_mr *hdrs_mr;
	unsigned char piece[65536];	/* one MSG: header + payload */
	struct ibv_mr *piece_mr;
	struct wire_hdr offers[16];	/* ordma's PLACEs, in order */
	int noffers;
	uint32_t acks[8];	/* status of each WRITE_ACK, in order */
	int nacks;
};

static unsigned char pl_byte(size_t i)
{
	return (unsigned char)(i * 131 + (i >> 12) * 7 + 1);
}

/* Post receive buffer @i of the peer's hdrs[]. */
static int place_post_recv(FIXTURE_DATA(proto) *self, struct place_peer *pp,
			   int i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)&pp->hdrs[i],
			       .length = sizeof(pp->hdrs[i]),
			       .lkey = pp->hdrs_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(self->id->qp, &wr, &bad);
}

static int place_peer_init(FIXTURE_DATA(proto) *self, struct place_peer *pp)
{
	int i;

	memset(pp, 0, sizeof(*pp));
	pp->src = mmap(NULL, PL_SRC_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pp->src == MAP_FAILED)
		return -1;
	for (size_t b = 0; b < PL_LEN; b++)
		pp->src[b] = pl_byte(b);
	pp->src_mr = ibv_reg_mr(self->pd, pp->src, PL_SRC_LEN, 0);
	pp->hdrs_mr = ibv_reg_mr(self->pd, pp->hdrs, sizeof(pp->hdrs),
				 IBV_ACCESS_LOCAL_WRITE);
	pp->piece_mr = ibv_reg_mr(self->pd, pp->piece, sizeof(pp->piece), 0);
	if (!pp->src_mr || !pp->hdrs_mr || !pp->piece_mr)
		return -1;
	for (i = 0; i < 8; i++)
		if (place_post_recv(self, pp, i))
			return -1;
	return 0;
}

static void place_peer_fini(struct place_peer *pp)
{
	if (pp->src_mr)
		ibv_dereg_mr(pp->src_mr);
	if (pp->hdrs_mr)
		ibv_dereg_mr(pp->hdrs_mr);
	if (pp->piece_mr)
		ibv_dereg_mr(pp->piece_mr);
	if (pp->src && pp->src != MAP_FAILED)
		munmap(pp->src, PL_SRC_LEN);
}

/*
 * Note a receive completion: ordma sent us something. A PLACE and the status
 * of a WRITE_ACK are kept; the buffer goes back at once.
 */
static void place_note_recv(FIXTURE_DATA(proto) *self, struct place_peer *pp,
			    struct ibv_wc *wc)
{
	int i = wc->wr_id - 100;

	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV)
		return;
	if (pp->hdrs[i].opcode == WIRE_PLACE && pp->noffers < 16)
		pp->offers[pp->noffers++] = pp->hdrs[i];
	if (pp->hdrs[i].opcode == WIRE_WRITE_ACK && pp->nacks < 8)
		pp->acks[pp->nacks++] = pp->hdrs[i].status;
	place_post_recv(self, pp, i);
}

/* Post work requests (chained) and wait for the last one's completion. */
static int place_post(FIXTURE_DATA(proto) *self, struct place_peer *pp,
		      struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int n, tries = 0;

	if (ibv_post_send(self->id->qp, wr, &bad))
		return -1;
	for (;;) {
		n = ibv_poll_cq(self->cq, 1, &wc);
		if (n < 0 || (n == 0 && tries++ > PROTO_WAIT_MS))
			return -1;
		if (n == 0) {
			usleep(1000);
			continue;
		}
		if (wc.opcode == IBV_WC_RECV) {
			place_note_recv(self, pp, &wc);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS)
			return -1;
		if (wc.opcode == IBV_WC_SEND)
			return 0;
	}
}

/* One MSG piece of message 1: bytes [off, off + len) of the pattern. */
static int place_send_piece(FIXTURE_DATA(proto) *self, struct place_peer *pp,
			    size_t off, size_t len)
{
	struct wire_hdr *h = (struct wire_hdr *)pp->piece;
	struct ibv_sge sge = { .addr = (uintptr_t)pp->piece,
			       .length = sizeof(*h) + len,
			       .lkey = pp->piece_mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };

	memset(h, 0, sizeof(*h));
	h->version = WIRE_VERSION;
	h->opcode = WIRE_MSG;
	h->payload_len = len;
	h->total_len = PL_LEN;
	h->offset = off;
	h->op_id = 1;
	memcpy(h + 1, pp->src + off, len);
	return place_post(self, pp, &wr);
}

/* Pieces of at most 60000 bytes for [off, end). */
static int place_send_range(FIXTURE_DATA(proto) *self, struct place_peer *pp,
			    size_t off, size_t end)
{
	size_t n;

	while (off < end) {
		n = end - off < 60000 ? end - off : 60000;
		if (place_send_piece(self, pp, off, n))
			return -1;
		off += n;
	}
	return 0;
}

/* RDMA WRITE [off, off + len) of the pattern to raddr/rkey, then @hdr. */
static int place_write_hdr(FIXTURE_DATA(proto) *self, struct place_peer *pp,
			   size_t off, size_t len, uint64_t raddr,
			   uint32_t rkey, const struct wire_hdr *hdr)
{
	struct wire_hdr *h = (struct wire_hdr *)pp->piece;
	struct ibv_sge wsge = { .addr = (uintptr_t)pp->src + off,
				.length = len, .lkey = pp->src_mr->lkey };
	struct ibv_sge hsge = { .addr = (uintptr_t)pp->piece,
				.length = sizeof(*h),
				.lkey = pp->piece_mr->lkey };
	struct ibv_send_wr hwr = { .sg_list = &hsge, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr wwr = { .sg_list = &wsge, .num_sge = 1,
				   .opcode = IBV_WR_RDMA_WRITE,
				   .send_flags = IBV_SEND_SIGNALED,
				   .next = &hwr };

	wwr.wr.rdma.remote_addr = raddr;
	wwr.wr.rdma.rkey = rkey;
	*h = *hdr;
	return place_post(self, pp, &wwr);
}

/* RDMA WRITE [off, off + len) to raddr/rkey, then MSG_PLACED for @msg. */
static int place_write(FIXTURE_DATA(proto) *self, struct place_peer *pp,
		       size_t off, size_t len, uint64_t raddr, uint32_t rkey,
		       uint64_t msg)
{
	struct wire_hdr h = { .version = WIRE_VERSION,
			      .opcode = WIRE_MSG_PLACED, .total_len = PL_LEN,
			      .offset = off, .base = len, .op_id = msg };

	return place_write_hdr(self, pp, off, len, raddr, rkey, &h);
}

/* Poll until *@count (offers or acks noted) reaches @n. */
static int place_wait_for(FIXTURE_DATA(proto) *self, struct place_peer *pp,
			  const int *count, int n)
{
	struct ibv_wc wc;
	int k, tries = 0;

	while (*count < n) {
		k = ibv_poll_cq(self->cq, 1, &wc);
		if (k < 0 || (k == 0 && tries++ > 20000))
			return -1;
		if (k == 0)
			usleep(1000);
		else
			place_note_recv(self, pp, &wc);
	}
	return 0;
}

/* Wait for ordma's first PLACE; fill @h with it. */
static int place_wait_offer(FIXTURE_DATA(proto) *self, struct place_peer *pp,
			    struct wire_hdr *h)
{
	if (place_wait_for(self, pp, &pp->noffers, 1))
		return -1;
	*h = pp->offers[0];
	return 0;
}

/* One number from the file at @path. */
static int read_u64(unsigned long long *v, const char *path)
{
	FILE *f = fopen(path, "r");
	int ret;

	if (!f)
		return -1;
	ret = fscanf(f, "%llu", v) == 1 ? 0 : -1;
	fclose(f);
	return ret;
}

static int sysfs_get(const char *attr, unsigned long long *v)
{
	char path[128];

	return read_u64(v, ordma_sysfs(path, sizeof(path), attr));
}

static int mode_write(const char *mode)
{
	char path[128];
	FILE *f = fopen(ordma_sysfs(path, sizeof(path), "mode"), "w");
	int ret;

	if (!f)
		return -1;
	ret = fputs(mode, f) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/*
 * ordma receives into @rbuf (PL_LEN) in mode zerocopy from a raw peer;
 * wait for its early offer, taken before anything was sent.
 */
static __u32 place_early_offer(struct __test_metadata *_metadata,
			       FIXTURE_DATA(proto) *self, unsigned char *rbuf,
			       struct place_peer *pp, struct wire_hdr *offer)
{
	__u32 chan;

	ASSERT_EQ(0, mode_write("zerocopy"));
	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	ASSERT_EQ(0, place_peer_init(self, pp));
	chan = accept_and_recv(_metadata, self, rbuf, PL_LEN);
	ASSERT_EQ(0, place_wait_offer(self, pp, offer));
	EXPECT_EQ(0, mode_write("auto"));
	return chan;
}

/*
 * A well-behaved peer. ordma offers the receive buffer as soon as the RECV
 * is posted (an early offer: message 1, from offset 0, with the buffer's
 * length), before anything was sent. The peer RDMA WRITEs the first piece
 * into it and says so with MSG_PLACED, sends the next piece through a
 * chunk, places the rest of the offered range and sends whatever is left.
 * The receive completes with every byte right, the placed bytes counted.
 */
TEST_F(proto, peer_writes_into_offered_range)
{
	unsigned char *rbuf = mmap(NULL, PL_LEN, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct place_peer pp;
	struct wire_hdr offer;
	unsigned long long placed0, placed1;
	size_t i, end;

	ASSERT_NE(MAP_FAILED, rbuf);
	memset(rbuf, 0, PL_LEN);
	ASSERT_EQ(0, sysfs_get("bytes_placed", &placed0));
	place_early_offer(_metadata, self, rbuf, &pp, &offer);
	ASSERT_EQ((uint64_t)1, offer.op_id);
	ASSERT_EQ((uint64_t)0, offer.offset);
	ASSERT_EQ((uint32_t)(PL_LEN - 1), offer.status);
	ASSERT_LT((uint64_t)2 * PL_FIRST, offer.total_len);
	ASSERT_GE((uint64_t)PL_LEN, offer.total_len);
	/* The address is no address of ours: where in a page, no more. */
	ASSERT_EQ(IOVA_BASE + ((unsigned long)rbuf & 4095), offer.base);
	end = offer.total_len;
	ASSERT_EQ(0, place_write(self, &pp, 0, PL_FIRST, offer.base,
				 (uint32_t)offer.token, 1));
	ASSERT_EQ(0, place_send_range(self, &pp, PL_FIRST, 2 * PL_FIRST));
	ASSERT_EQ(0, place_write(self, &pp, 2 * PL_FIRST, end - 2 * PL_FIRST,
				 offer.base + 2 * PL_FIRST,
				 (uint32_t)offer.token, 1));
	ASSERT_EQ(0, place_send_range(self, &pp, end, PL_LEN));
	ASSERT_EQ(PL_LEN, wait_res(self->fd));
	for (i = 0; i < PL_LEN; i++)
		if (rbuf[i] != pl_byte(i))
			break;
	ASSERT_EQ((size_t)PL_LEN, i) TH_LOG("first wrong byte at %zu", i);
	ASSERT_EQ(0, sysfs_get("bytes_placed", &placed1));
	ASSERT_EQ(end - PL_FIRST, placed1 - placed0);
	place_peer_fini(&pp);
	munmap(rbuf, PL_LEN);
}

/*
 * The first piece placed although nothing was offered for that message
 * (an offer for message 1 does not cover message 2): EPROTO.
 */
TEST_F(proto, placed_first_piece_of_other_message_closes_channel)
{
	unsigned char *rbuf = mmap(NULL, PL_LEN, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct place_peer pp;
	struct wire_hdr offer;

	ASSERT_NE(MAP_FAILED, rbuf);
	place_early_offer(_metadata, self, rbuf, &pp, &offer);
	ASSERT_EQ(0, place_write(self, &pp, 0, PL_FIRST, offer.base,
				 (uint32_t)offer.token, 2));
	EXPECT_EQ(-EPROTO, wait_res(self->fd));
	place_peer_fini(&pp);
	munmap(rbuf, PL_LEN);
}

/*
 * MSG_PLACED for bytes ordma offered for another message than the one
 * the piece names: the channel closes with EPROTO.
 */
TEST_F(proto, placed_outside_offer_closes_channel)
{
	unsigned char *rbuf = mmap(NULL, PL_LEN, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct place_peer pp;
	struct wire_hdr offer;

	ASSERT_NE(MAP_FAILED, rbuf);
	place_early_offer(_metadata, self, rbuf, &pp, &offer);
	ASSERT_EQ(0, place_send_piece(self, &pp, 0, PL_FIRST));
	/* Within the offered range, but said to be of another message. */
	ASSERT_EQ(0, place_write(self, &pp, PL_FIRST, 4096,
				 offer.base + PL_FIRST, (uint32_t)offer.token,
				 2));
	EXPECT_EQ(-EPROTO, wait_res(self->fd));
	place_peer_fini(&pp);
	munmap(rbuf, PL_LEN);
}

/* -- writes into a window, and their notifications ---------------------------- */

/* Send header @h with @h->payload_len bytes of @payload after it. */
static int wire_send(FIXTURE_DATA(proto) *self, struct place_peer *pp,
		     const struct wire_hdr *h, const void *payload)
{
	struct ibv_sge sge = { .addr = (uintptr_t)pp->piece,
			       .length = sizeof(*h) + h->payload_len,
			       .lkey = pp->piece_mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };

	memcpy(pp->piece, h, sizeof(*h));
	if (h->payload_len)
		memcpy(pp->piece + sizeof(*h), payload, h->payload_len);
	return place_post(self, pp, &wr);
}

static __u64 expose_window(struct __test_metadata *_metadata,
			   FIXTURE_DATA(proto) *self, void *win, size_t len)
{
	struct ordma_expose e = { .size = sizeof(e), .addr = (uintptr_t)win,
				  .len = len,
				  .access = ORDMA_ACCESS_REMOTE_WRITE };

	EXPECT_EQ(0, ioctl(self->fd, ORDMA_IOC_EXPOSE, &e));
	return e.out_token;
}

/*
 * Connect, accept with a receive into @small, expose @win (8192 bytes) and
 * fill @h for the first piece (4096 bytes) of write 1 covering all of it.
 * Returns the channel.
 */
static __u32 small_write_setup(struct __test_metadata *_metadata,
			       FIXTURE_DATA(proto) *self, unsigned char *win,
			       struct place_peer *pp, struct wire_hdr *h,
			       unsigned char *small, size_t small_len)
{
	__u32 chan;

	EXPECT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	EXPECT_EQ(0, place_peer_init(self, pp));
	chan = accept_and_recv(_metadata, self, small, small_len);
	memset(h, 0, sizeof(*h));
	h->version = WIRE_VERSION;
	h->opcode = WIRE_WRITE;
	h->payload_len = 4096;
	h->total_len = 8192;
	h->op_id = 1;
	h->token = expose_window(_metadata, self, win, 8192);
	return chan;
}

/* Message @id (three bytes) goes to the next RECV, into @small. */
static void next_msg_to_next_recv(struct __test_metadata *_metadata,
				  FIXTURE_DATA(proto) *self,
				  struct place_peer *pp, __u32 chan,
				  unsigned char *small, size_t small_len,
				  __u64 id)
{
	struct ordma_submit s = { .size = sizeof(s), .op = ORDMA_OP_RECV,
				  .chan_id = chan, .addr = (uintptr_t)small,
				  .len = small_len };
	struct wire_hdr h = { .version = WIRE_VERSION, .opcode = WIRE_MSG,
			      .payload_len = 3, .total_len = 3, .op_id = id };

	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_SUBMIT, &s));
	ASSERT_EQ(0, wire_send(self, pp, &h, "abc"));
	EXPECT_EQ(3, wait_res(self->fd));
	EXPECT_EQ(0, memcmp(small, "abc", 3));
}

/*
 * A write of two pieces whose first cannot be copied (that page of the
 * window is gone): both acks report it, the last piece's too, and so does
 * the notification the last piece carries, in the RECV it takes. Message
 * ids go on after it.
 */
TEST_F(proto, notify_reports_first_failure_of_write)
{
	unsigned char *win = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char small[64], data[4096];
	struct place_peer pp;
	struct wire_hdr h;
	size_t i;
	__u32 chan;

	ASSERT_NE(MAP_FAILED, win);
	memset(data, 0x5c, sizeof(data));
	chan = small_write_setup(_metadata, self, win, &pp, &h, small,
				 sizeof(small));
	ASSERT_EQ(0, munmap(win, 4096));
	ASSERT_EQ(0, wire_send(self, &pp, &h, data));
	h.offset = 4096;
	h.flags = WIRE_F_LAST | WIRE_F_NOTIFY;
	ASSERT_EQ(0, wire_send(self, &pp, &h, data));
	EXPECT_EQ(-EREMOTEIO, wait_res(self->fd));
	ASSERT_EQ(0, place_wait_for(self, &pp, &pp.nacks, 2));
	EXPECT_EQ((uint32_t)EREMOTEIO, pp.acks[0]);
	EXPECT_EQ((uint32_t)EREMOTEIO, pp.acks[1]);
	for (i = 0; i < 4096 && win[4096 + i] == 0x5c; i++)
		;
	EXPECT_EQ((size_t)4096, i);
	next_msg_to_next_recv(_metadata, self, &pp, chan, small,
			      sizeof(small), 2);
	place_peer_fini(&pp);
	munmap(win + 4096, 4096);
}

/*
 * Connect, accept with a receive into @small, expose @win (PL_LEN, zeroed)
 * and send the first piece (PL_FIRST bytes of the pattern) of write 1
 * covering all of it; @h is that piece's header.
 */
static void window_write_start(struct __test_metadata *_metadata,
			       FIXTURE_DATA(proto) *self, unsigned char *win,
			       struct place_peer *pp, struct wire_hdr *h,
			       unsigned char *small, size_t small_len)
{
	memset(win, 0, PL_LEN);
	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	ASSERT_EQ(0, place_peer_init(self, pp));
	accept_and_recv(_metadata, self, small, small_len);
	memset(h, 0, sizeof(*h));
	h->version = WIRE_VERSION;
	h->opcode = WIRE_WRITE;
	h->payload_len = PL_FIRST;
	h->total_len = PL_LEN;
	h->op_id = 1;
	h->token = expose_window(_metadata, self, win, PL_LEN);
	ASSERT_EQ(0, wire_send(self, pp, h, pp->src));
}

/*
 * The first piece of a 1 MiB write into a window, in mode zerocopy: the
 * window's side registers the rest and offers it (PLACE with F_WRITE, for
 * write 1, offsets within the write, the write's length); the peer RDMA
 * WRITEs into each range and says so with WRITE_PLACED, the last with
 * F_LAST, and gets one ack with status 0. Every byte is in the window.
 */
TEST_F(proto, peer_places_write_into_window)
{
	unsigned char *win = mmap(NULL, PL_LEN, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long long placed0, placed1;
	unsigned char small[64];
	struct place_peer pp;
	struct wire_hdr h, *o;
	size_t i, done = PL_FIRST, n;
	int k;

	ASSERT_NE(MAP_FAILED, win);
	ASSERT_EQ(0, sysfs_get("bytes_placed", &placed0));
	ASSERT_EQ(0, mode_write("zerocopy"));
	window_write_start(_metadata, self, win, &pp, &h, small, sizeof(small));
	/*
	 * Offers come in the write's order; place each as it comes. The
	 * receive posted at accept may be offered too when its 64 bytes cross
	 * a page boundary (the stack is randomised below a page): an offer
	 * for a message, without F_WRITE, which this peer leaves unused.
	 */
	for (k = 0; done < PL_LEN; k++) {
		ASSERT_GT(16, k);
		ASSERT_EQ(0, place_wait_for(self, &pp, &pp.noffers, k + 1));
		o = &pp.offers[k];
		ASSERT_EQ(WIRE_PLACE, o->opcode);
		if (!o->flags && o->total_len <= sizeof(small))
			continue;
		ASSERT_EQ(WIRE_F_WRITE, o->flags);
		ASSERT_EQ((uint64_t)1, o->op_id);
		ASSERT_EQ((uint32_t)(PL_LEN - 1), o->status);
		ASSERT_EQ(done, o->offset);
		n = o->total_len < PL_LEN - done ? o->total_len : PL_LEN - done;
		h.opcode = WIRE_WRITE_PLACED;
		h.payload_len = 0;
		h.offset = done;
		h.base = n;
		h.flags = done + n == PL_LEN ? WIRE_F_LAST : 0;
		ASSERT_EQ(0, place_write_hdr(self, &pp, done, n, o->base,
					     (uint32_t)o->token, &h));
		done += n;
	}
	EXPECT_EQ(0, mode_write("auto"));
	ASSERT_EQ(0, place_wait_for(self, &pp, &pp.nacks, 1));
	EXPECT_EQ(0U, pp.acks[0]);
	for (i = 0; i < PL_LEN && win[i] == pl_byte(i); i++)
		;
	ASSERT_EQ((size_t)PL_LEN, i) TH_LOG("first wrong byte at %zu", i);
	ASSERT_EQ(0, sysfs_get("bytes_placed", &placed1));
	ASSERT_EQ((unsigned long long)(PL_LEN - PL_FIRST), placed1 - placed0);
	place_peer_fini(&pp);
	munmap(win, PL_LEN);
}

/* Until the window holds the @n bytes of @src: 0, or -1 after PROTO_WAIT_MS. */
static int window_holds(const unsigned char *win, const unsigned char *src,
			size_t n)
{
	int tries;

	for (tries = 0; tries < PROTO_WAIT_MS; tries++) {
		if (!memcmp(win, src, n))
			return 0;
		usleep(1000);
	}
	return -1;
}

/*
 * A WRITE_PLACED for bytes the window's side never offered (in mode copy
 * it offers nothing): EPROTO.
 */
TEST_F(proto, write_placed_without_offer_closes_channel)
{
	unsigned char *win = mmap(NULL, PL_LEN, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char small[64] = { 0 };
	struct place_peer pp;
	struct wire_hdr h;

	ASSERT_NE(MAP_FAILED, win);
	ASSERT_EQ(0, mode_write("copy"));
	window_write_start(_metadata, self, win, &pp, &h, small, sizeof(small));
	/*
	 * The mode is read when the window's side takes the first piece,
	 * which may be after wire_send() returned: back in auto before that,
	 * it would register and offer the range, and the WRITE_PLACED below
	 * would be a valid one.
	 */
	ASSERT_EQ(0, window_holds(win, pp.src, PL_FIRST));
	EXPECT_EQ(0, mode_write("auto"));
	h.opcode = WIRE_WRITE_PLACED;
	h.payload_len = 0;
	h.offset = PL_FIRST;
	h.base = 4096;
	ASSERT_EQ(0, wire_send(self, &pp, &h, NULL));
	EXPECT_EQ(-EPROTO, wait_res(self->fd));
	place_peer_fini(&pp);
	munmap(win, PL_LEN);
}

/*
 * Version 6: a write of two pieces whose last carries F_NOTIFY. The RECV
 * completes with 0 once the bytes are in the window, the write is acked
 * with 0 and the notification took message id 1: message 2 goes to the
 * next RECV.
 */
TEST_F(proto, notify_rides_on_last_piece)
{
	unsigned char *win = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char small[64], data[4096];
	struct place_peer pp;
	struct wire_hdr h;
	size_t i;
	__u32 chan;

	ASSERT_NE(MAP_FAILED, win);
	chan = small_write_setup(_metadata, self, win, &pp, &h, small,
				 sizeof(small));
	memset(data, 0x3a, sizeof(data));
	ASSERT_EQ(0, wire_send(self, &pp, &h, data));
	memset(data, 0xa3, sizeof(data));
	h.offset = 4096;
	h.flags = WIRE_F_LAST | WIRE_F_NOTIFY;
	ASSERT_EQ(0, wire_send(self, &pp, &h, data));
	EXPECT_EQ(0, wait_res(self->fd));
	for (i = 0; i < 8192 && win[i] == (i < 4096 ? 0x3a : 0xa3); i++)
		;
	EXPECT_EQ((size_t)8192, i);
	ASSERT_EQ(0, place_wait_for(self, &pp, &pp.nacks, 1));
	EXPECT_EQ(0U, pp.acks[0]);
	next_msg_to_next_recv(_metadata, self, &pp, chan, small,
			      sizeof(small), 2);
	place_peer_fini(&pp);
	munmap(win, 8192);
}

/*
 * A write that stops after its first piece (the writer's buffer faulted):
 * the marker (WRITE_PLACED, no bytes, F_LAST), then a NOTIFY with the
 * writer's EFAULT, which the RECV gets. A second NOTIFY of that write
 * closes the channel.
 */
TEST_F(proto, notify_of_stopped_write_once)
{
	unsigned char *win = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char small[64], data[4096] = { 0 };
	struct place_peer pp;
	struct wire_hdr h, nh = { .version = WIRE_VERSION,
				  .opcode = WIRE_NOTIFY, .total_len = 8192,
				  .base = 1, .op_id = 1, .status = EFAULT };
	struct ordma_submit s = { .size = sizeof(s), .op = ORDMA_OP_RECV,
				  .addr = (uintptr_t)small,
				  .len = sizeof(small) };

	ASSERT_NE(MAP_FAILED, win);
	s.chan_id = small_write_setup(_metadata, self, win, &pp, &h, small,
				      sizeof(small));
	ASSERT_EQ(0, wire_send(self, &pp, &h, data));
	h.opcode = WIRE_WRITE_PLACED;
	h.payload_len = 0;
	h.offset = 4096;
	h.base = 0;
	h.flags = WIRE_F_LAST;
	ASSERT_EQ(0, wire_send(self, &pp, &h, NULL));
	ASSERT_EQ(0, wire_send(self, &pp, &nh, NULL));
	EXPECT_EQ(-EFAULT, wait_res(self->fd));

	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_SUBMIT, &s));
	nh.op_id = 2;
	ASSERT_EQ(0, wire_send(self, &pp, &nh, NULL));
	EXPECT_EQ(-EPROTO, wait_res(self->fd));
	place_peer_fini(&pp);
	munmap(win, 8192);
}

/* F_NOTIFY on a piece that is not a write's last: EPROTO. */
TEST_F(proto, notify_flag_before_last_piece_closes_channel)
{
	unsigned char *win = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char small[64], data[4096] = { 0 };
	struct place_peer pp;
	struct wire_hdr h;

	ASSERT_NE(MAP_FAILED, win);
	small_write_setup(_metadata, self, win, &pp, &h, small, sizeof(small));
	h.flags = WIRE_F_NOTIFY;
	ASSERT_EQ(0, wire_send(self, &pp, &h, data));
	EXPECT_EQ(-EPROTO, wait_res(self->fd));
	place_peer_fini(&pp);
	munmap(win, 8192);
}

/* A NOTIFY for a write that never came: EPROTO. */
TEST_F(proto, notify_of_unknown_write_closes_channel)
{
	struct wire_hdr h = { .version = WIRE_VERSION, .opcode = WIRE_NOTIFY,
			      .total_len = 10, .base = 5, .op_id = 1 };
	unsigned char small[64] = { 0 };
	struct place_peer pp;

	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	ASSERT_EQ(0, place_peer_init(self, &pp));
	accept_and_recv(_metadata, self, small, sizeof(small));
	ASSERT_EQ(0, wire_send(self, &pp, &h, NULL));
	EXPECT_EQ(-EPROTO, wait_res(self->fd));
	place_peer_fini(&pp);
}

/* -- trust: what a peer can reach and make ordma hold ----------------------- */

#define WIRE_READ_REQ	5
#define WIRE_READ_RESP	6
#define GUESSES_MAX	8	/* kernel/chan.h, ORDMA_GUESSES_MAX */

static int chan_state(FIXTURE_DATA(proto) *self, __u32 chan)
{
	struct ordma_chan_info ci = { .size = sizeof(ci), .chan_id = chan };

	if (ioctl(self->fd, ORDMA_IOC_CHAN_INFO, &ci))
		return -1;
	return ci.out_state;
}

static int sysfs_put(const char *attr, unsigned long long v)
{
	char path[128];
	FILE *f;
	int ret;

	f = fopen(ordma_sysfs(path, sizeof(path), attr), "w");
	if (!f)
		return -1;
	ret = fprintf(f, "%llu", v) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/* A loopback channel of ours on another listener of @fd: 0 or -1. */
static int own_pair(int fd, const char *name, unsigned int salt)
{
	struct ordma_connect c = { .size = sizeof(c),
				   .timeout_ms = PROTO_WAIT_MS };
	struct ordma_accept a = { .size = sizeof(a) };
	struct ordma_listen l;

	if (proto_listen(fd, name, salt, &l))
		return -1;
	c.addr = l.addr;
	if (ioctl(fd, ORDMA_IOC_CONNECT, &c))
		return -1;
	a.listener_id = l.out_id;
	return ioctl(fd, ORDMA_IOC_ACCEPT, &a) ? -1 : 0;
}

/* Wait until no channel, pin, MR or chunk is held on the device. */
static int counters_idle(void)
{
	static const char *const attr[] = {
		"channels", "pages_pinned", "mrs_live", "chunks_held",
	};
	unsigned long long v;
	unsigned int i;
	int tries;

	for (tries = 0; tries < 3000; tries++) {
		for (i = 0; i < sizeof(attr) / sizeof(attr[0]); i++)
			if (sysfs_get(attr[i], &v) || v)
				break;
		if (i == sizeof(attr) / sizeof(attr[0]))
			return 0;
		usleep(10000);
	}
	fprintf(stderr, "# still held: %s = %llu\n", attr[i], v);
	return -1;
}

/*
 * Our channel end was made while more than half the pool was held: it
 * receives in its own 2048-byte buffer. The pool comes back and the end
 * grows (chunk-sized receives from now on) while that buffer is still
 * posted. A SEND with immediate data of 2048 bytes fits the buffer as
 * posted, but its bytes would not fit behind the header the module writes
 * in front of them: the channel is closed, nothing written past the
 * buffer (the debug kernel's KASAN would say).
 */
TEST_F_TIMEOUT(proto, send_imm_longer_than_the_small_buffer_closes, 120)
{
	struct ordma_accept a = { .size = sizeof(a),
				  .listener_id = self->listener };
	struct ordma_submit s = { .size = sizeof(s), .op = ORDMA_OP_RECV };
	struct ordma_chan_info ci = { .size = sizeof(ci) };
	unsigned long long pool = 0;
	char rbuf[4096] = { 0 };
	int i, fd2 = open("/dev/ordma", O_RDWR);
	bool ok;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, sysfs_get("pool_bytes", &pool));
	/*
	 * Two chunks, and a pair of our own: the end made first takes one
	 * as its first receive buffer and keeps it while it lives, so from
	 * then on at most half the pool is free, however the rings of the
	 * pair grow and give chunks back, and every end made receives in
	 * its own small buffer. (With five chunks and two pairs the pairs'
	 * first buffers did not always hold more than half: a ring gave a
	 * chunk back between the count and the connect, and our end took a
	 * chunk under the debug kernel.) Chunks an earlier test's channels
	 * still hold would be freed as they come back: wait for them first.
	 */
	ASSERT_EQ(0, counters_idle());
	ASSERT_EQ(0, sysfs_put("pool_bytes", 2 * 65536));
	ok = !own_pair(fd2, _metadata->name, 1) &&
	     hostile_connect(self, WIRE_VERSION) == RDMA_CM_EVENT_ESTABLISHED &&
	     !ioctl(self->fd, ORDMA_IOC_ACCEPT, &a);
	ci.chan_id = a.out_chan_id;
	/*
	 * The precondition: our end started with its own small buffer (2048
	 * bytes, a header's 56 of them: 1992 of payload).
	 */
	ok = ok && !ioctl(self->fd, ORDMA_IOC_CHAN_INFO, &ci) &&
	     ci.out_rx_size == 2048 - 56;
	/* The pool back before anything can stop the test. */
	ASSERT_EQ(0, sysfs_put("pool_bytes", pool));
	ASSERT_TRUE(ok) TH_LOG("our end receives in buffers of %u bytes",
			       ci.out_rx_size);
	/* The RECV's pass grows the end. */
	s.chan_id = a.out_chan_id;
	s.addr = (unsigned long)rbuf;
	s.len = sizeof(rbuf);
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_SUBMIT, &s));
	for (i = 0; i < 600; i++) {
		ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_CHAN_INFO, &ci));
		if (ci.out_rx_size == 65536)
			break;
		usleep(50000);
	}
	ASSERT_EQ(65536U, ci.out_rx_size);
	memset(self->buf, 0x42, sizeof(self->buf));
	ASSERT_EQ(0, hostile_send_imm(self, 2048, WIRE_IMM_MSG));
	expect_closed_with_eproto(_metadata, self, a.out_chan_id, rbuf,
				  sizeof(rbuf));
	close(fd2);
}

/* A /proc/meminfo value, KiB. */
static long long meminfo(const char *key)
{
	char line[128];
	long long v = -1;
	size_t n = strlen(key);
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = atoll(line + n + 1);
	fclose(f);
	return v;
}

static int all_zero(const unsigned char *p, size_t n)
{
	size_t i = 0;

	while (i < n && !p[i])
		i++;
	return i == n;
}

/* Poll the peer's CQ for @ms: -1 if ordma sent it anything. */
static int peer_hears_nothing(FIXTURE_DATA(proto) *self, int ms)
{
	struct ibv_wc wc;
	int n;

	while (ms-- > 0) {
		n = ibv_poll_cq(self->cq, 1, &wc);
		if (n < 0 || (n == 1 && wc.opcode == IBV_WC_RECV))
			return -1;
		usleep(1000);
	}
	return 0;
}

/*
 * A connection nobody accepted names a valid window token: its WRITE lands
 * nowhere and gets no answer while it waits. Once the application accepts
 * the channel, the write goes in and is acknowledged: waiting lost nothing.
 */
TEST_F_TIMEOUT(proto, unaccepted_peer_writes_no_window, 300)
{
	unsigned char *win = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ordma_accept a = { .size = sizeof(a),
				  .listener_id = self->listener };
	struct wire_hdr h = { .version = WIRE_VERSION, .opcode = WIRE_WRITE,
			      .flags = WIRE_F_LAST, .payload_len = 4096,
			      .total_len = 4096, .op_id = 1 };
	struct place_peer pp;

	ASSERT_NE(MAP_FAILED, win);
	memset(win, 0, 8192);
	h.token = expose_window(_metadata, self, win, 8192);
	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	ASSERT_EQ(0, place_peer_init(self, &pp));
	ASSERT_EQ(0, wire_send(self, &pp, &h, pp.src));
	ASSERT_EQ(0, peer_hears_nothing(self, 500));
	ASSERT_TRUE(all_zero(win, 8192)) TH_LOG("an unaccepted peer wrote");
	ASSERT_EQ(0, pp.nacks);

	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_ACCEPT, &a));
	ASSERT_EQ(0, window_holds(win, pp.src, 4096));
	ASSERT_EQ(0, place_wait_for(self, &pp, &pp.nacks, 1));
	EXPECT_EQ(0U, pp.acks[0]);
	EXPECT_TRUE(all_zero(win + 4096, 4096));
	place_peer_fini(&pp);
	munmap(win, 8192);
}

/* The same for a READ_REQ: nothing of the window leaves before accept. */
TEST_F_TIMEOUT(proto, unaccepted_peer_reads_no_window, 300)
{
	struct ordma_expose e = { .size = sizeof(e), .len = 4096,
				  .access = ORDMA_ACCESS_REMOTE_READ };
	struct ordma_accept a = { .size = sizeof(a),
				  .listener_id = self->listener };
	struct wire_hdr *h = (struct wire_hdr *)self->buf;
	unsigned char win[4096];
	struct ibv_wc wc;
	int k, n, tries = 0;

	for (k = 0; k < 4096; k++)
		win[k] = (unsigned char)(k * 7 + 3);
	e.addr = (uintptr_t)win;
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_EXPOSE, &e));
	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	for (k = 1; k < 4; k++)
		ASSERT_EQ(0, credit_post_recv(self, k));
	memset(h, 0, sizeof(*h));
	h->version = WIRE_VERSION;
	h->opcode = WIRE_READ_REQ;
	h->total_len = 512;
	h->base = 1024;
	h->token = e.out_token;
	h->op_id = 1;
	h->credits = 3;		/* the receives posted above */
	ASSERT_EQ(0, hostile_send(self, sizeof(*h)));
	ASSERT_EQ(0, peer_hears_nothing(self, 500))
		TH_LOG("an unaccepted peer got an answer");

	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_ACCEPT, &a));
	for (;;) {
		n = ibv_poll_cq(self->cq, 1, &wc);
		ASSERT_LE(0, n);
		ASSERT_GT(PROTO_WAIT_MS, tries);
		if (n == 0) {
			tries++;
			usleep(1000);
			continue;
		}
		ASSERT_EQ((int)IBV_WC_SUCCESS, (int)wc.status);
		h = (struct wire_hdr *)(self->buf + 1024 * wc.wr_id);
		if (wc.opcode == IBV_WC_RECV && h->opcode == WIRE_READ_RESP)
			break;
		ASSERT_EQ(0, credit_post_recv(self, wc.wr_id));
	}
	ASSERT_EQ(0U, h->status);
	ASSERT_EQ(512U, h->payload_len);
	EXPECT_EQ(0, memcmp(h + 1, win + 1024, 512));
}

/*
 * A peer that posts no receives streams REVOKEs: each asks for a REVOKED
 * that cannot go out. Past ORDMA_ANSWERS_MAX waiting the channel fails
 * with ENOBUFS, and the kernel memory it took stays small.
 */
TEST_F_TIMEOUT(proto, revoke_flood_without_receives_closes_channel, 300)
{
	struct wire_hdr *h = (struct wire_hdr *)self->buf;
	struct ibv_sge sge = { .addr = (uintptr_t)self->buf,
			       .length = sizeof(*h) };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	unsigned long long faults0, faults1;
	long long slab0, slab1;
	char rbuf[64];
	struct ibv_wc wc[8];
	int sent = 0, posted = 0, n, idle = 0;
	__u32 chan;

	/* Counted, not read first: the flood still runs where it is missing. */
	faults0 = faults1 = 0;
	EXPECT_EQ(0, sysfs_get("peer_faults", &faults0));
	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	chan = accept_and_recv(_metadata, self, rbuf, sizeof(rbuf));
	sge.lkey = self->mr->lkey;
	memset(h, 0, sizeof(*h));
	h->version = WIRE_VERSION;
	h->opcode = WIRE_REVOKE;
	slab0 = meminfo("SUnreclaim");
	ASSERT_LT(0, slab0);
	/* Until the channel fails, or ordma takes nothing for a long time. */
	while (sent < 100000 && idle < PROTO_WAIT_MS) {
		while (posted < 8) {
			h->op_id = 1000 + sent + posted;	/* REVOKE's token */
			ASSERT_EQ(0, ibv_post_send(self->id->qp, &wr, &bad));
			posted++;
		}
		n = ibv_poll_cq(self->cq, 8, wc);
		ASSERT_LE(0, n);
		if (n && wc[n - 1].status != IBV_WC_SUCCESS)
			break;	/* the channel is gone */
		posted -= n;
		sent += n;
		idle = n ? 0 : idle + 1;
		if (!n)
			usleep(1000);
		/* Every 256 taken, and whenever none was: a wait is a state. */
		if ((!n || !(sent % 256)) && chan_state(self, chan) !=
		    ORDMA_CHAN_CONNECTED)
			break;
	}
	slab1 = meminfo("SUnreclaim");
	TH_LOG("%d REVOKEs taken; unreclaimable slab %+lld KiB", sent,
	       slab1 - slab0);
	EXPECT_EQ(-ENOBUFS, wait_res(self->fd));
	EXPECT_GT(4096, slab1 - slab0);
	EXPECT_EQ(0, sysfs_get("peer_faults", &faults1));
	EXPECT_EQ(1ULL, faults1 - faults0);
}

/*
 * Post a WRITE of 8 bytes into window @token and wait for its ack (0, its
 * status in *@status) or for the channel to close (1). The guess that
 * closes the channel may still get its answer out before the QP is
 * drained; the channel is already dead by then (the fault comes first), so
 * the state read after an answer tells which it was.
 */
static int token_try(FIXTURE_DATA(proto) *self, struct place_peer *pp,
		     __u32 chan, __u64 token, __u64 id, uint32_t *status)
{
	struct wire_hdr h = { .version = WIRE_VERSION, .opcode = WIRE_WRITE,
			      .flags = WIRE_F_LAST, .payload_len = 8,
			      .total_len = 8, .token = token, .op_id = id };
	struct ibv_wc wc;
	int tries = 0, n;

	pp->nacks = 0;
	if (wire_send(self, pp, &h, "guessing"))
		return chan_state(self, chan) != ORDMA_CHAN_CONNECTED ? 1 : -1;
	while (!pp->nacks) {
		if (chan_state(self, chan) != ORDMA_CHAN_CONNECTED)
			return 1;
		n = ibv_poll_cq(self->cq, 1, &wc);
		if (n < 0 || tries++ > PROTO_WAIT_MS)
			return -1;
		if (n)
			place_note_recv(self, pp, &wc);
		else
			usleep(1000);
	}
	if (chan_state(self, chan) != ORDMA_CHAN_CONNECTED)
		return 1;
	*status = pp->acks[0];
	return 0;
}

/*
 * A peer names window tokens. One of a window unexposed since (its index
 * was given out) is stale, not a guess: ENOENT, as often as it likes. A
 * token with a live window's index but another random half, or an index
 * never given out, is a guess: ENOENT too, and the GUESSES_MAX-th closes the
 * channel with EACCES, long before 10^5 tries.
 */
TEST_F_TIMEOUT(proto, token_guesses_close_channel, 300)
{
	struct ordma_unexpose u = { .size = sizeof(u) };
	unsigned char win[4096], gone[64];
	unsigned long long g0, g1;
	struct place_peer pp;
	__u64 token, stale, try = 1;
	uint32_t st = 0;
	int i, ret = 0;
	__u32 chan;
	char rbuf[64];

	memset(win, 0, sizeof(win));
	token = expose_window(_metadata, self, win, sizeof(win));
	stale = expose_window(_metadata, self, gone, sizeof(gone));
	u.token = stale;
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_UNEXPOSE, &u));
	g0 = g1 = 0;
	EXPECT_EQ(0, sysfs_get("token_guesses", &g0));
	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	ASSERT_EQ(0, place_peer_init(self, &pp));
	chan = accept_and_recv(_metadata, self, rbuf, sizeof(rbuf));
	for (i = 0; i < 3 * GUESSES_MAX; i++) {
		ASSERT_EQ(0, token_try(self, &pp, chan, stale, try++, &st));
		ASSERT_EQ((uint32_t)ENOENT, st);
	}
	EXPECT_EQ(0, sysfs_get("token_guesses", &g1));
	ASSERT_EQ(g0, g1);
	for (i = 0; i < 100000; i++) {
		/* Alternately: the live index with a wrong half; no index. */
		__u64 guess = i % 2 ? (token ^ ((__u64)(i + 1) << 33)) :
				      (token + 1000 + i);

		ret = token_try(self, &pp, chan, guess, try++, &st);
		if (ret)
			break;
		ASSERT_EQ((uint32_t)ENOENT, st);
	}
	EXPECT_EQ(1, ret);
	EXPECT_EQ(GUESSES_MAX - 1, i);
	TH_LOG("closed after %d guesses", i + 1);
	EXPECT_EQ(-EACCES, wait_res(self->fd));
	EXPECT_EQ(0, sysfs_get("token_guesses", &g1));
	EXPECT_EQ((unsigned long long)GUESSES_MAX, g1 - g0);
	EXPECT_TRUE(all_zero(win, sizeof(win)));
	place_peer_fini(&pp);
}

/*
 * GUESSES_MAX - 1 guesses one at a time, each answered ENOENT, then
 * BURST more sent at once, so that one pass of ordma's worker takes them
 * together: the first of them fails the channel, and neither its answer
 * nor those of the guesses after it go out.
 */
#define BURST	3

TEST_F_TIMEOUT(proto, token_guesses_at_once_close_channel, 300)
{
	struct ibv_send_wr wr[BURST], *bad;
	struct ibv_sge sge[BURST];
	unsigned long long g0 = 0, g1 = 0;
	const size_t stride = 128;
	unsigned char win[4096];
	struct place_peer pp;
	struct ibv_wc wc;
	__u64 token, try = 1;
	uint32_t st = 0;
	char rbuf[64];
	__u32 chan;
	int i, n;

	ASSERT_LE(sizeof(struct wire_hdr) + 8, stride);
	memset(win, 0, sizeof(win));
	token = expose_window(_metadata, self, win, sizeof(win));
	EXPECT_EQ(0, sysfs_get("token_guesses", &g0));
	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	ASSERT_EQ(0, place_peer_init(self, &pp));
	chan = accept_and_recv(_metadata, self, rbuf, sizeof(rbuf));
	for (i = 0; i < GUESSES_MAX - 1; i++) {
		ASSERT_EQ(0, token_try(self, &pp, chan, token + 1000 + i,
				       try++, &st));
		ASSERT_EQ((uint32_t)ENOENT, st);
	}
	for (i = 0; i < BURST; i++) {
		struct wire_hdr h = { .version = WIRE_VERSION,
				      .opcode = WIRE_WRITE,
				      .flags = WIRE_F_LAST, .payload_len = 8,
				      .total_len = 8, .op_id = try++,
				      .token = token ^ ((__u64)(i + 1) << 33) };

		memcpy(pp.piece + i * stride, &h, sizeof(h));
		memset(pp.piece + i * stride + sizeof(h), 0x5a, 8);
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)pp.piece +
						   i * stride,
					   .length = sizeof(h) + 8,
					   .lkey = pp.piece_mr->lkey };
		wr[i] = (struct ibv_send_wr){ .sg_list = &sge[i], .num_sge = 1,
					      .opcode = IBV_WR_SEND,
					      .send_flags = IBV_SEND_SIGNALED,
					      .next = i + 1 < BURST ?
						      &wr[i + 1] : NULL };
	}
	pp.nacks = 0;
	ASSERT_EQ(0, ibv_post_send(self->id->qp, wr, &bad));
	/* The accept's receive fails once the channel is drained. */
	EXPECT_EQ(-EACCES, wait_res(self->fd));
	/* Whatever ordma sent before its drain ended is in our CQ by now. */
	while ((n = ibv_poll_cq(self->cq, 1, &wc)) > 0)
		place_note_recv(self, &pp, &wc);
	ASSERT_EQ(0, n);
	TH_LOG("%d of the last %d guesses answered", pp.nacks, BURST);
	EXPECT_EQ(0, pp.nacks);
	EXPECT_EQ(0, sysfs_get("token_guesses", &g1));
	EXPECT_EQ((unsigned long long)(GUESSES_MAX - 1 + BURST), g1 - g0);
	EXPECT_TRUE(all_zero(win, sizeof(win)));
	place_peer_fini(&pp);
}

/*
 * A peer that takes none of ordma's sends (it posts no receives: RNR for
 * ever) gets its channel failed with ETIMEDOUT after progress_timeout_ms,
 * and the send with it.
 */
TEST_F_TIMEOUT(proto, peer_taking_nothing_times_out, 300)
{
	struct ordma_accept a = { .size = sizeof(a),
				  .listener_id = self->listener };
	struct ordma_submit s = { .size = sizeof(s), .op = ORDMA_OP_SEND,
				  .addr = (unsigned long)"hello", .len = 5 };
	struct ordma_close cl = { .size = sizeof(cl) };
	unsigned long long faults0, faults1, old;
	struct timespec t0, t1;
	long long res;
	struct gnl g;
	double secs;
	uint32_t v;

	ASSERT_EQ(0, sysfs_get("progress_timeout_ms", &old));
	ASSERT_EQ(30000ULL, old);
	ASSERT_EQ(-1, sysfs_put("progress_timeout_ms", 99));
	ASSERT_EQ(0, sysfs_put("progress_timeout_ms", 1000));
	ASSERT_EQ(0, sysfs_get("peer_faults", &faults0));
	ASSERT_EQ(0, gnl_open(&g));
	ASSERT_EQ(0, gnl_join_events(&g));
	ASSERT_EQ((int)RDMA_CM_EVENT_ESTABLISHED,
		  hostile_connect(self, WIRE_VERSION));
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_ACCEPT, &a));
	s.chan_id = a.out_chan_id;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_SUBMIT, &s));
	res = wait_res(self->fd);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	EXPECT_EQ(0, sysfs_put("progress_timeout_ms", old));
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	TH_LOG("failed after %.2f s", secs);
	EXPECT_EQ(-ETIMEDOUT, res);
	EXPECT_LE(0.9, secs);
	ASSERT_EQ(0, sysfs_get("peer_faults", &faults1));
	EXPECT_EQ(1ULL, faults1 - faults0);
	/*
	 * It was told as ETIMEDOUT; closed at once, the channel end's
	 * CHAN_DOWN follows that PEER_FAULT (a wait for the fault would pass
	 * over a CHAN_DOWN sent first, and the wait for it would time out).
	 */
	cl.id = a.out_chan_id;
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_CLOSE, &cl));
	ASSERT_EQ(0, gnl_event_wait(&g, ORDMA_NL_CMD_PEER_FAULT,
				    PROTO_WAIT_MS));
	ASSERT_TRUE(reply_u32(&g, ORDMA_NL_A_ERRNO, &v));
	EXPECT_EQ((uint32_t)ETIMEDOUT, v);
	ASSERT_TRUE(reply_u32(&g, ORDMA_NL_A_CHAN_QPN, &v));
	EXPECT_EQ(peer_qpn(self), v);
	ASSERT_EQ(0, gnl_event_wait(&g, ORDMA_NL_CMD_CHAN_DOWN,
				    PROTO_WAIT_MS));
	ASSERT_TRUE(reply_u32(&g, ORDMA_NL_A_ERRNO, &v));
	EXPECT_EQ((uint32_t)ETIMEDOUT, v);
	close(g.fd);
}

/* A second raw peer, with a QP of its own in a PD of its own. */
struct raw_peer {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char buf[4096];
};

static int raw_connect(FIXTURE_DATA(proto) *self, struct raw_peer *rp)
{
	struct wire_cm priv = { .version = WIRE_VERSION, .rx_size = 65536 };
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

	memset(rp, 0, sizeof(*rp));
	inet_pton(AF_INET, "192.0.2.1", &sin.sin_addr);
	if (rdma_create_id(self->ec, &rp->id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(rp->id, NULL, (struct sockaddr *)&sin,
			      RAWCM_EVENT_MS) ||
	    rawcm_event(self->ec) != RDMA_CM_EVENT_ADDR_RESOLVED ||
	    rdma_resolve_route(rp->id, RAWCM_EVENT_MS) ||
	    rawcm_event(self->ec) != RDMA_CM_EVENT_ROUTE_RESOLVED)
		return -1;
	rp->pd = ibv_alloc_pd(rp->id->verbs);
	rp->cq = ibv_create_cq(rp->id->verbs, 16, NULL, NULL, 0);
	if (!rp->pd || !rp->cq)
		return -1;
	memset(rp->buf, 0xee, sizeof(rp->buf));
	rp->mr = ibv_reg_mr(rp->pd, rp->buf, sizeof(rp->buf), 0);
	qa.send_cq = rp->cq;
	qa.recv_cq = rp->cq;
	if (!rp->mr || rdma_create_qp(rp->id, rp->pd, &qa) ||
	    rdma_connect(rp->id, &param) ||
	    rawcm_event(self->ec) != RDMA_CM_EVENT_ESTABLISHED)
		return -1;
	return 0;
}

static void raw_fini(struct raw_peer *rp)
{
	if (rp->id && rp->id->qp) {
		rawcm_drain(rp->id, rp->cq, -1);
		rdma_destroy_qp(rp->id);
	}
	if (rp->mr)
		ibv_dereg_mr(rp->mr);
	if (rp->cq)
		ibv_destroy_cq(rp->cq);
	if (rp->pd)
		ibv_dealloc_pd(rp->pd);
	if (rp->id)
		rdma_destroy_id(rp->id);
}

/* RDMA WRITE @len bytes of rp->buf to @raddr/@rkey: its completion status. */
static int raw_write(struct raw_peer *rp, uint64_t raddr, uint32_t rkey,
		     uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)rp->buf, .length = len,
			       .lkey = rp->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int n, tries = 0;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(rp->id->qp, &wr, &bad))
		return -1;
	while ((n = ibv_poll_cq(rp->cq, 1, &wc)) == 0 && tries++ < 20000)
		usleep(1000);
	return n == 1 ? (int)wc.status : -1;
}

/*
 * Channel A offers a receive buffer; the key it offered is tried from
 * channel B, another connection to the same listener, accepted too: the
 * device refuses the write (B's QP is in another PD), and the buffer stays
 * as it was.
 */
TEST_F_TIMEOUT(proto, rkey_of_one_channel_fails_on_another, 300)
{
	unsigned char *rbuf = mmap(NULL, PL_LEN, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ordma_accept a = { .size = sizeof(a),
				  .listener_id = self->listener };
	struct place_peer pp;
	struct wire_hdr offer;
	struct raw_peer b;
	int st;

	ASSERT_NE(MAP_FAILED, rbuf);
	memset(rbuf, 0, PL_LEN);
	place_early_offer(_metadata, self, rbuf, &pp, &offer);
	ASSERT_EQ(0, raw_connect(self, &b));
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_ACCEPT, &a));
	st = raw_write(&b, offer.base, (uint32_t)offer.token, 4096);
	TH_LOG("channel B's write with channel A's key: %s",
	       st < 0 ? "no completion" : ibv_wc_status_str(st));
	EXPECT_EQ((int)IBV_WC_REM_ACCESS_ERR, st);
	EXPECT_TRUE(all_zero(rbuf, PL_LEN));
	raw_fini(&b);
	place_peer_fini(&pp);
	munmap(rbuf, PL_LEN);
}

/*
 * A receive placed in full: the peer RDMA WRITEs every range offered for
 * it, the last one last, so the segment of that range is in use until the
 * message is. Once the RECV has completed, a write with that range's key is
 * refused by the device (the range was deregistered first) and the buffer
 * keeps the message.
 */
/*
 * Message @msg of PL_LEN bytes RDMA WRITTEN into every range ordma offers
 * for it, from offers[@first] on, the last range last. Return: the index
 * of the last offer.
 */
static int place_whole(struct __test_metadata *_metadata,
		       FIXTURE_DATA(proto) *self, struct place_peer *pp,
		       int first, uint64_t msg)
{
	size_t done = 0, n;
	struct wire_hdr *o;
	int k;

	for (k = first; done < PL_LEN; k++) {
		ASSERT_GT(16, k);
		ASSERT_EQ(0, place_wait_for(self, pp, &pp->noffers, k + 1));
		o = &pp->offers[k];
		ASSERT_EQ(msg, o->op_id);
		ASSERT_EQ(done, o->offset);
		n = o->total_len < PL_LEN - done ? o->total_len : PL_LEN - done;
		ASSERT_EQ(0, place_write(self, pp, done, n, o->base,
					 (uint32_t)o->token, msg));
		done += n;
	}
	return k - 1;
}

/*
 * A RDMA WRITE of 4096 bytes of 0xab to @o's range with @o's key: the
 * status of its completion. Expect the buffer to hold message 1 still.
 */
static int place_stale_write(struct __test_metadata *_metadata,
			     FIXTURE_DATA(proto) *self, struct place_peer *pp,
			     const struct wire_hdr *o)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int k, tries = 0;

	memset(pp->src, 0xab, 4096);
	sge.addr = (uintptr_t)pp->src;
	sge.length = 4096;
	sge.lkey = pp->src_mr->lkey;
	wr.wr.rdma.remote_addr = o->base;
	wr.wr.rdma.rkey = (uint32_t)o->token;
	ASSERT_EQ(0, ibv_post_send(self->id->qp, &wr, &bad));
	for (;;) {
		k = ibv_poll_cq(self->cq, 1, &wc);
		ASSERT_LE(0, k);
		ASSERT_GT(PROTO_WAIT_MS, tries);
		if (k && wc.opcode == IBV_WC_RECV) {
			place_note_recv(self, pp, &wc);
			continue;
		}
		if (k)
			break;
		tries++;
		usleep(1000);
	}
	return wc.status;
}

/* The first byte of @rbuf that is not message 1's, or PL_LEN. */
static size_t place_first_changed(const unsigned char *rbuf)
{
	size_t i;

	for (i = 0; i < PL_LEN; i++)
		if (rbuf[i] != pl_byte(i))
			break;
	return i;
}

TEST_F_TIMEOUT(proto, key_of_completed_receive_is_dead, 300)
{
	unsigned char *rbuf = mmap(NULL, PL_LEN, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct place_peer pp;
	int last, st;

	ASSERT_NE(MAP_FAILED, rbuf);
	memset(rbuf, 0, PL_LEN);
	place_early_offer(_metadata, self, rbuf, &pp, &pp.offers[0]);
	last = place_whole(_metadata, self, &pp, 0, 1);
	ASSERT_EQ(PL_LEN, wait_res(self->fd));

	st = place_stale_write(_metadata, self, &pp, &pp.offers[last]);
	TH_LOG("a write after the completion: %s", ibv_wc_status_str(st));
	EXPECT_EQ((int)IBV_WC_REM_ACCESS_ERR, st);
	EXPECT_EQ((size_t)PL_LEN, place_first_changed(rbuf));
	place_peer_fini(&pp);
	munmap(rbuf, PL_LEN);
}

/*
 * The same buffer received into twice: the second receive's ranges are
 * registered again, with keys none of the first receive's had (on rxe
 * each registration is a new MR; a device that DMAs reuses the MR with its
 * next key, the same upper 24 bits and the next low 8). A write with a key of
 * the first receive while the second is offered is refused by the device
 * and leaves the buffer as the first message left it.
 */
TEST_F_TIMEOUT(proto, key_of_previous_receive_is_dead_for_the_next, 300)
{
	unsigned char *rbuf = mmap(NULL, PL_LEN, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ordma_submit s = { .size = sizeof(s), .op = ORDMA_OP_RECV,
				  .addr = (unsigned long)rbuf, .len = PL_LEN };
	struct place_peer pp;
	int first, last, k, j, st;

	ASSERT_NE(MAP_FAILED, rbuf);
	memset(rbuf, 0, PL_LEN);
	s.chan_id = place_early_offer(_metadata, self, rbuf, &pp,
				      &pp.offers[0]);
	last = place_whole(_metadata, self, &pp, 0, 1);
	ASSERT_EQ(PL_LEN, wait_res(self->fd));
	ASSERT_EQ((size_t)PL_LEN, place_first_changed(rbuf));

	first = last + 1;
	ASSERT_EQ(0, mode_write("zerocopy"));
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_SUBMIT, &s));
	ASSERT_EQ(0, place_wait_for(self, &pp, &pp.noffers, first + 1));
	EXPECT_EQ(0, mode_write("auto"));
	ASSERT_EQ((uint64_t)2, pp.offers[first].op_id);
	ASSERT_EQ(pp.offers[0].base, pp.offers[first].base);
	for (k = 0; k <= last; k++)
		for (j = first; j < pp.noffers; j++)
			EXPECT_NE((uint32_t)pp.offers[k].token,
				  (uint32_t)pp.offers[j].token)
				TH_LOG("offer %d of receive 2 has the key of offer %d of receive 1",
				       j, k);
	TH_LOG("the first range's key: %#x, then %#x",
	       (uint32_t)pp.offers[0].token, (uint32_t)pp.offers[first].token);

	st = place_stale_write(_metadata, self, &pp, &pp.offers[0]);
	TH_LOG("a write with receive 1's key into receive 2's range: %s",
	       ibv_wc_status_str(st));
	EXPECT_EQ((int)IBV_WC_REM_ACCESS_ERR, st);
	EXPECT_EQ((size_t)PL_LEN, place_first_changed(rbuf));
	/*
	 * The refused write failed the channel: so does receive 2, with EIO
	 * (a device that reports the QP's access error, or one whose QP only
	 * flushes our receives: rdma_rxe), well before wait_res()'s bound.
	 */
	EXPECT_EQ(-EIO, wait_res(self->fd));
	EXPECT_EQ((size_t)PL_LEN, place_first_changed(rbuf));
	place_peer_fini(&pp);
	munmap(rbuf, PL_LEN);
}

struct free_watch {
	volatile int stop;
	unsigned long long min;
};

static void *free_watch_run(void *arg)
{
	struct free_watch *w = arg;
	unsigned long long v;

	while (!w->stop) {
		if (!sysfs_get("chunks_free", &v) && v < w->min)
			w->min = v;
		usleep(500);
	}
	return NULL;
}

/* A counter of the rxe device's port 1 (the device's own, beside ours). */
static int rxe_counter(const char *name, unsigned long long *v)
{
	char path[160];

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 ordma_ibdev(), name);
	return read_u64(v, path);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

#define PARKED_RNR_MS	81	/* kernel/cm.c ORDMA_PARKED_RNR_TIMER, 81.92 ms */

/*
 * A parked channel asks a peer that finds no receive to come back in 82 ms,
 * not at the next jiffy: a peer with 8 sends outstanding draws about 12 RNR
 * NAKs a second while nobody accepts it (about 124 with 0.32 ms under TCG,
 * as many as the device can turn round), so peers that are never accepted
 * cannot keep the device busy. Once accepted, its sends go through.
 */
TEST_F_TIMEOUT(proto, parked_channel_slows_peer_retries, 300)
{
	struct ordma_accept a = { .size = sizeof(a),
				  .listener_id = self->listener };
	struct raw_peer rp;
	struct wire_hdr *h = (struct wire_hdr *)rp.buf;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	unsigned long long n0, n1;
	struct ibv_wc wc[8];
	int k, done = 0, tries = 0, n;
	long long t0, ms;

	ASSERT_EQ(0, raw_connect(self, &rp));
	memset(h, 0, sizeof(*h));
	h->version = WIRE_VERSION;
	h->opcode = WIRE_REVOKE;
	sge.addr = (uintptr_t)h;
	sge.length = sizeof(*h);
	sge.lkey = rp.mr->lkey;
	for (k = 0; k < 8; k++) {
		h->op_id = 100 + k;
		ASSERT_EQ(0, ibv_post_send(rp.id->qp, &wr, &bad));
	}
	/* The reserved receive takes the first; the rest meet RNR. */
	usleep(300000);
	t0 = now_ms();
	ASSERT_EQ(0, rxe_counter("rcvd_rnr_err", &n0));
	usleep(1000000);
	ASSERT_EQ(0, rxe_counter("rcvd_rnr_err", &n1));
	/* Slept longer than asked if the guest was busy: count it all. */
	ms = now_ms() - t0;
	TH_LOG("RNR NAKs in %lld ms while parked: %llu", ms, n1 - n0);
	/* One NAK a retry: the first send NAKed, the rest out of sequence. */
	EXPECT_GE(2ULL * (ms / PARKED_RNR_MS + 2), n1 - n0);

	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_ACCEPT, &a));
	while (done < 8 && tries++ < PROTO_WAIT_MS) {
		n = ibv_poll_cq(rp.cq, 8, wc);
		ASSERT_LE(0, n);
		for (k = 0; k < n; k++)
			EXPECT_EQ((int)IBV_WC_SUCCESS, (int)wc[k].status);
		done += n;
		if (!n)
			usleep(1000);
	}
	EXPECT_EQ(8, done);
	raw_fini(&rp);
}

#define STALLERS	16
/*
 * Sends a staller keeps in flight. Those its parked channel does not take
 * are NAKed as receiver not ready and retried every 81.92 ms by the
 * staller's rdma_rxe, forever, on the guest's one CPU: 8 each (1536
 * retries a second through KASAN) kept the debug guest's softirq busy for
 * good on a slower host (an RCU stall, the test thread starved; stop 42).
 * Two still stall every one of them.
 */
#define STALLER_INFLIGHT	2

/*
 * 16 connections nobody accepts, each streaming REVOKEs and posting no
 * receive (were they answered, every answer would hold a send chunk for
 * ever, 32 of them per connection). A legitimate channel on another listener of the device still
 * connects and moves 1 MiB, byte for byte, and the pool never runs dry.
 */
TEST_F_TIMEOUT(proto, unaccepted_stallers_leave_the_pool, 300)
{
	struct ordma_listen l = { .size = sizeof(l) };
	struct ordma_connect c = { .size = sizeof(c),
				   .timeout_ms = PROTO_WAIT_MS };
	struct ordma_accept a = { .size = sizeof(a) };
	struct ordma_submit s = { .size = sizeof(s) };
	struct ordma_cqe cqe[2];
	struct ordma_wait wt = { .size = sizeof(wt), .cqes = (uintptr_t)cqe,
				 .max = 2, .timeout_ms = 20000 };
	struct raw_peer *rp = calloc(STALLERS, sizeof(*rp));
	struct free_watch w = { .min = ~0ULL };
	unsigned char *src = malloc(PL_LEN), *dst = calloc(1, PL_LEN);
	int fd = open("/dev/ordma", O_RDWR), i, k, n, m, idle, got = 0;
	int taken = 0;
	struct ibv_wc wc[8];
	long long t0;
	pthread_t t;

	ASSERT_NE(NULL, rp);
	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	ASSERT_LE(0, fd);
	for (i = 0; i < STALLERS; i++) {
		struct wire_hdr *h = (struct wire_hdr *)rp[i].buf;
		struct ibv_sge sge;
		struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND }, *bad;

		ASSERT_EQ(0, raw_connect(self, &rp[i])) TH_LOG("staller %d", i);
		memset(h, 0, sizeof(*h));
		h->version = WIRE_VERSION;
		h->opcode = WIRE_REVOKE;
		sge.addr = (uintptr_t)h;
		sge.length = sizeof(*h);
		sge.lkey = rp[i].mr->lkey;
		/* 48 of them, a few in flight, while ordma takes them. */
		for (k = 0, n = 0, idle = 0; k < 48 && idle < 200;) {
			while (n < STALLER_INFLIGHT && k + n < 48) {
				h->op_id = 100 + k + n;
				ASSERT_EQ(0, ibv_post_send(rp[i].id->qp, &wr,
							   &bad));
				n++;
			}
			m = ibv_poll_cq(rp[i].cq, 8, wc);
			ASSERT_LE(0, m);
			n -= m;
			k += m;
			idle = m ? 0 : idle + 1;
			if (!m)
				usleep(1000);
		}
		taken += k;
	}
	TH_LOG("REVOKEs the stallers got in: %d", taken);
	ASSERT_EQ(0, pthread_create(&t, NULL, free_watch_run, &w));

	ASSERT_EQ(0, proto_listen(fd, _metadata->name, 1, &l));
	c.addr = l.addr;
	t0 = now_ms();
	ASSERT_EQ(0, ioctl(fd, ORDMA_IOC_CONNECT, &c))
		TH_LOG("connect: %s after %lld ms", strerror(errno),
		       now_ms() - t0);
	TH_LOG("connected in %lld ms", now_ms() - t0);
	a.listener_id = l.out_id;
	ASSERT_EQ(0, ioctl(fd, ORDMA_IOC_ACCEPT, &a));
	for (i = 0; i < PL_LEN; i++)
		src[i] = pl_byte(i);
	s.op = ORDMA_OP_RECV;
	s.chan_id = a.out_chan_id;
	s.addr = (uintptr_t)dst;
	s.len = PL_LEN;
	ASSERT_EQ(0, ioctl(fd, ORDMA_IOC_SUBMIT, &s));
	s.op = ORDMA_OP_SEND;
	s.chan_id = c.out_chan_id;
	s.addr = (uintptr_t)src;
	ASSERT_EQ(0, ioctl(fd, ORDMA_IOC_SUBMIT, &s));
	while (got < 2) {
		ASSERT_EQ(0, ioctl(fd, ORDMA_IOC_WAIT, &wt));
		for (k = 0; k < (int)wt.out_count; k++)
			EXPECT_EQ(PL_LEN, cqe[k].res);
		got += wt.out_count;
	}
	w.stop = 1;
	pthread_join(t, NULL);
	TH_LOG("fewest chunks free meanwhile: %llu", w.min);
	EXPECT_NE(0ULL, w.min);
	EXPECT_EQ(0, memcmp(src, dst, PL_LEN));
	close(fd);
	for (i = 0; i < STALLERS; i++)
		raw_fini(&rp[i]);
	free(rp);
	free(src);
	free(dst);
}

/* -- a bounded wire fuzz ---------------------------------------------------- */

/* A peer for the fuzz: one buffer to send from, 8 receive slots. */
struct fuzz_peer {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char buf[2 * 32768];
	int outstanding;
	__u32 chan;
};

#define FZ_SLOT		4096
#define FZ_RECV		32768

static uint64_t fz_state;

static uint64_t fz_next(void)
{
	/* xorshift64*: reproducible from the seed alone. */
	fz_state ^= fz_state >> 12;
	fz_state ^= fz_state << 25;
	fz_state ^= fz_state >> 27;
	return fz_state * 0x2545f4914f6cdd1dULL;
}

static int fz_post_recv(struct fuzz_peer *fp, int k)
{
	struct ibv_sge sge = { .addr = (uintptr_t)fp->buf + FZ_RECV +
				       FZ_SLOT * k,
			       .length = FZ_SLOT, .lkey = fp->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = RAWCM_RECV_WR_ID + k, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(fp->id->qp, &wr, &bad);
}

static void fz_fini(struct fuzz_peer *fp)
{
	if (fp->id && fp->id->qp) {
		/* With nothing unreaped, no send of it can be in progress. */
		if (fp->outstanding)
			rawcm_drain(fp->id, fp->cq, fp->outstanding);
		rdma_destroy_qp(fp->id);
	}
	if (fp->mr)
		ibv_dereg_mr(fp->mr);
	if (fp->cq)
		ibv_destroy_cq(fp->cq);
	if (fp->pd)
		ibv_dealloc_pd(fp->pd);
	if (fp->id)
		rdma_destroy_id(fp->id);
	memset(fp, 0, sizeof(*fp));
}

/* Connect a fuzz peer, accept it with a RECV posted. */
static int fz_connect(FIXTURE_DATA(proto) *self, struct fuzz_peer *fp,
		      void *rbuf)
{
	struct wire_cm priv = { .version = WIRE_VERSION, .rx_size = FZ_SLOT };
	struct rdma_conn_param param = {
		.private_data = &priv, .private_data_len = sizeof(priv),
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
	};
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(self->port) };
	struct ordma_accept a = { .size = sizeof(a),
				  .listener_id = self->listener };
	struct ordma_submit s = { .size = sizeof(s), .op = ORDMA_OP_RECV,
				  .addr = (uintptr_t)rbuf, .len = 65536 };
	int k;

	memset(fp, 0, sizeof(*fp));
	inet_pton(AF_INET, "192.0.2.1", &sin.sin_addr);
	if (rdma_create_id(self->ec, &fp->id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(fp->id, NULL, (struct sockaddr *)&sin,
			      RAWCM_EVENT_MS) ||
	    rawcm_event(self->ec) != RDMA_CM_EVENT_ADDR_RESOLVED ||
	    rdma_resolve_route(fp->id, RAWCM_EVENT_MS) ||
	    rawcm_event(self->ec) != RDMA_CM_EVENT_ROUTE_RESOLVED)
		return -1;
	fp->pd = ibv_alloc_pd(fp->id->verbs);
	fp->cq = ibv_create_cq(fp->id->verbs, 32, NULL, NULL, 0);
	if (!fp->pd || !fp->cq)
		return -1;
	fp->mr = ibv_reg_mr(fp->pd, fp->buf, sizeof(fp->buf),
			    IBV_ACCESS_LOCAL_WRITE);
	qa.send_cq = fp->cq;
	qa.recv_cq = fp->cq;
	if (!fp->mr || rdma_create_qp(fp->id, fp->pd, &qa))
		return -1;
	for (k = 0; k < 8; k++)
		if (fz_post_recv(fp, k))
			return -1;
	if (rdma_connect(fp->id, &param) ||
	    rawcm_event(self->ec) != RDMA_CM_EVENT_ESTABLISHED ||
	    ioctl(self->fd, ORDMA_IOC_ACCEPT, &a))
		return -1;
	fp->chan = a.out_chan_id;
	s.chan_id = a.out_chan_id;
	return ioctl(self->fd, ORDMA_IOC_SUBMIT, &s) ? -1 : 0;
}

/* A field value a fuzzer likes: edges, small numbers, the token, noise. */
static uint64_t fz_value(uint64_t token)
{
	static const uint64_t edge[] = {
		0, 1, 2, 63, 64, 4095, 4096, 65535, 65536, 1 << 20,
		0xffffffffULL, 0x100000000ULL, 1ULL << 40, 1ULL << 63,
		~0ULL, ~0ULL - 1,
	};
	uint64_t r = fz_next();

	switch (r % 5) {
	case 0:
		return edge[(r >> 8) % (sizeof(edge) / sizeof(edge[0]))];
	case 1:
		return (r >> 8) % 16;
	case 2:
		return token ^ ((r >> 8) % 3 ? 0 : 1ULL << ((r >> 16) % 64));
	case 3:
		return ((r >> 8) % 64) * 4096;
	default:
		return fz_next();
	}
}

/*
 * One message into fp->buf: a random header, a well-formed one of a random
 * opcode with fuzzed fields, or one with a few bits flipped; then a payload.
 * Returns its length; *@opcode says how to send it (0: SEND; else SEND or
 * WRITE with immediate @*imm).
 */
static uint32_t fz_message(struct fuzz_peer *fp, uint64_t token, int *kind,
			   uint32_t *imm)
{
	struct wire_hdr *h = (struct wire_hdr *)fp->buf;
	uint64_t r = fz_next();
	uint32_t plen = (r >> 8) % 4 ? 0 : (r >> 16) % 1024;
	unsigned int i;

	*kind = 0;
	if (r % 100 < 5) {
		for (i = 0; i < sizeof(*h); i += 8) {
			uint64_t v = fz_next();

			memcpy((char *)h + i, &v, 8);
		}
	} else {
		memset(h, 0, sizeof(*h));
		h->version = WIRE_VERSION;
		h->opcode = 1 + fz_next() % 14;
		h->flags = fz_next() % 8 ? fz_next() % 16 : (uint16_t)fz_next();
		h->payload_len = plen;
		h->total_len = fz_value(token);
		h->offset = fz_value(token);
		h->base = fz_value(token);
		h->token = fz_value(token);
		h->op_id = fz_value(token);
		h->status = fz_next() % 4 ? 0 : (uint32_t)fz_value(token);
		h->credits = fz_next() % 16;
		if (r % 100 < 15)
			for (i = 0; i < 1 + fz_next() % 3; i++)
				((unsigned char *)h)[fz_next() % sizeof(*h)] ^=
					1 << (fz_next() % 8);
		if (r % 100 > 97)
			h->payload_len = (uint32_t)fz_value(token);
	}
	for (i = 0; i < plen; i++)
		fp->buf[sizeof(*h) + i] = (unsigned char)fz_next();
	if (r % 100 > 94) {
		*kind = 1 + fz_next() % 2;
		*imm = fz_next() % 2 ? (uint32_t)fz_next() :
		       (uint32_t)(0x4f520000 | (fz_next() % 8)) +
		       (fz_next() % 2) * 0x10000;
		return fz_next() % 2 ? plen : sizeof(*h) + plen;
	}
	return sizeof(*h) + plen;
}

/*
 * Post it; reap what completed. 1 when the channel is gone (a send of ours
 * failed, or ordma closed it), 0 otherwise, -1 on a local error.
 */
static int fz_send(FIXTURE_DATA(proto) *self, struct fuzz_peer *fp,
		   uint32_t len, int kind, uint32_t imm)
{
	struct ibv_sge sge = { .addr = (uintptr_t)fp->buf, .length = len,
			       .lkey = fp->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = len ? 1 : 0,
				  .opcode = IBV_WR_SEND }, *bad;
	struct ibv_wc wc[8];
	int n, i, idle = 0;

	if (kind == 1) {
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htonl(imm);
	} else if (kind == 2) {
		/* No key: a write of no bytes with immediate data. */
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htonl(imm);
		wr.num_sge = 0;
	}
	while (fp->outstanding >= 8) {
		n = ibv_poll_cq(fp->cq, 8, wc);
		if (n < 0)
			return -1;
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				return 1;
			if (wc[i].opcode == IBV_WC_RECV)
				fz_post_recv(fp, wc[i].wr_id - RAWCM_RECV_WR_ID);
			else
				fp->outstanding--;
		}
		if (n)
			continue;
		if (chan_state(self, fp->chan) != ORDMA_CHAN_CONNECTED)
			return 1;
		/* Stuck (ordma waits for credit it never got): start over. */
		if (idle++ > 2000)
			return 1;
		usleep(100);
	}
	if (ibv_post_send(fp->id->qp, &wr, &bad))
		return 1;
	fp->outstanding++;
	return 0;
}

/* Reap what is left, then move 1 MiB over a new loopback channel. */
static void fresh_channel_works(struct __test_metadata *_metadata,
				FIXTURE_DATA(proto) *self)
{
	struct ordma_listen l = { .size = sizeof(l) };
	struct ordma_connect c = { .size = sizeof(c),
				   .timeout_ms = PROTO_WAIT_MS };
	struct ordma_accept a = { .size = sizeof(a) };
	struct ordma_submit s = { .size = sizeof(s), .op = ORDMA_OP_RECV,
				  .len = PL_LEN };
	struct ordma_cqe cqe[64];
	struct ordma_wait w = { .size = sizeof(w), .cqes = (uintptr_t)cqe,
				.max = 64 };
	unsigned char *src = malloc(PL_LEN), *dst = calloc(1, PL_LEN);
	size_t i;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	/* The fuzz channels' RECVs, failed when they closed. */
	while (!ioctl(self->fd, ORDMA_IOC_WAIT, &w) && w.out_count)
		;
	ASSERT_TRUE(errno == ETIMEDOUT || errno == EAGAIN);
	for (i = 0; i < PL_LEN; i++)
		src[i] = pl_byte(i);
	ASSERT_EQ(0, proto_listen(self->fd, _metadata->name, 2, &l));
	c.addr = l.addr;
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_CONNECT, &c));
	a.listener_id = l.out_id;
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_ACCEPT, &a));
	s.chan_id = a.out_chan_id;
	s.addr = (uintptr_t)dst;
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_SUBMIT, &s));
	s.op = ORDMA_OP_SEND;
	s.chan_id = c.out_chan_id;
	s.addr = (uintptr_t)src;
	ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_SUBMIT, &s));
	EXPECT_EQ(PL_LEN, wait_res(self->fd));
	EXPECT_EQ(PL_LEN, wait_res(self->fd));
	EXPECT_EQ(0, memcmp(src, dst, PL_LEN));
	free(src);
	free(dst);
}

/*
 * 10^5 messages (10^4 scaled down, as under the debug kernel) of random,
 * fuzzed and mutated headers, payloads and immediates from raw peers,
 * seeded from the clock, so each run covers other messages
 * (ORDMA_TEST_SEED replays one). Each is taken or closes its channel,
 * which is then closed and replaced; no window byte is touched. Then every
 * counter is back to 0 and a fresh channel moves 1 MiB intact.
 */
TEST_F_TIMEOUT(proto, wire_fuzz, 900)
{
	const char *env = getenv("ORDMA_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) :
			(uint64_t)time(NULL) * 2654435761ULL;
	size_t total = ordma_scaled(100000, 10000), sent = 0;
	unsigned char *win = calloc(1, 65536), *rbuf = malloc(65536);
	struct ordma_close cl = { .size = sizeof(cl) };
	unsigned long long faults0 = 0, faults1 = 0;
	struct fuzz_peer fp;
	uint32_t len, imm;
	int kind, ret, chans = 0;
	__u64 token;

	ASSERT_NE(NULL, win);
	ASSERT_NE(NULL, rbuf);
	fz_state = seed | 1;
	TH_LOG("seed 0x%llx (ORDMA_TEST_SEED replays it)",
	       (unsigned long long)seed);
	EXPECT_EQ(0, sysfs_get("peer_faults", &faults0));
	token = expose_window(_metadata, self, win, 65536);
	memset(&fp, 0, sizeof(fp));
	while (sent < total) {
		if (!fp.id) {
			ASSERT_EQ(0, fz_connect(self, &fp, rbuf));
			chans++;
		}
		len = fz_message(&fp, token, &kind, &imm);
		ret = fz_send(self, &fp, len, kind, imm);
		ASSERT_LE(0, ret);
		sent++;
		if (ret) {
			cl.id = fp.chan;
			ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_CLOSE, &cl));
			fz_fini(&fp);
		}
	}
	if (fp.id) {
		cl.id = fp.chan;
		ASSERT_EQ(0, ioctl(self->fd, ORDMA_IOC_CLOSE, &cl));
		fz_fini(&fp);
	}
	EXPECT_EQ(0, sysfs_get("peer_faults", &faults1));
	TH_LOG("%zu messages over %d channels; %llu closed for a fault",
	       sent, chans, faults1 - faults0);
	ASSERT_EQ(0, counters_idle());
	fresh_channel_works(_metadata, self);
	free(win);
	free(rbuf);
}

TEST_HARNESS_MAIN
