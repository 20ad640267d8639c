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
 * Channel ends, listeners and windows are dumped by id (cb->args), each
 * looked up with a reference under the lock of the xarray that lists them
 * (chan.c, file.c) and described without any lock of ordma held but the
 * channel's own spinlock for an instant: a dump never holds a lock from one
 * object to the next, and never waits for a channel's data path. Without
 * CAP_NET_ADMIN a requester sees only the objects of files its effective
 * uid opened.
 *
 * Events come from process context: the ib_client's add and remove
 * (main.c), a channel end established or closed (cm.c), the settings'
 * notifier chain (sysfs.c), and the work item that sends the peer faults
 * chan.c's atomic notifier chain reports from any context (kept meanwhile
 * in a ring of ORDMA_NL_FAULTS_MAX under ordma_nl_faults_lock, a spinlock
 * taken with interrupts off, innermost: no lock is taken under it; a
 * channel end's CHAN_DOWN flushes the work item first, so its PEER_FAULT
 * comes before it). ordma_nl_event() builds and sends
 * each under ordma_nl_sem (an rwsem, read), which makes ordma_nl_up, the
 * family being registered, hold while it is sent: events before
 * ordma_nl_init() or after ordma_nl_exit() are dropped.
 *
 * Policies check what has static bounds (types, string lengths, the ranges
 * of the settings, the mode); ordma_knobs_set() checks the rest, which
 * depends on other values (a chunk size that is a power of two and fits the
 * pool, a pool of at least one chunk).
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/rwsem.h>
#include <net/genetlink.h>
#include <rdma/ib_cache.h>

#include "chan.h"
#include "nl.h"

enum ordma_nl_mcgrp {
	ORDMA_NL_MCGRP_EVENTS,
};

static DECLARE_RWSEM(ordma_nl_sem);
static bool ordma_nl_up;	/* ordma_nl_sem */

static struct genl_family ordma_nl_family;

/*
 * The ranges of the settings. Not const: 6.1's struct nla_policy points to
 * them without const (6.12's with), so they are only __ro_after_init.
 */
static struct netlink_range_validation ordma_nl_pool_range __ro_after_init = {
	.min = ORDMA_CHUNK_MIN,
	.max = ORDMA_POOL_MAX,
};

static struct netlink_range_validation ordma_nl_chunk_range __ro_after_init = {
	.min = ORDMA_CHUNK_MIN,
	.max = ORDMA_CHUNK_MAX,
};

static struct netlink_range_validation ordma_nl_quota_range __ro_after_init = {
	.min = ORDMA_QUOTA_MIN,
	.max = ORDMA_QUOTA_MAX,
};

static struct netlink_range_validation ordma_nl_progress_range __ro_after_init = {
	.min = ORDMA_PROGRESS_MS_MIN,
	.max = ORDMA_PROGRESS_MS_MAX,
};

static const struct nla_policy ordma_nl_dev_policy[ORDMA_NL_A_DEV_NAME + 1] = {
	[ORDMA_NL_A_DEV_NAME] = { .type = NLA_NUL_STRING,
				  .len = IB_DEVICE_NAME_MAX - 1 },
};

static struct netlink_range_validation ordma_nl_cache_range __ro_after_init = {
	.min = 0,
	.max = ORDMA_CACHE_MAX_MAX,
};

static const struct nla_policy
ordma_nl_set_policy[ORDMA_NL_A_CACHE_MAX_BYTES + 1] = {
	[ORDMA_NL_A_DEV_NAME] = { .type = NLA_NUL_STRING,
				  .len = IB_DEVICE_NAME_MAX - 1 },
	[ORDMA_NL_A_POOL_BYTES] =
		NLA_POLICY_FULL_RANGE(NLA_U64, &ordma_nl_pool_range),
	[ORDMA_NL_A_CHUNK_BYTES] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &ordma_nl_chunk_range),
	[ORDMA_NL_A_CHAN_QUOTA_CHUNKS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &ordma_nl_quota_range),
	[ORDMA_NL_A_USER_QUOTA_CHUNKS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &ordma_nl_quota_range),
	[ORDMA_NL_A_MODE] = NLA_POLICY_MAX(NLA_U32, ORDMA_NL_MODE_OVERLAP),
	[ORDMA_NL_A_PROGRESS_TIMEOUT_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &ordma_nl_progress_range),
	[ORDMA_NL_A_CACHE_MAX_BYTES] =
		NLA_POLICY_FULL_RANGE(NLA_U64, &ordma_nl_cache_range),
};

static const struct nla_policy ordma_nl_chan_policy[ORDMA_NL_A_PID + 1] = {
	[ORDMA_NL_A_DEV_NAME] = { .type = NLA_NUL_STRING,
				  .len = IB_DEVICE_NAME_MAX - 1 },
	[ORDMA_NL_A_CHAN_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[ORDMA_NL_A_PID] = NLA_POLICY_MIN(NLA_U32, 1),
};

static const struct nla_policy ordma_nl_owner_policy[ORDMA_NL_A_PID + 1] = {
	[ORDMA_NL_A_PID] = NLA_POLICY_MIN(NLA_U32, 1),
};

/* Each setting's attribute. */
static const int ordma_nl_knob_attr[ORDMA_KNOB_NR] = {
	[ORDMA_KNOB_POOL_BYTES] = ORDMA_NL_A_POOL_BYTES,
	[ORDMA_KNOB_CHUNK_BYTES] = ORDMA_NL_A_CHUNK_BYTES,
	[ORDMA_KNOB_CHAN_QUOTA] = ORDMA_NL_A_CHAN_QUOTA_CHUNKS,
	[ORDMA_KNOB_USER_QUOTA] = ORDMA_NL_A_USER_QUOTA_CHUNKS,
	[ORDMA_KNOB_MODE] = ORDMA_NL_A_MODE,
	[ORDMA_KNOB_PROGRESS_MS] = ORDMA_NL_A_PROGRESS_TIMEOUT_MS,
	[ORDMA_KNOB_CACHE_MAX] = ORDMA_NL_A_CACHE_MAX_BYTES,
};

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
	    nla_put_u32(skb, ORDMA_NL_A_MODE, READ_ONCE(odev->mode)) ||
	    nla_put_u32(skb, ORDMA_NL_A_PROGRESS_TIMEOUT_MS,
			READ_ONCE(odev->progress_ms)) ||
	    nla_put_u64_64bit(skb, ORDMA_NL_A_CACHE_MAX_BYTES,
			      READ_ONCE(odev->cache_max), ORDMA_NL_A_PAD))
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
			     atomic64_read(&odev->token_guesses)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_CACHE_HITS,
			     atomic64_read(&odev->cache_hits)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_CACHE_MISSES,
			     atomic64_read(&odev->cache_misses)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_CACHE_INVALIDATIONS,
			     atomic64_read(&odev->cache_invalidations)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_CACHE_PAGES,
			     atomic64_read(&odev->cache_pages)))
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
	if (nla_put_string(skb, ORDMA_NL_A_DEV_NAME, odev->ibdev->name) ||
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

/*
 * DEV_GET and POOL_GET of every device, one message each; with
 * ORDMA_NL_A_DEV_NAME, of the device of that name only (none if no device
 * has it).
 */
static int ordma_nl_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct genlmsghdr *ghdr = nlmsg_data(cb->nlh);
	const struct nlattr *name;
	unsigned long pos = cb->args[0];
	struct ordma_dev *odev;
	int ret = 0;
	u32 gen;

	/* Validated by the op's policy before the dump began. */
	name = nlmsg_find_attr(cb->nlh, GENL_HDRLEN, ORDMA_NL_A_DEV_NAME);
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
		if (!name || !nla_strcmp(name, odev->ibdev->name))
			ret = ordma_nl_fill(skb, odev, ghdr->cmd,
					    NETLINK_CB(cb->skb).portid,
					    cb->nlh->nlmsg_seq, NLM_F_MULTI,
					    ghdr->cmd == ORDMA_NL_CMD_DEV_GET,
					    cb);
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

/*
 * Tell the requester why ordma_knobs_set() refused @bad with @ret; the
 * attribute of @bad is in the request (ordma_knobs_set() names only a
 * setting it was given).
 */
static void ordma_nl_refused(struct genl_info *info, enum ordma_knob bad,
			     int ret)
{
	struct nlattr *attr = info->attrs[ordma_nl_knob_attr[bad]];

	if (ret == -EBUSY)
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "chunks are held by channels");
	else if (ret == -ENOMEM)
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "out of memory for the new chunks");
	else if (bad == ORDMA_KNOB_CHUNK_BYTES && attr &&
		 !is_power_of_2(nla_get_u32(attr)))
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "not a power of two");
	else if (bad == ORDMA_KNOB_CHUNK_BYTES)
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "larger than pool_bytes");
	else if (bad == ORDMA_KNOB_POOL_BYTES)
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "smaller than chunk_bytes");
	else
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "value out of range");
}

static int ordma_nl_pool_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	enum ordma_knob knob, bad = ORDMA_KNOB_NR;
	struct ordma_knobs k = {};
	struct ordma_dev *odev;
	struct nlattr *attr;
	int ret;

	/* The policy checked each value's range; the rest is cross-field. */
	for (knob = 0; knob < ORDMA_KNOB_NR; knob++) {
		attr = info->attrs[ordma_nl_knob_attr[knob]];
		if (!attr)
			continue;
		k.set |= BIT(knob);
		if (knob == ORDMA_KNOB_POOL_BYTES ||
		    knob == ORDMA_KNOB_CACHE_MAX)
			k.val[knob] = nla_get_u64(attr);
		else
			k.val[knob] = nla_get_u32(attr);
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
	if (ret && bad < ORDMA_KNOB_NR)
		ordma_nl_refused(info, bad, ret);
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

/* An address in the attributes @a4 or @a6 and @aport; none if unset. */
static int ordma_nl_put_addr(struct sk_buff *skb, const struct sockaddr *sa,
			     int a4, int a6, int aport)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

	if (sa->sa_family == AF_INET)
		return nla_put_in_addr(skb, a4, sin->sin_addr.s_addr) ||
		       nla_put_be16(skb, aport, sin->sin_port);
	if (sa->sa_family == AF_INET6)
		return nla_put_in6_addr(skb, a6, &sin6->sin6_addr) ||
		       nla_put_be16(skb, aport, sin6->sin6_port);
	return 0;
}

/* The filters of a CHAN_GET, LISTENER_GET or WINDOW_GET dump. */
struct ordma_nl_filter {
	const struct nlattr *dev;
	u32 pid;
	bool all;
	kuid_t euid;
};

/* The filters of request @skb, its attributes validated by the policy. */
static void ordma_nl_filter_init(struct ordma_nl_filter *f, struct sk_buff *skb,
				 const struct nlattr *dev,
				 const struct nlattr *pid)
{
	f->dev = dev;
	f->pid = pid ? nla_get_u32(pid) : 0;
	f->all = netlink_capable(skb, CAP_NET_ADMIN);
	f->euid = current_euid();
}

/* The filters of a dump; its policy checked them before it began. */
static void ordma_nl_dump_filter(struct ordma_nl_filter *f,
				 struct netlink_callback *cb)
{
	ordma_nl_filter_init(f, cb->skb,
			     nlmsg_find_attr(cb->nlh, GENL_HDRLEN,
					     ORDMA_NL_A_DEV_NAME),
			     nlmsg_find_attr(cb->nlh, GENL_HDRLEN,
					     ORDMA_NL_A_PID));
}

/*
 * The pid of the process that opened @ofile as the requester sees it, or 0
 * once that process is gone: its number may then be another's.
 */
static u32 ordma_nl_pid(struct ordma_file *ofile)
{
	return ofile->pid && pid_has_task(ofile->pid, PIDTYPE_TGID) ?
	       pid_vnr(ofile->pid) : 0;
}

/* May the requester see the objects of @ofile, and does @f keep them? */
static bool ordma_nl_owner_ok(const struct ordma_nl_filter *f,
			      struct ordma_file *ofile)
{
	if (!f->all && !uid_eq(f->euid, ofile->euid))
		return false;
	return !f->pid || f->pid == ordma_nl_pid(ofile);
}

static bool ordma_nl_chan_ok(const struct ordma_nl_filter *f,
			     struct ordma_chan *chan)
{
	return ordma_nl_owner_ok(f, chan->ofile) &&
	       (!f->dev || !nla_strcmp(f->dev, chan->ibdev));
}

static int ordma_nl_put_owner(struct sk_buff *skb, struct ordma_file *ofile)
{
	return nla_put_u32(skb, ORDMA_NL_A_PID, ordma_nl_pid(ofile)) ||
	       nla_put_string(skb, ORDMA_NL_A_COMM, ofile->comm);
}

/* Start a message of a get or dump; NULL if @skb is full. */
static void *ordma_nl_msg_start(struct sk_buff *skb, u32 portid, u32 seq,
				int flags, u8 cmd)
{
	return genlmsg_put(skb, portid, seq, &ordma_nl_family, flags, cmd);
}

static int ordma_nl_fill_chan_stat(struct sk_buff *skb,
				   struct ordma_chan *chan)
{
	struct ordma_chan_stat st;

	ordma_chan_stat(chan, &st);
	if (nla_put_u32(skb, ORDMA_NL_A_CHAN_ID, st.id) ||
	    ordma_nl_put_owner(skb, chan->ofile) ||
	    (st.ibdev[0] &&
	     nla_put_string(skb, ORDMA_NL_A_DEV_NAME, st.ibdev)) ||
	    nla_put_u32(skb, ORDMA_NL_A_CHAN_QPN, st.qpn) ||
	    nla_put_u8(skb, ORDMA_NL_A_CHAN_STATE, st.state) ||
	    (st.err && nla_put_u32(skb, ORDMA_NL_A_ERRNO, -st.err)) ||
	    ordma_nl_put_addr(skb, (struct sockaddr *)&st.local,
			      ORDMA_NL_A_LOCAL_IPV4, ORDMA_NL_A_LOCAL_IPV6,
			      ORDMA_NL_A_LOCAL_PORT) ||
	    ordma_nl_put_addr(skb, (struct sockaddr *)&st.peer,
			      ORDMA_NL_A_PEER_IPV4, ORDMA_NL_A_PEER_IPV6,
			      ORDMA_NL_A_PEER_PORT) ||
	    nla_put_u32(skb, ORDMA_NL_A_TX_CREDITS, st.tx_credits) ||
	    nla_put_u32(skb, ORDMA_NL_A_RX_POSTED, st.rx_posted) ||
	    nla_put_u32(skb, ORDMA_NL_A_RX_SIZE, st.rx_size) ||
	    nla_put_u32(skb, ORDMA_NL_A_PEER_RX_SIZE, st.peer_rx_size) ||
	    nla_put_u32(skb, ORDMA_NL_A_CHUNKS_HELD, st.chunks_held) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_BYTES_TX, st.bytes_tx) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_BYTES_RX, st.bytes_rx) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_OPS, st.ops_tx + st.ops_rx) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_OPS_TX, st.ops_tx) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_OPS_RX, st.ops_rx) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_ERRORS, st.errors) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_INFLIGHT, st.inflight) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_REGISTRATIONS,
			     st.registrations) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_PAGES_PINNED, st.pages_pinned) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_MRS_LIVE, st.mrs_live) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_AGE_MS, st.age_ms))
		return -EMSGSIZE;
	return 0;
}

/* One CHAN_GET message of @chan. */
static int ordma_nl_fill_chan_msg(struct sk_buff *skb, struct ordma_chan *chan,
				  u32 portid, u32 seq, int flags)
{
	void *hdr = ordma_nl_msg_start(skb, portid, seq, flags,
				     ORDMA_NL_CMD_CHAN_GET);

	if (!hdr)
		return -EMSGSIZE;
	if (ordma_nl_fill_chan_stat(skb, chan)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static int ordma_nl_chan_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ordma_nl_filter f;
	struct ordma_chan *chan;
	struct sk_buff *msg;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, ORDMA_NL_A_CHAN_ID)) {
		GENL_SET_ERR_MSG(info, "chan_id missing: name the channel");
		return -EINVAL;
	}
	ordma_nl_filter_init(&f, skb, info->attrs[ORDMA_NL_A_DEV_NAME],
			     info->attrs[ORDMA_NL_A_PID]);
	chan = ordma_chan_lookup(nla_get_u32(info->attrs[ORDMA_NL_A_CHAN_ID]));
	if (chan && !ordma_nl_chan_ok(&f, chan)) {
		ordma_chan_put(chan);
		chan = NULL;
	}
	if (!chan) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[ORDMA_NL_A_CHAN_ID],
				    "no channel of that id");
		return -ENOENT;
	}
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg) {
		ordma_chan_put(chan);
		return -ENOMEM;
	}
	ret = ordma_nl_fill_chan_msg(msg, chan, info->snd_portid,
				     info->snd_seq, 0);
	ordma_chan_put(chan);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

/*
 * End a dump's round: the objects that fit are in @skb; one that did not
 * fit an empty message is an error, not the end.
 */
static int ordma_nl_dump_done(struct sk_buff *skb, int ret)
{
	if (ret && !skb->len)
		return ret;
	return skb->len;
}

/* CHAN_GET of every channel end the filters keep; cb->args[0]: next id. */
static int ordma_nl_chan_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	unsigned long id = cb->args[0];
	struct ordma_nl_filter f;
	struct ordma_chan *chan;
	struct ordma_obj *obj;
	int ret = 0;

	ordma_nl_dump_filter(&f, cb);
	while ((obj = ordma_obj_next(&id, ORDMA_KIND_CHAN))) {
		chan = container_of(obj, struct ordma_chan, obj);
		if (ordma_nl_chan_ok(&f, chan))
			ret = ordma_nl_fill_chan_msg(skb, chan,
						     NETLINK_CB(cb->skb).portid,
						     cb->nlh->nlmsg_seq,
						     NLM_F_MULTI);
		ordma_chan_put(chan);
		if (ret)
			break;
		id++;
	}
	cb->args[0] = id;
	return ordma_nl_dump_done(skb, ret);
}

static int ordma_nl_fill_listener(struct sk_buff *skb,
				  struct ordma_listener *lis, u32 portid,
				  u32 seq)
{
	void *hdr = ordma_nl_msg_start(skb, portid, seq, NLM_F_MULTI,
				     ORDMA_NL_CMD_LISTENER_GET);

	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, ORDMA_NL_A_LISTENER_ID, lis->obj.id) ||
	    ordma_nl_put_owner(skb, lis->ofile) ||
	    ordma_nl_put_addr(skb, (struct sockaddr *)&lis->local,
			      ORDMA_NL_A_LOCAL_IPV4, ORDMA_NL_A_LOCAL_IPV6,
			      ORDMA_NL_A_LOCAL_PORT) ||
	    nla_put_u32(skb, ORDMA_NL_A_BACKLOG, lis->backlog) ||
	    nla_put_u32(skb, ORDMA_NL_A_PENDING, READ_ONCE(lis->npending)) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_AGE_MS,
			     jiffies64_to_msecs(jiffies - lis->obj.born))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* LISTENER_GET of every listener still open; cb->args[0]: next id. */
static int ordma_nl_listener_dumpit(struct sk_buff *skb,
				    struct netlink_callback *cb)
{
	unsigned long id = cb->args[0];
	struct ordma_listener *lis;
	struct ordma_nl_filter f;
	struct ordma_obj *obj;
	int ret = 0;

	ordma_nl_dump_filter(&f, cb);
	while ((obj = ordma_obj_next(&id, ORDMA_KIND_LISTENER))) {
		lis = container_of(obj, struct ordma_listener, obj);
		if (!READ_ONCE(lis->dead) && ordma_nl_owner_ok(&f, lis->ofile))
			ret = ordma_nl_fill_listener(skb, lis,
						     NETLINK_CB(cb->skb).portid,
						     cb->nlh->nlmsg_seq);
		ordma_listener_put(lis);
		if (ret)
			break;
		id++;
	}
	cb->args[0] = id;
	return ordma_nl_dump_done(skb, ret);
}

static int ordma_nl_fill_window(struct sk_buff *skb, struct ordma_file *ofile,
				const struct ordma_window_stat *st,
				u32 portid, u32 seq)
{
	void *hdr = ordma_nl_msg_start(skb, portid, seq, NLM_F_MULTI,
				     ORDMA_NL_CMD_WINDOW_GET);

	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, ORDMA_NL_A_FILE_ID, ofile->id) ||
	    nla_put_u32(skb, ORDMA_NL_A_WINDOW_ID, st->id) ||
	    ordma_nl_put_owner(skb, ofile) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_LEN, st->len) ||
	    nla_put_u32(skb, ORDMA_NL_A_ACCESS, st->access) ||
	    ordma_nl_put_u64(skb, ORDMA_NL_A_WRITES, st->writes)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/*
 * WINDOW_GET of every window of the files the filters keep;
 * cb->args[0]: the file, cb->args[1]: the next window's index in it.
 */
static int ordma_nl_window_dumpit(struct sk_buff *skb,
				  struct netlink_callback *cb)
{
	unsigned long fid = cb->args[0], idx = cb->args[1];
	struct ordma_window_stat st;
	struct ordma_file *ofile;
	struct ordma_nl_filter f;
	int ret = 0;

	ordma_nl_dump_filter(&f, cb);
	while ((ofile = ordma_file_next(&fid))) {
		if (fid != cb->args[0])
			idx = 0;
		cb->args[0] = fid;
		while (ordma_nl_owner_ok(&f, ofile) &&
		       ordma_file_window_next(ofile, &idx, &st)) {
			ret = ordma_nl_fill_window(skb, ofile, &st,
						   NETLINK_CB(cb->skb).portid,
						   cb->nlh->nlmsg_seq);
			if (ret)
				break;
			idx++;
		}
		ordma_file_put(ofile);
		if (ret)
			break;
		fid++;
		idx = 0;
	}
	cb->args[0] = fid;
	cb->args[1] = idx;
	return ordma_nl_dump_done(skb, ret);
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
		.maxattr = ORDMA_NL_A_CACHE_MAX_BYTES,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = ORDMA_NL_CMD_STATS_RESET,
		.doit = ordma_nl_stats_reset_doit,
		.policy = ordma_nl_dev_policy,
		.maxattr = ORDMA_NL_A_DEV_NAME,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = ORDMA_NL_CMD_CHAN_GET,
		.doit = ordma_nl_chan_get_doit,
		.dumpit = ordma_nl_chan_dumpit,
		.policy = ordma_nl_chan_policy,
		.maxattr = ORDMA_NL_A_PID,
	},
	{
		.cmd = ORDMA_NL_CMD_LISTENER_GET,
		.dumpit = ordma_nl_listener_dumpit,
		.policy = ordma_nl_owner_policy,
		.maxattr = ORDMA_NL_A_PID,
	},
	{
		.cmd = ORDMA_NL_CMD_WINDOW_GET,
		.dumpit = ordma_nl_window_dumpit,
		.policy = ordma_nl_owner_policy,
		.maxattr = ORDMA_NL_A_PID,
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

/* A lookup of the family by name loads the module. */
MODULE_ALIAS_GENL_FAMILY(ORDMA_GENL_NAME);

/*
 * Send event @cmd to the events group, its attributes put by @fill from
 * @arg (0, or -EMSGSIZE to drop it); nothing if the family is not
 * registered or nobody listens.
 */
static void ordma_nl_event(u8 cmd,
			   int (*fill)(struct sk_buff *skb, void *arg),
			   void *arg)
{
	struct sk_buff *skb;
	void *hdr;

	down_read(&ordma_nl_sem);
	if (!ordma_nl_up ||
	    !genl_has_listeners(&ordma_nl_family, &init_net,
				ORDMA_NL_MCGRP_EVENTS))
		goto out;
	skb = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!skb)
		goto out;
	hdr = genlmsg_put(skb, 0, 0, &ordma_nl_family, 0, cmd);
	if (!hdr || fill(skb, arg)) {
		nlmsg_free(skb);
		goto out;
	}
	genlmsg_end(skb, hdr);
	genlmsg_multicast(&ordma_nl_family, skb, 0, ORDMA_NL_MCGRP_EVENTS,
			  GFP_KERNEL);
out:
	up_read(&ordma_nl_sem);
}

/* DEV_ADD and DEV_DEL: the device's name. */
static int ordma_nl_fill_dev(struct sk_buff *skb, void *arg)
{
	struct ordma_dev *odev = arg;

	return nla_put_string(skb, ORDMA_NL_A_DEV_NAME, odev->ibdev->name);
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
	ordma_nl_event(add ? ORDMA_NL_CMD_DEV_ADD : ORDMA_NL_CMD_DEV_DEL,
		       ordma_nl_fill_dev, odev);
}

/*
 * PEER_FAULT: what was known of a channel end when its peer's fault was
 * found, kept until the work item sends it.
 */
struct ordma_nl_fault {
	char dev[IB_DEVICE_NAME_MAX];
	struct sockaddr_storage peer;
	u32 chan_id;
	u32 qpn;
	int err;
};

#define ORDMA_NL_FAULTS_MAX	64

static DEFINE_SPINLOCK(ordma_nl_faults_lock);
/* A ring: ordma_nl_faults_nr of them from ordma_nl_faults_head on. */
static struct ordma_nl_fault ordma_nl_faults[ORDMA_NL_FAULTS_MAX];
static unsigned int ordma_nl_faults_head;	/* ordma_nl_faults_lock */
static unsigned int ordma_nl_faults_nr;		/* ordma_nl_faults_lock */

static int ordma_nl_fill_fault(struct sk_buff *skb, void *arg)
{
	const struct ordma_nl_fault *f = arg;

	if (nla_put_string(skb, ORDMA_NL_A_DEV_NAME, f->dev) ||
	    nla_put_u32(skb, ORDMA_NL_A_CHAN_ID, f->chan_id) ||
	    nla_put_u32(skb, ORDMA_NL_A_CHAN_QPN, f->qpn) ||
	    ordma_nl_put_addr(skb, (const struct sockaddr *)&f->peer,
			      ORDMA_NL_A_PEER_IPV4, ORDMA_NL_A_PEER_IPV6,
			      ORDMA_NL_A_PEER_PORT) ||
	    nla_put_u32(skb, ORDMA_NL_A_ERRNO, -f->err))
		return -EMSGSIZE;
	return 0;
}

/* Send the faults the ring holds, oldest first, one at a time. */
static void ordma_nl_faults_send(struct work_struct *work)
{
	struct ordma_nl_fault f;
	unsigned long flags;
	bool more;

	do {
		spin_lock_irqsave(&ordma_nl_faults_lock, flags);
		more = ordma_nl_faults_nr;
		if (more) {
			f = ordma_nl_faults[ordma_nl_faults_head];
			ordma_nl_faults_head = (ordma_nl_faults_head + 1) %
					       ORDMA_NL_FAULTS_MAX;
			ordma_nl_faults_nr--;
		}
		spin_unlock_irqrestore(&ordma_nl_faults_lock, flags);
		if (more)
			ordma_nl_event(ORDMA_NL_CMD_PEER_FAULT,
				       ordma_nl_fill_fault, &f);
	} while (more);
}

static DECLARE_WORK(ordma_nl_faults_work, ordma_nl_faults_send);

/*
 * chan.c's fault chain, in any context, with the errno (positive) as
 * @action: keep what PEER_FAULT says of the channel end (valid for this
 * call only) for the work item, if anybody listens and the ring has room.
 */
static int ordma_nl_fault(struct notifier_block *nb, unsigned long action,
			  void *data)
{
	struct ordma_chan *chan = data;
	struct ordma_nl_fault f;
	unsigned long flags;

	if (!genl_has_listeners(&ordma_nl_family, &init_net,
				ORDMA_NL_MCGRP_EVENTS))
		return NOTIFY_DONE;
	/* The names CHAN_GET reports: the snapshot taken at publish. */
	strscpy(f.dev, chan->ibdev, sizeof(f.dev));
	memcpy(&f.peer, ordma_chan_peer(chan), sizeof(f.peer));
	f.chan_id = chan->obj.id;
	f.qpn = chan->qpn;
	f.err = -(int)action;
	spin_lock_irqsave(&ordma_nl_faults_lock, flags);
	if (ordma_nl_faults_nr < ORDMA_NL_FAULTS_MAX) {
		ordma_nl_faults[(ordma_nl_faults_head + ordma_nl_faults_nr) %
				ORDMA_NL_FAULTS_MAX] = f;
		ordma_nl_faults_nr++;
		queue_work(system_wq, &ordma_nl_faults_work);
	}
	spin_unlock_irqrestore(&ordma_nl_faults_lock, flags);
	return NOTIFY_OK;
}

static struct notifier_block ordma_nl_fault_nb = {
	.notifier_call = ordma_nl_fault,
};

/* What CHAN_UP and CHAN_DOWN say of a channel end. */
struct ordma_nl_chan {
	const struct ordma_dev *odev;
	const struct sockaddr *peer;
	u32 qpn;
	bool up;
	int err;
};

static int ordma_nl_fill_chan(struct sk_buff *skb, void *arg)
{
	const struct ordma_nl_chan *c = arg;

	if (nla_put_string(skb, ORDMA_NL_A_DEV_NAME, c->odev->ibdev->name) ||
	    nla_put_u32(skb, ORDMA_NL_A_CHAN_QPN, c->qpn) ||
	    ordma_nl_put_addr(skb, c->peer, ORDMA_NL_A_PEER_IPV4,
			      ORDMA_NL_A_PEER_IPV6, ORDMA_NL_A_PEER_PORT) ||
	    (!c->up && nla_put_u32(skb, ORDMA_NL_A_ERRNO, -c->err)))
		return -EMSGSIZE;
	return 0;
}

/**
 * ordma_nl_chan_event() - tell the events group a channel end came or went
 * @odev: the channel's device
 * @up: CHAN_UP (established), else CHAN_DOWN (closed)
 * @qpn: the channel end's QP number
 * @peer: the peer's address
 * @err: CHAN_DOWN: the negative errno that ended the channel
 *
 * Context: process context, may sleep.
 */
void ordma_nl_chan_event(struct ordma_dev *odev, bool up, u32 qpn,
			 const struct sockaddr *peer, int err)
{
	struct ordma_nl_chan c = {
		.odev = odev,
		.peer = peer,
		.qpn = qpn,
		.up = up,
		.err = err,
	};

	/* A fault found before the close is told before its CHAN_DOWN. */
	if (!up)
		flush_work(&ordma_nl_faults_work);
	ordma_nl_event(up ? ORDMA_NL_CMD_CHAN_UP : ORDMA_NL_CMD_CHAN_DOWN,
		       ordma_nl_fill_chan, &c);
}

/* POOL_CHANGED: the device's name, pool and settings. */
static int ordma_nl_fill_pool(struct sk_buff *skb, void *arg)
{
	struct ordma_dev *odev = arg;

	if (nla_put_string(skb, ORDMA_NL_A_DEV_NAME, odev->ibdev->name) ||
	    ordma_nl_put_pool(skb, odev))
		return -EMSGSIZE;
	return 0;
}

/* The settings' notifier chain (sysfs.c): a value changed. */
static int ordma_nl_knobs_changed(struct notifier_block *nb,
				  unsigned long action, void *data)
{
	ordma_nl_event(ORDMA_NL_CMD_POOL_CHANGED, ordma_nl_fill_pool, data);
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

	/* ORDMA_NL_A_MODE carries enum ordma_mode as it is. */
	BUILD_BUG_ON((int)ORDMA_NL_MODE_AUTO != (int)ORDMA_MODE_AUTO ||
		     (int)ORDMA_NL_MODE_COPY != (int)ORDMA_MODE_COPY ||
		     (int)ORDMA_NL_MODE_ZEROCOPY != (int)ORDMA_MODE_ZEROCOPY ||
		     (int)ORDMA_NL_MODE_OVERLAP + 1 != (int)ORDMA_MODE_NR);

	ret = genl_register_family(&ordma_nl_family);
	if (ret)
		return ret;

	ret = ordma_knobs_notifier_register(&ordma_nl_knobs_nb);
	if (ret)
		goto err_family;

	ret = ordma_fault_notifier_register(&ordma_nl_fault_nb);
	if (ret)
		goto err_knobs;

	down_write(&ordma_nl_sem);
	ordma_nl_up = true;
	up_write(&ordma_nl_sem);
	return 0;

err_knobs:
	ordma_knobs_notifier_unregister(&ordma_nl_knobs_nb);
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

	ordma_fault_notifier_unregister(&ordma_nl_fault_nb);
	/* No fault is added now: what the ring holds is dropped. */
	cancel_work_sync(&ordma_nl_faults_work);
	spin_lock_irq(&ordma_nl_faults_lock);
	ordma_nl_faults_nr = 0;
	spin_unlock_irq(&ordma_nl_faults_lock);
	ordma_knobs_notifier_unregister(&ordma_nl_knobs_nb);
	genl_unregister_family(&ordma_nl_family);
}
