/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordma - RDMA from memory that was never registered.
 *
 * Core structures shared by the files of the module.
 */
#ifndef _ORDMA_H
#define _ORDMA_H

#include <linux/device.h>
#include <linux/kref.h>
#include <linux/completion.h>
#include <rdma/ib_verbs.h>

#include "compat.h"

/**
 * struct ordma_dev - per-ib_device context, built by the ib_client .add
 * @ibdev: the RDMA device this context serves
 * @pd: protection domain for everything ordma allocates on @ibdev
 * @cdev: class device, /sys/class/ordma/<ibdev>/
 * @kref: users of the context; the ib_client owns the first reference
 * @released: completed when the last reference is dropped, so .remove can
 *	wait for every user before tearing down
 * @node: entry in ordma_devs, protected by ordma_devs_lock
 */
struct ordma_dev {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct device *cdev;
	struct kref kref;
	struct completion released;
	struct list_head node;		/* ordma_devs_lock */
};

extern struct ib_client ordma_client;

/* dev.c */
int ordma_dev_add(struct ib_device *ibdev);
void ordma_dev_remove(struct ib_device *ibdev, void *client_data);
struct ordma_dev *ordma_dev_get_by_name(const char *name);
void ordma_dev_put(struct ordma_dev *odev);

/* sysfs.c */
int ordma_sysfs_init(void);
void ordma_sysfs_exit(void);
struct device *ordma_sysfs_add_dev(struct ordma_dev *odev);
void ordma_sysfs_remove_dev(struct ordma_dev *odev);

/* uapi.c */
int ordma_cdev_init(void);
void ordma_cdev_exit(void);

#endif /* _ORDMA_H */
