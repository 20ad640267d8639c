/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernels ordma builds against (Debian's 6.1
 * and 6.12) is absorbed here and nowhere else. The ORDMA_HAVE_* macros say
 * what the kernel's headers provide (kernel/Kbuild looks).
 */
#ifndef _ORDMA_COMPAT_H
#define _ORDMA_COMPAT_H

#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/uio.h>

/* The directions of an iov_iter by their 6.2 names. */
#ifndef ITER_SOURCE
#define ITER_SOURCE	WRITE
#define ITER_DEST	READ
#endif

typedef unsigned long (*ordma_shrink_fn)(struct shrinker *s,
					 struct shrink_control *sc);

/*
 * A registered shrinker (since 6.7 the core allocates shrinkers), or
 * NULL when out of memory.
 */
static inline struct shrinker *ordma_shrinker_create(const char *name,
						     ordma_shrink_fn count,
						     ordma_shrink_fn scan)
{
	struct shrinker *s;

#ifdef ORDMA_HAVE_SHRINKER_ALLOC
	s = shrinker_alloc(0, "%s", name);
	if (!s)
		return NULL;
	s->count_objects = count;
	s->scan_objects = scan;
	shrinker_register(s);
#else
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return NULL;
	s->count_objects = count;
	s->scan_objects = scan;
	s->seeks = DEFAULT_SEEKS;
	if (register_shrinker(s, "%s", name)) {
		kfree(s);
		return NULL;
	}
#endif
	return s;
}

static inline void ordma_shrinker_destroy(struct shrinker *s)
{
#ifdef ORDMA_HAVE_SHRINKER_ALLOC
	shrinker_free(s);
#else
	unregister_shrinker(s);
	kfree(s);
#endif
}

#endif /* _ORDMA_COMPAT_H */
