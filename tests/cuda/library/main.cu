// SPDX-License-Identifier: MIT
/*
 * cudaLibrary_t: images loaded at run time (fatbinary, cubin, PTX, from
 * memory and from a file), their kernels launched through cudaKernel_t,
 * their globals, kernel enumeration, and the errors of each.
 */
#include <unistd.h>

#include "../common/xct.h"
#include "images.h"

static int run_add_one(cudaLibrary_t lib, const char *what)
{
	const int n = 1000;
	cudaKernel_t k = NULL;
	int *d, h[n], bad = 0;

	CK(cudaLibraryGetKernel(&k, lib, "add_one"));
	CK(cudaMalloc(&d, n * sizeof(int)));
	for (int i = 0; i < n; i++)
		h[i] = i;
	CK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
	int len = n;
	void *args[] = { &d, &len };
	CK(cudaLaunchKernel((const void *)k, dim3((n + 127) / 128), dim3(128),
			    args, 0, 0));
	CK(cudaLaunchKernel((const void *)k, dim3((n + 127) / 128), dim3(128),
			    args, 0, 0));
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i++)
		bad += h[i] != i + 2;
	CK(cudaFree(d));
	printf("%s: add_one twice, bad=%d\n", what, bad);
	return bad;
}

static void globals(cudaLibrary_t a, cudaLibrary_t b)
{
	int *ca = NULL, *cb = NULL, va = 0, vb = 0, by = 3;
	size_t bytes = 0;
	cudaKernel_t ka, kb;
	void *args[] = { &by };

	CK(cudaLibraryGetGlobal((void **)&ca, &bytes, a, "counter"));
	printf("counter: %zu bytes\n", bytes);
	CK(cudaLibraryGetGlobal((void **)&cb, NULL, b, "counter"));
	printf("two loads, two counters: %d\n", ca != cb);
	CK(cudaLibraryGetKernel(&ka, a, "bump"));
	CK(cudaLibraryGetKernel(&kb, b, "bump"));
	CK(cudaLaunchKernel((const void *)ka, dim3(1), dim3(32), args, 0, 0));
	by = 10;
	CK(cudaLaunchKernel((const void *)kb, dim3(1), dim3(32), args, 0, 0));
	CK(cudaMemcpy(&va, ca, sizeof(int), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(&vb, cb, sizeof(int), cudaMemcpyDeviceToHost));
	printf("counters after bumps: %d %d\n", va, vb);
	va = 100;
	CK(cudaMemcpy(ca, &va, sizeof(int), cudaMemcpyHostToDevice));
	CK(cudaLaunchKernel((const void *)ka, dim3(1), dim3(32), args, 0, 0));
	CK(cudaMemcpy(&va, ca, sizeof(int), cudaMemcpyDeviceToHost));
	printf("counter written then bumped: %d\n", va);
}

static void managed(cudaLibrary_t lib)
{
	int *m = NULL, *again = NULL;
	size_t bytes = 0;
	cudaKernel_t k;

	CK(cudaLibraryGetManaged((void **)&m, &bytes, lib, "mcount"));
	printf("managed: %zu bytes, initial %d\n", bytes, *m);
	*m = 40;
	CK(cudaLibraryGetKernel(&k, lib, "bump_managed"));
	CK(cudaLaunchKernel((const void *)k, dim3(1), dim3(32), NULL, 0, 0));
	CK(cudaDeviceSynchronize());
	printf("managed after a kernel: %d\n", *m);
	CK(cudaLibraryGetManaged((void **)&again, NULL, lib, "mcount"));
	printf("managed again, same address: %d\n", again == m);
	SHOW(cudaLibraryGetManaged((void **)&again, &bytes, lib, "counter"));
	SHOW(cudaLibraryGetManaged((void **)&again, &bytes, lib, "nothing"));
}

static void kernels(cudaLibrary_t lib)
{
	unsigned int n = 0;
	cudaKernel_t ks[8] = { 0 }, k = NULL, s = NULL;
	int found = 0, found_s = 0;

	CK(cudaLibraryGetKernelCount(&n, lib));
	printf("kernels: %u\n", n);
	if (n > 8)
		n = 8;
	CK(cudaLibraryEnumerateKernels(ks, n, lib));
	CK(cudaLibraryGetKernel(&k, lib, "add_one"));
	CK(cudaLibraryGetKernel(&s, lib, "big_smem"));
	for (unsigned int i = 0; i < n; i++) {
		found += ks[i] == k;
		found_s += ks[i] == s;
	}
	printf("enumerated add_one %d, big_smem %d\n", found, found_s);
	cudaKernel_t again = NULL;
	CK(cudaLibraryGetKernel(&again, lib, "add_one"));
	printf("same kernel again: %d\n", again == k);

	/* A kernel attribute for one device, then a launch that needs it. */
	int *d, out = 0;
	const int threads = 1024;
	size_t smem = 80 * 1024;
	void *args[] = { &d };
	CK(cudaMalloc(&d, sizeof(int)));
	SHOW(cudaLaunchKernel((const void *)s, dim3(1), dim3(threads), args,
			      smem, 0));
	cudaGetLastError();
	SHOW(cudaKernelSetAttributeForDevice(s,
		cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem, 0));
	SHOW(cudaLaunchKernel((const void *)s, dim3(1), dim3(threads), args,
			      smem, 0));
	CK(cudaMemcpy(&out, d, sizeof(int), cudaMemcpyDeviceToHost));
	printf("big_smem: %d\n", out);
	SHOW(cudaKernelSetAttributeForDevice(s,
		cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem, 99));
	CK(cudaFree(d));
}

int main(void)
{
	cudaLibrary_t fat = NULL, fat2 = NULL, cub = NULL, ptx = NULL;
	cudaLibrary_t file = NULL, bad = NULL;
	cudaKernel_t k = NULL;

	CK(cudaSetDevice(0));
	CK(cudaLibraryLoadData(&fat, lib_fatbin, NULL, NULL, 0, NULL, NULL,
			       0));
	CK(cudaLibraryLoadData(&fat2, lib_fatbin, NULL, NULL, 0, NULL, NULL,
			       0));
	CK(cudaLibraryLoadData(&cub, lib_cubin, NULL, NULL, 0, NULL, NULL,
			       0));
	CK(cudaLibraryLoadData(&ptx, lib_ptx, NULL, NULL, 0, NULL, NULL, 0));
	run_add_one(fat, "fatbinary");
	run_add_one(cub, "cubin");
	run_add_one(ptx, "ptx");
	globals(fat, fat2);
	managed(fat);
	kernels(cub);

	/* From a file: the PTX, written out first. */
	char path[] = "/tmp/xct_libraryXXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, lib_ptx, strlen((const char *)lib_ptx)) < 0) {
		printf("cannot write %s\n", path);
		return 1;
	}
	close(fd);
	CK(cudaLibraryLoadFromFile(&file, path, NULL, NULL, 0, NULL, NULL,
				   0));
	unlink(path);
	run_add_one(file, "file");
	SHOW(cudaLibraryLoadFromFile(&bad, "/nonexistent/xct.ptx", NULL, NULL,
				     0, NULL, NULL, 0));

	/* Errors. */
	SHOW(cudaLibraryGetKernel(&k, fat, "no_such_kernel"));
	SHOW(cudaLibraryGetGlobal((void **)&k, NULL, fat, "no_such_var"));
	SHOW(cudaLibraryLoadData(&bad, "this is not an image", NULL, NULL, 0,
				 NULL, NULL, 0));
	SHOW(cudaLibraryLoadData(NULL, lib_ptx, NULL, NULL, 0, NULL, NULL,
				 0));
	SHOW(cudaLibraryGetKernel(NULL, fat, "add_one"));

	CK(cudaLibraryUnload(fat2));
	CK(cudaLibraryUnload(cub));
	CK(cudaLibraryUnload(ptx));
	CK(cudaLibraryUnload(file));
	run_add_one(fat, "fatbinary after the others went");
	CK(cudaLibraryUnload(fat));
	return xct_finish("library");
}
