// SPDX-License-Identifier: GPL-2.0
/*
 * The one submission path: ORDMA_IOC_SUBMIT and the entries of the SQ ring
 * both come through ordma_file_submit(), which checks an operation against
 * the file (its own channels, its own memory) and hands it to its channel.
 * ORDMA_IOC_RING_ENTER takes SQ entries (ring.c) and then waits for
 * completions, running the data path meanwhile (sched.c).
 */
#include <linux/slab.h>

#include "entry.h"

/**
 * ordma_file_submit() - check and start one operation
 * @ofile: the file
 * @cmd: the operation, as ORDMA_IOC_SUBMIT takes it (size ignored)
 *
 * The one path every submission takes, the ioctl's and the SQ ring's.
 *
 * Return: 0 (the operation is the channel's now), or a negative errno.
 */
int ordma_file_submit(struct ordma_file *ofile, const struct ordma_submit *cmd)
{
	struct ordma_req *op;
	struct ordma_chan *chan;
	struct ordma_obj *obj;
	bool to_user;
	int ret;

	if (cmd->flags & ~(ORDMA_F_NONBLOCK | ORDMA_F_NOTIFY))
		return -EINVAL;
	if ((cmd->flags & ORDMA_F_NOTIFY) && cmd->op != ORDMA_OP_WRITE)
		return -EINVAL;
	switch (cmd->op) {
	case ORDMA_OP_SEND:
	case ORDMA_OP_RECV:
		if (cmd->token || cmd->offset)
			return -EINVAL;
		break;
	case ORDMA_OP_WRITE:
	case ORDMA_OP_READ:
		/* The window's side checks offset and length. */
		break;
	default:
		return -EINVAL;
	}
	ret = ordma_file_check_buf(ofile, cmd->addr, cmd->len);
	if (ret)
		return ret;

	obj = ordma_obj_get(ofile, cmd->chan_id, ORDMA_KIND_CHAN);
	if (!obj)
		return -ENOENT;
	chan = (struct ordma_chan *)obj;

	to_user = cmd->op == ORDMA_OP_RECV || cmd->op == ORDMA_OP_READ;
	ret = ordma_check_user_range(ofile->mm, cmd->addr, cmd->len, to_user);
	if (ret)
		goto out;

	op = ordma_req_alloc(ofile);
	if (IS_ERR(op)) {
		ret = PTR_ERR(op);
		goto out;
	}
	op->op = cmd->op;
	op->chan_id = cmd->chan_id;
	op->addr = cmd->addr;
	op->len = cmd->len;
	op->cookie = cmd->cookie;
	op->token = cmd->token;
	op->offset = cmd->offset;
	op->notify = cmd->flags & ORDMA_F_NOTIFY;
	ret = ordma_chan_submit(chan, op, cmd->flags & ORDMA_F_NONBLOCK);
	if (ret)
		ordma_req_free(ofile, op);
out:
	ordma_obj_put(obj);
	return ret;
}

/* Start one entry, copied out of the ring; errors are the entry's. */
static int ordma_submit_sqe(struct ordma_file *ofile,
			    const struct ordma_ring_sqe *sqe)
{
	struct ordma_submit cmd = {
		.op = sqe->op,
		.chan_id = sqe->chan_id,
		.addr = sqe->addr,
		.len = sqe->len,
		.cookie = sqe->cookie,
		.token = sqe->token,
		.offset = sqe->offset,
	};

	if (sqe->flags & ~(ORDMA_SQE_F_NONBLOCK | ORDMA_SQE_F_NOTIFY) ||
	    sqe->__reserved)
		return -EINVAL;
	if (sqe->flags & ORDMA_SQE_F_NONBLOCK)
		cmd.flags |= ORDMA_F_NONBLOCK;
	if (sqe->flags & ORDMA_SQE_F_NOTIFY)
		cmd.flags |= ORDMA_F_NOTIFY;
	return ordma_file_submit(ofile, &cmd);
}

static bool ordma_ring_has(struct ordma_file *ofile, void *want)
{
	return ordma_ring_ready(ofile, ordma_file_ring(ofile)) >= *(u32 *)want;
}

/**
 * ordma_submit_ring_enter() - ORDMA_IOC_RING_ENTER
 * @ofile: the file
 * @cmd: the caller's struct, copied in
 *
 * Return: 0 or a negative errno (see the uapi header).
 */
int ordma_submit_ring_enter(struct ordma_file *ofile,
			    struct ordma_ring_enter *cmd)
{
	struct ordma_ring *ring = ordma_file_ring(ofile);
	u32 want = cmd->min_complete;
	long timeout, left;
	int n = 0;

	if (cmd->flags & ~ORDMA_ENTER_F_SUBMIT_ALL)
		return -EINVAL;
	if (!ring)
		return -ENXIO;
	if (current->mm != ofile->mm)
		return -EPERM;
	if (want > ordma_ring_cq_entries(ring))
		return -EINVAL;

	if (cmd->to_submit) {
		n = ordma_ring_submit(ofile, ring, cmd->to_submit,
				      cmd->flags & ORDMA_ENTER_F_SUBMIT_ALL,
				      ordma_submit_sqe);
		if (n < 0)
			return n;
	} else {
		ordma_ring_flush(ofile, ring);
	}
	cmd->out_submitted = n;
	if (!want)
		return 0;

	timeout = ordma_wait_jiffies(cmd->timeout_ms);
	left = ordma_file_wait(ofile, ordma_ring_has, &want, timeout);
	/* Whatever ended the wait, move what waits to the ring. */
	ordma_ring_flush(ofile, ring);
	if (n)
		return 0;
	if (left < 0)
		return -EINTR;
	if (!left && !ordma_ring_ready(ofile, ring))
		return -ETIMEDOUT;
	return 0;
}
