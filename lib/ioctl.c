// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The ioctl backend: one ORDMA_IOC_SUBMIT per entry, ORDMA_IOC_WAIT for
 * completions. Everything it knows about the data path's ABI is here.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "private.h"

static int ioctl_submit_one(struct ordma *o, const struct ordma_sqe *sqe,
			    __u64 cookie)
{
	struct ordma_submit s;

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.flags = (sqe->flags & ORDMA_SQE_NONBLOCK ? ORDMA_F_NONBLOCK : 0) |
		  (sqe->flags & ORDMA_SQE_NOTIFY ? ORDMA_F_NOTIFY : 0);
	s.op = sqe->op;
	s.chan_id = sqe->chan_id;
	s.addr = sqe->addr;
	s.len = sqe->len;
	s.cookie = cookie;
	s.token = sqe->token;
	s.offset = sqe->offset;
	return ioctl(o->fd, ORDMA_IOC_SUBMIT, &s) < 0 ? -errno : 0;
}

/* Errors that leave the entry unconsumed. */
static int ioctl_transient(int err)
{
	return err == -EAGAIN || err == -ENOMEM || err == -EINTR;
}

static int ioctl_submit(struct ordma *o, const struct ordma_sqe *const *sqes,
			const __u64 *cookies, unsigned int n, int wait,
			int *err)
{
	unsigned int i;
	int ret;

	*err = 0;
	for (i = 0; i < n; i++) {
		ret = ioctl_submit_one(o, sqes[i], cookies[i]);
		if (!ret)
			continue;
		if (ioctl_transient(ret))
			return i ? (int)i : ret;
		*err = ret;
		return i + 1;
	}
	return n;
}

static int ioctl_reap(struct ordma *o, struct ordma_cqe *cqes,
		      unsigned int max, int timeout_ms)
{
	struct ordma_wait w;

	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	w.flags = timeout_ms ? 0 : ORDMA_F_NONBLOCK;
	w.cqes = (uintptr_t)cqes;
	w.max = max;
	w.min = 1;
	w.timeout_ms = timeout_ms < 0 ? -1 : timeout_ms;
	if (ioctl(o->fd, ORDMA_IOC_WAIT, &w) < 0)
		return -errno;
	return w.out_count;
}

static int ioctl_init(struct ordma *o)
{
	return 0;
}

static void ioctl_release(struct ordma *o)
{
}

const struct ordma_backend __ordma_backend_ioctl = {
	.name = "ioctl",
	.init = ioctl_init,
	.submit = ioctl_submit,
	.reap = ioctl_reap,
	.release = ioctl_release,
};
