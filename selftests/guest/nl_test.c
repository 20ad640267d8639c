// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "ordma" and ordmactl on CHAN_IBDEV: every value
 * DEV_GET returns equals its sysfs file, dumps list the device once (or, by
 * name, alone), a transfer moves the byte counters by exactly what it moved
 * and STATS_RESET zeroes them, POOL_SET changes settings through the sysfs
 * setters and refuses bad ones with the exact errno, message and range
 * (nothing applied), the unprivileged may read but neither change nor join
 * the events group, the events group reports channels (CHAN_UP before
 * CHAN_DOWN, once each), settings (only a change) and devices (rdma link
 * del/add, in a fixture of its own that puts it back), the pin cache's
 * counters count a source sent twice and then unmapped (STATS_RESET zeroes
 * them, not cache_pages), channel ends, listeners and windows are listed
 * (ordmactl chan, listener and window show) with their states, addresses
 * and exact counters, in JSON and in tables of the same rows, filtered by
 * process, to their owner's user alone without CAP_NET_ADMIN, each once
 * in a dump of 200, and gone once closed, and a seeded fuzz of malformed
 * requests is refused, each with its exact errno. Every test leaves the
 * device's settings at their defaults.
 *
 * Run from anywhere: the repository is found from this binary's own path
 * (<repo>/selftests/guest/nl_test). The monitor writes into the guest's
 * own /tmp: the repository is shared by the guests make check runs side by
 * side, and a file there would be one file for both.
 * Waits are 7 times longer with ORDMA_TEST_SMALL (the KASAN kernel), and
 * every test's timeout is above the sum of its waits.
 */
#define ORDMA_GUEST_TEST
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "ordma_chan.h"
#include "ordma_gnl.h"
#include "kselftest_harness.h"

#define PORT_BASE	19400

#define DEF_POOL	(16ULL << 20)
#define DEF_CHUNK	(64ULL << 10)
#define DEF_QUOTA	64ULL
#define DEF_USER_QUOTA	192ULL
#define DEF_PROGRESS	30000ULL
#define DEF_CACHE	(64ULL << 20)
/* The largest cache_max_bytes. */
#define CACHE_MAX_MAX	(1ULL << 40)

/* The fuzz replays this unless ORDMA_TEST_SEED says otherwise. */
#define FUZZ_SEED	20261202U

/*
 * One wait for an event, a state or a device: WAIT_MAX_S at most, at every
 * scale. It is a bound on a hang, not a time anything takes: a loaded host
 * or the debug kernel at full scale (ORDMA_TEST_FULL) is as slow as the
 * debug kernel under ORDMA_TEST_SMALL. A test's timeout is its number of
 * waits times WAIT_MAX_S, plus SLACK_S for the rest (a channel's connect
 * and transfer count as CHAN_S).
 */
#define WAIT_MAX_S	70
#define SLACK_S		60
#define CHAN_S		((CHAN_WAIT_MS + 30000) / 1000)

static long long wait_ms(void)
{
	return WAIT_MAX_S * 1000LL;
}

/* ---- paths --------------------------------------------------------------- */

static char repo[PATH_MAX];
static char ctl[PATH_MAX + 32];
static const char monitor_out[] = "/tmp/nl_test_monitor.jsonl";

/* The repository: this binary is <repo>/selftests/guest/nl_test. */
static void __attribute__((constructor)) paths_init(void)
{
	ssize_t n = readlink("/proc/self/exe", repo, sizeof(repo) - 1);
	char *slash;
	int up;

	if (n <= 0) {
		repo[0] = '\0';
		return;
	}
	repo[n] = '\0';
	for (up = 0; up < 3; up++) {
		slash = strrchr(repo, '/');
		if (!slash) {
			repo[0] = '\0';
			return;
		}
		*slash = '\0';
	}
	snprintf(ctl, sizeof(ctl), "%s/tools/ordmactl", repo);
}

/* ---- values of the device ----------------------------------------------- */

/* Every value of DEV_GET that has a sysfs file of the same name. */
static const char *const numeric[] = {
	"pool_bytes", "chunk_bytes", "chunks_total", "chunks_free",
	"chunks_held", "high_water", "alloc_waits", "chan_quota_chunks",
	"user_quota_chunks", "progress_timeout_ms", "cache_max_bytes",
	"bytes_tx", "bytes_rx", "ops", "errors", "channels", "pages_pinned",
	"mrs_live", "bytes_placed", "bytes_copied", "bytes_zerocopy",
	"registrations", "reg_ns", "hidden_ns", "fallbacks", "peer_faults",
	"token_guesses", "cache_hits", "cache_misses", "cache_invalidations",
	"cache_pages",
	"model_pin_ns_page", "model_reg_ns", "model_copy_ps_byte",
	"model_wire_ps_byte", "model_wr_ns", "model_dereg_ns",
	"model_cpu_wire",
};

/* Those ordmactl shows as sizes in its plain output. */
static int is_size(const char *name)
{
	return !strcmp(name, "pool_bytes") || !strcmp(name, "chunk_bytes") ||
	       !strcmp(name, "cache_max_bytes") || !strncmp(name, "bytes_", 6);
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

/*
 * Run a shell command: its exit status (-1 if it did not exit), its
 * stdout and stderr in @out.
 */
static int run(char *out, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int run(char *out, size_t n, const char *fmt, ...)
{
	char cmd[2048];
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
	ordma_sysfs(path, sizeof(path), name);
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
	       knob("cache_max_bytes") == DEF_CACHE &&
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
	sysfs_set("cache_max_bytes", DEF_CACHE);
	ordma_sh("echo auto > /sys/class/ordma/%s/mode", CHAN_IBDEV);
}

/* ---- ordmactl's JSON, parsed here --------------------------------------- */

/* A member of an object; a nested object's members are PARENT_KEY. */
struct jkv {
	char key[48];
	char val[96];
	bool str, null;
};

struct jobj {
	struct jkv kv[64];
	int n;
};

static void jws(const char **p)
{
	while (**p == ' ' || **p == '\n' || **p == '\t' || **p == '\r')
		(*p)++;
}

/* A JSON string at *@p into @buf (\u escapes above 0x7f as '?'). */
static int jstring(const char **p, char *buf, size_t n)
{
	unsigned int u;
	size_t len = 0;
	char c;

	if (**p != '"')
		return -1;
	(*p)++;
	while (**p && **p != '"') {
		c = *(*p)++;
		if ((unsigned char)c < 0x20)
			return -1;
		if (c == '\\') {
			c = *(*p)++;
			switch (c) {
			case '"': case '\\': case '/':
				break;
			case 'b':
				c = '\b';
				break;
			case 'f':
				c = '\f';
				break;
			case 'n':
				c = '\n';
				break;
			case 'r':
				c = '\r';
				break;
			case 't':
				c = '\t';
				break;
			case 'u':
				if (sscanf(*p, "%4x", &u) != 1)
					return -1;
				*p += 4;
				c = u < 0x80 ? (char)u : '?';
				break;
			default:
				return -1;
			}
		}
		if (len + 1 < n)
			buf[len++] = c;
	}
	if (**p != '"')
		return -1;
	(*p)++;
	buf[len] = '\0';
	return 0;
}

/* One object at *@p: its members into @o, a nested one's as PREFIXKEY. */
static int jobject(const char **p, struct jobj *o, const char *prefix)
{
	char key[48], nested[64];
	struct jkv *kv;
	size_t k;

	jws(p);
	if (**p != '{')
		return -1;
	(*p)++;
	jws(p);
	if (**p == '}') {
		(*p)++;
		return 0;
	}
	for (;;) {
		jws(p);
		if (jstring(p, key, sizeof(key)))
			return -1;
		jws(p);
		if (**p != ':')
			return -1;
		(*p)++;
		jws(p);
		if (**p == '{') {
			snprintf(nested, sizeof(nested), "%s%s_", prefix, key);
			if (jobject(p, o, nested))
				return -1;
		} else {
			if (o->n == (int)ARRAY_SIZE(o->kv))
				return -1;
			kv = &o->kv[o->n++];
			memset(kv, 0, sizeof(*kv));
			snprintf(kv->key, sizeof(kv->key), "%s%s", prefix, key);
			if (**p == '"') {
				kv->str = true;
				if (jstring(p, kv->val, sizeof(kv->val)))
					return -1;
			} else if (!strncmp(*p, "null", 4)) {
				kv->null = true;
				*p += 4;
			} else {
				k = strspn(*p, "0123456789");
				if (!k || k >= sizeof(kv->val))
					return -1;
				memcpy(kv->val, *p, k);
				*p += k;
			}
		}
		jws(p);
		if (**p == ',') {
			(*p)++;
			continue;
		}
		if (**p != '}')
			return -1;
		(*p)++;
		return 0;
	}
}

/* An array of objects (a show command's -j output): how many, or -1. */
static int jarray(const char *text, struct jobj *o, int max)
{
	const char *p = text;
	int n = 0;

	jws(&p);
	if (*p++ != '[')
		return -1;
	jws(&p);
	if (*p == ']')
		return 0;
	for (;;) {
		if (n == max)
			return -1;
		memset(&o[n], 0, sizeof(o[n]));
		if (jobject(&p, &o[n++], ""))
			return -1;
		jws(&p);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p != ']')
			return -1;
		p++;
		jws(&p);
		return *p ? -1 : n;
	}
}

static const struct jkv *jget(const struct jobj *o, const char *key)
{
	int i;

	for (i = 0; i < o->n; i++)
		if (!strcmp(o->kv[i].key, key))
			return &o->kv[i];
	return NULL;
}

/* The object of @n whose dev_name is @dev, if exactly one has it. */
static const struct jobj *jdev(const struct jobj *o, int n, const char *dev)
{
	const struct jobj *found = NULL;
	const struct jkv *kv;
	int i;

	for (i = 0; i < n; i++) {
		kv = jget(&o[i], "dev_name");
		if (!kv || !kv->str || strcmp(kv->val, dev))
			continue;
		if (found)
			return NULL;
		found = &o[i];
	}
	return found;
}

/* The type of the attribute at the offset the last error named, or -1. */
static int gnl_offs_type(const struct gnl *g, const struct req *r)
{
	const struct nlattr *a;

	if (g->offs < (int)NLMSG_LENGTH(GENL_HDRLEN) ||
	    (unsigned int)g->offs + NLA_HDRLEN > r->nh.nlmsg_len)
		return -1;
	a = (const struct nlattr *)((const char *)r + g->offs);
	return a->nla_type & NLA_TYPE_MASK;
}

/* DEV_GET of CHAN_IBDEV over @g: 0 when it answers with it, else an errno. */
static int dev_get(struct gnl *g)
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

/*
 * @len bytes of @sbuf, filled by chan_fill() with @seed, from the active
 * end to the passive one, into @rbuf, and checked: 0 or an errno.
 */
static int loop_move_into(struct loop *l, const void *sbuf, void *rbuf,
			  size_t len, uint64_t seed)
{
	__u64 cookies[2] = { chan_cookie(), chan_cookie() };
	long long res[2] = { -1, -1 };
	int ret;

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
		ret = chan_check("received", rbuf, len, seed);
	return ret;
}

/* As loop_move_into(), into a buffer of its own. */
static int loop_move_from(struct loop *l, const void *sbuf, size_t len,
			  uint64_t seed)
{
	unsigned char *rbuf = malloc(len);
	int ret;

	if (!rbuf)
		return -ENOMEM;
	ret = loop_move_into(l, sbuf, rbuf, len, seed);
	free(rbuf);
	return ret;
}

/* @len bytes from the active end to the passive one: 0 or an errno. */
static int loop_move(struct loop *l, size_t len)
{
	unsigned char *sbuf = malloc(len);
	int ret;

	if (!sbuf)
		return -ENOMEM;
	chan_fill(sbuf, len, chan_seed(len, 7));
	ret = loop_move_from(l, sbuf, len, chan_seed(len, 7));
	free(sbuf);
	return ret;
}

/* ---- the monitor and its events -------------------------------------------- */

struct event {
	char name[32], dev[32], peer[64];
	unsigned int qpn, port, err, quota;
	unsigned long long cache;	/* cache_max_bytes */
	bool has_err;
};

static unsigned long long jnum(const struct jobj *o, const char *key)
{
	const struct jkv *kv = jget(o, key);

	return kv && !kv->null && !kv->str ? strtoull(kv->val, NULL, 10) : 0;
}

static void jtext(const struct jobj *o, const char *key, char *buf, size_t n)
{
	const struct jkv *kv = jget(o, key);
	const char *v = kv && kv->str ? kv->val : "-";
	size_t len = strnlen(v, n - 1);

	memcpy(buf, v, len);
	buf[len] = '\0';
}

/*
 * The events the monitor wrote so far, each line parsed here: how many,
 * or -1 if a whole line is not JSON. A last line without its newline is
 * still being written and waits for the next reading.
 */
static int events_read(struct event *ev, int max)
{
	static struct jobj o;
	char line[4096];
	const char *p;
	int n = 0;
	FILE *f;

	f = fopen(monitor_out, "r");
	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (!strchr(line, '\n'))
			break;
		memset(&o, 0, sizeof(o));
		p = line;
		if (jobject(&p, &o, "")) {
			fclose(f);
			return -1;
		}
		memset(&ev[n], 0, sizeof(ev[n]));
		jtext(&o, "event", ev[n].name, sizeof(ev[n].name));
		jtext(&o, "dev_name", ev[n].dev, sizeof(ev[n].dev));
		jtext(&o, "peer_ipv4", ev[n].peer, sizeof(ev[n].peer));
		ev[n].qpn = jnum(&o, "chan_qpn");
		ev[n].port = jnum(&o, "peer_port");
		ev[n].err = jnum(&o, "errno");
		ev[n].has_err = jget(&o, "errno") != NULL;
		ev[n].quota = jnum(&o, "chan_quota_chunks");
		ev[n].cache = jnum(&o, "cache_max_bytes");
		n++;
	}
	fclose(f);
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

/* Wait (one wait) for @want events named @name: the count seen. */
static int events_wait(struct event *ev, int max, int *n, const char *name,
		       unsigned int quota, int want)
{
	long long end = chan_now_ms() + wait_ms();
	int k;

	for (;;) {
		*n = events_read(ev, max);
		k = *n < 0 ? 0 : events_count(ev, *n, name, quota);
		if (k >= want || chan_now_ms() > end)
			return k;
		chan_sleep_ms(20);
	}
}

/* ordmactl -j monitor into monitor_out; it dies with this process. */
static pid_t monitor_start(void)
{
	pid_t parent = getpid(), pid;
	int fd;

	fd = open(monitor_out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	pid = fork();
	if (!pid) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(126);
		dup2(fd, 1);
		execl(ctl, ctl, "-j", "monitor", (char *)NULL);
		_exit(127);
	}
	close(fd);
	return pid;
}

/*
 * Wait (one wait) until the monitor has joined: a sysfs write that changes
 * chan_quota_chunks (62 and 63 in turn) shows as an event; then the quota
 * goes back to its default and that event is waited for too (a second
 * wait). 0, or -1 if it never showed.
 */
static int monitor_joined(struct event *ev, int max, int *n)
{
	long long end = chan_now_ms() + wait_ms();
	unsigned int q = 63;

	do {
		if (sysfs_set("chan_quota_chunks", q))
			return -1;
		chan_sleep_ms(100);
		*n = events_read(ev, max);
		if (*n > 0 && events_count(ev, *n, "pool_changed", q))
			break;
		q = q == 63 ? 62 : 63;
	} while (chan_now_ms() < end);
	if (*n <= 0 || !events_count(ev, *n, "pool_changed", q))
		return -1;
	if (sysfs_set("chan_quota_chunks", DEF_QUOTA))
		return -1;
	return events_wait(ev, max, n, "pool_changed", DEF_QUOTA, 1) ? 0 : -1;
}

static void monitor_stop(pid_t *pid)
{
	if (*pid <= 0)
		return;
	kill(*pid, SIGKILL);
	waitpid(*pid, NULL, 0);
	*pid = 0;
}

/* ---- the fixture of most tests --------------------------------------------- */

FIXTURE(nl) {
	struct gnl g;
};

FIXTURE_SETUP(nl)
{
	ORDMA_TEST_FILTER();
	self->g.fd = -1;
	ASSERT_NE('\0', repo[0]);
	ASSERT_TRUE(at_defaults());
	ASSERT_EQ(0, access(ctl, X_OK));
	ASSERT_EQ(0, gnl_open(&self->g));
}

FIXTURE_TEARDOWN(nl)
{
	if (self->g.fd >= 0)
		close(self->g.fd);
	restore_defaults();
}

/* The values of `ordmactl -j dev show DEV`: one object. */
static int dev_json(struct jobj *o)
{
	static char out[16384];

	if (run(out, sizeof(out), "'%s' -j dev show %s", ctl, CHAN_IBDEV))
		return -1;
	return jarray(out, o, 1) == 1 ? 0 : -1;
}

TEST_F(nl, dev_show_json_equals_sysfs)
{
	static struct jobj o;
	static char out[16384];
	char sys[128];
	const struct jkv *kv;
	unsigned int i;

	/* JSON by another parser than ours, once. */
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' -j dev show %s | python3 -m json.tool >/dev/null",
			 ctl, CHAN_IBDEV)) TH_LOG("%s", out);
	ASSERT_EQ(0, dev_json(&o));
	/* Nothing moves on an idle device: sysfs now has the same values. */
	for (i = 0; i < ARRAY_SIZE(numeric); i++) {
		kv = jget(&o, numeric[i]);
		ASSERT_NE(NULL, kv) TH_LOG("no %s", numeric[i]);
		EXPECT_FALSE(kv->str || kv->null) TH_LOG("%s", numeric[i]);
		snprintf(sys, sizeof(sys), "%llu", knob(numeric[i]));
		EXPECT_STREQ(sys, kv->val) TH_LOG("%s", numeric[i]);
	}
	kv = jget(&o, "dev_name");
	ASSERT_NE(NULL, kv);
	EXPECT_STREQ(CHAN_IBDEV, kv->val);
	kv = jget(&o, "port_state");
	ASSERT_NE(NULL, kv);
	EXPECT_STREQ("active", kv->val);
	sysfs_string("mode", sys, sizeof(sys));
	kv = jget(&o, "mode");
	ASSERT_NE(NULL, kv);
	EXPECT_TRUE(kv->str);
	EXPECT_STREQ(sys, kv->val);
	/* And nothing else: every key is one of those. */
	EXPECT_EQ((int)ARRAY_SIZE(numeric) + 3, o.n);
}

/* Is "NAME  VALUE" a line of ordmactl's plain output @out (one device)? */
static bool plain_has(const char *out, const char *name, const char *value)
{
	char line[160];

	snprintf(line, sizeof(line), "%-20s  %s\n", name, value);
	return !strncmp(out, line, strlen(line)) ||
	       (snprintf(line, sizeof(line), "\n%-20s  %s\n", name, value) > 0 &&
		strstr(out, line));
}

TEST_F(nl, dev_show_plain_names_the_same_values)
{
	static char out[16384];
	char want[128];
	unsigned int i;

	ASSERT_EQ(0, run(out, sizeof(out), "'%s' dev show %s", ctl, CHAN_IBDEV));
	for (i = 0; i < ARRAY_SIZE(numeric); i++) {
		unsigned long long v = knob(numeric[i]);

		if (is_size(numeric[i]))
			human(want, sizeof(want), v);
		else
			snprintf(want, sizeof(want), "%llu", v);
		EXPECT_TRUE(plain_has(out, numeric[i], want))
			TH_LOG("no %s %s in:\n%s", numeric[i], want, out);
	}
	EXPECT_TRUE(plain_has(out, "dev_name", CHAN_IBDEV)) TH_LOG("%s", out);
	EXPECT_EQ(0, strncmp(out, "dev_name", 8));
	EXPECT_TRUE(plain_has(out, "port_state", "active"));
	EXPECT_TRUE(plain_has(out, "pool_bytes", "16 MiB"));
	EXPECT_TRUE(plain_has(out, "mode", "auto"));
}

TEST_F(nl, dumps_list_ibdev_once)
{
	static struct jobj o[16];
	static char out[65536];
	const struct jobj *d;
	struct gnl *g = &self->g;
	struct req r;
	int n;

	/* CHAN_IBDEV appears exactly once among whatever devices there are. */
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' -j dev show", ctl));
	n = jarray(out, o, ARRAY_SIZE(o));
	ASSERT_LE(1, n) TH_LOG("%s", out);
	d = jdev(o, n, CHAN_IBDEV);
	ASSERT_NE(NULL, d);
	EXPECT_NE(NULL, jget(d, "model_wr_ns"));

	ASSERT_EQ(0, run(out, sizeof(out), "'%s' -p pool show", ctl));
	n = jarray(out, o, ARRAY_SIZE(o));
	ASSERT_LE(1, n) TH_LOG("%s", out);
	d = jdev(o, n, CHAN_IBDEV);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(DEF_QUOTA, jnum(d, "chan_quota_chunks"));
	EXPECT_EQ(NULL, jget(d, "bytes_tx"));

	ASSERT_EQ(0, run(out, sizeof(out), "'%s' -j stats show", ctl));
	n = jarray(out, o, ARRAY_SIZE(o));
	ASSERT_LE(1, n) TH_LOG("%s", out);
	d = jdev(o, n, CHAN_IBDEV);
	ASSERT_NE(NULL, d);
	EXPECT_NE(NULL, jget(d, "ops"));
	EXPECT_EQ(NULL, jget(d, "pool_bytes"));

	/* A dump by name lists that device alone, or nothing. */
	req_init(&r, g->family, ORDMA_NL_CMD_DEV_GET, NLM_F_DUMP);
	req_put_str(&r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
	EXPECT_EQ(0, gnl_xfer(g, &r));
	EXPECT_EQ(1, g->replies);
	EXPECT_STREQ(CHAN_IBDEV, reply_str(g, ORDMA_NL_A_DEV_NAME));
	req_init(&r, g->family, ORDMA_NL_CMD_POOL_GET, NLM_F_DUMP);
	req_put_str(&r, ORDMA_NL_A_DEV_NAME, "nodev0");
	EXPECT_EQ(0, gnl_xfer(g, &r));
	EXPECT_EQ(0, g->replies);
}

/* A connect, a transfer (CHAN_S) and nothing else that waits. */
TEST_F_TIMEOUT(nl, transfer_counts_exactly_and_reset_zeroes, CHAN_S + SLACK_S)
{
	const size_t len = 300000;
	static char out[16384];
	static struct jobj o;
	struct loop l;

	ASSERT_EQ(0, run(out, sizeof(out), "'%s' stats reset %s", ctl, CHAN_IBDEV))
		TH_LOG("%s", out);
	ASSERT_EQ(0ULL, knob("bytes_tx"));
	ASSERT_EQ(0ULL, knob("bytes_rx"));
	ASSERT_EQ(0ULL, knob("ops"));

	ASSERT_EQ(0, loop_open(&l));
	ASSERT_EQ(0, loop_move(&l, len));
	/* Both ends are on the device: it sent and received every byte once. */
	EXPECT_EQ((unsigned long long)len, knob("bytes_tx"));
	EXPECT_EQ((unsigned long long)len, knob("bytes_rx"));
	EXPECT_EQ(2ULL, knob("ops"));
	EXPECT_EQ(2ULL, knob("channels"));
	ASSERT_EQ(0, dev_json(&o));
	EXPECT_EQ((unsigned int)len, jnum(&o, "bytes_tx"));
	EXPECT_EQ((unsigned int)len, jnum(&o, "bytes_rx"));

	/* Counters to 0, the gauges stay: the channel is still open. */
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' stats reset %s", ctl, CHAN_IBDEV));
	EXPECT_EQ(0ULL, knob("bytes_tx"));
	EXPECT_EQ(0ULL, knob("bytes_rx"));
	EXPECT_EQ(0ULL, knob("ops"));
	EXPECT_EQ(0ULL, knob("bytes_copied") + knob("bytes_zerocopy"));
	EXPECT_EQ(0ULL, knob("alloc_waits"));
	EXPECT_EQ(2ULL, knob("channels"));
	EXPECT_LE(knob("chunks_held"), knob("high_water"));

	/* A chunk size change while chunks are held: EBUSY, nothing moves. */
	EXPECT_LT(0ULL, knob("chunks_held"));
	EXPECT_EQ(1, run(out, sizeof(out), "'%s' pool set %s chunk_bytes 131072",
			 ctl, CHAN_IBDEV));
	EXPECT_STREQ("ordmactl: pool set: chunk_bytes: chunks are held by channels: Device or resource busy\n",
		     out);
	/* With a pool size too: one step, so the pool size stays as well. */
	EXPECT_EQ(1, run(out, sizeof(out), "'%s' pool set %s pool_bytes 33554432 chunk_bytes 131072 chan_quota_chunks 8",
			 ctl, CHAN_IBDEV));
	EXPECT_STREQ("ordmactl: pool set: chunk_bytes: chunks are held by channels: Device or resource busy\n",
		     out);
	EXPECT_EQ(DEF_CHUNK, knob("chunk_bytes"));
	EXPECT_EQ(DEF_POOL, knob("pool_bytes"));
	EXPECT_EQ(DEF_QUOTA, knob("chan_quota_chunks"));
	EXPECT_EQ(DEF_POOL / DEF_CHUNK, knob("chunks_total"));

	close(l.fd);
}

/* One wait until cache_pages is @want: the value it had last. */
static unsigned long long cache_pages_wait(unsigned long long want)
{
	long long end = chan_now_ms() + wait_ms();
	unsigned long long v;

	for (;;) {
		v = knob("cache_pages");
		if (v == want || chan_now_ms() > end)
			return v;
		chan_sleep_ms(20);
	}
}

/*
 * A source sent twice from the same pages into the same destination in
 * mode zerocopy: each segment of the first transfer pins its pages (a
 * miss), each of the second finds them in its channel's cache (as many
 * hits, the segments being the same), and the caches hold every page of
 * the source and of the destination. STATS_RESET zeroes the counters, not
 * the gauge cache_pages. The munmap of both drops each cached range (one
 * invalidation each) and their pages are unpinned shortly after. Netlink says what sysfs says. Waits: the cache empty
 * before and after (2), a connect and two transfers (2 CHAN_S).
 */
TEST_F_TIMEOUT(nl, pin_cache_counts_and_reset_keeps_cache_pages,
	       2 * CHAN_S + 2 * WAIT_MAX_S + SLACK_S)
{
	const size_t len = 1 << 20;
	const unsigned long long pages = len / sysconf(_SC_PAGESIZE);
	const uint64_t seed = chan_seed(len, 11);
	static char out[16384];
	static struct jobj o;
	unsigned long long misses;
	unsigned char *src, *dst;
	struct loop l;

	/* The channels of earlier tests are closed, and their caches empty. */
	ASSERT_EQ(0ULL, cache_pages_wait(0));
	ASSERT_EQ(0, ordma_sh("echo zerocopy > /sys/class/ordma/%s/mode",
			      CHAN_IBDEV));
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' stats reset %s", ctl, CHAN_IBDEV))
		TH_LOG("%s", out);
	src = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, src);
	dst = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, dst);
	chan_fill(src, len, seed);
	ASSERT_EQ(0, loop_open(&l));

	ASSERT_EQ(0, loop_move_into(&l, src, dst, len, seed));
	misses = knob("cache_misses");
	EXPECT_LT(0ULL, misses);
	EXPECT_EQ(0ULL, knob("cache_hits"));
	EXPECT_EQ(2 * pages, knob("cache_pages"));

	memset(dst, 0, len);
	ASSERT_EQ(0, loop_move_into(&l, src, dst, len, seed));
	EXPECT_EQ(misses, knob("cache_misses"));
	EXPECT_EQ(misses, knob("cache_hits"));
	EXPECT_EQ(0ULL, knob("cache_invalidations"));
	EXPECT_EQ(2 * pages, knob("cache_pages"));
	ASSERT_EQ(0, dev_json(&o));
	EXPECT_EQ(misses, jnum(&o, "cache_misses"));
	EXPECT_EQ(misses, jnum(&o, "cache_hits"));
	EXPECT_EQ(0ULL, jnum(&o, "cache_invalidations"));
	EXPECT_EQ(2 * pages, jnum(&o, "cache_pages"));

	/* Counters to 0; the gauge stays, the channel still holds the pages. */
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' stats reset %s", ctl, CHAN_IBDEV));
	EXPECT_EQ(0ULL, knob("cache_hits"));
	EXPECT_EQ(0ULL, knob("cache_misses"));
	EXPECT_EQ(2 * pages, knob("cache_pages"));
	ASSERT_EQ(0, dev_json(&o));
	EXPECT_EQ(0ULL, jnum(&o, "cache_hits"));
	EXPECT_EQ(0ULL, jnum(&o, "cache_misses"));
	EXPECT_EQ(0ULL, jnum(&o, "cache_invalidations"));
	EXPECT_EQ(2 * pages, jnum(&o, "cache_pages"));

	/* Unmapped: every cached range is dropped at once, unpinned soon. */
	ASSERT_EQ(0, munmap(src, len));
	ASSERT_EQ(0, munmap(dst, len));
	EXPECT_EQ(misses, knob("cache_invalidations"));
	EXPECT_EQ(0ULL, cache_pages_wait(0));
	ASSERT_EQ(0, dev_json(&o));
	EXPECT_EQ(misses, jnum(&o, "cache_invalidations"));
	EXPECT_EQ(0ULL, jnum(&o, "cache_pages"));

	close(l.fd);
}

TEST_F(nl, pool_set_changes_through_the_setters)
{
	static char out[4096];
	static struct jobj o;

	ASSERT_EQ(0, run(out, sizeof(out), "'%s' pool set %s chan_quota_chunks 32",
			 ctl, CHAN_IBDEV)) TH_LOG("%s", out);
	EXPECT_STREQ("", out);
	EXPECT_EQ(32ULL, knob("chan_quota_chunks"));

	ASSERT_EQ(0, run(out, sizeof(out), "'%s' pool set %s user_quota_chunks 100 mode copy progress_timeout_ms 1000",
			 ctl, CHAN_IBDEV));
	EXPECT_EQ(100ULL, knob("user_quota_chunks"));
	EXPECT_EQ(1000ULL, knob("progress_timeout_ms"));
	EXPECT_EQ(0, ordma_sh("grep -qx copy /sys/class/ordma/%s/mode",
			      CHAN_IBDEV));

	/* cache_max_bytes goes as a u64: past 32 bits it arrives whole. */
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' pool set %s cache_max_bytes %llu",
			 ctl, CHAN_IBDEV, CACHE_MAX_MAX)) TH_LOG("%s", out);
	EXPECT_EQ(CACHE_MAX_MAX, knob("cache_max_bytes"));
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' pool set %s cache_max_bytes 0",
			 ctl, CHAN_IBDEV)) TH_LOG("%s", out);
	EXPECT_EQ(0ULL, knob("cache_max_bytes"));
	/* A sysfs write shows over netlink, in JSON and plain. */
	ASSERT_EQ(0, sysfs_set("cache_max_bytes", 5ULL << 32));
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' -j pool show %s", ctl,
			 CHAN_IBDEV));
	ASSERT_EQ(1, jarray(out, &o, 1)) TH_LOG("%s", out);
	EXPECT_EQ(5ULL << 32, jnum(&o, "cache_max_bytes"));
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' pool show %s", ctl, CHAN_IBDEV));
	EXPECT_TRUE(plain_has(out, "cache_max_bytes", "20 GiB")) TH_LOG("%s", out);

	/* Chunk and pool size together, in one step, either order given. */
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' pool set %s chunk_bytes 1048576 pool_bytes 33554432",
			 ctl, CHAN_IBDEV));
	EXPECT_EQ(1048576ULL, knob("chunk_bytes"));
	EXPECT_EQ(33554432ULL, knob("pool_bytes"));
	EXPECT_EQ(32ULL, knob("chunks_total"));
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' pool set %s pool_bytes 65536 chunk_bytes 65536",
			 ctl, CHAN_IBDEV));
	EXPECT_EQ(1ULL, knob("chunks_total"));
	/* Chunks larger than the pool is now, with the pool to hold them. */
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' pool set %s chunk_bytes 131072 pool_bytes 262144",
			 ctl, CHAN_IBDEV)) TH_LOG("%s", out);
	EXPECT_EQ(131072ULL, knob("chunk_bytes"));
	EXPECT_EQ(262144ULL, knob("pool_bytes"));
	EXPECT_EQ(2ULL, knob("chunks_total"));

	/* Back to the defaults, through netlink too. */
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' pool set %s pool_bytes 16777216 chunk_bytes 65536 chan_quota_chunks 64 user_quota_chunks 192 mode auto progress_timeout_ms 30000 cache_max_bytes 67108864",
			 ctl, CHAN_IBDEV)) TH_LOG("%s", out);
	EXPECT_TRUE(at_defaults());
	EXPECT_EQ(DEF_POOL / DEF_CHUNK, knob("chunks_total"));
}

/* The command line is checked before the kernel is asked anything. */
TEST_F(nl, ordmactl_usage_errors)
{
	static char out[4096];

	EXPECT_EQ(2, run(out, sizeof(out), "'%s' -p monitor", ctl));
	EXPECT_STREQ("ordmactl: monitor: -p is not for monitor (one JSON object per line: use -j)\n"
		     "Try 'ordmactl -h'.\n", out);
	EXPECT_EQ(2, run(out, sizeof(out), "'%s' monitor -j", ctl));
	EXPECT_STREQ("ordmactl: monitor: too many arguments\nTry 'ordmactl -h'.\n",
		     out);
	EXPECT_EQ(2, run(out, sizeof(out), "'%s' dev show %s extra", ctl,
			 CHAN_IBDEV));
	EXPECT_STREQ("ordmactl: dev show: too many arguments\nTry 'ordmactl -h'.\n",
		     out);
	EXPECT_EQ(2, run(out, sizeof(out), "'%s' stats show %0100d", ctl, 0));
	EXPECT_NE(NULL, strstr(out, "is longer than 63 bytes")) TH_LOG("%s", out);
	/* "--" ends the options. */
	EXPECT_EQ(0, run(out, sizeof(out), "'%s' -j -- pool show %s", ctl,
			 CHAN_IBDEV)) TH_LOG("%s", out);
	EXPECT_EQ('[', out[0]);
	/* The usage error comes first, the missing device never asked for. */
	EXPECT_EQ(2, run(out, sizeof(out), "'%s' pool set nodev0 chan_quota_chunks lots",
			 ctl));

	/* chan, listener and window show name the argument at fault. */
	EXPECT_EQ(2, run(out, sizeof(out), "'%s' chan show pid x", ctl));
	EXPECT_STREQ("ordmactl: chan show: pid: 'x' is not a number from 1 to 4294967295\n"
		     "Try 'ordmactl -h'.\n", out);
	EXPECT_EQ(2, run(out, sizeof(out), "'%s' chan show id 0", ctl));
	EXPECT_STREQ("ordmactl: chan show: id: '0' is not a number from 1 to 4294967295\n"
		     "Try 'ordmactl -h'.\n", out);
	EXPECT_EQ(2, run(out, sizeof(out), "'%s' window show pid 4294967296", ctl));
	EXPECT_STREQ("ordmactl: window show: pid: '4294967296' is not a number from 1 to 4294967295\n"
		     "Try 'ordmactl -h'.\n", out);
	EXPECT_EQ(2, run(out, sizeof(out), "'%s' chan show pid", ctl));
	EXPECT_STREQ("ordmactl: chan show: no value for 'pid'\nTry 'ordmactl -h'.\n",
		     out);
	EXPECT_EQ(2, run(out, sizeof(out), "'%s' chan show -s dev %s -s", ctl,
			 CHAN_IBDEV));
	EXPECT_STREQ("ordmactl: chan show: '-s' given twice\nTry 'ordmactl -h'.\n",
		     out);
	EXPECT_EQ(2, run(out, sizeof(out), "'%s' listener show dev %s", ctl,
			 CHAN_IBDEV));
	EXPECT_STREQ("ordmactl: listener show: unknown argument 'dev' (pid)\nTry 'ordmactl -h'.\n",
		     out);
	EXPECT_EQ(2, run(out, sizeof(out), "'%s' window list", ctl));
	EXPECT_STREQ("ordmactl: window: unknown command 'list'\nTry 'ordmactl -h'.\n",
		     out);
	EXPECT_EQ(2, run(out, sizeof(out), "'%s' chan show dev %0100d", ctl, 0));
	EXPECT_NE(NULL, strstr(out, "is longer than 63 bytes")) TH_LOG("%s", out);
}

/* A bad POOL_SET through ordmactl: its exit status and all it says. */
FIXTURE(bad_set) {
	int unused;
};

FIXTURE_VARIANT(bad_set) {
	const char *dev;	/* NULL: CHAN_IBDEV */
	const char *args;
	int status;
	const char *says;	/* stderr after "ordmactl: "; %s: the device */
};

FIXTURE_SETUP(bad_set)
{
	ORDMA_TEST_FILTER();
	ASSERT_NE('\0', repo[0]);
	ASSERT_TRUE(at_defaults());
	/* Not a default, so that a value put back is seen as such. */
	ASSERT_EQ(0, sysfs_set("chan_quota_chunks", 32));
}

FIXTURE_TEARDOWN(bad_set)
{
	restore_defaults();
}

#define BAD_SET(_name, _dev, _args, _status, _says)		\
	FIXTURE_VARIANT_ADD(bad_set, _name) {			\
		.dev = _dev,					\
		.args = _args,					\
		.status = _status,				\
		.says = _says,					\
	}

#define ERANGE_TEXT	"Numerical result out of range"
#define USAGE		"\nTry 'ordmactl -h'."

BAD_SET(quota_zero, NULL, "chan_quota_chunks 0", 1,
	"pool set: chan_quota_chunks: integer out of range: from 1 to 65536: " ERANGE_TEXT);
BAD_SET(quota_huge, NULL, "chan_quota_chunks 65537", 1,
	"pool set: chan_quota_chunks: integer out of range: from 1 to 65536: " ERANGE_TEXT);
BAD_SET(quota_beyond_u32, NULL, "chan_quota_chunks 4294967296", 2,
	"pool set: '4294967296' is not a number from 0 to 4294967295 (chan_quota_chunks)" USAGE);
BAD_SET(quota_not_a_number, NULL, "chan_quota_chunks lots", 2,
	"pool set: 'lots' is not a number from 0 to 4294967295 (chan_quota_chunks)" USAGE);
BAD_SET(quota_negative, NULL, "chan_quota_chunks -1", 2,
	"pool set: '-1' is not a number from 0 to 4294967295 (chan_quota_chunks)" USAGE);
BAD_SET(unknown_key, NULL, "quota 16", 2,
	"pool set: unknown setting 'quota'" USAGE);
BAD_SET(no_value, NULL, "chan_quota_chunks", 2,
	"pool set: no value for 'chan_quota_chunks'" USAGE);
BAD_SET(twice, NULL, "chan_quota_chunks 16 chan_quota_chunks 8", 2,
	"pool set: 'chan_quota_chunks' given twice" USAGE);
BAD_SET(nothing, NULL, "", 2,
	"pool set %s: no KEY VALUE given" USAGE);
BAD_SET(unknown_device, "nodev0", "chan_quota_chunks 16", 1,
	"pool set: dev_name: no ordma device of that name: No such device");
BAD_SET(bad_mode, NULL, "mode fast", 2,
	"pool set: mode 'fast' is not auto, copy, zerocopy or overlap" USAGE);
BAD_SET(chunk_not_pow2, NULL, "chunk_bytes 5000", 1,
	"pool set: chunk_bytes: not a power of two: Invalid argument");
BAD_SET(chunk_too_small, NULL, "chunk_bytes 2048", 1,
	"pool set: chunk_bytes: integer out of range: from 4096 to 1048576: " ERANGE_TEXT);
BAD_SET(pool_too_big, NULL, "pool_bytes 1073741825", 1,
	"pool set: pool_bytes: integer out of range: from 4096 to 1073741824: " ERANGE_TEXT);
BAD_SET(pool_below_chunk, NULL, "pool_bytes 32768", 1,
	"pool set: pool_bytes: smaller than chunk_bytes: Invalid argument");
BAD_SET(progress_short, NULL, "progress_timeout_ms 99", 1,
	"pool set: progress_timeout_ms: integer out of range: from 100 to 3600000: " ERANGE_TEXT);
BAD_SET(cache_too_big, NULL, "cache_max_bytes 1099511627777", 1,
	"pool set: cache_max_bytes: integer out of range: from 0 to 1099511627776: " ERANGE_TEXT);
BAD_SET(cache_beyond_u64, NULL, "cache_max_bytes 18446744073709551616", 2,
	"pool set: '18446744073709551616' is not a number from 0 to 18446744073709551615 (cache_max_bytes)" USAGE);
/* ordma's own check refuses one: the good cache_max_bytes waits with it. */
BAD_SET(cache_with_bad_chunk, NULL, "cache_max_bytes 4096 chunk_bytes 5000", 1,
	"pool set: chunk_bytes: not a power of two: Invalid argument");
/* Checked before any is applied: the good quota is not applied either. */
BAD_SET(one_bad_of_two, NULL, "chan_quota_chunks 16 user_quota_chunks 0", 1,
	"pool set: user_quota_chunks: integer out of range: from 1 to 65536: " ERANGE_TEXT);
BAD_SET(chunk_above_new_pool, NULL,
	"chan_quota_chunks 16 chunk_bytes 131072 pool_bytes 65536", 1,
	"pool set: pool_bytes: smaller than chunk_bytes: Invalid argument");

TEST_F(bad_set, refused_and_unchanged)
{
	const char *dev = variant->dev ? variant->dev : CHAN_IBDEV;
	static char out[4096], says[480], want[512];

	EXPECT_EQ(variant->status,
		  run(out, sizeof(out), "'%s' pool set %s %s", ctl, dev,
		      variant->args));
	snprintf(says, sizeof(says), variant->says, dev);
	snprintf(want, sizeof(want), "ordmactl: %s\n", says);
	EXPECT_STREQ(want, out);
	EXPECT_EQ(32ULL, knob("chan_quota_chunks"));
	EXPECT_EQ(DEF_USER_QUOTA, knob("user_quota_chunks"));
	EXPECT_EQ(DEF_POOL, knob("pool_bytes"));
	EXPECT_EQ(DEF_CHUNK, knob("chunk_bytes"));
	EXPECT_EQ(DEF_PROGRESS, knob("progress_timeout_ms"));
	EXPECT_EQ(DEF_CACHE, knob("cache_max_bytes"));
	EXPECT_EQ(0, ordma_sh("grep -qx auto /sys/class/ordma/%s/mode",
			      CHAN_IBDEV));
}

/* The kernel's own answers: errno, message, attribute and range. */
TEST_F(nl, kernel_refusals_name_the_attribute)
{
	struct gnl *g = &self->g;
	struct req r;

	/* Out of a static range: the policy's ERANGE and its bounds. */
	req_init(&r, g->family, ORDMA_NL_CMD_POOL_SET, 0);
	req_put_str(&r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
	req_put_u32(&r, ORDMA_NL_A_CHAN_QUOTA_CHUNKS, 0);
	EXPECT_EQ(-ERANGE, gnl_xfer(g, &r));
	EXPECT_STREQ("integer out of range", g->msg);
	EXPECT_EQ(ORDMA_NL_A_CHAN_QUOTA_CHUNKS, gnl_offs_type(g, &r));
	EXPECT_TRUE(g->range);
	EXPECT_EQ(1U, g->min);
	EXPECT_EQ(65536U, g->max);

	req_init(&r, g->family, ORDMA_NL_CMD_POOL_SET, 0);
	req_put_str(&r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
	req_put_u32(&r, ORDMA_NL_A_MODE, ORDMA_NL_MODE_OVERLAP + 1);
	EXPECT_EQ(-ERANGE, gnl_xfer(g, &r));
	EXPECT_EQ(ORDMA_NL_A_MODE, gnl_offs_type(g, &r));
	EXPECT_TRUE(g->range);
	EXPECT_EQ(0U, g->min);
	EXPECT_EQ((uint64_t)ORDMA_NL_MODE_OVERLAP, g->max);

	req_init(&r, g->family, ORDMA_NL_CMD_POOL_SET, 0);
	req_put_str(&r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
	req_put_u32(&r, ORDMA_NL_A_PROGRESS_TIMEOUT_MS, 3600001);
	EXPECT_EQ(-ERANGE, gnl_xfer(g, &r));
	EXPECT_EQ(100U, g->min);
	EXPECT_EQ(3600000U, g->max);

	/* A u64 setting: bounds past 32 bits, and 8 bytes or nothing. */
	req_init(&r, g->family, ORDMA_NL_CMD_POOL_SET, 0);
	req_put_str(&r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
	req_put_u64(&r, ORDMA_NL_A_CACHE_MAX_BYTES, CACHE_MAX_MAX + 1);
	EXPECT_EQ(-ERANGE, gnl_xfer(g, &r));
	EXPECT_STREQ("integer out of range", g->msg);
	EXPECT_EQ(ORDMA_NL_A_CACHE_MAX_BYTES, gnl_offs_type(g, &r));
	EXPECT_TRUE(g->range);
	EXPECT_EQ(0U, g->min);
	EXPECT_EQ(CACHE_MAX_MAX, g->max);

	req_init(&r, g->family, ORDMA_NL_CMD_POOL_SET, 0);
	req_put_str(&r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
	req_put_u32(&r, ORDMA_NL_A_CACHE_MAX_BYTES, 4096);
	EXPECT_EQ(-EINVAL, gnl_xfer(g, &r));
	EXPECT_STREQ("invalid attribute length", g->msg);
	EXPECT_EQ(ORDMA_NL_A_CACHE_MAX_BYTES, gnl_offs_type(g, &r));

	/* Against another value: ordma's EINVAL, the attribute at fault. */
	req_init(&r, g->family, ORDMA_NL_CMD_POOL_SET, 0);
	req_put_str(&r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
	req_put_u32(&r, ORDMA_NL_A_CHUNK_BYTES, 5000);
	EXPECT_EQ(-EINVAL, gnl_xfer(g, &r));
	EXPECT_STREQ("not a power of two", g->msg);
	EXPECT_EQ(ORDMA_NL_A_CHUNK_BYTES, gnl_offs_type(g, &r));

	req_init(&r, g->family, ORDMA_NL_CMD_POOL_SET, 0);
	req_put_str(&r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
	req_put_u64(&r, ORDMA_NL_A_POOL_BYTES, 8192);
	EXPECT_EQ(-EINVAL, gnl_xfer(g, &r));
	EXPECT_STREQ("smaller than chunk_bytes", g->msg);
	EXPECT_EQ(ORDMA_NL_A_POOL_BYTES, gnl_offs_type(g, &r));

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
	EXPECT_EQ(ORDMA_NL_A_DEV_NAME, gnl_offs_type(g, &r));

	/* A gauge is not a setting. */
	req_init(&r, g->family, ORDMA_NL_CMD_POOL_SET, 0);
	req_put_str(&r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
	req_put_u32(&r, ORDMA_NL_A_CHUNKS_TOTAL, 1);
	EXPECT_EQ(-EINVAL, gnl_xfer(g, &r));
	EXPECT_STREQ("Unsupported attribute", g->msg);

	/* Notifications are not commands. */
	req_init(&r, g->family, ORDMA_NL_CMD_CHAN_UP, 0);
	EXPECT_EQ(-EOPNOTSUPP, gnl_xfer(g, &r));

	EXPECT_EQ(0, dev_get(g));
	EXPECT_TRUE(at_defaults());
}

/*
 * As nobody: reading works; changing is EPERM; joining the events group
 * is EPERM (NETLINK_ADD_MEMBERSHIP fails, nothing is received), through
 * ordmactl too.
 */
TEST_F(nl, nobody_reads_but_does_not_change_or_listen)
{
	uint32_t grp = self->g.events_grp;
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
			_exit(100);
		if (dev_get(&g))
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
		if (g.events_grp != grp ||
		    setsockopt(g.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
			       &grp, sizeof(grp)) != -1 || errno != EPERM)
			bad |= 8;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));

#define NOBODY "setpriv --reuid=65534 --regid=65534 --clear-groups "
	EXPECT_EQ(0, run(out, sizeof(out), NOBODY "'%s' -j dev show %s | python3 -m json.tool >/dev/null",
			 ctl, CHAN_IBDEV)) TH_LOG("%s", out);
	EXPECT_EQ(1, run(out, sizeof(out), NOBODY "'%s' pool set %s chan_quota_chunks 8",
			 ctl, CHAN_IBDEV));
	EXPECT_STREQ("ordmactl: pool set: Operation not permitted\n", out);
	EXPECT_EQ(1, run(out, sizeof(out), NOBODY "'%s' stats reset %s", ctl,
			 CHAN_IBDEV));
	EXPECT_STREQ("ordmactl: stats reset: Operation not permitted\n", out);
	/* Refused at once: a monitor that joined would be killed at 10 s. */
	EXPECT_EQ(1, run(out, sizeof(out), "timeout -s KILL 10 " NOBODY "'%s' -j monitor",
			 ctl));
	EXPECT_STREQ("ordmactl: monitor: cannot join group \"events\": Operation not permitted\n",
		     out);
	EXPECT_EQ(DEF_QUOTA, knob("chan_quota_chunks"));
}

/* ---- channel ends, listeners and windows ---------------------------------- */

/*
 * Send the dump @r over @g and read its answers: in *@n how many carry
 * @key, each value once (-EEXIST if one comes twice), in *@rounds how
 * many reads it took. 0, or the negative errno of its error or DONE.
 */
static int dump_ids(struct gnl *g, struct req *r, uint16_t key, int *n,
		    int *rounds)
{
	static uint32_t ids[4096];
	static char buf[16384];
	struct nlmsghdr *nh;
	struct nlattr *a;
	ssize_t len;
	int i, dup = 0;

	*n = 0;
	*rounds = 0;
	r->nh.nlmsg_seq = ++g->seq;
	if (send(g->fd, r, r->nh.nlmsg_len, 0) != (ssize_t)r->nh.nlmsg_len)
		return -EIO;
	for (;;) {
		len = recv(g->fd, buf, sizeof(buf), 0);
		if (len < 0)
			return -EIO;
		(*rounds)++;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, len);
		     nh = NLMSG_NEXT(nh, len)) {
			if (nh->nlmsg_seq != g->seq)
				continue;
			if (nh->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
			if (nh->nlmsg_type == NLMSG_DONE) {
				i = *(int *)NLMSG_DATA(nh);
				return i ? i : dup ? -EEXIST : 0;
			}
			for_each_attr(a, (char *)NLMSG_DATA(nh) + GENL_HDRLEN,
				      nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN)) {
				if (a->nla_type != key)
					continue;
				for (i = 0; i < *n; i++)
					if (ids[i] == *(uint32_t *)(a + 1))
						dup = 1;
				if (*n < (int)ARRAY_SIZE(ids))
					ids[(*n)++] = *(uint32_t *)(a + 1);
			}
		}
	}
}

/* Objects one show may list here: 200 channel ends and then some. */
#define SHOW_MAX	256

static struct jobj show_o[SHOW_MAX];
static char show_out[1 << 20];

/*
 * `ordmactl -j ARGS` (a chan, listener or window show) into show_o: how
 * many objects, or -1 if it failed or printed no JSON array (show_out has
 * what it said).
 */
static int show(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int show(const char *fmt, ...)
{
	char args[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	if (run(show_out, sizeof(show_out), "'%s' -j %s", ctl, args))
		return -1;
	return jarray(show_out, show_o, SHOW_MAX);
}

/* A string member of @o, NULL if it is null, missing or no string. */
static const char *jstr_of(const struct jobj *o, const char *key)
{
	const struct jkv *kv = jget(o, key);

	return kv && kv->str ? kv->val : NULL;
}

/* Is member @key of @o null (sent by nobody)? */
static bool jis_null(const struct jobj *o, const char *key)
{
	const struct jkv *kv = jget(o, key);

	return kv && kv->null;
}

/* The one object of the @n at @o whose number @key is @v, else NULL. */
static const struct jobj *jfind(const struct jobj *o, int n, const char *key,
				unsigned long long v)
{
	const struct jobj *found = NULL;
	const struct jkv *kv;
	int i;

	for (i = 0; i < n; i++) {
		kv = jget(&o[i], key);
		if (!kv || kv->str || kv->null ||
		    strtoull(kv->val, NULL, 10) != v)
			continue;
		if (found)
			return NULL;
		found = &o[i];
	}
	return found;
}

/* How many of the @n at @o have the number @v as @key. */
static int jcount(const struct jobj *o, int n, const char *key,
		  unsigned long long v)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (jget(&o[i], key) && jnum(&o[i], key) == v)
			k++;
	return k;
}

/* A plain table's line, cut where two or more blanks separate cells. */
#define PLAIN_CELLS	24

struct prow {
	char cell[PLAIN_CELLS][64];
	int n;
};

static struct prow prows[SHOW_MAX + 1];

/* Each line of the plain table @out into prows: how many, or -1. */
static int plain_table(const char *out)
{
	const char *p = out, *end, *eol;
	int n = 0;
	size_t len;

	while (*p) {
		struct prow *r = &prows[n];

		if (n == (int)ARRAY_SIZE(prows))
			return -1;
		eol = strchr(p, '\n');
		if (!eol)
			return -1;
		r->n = 0;
		for (;;) {
			while (p < eol && *p == ' ')
				p++;
			if (p == eol)
				break;
			end = strstr(p, "  ");
			if (!end || end > eol)
				end = eol;
			len = end - p;
			if (r->n == PLAIN_CELLS || len >= sizeof(r->cell[0]))
				return -1;
			memcpy(r->cell[r->n], p, len);
			r->cell[r->n++][len] = '\0';
			p = end;
		}
		p = eol + 1;
		n++;
	}
	return n;
}

/* How a plain column shows a member of the JSON object. */
enum pshow {
	P_TEXT,		/* the string, "-" for null */
	P_NUM,		/* the number */
	P_SIZE,		/* the number as human() writes it */
	P_STATE,	/* chan_state, ":ERRNAME" after "dead" */
};

struct pcol {
	const char *head;
	const char *key;	/* NULL: not compared (it changes) */
	enum pshow how;
};

static const struct pcol chan_pcols[] = {
	{ "ID", "chan_id", P_NUM }, { "PID", "pid", P_NUM },
	{ "COMM", "comm", P_TEXT }, { "DEV", "dev_name", P_TEXT },
	{ "QPN", "chan_qpn", P_NUM }, { "STATE", "chan_state", P_STATE },
	{ "LOCAL", "local", P_TEXT }, { "PEER", "peer", P_TEXT },
	{ "CREDITS", "tx_credits", P_NUM }, { "RX_BUF", "rx_size", P_SIZE },
	{ "CHUNKS", "chunks_held", P_NUM },
	{ "BYTES_TX", "bytes_tx", P_SIZE }, { "BYTES_RX", "bytes_rx", P_SIZE },
	{ "OPS_TX", "ops_tx", P_NUM }, { "OPS_RX", "ops_rx", P_NUM },
	{ "ERRORS", "errors", P_NUM }, { "INFLIGHT", "inflight", P_NUM },
	{ "REGS", "registrations", P_NUM }, { "PINNED", "pages_pinned", P_NUM },
	{ "MRS", "mrs_live", P_NUM }, { "AGE", NULL, P_NUM },
	{ NULL, NULL, P_NUM },
};

static const struct pcol listener_pcols[] = {
	{ "ID", "listener_id", P_NUM }, { "PID", "pid", P_NUM },
	{ "COMM", "comm", P_TEXT }, { "LOCAL", "local", P_TEXT },
	{ "BACKLOG", "backlog", P_NUM }, { "PENDING", "pending", P_NUM },
	{ "AGE", NULL, P_NUM },
	{ NULL, NULL, P_NUM },
};

static const struct pcol window_pcols[] = {
	{ "FILE", "file_id", P_NUM }, { "ID", "window_id", P_NUM },
	{ "PID", "pid", P_NUM }, { "COMM", "comm", P_TEXT },
	{ "LEN", "len", P_SIZE }, { "ACCESS", "access", P_TEXT },
	{ "WRITES", "writes", P_NUM },
	{ NULL, NULL, P_NUM },
};

/* What plain output should show of @key of @o, the column being @c. */
static void pexpect(const struct jobj *o, const struct pcol *c, char *buf,
		    size_t n)
{
	const char *s = jstr_of(o, c->key), *name;

	switch (c->how) {
	case P_TEXT:
		snprintf(buf, n, "%s", s ? s : "-");
		break;
	case P_NUM:
		snprintf(buf, n, "%llu", jnum(o, c->key));
		break;
	case P_SIZE:
		human(buf, n, jnum(o, c->key));
		break;
	case P_STATE:
		snprintf(buf, n, "%s", s ? s : "-");
		name = strerrorname_np((int)jnum(o, "errno"));
		if (s && !strcmp(s, "dead") && !jis_null(o, "errno") && name)
			snprintf(buf + strlen(buf), n - strlen(buf), ":%s",
				 name);
		break;
	}
}

/*
 * Does the plain table @out have the columns @cols, in order, and the
 * rows of the @n JSON objects at @o, in their order, with the same
 * values? "" in @why, else the first difference.
 */
static void plain_vs_json(const char *out, const struct jobj *o, int n,
			  const struct pcol *cols, char *why, size_t wn)
{
	char want[128];
	int rows = plain_table(out), i, k;

	why[0] = '\0';
	if (rows != n + 1) {
		snprintf(why, wn, "%d lines for %d objects:\n%.2000s", rows, n, out);
		return;
	}
	for (k = 0; cols[k].head; k++)
		if (k >= prows[0].n || strcmp(prows[0].cell[k], cols[k].head)) {
			snprintf(why, wn, "column %d is not %s:\n%.2000s", k,
				 cols[k].head, out);
			return;
		}
	if (k != prows[0].n) {
		snprintf(why, wn, "%d columns, not %d:\n%.2000s", prows[0].n, k, out);
		return;
	}
	for (i = 0; i < n; i++) {
		if (prows[i + 1].n != k) {
			snprintf(why, wn, "row %d has %d cells:\n%.2000s", i,
				 prows[i + 1].n, out);
			return;
		}
		for (k = 0; cols[k].head; k++) {
			if (!cols[k].key)
				continue;
			pexpect(&o[i], &cols[k], want, sizeof(want));
			if (strcmp(want, prows[i + 1].cell[k])) {
				snprintf(why, wn, "row %d %s is '%s', JSON says '%s':\n%.2000s",
					 i, cols[k].head, prows[i + 1].cell[k],
					 want, out);
				return;
			}
		}
	}
}

/* 192.0.2.1:PORT */
static void ip4_port(char *buf, size_t n, unsigned int port)
{
	snprintf(buf, n, "%s:%u", CHAN_IP4, port);
}

/*
 * Sent over the loop of chan_show_json_and_plain: a SEND, then a WRITE
 * into the first of two windows of the same file (a window's length need
 * be no multiple of a page).
 */
#define SHOW_SEND	300000
#define SHOW_WRITE	70000
#define SHOW_WIN	(256 * 1024)
#define SHOW_WIN2	12345

/*
 * Both ends of a loop established, with exactly the bytes and operations
 * each moved; its listener with its port; two windows with their lengths,
 * access and writes; JSON that python reads, a plain table with the same
 * rows; the id of one end; the passive end dead with ENOTCONN once the
 * active one is closed, and all gone once the file is. Waits: the
 * counters of the WRITE (1), the passive end dead (1), everything gone
 * (1); a channel and its transfers (CHAN_S).
 */
TEST_F_TIMEOUT(nl, chan_listener_window_show, 3 * WAIT_MAX_S + CHAN_S + SLACK_S)
{
	const struct jobj *act, *pas, *w1, *w2;
	unsigned long long act_id, pas_id;
	char want[64], want2[64], why[4096];
	static char out[65536];
	unsigned char *win, *src;
	static __u64 tok, tok2;
	pid_t me = getpid();
	long long end;
	struct loop l;
	int n;

	win = mmap(NULL, SHOW_WIN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	src = malloc(SHOW_WRITE);
	ASSERT_NE(MAP_FAILED, win);
	ASSERT_NE(NULL, src);
	chan_fill(src, SHOW_WRITE, 99);
	ASSERT_EQ(0, loop_open(&l));
	ASSERT_EQ(0, chan_expose(l.fd, win, SHOW_WIN,
				 ORDMA_ACCESS_REMOTE_READ | ORDMA_ACCESS_REMOTE_WRITE,
				 &tok));
	ASSERT_EQ(0, chan_expose(l.fd, win, SHOW_WIN2,
				 ORDMA_ACCESS_REMOTE_READ, &tok2));
	ASSERT_EQ(0, loop_move(&l, SHOW_SEND));
	ASSERT_EQ(SHOW_WRITE, do_write(l.fd, l.active, src, SHOW_WRITE, tok, 0));
	EXPECT_EQ(0, chan_check("written", win, SHOW_WRITE, 99));

	/*
	 * This process's two ends, the active one's peer the listener's
	 * port. The passive end counts the WRITE's bytes as they land, which
	 * may be after the active end's completion: one wait for them.
	 */
	end = chan_now_ms() + wait_ms();
	do {
		n = show("chan show pid %d", me);
		ASSERT_EQ(2, n) TH_LOG("%s", show_out);
		act = jfind(show_o, n, "peer_port", l.port);
		pas = jfind(show_o, n, "local_port", l.port);
		ASSERT_NE(NULL, act) TH_LOG("%s", show_out);
		ASSERT_NE(NULL, pas) TH_LOG("%s", show_out);
		if (jnum(pas, "bytes_rx") == SHOW_SEND + SHOW_WRITE)
			break;
		chan_sleep_ms(20);
	} while (chan_now_ms() < end);
	act_id = jnum(act, "chan_id");
	pas_id = jnum(pas, "chan_id");
	EXPECT_NE(act_id, pas_id);
	EXPECT_NE(0ULL, act_id);
	EXPECT_NE(0ULL, pas_id);
	EXPECT_NE(jnum(act, "chan_qpn"), jnum(pas, "chan_qpn"));
	ip4_port(want, sizeof(want), l.port);
	EXPECT_STREQ(want, jstr_of(act, "peer"));
	EXPECT_STREQ(want, jstr_of(pas, "local"));
	EXPECT_STREQ(jstr_of(act, "local"), jstr_of(pas, "peer"));
	EXPECT_EQ(jnum(act, "local_port"), jnum(pas, "peer_port"));
	for (n = 0; n < 2; n++) {
		const struct jobj *o = n ? pas : act;

		EXPECT_STREQ("established", jstr_of(o, "chan_state"));
		EXPECT_TRUE(jis_null(o, "errno"));
		EXPECT_STREQ(CHAN_IBDEV, jstr_of(o, "dev_name"));
		EXPECT_STREQ("nl_test", jstr_of(o, "comm"));
		EXPECT_EQ((unsigned long long)me, jnum(o, "pid"));
		EXPECT_STREQ(CHAN_IP4, jstr_of(o, "local_ipv4"));
		EXPECT_STREQ(CHAN_IP4, jstr_of(o, "peer_ipv4"));
		EXPECT_TRUE(jis_null(o, "local_ipv6"));
		EXPECT_TRUE(jis_null(o, "peer_ipv6"));
		EXPECT_EQ(0ULL, jnum(o, "errors"));
		EXPECT_EQ(0ULL, jnum(o, "inflight"));
		EXPECT_EQ(jnum(o, "ops_tx") + jnum(o, "ops_rx"), jnum(o, "ops"));
		EXPECT_LT(0ULL, jnum(o, "chunks_held"));
		/* A pool with room: chunk-sized receives, both ends. */
		EXPECT_EQ(65536ULL + 56, jnum(o, "rx_size"));
		EXPECT_EQ(65536ULL + 56, jnum(o, "peer_rx_size"));
		EXPECT_EQ(31, o->n);
	}
	/* Each byte once, on the end that sent it and the one it reached. */
	EXPECT_EQ((unsigned long long)(SHOW_SEND + SHOW_WRITE),
		  jnum(act, "bytes_tx"));
	EXPECT_EQ(0ULL, jnum(act, "bytes_rx"));
	EXPECT_EQ(0ULL, jnum(pas, "bytes_tx"));
	EXPECT_EQ((unsigned long long)(SHOW_SEND + SHOW_WRITE),
		  jnum(pas, "bytes_rx"));
	/* The SEND and the WRITE; the RECV. */
	EXPECT_EQ(2ULL, jnum(act, "ops_tx"));
	EXPECT_EQ(0ULL, jnum(act, "ops_rx"));
	EXPECT_EQ(0ULL, jnum(pas, "ops_tx"));
	EXPECT_EQ(1ULL, jnum(pas, "ops_rx"));

	/* The whole dump has both, once; JSON python reads; the same rows. */
	n = show("chan show");
	ASSERT_LE(2, n) TH_LOG("%s", show_out);
	EXPECT_EQ(1, jcount(show_o, n, "chan_id", act_id));
	EXPECT_EQ(1, jcount(show_o, n, "chan_id", pas_id));
	EXPECT_EQ(0, run(out, sizeof(out), "'%s' -j chan show | python3 -m json.tool >/dev/null && '%s' -p chan show | python3 -m json.tool >/dev/null",
			 ctl, ctl)) TH_LOG("%s", out);
	n = show("chan show pid %d", me);
	ASSERT_EQ(2, n);
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' chan show -s pid %d", ctl, me));
	plain_vs_json(out, show_o, n, chan_pcols, why, sizeof(why));
	EXPECT_STREQ("", why);
	/* Without -s: the first eleven columns. */
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' chan show pid %d", ctl, me));
	ASSERT_EQ(3, plain_table(out)) TH_LOG("%s", out);
	EXPECT_EQ(11, prows[0].n);
	EXPECT_STREQ("CHUNKS", prows[0].cell[10]);

	/* One end by its id: the doit, the same values. */
	n = show("chan show id %llu", act_id);
	ASSERT_EQ(1, n) TH_LOG("%s", show_out);
	EXPECT_EQ(act_id, jnum(&show_o[0], "chan_id"));
	EXPECT_EQ((unsigned long long)(SHOW_SEND + SHOW_WRITE),
		  jnum(&show_o[0], "bytes_tx"));
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' chan show -s id %llu", ctl,
			 act_id));
	plain_vs_json(out, show_o, n, chan_pcols, why, sizeof(why));
	EXPECT_STREQ("", why);

	/* The listener, on its port, nobody waiting for accept(). */
	n = show("listener show pid %d", me);
	ASSERT_EQ(1, n) TH_LOG("%s", show_out);
	EXPECT_EQ((unsigned long long)l.port, jnum(&show_o[0], "local_port"));
	EXPECT_STREQ(want, jstr_of(&show_o[0], "local"));
	EXPECT_STREQ(CHAN_IP4, jstr_of(&show_o[0], "local_ipv4"));
	EXPECT_EQ(0ULL, jnum(&show_o[0], "pending"));
	EXPECT_LT(0ULL, jnum(&show_o[0], "backlog"));
	EXPECT_EQ((unsigned long long)me, jnum(&show_o[0], "pid"));
	EXPECT_STREQ("nl_test", jstr_of(&show_o[0], "comm"));
	EXPECT_NE(act_id, jnum(&show_o[0], "listener_id"));
	EXPECT_NE(pas_id, jnum(&show_o[0], "listener_id"));
	EXPECT_EQ(10, show_o[0].n);
	EXPECT_EQ(0, run(out, sizeof(out), "'%s' -p listener show | python3 -m json.tool >/dev/null",
			 ctl)) TH_LOG("%s", out);
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' listener show pid %d", ctl, me));
	plain_vs_json(out, show_o, 1, listener_pcols, why, sizeof(why));
	EXPECT_STREQ("", why);

	/* The windows: each its length and access, the first written once. */
	n = show("window show pid %d", me);
	ASSERT_EQ(2, n) TH_LOG("%s", show_out);
	w1 = jfind(show_o, n, "window_id", (__u32)tok);
	w2 = jfind(show_o, n, "window_id", (__u32)tok2);
	ASSERT_NE(NULL, w1) TH_LOG("%s", show_out);
	ASSERT_NE(NULL, w2) TH_LOG("%s", show_out);
	EXPECT_EQ((unsigned long long)SHOW_WIN, jnum(w1, "len"));
	EXPECT_STREQ("rw", jstr_of(w1, "access"));
	EXPECT_EQ(1ULL, jnum(w1, "writes"));
	EXPECT_EQ((unsigned long long)SHOW_WIN2, jnum(w2, "len"));
	EXPECT_STREQ("r", jstr_of(w2, "access"));
	EXPECT_EQ(0ULL, jnum(w2, "writes"));
	EXPECT_EQ(jnum(w1, "file_id"), jnum(w2, "file_id"));
	EXPECT_NE(0ULL, jnum(w1, "file_id"));
	EXPECT_EQ((unsigned long long)me, jnum(w1, "pid"));
	EXPECT_STREQ("nl_test", jstr_of(w2, "comm"));
	EXPECT_EQ(7, w1->n);
	EXPECT_EQ(0, run(out, sizeof(out), "'%s' -p window show | python3 -m json.tool >/dev/null",
			 ctl)) TH_LOG("%s", out);
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' window show pid %d", ctl, me));
	plain_vs_json(out, show_o, n, window_pcols, why, sizeof(why));
	EXPECT_STREQ("", why);
	/* An unexposed window is gone from the list at once. */
	ASSERT_EQ(0, chan_unexpose(l.fd, tok2));
	n = show("window show pid %d", me);
	ASSERT_EQ(1, n) TH_LOG("%s", show_out);
	EXPECT_EQ((unsigned long long)(__u32)tok, jnum(&show_o[0], "window_id"));

	/* The active end closed: gone; the passive end dead, ENOTCONN. */
	ASSERT_EQ(0, chan_close(l.fd, l.active));
	end = chan_now_ms() + wait_ms();
	do {
		n = show("chan show pid %d", me);
		ASSERT_LE(1, n) TH_LOG("%s", show_out);
		pas = jfind(show_o, n, "chan_id", pas_id);
		ASSERT_NE(NULL, pas) TH_LOG("%s", show_out);
		if (n == 1 && !strcmp(jstr_of(pas, "chan_state"), "dead"))
			break;
		chan_sleep_ms(20);
	} while (chan_now_ms() < end);
	ASSERT_EQ(1, n) TH_LOG("%s", show_out);
	EXPECT_STREQ("dead", jstr_of(pas, "chan_state"));
	EXPECT_EQ((unsigned long long)ENOTCONN, jnum(pas, "errno"));
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' chan show -s pid %d", ctl, me));
	plain_vs_json(out, show_o, n, chan_pcols, why, sizeof(why));
	EXPECT_STREQ("", why);
	snprintf(want2, sizeof(want2), "  dead:ENOTCONN  ");
	EXPECT_NE(NULL, strstr(out, want2)) TH_LOG("%s", out);

	/* The file closed: nothing of it is left. */
	close(l.fd);
	end = chan_now_ms() + wait_ms();
	do {
		if (!show("chan show pid %d", me) &&
		    !show("listener show pid %d", me) &&
		    !show("window show pid %d", me))
			break;
		chan_sleep_ms(20);
	} while (chan_now_ms() < end);
	EXPECT_EQ(0, show("chan show pid %d", me)) TH_LOG("%s", show_out);
	EXPECT_EQ(0, show("listener show pid %d", me)) TH_LOG("%s", show_out);
	EXPECT_EQ(0, show("window show pid %d", me)) TH_LOG("%s", show_out);
	n = show("chan show");
	ASSERT_LE(0, n);
	EXPECT_EQ(0, jcount(show_o, n, "chan_id", act_id));
	EXPECT_EQ(0, jcount(show_o, n, "chan_id", pas_id));
	munmap(win, SHOW_WIN);
	free(src);
}

/*
 * A child with a loop and a window of its own in its own file: it says
 * 'r' on @ready once they are up and keeps them until @hold reads EOF.
 * Exits 0, or 1 if it could not make them.
 */
static pid_t child_loop(int *ready_fd, int *hold_fd, unsigned short *port)
{
	int ready[2], hold[2];
	static unsigned char win[8192];
	struct loop l;
	__u64 tok;
	pid_t pid;
	char c;

	if (pipe2(ready, O_CLOEXEC) || pipe2(hold, O_CLOEXEC))
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(ready[0]);
		close(hold[1]);
		c = loop_open(&l) ||
		    chan_expose(l.fd, win, sizeof(win),
				ORDMA_ACCESS_REMOTE_WRITE, &tok) ? 'x' : 'r';
		if (write(ready[1], &c, 1) != 1 ||
		    write(ready[1], &l.port, sizeof(l.port)) != sizeof(l.port))
			_exit(1);
		while (read(hold[0], &c, 1) > 0)
			;
		_exit(c == 'x');
	}
	close(ready[1]);
	close(hold[0]);
	*ready_fd = ready[0];
	*hold_fd = hold[1];
	if (read(ready[0], &c, 1) != 1 || c != 'r' ||
	    read(ready[0], port, sizeof(*port)) != sizeof(*port)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/*
 * pid keeps one process's objects: this one's loop, or a child's loop,
 * listener and window; a pid nobody has lists nothing. The id of no
 * channel end (a listener's, one never given, one that dev or pid do not
 * keep) is ENOENT, said plainly; a get without an id is EINVAL. Waits:
 * the child's objects gone (1); two channels (2 CHAN_S).
 */
TEST_F_TIMEOUT(nl, pid_filter_and_unknown_id, WAIT_MAX_S + 2 * CHAN_S + SLACK_S)
{
	unsigned long long lis_id, mine[2];
	int ready = -1, hold = -1, n, i, st;
	struct gnl *g = &self->g;
	static char out[65536];
	unsigned short cport;
	pid_t me = getpid(), child;
	long long end;
	struct loop l;
	struct req r;

	ASSERT_EQ(0, loop_open(&l));
	child = child_loop(&ready, &hold, &cport);
	ASSERT_LT(0, child);

	/* The child's: its two ends, its listener, its window. */
	n = show("chan show pid %d", child);
	EXPECT_EQ(2, n) TH_LOG("%s", show_out);
	EXPECT_EQ(n, jcount(show_o, n, "pid", child));
	EXPECT_NE(NULL, jfind(show_o, n, "local_port", cport));
	EXPECT_NE(NULL, jfind(show_o, n, "peer_port", cport));
	n = show("listener show pid %d", child);
	ASSERT_EQ(1, n) TH_LOG("%s", show_out);
	EXPECT_EQ((unsigned long long)cport, jnum(&show_o[0], "local_port"));
	EXPECT_EQ((unsigned long long)child, jnum(&show_o[0], "pid"));
	n = show("window show pid %d", child);
	ASSERT_EQ(1, n) TH_LOG("%s", show_out);
	EXPECT_STREQ("w", jstr_of(&show_o[0], "access"));
	EXPECT_EQ(8192ULL, jnum(&show_o[0], "len"));

	/* Ours: two ends and a listener, no window. */
	n = show("chan show pid %d", me);
	ASSERT_EQ(2, n) TH_LOG("%s", show_out);
	EXPECT_EQ(n, jcount(show_o, n, "pid", me));
	EXPECT_NE(NULL, jfind(show_o, n, "local_port", l.port));
	EXPECT_NE(NULL, jfind(show_o, n, "peer_port", l.port));
	mine[0] = jnum(&show_o[0], "chan_id");
	mine[1] = jnum(&show_o[1], "chan_id");
	/* With the device too; a device nobody has keeps none. */
	EXPECT_EQ(2, show("chan show dev %s pid %d", CHAN_IBDEV, me));
	EXPECT_EQ(0, show("chan show pid %d dev nodev0", me));
	n = show("listener show pid %d", me);
	ASSERT_EQ(1, n) TH_LOG("%s", show_out);
	EXPECT_EQ((unsigned long long)l.port, jnum(&show_o[0], "local_port"));
	lis_id = jnum(&show_o[0], "listener_id");
	EXPECT_EQ(0, show("window show pid %d", me)) TH_LOG("%s", show_out);

	/* All of both without a filter, each once. */
	n = show("chan show");
	ASSERT_LE(4, n) TH_LOG("%s", show_out);
	EXPECT_EQ(2, jcount(show_o, n, "pid", child));
	EXPECT_EQ(2, jcount(show_o, n, "pid", me));
	for (i = 0; i < 2; i++)
		EXPECT_EQ(1, jcount(show_o, n, "chan_id", mine[i]));
	n = show("listener show");
	ASSERT_LE(2, n) TH_LOG("%s", show_out);
	EXPECT_EQ(1, jcount(show_o, n, "pid", child));
	EXPECT_EQ(1, jcount(show_o, n, "pid", me));

	/* A pid no process has. */
	EXPECT_EQ(0, show("chan show pid 2147483647")) TH_LOG("%s", show_out);
	EXPECT_EQ(0, show("listener show pid 2147483647"));
	EXPECT_EQ(0, show("window show pid 2147483647"));
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' chan show pid 2147483647", ctl));
	EXPECT_EQ(1, plain_table(out)) TH_LOG("more than the heading:\n%s", out);
	EXPECT_STREQ("ID", prows[0].cell[0]);

	/* No channel end of that id: a listener's, one never given. */
	EXPECT_EQ(1, run(out, sizeof(out), "'%s' chan show id %llu", ctl, lis_id));
	EXPECT_STREQ("ordmactl: chan show: chan_id: no channel of that id: No such file or directory\n",
		     out);
	EXPECT_EQ(1, run(out, sizeof(out), "'%s' -j chan show id 2147483647", ctl));
	EXPECT_STREQ("ordmactl: chan show: chan_id: no channel of that id: No such file or directory\n",
		     out);
	req_init(&r, g->family, ORDMA_NL_CMD_CHAN_GET, 0);
	req_put_u32(&r, ORDMA_NL_A_CHAN_ID, 2147483647);
	EXPECT_EQ(-ENOENT, gnl_xfer(g, &r));
	EXPECT_STREQ("no channel of that id", g->msg);
	EXPECT_EQ(ORDMA_NL_A_CHAN_ID, gnl_offs_type(g, &r));
	req_init(&r, g->family, ORDMA_NL_CMD_CHAN_GET, 0);
	EXPECT_EQ(-EINVAL, gnl_xfer(g, &r));
	EXPECT_STREQ("chan_id missing: name the channel", g->msg);
	/* A known one: exactly it. */
	req_init(&r, g->family, ORDMA_NL_CMD_CHAN_GET, 0);
	req_put_u32(&r, ORDMA_NL_A_CHAN_ID, mine[0]);
	EXPECT_EQ(0, gnl_xfer(g, &r));
	EXPECT_EQ(1, g->replies);
	EXPECT_STREQ("nl_test", reply_str(g, ORDMA_NL_A_COMM));
	/* With dev and pid: if they keep it, else it is no channel end. */
	n = show("chan show id %llu pid %d dev %s", mine[0], me, CHAN_IBDEV);
	EXPECT_EQ(1, n) TH_LOG("%s", show_out);
	EXPECT_EQ(mine[0], jnum(&show_o[0], "chan_id"));
	EXPECT_EQ(1, run(out, sizeof(out), "'%s' chan show id %llu pid %d", ctl,
			 mine[0], child));
	EXPECT_STREQ("ordmactl: chan show: chan_id: no channel of that id: No such file or directory\n",
		     out);
	EXPECT_EQ(1, run(out, sizeof(out), "'%s' chan show dev nodev0 id %llu",
			 ctl, mine[1]));
	EXPECT_STREQ("ordmactl: chan show: chan_id: no channel of that id: No such file or directory\n",
		     out);

	/* The child gone: its objects too, ours stay. */
	close(hold);
	ASSERT_EQ(child, waitpid(child, &st, 0));
	close(ready);
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));
	end = chan_now_ms() + wait_ms();
	while ((n = show("chan show pid %d", child)) > 0 && chan_now_ms() < end)
		chan_sleep_ms(20);
	EXPECT_EQ(0, n) TH_LOG("%s", show_out);
	EXPECT_EQ(0, show("listener show pid %d", child));
	EXPECT_EQ(0, show("window show pid %d", child));
	EXPECT_EQ(2, show("chan show pid %d", me));
	close(l.fd);
}

/*
 * Without CAP_NET_ADMIN a user sees only the objects of its own files: as
 * nobody, a listener and a window of nobody's own are listed, none of
 * root's channel ends, listener or window; a get of root's channel end
 * is ENOENT. Root sees both users' objects. Waits: a channel (CHAN_S).
 */
TEST_F_TIMEOUT(nl, nobody_sees_only_its_own, CHAN_S + SLACK_S)
{
	int ready[2], hold[2], n, st, fd;
	static unsigned char win[4096];
	unsigned short port = chan_port(PORT_BASE);
	static char out[65536];
	unsigned long long root_id;
	pid_t me = getpid(), pid;
	struct loop l;
	__u64 tok;
	char c;

	ASSERT_EQ(0, loop_open(&l));
	ASSERT_EQ(0, chan_expose(l.fd, win, sizeof(win),
				 ORDMA_ACCESS_REMOTE_READ, &tok));
	n = show("chan show pid %d", me);
	ASSERT_EQ(2, n) TH_LOG("%s", show_out);
	root_id = jnum(&show_o[0], "chan_id");
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(hold, O_CLOEXEC));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct gnl g;
		struct req r;
		__u32 lis;
		int bad = 0;

		close(ready[0]);
		close(hold[1]);
		close(l.fd);
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534) || gnl_open(&g))
			_exit(100);
		fd = chan_open();
		if (fd < 0 || chan_listen(fd, AF_INET, port, 0, &lis) ||
		    chan_expose(fd, win, sizeof(win), ORDMA_ACCESS_REMOTE_WRITE,
				&tok))
			_exit(101);
		/* ordmactl as nobody: it works, and lists only nobody's. */
		if (show("chan show") != 0)
			bad |= 1;
		if (show("listener show") != 1 ||
		    jnum(&show_o[0], "pid") != (unsigned long long)getpid() ||
		    jnum(&show_o[0], "local_port") != port)
			bad |= 2;
		if (show("window show") != 1 ||
		    jnum(&show_o[0], "pid") != (unsigned long long)getpid())
			bad |= 4;
		if (run(out, sizeof(out), "'%s' chan show -s", ctl) ||
		    plain_table(out) != 1 || strcmp(prows[0].cell[0], "ID"))
			bad |= 8;
		if (run(out, sizeof(out), "'%s' chan show id %llu", ctl,
			root_id) != 1 ||
		    strcmp(out, "ordmactl: chan show: chan_id: no channel of that id: No such file or directory\n"))
			bad |= 16;
		if (show("chan show pid %d", me) != 0 ||
		    show("listener show pid %d", me) != 0 ||
		    show("window show pid %d", me) != 0)
			bad |= 32;
		req_init(&r, g.family, ORDMA_NL_CMD_CHAN_GET, 0);
		req_put_u32(&r, ORDMA_NL_A_CHAN_ID, root_id);
		if (gnl_xfer(&g, &r) != -ENOENT)
			bad |= 64;
		c = 'r';
		if (write(ready[1], &c, 1) != 1)
			_exit(102);
		while (read(hold[0], &c, 1) > 0)
			;
		_exit(bad);
	}
	close(ready[1]);
	close(hold[0]);
	EXPECT_EQ(1, read(ready[0], &c, 1));
	/* Root: its own and nobody's. */
	n = show("chan show pid %d", me);
	EXPECT_EQ(2, n) TH_LOG("%s", show_out);
	EXPECT_NE(NULL, jfind(show_o, n, "chan_id", root_id));
	n = show("listener show");
	ASSERT_LE(2, n) TH_LOG("%s", show_out);
	EXPECT_EQ(1, jcount(show_o, n, "pid", me));
	EXPECT_EQ(1, jcount(show_o, n, "pid", pid));
	n = show("window show");
	ASSERT_LE(2, n) TH_LOG("%s", show_out);
	EXPECT_EQ(1, jcount(show_o, n, "pid", me));
	EXPECT_EQ(1, jcount(show_o, n, "pid", pid));
	close(hold[1]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	close(ready[0]);
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	close(l.fd);
}

/*
 * 200 channel ends in one file, more than one message buffer holds: each
 * listed exactly once, through ordmactl (JSON and plain) and a dump of
 * our own read 16 KiB at a time, which takes more than one read. The
 * pool and the user's share are raised for them and put back by the
 * fixture once they are gone. Waits: the channels gone (1); the 100
 * connects, 2 s in the guest, are given 4 CHAN_S.
 */
#define MANY_LOOPS	100

TEST_F_TIMEOUT(nl, dump_of_many_lists_each_once, WAIT_MAX_S + 4 * CHAN_S + SLACK_S)
{
	static __u32 act, pas, lis;
	static char out[1 << 20];
	struct gnl *g = &self->g;
	unsigned short port = chan_port(PORT_BASE);
	struct ordma_accept a;
	pid_t me = getpid();
	int fd, i, n, seen, rounds;
	unsigned long long id;
	long long end;
	struct req r;

	ASSERT_EQ(0, sysfs_set("pool_bytes", 128ULL << 20));
	ASSERT_EQ(0, sysfs_set("user_quota_chunks", 2048));
	fd = chan_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, chan_listen(fd, AF_INET, port, 0, &lis));
	for (i = 0; i < MANY_LOOPS; i++) {
		ASSERT_EQ(0, chan_connect(fd, AF_INET, port, &act))
			TH_LOG("connect %d", i);
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.listener_id = lis;
		ASSERT_EQ(0, ioctl(fd, ORDMA_IOC_ACCEPT, &a))
			TH_LOG("accept %d: %s", i, strerror(errno));
		pas = a.out_chan_id;
		ASSERT_NE(act, pas);
	}

	/* ordmactl: 200, each id once, each an established end of ours. */
	n = show("chan show pid %d", me);
	ASSERT_EQ(2 * MANY_LOOPS, n) TH_LOG("%.2000s", show_out);
	for (i = 0; i < n; i++) {
		id = jnum(&show_o[i], "chan_id");
		EXPECT_EQ(1, jcount(show_o, n, "chan_id", id)) TH_LOG("chan_id %llu", id);
		EXPECT_STREQ("established", jstr_of(&show_o[i], "chan_state"));
	}
	/* Their ports: the active end's local port is the passive's peer port. */
	for (i = 0; i < n; i++) {
		if (jnum(&show_o[i], "peer_port") == port) {
			EXPECT_EQ(1, jcount(show_o, n, "peer_port",
					    jnum(&show_o[i], "local_port")));
		} else {
			EXPECT_EQ((unsigned long long)port,
				  jnum(&show_o[i], "local_port"));
		}
	}
	EXPECT_EQ(MANY_LOOPS, jcount(show_o, n, "peer_port", port));
	EXPECT_EQ(MANY_LOOPS, jcount(show_o, n, "local_port", port));
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' -p chan show | python3 -m json.tool >/dev/null",
			 ctl)) TH_LOG("%.2000s", out);
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' chan show -s pid %d", ctl, me));
	EXPECT_EQ(2 * MANY_LOOPS + 1, plain_table(out));

	/* Our own dump, 16 KiB a read: the same ids, each once. */
	req_init(&r, g->family, ORDMA_NL_CMD_CHAN_GET, NLM_F_DUMP);
	req_put_u32(&r, ORDMA_NL_A_PID, me);
	EXPECT_EQ(0, dump_ids(g, &r, ORDMA_NL_A_CHAN_ID, &seen, &rounds));
	EXPECT_EQ(2 * MANY_LOOPS, seen);
	EXPECT_LT(1, rounds) TH_LOG("one buffer held the whole dump");

	close(fd);
	/* Gone before the fixture puts the pool back. */
	end = chan_now_ms() + wait_ms();
	while (knob("channels") && chan_now_ms() < end)
		chan_sleep_ms(50);
	EXPECT_EQ(0ULL, knob("channels"));
	EXPECT_EQ(0, show("chan show pid %d", me));
}

/* ---- the events group ---------------------------------------------------- */

FIXTURE(nl_events) {
	pid_t monitor;
};

FIXTURE_SETUP(nl_events)
{
	ORDMA_TEST_FILTER();
	self->monitor = 0;
	ASSERT_NE('\0', repo[0]);
	ASSERT_TRUE(at_defaults());
	ASSERT_EQ(0, access(ctl, X_OK));
}

FIXTURE_TEARDOWN(nl_events)
{
	monitor_stop(&self->monitor);
	restore_defaults();
}

/* The index of the first event named @name with @qpn, or -1. */
static int event_index(const struct event *ev, int n, const char *name,
		       unsigned int qpn)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(ev[i].name, name) && ev[i].qpn == qpn)
			return i;
	return -1;
}

/*
 * Waits: the monitor's join (2), both chan_up, the passive end's
 * disconnect, both chan_down, five settings (11), a channel (CHAN_S) and a
 * connect refused (CHAN_S).
 */
TEST_F_TIMEOUT(nl_events, channels_and_settings,
	       11 * WAIT_MAX_S + 2 * CHAN_S + SLACK_S)
{
	static struct event ev[128];
	static char out[4096];
	int n, i, n0, up_active = -1, up_passive = -1, up, down, fd;
	struct ordma_chan_info ci;
	long long end;
	struct loop l;
	__u32 id;
	int st;

	self->monitor = monitor_start();
	ASSERT_LT(0, self->monitor);
	ASSERT_EQ(0, monitor_joined(ev, ARRAY_SIZE(ev), &n));

	/* A channel: both ends come up, once each. */
	ASSERT_EQ(0, loop_open(&l));
	ASSERT_EQ(2, events_wait(ev, ARRAY_SIZE(ev), &n, "chan_up", 0, 2));
	for (i = 0; i < n; i++) {
		if (strcmp(ev[i].name, "chan_up"))
			continue;
		EXPECT_STREQ(CHAN_IBDEV, ev[i].dev);
		EXPECT_STREQ(CHAN_IP4, ev[i].peer);
		EXPECT_NE(0U, ev[i].qpn);
		EXPECT_FALSE(ev[i].has_err);
		if (ev[i].port == l.port)
			up_active = i;
		else
			up_passive = i;
	}
	ASSERT_LE(0, up_active);
	ASSERT_LE(0, up_passive);
	EXPECT_NE(ev[up_active].qpn, ev[up_passive].qpn);

	/* Both go down, each after its own chan_up and once. */
	ASSERT_EQ(0, chan_close(l.fd, l.active));
	end = chan_now_ms() + wait_ms();
	do {
		ASSERT_EQ(0, chan_info(l.fd, l.passive, &ci));
		if (ci.out_state == ORDMA_CHAN_DISCONNECTED)
			break;
		chan_sleep_ms(20);
	} while (chan_now_ms() < end);
	ASSERT_EQ((__u32)ORDMA_CHAN_DISCONNECTED, ci.out_state);
	ASSERT_EQ(0, chan_close(l.fd, l.passive));
	close(l.fd);
	ASSERT_EQ(2, events_wait(ev, ARRAY_SIZE(ev), &n, "chan_down", 0, 2));
	for (i = 0; i < n; i++) {
		if (strcmp(ev[i].name, "chan_down"))
			continue;
		EXPECT_STREQ(CHAN_IBDEV, ev[i].dev);
		EXPECT_TRUE(ev[i].has_err);
		up = event_index(ev, n, "chan_up", ev[i].qpn);
		down = event_index(ev, n, "chan_down", ev[i].qpn);
		EXPECT_LE(0, up) TH_LOG("chan_down of qpn %u without chan_up",
					ev[i].qpn);
		EXPECT_LT(up, down);
		EXPECT_EQ(i, down) TH_LOG("two chan_down of qpn %u", ev[i].qpn);
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

	/* A change through netlink, and one through sysfs. */
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' pool set %s chan_quota_chunks 33",
			 ctl, CHAN_IBDEV));
	EXPECT_EQ(1, events_wait(ev, ARRAY_SIZE(ev), &n, "pool_changed", 33, 1));
	ASSERT_EQ(0, sysfs_set("chan_quota_chunks", 34));
	ASSERT_EQ(1, events_wait(ev, ARRAY_SIZE(ev), &n, "pool_changed", 34, 1));
	/* cache_max_bytes both ways: the quota stays 34, the event says it. */
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' pool set %s cache_max_bytes 1048576",
			 ctl, CHAN_IBDEV));
	ASSERT_EQ(2, events_wait(ev, ARRAY_SIZE(ev), &n, "pool_changed", 34, 2));
	EXPECT_STREQ("pool_changed", ev[n - 1].name);
	EXPECT_EQ(1048576ULL, ev[n - 1].cache);
	ASSERT_EQ(0, sysfs_set("cache_max_bytes", DEF_CACHE));
	ASSERT_EQ(3, events_wait(ev, ARRAY_SIZE(ev), &n, "pool_changed", 34, 3));
	EXPECT_STREQ("pool_changed", ev[n - 1].name);
	EXPECT_EQ(DEF_CACHE, ev[n - 1].cache);
	n0 = n;

	/*
	 * Refused, and values as they are (a pool size that rounds down to
	 * the one it has too): nobody is told. The next change's event must
	 * be the very next one.
	 */
	EXPECT_EQ(1, run(out, sizeof(out), "'%s' pool set %s chan_quota_chunks 0",
			 ctl, CHAN_IBDEV));
	EXPECT_EQ(1, run(out, sizeof(out), "'%s' pool set %s chunk_bytes 5000",
			 ctl, CHAN_IBDEV));
	EXPECT_EQ(0, run(out, sizeof(out), "'%s' pool set %s chan_quota_chunks 34 mode auto",
			 ctl, CHAN_IBDEV));
	EXPECT_EQ(0, sysfs_set("chan_quota_chunks", 34));
	EXPECT_EQ(0, sysfs_set("pool_bytes", DEF_POOL + 1));
	EXPECT_EQ(DEF_POOL, knob("pool_bytes"));
	EXPECT_EQ(1, run(out, sizeof(out), "'%s' pool set %s cache_max_bytes %llu",
			 ctl, CHAN_IBDEV, CACHE_MAX_MAX + 1));
	EXPECT_EQ(-EINVAL, sysfs_set("cache_max_bytes", CACHE_MAX_MAX + 1));
	EXPECT_EQ(0, sysfs_set("cache_max_bytes", DEF_CACHE));
	/* A connect that fails never came up: neither chan_up nor chan_down. */
	fd = chan_open();
	ASSERT_LE(0, fd);
	EXPECT_NE(0, chan_connect(fd, AF_INET, CHAN_PORT_UNUSED, &id));
	close(fd);
	ASSERT_EQ(0, run(out, sizeof(out), "'%s' pool set %s chan_quota_chunks 35",
			 ctl, CHAN_IBDEV));
	ASSERT_EQ(1, events_wait(ev, ARRAY_SIZE(ev), &n, "pool_changed", 35, 1));
	ASSERT_LT(n0, n);
	EXPECT_STREQ("pool_changed", ev[n0].name);
	EXPECT_EQ(35U, ev[n0].quota);

	kill(self->monitor, SIGTERM);
	ASSERT_EQ(self->monitor, waitpid(self->monitor, &st, 0));
	self->monitor = 0;
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	n = events_read(ev, ARRAY_SIZE(ev));
	EXPECT_EQ(n0 + 1, n);
	EXPECT_EQ(2, events_count(ev, n, "chan_up", 0));
	EXPECT_EQ(2, events_count(ev, n, "chan_down", 0));
}

/* ---- devices that go and come back ----------------------------------------- */

/* The device's directory in the RDMA core's sysfs, with CHAN_IBDEV. */
#define IB_DIR		"/sys/class/infiniband/%s"

FIXTURE(nl_link) {
	pid_t monitor;
	char netdev[64];
	int gids;
};

/* GIDs of the device's first port that are not all zero. */
static int gids_set(void)
{
	char path[128], buf[64];
	int i, n = 0;
	FILE *f;

	for (i = 0; i < 64; i++) {
		snprintf(path, sizeof(path), IB_DIR "/ports/1/gids/%d",
			 CHAN_IBDEV, i);
		f = fopen(path, "r");
		if (!f)
			break;
		if (fgets(buf, sizeof(buf), f) &&
		    strspn(buf, "0:\n") != strlen(buf))
			n++;
		fclose(f);
	}
	return n;
}

static bool port_active(void)
{
	char path[128], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), IB_DIR "/ports/1/state", CHAN_IBDEV);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strstr(buf, "ACTIVE") != NULL;
}

/* One wait for the device to be back as before: port up, GIDs, ordma. */
static bool link_ready(int gids)
{
	long long end = chan_now_ms() + wait_ms();
	char path[256];

	do {
		if (port_active() && gids_set() >= gids &&
		    !access(ordma_sysfs(path, sizeof(path), "pool_bytes"),
			    R_OK))
			return true;
		chan_sleep_ms(50);
	} while (chan_now_ms() < end);
	return false;
}

FIXTURE_SETUP(nl_link)
{
	static char out[4096];
	const char *p;

	ORDMA_TEST_FILTER();
	self->monitor = 0;
	self->netdev[0] = '\0';
	ASSERT_NE('\0', repo[0]);
	ASSERT_TRUE(at_defaults());
	ASSERT_EQ(0, access(ctl, X_OK));
	/* What to put CHAN_IBDEV back on, and how many GIDs it has. */
	ASSERT_EQ(0, run(out, sizeof(out), "rdma link show %s/1", CHAN_IBDEV));
	p = strstr(out, " netdev ");
	ASSERT_NE(NULL, p) TH_LOG("%s", out);
	ASSERT_EQ(1, sscanf(p, " netdev %63s", self->netdev));
	ASSERT_TRUE(port_active());
	self->gids = gids_set();
	ASSERT_LT(0, self->gids);
}

FIXTURE_TEARDOWN(nl_link)
{
	char path[128];

	monitor_stop(&self->monitor);
	snprintf(path, sizeof(path), IB_DIR, CHAN_IBDEV);
	if (self->netdev[0] && access(path, F_OK) &&
	    ordma_sh("rdma link add %s type %s netdev %s", CHAN_IBDEV,
		     ordma_dev_type(), self->netdev))
		TH_LOG("cannot add %s on %s again", CHAN_IBDEV, self->netdev);
	/* Later tests (and test binaries) need it whole. */
	if (self->netdev[0] && !link_ready(self->gids))
		TH_LOG("%s is not back: port %s, %d of %d GIDs", CHAN_IBDEV,
		       port_active() ? "active" : "not active", gids_set(),
		       self->gids);
	restore_defaults();
}

/* Waits: the monitor's join (2), dev_del, dev_add, the device (5), and
 * the teardown's wait for it (6).
 */
TEST_F_TIMEOUT(nl_link, devices_come_and_go, 6 * WAIT_MAX_S + SLACK_S)
{
	static struct event ev[64];
	int n, i, del = -1, add = -1;

	self->monitor = monitor_start();
	ASSERT_LT(0, self->monitor);
	ASSERT_EQ(0, monitor_joined(ev, ARRAY_SIZE(ev), &n));

	ASSERT_EQ(0, ordma_sh("rdma link del %s", CHAN_IBDEV));
	EXPECT_EQ(1, events_wait(ev, ARRAY_SIZE(ev), &n, "dev_del", 0, 1));
	ASSERT_EQ(0, ordma_sh("rdma link add %s type %s netdev %s",
			      CHAN_IBDEV, ordma_dev_type(), self->netdev));
	EXPECT_EQ(1, events_wait(ev, ARRAY_SIZE(ev), &n, "dev_add", 0, 1));
	for (i = 0; i < n; i++) {
		if (!strcmp(ev[i].name, "dev_del"))
			del = i;
		if (!strcmp(ev[i].name, "dev_add"))
			add = i;
		if (!strncmp(ev[i].name, "dev_", 4))
			EXPECT_STREQ(CHAN_IBDEV, ev[i].dev);
	}
	EXPECT_LE(0, del);
	EXPECT_LT(del, add);
	/* A new context: the defaults again. */
	ASSERT_TRUE(link_ready(self->gids));
	EXPECT_TRUE(at_defaults());
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
	FUZZ_LONG_STRING,	/* a name past its length, or a string mode */
	FUZZ_NO_NUL,		/* a name without its NUL */
	FUZZ_NO_NAME,		/* no device name: EINVAL */
	FUZZ_NO_DEVICE,		/* a name nobody has: ENODEV */
	FUZZ_BAD_HEADER,	/* reserved byte, flags, short header */
	FUZZ_BAD_VALUE,		/* POOL_SET of a value out of range */
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
	uint16_t type;
	uint32_t v;

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
		/* Past the bytes the attribute takes. */
		req_put_raw(r, ORDMA_NL_A_DEV_NAME,
			    NLA_HDRLEN + strlen(CHAN_IBDEV) + 5 + rng() % 200,
			    CHAN_IBDEV, strlen(CHAN_IBDEV) + 1);
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
			req_put_u32(r, ORDMA_NL_A_CACHE_MAX_BYTES + 1 +
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
		if (rng() % 2) {
			type = rng() % 2 ? ORDMA_NL_A_POOL_BYTES :
					   ORDMA_NL_A_CACHE_MAX_BYTES;
			req_put(r, type, junk, len == 8 ? 4 : len);
		} else {
			req_put(r, ORDMA_NL_A_CHAN_QUOTA_CHUNKS + rng() % 3, junk,
				len == 4 ? 2 : len);
		}
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
			/* The mode is a u32: a name is the wrong size. */
			req_init(r, g->family, cmd, 0);
			req_put_str(r, ORDMA_NL_A_DEV_NAME, CHAN_IBDEV);
			len = 5 + rng() % 100;
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
		switch (rng() % 7) {
		case 0:
			req_put_u32(r, ORDMA_NL_A_CHAN_QUOTA_CHUNKS + rng() % 2,
				    rng() % 2 ? 0 : 65537 + rng() % 1000000);
			return -ERANGE;
		case 1:
			/* Never a power of two from 4096 on. */
			v = (1U << (rng() % 32)) + 1 + rng() % 3;
			req_put_u32(r, ORDMA_NL_A_CHUNK_BYTES, v);
			return v < 4096 || v > (1U << 20) ? -ERANGE : -EINVAL;
		case 2:
			req_put_u32(r, ORDMA_NL_A_MODE,
				    ORDMA_NL_MODE_OVERLAP + 1 + rng() % 1000);
			return -ERANGE;
		case 3:
			req_put_u32(r, ORDMA_NL_A_PROGRESS_TIMEOUT_MS,
				    rng() % 2 ? rng() % 100 : 3600001 + rng());
			return -ERANGE;
		case 4:
			req_put_u64(r, ORDMA_NL_A_POOL_BYTES,
				    (1ULL << 30) + 1 + rng());
			return -ERANGE;
		case 5:
			req_put_u64(r, ORDMA_NL_A_CACHE_MAX_BYTES,
				    rng() % 2 ? UINT64_MAX : CACHE_MAX_MAX + 1 + rng());
			return -ERANGE;
		default:
			/* In range, but below a chunk of the pool. */
			req_put_u64(r, ORDMA_NL_A_POOL_BYTES,
				    4096 + rng() % (DEF_CHUNK - 4096));
			return -EINVAL;
		}
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
	unsigned int n = ordma_scaled(2000, 200), i, seed = FUZZ_SEED;
	unsigned int counts[FUZZ_NR] = { 0 };
	const char *env = getenv("ORDMA_TEST_SEED");
	struct gnl *g = &self->g;
	int want, got, msg_wanted;
	enum fuzz_kind kind;
	struct req r;

	if (env)
		seed = strtoul(env, NULL, 0);
	TH_LOG("seed %u (ORDMA_TEST_SEED=%u replays it), %u requests", seed,
	       seed, n);
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
	EXPECT_EQ(0, dev_get(g));
	EXPECT_TRUE(at_defaults());
	EXPECT_EQ(DEF_POOL / DEF_CHUNK, knob("chunks_total"));
}

TEST_HARNESS_MAIN
