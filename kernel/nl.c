// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "ordma": operators read every device's pool,
 * settings, counters and cost model, change the settings, zero the
 * counters, and follow devices, settings and channels on the multicast
 * group "events". The commands, attributes and errors are the DOC block
 * "Generic netlink" of include/uapi/linux/ordma.h; the spec is
 * Documentation/netlink/specs/ordma.yaml.
 *
 * Requests run in parallel (parallel_ops): each takes a reference on its
 * device through dev.c's lookups and the locks of what it reads. A dump
 * walks the device list by position (cb->args[0]) and takes the list's
 * lock for one lookup at a time, never across the dump; a device added or
 * removed meanwhile marks the dump NLM_F_DUMP_INTR. Settings are written by
 * sysfs.c's ordma_knobs_set(), the one path the sysfs files take too.
 *
 * Events come from process context: the ib_client's add and remove
 * (main.c), a channel end established or closed (cm.c through chan.c) and
 * the settings' notifier chain (sysfs.c). ordma_nl_sem (an rwsem) makes
 * ordma_nl_up, the family being registered, hold while one is sent: events
 * before ordma_nl_init() or after ordma_nl_exit() are dropped.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/rwsem.h>
#include <net/genetlink.h>
#include <rdma/ib_cache.h>

#include "nl.h"

enum ordma_nl_mcgrp {
	ORDMA_NL_MCGRP_EVENTS,
};

/* Longest mode name ("zerocopy"), with room to spare. */
#define ORDMA_NL_MODE_LEN	15

static DECLARE_RWSEM(ordma_nl_sem);
static bool ordma_nl_up;	/* ordma_nl_sem */

static struct genl_family ordma_nl_family;

static const struct nla_policy ordma_nl_dev_policy[ORDMA_NL_A_DEV_NAME + 1] = {
	[ORDMA_NL_A_DEV_NAME] = { .type = NLA_NUL_STRING,
				  .len = IB_DEVICE_NAME_MAX - 1 },
};

static const struct nla_policy
ordma_nl_set_policy[ORDMA_NL_A_PROGRESS_TIMEOUT_MS + 1] = {
	[ORDMA_NL_A_DEV_NAME] = { .type = NLA_NUL_STRING,
				  .len = IB_DEVICE_NAME_MAX - 1 },
	[ORDMA_NL_A_POOL_BYTES] = { .type = NLA_U64 },
	[ORDMA_NL_A_CHUNK_BYTES] = { .type = NLA_U32 },
	[ORDMA_NL_A_CHAN_QUOTA_CHUNKS] = { .type = NLA_U32 },
	[ORDMA_NL_A_USER_QUOTA_CHUNKS] = { .type = NLA_U32 },
	[ORDMA_NL_A_MODE] = { .type = NLA_NUL_STRING,
			      .len = ORDMA_NL_MODE_LEN },
	[ORDMA_NL_A_PROGRESS_TIMEOUT_MS] = { .type = NLA_U32 },
};

/* Each setting's attribute, and what a value it refuses is told. */
static const struct {
	int attr;
	const char *range;
} ordma_nl_knobs[ORDMA_KNOB_NR] = {
	[ORDMA_KNOB_POOL_BYTES] = {
		ORDMA_NL_A_POOL_BYTES,
		"pool_bytes: from chunk_bytes to 1073741824",
	},
	[ORDMA_KNOB_CHUNK_BYTES] = {
		ORDMA_NL_A_CHUNK_BYTES,
		"chunk_bytes: a power of two from 4096 to 1048576, at most pool_bytes",
	},
	[ORDMA_KNOB_CHAN_QUOTA] = {
		ORDMA_NL_A_CHAN_QUOTA_CHUNKS,
		"chan_quota_chunks: from 1 to 65536",
	},
	[ORDMA_KNOB_USER_QUOTA] = {
		ORDMA_NL_A_USER_QUOTA_CHUNKS,
		"user_quota_chunks: from 1 to 65536",
	},
	[ORDMA_KNOB_MODE] = {
		ORDMA_NL_A_MODE,
		"mode: auto, copy, zerocopy or overlap",
	},
	[ORDMA_KNOB_PROGRESS_MS] = {
		ORDMA_NL_A_PROGRESS_TIMEOUT_MS,
		"progress_timeout_ms: from 100 to 3600000",
	},
};

/* NL_SET_ERR_MSG_ATTR() for a message from ordma_nl_knobs (not a literal). */
static void ordma_nl_refuse(struct genl_info *info, const struct nlattr *attr,
			    const char *msg)
{
	NL_SET_BAD_ATTR(info->extack, attr);
	if (info->extack)
		info->extack->_msg = msg;
}

static int ordma_nl_put_port(struct sk_buff *skb, struct ordma_dev *odev)
{
	enum ib_port_state state;

	/* enum ordma_nl_port_state takes the RDMA core's values. */
	BUILD_BUG_ON((int)ORDMA_NL_PORT_ACTIVE != (int)IB_PORT_ACTIVE ||
		     (int)ORDMA_NL_PORT_ACTIVE_DEFER != (int)IB_PORT_ACTIVE_DEFER);
	if (ib_get_cached_port_state(odev->ibdev, rdma_start_port(odev->ibdev),
				     &state))
		return 0;
	return nla_put_u8(skb, ORDMA_NL_A_PORT_STATE, state);
}

/* The pool and the settings: POOL_GET, POOL_CHANGED and part of DEV_GET. */
static int ordma_nl_put_pool(struct sk_buff *skb, struct ordma_dev *odev)
{
	struct ordma_pool_info pi;

	ordma_pool_read(&odev->pool, &pi);
	if (nla_put_u64_64bit(skb, ORDMA_NL_A_POOL_BYTES, pi.pool_bytes,
			      ORDMA_NL_A_PAD) ||
	    nla_put_u32(skb, ORDMA_NL_A_CHUNK_BYTES, pi.chunk_bytes) ||
	    nla_put_u32(skb, ORDMA_NL_A_CHUNKS_TOTAL, pi.chunks_total) ||
	    nla_put_u32(skb, ORDMA_NL_A_CHUNKS_FREE, pi.chunks_free) ||
	    nla_put_u32(skb, ORDMA_NL_A_CHUNKS_HELD,
			pi.chunks_total - pi.chunks_free) ||
	    nla_put_u32(skb, ORDMA_NL_A_HIGH_WATER, pi.high_water) ||
	    nla_put_u64_64bit(skb, ORDMA_NL_A_ALLOC_WAITS, pi.alloc_waits,
			      ORDMA_NL_A_PAD) ||
	    nla_put_u32(skb, ORDMA_NL_A_CHAN_QUOTA_CHUNKS, pi.quota) ||
	    nla_put_u32(skb, ORDMA_NL_A_USER_QUOTA_CHUNKS, pi.user_quota) ||
	    nla_put_string(skb, ORDMA_NL_A_MODE,
			   ordma_mode_names[READ_ONCE(odev->mode)]) ||
	    nla_put_u32(skb, ORDMA_NL_A_PROGRESS_TIMEOUT_MS,
			READ_ONCE(odev->progress_ms)))
		return -EMSGSIZE;
	return 0;
}

static int ordma_nl_put_u64(struct sk_buff *skb, int attr, u64 val)
{
	return nla_put_u64_64bit(skb, attr, val, ORDMA_NL_A_PAD);
}

/* Every counter and gauge of the device's sysfs directory. */
static int ordma_nl_put_stats(struct sk_buff *skb, struct ordma_dev *odev)
{
	if (ordma_nl_put_u64(skb, ORDMA_NL_A_BYTES_TX,
			     atomic64_read(&odev->bytes_tx)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_BYTES_RX,
			     atomic64_read(&odev->bytes_rx)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_OPS, atomic64_read(&odev->ops)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_ERRORS,
			     atomic64_read(&odev->errors)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_CHANNELS,
			     atomic_read(&odev->nchans)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_PAGES_PINNED,
			     atomic64_read(&odev->pages_pinned)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_MRS_LIVE,
			     atomic_read(&odev->mrs_live)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_BYTES_PLACED,
			     atomic64_read(&odev->bytes_placed)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_BYTES_COPIED,
			     atomic64_read(&odev->bytes_copied)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_BYTES_ZEROCOPY,
			     atomic64_read(&odev->bytes_zerocopy)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_REGISTRATIONS,
			     atomic64_read(&odev->registrations)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_REG_NS,
			     atomic64_read(&odev->reg_ns)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_HIDDEN_NS,
			     atomic64_read(&odev->hidden_ns)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_FALLBACKS,
			     atomic64_read(&odev->fallbacks)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_PEER_FAULTS,
			     atomic64_read(&odev->peer_faults)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_TOKEN_GUESSES,
			     atomic64_read(&odev->token_guesses)))
		return -EMSGSIZE;
	return 0;
}

static int ordma_nl_put_model(struct sk_buff *skb, struct ordma_dev *odev)
{
	struct ordma_model m;
	struct nlattr *nest;

	spin_lock(&odev->model_lock);
	m = odev->model;
	spin_unlock(&odev->model_lock);

	nest = nla_nest_start(skb, ORDMA_NL_A_MODEL);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, ORDMA_NL_MODEL_A_PIN_NS_PAGE, m.pin_ns_page,
			      ORDMA_NL_MODEL_A_PAD) ||
	    nla_put_u64_64bit(skb, ORDMA_NL_MODEL_A_REG_NS, m.reg_ns,
			      ORDMA_NL_MODEL_A_PAD) ||
	    nla_put_u64_64bit(skb, ORDMA_NL_MODEL_A_COPY_PS_BYTE,
			      m.copy_ps_byte, ORDMA_NL_MODEL_A_PAD) ||
	    nla_put_u64_64bit(skb, ORDMA_NL_MODEL_A_WIRE_PS_BYTE,
			      m.wire_ps_byte, ORDMA_NL_MODEL_A_PAD) ||
	    nla_put_u64_64bit(skb, ORDMA_NL_MODEL_A_WR_NS, m.wr_ns,
			      ORDMA_NL_MODEL_A_PAD) ||
	    nla_put_u64_64bit(skb, ORDMA_NL_MODEL_A_DEREG_NS, m.dereg_ns,
			      ORDMA_NL_MODEL_A_PAD) ||
	    nla_put_u8(skb, ORDMA_NL_MODEL_A_CPU_WIRE, m.cpu_wire)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * One message about @odev: its name and pool, and with @whole (DEV_GET)
 * its port, counters and model too. @cb: the dump it is part of, or NULL.
 */
static int ordma_nl_fill(struct sk_buff *skb, struct ordma_dev *odev, u8 cmd,
			 u32 portid, u32 seq, int flags, bool whole,
			 struct netlink_callback *cb)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &ordma_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);
	if (nla_put_string(skb, ORDMA_NL_A_DEV_NAME,
			   dev_name(&odev->ibdev->dev)) ||
	    (whole && ordma_nl_put_port(skb, odev)) ||
	    ordma_nl_put_pool(skb, odev) ||
	    (whole && ordma_nl_put_stats(skb, odev)) ||
	    (whole && ordma_nl_put_model(skb, odev))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* The device a request names, with a reference, or an ERR_PTR. */
static struct ordma_dev *ordma_nl_dev(struct genl_info *info)
{
	struct ordma_dev *odev;
	struct nlattr *attr;

	if (GENL_REQ_ATTR_CHECK(info, ORDMA_NL_A_DEV_NAME)) {
		GENL_SET_ERR_MSG(info, "dev_name missing: name the device");
		return ERR_PTR(-EINVAL);
	}
	attr = info->attrs[ORDMA_NL_A_DEV_NAME];
	odev = ordma_dev_get_by_name(nla_data(attr));
	if (!odev) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "no ordma device of that name");
		return ERR_PTR(-ENODEV);
	}
	return odev;
}

/* DEV_GET and POOL_GET of one device. */
static int ordma_nl_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	u8 cmd = info->genlhdr->cmd;
	struct ordma_dev *odev;
	struct sk_buff *msg;
	int ret;

	odev = ordma_nl_dev(info);
	if (IS_ERR(odev))
		return PTR_ERR(odev);
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg) {
		ordma_dev_put(odev);
		return -ENOMEM;
	}
	ret = ordma_nl_fill(msg, odev, cmd, info->snd_portid, info->snd_seq, 0,
			    cmd == ORDMA_NL_CMD_DEV_GET, NULL);
	ordma_dev_put(odev);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

/* DEV_GET and POOL_GET of every device: one message each. */
static int ordma_nl_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct genlmsghdr *ghdr = nlmsg_data(cb->nlh);
	unsigned long pos = cb->args[0];
	struct ordma_dev *odev;
	int ret = 0;
	u32 gen;

	for (;; pos++) {
		odev = ordma_dev_get_at(pos, &gen);
		/*
		 * Before the end too: the netlink core checks cb->seq against
		 * prev_seq once more when it ends the dump, so a change seen
		 * only by this last lookup still marks DONE NLM_F_DUMP_INTR.
		 */
		cb->seq = gen + 1;
		if (!odev)
			break;
		ret = ordma_nl_fill(skb, odev, ghdr->cmd,
				    NETLINK_CB(cb->skb).portid,
				    cb->nlh->nlmsg_seq, NLM_F_MULTI,
				    ghdr->cmd == ORDMA_NL_CMD_DEV_GET, cb);
		ordma_dev_put(odev);
		if (ret)
			break;
	}
	cb->args[0] = pos;
	/* A device too big for an empty message is an error, not the end. */
	if (ret && !skb->len)
		return ret;
	return skb->len;
}

static int ordma_nl_pool_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	enum ordma_knob knob, bad = ORDMA_KNOB_NR;
	struct ordma_knobs k = {};
	struct ordma_dev *odev;
	struct nlattr *attr;
	int ret, mode;

	for (knob = 0; knob < ORDMA_KNOB_NR; knob++) {
		attr = info->attrs[ordma_nl_knobs[knob].attr];
		if (!attr)
			continue;
		k.set |= BIT(knob);
		if (knob == ORDMA_KNOB_POOL_BYTES) {
			k.val[knob] = nla_get_u64(attr);
		} else if (knob == ORDMA_KNOB_MODE) {
			mode = match_string(ordma_mode_names, ORDMA_MODE_NR,
					    nla_data(attr));
			if (mode < 0) {
				ordma_nl_refuse(info, attr,
						ordma_nl_knobs[knob].range);
				return -EINVAL;
			}
			k.val[knob] = mode;
		} else {
			k.val[knob] = nla_get_u32(attr);
		}
	}
	if (!k.set) {
		GENL_SET_ERR_MSG(info, "no setting given");
		return -EINVAL;
	}

	odev = ordma_nl_dev(info);
	if (IS_ERR(odev))
		return PTR_ERR(odev);
	ret = ordma_knobs_set(odev, &k, &bad);
	ordma_dev_put(odev);
	if (!ret || bad >= ORDMA_KNOB_NR)
		return ret;
	attr = info->attrs[ordma_nl_knobs[bad].attr];
	if (ret == -EBUSY)
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "chunk_bytes: chunks are held by channels");
	else if (ret == -ENOMEM)
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "out of memory for the new chunks");
	else
		ordma_nl_refuse(info, attr, ordma_nl_knobs[bad].range);
	return ret;
}

static int ordma_nl_stats_reset_doit(struct sk_buff *skb,
				     struct genl_info *info)
{
	struct ordma_dev *odev = ordma_nl_dev(info);

	if (IS_ERR(odev))
		return PTR_ERR(odev);
	ordma_dev_reset_stats(odev);
	ordma_dev_put(odev);
	return 0;
}

static const struct genl_ops ordma_nl_ops[] = {
	{
		.cmd = ORDMA_NL_CMD_DEV_GET,
		.doit = ordma_nl_get_doit,
		.dumpit = ordma_nl_get_dumpit,
		.policy = ordma_nl_dev_policy,
		.maxattr = ORDMA_NL_A_DEV_NAME,
	},
	{
		.cmd = ORDMA_NL_CMD_POOL_GET,
		.doit = ordma_nl_get_doit,
		.dumpit = ordma_nl_get_dumpit,
		.policy = ordma_nl_dev_policy,
		.maxattr = ORDMA_NL_A_DEV_NAME,
	},
	{
		.cmd = ORDMA_NL_CMD_POOL_SET,
		.doit = ordma_nl_pool_set_doit,
		.policy = ordma_nl_set_policy,
		.maxattr = ORDMA_NL_A_PROGRESS_TIMEOUT_MS,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = ORDMA_NL_CMD_STATS_RESET,
		.doit = ordma_nl_stats_reset_doit,
		.policy = ordma_nl_dev_policy,
		.maxattr = ORDMA_NL_A_DEV_NAME,
		.flags = GENL_ADMIN_PERM,
	},
};

/*
 * Events name every user's channels, their QP numbers and peers: joining
 * takes CAP_NET_ADMIN, as changing a setting does.
 */
static const struct genl_multicast_group ordma_nl_mcgrps[] = {
	[ORDMA_NL_MCGRP_EVENTS] = {
		.name = ORDMA_GENL_MCGRP_EVENTS,
		.flags = GENL_MCAST_CAP_NET_ADMIN,
	},
};

static struct genl_family ordma_nl_family __ro_after_init = {
	.name = ORDMA_GENL_NAME,
	.version = ORDMA_GENL_VERSION,
	.module = THIS_MODULE,
	.parallel_ops = true,
	/* Strict from the first command on: header, flags and policies. */
	.resv_start_op = 0,
	.ops = ordma_nl_ops,
	.n_ops = ARRAY_SIZE(ordma_nl_ops),
	.mcgrps = ordma_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(ordma_nl_mcgrps),
};

/*
 * A new event message of @cmd, or NULL when nobody would get it; on
 * success ordma_nl_sem is held for reading until ordma_nl_event_send().
 */
static struct sk_buff *ordma_nl_event_new(u8 cmd, void **hdr)
{
	struct sk_buff *skb;

	down_read(&ordma_nl_sem);
	if (!ordma_nl_up ||
	    !genl_has_listeners(&ordma_nl_family, &init_net,
				ORDMA_NL_MCGRP_EVENTS))
		goto out;
	skb = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!skb)
		goto out;
	*hdr = genlmsg_put(skb, 0, 0, &ordma_nl_family, 0, cmd);
	if (*hdr)
		return skb;
	nlmsg_free(skb);
out:
	up_read(&ordma_nl_sem);
	return NULL;
}

/* Send what ordma_nl_event_new() began, or drop it if @err. */
static void ordma_nl_event_send(struct sk_buff *skb, void *hdr, int err)
{
	if (err) {
		nlmsg_free(skb);
	} else {
		genlmsg_end(skb, hdr);
		genlmsg_multicast(&ordma_nl_family, skb, 0,
				  ORDMA_NL_MCGRP_EVENTS, GFP_KERNEL);
	}
	up_read(&ordma_nl_sem);
}

/**
 * ordma_nl_dev_event() - tell the events group a device came or goes
 * @odev: the device, listed (@add) or about to be unlisted
 * @add: DEV_ADD, else DEV_DEL
 *
 * Context: process context, may sleep.
 */
void ordma_nl_dev_event(struct ordma_dev *odev, bool add)
{
	struct sk_buff *skb;
	void *hdr;

	skb = ordma_nl_event_new(add ? ORDMA_NL_CMD_DEV_ADD :
				 ORDMA_NL_CMD_DEV_DEL, &hdr);
	if (!skb)
		return;
	ordma_nl_event_send(skb, hdr,
			    nla_put_string(skb, ORDMA_NL_A_DEV_NAME,
					   dev_name(&odev->ibdev->dev)));
}

static int ordma_nl_put_peer(struct sk_buff *skb, const struct sockaddr *sa)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

	if (sa->sa_family == AF_INET)
		return nla_put_in_addr(skb, ORDMA_NL_A_PEER_IPV4,
				       sin->sin_addr.s_addr) ||
		       nla_put_be16(skb, ORDMA_NL_A_PEER_PORT, sin->sin_port);
	if (sa->sa_family == AF_INET6)
		return nla_put_in6_addr(skb, ORDMA_NL_A_PEER_IPV6,
					&sin6->sin6_addr) ||
		       nla_put_be16(skb, ORDMA_NL_A_PEER_PORT,
				    sin6->sin6_port);
	return 0;
}

/**
 * ordma_nl_chan_event() - tell the events group a channel end came or went
 * @odev: the channel's device
 * @up: CHAN_UP (established), else CHAN_DOWN (closed)
 * @qpn: the channel end's QP number, 0 if it has none
 * @peer: the peer's address
 * @err: CHAN_DOWN: the negative errno that ended the channel
 *
 * Context: process context, may sleep.
 */
void ordma_nl_chan_event(struct ordma_dev *odev, bool up, u32 qpn,
			 const struct sockaddr *peer, int err)
{
	struct sk_buff *skb;
	void *hdr;

	skb = ordma_nl_event_new(up ? ORDMA_NL_CMD_CHAN_UP :
				 ORDMA_NL_CMD_CHAN_DOWN, &hdr);
	if (!skb)
		return;
	ordma_nl_event_send(skb, hdr,
			    nla_put_string(skb, ORDMA_NL_A_DEV_NAME,
					   dev_name(&odev->ibdev->dev)) ||
			    (qpn && nla_put_u32(skb, ORDMA_NL_A_CHAN_QPN, qpn)) ||
			    ordma_nl_put_peer(skb, peer) ||
			    (!up && nla_put_u32(skb, ORDMA_NL_A_ERRNO, -err)));
}

/* The settings' notifier chain (sysfs.c): POOL_CHANGED. */
static int ordma_nl_knobs_changed(struct notifier_block *nb,
				  unsigned long action, void *data)
{
	struct ordma_dev *odev = data;
	struct sk_buff *skb;
	void *hdr;

	skb = ordma_nl_event_new(ORDMA_NL_CMD_POOL_CHANGED, &hdr);
	if (!skb)
		return NOTIFY_DONE;
	ordma_nl_event_send(skb, hdr,
			    nla_put_string(skb, ORDMA_NL_A_DEV_NAME,
					   dev_name(&odev->ibdev->dev)) ||
			    ordma_nl_put_pool(skb, odev));
	return NOTIFY_OK;
}

static struct notifier_block ordma_nl_knobs_nb = {
	.notifier_call = ordma_nl_knobs_changed,
};

/**
 * ordma_nl_init() - register the family; its events flow from then on
 *
 * Return: 0 or a negative errno.
 */
int ordma_nl_init(void)
{
	int ret;

	ret = genl_register_family(&ordma_nl_family);
	if (ret)
		return ret;

	ret = ordma_knobs_notifier_register(&ordma_nl_knobs_nb);
	if (ret)
		goto err_family;

	down_write(&ordma_nl_sem);
	ordma_nl_up = true;
	up_write(&ordma_nl_sem);
	return 0;

err_family:
	genl_unregister_family(&ordma_nl_family);
	return ret;
}

/**
 * ordma_nl_exit() - undo ordma_nl_init(): no event is sent after it
 */
void ordma_nl_exit(void)
{
	down_write(&ordma_nl_sem);
	ordma_nl_up = false;
	up_write(&ordma_nl_sem);

	ordma_knobs_notifier_unregister(&ordma_nl_knobs_nb);
	genl_unregister_family(&ordma_nl_family);
}
