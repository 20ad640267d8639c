/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the two-host selftests share: addresses, ports, the barrier over the
 * link and the device's counters. They run in both guests of tools/vmtest
 * --hosts 2 at once; host 1 listens, host 2 connects.
 */
#ifndef _ORDMA_TWOHOST_H
#define _ORDMA_TWOHOST_H

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <libordma.h>
#include "ordma_test.h"

#define TWOHOST_PORT_BASE	7100
#define TWOHOST_CONNECT_MS	20000

static inline socklen_t twohost_sockaddr(int family, const char *ip,
					 unsigned short port,
					 struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		inet_pton(AF_INET6, ip, &sin6->sin6_addr);
		return sizeof(*sin6);
	}
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	inet_pton(AF_INET, ip, &sin->sin_addr);
	return sizeof(*sin);
}

/* A value of this host's rxe0 context in sysfs, or -1. */
static inline int64_t twohost_counter(const char *name)
{
	char path[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/ordma/rxe0/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Meet the other host at the barrier of test @test, step @step. */
static inline int twohost_barrier(const char *test, const char *step)
{
	return ordma_sh("tools/vmtest-barrier -t 120 %s.%s", test, step);
}

/* A port of its own for each test and address family. */
static inline unsigned short twohost_port(const char *name, int family)
{
	unsigned int h = 5381;

	while (*name)
		h = h * 33 + (unsigned char)*name++;
	return TWOHOST_PORT_BASE + (h % 400) * 2 + (family == AF_INET6);
}

/*
 * The channel of a test: host 1 listens on @ip (its own address) and
 * accepts one channel; host 2 connects to it once host 1 listens (barrier
 * "@test.listen"). Return: 0 or a negative errno.
 */
static inline int twohost_chan(struct ordma *o, int host, int family,
			       const char *ip, unsigned short port,
			       const char *test, uint32_t *chan)
{
	struct sockaddr_storage ss;
	socklen_t len = twohost_sockaddr(family, ip, port, &ss);
	uint32_t lis;
	int ret, i;

	if (host == 1) {
		ret = ordma_listen(o, (struct sockaddr *)&ss, len, 1, &lis);
		if (ret)
			return ret;
		if (twohost_barrier(test, "listen"))
			return -ETIMEDOUT;
		ret = ordma_accept(o, lis, 0, chan, NULL, NULL);
		ordma_chan_close(o, lis);
		return ret;
	}
	if (twohost_barrier(test, "listen"))
		return -ETIMEDOUT;
	for (i = 0; i < 50; i++) {
		ret = ordma_connect(o, (struct sockaddr *)&ss, len,
				    TWOHOST_CONNECT_MS, chan);
		if (ret != -ECONNREFUSED)
			break;
		usleep(100000);
	}
	return ret;
}

#endif /* _ORDMA_TWOHOST_H */
