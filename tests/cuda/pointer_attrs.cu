/* SPDX-License-Identifier: MIT */
/*
 * cudaPointerGetAttributes on cudaMalloc memory (and an interior pointer),
 * cudaMallocHost memory, cudaHostAlloc memory, malloc memory, a stack
 * address and NULL.  Only the type, the device and whether the returned
 * pointers equal the ones passed are printed.
 */
#include "common/xct.h"

static const char *type_name(cudaMemoryType t)
{
	switch (t) {
	case cudaMemoryTypeUnregistered:
		return "Unregistered";
	case cudaMemoryTypeHost:
		return "Host";
	case cudaMemoryTypeDevice:
		return "Device";
	case cudaMemoryTypeManaged:
		return "Managed";
	}
	return "?";
}

static void show(const char *what, const void *p)
{
	cudaPointerAttributes a;
	memset(&a, 0x5a, sizeof(a));
	cudaError_t e = cudaPointerGetAttributes(&a, p);
	printf("%-18s %s", what, cudaGetErrorName(e));
	if (e == cudaSuccess)
		printf(" type=%s device=%d devicePointer=%s hostPointer=%s",
		       type_name(a.type), a.device,
		       a.devicePointer == p      ? "same"
		       : a.devicePointer == NULL ? "null"
						 : "other",
		       a.hostPointer == p      ? "same"
		       : a.hostPointer == NULL ? "null"
					       : "other");
	printf("\n");
	cudaGetLastError();
}

int main(void)
{
	CK(cudaSetDevice(0));
	void *d, *ph, *pa;
	CK(cudaMalloc(&d, 4096));
	CK(cudaMallocHost(&ph, 4096));
	CK(cudaHostAlloc(&pa, 4096, cudaHostAllocPortable));
	void *m = malloc(4096);
	int local = 0;
	REQUIRE(m, "host malloc");

	show("cudaMalloc", d);
	show("cudaMalloc+100", (char *)d + 100);
	show("cudaMallocHost", ph);
	show("cudaMallocHost+8", (char *)ph + 8);
	show("cudaHostAlloc", pa);
	show("malloc", m);
	show("stack", &local);
	show("NULL", NULL);

	CK(cudaFree(d));
	show("freed cudaMalloc", d);
	CK(cudaFreeHost(ph));
	CK(cudaFreeHost(pa));
	free(m);
	return xct_finish("pointer_attrs");
}
