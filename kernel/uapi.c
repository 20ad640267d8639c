// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/ordma: the character device, its ioctl dispatch, poll and mmap (the
 * rings of ring.c).
 *
 * Every ioctl struct starts with size and flags; ordma_fops_ioctl() reads
 * the size, copies the struct with copy_struct_from_user() (zero-filling a
 * shorter caller's missing fields, refusing a longer caller's non-zero tail
 * with E2BIG), runs the handler and copies the struct back (as many bytes as
 * the caller has) only on success. The errno contract is the DOC block of
 * include/uapi/linux/ordma.h.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <uapi/linux/ordma.h>

#include "entry.h"

/* Most completions one ORDMA_IOC_WAIT returns. */
#define ORDMA_WAIT_MAX	1024

static int ordma_fops_open(struct inode *inode, struct file *filp)
{
	struct ordma_file *ofile;

	if (!current->mm)
		return -EINVAL;
	ofile = ordma_file_alloc();
	if (!ofile)
		return -ENOMEM;
	filp->private_data = ofile;
	return 0;
}

static void ordma_obj_close(struct ordma_obj *obj)
{
	if (obj->kind == ORDMA_KIND_CHAN) {
		struct ordma_chan *chan = (struct ordma_chan *)obj;

		ordma_chan_close(chan, -ECANCELED);
		ordma_chan_put(chan);
	} else {
		struct ordma_listener *lis = (struct ordma_listener *)obj;

		ordma_listener_close(lis);
		ordma_listener_put(lis);
	}
}

static int ordma_fops_release(struct inode *inode, struct file *filp)
{
	struct ordma_file *ofile = filp->private_data;
	struct ordma_obj *obj;
	unsigned long id;

	xa_for_each(&ofile->objs, id, obj) {
		xa_erase(&ofile->objs, id);
		ordma_obj_close(obj);
	}
	ordma_file_put(ofile);
	return 0;
}

static __poll_t ordma_fops_poll(struct file *filp, poll_table *wait)
{
	struct ordma_file *ofile = filp->private_data;
	struct ordma_ring *ring;

	poll_wait(filp, &ofile->cq_wait, wait);
	ring = ordma_file_ring(ofile);
	if (ring)
		return ordma_ring_pending(ofile, ring) ? EPOLLIN | EPOLLRDNORM : 0;
	return READ_ONCE(ofile->cq_len) ? EPOLLIN | EPOLLRDNORM : 0;
}

static int ordma_fops_mmap(struct file *filp, struct vm_area_struct *vma)
{
	return ordma_ring_mmap(filp->private_data, vma);
}

/* ---- helpers ------------------------------------------------------------ */

static int ordma_addr_to_sockaddr(const struct ordma_addr *a,
				  struct sockaddr_storage *ss)
{
	static const u8 zero[16];

	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (a->scope_id || memcmp(a->addr + 4, zero, 12))
			return -EINVAL;
		sin->sin_family = AF_INET;
		sin->sin_port = a->port;
		memcpy(&sin->sin_addr, a->addr, 4);
		return 0;
	}
	if (a->family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = a->port;
		sin6->sin6_scope_id = a->scope_id;
		memcpy(&sin6->sin6_addr, a->addr, 16);
		return 0;
	}
	return -EINVAL;
}

static void ordma_sockaddr_to_addr(const struct sockaddr *sa,
				   struct ordma_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

		a->family = AF_INET;
		a->port = sin->sin_port;
		memcpy(a->addr, &sin->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 =
			(const struct sockaddr_in6 *)sa;

		a->family = AF_INET6;
		a->port = sin6->sin6_port;
		a->scope_id = sin6->sin6_scope_id;
		memcpy(a->addr, &sin6->sin6_addr, 16);
	}
}

/* Give a new object an id in the file; the file keeps our reference. */
static int ordma_obj_install(struct ordma_file *ofile, struct ordma_obj *obj,
			     u32 *id)
{
	int ret;

	/*
	 * Once published, another thread of the owner may close the object:
	 * nothing of it is touched after this.
	 */
	ret = xa_alloc(&ofile->objs, id, obj, xa_limit_31b, GFP_KERNEL);
	if (ret)
		ordma_obj_close(obj);
	return ret;
}

/* ---- ioctls --------------------------------------------------------------- */

/* The address of a LISTEN or a CONNECT, which take no flags. */
static int ordma_ioc_addr(u32 flags, const struct ordma_addr *a,
			  struct sockaddr_storage *ss)
{
	if (flags)
		return -EINVAL;
	return ordma_addr_to_sockaddr(a, ss);
}

static int ordma_ioc_listen(struct ordma_file *ofile, void *arg)
{
	struct ordma_listen *cmd = arg;
	struct ordma_listener *lis;
	struct sockaddr_storage ss;
	int ret;

	ret = ordma_ioc_addr(cmd->flags, &cmd->addr, &ss);
	if (ret)
		return ret;
	ret = ordma_listener_create(ofile, (struct sockaddr *)&ss,
				    cmd->backlog, &lis);
	if (ret)
		return ret;
	return ordma_obj_install(ofile, &lis->obj, &cmd->out_id);
}

static int ordma_ioc_accept(struct ordma_file *ofile, void *arg)
{
	struct ordma_accept *cmd = arg;
	struct ordma_listener *lis;
	struct ordma_chan *chan;
	struct ordma_obj *obj;
	int ret;

	if (cmd->flags & ~ORDMA_F_NONBLOCK)
		return -EINVAL;
	obj = ordma_obj_get(ofile, cmd->listener_id, ORDMA_KIND_LISTENER);
	if (!obj)
		return -ENOENT;
	lis = (struct ordma_listener *)obj;
	ret = ordma_listener_accept(lis, cmd->flags & ORDMA_F_NONBLOCK, &chan);
	ordma_obj_put(obj);
	if (ret)
		return ret;
	ordma_sockaddr_to_addr(ordma_chan_peer(chan), &cmd->out_peer);
	return ordma_obj_install(ofile, &chan->obj, &cmd->out_chan_id);
}

static int ordma_ioc_connect(struct ordma_file *ofile, void *arg)
{
	struct ordma_connect *cmd = arg;
	struct sockaddr_storage ss;
	struct ordma_chan *chan;
	int ret;

	ret = ordma_ioc_addr(cmd->flags, &cmd->addr, &ss);
	if (ret)
		return ret;
	ret = ordma_chan_connect(ofile, (struct sockaddr *)&ss,
				 cmd->timeout_ms, &chan);
	if (ret)
		return ret;
	return ordma_obj_install(ofile, &chan->obj, &cmd->out_chan_id);
}

static int ordma_ioc_close(struct ordma_file *ofile, void *arg)
{
	struct ordma_close *cmd = arg;
	struct ordma_obj *obj;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	obj = xa_erase(&ofile->objs, cmd->id);
	if (!obj)
		return -ENOENT;
	ordma_obj_close(obj);
	return 0;
}

static int ordma_ioc_submit(struct ordma_file *ofile, void *arg)
{
	return ordma_file_submit(ofile, arg);
}

static int ordma_ioc_expose(struct ordma_file *ofile, void *arg)
{
	struct ordma_expose *cmd = arg;
	struct ordma_winmem mem = {};
	int ret;

	if (cmd->flags || cmd->__reserved || !cmd->access ||
	    cmd->access & ~(ORDMA_ACCESS_REMOTE_READ |
			    ORDMA_ACCESS_REMOTE_WRITE))
		return -EINVAL;
	ret = ordma_file_check_buf(ofile, cmd->addr, cmd->len);
	if (ret)
		return ret;
	ret = ordma_check_user_range(ofile->mm, cmd->addr, cmd->len,
				     cmd->access & ORDMA_ACCESS_REMOTE_WRITE);
	if (ret)
		return ret;
	mem.addr = cmd->addr;
	return ordma_file_expose(ofile, &mem, cmd->len, cmd->access,
				 &cmd->out_token);
}

static int ordma_ioc_unexpose(struct ordma_file *ofile, void *arg)
{
	struct ordma_unexpose *cmd = arg;

	if (cmd->flags)
		return -EINVAL;
	return ordma_window_unexpose(ofile, cmd->token);
}

/*
 * Move up to @max completions to user space. If the array faults, every
 * completion taken goes back to the head of the queue: none is lost.
 */
static int ordma_reap(struct ordma_file *ofile, u64 ucqes, u32 max, u32 *count)
{
	struct ordma_cqe *cqes;
	struct ordma_req *op;
	LIST_HEAD(list);
	u32 n = 0;

	cqes = kvcalloc(max, sizeof(*cqes), GFP_KERNEL);
	if (!cqes)
		return -ENOMEM;

	spin_lock_irq(&ofile->cq_lock);
	/* Rings set up since the caller looked: the CQ ring owns these. */
	if (ofile->ring) {
		spin_unlock_irq(&ofile->cq_lock);
		kvfree(cqes);
		return -EBUSY;
	}
	while (n < max && !list_empty(&ofile->cq)) {
		list_move_tail(ofile->cq.next, &list);
		n++;
	}
	ofile->cq_len -= n;
	spin_unlock_irq(&ofile->cq_lock);

	n = 0;
	list_for_each_entry(op, &list, node) {
		cqes[n].cookie = op->cookie;
		cqes[n].res = op->res;
		cqes[n].op = op->op;
		cqes[n].chan_id = op->chan_id;
		n++;
	}
	if (n && copy_to_user(u64_to_user_ptr(ucqes), cqes,
			      n * sizeof(*cqes))) {
		spin_lock_irq(&ofile->cq_lock);
		list_splice(&list, &ofile->cq);
		ofile->cq_len += n;
		spin_unlock_irq(&ofile->cq_lock);
		kvfree(cqes);
		return -EFAULT;
	}
	kvfree(cqes);
	ordma_reqs_free(ofile, &list);
	*count = n;
	return 0;
}

static bool ordma_cq_has(struct ordma_file *ofile, void *want)
{
	return READ_ONCE(ofile->cq_len) >= *(u32 *)want;
}

static int ordma_ioc_wait(struct ordma_file *ofile, void *arg)
{
	struct ordma_wait *cmd = arg;
	u32 want = max(cmd->min, 1U);
	long timeout, left;
	int ret;

	if (cmd->flags & ~ORDMA_F_NONBLOCK || !cmd->max || cmd->min > cmd->max)
		return -EINVAL;
	/* With rings, completions go to the CQ ring. */
	if (ordma_file_ring(ofile))
		return -EBUSY;
	cmd->max = min_t(u32, cmd->max, ORDMA_WAIT_MAX);
	want = min(want, cmd->max);

	if (!(cmd->flags & ORDMA_F_NONBLOCK)) {
		timeout = ordma_wait_jiffies(cmd->timeout_ms);
		left = ordma_file_wait(ofile, ordma_cq_has, &want, timeout);
		if (left < 0)
			return -EINTR;
	}
	ret = ordma_reap(ofile, cmd->cqes, cmd->max, &cmd->out_count);
	if (ret)
		return ret;
	if (!cmd->out_count)
		return cmd->flags & ORDMA_F_NONBLOCK ? -EAGAIN : -ETIMEDOUT;
	return 0;
}

static int ordma_ioc_chan_info(struct ordma_file *ofile, void *arg)
{
	struct ordma_chan_info *cmd = arg;
	struct ordma_obj *obj;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	obj = ordma_obj_get(ofile, cmd->chan_id, ORDMA_KIND_CHAN);
	if (!obj)
		return -ENOENT;
	ordma_chan_info((struct ordma_chan *)obj, cmd);
	ordma_obj_put(obj);
	return 0;
}

static int ordma_ioc_ring_setup(struct ordma_file *ofile, void *arg)
{
	return ordma_ring_setup(ofile, arg);
}

static int ordma_ioc_ring_enter(struct ordma_file *ofile, void *arg)
{
	return ordma_submit_ring_enter(ofile, arg);
}

/* ---- dispatch --------------------------------------------------------------- */

union ordma_ioc_buf {
	struct ordma_listen listen;
	struct ordma_accept accept;
	struct ordma_connect connect;
	struct ordma_close close;
	struct ordma_submit submit;
	struct ordma_expose expose;
	struct ordma_unexpose unexpose;
	struct ordma_wait wait;
	struct ordma_chan_info chan_info;
	struct ordma_ring_setup ring_setup;
	struct ordma_ring_enter ring_enter;
};

struct ordma_ioc_op {
	unsigned int size;	/* the kernel's struct size */
	unsigned int min_size;	/* first version of the struct */
	int (*execute)(struct ordma_file *ofile, void *arg);
};

#define ORDMA_IOC(_cmd, _fn, _size, _min_size)				\
	[_IOC_NR(ORDMA_IOC_##_cmd) - ORDMA_CMD_BASE] = {		\
		.size = _size,						\
		.min_size = _min_size,					\
		.execute = _fn,						\
	}

/* Each entry: the struct's size and the end of its first version. */
static const struct ordma_ioc_op ordma_ioc_ops[] = {
	ORDMA_IOC(LISTEN, ordma_ioc_listen, sizeof(struct ordma_listen),
		  offsetofend(struct ordma_listen, out_id)),
	ORDMA_IOC(ACCEPT, ordma_ioc_accept, sizeof(struct ordma_accept),
		  offsetofend(struct ordma_accept, out_peer)),
	ORDMA_IOC(CONNECT, ordma_ioc_connect, sizeof(struct ordma_connect),
		  offsetofend(struct ordma_connect, out_chan_id)),
	ORDMA_IOC(CLOSE, ordma_ioc_close, sizeof(struct ordma_close),
		  offsetofend(struct ordma_close, __reserved)),
	ORDMA_IOC(SUBMIT, ordma_ioc_submit, sizeof(struct ordma_submit),
		  offsetofend(struct ordma_submit, offset)),
	ORDMA_IOC(EXPOSE, ordma_ioc_expose, sizeof(struct ordma_expose),
		  offsetofend(struct ordma_expose, out_token)),
	ORDMA_IOC(UNEXPOSE, ordma_ioc_unexpose, sizeof(struct ordma_unexpose),
		  offsetofend(struct ordma_unexpose, token)),
	ORDMA_IOC(WAIT, ordma_ioc_wait, sizeof(struct ordma_wait),
		  offsetofend(struct ordma_wait, out_count)),
	ORDMA_IOC(CHAN_INFO, ordma_ioc_chan_info,
		  sizeof(struct ordma_chan_info),
		  offsetofend(struct ordma_chan_info, __reserved)),
	ORDMA_IOC(RING_SETUP, ordma_ioc_ring_setup,
		  sizeof(struct ordma_ring_setup),
		  offsetofend(struct ordma_ring_setup, out_cq_off)),
	ORDMA_IOC(RING_ENTER, ordma_ioc_ring_enter,
		  sizeof(struct ordma_ring_enter),
		  offsetofend(struct ordma_ring_enter, out_submitted)),
};

static long ordma_fops_ioctl(struct file *filp, unsigned int cmd,
			     unsigned long arg)
{
	struct ordma_file *ofile = filp->private_data;
	const struct ordma_ioc_op *op;
	void __user *uarg = (void __user *)arg;
	union ordma_ioc_buf buf;
	unsigned int nr;
	u32 usize;
	int ret;

	nr = _IOC_NR(cmd);
	if (_IOC_TYPE(cmd) != ORDMA_TYPE || nr < ORDMA_CMD_BASE ||
	    nr - ORDMA_CMD_BASE >= ARRAY_SIZE(ordma_ioc_ops) ||
	    cmd != _IO(ORDMA_TYPE, nr))
		return -ENOTTY;
	op = &ordma_ioc_ops[nr - ORDMA_CMD_BASE];

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < op->min_size)
		return -EINVAL;
	/* Larger would only make us read that much user memory for zeroes. */
	if (usize > ORDMA_IOC_SIZE_MAX)
		return -E2BIG;
	ret = copy_struct_from_user(&buf, op->size, uarg, usize);
	if (ret)
		return ret;

	ret = op->execute(ofile, &buf);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &buf, min_t(u32, usize, op->size)))
		return -EFAULT;
	return 0;
}

static const struct file_operations ordma_fops = {
	.owner = THIS_MODULE,
	.open = ordma_fops_open,
	.release = ordma_fops_release,
	.unlocked_ioctl = ordma_fops_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = ordma_fops_poll,
	.mmap = ordma_fops_mmap,
	.llseek = noop_llseek,
};

static struct miscdevice ordma_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "ordma",
	.fops = &ordma_fops,
	.mode = 0666,
};

int ordma_cdev_init(void)
{
	return misc_register(&ordma_misc);
}

void ordma_cdev_exit(void)
{
	misc_deregister(&ordma_misc);
}
