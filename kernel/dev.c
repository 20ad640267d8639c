// SPDX-License-Identifier: GPL-2.0
/*
 * Per-ib_device contexts.
 *
 * Locking: ordma_devs_lock (a mutex) protects the ordma_devs list. A context
 * is on the list from ordma_dev_list() until ordma_dev_unlist(); lookups
 * take a reference under the lock. ordma_dev_destroy() drops the client's
 * reference and waits until every other user has dropped theirs before it
 * frees anything. main.c's ib_client calls them in that order.
 * ordma_devs_gen counts the list's changes (under the same lock), so that a
 * netlink dump walking the list by position can tell it moved.
 */
#include <linux/slab.h>
#include <linux/mutex.h>

#include "ordma.h"

static LIST_HEAD(ordma_devs);
static DEFINE_MUTEX(ordma_devs_lock);
static u32 ordma_devs_gen;		/* ordma_devs_lock */

static void ordma_dev_release(struct kref *kref)
{
	struct ordma_dev *odev = container_of(kref, struct ordma_dev, kref);

	complete(&odev->released);
}

/**
 * ordma_dev_put() - drop a reference taken by ordma_dev_get()
 * @odev: the context
 */
void ordma_dev_put(struct ordma_dev *odev)
{
	kref_put(&odev->kref, ordma_dev_release);
}

/**
 * ordma_dev_get() - the context of an RDMA device, with a reference
 * @ibdev: the device
 *
 * Return: the context, or NULL if ordma has none (not added, or being
 * removed).
 */
struct ordma_dev *ordma_dev_get(struct ib_device *ibdev)
{
	struct ordma_dev *odev, *found = NULL;

	mutex_lock(&ordma_devs_lock);
	list_for_each_entry(odev, &ordma_devs, node) {
		if (odev->ibdev == ibdev) {
			kref_get(&odev->kref);
			found = odev;
			break;
		}
	}
	mutex_unlock(&ordma_devs_lock);
	return found;
}

/**
 * ordma_dev_get_by_name() - the context of the RDMA device of that name
 * @name: the ib_device's name, as "rdma link show" lists it
 *
 * Return: the context with a reference, or NULL if none has that name.
 */
struct ordma_dev *ordma_dev_get_by_name(const char *name)
{
	struct ordma_dev *odev, *found = NULL;

	mutex_lock(&ordma_devs_lock);
	list_for_each_entry(odev, &ordma_devs, node) {
		if (!strcmp(odev->ibdev->name, name)) {
			kref_get(&odev->kref);
			found = odev;
			break;
		}
	}
	mutex_unlock(&ordma_devs_lock);
	return found;
}

/**
 * ordma_dev_get_at() - the context at a position of the list, for a walk
 * @pos: its position, from 0
 * @gen: set to the list's generation, which changes whenever a context
 *	joins or leaves it
 *
 * Return: the context with a reference, or NULL past the end.
 */
struct ordma_dev *ordma_dev_get_at(unsigned long pos, u32 *gen)
{
	struct ordma_dev *odev, *found = NULL;

	mutex_lock(&ordma_devs_lock);
	*gen = ordma_devs_gen;
	list_for_each_entry(odev, &ordma_devs, node) {
		if (!pos--) {
			kref_get(&odev->kref);
			found = odev;
			break;
		}
	}
	mutex_unlock(&ordma_devs_lock);
	return found;
}

/**
 * ordma_dev_reset_stats() - start a device's counters over
 * @odev: the context
 *
 * The counters go to 0 (the pool's alloc_waits too, its high_water to the
 * chunks held now); the gauges (channels, pages_pinned, mrs_live,
 * cache_pages, the pool's chunks) and the cost model are left alone.
 * Counts of operations under way when it runs land before or after the
 * reset.
 */
void ordma_dev_reset_stats(struct ordma_dev *odev)
{
	atomic64_set(&odev->bytes_tx, 0);
	atomic64_set(&odev->bytes_rx, 0);
	atomic64_set(&odev->ops, 0);
	atomic64_set(&odev->errors, 0);
	atomic64_set(&odev->bytes_placed, 0);
	atomic64_set(&odev->bytes_copied, 0);
	atomic64_set(&odev->bytes_zerocopy, 0);
	atomic64_set(&odev->registrations, 0);
	atomic64_set(&odev->reg_ns, 0);
	atomic64_set(&odev->hidden_ns, 0);
	atomic64_set(&odev->fallbacks, 0);
	atomic64_set(&odev->peer_faults, 0);
	atomic64_set(&odev->token_guesses, 0);
	atomic64_set(&odev->cache_hits, 0);
	atomic64_set(&odev->cache_misses, 0);
	atomic64_set(&odev->cache_invalidations, 0);
	ordma_pool_reset_stats(&odev->pool);
}

/**
 * ordma_dev_create() - build the context of an RDMA device
 * @ibdev: the device being added
 *
 * Its pool and its class device; not yet listed for
 * lookups (ordma_dev_list()).
 *
 * Return: the context, holding the client's reference, or an ERR_PTR().
 */
struct ordma_dev *ordma_dev_create(struct ib_device *ibdev)
{
	struct ordma_dev *odev;
	bool iwarp;
	int ret;

	odev = kzalloc(sizeof(*odev), GFP_KERNEL);
	if (!odev)
		return ERR_PTR(-ENOMEM);
	odev->ibdev = ibdev;
	kref_init(&odev->kref);
	init_completion(&odev->released);
	mutex_init(&odev->chans_lock);
	INIT_LIST_HEAD(&odev->chans);
	init_waitqueue_head(&odev->chans_wait);
	spin_lock_init(&odev->model_lock);
	ordma_model_init(&odev->model);
	/*
	 * A device with no DMA device of its own (Soft-RoCE, soft iWARP)
	 * moves packets with the host's CPUs.
	 */
	odev->model.cpu_wire = ib_uses_virt_dma(ibdev);
	/*
	 * What iWARP does otherwise (struct ordma_dev says what each one
	 * changes): no immediate data (siw takes no *_WITH_IMM); no
	 * receiver-not-ready retry (a SEND without a receive ends the
	 * connection); the QP ends with the TCP stream; a connect in flight
	 * is waited for before its id goes; the connecting side speaks
	 * first; user registrations addressed by their user address.
	 */
	iwarp = rdma_protocol_iwarp(ibdev, rdma_start_port(ibdev));
	odev->imm = !iwarp;
	odev->rnr = !iwarp;
	odev->close_flushes = iwarp;
	odev->connect_settles = iwarp;
	odev->initiator_first = iwarp;
	odev->user_mr_va = iwarp;
	odev->mode = ORDMA_MODE_AUTO;
	odev->progress_ms = ORDMA_PROGRESS_MS;
	odev->cache_max = ORDMA_CACHE_MAX;

	ret = ordma_pool_init(&odev->pool, odev);
	if (ret)
		goto err_free;

	odev->cdev = ordma_sysfs_add_dev(odev);
	if (IS_ERR(odev->cdev)) {
		ret = PTR_ERR(odev->cdev);
		goto err_pool;
	}
	return odev;

err_pool:
	ordma_pool_destroy(&odev->pool);
err_free:
	kfree(odev);
	return ERR_PTR(ret);
}

/**
 * ordma_dev_list() - make a context found by ordma_dev_get()
 * @odev: the context, just created
 */
void ordma_dev_list(struct ordma_dev *odev)
{
	mutex_lock(&ordma_devs_lock);
	list_add_tail(&odev->node, &ordma_devs);
	ordma_devs_gen++;
	mutex_unlock(&ordma_devs_lock);
}

/**
 * ordma_dev_unlist() - no new user finds the context any more
 * @odev: the context of a device being removed
 */
void ordma_dev_unlist(struct ordma_dev *odev)
{
	mutex_lock(&ordma_devs_lock);
	list_del(&odev->node);
	ordma_devs_gen++;
	mutex_unlock(&ordma_devs_lock);
}

/**
 * ordma_dev_destroy() - undo ordma_dev_create()
 * @odev: the context, unlisted and with no channel left
 *
 * Drops the client's reference and waits for every other user's.
 */
void ordma_dev_destroy(struct ordma_dev *odev)
{
	ordma_dev_put(odev);
	wait_for_completion(&odev->released);

	ordma_sysfs_remove_dev(odev);
	ordma_pool_destroy(&odev->pool);
	kfree(odev);
}
