// SPDX-License-Identifier: GPL-2.0
/*
 * ordma-bench - measure ordma transfers on one RDMA device, in the guest.
 *
 *   ordma-bench [-n ITER] [-a ADDR] [-p PORT] [SIZE...]
 *
 * For now it measures the copy path with send/recv ping-pong between two
 * processes over a loopback channel: for each size, ITER round trips of a
 * message from a fresh (touched, never registered) buffer, each side
 * checking the bytes it received. It prints the median and minimum one-way
 * time (half a round trip) and the bandwidth that median gives.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <linux/ordma.h>

static const char *host = "192.0.2.1";
static unsigned short port = 18777;
static int iters = 11;

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void die(const char *what)
{
	fprintf(stderr, "ordma-bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct ordma_addr bench_addr(void)
{
	struct ordma_addr a = { .family = AF_INET, .port = htons(port) };

	if (inet_pton(AF_INET, host, a.addr) != 1) {
		fprintf(stderr, "ordma-bench: bad IPv4 address %s\n", host);
		exit(2);
	}
	return a;
}

static long long xfer(int fd, __u32 op, __u32 chan, void *buf, size_t len)
{
	struct ordma_submit s = {
		.size = sizeof(s), .op = op, .chan_id = chan,
		.addr = (unsigned long)buf, .len = len,
	};
	struct ordma_cqe c;
	struct ordma_wait w = {
		.size = sizeof(w), .cqes = (unsigned long)&c, .max = 1,
		.timeout_ms = 60000,
	};

	if (ioctl(fd, ORDMA_IOC_SUBMIT, &s) || ioctl(fd, ORDMA_IOC_WAIT, &w))
		return -errno;
	return c.res;
}

/* A buffer nobody registered, touched so its pages exist. */
static unsigned char *fresh(size_t len, unsigned char seed)
{
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 31 + seed);
	return p;
}

static int check(const unsigned char *p, size_t len, unsigned char seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (unsigned char)(i * 31 + seed))
			return -1;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The echo side: receive each message, check it, send it back. */
static void echo(int ready, size_t *sizes, int nsizes)
{
	struct ordma_listen l = { .size = sizeof(l), .addr = bench_addr() };
	struct ordma_accept a = { .size = sizeof(a) };
	int fd = open("/dev/ordma", O_RDWR);

	if (fd < 0 || ioctl(fd, ORDMA_IOC_LISTEN, &l))
		die("listen");
	if (write(ready, "r", 1) != 1)
		die("pipe");
	a.listener_id = l.out_id;
	if (ioctl(fd, ORDMA_IOC_ACCEPT, &a))
		die("accept");
	for (int s = 0; s < nsizes; s++) {
		for (int i = 0; i < iters; i++) {
			unsigned char *b = fresh(sizes[s], 0);

			if (xfer(fd, ORDMA_OP_RECV, a.out_chan_id, b,
				 sizes[s]) != (long long)sizes[s] ||
			    check(b, sizes[s], (unsigned char)i))
				_exit(3);
			if (xfer(fd, ORDMA_OP_SEND, a.out_chan_id, b,
				 sizes[s]) != (long long)sizes[s])
				_exit(4);
			munmap(b, sizes[s]);
		}
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	size_t defaults[] = { 4096, 65536, 262144, 1 << 20, 4 << 20,
			      16 << 20 };
	size_t *sizes = defaults;
	int nsizes = sizeof(defaults) / sizeof(defaults[0]);
	struct ordma_connect c = { .size = sizeof(c) };
	int opt, ready[2], fd, st;
	double *t;
	pid_t pid;
	char ch;

	while ((opt = getopt(argc, argv, "n:a:p:")) != -1) {
		switch (opt) {
		case 'n': iters = atoi(optarg); break;
		case 'a': host = optarg; break;
		case 'p': port = (unsigned short)atoi(optarg); break;
		default:
			fprintf(stderr, "usage: ordma-bench [-n ITER] [-a ADDR] [-p PORT] [SIZE...]\n");
			return 2;
		}
	}
	if (iters < 1) {
		fprintf(stderr, "ordma-bench: -n wants at least 1\n");
		return 2;
	}
	if (optind < argc) {
		nsizes = argc - optind;
		sizes = calloc(nsizes, sizeof(*sizes));
		for (int i = 0; i < nsizes; i++)
			sizes[i] = strtoull(argv[optind + i], NULL, 0);
	}
	t = calloc(iters, sizeof(*t));
	if (!t || pipe(ready))
		die("setup");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid)
		echo(ready[1], sizes, nsizes);
	if (read(ready[0], &ch, 1) != 1)
		die("echo side");

	fd = open("/dev/ordma", O_RDWR);
	c.addr = bench_addr();
	if (fd < 0 || ioctl(fd, ORDMA_IOC_CONNECT, &c))
		die("connect");
	printf("# copy path, send/recv ping-pong on a loopback channel, %d iterations,\n", iters);
	printf("# fresh unregistered buffers; one-way = half a round trip\n");
	printf("%12s %14s %14s %12s\n", "bytes", "median_us", "min_us", "MB/s");
	for (int s = 0; s < nsizes; s++) {
		for (int i = 0; i < iters; i++) {
			unsigned char *b = fresh(sizes[s], (unsigned char)i);
			double t0 = now_us();

			if (xfer(fd, ORDMA_OP_SEND, c.out_chan_id, b,
				 sizes[s]) != (long long)sizes[s] ||
			    xfer(fd, ORDMA_OP_RECV, c.out_chan_id, b,
				 sizes[s]) != (long long)sizes[s]) {
				fprintf(stderr, "ordma-bench: transfer failed\n");
				return 1;
			}
			t[i] = (now_us() - t0) / 2;
			if (check(b, sizes[s], (unsigned char)i)) {
				fprintf(stderr, "ordma-bench: data mismatch\n");
				return 1;
			}
			munmap(b, sizes[s]);
		}
		qsort(t, iters, sizeof(*t), cmp_double);
		printf("%12zu %14.1f %14.1f %12.1f\n", sizes[s], t[iters / 2],
		       t[0], sizes[s] / t[iters / 2]);
	}
	close(fd);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "ordma-bench: echo side failed\n");
		return 1;
	}
	return 0;
}
