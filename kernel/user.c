// SPDX-License-Identifier: GPL-2.0
/*
 * What one local user's files may hold together: channels (and listeners),
 * exposed windows and operations submitted and not yet reaped; and the
 * count of pool chunks its channels hold, which each pool bounds
 * (user_quota_chunks, pool.c). One user
 * reaching a bound gets -EDQUOT and leaves the rest to the others; a file
 * opened with CAP_SYS_ADMIN is not counted (root is trusted).
 *
 * A user's counts live in a struct ordma_user, found by uid in a small hash
 * table and shared by that user's files; the last file to go frees it. The
 * bounds are module parameters root may change at any time: a change
 * applies to what is charged next.
 */
#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "ordma.h"

static unsigned int ordma_user_max[ORDMA_USER_NR] = {
	[ORDMA_USER_CHANS] = 1024,
	[ORDMA_USER_WINDOWS] = 4096,
	[ORDMA_USER_OPS] = 65536,
};

module_param_named(max_chans_per_user, ordma_user_max[ORDMA_USER_CHANS],
		   uint, 0644);
MODULE_PARM_DESC(max_chans_per_user,
		 "Channels and listeners one user holds at once (1024)");
module_param_named(max_windows_per_user, ordma_user_max[ORDMA_USER_WINDOWS],
		   uint, 0644);
MODULE_PARM_DESC(max_windows_per_user,
		 "Windows one user exposes at once (4096)");
module_param_named(max_ops_per_user, ordma_user_max[ORDMA_USER_OPS],
		   uint, 0644);
MODULE_PARM_DESC(max_ops_per_user,
		 "Operations of one user submitted and not yet reaped (65536)");

/**
 * struct ordma_user - what one user's files hold
 * @node: in ordma_users (ordma_users_lock)
 * @uid: the user
 * @ref: its files
 * @held: counts, enum ordma_user_res
 */
struct ordma_user {
	struct hlist_node node;
	kuid_t uid;
	refcount_t ref;
	atomic_t held[ORDMA_USER_NR];
};

static DEFINE_HASHTABLE(ordma_users, 6);
/* Taken with interrupts off: a file's last reference may go anywhere. */
static DEFINE_SPINLOCK(ordma_users_lock);

static struct ordma_user *ordma_user_find(kuid_t uid)
{
	struct ordma_user *u;

	lockdep_assert_held(&ordma_users_lock);
	hash_for_each_possible(ordma_users, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid) && refcount_inc_not_zero(&u->ref))
			return u;
	return NULL;
}

/**
 * ordma_user_get() - the counts of a user, for a file it opens
 * @uid: the user
 *
 * Process context.
 *
 * Return: the user's counts, referenced, or NULL when out of memory.
 */
struct ordma_user *ordma_user_get(kuid_t uid)
{
	struct ordma_user *u, *fresh;
	unsigned long flags;

	spin_lock_irqsave(&ordma_users_lock, flags);
	u = ordma_user_find(uid);
	spin_unlock_irqrestore(&ordma_users_lock, flags);
	if (u)
		return u;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return NULL;
	fresh->uid = uid;
	refcount_set(&fresh->ref, 1);
	spin_lock_irqsave(&ordma_users_lock, flags);
	u = ordma_user_find(uid);
	if (!u) {
		hash_add(ordma_users, &fresh->node, __kuid_val(uid));
		u = fresh;
		fresh = NULL;
	}
	spin_unlock_irqrestore(&ordma_users_lock, flags);
	kfree(fresh);
	return u;
}

/**
 * ordma_user_put() - a file of the user is gone
 * @u: from ordma_user_get(), or NULL
 *
 * Any context but hard interrupt.
 */
void ordma_user_put(struct ordma_user *u)
{
	unsigned long flags;

	/* A lookup meanwhile skips it (no reference left) and adds a new one. */
	if (!u || !refcount_dec_and_test(&u->ref))
		return;
	spin_lock_irqsave(&ordma_users_lock, flags);
	hash_del(&u->node);
	spin_unlock_irqrestore(&ordma_users_lock, flags);
	WARN_ON_ONCE(atomic_read(&u->held[ORDMA_USER_CHANS]) ||
		     atomic_read(&u->held[ORDMA_USER_WINDOWS]) ||
		     atomic_read(&u->held[ORDMA_USER_OPS]) ||
		     atomic_read(&u->held[ORDMA_USER_CHUNKS]));
	kfree(u);
}

/**
 * ordma_user_charge() - take one more of @res for a user
 * @u: the user, or NULL for a file not counted
 * @res: what
 *
 * Any context.
 *
 * Return: 0, or -EDQUOT when the user holds its bound already.
 */
int ordma_user_charge(struct ordma_user *u, enum ordma_user_res res)
{
	unsigned int max;
	int cur;

	if (!u)
		return 0;
	/*
	 * Compare and exchange, not add and take back: two charges at the
	 * bound minus one must not both be refused.
	 */
	max = READ_ONCE(ordma_user_max[res]);
	cur = atomic_read(&u->held[res]);
	do {
		if ((unsigned int)cur >= max)
			return -EDQUOT;
	} while (!atomic_try_cmpxchg(&u->held[res], &cur, cur + 1));
	return 0;
}

/**
 * ordma_user_uncharge() - give back one of @res
 * @u: the user, or NULL
 * @res: what
 *
 * Any context.
 */
void ordma_user_uncharge(struct ordma_user *u, enum ordma_user_res res)
{
	if (u)
		atomic_dec(&u->held[res]);
}

/**
 * ordma_user_chunks() - the count of pool chunks a user's channels hold
 * @u: the user, or NULL
 *
 * Return: the counter, for struct ordma_hold, or NULL for a file not counted.
 */
atomic_t *ordma_user_chunks(struct ordma_user *u)
{
	return u ? &u->held[ORDMA_USER_CHUNKS] : NULL;
}
