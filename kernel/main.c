// SPDX-License-Identifier: GPL-2.0
/*
 * ordma - RDMA from memory that was never registered.
 *
 * Module entry: the class, the character device and the ib_client that
 * builds one context per RDMA device. Init and exit mirror each other.
 */
#include <linux/module.h>

#include "ordma.h"
#include "chan.h"

struct ib_client ordma_client = {
	.name = "ordma",
	.add = ordma_dev_add,
	.remove = ordma_dev_remove,
};

static int __init ordma_init(void)
{
	int ret;

	ret = ordma_chan_init();
	if (ret)
		return ret;

	ret = ordma_sysfs_init();
	if (ret)
		goto err_chan;

	ret = ib_register_client(&ordma_client);
	if (ret)
		goto err_sysfs;

	ret = ordma_cdev_init();
	if (ret)
		goto err_client;

	return 0;

err_client:
	ib_unregister_client(&ordma_client);
err_sysfs:
	ordma_sysfs_exit();
err_chan:
	ordma_chan_exit();
	return ret;
}

static void __exit ordma_exit(void)
{
	ordma_cdev_exit();
	ib_unregister_client(&ordma_client);
	ordma_sysfs_exit();
	ordma_chan_exit();
}

module_init(ordma_init);
module_exit(ordma_exit);

MODULE_DESCRIPTION("RDMA from unregistered memory: overlap registration with copies");
MODULE_LICENSE("GPL");
