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
 * printed as xcuda-bench prints its rows (GB = 1e9 bytes).
 *
 * Then the round trip, the floor under every synchronous call over the
 * link: a thread echoes 64-byte messages on a second connection, and the
 * main thread times RTT_ROUNDS of them per repetition, once with both
 * sides reading as the link does while it spins (recv() with
 * MSG_DONTWAIT, again and again), once sleeping in recv().  Each row is
 * the median over REPS of the mean round trip:
 *
 *   metric,size_bytes,value,unit
 *   tcp_raw,67108864,<GB/s>,GB/s
 *   tcp_rtt_spin,64,<us>,us
 *   tcp_rtt_sleep,64,<us>,us
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

/* @len bytes into @p, spinning or sleeping: 0, 1 at end of file, or -1. */
static int recv_all(int fd, void *p, size_t len, int spin)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = recv(fd, (char *)p + got, len - got,
				 spin ? MSG_DONTWAIT : 0);

		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (!r)
			return 1;
		if (errno != EINTR && !(spin && errno == EAGAIN))
			return -1;
	}
	return 0;
}

static int send_all(int fd, const void *p, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t w = send(fd, (const char *)p + done, len - done,
				 MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		done += (size_t)w;
	}
	return 0;
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
	int r;

	while (!(r = recv_all(s->fd, &go, 1, 0))) {
		if (send_all(s->fd, s->buf, s->size)) {
			s->what = "send";
			break;
		}
	}
	if (r < 0)
		s->what = "recv";
	if (s->what)
		s->err = errno;
	shutdown(s->fd, SHUT_RDWR);
	return NULL;
}

/* One transfer into @buf: 0, or -1 with the reason printed. */
static int receive(int fd, unsigned char *buf, size_t size)
{
	size_t got = 0;
	char go = 1;

	if (send_all(fd, &go, 1)) {
		fprintf(stderr, "tcp-raw: send: %s\n", strerror(errno));
		return -1;
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

/* ---- round trips ---- */

#define RTT_BYTES	64
#define RTT_ROUNDS	2000

struct echo {
	int fd;
	int spin;
	const char *what;	/* the call that failed, or NULL */
	int err;
};

/* Each message back as it came, until end of file. */
static void *echo_main(void *arg)
{
	struct echo *e = arg;
	char m[RTT_BYTES];
	int r;

	while (!(r = recv_all(e->fd, m, sizeof(m), e->spin))) {
		if (send_all(e->fd, m, sizeof(m))) {
			e->what = "send";
			break;
		}
	}
	if (r < 0)
		e->what = "recv";
	e->err = errno;
	shutdown(e->fd, SHUT_RDWR);
	return NULL;
}

/* One round of @n round trips on @fd: seconds, or -1. */
static double rtt_round(int fd, int n, int spin)
{
	char m[RTT_BYTES];
	double t0 = now_s();

	memset(m, 0x5a, sizeof(m));
	for (int i = 0; i < n; i++)
		if (send_all(fd, m, sizeof(m)) ||
		    recv_all(fd, m, sizeof(m), spin))
			return -1;
	return now_s() - t0;
}

/* The median over @reps of a round trip's mean, in us; -1 on failure. */
static double round_trips(int reps, int spin)
{
	struct echo e = { .spin = spin };
	double *us = calloc(reps, sizeof(*us)), t = 0, res = -1;
	pthread_t th;
	int fd, r, err;

	if (!us || connect_pair(&fd, &e.fd)) {
		free(us);
		return -1;
	}
	err = pthread_create(&th, NULL, echo_main, &e);
	if (err) {
		fprintf(stderr, "tcp-raw: pthread_create: %s\n", strerror(err));
		close(fd);
		close(e.fd);
		free(us);
		return -1;
	}
	/* One untimed round first, as for the throughput. */
	t = rtt_round(fd, RTT_ROUNDS / 10, spin);
	for (r = 0; t >= 0 && r < reps; r++) {
		t = rtt_round(fd, RTT_ROUNDS, spin);
		us[r] = t * 1e6 / RTT_ROUNDS;
	}
	shutdown(fd, SHUT_WR);
	pthread_join(th, NULL);
	if (t < 0)
		fprintf(stderr, "tcp-raw: round trips (%s): %s\n",
			spin ? "spinning" : "sleeping",
			e.what ? e.what : "the echo ended");
	else if (e.what)
		fprintf(stderr, "tcp-raw: the echo's %s: %s\n", e.what,
			strerror(e.err));
	else
		res = median(us, reps);
	close(fd);
	close(e.fd);
	free(us);
	return res;
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
		double spin = round_trips(reps, 1);
		double sleep = spin < 0 ? -1 : round_trips(reps, 0);

		if (sleep >= 0) {
			printf("metric,size_bytes,value,unit\n");
			printf("tcp_raw,%zu,%.6g,GB/s\n", size,
			       median(gbps, reps));
			printf("tcp_rtt_spin,%d,%.4g,us\n", RTT_BYTES, spin);
			printf("tcp_rtt_sleep,%d,%.4g,us\n", RTT_BYTES, sleep);
			rc = fflush(stdout) ? 1 : 0;
		}
	}
out:
	free(sbuf);
	free(rbuf);
	free(gbps);
	return rc;
}
