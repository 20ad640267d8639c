/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the ordma selftests.
 *
 * Guest tests load and unload kernel modules and reconfigure RDMA devices:
 * they must only ever run inside the tools/vmtest guest. Including this
 * header with ORDMA_GUEST_TEST defined makes the binary refuse to run
 * anywhere else, before any test starts.
 */
#ifndef _ORDMA_TEST_H
#define _ORDMA_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdarg.h>
#include <errno.h>
#include <sys/wait.h>

#define ORDMA_VMTEST_MARK "ordma.vmtest=1"

/* Non-zero if the kernel was booted by tools/vmtest. */
static inline int ordma_in_guest(void)
{
	char line[4096];
	FILE *f = fopen("/proc/cmdline", "r");
	int found = 0;

	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f))
		found = strstr(line, ORDMA_VMTEST_MARK) != NULL;
	fclose(f);
	return found;
}

#ifdef ORDMA_GUEST_TEST
static void __attribute__((constructor)) ordma_require_guest(void)
{
	if (ordma_in_guest())
		return;
	fprintf(stderr,
		"refusing to run: this test loads modules and reconfigures RDMA devices,\n"
		"and this kernel was not booted by tools/vmtest (no '%s' on /proc/cmdline).\n"
		"Run it in the guest: tools/vmtest -- %s\n",
		ORDMA_VMTEST_MARK, program_invocation_name);
	exit(4); /* KSFT_SKIP */
}
#endif

/*
 * ORDMA_TEST_ONLY=TEXT[,TEXT...] runs only the tests whose name (as
 * FIXTURE.TEST) holds one of the TEXTs: the others end at once and count
 * as skipped (Debian's 6.1 kselftest harness has no -t). First thing in a
 * FIXTURE_SETUP; the harness takes exit status 255 from a test's process
 * for a skip.
 */
static inline int ordma_test_picked(const char *name)
{
	const char *only = getenv("ORDMA_TEST_ONLY"), *end;
	char text[128];
	size_t len;

	if (!only)
		return 1;
	for (;; only = end + 1) {
		end = strchrnul(only, ',');
		len = end - only;
		if (len && len < sizeof(text)) {
			memcpy(text, only, len);
			text[len] = '\0';
			if (strstr(name, text))
				return 1;
		}
		if (!*end)
			return 0;
	}
}

#define ORDMA_TEST_FILTER() do {					\
	char __full[256];						\
									\
	snprintf(__full, sizeof(__full), "%s.%s",			\
		 _metadata->fixture->name, _metadata->name);		\
	if (!ordma_test_picked(__full))					\
		_exit(255);						\
} while (0)

/*
 * make check-debug runs the guest tests with ORDMA_TEST_SMALL=1 (FULL=1
 * leaves it unset): KASAN and lockdep under TCG move 1-2 MB/s, so the
 * heaviest tests take @small there instead of @full (fewer channels,
 * smaller messages, same paths).
 */
static inline size_t ordma_scaled(size_t full, size_t small)
{
	return getenv("ORDMA_TEST_SMALL") ? small : full;
}

/* The number a file (sysfs, procfs) starts with, or -1. */
static inline long long ordma_read_ll(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Run a shell command quietly; return its exit status, or -1. */
static inline int ordma_sh(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline int ordma_sh(const char *fmt, ...)
{
	char cmd[1024], full[1100];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "(%s) >/dev/null 2>&1", cmd);
	st = system(full);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Non-zero if the output of a shell command contains @needle. */
static inline int ordma_sh_contains(const char *cmd, const char *needle)
{
	char line[1024];
	FILE *p = popen(cmd, "r");
	int found = 0;

	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		if (strstr(line, needle))
			found = 1;
	pclose(p);
	return found;
}

/* The module under test, as loaded by tools/vmtest. */
static inline const char *ordma_ko(void)
{
	const char *ko = getenv("ORDMA_KO");

	return ko && *ko ? ko : "kernel/ordma.ko";
}

/* The RDMA device the rig runs the tests on: $ORDMA_TEST_IBDEV, or rxe0. */
static inline const char *ordma_ibdev(void)
{
	const char *dev = getenv("ORDMA_TEST_IBDEV");

	return dev && *dev ? dev : "rxe0";
}

/* Its link type (rdma link add DEV type TYPE): $ORDMA_TEST_DEV, or rxe. */
static inline const char *ordma_dev_type(void)
{
	const char *type = getenv("ORDMA_TEST_DEV");

	return type && *type ? type : "rxe";
}

/* The path of @attr of ordma's context for ordma_ibdev(), in @buf. */
static inline char *ordma_sysfs(char *buf, size_t len, const char *attr)
{
	snprintf(buf, len, "/sys/class/ordma/%s/%s", ordma_ibdev(), attr);
	return buf;
}

#endif /* _ORDMA_TEST_H */
