// SPDX-License-Identifier: MIT
/*
 * receiver - the smallest ordma server: accept one channel, print each
 * message, stop after "bye".
 *
 *   receiver [PORT]                 (listens on 0.0.0.0, default port 7471)
 *
 * Build: cc -o receiver receiver.c $(pkg-config --cflags --libs ordma)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <libordma.h>

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	struct sockaddr_in peer;
	socklen_t peerlen = sizeof(peer);
	uint32_t listener, chan;
	struct ordma *o;
	char buf[4096];
	int64_t n;
	int ret;

	addr.sin_port = htons(argc > 1 ? atoi(argv[1]) : 7471);
	ret = ordma_open(&o, 0);
	if (ret) {
		fprintf(stderr, "ordma_open: %s\n", strerror(-ret));
		return 1;
	}
	ret = ordma_listen(o, (struct sockaddr *)&addr, sizeof(addr), 1,
			   &listener);
	if (!ret) {
		fprintf(stderr, "receiver: listening on port %d\n",
			ntohs(addr.sin_port));
		ret = ordma_accept(o, listener, 0, &chan,
				   (struct sockaddr *)&peer, &peerlen);
	}
	if (ret) {
		fprintf(stderr, "listen/accept: %s\n", strerror(-ret));
		ordma_close(o);
		return 1;
	}
	printf("channel from %s\n", inet_ntoa(peer.sin_addr));
	for (;;) {
		n = ordma_recv(o, chan, buf, sizeof(buf) - 1);
		if (n < 0) {
			fprintf(stderr, "ordma_recv: %s\n", strerror(-n));
			ordma_close(o);
			return 1;
		}
		buf[n] = 0;
		printf("got %lld bytes: %s\n", (long long)n, buf);
		if (!strcmp(buf, "bye"))
			break;
	}
	ordma_close(o);
	return 0;
}
