// SPDX-License-Identifier: GPL-2.0
/*
 * The ordma class: /sys/class/ordma/<ibdev>/, one directory per context.
 * Every attribute is documented in Documentation/ABI/testing/sysfs-class-ordma.
 */
#include <linux/device.h>
#include <linux/kdev_t.h>
#include <linux/notifier.h>

#include "ordma.h"

static ssize_t ibdev_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct ordma_dev *odev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%s\n", dev_name(&odev->ibdev->dev));
}
static DEVICE_ATTR_RO(ibdev);

static struct ordma_dev *to_ordma_dev(struct device *dev)
{
	return dev_get_drvdata(dev);
}

/* One value of a reading of the pool (ordma_pool_read()). */
#define ORDMA_POOL_SHOW(_name, _expr)					\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	struct ordma_pool_info pi;					\
									\
	ordma_pool_read(&to_ordma_dev(dev)->pool, &pi);			\
	return sysfs_emit(buf, "%llu\n", (u64)(_expr));		\
}

ORDMA_POOL_SHOW(pool_bytes, pi.pool_bytes)
ORDMA_POOL_SHOW(chunk_bytes, pi.chunk_bytes)
ORDMA_POOL_SHOW(chan_quota_chunks, pi.quota)
ORDMA_POOL_SHOW(user_quota_chunks, pi.user_quota)
ORDMA_POOL_SHOW(chunks_total, pi.chunks_total)
ORDMA_POOL_SHOW(chunks_free, pi.chunks_free)
ORDMA_POOL_SHOW(high_water, pi.high_water)
ORDMA_POOL_SHOW(alloc_waits, pi.alloc_waits)

/*
 * The settings of a device (enum ordma_knob) are written through their
 * sysfs files and through netlink's POOL_SET (nl.c), both by
 * ordma_knobs_set(): every value is checked against the others and the
 * device's, then applied, then, if a value changed, the chain
 * ordma_knobs_chain is told (netlink's POOL_CHANGED).
 *
 * Only the pool's size and chunk size can still fail once checked (EBUSY,
 * ENOMEM). They go first and together, through ordma_pool_resize(), which
 * changes the pool in one step or not at all; the other settings cannot
 * fail after the check. So a request either changes everything it names or
 * nothing.
 *
 * Locking: ordma_knobs_lock (a mutex) serializes writers of every device,
 * so the check holds until the values are applied; the setters take their
 * own locks inside it (pool.c's ordma_pool_cfg_lock, then pool->lock). The
 * chain is called without it.
 */
static DEFINE_MUTEX(ordma_knobs_lock);
static BLOCKING_NOTIFIER_HEAD(ordma_knobs_chain);

static bool ordma_progress_ms_valid(u64 ms)
{
	return ms >= ORDMA_PROGRESS_MS_MIN && ms <= ORDMA_PROGRESS_MS_MAX;
}

/* Every setting of @odev as it is now, indexed by enum ordma_knob. */
static void ordma_knobs_read(struct ordma_dev *odev, u64 val[ORDMA_KNOB_NR])
{
	struct ordma_pool_info pi;

	ordma_pool_read(&odev->pool, &pi);
	val[ORDMA_KNOB_POOL_BYTES] = pi.pool_bytes;
	val[ORDMA_KNOB_CHUNK_BYTES] = pi.chunk_bytes;
	val[ORDMA_KNOB_CHAN_QUOTA] = pi.quota;
	val[ORDMA_KNOB_USER_QUOTA] = pi.user_quota;
	val[ORDMA_KNOB_MODE] = READ_ONCE(odev->mode);
	val[ORDMA_KNOB_PROGRESS_MS] = READ_ONCE(odev->progress_ms);
	val[ORDMA_KNOB_CACHE_MAX] = READ_ONCE(odev->cache_max);
}

static bool ordma_knob_given(const struct ordma_knobs *k, enum ordma_knob knob)
{
	return k->set & BIT(knob);
}

static int ordma_knob_bad(enum ordma_knob *bad, enum ordma_knob knob)
{
	if (bad)
		*bad = knob;
	return -EINVAL;
}

/*
 * Would every setter take its value of @k, once the others of @k are
 * applied? @cur: the settings as they are.
 */
static int ordma_knobs_check(const struct ordma_knobs *k, const u64 *cur,
			     enum ordma_knob *bad)
{
	u64 chunk = cur[ORDMA_KNOB_CHUNK_BYTES];
	u64 bytes = cur[ORDMA_KNOB_POOL_BYTES];

	if (k->set & ~(BIT(ORDMA_KNOB_NR) - 1))
		return -EINVAL;
	if (ordma_knob_given(k, ORDMA_KNOB_CHUNK_BYTES)) {
		chunk = k->val[ORDMA_KNOB_CHUNK_BYTES];
		if (!ordma_chunk_bytes_valid(chunk))
			return ordma_knob_bad(bad, ORDMA_KNOB_CHUNK_BYTES);
	}
	if (ordma_knob_given(k, ORDMA_KNOB_POOL_BYTES)) {
		bytes = k->val[ORDMA_KNOB_POOL_BYTES];
		if (!ordma_pool_bytes_valid(bytes, chunk))
			return ordma_knob_bad(bad, ORDMA_KNOB_POOL_BYTES);
	} else if (chunk > bytes) {
		return ordma_knob_bad(bad, ORDMA_KNOB_CHUNK_BYTES);
	}
	if (ordma_knob_given(k, ORDMA_KNOB_CHAN_QUOTA) &&
	    !ordma_quota_valid(k->val[ORDMA_KNOB_CHAN_QUOTA]))
		return ordma_knob_bad(bad, ORDMA_KNOB_CHAN_QUOTA);
	if (ordma_knob_given(k, ORDMA_KNOB_USER_QUOTA) &&
	    !ordma_quota_valid(k->val[ORDMA_KNOB_USER_QUOTA]))
		return ordma_knob_bad(bad, ORDMA_KNOB_USER_QUOTA);
	if (ordma_knob_given(k, ORDMA_KNOB_MODE) &&
	    k->val[ORDMA_KNOB_MODE] >= ORDMA_MODE_NR)
		return ordma_knob_bad(bad, ORDMA_KNOB_MODE);
	if (ordma_knob_given(k, ORDMA_KNOB_PROGRESS_MS) &&
	    !ordma_progress_ms_valid(k->val[ORDMA_KNOB_PROGRESS_MS]))
		return ordma_knob_bad(bad, ORDMA_KNOB_PROGRESS_MS);
	if (ordma_knob_given(k, ORDMA_KNOB_CACHE_MAX) &&
	    k->val[ORDMA_KNOB_CACHE_MAX] > ORDMA_CACHE_MAX_MAX)
		return ordma_knob_bad(bad, ORDMA_KNOB_CACHE_MAX);
	return 0;
}

/*
 * Apply the checked values of @k; @cur: the settings as they are. The pool
 * goes first, in one ordma_pool_resize() with its final chunk size and
 * size: if that fails nothing has changed. The rest cannot fail.
 */
static int ordma_knobs_apply(struct ordma_dev *odev,
			     const struct ordma_knobs *k, const u64 *cur,
			     enum ordma_knob *bad)
{
	bool chunk = ordma_knob_given(k, ORDMA_KNOB_CHUNK_BYTES);
	bool bytes = ordma_knob_given(k, ORDMA_KNOB_POOL_BYTES);
	struct ordma_pool *pool = &odev->pool;
	u64 new_chunk, new_bytes;
	int ret;

	lockdep_assert_held(&ordma_knobs_lock);
	if (chunk || bytes) {
		new_chunk = chunk ? k->val[ORDMA_KNOB_CHUNK_BYTES] :
				    cur[ORDMA_KNOB_CHUNK_BYTES];
		new_bytes = bytes ? k->val[ORDMA_KNOB_POOL_BYTES] :
				    cur[ORDMA_KNOB_POOL_BYTES];
		ret = ordma_pool_resize(pool, new_chunk, new_bytes);
		if (ret) {
			/* Only a new chunk size is ever busy. */
			if (bad)
				*bad = chunk && (ret == -EBUSY || !bytes) ?
				       ORDMA_KNOB_CHUNK_BYTES :
				       ORDMA_KNOB_POOL_BYTES;
			return ret;
		}
	}
	/* Checked: these setters take every value that passed. */
	if (ordma_knob_given(k, ORDMA_KNOB_CHAN_QUOTA))
		WARN_ON_ONCE(ordma_pool_set_quota(pool,
						  k->val[ORDMA_KNOB_CHAN_QUOTA]));
	if (ordma_knob_given(k, ORDMA_KNOB_USER_QUOTA))
		WARN_ON_ONCE(ordma_pool_set_user_quota(pool,
						       k->val[ORDMA_KNOB_USER_QUOTA]));
	if (ordma_knob_given(k, ORDMA_KNOB_MODE))
		WRITE_ONCE(odev->mode, k->val[ORDMA_KNOB_MODE]);
	if (ordma_knob_given(k, ORDMA_KNOB_PROGRESS_MS))
		WRITE_ONCE(odev->progress_ms, k->val[ORDMA_KNOB_PROGRESS_MS]);
	if (ordma_knob_given(k, ORDMA_KNOB_CACHE_MAX))
		WRITE_ONCE(odev->cache_max, k->val[ORDMA_KNOB_CACHE_MAX]);
	return 0;
}

/**
 * ordma_knobs_set() - change settings of a device
 * @odev: the device
 * @k: the settings to change and their values
 * @bad: the setting that was refused, on an error; may be NULL
 *
 * Every value is checked before any is applied (EINVAL). Then the pool's
 * size and chunk size, if given, change together in one step, which may
 * still fail (EBUSY for a chunk size while chunks are held, ENOMEM) and
 * then leaves every setting as it was; the others follow and cannot fail.
 * If a value differs afterwards (a setting written with the value it has,
 * or a pool size that rounds down to the one it has, changes nothing), the
 * chain of ordma_knobs_notifier_register() is called with @odev.
 *
 * Context: process context, may sleep.
 * Return: 0 or a negative errno.
 */
int ordma_knobs_set(struct ordma_dev *odev, const struct ordma_knobs *k,
		    enum ordma_knob *bad)
{
	u64 before[ORDMA_KNOB_NR], after[ORDMA_KNOB_NR];
	int ret;

	mutex_lock(&ordma_knobs_lock);
	ordma_knobs_read(odev, before);
	ret = ordma_knobs_check(k, before, bad);
	if (!ret)
		ret = ordma_knobs_apply(odev, k, before, bad);
	ordma_knobs_read(odev, after);
	mutex_unlock(&ordma_knobs_lock);
	if (memcmp(before, after, sizeof(before)))
		blocking_notifier_call_chain(&ordma_knobs_chain, 0, odev);
	return ret;
}

/**
 * ordma_knobs_notifier_register() - be told of every change of settings
 * @nb: called with the struct ordma_dev whose settings changed, in process
 *	context
 *
 * Return: 0 or a negative errno.
 */
int ordma_knobs_notifier_register(struct notifier_block *nb)
{
	return blocking_notifier_chain_register(&ordma_knobs_chain, nb);
}

/**
 * ordma_knobs_notifier_unregister() - undo ordma_knobs_notifier_register()
 * @nb: the notifier; no call of it runs once this returns
 */
void ordma_knobs_notifier_unregister(struct notifier_block *nb)
{
	blocking_notifier_chain_unregister(&ordma_knobs_chain, nb);
}

/* A write to one setting's file, parsed into @val. */
static ssize_t ordma_knob_store(struct device *dev, enum ordma_knob knob,
				u64 val, size_t count)
{
	struct ordma_knobs k = { .set = BIT(knob) };
	int ret;

	k.val[knob] = val;
	ret = ordma_knobs_set(to_ordma_dev(dev), &k, NULL);
	return ret ? ret : count;
}

/* A numeric setting: a decimal number, checked by ordma_knobs_set(). */
#define ORDMA_KNOB_STORE(_name, _knob)					\
static ssize_t _name##_store(struct device *dev,			\
			     struct device_attribute *attr,		\
			     const char *buf, size_t count)		\
{									\
	u64 val;							\
									\
	if (kstrtou64(buf, 10, &val))					\
		return -EINVAL;						\
	return ordma_knob_store(dev, _knob, val, count);		\
}

ORDMA_KNOB_STORE(pool_bytes, ORDMA_KNOB_POOL_BYTES)
ORDMA_KNOB_STORE(chunk_bytes, ORDMA_KNOB_CHUNK_BYTES)
ORDMA_KNOB_STORE(chan_quota_chunks, ORDMA_KNOB_CHAN_QUOTA)
ORDMA_KNOB_STORE(user_quota_chunks, ORDMA_KNOB_USER_QUOTA)
ORDMA_KNOB_STORE(progress_timeout_ms, ORDMA_KNOB_PROGRESS_MS)
ORDMA_KNOB_STORE(cache_max_bytes, ORDMA_KNOB_CACHE_MAX)

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
ORDMA_DEV_SHOW(cache_hits, atomic64_read(&odev->cache_hits));
ORDMA_DEV_SHOW(cache_misses, atomic64_read(&odev->cache_misses));
ORDMA_DEV_SHOW(cache_invalidations,
	       atomic64_read(&odev->cache_invalidations));
ORDMA_DEV_SHOW(cache_pages, atomic64_read(&odev->cache_pages));

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
	return ordma_knob_store(dev, ORDMA_KNOB_MODE, mode, count);
}
static DEVICE_ATTR_RW(mode);

static ssize_t progress_timeout_ms_show(struct device *dev,
					struct device_attribute *attr,
					char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  READ_ONCE(to_ordma_dev(dev)->progress_ms));
}
static DEVICE_ATTR_RW(progress_timeout_ms);

static ssize_t cache_max_bytes_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  READ_ONCE(to_ordma_dev(dev)->cache_max));
}
static DEVICE_ATTR_RW(cache_max_bytes);

ORDMA_POOL_SHOW(chunks_held, pi.chunks_total - pi.chunks_free)
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
	&dev_attr_cache_max_bytes.attr,
	&dev_attr_cache_hits.attr,
	&dev_attr_cache_misses.attr,
	&dev_attr_cache_invalidations.attr,
	&dev_attr_cache_pages.attr,
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
