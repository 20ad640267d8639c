// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "ordma" and ordmactl on rxe0: every value
 * DEV_GET returns equals its sysfs file, a transfer moves the byte counters
 * by exactly what it moved and STATS_RESET zeroes them, POOL_SET changes
 * settings through the sysfs setters and refuses bad ones (nothing applied,
 * the old values kept), the unprivileged may read but not change, the
 * events group reports channels, devices and settings, and a seeded fuzz of
 * malformed requests is refused, each with its exact errno. Every test
 * leaves rxe0's settings at their defaults.
 */
#define ORDMA_GUEST_TEST
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "ordma_chan.h"
#include "kselftest_harness.h"

#define CTL		"tools/ordmactl"
#define PORT_BASE	19400
#define MONITOR_OUT	"out/nl_test_monitor.jsonl"

#define DEF_POOL	(16ULL << 20)
#define DEF_CHUNK	(64ULL << 10)
#define DEF_QUOTA	64ULL
#define DEF_USER_QUOTA	192ULL
#define DEF_PROGRESS	30000ULL

/* Every value of DEV_GET that has a sysfs file of the same name. */
static const char *const numeric[] = {
	"pool_bytes", "chunk_bytes", "chunks_total", "chunks_free",
	"chunks_held", "high_water", "alloc_waits", "chan_quota_chunks",
	"user_quota_chunks", "progress_timeout_ms",
	"bytes_tx", "bytes_rx", "ops", "errors", "channels", "pages_pinned",
	"mrs_live", "bytes_placed", "bytes_copied", "bytes_zerocopy",
	"registrations", "reg_ns", "hidden_ns", "fallbacks", "peer_faults",
	"token_guesses",
	"model_pin_ns_page", "model_reg_ns", "model_copy_ps_byte",
	"model_wire_ps_byte", "model_wr_ns", "model_dereg_ns",
	"model_cpu_wire",
};

/* Those ordmactl shows as sizes in its plain output. */
static int is_size(const char *name)
{
	return !strcmp(name, "pool_bytes") || !strcmp(name, "chunk_bytes") ||
	       !strncmp(name, "bytes_", 6);
}

/* ordmactl's readable size: whole units exactly, else one decimal. */
static void human(char *buf, size_t n, unsigned long long v)
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
		snprintf(buf, n, "%llu %s", v >> (10 * i), unit[i]);
	else
		snprintf(buf, n, "%.1f %s", d, unit[i]);
}

/* Run a shell command: its exit status (-1 if it did not exit), its
 * stdout and stderr in @out.
 */
static int run(char *out, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int run(char *out, size_t n, const char *fmt, ...)
{
	char cmd[1024];
	size_t len = 0;
	va_list ap;
	FILE *p;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd) - 8, fmt, ap);
	va_end(ap);
	strcat(cmd, " 2>&1");
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (len + 1 < n && fgets(out + len, n - len, p))
		len += strlen(out + len);
	out[len] = '\0';
	while (fgetc(p) != EOF)
		;
	st = pclose(p);
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static unsigned long long knob(const char *name)
{
	unsigned long long v;

	return sysfs_get(name, &v) ? ~0ULL : v;
}

static void sysfs_string(const char *name, char *buf, size_t n)
{
	char path[256];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), CHAN_SYSFS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, n, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static int at_defaults(void)
{
	char mode[32];

	sysfs_string("mode", mode, sizeof(mode));
	return knob("pool_bytes") == DEF_POOL &&
	       knob("chunk_bytes") == DEF_CHUNK &&
	       knob("chan_quota_chunks") == DEF_QUOTA &&
	       knob("user_quota_chunks") == DEF_USER_QUOTA &&
	       knob("progress_timeout_ms") == DEF_PROGRESS &&
	       !strcmp(mode, "auto");
}

static void restore_defaults(void)
{
	sysfs_set("pool_bytes", DEF_POOL);
	sysfs_set("chunk_bytes", DEF_CHUNK);
	sysfs_set("pool_bytes", DEF_POOL);
	sysfs_set("chan_quota_chunks", DEF_QUOTA);
	sysfs_set("user_quota_chunks", DEF_USER_QUOTA);
	sysfs_set("progress_timeout_ms", DEF_PROGRESS);
	ordma_sh("echo auto > " CHAN_SYSFS "mode");
}

/*
 * "KEY VALUE" lines of ordmactl -j dev show rxe0, flattened by python
 * (which also proves it is JSON): the model's keys get "model_" in front.
 */
#define FLATTEN "python3 -c 'import json,sys\n" \
	"d = json.load(sys.stdin)\n" \
	"assert len(d) == 1\n" \
	"for k, v in d[0].items():\n" \
	"    if isinstance(v, dict):\n" \
	"        [print(\"model_\" + m, w) for m, w in v.items()]\n" \
	"    else:\n" \
	"        print(k, v)'"

/* The value of @key in "KEY VALUE" lines, or NULL. */
static const char *value_of(const char *lines, const char *key, char *buf,
			    size_t n)
{
	size_t klen = strlen(key);
	const char *p = lines;

	while (p && *p) {
		if (!strncmp(p, key, klen) && (p[klen] == ' ')) {
			const char *v = p + klen;
			size_t len;

			while (*v == ' ')
				v++;
			len = strcspn(v, "\n");
			if (len >= n)
				len = n - 1;
			memcpy(buf, v, len);
			buf[len] = '\0';
			return buf;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

/* ---- raw generic netlink, for exact errnos ------------------------------ */

struct gnl {
	int fd;
	uint16_t family;
	uint32_t seq;
	char msg[256];		/* the last error's extended ack message */
	char reply[8192];	/* the last data reply */
	int replies;
};

struct req {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	char attrs[4096];
};

static void req_init(struct req *r, uint16_t type, uint8_t cmd, uint16_t flags)
{
	memset(r, 0, sizeof(*r));
	r->nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->nh.nlmsg_type = type;
	r->nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	r->gh.cmd = cmd;
	r->gh.version = 1;
}

/* Append an attribute whose header says @nla_len (normally 4 + @len). */
static void req_put_raw(struct req *r, uint16_t type, uint16_t nla_len,
			const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = nla_len;
	if (len)
		memcpy(a + 1, data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + NLA_ALIGN(NLA_HDRLEN + len);
}

static void req_put(struct req *r, uint16_t type, const void *data, size_t len)
{
	req_put_raw(r, type, NLA_HDRLEN + len, data, len);
}

static void req_put_str(struct req *r, uint16_t type, const char *s)
{
	req_put(r, type, s, strlen(s) + 1);
}

static void req_put_u32(struct req *r, uint16_t type, uint32_t v)
{
	req_put(r, type, &v, sizeof(v));
}

/* Send @r, take the answers: 0 or the negative errno of its ack. */
static int gnl_xfer(struct gnl *g, struct req *r)
{
	char buf[16384];
	struct nlmsghdr *nh;
	ssize_t n;

	g->msg[0] = '\0';
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
				struct nlmsgerr *e = NLMSG_DATA(nh);
				size_t off = NLMSG_HDRLEN + sizeof(*e);
				struct nlattr *a;

				if (!(nh->nlmsg_flags & NLM_F_CAPPED))
					off += e->msg.nlmsg_len - NLMSG_HDRLEN;
				for (a = (struct nlattr *)((char *)nh + off);
				     (char *)a + NLA_HDRLEN <= (char *)nh + nh->nlmsg_len &&
				     a->nla_len >= NLA_HDRLEN;
				     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
					if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG)
						snprintf(g->msg, sizeof(g->msg), "%.*s",
							 (int)(a->nla_len - NLA_HDRLEN),
							 (char *)(a + 1));
				return e->error;
			}
			if (nh->nlmsg_type == NLMSG_DONE)
				return 0;
			g->replies++;
			if (nh->nlmsg_len <= sizeof(g->reply))
				memcpy(g->reply, nh, nh->nlmsg_len);
		}
	}
}

/* The family's id through the controller: 0, or a negative errno. */
static int gnl_open(struct gnl *g)
{
	struct timeval tv = { .tv_sec = 10 };
	struct nlmsghdr *nh;
	struct nlattr *a;
	struct req r;
	int one = 1, ret;
	size_t len;

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
	len = nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	for (a = (struct nlattr *)((char *)NLMSG_DATA(nh) + GENL_HDRLEN);
	     len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len;
	     len -= NLA_ALIGN(a->nla_len),
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			g->family = *(uint16_t *)(a + 1);
	return g->family ? 0 : -ENOENT;
}

/* The string attribute @type of the last reply, or "". */
static const char *reply_str(struct gnl *g, uint16_t type)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)g->reply;
	size_t len = nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	struct nlattr *a;

	for (a = (struct nlattr *)((char *)NLMSG_DATA(nh) + GENL_HDRLEN);
	     len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len;
	     len -= NLA_ALIGN(a->nla_len),
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
		if (a->nla_type == type)
			return (const char *)(a + 1);
	return "";
}

/* DEV_GET rxe0 over @g: 0 when it answers with rxe0, else an errno. */
static int dev_get_rxe0(struct gnl *g)
{
	struct req r;
	int ret;

	req_init(&r, g->family, ORDMA_NL_CMD_DEV_GET, 0);
	req_put_str(&r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
	ret = gnl_xfer(g, &r);
	if (ret)
		return ret;
	if (g->replies != 1 || strcmp(reply_str(g, ORDMA_NL_A_DEV_NAME), CHAN_IBDEV))
		return -EPROTO;
	return 0;
}

/* ---- a loopback channel in one file -------------------------------------- */

struct loop {
	int fd;
	__u32 lis, active, passive;
	unsigned short port;
};

static int loop_open(struct loop *l)
{
	struct ordma_accept a;
	int ret;

	memset(l, 0, sizeof(*l));
	l->port = chan_port(PORT_BASE);
	l->fd = chan_open();
	if (l->fd < 0)
		return -errno;
	ret = chan_listen(l->fd, AF_INET, l->port, 0, &l->lis);
	if (ret)
		return ret;
	ret = chan_connect(l->fd, AF_INET, l->port, &l->active);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.listener_id = l->lis;
	if (ioctl(l->fd, ORDMA_IOC_ACCEPT, &a) < 0)
		return -errno;
	l->passive = a.out_chan_id;
	return 0;
}

/* @len bytes from the active end to the passive one: 0 or an errno. */
static int loop_move(struct loop *l, size_t len)
{
	unsigned char *sbuf = malloc(len), *rbuf = malloc(len);
	__u64 cookies[2] = { chan_cookie(), chan_cookie() };
	long long res[2] = { -1, -1 };
	int ret = -ENOMEM;

	if (!sbuf || !rbuf)
		goto out;
	chan_fill(sbuf, len, chan_seed(len, 7));
	ret = xsubmit(l->fd, ORDMA_OP_RECV, l->passive, rbuf, len, cookies[0],
		      0, 0, 0);
	if (!ret)
		ret = xsubmit(l->fd, ORDMA_OP_SEND, l->active, sbuf, len,
			      cookies[1], 0, 0, 0);
	if (!ret)
		ret = xreap(l->fd, 2, cookies, res, CHAN_WAIT_MS);
	if (!ret && (res[0] != (long long)len || res[1] != (long long)len))
		ret = -EPROTO;
	if (!ret)
		ret = chan_check("received", rbuf, len, chan_seed(len, 7));
out:
	free(sbuf);
	free(rbuf);
	return ret;
}

/* ---- the fixture ---------------------------------------------------------- */

FIXTURE(nl) {
	struct gnl g;
	pid_t monitor;
};

FIXTURE_SETUP(nl)
{
	self->monitor = 0;
	self->g.fd = -1;
	ASSERT_TRUE(at_defaults());
	ASSERT_EQ(0, access(CTL, X_OK));
	ASSERT_EQ(0, gnl_open(&self->g));
}

FIXTURE_TEARDOWN(nl)
{
	if (self->monitor > 0) {
		kill(self->monitor, SIGKILL);
		waitpid(self->monitor, NULL, 0);
	}
	if (self->g.fd >= 0)
		close(self->g.fd);
	restore_defaults();
}

TEST_F(nl, dev_show_json_equals_sysfs)
{
	static char out[16384];
	char val[128], sys[128];
	unsigned int i, lines = 0;
	const char *p;

	ASSERT_EQ(0, run(out, sizeof(out), CTL " -j dev show " CHAN_IBDEV
			 " | python3 -m json.tool >/dev/null"));
	ASSERT_EQ(0, run(out, sizeof(out), CTL " -j dev show " CHAN_IBDEV
			 " | " FLATTEN)) TH_LOG("%s", out);
	/* Nothing moves on an idle device: sysfs now has the same values. */
	for (i = 0; i < ARRAY_SIZE(numeric); i++) {
		ASSERT_NE(NULL, value_of(out, numeric[i], val, sizeof(val)))
			TH_LOG("no %s in %s", numeric[i], out);
		snprintf(sys, sizeof(sys), "%llu", knob(numeric[i]));
		EXPECT_STREQ(sys, val) TH_LOG("%s", numeric[i]);
	}
	ASSERT_NE(NULL, value_of(out, "dev_name", val, sizeof(val)));
	EXPECT_STREQ(CHAN_IBDEV, val);
	ASSERT_NE(NULL, value_of(out, "port_state", val, sizeof(val)));
	EXPECT_STREQ("active", val);
	sysfs_string("mode", sys, sizeof(sys));
	ASSERT_NE(NULL, value_of(out, "mode", val, sizeof(val)));
	EXPECT_STREQ(sys, val);
	/* And nothing else: every key is one of those. */
	for (p = out; *p; p++)
		if (*p == '\n')
			lines++;
	EXPECT_EQ(ARRAY_SIZE(numeric) + 3, lines);
}

TEST_F(nl, dev_show_plain_names_the_same_values)
{
	static char out[16384];
	char val[128], want[128];
	unsigned int i;

	ASSERT_EQ(0, run(out, sizeof(out), CTL " dev show " CHAN_IBDEV));
	for (i = 0; i < ARRAY_SIZE(numeric); i++) {
		unsigned long long v = knob(numeric[i]);

		ASSERT_NE(NULL, value_of(out, numeric[i], val, sizeof(val)))
			TH_LOG("no %s in:\n%s", numeric[i], out);
		if (is_size(numeric[i]))
			human(want, sizeof(want), v);
		else
			snprintf(want, sizeof(want), "%llu", v);
		EXPECT_STREQ(want, val) TH_LOG("%s", numeric[i]);
	}
	ASSERT_NE(NULL, value_of(out, "dev_name", val, sizeof(val)));
	EXPECT_STREQ(CHAN_IBDEV, val);
	ASSERT_NE(NULL, value_of(out, "port_state", val, sizeof(val)));
	EXPECT_STREQ("active", val);
	ASSERT_NE(NULL, value_of(out, "pool_bytes", val, sizeof(val)));
	EXPECT_STREQ("16 MiB", val);
}

TEST_F(nl, dumps_list_rxe0_once)
{
	static char out[16384];

	ASSERT_EQ(0, run(out, sizeof(out), CTL " -j dev show | python3 -c "
			 "'import json,sys; d=json.load(sys.stdin); "
			 "print(sum(1 for x in d if x[\"dev_name\"] == \"rxe0\"), len(d))'"));
	EXPECT_STREQ("1 1\n", out);
	ASSERT_EQ(0, run(out, sizeof(out), CTL " -p pool show | python3 -c "
			 "'import json,sys; d=json.load(sys.stdin); "
			 "print(d[0][\"dev_name\"], d[0][\"chan_quota_chunks\"], \"bytes_tx\" in d[0])'"));
	EXPECT_STREQ("rxe0 64 False\n", out);
	ASSERT_EQ(0, run(out, sizeof(out), CTL " -j stats show | python3 -c "
			 "'import json,sys; d=json.load(sys.stdin); "
			 "print(d[0][\"dev_name\"], \"pool_bytes\" in d[0], \"ops\" in d[0])'"));
	EXPECT_STREQ("rxe0 False True\n", out);
}

TEST_F(nl, transfer_counts_exactly_and_reset_zeroes)
{
	const size_t len = 300000;
	static char out[16384];
	char val[64];
	struct loop l;

	ASSERT_EQ(0, run(out, sizeof(out), CTL " stats reset " CHAN_IBDEV))
		TH_LOG("%s", out);
	ASSERT_EQ(0ULL, knob("bytes_tx"));
	ASSERT_EQ(0ULL, knob("bytes_rx"));
	ASSERT_EQ(0ULL, knob("ops"));

	ASSERT_EQ(0, loop_open(&l));
	ASSERT_EQ(0, loop_move(&l, len));
	/* Both ends are on rxe0: it sent and received every byte once. */
	EXPECT_EQ((unsigned long long)len, knob("bytes_tx"));
	EXPECT_EQ((unsigned long long)len, knob("bytes_rx"));
	EXPECT_EQ(2ULL, knob("ops"));
	EXPECT_EQ(2ULL, knob("channels"));
	ASSERT_EQ(0, run(out, sizeof(out), CTL " -j stats show " CHAN_IBDEV
			 " | " FLATTEN));
	ASSERT_NE(NULL, value_of(out, "bytes_tx", val, sizeof(val)));
	EXPECT_EQ((unsigned long long)len, strtoull(val, NULL, 10));
	ASSERT_NE(NULL, value_of(out, "bytes_rx", val, sizeof(val)));
	EXPECT_EQ((unsigned long long)len, strtoull(val, NULL, 10));

	/* Counters to 0, the gauges stay: the channel is still open. */
	ASSERT_EQ(0, run(out, sizeof(out), CTL " stats reset " CHAN_IBDEV));
	EXPECT_EQ(0ULL, knob("bytes_tx"));
	EXPECT_EQ(0ULL, knob("bytes_rx"));
	EXPECT_EQ(0ULL, knob("ops"));
	EXPECT_EQ(0ULL, knob("bytes_copied") + knob("bytes_zerocopy"));
	EXPECT_EQ(0ULL, knob("alloc_waits"));
	EXPECT_EQ(2ULL, knob("channels"));
	EXPECT_LE(knob("chunks_held"), knob("high_water"));

	/* A chunk size change while chunks are held: EBUSY, nothing moves. */
	EXPECT_LT(0ULL, knob("chunks_held"));
	EXPECT_EQ(1, run(out, sizeof(out), CTL " pool set " CHAN_IBDEV
			 " chunk_bytes 131072"));
	EXPECT_NE(NULL, strstr(out, "chunks are held by channels: Device or resource busy"))
		TH_LOG("%s", out);
	EXPECT_EQ(DEF_CHUNK, knob("chunk_bytes"));

	close(l.fd);
}

TEST_F(nl, pool_set_changes_through_the_setters)
{
	static char out[4096];

	ASSERT_EQ(0, run(out, sizeof(out), CTL " pool set " CHAN_IBDEV
			 " chan_quota_chunks 32")) TH_LOG("%s", out);
	EXPECT_STREQ("", out);
	EXPECT_EQ(32ULL, knob("chan_quota_chunks"));

	ASSERT_EQ(0, run(out, sizeof(out), CTL " pool set " CHAN_IBDEV
			 " user_quota_chunks 100 mode copy progress_timeout_ms 1000"));
	EXPECT_EQ(100ULL, knob("user_quota_chunks"));
	EXPECT_EQ(1000ULL, knob("progress_timeout_ms"));
	EXPECT_EQ(0, ordma_sh("grep -qx copy " CHAN_SYSFS "mode"));

	/* Chunks first (they fit the pool), then the pool. */
	ASSERT_EQ(0, run(out, sizeof(out), CTL " pool set " CHAN_IBDEV
			 " chunk_bytes 1048576 pool_bytes 33554432"));
	EXPECT_EQ(1048576ULL, knob("chunk_bytes"));
	EXPECT_EQ(33554432ULL, knob("pool_bytes"));
	EXPECT_EQ(32ULL, knob("chunks_total"));
	/* A pool of one chunk, then chunks larger than it: the pool first. */
	ASSERT_EQ(0, run(out, sizeof(out), CTL " pool set " CHAN_IBDEV
			 " chunk_bytes 65536 pool_bytes 65536"));
	EXPECT_EQ(1ULL, knob("chunks_total"));
	ASSERT_EQ(0, run(out, sizeof(out), CTL " pool set " CHAN_IBDEV
			 " chunk_bytes 131072 pool_bytes 262144")) TH_LOG("%s", out);
	EXPECT_EQ(131072ULL, knob("chunk_bytes"));
	EXPECT_EQ(262144ULL, knob("pool_bytes"));
	EXPECT_EQ(2ULL, knob("chunks_total"));

	/* Back to the defaults, through netlink too. */
	ASSERT_EQ(0, run(out, sizeof(out), CTL " pool set " CHAN_IBDEV
			 " pool_bytes 16777216 chunk_bytes 65536 chan_quota_chunks 64"
			 " user_quota_chunks 192 mode auto progress_timeout_ms 30000"))
		TH_LOG("%s", out);
	EXPECT_TRUE(at_defaults());
	EXPECT_EQ(256ULL, knob("chunks_total"));
}

/* A bad POOL_SET through ordmactl: its exit status and what it says. */
FIXTURE(bad_set) {
	int unused;
};

FIXTURE_VARIANT(bad_set) {
	const char *args;
	int status;
	const char *says;
};

FIXTURE_SETUP(bad_set)
{
	ASSERT_TRUE(at_defaults());
	/* Not a default, so that a value put back is seen as such. */
	ASSERT_EQ(0, sysfs_set("chan_quota_chunks", 32));
}

FIXTURE_TEARDOWN(bad_set)
{
	restore_defaults();
}

#define BAD_SET(_name, _args, _status, _says)			\
	FIXTURE_VARIANT_ADD(bad_set, _name) {			\
		.args = _args,					\
		.status = _status,				\
		.says = _says,					\
	}

BAD_SET(quota_zero, "rxe0 chan_quota_chunks 0", 1,
	"pool set: chan_quota_chunks: from 1 to 65536: Invalid argument");
BAD_SET(quota_huge, "rxe0 chan_quota_chunks 65537", 1,
	"pool set: chan_quota_chunks: from 1 to 65536: Invalid argument");
BAD_SET(quota_beyond_u32, "rxe0 chan_quota_chunks 4294967296", 2,
	"'4294967296' is not a number from 0 to 4294967295 (chan_quota_chunks)");
BAD_SET(quota_not_a_number, "rxe0 chan_quota_chunks lots", 2,
	"'lots' is not a number from 0 to 4294967295 (chan_quota_chunks)");
BAD_SET(quota_negative, "rxe0 chan_quota_chunks -1", 2, "");
BAD_SET(unknown_key, "rxe0 quota 16", 2, "unknown setting 'quota'");
BAD_SET(no_value, "rxe0 chan_quota_chunks", 2,
	"no value for 'chan_quota_chunks'");
BAD_SET(twice, "rxe0 chan_quota_chunks 16 chan_quota_chunks 8", 2,
	"'chan_quota_chunks' given twice");
BAD_SET(nothing, "rxe0", 2, "no KEY VALUE given");
BAD_SET(unknown_device, "nodev0 chan_quota_chunks 16", 1,
	"pool set: no ordma device of that name: No such device");
BAD_SET(bad_mode, "rxe0 mode fast", 1,
	"pool set: mode: auto, copy, zerocopy or overlap: Invalid argument");
BAD_SET(chunk_not_pow2, "rxe0 chunk_bytes 5000", 1,
	"chunk_bytes: a power of two from 4096 to 1048576, at most pool_bytes: Invalid argument");
BAD_SET(pool_too_big, "rxe0 pool_bytes 1073741825", 1,
	"pool_bytes: from chunk_bytes to 1073741824: Invalid argument");
BAD_SET(progress_short, "rxe0 progress_timeout_ms 99", 1,
	"progress_timeout_ms: from 100 to 3600000: Invalid argument");
/* Checked before any is applied: the good quota is not applied either. */
BAD_SET(one_bad_of_two, "rxe0 chan_quota_chunks 16 user_quota_chunks 0", 1,
	"user_quota_chunks: from 1 to 65536: Invalid argument");
BAD_SET(chunk_above_new_pool, "rxe0 chan_quota_chunks 16 chunk_bytes 131072 pool_bytes 65536", 1,
	"pool_bytes: from chunk_bytes to 1073741824: Invalid argument");

TEST_F(bad_set, refused_and_unchanged)
{
	static char out[4096];

	EXPECT_EQ(variant->status,
		  run(out, sizeof(out), CTL " pool set %s", variant->args));
	EXPECT_NE(NULL, strstr(out, variant->says)) TH_LOG("%s", out);
	EXPECT_EQ(32ULL, knob("chan_quota_chunks"));
	EXPECT_EQ(DEF_USER_QUOTA, knob("user_quota_chunks"));
	EXPECT_EQ(DEF_POOL, knob("pool_bytes"));
	EXPECT_EQ(DEF_CHUNK, knob("chunk_bytes"));
	EXPECT_EQ(DEF_PROGRESS, knob("progress_timeout_ms"));
	EXPECT_EQ(0, ordma_sh("grep -qx auto " CHAN_SYSFS "mode"));
}

/* The kernel's own answers: the errno and the attribute named. */
TEST_F(nl, kernel_refusals_name_the_attribute)
{
	struct gnl *g = &self->g;
	struct req r;

	req_init(&r, g->family, ORDMA_NL_CMD_POOL_SET, 0);
	req_put_str(&r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
	req_put_u32(&r, ORDMA_NL_A_CHAN_QUOTA_CHUNKS, 0);
	EXPECT_EQ(-EINVAL, gnl_xfer(g, &r));
	EXPECT_STREQ("chan_quota_chunks: from 1 to 65536", g->msg);

	req_init(&r, g->family, ORDMA_NL_CMD_POOL_SET, 0);
	req_put_str(&r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
	EXPECT_EQ(-EINVAL, gnl_xfer(g, &r));
	EXPECT_STREQ("no setting given", g->msg);

	req_init(&r, g->family, ORDMA_NL_CMD_DEV_GET, 0);
	EXPECT_EQ(-EINVAL, gnl_xfer(g, &r));
	EXPECT_STREQ("dev_name missing: name the device", g->msg);

	req_init(&r, g->family, ORDMA_NL_CMD_STATS_RESET, 0);
	req_put_str(&r, ORDMA_NL_A_DEV_NAME, "nodev0");
	EXPECT_EQ(-ENODEV, gnl_xfer(g, &r));
	EXPECT_STREQ("no ordma device of that name", g->msg);

	/* A gauge is not a setting. */
	req_init(&r, g->family, ORDMA_NL_CMD_POOL_SET, 0);
	req_put_str(&r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
	req_put_u32(&r, ORDMA_NL_A_CHUNKS_TOTAL, 1);
	EXPECT_EQ(-EINVAL, gnl_xfer(g, &r));
	EXPECT_STREQ("Unsupported attribute", g->msg);

	/* Notifications are not commands. */
	req_init(&r, g->family, ORDMA_NL_CMD_CHAN_UP, 0);
	EXPECT_EQ(-EOPNOTSUPP, gnl_xfer(g, &r));

	EXPECT_EQ(0, dev_get_rxe0(g));
	EXPECT_EQ(DEF_QUOTA, knob("chan_quota_chunks"));
}

/* As nobody: reading works, changing is EPERM, through ordmactl too. */
TEST_F(nl, nobody_reads_but_does_not_change)
{
	static char out[4096];
	pid_t pid;
	int st;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct gnl g;
		struct req r;
		int bad = 0;

		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534) || gnl_open(&g))
			_exit(10);
		if (dev_get_rxe0(&g))
			bad |= 1;
		req_init(&r, g.family, ORDMA_NL_CMD_POOL_SET, 0);
		req_put_str(&r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
		req_put_u32(&r, ORDMA_NL_A_CHAN_QUOTA_CHUNKS, 8);
		if (gnl_xfer(&g, &r) != -EPERM)
			bad |= 2;
		req_init(&r, g.family, ORDMA_NL_CMD_STATS_RESET, 0);
		req_put_str(&r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
		if (gnl_xfer(&g, &r) != -EPERM)
			bad |= 4;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));

#define NOBODY "setpriv --reuid=65534 --regid=65534 --clear-groups "
	EXPECT_EQ(0, run(out, sizeof(out), NOBODY CTL " -j dev show " CHAN_IBDEV
			 " | python3 -m json.tool >/dev/null"));
	EXPECT_EQ(1, run(out, sizeof(out), NOBODY CTL " pool set " CHAN_IBDEV
			 " chan_quota_chunks 8"));
	EXPECT_STREQ("ordmactl: pool set: Operation not permitted\n", out);
	EXPECT_EQ(1, run(out, sizeof(out), NOBODY CTL " stats reset " CHAN_IBDEV));
	EXPECT_STREQ("ordmactl: stats reset: Operation not permitted\n", out);
	EXPECT_EQ(DEF_QUOTA, knob("chan_quota_chunks"));
}

/* ---- the events group ---------------------------------------------------- */

/* "event dev qpn peer_port errno chan_quota_chunks" per line of the file. */
#define EVENTS "python3 -c 'import json,sys\n" \
	"for l in open(sys.argv[1]):\n" \
	"    e = json.loads(l)\n" \
	"    print(e[\"event\"], e.get(\"dev_name\", \"-\"), e.get(\"chan_qpn\", 0), " \
	"e.get(\"peer_port\", 0), e.get(\"errno\", 0), e.get(\"chan_quota_chunks\", 0))' "

struct event {
	char name[32], dev[32];
	unsigned int qpn, port, err, quota;
};

/* The events the monitor wrote so far: how many, or -1. */
static int events_read(struct event *ev, int max)
{
	static char out[65536];
	char *line;
	int n = 0;

	if (run(out, sizeof(out), EVENTS MONITOR_OUT))
		return -1;
	for (line = strtok(out, "\n"); line && n < max; line = strtok(NULL, "\n")) {
		if (sscanf(line, "%31s %31s %u %u %u %u", ev[n].name, ev[n].dev,
			   &ev[n].qpn, &ev[n].port, &ev[n].err,
			   &ev[n].quota) == 6)
			n++;
	}
	return n;
}

/* How many events named @name (with @quota, unless 0) are there. */
static int events_count(const struct event *ev, int n, const char *name,
			unsigned int quota)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (!strcmp(ev[i].name, name) && (!quota || ev[i].quota == quota))
			k++;
	return k;
}

/* Wait up to 20 s for @want events named @name: the count seen. */
static int events_wait(struct event *ev, int max, int *n, const char *name,
		       unsigned int quota, int want)
{
	long long end = chan_now_ms() + 20000;
	int k;

	for (;;) {
		*n = events_read(ev, max);
		k = *n < 0 ? 0 : events_count(ev, *n, name, quota);
		if (k >= want || chan_now_ms() > end)
			return k;
		chan_sleep_ms(50);
	}
}

static pid_t monitor_start(void)
{
	pid_t pid;
	int fd;

	mkdir("out", 0755);
	fd = open(MONITOR_OUT, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	pid = fork();
	if (!pid) {
		dup2(fd, 1);
		execl(CTL, CTL, "monitor", "-j", (char *)NULL);
		_exit(127);
	}
	close(fd);
	return pid;
}

TEST_F_TIMEOUT(nl, monitor_sees_channels_devices_and_settings, 120)
{
	static struct event ev[64];
	static char out[4096];
	int n, i, up_active = -1, up_passive = -1;
	struct ordma_chan_info ci;
	long long end;
	struct loop l;
	int st;

	self->monitor = monitor_start();
	ASSERT_LT(0, self->monitor);
	/* It has joined once a setting written after its start shows. */
	end = chan_now_ms() + 20000;
	do {
		ASSERT_EQ(0, run(out, sizeof(out), CTL " pool set " CHAN_IBDEV
				 " chan_quota_chunks 64"));
		chan_sleep_ms(100);
		n = events_read(ev, 64);
	} while ((n <= 0 || !events_count(ev, n, "pool_changed", 64)) &&
		 chan_now_ms() < end);
	ASSERT_LT(0, events_count(ev, n, "pool_changed", 64));

	/* A channel: both ends come up, both go down. */
	ASSERT_EQ(0, loop_open(&l));
	ASSERT_EQ(2, events_wait(ev, 64, &n, "chan_up", 0, 2));
	for (i = 0; i < n; i++) {
		if (strcmp(ev[i].name, "chan_up"))
			continue;
		EXPECT_STREQ(CHAN_IBDEV, ev[i].dev);
		EXPECT_NE(0U, ev[i].qpn);
		EXPECT_EQ(0U, ev[i].err);
		if (ev[i].port == l.port)
			up_active = i;
		else
			up_passive = i;
	}
	ASSERT_LE(0, up_active);
	ASSERT_LE(0, up_passive);
	EXPECT_NE(ev[up_active].qpn, ev[up_passive].qpn);

	ASSERT_EQ(0, chan_close(l.fd, l.active));
	/* The passive end learns its peer left before it is closed. */
	end = chan_now_ms() + 20000;
	do {
		ASSERT_EQ(0, chan_info(l.fd, l.passive, &ci));
		if (ci.out_state == ORDMA_CHAN_DISCONNECTED)
			break;
		chan_sleep_ms(20);
	} while (chan_now_ms() < end);
	ASSERT_EQ((__u32)ORDMA_CHAN_DISCONNECTED, ci.out_state);
	ASSERT_EQ(0, chan_close(l.fd, l.passive));
	close(l.fd);
	ASSERT_EQ(2, events_wait(ev, 64, &n, "chan_down", 0, 2));
	for (i = 0; i < n; i++) {
		if (strcmp(ev[i].name, "chan_down"))
			continue;
		EXPECT_STREQ(CHAN_IBDEV, ev[i].dev);
		if (ev[i].qpn == ev[up_active].qpn) {
			/* Closed by its owner. */
			EXPECT_EQ(l.port, ev[i].port);
			EXPECT_EQ((unsigned int)ECANCELED, ev[i].err);
		} else {
			EXPECT_EQ(ev[up_passive].qpn, ev[i].qpn);
			EXPECT_EQ(ev[up_passive].port, ev[i].port);
			EXPECT_EQ((unsigned int)ENOTCONN, ev[i].err);
		}
	}

	/* The device goes and comes back. */
	ASSERT_EQ(0, ordma_sh("rdma link del " CHAN_IBDEV));
	EXPECT_EQ(1, events_wait(ev, 64, &n, "dev_del", 0, 1));
	ASSERT_EQ(0, ordma_sh("rdma link add " CHAN_IBDEV " type rxe netdev ordma0"));
	EXPECT_EQ(1, events_wait(ev, 64, &n, "dev_add", 0, 1));
	for (i = 0; i < n; i++)
		if (!strncmp(ev[i].name, "dev_", 4))
			EXPECT_STREQ(CHAN_IBDEV, ev[i].dev);

	/* A change through netlink, and one through sysfs. */
	ASSERT_EQ(0, run(out, sizeof(out), CTL " pool set " CHAN_IBDEV
			 " chan_quota_chunks 33"));
	EXPECT_EQ(1, events_wait(ev, 64, &n, "pool_changed", 33, 1));
	ASSERT_EQ(0, sysfs_set("chan_quota_chunks", 34));
	EXPECT_EQ(1, events_wait(ev, 64, &n, "pool_changed", 34, 1));
	/* A refused change tells nobody. */
	EXPECT_EQ(1, run(out, sizeof(out), CTL " pool set " CHAN_IBDEV
			 " chan_quota_chunks 0"));

	kill(self->monitor, SIGTERM);
	ASSERT_EQ(self->monitor, waitpid(self->monitor, &st, 0));
	self->monitor = 0;
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	n = events_read(ev, 64);
	EXPECT_EQ(0, events_count(ev, n, "pool_changed", 0) -
		     events_count(ev, n, "pool_changed", 64) -
		     events_count(ev, n, "pool_changed", 33) -
		     events_count(ev, n, "pool_changed", 34));
	EXPECT_EQ(2, events_count(ev, n, "chan_up", 0));
	EXPECT_EQ(2, events_count(ev, n, "chan_down", 0));
}

/* ---- a seeded fuzz of malformed requests ----------------------------------- */

static uint64_t rng_state;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 11);
}

/* The commands a request may carry, the admin ones included (we are root). */
static const uint8_t fuzz_cmds[] = {
	ORDMA_NL_CMD_DEV_GET, ORDMA_NL_CMD_POOL_GET, ORDMA_NL_CMD_POOL_SET,
	ORDMA_NL_CMD_STATS_RESET,
};

enum fuzz_kind {
	FUZZ_UNKNOWN_CMD,	/* EOPNOTSUPP */
	FUZZ_TRUNCATED_ATTR,	/* nla_len past the end: EINVAL */
	FUZZ_TRAILING_BYTES,	/* 1-3 bytes after the last attribute */
	FUZZ_UNKNOWN_ATTR,	/* a type the command's policy has not */
	FUZZ_BAD_INT_LEN,	/* a u32 or u64 setting of another size */
	FUZZ_NESTED_GARBAGE,	/* NLA_F_NESTED on a string, junk inside */
	FUZZ_LONG_STRING,	/* a name or mode past its length, no NUL */
	FUZZ_NO_NUL,		/* a name without its NUL */
	FUZZ_NO_NAME,		/* no device name: EINVAL */
	FUZZ_NO_DEVICE,		/* a name nobody has: ENODEV */
	FUZZ_BAD_HEADER,	/* reserved byte, flags, short header */
	FUZZ_BAD_VALUE,		/* POOL_SET rxe0 with a value out of range */
	FUZZ_RANDOM_ATTRS,	/* random bytes as attributes */
	FUZZ_NR,
};

/*
 * Build request @i of the fuzz into @r: the errno it must get (or 0 for
 * "EINVAL, ERANGE or ENODEV", random bytes), and whether the kernel's
 * answer must carry an extended ack message.
 */
static int fuzz_build(struct gnl *g, struct req *r, enum fuzz_kind kind,
		      int *msg_wanted)
{
	uint8_t cmd = fuzz_cmds[rng() % ARRAY_SIZE(fuzz_cmds)];
	uint16_t dump = (cmd == ORDMA_NL_CMD_DEV_GET ||
			 cmd == ORDMA_NL_CMD_POOL_GET) && rng() % 2 ? NLM_F_DUMP : 0;
	char junk[512];
	unsigned int i, len;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = 'a' + rng() % 26;
	*msg_wanted = 1;
	switch (kind) {
	case FUZZ_UNKNOWN_CMD:
		do {
			cmd = rng() % 256;
		} while (cmd >= ORDMA_NL_CMD_DEV_GET && cmd <= ORDMA_NL_CMD_STATS_RESET);
		req_init(r, g->family, cmd, 0);
		req_put_str(r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
		*msg_wanted = 0;
		return -EOPNOTSUPP;
	case FUZZ_TRUNCATED_ATTR:
		req_init(r, g->family, cmd, dump);
		/* Past the 12 bytes the attribute takes. */
		req_put_raw(r, ORDMA_NL_A_DEV_NAME, NLA_HDRLEN + 9 + rng() % 200,
			    "rxe0", 5);
		return -EINVAL;
	case FUZZ_TRAILING_BYTES:
		req_init(r, g->family, cmd, dump);
		req_put_str(r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
		r->nh.nlmsg_len += 1 + rng() % 3;
		return -EINVAL;
	case FUZZ_UNKNOWN_ATTR:
		req_init(r, g->family, cmd, dump);
		req_put_str(r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
		/* Type 0, a type out of the command's range, or a gauge. */
		switch (rng() % 3) {
		case 0:
			req_put_u32(r, 0, rng());
			break;
		case 1:
			req_put_u32(r, ORDMA_NL_A_PROGRESS_TIMEOUT_MS + 1 +
				    rng() % 1000, rng());
			break;
		default:
			req_put_u32(r, ORDMA_NL_A_CHUNKS_TOTAL + rng() % 5, rng());
			break;
		}
		return -EINVAL;
	case FUZZ_BAD_INT_LEN:
		req_init(r, g->family, ORDMA_NL_CMD_POOL_SET, 0);
		req_put_str(r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
		len = 1 + rng() % 12;
		if (rng() % 2)
			req_put(r, ORDMA_NL_A_POOL_BYTES, junk, len == 8 ? 4 : len);
		else
			req_put(r, ORDMA_NL_A_CHAN_QUOTA_CHUNKS + rng() % 2, junk,
				len == 4 ? 2 : len);
		return -EINVAL;
	case FUZZ_NESTED_GARBAGE:
		req_init(r, g->family, cmd, dump);
		len = 4 + rng() % 64;
		req_put(r, ORDMA_NL_A_DEV_NAME | NLA_F_NESTED, junk, len);
		return -EINVAL;
	case FUZZ_LONG_STRING:
		len = 64 + rng() % 400;
		if (rng() % 2 || cmd != ORDMA_NL_CMD_POOL_SET) {
			req_init(r, g->family, cmd, dump);
			junk[len] = '\0';
			req_put(r, ORDMA_NL_A_DEV_NAME, junk, len + 1);
		} else {
			req_init(r, g->family, cmd, 0);
			req_put_str(r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
			len = 16 + rng() % 100;
			junk[len] = '\0';
			req_put(r, ORDMA_NL_A_MODE, junk, len + 1);
		}
		return -EINVAL;
	case FUZZ_NO_NUL:
		req_init(r, g->family, cmd, dump);
		req_put(r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV, strlen(CHAN_IBDEV));
		return -EINVAL;
	case FUZZ_NO_NAME:
		req_init(r, g->family, cmd, 0);
		if (cmd == ORDMA_NL_CMD_POOL_SET)
			req_put_u32(r, ORDMA_NL_A_CHAN_QUOTA_CHUNKS, 16);
		return -EINVAL;
	case FUZZ_NO_DEVICE:
		req_init(r, g->family, cmd, 0);
		snprintf(junk, sizeof(junk), "fuzz%u", rng() % 100000);
		req_put_str(r, ORDMA_NL_A_DEV_NAME, junk);
		if (cmd == ORDMA_NL_CMD_POOL_SET)
			req_put_u32(r, ORDMA_NL_A_CHAN_QUOTA_CHUNKS, 16);
		return -ENODEV;
	case FUZZ_BAD_HEADER:
		req_init(r, g->family, cmd, 0);
		req_put_str(r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
		switch (rng() % 3) {
		case 0:
			r->gh.reserved = 1 + rng() % 0xffff;
			break;
		case 1:
			/* NLM_F_REPLACE or NLM_F_EXCL: not for genetlink. */
			r->nh.nlmsg_flags |= rng() % 2 ? 0x100 : 0x200;
			break;
		default:
			r->nh.nlmsg_len = NLMSG_HDRLEN + rng() % GENL_HDRLEN;
			*msg_wanted = 0;
			break;
		}
		return -EINVAL;
	case FUZZ_BAD_VALUE:
		req_init(r, g->family, ORDMA_NL_CMD_POOL_SET, 0);
		req_put_str(r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
		switch (rng() % 5) {
		case 0:
			req_put_u32(r, ORDMA_NL_A_CHAN_QUOTA_CHUNKS,
				    rng() % 2 ? 0 : 65537 + rng() % 1000000);
			break;
		case 1:
			req_put_u32(r, ORDMA_NL_A_CHUNK_BYTES,
				    (1U << (rng() % 32)) + 1 + rng() % 3);
			break;
		case 2:
			req_put_str(r, ORDMA_NL_A_MODE, rng() % 2 ? "" : "fast");
			break;
		case 3:
			req_put_u32(r, ORDMA_NL_A_PROGRESS_TIMEOUT_MS, rng() % 100);
			break;
		default: {
			uint64_t v = (1ULL << 30) + 1 + rng();

			req_put(r, ORDMA_NL_A_POOL_BYTES, &v, sizeof(v));
			break;
		}
		}
		return -EINVAL;
	default:
		req_init(r, g->family, cmd, 0);
		len = 1 + rng() % 256;
		for (i = 0; i < len; i++)
			r->attrs[i] = rng();
		r->nh.nlmsg_len += len;
		*msg_wanted = 0;
		return 0;
	}
}

TEST_F_TIMEOUT(nl, fuzz_is_refused, 300)
{
	unsigned int n = ordma_scaled(2000, 200), i, seed;
	unsigned int counts[FUZZ_NR] = { 0 };
	const char *env = getenv("ORDMA_TEST_SEED");
	struct gnl *g = &self->g;
	int want, got, msg_wanted;
	enum fuzz_kind kind;
	struct req r;

	seed = env ? strtoul(env, NULL, 0) : (unsigned int)time(NULL);
	TH_LOG("seed %u (ORDMA_TEST_SEED=%u replays it)", seed, seed);
	rng_state = 0x9e3779b97f4a7c15ULL ^ seed;
	for (i = 0; i < n; i++) {
		kind = rng() % FUZZ_NR;
		want = fuzz_build(g, &r, kind, &msg_wanted);
		got = gnl_xfer(g, &r);
		counts[kind]++;
		if (want) {
			ASSERT_EQ(want, got)
				TH_LOG("request %u, kind %d: %s", i, kind, g->msg);
		} else {
			ASSERT_TRUE(got == -EINVAL || got == -ERANGE ||
				    got == -ENODEV)
				TH_LOG("request %u, random attributes: %d", i, got);
		}
		if (msg_wanted) {
			ASSERT_NE('\0', g->msg[0])
				TH_LOG("request %u, kind %d: no message", i, kind);
		}
	}
	for (i = 0; i < FUZZ_NR; i++)
		EXPECT_LT(0U, counts[i]) TH_LOG("kind %u never drawn", i);
	/* Still serving, nothing changed. */
	EXPECT_EQ(0, dev_get_rxe0(g));
	EXPECT_TRUE(at_defaults());
	EXPECT_EQ(DEF_POOL / DEF_CHUNK, knob("chunks_total"));
}

TEST_HARNESS_MAIN
