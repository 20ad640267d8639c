// SPDX-License-Identifier: GPL-2.0
/*
 * libordma in the guest: every call of the library, synchronous and
 * asynchronous, between two processes over rxe0 with every byte checked;
 * completions of asynchronous operations reaped while a synchronous call
 * waits are kept in order and none is lost; caller cookies that look like
 * the library's own; submission errors as completions; the in-flight bound;
 * the examples; and ordmacp copying a 256 MiB file with the checksum
 * compared (and a corrupted copy refused).
 *
 * Both ends of every pair use the library: the peer (a forked child) opens
 * its own handle, listens and accepts; the test process connects.
 */
#define ORDMA_GUEST_TEST
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <libordma.h>
#include "ordma_test.h"
#include "ordma_chan.h"
#include "kselftest_harness.h"

#define PORT_BASE	19100
#define WAIT_MS		60000

/* -- a pair of library handles ---------------------------------------------- */

struct lib_pair {
	struct ordma *o;
	uint32_t chan;
	int ctl;
	pid_t peer;
	int family;
	unsigned short port;
	struct sockaddr_storage peer_addr;	/* peer side: from accept */
	socklen_t peer_len;
};

typedef int (*lib_peer_fn)(struct lib_pair *p, void *arg);

static socklen_t lib_sockaddr(int family, const char *ip, unsigned short port,
			      struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		inet_pton(AF_INET6, ip ? ip : CHAN_IP6, &sin6->sin6_addr);
		return sizeof(*sin6);
	}
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	inet_pton(AF_INET, ip ? ip : CHAN_IP4, &sin->sin_addr);
	return sizeof(*sin);
}

static void lib_pair_init(struct lib_pair *p)
{
	memset(p, 0, sizeof(*p));
	p->ctl = -1;
}

static int lib_peer_main(struct lib_pair *p, lib_peer_fn fn, void *arg)
{
	struct sockaddr_storage ss;
	socklen_t len = lib_sockaddr(p->family, NULL, p->port, &ss);
	uint32_t lis;
	int ret;

	ret = ordma_open(&p->o, 0);
	if (!ret)
		ret = ordma_listen(p->o, (struct sockaddr *)&ss, len, 1, &lis);
	if (ctl_send(p->ctl, &ret, sizeof(ret)) || ret)
		return 2;
	p->peer_len = sizeof(p->peer_addr);
	ret = ordma_accept(p->o, lis, 0, &p->chan,
			   (struct sockaddr *)&p->peer_addr, &p->peer_len);
	if (ret) {
		fprintf(stderr, "# peer: ordma_accept: %s\n", strerror(-ret));
		return 3;
	}
	/* The listener is not needed any more. */
	if (ordma_chan_close(p->o, lis)) {
		fprintf(stderr, "# peer: closing the listener failed\n");
		return 4;
	}
	ret = fn(p, arg);
	ordma_close(p->o);
	return ret;
}

/* Fork a peer that listens on a port of its own, then connect to it. */
static int lib_pair(struct lib_pair *p, int family, lib_peer_fn fn, void *arg)
{
	pid_t parent = getpid();
	struct sockaddr_storage ss;
	long long end;
	socklen_t len;
	int sv[2], ret;

	p->family = family;
	p->port = chan_port(PORT_BASE);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	p->peer = fork();
	if (p->peer < 0)
		return -errno;
	if (!p->peer) {
		int fd;

		for (fd = 3; fd < 1024; fd++)
			if (fd != sv[1])
				close(fd);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(5);
		p->ctl = sv[1];
		ret = lib_peer_main(p, fn, arg);
		fflush(stderr);
		_exit(ret);
	}
	close(sv[1]);
	p->ctl = sv[0];
	if (ctl_recv(p->ctl, &ret, sizeof(ret), CHAN_PEER_MS))
		return -EPIPE;
	if (ret) {
		fprintf(stderr, "# peer could not listen on port %u: %s\n",
			p->port, strerror(-ret));
		return ret;
	}
	ret = ordma_open(&p->o, 0);
	if (ret)
		return ret;
	len = lib_sockaddr(family, NULL, p->port, &ss);
	end = chan_now_ms() + 2000;
	do {
		ret = ordma_connect(p->o, (struct sockaddr *)&ss, len, 30000,
				    &p->chan);
		if (ret != -ECONNREFUSED)
			break;
		chan_sleep_ms(20);
	} while (chan_now_ms() < end);
	if (ret)
		fprintf(stderr, "# ordma_connect to port %u: %s\n", p->port,
			strerror(-ret));
	return ret;
}

static int lib_pair_join(struct lib_pair *p, int timeout_ms)
{
	long long end = chan_now_ms() + timeout_ms;
	int st;
	pid_t r;

	if (p->peer <= 0)
		return -ECHILD;
	for (;;) {
		r = waitpid(p->peer, &st, WNOHANG);
		if (r == p->peer)
			break;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (chan_now_ms() > end) {
			kill(p->peer, SIGKILL);
			waitpid(p->peer, &st, 0);
			p->peer = 0;
			fprintf(stderr, "# peer did not exit within %d ms\n",
				timeout_ms);
			return -ETIMEDOUT;
		}
		chan_sleep_ms(5);
	}
	p->peer = 0;
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

static void lib_pair_destroy(struct lib_pair *p)
{
	if (p->peer > 0) {
		kill(p->peer, SIGKILL);
		waitpid(p->peer, NULL, 0);
		p->peer = 0;
	}
	ordma_close(p->o);
	p->o = NULL;
	if (p->ctl >= 0)
		close(p->ctl);
	p->ctl = -1;
}

/* Wait for one completion; -ETIMEDOUT after WAIT_MS. */
static int lib_wait(struct ordma *o, struct ordma_cqe *out)
{
	struct ordma_cqe *cqe;
	int ret = ordma_wait_cqe_timeout(o, &cqe, WAIT_MS);

	if (ret)
		return ret;
	*out = *cqe;
	ordma_cqe_seen(o, cqe);
	return 0;
}

FIXTURE(lib) {
	struct lib_pair p;
};

/*
 * Each test of this fixture runs on both backends of the library: the
 * kernel's rings (the default) and the ioctl path (LIBORDMA_BACKEND=ioctl).
 * The forked peer inherits the choice.
 */
FIXTURE_VARIANT(lib) {
	const char *backend;
};

FIXTURE_VARIANT_ADD(lib, ring) { .backend = NULL };
FIXTURE_VARIANT_ADD(lib, ioctl) { .backend = "ioctl" };

FIXTURE_SETUP(lib)
{
	ORDMA_TEST_FILTER();
	lib_pair_init(&self->p);
	if (variant->backend)
		setenv("LIBORDMA_BACKEND", variant->backend, 1);
	else
		unsetenv("LIBORDMA_BACKEND");
}

FIXTURE_TEARDOWN(lib)
{
	lib_pair_destroy(&self->p);
	unsetenv("LIBORDMA_BACKEND");
}

/* -- handles and argument errors ---------------------------------------------- */

TEST(open_close_and_argument_errors)
{
	struct sockaddr_storage ss;
	struct sockaddr_un {
		sa_family_t family;
		char path[108];
	} un = { AF_UNIX, "x" };
	struct ordma_cqe *cqe;
	struct ordma *o;
	uint32_t id;
	uint64_t tok;
	socklen_t len;
	char buf[16];

	ASSERT_EQ(-EINVAL, ordma_open(NULL, 0));
	ASSERT_EQ(-EINVAL, ordma_open(&o, 1));
	ASSERT_EQ(0, ordma_open(&o, 0));
	ordma_close(NULL);

	/* Addresses: only sockaddr_in and sockaddr_in6, of their full size. */
	len = lib_sockaddr(AF_INET, NULL, chan_port(PORT_BASE), &ss);
	EXPECT_EQ(-EAFNOSUPPORT, ordma_listen(o, (struct sockaddr *)&un,
					      sizeof(un), 1, &id));
	EXPECT_EQ(-EINVAL, ordma_listen(o, (struct sockaddr *)&ss, len - 1, 1,
					&id));
	EXPECT_EQ(-EINVAL, ordma_listen(o, NULL, len, 1, &id));
	EXPECT_EQ(-EINVAL, ordma_listen(o, (struct sockaddr *)&ss, len, 1,
					NULL));
	len = lib_sockaddr(AF_INET6, NULL, chan_port(PORT_BASE), &ss);
	EXPECT_EQ(-EINVAL, ordma_connect(o, (struct sockaddr *)&ss, len - 1,
					 0, &id));
	len = lib_sockaddr(AF_INET, NULL, CHAN_PORT_UNUSED, &ss);
	EXPECT_EQ(-ECONNREFUSED, ordma_connect(o, (struct sockaddr *)&ss, len,
					       0, &id));

	/* The kernel's errors come back as they are. */
	EXPECT_EQ(-ENOENT, ordma_accept(o, 12345, ORDMA_F_NONBLOCK, &id, NULL,
					NULL));
	EXPECT_EQ(-EINVAL, ordma_accept(o, 1, 0, &id, (struct sockaddr *)&ss,
					NULL));
	EXPECT_EQ(-ENOENT, ordma_chan_close(o, 12345));
	EXPECT_EQ(-EINVAL, ordma_expose(o, buf, 0, ORDMA_ACCESS_REMOTE_READ,
					&tok));
	EXPECT_EQ(-EINVAL, ordma_expose(o, buf, sizeof(buf), 0, &tok));
	EXPECT_EQ(-ENOENT, ordma_unexpose(o, 0x1234567800000001ULL));
	EXPECT_EQ(-ENOENT, ordma_send(o, 12345, buf, sizeof(buf)));
	EXPECT_EQ(-ENOENT, ordma_recv(o, 12345, buf, sizeof(buf)));
	EXPECT_EQ(-ENOENT, ordma_write(o, 12345, buf, 1, 1, 0));
	EXPECT_EQ(-ENOENT, ordma_read(o, 12345, buf, 1, 1, 0));
	EXPECT_EQ(-EINVAL, ordma_send(NULL, 1, buf, 1));

	/* Nothing in flight: nothing to wait for. */
	EXPECT_EQ(-EAGAIN, ordma_peek_cqe(o, &cqe));
	EXPECT_EQ(-EAGAIN, ordma_wait_cqe(o, &cqe));
	EXPECT_EQ(-EAGAIN, ordma_wait_cqe_timeout(o, &cqe, 100));
	EXPECT_EQ(0, ordma_submit(o));
	EXPECT_EQ(-EINVAL, ordma_submit(NULL));
	EXPECT_EQ(NULL, ordma_get_sqe(NULL));

	/* A listener: nonblocking accept with nobody connecting. */
	len = lib_sockaddr(AF_INET, NULL, chan_port(PORT_BASE), &ss);
	ASSERT_EQ(0, ordma_listen(o, (struct sockaddr *)&ss, len, 4, &id));
	EXPECT_EQ(-EAGAIN, ordma_accept(o, id, ORDMA_F_NONBLOCK, &id, NULL,
					NULL));
	EXPECT_EQ(0, ordma_chan_close(o, id));
	EXPECT_EQ(-ENOENT, ordma_chan_close(o, id));
	ordma_close(o);
}

/* -- synchronous calls ---------------------------------------------------------- */

static const size_t sync_sizes[] = { 1, 4099, 1 * MiB + 5 };
#define NSYNC	(sizeof(sync_sizes) / sizeof(sync_sizes[0]))

/* Receive each size (salt 1), check it, send it back with salt 2. */
static int peer_sync_echo(struct lib_pair *p, void *arg)
{
	int family = *(int *)arg;
	struct sockaddr_storage want;
	unsigned char *buf;
	size_t i, len;

	/* ordma_accept() reported the test process's address. */
	PEER_EQ(family, p->peer_addr.ss_family);
	lib_sockaddr(family, NULL, 0, &want);
	if (family == AF_INET) {
		PEER_EQ(sizeof(struct sockaddr_in), p->peer_len);
		PEER_EQ(0, memcmp(&((struct sockaddr_in *)&want)->sin_addr,
				  &((struct sockaddr_in *)&p->peer_addr)->sin_addr, 4));
	} else {
		PEER_EQ(sizeof(struct sockaddr_in6), p->peer_len);
		PEER_EQ(0, memcmp(&((struct sockaddr_in6 *)&want)->sin6_addr,
				  &((struct sockaddr_in6 *)&p->peer_addr)->sin6_addr, 16));
	}
	for (i = 0; i < NSYNC; i++) {
		len = sync_sizes[i];
		buf = chan_buf(len, 3);
		PEER_CHECK(buf);
		PEER_EQ(len, ordma_recv(p->o, p->chan, buf, len));
		PEER_EQ(0, chan_check("peer received", buf, len,
				      chan_seed(len, 1)));
		PEER_EQ(0, chan_guard_ok("peer buffer", buf, len, 3));
		chan_fill(buf, len, chan_seed(len, 2));
		PEER_EQ(len, ordma_send(p->o, p->chan, buf, len));
		chan_buf_free(buf, len, 3);
	}
	/*
	 * Stay until the last echo was received: a message that reached the
	 * other end but met no receive yet is dropped if we leave first.
	 */
	PEER_EQ(0, ctl_expect(p->ctl, 'Q', 60000));
	return 0;
}

FIXTURE(family) {
	struct lib_pair p;
};

FIXTURE_VARIANT(family) {
	int family;
};

FIXTURE_VARIANT_ADD(family, ipv4) { .family = AF_INET };
FIXTURE_VARIANT_ADD(family, ipv6) { .family = AF_INET6 };

FIXTURE_SETUP(family)
{
	ORDMA_TEST_FILTER();
	lib_pair_init(&self->p);
}

FIXTURE_TEARDOWN(family)
{
	lib_pair_destroy(&self->p);
}

TEST_F_TIMEOUT(family, sync_send_recv, 120)
{
	struct lib_pair *p = &self->p;
	int family = variant->family;
	unsigned char *sbuf, *rbuf;
	size_t i, len;

	ASSERT_EQ(0, lib_pair(p, family, peer_sync_echo, &family));
	for (i = 0; i < NSYNC; i++) {
		len = sync_sizes[i];
		sbuf = chan_buf(len, 1);
		rbuf = chan_buf(len, 5);
		ASSERT_NE(NULL, sbuf);
		ASSERT_NE(NULL, rbuf);
		chan_fill(sbuf, len, chan_seed(len, 1));
		ASSERT_EQ((int64_t)len, ordma_send(p->o, p->chan, sbuf, len));
		ASSERT_EQ((int64_t)len, ordma_recv(p->o, p->chan, rbuf, len));
		ASSERT_EQ(0, chan_check("echo", rbuf, len, chan_seed(len, 2)));
		ASSERT_EQ(0, chan_guard_ok("receive buffer", rbuf, len, 5));
		ASSERT_EQ(0, chan_check("send buffer", sbuf, len,
					chan_seed(len, 1)));
		chan_buf_free(sbuf, len, 1);
		chan_buf_free(rbuf, len, 5);
	}
	ASSERT_EQ(0, ctl_signal(p->ctl, 'Q'));
	ASSERT_EQ(0, lib_pair_join(p, 30000));
}

/*
 * 0 if @win (pattern @seed) holds the pattern of @wseed at @off for @wlen
 * bytes and its own everywhere else.
 */
static int window_ok(const unsigned char *win, size_t len, uint64_t seed,
		     size_t off, size_t wlen, uint64_t wseed)
{
	unsigned char *ref = malloc(len);
	size_t i;
	int ret = 0;

	if (!ref)
		return -1;
	chan_fill(ref, len, seed);
	chan_fill(ref + off, wlen, wseed);
	if (memcmp(ref, win, len)) {
		for (i = 0; i < len && ref[i] == win[i]; i++)
			;
		fprintf(stderr, "# window: byte %zu of %zu is 0x%02x, expected 0x%02x (written %zu..%zu)\n",
			i, len, win[i], ref[i], off, off + wlen);
		ret = -1;
	}
	free(ref);
	return ret;
}

/* -- exposed windows, synchronous write and read ---------------------------------- */

#define WIN_LEN		(1 * MiB)
#define RO_LEN		(64 * KiB)
#define WR_OFF		4097
#define WR_LEN		(200 * KiB + 1)

static int peer_windows(struct lib_pair *p, void *arg)
{
	unsigned char *win = chan_buf(WIN_LEN, 1), *ro = chan_buf(RO_LEN, 7);
	uint64_t tok[2];

	PEER_CHECK(win && ro);
	chan_fill(win, WIN_LEN, chan_seed(WIN_LEN, 20));
	chan_fill(ro, RO_LEN, chan_seed(RO_LEN, 21));
	PEER_EQ(0, ordma_expose(p->o, win, WIN_LEN, ORDMA_ACCESS_REMOTE_READ |
				ORDMA_ACCESS_REMOTE_WRITE, &tok[0]));
	PEER_EQ(0, ordma_expose(p->o, ro, RO_LEN, ORDMA_ACCESS_REMOTE_READ,
				&tok[1]));
	PEER_CHECK(tok[0] != tok[1]);
	PEER_EQ(sizeof(tok), ordma_send(p->o, p->chan, tok, sizeof(tok)));

	/* The test process wrote WR_LEN bytes at WR_OFF and nothing else. */
	PEER_EQ(0, ctl_expect(p->ctl, 'C', 60000));
	PEER_EQ(0, window_ok(win, WIN_LEN, chan_seed(WIN_LEN, 20), WR_OFF,
			     WR_LEN, chan_seed(WR_LEN, 22)));
	PEER_EQ(0, chan_guard_ok("window", win, WIN_LEN, 1));
	PEER_EQ(0, chan_check("read-only window", ro, RO_LEN,
			      chan_seed(RO_LEN, 21)));
	PEER_EQ(0, ordma_unexpose(p->o, tok[0]));
	PEER_EQ(-ENOENT, ordma_unexpose(p->o, tok[0]));
	PEER_EQ(0, ctl_signal(p->ctl, 'U'));
	PEER_EQ(0, ctl_expect(p->ctl, 'Q', 60000));
	PEER_EQ(0, ordma_unexpose(p->o, tok[1]));
	return 0;
}

TEST_F_TIMEOUT(lib, sync_write_read_windows, 120)
{
	struct lib_pair *p = &self->p;
	unsigned char *src = chan_buf(WR_LEN, 3), *dst = chan_buf(WIN_LEN, 5);
	unsigned char *ref = malloc(WIN_LEN), *roref = malloc(RO_LEN);
	uint64_t tok[2];

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	ASSERT_NE(NULL, ref);
	ASSERT_NE(NULL, roref);
	ASSERT_EQ(0, lib_pair(p, AF_INET, peer_windows, NULL));
	ASSERT_EQ((int64_t)sizeof(tok), ordma_recv(p->o, p->chan, tok,
						   sizeof(tok)));
	chan_fill(src, WR_LEN, chan_seed(WR_LEN, 22));
	chan_fill(ref, WIN_LEN, chan_seed(WIN_LEN, 20));
	memcpy(ref + WR_OFF, src, WR_LEN);
	chan_fill(roref, RO_LEN, chan_seed(RO_LEN, 21));

	ASSERT_EQ(WR_LEN, ordma_write(p->o, p->chan, src, WR_LEN, tok[0],
				      WR_OFF));
	ASSERT_EQ(WR_LEN, ordma_read(p->o, p->chan, dst, WR_LEN, tok[0],
				     WR_OFF));
	ASSERT_EQ(0, memcmp(dst, src, WR_LEN));
	ASSERT_EQ(WIN_LEN, ordma_read(p->o, p->chan, dst, WIN_LEN, tok[0], 0));
	ASSERT_EQ(0, memcmp(dst, ref, WIN_LEN));
	ASSERT_EQ(0, chan_guard_ok("read buffer", dst, WIN_LEN, 5));
	ASSERT_EQ(RO_LEN, ordma_read(p->o, p->chan, dst, RO_LEN, tok[1], 0));
	ASSERT_EQ(0, memcmp(dst, roref, RO_LEN));

	/* The window's errors arrive as the call's result. */
	ASSERT_EQ(-EACCES, ordma_write(p->o, p->chan, src, 1, tok[1], 0));
	ASSERT_EQ(-ERANGE, ordma_read(p->o, p->chan, dst, 2, tok[1],
				      RO_LEN - 1));
	ASSERT_EQ(-ERANGE, ordma_write(p->o, p->chan, src, 1, tok[0], WIN_LEN));

	ASSERT_EQ(0, ctl_signal(p->ctl, 'C'));
	ASSERT_EQ(0, ctl_expect(p->ctl, 'U', 60000));
	ASSERT_EQ(-ENOENT, ordma_read(p->o, p->chan, dst, 4096, tok[0], 0));
	ASSERT_EQ(4096, ordma_read(p->o, p->chan, dst, 4096, tok[1], 0));
	ASSERT_EQ(0, memcmp(dst, roref, 4096));
	ASSERT_EQ(0, ctl_signal(p->ctl, 'Q'));
	ASSERT_EQ(0, lib_pair_join(p, 30000));
	free(ref);
	free(roref);
	chan_buf_free(src, WR_LEN, 3);
	chan_buf_free(dst, WIN_LEN, 5);
}

/* -- asynchronous: all four operations in one submit -------------------------------- */

#define A_MSG		(300 * KiB + 7)
#define A_WIN		(512 * KiB)
#define A_WOFF		1000
#define A_WLEN		(100 * KiB + 3)
#define A_ROFF		(200 * KiB)
#define A_RLEN		(150 * KiB + 1)

/*
 * Caller cookies that equal the library's own synchronous cookies (bit 63
 * and a small sequence number) and one that is all ones: they must come back
 * untouched and never be mistaken for the library's.
 */
#define CK_RECV		((1ULL << 63) | 1)
#define CK_SEND		((1ULL << 63) | 2)
#define CK_WRITE	(~0ULL)
#define CK_READ		0ULL

static int peer_async(struct lib_pair *p, void *arg)
{
	unsigned char *win = chan_buf(A_WIN, 9), *buf = chan_buf(A_MSG, 11);
	struct ordma_cqe cqe[2];
	struct ordma_sqe *sqe;
	uint64_t tok;

	PEER_CHECK(win && buf);
	chan_fill(win, A_WIN, chan_seed(A_WIN, 60));
	PEER_EQ(0, ordma_expose(p->o, win, A_WIN, ORDMA_ACCESS_REMOTE_READ |
				ORDMA_ACCESS_REMOTE_WRITE, &tok));
	PEER_EQ(sizeof(tok), ordma_send(p->o, p->chan, &tok, sizeof(tok)));

	/* Asynchronous too: receive one message, send one back. */
	sqe = ordma_get_sqe(p->o);
	PEER_CHECK(sqe);
	ordma_prep_recv(sqe, p->chan, buf, A_MSG, 7);
	PEER_EQ(1, ordma_submit(p->o));
	PEER_EQ(0, lib_wait(p->o, &cqe[0]));
	PEER_EQ(7, cqe[0].cookie);
	PEER_EQ(A_MSG, cqe[0].res);
	PEER_EQ(0, chan_check("peer got", buf, A_MSG, chan_seed(A_MSG, 61)));
	chan_fill(buf, A_MSG, chan_seed(A_MSG, 62));
	sqe = ordma_get_sqe(p->o);
	ordma_prep_send(sqe, p->chan, buf, A_MSG, 8);
	sqe->flags = ORDMA_SQE_NONBLOCK;
	PEER_EQ(1, ordma_submit(p->o));
	PEER_EQ(0, lib_wait(p->o, &cqe[1]));
	PEER_EQ(8, cqe[1].cookie);
	PEER_EQ(A_MSG, cqe[1].res);
	PEER_EQ(ORDMA_OP_SEND, cqe[1].op);
	PEER_EQ(p->chan, cqe[1].chan_id);

	/* The write landed at A_WOFF; everything else is untouched. */
	PEER_EQ(0, ctl_expect(p->ctl, 'C', 60000));
	PEER_EQ(0, window_ok(win, A_WIN, chan_seed(A_WIN, 60), A_WOFF, A_WLEN,
			     chan_seed(A_WLEN, 63)));
	PEER_EQ(0, chan_guard_ok("window", win, A_WIN, 9));
	PEER_EQ(0, ordma_unexpose(p->o, tok));
	return 0;
}

TEST_F_TIMEOUT(lib, async_all_ops, 120)
{
	struct lib_pair *p = &self->p;
	unsigned char *sbuf = chan_buf(A_MSG, 1), *rbuf = chan_buf(A_MSG, 3);
	unsigned char *wbuf = chan_buf(A_WLEN, 5), *dbuf = chan_buf(A_RLEN, 7);
	unsigned char *ref = malloc(A_WIN);
	const __u64 ck[4] = { CK_RECV, CK_SEND, CK_WRITE, CK_READ };
	const __u32 ops[4] = { ORDMA_OP_RECV, ORDMA_OP_SEND, ORDMA_OP_WRITE,
			       ORDMA_OP_READ };
	const long long want[4] = { A_MSG, A_MSG, A_WLEN, A_RLEN };
	struct ordma_cqe cqe, *none;
	struct ordma_sqe *sqe;
	long long res[4] = { 1, 1, 1, 1 };
	uint64_t tok;
	int i, k;

	ASSERT_NE(NULL, sbuf);
	ASSERT_NE(NULL, rbuf);
	ASSERT_NE(NULL, wbuf);
	ASSERT_NE(NULL, dbuf);
	ASSERT_NE(NULL, ref);
	ASSERT_EQ(0, lib_pair(p, AF_INET, peer_async, NULL));
	ASSERT_EQ((int64_t)sizeof(tok), ordma_recv(p->o, p->chan, &tok,
						   sizeof(tok)));
	chan_fill(sbuf, A_MSG, chan_seed(A_MSG, 61));
	chan_fill(wbuf, A_WLEN, chan_seed(A_WLEN, 63));
	chan_fill(ref, A_WIN, chan_seed(A_WIN, 60));
	memcpy(ref + A_WOFF, wbuf, A_WLEN);

	/* The read covers part of what the write wrote: write first. */
	sqe = ordma_get_sqe(p->o);
	ASSERT_NE(NULL, sqe);
	ordma_prep_write(sqe, p->chan, wbuf, A_WLEN, tok, A_WOFF, CK_WRITE);
	ASSERT_EQ(1, ordma_submit(p->o));
	ASSERT_EQ(0, lib_wait(p->o, &cqe));
	ASSERT_EQ(CK_WRITE, cqe.cookie);
	ASSERT_EQ(A_WLEN, cqe.res);
	ASSERT_EQ((__u32)ORDMA_OP_WRITE, cqe.op);
	ASSERT_EQ(p->chan, cqe.chan_id);
	res[2] = cqe.res;

	/* Then recv, send and read in one submit. */
	sqe = ordma_get_sqe(p->o);
	ordma_prep_recv(sqe, p->chan, rbuf, A_MSG, CK_RECV);
	sqe = ordma_get_sqe(p->o);
	ordma_prep_send(sqe, p->chan, sbuf, A_MSG, CK_SEND);
	sqe = ordma_get_sqe(p->o);
	ordma_prep_read(sqe, p->chan, dbuf, A_RLEN, tok, A_ROFF, CK_READ);
	ASSERT_EQ(3, ordma_submit(p->o));
	ASSERT_EQ(0, ordma_submit(p->o));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, lib_wait(p->o, &cqe));
		for (k = 0; k < 4 && ck[k] != cqe.cookie; k++)
			;
		ASSERT_GT(4, k);
		ASSERT_EQ(1, res[k]);
		ASSERT_EQ(ops[k], cqe.op);
		ASSERT_EQ(p->chan, cqe.chan_id);
		res[k] = cqe.res;
	}
	for (k = 0; k < 4; k++)
		ASSERT_EQ(want[k], res[k]);
	ASSERT_EQ(0, chan_check("received", rbuf, A_MSG, chan_seed(A_MSG, 62)));
	ASSERT_EQ(0, chan_guard_ok("receive buffer", rbuf, A_MSG, 3));
	ASSERT_EQ(0, memcmp(dbuf, ref + A_ROFF, A_RLEN));
	ASSERT_EQ(0, chan_guard_ok("read buffer", dbuf, A_RLEN, 7));
	ASSERT_EQ(0, chan_check("send buffer", sbuf, A_MSG,
				chan_seed(A_MSG, 61)));
	ASSERT_EQ(-EAGAIN, ordma_peek_cqe(p->o, &none));
	ASSERT_EQ(0, ctl_signal(p->ctl, 'C'));
	ASSERT_EQ(0, lib_pair_join(p, 30000));
	free(ref);
}

/* -- peek, wait with a timeout, cqe_seen --------------------------------------------- */

#define PK_LEN	5000

static int peer_peek(struct lib_pair *p, void *arg)
{
	unsigned char *buf = chan_buf(PK_LEN, 1);

	PEER_CHECK(buf);
	chan_fill(buf, PK_LEN, chan_seed(PK_LEN, 70));
	PEER_EQ(0, ctl_expect(p->ctl, 'G', 60000));
	PEER_EQ(PK_LEN, ordma_send(p->o, p->chan, buf, PK_LEN));
	PEER_EQ(0, ctl_expect(p->ctl, 'Q', 60000));
	return 0;
}

TEST_F_TIMEOUT(lib, peek_wait_timeout_seen, 60)
{
	struct lib_pair *p = &self->p;
	unsigned char *buf = chan_buf(PK_LEN, 3);
	struct ordma_cqe *cqe, *again;
	struct ordma_sqe *sqe;
	long long t0;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, lib_pair(p, AF_INET, peer_peek, NULL));
	sqe = ordma_get_sqe(p->o);
	ordma_prep_recv(sqe, p->chan, buf, PK_LEN, 0x5eed);
	/* Not submitted yet: nothing in flight. */
	ASSERT_EQ(-EAGAIN, ordma_peek_cqe(p->o, &cqe));
	ASSERT_EQ(1, ordma_submit(p->o));
	ASSERT_EQ(-EAGAIN, ordma_peek_cqe(p->o, &cqe));
	t0 = chan_now_ms();
	ASSERT_EQ(-ETIMEDOUT, ordma_wait_cqe_timeout(p->o, &cqe, 300));
	ASSERT_LE(250, chan_now_ms() - t0);

	ASSERT_EQ(0, ctl_signal(p->ctl, 'G'));
	ASSERT_EQ(0, ordma_wait_cqe(p->o, &cqe));
	ASSERT_EQ(0x5eedULL, cqe->cookie);
	ASSERT_EQ(PK_LEN, cqe->res);
	ASSERT_EQ((__u32)ORDMA_OP_RECV, cqe->op);
	ASSERT_EQ(0, chan_check("message", buf, PK_LEN, chan_seed(PK_LEN, 70)));
	/* Until it is seen, the same completion comes back. */
	ASSERT_EQ(0, ordma_peek_cqe(p->o, &again));
	ASSERT_EQ(cqe, again);
	ASSERT_EQ(0, ordma_wait_cqe_timeout(p->o, &again, 0));
	ASSERT_EQ(cqe, again);
	ordma_cqe_seen(p->o, cqe);
	ASSERT_EQ(-EAGAIN, ordma_peek_cqe(p->o, &cqe));
	ASSERT_EQ(-EAGAIN, ordma_wait_cqe(p->o, &cqe));
	ASSERT_EQ(0, ctl_signal(p->ctl, 'Q'));
	ASSERT_EQ(0, lib_pair_join(p, 30000));
}

/* -- submit and wait in one call -------------------------------------------------------- */

#define SW_LEN	(64 * KiB + 17)

/* Sends one message, takes one, checks it. */
static int peer_submit_wait(struct lib_pair *p, void *arg)
{
	unsigned char *buf = chan_buf(SW_LEN, 1);

	PEER_CHECK(buf);
	chan_fill(buf, SW_LEN, chan_seed(SW_LEN, 80));
	PEER_EQ(SW_LEN, ordma_send(p->o, p->chan, buf, SW_LEN));
	PEER_EQ(SW_LEN, ordma_recv(p->o, p->chan, buf, SW_LEN));
	PEER_EQ(0, chan_check("message", buf, SW_LEN, chan_seed(SW_LEN, 81)));
	return 0;
}

TEST_F_TIMEOUT(lib, submit_and_wait, 60)
{
	struct lib_pair *p = &self->p;
	unsigned char *buf = chan_buf(SW_LEN, 3);
	struct ordma_cqe *cqe;
	struct ordma_sqe *sqe;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(-EINVAL, ordma_submit_and_wait(NULL, &cqe));
	ASSERT_EQ(0, lib_pair(p, AF_INET, peer_submit_wait, NULL));
	ASSERT_EQ(-EINVAL, ordma_submit_and_wait(p->o, NULL));
	/* Nothing queued, nothing in flight: no completion will come. */
	ASSERT_EQ(-EAGAIN, ordma_submit_and_wait(p->o, &cqe));

	sqe = ordma_get_sqe(p->o);
	ASSERT_NE(NULL, sqe);
	ordma_prep_recv(sqe, p->chan, buf, SW_LEN, 0xa11);
	ASSERT_EQ(1, ordma_submit_and_wait(p->o, &cqe));
	ASSERT_EQ(0xa11ULL, cqe->cookie);
	ASSERT_EQ(SW_LEN, cqe->res);
	ASSERT_EQ((__u32)ORDMA_OP_RECV, cqe->op);
	ordma_cqe_seen(p->o, cqe);
	ASSERT_EQ(0, chan_check("message", buf, SW_LEN, chan_seed(SW_LEN, 80)));
	ASSERT_EQ(0, chan_guard_ok("receive buffer", buf, SW_LEN, 3));

	chan_fill(buf, SW_LEN, chan_seed(SW_LEN, 81));
	sqe = ordma_get_sqe(p->o);
	ordma_prep_send(sqe, p->chan, buf, SW_LEN, 0xa12);
	ASSERT_EQ(1, ordma_submit_and_wait(p->o, &cqe));
	ASSERT_EQ(0xa12ULL, cqe->cookie);
	ASSERT_EQ(SW_LEN, cqe->res);
	ASSERT_EQ((__u32)ORDMA_OP_SEND, cqe->op);
	ordma_cqe_seen(p->o, cqe);
	ASSERT_EQ(-EAGAIN, ordma_peek_cqe(p->o, &cqe));
	ASSERT_EQ(0, lib_pair_join(p, 30000));
}

/* -- completions reaped by a synchronous call are kept --------------------------------- */

#define MX_N		16
#define MX_LEN		(8 * KiB + 1)
#define MX_SYNC		(256 * KiB + 3)

/* MX_N messages for the asynchronous receives, then one for the sync one. */
static int peer_mixed(struct lib_pair *p, void *arg)
{
	unsigned char *buf = chan_buf(MX_SYNC, 1);
	int i;

	PEER_CHECK(buf);
	PEER_EQ(0, ctl_expect(p->ctl, 'G', 60000));
	for (i = 0; i < MX_N; i++) {
		chan_fill(buf, MX_LEN, chan_seed(MX_LEN, 100 + i));
		PEER_EQ(MX_LEN, ordma_send(p->o, p->chan, buf, MX_LEN));
	}
	chan_fill(buf, MX_SYNC, chan_seed(MX_SYNC, 99));
	PEER_EQ(MX_SYNC, ordma_send(p->o, p->chan, buf, MX_SYNC));
	/* And take one message the test process sends synchronously. */
	PEER_EQ(MX_LEN, ordma_recv(p->o, p->chan, buf, MX_SYNC));
	PEER_EQ(0, chan_check("sync message", buf, MX_LEN,
			      chan_seed(MX_LEN, 98)));
	return 0;
}

TEST_F_TIMEOUT(lib, sync_call_keeps_async_completions, 120)
{
	struct lib_pair *p = &self->p;
	unsigned char *bufs[MX_N], *sync = chan_buf(MX_SYNC, 5);
	struct ordma_cqe *cqe;
	struct ordma_sqe *sqe;
	int seen[MX_N] = { 0 };
	int i, k;

	ASSERT_NE(NULL, sync);
	ASSERT_EQ(0, lib_pair(p, AF_INET, peer_mixed, NULL));
	for (i = 0; i < MX_N; i++) {
		bufs[i] = chan_buf(MX_LEN, 2 * i + 1);
		ASSERT_NE(NULL, bufs[i]);
		sqe = ordma_get_sqe(p->o);
		/* Cookies the library's synchronous calls also use. */
		ordma_prep_recv(sqe, p->chan, bufs[i], MX_LEN,
				(1ULL << 63) | (i + 1));
	}
	ASSERT_EQ(MX_N, ordma_submit(p->o));
	ASSERT_EQ(0, ctl_signal(p->ctl, 'G'));

	/* Receives match messages in the order they were posted. */
	ASSERT_EQ(MX_SYNC, ordma_recv(p->o, p->chan, sync, MX_SYNC));
	ASSERT_EQ(0, chan_check("sync receive", sync, MX_SYNC,
				chan_seed(MX_SYNC, 99)));
	chan_fill(sync, MX_LEN, chan_seed(MX_LEN, 98));
	ASSERT_EQ(MX_LEN, ordma_send(p->o, p->chan, sync, MX_LEN));

	/*
	 * Every asynchronous completion is still there, once each (or still
	 * to come: a receive the planner registered completes once its
	 * buffer is deregistered).
	 */
	for (i = 0; i < MX_N; i++) {
		ASSERT_EQ(0, ordma_wait_cqe_timeout(p->o, &cqe, WAIT_MS));
		k = (int)(cqe->cookie & ~(1ULL << 63)) - 1;
		ASSERT_EQ((1ULL << 63), cqe->cookie & (1ULL << 63));
		ASSERT_LE(0, k);
		ASSERT_GT(MX_N, k);
		ASSERT_EQ(0, seen[k]);
		seen[k] = 1;
		ASSERT_EQ(MX_LEN, cqe->res);
		ASSERT_EQ((__u32)ORDMA_OP_RECV, cqe->op);
		ordma_cqe_seen(p->o, cqe);
		ASSERT_EQ(0, chan_check("async receive", bufs[k], MX_LEN,
					chan_seed(MX_LEN, 100 + k)));
		ASSERT_EQ(0, chan_guard_ok("async buffer", bufs[k], MX_LEN,
					   2 * k + 1));
	}
	ASSERT_EQ(-EAGAIN, ordma_peek_cqe(p->o, &cqe));
	ASSERT_EQ(0, lib_pair_join(p, 30000));
}

/* -- submission errors, the SQ and the in-flight bound ------------------------------------ */

static int peer_idle(struct lib_pair *p, void *arg)
{
	unsigned char buf[16];
	int n = arg ? *(int *)arg : 0, i;

	for (i = 0; i < n; i++) {
		memset(buf, 'a' + i, sizeof(buf));
		PEER_EQ(sizeof(buf), ordma_send(p->o, p->chan, buf,
						sizeof(buf)));
	}
	PEER_EQ(0, ctl_expect(p->ctl, 'Q', 120000));
	return 0;
}

TEST_F_TIMEOUT(lib, submit_errors_complete, 120)
{
	struct lib_pair *p = &self->p;
	unsigned char a[16], b[16], c[16];
	char seen[ORDMA_CQ_ENTRIES] = { 0 };
	struct ordma_cqe cqe, *none;
	struct ordma_sqe *sqe;
	int two = 2, i, n;

	ASSERT_EQ(0, lib_pair(p, AF_INET, peer_idle, &two));

	/* good, bad channel, good: the bad one is consumed, stops the rest. */
	ordma_prep_recv(ordma_get_sqe(p->o), p->chan, a, sizeof(a), 1);
	ordma_prep_recv(ordma_get_sqe(p->o), 0x7ffffff0, b, sizeof(b), 2);
	ordma_prep_recv(ordma_get_sqe(p->o), p->chan, c, sizeof(c), 3);
	ASSERT_EQ(2, ordma_submit(p->o));
	ASSERT_EQ(1, ordma_submit(p->o));
	/* The error may come after the receive submitted before it. */
	for (i = 0, n = 1; i < 3; i++) {
		ASSERT_EQ(0, lib_wait(p->o, &cqe));
		if (cqe.cookie == 2) {
			ASSERT_EQ(-ENOENT, cqe.res);
			ASSERT_EQ((__u32)ORDMA_OP_RECV, cqe.op);
			ASSERT_EQ(0x7ffffff0U, cqe.chan_id);
			continue;
		}
		/* Receives complete in order. */
		ASSERT_EQ((__u64)n, cqe.cookie);
		ASSERT_EQ((long long)sizeof(a), cqe.res);
		n += 2;
	}
	ASSERT_EQ(5, n);
	for (i = 0; i < 16; i++) {
		ASSERT_EQ('a', a[i]);
		ASSERT_EQ('b', c[i]);
	}

	/* Entries the library refuses: unknown flag, reserved fields. */
	sqe = ordma_get_sqe(p->o);
	ordma_prep_send(sqe, p->chan, a, 1, 10);
	sqe->flags = 0x80;
	sqe = ordma_get_sqe(p->o);
	ordma_prep_send(sqe, p->chan, a, 1, 11);
	sqe->__reserved = 1;
	sqe = ordma_get_sqe(p->o);
	ordma_prep_send(sqe, p->chan, a, 0, 12);	/* len 0: the kernel's */
	sqe = ordma_get_sqe(p->o);			/* never prepared: op 0 */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(1, ordma_submit(p->o));
		ASSERT_EQ(0, lib_wait(p->o, &cqe));
		ASSERT_EQ(-EINVAL, cqe.res);
		ASSERT_EQ((__u64)(i < 3 ? 10 + i : 0), cqe.cookie);
	}
	ASSERT_EQ(0, ordma_submit(p->o));

	/* The SQ holds ORDMA_SQ_ENTRIES; none of them is lost. */
	for (i = 0; i < ORDMA_SQ_ENTRIES; i++) {
		sqe = ordma_get_sqe(p->o);
		ASSERT_NE(NULL, sqe);
		ordma_prep_send(sqe, 0x7ffffff1, a, 1, 1000 + i);
	}
	ASSERT_EQ(NULL, ordma_get_sqe(p->o));
	for (i = 0; i < ORDMA_SQ_ENTRIES; i++) {
		ASSERT_EQ(1, ordma_submit(p->o));
		ASSERT_EQ(0, lib_wait(p->o, &cqe));
		ASSERT_EQ((__u64)(1000 + i), cqe.cookie);
		ASSERT_EQ(-ENOENT, cqe.res);
	}
	ASSERT_EQ(0, ordma_submit(p->o));

	/*
	 * ORDMA_CQ_ENTRIES receives in flight: one more is -EBUSY and stays
	 * queued. Closing the channel cancels them all; every one completes.
	 */
	for (n = 0; n < ORDMA_CQ_ENTRIES; n += ORDMA_SQ_ENTRIES) {
		for (i = 0; i < ORDMA_SQ_ENTRIES; i++)
			ordma_prep_recv(ordma_get_sqe(p->o), p->chan, a,
					sizeof(a), n + i);
		ASSERT_EQ(ORDMA_SQ_ENTRIES, ordma_submit(p->o));
	}
	ordma_prep_recv(ordma_get_sqe(p->o), p->chan, a, sizeof(a), 5000);
	ASSERT_EQ(-EBUSY, ordma_submit(p->o));
	ASSERT_EQ(-EBUSY, ordma_submit(p->o));
	ASSERT_EQ(-EAGAIN, ordma_peek_cqe(p->o, &none));
	ASSERT_EQ(0, ordma_chan_close(p->o, p->chan));
	for (i = 0; i < ORDMA_CQ_ENTRIES; i++) {
		ASSERT_EQ(0, lib_wait(p->o, &cqe));
		ASSERT_GT((__u64)ORDMA_CQ_ENTRIES, cqe.cookie);
		ASSERT_EQ(0, seen[cqe.cookie]);
		seen[cqe.cookie] = 1;
		ASSERT_EQ(-ECANCELED, cqe.res);
	}
	/* The queued one goes now, to a channel that is gone. */
	ASSERT_EQ(1, ordma_submit(p->o));
	ASSERT_EQ(0, lib_wait(p->o, &cqe));
	ASSERT_EQ(5000ULL, cqe.cookie);
	ASSERT_EQ(-ENOENT, cqe.res);
	ASSERT_EQ(-ENOENT, ordma_send(p->o, p->chan, a, 1));
	ASSERT_EQ(0, ctl_signal(p->ctl, 'Q'));
	ASSERT_EQ(0, lib_pair_join(p, 30000));
}

/* -- the backends ------------------------------------------------------------------------- */

/* Mappings of /dev/ordma in this process: the ring backend's two rings. */
static int ordma_mappings(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "/dev/ordma") != NULL;
	fclose(f);
	return n;
}

TEST(backend_rings_by_default_ioctl_on_request)
{
	struct ordma *o;

	unsetenv("LIBORDMA_BACKEND");
	ASSERT_EQ(0, ordma_mappings());
	ASSERT_EQ(0, ordma_open(&o, 0));
	ASSERT_EQ(2, ordma_mappings());
	ordma_close(o);
	ASSERT_EQ(0, ordma_mappings());
	setenv("LIBORDMA_BACKEND", "ioctl", 1);
	ASSERT_EQ(0, ordma_open(&o, 0));
	ASSERT_EQ(0, ordma_mappings());
	ordma_close(o);
	unsetenv("LIBORDMA_BACKEND");
}

/* A child after fork() gets EPERM; the parent's handle is unharmed. */
TEST_F_TIMEOUT(lib, forked_child_eperm, 60)
{
	struct lib_pair *p = &self->p;
	unsigned char buf[16];
	struct ordma_cqe *cqe;
	int one = 1, st, i;
	pid_t pid;

	ASSERT_EQ(0, lib_pair(p, AF_INET, peer_idle, &one));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int ok = ordma_send(p->o, p->chan, buf, 1) == -EPERM &&
			 ordma_recv(p->o, p->chan, buf, 1) == -EPERM;

		_exit(ok ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st));
	ASSERT_EQ((int64_t)sizeof(buf), ordma_recv(p->o, p->chan, buf,
						   sizeof(buf)));
	for (i = 0; i < (int)sizeof(buf); i++)
		ASSERT_EQ('a', buf[i]);
	ASSERT_EQ(-EAGAIN, ordma_peek_cqe(p->o, &cqe));
	ASSERT_EQ(0, ctl_signal(p->ctl, 'Q'));
	ASSERT_EQ(0, lib_pair_join(p, 30000));
}

/* -- many small operations in batches ------------------------------------------------------- */

#define BT_N		4000
#define BT_BATCH	32
#define BT_LEN		16

struct bt_msg {
	__u64 seq;
	__u64 check;
};

static __u64 bt_check(__u64 seq)
{
	return ~seq * 0x9e3779b97f4a7c15ULL;
}

/*
 * Move BT_N messages in batches of BT_BATCH asynchronous operations, every
 * completion once, every message checked; @send: this side sends.
 */
static int bt_run(struct ordma *o, uint32_t chan, int send)
{
	struct bt_msg *bufs = calloc(ORDMA_SQ_ENTRIES, sizeof(*bufs));
	unsigned char *seen = calloc(BT_N, 1);
	__u64 posted = 0, done = 0, i;
	struct ordma_cqe *cqe;
	struct ordma_sqe *sqe;
	int k, ret;

	if (!bufs || !seen)
		return -ENOMEM;
	while (done < BT_N) {
		for (k = 0; k < BT_BATCH && posted < BT_N &&
		     posted - done < ORDMA_SQ_ENTRIES; k++, posted++) {
			struct bt_msg *m = &bufs[posted % ORDMA_SQ_ENTRIES];

			sqe = ordma_get_sqe(o);
			if (!sqe)
				return -ENOSPC;
			if (send) {
				m->seq = posted;
				m->check = bt_check(posted);
				ordma_prep_send(sqe, chan, m, BT_LEN, posted);
			} else {
				ordma_prep_recv(sqe, chan, m, BT_LEN, posted);
			}
		}
		if (k) {
			ret = ordma_submit(o);
			if (ret != k)
				return ret < 0 ? ret : -EPROTO;
		}
		ret = ordma_wait_cqe_timeout(o, &cqe, WAIT_MS);
		if (ret)
			return ret;
		do {
			i = cqe->cookie;
			if (i >= BT_N || seen[i] || cqe->res != BT_LEN)
				return -EPROTO;
			seen[i] = 1;
			if (!send && (bufs[i % ORDMA_SQ_ENTRIES].seq != i ||
				      bufs[i % ORDMA_SQ_ENTRIES].check !=
				      bt_check(i)))
				return -EBADMSG;
			ordma_cqe_seen(o, cqe);
			done++;
		} while (!ordma_peek_cqe(o, &cqe));
	}
	free(bufs);
	free(seen);
	return 0;
}

static int peer_bt(struct lib_pair *p, void *arg)
{
	PEER_EQ(0, bt_run(p->o, p->chan, 0));
	PEER_EQ(0, ctl_signal(p->ctl, 'D'));
	PEER_EQ(0, ctl_expect(p->ctl, 'Q', 60000));
	return 0;
}

TEST_F_TIMEOUT(lib, batches_of_small_messages, 300)
{
	struct lib_pair *p = &self->p;
	long long t0;

	ASSERT_EQ(0, lib_pair(p, AF_INET, peer_bt, NULL));
	t0 = chan_now_ms();
	ASSERT_EQ(0, bt_run(p->o, p->chan, 1));
	ASSERT_EQ(0, ctl_expect(p->ctl, 'D', WAIT_MS));
	fprintf(stderr, "# %s: %d messages in batches of %d: %lld ms\n",
		variant->backend ? variant->backend : "ring", BT_N, BT_BATCH,
		chan_now_ms() - t0);
	ASSERT_EQ(0, ctl_signal(p->ctl, 'Q'));
	ASSERT_EQ(0, lib_pair_join(p, 30000));
}

/* -- programs: the examples and ordmacp ---------------------------------------------------- */

static char tree[PATH_MAX / 2];	/* the repository: ../.. of this binary */

static const char *tree_path(char *buf, size_t len, const char *rel)
{
	if (!tree[0]) {
		ssize_t n = readlink("/proc/self/exe", tree, sizeof(tree) - 1);
		int up;

		if (n < 0)
			n = 0;
		tree[n] = 0;
		for (up = 0; up < 3; up++) {
			char *s = strrchr(tree, '/');

			if (s)
				*s = 0;
		}
	}
	snprintf(buf, len, "%s/%s", tree, rel);
	return buf;
}

/* Start @argv with stdout and stderr to @log; @env: "NAME=VALUE" or NULL. */
static pid_t spawn(const char *log, char *const argv[], const char *env)
{
	pid_t pid;
	int fd;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid)
		return pid;
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(126);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (env)
		putenv((char *)env);
	execv(argv[0], argv);
	_exit(127);
}

/* Exit status of @pid, 128 + signal, or -ETIMEDOUT (then it is killed). */
static int reap_child(pid_t pid, int timeout_ms)
{
	long long end = chan_now_ms() + timeout_ms;
	int st;
	pid_t r;

	for (;;) {
		r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFSIGNALED(st) ? 128 + WTERMSIG(st) :
			       WEXITSTATUS(st);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (chan_now_ms() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return -ETIMEDOUT;
		}
		chan_sleep_ms(10);
	}
}

static char *slurp(const char *path)
{
	static char buf[16384];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	buf[0] = 0;
	if (fd < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
	return buf;
}

/* Wait until @log contains @needle, or @pid exited, or @timeout_ms. */
static int wait_log(const char *log, const char *needle, pid_t pid,
		    int timeout_ms)
{
	long long end = chan_now_ms() + timeout_ms;

	while (chan_now_ms() < end) {
		if (strstr(slurp(log), needle))
			return 0;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -ECHILD;
		chan_sleep_ms(20);
	}
	return -ETIMEDOUT;
}

static void dump_log(const char *what, const char *log)
{
	char *s = slurp(log), *line;

	for (line = strtok(s, "\n"); line; line = strtok(NULL, "\n"))
		fprintf(stderr, "# %s: %s\n", what, line);
}

FIXTURE(prog) {
	int unused;
};

FIXTURE_SETUP(prog)
{
	ORDMA_TEST_FILTER();
}

FIXTURE_TEARDOWN(prog)
{
}

TEST_F_TIMEOUT(prog, examples_sender_receiver, 60)
{
	char recv_bin[PATH_MAX], send_bin[PATH_MAX], port[16];
	const char *rlog = "/tmp/lib_test.receiver.log";
	const char *slog = "/tmp/lib_test.sender.log";
	char *rargv[3], *sargv[7];
	pid_t rp, sp;
	int rs, ss;

	snprintf(port, sizeof(port), "%u", chan_port(PORT_BASE));
	rargv[0] = (char *)tree_path(recv_bin, sizeof(recv_bin),
				     "examples/receiver");
	rargv[1] = port;
	rargv[2] = NULL;
	sargv[0] = (char *)tree_path(send_bin, sizeof(send_bin),
				     "examples/sender");
	sargv[1] = CHAN_IP4;
	sargv[2] = port;
	sargv[3] = "hello";
	sargv[4] = "ordma world";
	sargv[5] = NULL;
	rp = spawn(rlog, rargv, NULL);
	ASSERT_LT(0, rp);
	ASSERT_EQ(0, wait_log(rlog, "listening", rp, CHAN_PEER_MS));
	sp = spawn(slog, sargv, NULL);
	ASSERT_LT(0, sp);
	ss = reap_child(sp, 30000);
	rs = reap_child(rp, 30000);
	if (ss || rs) {
		dump_log("sender", slog);
		dump_log("receiver", rlog);
	}
	ASSERT_EQ(0, ss);
	ASSERT_EQ(0, rs);
	ASSERT_NE(NULL, strstr(slurp(rlog), "channel from " CHAN_IP4));
	ASSERT_NE(NULL, strstr(slurp(rlog), "got 5 bytes: hello\n"));
	ASSERT_NE(NULL, strstr(slurp(rlog), "got 11 bytes: ordma world\n"));
	ASSERT_NE(NULL, strstr(slurp(rlog), "got 3 bytes: bye\n"));
	unlink(rlog);
	unlink(slog);
}

/* A file of @len bytes of the pattern of @seed, written in 1 MiB pieces. */
static int make_file(const char *path, size_t len, uint64_t seed)
{
	size_t piece = 1 * MiB, done = 0, n;
	unsigned char *buf = malloc(piece);
	struct chan_pat pt;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || !buf) {
		free(buf);
		return -1;
	}
	chan_pat_init(&pt, seed);
	while (done < len && !ret) {
		n = len - done < piece ? len - done : piece;
		chan_pat_next(&pt, buf, n);
		if (write(fd, buf, n) != (ssize_t)n)
			ret = -1;
		done += n;
	}
	free(buf);
	if (close(fd))
		ret = -1;
	return ret;
}

/* 0 if the two files have the same size and bytes. */
static int same_file(const char *a, const char *b)
{
	size_t piece = 1 * MiB;
	unsigned char *x = malloc(piece), *y = malloc(piece);
	int fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC);
	long long off = 0;
	ssize_t n, m;
	int ret = -1;

	if (!x || !y || fa < 0 || fb < 0)
		goto out;
	for (;;) {
		n = read(fa, x, piece);
		m = read(fb, y, piece);
		if (n < 0 || n != m) {
			fprintf(stderr, "# %s and %s differ in size near %lld\n",
				a, b, off);
			goto out;
		}
		if (!n)
			break;
		if (memcmp(x, y, n)) {
			fprintf(stderr, "# %s and %s differ in bytes %lld..%lld\n",
				a, b, off, off + n);
			goto out;
		}
		off += n;
	}
	ret = 0;
out:
	free(x);
	free(y);
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return ret;
}

/* The checksum ordmacp printed ("checksum X, peer Y: match"). */
static int cp_sums(const char *log, unsigned long long *mine,
		   unsigned long long *theirs, char *verdict)
{
	const char *s = strstr(slurp(log), "checksum ");

	if (!s || sscanf(s, "checksum %llx, peer %llx: %15s", mine, theirs,
			 verdict) != 3)
		return -1;
	return 0;
}

struct cp_run {
	int send_status, recv_status;
	unsigned long long send_sum[2], recv_sum[2];
	char send_verdict[16], recv_verdict[16];
	char send_log[4096];
};

/*
 * Run `ordmacp --listen LISTEN` and `ordmacp SRC TARGET`; the receiver gets
 * @env. Returns 0 once both exited (their statuses in @r), -errno if they
 * could not be run.
 */
static int run_ordmacp(const char *listen, const char *src,
		       const char *target, const char *env, struct cp_run *r)
{
	const char *rlog = "/tmp/lib_test.cp-recv.log";
	const char *slog = "/tmp/lib_test.cp-send.log";
	char bin[PATH_MAX];
	char *rargv[4], *sargv[4];
	pid_t rp, sp;
	int ret;

	memset(r, 0, sizeof(*r));
	tree_path(bin, sizeof(bin), "tools/ordmacp");
	rargv[0] = bin;
	rargv[1] = "--listen";
	rargv[2] = (char *)listen;
	rargv[3] = NULL;
	sargv[0] = bin;
	sargv[1] = (char *)src;
	sargv[2] = (char *)target;
	sargv[3] = NULL;
	rp = spawn(rlog, rargv, env);
	if (rp < 0)
		return -errno;
	ret = wait_log(rlog, "listening", rp, CHAN_PEER_MS);
	if (ret) {
		dump_log("ordmacp --listen", rlog);
		kill(rp, SIGKILL);
		waitpid(rp, NULL, 0);
		return ret;
	}
	sp = spawn(slog, sargv, NULL);
	if (sp < 0)
		return -errno;
	r->send_status = reap_child(sp, 600000);
	r->recv_status = reap_child(rp, 60000);
	cp_sums(slog, &r->send_sum[0], &r->send_sum[1], r->send_verdict);
	cp_sums(rlog, &r->recv_sum[0], &r->recv_sum[1], r->recv_verdict);
	snprintf(r->send_log, sizeof(r->send_log), "%s", slurp(slog));
	dump_log("sender", slog);
	dump_log("receiver", rlog);
	unlink(rlog);
	unlink(slog);
	return 0;
}

#define CP_SRC		"/tmp/lib_test.cp-src"
#define CP_DST		"/tmp/lib_test.cp-dst"
/* 64 MiB on the debug kernel (ORDMA_TEST_SMALL): 256 MiB took 279 s there. */
#define CP_BIG		ordma_scaled(256 * MiB, 64 * MiB)

TEST_F_TIMEOUT(prog, ordmacp_256m_checksum, 900)
{
	char listen[32], target[64];
	unsigned short port = chan_port(PORT_BASE);
	struct cp_run r;

	snprintf(listen, sizeof(listen), "%s:%u", CHAN_IP4, port);
	snprintf(target, sizeof(target), "%s:%u:%s", CHAN_IP4, port, CP_DST);
	unlink(CP_DST);
	ASSERT_EQ(0, make_file(CP_SRC, CP_BIG, chan_seed(CP_BIG, 80)));
	ASSERT_EQ(0, run_ordmacp(listen, CP_SRC, target, NULL, &r));
	EXPECT_EQ(0, r.send_status);
	EXPECT_EQ(0, r.recv_status);
	/* Both computed the same checksum and saw the other's. */
	EXPECT_STREQ("match", r.send_verdict);
	EXPECT_STREQ("match", r.recv_verdict);
	EXPECT_NE(0ULL, r.send_sum[0]);
	EXPECT_EQ(r.send_sum[0], r.send_sum[1]);
	EXPECT_EQ(r.send_sum[0], r.recv_sum[0]);
	EXPECT_EQ(r.send_sum[0], r.recv_sum[1]);
	EXPECT_EQ(0, same_file(CP_SRC, CP_DST));
	unlink(CP_SRC);
	unlink(CP_DST);
}

/* A bit flipped on the way: both ends see it and exit with status 3. */
TEST_F_TIMEOUT(prog, ordmacp_corruption_fails, 120)
{
	size_t len = 9 * MiB + 3;
	char listen[32], target[64];
	unsigned short port = chan_port(PORT_BASE);
	struct cp_run r;

	/* The wildcard address, and IPv6 on the sender's side. */
	snprintf(listen, sizeof(listen), "[::]:%u", port);
	snprintf(target, sizeof(target), "[%s]:%u:%s", CHAN_IP6, port, CP_DST);
	ASSERT_EQ(0, make_file(CP_SRC, len, chan_seed(len, 81)));
	ASSERT_EQ(0, run_ordmacp(listen, CP_SRC, target,
				 "ORDMACP_TEST_CORRUPT=1", &r));
	EXPECT_EQ(3, r.send_status);
	EXPECT_EQ(3, r.recv_status);
	EXPECT_STREQ("MISMATCH", r.send_verdict);
	EXPECT_STREQ("MISMATCH", r.recv_verdict);
	EXPECT_NE(r.send_sum[0], r.send_sum[1]);
	EXPECT_NE(0, same_file(CP_SRC, CP_DST));

	/* Without the fault, the same file over the same addresses is fine. */
	snprintf(listen, sizeof(listen), "[::]:%u", chan_port(PORT_BASE));
	snprintf(target, sizeof(target), "[%s]:%s:%s", CHAN_IP6,
		 strrchr(listen, ':') + 1, CP_DST);
	ASSERT_EQ(0, run_ordmacp(listen, CP_SRC, target, NULL, &r));
	EXPECT_EQ(0, r.send_status);
	EXPECT_EQ(0, r.recv_status);
	EXPECT_EQ(0, same_file(CP_SRC, CP_DST));
	unlink(CP_SRC);
	unlink(CP_DST);
}

/* The receiver cannot create DST: the sender says why and fails. */
TEST_F_TIMEOUT(prog, ordmacp_bad_destination, 60)
{
	char listen[32], target[96];
	unsigned short port = chan_port(PORT_BASE);
	struct cp_run r;

	snprintf(listen, sizeof(listen), "%u", port);
	snprintf(target, sizeof(target), "%s:%u:/nonexistent/dir/file",
		 CHAN_IP4, port);
	ASSERT_EQ(0, make_file(CP_SRC, 4096, 1));
	ASSERT_EQ(0, run_ordmacp(listen, CP_SRC, target, NULL, &r));
	EXPECT_EQ(1, r.send_status);
	EXPECT_EQ(1, r.recv_status);
	EXPECT_NE(NULL, strstr(r.send_log, "/nonexistent/dir/file: No such file or directory"));
	unlink(CP_SRC);
}

TEST_HARNESS_MAIN
