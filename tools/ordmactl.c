// SPDX-License-Identifier: GPL-2.0
/*
 * ordmactl - show and change ordma's devices over its generic netlink
 * family (include/uapi/linux/ordma.h, DOC: Generic netlink), list its
 * channel ends, listeners and exposed windows, and follow its events.
 * man/man8/ordmactl.8 has the whole interface.
 *
 * The command line is checked whole before the socket is opened. Exit
 * status: 0 done, 1 the kernel refused or the operation failed (its
 * extended ack message, the attribute at fault and strerror are printed),
 * 2 a usage error (the bad argument is named).
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

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

/* IB_DEVICE_NAME_MAX - 1: the longest name ORDMA_NL_A_DEV_NAME takes. */
#define DEV_NAME_MAX	63

/* A dump the device list changed under is tried this many times more. */
#define DUMP_RETRIES	3

/* How a value is shown: plain output makes sizes readable, JSON never. */
enum fmt {
	FMT_NUM,	/* a count, a time or a setting */
	FMT_SIZE,	/* bytes */
	FMT_PORT,	/* enum ordma_nl_port_state */
	FMT_MODE,	/* enum ordma_nl_mode */
	FMT_IPV4,	/* u32, network order */
	FMT_IPV6,	/* 16 bytes */
	FMT_BE16,	/* u16, network order */
	FMT_STR,	/* a string (control characters as '?' in plain) */
	FMT_CHAN,	/* enum ordma_nl_chan_state (plain: and the errno) */
	FMT_ACCESS,	/* ORDMA_ACCESS_* bits as "r", "w", "rw" */
	FMT_AGE,	/* ms; readable in plain output */
	FMT_ADDR,	/* ADDR:PORT or [ADDR]:PORT of the attribute's triple */
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
	{ ORDMA_NL_A_CACHE_MAX_BYTES, "cache_max_bytes", FMT_SIZE },
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
	{ ORDMA_NL_A_CACHE_HITS, "cache_hits", FMT_NUM },
	{ ORDMA_NL_A_CACHE_MISSES, "cache_misses", FMT_NUM },
	{ ORDMA_NL_A_CACHE_INVALIDATIONS, "cache_invalidations", FMT_NUM },
	{ ORDMA_NL_A_CACHE_PAGES, "cache_pages", FMT_NUM },
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

/* The attributes of a channel event, CHAN_DOWN's errno last. */
static const struct field chan_fields[] = {
	{ ORDMA_NL_A_CHAN_QPN, "chan_qpn", FMT_NUM },
	{ ORDMA_NL_A_PEER_IPV4, "peer_ipv4", FMT_IPV4 },
	{ ORDMA_NL_A_PEER_IPV6, "peer_ipv6", FMT_IPV6 },
	{ ORDMA_NL_A_PEER_PORT, "peer_port", FMT_BE16 },
	{ ORDMA_NL_A_ERRNO, "errno", FMT_NUM },
	{ 0, NULL, FMT_NUM },
};

/* A peer's fault names the channel end first, then as chan_down. */
static const struct field fault_field = {
	ORDMA_NL_A_CHAN_ID, "chan_id", FMT_NUM,
};

static const struct field port_field = {
	ORDMA_NL_A_PORT_STATE, "port_state", FMT_PORT,
};

/*
 * A column of "chan show", "listener show" or "window show": its heading
 * in plain output (NULL: JSON only) and its field; a column of @stats is
 * shown in plain output with -s only. JSON has every field, in this order.
 */
struct col {
	const char *head;
	struct field f;
	bool stats;
};

static const struct col chan_cols[] = {
	{ "ID", { ORDMA_NL_A_CHAN_ID, "chan_id", FMT_NUM }, false },
	{ "PID", { ORDMA_NL_A_PID, "pid", FMT_NUM }, false },
	{ "COMM", { ORDMA_NL_A_COMM, "comm", FMT_STR }, false },
	{ "DEV", { ORDMA_NL_A_DEV_NAME, "dev_name", FMT_STR }, false },
	{ "QPN", { ORDMA_NL_A_CHAN_QPN, "chan_qpn", FMT_NUM }, false },
	{ "STATE", { ORDMA_NL_A_CHAN_STATE, "chan_state", FMT_CHAN }, false },
	{ NULL, { ORDMA_NL_A_ERRNO, "errno", FMT_NUM }, false },
	{ "LOCAL", { ORDMA_NL_A_LOCAL_IPV4, "local", FMT_ADDR }, false },
	{ NULL, { ORDMA_NL_A_LOCAL_IPV4, "local_ipv4", FMT_IPV4 }, false },
	{ NULL, { ORDMA_NL_A_LOCAL_IPV6, "local_ipv6", FMT_IPV6 }, false },
	{ NULL, { ORDMA_NL_A_LOCAL_PORT, "local_port", FMT_BE16 }, false },
	{ "PEER", { ORDMA_NL_A_PEER_IPV4, "peer", FMT_ADDR }, false },
	{ NULL, { ORDMA_NL_A_PEER_IPV4, "peer_ipv4", FMT_IPV4 }, false },
	{ NULL, { ORDMA_NL_A_PEER_IPV6, "peer_ipv6", FMT_IPV6 }, false },
	{ NULL, { ORDMA_NL_A_PEER_PORT, "peer_port", FMT_BE16 }, false },
	{ "CREDITS", { ORDMA_NL_A_TX_CREDITS, "tx_credits", FMT_NUM }, false },
	{ NULL, { ORDMA_NL_A_RX_POSTED, "rx_posted", FMT_NUM }, false },
	{ "RX_BUF", { ORDMA_NL_A_RX_SIZE, "rx_size", FMT_SIZE }, false },
	{ NULL, { ORDMA_NL_A_PEER_RX_SIZE, "peer_rx_size", FMT_NUM }, false },
	{ "CHUNKS", { ORDMA_NL_A_CHUNKS_HELD, "chunks_held", FMT_NUM }, false },
	{ "BYTES_TX", { ORDMA_NL_A_BYTES_TX, "bytes_tx", FMT_SIZE }, true },
	{ "BYTES_RX", { ORDMA_NL_A_BYTES_RX, "bytes_rx", FMT_SIZE }, true },
	{ NULL, { ORDMA_NL_A_OPS, "ops", FMT_NUM }, true },
	{ "OPS_TX", { ORDMA_NL_A_OPS_TX, "ops_tx", FMT_NUM }, true },
	{ "OPS_RX", { ORDMA_NL_A_OPS_RX, "ops_rx", FMT_NUM }, true },
	{ "ERRORS", { ORDMA_NL_A_ERRORS, "errors", FMT_NUM }, true },
	{ "INFLIGHT", { ORDMA_NL_A_INFLIGHT, "inflight", FMT_NUM }, true },
	{ "REGS", { ORDMA_NL_A_REGISTRATIONS, "registrations", FMT_NUM }, true },
	{ "PINNED", { ORDMA_NL_A_PAGES_PINNED, "pages_pinned", FMT_NUM }, true },
	{ "MRS", { ORDMA_NL_A_MRS_LIVE, "mrs_live", FMT_NUM }, true },
	{ "AGE", { ORDMA_NL_A_AGE_MS, "age_ms", FMT_AGE }, true },
	{ NULL, { 0, NULL, FMT_NUM }, false },
};

static const struct col listener_cols[] = {
	{ "ID", { ORDMA_NL_A_LISTENER_ID, "listener_id", FMT_NUM }, false },
	{ "PID", { ORDMA_NL_A_PID, "pid", FMT_NUM }, false },
	{ "COMM", { ORDMA_NL_A_COMM, "comm", FMT_STR }, false },
	{ "LOCAL", { ORDMA_NL_A_LOCAL_IPV4, "local", FMT_ADDR }, false },
	{ NULL, { ORDMA_NL_A_LOCAL_IPV4, "local_ipv4", FMT_IPV4 }, false },
	{ NULL, { ORDMA_NL_A_LOCAL_IPV6, "local_ipv6", FMT_IPV6 }, false },
	{ NULL, { ORDMA_NL_A_LOCAL_PORT, "local_port", FMT_BE16 }, false },
	{ "BACKLOG", { ORDMA_NL_A_BACKLOG, "backlog", FMT_NUM }, false },
	{ "PENDING", { ORDMA_NL_A_PENDING, "pending", FMT_NUM }, false },
	{ "AGE", { ORDMA_NL_A_AGE_MS, "age_ms", FMT_AGE }, false },
	{ NULL, { 0, NULL, FMT_NUM }, false },
};

static const struct col window_cols[] = {
	{ "FILE", { ORDMA_NL_A_FILE_ID, "file_id", FMT_NUM }, false },
	{ "ID", { ORDMA_NL_A_WINDOW_ID, "window_id", FMT_NUM }, false },
	{ "PID", { ORDMA_NL_A_PID, "pid", FMT_NUM }, false },
	{ "COMM", { ORDMA_NL_A_COMM, "comm", FMT_STR }, false },
	{ "LEN", { ORDMA_NL_A_LEN, "len", FMT_SIZE }, false },
	{ "ACCESS", { ORDMA_NL_A_ACCESS, "access", FMT_ACCESS }, false },
	{ "WRITES", { ORDMA_NL_A_WRITES, "writes", FMT_NUM }, false },
	{ NULL, { 0, NULL, FMT_NUM }, false },
};

/* The objects "OBJECT show" lists; every message has the first column. */
enum list {
	LIST_CHAN,
	LIST_LISTENER,
	LIST_WINDOW,
};

static const struct table {
	const char *name;	/* the object on the command line */
	uint8_t cmd;
	const struct col *cols;
} tables[] = {
	[LIST_CHAN] = { "chan", ORDMA_NL_CMD_CHAN_GET, chan_cols },
	[LIST_LISTENER] = { "listener", ORDMA_NL_CMD_LISTENER_GET,
			    listener_cols },
	[LIST_WINDOW] = { "window", ORDMA_NL_CMD_WINDOW_GET, window_cols },
};

/* How a setting's value is given and sent: its attribute's type. */
enum set_type {
	SET_U32,	/* a number up to UINT32_MAX, a u32 */
	SET_U64,	/* a number up to UINT64_MAX, a u64 */
	SET_MODE,	/* a name of modes[], a u32 */
};

/* The settings "pool set" takes. */
static const struct setting {
	const char *name;
	int attr;
	enum set_type type;
} settings[] = {
	{ "pool_bytes", ORDMA_NL_A_POOL_BYTES, SET_U64 },
	{ "chunk_bytes", ORDMA_NL_A_CHUNK_BYTES, SET_U32 },
	{ "chan_quota_chunks", ORDMA_NL_A_CHAN_QUOTA_CHUNKS, SET_U32 },
	{ "user_quota_chunks", ORDMA_NL_A_USER_QUOTA_CHUNKS, SET_U32 },
	{ "mode", ORDMA_NL_A_MODE, SET_MODE },
	{ "progress_timeout_ms", ORDMA_NL_A_PROGRESS_TIMEOUT_MS, SET_U32 },
	{ "cache_max_bytes", ORDMA_NL_A_CACHE_MAX_BYTES, SET_U64 },
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

static const char *const chan_states[] = {
	[ORDMA_NL_CHAN_CONNECTING] = "connecting",
	[ORDMA_NL_CHAN_PARKED] = "parked",
	[ORDMA_NL_CHAN_ESTABLISHED] = "established",
	[ORDMA_NL_CHAN_DEAD] = "dead",
};

static const char *const events[] = {
	[ORDMA_NL_CMD_DEV_ADD] = "dev_add",
	[ORDMA_NL_CMD_DEV_DEL] = "dev_del",
	[ORDMA_NL_CMD_POOL_CHANGED] = "pool_changed",
	[ORDMA_NL_CMD_CHAN_UP] = "chan_up",
	[ORDMA_NL_CMD_CHAN_DOWN] = "chan_down",
	[ORDMA_NL_CMD_PEER_FAULT] = "peer_fault",
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

/*
 * Length of the well-formed UTF-8 sequence at @s (a lead byte >= 0x80),
 * or 0: no overlong forms, no surrogates, nothing above U+10FFFF.
 */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;
		else if (s[0] == 0xed)
			hi = 0x9f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		if (s[0] == 0xf0)
			lo = 0x90;
		else if (s[0] == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	/* The second byte has its own bounds, the others 0x80-0xbf. */
	for (i = 1; i < n; i++) {
		if (s[i] < lo || s[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

/*
 * A JSON string: quotes, backslashes and control characters escaped,
 * bytes that are not UTF-8 replaced by U+FFFD.
 */
static void jstring(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n;

	putchar('"');
	while (*s) {
		switch (*s) {
		case '"':
			fputs("\\\"", stdout);
			break;
		case '\\':
			fputs("\\\\", stdout);
			break;
		case '\b':
			fputs("\\b", stdout);
			break;
		case '\f':
			fputs("\\f", stdout);
			break;
		case '\n':
			fputs("\\n", stdout);
			break;
		case '\r':
			fputs("\\r", stdout);
			break;
		case '\t':
			fputs("\\t", stdout);
			break;
		default:
			if (*s < 0x20) {
				printf("\\u%04x", *s);
			} else if (*s < 0x80) {
				putchar(*s);
			} else {
				n = utf8_len(s);
				if (!n) {
					fputs("\\ufffd", stdout);
					break;
				}
				fwrite(s, 1, n, stdout);
				s += n;
				continue;
			}
			break;
		}
		s++;
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

static void jnull(const char *key)
{
	jkey(key);
	fputs("null", stdout);
}

/* ---- values ----------------------------------------------------------- */

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

/* A time in ms: "850ms", "12.3s", "4m05s", "2h03m", "3d04h". */
static void age(char *buf, size_t n, uint64_t ms)
{
	uint64_t s = ms / 1000;

	if (ms < 1000)
		snprintf(buf, n, "%" PRIu64 "ms", ms);
	else if (s < 60)
		snprintf(buf, n, "%" PRIu64 ".%" PRIu64 "s", s, ms % 1000 / 100);
	else if (s < 3600)
		snprintf(buf, n, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, n, "%" PRIu64 "h%02" PRIu64 "m", s / 3600,
			 s / 60 % 60);
	else
		snprintf(buf, n, "%" PRIu64 "d%02" PRIu64 "h", s / 86400,
			 s / 3600 % 24);
}

/* ORDMA_ACCESS_* bits: "r", "w", "rw", "-" for none; others in hex. */
static void access_text(char *buf, size_t n, uint64_t v)
{
	uint64_t rest = v & ~(uint64_t)(ORDMA_ACCESS_REMOTE_READ |
					ORDMA_ACCESS_REMOTE_WRITE);

	snprintf(buf, n, "%s%s", v & ORDMA_ACCESS_REMOTE_READ ? "r" : "",
		 v & ORDMA_ACCESS_REMOTE_WRITE ? "w" : "");
	if (rest)
		snprintf(buf + strlen(buf), n - strlen(buf), "%s%#" PRIx64,
			 buf[0] ? "+" : "", rest);
	else if (!buf[0])
		snprintf(buf, n, "-");
}

static uint64_t attr_u64(const struct nlattr *a)
{
	switch (nla_len(a)) {
	case 1:
		return nla_get_u8((struct nlattr *)a);
	case 2:
		return nla_get_u16((struct nlattr *)a);
	case 4:
		return nla_get_u32((struct nlattr *)a);
	case 8:
		return nla_get_u64((struct nlattr *)a);
	default:
		return 0;
	}
}

/* A name of @names for @v, else @v in decimal. */
static void name_of(char *buf, size_t n, const char *const *names,
		    size_t count, uint64_t v)
{
	if (v < count && names[v])
		snprintf(buf, n, "%s", names[v]);
	else
		snprintf(buf, n, "%" PRIu64, v);
}

/* Is @f's value a string in JSON (a name or an address)? */
static bool is_text(const struct field *f)
{
	return f->fmt == FMT_PORT || f->fmt == FMT_MODE ||
	       f->fmt == FMT_IPV4 || f->fmt == FMT_IPV6 ||
	       f->fmt == FMT_STR || f->fmt == FMT_CHAN ||
	       f->fmt == FMT_ACCESS || f->fmt == FMT_ADDR;
}

static const char *field_text(char *buf, size_t n, struct nlattr **tb,
			      const struct field *f, bool readable);

/*
 * The address of the triple whose IPv4 attribute is @a4 (a local or a
 * peer address) as ADDR:PORT or [ADDR]:PORT, "-" for a port not sent;
 * NULL if neither address was sent.
 */
static const char *addr_text(char *buf, size_t n, struct nlattr **tb, int a4)
{
	bool local = a4 == ORDMA_NL_A_LOCAL_IPV4;
	const struct field v4 = { a4, NULL, FMT_IPV4 };
	const struct field v6 = {
		local ? ORDMA_NL_A_LOCAL_IPV6 : ORDMA_NL_A_PEER_IPV6, NULL,
		FMT_IPV6,
	};
	const struct field port = {
		local ? ORDMA_NL_A_LOCAL_PORT : ORDMA_NL_A_PEER_PORT, NULL,
		FMT_BE16,
	};
	char ip[INET6_ADDRSTRLEN], p[16];
	bool is6 = false;

	if (!field_text(ip, sizeof(ip), tb, &v4, false)) {
		if (!field_text(ip, sizeof(ip), tb, &v6, false))
			return NULL;
		is6 = true;
	}
	if (!field_text(p, sizeof(p), tb, &port, false))
		snprintf(p, sizeof(p), "-");
	snprintf(buf, n, is6 ? "[%s]:%s" : "%s:%s", ip, p);
	return buf;
}

/* Field @f of @tb as text into @buf (sizes readable if @readable); NULL if
 * the attribute is missing or malformed.
 */
static const char *field_text(char *buf, size_t n, struct nlattr **tb,
			      const struct field *f, bool readable)
{
	const struct nlattr *a = tb[f->attr];
	const char *name;
	uint32_t a4;
	size_t i;

	if (f->fmt == FMT_ADDR)
		return addr_text(buf, n, tb, f->attr);
	if (!a)
		return NULL;
	switch (f->fmt) {
	case FMT_SIZE:
		if (readable)
			human(buf, n, attr_u64(a));
		else
			snprintf(buf, n, "%" PRIu64, attr_u64(a));
		break;
	case FMT_PORT:
		name_of(buf, n, port_states, ARRAY_LEN(port_states),
			attr_u64(a));
		break;
	case FMT_MODE:
		name_of(buf, n, modes, ARRAY_LEN(modes), attr_u64(a));
		break;
	case FMT_IPV4:
		if (nla_len(a) != 4)
			return NULL;
		memcpy(&a4, nla_data(a), 4);
		if (!inet_ntop(AF_INET, &a4, buf, n))
			return NULL;
		break;
	case FMT_IPV6:
		if (nla_len(a) != 16 ||
		    !inet_ntop(AF_INET6, nla_data(a), buf, n))
			return NULL;
		break;
	case FMT_BE16:
		if (nla_len(a) != 2)
			return NULL;
		snprintf(buf, n, "%u", ntohs(nla_get_u16((struct nlattr *)a)));
		break;
	case FMT_STR:
		snprintf(buf, n, "%.*s",
			 (int)strnlen(nla_data(a), nla_len(a)),
			 (const char *)nla_data(a));
		/* A name a process chose: nothing a terminal would obey. */
		for (i = 0; readable && buf[i]; i++)
			if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
				buf[i] = '?';
		break;
	case FMT_CHAN:
		name_of(buf, n, chan_states, ARRAY_LEN(chan_states),
			attr_u64(a));
		if (!readable || attr_u64(a) != ORDMA_NL_CHAN_DEAD ||
		    !tb[ORDMA_NL_A_ERRNO])
			break;
		/* Plain output: why it died, as dead:ECONNRESET. */
		name = strerrorname_np((int)attr_u64(tb[ORDMA_NL_A_ERRNO]));
		if (name)
			snprintf(buf + strlen(buf), n - strlen(buf), ":%s",
				 name);
		else
			snprintf(buf + strlen(buf), n - strlen(buf),
				 ":%" PRIu64, attr_u64(tb[ORDMA_NL_A_ERRNO]));
		break;
	case FMT_ACCESS:
		access_text(buf, n, attr_u64(a));
		break;
	case FMT_AGE:
		if (readable)
			age(buf, n, attr_u64(a));
		else
			snprintf(buf, n, "%" PRIu64, attr_u64(a));
		break;
	default:
		snprintf(buf, n, "%" PRIu64, attr_u64(a));
		break;
	}
	return buf;
}

/* Field @f as a JSON member: a number, a string, or null if missing. */
static void field_json(struct nlattr **tb, const struct field *f)
{
	char buf[128];
	const char *s = field_text(buf, sizeof(buf), tb, f, false);

	if (!s)
		jnull(f->name);
	else if (is_text(f))
		jstr(f->name, s);
	else
		jnum(f->name, strtoull(s, NULL, 10));
}

/* ---- talking to the kernel ---------------------------------------------- */

struct ctl {
	struct nl_sock *sk;
	int family;
	struct nl_msg *req;	/* the request being answered */
	bool done;
	bool intr;		/* a dump's message had NLM_F_DUMP_INTR */
	int err;		/* a positive errno once something failed */
	char msg[256];		/* the kernel's extended ack message */
	const char *attr;	/* the attribute it named, if we know it */
	bool range;		/* it gave the attribute's bounds */
	uint64_t min, max;
};

/* Names of the attributes a request of ours may carry. */
static const char *attr_name(int type)
{
	size_t i;

	if (type == ORDMA_NL_A_DEV_NAME)
		return "dev_name";
	if (type == ORDMA_NL_A_CHAN_ID)
		return "chan_id";
	if (type == ORDMA_NL_A_PID)
		return "pid";
	for (i = 0; i < ARRAY_LEN(settings); i++)
		if (settings[i].attr == type)
			return settings[i].name;
	return NULL;
}

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

/* Print why @what failed (never "Success") and exit 1. */
static void __attribute__((noreturn))
die_refused(const char *what, const struct ctl *c)
{
	int err = c->err ? c->err : EIO;

	fprintf(stderr, "ordmactl: %s: ", what);
	if (c->attr)
		fprintf(stderr, "%s: ", c->attr);
	if (c->msg[0])
		fprintf(stderr, "%s: ", c->msg);
	if (c->range)
		fprintf(stderr, "from %" PRIu64 " to %" PRIu64 ": ", c->min,
			c->max);
	fprintf(stderr, "%s\n", strerror(err));
	exit(EXIT_REFUSED);
}

/* A libnl error @nlerr (negative) of @what: print it and exit 1. */
static void __attribute__((noreturn))
die_nl(const char *what, int nlerr)
{
	fprintf(stderr, "ordmactl: %s: %s\n", what, nl_geterror(nlerr));
	exit(EXIT_REFUSED);
}

static void ctl_open(struct ctl *c)
{
	int one = 1, fd, ret;

	memset(c, 0, sizeof(*c));
	c->sk = nl_socket_alloc();
	if (!c->sk) {
		fprintf(stderr, "ordmactl: out of memory\n");
		exit(EXIT_REFUSED);
	}
	ret = genl_connect(c->sk);
	if (ret)
		die_nl("cannot open a generic netlink socket", ret);
	fd = nl_socket_get_fd(c->sk);
	/* The kernel's reason with every error, without our request. */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	c->family = genl_ctrl_resolve(c->sk, ORDMA_GENL_NAME);
	if (c->family < 0) {
		fprintf(stderr, "ordmactl: no generic netlink family \"%s\" (is ordma.ko loaded?): %s\n",
			ORDMA_GENL_NAME, nl_geterror(c->family));
		exit(EXIT_REFUSED);
	}
}

/* The bounds of a rejected attribute (NLMSGERR_ATTR_POLICY), if given. */
static void parse_policy(struct ctl *c, struct nlattr *pol)
{
	struct nlattr *tb[NL_POLICY_TYPE_ATTR_MAX + 1];

	if (nla_parse_nested(tb, NL_POLICY_TYPE_ATTR_MAX, pol, NULL) ||
	    !tb[NL_POLICY_TYPE_ATTR_MIN_VALUE_U] ||
	    !tb[NL_POLICY_TYPE_ATTR_MAX_VALUE_U])
		return;
	c->min = nla_get_u64(tb[NL_POLICY_TYPE_ATTR_MIN_VALUE_U]);
	c->max = nla_get_u64(tb[NL_POLICY_TYPE_ATTR_MAX_VALUE_U]);
	c->range = true;
}

/* Which of our attributes is at offset @off of our request, if any. */
static void parse_offset(struct ctl *c, uint32_t off)
{
	struct nlmsghdr *req = nlmsg_hdr(c->req);
	struct nlattr *a;

	if (off < NLMSG_HDRLEN + GENL_HDRLEN ||
	    off + NLA_HDRLEN > req->nlmsg_len)
		return;
	a = (struct nlattr *)((char *)req + off);
	c->attr = attr_name(a->nla_type & NLA_TYPE_MASK);
}

/* An error answer: its errno, and what its extended ack says. */
static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	struct ctl *c = arg;
	size_t off = sizeof(*e);
	int len;

	/* An error message with error 0 would be an ack: never "Success". */
	c->err = e->error < 0 ? -e->error : EPROTO;
	c->done = true;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NL_STOP;
	/* Our request comes back whole unless capped, padded to 4 bytes. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += NLMSG_ALIGN(e->msg.nlmsg_len) - NLMSG_HDRLEN;
	len = (int)nlh->nlmsg_len - NLMSG_HDRLEN - (int)off;
	if (len <= 0 ||
	    nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)((char *)e + off),
		      len, NULL))
		return NL_STOP;
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(c->msg, sizeof(c->msg), "%s",
			 nla_get_string(tb[NLMSGERR_ATTR_MSG]));
	if (tb[NLMSGERR_ATTR_OFFS])
		parse_offset(c, nla_get_u32(tb[NLMSGERR_ATTR_OFFS]));
	if (tb[NLMSGERR_ATTR_POLICY])
		parse_policy(c, tb[NLMSGERR_ATTR_POLICY]);
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
	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		c->intr = true;
	/* A dump that failed midway ends with its errno. */
	if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(int)) &&
	    *(int *)nlmsg_data(nlh) < 0)
		c->err = -*(int *)nlmsg_data(nlh);
	return NL_STOP;
}

/*
 * Send @msg (made by ctl_msg()) with @flags added and take every answer,
 * each valid message to @valid, which may set c->err and stop. Returns 0
 * or a positive errno (c->msg, c->attr and the range say more when the
 * kernel did); c->intr tells a dump the device list changed under.
 */
static int ctl_run(struct ctl *c, int flags, struct nl_msg *msg,
		   nl_recvmsg_msg_cb_t valid, void *arg)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int ret;

	c->done = false;
	c->intr = false;
	c->err = 0;
	c->msg[0] = '\0';
	c->attr = NULL;
	c->range = false;
	c->req = msg;
	if (!cb)
		return c->err = ENOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid, arg);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, c);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, c);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, c);
	nlmsg_hdr(msg)->nlmsg_flags |= flags;
	ret = nl_send_auto(c->sk, msg);
	if (ret < 0) {
		nl_cb_put(cb);
		snprintf(c->msg, sizeof(c->msg), "send: %s", nl_geterror(ret));
		return c->err = EIO;
	}
	while (!c->done && !c->err) {
		ret = nl_recvmsgs(c->sk, cb);
		if (ret == -NLE_DUMP_INTR) {
			/* libnl read the dump to its end and says so. */
			c->intr = true;
			c->done = true;
		} else if (ret < 0 && !c->err) {
			snprintf(c->msg, sizeof(c->msg), "receive: %s",
				 nl_geterror(ret));
			c->err = EIO;
		}
	}
	nl_cb_put(cb);
	return c->err;
}

static void __attribute__((noreturn)) die_oom(void)
{
	fprintf(stderr, "ordmactl: %s\n", strerror(ENOMEM));
	exit(EXIT_REFUSED);
}

/* A request of @cmd, for ctl_run(); with @dev, ORDMA_NL_A_DEV_NAME. */
static struct nl_msg *ctl_msg(const struct ctl *c, uint8_t cmd,
			      const char *dev)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, c->family, 0,
				 0, cmd, ORDMA_GENL_VERSION) ||
	    (dev && nla_put_string(msg, ORDMA_NL_A_DEV_NAME, dev)))
		die_oom();
	return msg;
}

/* ---- show ------------------------------------------------------------------ */

/* What "show" prints of each device. */
enum show {
	SHOW_DEV,
	SHOW_POOL,
	SHOW_STATS,
};

struct dev {
	struct nlattr *tb[ORDMA_NL_A_MAX + 1];
	struct nlattr *model[ORDMA_NL_MODEL_A_MAX + 1];
	struct nl_msg *msg;	/* holds what @tb points into */
};

struct devs {
	struct ctl *c;
	struct dev *v;
	size_t n;
};

static int on_dev(struct nl_msg *msg, void *arg)
{
	struct devs *d = arg;
	struct dev *n;

	if (nlmsg_hdr(msg)->nlmsg_flags & NLM_F_DUMP_INTR)
		d->c->intr = true;
	n = realloc(d->v, (d->n + 1) * sizeof(*d->v));
	if (!n) {
		d->c->err = ENOMEM;
		return NL_STOP;
	}
	d->v = n;
	n = &d->v[d->n];
	memset(n, 0, sizeof(*n));
	if (genlmsg_parse(nlmsg_hdr(msg), 0, n->tb, ORDMA_NL_A_MAX, NULL) ||
	    !n->tb[ORDMA_NL_A_DEV_NAME] ||
	    (n->tb[ORDMA_NL_A_MODEL] &&
	     nla_parse_nested(n->model, ORDMA_NL_MODEL_A_MAX,
			      n->tb[ORDMA_NL_A_MODEL], NULL))) {
		snprintf(d->c->msg, sizeof(d->c->msg), "a malformed answer");
		d->c->err = EPROTO;
		return NL_STOP;
	}
	nlmsg_get(msg);
	n->msg = msg;
	d->n++;
	return NL_OK;
}

static void devs_free(struct devs *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		nlmsg_free(d->v[i].msg);
	free(d->v);
	d->v = NULL;
	d->n = 0;
}

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
			field_json(tb, &port_field);
		if (what != SHOW_STATS)
			for (f = pool_fields; f->name; f++)
				field_json(tb, f);
		if (what != SHOW_POOL)
			for (f = stats_fields; f->name; f++)
				field_json(tb, f);
		if (what == SHOW_DEV) {
			jopen("model", '{');
			for (f = model_fields; f->name; f++)
				field_json(d->v[i].model, f);
			jclose('}');
		}
		jclose('}');
	}
	jclose(']');
	putchar('\n');
}

static const char *field_plain(char *buf, size_t n, struct nlattr **tb,
			       const struct field *f)
{
	const char *s = field_text(buf, n, tb, f, true);

	return s ? s : "-";
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
		const char *s = f ? field_plain(buf, sizeof(buf), tb, f) :
				    nla_get_string(d->v[i].tb[ORDMA_NL_A_DEV_NAME]);

		printf("  %*s", i + 1 < d->n ? -colw[i] : 0, s);
	}
	putchar('\n');
}

static void widen(int *w, const char *s)
{
	int l = strlen(s);

	if (l > *w)
		*w = l;
}

/* The widest value of column @i, over every field shown. */
static int column_width(const struct devs *d, size_t i, enum show what)
{
	const struct field *f;
	char buf[64];
	int w = 0;

	widen(&w, nla_get_string(d->v[i].tb[ORDMA_NL_A_DEV_NAME]));
	if (what == SHOW_DEV)
		widen(&w, field_plain(buf, sizeof(buf), d->v[i].tb,
				      &port_field));
	if (what != SHOW_STATS)
		for (f = pool_fields; f->name; f++)
			widen(&w, field_plain(buf, sizeof(buf), d->v[i].tb, f));
	if (what != SHOW_POOL)
		for (f = stats_fields; f->name; f++)
			widen(&w, field_plain(buf, sizeof(buf), d->v[i].tb, f));
	if (what == SHOW_DEV)
		for (f = model_fields; f->name; f++)
			widen(&w, field_plain(buf, sizeof(buf), d->v[i].model,
					      f));
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
	if (!colw)
		die_oom();
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

static int do_show(struct ctl *c, enum show what, const char *dev)
{
	uint8_t cmd = what == SHOW_POOL ? ORDMA_NL_CMD_POOL_GET :
					  ORDMA_NL_CMD_DEV_GET;
	struct devs d = { c, NULL, 0 };
	struct nl_msg *msg;
	int tries = 0;

	for (;;) {
		/* A fresh request each time: its sequence number is new. */
		msg = ctl_msg(c, cmd, dev);
		if (ctl_run(c, dev ? 0 : NLM_F_DUMP, msg, on_dev, &d))
			die_refused(dev ? "show" : "dump", c);
		nlmsg_free(msg);
		if (!c->intr || tries++ == DUMP_RETRIES)
			break;
		devs_free(&d);
	}
	if (opt_json)
		show_json(&d, what);
	else
		show_plain(&d, what);
	devs_free(&d);
	if (c->intr) {
		fflush(stdout);
		fprintf(stderr, "ordmactl: dump: devices came or went during each of %d tries; the list may miss one\n",
			DUMP_RETRIES + 1);
		return EXIT_REFUSED;
	}
	return 0;
}

/* ---- chan, listener and window show ------------------------------------ */

/*
 * What "OBJECT show" asks for: dev, pid and id as given, 0 if not. The
 * kernel applies dev and pid to the get of an id too.
 */
struct filter {
	enum list what;
	bool stats;		/* -s */
	const char *dev;
	uint32_t pid, id;
};

struct row {
	struct nlattr *tb[ORDMA_NL_A_MAX + 1];
	struct nl_msg *msg;	/* holds what @tb points into */
};

struct rows {
	struct ctl *c;
	int key;		/* the attribute every message has: its id */
	struct row *v;
	size_t n;
};

static int on_row(struct nl_msg *msg, void *arg)
{
	struct rows *r = arg;
	struct row *n;

	n = realloc(r->v, (r->n + 1) * sizeof(*r->v));
	if (!n) {
		r->c->err = ENOMEM;
		return NL_STOP;
	}
	r->v = n;
	n = &r->v[r->n];
	memset(n, 0, sizeof(*n));
	if (genlmsg_parse(nlmsg_hdr(msg), 0, n->tb, ORDMA_NL_A_MAX, NULL) ||
	    !n->tb[r->key]) {
		snprintf(r->c->msg, sizeof(r->c->msg), "a malformed answer");
		r->c->err = EPROTO;
		return NL_STOP;
	}
	nlmsg_get(msg);
	n->msg = msg;
	r->n++;
	return NL_OK;
}

static void rows_free(struct rows *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		nlmsg_free(r->v[i].msg);
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

static void list_json(const struct rows *r, const struct col *cols)
{
	const struct col *k;
	size_t i;

	jopen(NULL, '[');
	for (i = 0; i < r->n; i++) {
		jopen(NULL, '{');
		for (k = cols; k->f.name; k++)
			field_json(r->v[i].tb, &k->f);
		jclose('}');
	}
	jclose(']');
	putchar('\n');
}

/* Does plain output show column @k? */
static bool col_shown(const struct col *k, bool stats)
{
	return k->head && (!k->stats || stats);
}

/*
 * A table: a heading line, then one line per object, each column as wide
 * as its widest value, numbers to the right, text to the left; the last
 * column has no trailing blanks.
 */
static void list_plain(const struct rows *r, const struct col *cols,
		       bool stats)
{
	const struct col *k, *last = NULL;
	char buf[128];
	int *w, c;
	size_t i;

	for (k = cols; k->f.name; k++)
		if (col_shown(k, stats))
			last = k;
	w = calloc(last - cols + 1, sizeof(*w));
	if (!w)
		die_oom();
	for (k = cols; k <= last; k++) {
		if (!col_shown(k, stats))
			continue;
		c = k - cols;
		widen(&w[c], k->head);
		for (i = 0; i < r->n; i++)
			widen(&w[c], field_plain(buf, sizeof(buf), r->v[i].tb,
						 &k->f));
	}
	for (i = 0; i <= r->n; i++) {
		for (k = cols; k <= last; k++) {
			const char *s;
			bool right = !is_text(&k->f);

			if (!col_shown(k, stats))
				continue;
			c = k - cols;
			s = i ? field_plain(buf, sizeof(buf), r->v[i - 1].tb,
					    &k->f) : k->head;
			if (k != cols)
				fputs("  ", stdout);
			if (right)
				printf("%*s", w[c], s);
			else if (k == last)
				fputs(s, stdout);
			else
				printf("%-*s", w[c], s);
		}
		putchar('\n');
	}
	free(w);
}

static int do_list(struct ctl *c, const struct filter *fl)
{
	const struct table *t = &tables[fl->what];
	struct rows r = { c, t->cols[0].f.attr, NULL, 0 };
	struct nl_msg *msg = ctl_msg(c, t->cmd, fl->dev);
	char what[32];

	if ((fl->pid && nla_put_u32(msg, ORDMA_NL_A_PID, fl->pid)) ||
	    (fl->id && nla_put_u32(msg, ORDMA_NL_A_CHAN_ID, fl->id)))
		die_oom();
	/* With an id, the one channel end; else the kernel's dump. */
	if (ctl_run(c, fl->id ? 0 : NLM_F_DUMP, msg, on_row, &r)) {
		snprintf(what, sizeof(what), "%s show", t->name);
		die_refused(what, c);
	}
	nlmsg_free(msg);
	if (opt_json)
		list_json(&r, t->cols);
	else
		list_plain(&r, t->cols, fl->stats);
	rows_free(&r);
	return 0;
}

static int on_nothing(struct nl_msg *msg, void *arg)
{
	return NL_OK;
}

/* ---- pool set, stats reset ---------------------------------------------- */

struct value {
	const struct setting *s;
	uint64_t v;
};

static int do_pool_set(struct ctl *c, const char *dev, const struct value *v,
		       size_t n)
{
	struct nl_msg *msg = ctl_msg(c, ORDMA_NL_CMD_POOL_SET, dev);
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		if (v[i].s->type == SET_U64)
			ret = nla_put_u64(msg, v[i].s->attr, v[i].v);
		else
			ret = nla_put_u32(msg, v[i].s->attr, (uint32_t)v[i].v);
		if (ret)
			die_oom();
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

/* The fields of event @cmd after dev_name: every one is always shown. */
static const struct field *event_fields(uint8_t cmd, int *n)
{
	switch (cmd) {
	case ORDMA_NL_CMD_POOL_CHANGED:
		*n = ARRAY_LEN(pool_fields) - 1;
		return pool_fields;
	case ORDMA_NL_CMD_CHAN_UP:
		*n = ARRAY_LEN(chan_fields) - 2;	/* no errno */
		return chan_fields;
	case ORDMA_NL_CMD_CHAN_DOWN:
	case ORDMA_NL_CMD_PEER_FAULT:
		*n = ARRAY_LEN(chan_fields) - 1;
		return chan_fields;
	default:
		*n = 0;
		return NULL;
	}
}

static void event_json(uint8_t cmd, struct nlattr **tb)
{
	const struct field *f;
	int i, n;

	jopen(NULL, '{');
	jstr("event", events[cmd]);
	if (tb[ORDMA_NL_A_DEV_NAME])
		jstr("dev_name", nla_get_string(tb[ORDMA_NL_A_DEV_NAME]));
	else
		jnull("dev_name");
	if (cmd == ORDMA_NL_CMD_PEER_FAULT)
		field_json(tb, &fault_field);
	f = event_fields(cmd, &n);
	for (i = 0; i < n; i++)
		field_json(tb, &f[i]);
	jclose('}');
	putchar('\n');
}

/* A channel event's peer as ADDR:PORT or [ADDR]:PORT, "-" if none. */
static const char *event_peer(struct nlattr **tb, char *buf, size_t n)
{
	const char *s = addr_text(buf, n, tb, ORDMA_NL_A_PEER_IPV4);

	return s ? s : "-";
}

static void event_plain(uint8_t cmd, struct nlattr **tb)
{
	const struct field *f;
	char buf[96];

	printf("%s %s", events[cmd], tb[ORDMA_NL_A_DEV_NAME] ?
	       nla_get_string(tb[ORDMA_NL_A_DEV_NAME]) : "-");
	if (cmd == ORDMA_NL_CMD_POOL_CHANGED)
		for (f = pool_fields; f->name; f++)
			printf(" %s %s", f->name,
			       field_plain(buf, sizeof(buf), tb, f));
	if (cmd == ORDMA_NL_CMD_PEER_FAULT)
		printf(" chan %s", field_plain(buf, sizeof(buf), tb,
					       &fault_field));
	if (cmd == ORDMA_NL_CMD_CHAN_UP || cmd == ORDMA_NL_CMD_CHAN_DOWN ||
	    cmd == ORDMA_NL_CMD_PEER_FAULT) {
		printf(" qpn %s", field_plain(buf, sizeof(buf), tb,
					      &chan_fields[0]));
		printf(" peer %s", event_peer(tb, buf, sizeof(buf)));
	}
	if (cmd == ORDMA_NL_CMD_CHAN_DOWN || cmd == ORDMA_NL_CMD_PEER_FAULT) {
		if (tb[ORDMA_NL_A_ERRNO])
			printf(" errno %u (%s)", nla_get_u32(tb[ORDMA_NL_A_ERRNO]),
			       strerror(nla_get_u32(tb[ORDMA_NL_A_ERRNO])));
		else
			printf(" errno -");
	}
	putchar('\n');
}

static int on_event(struct nl_msg *msg, void *arg)
{
	struct genlmsghdr *g = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *tb[ORDMA_NL_A_MAX + 1];

	if (g->cmd >= ARRAY_LEN(events) || !events[g->cmd] ||
	    genlmsg_parse(nlmsg_hdr(msg), 0, tb, ORDMA_NL_A_MAX, NULL))
		return NL_SKIP;
	if (opt_json)
		event_json(g->cmd, tb);
	else
		event_plain(g->cmd, tb);
	if (fflush(stdout)) {
		perror("ordmactl: monitor: stdout");
		exit(EXIT_REFUSED);
	}
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
	if (grp < 0)
		die_nl("monitor: no group \"" ORDMA_GENL_MCGRP_EVENTS "\"", grp);
	ret = nl_socket_add_membership(c->sk, grp);
	if (ret)
		die_nl("monitor: cannot join group \"" ORDMA_GENL_MCGRP_EVENTS "\"",
		       ret);
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
		else if (ret < 0)
			die_nl("monitor", ret);
	}
	return 0;
}

/* ---- the command line -------------------------------------------------- */

static void usage(FILE *f)
{
	fputs("usage: ordmactl [-j] [-p] [--] dev show [DEV]\n"
	      "       ordmactl [-j] [-p] [--] pool show [DEV]\n"
	      "       ordmactl [--] pool set DEV KEY VALUE [KEY VALUE...]\n"
	      "       ordmactl [-j] [-p] [--] stats show [DEV]\n"
	      "       ordmactl [--] stats reset DEV\n"
	      "       ordmactl [-j] [-p] [--] chan show [-s] [dev DEV] [pid PID] [id ID]\n"
	      "       ordmactl [-j] [-p] [--] listener show [pid PID]\n"
	      "       ordmactl [-j] [-p] [--] window show [pid PID]\n"
	      "       ordmactl [-j] [--] monitor\n"
	      "       ordmactl -h\n"
	      "\n"
	      "  -j  JSON output (keys are the attribute names, numbers raw)\n"
	      "  -p  pretty JSON (implies -j; not for monitor)\n"
	      "  -h  this help\n"
	      "  --  ends the options (they come before the object)\n"
	      "\n"
	      "pool set keys: pool_bytes, chunk_bytes, chan_quota_chunks,\n"
	      "  user_quota_chunks, mode (auto, copy, zerocopy, overlap),\n"
	      "  progress_timeout_ms, cache_max_bytes\n"
	      "chan show: -s adds the statistics to the plain table (JSON has\n"
	      "  them always); dev and pid keep the channel ends of that device\n"
	      "  and process, id the channel end of that id alone\n"
	      "listener show, window show: pid keeps that process's objects\n"
	      "exit status: 0 done, 1 refused or failed, 2 usage error\n", f);
}

enum op {
	OP_SHOW,
	OP_SET,
	OP_RESET,
	OP_MONITOR,
	OP_LIST,
};

struct cmdline {
	enum op op;
	enum show what;
	const char *dev;
	struct value v[ARRAY_LEN(settings)];
	size_t n;
	struct filter fl;	/* OP_LIST */
};

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

static const char *parse_dev(const char *what, const char *dev)
{
	if (!*dev)
		die_usage("%s: the device name is empty", what);
	if (strlen(dev) > DEV_NAME_MAX)
		die_usage("%s: device name '%s' is longer than %d bytes", what,
			  dev, DEV_NAME_MAX);
	return dev;
}

/* KEY VALUE pairs of "pool set" into @cl. */
static void parse_settings(struct cmdline *cl, int argc, char **argv)
{
	unsigned int seen = 0;
	const struct setting *s;
	uint64_t v, max;
	size_t k;
	int i;

	if (argc == 0)
		die_usage("pool set %s: no KEY VALUE given", cl->dev);
	if (argc % 2)
		die_usage("pool set: no value for '%s'", argv[argc - 1]);
	for (i = 0; i < argc; i += 2) {
		for (k = 0; k < ARRAY_LEN(settings); k++)
			if (!strcmp(argv[i], settings[k].name))
				break;
		if (k == ARRAY_LEN(settings))
			die_usage("pool set: unknown setting '%s'", argv[i]);
		s = &settings[k];
		if (seen & (1U << k))
			die_usage("pool set: '%s' given twice", argv[i]);
		seen |= 1U << k;
		max = s->type == SET_U64 ? UINT64_MAX : UINT32_MAX;
		if (s->type == SET_MODE) {
			for (v = 0; v < ARRAY_LEN(modes); v++)
				if (!strcmp(argv[i + 1], modes[v]))
					break;
			if (v == ARRAY_LEN(modes))
				die_usage("pool set: mode '%s' is not auto, copy, zerocopy or overlap",
					  argv[i + 1]);
		} else if (!parse_u64(argv[i + 1], max, &v)) {
			die_usage("pool set: '%s' is not a number from 0 to %" PRIu64 " (%s)",
				  argv[i + 1], max, argv[i]);
		}
		cl->v[cl->n].s = s;
		cl->v[cl->n++].v = v;
	}
}

/* The value of operand @key of "@obj show" at argv[i + 1], if any. */
static const char *list_value(int argc, char **argv, int i, const char *obj,
			      const char *key)
{
	if (i + 1 >= argc)
		die_usage("%s show: no value for '%s'", obj, key);
	return argv[i + 1];
}

/* "chan show", "listener show" or "window show" and its operands. */
static void parse_list(struct cmdline *cl, enum list what, int argc,
		       char **argv)
{
	const char *obj = tables[what].name, *v;
	bool chan = what == LIST_CHAN;
	unsigned int seen = 0, bit;
	uint64_t n;
	int i;

	if (argc < 1)
		die_usage("%s: no command given", obj);
	if (strcmp(argv[0], "show"))
		die_usage("%s: unknown command '%s'", obj, argv[0]);
	cl->op = OP_LIST;
	cl->fl.what = what;
	for (i = 1; i < argc; i++) {
		bit = !strcmp(argv[i], "-s") ? 1 :
		      !strcmp(argv[i], "dev") ? 2 :
		      !strcmp(argv[i], "pid") ? 4 :
		      !strcmp(argv[i], "id") ? 8 : 0;
		if (!bit || (!chan && bit != 4))
			die_usage("%s show: unknown argument '%s' (%s)", obj,
				  argv[i], chan ? "-s, dev, pid, id" : "pid");
		if (seen & bit)
			die_usage("%s show: '%s' given twice", obj, argv[i]);
		seen |= bit;
		if (bit == 1) {
			cl->fl.stats = true;
			continue;
		}
		v = list_value(argc, argv, i, obj, argv[i]);
		if (bit == 2) {
			cl->fl.dev = parse_dev("chan show: dev", v);
		} else if (!parse_u64(v, UINT32_MAX, &n) || !n) {
			die_usage("%s show: %s: '%s' is not a number from 1 to %u",
				  obj, argv[i], v, UINT32_MAX);
		} else if (bit == 4) {
			cl->fl.pid = (uint32_t)n;
		} else {
			cl->fl.id = (uint32_t)n;
		}
		i++;
	}
}

/* At most @max operands after OBJECT COMMAND. */
static void operands(int argc, int max, const char *obj, const char *cmd)
{
	if (argc > max)
		die_usage("%s%s%s: too many arguments", obj, cmd ? " " : "",
			  cmd ? cmd : "");
}

/* The whole command line into @cl, or exit 2 naming what is wrong. */
static void parse(int argc, char **argv, struct cmdline *cl)
{
	const char *obj, *cmd;
	size_t k;
	int opt;

	memset(cl, 0, sizeof(*cl));
	/* "+": options end at the object, so a value may start with '-'. */
	while ((opt = getopt(argc, argv, "+jph")) != -1) {
		switch (opt) {
		case 'j':
			opt_json = true;
			break;
		case 'p':
			opt_json = opt_pretty = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			fputs("Try 'ordmactl -h'.\n", stderr);
			exit(EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		die_usage("no object given (dev, pool, stats, chan, listener, window, monitor)");
	obj = argv[0];
	for (k = 0; k < ARRAY_LEN(tables); k++) {
		if (!strcmp(obj, tables[k].name)) {
			parse_list(cl, (enum list)k, argc - 1, argv + 1);
			return;
		}
	}
	if (!strcmp(obj, "monitor")) {
		operands(argc - 1, 0, obj, NULL);
		if (opt_pretty)
			die_usage("monitor: -p is not for monitor (one JSON object per line: use -j)");
		cl->op = OP_MONITOR;
		return;
	}
	if (strcmp(obj, "dev") && strcmp(obj, "stats") && strcmp(obj, "pool"))
		die_usage("unknown object '%s' (dev, pool, stats, chan, listener, window, monitor)",
			  obj);
	if (argc < 2)
		die_usage("%s: no command given", obj);
	cmd = argv[1];
	cl->what = obj[0] == 'd' ? SHOW_DEV :
		   obj[0] == 's' ? SHOW_STATS : SHOW_POOL;
	if (!strcmp(cmd, "show")) {
		operands(argc - 2, 1, obj, cmd);
		cl->op = OP_SHOW;
		if (argc > 2)
			cl->dev = parse_dev("show", argv[2]);
		return;
	}
	if (cl->what == SHOW_POOL && !strcmp(cmd, "set")) {
		if (argc < 3)
			die_usage("pool set: no device given");
		cl->op = OP_SET;
		cl->dev = parse_dev("pool set", argv[2]);
		parse_settings(cl, argc - 3, argv + 3);
		return;
	}
	if (cl->what == SHOW_STATS && !strcmp(cmd, "reset")) {
		if (argc < 3)
			die_usage("stats reset: no device given");
		operands(argc - 2, 1, obj, cmd);
		cl->op = OP_RESET;
		cl->dev = parse_dev("stats reset", argv[2]);
		return;
	}
	die_usage("%s: unknown command '%s'", obj, cmd);
}

int main(int argc, char **argv)
{
	struct cmdline cl;
	struct ctl c;
	int ret;

	parse(argc, argv, &cl);
	ctl_open(&c);
	switch (cl.op) {
	case OP_SHOW:
		ret = do_show(&c, cl.what, cl.dev);
		break;
	case OP_SET:
		ret = do_pool_set(&c, cl.dev, cl.v, cl.n);
		break;
	case OP_RESET:
		ret = do_stats_reset(&c, cl.dev);
		break;
	case OP_LIST:
		ret = do_list(&c, &cl.fl);
		break;
	default:
		ret = do_monitor(&c);
		break;
	}
	nl_socket_free(c.sk);
	/* What was printed must have reached its file. */
	if (fflush(stdout) || ferror(stdout)) {
		perror("ordmactl: stdout");
		return EXIT_REFUSED;
	}
	return ret;
}
