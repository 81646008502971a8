// SPDX-License-Identifier: MIT
/*
 * xc_par_memcpy (guest-lib/copy_pool.c): every byte lands where memcpy
 * would put it and nowhere else, whatever the size and alignment, from
 * several threads at once and in a child after fork; and the helpers
 * really run (they show up as threads of the process, named xcuda-copy).
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest-lib/guest.h"
#include "check.h"

#define GUARD 4096
#define THREADS 4

/*
 * The pool's helpers ("xcuda-copy") alive in this process: a sanitizer's
 * own threads do not count.
 */
static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	char path[300], comm[32];
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) &&
		    !strcmp(comm, "xcuda-copy\n"))
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

/* Copies @len bytes at odd offsets; 1 if exact and the guards intact. */
static int copy_ok(size_t len, size_t soff, size_t doff, uint32_t seed)
{
	uint8_t *src = malloc(len + soff + 1);
	uint8_t *dst = malloc(len + doff + 2 * GUARD);
	uint8_t *d = dst + GUARD + doff;
	int ok = 1;

	if (!src || !dst) {
		free(src);
		free(dst);
		return 0;
	}
	fill(src + soff, len, seed);
	memset(dst, 0xa5, len + doff + 2 * GUARD);
	xc_par_memcpy(d, src + soff, len);
	if (len && memcmp(d, src + soff, len))
		ok = 0;
	for (size_t i = 0; i < GUARD + doff; i++)
		if (dst[i] != 0xa5)
			ok = 0;
	for (size_t i = 0; i < GUARD; i++)
		if (d[len + i] != 0xa5)
			ok = 0;
	free(src);
	free(dst);
	return ok;
}

static void *worker(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	int ok = 1;

	for (int i = 0; i < 20; i++)
		ok &= copy_ok((3u << 20) + 17 * id, id, 2 * id, (uint32_t)i);
	return (void *)(uintptr_t)ok;
}

int main(void)
{
	static const size_t sizes[] = {
		0, 1, 63, 4096, (256u << 10) - 1, 256u << 10, (512u << 10) + 13,
		(4u << 20) + 7, 16u << 20, (64u << 20) + 4095,
	};
	pthread_t t[THREADS];
	int before, ok;

	setenv("XCUDA_COPY_THREADS", "4", 1);
	before = count_threads();
	xc_par_memcpy(NULL, NULL, 0);
	CHECK_EQ(count_threads(), before, "pool-no-helpers-for-small-copies");

	ok = 1;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (size_t off = 0; off < 3; off++)
			ok &= copy_ok(sizes[i], off * 7, off * 5, (uint32_t)i);
	CHECK(ok, "pool-copies-exactly-every-size-and-alignment");
	CHECK_EQ(count_threads(), before + 3, "pool-started-three-helpers");

	ok = 1;
	for (uintptr_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++) {
		void *r;

		pthread_join(t[i], &r);
		ok &= (int)(uintptr_t)r;
	}
	CHECK(ok, "pool-concurrent-callers");

	/* Helpers asleep for a while must still wake for the next round. */
	usleep(50000);
	CHECK(copy_ok(8u << 20, 1, 3, 99), "pool-wakes-sleeping-helpers");

	pid_t pid = fork();
	if (!pid) {
		int n = count_threads();

		if (!copy_ok(8u << 20, 0, 0, 7))
			_exit(1);
		_exit(count_threads() == n + 3 ? 0 : 2);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "pool-child-after-fork-starts-its-own",
		  "child's wait status %#x (exit 1: bad copy, 2: no helpers)",
		  st);
	return check_summary();
}
