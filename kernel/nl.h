/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink family "ordma" (nl.c): what the layers above it
 * (module init, the RDMA CM side) call to register it and to
 * send its events.
 */
#ifndef _ORDMA_NL_H
#define _ORDMA_NL_H

#include "ordma.h"

int ordma_nl_init(void);
void ordma_nl_exit(void);
void ordma_nl_dev_event(struct ordma_dev *odev, bool add);
void ordma_nl_chan_event(struct ordma_dev *odev, bool up, u32 qpn,
			 const struct sockaddr *peer, int err);

#endif /* _ORDMA_NL_H */
