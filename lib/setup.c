// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Handles: open /dev/ordma, set up the queues and the backend, tear them
 * down.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "private.h"

#define ORDMA_DEV	"/dev/ordma"

/*
 * The ring backend if the kernel has rings, else the ioctl one (also when
 * LIBORDMA_BACKEND=ioctl is in the environment). A file whose ring set-up
 * failed half-way may have rings already, which the ioctl path cannot reap:
 * the fallback gets a fresh file.
 */
static int backend_init(struct ordma *o)
{
	const char *env = secure_getenv("LIBORDMA_BACKEND");

	if (!env || strcmp(env, "ioctl")) {
		o->be = &__ordma_backend_ring;
		if (!o->be->init(o))
			return 0;
		close(o->fd);
		o->fd = open(ORDMA_DEV, O_RDWR | O_CLOEXEC);
		if (o->fd < 0)
			return -errno;
	}
	o->be = &__ordma_backend_ioctl;
	return o->be->init(o);
}

/**
 * ordma_open() - open a handle
 * @op: where to store the new handle
 * @flags: must be 0
 *
 * Return: 0, or -errno: -EINVAL (flags), -ENOMEM, or the error of opening
 * /dev/ordma (-ENOENT: the module is not loaded).
 */
ORDMA_API int ordma_open(struct ordma **op, unsigned int flags)
{
	struct ordma *o;
	__u32 i;
	int ret;

	if (!op || flags)
		return -EINVAL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->fd = open(ORDMA_DEV, O_RDWR | O_CLOEXEC);
	if (o->fd < 0) {
		int err = -errno;

		free(o);
		return err;
	}
	ret = backend_init(o);
	if (ret) {
		if (o->fd >= 0)
			close(o->fd);
		free(o);
		return ret;
	}
	for (i = 0; i < ORDMA_CQ_ENTRIES; i++)
		o->slots[i].next_free = i + 1;
	o->free_slot = 0;
	*op = o;
	return 0;
}

/**
 * ordma_close() - close a handle
 * @o: the handle, or NULL
 *
 * Every channel and listener of the handle is closed and every window
 * revoked; operations still in flight are cancelled and their completions
 * discarded. Once the call returns the kernel no longer touches their
 * buffers (unless a child forked meanwhile still holds the file open).
 */
ORDMA_API void ordma_close(struct ordma *o)
{
	if (!o)
		return;
	o->be->release(o);
	close(o->fd);
	free(o);
}
