// SPDX-License-Identifier: GPL-2.0
/*
 * ordma - RDMA from memory that was never registered.
 *
 * Module entry: the class, the ib_client that builds one context per RDMA
 * device, the character device and the generic netlink family. Init and
 * exit mirror each other.
 */
#include <linux/module.h>

#include "entry.h"
#include "fault.h"
#include "nl.h"

static struct ib_client ordma_client;

/* .add: the device's context, then lookups find it. */
static int ordma_ib_add(struct ib_device *ibdev)
{
	struct ordma_dev *odev;

	ordma_fault_add_mark(false);
	odev = ordma_dev_create(ibdev);
	if (!IS_ERR(odev)) {
		ib_set_client_data(ibdev, &ordma_client, odev);
		ordma_dev_list(odev);
		ordma_nl_dev_event(odev, true);
	}
	ordma_fault_add_mark(true);
	return PTR_ERR_OR_ZERO(odev);
}

/* .remove: no new user, every channel and listener closed, then the rest. */
static void ordma_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct ordma_dev *odev = client_data;

	ordma_nl_dev_event(odev, false);
	ordma_dev_unlist(odev);
	ordma_cm_remove_dev(odev);
	ordma_dev_destroy(odev);
}

static struct ib_client ordma_client = {
	.name = "ordma",
	.add = ordma_ib_add,
	.remove = ordma_ib_remove,
};

static int __init ordma_init(void)
{
	int ret;

	ret = ordma_chan_init();
	if (ret)
		return ret;

	ret = ordma_pin_module_init();
	if (ret)
		goto err_chan;

	ret = ordma_sysfs_init();
	if (ret)
		goto err_pin;

	ret = ib_register_client(&ordma_client);
	if (ret)
		goto err_sysfs;

	ret = ordma_cdev_init();
	if (ret)
		goto err_client;

	ret = ordma_nl_init();
	if (ret)
		goto err_cdev;

	ordma_fault_init();
	return 0;

err_cdev:
	ordma_cdev_exit();
err_client:
	ib_unregister_client(&ordma_client);
err_sysfs:
	ordma_sysfs_exit();
err_pin:
	ordma_pin_module_exit();
err_chan:
	ordma_chan_exit();
	return ret;
}

static void __exit ordma_exit(void)
{
	ordma_fault_exit();
	ordma_nl_exit();
	ordma_cdev_exit();
	ib_unregister_client(&ordma_client);
	ordma_sysfs_exit();
	ordma_pin_module_exit();
	ordma_chan_exit();
}

module_init(ordma_init);
module_exit(ordma_exit);

MODULE_DESCRIPTION("RDMA from unregistered memory: overlap registration with copies");
MODULE_LICENSE("GPL");
