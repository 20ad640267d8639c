// SPDX-License-Identifier: GPL-2.0
/*
 * The ordma class: /sys/class/ordma/<ibdev>/, one directory per context.
 * Every attribute is documented in Documentation/ABI/testing/sysfs-class-ordma.
 */
#include <linux/device.h>
#include <linux/kdev_t.h>

#include "ordma.h"

static ssize_t ibdev_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct ordma_dev *odev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%s\n", dev_name(&odev->ibdev->dev));
}
static DEVICE_ATTR_RO(ibdev);

static struct attribute *ordma_dev_attrs[] = {
	&dev_attr_ibdev.attr,
	NULL,
};
ATTRIBUTE_GROUPS(ordma_dev);

static struct class ordma_class = {
	.name = "ordma",
};

int ordma_sysfs_init(void)
{
	return class_register(&ordma_class);
}

void ordma_sysfs_exit(void)
{
	class_unregister(&ordma_class);
}

/**
 * ordma_sysfs_add_dev() - create /sys/class/ordma/<ibdev>/
 * @odev: the context the directory describes
 *
 * Return: the class device or an ERR_PTR.
 */
struct device *ordma_sysfs_add_dev(struct ordma_dev *odev)
{
	return device_create_with_groups(&ordma_class, NULL, MKDEV(0, 0), odev,
					 ordma_dev_groups, "%s",
					 dev_name(&odev->ibdev->dev));
}

void ordma_sysfs_remove_dev(struct ordma_dev *odev)
{
	device_unregister(odev->cdev);
}
