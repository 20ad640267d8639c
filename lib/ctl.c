// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Control calls: listeners, channels, exposed windows. These are ioctls
 * whatever the data path's backend is.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <netinet/in.h>

#include "private.h"

int __ordma_sockaddr_to_addr(const struct sockaddr *sa, socklen_t len,
			     struct ordma_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (!sa || len < sizeof(sa->sa_family))
		return -EINVAL;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)sa;

		if (len < sizeof(*sin))
			return -EINVAL;
		a->family = AF_INET;
		a->port = sin->sin_port;
		memcpy(a->addr, &sin->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		if (len < sizeof(*sin6))
			return -EINVAL;
		a->family = AF_INET6;
		a->port = sin6->sin6_port;
		a->scope_id = sin6->sin6_scope_id;
		memcpy(a->addr, &sin6->sin6_addr, 16);
		return 0;
	}
	return -EAFNOSUPPORT;
}

/* Like accept(2): copy at most *len bytes, set *len to the full length. */
void __ordma_addr_to_sockaddr(const struct ordma_addr *a,
			      struct sockaddr *sa, socklen_t *len)
{
	struct sockaddr_in6 sin6;
	struct sockaddr_in sin;
	const void *src;
	socklen_t n;

	if (a->family == AF_INET6) {
		memset(&sin6, 0, sizeof(sin6));
		sin6.sin6_family = AF_INET6;
		sin6.sin6_port = a->port;
		sin6.sin6_scope_id = a->scope_id;
		memcpy(&sin6.sin6_addr, a->addr, 16);
		src = &sin6;
		n = sizeof(sin6);
	} else {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = a->port;
		memcpy(&sin.sin_addr, a->addr, 4);
		src = &sin;
		n = sizeof(sin);
	}
	memcpy(sa, src, *len < n ? *len : n);
	*len = n;
}

static int xioctl(struct ordma *o, unsigned long cmd, void *arg)
{
	return ioctl(o->fd, cmd, arg) < 0 ? -errno : 0;
}

/**
 * ordma_listen() - listen for channels
 * @o: the handle
 * @addr: local address and port (sockaddr_in or sockaddr_in6); a wildcard
 *	address listens on every RDMA device
 * @addrlen: its size
 * @backlog: most connections waiting for ordma_accept(); 0: a default
 * @listener: where to store the listener's id
 *
 * Return: 0 or -errno (-EAFNOSUPPORT for another family, the kernel's
 * -EADDRINUSE, -EADDRNOTAVAIL, ...).
 */
ORDMA_API int ordma_listen(struct ordma *o, const struct sockaddr *addr,
			   socklen_t addrlen, unsigned int backlog,
			   uint32_t *listener)
{
	struct ordma_listen l;
	int ret;

	if (!o || !listener)
		return -EINVAL;
	memset(&l, 0, sizeof(l));
	l.size = sizeof(l);
	ret = __ordma_sockaddr_to_addr(addr, addrlen, &l.addr);
	if (ret)
		return ret;
	l.backlog = backlog;
	ret = xioctl(o, ORDMA_IOC_LISTEN, &l);
	if (!ret)
		*listener = l.out_id;
	return ret;
}

/**
 * ordma_accept() - take one connected channel from a listener
 * @o: the handle
 * @listener: a listener of @o
 * @flags: ORDMA_F_NONBLOCK, or 0 to wait for a connection
 * @chan: where to store the channel's id
 * @peer: where to store the peer's address, or NULL
 * @peerlen: in: the size of @peer; out: the size of the peer's address
 *
 * Return: 0 or -errno (-EAGAIN, -EINTR, -ENOENT, ...).
 */
ORDMA_API int ordma_accept(struct ordma *o, uint32_t listener,
			   unsigned int flags, uint32_t *chan,
			   struct sockaddr *peer, socklen_t *peerlen)
{
	struct ordma_accept a;
	int ret;

	if (!o || !chan || (peer && !peerlen))
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags;
	a.listener_id = listener;
	ret = xioctl(o, ORDMA_IOC_ACCEPT, &a);
	if (ret)
		return ret;
	*chan = a.out_chan_id;
	if (peer)
		__ordma_addr_to_sockaddr(&a.out_peer, peer, peerlen);
	return 0;
}

/**
 * ordma_connect() - open a channel to a listener
 * @o: the handle
 * @addr: the listener's address (sockaddr_in or sockaddr_in6)
 * @addrlen: its size
 * @timeout_ms: give up after this long; 0: 5000 ms
 * @chan: where to store the channel's id
 *
 * Return: 0 or -errno (-ECONNREFUSED, -ETIMEDOUT, ...).
 */
ORDMA_API int ordma_connect(struct ordma *o, const struct sockaddr *addr,
			    socklen_t addrlen, unsigned int timeout_ms,
			    uint32_t *chan)
{
	struct ordma_connect c;
	int ret;

	if (!o || !chan)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	ret = __ordma_sockaddr_to_addr(addr, addrlen, &c.addr);
	if (ret)
		return ret;
	c.timeout_ms = timeout_ms;
	ret = xioctl(o, ORDMA_IOC_CONNECT, &c);
	if (!ret)
		*chan = c.out_chan_id;
	return ret;
}

/**
 * ordma_chan_close() - close a channel or a listener
 * @o: the handle
 * @id: the channel or listener
 *
 * Operations in flight on the channel complete with -ECANCELED.
 *
 * Return: 0 or -errno (-ENOENT).
 */
ORDMA_API int ordma_chan_close(struct ordma *o, uint32_t id)
{
	struct ordma_close c;

	if (!o)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.id = id;
	return xioctl(o, ORDMA_IOC_CLOSE, &c);
}

/**
 * ordma_expose() - let the peers of @o write and/or read a buffer
 * @o: the handle
 * @buf: the window
 * @len: its length
 * @access: ORDMA_ACCESS_REMOTE_READ and/or ORDMA_ACCESS_REMOTE_WRITE
 * @token: where to store the token peers name the window by
 *
 * Return: 0 or -errno.
 */
ORDMA_API int ordma_expose(struct ordma *o, void *buf, size_t len,
			   unsigned int access, uint64_t *token)
{
	struct ordma_expose e;
	int ret;

	if (!o || !token)
		return -EINVAL;
	memset(&e, 0, sizeof(e));
	e.size = sizeof(e);
	e.addr = (uintptr_t)buf;
	e.len = len;
	e.access = access;
	ret = xioctl(o, ORDMA_IOC_EXPOSE, &e);
	if (!ret)
		*token = e.out_token;
	return ret;
}

/**
 * ordma_unexpose() - revoke a window
 * @o: the handle
 * @token: the token ordma_expose() returned
 *
 * Return: 0 or -errno (-ENOENT).
 */
ORDMA_API int ordma_unexpose(struct ordma *o, uint64_t token)
{
	struct ordma_unexpose u;

	if (!o)
		return -EINVAL;
	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	u.token = token;
	return xioctl(o, ORDMA_IOC_UNEXPOSE, &u);
}
