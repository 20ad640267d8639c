/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ordma - RDMA from memory that was never registered: the user ABI of
 * /dev/ordma.
 */
#ifndef _UAPI_LINUX_ORDMA_H
#define _UAPI_LINUX_ORDMA_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define ORDMA_TYPE	0xd4

#endif /* _UAPI_LINUX_ORDMA_H */
