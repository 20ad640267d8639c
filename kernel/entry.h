/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the top of the module (main.c, uapi.c, submit.c) calls below it: the
 * RDMA CM side of channels (cm.c), the data path's entry points (sched.c)
 * and a window's unexpose (window.c).
 */
#ifndef _ORDMA_ENTRY_H
#define _ORDMA_ENTRY_H

#include "chan.h"

/* cm.c */
int ordma_chan_connect(struct ordma_file *ofile, struct sockaddr *addr,
		       u32 timeout_ms, struct ordma_chan **out);
void ordma_chan_close(struct ordma_chan *chan, int err);
int ordma_listener_create(struct ordma_file *ofile, struct sockaddr *addr,
			  u32 backlog, struct ordma_listener **out);
int ordma_listener_accept(struct ordma_listener *lis, bool nonblock,
			  struct ordma_chan **out);
void ordma_listener_close(struct ordma_listener *lis);
void ordma_cm_remove_dev(struct ordma_dev *odev);

/* sched.c */
void ordma_xfer_init(struct ordma_chan *chan);
int ordma_xfer_setup(struct ordma_chan *chan);
u16 ordma_xfer_prepost(struct ordma_chan *chan);
void ordma_xfer_release(struct ordma_chan *chan);
void ordma_xfer_flush(struct ordma_chan *chan, int err, bool keep_rx);
int ordma_chan_submit(struct ordma_chan *chan, struct ordma_req *op,
		      bool nonblock);
long ordma_file_wait(struct ordma_file *ofile,
		     bool (*done)(struct ordma_file *ofile, void *arg),
		     void *arg, long timeout);

/* window.c */
int ordma_window_unexpose(struct ordma_file *ofile, u64 token);

/* submit.c */
int ordma_file_submit(struct ordma_file *ofile, const struct ordma_submit *cmd);
int ordma_submit_ring_enter(struct ordma_file *ofile,
			    struct ordma_ring_enter *cmd);

/* uapi.c */
int ordma_cdev_init(void);
void ordma_cdev_exit(void);

#endif /* _ORDMA_ENTRY_H */
