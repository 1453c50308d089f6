// SPDX-License-Identifier: GPL-2.0
/*
 * bsp_pingpong: two processes exchanging messages over AF_BSP sockets.
 *
 *   bsp_pingpong                    fork: both processes on this node
 *   bsp_pingpong serve PORT         answer every message (any node)
 *   bsp_pingpong ping NODE PORT     send 10 messages to (NODE, PORT) and
 *                                   check each echo
 *
 * Build: cc -Ikernel/include/uapi bsp_pingpong.c -o bsp_pingpong
 * Needs af_bsp.ko loaded; across nodes, a bsp device with rails in each
 * node and distinct net.bsp.node_id values (Documentation/admin-guide.rst).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/bsp.h>

/* The family in effect: the module may have been loaded with family=N. */
static int bsp_family(void)
{
	FILE *f = fopen(BSP_FAMILY_PARAM_PATH, "r");
	int fam = AF_BSP;

	if (f) {
		if (fscanf(f, "%d", &fam) != 1)
			fam = AF_BSP;
		fclose(f);
	}
	return fam;
}

static struct sockaddr_bsp bsp_addr(unsigned int node, unsigned int port)
{
	struct sockaddr_bsp a;

	memset(&a, 0, sizeof(a));
	a.sbsp_family = (sa_family_t)bsp_family();
	a.sbsp_node = node;
	a.sbsp_port = (unsigned short)port;
	return a;
}

/* A reliable datagram socket bound to PORT of this node (0: any port). */
static int bsp_socket(unsigned int port)
{
	struct sockaddr_bsp a = bsp_addr(BSP_NODE_LOCAL, port);
	int fd = socket(bsp_family(), SOCK_RDM, 0);

	if (fd < 0) {
		perror("socket(AF_BSP, SOCK_RDM) (is af_bsp.ko loaded?)");
		exit(1);
	}
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("bind");
		exit(1);
	}
	return fd;
}

/* Echo every message back to its sender, forever (or N messages). */
static int serve(int fd, int count)
{
	char buf[65536];

	for (int i = 0; count < 0 || i < count; i++) {
		struct sockaddr_bsp from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0,
				     (struct sockaddr *)&from, &fl);

		if (n < 0) {
			perror("recvfrom");
			return 1;
		}
		if (sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from,
			   sizeof(from)) != n) {
			perror("sendto");
			return 1;
		}
	}
	return 0;
}

/* Send 10 messages to (node, port), one at a time, and check the echoes. */
static int ping(unsigned int node, unsigned int port)
{
	struct sockaddr_bsp to = bsp_addr(node, port);
	int fd = bsp_socket(0);
	char msg[64], buf[64];

	/* connect() sets the default destination; no packet is sent */
	if (connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0) {
		perror("connect");
		return 1;
	}
	for (int i = 0; i < 10; i++) {
		int len = snprintf(msg, sizeof(msg), "ping %d", i);
		ssize_t n;

		if (send(fd, msg, (size_t)len, 0) != len) {
			perror("send");
			return 1;
		}
		n = recv(fd, buf, sizeof(buf), 0);
		if (n != len || memcmp(buf, msg, (size_t)len) != 0) {
			fprintf(stderr, "bad echo for '%s'\n", msg);
			return 1;
		}
		printf("%.*s: echoed\n", (int)n, buf);
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve(bsp_socket((unsigned int)atoi(argv[2])), -1);
	if (argc == 4 && !strcmp(argv[1], "ping"))
		return ping((unsigned int)strtoul(argv[2], NULL, 0),
			    (unsigned int)atoi(argv[3]));
	if (argc == 1) {
		/* both sides on this node: bind first, then fork */
		int fd = bsp_socket(0);
		struct sockaddr_bsp me;
		socklen_t ml = sizeof(me);
		pid_t pid;
		int st = 0, rc;

		getsockname(fd, (struct sockaddr *)&me, &ml);
		pid = fork();
		if (pid == 0)
			_exit(serve(fd, 10));
		close(fd);
		rc = ping(BSP_NODE_LOCAL, me.sbsp_port);
		waitpid(pid, &st, 0);
		return rc || !WIFEXITED(st) || WEXITSTATUS(st);
	}
	fprintf(stderr, "usage: %s | %s serve PORT | %s ping NODE PORT\n",
		argv[0], argv[0], argv[0]);
	return 2;
}
