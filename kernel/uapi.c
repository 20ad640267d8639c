// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/ordma: the character device and its ioctl dispatch.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <uapi/linux/ordma.h>

#include "ordma.h"

static int ordma_fops_open(struct inode *inode, struct file *filp)
{
	return 0;
}

static int ordma_fops_release(struct inode *inode, struct file *filp)
{
	return 0;
}

static long ordma_fops_ioctl(struct file *filp, unsigned int cmd,
			     unsigned long arg)
{
	return -ENOTTY;
}

static const struct file_operations ordma_fops = {
	.owner = THIS_MODULE,
	.open = ordma_fops_open,
	.release = ordma_fops_release,
	.unlocked_ioctl = ordma_fops_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
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
