// SPDX-License-Identifier: GPL-2.0
/*
 * ordma's tracepoints (include/trace/events/ordma.h,
 * Documentation/ordma/tracing.rst). With the "ordma" events enabled through
 * tracefs, a pair connects, sends messages of three sizes (every byte
 * checked by the peer), writes into the peer's window and closes, in each
 * engine mode; then the trace buffer is read back and must account for it
 * all: every operation submitted has one completion with its byte count,
 * the completions add up to the bytes moved, a SEND's or WRITE's sends
 * carry each of its bytes once, every copy and every registration that
 * starts ends, each mode shows its own path (no registration in mode copy,
 * zero-copy sends and registered destinations in mode zerocopy, buffers
 * split between the two in mode overlap), and both channel ends go
 * ESTABLISHED and then DEAD. With the events disabled again the same
 * transfers leave the buffer silent.
 */
#define ORDMA_GUEST_TEST
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include "ordma_test.h"
#include "ordma_chan.h"
#include "kselftest_harness.h"

#define PORT_BASE	19800
#define TRACEFS		"/sys/kernel/tracing"
#define EVENTS		"events/ordma/enable"

static const size_t sizes[] = { 4096, 64 * KiB + 3, 1 * MiB + 7 };
#define NSIZES		(sizeof(sizes) / sizeof(sizes[0]))
#define WIN_LEN		(256 * KiB + 5)

/* -- tracefs --------------------------------------------------------------- */

static int tfs_write(const char *name, const char *val)
{
	char path[256];
	int fd, ret = 0;
	ssize_t n = strlen(val);

	snprintf(path, sizeof(path), TRACEFS "/%s", name);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

/* The whole of a tracefs file, NUL-terminated (free() it), or NULL. */
static char *tfs_read(const char *name)
{
	size_t len = 0, cap = 1 << 16;
	char path[256], *buf = malloc(cap), *nb;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), TRACEFS "/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (;;) {
		if (cap - len < 4096) {
			nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

/* "7 (expanded: 1408)" for a buffer never used: the size it will have. */
static void tfs_buffer_kb(char *out, size_t len)
{
	char *s = tfs_read("buffer_size_kb"), *e;

	snprintf(out, len, "1408");
	if (!s)
		return;
	e = strstr(s, "expanded: ");
	snprintf(out, len, "%llu", strtoull(e ? e + 10 : s, NULL, 10));
	free(s);
}

/* Mount tracefs if it is not; 0 when the ordma events are there. */
static int tfs_ready(void)
{
	if (access(TRACEFS "/" EVENTS, F_OK))
		mount("nodev", TRACEFS, "tracefs", 0, NULL);
	return access(TRACEFS "/" EVENTS, W_OK) ? -errno : 0;
}

/* -- the events, parsed ---------------------------------------------------- */

struct tev {
	const char *name;	/* after "ordma_" */
	const char *body;	/* "qpn=... id=..." */
};

struct trace {
	char *text;
	struct tev *ev;
	int n;
};

/* Events of the ordma system in the text of the trace file. */
static int trace_parse(struct trace *t, char *text)
{
	char *line, *save = NULL, *p, *colon;
	int cap = 1024;

	t->text = text;
	t->n = 0;
	t->ev = malloc(cap * sizeof(*t->ev));
	if (!t->ev)
		return -ENOMEM;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			continue;
		p = strstr(line, ": ordma_");
		if (!p)
			continue;
		p += strlen(": ordma_");
		colon = strchr(p, ':');
		if (!colon)
			continue;
		*colon = 0;
		if (t->n == cap) {
			struct tev *ne = realloc(t->ev, 2 * cap * sizeof(*ne));

			if (!ne)
				return -ENOMEM;
			t->ev = ne;
			cap *= 2;
		}
		t->ev[t->n].name = p;
		t->ev[t->n].body = colon + 1 + (colon[1] == ' ');
		t->n++;
	}
	return 0;
}

static void trace_free(struct trace *t)
{
	free(t->ev);
	free(t->text);
	memset(t, 0, sizeof(*t));
}

/* The text after "@key=" in @e, or NULL. */
static const char *ev_field(const struct tev *e, const char *key)
{
	size_t kl = strlen(key);
	const char *p = e->body;

	while ((p = strstr(p, key))) {
		if ((p == e->body || p[-1] == ' ') && p[kl] == '=')
			return p + kl + 1;
		p += kl;
	}
	return NULL;
}

static long long ev_num(const struct tev *e, const char *key)
{
	const char *v = ev_field(e, key);

	return v ? strtoll(v, NULL, 0) : -1;
}

static int ev_is(const struct tev *e, const char *key, const char *val)
{
	const char *v = ev_field(e, key);
	size_t l = strlen(val);

	return v && !strncmp(v, val, l) && (v[l] == ' ' || !v[l]);
}

/* A copy's direction, 'i' or 'o'; 0 for other events. */
static char ev_dir(const struct tev *e)
{
	const char *v = ev_field(e, "dir");

	return v ? v[0] : 0;
}

static int trace_count(const struct trace *t, const char *name)
{
	int i, n = 0;

	for (i = 0; i < t->n; i++)
		n += !strcmp(t->ev[i].name, name);
	return n;
}

/* -- what a run must show ------------------------------------------------- */

struct want {
	int ops;		/* operations submitted, both ends */
	long long bytes;	/* bytes they moved, both ends */
	const char *mode;
};

#define FAIL(...) do {						\
	fprintf(stderr, "# trace: " __VA_ARGS__);		\
	fputc('\n', stderr);					\
	return -1;						\
} while (0)

/*
 * Starts and ends of @start/@end events, keyed by qpn, id and (copies) dir,
 * pair up in order; an end must report @okey == @okval (left=0, err=0).
 */
static int check_pairs(const struct trace *t, const char *start,
		       const char *end, const char *okey, long long okval)
{
	int i, j, open;

	for (i = 0; i < t->n; i++) {
		const struct tev *s = &t->ev[i];

		if (strcmp(s->name, start))
			continue;
		open = 0;
		for (j = i + 1; j < t->n; j++) {
			const struct tev *e = &t->ev[j];

			if (ev_num(e, "qpn") != ev_num(s, "qpn") ||
			    ev_num(e, "id") != ev_num(s, "id") ||
			    ev_dir(e) != ev_dir(s))
				continue;
			if (!strcmp(e->name, start)) {
				open++;
			} else if (!strcmp(e->name, end)) {
				if (open--)
					continue;
				if (ev_num(e, okey) != okval)
					FAIL("%s %s: %s=%lld", end, e->body, okey,
					     ev_num(e, okey));
				break;
			}
		}
		if (j == t->n) {
			/* What else its channel did, to tell why. */
			for (j = 0; j < t->n; j++)
				if (ev_num(&t->ev[j], "qpn") == ev_num(s, "qpn") &&
				    strcmp(t->ev[j].name, "post"))
					fprintf(stderr, "# trace: %s %s\n",
						t->ev[j].name, t->ev[j].body);
			FAIL("%s %s has no %s", start, s->body, end);
		}
	}
	return 0;
}

static int check_trace(const struct trace *t, const struct want *w)
{
	long long bytes = 0, posted, len, id, zc_bytes = 0;
	int i, j, ops = 0, done, plans, up = 0, dead = 0;

	for (i = 0; i < t->n; i++) {
		const struct tev *s = &t->ev[i];

		if (!strcmp(s->name, "chan_state")) {
			up += !!strstr(s->body, "-> established");
			dead += !!strstr(s->body, "-> dead");
		}
		if (!strcmp(s->name, "post") && ev_is(s, "zc", "1"))
			zc_bytes += ev_num(s, "len");
		if (strcmp(s->name, "submit"))
			continue;
		ops++;
		id = ev_num(s, "id");
		len = ev_num(s, "len");
		if (id <= 0)
			FAIL("submit without a trace id: %s", s->body);
		done = plans = 0;
		posted = 0;
		for (j = 0; j < t->n; j++) {
			const struct tev *e = &t->ev[j];

			if (ev_num(e, "id") != id)
				continue;
			if (!strcmp(e->name, "submit") && j != i)
				FAIL("trace id %lld given twice", id);
			if (!strcmp(e->name, "post"))
				posted += ev_num(e, "len");
			if (!strcmp(e->name, "plan")) {
				plans++;
				if (ev_num(e, "len") != len ||
				    ev_num(e, "copy") > len)
					FAIL("plan %s of a %lld-byte operation",
					     e->body, len);
				if (!strcmp(w->mode, "copy") &&
				    ev_num(e, "copy") != len)
					FAIL("mode copy planned %s", e->body);
			}
			if (!strcmp(e->name, "complete")) {
				done++;
				if (ev_num(e, "res") != len ||
				    ev_num(e, "len") != len || j < i)
					FAIL("submit %s completed %s", s->body,
					     e->body);
				bytes += ev_num(e, "res");
			}
		}
		if (done != 1)
			FAIL("submit %s has %d completions", s->body, done);
		if (ev_is(s, "op", "send") || ev_is(s, "op", "write")) {
			if (!plans)
				FAIL("submit %s was never planned", s->body);
			if (posted != len)
				FAIL("submit %s: its sends carried %lld bytes",
				     s->body, posted);
		}
	}
	if (ops != w->ops || bytes != w->bytes)
		FAIL("%d operations moved %lld bytes, expected %d and %lld",
		     ops, bytes, w->ops, w->bytes);
	if (check_pairs(t, "copy_start", "copy_end", "left", 0) ||
	    check_pairs(t, "reg_start", "reg_done", "err", 0))
		return -1;
	if (up < 2 || dead < 2)
		FAIL("channel ends: %d went ESTABLISHED, %d DEAD", up, dead);

	if (!strcmp(w->mode, "copy") && (trace_count(t, "reg_start") ||
					  zc_bytes))
		FAIL("mode copy: %d registrations, %lld bytes zero-copy",
		     trace_count(t, "reg_start"), zc_bytes);
	if (!strcmp(w->mode, "zerocopy")) {
		int pin = 0, frwr = 0;

		for (i = 0; i < t->n; i++) {
			if (strcmp(t->ev[i].name, "reg_done"))
				continue;
			pin += ev_is(&t->ev[i], "kind", "pin");
			frwr += ev_is(&t->ev[i], "kind", "frwr") ||
				ev_is(&t->ev[i], "kind", "umr");
		}
		if (!pin || !frwr || !zc_bytes)
			FAIL("mode zerocopy: %d sources, %d destinations registered, %lld bytes zero-copy",
			     pin, frwr, zc_bytes);
	}
	/*
	 * Mode overlap splits every buffer that crosses a page: a copied
	 * head, registered segments after it (which the copy path may still
	 * overtake at these sizes, so no zero-copy byte is required).
	 */
	if (!strcmp(w->mode, "overlap")) {
		int split = 0;

		for (i = 0; i < t->n; i++)
			split += !strcmp(t->ev[i].name, "plan") &&
				 ev_num(&t->ev[i], "copy") <
				 ev_num(&t->ev[i], "len");
		if (!split)
			FAIL("mode overlap: no buffer was split");
	}
	return 0;
}

/* -- the transfers --------------------------------------------------------- */

/*
 * A closed channel's end is torn down off the caller's path: its
 * registration worker may still be pinning a segment the copy path
 * overtook. Its events are all written once the device counts no channel.
 */
static int wait_torn_down(int timeout_ms)
{
	long long end = chan_now_ms() + timeout_ms;
	unsigned long long n;

	while (!sysfs_get("channels", &n) && n) {
		if (chan_now_ms() > end)
			return -ETIMEDOUT;
		usleep(10000);
	}
	return 0;
}

/*
 * The peer: exposes a window and sends its token, receives the messages
 * and checks them, then checks the window once told 'W'.
 */
static int peer_side(struct chan_pair *p, void *arg)
{
	unsigned char *win = chan_buf(WIN_LEN, 3);
	size_t i;
	__u64 tok;

	(void)arg;
	PEER_CHECK(win);
	memset(win, 0, WIN_LEN);
	PEER_EQ(0, chan_expose(p->fd, win, WIN_LEN, ORDMA_ACCESS_REMOTE_WRITE,
			       &tok));
	PEER_EQ(sizeof(tok), do_send(p->fd, p->chan[0], &tok, sizeof(tok)));
	for (i = 0; i < NSIZES; i++) {
		unsigned char *buf = chan_buf(sizes[i], 5);

		PEER_CHECK(buf);
		PEER_EQ(sizes[i], do_recv(p->fd, p->chan[0], buf, sizes[i]));
		PEER_EQ(0, chan_check("message", buf, sizes[i],
				      chan_seed(sizes[i], 70)));
		chan_buf_free(buf, sizes[i], 5);
	}
	PEER_EQ(0, ctl_expect(p->ctl, 'W', 60000));
	PEER_EQ(0, chan_check("window", win, WIN_LEN, chan_seed(WIN_LEN, 71)));
	PEER_EQ(0, chan_guard_ok("window", win, WIN_LEN, 3));
	PEER_EQ(0, ctl_signal(p->ctl, 'k'));
	return 0;
}

/*
 * Both ends' operations: the token's SEND and RECV, three messages, one
 * WRITE; then the channel is closed and the peer has exited. Fills @w.
 */
static int run_transfers(struct chan_pair *p, struct want *w)
{
	unsigned char *buf;
	long long ret;
	size_t i;
	__u64 tok;

	ret = chan_pair(p, AF_INET, chan_port(PORT_BASE), 1, peer_side, NULL);
	if (ret)
		return ret;
	if (do_recv(p->fd, p->chan[0], &tok, sizeof(tok)) != sizeof(tok))
		return -EPROTO;
	w->ops = 2;
	w->bytes = 2 * sizeof(tok);
	for (i = 0; i < NSIZES; i++) {
		buf = chan_buf(sizes[i], 7);
		if (!buf)
			return -ENOMEM;
		chan_fill(buf, sizes[i], chan_seed(sizes[i], 70));
		ret = do_send(p->fd, p->chan[0], buf, sizes[i]);
		chan_buf_free(buf, sizes[i], 7);
		if (ret != (long long)sizes[i])
			return ret < 0 ? ret : -EPROTO;
		w->ops += 2;
		w->bytes += 2 * sizes[i];
	}
	buf = chan_buf(WIN_LEN, 1);
	if (!buf)
		return -ENOMEM;
	chan_fill(buf, WIN_LEN, chan_seed(WIN_LEN, 71));
	ret = do_write(p->fd, p->chan[0], buf, WIN_LEN, tok, 0);
	chan_buf_free(buf, WIN_LEN, 1);
	if (ret != WIN_LEN)
		return ret < 0 ? ret : -EPROTO;
	w->ops++;
	w->bytes += WIN_LEN;
	if (ctl_signal(p->ctl, 'W') || ctl_expect(p->ctl, 'k', 60000))
		return -EPIPE;
	if (chan_close(p->fd, p->chan[0]))
		return -errno;
	if (chan_pair_join(p, 30000))
		return -ECHILD;
	return wait_torn_down(30000);
}

/* -- the tests ------------------------------------------------------------- */

FIXTURE(trace) {
	struct chan_pair p;
	char mode[32];
	char buffer_kb[32];
	char clock[32];
	struct trace t;
};

FIXTURE_VARIANT(trace) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(trace, copy) { .mode = "copy" };
FIXTURE_VARIANT_ADD(trace, zerocopy) { .mode = "zerocopy" };
FIXTURE_VARIANT_ADD(trace, overlap) { .mode = "overlap" };

static int knob_rw(const char *attr, char *save, size_t len, const char *val)
{
	char path[256];
	FILE *f;
	int ret = 0;

	ordma_sysfs(path, sizeof(path), attr);
	if (save) {
		f = fopen(path, "r");
		if (!f || !fgets(save, len, f))
			ret = -EIO;
		if (f)
			fclose(f);
		save[strcspn(save, "\n")] = 0;
	}
	if (!ret && val) {
		f = fopen(path, "w");
		if (!f)
			return -errno;
		if (fputs(val, f) < 0)
			ret = -EIO;
		if (fclose(f))
			ret = -errno;
	}
	return ret;
}

FIXTURE_SETUP(trace)
{
	char *clk, *b, *e;

	ORDMA_TEST_FILTER();
	chan_pair_init(&self->p);
	if (tfs_ready())
		SKIP(return, "no tracefs, or no ordma events in it");
	ASSERT_EQ(0, knob_rw("mode", self->mode, sizeof(self->mode),
			     variant->mode));
	tfs_buffer_kb(self->buffer_kb, sizeof(self->buffer_kb));
	clk = tfs_read("trace_clock");
	ASSERT_NE(NULL, clk);
	b = strchr(clk, '[');
	e = b ? strchr(b, ']') : NULL;
	snprintf(self->clock, sizeof(self->clock), "%.*s",
		 b && e ? (int)(e - b - 1) : 5, b && e ? b + 1 : "local");
	free(clk);
	/* One clock for every CPU: a segment registers on another. */
	ASSERT_EQ(0, tfs_write(EVENTS, "0"));
	ASSERT_EQ(0, tfs_write("trace_clock", "global"));
	ASSERT_EQ(0, tfs_write("buffer_size_kb", "4096"));
	ASSERT_EQ(0, tfs_write("trace", ""));
	ASSERT_EQ(0, tfs_write("tracing_on", "1"));
}

FIXTURE_TEARDOWN(trace)
{
	chan_pair_destroy(&self->p);
	trace_free(&self->t);
	if (!self->mode[0])
		return;
	tfs_write(EVENTS, "0");
	tfs_write("trace", "");
	tfs_write("trace_clock", self->clock);
	tfs_write("buffer_size_kb", self->buffer_kb);
	if (knob_rw("mode", NULL, 0, self->mode))
		fprintf(stderr, "# could not restore mode %s\n", self->mode);
}

/* Events on: the trace accounts for every operation and byte. */
TEST_F_TIMEOUT(trace, accounts, 120)
{
	struct want w = { .mode = variant->mode };

	ASSERT_EQ(0, tfs_write(EVENTS, "1"));
	ASSERT_EQ(0, run_transfers(&self->p, &w));
	ASSERT_EQ(0, tfs_write(EVENTS, "0"));
	ASSERT_EQ(0, trace_parse(&self->t, tfs_read("trace")));
	EXPECT_EQ(0, check_trace(&self->t, &w));
}

/*
 * Events on, then off: the same transfers again write nothing into the
 * buffer.
 */
TEST_F_TIMEOUT(trace, silent_when_off, 120)
{
	struct want w = { .mode = variant->mode };

	ASSERT_EQ(0, tfs_write(EVENTS, "1"));
	ASSERT_EQ(0, run_transfers(&self->p, &w));
	ASSERT_EQ(0, tfs_write(EVENTS, "0"));
	ASSERT_EQ(0, trace_parse(&self->t, tfs_read("trace")));
	ASSERT_EQ(w.ops, trace_count(&self->t, "submit"));
	trace_free(&self->t);
	chan_pair_destroy(&self->p);
	chan_pair_init(&self->p);

	ASSERT_EQ(0, tfs_write("trace", ""));
	ASSERT_EQ(0, run_transfers(&self->p, &w));
	ASSERT_EQ(0, trace_parse(&self->t, tfs_read("trace")));
	EXPECT_EQ(0, self->t.n);
}

TEST_HARNESS_MAIN
