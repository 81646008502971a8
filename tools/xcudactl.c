// SPDX-License-Identifier: MIT
/*
 * xcudactl: an administrator's check of the path from a guest process to
 * its xcudad worker, without CUDA: it opens a session the way any CUDA
 * program would (same library, same transport choice) and uses the
 * protocol's ECHO diagnostic, which the worker answers without touching
 * the GPU.
 *
 *   xcudactl ping [COUNT]     round trips of 64 bytes each way (median,
 *                             99th percentile, CPU per trip)
 *   xcudactl echo SIZE...     moves SIZE bytes (suffix K, M or G) through
 *                             the arena both ways and checks them
 *   xcudactl hold SECONDS     keeps a session busy (small ECHOs) so long
 *   xcudactl info             the session's transport and its limits
 *
 * Exit status: 0 all good, 1 a check failed, 2 usage, 3 the session
 * could not be opened or was lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "guest-lib/guest.h"
#include "xcuda/hash.h"

#define XCTL_HOLD_BYTES	4096

static void xctl_usage(FILE *f)
{
	fprintf(f,
"usage: xcudactl ping [COUNT] | echo SIZE... | hold SECONDS | info\n"
"Checks the path to xcudad with the protocol's ECHO diagnostic (no GPU\n"
"needed).  SIZE takes a K, M or G suffix.  Exit: 0 ok, 1 a check failed,\n"
"2 usage, 3 no session or session lost.\n");
}

static int xctl_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	errno = 0;
	if (!*s || *s == '-')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	else if (*end)
		return -1;
	if (shift && end[1])
		return -1;
	if (v > (UINT32_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static struct xc_session *xctl_session(void)
{
	struct xc_session *s;
	cudaError_t err;

	s = xc_session_get(&err);
	if (!s)
		fprintf(stderr, "xcudactl: no session: %s\n",
			xc_error_name(err));
	return s;
}

/*
 * One ECHO of @len bytes at arena offset @off: the worker sums what we
 * wrote and overwrites it with @pattern.  0, or the error (1: a mismatch).
 */
static int xctl_echo_one(struct xc_session *s, uint64_t off, uint32_t len,
			 uint32_t seed, uint8_t pattern, cudaError_t *cerr)
{
	struct xcuda_echo_args a = { seed, 1, pattern, 0 };
	struct xcuda_echo_res r;
	struct xcuda_request req;
	uint8_t *p = xc_arena_ptr(s, off);
	uint64_t want;
	uint32_t i, x = seed * 2654435761u + 1;

	for (i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
	want = xcuda_fnv1a64(seed, p, len);
	xc_req_echo(&req, &a);
	req.hdr.data_off = (uint32_t)off;
	req.hdr.data_len = len;
	*cerr = xc_call(s, &req, &r, sizeof(r));
	if (*cerr)
		return -1;
	if (r.checksum != want || r.bytes != len)
		return 1;
	for (i = 0; i < len; i++)
		if (p[i] != pattern)
			return 1;
	return 0;
}

/* An arena block for @len bytes, from the heap (large) or staging. */
static uint64_t xctl_block(struct xc_session *s, uint64_t len, int *heap)
{
	uint64_t off, got;

	*heap = 1;
	off = xc_arena_alloc(s->heap, len ? len : 1, XCUDA_PAGE_SIZE);
	if (off != UINT64_MAX)
		return off;
	*heap = 0;
	pthread_mutex_lock(&s->lock);
	off = xc_staging_get(s, len ? len : 1, len ? len : 1, &got);
	pthread_mutex_unlock(&s->lock);
	return off;
}

static void xctl_unblock(struct xc_session *s, uint64_t off, int heap)
{
	xc_arena_release(heap ? s->heap : s->staging, off);
}

static int xctl_echo(int n, char **sizes)
{
	struct xc_session *s;
	uint64_t len, off;
	cudaError_t err;
	int i, heap, bad = 0, r;

	for (i = 0; i < n; i++)
		if (xctl_size(sizes[i], &len)) {
			fprintf(stderr, "xcudactl: bad size '%s'\n", sizes[i]);
			return 2;
		}
	s = xctl_session();
	if (!s)
		return 3;
	for (i = 0; i < n; i++) {
		xctl_size(sizes[i], &len);
		off = xctl_block(s, len, &heap);
		if (off == UINT64_MAX) {
			printf("echo %s FAILED: larger than the arena (%llu "
			       "bytes)\n", sizes[i],
			       (unsigned long long)s->t.arena_size);
			bad = 1;
			continue;
		}
		r = xctl_echo_one(s, off, (uint32_t)len, (uint32_t)(i + 1),
				  (uint8_t)(0xa5 ^ i), &err);
		xctl_unblock(s, off, heap);
		if (r < 0) {
			printf("echo %s FAILED: %s\n", sizes[i],
			       xc_error_name(err));
			return 3;
		}
		printf("echo %s %s\n", sizes[i], r ? "FAILED: corrupted" : "ok");
		bad |= r;
	}
	return bad;
}

static int xctl_hold(const char *arg)
{
	struct timespec now, end;
	struct xc_session *s;
	unsigned long long secs;
	unsigned int rounds = 0;
	cudaError_t err;
	uint64_t off;
	char *e;
	int heap, r = 0;

	errno = 0;
	secs = strtoull(arg, &e, 10);
	if (errno || *e || !*arg || secs > 86400) {
		fprintf(stderr, "xcudactl: bad duration '%s'\n", arg);
		return 2;
	}
	s = xctl_session();
	if (!s)
		return 3;
	off = xctl_block(s, XCTL_HOLD_BYTES, &heap);
	if (off == UINT64_MAX)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)secs;
	do {
		r = xctl_echo_one(s, off, XCTL_HOLD_BYTES, rounds, 0x3c, &err);
		if (r < 0) {
			printf("hold: session lost: %s\n", xc_error_name(err));
			fflush(stdout);
			return 3;
		}
		if (r) {
			printf("hold: round %u corrupted\n", rounds);
			return 1;
		}
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec ||
		 (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	xctl_unblock(s, off, heap);
	printf("hold: %u rounds ok\n", rounds);
	return 0;
}

static int xctl_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double xctl_cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * @count round trips of 64 bytes each way; with more than one, the
 * median and 99th percentile, and the CPU this process spent per trip
 * (what spinning for answers costs this side).
 */
static int xctl_ping(unsigned int count)
{
	struct timespec t0, t1;
	struct xc_session *s;
	double *us, cpu0, cpu1;
	cudaError_t err;
	uint64_t off;
	unsigned int i;
	int heap, r = 0;

	s = xctl_session();
	if (!s)
		return 3;
	us = calloc(count, sizeof(*us));
	off = xctl_block(s, 64, &heap);
	if (!us || off == UINT64_MAX) {
		free(us);
		return 1;
	}
	cpu0 = xctl_cpu_s();
	for (i = 0; i < count && !r; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		r = xctl_echo_one(s, off, 64, i + 7, 0x5a, &err);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		us[i] = (double)(t1.tv_sec - t0.tv_sec) * 1e6 +
			(double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
	}
	cpu1 = xctl_cpu_s();
	xctl_unblock(s, off, heap);
	if (r < 0) {
		printf("ping FAILED: %s\n", xc_error_name(err));
		free(us);
		return 3;
	}
	if (r) {
		printf("ping FAILED: corrupted\n");
		free(us);
		return 1;
	}
	if (count == 1) {
		printf("ping ok: %s transport, %.0f us\n", s->t.ops->name,
		       us[0]);
	} else {
		qsort(us, count, sizeof(*us), xctl_cmp_double);
		printf("ping ok: %s transport, %u round trips: median %.2f us,"
		       " p99 %.2f us, this process's CPU %.2f us each\n",
		       s->t.ops->name, count, us[count / 2],
		       us[(size_t)count * 99 / 100], (cpu1 - cpu0) * 1e6 / count);
	}
	free(us);
	return 0;
}

static int xctl_info(void)
{
	struct xc_session *s = xctl_session();

	if (!s)
		return 3;
	printf("transport %s\nsession %08x\narena %llu bytes\nslots %u\n"
	       "version %u\nfeatures %#x\ndevices %d\ncuda init status %d "
	       "(%s)\ndriver %d\nruntime %d\n",
	       s->t.ops->name, s->t.session,
	       (unsigned long long)s->t.arena_size, s->t.ring_slots,
	       s->info.version, s->info.features, s->info.device_count,
	       s->info.init_status, xc_error_name(s->info.init_status),
	       s->info.driver_version, s->info.runtime_version);
	return 0;
}

/*
 * Enough arena for the largest SIZE (the heap is what is left after the
 * staging area): unless the user chose, ask for it.
 */
static void xctl_arena_for(int n, char **sizes)
{
	uint64_t len, max = 0;
	char buf[32];
	int i;

	if (getenv("XCUDA_ARENA_MB"))
		return;
	for (i = 0; i < n; i++)
		if (!xctl_size(sizes[i], &len) && len > max)
			max = len;
	snprintf(buf, sizeof(buf), "%llu",
		 (unsigned long long)((max >> 20) + 2));
	setenv("XCUDA_ARENA_MB", buf, 1);
	setenv("XCUDA_STAGING_MB", "1", 0);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		xctl_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		xctl_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "ping") && argc <= 3) {
		unsigned long n = 1;
		char *e = NULL;

		if (argc == 3) {
			errno = 0;
			n = strtoul(argv[2], &e, 10);
			if (errno || *e || !n || n > 10000000) {
				xctl_usage(stderr);
				return 2;
			}
		}
		return xctl_ping((unsigned int)n);
	}
	if (!strcmp(argv[1], "echo") && argc > 2) {
		xctl_arena_for(argc - 2, argv + 2);
		return xctl_echo(argc - 2, argv + 2);
	}
	if (!strcmp(argv[1], "hold") && argc == 3)
		return xctl_hold(argv[2]);
	if (!strcmp(argv[1], "info") && argc == 2)
		return xctl_info();
	xctl_usage(stderr);
	return 2;
}
