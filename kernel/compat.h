/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernels ordma builds against (Debian's 6.1
 * and 6.12) is absorbed here and nowhere else.
 */
#ifndef _ORDMA_COMPAT_H
#define _ORDMA_COMPAT_H

#include <linux/version.h>

#endif /* _ORDMA_COMPAT_H */
