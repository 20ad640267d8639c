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
#include <time.h>
#include <unistd.h>
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

/* A value of this host's ordma context in sysfs, or -1. */
static inline int64_t twohost_counter(const char *name)
{
	char path[128];

	return ordma_read_ll(ordma_sysfs(path, sizeof(path), name));
}

/* Meet the other host at the barrier of test @test, step @step, within @s. */
static inline int twohost_barrier_s(const char *test, const char *step, int s)
{
	return ordma_sh("tools/vmtest-barrier -t %d %s.%s", s, test, step);
}

static inline int twohost_barrier(const char *test, const char *step)
{
	return twohost_barrier_s(test, step, 120);
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
 * "@test.listen"). A test that wants host 2 to listen passes 3 - host as
 * @host and host 2's address as @ip. Return: 0 or a negative errno.
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

/* Set the device's progress_timeout_ms; 0 or the shell's status. */
static inline int twohost_set_progress(int64_t ms)
{
	return ordma_sh("echo %lld >/sys/class/ordma/%s/progress_timeout_ms",
			(long long)ms, ordma_ibdev());
}

static inline double twohost_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Wait up to @s seconds for this host's device to hold nothing: no channel,
 * pinned page, memory region or chunk held. Return: 0 once it does, else
 * -1 with what it still holds in *@msg.
 */
static inline int twohost_wait_empty(int s, char *msg, size_t len)
{
	int i;

	for (i = 0; i < s * 10; i++) {
		if (twohost_counter("channels") == 0 &&
		    twohost_counter("pages_pinned") == 0 &&
		    twohost_counter("mrs_live") == 0 &&
		    twohost_counter("chunks_free") ==
		    twohost_counter("chunks_total"))
			return 0;
		usleep(100000);
	}
	snprintf(msg, len,
		 "channels %lld pages_pinned %lld mrs_live %lld chunks free %lld of %lld",
		 (long long)twohost_counter("channels"),
		 (long long)twohost_counter("pages_pinned"),
		 (long long)twohost_counter("mrs_live"),
		 (long long)twohost_counter("chunks_free"),
		 (long long)twohost_counter("chunks_total"));
	return -1;
}

/*
 * Send @len bytes from @buf again and again until a send fails or none
 * completes for @bound_s seconds. Return: the last result (negative if a
 * send failed); *@sent: the sends that went through, *@took: seconds from
 * the last of them (or the start) to the end.
 */
static inline int64_t twohost_send_until_fail(struct ordma *o, uint32_t chan,
					      const void *buf, size_t len,
					      double bound_s, int *sent,
					      double *took)
{
	double last = twohost_now();
	int64_t n = 0;

	*sent = 0;
	while (n >= 0 && twohost_now() - last < bound_s) {
		n = ordma_send(o, chan, buf, len);
		if (n == (int64_t)len) {
			(*sent)++;
			last = twohost_now();
		}
	}
	*took = twohost_now() - last;
	return n;
}

#endif /* _ORDMA_TWOHOST_H */
