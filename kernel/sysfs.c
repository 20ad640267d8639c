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

static struct ordma_pool *ordma_dev_pool(struct device *dev)
{
	struct ordma_dev *odev = dev_get_drvdata(dev);

	return &odev->pool;
}

/* One value of the pool, read under its lock. */
#define ORDMA_POOL_SHOW(_name, _expr)					\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	struct ordma_pool *pool = ordma_dev_pool(dev);			\
	unsigned long flags;						\
	u64 val;							\
									\
	spin_lock_irqsave(&pool->lock, flags);				\
	val = (_expr);							\
	spin_unlock_irqrestore(&pool->lock, flags);			\
	return sysfs_emit(buf, "%llu\n", val);				\
}

ORDMA_POOL_SHOW(pool_bytes, (u64)pool->target_chunks * pool->chunk_bytes)
ORDMA_POOL_SHOW(chunk_bytes, pool->chunk_bytes)
ORDMA_POOL_SHOW(chan_quota_chunks, pool->quota)
ORDMA_POOL_SHOW(user_quota_chunks, pool->user_quota)
ORDMA_POOL_SHOW(chunks_total, pool->chunks_total)
ORDMA_POOL_SHOW(chunks_free, pool->chunks_free)
ORDMA_POOL_SHOW(high_water, pool->high_water)
ORDMA_POOL_SHOW(alloc_waits, pool->alloc_waits)

/* A pool setting: a decimal number, checked again by the setter. */
#define ORDMA_POOL_STORE(_name, _set, _max)				\
static ssize_t _name##_store(struct device *dev,			\
			     struct device_attribute *attr,		\
			     const char *buf, size_t count)		\
{									\
	u64 val;							\
	int ret;							\
									\
	if (kstrtou64(buf, 10, &val) || val > (_max))			\
		return -EINVAL;						\
	ret = _set(ordma_dev_pool(dev), val);				\
	return ret ? ret : count;					\
}

ORDMA_POOL_STORE(pool_bytes, ordma_pool_set_bytes, U64_MAX)
ORDMA_POOL_STORE(chunk_bytes, ordma_pool_set_chunk_bytes, U32_MAX)
ORDMA_POOL_STORE(chan_quota_chunks, ordma_pool_set_quota, U32_MAX)
ORDMA_POOL_STORE(user_quota_chunks, ordma_pool_set_user_quota, U32_MAX)

static struct ordma_dev *to_ordma_dev(struct device *dev)
{
	return dev_get_drvdata(dev);
}

/* Counters of the device: totals over its channels. */
#define ORDMA_DEV_SHOW(_name, _expr)					\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	struct ordma_dev *odev = to_ordma_dev(dev);			\
									\
	return sysfs_emit(buf, "%llu\n", (u64)(_expr));		\
}									\
static DEVICE_ATTR_RO(_name)

ORDMA_DEV_SHOW(bytes_tx, atomic64_read(&odev->bytes_tx));
ORDMA_DEV_SHOW(bytes_rx, atomic64_read(&odev->bytes_rx));
ORDMA_DEV_SHOW(ops, atomic64_read(&odev->ops));
ORDMA_DEV_SHOW(errors, atomic64_read(&odev->errors));
ORDMA_DEV_SHOW(channels, atomic_read(&odev->nchans));
ORDMA_DEV_SHOW(pages_pinned, atomic64_read(&odev->pages_pinned));
ORDMA_DEV_SHOW(mrs_live, atomic_read(&odev->mrs_live));
ORDMA_DEV_SHOW(bytes_copied, atomic64_read(&odev->bytes_copied));
ORDMA_DEV_SHOW(bytes_zerocopy, atomic64_read(&odev->bytes_zerocopy));
ORDMA_DEV_SHOW(registrations, atomic64_read(&odev->registrations));
ORDMA_DEV_SHOW(reg_ns, atomic64_read(&odev->reg_ns));
ORDMA_DEV_SHOW(hidden_ns, atomic64_read(&odev->hidden_ns));
ORDMA_DEV_SHOW(fallbacks, atomic64_read(&odev->fallbacks));
ORDMA_DEV_SHOW(bytes_placed, atomic64_read(&odev->bytes_placed));
ORDMA_DEV_SHOW(peer_faults, atomic64_read(&odev->peer_faults));
ORDMA_DEV_SHOW(token_guesses, atomic64_read(&odev->token_guesses));

/* One value of the cost model, read under its lock. */
#define ORDMA_MODEL_SHOW(_name)						\
static ssize_t model_##_name##_show(struct device *dev,		\
				    struct device_attribute *attr,	\
				    char *buf)				\
{									\
	struct ordma_dev *odev = to_ordma_dev(dev);			\
	u64 val;							\
									\
	spin_lock(&odev->model_lock);					\
	val = odev->model._name;					\
	spin_unlock(&odev->model_lock);					\
	return sysfs_emit(buf, "%llu\n", val);				\
}									\
static DEVICE_ATTR_RO(model_##_name)

ORDMA_MODEL_SHOW(pin_ns_page);
ORDMA_MODEL_SHOW(reg_ns);
ORDMA_MODEL_SHOW(copy_ps_byte);
ORDMA_MODEL_SHOW(wire_ps_byte);
ORDMA_MODEL_SHOW(wr_ns);
ORDMA_MODEL_SHOW(dereg_ns);
ORDMA_MODEL_SHOW(cpu_wire);

static ssize_t mode_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  ordma_mode_names[READ_ONCE(to_ordma_dev(dev)->mode)]);
}

static ssize_t mode_store(struct device *dev, struct device_attribute *attr,
			  const char *buf, size_t count)
{
	int mode = sysfs_match_string(ordma_mode_names, buf);

	if (mode < 0)
		return mode;
	WRITE_ONCE(to_ordma_dev(dev)->mode, mode);
	return count;
}
static DEVICE_ATTR_RW(mode);

static ssize_t progress_timeout_ms_show(struct device *dev,
					struct device_attribute *attr,
					char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  READ_ONCE(to_ordma_dev(dev)->progress_ms));
}

static ssize_t progress_timeout_ms_store(struct device *dev,
					 struct device_attribute *attr,
					 const char *buf, size_t count)
{
	u32 ms;

	if (kstrtou32(buf, 10, &ms) || ms < ORDMA_PROGRESS_MS_MIN ||
	    ms > ORDMA_PROGRESS_MS_MAX)
		return -EINVAL;
	WRITE_ONCE(to_ordma_dev(dev)->progress_ms, ms);
	return count;
}
static DEVICE_ATTR_RW(progress_timeout_ms);

ORDMA_POOL_SHOW(chunks_held, pool->chunks_total - pool->chunks_free)
static DEVICE_ATTR_RO(chunks_held);

/* Writable settings are 0644: only root changes them. */
static DEVICE_ATTR_RW(pool_bytes);
static DEVICE_ATTR_RW(chunk_bytes);
static DEVICE_ATTR_RW(chan_quota_chunks);
static DEVICE_ATTR_RW(user_quota_chunks);
static DEVICE_ATTR_RO(chunks_total);
static DEVICE_ATTR_RO(chunks_free);
static DEVICE_ATTR_RO(high_water);
static DEVICE_ATTR_RO(alloc_waits);

static struct attribute *ordma_dev_attrs[] = {
	&dev_attr_ibdev.attr,
	&dev_attr_pool_bytes.attr,
	&dev_attr_chunk_bytes.attr,
	&dev_attr_chan_quota_chunks.attr,
	&dev_attr_user_quota_chunks.attr,
	&dev_attr_chunks_total.attr,
	&dev_attr_chunks_free.attr,
	&dev_attr_high_water.attr,
	&dev_attr_alloc_waits.attr,
	&dev_attr_chunks_held.attr,
	&dev_attr_bytes_tx.attr,
	&dev_attr_bytes_rx.attr,
	&dev_attr_ops.attr,
	&dev_attr_errors.attr,
	&dev_attr_channels.attr,
	&dev_attr_pages_pinned.attr,
	&dev_attr_mrs_live.attr,
	&dev_attr_bytes_copied.attr,
	&dev_attr_bytes_zerocopy.attr,
	&dev_attr_registrations.attr,
	&dev_attr_reg_ns.attr,
	&dev_attr_hidden_ns.attr,
	&dev_attr_fallbacks.attr,
	&dev_attr_bytes_placed.attr,
	&dev_attr_mode.attr,
	&dev_attr_progress_timeout_ms.attr,
	&dev_attr_peer_faults.attr,
	&dev_attr_token_guesses.attr,
	&dev_attr_model_pin_ns_page.attr,
	&dev_attr_model_reg_ns.attr,
	&dev_attr_model_copy_ps_byte.attr,
	&dev_attr_model_wire_ps_byte.attr,
	&dev_attr_model_wr_ns.attr,
	&dev_attr_model_dereg_ns.attr,
	&dev_attr_model_cpu_wire.attr,
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
