/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A raw peer of ordma for the selftests: librdmacm and verbs, no ordma,
 * sending the connection private data of the wire protocol (kernel/wire.h)
 * with whatever version a test wants. proto_test's hostile peer talks to a
 * listener of the same guest; version_test's crosses two hosts.
 */
#ifndef _ORDMA_RAWCM_H
#define _ORDMA_RAWCM_H

#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <rdma/rdma_cma.h>

/* The wire protocol's version, and its CM private data (struct ordma_wire_cm). */
#define WIRE_VERSION	10
/* The pair counts every message against the credits. */
#define WIRE_CM_F_CREDIT_ALL	0x1

struct wire_cm {
	uint8_t version;
	uint8_t flags;
	uint16_t credits;
	uint32_t rx_size;
};

/* No CM event of a test takes longer to come, even under TCG. */
#define RAWCM_EVENT_MS	20000

/*
 * The next event of @ec, within RAWCM_EVENT_MS, acknowledged. Return: its
 * type, or -1 (none in time, or an error); *@status (if not NULL) gets the
 * event's status (a REJECTED event's reject reason).
 */
static inline int rawcm_event_cm(struct rdma_event_channel *ec, int *status,
				 struct wire_cm *cm)
{
	struct pollfd p = { .fd = ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type;

	if (poll(&p, 1, RAWCM_EVENT_MS) != 1 || rdma_get_cm_event(ec, &ev))
		return -1;
	type = ev->event;
	if (status)
		*status = ev->status;
	/* @cm (if not NULL) gets the event's private data, or zeros. */
	if (cm) {
		memset(cm, 0, sizeof(*cm));
		if (ev->param.conn.private_data &&
		    ev->param.conn.private_data_len >= sizeof(*cm))
			memcpy(cm, ev->param.conn.private_data, sizeof(*cm));
	}
	rdma_ack_cm_event(ev);
	return type;
}

static inline int rawcm_event_status(struct rdma_event_channel *ec,
				     int *status)
{
	return rawcm_event_cm(ec, status, NULL);
}

static inline int rawcm_event(struct rdma_event_channel *ec)
{
	return rawcm_event_status(ec, NULL);
}

/*
 * An RC QP on @id (whose route is resolved, or a connect request's id):
 * a PD, a CQ of 16 and @buf registered for local writes, in *@pd, *@cq
 * and *@mr, which the caller frees (also on failure). Return: 0 or -1.
 */
static inline int rawcm_qp(struct rdma_cm_id *id, void *buf, size_t len,
			   struct ibv_pd **pd, struct ibv_cq **cq,
			   struct ibv_mr **mr)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
	};

	*pd = ibv_alloc_pd(id->verbs);
	*cq = ibv_create_cq(id->verbs, 16, NULL, NULL, 0);
	if (!*pd || !*cq)
		return -1;
	*mr = ibv_reg_mr(*pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	qa.send_cq = *cq;
	qa.recv_cq = *cq;
	if (!*mr || rdma_create_qp(id, *pd, &qa))
		return -1;
	return 0;
}

/*
 * rawcm_drain() polls the CQ at most RAWCM_DRAIN_POLLS times and stops
 * after RAWCM_QUIET_POLLS empty polls in a row, 1 ms apart. Completions
 * with a wr_id from RAWCM_RECV_WR_ID up are receives'.
 */
#define RAWCM_DRAIN_POLLS	500
#define RAWCM_QUIET_POLLS	3
#define RAWCM_RECV_WR_ID	1000

/*
 * Before a raw peer's QP is destroyed: move it to the error state and
 * reap what it flushes into @cq (which may be NULL), until the @sends
 * sends not reaped yet have completed or @cq stayed empty for a few ms
 * (@sends < 0: not known, only the quiet ends it). rdma_rxe then has no
 * request of the QP in progress (a retry of a send the other side never
 * acknowledged, say) while the QP goes away.
 */
static inline void rawcm_drain(struct rdma_cm_id *id, struct ibv_cq *cq,
			       int sends)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[16];
	int quiet = 0, n, k;

	if (!id || !id->qp || ibv_modify_qp(id->qp, &attr, IBV_QP_STATE))
		return;
	for (int i = 0; i < RAWCM_DRAIN_POLLS && quiet < RAWCM_QUIET_POLLS &&
	     sends; i++) {
		n = cq ? ibv_poll_cq(cq, 16, wc) : 0;
		for (k = 0; k < n && sends > 0; k++)
			sends -= wc[k].wr_id < RAWCM_RECV_WR_ID;
		quiet = n > 0 ? 0 : quiet + 1;
		if (n <= 0 && sends)
			poll(NULL, 0, 1);
	}
}

/* The parameters of a connect or accept whose private data says @version. */
static inline void rawcm_param(struct rdma_conn_param *param,
			       struct wire_cm *priv, uint8_t version)
{
	memset(priv, 0, sizeof(*priv));
	priv->version = version;
	priv->rx_size = 65536;
	memset(param, 0, sizeof(*param));
	param->private_data = priv;
	param->private_data_len = sizeof(*priv);
	param->retry_count = 7;
	param->rnr_retry_count = 7;
}

/*
 * Resolve @dst from @id, build a QP with rawcm_qp() and connect with the
 * private data *@cm, which gets the answer's (an accept's: the flags the
 * pair uses and ordma's first credits; zeros if it had none). Return: the
 * event that ends the connect (ESTABLISHED, REJECTED, ...) or -1;
 * *@status (if not NULL) its status.
 */
static inline int rawcm_connect_cm(struct rdma_event_channel *ec,
				   struct rdma_cm_id *id,
				   const struct sockaddr *dst, struct wire_cm *cm,
				   void *buf, size_t len, struct ibv_pd **pd,
				   struct ibv_cq **cq, struct ibv_mr **mr,
				   int *status)
{
	struct rdma_conn_param param;
	struct wire_cm priv;

	rawcm_param(&param, &priv, cm->version);
	priv = *cm;
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)dst,
			      RAWCM_EVENT_MS) ||
	    rawcm_event(ec) != RDMA_CM_EVENT_ADDR_RESOLVED ||
	    rdma_resolve_route(id, RAWCM_EVENT_MS) ||
	    rawcm_event(ec) != RDMA_CM_EVENT_ROUTE_RESOLVED ||
	    rawcm_qp(id, buf, len, pd, cq, mr) ||
	    rdma_connect(id, &param))
		return -1;
	return rawcm_event_cm(ec, status, cm);
}

/* rawcm_connect_cm() with the private data of @version, no flag. */
static inline int rawcm_connect(struct rdma_event_channel *ec,
				struct rdma_cm_id *id,
				const struct sockaddr *dst, uint8_t version,
				void *buf, size_t len, struct ibv_pd **pd,
				struct ibv_cq **cq, struct ibv_mr **mr,
				int *status)
{
	struct rdma_conn_param param;
	struct wire_cm cm;

	rawcm_param(&param, &cm, version);
	return rawcm_connect_cm(ec, id, dst, &cm, buf, len, pd, cq, mr,
				status);
}

#endif /* _ORDMA_RAWCM_H */
