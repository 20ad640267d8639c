// SPDX-License-Identifier: GPL-2.0
/*
 * The ioctl ABI of /dev/ordma, as include/uapi/linux/ordma.h writes it
 * down: the extensibility contract of every struct (size below the first
 * version, a longer struct with a zero and a non-zero tail, unknown flags,
 * reserved fields), then the error paths of each ioctl with their exact
 * errno. A failing ioctl must change nothing, so every failure is followed
 * by the same call done right, which must behave as if the failure never
 * happened, and every test ends with a message echoed intact over the same
 * file.
 */
#define ORDMA_GUEST_TEST
#include <pthread.h>
#include <stddef.h>

#include "ordma_test.h"
#include "ordma_chan.h"
#include "kselftest_harness.h"

#define PORT_BASE	18700
#define ECHO_LEN	4096

FIXTURE(abi) {
	struct chan_pair p;	/* connected to an echo peer */
	struct chan_pair q;	/* a second pair, for the tests that need one */
};

FIXTURE_SETUP(abi)
{
	ORDMA_TEST_FILTER();
	chan_pair_init(&self->p);
	chan_pair_init(&self->q);
	ASSERT_EQ(0, chan_pair(&self->p, AF_INET, chan_port(PORT_BASE), 1,
			       peer_echo, NULL));
}

FIXTURE_TEARDOWN(abi)
{
	chan_pair_destroy(&self->q);
	chan_pair_destroy(&self->p);
}

/* -- helpers --------------------------------------------------------------- */

/* Send @len bytes to an echo peer on @chan and check what comes back. */
static void echo_roundtrip(struct __test_metadata *_metadata, int fd,
			   __u32 chan, size_t len, __u64 salt)
{
	unsigned char *sbuf = chan_buf(len, 1), *rbuf = chan_buf(len, 3);
	const __u64 cookies[2] = { 0, 1 };
	long long res[2];

	ASSERT_NE(NULL, sbuf);
	ASSERT_NE(NULL, rbuf);
	chan_fill(sbuf, len, chan_seed(len, salt));
	ASSERT_EQ(0, xsubmit(fd, ORDMA_OP_RECV, chan, rbuf, len, 0, 0, 0, 0));
	ASSERT_EQ(0, xsubmit(fd, ORDMA_OP_SEND, chan, sbuf, len, 1, 0, 0, 0));
	ASSERT_EQ(0, xreap(fd, 2, cookies, res, CHAN_WAIT_MS));
	ASSERT_EQ((long long)len, res[0]);
	ASSERT_EQ((long long)len, res[1]);
	ASSERT_EQ(0, memcmp(sbuf, rbuf, len));
	chan_buf_free(sbuf, len, 1);
	chan_buf_free(rbuf, len, 3);
}

/*
 * The end of every test: nothing is left in the completion queue, the
 * channel still carries data, and the echo peer leaves cleanly.
 */
static void abi_done(struct __test_metadata *_metadata, struct chan_pair *p)
{
	struct ordma_cqe cqe;
	unsigned char q = 'Q';

	ASSERT_EQ(-EAGAIN, xwait_many(p->fd, &cqe, 1, 1, 0, ORDMA_F_NONBLOCK));
	echo_roundtrip(_metadata, p->fd, p->chan[0], ECHO_LEN, 99);
	echo_roundtrip(_metadata, p->fd, p->chan[0], 200 * KiB + 1, 98);
	ASSERT_EQ(1, do_send(p->fd, p->chan[0], &q, 1));
	ASSERT_EQ(0, chan_pair_join(p, CHAN_PEER_MS));
}

/* An address with nothing mapped behind it. */
static void *unmapped(size_t len)
{
	void *m = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	munmap(m, len);
	return m;
}

/* Non-zero if nothing at all is mapped in [addr, addr + len). */
static int is_unmapped(const void *addr, size_t len)
{
	return msync((void *)addr, len, MS_ASYNC) == -1 && errno == ENOMEM;
}

static void *mapping(size_t len, int prot)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	memset(m, 0x3c, len);
	if (mprotect(m, len, prot)) {
		munmap(m, len);
		return NULL;
	}
	return m;
}

/* Expect ioctl() to have failed with @err (or succeeded if @err is 0). */
#define CHECK_IOCTL(ret, err, expect, name, what) do {			\
	if (expect) {							\
		ASSERT_EQ(-1, ret)					\
			TH_LOG("%s (%s) succeeded, expected %s",	\
			       name, what, strerror(expect));		\
		ASSERT_EQ(expect, err)					\
			TH_LOG("%s (%s): %s, expected %s", name, what,	\
			       strerror(err), strerror(expect));	\
	} else {							\
		ASSERT_EQ(0, ret)					\
			TH_LOG("%s (%s): %s", name, what, strerror(err)); \
	}								\
} while (0)

/* -- every ioctl, prepared so that one call is valid ------------------------ */

enum {
	I_LISTEN, I_ACCEPT, I_CONNECT, I_CLOSE, I_SUBMIT, I_EXPOSE,
	I_UNEXPOSE, I_WAIT, I_CHAN_INFO, I_NR
};

struct ioc {
	const char *name;
	unsigned long cmd;
	size_t size;
	__u32 valid_flags;
	ssize_t reserved;	/* offset of a __reserved field, or -1 */
};

static const struct ioc iocs[I_NR] = {
	[I_LISTEN] = { "LISTEN", ORDMA_IOC_LISTEN,
		       sizeof(struct ordma_listen), 0, -1 },
	[I_ACCEPT] = { "ACCEPT", ORDMA_IOC_ACCEPT,
		       sizeof(struct ordma_accept), ORDMA_F_NONBLOCK, -1 },
	[I_CONNECT] = { "CONNECT", ORDMA_IOC_CONNECT,
			sizeof(struct ordma_connect), 0, -1 },
	[I_CLOSE] = { "CLOSE", ORDMA_IOC_CLOSE, sizeof(struct ordma_close), 0,
		      offsetof(struct ordma_close, __reserved) },
	[I_SUBMIT] = { "SUBMIT", ORDMA_IOC_SUBMIT,
		       sizeof(struct ordma_submit),
		       ORDMA_F_NONBLOCK | ORDMA_F_NOTIFY, -1 },
	[I_EXPOSE] = { "EXPOSE", ORDMA_IOC_EXPOSE,
		       sizeof(struct ordma_expose), 0,
		       offsetof(struct ordma_expose, __reserved) },
	[I_UNEXPOSE] = { "UNEXPOSE", ORDMA_IOC_UNEXPOSE,
			 sizeof(struct ordma_unexpose), 0, -1 },
	[I_WAIT] = { "WAIT", ORDMA_IOC_WAIT, sizeof(struct ordma_wait),
		     ORDMA_F_NONBLOCK, -1 },
	[I_CHAN_INFO] = { "CHAN_INFO", ORDMA_IOC_CHAN_INFO,
			  sizeof(struct ordma_chan_info), 0,
			  offsetof(struct ordma_chan_info, __reserved) },
};

/* Any of the structs, with room for a tail. */
union ioc_buf {
	struct {
		__u32 size;
		__u32 flags;
	} hdr;
	struct ordma_listen listen;
	struct ordma_accept accept;
	struct ordma_connect connect;
	struct ordma_close close;
	struct ordma_submit submit;
	struct ordma_expose expose;
	struct ordma_unexpose unexpose;
	struct ordma_wait wait;
	struct ordma_chan_info chan_info;
	unsigned char bytes[4096 + 64];
};

/* One prepared call and what it needs undone. */
struct call {
	union ioc_buf u;
	int expect;		/* errno of the valid call, 0 for success */
	__u32 listener;
	int has_listener;
	__u64 token;
	int has_token;
	__u64 cookie;
	unsigned char *msg;
	struct ordma_cqe cqes[4];
};

/* Send c->msg (pattern of c->cookie) to the echo peer. */
static void send_msg(struct __test_metadata *_metadata, struct chan_pair *p,
		     struct call *c)
{
	c->msg = chan_buf(ECHO_LEN, 1);
	ASSERT_NE(NULL, c->msg);
	c->cookie = chan_cookie();
	chan_fill(c->msg, ECHO_LEN, chan_seed(ECHO_LEN, c->cookie & 0xffff));
	ASSERT_EQ(0, xsubmit(p->fd, ORDMA_OP_SEND, p->chan[0], c->msg,
			     ECHO_LEN, c->cookie, 0, 0, 0));
}

/* Receive the echo of c->msg. */
static void recv_echo(struct __test_metadata *_metadata, struct chan_pair *p,
		      struct call *c)
{
	unsigned char *buf = chan_buf(ECHO_LEN, 3);

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(ECHO_LEN, do_recv(p->fd, p->chan[0], buf, ECHO_LEN));
	ASSERT_EQ(0, memcmp(buf, c->msg, ECHO_LEN));
	chan_buf_free(buf, ECHO_LEN, 3);
	chan_buf_free(c->msg, ECHO_LEN, 1);
	c->msg = NULL;
}

static void prepare(struct __test_metadata *_metadata, struct chan_pair *p,
		    int which, struct call *c)
{
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };

	memset(c, 0, sizeof(*c));
	c->u.hdr.size = iocs[which].size;
	switch (which) {
	case I_LISTEN: {
		struct ordma_listen *l = &c->u.listen;

		l->addr = chan_addr(AF_INET, NULL, chan_port(PORT_BASE));
		break;
	}
	case I_ACCEPT: {
		struct ordma_accept *a = &c->u.accept;

		ASSERT_EQ(0, chan_listen(p->fd, AF_INET, chan_port(PORT_BASE),
					 0, &c->listener));
		c->has_listener = 1;
		a->flags = ORDMA_F_NONBLOCK;
		a->listener_id = c->listener;
		c->expect = EAGAIN;
		break;
	}
	case I_CONNECT: {
		struct ordma_connect *cn = &c->u.connect;

		cn->addr = chan_addr(AF_INET, NULL, CHAN_PORT_UNUSED);
		/* Long enough for the refusal to come on a slow guest. */
		cn->timeout_ms = CHAN_CONNECT_MS;
		c->expect = ECONNREFUSED;
		break;
	}
	case I_CLOSE: {
		struct ordma_close *cl = &c->u.close;

		ASSERT_EQ(0, chan_listen(p->fd, AF_INET, chan_port(PORT_BASE),
					 0, &c->listener));
		c->has_listener = 1;
		cl->id = c->listener;
		break;
	}
	case I_SUBMIT: {
		struct ordma_submit *s = &c->u.submit;

		c->msg = chan_buf(ECHO_LEN, 1);
		ASSERT_NE(NULL, c->msg);
		c->cookie = chan_cookie();
		chan_fill(c->msg, ECHO_LEN,
			  chan_seed(ECHO_LEN, c->cookie & 0xffff));
		s->op = ORDMA_OP_SEND;
		s->chan_id = p->chan[0];
		s->addr = (uintptr_t)c->msg;
		s->len = ECHO_LEN;
		s->cookie = c->cookie;
		break;
	}
	case I_EXPOSE: {
		struct ordma_expose *e = &c->u.expose;

		c->msg = chan_buf(ECHO_LEN, 1);
		ASSERT_NE(NULL, c->msg);
		e->addr = (uintptr_t)c->msg;
		e->len = ECHO_LEN;
		e->access = ORDMA_ACCESS_REMOTE_READ | ORDMA_ACCESS_REMOTE_WRITE;
		break;
	}
	case I_UNEXPOSE: {
		struct ordma_unexpose *u = &c->u.unexpose;

		c->msg = chan_buf(ECHO_LEN, 1);
		ASSERT_NE(NULL, c->msg);
		ASSERT_EQ(0, chan_expose(p->fd, c->msg, ECHO_LEN,
					 ORDMA_ACCESS_REMOTE_READ, &c->token));
		c->has_token = 1;
		u->token = c->token;
		break;
	}
	case I_WAIT: {
		struct ordma_wait *w = &c->u.wait;

		/* One completion waiting: the send of a message. */
		send_msg(_metadata, p, c);
		ASSERT_EQ(1, poll(&pfd, 1, CHAN_WAIT_MS));
		w->flags = ORDMA_F_NONBLOCK;
		w->cqes = (uintptr_t)c->cqes;
		w->max = 4;
		w->min = 1;
		break;
	}
	case I_CHAN_INFO: {
		struct ordma_chan_info *ci = &c->u.chan_info;

		ci->chan_id = p->chan[0];
		break;
	}
	}
}

/* Undo what prepare() and the valid call (if @ok) did, checking its result. */
static void cleanup(struct __test_metadata *_metadata, struct chan_pair *p,
		    int which, struct call *c, int ok)
{
	struct ordma_cqe cqe;

	switch (which) {
	case I_LISTEN:
		if (ok) {
			ASSERT_EQ(0, chan_close(p->fd, c->u.listen.out_id));
		}
		break;
	case I_CLOSE:
		/* The valid call closed the listener. */
		if (ok) {
			ASSERT_EQ(-ENOENT, chan_close(p->fd, c->listener));
		} else {
			ASSERT_EQ(0, chan_close(p->fd, c->listener));
		}
		c->has_listener = 0;
		break;
	case I_SUBMIT:
		if (!ok)
			break;
		ASSERT_EQ(0, xwait(p->fd, &cqe, CHAN_WAIT_MS));
		ASSERT_EQ(c->cookie, cqe.cookie);
		ASSERT_EQ((__u32)ORDMA_OP_SEND, cqe.op);
		ASSERT_EQ(ECHO_LEN, cqe.res);
		recv_echo(_metadata, p, c);
		break;
	case I_EXPOSE:
		if (ok) {
			ASSERT_EQ(0, chan_unexpose(p->fd,
						   c->u.expose.out_token));
		}
		break;
	case I_UNEXPOSE:
		/* The valid call removed the window. */
		if (ok) {
			ASSERT_EQ(-ENOENT, chan_unexpose(p->fd, c->token));
		} else {
			ASSERT_EQ(0, chan_unexpose(p->fd, c->token));
		}
		c->has_token = 0;
		break;
	case I_WAIT: {
		struct ordma_wait *w = &c->u.wait;

		if (ok) {
			ASSERT_EQ(1U, w->out_count);
			ASSERT_EQ(c->cookie, c->cqes[0].cookie);
			ASSERT_EQ((__u32)ORDMA_OP_SEND, c->cqes[0].op);
			ASSERT_EQ(p->chan[0], c->cqes[0].chan_id);
			ASSERT_EQ(ECHO_LEN, c->cqes[0].res);
		} else {
			ASSERT_EQ(0, xwait(p->fd, &cqe, CHAN_WAIT_MS));
			ASSERT_EQ(c->cookie, cqe.cookie);
		}
		recv_echo(_metadata, p, c);
		break;
	}
	case I_CHAN_INFO: {
		struct ordma_chan_info *ci = &c->u.chan_info;

		if (ok) {
			ASSERT_EQ((__u32)ORDMA_CHAN_CONNECTED, ci->out_state);
			ASSERT_STREQ(CHAN_IBDEV, ci->out_ibdev);
		}
		break;
	}
	}
	if (c->has_listener) {
		ASSERT_EQ(0, chan_close(p->fd, c->listener));
	}
	if (c->has_token) {
		ASSERT_EQ(0, chan_unexpose(p->fd, c->token));
	}
	if (c->msg)
		chan_buf_free(c->msg, ECHO_LEN, 1);
	c->msg = NULL;
}

/* The prepared call as it is, with the struct @extra bytes longer. */
static void try_good(struct __test_metadata *_metadata, struct chan_pair *p,
		     int which, size_t extra)
{
	const struct ioc *io = &iocs[which];
	struct call c;
	size_t k;
	int ret, err;

	prepare(_metadata, p, which, &c);
	c.u.hdr.size = io->size + extra;
	ret = ioctl(p->fd, io->cmd, &c.u);
	err = errno;
	CHECK_IOCTL(ret, err, c.expect, io->name,
		    extra ? "longer struct, zero tail" : "valid");
	/* The kernel writes no byte it does not know, and leaves size alone. */
	for (k = io->size; k < io->size + extra; k++)
		ASSERT_EQ(0, c.u.bytes[k])
			TH_LOG("%s wrote tail byte %zu", io->name, k);
	ASSERT_EQ(io->size + extra, c.u.hdr.size);
	cleanup(_metadata, p, which, &c, !c.expect);
}

enum { PTR_STRUCT, PTR_NULL, PTR_UNMAPPED };

struct bad {
	const char *what;
	long size;		/* -1: sizeof + size_extra, else the size field */
	long size_extra;
	long tail_at;		/* -1, or offset past sizeof set non-zero */
	__u32 flags_or;
	__u32 reserved;		/* written to the __reserved field */
	int ptr;
	int err;
};

/*
 * Run the prepared call broken as @b says, expect b->err; then the intact
 * call must still behave as if the broken one had never been made.
 */
static void try_bad(struct __test_metadata *_metadata, struct chan_pair *p,
		    int which, const struct bad *b)
{
	const struct ioc *io = &iocs[which];
	union ioc_buf work;
	void *arg = &work;
	struct call c;
	int ret, err;

	prepare(_metadata, p, which, &c);
	work = c.u;
	if (b->size >= 0)
		work.hdr.size = b->size;
	else
		work.hdr.size = io->size + b->size_extra;
	if (b->tail_at >= 0)
		work.bytes[io->size + b->tail_at] = 0x5a;
	work.hdr.flags |= b->flags_or;
	if (b->reserved) {
		ASSERT_LE(0, io->reserved);
		memcpy(work.bytes + io->reserved, &b->reserved,
		       sizeof(b->reserved));
	}
	if (b->ptr == PTR_NULL)
		arg = NULL;
	else if (b->ptr == PTR_UNMAPPED)
		arg = unmapped(4096);
	ret = ioctl(p->fd, io->cmd, arg);
	err = errno;
	CHECK_IOCTL(ret, err, b->err, io->name, b->what);

	ret = ioctl(p->fd, io->cmd, &c.u);
	err = errno;
	CHECK_IOCTL(ret, err, c.expect, io->name, "valid, after the failure");
	cleanup(_metadata, p, which, &c, !c.expect);
}

/* -- the extensibility contract, for every ioctl ----------------------------- */

TEST_F_TIMEOUT(abi, valid_calls, 60)
{
	int i;

	for (i = 0; i < I_NR; i++)
		try_good(_metadata, &self->p, i, 0);
	abi_done(_metadata, &self->p);
}

TEST_F_TIMEOUT(abi, longer_struct_zero_tail_works, 60)
{
	int i;

	for (i = 0; i < I_NR; i++) {
		try_good(_metadata, &self->p, i, 8);
		try_good(_metadata, &self->p, i, 1);
		try_good(_metadata, &self->p, i, 4096 - iocs[i].size);
	}
	abi_done(_metadata, &self->p);
}

TEST_F_TIMEOUT(abi, longer_struct_nonzero_tail_e2big, 60)
{
	int i;

	for (i = 0; i < I_NR; i++) {
		struct bad b[] = {
			{ "first tail byte set", -1, 8, 0, 0, 0, PTR_STRUCT, E2BIG },
			{ "last tail byte set", -1, 8, 7, 0, 0, PTR_STRUCT, E2BIG },
			{ "one tail byte, set", -1, 1, 0, 0, 0, PTR_STRUCT, E2BIG },
		};
		unsigned int k;

		for (k = 0; k < ARRAY_SIZE(b); k++)
			try_bad(_metadata, &self->p, i, &b[k]);
	}
	abi_done(_metadata, &self->p);
}

/*
 * A size above ORDMA_IOC_SIZE_MAX is refused before the kernel reads any of
 * it, zero tail or not: the kernel does not scan up to 4 GiB of the
 * caller's memory for zeroes.
 */
TEST_F_TIMEOUT(abi, size_above_max_e2big, 60)
{
	int i;

	for (i = 0; i < I_NR; i++) {
		struct bad b[] = {
			{ "size max + 1, zero tail", ORDMA_IOC_SIZE_MAX + 1, 0,
			  -1, 0, 0, PTR_STRUCT, E2BIG },
			{ "size 2^32 - 1", 0xffffffff, 0, -1, 0, 0, PTR_STRUCT,
			  E2BIG },
		};
		unsigned int k;

		for (k = 0; k < ARRAY_SIZE(b); k++)
			try_bad(_metadata, &self->p, i, &b[k]);
	}
	abi_done(_metadata, &self->p);
}

TEST_F_TIMEOUT(abi, size_below_first_version_einval, 60)
{
	int i;

	for (i = 0; i < I_NR; i++) {
		struct bad b[] = {
			{ "size 0", 0, 0, -1, 0, 0, PTR_STRUCT, EINVAL },
			{ "size 4", 4, 0, -1, 0, 0, PTR_STRUCT, EINVAL },
			{ "size 8", 8, 0, -1, 0, 0, PTR_STRUCT, EINVAL },
			{ "size - 1", iocs[i].size - 1, 0, -1, 0, 0, PTR_STRUCT,
			  EINVAL },
		};
		unsigned int k;

		for (k = 0; k < ARRAY_SIZE(b); k++)
			try_bad(_metadata, &self->p, i, &b[k]);
	}
	abi_done(_metadata, &self->p);
}

TEST_F_TIMEOUT(abi, unknown_flags_einval, 60)
{
	int i;

	for (i = 0; i < I_NR; i++) {
		__u32 valid = iocs[i].valid_flags;
		struct bad b[] = {
			{ "flag 1 << 31", -1, 0, -1, 1U << 31, 0, PTR_STRUCT, EINVAL },
			{ "flag 1 << 1", -1, 0, -1, 1U << 1, 0, PTR_STRUCT, EINVAL },
			{ "every unknown flag", -1, 0, -1, ~valid, 0, PTR_STRUCT,
			  EINVAL },
			/* "flags: must be 0" where NONBLOCK means nothing */
			{ "NONBLOCK where flags must be 0", -1, 0, -1,
			  ORDMA_F_NONBLOCK, 0, PTR_STRUCT, EINVAL },
		};
		unsigned int k, n = ARRAY_SIZE(b);

		if (valid & ORDMA_F_NONBLOCK)
			n--;
		for (k = 0; k < n; k++)
			try_bad(_metadata, &self->p, i, &b[k]);
	}
	abi_done(_metadata, &self->p);
}

TEST_F_TIMEOUT(abi, reserved_nonzero_einval, 60)
{
	int i;

	for (i = 0; i < I_NR; i++) {
		struct bad b[] = {
			{ "__reserved 1", -1, 0, -1, 0, 1, PTR_STRUCT, EINVAL },
			{ "__reserved 1 << 31", -1, 0, -1, 0, 1U << 31, PTR_STRUCT,
			  EINVAL },
		};
		unsigned int k;

		if (iocs[i].reserved < 0)
			continue;
		for (k = 0; k < ARRAY_SIZE(b); k++)
			try_bad(_metadata, &self->p, i, &b[k]);
	}
	abi_done(_metadata, &self->p);
}

TEST_F_TIMEOUT(abi, struct_not_mapped_efault, 60)
{
	int i;

	for (i = 0; i < I_NR; i++) {
		struct bad b[] = {
			{ "NULL struct", -1, 0, -1, 0, 0, PTR_NULL, EFAULT },
			{ "unmapped struct", -1, 0, -1, 0, 0, PTR_UNMAPPED, EFAULT },
		};
		unsigned int k;

		for (k = 0; k < ARRAY_SIZE(b); k++)
			try_bad(_metadata, &self->p, i, &b[k]);
	}
	abi_done(_metadata, &self->p);
}

/* -- ioctl numbers ------------------------------------------------------------ */

TEST_F(abi, unknown_ioctl_enotty)
{
	const unsigned long cmds[] = {
		_IO(ORDMA_TYPE, ORDMA_CMD_BASE - 1),
		_IO(ORDMA_TYPE, ORDMA_CMD_RING_ENTER + 1),
		_IO(ORDMA_TYPE, 0xff),
		_IO(ORDMA_TYPE, 0),
		_IO(ORDMA_TYPE + 1, ORDMA_CMD_SUBMIT),
		/* the right number with direction and size bits is another one */
		_IOWR(ORDMA_TYPE, ORDMA_CMD_SUBMIT, struct ordma_submit),
		_IOW(ORDMA_TYPE, ORDMA_CMD_CHAN_INFO, struct ordma_chan_info),
	};
	struct call c;
	unsigned int k;

	for (k = 0; k < ARRAY_SIZE(cmds); k++) {
		/* A valid SEND: if it were taken, the echo check would see it. */
		prepare(_metadata, &self->p, I_SUBMIT, &c);
		ASSERT_EQ(-1, ioctl(self->p.fd, cmds[k], &c.u))
			TH_LOG("ioctl %#lx succeeded", cmds[k]);
		ASSERT_EQ(ENOTTY, errno) TH_LOG("ioctl %#lx", cmds[k]);
		cleanup(_metadata, &self->p, I_SUBMIT, &c, 0);
	}
	abi_done(_metadata, &self->p);
}

/* -- SUBMIT ---------------------------------------------------------------- */

struct sub {
	const char *what;
	__u32 op;
	__u32 chan;		/* 0: the pair's channel */
	const void *addr;
	__u64 len;
	__u64 token, offset;
	int err;
};

static int submit_raw(int fd, const struct sub *s, __u32 chan, __u64 cookie)
{
	struct ordma_submit sb = {
		.size = sizeof(sb), .op = s->op,
		.chan_id = s->chan ? s->chan : chan,
		.addr = (uintptr_t)s->addr, .len = s->len, .cookie = cookie,
		.token = s->token, .offset = s->offset,
	};

	return ioctl(fd, ORDMA_IOC_SUBMIT, &sb);
}

TEST_F_TIMEOUT(abi, submit_errors, 60)
{
	struct chan_pair *p = &self->p;
	unsigned char *good = chan_buf(3 * 4096, 1);
	unsigned char *partial = mapping(3 * 4096, PROT_READ | PROT_WRITE);
	unsigned char *ro = mapping(4096, PROT_READ);
	unsigned char *none = mapping(4096, PROT_NONE);
	/* Last: a later mmap() could land in the hole. */
	unsigned char *hole = unmapped(3 * 4096);
	void *wrap = (void *)(uintptr_t)(~0ULL - 10);
	struct ordma_chan_info before, after;
	__u32 listener = 0, bad_chan;
	unsigned int k;

	ASSERT_NE(NULL, good);
	ASSERT_NE(NULL, hole);
	ASSERT_NE(NULL, partial);
	ASSERT_NE(NULL, ro);
	ASSERT_NE(NULL, none);
	ASSERT_EQ(0, munmap(partial + 2 * 4096, 4096));
	ASSERT_EQ(0, chan_listen(p->fd, AF_INET, chan_port(PORT_BASE), 0,
				 &listener));
	bad_chan = p->chan[0] + 1000;
	if (bad_chan == listener)
		bad_chan++;

	const struct sub subs[] = {
	{ "no such channel", ORDMA_OP_SEND, 0xdeadbeef, good, 16, 0, 0, ENOENT },
	{ "no such channel", ORDMA_OP_RECV, 0xdeadbeef, good, 16, 0, 0, ENOENT },
	{ "no such channel", ORDMA_OP_SEND, bad_chan, good, 16, 0, 0, ENOENT },
	{ "a listener is no channel", ORDMA_OP_SEND, listener, good, 16, 0, 0, ENOENT },
	{ "len 0", ORDMA_OP_SEND, 0, good, 0, 0, 0, EINVAL },
	{ "len 0", ORDMA_OP_RECV, 0, good, 0, 0, 0, EINVAL },
	{ "len 0", ORDMA_OP_WRITE, 0, good, 0, 1, 0, EINVAL },
	{ "len 0", ORDMA_OP_READ, 0, good, 0, 1, 0, EINVAL },
	{ "len above ORDMA_MAX_LEN", ORDMA_OP_SEND, 0, good, ORDMA_MAX_LEN + 1, 0, 0, EINVAL },
	{ "len above ORDMA_MAX_LEN", ORDMA_OP_RECV, 0, good, ORDMA_MAX_LEN + 1, 0, 0, EINVAL },
	{ "len above ORDMA_MAX_LEN", ORDMA_OP_WRITE, 0, good, ORDMA_MAX_LEN + 1, 1, 0, EINVAL },
	{ "addr + len wraps", ORDMA_OP_SEND, 0, wrap, 100, 0, 0, EOVERFLOW },
	{ "addr + len wraps", ORDMA_OP_RECV, 0, wrap, 100, 0, 0, EOVERFLOW },
	{ "addr + len wraps", ORDMA_OP_WRITE, 0, wrap, 100, 1, 0, EOVERFLOW },
	{ "addr + len wraps", ORDMA_OP_READ, 0, wrap, 100, 1, 0, EOVERFLOW },
	{ "unmapped", ORDMA_OP_SEND, 0, hole, 3 * 4096, 0, 0, EFAULT },
	{ "unmapped", ORDMA_OP_RECV, 0, hole, 3 * 4096, 0, 0, EFAULT },
	{ "unmapped", ORDMA_OP_SEND, 0, hole + 100, 1, 0, 0, EFAULT },
	{ "NULL", ORDMA_OP_SEND, 0, NULL, 16, 0, 0, EFAULT },
	{ "last page unmapped", ORDMA_OP_SEND, 0, partial, 3 * 4096, 0, 0, EFAULT },
	{ "last page unmapped", ORDMA_OP_RECV, 0, partial + 1, 3 * 4096 - 2, 0, 0, EFAULT },
	{ "unmapped", ORDMA_OP_WRITE, 0, hole, 4096, 1, 0, EFAULT },
	{ "unmapped", ORDMA_OP_READ, 0, hole, 4096, 1, 0, EFAULT },
	{ "read-only buffer", ORDMA_OP_RECV, 0, ro, 4096, 0, 0, EFAULT },
	{ "read-only buffer", ORDMA_OP_RECV, 0, ro + 1, 10, 0, 0, EFAULT },
	{ "read-only buffer", ORDMA_OP_READ, 0, ro, 4096, 1, 0, EFAULT },
	{ "PROT_NONE buffer", ORDMA_OP_SEND, 0, none, 4096, 0, 0, EFAULT },
	{ "PROT_NONE buffer", ORDMA_OP_WRITE, 0, none, 4096, 1, 0, EFAULT },
	{ "op 0", 0, 0, good, 16, 0, 0, EINVAL },
	{ "op 5", ORDMA_OP_READ + 1, 0, good, 16, 0, 0, EINVAL },
	{ "op 0x100", 0x100, 0, good, 16, 0, 0, EINVAL },
	{ "op ~0", ~0U, 0, good, 16, 0, 0, EINVAL },
	{ "token on SEND", ORDMA_OP_SEND, 0, good, 16, 1, 0, EINVAL },
	{ "offset on SEND", ORDMA_OP_SEND, 0, good, 16, 0, 1, EINVAL },
	{ "token on RECV", ORDMA_OP_RECV, 0, good, 16, 1, 0, EINVAL },
	{ "offset on RECV", ORDMA_OP_RECV, 0, good, 16, 0, 1, EINVAL },
	};

	ASSERT_TRUE(is_unmapped(hole, 3 * 4096));
	ASSERT_TRUE(is_unmapped(partial + 2 * 4096, 4096));
	ASSERT_EQ(0, chan_info(p->fd, p->chan[0], &before));
	for (k = 0; k < ARRAY_SIZE(subs); k++) {
		const struct sub *s = &subs[k];

		int ret = submit_raw(p->fd, s, p->chan[0], k), err = errno;

		/* EXPECT: list every case that fails, not just the first. */
		EXPECT_EQ(-1, ret)
			TH_LOG("case %u: %s (op %u) succeeded", k, s->what,
			       s->op);
		if (ret == -1)
			EXPECT_EQ(s->err, err)
				TH_LOG("case %u: %s (op %u): %s, expected %s",
				       k, s->what, s->op, strerror(err),
				       strerror(s->err));
	}
	ASSERT_TRUE(_metadata->passed);
	ASSERT_TRUE(is_unmapped(hole, 3 * 4096));

	/* None of them counted, queued or consumed anything. */
	ASSERT_EQ(0, chan_info(p->fd, p->chan[0], &after));
	ASSERT_EQ(before.out_ops, after.out_ops);
	ASSERT_EQ(before.out_errors, after.out_errors);
	ASSERT_EQ(0ULL, after.out_inflight);
	ASSERT_EQ(before.out_bytes_tx, after.out_bytes_tx);
	ASSERT_EQ(before.out_bytes_rx, after.out_bytes_rx);
	ASSERT_EQ(0, chan_close(p->fd, listener));
	abi_done(_metadata, p);
}

/* Any readable memory can be sent: a read-only mapping, .rodata. */
static const char rodata_msg[] =
	"ordma sends from memory that was never registered, even when it is "
	"read-only: the pages are pinned for reading, never for writing.";

TEST_F(abi, send_from_readonly_memory)
{
	struct chan_pair *p = &self->p;
	unsigned char *ro = mapping(2 * 4096, PROT_READ | PROT_WRITE);
	unsigned char *rbuf = chan_buf(2 * 4096, 1);
	const __u64 cookies[2] = { 1, 2 };
	long long res[2];

	ASSERT_NE(NULL, ro);
	ASSERT_NE(NULL, rbuf);
	chan_fill(ro, 2 * 4096, chan_seed(2 * 4096, 60));
	ASSERT_EQ(0, mprotect(ro, 2 * 4096, PROT_READ));

	/* From a read-only anonymous mapping, unaligned, across a page. */
	ASSERT_EQ(0, xsubmit(p->fd, ORDMA_OP_RECV, p->chan[0], rbuf, 2 * 4096,
			     1, 0, 0, 0));
	ASSERT_EQ(0, xsubmit(p->fd, ORDMA_OP_SEND, p->chan[0], ro + 3,
			     2 * 4096 - 3, 2, 0, 0, 0));
	ASSERT_EQ(0, xreap(p->fd, 2, cookies, res, CHAN_WAIT_MS));
	ASSERT_EQ(2 * 4096 - 3, res[0]);
	ASSERT_EQ(2 * 4096 - 3, res[1]);
	ASSERT_EQ(0, memcmp(rbuf, ro + 3, 2 * 4096 - 3));

	/* From the program's .rodata. */
	ASSERT_EQ(0, xsubmit(p->fd, ORDMA_OP_RECV, p->chan[0], rbuf, 2 * 4096,
			     1, 0, 0, 0));
	ASSERT_EQ(0, xsubmit(p->fd, ORDMA_OP_SEND, p->chan[0], rodata_msg,
			     sizeof(rodata_msg), 2, 0, 0, 0));
	ASSERT_EQ(0, xreap(p->fd, 2, cookies, res, CHAN_WAIT_MS));
	ASSERT_EQ((long long)sizeof(rodata_msg), res[0]);
	ASSERT_EQ((long long)sizeof(rodata_msg), res[1]);
	ASSERT_EQ(0, memcmp(rbuf, rodata_msg, sizeof(rodata_msg)));
	abi_done(_metadata, p);
}

/* -- CLOSE ------------------------------------------------------------------ */

TEST_F(abi, close_errors)
{
	struct chan_pair *p = &self->p;
	struct ordma_close c = { .size = sizeof(c) };
	__u32 listener = 0;

	c.id = 0xdeadbeef;
	ASSERT_EQ(-1, ioctl(p->fd, ORDMA_IOC_CLOSE, &c));
	ASSERT_EQ(ENOENT, errno);
	c.id = p->chan[0] + 1000;
	ASSERT_EQ(-1, ioctl(p->fd, ORDMA_IOC_CLOSE, &c));
	ASSERT_EQ(ENOENT, errno);

	/* Closing twice: the second finds nothing. */
	ASSERT_EQ(0, chan_listen(p->fd, AF_INET, chan_port(PORT_BASE), 0,
				 &listener));
	ASSERT_NE(p->chan[0], listener);
	c.id = listener;
	ASSERT_EQ(0, ioctl(p->fd, ORDMA_IOC_CLOSE, &c));
	ASSERT_EQ(-1, ioctl(p->fd, ORDMA_IOC_CLOSE, &c));
	ASSERT_EQ(ENOENT, errno);
	abi_done(_metadata, p);
}

/* -- LISTEN ---------------------------------------------------------------- */

static int listen_raw(int fd, const struct ordma_addr *a, __u32 *id)
{
	struct ordma_listen l = { .size = sizeof(l), .addr = *a };
	int ret = ioctl(fd, ORDMA_IOC_LISTEN, &l);

	*id = l.out_id;
	return ret;
}

TEST_F(abi, listen_errors)
{
	struct chan_pair *p = &self->p;
	unsigned short port = chan_port(PORT_BASE);
	struct ordma_addr a;
	__u32 id, id2;
	int fd2;

	a = chan_addr(AF_INET, NULL, port);
	a.family = 12345;
	ASSERT_EQ(-1, listen_raw(p->fd, &a, &id));
	ASSERT_EQ(EINVAL, errno);
	a.family = AF_UNIX;
	ASSERT_EQ(-1, listen_raw(p->fd, &a, &id));
	ASSERT_EQ(EINVAL, errno);
	a.family = 0;
	ASSERT_EQ(-1, listen_raw(p->fd, &a, &id));
	ASSERT_EQ(EINVAL, errno);
	/* An IPv4 address uses 4 bytes; the others must be zero. */
	a = chan_addr(AF_INET, NULL, port);
	a.addr[4] = 1;
	ASSERT_EQ(-1, listen_raw(p->fd, &a, &id));
	ASSERT_EQ(EINVAL, errno);
	a = chan_addr(AF_INET, NULL, port);
	a.addr[15] = 1;
	ASSERT_EQ(-1, listen_raw(p->fd, &a, &id));
	ASSERT_EQ(EINVAL, errno);

	/* No RDMA device has that address. */
	a = chan_addr(AF_INET, "192.0.2.77", port);
	ASSERT_EQ(-1, listen_raw(p->fd, &a, &id));
	ASSERT_EQ(EADDRNOTAVAIL, errno);

	/* None of the failures took the port. */
	a = chan_addr(AF_INET, NULL, port);
	ASSERT_EQ(0, listen_raw(p->fd, &a, &id));
	ASSERT_EQ(-1, listen_raw(p->fd, &a, &id2));
	ASSERT_EQ(EADDRINUSE, errno);
	fd2 = chan_open();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(-1, listen_raw(fd2, &a, &id2));
	ASSERT_EQ(EADDRINUSE, errno);
	/* Closing the listener frees the port. */
	ASSERT_EQ(0, chan_close(p->fd, id));
	ASSERT_EQ(0, listen_raw(fd2, &a, &id2));
	close(fd2);

	/* The wildcard address listens on every device. */
	a = chan_addr(AF_INET, "0.0.0.0", chan_port(PORT_BASE));
	ASSERT_EQ(0, listen_raw(p->fd, &a, &id));
	ASSERT_EQ(0, chan_close(p->fd, id));
	a = chan_addr(AF_INET6, "::", chan_port(PORT_BASE));
	ASSERT_EQ(0, listen_raw(p->fd, &a, &id));
	ASSERT_EQ(0, chan_close(p->fd, id));
	abi_done(_metadata, p);
}

/* -- CONNECT --------------------------------------------------------------- */

static int connect_raw(int fd, const struct ordma_addr *a, __u32 timeout_ms)
{
	struct ordma_connect c = {
		.size = sizeof(c), .addr = *a, .timeout_ms = timeout_ms,
	};

	return ioctl(fd, ORDMA_IOC_CONNECT, &c);
}

TEST_F_TIMEOUT(abi, connect_errors, 60)
{
	struct chan_pair *p = &self->p;
	struct ordma_addr a;
	long long t0, dt;

	/*
	 * Refused: the answer comes well within CHAN_CONNECT_MS (the default
	 * timeout, 0, may run out first on a slow guest).
	 */
	a = chan_addr(AF_INET, NULL, CHAN_PORT_UNUSED);
	ASSERT_EQ(-1, connect_raw(p->fd, &a, CHAN_CONNECT_MS));
	ASSERT_EQ(ECONNREFUSED, errno);
	a = chan_addr(AF_INET6, NULL, CHAN_PORT_UNUSED);
	ASSERT_EQ(-1, connect_raw(p->fd, &a, CHAN_CONNECT_MS));
	ASSERT_EQ(ECONNREFUSED, errno);

	a = chan_addr(AF_INET, NULL, CHAN_PORT_UNUSED);
	a.family = 12345;
	ASSERT_EQ(-1, connect_raw(p->fd, &a, 0));
	ASSERT_EQ(EINVAL, errno);

	/* No route at all (the guest has no default route). */
	a = chan_addr(AF_INET, "198.51.100.1", 4791);
	ASSERT_EQ(-1, connect_raw(p->fd, &a, CHAN_CONNECT_MS));
	ASSERT_TRUE(errno == ENETUNREACH || errno == EHOSTUNREACH)
		TH_LOG("errno %d (%s)", errno, strerror(errno));

	/* A routable address where nobody answers: timeout_ms is honoured. */
	a = chan_addr(AF_INET, "192.0.2.2", CHAN_PORT_UNUSED);
	t0 = chan_now_ms();
	ASSERT_EQ(-1, connect_raw(p->fd, &a, 1000));
	ASSERT_EQ(ETIMEDOUT, errno);
	dt = chan_now_ms() - t0;
	ASSERT_LE(900, dt);
	ASSERT_GE(10000, dt);
	abi_done(_metadata, p);
}

/*
 * A connect and an accept whose structs are longer than the kernel's, with
 * a zero tail, make a working channel; the kernel leaves the tails alone.
 */
TEST_F_TIMEOUT(abi, connect_accept_longer_structs, 60)
{
	struct chan_pair *q = &self->q;
	struct {
		struct ordma_connect c;
		__u64 tail[2];
	} big;
	unsigned char q_msg = 'Q';

	q->accept_extra = 16;
	ASSERT_EQ(0, chan_peer_start(q, AF_INET, chan_port(PORT_BASE), 1,
				     peer_echo, NULL));
	q->fd = chan_open();
	ASSERT_LE(0, q->fd);
	memset(&big, 0, sizeof(big));
	big.c.size = sizeof(big);
	big.c.addr = chan_addr(AF_INET, NULL, q->port);
	big.c.timeout_ms = CHAN_CONNECT_MS;
	ASSERT_EQ(0, ioctl(q->fd, ORDMA_IOC_CONNECT, &big));
	ASSERT_EQ(0ULL, big.tail[0]);
	ASSERT_EQ(0ULL, big.tail[1]);
	ASSERT_EQ((__u32)sizeof(big), big.c.size);
	q->chan[0] = big.c.out_chan_id;
	echo_roundtrip(_metadata, q->fd, q->chan[0], 64 * KiB, 7);
	ASSERT_EQ(1, do_send(q->fd, q->chan[0], &q_msg, 1));
	/* The peer checked its accept tail, then echoed; 0 means all good. */
	ASSERT_EQ(0, chan_pair_join(q, CHAN_PEER_MS));
	abi_done(_metadata, &self->p);
}

/* -- EXPOSE / UNEXPOSE ------------------------------------------------------ */

static int expose_raw(int fd, const void *addr, __u64 len, __u32 access)
{
	struct ordma_expose e = {
		.size = sizeof(e), .addr = (uintptr_t)addr, .len = len,
		.access = access,
	};

	return ioctl(fd, ORDMA_IOC_EXPOSE, &e);
}

TEST_F(abi, expose_errors)
{
	struct chan_pair *p = &self->p;
	unsigned char *good = chan_buf(3 * 4096, 1);
	unsigned char *partial = mapping(3 * 4096, PROT_READ | PROT_WRITE);
	unsigned char *none = mapping(4096, PROT_NONE);
	unsigned char *hole = unmapped(3 * 4096);
	const __u32 rw = ORDMA_ACCESS_REMOTE_READ | ORDMA_ACCESS_REMOTE_WRITE;
	__u64 tok = 0;

	ASSERT_NE(NULL, good);
	ASSERT_NE(NULL, hole);
	ASSERT_NE(NULL, partial);
	ASSERT_NE(NULL, none);
	ASSERT_EQ(0, munmap(partial + 2 * 4096, 4096));
	ASSERT_TRUE(is_unmapped(hole, 3 * 4096));

	ASSERT_EQ(-1, expose_raw(p->fd, good, 4096, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, expose_raw(p->fd, good, 4096, 1U << 2));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, expose_raw(p->fd, good, 4096, rw | (1U << 31)));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, expose_raw(p->fd, good, 0, rw));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, expose_raw(p->fd, good, ORDMA_MAX_LEN + 1, rw));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, expose_raw(p->fd, (void *)(uintptr_t)(~0ULL - 10), 100,
				 rw));
	ASSERT_EQ(EOVERFLOW, errno);
	ASSERT_EQ(-1, expose_raw(p->fd, hole, 3 * 4096, rw));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, expose_raw(p->fd, partial, 3 * 4096,
				 ORDMA_ACCESS_REMOTE_READ));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, expose_raw(p->fd, none, 4096, ORDMA_ACCESS_REMOTE_READ));
	ASSERT_EQ(EFAULT, errno);

	ASSERT_EQ(0, chan_expose(p->fd, good + 1, 3 * 4096 - 2, rw, &tok));
	ASSERT_EQ(0, chan_unexpose(p->fd, tok));
	abi_done(_metadata, p);
}

TEST_F(abi, unexpose_unknown_token_enoent)
{
	struct chan_pair *p = &self->p;
	unsigned char *buf = chan_buf(4096, 1);
	struct ordma_unexpose u = { .size = sizeof(u) };
	__u64 tok = 0;
	int fd2;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, chan_expose(p->fd, buf, 4096, ORDMA_ACCESS_REMOTE_READ,
				 &tok));
	/* Tokens belong to the file that exposed them. */
	fd2 = chan_open();
	ASSERT_LE(0, fd2);
	u.token = tok;
	ASSERT_EQ(-1, ioctl(fd2, ORDMA_IOC_UNEXPOSE, &u));
	ASSERT_EQ(ENOENT, errno);
	close(fd2);

	ASSERT_EQ(0, ioctl(p->fd, ORDMA_IOC_UNEXPOSE, &u));
	ASSERT_EQ(-1, ioctl(p->fd, ORDMA_IOC_UNEXPOSE, &u));
	ASSERT_EQ(ENOENT, errno);
	u.token = tok + 1;
	ASSERT_EQ(-1, ioctl(p->fd, ORDMA_IOC_UNEXPOSE, &u));
	ASSERT_EQ(ENOENT, errno);
	u.token = 0;
	ASSERT_EQ(-1, ioctl(p->fd, ORDMA_IOC_UNEXPOSE, &u));
	ASSERT_EQ(ENOENT, errno);
	u.token = ~0ULL;
	ASSERT_EQ(-1, ioctl(p->fd, ORDMA_IOC_UNEXPOSE, &u));
	ASSERT_EQ(ENOENT, errno);
	abi_done(_metadata, p);
}

/* -- WAIT ------------------------------------------------------------------ */

TEST_F_TIMEOUT(abi, wait_errors, 60)
{
	struct chan_pair *p = &self->p;
	struct ordma_cqe cqes[4];
	struct ordma_wait w;
	unsigned char *ro = mapping(4096, PROT_READ);
	struct call c;
	long long t0, dt;

	ASSERT_NE(NULL, ro);
	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	w.cqes = (uintptr_t)cqes;
	w.min = 1;

	w.max = 0;
	ASSERT_EQ(-1, ioctl(p->fd, ORDMA_IOC_WAIT, &w));
	ASSERT_EQ(EINVAL, errno);

	w.max = 4;
	w.flags = ORDMA_F_NONBLOCK;
	ASSERT_EQ(-1, ioctl(p->fd, ORDMA_IOC_WAIT, &w));
	ASSERT_EQ(EAGAIN, errno);

	w.flags = 0;
	w.timeout_ms = 300;
	t0 = chan_now_ms();
	ASSERT_EQ(-1, ioctl(p->fd, ORDMA_IOC_WAIT, &w));
	ASSERT_EQ(ETIMEDOUT, errno);
	dt = chan_now_ms() - t0;
	ASSERT_EQ(0U, w.out_count);
	ASSERT_LE(250, dt);
	ASSERT_GE(5000, dt);

	/*
	 * A completion waits, but the array cannot be written: EFAULT, and
	 * the completion is still there afterwards.
	 */
	send_msg(_metadata, p, &c);
	{
		struct pollfd pfd = { .fd = p->fd, .events = POLLIN };

		ASSERT_EQ(1, poll(&pfd, 1, CHAN_WAIT_MS));
	}
	w.flags = ORDMA_F_NONBLOCK;
	w.cqes = (uintptr_t)unmapped(4096);
	ASSERT_EQ(-1, ioctl(p->fd, ORDMA_IOC_WAIT, &w));
	ASSERT_EQ(EFAULT, errno);
	w.cqes = (uintptr_t)ro;
	ASSERT_EQ(-1, ioctl(p->fd, ORDMA_IOC_WAIT, &w));
	ASSERT_EQ(EFAULT, errno);
	w.cqes = (uintptr_t)cqes;
	w.out_count = 0;
	ASSERT_EQ(0, ioctl(p->fd, ORDMA_IOC_WAIT, &w));
	ASSERT_EQ(1U, w.out_count);
	ASSERT_EQ(c.cookie, cqes[0].cookie);
	ASSERT_EQ(ECHO_LEN, cqes[0].res);
	recv_echo(_metadata, p, &c);

	/*
	 * Fewer than min by the timeout: WAIT returns those that are there
	 * once the time has run out.
	 */
	send_msg(_metadata, p, &c);
	{
		struct pollfd pfd = { .fd = p->fd, .events = POLLIN };

		ASSERT_EQ(1, poll(&pfd, 1, CHAN_WAIT_MS));
	}
	w.flags = 0;
	w.min = 2;
	w.max = 4;
	w.timeout_ms = 500;
	w.out_count = 0;
	t0 = chan_now_ms();
	ASSERT_EQ(0, ioctl(p->fd, ORDMA_IOC_WAIT, &w));
	dt = chan_now_ms() - t0;
	ASSERT_EQ(1U, w.out_count);
	ASSERT_LE(450, dt);
	ASSERT_GE(5000, dt);
	ASSERT_EQ(c.cookie, cqes[0].cookie);
	ASSERT_EQ(ECHO_LEN, cqes[0].res);
	ASSERT_EQ(-EAGAIN, xwait_many(p->fd, cqes, 4, 1, 0, ORDMA_F_NONBLOCK));
	recv_echo(_metadata, p, &c);
	abi_done(_metadata, p);
}

/* -- ACCEPT, CHAN_INFO ----------------------------------------------------- */

TEST_F(abi, accept_errors)
{
	struct chan_pair *p = &self->p;
	struct ordma_accept a = { .size = sizeof(a), .flags = ORDMA_F_NONBLOCK };
	__u32 listener = 0;

	ASSERT_EQ(0, chan_listen(p->fd, AF_INET, chan_port(PORT_BASE), 0,
				 &listener));
	a.listener_id = listener;
	ASSERT_EQ(-1, ioctl(p->fd, ORDMA_IOC_ACCEPT, &a));
	ASSERT_EQ(EAGAIN, errno);
	a.listener_id = 0xdeadbeef;
	ASSERT_EQ(-1, ioctl(p->fd, ORDMA_IOC_ACCEPT, &a));
	ASSERT_EQ(ENOENT, errno);
	/* A channel is no listener. */
	a.listener_id = p->chan[0];
	ASSERT_EQ(-1, ioctl(p->fd, ORDMA_IOC_ACCEPT, &a));
	ASSERT_EQ(ENOENT, errno);
	/* Blocking, on nothing: fails at once. */
	a.flags = 0;
	a.listener_id = 0xdeadbeef;
	ASSERT_EQ(-1, ioctl(p->fd, ORDMA_IOC_ACCEPT, &a));
	ASSERT_EQ(ENOENT, errno);
	ASSERT_EQ(0, chan_close(p->fd, listener));
	abi_done(_metadata, p);
}

TEST_F(abi, chan_info_errors)
{
	struct chan_pair *p = &self->p;
	struct ordma_chan_info ci;
	__u32 listener = 0;

	ASSERT_EQ(-ENOENT, chan_info(p->fd, 0xdeadbeef, &ci));
	ASSERT_EQ(-ENOENT, chan_info(p->fd, p->chan[0] + 1000, &ci));
	ASSERT_EQ(0, chan_listen(p->fd, AF_INET, chan_port(PORT_BASE), 0,
				 &listener));
	ASSERT_EQ(-ENOENT, chan_info(p->fd, listener, &ci));
	ASSERT_EQ(0, chan_close(p->fd, listener));
	abi_done(_metadata, p);
}

/* -- the file belongs to the process that opened it -------------------------- */

/*
 * After fork(), the child shares the parent's file but may not submit or
 * expose through it (EPERM); the parent's channel is unaffected.
 */
TEST_F(abi, forked_child_may_not_submit_eperm)
{
	struct chan_pair *p = &self->p;
	unsigned char *buf = chan_buf(4096, 1);
	struct ordma_expose e = { .size = sizeof(e) };
	int st;
	pid_t pid;

	ASSERT_NE(NULL, buf);
	e.addr = (uintptr_t)buf;
	e.len = 4096;
	e.access = ORDMA_ACCESS_REMOTE_READ;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int bad = 0;

		if (xsubmit(p->fd, ORDMA_OP_SEND, p->chan[0], buf, 16, 1, 0, 0,
			    0) != -EPERM)
			bad |= 1;
		if (xsubmit(p->fd, ORDMA_OP_RECV, p->chan[0], buf, 16, 2, 0, 0,
			    0) != -EPERM)
			bad |= 2;
		if (ioctl(p->fd, ORDMA_IOC_EXPOSE, &e) != -1 || errno != EPERM)
			bad |= 4;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st))
		TH_LOG("in the child: %s%s%s did not fail with EPERM",
		       WEXITSTATUS(st) & 1 ? "SEND " : "",
		       WEXITSTATUS(st) & 2 ? "RECV " : "",
		       WEXITSTATUS(st) & 4 ? "EXPOSE" : "");
	abi_done(_metadata, p);
}

/* -- ids belong to their file ----------------------------------------------- */

static int peer_report_ids(struct chan_pair *p, void *arg)
{
	__u32 ids[2] = { p->listener, p->chan[0] };

	PEER_EQ(0, ctl_send(p->ctl, ids, sizeof(ids)));
	return peer_echo(p, arg);
}

/* Every id-taking call on @fd with @id must fail with ENOENT. */
static void no_such_id(struct __test_metadata *_metadata, int fd, __u32 id)
{
	struct ordma_accept a = {
		.size = sizeof(a), .flags = ORDMA_F_NONBLOCK, .listener_id = id,
	};
	struct ordma_chan_info ci;
	unsigned char buf[16] = "not for you";

	ASSERT_EQ(-ENOENT, xsubmit(fd, ORDMA_OP_SEND, id, buf, sizeof(buf), 1,
				   0, 0, 0)) TH_LOG("id %u", id);
	ASSERT_EQ(-ENOENT, xsubmit(fd, ORDMA_OP_RECV, id, buf, sizeof(buf), 2,
				   0, 0, 0)) TH_LOG("id %u", id);
	ASSERT_EQ(-ENOENT, chan_info(fd, id, &ci)) TH_LOG("id %u", id);
	ASSERT_EQ(-1, ioctl(fd, ORDMA_IOC_ACCEPT, &a)) TH_LOG("id %u", id);
	ASSERT_EQ(ENOENT, errno) TH_LOG("id %u", id);
	ASSERT_EQ(-ENOENT, chan_close(fd, id)) TH_LOG("id %u", id);
}

/*
 * A listener with backlog 2 holds two connections nobody accepted and
 * refuses a third; once one is accepted, a new one gets in.
 */
TEST_F_TIMEOUT(abi, listen_backlog_refuses_one_more, 60)
{
	unsigned short port = chan_port(PORT_BASE);
	int lfd = chan_open(), cfd = chan_open();
	struct ordma_accept a;
	__u32 lis = 0, c[4];

	ASSERT_LE(0, lfd);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0, chan_listen(lfd, AF_INET, port, 2, &lis));
	ASSERT_EQ(0, chan_connect(cfd, AF_INET, port, &c[0]));
	ASSERT_EQ(0, chan_connect(cfd, AF_INET, port, &c[1]));
	EXPECT_EQ(-ECONNREFUSED, chan_connect(cfd, AF_INET, port, &c[2]));
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.listener_id = lis;
	ASSERT_EQ(0, ioctl(lfd, ORDMA_IOC_ACCEPT, &a));
	EXPECT_EQ(0, chan_connect(cfd, AF_INET, port, &c[3]));
	EXPECT_EQ(0, close(cfd));
	EXPECT_EQ(0, close(lfd));
	abi_done(_metadata, &self->p);
}

/*
 * A LISTEN races a CLOSE of the id it is about to get (ids are the lowest
 * free ones, from 1): the object may be closed the moment it is published,
 * and the kernel must not touch it after that (KASAN in make check-debug
 * watches). Every LISTEN succeeds, every CLOSE finds the object or not.
 */
struct close_racer {
	int fd;
	volatile int stop;
	int closed, bad;
};

static void *close_racer_run(void *arg)
{
	struct close_racer *cr = arg;
	int ret;

	while (!cr->stop) {
		ret = chan_close(cr->fd, 1);
		if (!ret)
			cr->closed++;
		else if (ret != -ENOENT)
			cr->bad++;
	}
	return NULL;
}

TEST_F_TIMEOUT(abi, listen_races_close_of_its_id, 120)
{
	int rounds = ordma_scaled(2000, 300), i, fails = 0, busy = 0;
	struct close_racer cr = { .fd = chan_open() };
	unsigned short port = chan_port(PORT_BASE);
	pthread_t t;

	ASSERT_LE(0, cr.fd);
	ASSERT_EQ(0, pthread_create(&t, NULL, close_racer_run, &cr));
	for (i = 0; i < rounds && busy < 1000000; i++) {
		__u32 id = 0;
		int ret;

		/* Id 1 is free or about to be: this listener gets it. */
		ret = chan_listen(cr.fd, AF_INET, port, 0, &id);
		if (ret == -EADDRINUSE) {
			/* The last one is not closed yet: try again. */
			busy++;
			i--;
			continue;
		}
		if (ret || id != 1)
			fails++;
	}
	cr.stop = 1;
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(rounds, i);
	EXPECT_EQ(0, fails);
	EXPECT_EQ(0, cr.bad);
	/* Most listeners were closed by the racer, the last one maybe not. */
	EXPECT_LE(rounds - 1, cr.closed);
	EXPECT_EQ(0, close(cr.fd));
	abi_done(_metadata, &self->p);
}

TEST_F_TIMEOUT(abi, ids_belong_to_their_file, 60)
{
	struct chan_pair *p = &self->p, *q = &self->q;
	__u32 ids[2];
	unsigned char quit = 'Q';
	int fd2, i;

	/* Another process, with a listener and a channel in its own file. */
	ASSERT_EQ(0, chan_pair(q, AF_INET, chan_port(PORT_BASE), 1,
			       peer_report_ids, NULL));
	ASSERT_EQ(0, ctl_recv(q->ctl, ids, sizeof(ids), CHAN_PEER_MS));

	/* A fresh file of this process has no objects at all. */
	fd2 = chan_open();
	ASSERT_LE(0, fd2);
	for (i = 0; i < 2; i++)
		no_such_id(_metadata, fd2, ids[i]);
	close(fd2);

	/* Nor has the test's file, for the numbers it does not use itself. */
	for (i = 0; i < 2; i++) {
		if (ids[i] == p->chan[0]) {
			TH_LOG("peer id %u is also this file's channel", ids[i]);
			continue;
		}
		no_such_id(_metadata, p->fd, ids[i]);
	}

	/* The other process's channel is untouched. */
	echo_roundtrip(_metadata, q->fd, q->chan[0], ECHO_LEN, 8);
	ASSERT_EQ(1, do_send(q->fd, q->chan[0], &quit, 1));
	ASSERT_EQ(0, chan_pair_join(q, CHAN_PEER_MS));
	abi_done(_metadata, p);
}

TEST_HARNESS_MAIN
