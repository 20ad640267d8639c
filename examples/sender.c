// SPDX-License-Identifier: MIT
/*
 * sender - the smallest ordma client: connect, send each argument as one
 * message, then "bye", and wait for the receiver to hang up.
 *
 *   sender HOST PORT [MESSAGE...]   (HOST: an IPv4 address)
 *
 * Build: cc -o sender sender.c $(pkg-config --cflags --libs ordma)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <libordma.h>

static int send_str(struct ordma *o, uint32_t chan, const char *s)
{
	int64_t n = ordma_send(o, chan, s, strlen(s));

	if (n < 0) {
		fprintf(stderr, "ordma_send: %s\n", strerror(-n));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	struct ordma *o;
	uint32_t chan;
	int ret, i;
	char c;

	if (argc < 3 || inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) {
		fprintf(stderr, "usage: sender HOST PORT [MESSAGE...]\n");
		return 2;
	}
	addr.sin_port = htons(atoi(argv[2]));
	ret = ordma_open(&o, 0);
	if (ret) {
		fprintf(stderr, "ordma_open: %s\n", strerror(-ret));
		return 1;
	}
	ret = ordma_connect(o, (struct sockaddr *)&addr, sizeof(addr), 0,
			    &chan);
	if (ret) {
		fprintf(stderr, "ordma_connect: %s\n", strerror(-ret));
		ordma_close(o);
		return 1;
	}
	for (i = 3; i < argc; i++)
		if (send_str(o, chan, argv[i]))
			break;
	ret = i < argc || send_str(o, chan, "bye");
	/*
	 * A message that reached the receiver before it posted a receive is
	 * dropped if we close first: let the receiver hang up first.
	 */
	if (!ret && ordma_recv(o, chan, &c, 1) != -ENOTCONN)
		ret = 1;
	ordma_close(o);
	return ret;
}
