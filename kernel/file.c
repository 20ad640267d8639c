// SPDX-License-Identifier: GPL-2.0
/*
 * Per-open-file state of /dev/ordma: the address space operations use, the
 * completion queue, and the exposed windows.
 *
 * Locking: ofile->cq_lock (spinlock, irqsave: completions may be posted from
 * any context) protects the completion list, and the CQ ring once the file
 * has rings (ring.c: completions go there, the list holds those the full
 * ring could not take yet). Windows live in an xarray;
 * ofile->windows_rwsem is held for read by the data path from the window
 * check to the end of its copy (or of asking for segments of the window,
 * window.c) and for write by ORDMA_IOC_UNEXPOSE, which then waits for the
 * window's registered ranges to go (ordma_window_unexpose()), so when unexpose
 * returns no peer access to the window is still running, and later ones get
 * -ENOENT. Windows are freed after an RCU grace period.
 *
 * Open files are listed by id in ordma_files, for netlink's window dump: a
 * file is stored when it is opened and erased by its release, under the
 * xarray's lock, before it is freed, so a lookup under that lock that gets
 * a reference with kref_get_unless_zero() holds a live file.
 */
#include <linux/slab.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/mm.h>
#include <linux/capability.h>
#include <linux/sched/user.h>

#include "file.h"

static DEFINE_XARRAY_FLAGS(ordma_files, XA_FLAGS_ALLOC1);
static u32 ordma_files_next;

/* The parts of a new file that do not depend on its owner. */
static struct ordma_file *ordma_file_new(void)
{
	struct ordma_file *ofile;

	ofile = kzalloc(sizeof(*ofile), GFP_KERNEL_ACCOUNT);
	if (!ofile)
		return NULL;
	xa_init_flags(&ofile->objs, XA_FLAGS_ALLOC1);
	xa_init_flags(&ofile->windows, XA_FLAGS_ALLOC1);
	init_rwsem(&ofile->windows_rwsem);
	init_waitqueue_head(&ofile->unplace_wait);
	spin_lock_init(&ofile->wsegs_lock);
	INIT_LIST_HEAD(&ofile->wsegs);
	spin_lock_init(&ofile->cq_lock);
	INIT_LIST_HEAD(&ofile->cq);
	init_waitqueue_head(&ofile->cq_wait);
	kref_init(&ofile->kref);
	spin_lock_init(&ofile->run_lock);
	INIT_LIST_HEAD(&ofile->runq);
	return ofile;
}

/* What ordma_file_new() and its owner's part hold. */
static void ordma_file_free(struct ordma_file *ofile)
{
	if (ofile->mm)
		mmdrop(ofile->mm);
	put_pid(ofile->pid);
	free_uid(ofile->user);
	ordma_user_put(ofile->tenant);
	kfree(ofile);
}

/* Last: from here on netlink finds the file. */
static struct ordma_file *ordma_file_list(struct ordma_file *ofile)
{
	if (xa_alloc_cyclic(&ordma_files, &ofile->id, ofile, xa_limit_31b,
			    &ordma_files_next, GFP_KERNEL_ACCOUNT) < 0) {
		ordma_file_free(ofile);
		return NULL;
	}
	return ofile;
}

/**
 * ordma_file_alloc() - state of a new open file, bound to current's mm
 *
 * Return: the state or NULL.
 */
struct ordma_file *ordma_file_alloc(void)
{
	struct ordma_file *ofile = ordma_file_new();

	if (!ofile)
		return NULL;
	ofile->mm = current->mm;
	mmgrab(ofile->mm);
	ofile->user = get_current_user();
	ofile->pid = get_task_pid(current, PIDTYPE_TGID);
	ofile->euid = current_euid();
	get_task_comm(ofile->comm, current);
	if (!capable(CAP_SYS_ADMIN)) {
		ofile->tenant = ordma_user_get(current_uid());
		if (!ofile->tenant) {
			ordma_file_free(ofile);
			return NULL;
		}
	}
	/* Pinning runs in a worker later: take the caller's limit now. */
	ofile->lock_limit = capable(CAP_IPC_LOCK) ? ULONG_MAX :
			    rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	return ordma_file_list(ofile);
}

/**
 * ordma_file_alloc_kern() - the state of a kernel user, as a file of its own
 * @name: the user's name, for netlink (truncated to TASK_COMM_LEN - 1)
 * @kern: what its file calls instead of the completion queue
 *
 * No mm, no user's limits (kernel memory is not pinned for it), not counted
 * as a tenant; the pools' per-channel quota holds as for any file.
 *
 * Return: the state or NULL.
 */
struct ordma_file *ordma_file_alloc_kern(const char *name,
					 const struct ordma_kern *kern)
{
	struct ordma_file *ofile = ordma_file_new();

	if (!ofile)
		return NULL;
	ofile->kern = kern;
	ofile->euid = GLOBAL_ROOT_UID;
	ofile->lock_limit = ULONG_MAX;
	strscpy(ofile->comm, name, sizeof(ofile->comm));
	return ordma_file_list(ofile);
}

static void ordma_file_release(struct kref *kref)
{
	struct ordma_file *ofile = container_of(kref, struct ordma_file, kref);
	struct ordma_window *win;
	struct ordma_req *op, *tmp;
	unsigned long idx;

	xa_erase(&ordma_files, ofile->id);
	list_for_each_entry_safe(op, tmp, &ofile->cq, node)
		ordma_req_free(ofile, op);
	ordma_ring_destroy(ofile->ring);
	xa_for_each(&ofile->windows, idx, win) {
		ordma_user_uncharge(ofile->tenant, ORDMA_USER_WINDOWS);
		kfree_rcu(win, rcu);
	}
	xa_destroy(&ofile->windows);
	WARN_ON_ONCE(!xa_empty(&ofile->objs));
	xa_destroy(&ofile->objs);
	ordma_file_free(ofile);
}

void ordma_file_put(struct ordma_file *ofile)
{
	kref_put(&ofile->kref, ordma_file_release);
}

/**
 * ordma_file_next() - the open file of the lowest id from @id on
 * @id: where to start; set to the file's id
 *
 * Return: the file with a reference (ordma_file_put()), or NULL if no
 * file has an id from @id on.
 */
struct ordma_file *ordma_file_next(unsigned long *id)
{
	struct ordma_file *ofile;

	xa_lock(&ordma_files);
	for (ofile = xa_find(&ordma_files, id, ULONG_MAX, XA_PRESENT); ofile;
	     ofile = xa_find_after(&ordma_files, id, ULONG_MAX, XA_PRESENT))
		if (kref_get_unless_zero(&ofile->kref))
			break;
	xa_unlock(&ordma_files);
	return ofile;
}

/**
 * ordma_file_window_next() - the window of the lowest index from @idx on
 * @ofile: the file
 * @idx: where to start; set to the window's index
 * @st: what it shows, on success
 *
 * Return: false if @ofile has no window from @idx on.
 */
bool ordma_file_window_next(struct ordma_file *ofile, unsigned long *idx,
			    struct ordma_window_stat *st)
{
	struct ordma_window *win;

	/* Windows are freed after a grace period: read under RCU. */
	rcu_read_lock();
	win = xa_find(&ofile->windows, idx, ULONG_MAX, XA_PRESENT);
	if (win) {
		st->id = *idx;
		st->len = win->len;
		st->access = win->access;
		st->writes = atomic_read(&win->writes);
	}
	rcu_read_unlock();
	return win;
}

/**
 * ordma_file_complete() - post the completion of an operation
 * @ofile: the file the operation was submitted on
 * @op: the operation; the file owns it from now on (a kernel user's: its
 *	user does, told through ofile->kern)
 * @res: bytes done or a negative errno
 *
 * Any context; a kernel user's file: process context (a channel's data
 * path, or its registration worker).
 */
void ordma_file_complete(struct ordma_file *ofile, struct ordma_req *op,
			 s64 res)
{
	unsigned long flags;
	LIST_HEAD(done);

	op->res = res;
	if (ofile->kern) {
		ofile->kern->complete(op, res);
		return;
	}
	spin_lock_irqsave(&ofile->cq_lock, flags);
	if (ofile->ring) {
		ordma_ring_complete(ofile, ofile->ring, op, &done);
	} else {
		list_add_tail(&op->node, &ofile->cq);
		ofile->cq_len++;
	}
	spin_unlock_irqrestore(&ofile->cq_lock, flags);
	ordma_reqs_free(ofile, &done);
	/* Its barrier pairs with the waiter's set_current_state(). */
	if (wq_has_sleeper(&ofile->cq_wait))
		wake_up_all(&ofile->cq_wait);
}

/* Is a buffer's length sane (not 0, at most ORDMA_MAX_LEN), its end too? */
static int ordma_check_range(u64 addr, u64 len)
{
	if (!len || len > ORDMA_MAX_LEN)
		return -EINVAL;
	if (addr + len < addr)
		return -EOVERFLOW;
	return 0;
}

/**
 * ordma_file_check_buf() - may the caller name this buffer of the file?
 * @ofile: the file
 * @addr: start of the buffer
 * @len: its length
 *
 * Return: 0, -EINVAL or -EOVERFLOW (ordma_check_range()), or -EPERM when
 * the caller does not run in the file's mm (a child after fork()).
 */
int ordma_file_check_buf(struct ordma_file *ofile, u64 addr, u64 len)
{
	int ret = ordma_check_range(addr, len);

	if (ret)
		return ret;
	return current->mm != ofile->mm ? -EPERM : 0;
}

/**
 * ordma_check_user_range() - is [addr, addr + len) mapped with this access?
 * @mm: the address space
 * @addr: start
 * @len: length, not 0, addr + len not wrapping
 * @write: also require write access
 *
 * A snapshot: the mapping can change afterwards, and the data path then
 * fails the operation with -EFAULT.
 *
 * Return: 0 or -EFAULT.
 */
int ordma_check_user_range(struct mm_struct *mm, u64 addr, u64 len,
			   bool write)
{
	unsigned long need = write ? VM_WRITE : VM_READ;
	struct vm_area_struct *vma;
	u64 end = addr + len;
	int ret = 0;

	if (!access_ok(u64_to_user_ptr(addr), len))
		return -EFAULT;
	mmap_read_lock(mm);
	while (addr < end) {
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr || !(vma->vm_flags & need)) {
			ret = -EFAULT;
			break;
		}
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

/**
 * ordma_file_expose() - expose a buffer to the peers of this file's channels
 * @ofile: the file
 * @mem: the buffer: an address in the file's mm, or a kernel user's pages
 * @len: its length
 * @access: ORDMA_ACCESS_* bits
 * @token: the token for peers
 *
 * Return: 0 or -EDQUOT (the user's bound), -ENOMEM, -EBUSY (no index
 * left).
 */
int ordma_file_expose(struct ordma_file *ofile,
		      const struct ordma_winmem *mem, u64 len, u32 access,
		      u64 *token)
{
	struct ordma_window *win;
	u32 id;
	int ret;

	ret = ordma_user_charge(ofile->tenant, ORDMA_USER_WINDOWS);
	if (ret)
		return ret;
	win = kzalloc(sizeof(*win), GFP_KERNEL_ACCOUNT);
	if (!win) {
		ordma_user_uncharge(ofile->tenant, ORDMA_USER_WINDOWS);
		return -ENOMEM;
	}
	win->mem = *mem;
	win->len = len;
	win->access = access;
	win->salt = get_random_u32() | 1;
	/* Cyclic: an index comes back only after 2^31 windows. */
	ret = xa_alloc_cyclic(&ofile->windows, &id, win, xa_limit_31b,
			      &ofile->windows_next, GFP_KERNEL_ACCOUNT);
	if (ret < 0) {
		kfree(win);
		ordma_user_uncharge(ofile->tenant, ORDMA_USER_WINDOWS);
		return ret;
	}
	if (ret)
		WRITE_ONCE(ofile->windows_wrapped, true);
	*token = (u64)win->salt << 32 | id;
	return 0;
}

/*
 * The window of @token, or NULL: *@guess says whether the token can be a
 * stale one (its window was unexposed; a peer may name it while the news
 * travels) or must be a guess (its index holds another window, or was
 * never given out).
 */
static struct ordma_window *ordma_window_find(struct ordma_file *ofile,
					      u64 token, bool *guess)
{
	struct ordma_window *win = xa_load(&ofile->windows, (u32)token);
	u32 idx = (u32)token;

	if (win && win->salt == (u32)(token >> 32))
		return win;
	*guess = win || (!READ_ONCE(ofile->windows_wrapped) &&
			 (!idx || idx >= READ_ONCE(ofile->windows_next)));
	return NULL;
}

static struct ordma_window *ordma_window_lookup(struct ordma_file *ofile,
						u64 token)
{
	bool guess;

	return ordma_window_find(ofile, token, &guess);
}

/**
 * ordma_file_unexpose() - take a window out of the file
 * @ofile: the file
 * @token: its token
 *
 * Peer accesses to it that are running end first; later ones get -ENOENT.
 * Ranges of it registered for peers' writes are the data path's to give
 * back (ordma_window_unexpose()).
 *
 * Return: 0 or -ENOENT.
 */
int ordma_file_unexpose(struct ordma_file *ofile, u64 token)
{
	struct ordma_window *win;

	/* Waits for peer accesses in progress (see ordma_window_check()). */
	down_write(&ofile->windows_rwsem);
	xa_lock(&ofile->windows);
	win = ordma_window_lookup(ofile, token);
	if (win)
		__xa_erase(&ofile->windows, (u32)token);
	xa_unlock(&ofile->windows);
	up_write(&ofile->windows_rwsem);
	if (!win)
		return -ENOENT;
	kfree_rcu(win, rcu);
	ordma_user_uncharge(ofile->tenant, ORDMA_USER_WINDOWS);
	return 0;
}

/**
 * ordma_window_check() - may a peer access this range of a window?
 * @ofile: the file that exposed the window
 * @token: the window token the peer named
 * @off: offset in the window
 * @len: length
 * @access: the ORDMA_ACCESS_* bit needed
 * @mem: the window's memory, on success
 *
 * The caller holds @ofile->windows_rwsem for read from this check until its
 * copy is done, so a concurrent unexpose waits for the access.
 *
 * Return: 0, -ENOENT (no such window: unexposed), -EKEYREJECTED (no such
 * window, and no token this file gave out: a guess), -EACCES (not exposed
 * for @access) or -ERANGE (outside the window).
 */
int ordma_window_check(struct ordma_file *ofile, u64 token, u64 off, u64 len,
		       u32 access, struct ordma_winmem *mem)
{
	struct ordma_window *win;
	bool guess;
	int ret = 0;

	lockdep_assert_held_read(&ofile->windows_rwsem);
	rcu_read_lock();
	win = ordma_window_find(ofile, token, &guess);
	if (!win)
		ret = guess ? -EKEYREJECTED : -ENOENT;
	else if (!(win->access & access))
		ret = -EACCES;
	else if (off > win->len || len > win->len - off)
		ret = -ERANGE;
	else
		*mem = win->mem;
	rcu_read_unlock();
	return ret;
}

/**
 * ordma_window_written() - a peer's write into a window begins
 * @ofile: the file that exposed the window
 * @token: the window, checked by ordma_window_check() under
 *	@ofile->windows_rwsem, which the caller still holds for read
 * @len: the window's length
 *
 * Return: how many writes into the window began, this one included, or 0
 * if it is gone.
 */
u32 ordma_window_written(struct ordma_file *ofile, u64 token, u64 *len)
{
	struct ordma_window *win;
	u32 n = 0;

	lockdep_assert_held_read(&ofile->windows_rwsem);
	rcu_read_lock();
	win = ordma_window_lookup(ofile, token);
	if (win) {
		n = atomic_inc_return(&win->writes);
		*len = win->len;
	}
	rcu_read_unlock();
	return n;
}
