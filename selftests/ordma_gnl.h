/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw generic netlink for the guest tests of the family "ordma": requests
 * built by hand (malformed ones too), the exact errno and extended ack of
 * each answer, and the events group joined and read, with no library
 * between the test and the kernel.
 */
#ifndef ORDMA_GNL_H
#define ORDMA_GNL_H

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/ordma.h>

struct gnl {
	int fd;
	uint16_t family;
	uint32_t events_grp;	/* the events group's id */
	uint32_t seq;
	char msg[256];		/* the last error's extended ack message */
	int offs;		/* its attribute's offset, or -1 */
	bool range;		/* its policy's bounds, if it gave them */
	uint64_t min, max;
	char reply[8192];	/* the last data reply */
	int replies;
};

struct req {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	char attrs[4096];
};

static inline void req_init(struct req *r, uint16_t type, uint8_t cmd, uint16_t flags)
{
	memset(r, 0, sizeof(*r));
	r->nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->nh.nlmsg_type = type;
	r->nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	r->gh.cmd = cmd;
	r->gh.version = 1;
}

/* Append an attribute whose header says @nla_len (normally 4 + @len). */
static inline void req_put_raw(struct req *r, uint16_t type, uint16_t nla_len,
			const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = nla_len;
	if (len)
		memcpy(a + 1, data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + NLA_ALIGN(NLA_HDRLEN + len);
}

static inline void req_put(struct req *r, uint16_t type, const void *data, size_t len)
{
	req_put_raw(r, type, NLA_HDRLEN + len, data, len);
}

static inline void req_put_str(struct req *r, uint16_t type, const char *s)
{
	req_put(r, type, s, strlen(s) + 1);
}

static inline void req_put_u32(struct req *r, uint16_t type, uint32_t v)
{
	req_put(r, type, &v, sizeof(v));
}

static inline void req_put_u64(struct req *r, uint16_t type, uint64_t v)
{
	req_put(r, type, &v, sizeof(v));
}

/* The attributes of @len bytes at @a, one at a time. */
#define for_each_attr(a, start, len)					\
	for (a = (struct nlattr *)(start);				\
	     (char *)a + NLA_HDRLEN <= (char *)(start) + (len) &&	\
	     a->nla_len >= NLA_HDRLEN &&				\
	     (char *)a + a->nla_len <= (char *)(start) + (len);		\
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))

/* What an error's extended ack says: message, offset, policy bounds. */
static inline void gnl_ext_ack(struct gnl *g, struct nlmsghdr *nh)
{
	struct nlmsgerr *e = NLMSG_DATA(nh);
	size_t off = NLMSG_HDRLEN + sizeof(*e);
	struct nlattr *a, *p;

	if (!(nh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	/* Our request comes back whole unless capped, padded to 4 bytes. */
	if (!(nh->nlmsg_flags & NLM_F_CAPPED))
		off += NLMSG_ALIGN(e->msg.nlmsg_len) - NLMSG_HDRLEN;
	if (off >= nh->nlmsg_len)
		return;
	for_each_attr(a, (char *)nh + off, nh->nlmsg_len - off) {
		switch (a->nla_type & NLA_TYPE_MASK) {
		case NLMSGERR_ATTR_MSG:
			snprintf(g->msg, sizeof(g->msg), "%.*s",
				 (int)(a->nla_len - NLA_HDRLEN), (char *)(a + 1));
			break;
		case NLMSGERR_ATTR_OFFS:
			g->offs = *(uint32_t *)(a + 1);
			break;
		case NLMSGERR_ATTR_POLICY:
			for_each_attr(p, a + 1, a->nla_len - NLA_HDRLEN) {
				if (p->nla_type == NL_POLICY_TYPE_ATTR_MIN_VALUE_U)
					memcpy(&g->min, p + 1, 8);
				if (p->nla_type == NL_POLICY_TYPE_ATTR_MAX_VALUE_U) {
					memcpy(&g->max, p + 1, 8);
					g->range = true;
				}
			}
			break;
		}
	}
}

/* Send @r, take the answers: 0 or the negative errno of its ack or DONE. */
static inline int gnl_xfer(struct gnl *g, struct req *r)
{
	char buf[16384];
	struct nlmsghdr *nh;
	ssize_t n;

	g->msg[0] = '\0';
	g->offs = -1;
	g->range = false;
	g->replies = 0;
	r->nh.nlmsg_seq = ++g->seq;
	if (send(g->fd, r, r->nh.nlmsg_len, 0) != (ssize_t)r->nh.nlmsg_len)
		return -EIO;
	for (;;) {
		n = recv(g->fd, buf, sizeof(buf), 0);
		if (n < 0)
			return -EIO;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_seq != g->seq)
				continue;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				gnl_ext_ack(g, nh);
				return ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
			}
			if (nh->nlmsg_type == NLMSG_DONE)
				return *(int *)NLMSG_DATA(nh);
			g->replies++;
			if (nh->nlmsg_len <= sizeof(g->reply))
				memcpy(g->reply, nh, nh->nlmsg_len);
		}
	}
}

/* The string attribute @type of the last reply, or "". */
static inline const char *reply_str(struct gnl *g, uint16_t type)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)g->reply;
	struct nlattr *a;

	for_each_attr(a, (char *)NLMSG_DATA(nh) + GENL_HDRLEN,
		      nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN))
		if (a->nla_type == type)
			return (const char *)(a + 1);
	return "";
}

/* The u32 attribute @type of the last reply in @v: false if it has none. */
static inline bool reply_u32(struct gnl *g, uint16_t type, uint32_t *v)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)g->reply;
	struct nlattr *a;

	for_each_attr(a, (char *)NLMSG_DATA(nh) + GENL_HDRLEN,
		      nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN))
		if (a->nla_type == type && a->nla_len == NLA_HDRLEN + 4) {
			memcpy(v, a + 1, 4);
			return true;
		}
	return false;
}

/* The family's id and its events group's, through the controller. */
static inline int gnl_open(struct gnl *g)
{
	struct timeval tv = { .tv_sec = 10 };
	struct nlattr *a, *grp, *ga;
	struct nlmsghdr *nh;
	uint32_t id;
	struct req r;
	int one = 1, ret;
	bool events;

	memset(g, 0, sizeof(*g));
	g->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (g->fd < 0)
		return -errno;
	setsockopt(g->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(g->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(g->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	req_init(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	req_put_str(&r, CTRL_ATTR_FAMILY_NAME, ORDMA_GENL_NAME);
	ret = gnl_xfer(g, &r);
	if (ret)
		return ret;
	if (g->replies != 1)
		return -ENOENT;
	nh = (struct nlmsghdr *)g->reply;
	for_each_attr(a, (char *)NLMSG_DATA(nh) + GENL_HDRLEN,
		      nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN)) {
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			g->family = *(uint16_t *)(a + 1);
		if ((a->nla_type & NLA_TYPE_MASK) != CTRL_ATTR_MCAST_GROUPS)
			continue;
		for_each_attr(grp, a + 1, a->nla_len - NLA_HDRLEN) {
			events = false;
			id = 0;
			for_each_attr(ga, grp + 1, grp->nla_len - NLA_HDRLEN) {
				if (ga->nla_type == CTRL_ATTR_MCAST_GRP_NAME)
					events = !strcmp((char *)(ga + 1),
							 ORDMA_GENL_MCGRP_EVENTS);
				if (ga->nla_type == CTRL_ATTR_MCAST_GRP_ID)
					id = *(uint32_t *)(ga + 1);
			}
			if (events)
				g->events_grp = id;
		}
	}
	return g->family && g->events_grp ? 0 : -ENOENT;
}

/* Join the events group (CAP_NET_ADMIN): 0 or -errno. */
static inline int gnl_join_events(struct gnl *g)
{
	return setsockopt(g->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
			  &g->events_grp, sizeof(g->events_grp)) ? -errno : 0;
}

/*
 * Wait up to @timeout_ms for an event @cmd on a socket that joined the
 * events group; it is then the last reply (reply_str(), reply_u32()).
 * 0, -ETIMEDOUT, or -ENOBUFS if events were lost.
 */
static inline int gnl_event_wait(struct gnl *g, uint8_t cmd, int timeout_ms)
{
	struct pollfd pfd = { .fd = g->fd, .events = POLLIN };
	struct timeval t0, t;
	struct nlmsghdr *nh;
	char buf[16384];
	long left;
	ssize_t n;

	gettimeofday(&t0, NULL);
	for (;;) {
		gettimeofday(&t, NULL);
		left = timeout_ms - ((t.tv_sec - t0.tv_sec) * 1000L +
				     (t.tv_usec - t0.tv_usec) / 1000);
		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			return -ETIMEDOUT;
		n = recv(g->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS)
			return -ENOBUFS;
		if (n < 0)
			continue;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type != g->family || nh->nlmsg_seq ||
			    nh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN) ||
			    ((struct genlmsghdr *)NLMSG_DATA(nh))->cmd != cmd ||
			    nh->nlmsg_len > sizeof(g->reply))
				continue;
			memcpy(g->reply, nh, nh->nlmsg_len);
			return 0;
		}
	}
}

#endif /* ORDMA_GNL_H */
