/* SPDX-License-Identifier: MIT */
/*
 * Fatbinaries from shared libraries: the program, a library it links
 * against (libxct_sl_kern.so) and a library it dlopens, uses, dlcloses and
 * dlopens again (libxct_sl_plugin.so) each register their own.
 */
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>
#include "../common/xct.h"
#include "kern.h"

static __global__ void fill(int *p, int n, int k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = -i * k;
}

static int check(const int *h, int n, int (*f)(int, int), int k)
{
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += h[i] != f(i, k);
	return bad;
}

static int f_main(int i, int k) { return -i * k; }
static int f_lib(int i, int k) { return i * k + 1; }
static int f_plugin(int i, int k) { return k - i; }

static sl_plugin_fn load_plugin(void **handle)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	REQUIRE(len > 0, "readlink /proc/self/exe");
	exe[len] = 0;
	char *slash = strrchr(exe, '/');
	*slash = 0;
	snprintf(path, sizeof(path), "%s/libxct_sl_plugin.so", exe);
	*handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	REQUIRE(*handle, "dlopen libxct_sl_plugin.so: %s", dlerror());
	sl_plugin_fn f = (sl_plugin_fn)dlsym(*handle, "sl_plugin_run");
	REQUIRE(f, "dlsym sl_plugin_run");
	return f;
}

int main(void)
{
	CK(cudaSetDevice(0));
	const int n = 3000;
	int *d, h[n];
	CK(cudaMalloc(&d, sizeof(h)));

	fill<<<(n + 255) / 256, 256>>>(d, n, 3);
	CKLAUNCH();
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	int bad = check(h, n, f_main, 3);
	printf("main fill: bad=%d\n", bad);
	REQUIRE(bad == 0, "main's kernel");

	CK((cudaError_t)sl_lib_run(d, n, 4));
	CK((cudaError_t)sl_lib_run(d, n, 5));
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	bad = check(h, n, f_lib, 5);
	printf("lib fill: bad=%d counter=%d\n", bad, sl_lib_counter());
	REQUIRE(bad == 0 && sl_lib_counter() == 2, "linked library's kernel");

	for (int round = 0; round < 2; round++) {
		void *handle;
		sl_plugin_fn run = load_plugin(&handle);
		int before = 0;
		CK((cudaError_t)run(d, n, &before));
		CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
		bad = check(h, n, f_plugin, before);
		printf("plugin round %d: value before=%d bad=%d\n", round,
		       before, bad);
		REQUIRE(bad == 0, "plugin kernel");
		CK((cudaError_t)run(d, n, &before));
		printf("plugin round %d: value after one run=%d\n", round,
		       before);
		REQUIRE(dlclose(handle) == 0, "dlclose: %s", dlerror());
	}

	/* main's kernel still works after the plugin went away */
	fill<<<(n + 255) / 256, 256>>>(d, n, 7);
	CKLAUNCH();
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	bad = check(h, n, f_main, 7);
	printf("main fill again: bad=%d\n", bad);
	REQUIRE(bad == 0, "main's kernel after dlclose");
	CK(cudaFree(d));
	return xct_finish("shared_lib");
}
