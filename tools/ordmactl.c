// SPDX-License-Identifier: GPL-2.0
/*
 * ordmactl - show and change ordma's devices over its generic netlink
 * family (include/uapi/linux/ordma.h, DOC: Generic netlink), and follow its
 * events. man/man8/ordmactl.8 has the whole interface.
 *
 * Exit status: 0 done, 1 the kernel refused or the operation failed (its
 * extended ack message and strerror are printed), 2 a usage error (the bad
 * argument is named).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <linux/ordma.h>

#define EXIT_REFUSED	1
#define EXIT_USAGE	2

/* How a value is shown: plain output makes sizes readable, JSON never. */
enum fmt {
	FMT_NUM,	/* a count, a time or a setting */
	FMT_SIZE,	/* bytes */
	FMT_STR,
	FMT_PORT,	/* enum ordma_nl_port_state */
	FMT_MODE,	/* enum ordma_nl_mode */
};

struct field {
	int attr;
	const char *name;	/* the attribute's name in lower case */
	enum fmt fmt;
};

static const struct field pool_fields[] = {
	{ ORDMA_NL_A_POOL_BYTES, "pool_bytes", FMT_SIZE },
	{ ORDMA_NL_A_CHUNK_BYTES, "chunk_bytes", FMT_SIZE },
	{ ORDMA_NL_A_CHUNKS_TOTAL, "chunks_total", FMT_NUM },
	{ ORDMA_NL_A_CHUNKS_FREE, "chunks_free", FMT_NUM },
	{ ORDMA_NL_A_CHUNKS_HELD, "chunks_held", FMT_NUM },
	{ ORDMA_NL_A_HIGH_WATER, "high_water", FMT_NUM },
	{ ORDMA_NL_A_ALLOC_WAITS, "alloc_waits", FMT_NUM },
	{ ORDMA_NL_A_CHAN_QUOTA_CHUNKS, "chan_quota_chunks", FMT_NUM },
	{ ORDMA_NL_A_USER_QUOTA_CHUNKS, "user_quota_chunks", FMT_NUM },
	{ ORDMA_NL_A_MODE, "mode", FMT_MODE },
	{ ORDMA_NL_A_PROGRESS_TIMEOUT_MS, "progress_timeout_ms", FMT_NUM },
	{ 0, NULL, FMT_NUM },
};

static const struct field stats_fields[] = {
	{ ORDMA_NL_A_BYTES_TX, "bytes_tx", FMT_SIZE },
	{ ORDMA_NL_A_BYTES_RX, "bytes_rx", FMT_SIZE },
	{ ORDMA_NL_A_OPS, "ops", FMT_NUM },
	{ ORDMA_NL_A_ERRORS, "errors", FMT_NUM },
	{ ORDMA_NL_A_CHANNELS, "channels", FMT_NUM },
	{ ORDMA_NL_A_PAGES_PINNED, "pages_pinned", FMT_NUM },
	{ ORDMA_NL_A_MRS_LIVE, "mrs_live", FMT_NUM },
	{ ORDMA_NL_A_BYTES_PLACED, "bytes_placed", FMT_SIZE },
	{ ORDMA_NL_A_BYTES_COPIED, "bytes_copied", FMT_SIZE },
	{ ORDMA_NL_A_BYTES_ZEROCOPY, "bytes_zerocopy", FMT_SIZE },
	{ ORDMA_NL_A_REGISTRATIONS, "registrations", FMT_NUM },
	{ ORDMA_NL_A_REG_NS, "reg_ns", FMT_NUM },
	{ ORDMA_NL_A_HIDDEN_NS, "hidden_ns", FMT_NUM },
	{ ORDMA_NL_A_FALLBACKS, "fallbacks", FMT_NUM },
	{ ORDMA_NL_A_PEER_FAULTS, "peer_faults", FMT_NUM },
	{ ORDMA_NL_A_TOKEN_GUESSES, "token_guesses", FMT_NUM },
	{ 0, NULL, FMT_NUM },
};

static const struct field model_fields[] = {
	{ ORDMA_NL_MODEL_A_PIN_NS_PAGE, "pin_ns_page", FMT_NUM },
	{ ORDMA_NL_MODEL_A_REG_NS, "reg_ns", FMT_NUM },
	{ ORDMA_NL_MODEL_A_COPY_PS_BYTE, "copy_ps_byte", FMT_NUM },
	{ ORDMA_NL_MODEL_A_WIRE_PS_BYTE, "wire_ps_byte", FMT_NUM },
	{ ORDMA_NL_MODEL_A_WR_NS, "wr_ns", FMT_NUM },
	{ ORDMA_NL_MODEL_A_DEREG_NS, "dereg_ns", FMT_NUM },
	{ ORDMA_NL_MODEL_A_CPU_WIRE, "cpu_wire", FMT_NUM },
	{ 0, NULL, FMT_NUM },
};

/* The settings "pool set" takes; mode is a string, the rest numbers. */
static const struct {
	const char *name;
	int attr;
	uint64_t max;
} settings[] = {
	{ "pool_bytes", ORDMA_NL_A_POOL_BYTES, UINT64_MAX },
	{ "chunk_bytes", ORDMA_NL_A_CHUNK_BYTES, UINT32_MAX },
	{ "chan_quota_chunks", ORDMA_NL_A_CHAN_QUOTA_CHUNKS, UINT32_MAX },
	{ "user_quota_chunks", ORDMA_NL_A_USER_QUOTA_CHUNKS, UINT32_MAX },
	{ "mode", ORDMA_NL_A_MODE, 0 },
	{ "progress_timeout_ms", ORDMA_NL_A_PROGRESS_TIMEOUT_MS, UINT32_MAX },
};

static const char *const port_states[] = {
	"nop", "down", "init", "armed", "active", "active_defer",
};

static const char *const modes[] = {
	[ORDMA_NL_MODE_AUTO] = "auto",
	[ORDMA_NL_MODE_COPY] = "copy",
	[ORDMA_NL_MODE_ZEROCOPY] = "zerocopy",
	[ORDMA_NL_MODE_OVERLAP] = "overlap",
};

static const char *const events[] = {
	[ORDMA_NL_CMD_DEV_ADD] = "dev_add",
	[ORDMA_NL_CMD_DEV_DEL] = "dev_del",
	[ORDMA_NL_CMD_POOL_CHANGED] = "pool_changed",
	[ORDMA_NL_CMD_CHAN_UP] = "chan_up",
	[ORDMA_NL_CMD_CHAN_DOWN] = "chan_down",
};

static bool opt_json, opt_pretty;

/* ---- output: JSON --------------------------------------------------------- */

static int jdepth;
static bool jfirst = true;

static void jsep(void)
{
	if (!jfirst)
		putchar(',');
	jfirst = false;
	if (opt_pretty && jdepth) {
		putchar('\n');
		printf("%*s", 2 * jdepth, "");
	}
}

static void jstring(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void jkey(const char *key)
{
	jsep();
	jstring(key);
	putchar(':');
	if (opt_pretty)
		putchar(' ');
}

static void jopen(const char *key, char c)
{
	if (key)
		jkey(key);
	else
		jsep();
	putchar(c);
	jdepth++;
	jfirst = true;
}

static void jclose(char c)
{
	jdepth--;
	if (opt_pretty && !jfirst) {
		putchar('\n');
		printf("%*s", 2 * jdepth, "");
	}
	putchar(c);
	/* A value done at the top: the next one starts afresh. */
	jfirst = !jdepth;
}

static void jnum(const char *key, uint64_t v)
{
	jkey(key);
	printf("%" PRIu64, v);
}

static void jstr(const char *key, const char *v)
{
	jkey(key);
	jstring(v);
}

/* ---- output: plain ------------------------------------------------------- */

static void human(char *buf, size_t n, uint64_t v)
{
	static const char *const unit[] = {
		"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB",
	};
	unsigned int i = 0;
	double d = (double)v;

	while (d >= 1024 && i < 6) {
		d /= 1024;
		i++;
	}
	if (!i || v % (1ULL << (10 * i)) == 0)
		snprintf(buf, n, "%" PRIu64 " %s", v >> (10 * i), unit[i]);
	else
		snprintf(buf, n, "%.1f %s", d, unit[i]);
}

/* ---- one device ------------------------------------------------------------ */

struct dev {
	struct nlattr *tb[ORDMA_NL_A_MAX + 1];
	struct nlattr *model[ORDMA_NL_MODEL_A_MAX + 1];
	struct nl_msg *msg;	/* holds what @tb points into */
};

struct devs {
	struct dev *v;
	size_t n;
};

static uint64_t attr_u64(const struct nlattr *a)
{
	switch (nla_len(a)) {
	case 1:
		return nla_get_u8(a);
	case 2:
		return nla_get_u16(a);
	case 4:
		return nla_get_u32(a);
	default:
		return nla_get_u64(a);
	}
}

/* Field @f of a device, as plain text into @buf; "-" if missing. */
static const char *field_text(char *buf, size_t n, struct nlattr **tb,
			      const struct field *f)
{
	const struct nlattr *a = tb[f->attr];
	uint64_t v;

	if (!a)
		return "-";
	switch (f->fmt) {
	case FMT_STR:
		snprintf(buf, n, "%s", nla_get_string((struct nlattr *)a));
		break;
	case FMT_SIZE:
		human(buf, n, attr_u64(a));
		break;
	case FMT_PORT:
		v = attr_u64(a);
		if (v < sizeof(port_states) / sizeof(port_states[0]))
			snprintf(buf, n, "%s", port_states[v]);
		else
			snprintf(buf, n, "%" PRIu64, v);
		break;
	case FMT_MODE:
		v = attr_u64(a);
		if (v < sizeof(modes) / sizeof(modes[0]))
			snprintf(buf, n, "%s", modes[v]);
		else
			snprintf(buf, n, "%" PRIu64, v);
		break;
	default:
		snprintf(buf, n, "%" PRIu64, attr_u64(a));
		break;
	}
	return buf;
}

static void field_json(struct nlattr **tb, const struct field *f,
		       const char *prefix)
{
	const struct nlattr *a = tb[f->attr];
	char key[64], buf[64];

	if (!a)
		return;
	snprintf(key, sizeof(key), "%s%s", prefix, f->name);
	if (f->fmt == FMT_STR || f->fmt == FMT_PORT || f->fmt == FMT_MODE)
		jstr(key, field_text(buf, sizeof(buf), tb, f));
	else
		jnum(key, attr_u64(a));
}

static const struct field port_field = {
	ORDMA_NL_A_PORT_STATE, "port_state", FMT_PORT,
};

/* What "show" prints of each device. */
enum show {
	SHOW_DEV,
	SHOW_POOL,
	SHOW_STATS,
};

static void show_json(const struct devs *d, enum show what)
{
	const struct field *f;
	size_t i;

	jopen(NULL, '[');
	for (i = 0; i < d->n; i++) {
		struct nlattr **tb = d->v[i].tb;

		jopen(NULL, '{');
		jstr("dev_name", nla_get_string(tb[ORDMA_NL_A_DEV_NAME]));
		if (what == SHOW_DEV)
			field_json(tb, &port_field, "");
		if (what != SHOW_STATS)
			for (f = pool_fields; f->name; f++)
				field_json(tb, f, "");
		if (what != SHOW_POOL)
			for (f = stats_fields; f->name; f++)
				field_json(tb, f, "");
		if (what == SHOW_DEV && tb[ORDMA_NL_A_MODEL]) {
			jopen("model", '{');
			for (f = model_fields; f->name; f++)
				field_json(d->v[i].model, f, "");
			jclose('}');
		}
		jclose('}');
	}
	jclose(']');
	putchar('\n');
}

/* One row of the plain table: a field's name, then its value per device. */
static void show_row(const struct devs *d, const char *name, int width,
		     const int *colw, const struct field *f, bool model)
{
	char buf[64];
	size_t i;

	printf("%-*s", width, name);
	for (i = 0; i < d->n; i++) {
		struct nlattr **tb = model ? d->v[i].model : d->v[i].tb;
		const char *s = f ? field_text(buf, sizeof(buf), tb, f) :
				    nla_get_string(d->v[i].tb[ORDMA_NL_A_DEV_NAME]);

		printf("  %*s", i + 1 < d->n ? -colw[i] : 0, s);
	}
	putchar('\n');
}

/* The widest value of column @i, over every field shown. */
static int column_width(const struct devs *d, size_t i, enum show what)
{
	const struct field *f;
	char buf[64];
	int w = strlen(nla_get_string(d->v[i].tb[ORDMA_NL_A_DEV_NAME]));

#define WIDEN(_tb, _f) do {						\
		int _l = strlen(field_text(buf, sizeof(buf), (_tb), (_f))); \
		if (_l > w)						\
			w = _l;						\
	} while (0)
	if (what == SHOW_DEV)
		WIDEN(d->v[i].tb, &port_field);
	if (what != SHOW_STATS)
		for (f = pool_fields; f->name; f++)
			WIDEN(d->v[i].tb, f);
	if (what != SHOW_POOL)
		for (f = stats_fields; f->name; f++)
			WIDEN(d->v[i].tb, f);
	if (what == SHOW_DEV)
		for (f = model_fields; f->name; f++)
			WIDEN(d->v[i].model, f);
#undef WIDEN
	return w;
}

static void show_plain(const struct devs *d, enum show what)
{
	const int width = 20;	/* "progress_timeout_ms" and a space */
	const struct field *f;
	char name[64];
	int *colw;
	size_t i;

	if (!d->n)
		return;
	colw = calloc(d->n, sizeof(*colw));
	if (!colw) {
		perror("ordmactl");
		exit(EXIT_REFUSED);
	}
	for (i = 0; i < d->n; i++)
		colw[i] = column_width(d, i, what);
	show_row(d, "dev_name", width, colw, NULL, false);
	if (what == SHOW_DEV)
		show_row(d, port_field.name, width, colw, &port_field, false);
	if (what != SHOW_STATS)
		for (f = pool_fields; f->name; f++)
			show_row(d, f->name, width, colw, f, false);
	if (what != SHOW_POOL)
		for (f = stats_fields; f->name; f++)
			show_row(d, f->name, width, colw, f, false);
	if (what == SHOW_DEV) {
		for (f = model_fields; f->name; f++) {
			snprintf(name, sizeof(name), "model_%s", f->name);
			show_row(d, name, width, colw, f, true);
		}
	}
	free(colw);
}

/* ---- talking to the kernel ---------------------------------------------- */

struct ctl {
	struct nl_sock *sk;
	int family;
	bool done;
	int err;		/* positive errno the kernel answered */
	char msg[256];		/* its extended ack message */
};

static void die_usage(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void die_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("ordmactl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'ordmactl -h'.\n", stderr);
	exit(EXIT_USAGE);
}

static void die_refused(const char *what, const struct ctl *c)
{
	if (c->msg[0])
		fprintf(stderr, "ordmactl: %s: %s: %s\n", what, c->msg,
			strerror(c->err));
	else
		fprintf(stderr, "ordmactl: %s: %s\n", what, strerror(c->err));
	exit(EXIT_REFUSED);
}

static void ctl_open(struct ctl *c)
{
	int one = 1, fd;

	memset(c, 0, sizeof(*c));
	c->sk = nl_socket_alloc();
	if (!c->sk || genl_connect(c->sk)) {
		fprintf(stderr, "ordmactl: cannot open a generic netlink socket\n");
		exit(EXIT_REFUSED);
	}
	fd = nl_socket_get_fd(c->sk);
	/* The kernel's reason with every error, without our request. */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	c->family = genl_ctrl_resolve(c->sk, ORDMA_GENL_NAME);
	if (c->family < 0) {
		fprintf(stderr, "ordmactl: no generic netlink family \"%s\" (is ordma.ko loaded?)\n",
			ORDMA_GENL_NAME);
		exit(EXIT_REFUSED);
	}
}

/* An error answer: its errno and the message of its extended ack. */
static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	struct ctl *c = arg;
	size_t off = sizeof(*e);
	int len;

	c->err = -e->error;
	c->done = true;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NL_STOP;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	len = (int)nlh->nlmsg_len - NLMSG_HDRLEN - (int)off;
	if (len <= 0 ||
	    nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)((char *)e + off),
		      len, NULL))
		return NL_STOP;
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(c->msg, sizeof(c->msg), "%s",
			 nla_get_string(tb[NLMSGERR_ATTR_MSG]));
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	((struct ctl *)arg)->done = true;
	return NL_STOP;
}

static int on_finish(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct ctl *c = arg;

	c->done = true;
	/* A dump that failed midway ends with its errno. */
	if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(int)) &&
	    *(int *)nlmsg_data(nlh) < 0)
		c->err = -*(int *)nlmsg_data(nlh);
	return NL_STOP;
}

/*
 * Send @msg (made by ctl_msg()) with @flags added and take every answer,
 * each valid message to @valid. Returns 0 or a positive
 * errno (c->msg then has the kernel's reason, if it gave one).
 */
static int ctl_run(struct ctl *c, int flags, struct nl_msg *msg,
		   nl_recvmsg_msg_cb_t valid, void *arg)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	int ret;

	if (!cb)
		return ENOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid, arg);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, c);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, c);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, c);
	c->done = false;
	c->err = 0;
	c->msg[0] = '\0';
	nlh->nlmsg_flags |= flags;
	ret = nl_send_auto(c->sk, msg);
	if (ret < 0) {
		nl_cb_put(cb);
		return EIO;
	}
	while (!c->done) {
		ret = nl_recvmsgs(c->sk, cb);
		if (ret < 0 && !c->done) {
			c->err = c->err ? c->err : EIO;
			break;
		}
	}
	nl_cb_put(cb);
	return c->err;
}

/* A request of @cmd, for ctl_run(); with @dev, ORDMA_NL_A_DEV_NAME. */
static struct nl_msg *ctl_msg(const struct ctl *c, uint8_t cmd,
			      const char *dev)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, c->family, 0,
				 0, cmd, ORDMA_GENL_VERSION) ||
	    (dev && nla_put_string(msg, ORDMA_NL_A_DEV_NAME, dev))) {
		fprintf(stderr, "ordmactl: out of memory\n");
		exit(EXIT_REFUSED);
	}
	return msg;
}

/* ---- show ------------------------------------------------------------------ */

static int on_dev(struct nl_msg *msg, void *arg)
{
	struct devs *d = arg;
	struct dev *n;

	n = realloc(d->v, (d->n + 1) * sizeof(*d->v));
	if (!n)
		return NL_STOP;
	d->v = n;
	n = &d->v[d->n];
	memset(n, 0, sizeof(*n));
	if (genlmsg_parse(nlmsg_hdr(msg), 0, n->tb, ORDMA_NL_A_MAX, NULL) ||
	    !n->tb[ORDMA_NL_A_DEV_NAME])
		return NL_SKIP;
	if (n->tb[ORDMA_NL_A_MODEL] &&
	    nla_parse_nested(n->model, ORDMA_NL_MODEL_A_MAX,
			     n->tb[ORDMA_NL_A_MODEL], NULL))
		return NL_SKIP;
	nlmsg_get(msg);
	n->msg = msg;
	d->n++;
	return NL_OK;
}

static int do_show(struct ctl *c, enum show what, const char *dev)
{
	uint8_t cmd = what == SHOW_POOL ? ORDMA_NL_CMD_POOL_GET :
					  ORDMA_NL_CMD_DEV_GET;
	struct devs d = { NULL, 0 };
	struct nl_msg *msg = ctl_msg(c, cmd, dev);
	size_t i;

	if (ctl_run(c, dev ? 0 : NLM_F_DUMP, msg, on_dev, &d))
		die_refused(dev ? dev : "dump", c);
	nlmsg_free(msg);
	if (opt_json)
		show_json(&d, what);
	else
		show_plain(&d, what);
	for (i = 0; i < d.n; i++)
		nlmsg_free(d.v[i].msg);
	free(d.v);
	return 0;
}

static int on_nothing(struct nl_msg *msg, void *arg)
{
	return NL_OK;
}

/* ---- pool set, stats reset ---------------------------------------------- */

/* A decimal number of at most @max, digits only; false if not. */
static bool parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (!*s || strspn(s, "0123456789") != strlen(s))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end && *v <= max;
}

static int do_pool_set(struct ctl *c, const char *dev, int argc, char **argv)
{
	struct nl_msg *msg;
	unsigned int seen = 0;
	uint64_t v;
	size_t k;
	int i;

	if (argc == 0)
		die_usage("pool set %s: no KEY VALUE given", dev);
	if (argc % 2)
		die_usage("pool set: no value for '%s'", argv[argc - 1]);
	msg = ctl_msg(c, ORDMA_NL_CMD_POOL_SET, dev);
	for (i = 0; i < argc; i += 2) {
		for (k = 0; k < sizeof(settings) / sizeof(settings[0]); k++)
			if (!strcmp(argv[i], settings[k].name))
				break;
		if (k == sizeof(settings) / sizeof(settings[0]))
			die_usage("pool set: unknown setting '%s'", argv[i]);
		if (seen & (1U << k))
			die_usage("pool set: '%s' given twice", argv[i]);
		seen |= 1U << k;
		if (settings[k].attr == ORDMA_NL_A_MODE) {
			for (v = 0; v < sizeof(modes) / sizeof(modes[0]); v++)
				if (!strcmp(argv[i + 1], modes[v]))
					break;
			if (v == sizeof(modes) / sizeof(modes[0]))
				die_usage("pool set: mode '%s' is not auto, copy, zerocopy or overlap",
					  argv[i + 1]);
			nla_put_u32(msg, ORDMA_NL_A_MODE, (uint32_t)v);
			continue;
		}
		if (!parse_u64(argv[i + 1], settings[k].max, &v))
			die_usage("pool set: '%s' is not a number from 0 to %" PRIu64 " (%s)",
				  argv[i + 1], settings[k].max, argv[i]);
		if (settings[k].max == UINT64_MAX)
			nla_put_u64(msg, settings[k].attr, v);
		else
			nla_put_u32(msg, settings[k].attr, (uint32_t)v);
	}
	if (ctl_run(c, 0, msg, on_nothing, NULL))
		die_refused("pool set", c);
	nlmsg_free(msg);
	return 0;
}

static int do_stats_reset(struct ctl *c, const char *dev)
{
	struct nl_msg *msg = ctl_msg(c, ORDMA_NL_CMD_STATS_RESET, dev);

	if (ctl_run(c, 0, msg, on_nothing, NULL))
		die_refused("stats reset", c);
	nlmsg_free(msg);
	return 0;
}

/* ---- monitor ----------------------------------------------------------- */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static void event_peer(struct nlattr **tb, char *buf, size_t n)
{
	char ip[INET6_ADDRSTRLEN] = "";
	uint32_t a4;

	if (tb[ORDMA_NL_A_PEER_IPV4]) {
		a4 = nla_get_u32(tb[ORDMA_NL_A_PEER_IPV4]);
		inet_ntop(AF_INET, &a4, ip, sizeof(ip));
		snprintf(buf, n, "%s:%u", ip,
			 tb[ORDMA_NL_A_PEER_PORT] ?
			 ntohs(nla_get_u16(tb[ORDMA_NL_A_PEER_PORT])) : 0);
	} else if (tb[ORDMA_NL_A_PEER_IPV6] &&
		   nla_len(tb[ORDMA_NL_A_PEER_IPV6]) == 16) {
		inet_ntop(AF_INET6, nla_data(tb[ORDMA_NL_A_PEER_IPV6]), ip,
			  sizeof(ip));
		snprintf(buf, n, "[%s]:%u", ip,
			 tb[ORDMA_NL_A_PEER_PORT] ?
			 ntohs(nla_get_u16(tb[ORDMA_NL_A_PEER_PORT])) : 0);
	} else {
		buf[0] = '\0';
	}
}

static void event_json(uint8_t cmd, struct nlattr **tb)
{
	char ip[INET6_ADDRSTRLEN];
	const struct field *f;
	uint32_t a4;

	jopen(NULL, '{');
	jstr("event", events[cmd]);
	if (tb[ORDMA_NL_A_DEV_NAME])
		jstr("dev_name", nla_get_string(tb[ORDMA_NL_A_DEV_NAME]));
	if (cmd == ORDMA_NL_CMD_POOL_CHANGED)
		for (f = pool_fields; f->name; f++)
			field_json(tb, f, "");
	if (tb[ORDMA_NL_A_CHAN_QPN])
		jnum("chan_qpn", nla_get_u32(tb[ORDMA_NL_A_CHAN_QPN]));
	if (tb[ORDMA_NL_A_PEER_IPV4]) {
		a4 = nla_get_u32(tb[ORDMA_NL_A_PEER_IPV4]);
		inet_ntop(AF_INET, &a4, ip, sizeof(ip));
		jstr("peer_ipv4", ip);
	}
	if (tb[ORDMA_NL_A_PEER_IPV6] && nla_len(tb[ORDMA_NL_A_PEER_IPV6]) == 16) {
		inet_ntop(AF_INET6, nla_data(tb[ORDMA_NL_A_PEER_IPV6]), ip,
			  sizeof(ip));
		jstr("peer_ipv6", ip);
	}
	if (tb[ORDMA_NL_A_PEER_PORT])
		jnum("peer_port", ntohs(nla_get_u16(tb[ORDMA_NL_A_PEER_PORT])));
	if (tb[ORDMA_NL_A_ERRNO])
		jnum("errno", nla_get_u32(tb[ORDMA_NL_A_ERRNO]));
	jclose('}');
	putchar('\n');
}

static void event_plain(uint8_t cmd, struct nlattr **tb)
{
	const struct field *f;
	char buf[64];

	printf("%s %s", events[cmd], tb[ORDMA_NL_A_DEV_NAME] ?
	       nla_get_string(tb[ORDMA_NL_A_DEV_NAME]) : "-");
	if (cmd == ORDMA_NL_CMD_POOL_CHANGED)
		for (f = pool_fields; f->name; f++)
			printf(" %s %s", f->name,
			       field_text(buf, sizeof(buf), tb, f));
	if (tb[ORDMA_NL_A_CHAN_QPN])
		printf(" qpn %u", nla_get_u32(tb[ORDMA_NL_A_CHAN_QPN]));
	event_peer(tb, buf, sizeof(buf));
	if (buf[0])
		printf(" peer %s", buf);
	if (tb[ORDMA_NL_A_ERRNO])
		printf(" errno %u (%s)", nla_get_u32(tb[ORDMA_NL_A_ERRNO]),
		       strerror(nla_get_u32(tb[ORDMA_NL_A_ERRNO])));
	putchar('\n');
}

static int on_event(struct nl_msg *msg, void *arg)
{
	struct genlmsghdr *g = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *tb[ORDMA_NL_A_MAX + 1];

	if (g->cmd >= sizeof(events) / sizeof(events[0]) || !events[g->cmd] ||
	    genlmsg_parse(nlmsg_hdr(msg), 0, tb, ORDMA_NL_A_MAX, NULL))
		return NL_SKIP;
	if (opt_json)
		event_json(g->cmd, tb);
	else
		event_plain(g->cmd, tb);
	fflush(stdout);
	return NL_OK;
}

static int do_monitor(struct ctl *c)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, old;
	struct pollfd pfd;
	int grp, ret;

	grp = genl_ctrl_resolve_grp(c->sk, ORDMA_GENL_NAME,
				    ORDMA_GENL_MCGRP_EVENTS);
	if (grp < 0 || nl_socket_add_membership(c->sk, grp)) {
		fprintf(stderr, "ordmactl: monitor: cannot join group \"%s\"\n",
			ORDMA_GENL_MCGRP_EVENTS);
		return EXIT_REFUSED;
	}
	nl_socket_disable_seq_check(c->sk);
	nl_socket_modify_cb(c->sk, NL_CB_VALID, NL_CB_CUSTOM, on_event, NULL);

	/* The signals arrive only inside ppoll(): none is lost. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigdelset(&old, SIGINT);
	sigdelset(&old, SIGTERM);

	pfd.fd = nl_socket_get_fd(c->sk);
	pfd.events = POLLIN;
	while (!stop) {
		ret = ppoll(&pfd, 1, NULL, &old);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0) {
			perror("ordmactl: monitor");
			return EXIT_REFUSED;
		}
		ret = nl_recvmsgs_default(c->sk);
		if (ret == -NLE_NOMEM)
			fprintf(stderr, "ordmactl: monitor: events were lost (the socket overran)\n");
	}
	return 0;
}

/* ---- main -------------------------------------------------------------- */

static void usage(FILE *f)
{
	fputs("usage: ordmactl [-j] [-p] dev show [DEV]\n"
	      "       ordmactl [-j] [-p] pool show [DEV]\n"
	      "       ordmactl pool set DEV KEY VALUE [KEY VALUE...]\n"
	      "       ordmactl [-j] [-p] stats show [DEV]\n"
	      "       ordmactl stats reset DEV\n"
	      "       ordmactl [-j] monitor\n"
	      "       ordmactl -h\n"
	      "\n"
	      "  -j  JSON output (keys are the attribute names, numbers raw)\n"
	      "  -p  pretty JSON (implies -j)\n"
	      "  -h  this help\n"
	      "\n"
	      "pool set keys: pool_bytes, chunk_bytes, chan_quota_chunks,\n"
	      "  user_quota_chunks, mode (auto, copy, zerocopy, overlap),\n"
	      "  progress_timeout_ms\n"
	      "exit status: 0 done, 1 refused or failed, 2 usage error\n", f);
}

/* At most @max operands after OBJECT COMMAND. */
static void operands(int argc, int max, const char *obj, const char *cmd)
{
	if (argc > max)
		die_usage("%s%s%s: too many arguments", obj, cmd ? " " : "",
			  cmd ? cmd : "");
}

int main(int argc, char **argv)
{
	const char *obj, *cmd = NULL;
	struct ctl c;
	int opt;

	while ((opt = getopt(argc, argv, "jph")) != -1) {
		switch (opt) {
		case 'j':
			opt_json = true;
			break;
		case 'p':
			opt_json = opt_pretty = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fputs("Try 'ordmactl -h'.\n", stderr);
			return EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		die_usage("no object given (dev, pool, stats, monitor)");
	obj = argv[0];
	if (strcmp(obj, "monitor")) {
		if (argc < 2)
			die_usage("%s: no command given", obj);
		cmd = argv[1];
	}

	if (!strcmp(obj, "monitor")) {
		operands(argc - 1, 0, obj, NULL);
		ctl_open(&c);
		return do_monitor(&c);
	}
	if (!strcmp(obj, "dev") || !strcmp(obj, "stats") ||
	    !strcmp(obj, "pool")) {
		enum show what = obj[0] == 'd' ? SHOW_DEV :
				 obj[0] == 's' ? SHOW_STATS : SHOW_POOL;

		if (!strcmp(cmd, "show")) {
			operands(argc - 2, 1, obj, cmd);
			ctl_open(&c);
			return do_show(&c, what, argc > 2 ? argv[2] : NULL);
		}
		if (what == SHOW_POOL && !strcmp(cmd, "set")) {
			if (argc < 3)
				die_usage("pool set: no device given");
			ctl_open(&c);
			return do_pool_set(&c, argv[2], argc - 3, argv + 3);
		}
		if (what == SHOW_STATS && !strcmp(cmd, "reset")) {
			if (argc < 3)
				die_usage("stats reset: no device given");
			operands(argc - 2, 1, obj, cmd);
			ctl_open(&c);
			return do_stats_reset(&c, argv[2]);
		}
		die_usage("%s: unknown command '%s'", obj, cmd);
	}
	die_usage("unknown object '%s' (dev, pool, stats, monitor)", obj);
}
