/* SPDX-License-Identifier: MIT */
/*
 * tcp-raw: raw loopback TCP throughput, the yardstick for xcuda's
 * upstream link (run-bench.sh compares its 64 MiB copies with it).
 *
 * One connection over 127.0.0.1 on an ephemeral port, within one
 * process: a thread sends SIZE bytes with as few send()s as the kernel
 * allows, the main thread recv()s them into a buffer and touches nothing
 * else.  Each of REPS transfers is timed at the receiver, from the
 * one-byte "go" it sends the sender to the last byte in; the median is
 * printed as xcuda-bench prints its rows (GB = 1e9 bytes):
 *
 *   metric,size_bytes,value,unit
 *   tcp_raw,67108864,<GB/s>,GB/s
 *
 *   tcp-raw [--size BYTES] [--reps N]     (defaults: 64 MiB, 7)
 *
 * Exit status: 0, 1 when the transfer fails, 2 for bad options.
 */
/* clock_gettime() and MSG_NOSIGNAL under -std=c11 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

struct sender {
	int fd;
	size_t size;
	const unsigned char *buf;
	const char *what;	/* the call that failed, or NULL */
	int err;		/* its errno */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The same median as xcuda-bench's: the upper one of an even count. */
static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/*
 * Per "go" byte, SIZE bytes; until the receiver closes its side.  On
 * failure the socket is shut down so that the receiver is not left
 * waiting.
 */
static void *sender_main(void *arg)
{
	struct sender *s = arg;
	char go;

	for (;;) {
		ssize_t r = recv(s->fd, &go, 1, 0);

		if (r == 0)
			return NULL;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			s->what = "recv";
			break;
		}
		size_t done = 0;

		while (done < s->size) {
			ssize_t w = send(s->fd, s->buf + done, s->size - done,
					 MSG_NOSIGNAL);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				s->what = "send";
				break;
			}
			done += (size_t)w;
		}
		if (s->what)
			break;
	}
	s->err = errno;
	shutdown(s->fd, SHUT_RDWR);
	return NULL;
}

/* One transfer into @buf: 0, or -1 with the reason printed. */
static int receive(int fd, unsigned char *buf, size_t size)
{
	size_t got = 0;
	char go = 1;

	while (send(fd, &go, 1, MSG_NOSIGNAL) != 1) {
		if (errno != EINTR) {
			fprintf(stderr, "tcp-raw: send: %s\n", strerror(errno));
			return -1;
		}
	}
	while (got < size) {
		ssize_t r = recv(fd, buf + got, size - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "tcp-raw: recv: %s\n", strerror(errno));
			return -1;
		}
		if (r == 0) {
			fprintf(stderr, "tcp-raw: the sender closed the "
				"connection after %zu of %zu bytes\n", got,
				size);
			return -1;
		}
		got += (size_t)r;
	}
	return 0;
}

/* A connected pair over 127.0.0.1, the port the kernel's choice: 0/-1. */
static int connect_pair(int *snd, int *rcv)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int lfd, one = 1;

	*snd = *rcv = -1;
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0) {
		perror("tcp-raw: socket");
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 1) ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen)) {
		perror("tcp-raw: listen on 127.0.0.1");
		close(lfd);
		return -1;
	}
	*snd = socket(AF_INET, SOCK_STREAM, 0);
	/* The kernel completes the handshake before accept(): no thread. */
	if (*snd < 0 || connect(*snd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "tcp-raw: connect to 127.0.0.1:%u: %s\n",
			ntohs(a.sin_port), strerror(errno));
		goto fail;
	}
	*rcv = accept(lfd, NULL, NULL);
	if (*rcv < 0) {
		perror("tcp-raw: accept");
		goto fail;
	}
	close(lfd);
	/* As the upstream link sets its sockets (up_link.c). */
	setsockopt(*snd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(*rcv, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
fail:
	close(lfd);
	if (*snd >= 0)
		close(*snd);
	*snd = -1;
	return -1;
}

static int usage(void)
{
	fprintf(stderr, "usage: tcp-raw [--size BYTES] [--reps N]\n");
	return 2;
}

int main(int argc, char **argv)
{
	size_t size = (size_t)64 << 20;
	int reps = 7;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--size") && i + 1 < argc) {
			unsigned long long v;

			errno = 0;
			v = strtoull(argv[++i], &end, 10);
			if (errno || *end || end == argv[i] || !v ||
			    argv[i][0] == '-' || v > (size_t)-1 / 2) {
				fprintf(stderr, "tcp-raw: --size: '%s' is not "
					"a byte count\n", argv[i]);
				return 2;
			}
			size = (size_t)v;
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			long v = strtol(argv[++i], &end, 10);

			/* The same bounds as xcuda-bench's. */
			if (*end || end == argv[i] || v < 1 || v > 1000) {
				fprintf(stderr, "tcp-raw: --reps: '%s' is not "
					"1 to 1000\n", argv[i]);
				return 2;
			}
			reps = (int)v;
		} else {
			return usage();
		}
	}

	unsigned char *sbuf = malloc(size), *rbuf = malloc(size);
	double *gbps = calloc(reps, sizeof(*gbps));
	struct sender s = { .size = size };
	pthread_t th;
	int rfd, rc = 1, e, r = -1;

	if (!sbuf || !rbuf || !gbps) {
		fprintf(stderr, "tcp-raw: cannot allocate 2 x %zu bytes\n",
			size);
		goto out;
	}
	/* Touched first: page faults are not the link's cost. */
	memset(sbuf, 0x5a, size);
	memset(rbuf, 0, size);
	s.buf = sbuf;
	if (connect_pair(&s.fd, &rfd))
		goto out;
	e = pthread_create(&th, NULL, sender_main, &s);
	if (e) {
		fprintf(stderr, "tcp-raw: pthread_create: %s\n", strerror(e));
		close(s.fd);
		close(rfd);
		goto out;
	}

	/* One untimed transfer first: the windows grow to their size. */
	if (!receive(rfd, rbuf, size)) {
		for (r = 0; r < reps; r++) {
			double t0 = now_s();

			if (receive(rfd, rbuf, size))
				break;
			gbps[r] = (double)size / (now_s() - t0) / 1e9;
		}
	}
	if (r == reps) {
		/* EOF for the sender: it ends its loop. */
		shutdown(rfd, SHUT_WR);
	} else {
		/*
		 * Unread bytes make this a reset: a sender blocked in
		 * send() fails rather than waits for us.
		 */
		close(rfd);
		rfd = -1;
	}
	pthread_join(th, NULL);
	close(s.fd);
	if (rfd >= 0)
		close(rfd);
	if (s.what)
		fprintf(stderr, "tcp-raw: the sender's %s: %s\n", s.what,
			strerror(s.err));
	if (r == reps && !s.what) {
		printf("metric,size_bytes,value,unit\n");
		printf("tcp_raw,%zu,%.6g,GB/s\n", size, median(gbps, reps));
		rc = fflush(stdout) ? 1 : 0;
	}
out:
	free(sbuf);
	free(rbuf);
	free(gbps);
	return rc;
}
