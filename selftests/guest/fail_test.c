// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection over every ioctl path (the fail-nth idea of iommufd's
 * selftests): for n = 1, 2, ... the n-th failable allocation of the calling
 * task fails, until the call runs through without meeting one. Each failed
 * call must return an error and leave nothing behind; the file stays usable.
 *
 * The same sweep runs over the ib_client add path: the RDMA link is added
 * (netlink, from the armed thread) with its n-th allocation failing, and
 * ordma's context for it must then be either complete and working or
 * cleanly absent.
 *
 * Needs CONFIG_FAULT_INJECTION and FAILSLAB (the debug guest kernel of
 * tools/debug-kernel); skipped on kernels without /proc/self/fail-nth.
 */
#define ORDMA_GUEST_TEST
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <rdma/rdma_cma.h>
#include "ordma_test.h"
#include "ordma_chan.h"
#include "kselftest_harness.h"

#define PORT_BASE	18600
#define MAX_NTH		5000

static int debugfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, val, strlen(val)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * kmemleak's own allocations (one for each object it tracks) fall back to
 * a pool when they fail: failing one tests kmemleak, not ordma, and was
 * every other step of client_add's sweep. The debug guest boots with
 * every slab cache but kmemleak's marked failable (slub_debug=A, from
 * tools/vmtest); failslab's cache-filter then leaves kmemleak's out.
 */
static void failslab_skip_kmemleak(void)
{
	if (ordma_read_ll("/sys/kernel/slab/kmalloc-64/failslab") == 1 &&
	    ordma_read_ll("/sys/kernel/slab/kmemleak_object/failslab") == 0)
		debugfs_write("/sys/kernel/debug/failslab/cache-filter", "Y");
}

/* Open this thread's fail-nth file and make sleeping allocations failable. */
static int fail_nth_open(void)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%ld/fail-nth",
		 (long)syscall(SYS_gettid));
	if (access(path, W_OK))
		return -1;
	debugfs_write("/sys/kernel/debug/failslab/ignore-gfp-wait", "N");
	debugfs_write("/sys/kernel/debug/failslab/verbose", "0");
	failslab_skip_kmemleak();
	debugfs_write("/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N");
	debugfs_write("/sys/kernel/debug/fail_page_alloc/verbose", "0");
	return open(path, O_RDWR);
}

static void fail_nth_set(int fd, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (pwrite(fd, buf, len, 0) != len)
		abort();
}

/* Non-zero while the armed fault has not been hit yet. */
static int fail_nth_pending(int fd)
{
	char buf[16] = "";

	if (pread(fd, buf, sizeof(buf) - 1, 0) <= 0)
		abort();
	return atoi(buf) != 0;
}

struct sweep {
	int ofd;		/* the /dev/ordma under test */
	__u32 chan;		/* an established channel, for data calls */
	unsigned short port;	/* a listening peer, for connect */
	void *buf;
};

typedef int (*sweep_fn)(struct sweep *s);

/*
 * Run @fn with the n-th allocation failing, n = 1, 2, ... until no fault
 * was hit. Returns the number of injected failures, or -1 if a failing call
 * reported success with nothing to show, or the sweep did not end.
 */
static int run_sweep(int nth, struct sweep *s, sweep_fn prepare, sweep_fn fn,
		     int *failed)
{
	unsigned int n;
	int ret;

	*failed = 0;
	for (n = 1; n < MAX_NTH; n++) {
		if (prepare && prepare(s))
			return -1;
		fail_nth_set(nth, n);
		ret = fn(s);
		if (fail_nth_pending(nth)) {
			fail_nth_set(nth, 0);
			return ret ? -1 : (int)n - 1;	/* clean run must pass */
		}
		fail_nth_set(nth, 0);
		if (ret)
			(*failed)++;
	}
	return -1;
}

static int op_open_close(struct sweep *s)
{
	int fd = open("/dev/ordma", O_RDWR);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int op_listen_close(struct sweep *s)
{
	__u32 id = 0;
	int ret = chan_listen(s->ofd, AF_INET, s->port + 1, 0, &id);

	if (!ret)
		ret = chan_close(s->ofd, id);
	return ret;
}

static int op_expose_unexpose(struct sweep *s)
{
	__u64 tok = 0;
	int ret = chan_expose(s->ofd, s->buf, 65536, ORDMA_ACCESS_REMOTE_READ,
			      &tok);

	if (!ret)
		ret = chan_unexpose(s->ofd, tok);
	return ret;
}

static int op_connect_close(struct sweep *s)
{
	struct ordma_connect c = { .size = sizeof(c) };

	c.addr = chan_addr(AF_INET, NULL, s->port);
	if (ioctl(s->ofd, ORDMA_IOC_CONNECT, &c))
		return -errno;
	return chan_close(s->ofd, c.out_chan_id);
}

/* Completions pile up; the test drains and checks them at the end. */
static int op_submit(struct sweep *s)
{
	return xsubmit(s->ofd, ORDMA_OP_SEND, s->chan, s->buf, 4096, 1, 0, 0,
		       0);
}

/* A completion is waiting before the armed WAIT. */
static int prep_completion(struct sweep *s)
{
	struct pollfd pfd = { .fd = s->ofd, .events = POLLIN };

	if (op_submit(s))
		return -1;
	return poll(&pfd, 1, CHAN_WAIT_MS) == 1 ? 0 : -1;
}

static int op_wait(struct sweep *s)
{
	struct ordma_cqe cqe[4];
	struct ordma_wait w = { .size = sizeof(w), .cqes = (unsigned long)cqe,
				.max = 4, .flags = ORDMA_F_NONBLOCK };

	if (ioctl(s->ofd, ORDMA_IOC_WAIT, &w))
		return -errno;
	for (unsigned int i = 0; i < w.out_count; i++)
		if (cqe[i].res != 4096)
			return -EIO;
	return 0;
}

static int op_chan_info(struct sweep *s)
{
	struct ordma_chan_info ci;

	return chan_info(s->ofd, s->chan, &ci);
}

/* The peer: accept whatever comes, drain every message, until killed. */
static void sink(unsigned short port, int ready)
{
	int fd = chan_open();
	__u32 lis = 0, id;
	static unsigned char buf[65536];

	if (fd < 0 || chan_listen(fd, AF_INET, port, 0, &lis))
		_exit(2);
	if (write(ready, "r", 1) != 1)
		_exit(2);
	for (;;) {
		struct ordma_accept a = { .size = sizeof(a),
					  .listener_id = lis,
					  .flags = ORDMA_F_NONBLOCK };
		struct ordma_cqe cqe;

		if (!ioctl(fd, ORDMA_IOC_ACCEPT, &a)) {
			id = a.out_chan_id;
			for (int i = 0; i < 64; i++)
				xsubmit(fd, ORDMA_OP_RECV, id, buf, sizeof(buf),
					i, 0, 0, 0);
		}
		while (!xwait(fd, &cqe, 0))
			if (cqe.res >= 0)
				xsubmit(fd, ORDMA_OP_RECV, cqe.chan_id, buf,
					sizeof(buf), 0, 0, 0, 0);
		chan_sleep_ms(5);
	}
}

FIXTURE(fail) {
	int nth;
	pid_t peer;
	struct sweep s;
};

FIXTURE_SETUP(fail)
{
	static unsigned short port = PORT_BASE;
	int ready[2];
	char c;

	ORDMA_TEST_FILTER();
	self->nth = fail_nth_open();
	if (self->nth < 0)
		SKIP(return, "no fail-nth: needs the debug guest kernel (tools/vmtest --debug-kernel)");
	self->s.port = port;
	port += 2;
	self->s.buf = chan_buf(65536, 0);
	ASSERT_NE(NULL, self->s.buf);
	ASSERT_EQ(0, pipe(ready));
	self->peer = fork();
	ASSERT_LE(0, self->peer);
	if (!self->peer)
		sink(self->s.port, ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	self->s.ofd = chan_open();
	ASSERT_LE(0, self->s.ofd);
	ASSERT_EQ(0, chan_connect(self->s.ofd, AF_INET, self->s.port,
				  &self->s.chan));
}

FIXTURE_TEARDOWN(fail)
{
	if (self->nth < 0)
		return;
	close(self->s.ofd);
	kill(self->peer, SIGKILL);
	waitpid(self->peer, NULL, 0);
	close(self->nth);
}

FIXTURE_VARIANT(fail) {
	const char *name;
	sweep_fn prepare;
	sweep_fn fn;
};

FIXTURE_VARIANT_ADD(fail, open) { "open", NULL, op_open_close };
FIXTURE_VARIANT_ADD(fail, listen) { "listen", NULL, op_listen_close };
FIXTURE_VARIANT_ADD(fail, expose) { "expose", NULL, op_expose_unexpose };
FIXTURE_VARIANT_ADD(fail, connect) { "connect", NULL, op_connect_close };
FIXTURE_VARIANT_ADD(fail, submit) { "submit", NULL, op_submit };
FIXTURE_VARIANT_ADD(fail, wait) { "wait", prep_completion, op_wait };
FIXTURE_VARIANT_ADD(fail, chan_info) { "chan_info", NULL, op_chan_info };

TEST_F_TIMEOUT(fail, sweep, 600)
{
	unsigned long long total, free_;
	struct ordma_chan_info ci;
	struct ordma_cqe cqe;
	int failed, hit, ret;

	if (self->nth < 0)
		SKIP(return, "no fail-nth on this kernel");
	hit = run_sweep(self->nth, &self->s, variant->prepare, variant->fn,
			&failed);
	ASSERT_LE(0, hit) TH_LOG("%s: the sweep did not end cleanly", variant->name);
	TH_LOG("%s: %d injected failures, %d calls failed", variant->name,
	       hit, failed);

	/*
	 * Every queued send completes, and the file still works. While some
	 * are in flight, a slow guest may take long over the next one.
	 */
	for (;;) {
		ASSERT_EQ(0, chan_info(self->s.ofd, self->s.chan, &ci));
		ret = xwait(self->s.ofd, &cqe,
			    ci.out_inflight ? CHAN_WAIT_MS : 100);
		if (ret == -ETIMEDOUT && !ci.out_inflight)
			break;
		ASSERT_EQ(0, ret);
		ASSERT_EQ(4096, cqe.res);
	}
	ASSERT_EQ(4096, do_send(self->s.ofd, self->s.chan, self->s.buf, 4096));
	ASSERT_EQ(0, sysfs_get("chunks_total", &total));
	ASSERT_EQ(0, sysfs_get("chunks_free", &free_));
	ASSERT_LE(free_, total);
}


/*
 * Failed posts (kernel/fault.c): for each kind of post, the k-th one the
 * module makes (either end: both run in this guest) fails, k = 1, 2, ...
 * (POST_EVERY), while a channel carries a message of each size of post_sizes to an echo
 * peer and back, until a run meets no fault. A run that met one may pass
 * (a failed registration falls back, a failed post of the peer's may come
 * after its last message) or fail; an operation that fails says so with an
 * errno and no sooner than it must: no completion with a wrong length, no
 * byte that differs, no operation that neither completes nor fails within
 * CHAN_WAIT_MS. Once the pair is closed, the device has no channel, no MR,
 * no pinned page and every chunk of its pool free again; the console is
 * the rig's to check (a kernel report fails the suite).
 *
 * fail_send_posted posts the work request and then reports the post
 * failed, as siw does for one it rejects: its completion comes after the
 * failure.
 */
#define POST_PORT_BASE	18800
#define POST_DIR	"/sys/kernel/debug/ordma/"
#define POST_MAX_K	2000U
/*
 * Every one of the first POST_EVERY posts fails in turn, then about every
 * fourth of the next ones: a run makes about 80 posts of a kind.
 */
#define POST_EVERY	24U

static const long long post_sizes[] = { 100, 4096, 65536, 1 * MiB };

static int post_knob(const char *attr, const char *knob, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), POST_DIR "%s/%s", attr, knob);
	return debugfs_write(path, val);
}

/* The @k-th post of @attr fails, once. */
static int post_arm(const char *attr, unsigned int k)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", k);
	if (post_knob(attr, "verbose", "0") ||
	    post_knob(attr, "task-filter", "N") ||
	    post_knob(attr, "interval", "1") ||
	    post_knob(attr, "times", "1") ||
	    post_knob(attr, "space", v))
		return -1;
	return post_knob(attr, "probability", "100");
}

/* Disarm @attr; 1 if its failure was injected, 0 if not, -1 on error. */
static int post_disarm(const char *attr)
{
	char path[128];
	long long left;

	if (post_knob(attr, "probability", "0"))
		return -1;
	snprintf(path, sizeof(path), POST_DIR "%s/times", attr);
	left = ordma_read_ll(path);
	return left < 0 ? -1 : left == 0;
}

/*
 * The messages there and back: 0 when all arrived, 1 when one failed as
 * it may, -1 for a defect.
 */
static int post_run(unsigned int k, unsigned char *out, unsigned char *in)
{
	struct chan_pair p;
	long long res;
	unsigned int i;
	int ret = -1;

	chan_pair_init(&p);
	res = chan_pair(&p, AF_INET, chan_port(POST_PORT_BASE), 1, peer_echo,
			NULL);
	if (res) {
		/* A post of the connect's failed: refused or reset. */
		ret = res == -ETIMEDOUT ? -1 : 1;
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(post_sizes); i++) {
		long long len = post_sizes[i];
		uint64_t seed = chan_seed(len, k);

		chan_fill(out, len, seed);
		res = do_send(p.fd, p.chan[0], out, len);
		if (res != len)
			break;
		res = do_recv(p.fd, p.chan[0], in, CHAN_ECHO_MAX);
		if (res != len)
			break;
		if (chan_check("echo", in, len, seed))
			goto out;
	}
	if (i == ARRAY_SIZE(post_sizes)) {
		res = do_send(p.fd, p.chan[0], "Q", 1);
		if (res == 1)
			res = chan_pair_join(&p, CHAN_PEER_MS);
		/* The peer's end may fail after its last echo. */
		ret = res ? 1 : 0;
		goto out;
	}
	if (res >= 0 || res == -ETIMEDOUT || res == -EPROTO)
		fprintf(stderr, "# k %u, message %u: %lld\n", k, i, res);
	else
		ret = 1;
out:
	chan_pair_destroy(&p);
	return ret;
}

/* Nothing of the pair is left on the device. */
static int post_idle(void)
{
	unsigned long long chans = 1, total = 0, free_ = 1, mrs = 1, pin = 1;
	long long end = chan_now_ms() + CHAN_WAIT_MS;

	do {
		if (!sysfs_get("channels", &chans) &&
		    !sysfs_get("chunks_total", &total) &&
		    !sysfs_get("chunks_free", &free_) &&
		    !sysfs_get("mrs_live", &mrs) &&
		    !sysfs_get("pages_pinned", &pin) && !chans &&
		    free_ == total && !mrs && !pin)
			return 0;
		chan_sleep_ms(20);
	} while (chan_now_ms() < end);
	fprintf(stderr, "# channels %llu, chunks %llu of %llu free, MRs %llu, pages pinned %llu\n",
		chans, free_, total, mrs, pin);
	return -1;
}

FIXTURE(post) {
	unsigned char *out, *in;
};

FIXTURE_VARIANT(post) {
	const char *attr;
	const char *mode;	/* the device's mode knob for the run */
};

/*
 * Mode zerocopy: the sends are placed (an RDMA WRITE and a SEND), the
 * receives registered (fail_reg's posts).
 */
FIXTURE_VARIANT_ADD(post, send) { "fail_send", "auto" };
FIXTURE_VARIANT_ADD(post, send_zerocopy) { "fail_send", "zerocopy" };
FIXTURE_VARIANT_ADD(post, send_posted) { "fail_send_posted", "auto" };
FIXTURE_VARIANT_ADD(post, send_posted_zerocopy) { "fail_send_posted", "zerocopy" };
FIXTURE_VARIANT_ADD(post, recv) { "fail_recv", "auto" };
FIXTURE_VARIANT_ADD(post, reg) { "fail_reg", "zerocopy" };

FIXTURE_SETUP(post)
{
	char path[128];

	ORDMA_TEST_FILTER();
	snprintf(path, sizeof(path), POST_DIR "%s", variant->attr);
	if (access(path, W_OK))
		SKIP(return, "no %s: needs the debug guest kernel (CONFIG_FAULT_INJECTION_DEBUG_FS)",
		     path);
	self->out = chan_buf(CHAN_ECHO_MAX, 0);
	self->in = chan_buf(CHAN_ECHO_MAX, 0);
	ASSERT_NE(NULL, self->out);
	ASSERT_NE(NULL, self->in);
	ASSERT_EQ(0, sysfs_set_str("mode", variant->mode));
}

FIXTURE_TEARDOWN(post)
{
	if (self->out) {
		post_disarm(variant->attr);
		sysfs_set_str("mode", "auto");
		chan_buf_free(self->out, CHAN_ECHO_MAX, 0);
		chan_buf_free(self->in, CHAN_ECHO_MAX, 0);
	}
}

TEST_F_TIMEOUT(post, sweep, 1800)
{
	unsigned int k, failed = 0;
	int hit, ret;

	if (!self->out)
		SKIP(return, "no fault injection on this kernel");
	for (k = 1; k < POST_MAX_K; k += k < POST_EVERY ? 1 : k / 4) {
		ASSERT_EQ(0, post_arm(variant->attr, k));
		ret = post_run(k, self->out, self->in);
		hit = post_disarm(variant->attr);
		ASSERT_LE(0, hit);
		ASSERT_LE(0, ret) TH_LOG("%s: post %u failed: a defect", variant->attr, k);
		ASSERT_EQ(0, post_idle()) TH_LOG("%s: post %u failed: the pair left something", variant->attr, k);
		if (!hit) {
			/* No fault met: everything must have passed. */
			ASSERT_EQ(0, ret);
			break;
		}
		failed += ret;
	}
	ASSERT_LT(k, POST_MAX_K);
	TH_LOG("%s, mode %s: no fault met at post %u, %u runs failed",
	       variant->attr, variant->mode, k, failed);
}

/*
 * A source that found no segment slot for its first piece (fail_seg_source,
 * as when the channel's other operations hold every slot) sends it through
 * the copy path; its next segment starts at the page past those bytes. From
 * a buffer that does not start on a page, the bytes from the end of that
 * piece up to the page are in no segment: they must still go, by copy, in
 * mode zerocopy too. A send longer than the segments its slots cover at
 * once (a channel has 4, of 2 MiB at most) waited for a segment to cover
 * them and never completed (-ETIMEDOUT after progress_timeout_ms).
 */
#define SEG_LEN		(9 * MiB + 4099)
#define SEG_SALT	77
/* Where the source starts in its page. */
#define SEG_OFS		100

/* Receive one SEG_LEN message and check it. */
static int peer_recv_seg(struct chan_pair *p, void *arg)
{
	unsigned char *buf = chan_buf(SEG_LEN, 1);
	long long res;

	(void)arg;
	PEER_CHECK(buf);
	res = do_recv(p->fd, p->chan[0], buf, SEG_LEN);
	if (res != SEG_LEN) {
		fprintf(stderr, "# peer: receive: %lld\n", res);
		return 1;
	}
	PEER_EQ(0, chan_check("received", buf, SEG_LEN,
			      chan_seed(SEG_LEN, SEG_SALT)));
	chan_buf_free(buf, SEG_LEN, 1);
	return 0;
}

FIXTURE(seg) {
	unsigned char *out;
};

FIXTURE_SETUP(seg)
{
	ORDMA_TEST_FILTER();
	if (access(POST_DIR "fail_seg_source", W_OK))
		SKIP(return, "no fail_seg_source: needs the debug guest kernel (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	self->out = chan_buf(SEG_LEN, SEG_OFS);
	ASSERT_NE(NULL, self->out);
	ASSERT_EQ(0, sysfs_set_str("mode", "zerocopy"));
}

FIXTURE_TEARDOWN(seg)
{
	if (self->out) {
		post_disarm("fail_seg_source");
		sysfs_set_str("mode", "auto");
		chan_buf_free(self->out, SEG_LEN, SEG_OFS);
	}
}

TEST_F_TIMEOUT(seg, source_copied_first, 120)
{
	unsigned long long zc0, cp0, zc, cp;
	struct chan_pair p;

	if (!self->out)
		SKIP(return, "no fault injection on this kernel");
	chan_pair_init(&p);
	ASSERT_EQ(0, chan_pair(&p, AF_INET, chan_port(POST_PORT_BASE), 1,
			       peer_recv_seg, NULL));
	chan_fill(self->out, SEG_LEN, chan_seed(SEG_LEN, SEG_SALT));
	ASSERT_EQ(0, sysfs_get("bytes_zerocopy", &zc0));
	ASSERT_EQ(0, sysfs_get("bytes_copied", &cp0));
	/* The first segment of the first source asked for finds no slot. */
	ASSERT_EQ(0, post_arm("fail_seg_source", 1));
	EXPECT_EQ(SEG_LEN, do_send(p.fd, p.chan[0], self->out, SEG_LEN));
	ASSERT_EQ(1, post_disarm("fail_seg_source"));
	ASSERT_EQ(0, chan_pair_join(&p, CHAN_PEER_MS));
	chan_pair_destroy(&p);
	/* Past the copied head, the rest went zero-copy. */
	ASSERT_EQ(0, sysfs_get("bytes_zerocopy", &zc));
	ASSERT_EQ(0, sysfs_get("bytes_copied", &cp));
	zc -= zc0;
	cp -= cp0;
	TH_LOG("copied %llu, zero-copy %llu", cp, zc);
	ASSERT_EQ((unsigned long long)SEG_LEN, zc + cp);
	ASSERT_LT(cp, zc);
	ASSERT_EQ(0, post_idle());
}

/*
 * The ib_client add path: for n = from, from + 1, ... the RDMA link
 * LINK_IBDEV (rxe0 unless ORDMA_TEST_IBDEV names another) is deleted and
 * added again (RDMA_NLDEV_CMD_NEWLINK, what `rdma link add` sends) from the
 * armed thread, so the n-th allocation of the whole add fails: in the
 * netlink request, in the driver (rxe, siw), in the RDMA core or in one of
 * its clients' .add, ordma's among them. The core ignores a client's failed
 * .add (6.1 and 6.12 alike): the device stays, without that client's
 * context, and the client's .remove is never called for it. After each
 * step:
 *  - the add failed: no device, no ordma context;
 *  - the device is there and ordma has no context: no directory either,
 *    and no PD left behind (the core's resource tracker would WARN when the
 *    link is deleted at the next step);
 *  - ordma has a context: every attribute is there, the fresh pool is idle
 *    and every counter zero, and a channel carries a checked message there
 *    and back, after which the pool is whole again. When the channel
 *    fails, the core must be missing a piece (rdma_cm, ib_cm or the GID of
 *    192.0.2.1, after a fault in their own add) for the step to pass.
 * The sweep ends with the first add that met no fault. ordma runs with a
 * pool of 4 chunks here: its .add fails at each chunk's allocation without
 * going through hundreds of identical ones. At the end the device is back
 * on ordma0, ordma's PD is the only one it has, the module unloads leaving
 * none, and is loaded with its defaults again for the tests that follow.
 */
#define LINK_IBDEV	ordma_ibdev()
#define LINK_NETDEV	"ordma0"
#define ADD_CHUNKS	4
#define ADD_POOL_BYTES	(ADD_CHUNKS * 65536)
#define ADD_PORT_BASE	18700
/*
 * A clean add makes about 7500 failable allocations in the debug guest
 * (rxe's GID tables alone are 3000 sysfs files; 15000 until kmemleak's own
 * were left out, failslab_skip_kmemleak()), about 2.3 s each: failing every
 * one takes more than four hours, and their count, and where ordma's .add
 * begins among them, vary from one add to the next (by 35 and more). So
 * ordma's .add arms the fault itself (debugfs add_fail_at, kernel/fault.c):
 * the k-th allocation from its start fails, for k = 1, 2, ... until one
 * lands past its end (its mark add_nth_end holds what was left), then every
 * ADD_TAIL_STRIDE-th after it, to the end of the add. Before that the
 * ADD_LEAD allocations before .add fail once each, aimed by the task's own
 * fail-nth where a clean add's .add began. ORDMA_FAIL_ADD_FROM=n fails
 * every allocation of the add from the n-th on instead.
 */
#define ADD_LEAD	8
#define ADD_TAIL_STRIDE	8
/* Written to the marks before each add: .add did not run if it stays. */
#define ADD_UNSEEN	0xffffffffU
#define ADD_MSG		1000

static int path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Does /sys/class/infiniband/LINK_IBDEV (or @tail in it) exist? */
static int ibdev_exists(const char *tail)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s%s", LINK_IBDEV,
		 tail);
	return path_exists(path);
}

/* Does ordma's context for LINK_IBDEV exist? */
static int ctx_exists(void)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/class/ordma/%s", LINK_IBDEV);
	return path_exists(path);
}

static void nla_put_str(struct nlmsghdr *nh, unsigned short type,
			const char *str)
{
	struct nlattr *a = (void *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));
	size_t len = strlen(str) + 1;

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, str, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* A bound NETLINK_RDMA socket, so that sending allocates no port id. */
static int rdma_nl_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 60 };
	int sk = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);

	if (sk < 0)
		return -1;
	if (bind(sk, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(sk, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		close(sk);
		return -1;
	}
	return sk;
}

union rdma_nl_msg {
	struct nlmsghdr nh;
	char buf[8192];
};

static void rdma_nl_init(union rdma_nl_msg *msg, unsigned int cmd,
			 unsigned short flags)
{
	memset(msg, 0, sizeof(*msg));
	msg->nh.nlmsg_len = NLMSG_HDRLEN;
	msg->nh.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
	msg->nh.nlmsg_flags = NLM_F_REQUEST | flags;
	msg->nh.nlmsg_seq = 1;
}

/* Send @msg and return the kernel's answer to it: 0 or -errno. */
static int rdma_nl_call(int sk, union rdma_nl_msg *msg)
{
	struct nlmsgerr *err;
	ssize_t n;

	if (send(sk, msg, msg->nh.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(sk, msg, sizeof(*msg), 0);
	if (n < 0)
		return -errno;
	if ((size_t)n < NLMSG_HDRLEN + sizeof(*err) ||
	    msg->nh.nlmsg_type != NLMSG_ERROR)
		return -EPROTO;
	err = NLMSG_DATA(&msg->nh);
	return err->error;
}

/*
 * `rdma link add LINK_IBDEV type TYPE netdev ordma0`, done by this thread: the
 * kernel handles the request in the sender's context. Returns the kernel's
 * answer (0 or -errno), or -errno of send/recv; -ENOBUFS from recv means
 * the answer itself was not allocated, whatever became of the link.
 */
static int rdma_link_add(int sk)
{
	union rdma_nl_msg msg;

	rdma_nl_init(&msg, RDMA_NLDEV_CMD_NEWLINK, NLM_F_ACK);
	nla_put_str(&msg.nh, RDMA_NLDEV_ATTR_DEV_NAME, LINK_IBDEV);
	nla_put_str(&msg.nh, RDMA_NLDEV_ATTR_LINK_TYPE, ordma_dev_type());
	nla_put_str(&msg.nh, RDMA_NLDEV_ATTR_NDEV_NAME, LINK_NETDEV);
	return rdma_nl_call(sk, &msg);
}

/* The index of RDMA device LINK_IBDEV (a dump of every device), or -errno. */
static int rdma_dev_index(int sk)
{
	union rdma_nl_msg msg;
	struct nlmsghdr *nh;
	struct nlattr *a;
	int index, found = -ENODEV, rem;
	const char *name;
	ssize_t n;

	rdma_nl_init(&msg, RDMA_NLDEV_CMD_GET, NLM_F_DUMP);
	if (send(sk, &msg, msg.nh.nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		n = recv(sk, &msg, sizeof(msg), 0);
		if (n < 0)
			return -errno;
		for (nh = &msg.nh; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_DONE)
				return found;
			if (nh->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(nh))->error ?: -EPROTO;
			index = -1;
			name = NULL;
			a = NLMSG_DATA(nh);
			rem = NLMSG_PAYLOAD(nh, 0);
			while (rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
			       a->nla_len <= rem) {
				if (a->nla_type == RDMA_NLDEV_ATTR_DEV_INDEX)
					memcpy(&index, (char *)a + NLA_HDRLEN, 4);
				if (a->nla_type == RDMA_NLDEV_ATTR_DEV_NAME)
					name = (char *)a + NLA_HDRLEN;
				rem -= NLA_ALIGN(a->nla_len);
				a = (void *)((char *)a + NLA_ALIGN(a->nla_len));
			}
			if (name && index >= 0 && !strcmp(name, LINK_IBDEV))
				found = index;
		}
	}
}

/* `rdma link delete LINK_IBDEV`: 0 or -errno. */
static int rdma_link_del(void)
{
	union rdma_nl_msg msg;
	int sk = rdma_nl_open(), index, ret;

	if (sk < 0)
		return -errno;
	index = rdma_dev_index(sk);
	ret = index;
	if (index >= 0) {
		rdma_nl_init(&msg, RDMA_NLDEV_CMD_DELLINK, NLM_F_ACK);
		msg.nh.nlmsg_len += NLA_HDRLEN + 4;
		((struct nlattr *)NLMSG_DATA(&msg.nh))->nla_type =
			RDMA_NLDEV_ATTR_DEV_INDEX;
		((struct nlattr *)NLMSG_DATA(&msg.nh))->nla_len = NLA_HDRLEN + 4;
		memcpy((char *)NLMSG_DATA(&msg.nh) + NLA_HDRLEN, &index, 4);
		ret = rdma_nl_call(sk, &msg);
	}
	close(sk);
	return ret;
}

static int ordma_pds(void)
{
	return rdma_res_count("pd", "[ordma]");
}

/* Every attribute of a fresh context: the small idle pool, counters at 0. */
static int context_complete(void)
{
	static const struct {
		const char *name;
		unsigned long long val;
	} want[] = {
		{ "pool_bytes", ADD_POOL_BYTES }, { "chunk_bytes", 65536 },
		{ "chan_quota_chunks", 64 }, { "chunks_total", ADD_CHUNKS },
		{ "chunks_free", ADD_CHUNKS }, { "chunks_held", 0 },
		{ "high_water", 0 }, { "alloc_waits", 0 }, { "bytes_tx", 0 },
		{ "bytes_rx", 0 }, { "ops", 0 }, { "errors", 0 },
		{ "channels", 0 }, { "pages_pinned", 0 }, { "mrs_live", 0 },
	};
	char name[32] = "", path[256];
	unsigned long long v;
	unsigned int i;
	FILE *f;
	int ret;

	f = fopen(ordma_sysfs(path, sizeof(path), "ibdev"), "r");
	if (f && fgets(name, sizeof(name), f))
		name[strcspn(name, "\n")] = '\0';
	if (!f || strcmp(name, LINK_IBDEV)) {
		fprintf(stderr, "# %s: '%s'\n", path, name);
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		ret = sysfs_get(want[i].name, &v);
		if (ret || v != want[i].val) {
			fprintf(stderr, "# %s: %s %llu, expected %llu\n",
				want[i].name, ret ? strerror(-ret) : "",
				ret ? 0 : v, want[i].val);
			return -1;
		}
	}
	return 0;
}

/* A channel on LINK_IBDEV: a checked message to an echo peer and back. */
static int channel_works(unsigned int step)
{
	unsigned char *out = chan_buf(ADD_MSG, 0), *in = chan_buf(ADD_MSG, 0);
	uint64_t seed = chan_seed(ADD_MSG, step);
	struct chan_pair p;
	long long res = -ENOMEM;
	int ret = -1;

	chan_pair_init(&p);
	if (!out || !in)
		goto out;
	res = chan_pair(&p, AF_INET, chan_port(ADD_PORT_BASE), 1, peer_echo,
			NULL);
	if (res)
		goto out;
	chan_fill(out, ADD_MSG, seed);
	res = do_send(p.fd, p.chan[0], out, ADD_MSG);
	if (res != ADD_MSG)
		goto out;
	res = do_recv(p.fd, p.chan[0], in, ADD_MSG);
	if (res != ADD_MSG || chan_check("echo", in, ADD_MSG, seed))
		goto out;
	res = do_send(p.fd, p.chan[0], "Q", 1);
	if (res != 1)
		goto out;
	res = chan_pair_join(&p, CHAN_PEER_MS);
	ret = res ? -1 : 0;
out:
	if (ret)
		fprintf(stderr, "# step %u: channel: %lld\n", step, res);
	chan_pair_destroy(&p);
	chan_buf_free(out, ADD_MSG, 0);
	chan_buf_free(in, ADD_MSG, 0);
	return ret;
}

/* Once the channel is gone, the pool is whole again. */
static int pool_idle(void)
{
	unsigned long long chans = 1, total = 0, free_ = 1;
	long long end = chan_now_ms() + CHAN_WAIT_MS;

	do {
		if (!sysfs_get("channels", &chans) &&
		    !sysfs_get("chunks_total", &total) &&
		    !sysfs_get("chunks_free", &free_) && !chans &&
		    total == ADD_CHUNKS && free_ == total)
			return 0;
		chan_sleep_ms(20);
	} while (chan_now_ms() < end);
	fprintf(stderr, "# channels %llu, chunks %llu of %llu free\n", chans,
		free_, total);
	return -1;
}

/*
 * Could the RDMA core connect on LINK_IBDEV without ordma? librdmacm binds to
 * 192.0.2.1 through rdma_cm (which needs its context and the GID; the
 * library also needs uverbs), ib_cm shows its counters on the port. In a
 * child: librdmacm keeps the device list of its first use.
 */
static int core_can_connect(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rdma_cm_id *id;
	pid_t pid;
	int st;

	if (!ibdev_exists("/ports/1/cm_rx_msgs"))
		return 0;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		inet_pton(AF_INET, CHAN_IP4, &sin.sin_addr);
		if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) ||
		    rdma_bind_addr(id, (struct sockaddr *)&sin) || !id->verbs)
			_exit(1);
		_exit(!!strcmp(ibv_get_device_name(id->verbs->device),
			       LINK_IBDEV));
	}
	if (waitpid(pid, &st, 0) != pid)
		return 1;
	return WIFEXITED(st) && !WEXITSTATUS(st);
}

/* insmod ordma.ko, with a pool of @pool_bytes, or its default for 0. */
static int ordma_load(unsigned int pool_bytes)
{
	if (!pool_bytes)
		return ordma_sh("insmod %s", ordma_ko());
	return ordma_sh("insmod %s pool_bytes=%u", ordma_ko(), pool_bytes);
}

/* ordma's .add arms the @k-th allocation from its start to fail; 0: none. */
static int add_fail_at(unsigned int k)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", k);
	return debugfs_write(POST_DIR "add_fail_at", v);
}

FIXTURE(client_add) {
	int nth;
};

FIXTURE_SETUP(client_add)
{
	ORDMA_TEST_FILTER();
	self->nth = fail_nth_open();
	if (self->nth < 0)
		SKIP(return, "no fail-nth: needs the debug guest kernel (tools/vmtest --debug-kernel)");
}

/* Whatever happened: LINK_IBDEV on ordma0, ordma loaded with its defaults. */
FIXTURE_TEARDOWN(client_add)
{
	char param[32] = "";
	FILE *f;

	if (self->nth < 0)
		return;
	fail_nth_set(self->nth, 0);
	close(self->nth);
	add_fail_at(0);
	if (!ibdev_exists("") &&
	    ordma_sh("rdma link add %s type %s netdev %s", LINK_IBDEV,
		     ordma_dev_type(), LINK_NETDEV))
		TH_LOG("cannot add %s again", LINK_IBDEV);
	f = fopen("/sys/module/ordma/parameters/pool_bytes", "r");
	if (f) {
		if (!fgets(param, sizeof(param), f))
			param[0] = 0;
		fclose(f);
		if (atoi(param) != ADD_POOL_BYTES)
			return;
		ordma_sh("rmmod ordma");
	}
	if (ordma_load(0))
		TH_LOG("cannot load %s again", ordma_ko());
}

/*
 * ordma's marks of the last .add (see ADD_LEAD): the task's fail-nth count
 * as it began and ended, ADD_UNSEEN if it did not run since
 * add_marks_reset(). 0 or -1.
 */
static int add_marks(unsigned int *begin, unsigned int *end)
{
	long long b = ordma_read_ll(POST_DIR "add_nth_begin");
	long long e = ordma_read_ll(POST_DIR "add_nth_end");

	if (b < 0 || e < 0)
		return -1;
	*begin = b;
	*end = e;
	return 0;
}

static int add_marks_reset(void)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", ADD_UNSEEN);
	return debugfs_write(POST_DIR "add_nth_begin", v) ?:
	       debugfs_write(POST_DIR "add_nth_end", v);
}

/*
 * How many allocations a clean add makes in this thread (and a check that
 * it works), or -1; *@pre of them before ordma's .add, *@len in it.
 */
static int add_count(int nth, unsigned int *pre, unsigned int *len)
{
	const unsigned int big = 1 << 24;
	unsigned int begin, end;
	char buf[16] = "";
	int sk, ret;

	if (ibdev_exists("") && rdma_link_del())
		return -1;
	sk = rdma_nl_open();
	if (sk < 0 || add_marks_reset())
		return -1;
	fail_nth_set(nth, big);
	ret = rdma_link_add(sk);
	if (pread(nth, buf, sizeof(buf) - 1, 0) <= 0)
		abort();
	fail_nth_set(nth, 0);
	close(sk);
	if (ret || context_complete() || add_marks(&begin, &end) ||
	    begin == ADD_UNSEEN || end > begin)
		return -1;
	*pre = big - begin;
	*len = begin - end;
	return big - atoi(buf);
}

/*
 * What the faults did, in order, as runs of one outcome: "14546-14594 c(49)"
 * (49 faults from 14546 to 14594 left a complete context; "-" none, "x" no
 * link, "d" a context without a working core). In the debug guest a fault
 * ordma's .add does not survive is every other allocation there (kmemleak's
 * metadata is the one between), and where .add begins moves from one add
 * to the next.
 */
struct add_runs {
	char text[2048];
	size_t len;
	unsigned int first, last, count;
	char what;
};

static void add_runs_flush(struct add_runs *r)
{
	if (r->count && r->len < sizeof(r->text))
		r->len += snprintf(r->text + r->len, sizeof(r->text) - r->len,
				   " %u-%u %c(%u)", r->first, r->last, r->what,
				   r->count);
	r->count = 0;
}

static void add_runs_note(struct add_runs *r, unsigned int n, char what)
{
	if (r->count && (what != r->what || n != r->last + 1))
		add_runs_flush(r);
	if (!r->count) {
		r->first = n;
		r->what = what;
	}
	r->last = n;
	r->count++;
}

TEST_F_TIMEOUT(client_add, sweep, 3600)
{
	struct add_runs runs = { .len = 0 };
	unsigned int failed = 0, absent = 0, attached = 0, degraded = 0;
	unsigned int n, k = 0, pre, len, begin, end, faults = 0, met = 0;
	const char *env = getenv("ORDMA_FAIL_ADD_FROM");
	long long start = chan_now_ms();
	int sk, ret, pending, count, lead = ADD_LEAD;

	if (self->nth < 0)
		SKIP(return, "no fail-nth on this kernel");
	ASSERT_TRUE(ctx_exists());
	ASSERT_EQ(0, ordma_sh("rmmod ordma"));
	ASSERT_EQ(0, ordma_load(ADD_POOL_BYTES));
	ASSERT_EQ(0, context_complete());
	count = add_count(self->nth, &pre, &len);
	ASSERT_LT(0, count) TH_LOG("a clean add did not work, or no marks");
	ASSERT_LT(0U, len);
	/* An idle context holds no PD: each channel end has its own. */
	ASSERT_EQ(0, ordma_pds());
	TH_LOG("a clean add makes %d failable allocations, ordma's .add %u after the first %u",
	       count, len, pre);
	n = pre > ADD_LEAD ? pre - ADD_LEAD + 1 : 1;
	if (env) {
		n = atoi(env);
		lead = -1;
	}

	for (;;) {
		/* The lead (or every one, from ORDMA_FAIL_ADD_FROM), then .add's. */
		if (lead-- == 0)
			k = 1;
		/* Steps are named by the allocation, as a clean add counts. */
		if (k)
			n = pre + k;
		if (ibdev_exists(""))
			ASSERT_EQ(0, rdma_link_del()) TH_LOG("step %u", n);
		ASSERT_FALSE(ctx_exists()) TH_LOG("step %u", n);
		sk = rdma_nl_open();
		ASSERT_LE(0, sk);
		ASSERT_EQ(0, add_marks_reset());
		ASSERT_EQ(0, add_fail_at(k));

		fail_nth_set(self->nth, k ? 0 : n);
		ret = rdma_link_add(sk);
		pending = fail_nth_pending(self->nth);
		fail_nth_set(self->nth, 0);
		close(sk);
		ASSERT_EQ(0, add_fail_at(0));
		ASSERT_EQ(0, add_marks(&begin, &end));
		faults++;
		if (k)
			ASSERT_EQ(k, begin) TH_LOG(".add did not arm fault %u", k);
		if (k && !end)
			met++;

		if (pending) {
			/* No fault left to inject: everything must be there. */
			ASSERT_EQ(0, ret) TH_LOG("clean add: %s", strerror(-ret));
			ASSERT_EQ(0, context_complete());
			ASSERT_EQ(0, channel_works(n));
			ASSERT_EQ(0, pool_idle());
			faults--;
			if (k || env)
				break;
		}
		if (!ibdev_exists("")) {
			ASSERT_NE(0, ret) TH_LOG("step %u: added, but no %s", n,
						 LINK_IBDEV);
			ASSERT_FALSE(ctx_exists()) TH_LOG("step %u", n);
			failed++;
			add_runs_note(&runs, n, 'x');
		} else if (!ctx_exists()) {
			if (ret && ret != -ENOBUFS)
				TH_LOG("step %u: %s exists after %s",
				       n, LINK_IBDEV, strerror(-ret));
			add_runs_note(&runs, n, '-');
			absent++;
		} else if (!pending) {
			if (ret && ret != -ENOBUFS)
				TH_LOG("step %u: %s exists after %s",
				       n, LINK_IBDEV, strerror(-ret));
			ASSERT_EQ(0, context_complete()) TH_LOG("step %u", n);
			if (channel_works(n)) {
				ASSERT_FALSE(core_can_connect())
					TH_LOG("step %u: the core connects, ordma's channel does not", n);
				degraded++;
				add_runs_note(&runs, n, 'd');
			} else {
				attached++;
				add_runs_note(&runs, n, 'c');
			}
			ASSERT_EQ(0, pool_idle()) TH_LOG("step %u", n);
		}
		n++;
		/* Past .add's end (its mark holds the count left), the tail's. */
		if (k)
			k += end ? ADD_TAIL_STRIDE : 1;
	}
	add_runs_flush(&runs);
	TH_LOG("outcomes:%s", runs.text);
	TH_LOG("%u faults in %llds, %u of them in ordma's .add: link add failed %u, no ordma context %u, context and channel %u, context without a working core %u",
	       faults, (chan_now_ms() - start) / 1000, met, failed, absent,
	       attached, degraded);
	ASSERT_LT(0U, absent) TH_LOG("no fault hit ordma's .add");
	ASSERT_TRUE(env || met) TH_LOG("no fault met ordma's .add");

	/* Every channel gave its PD back; the module leaves nothing either. */
	ASSERT_EQ(0, ordma_pds());
	ASSERT_EQ(0, ordma_sh("rmmod ordma"));
	ASSERT_EQ(0, ordma_pds());
	ASSERT_FALSE(path_exists("/sys/class/ordma"));
	ASSERT_EQ(0, ordma_load(0));
	ASSERT_TRUE(ctx_exists());
}

TEST_HARNESS_MAIN
