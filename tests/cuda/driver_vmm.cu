/* SPDX-License-Identifier: MIT */
/*
 * The driver's virtual memory management API, as PyTorch's expandable
 * segments use it: the allocation granularity, physical allocations,
 * a reserved address range, two allocations mapped side by side, access
 * set, memsets and copies across the seam (the driver's and the
 * runtime's, with cudaMemcpyDefault), the properties and the handle
 * back from an address, the address range, then unmap, release and
 * free.  Errors: a misaligned map, a reservation freed while mapped.
 * (A handle never made crashes the native driver: tests/unit/test_driver
 * shows the worker refusing it.)
 */
#include "common/xct_drv.h"
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	CUmemGenericAllocationHandle h[2], back;
	CUmemAllocationProp prop, got;
	CUmemAccessDesc acc;
	CUdeviceptr va, base;
	CUcontext ctx;
	CUdevice dev;
	size_t gran, size, rsize;
	unsigned long long aflags = 0;
	unsigned int *host;
	int i, ok;

	setvbuf(stdout, NULL, _IOLBF, 0);
	CKD(cuInit(0));
	CKD(cuDeviceGet(&dev, 0));
	CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
	CKD(cuCtxSetCurrent(ctx));

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	CKD(cuMemGetAllocationGranularity(&gran, &prop,
					  CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	printf("granularity: %zu KiB\n", gran >> 10);
	size = 2 * gran;
	CKD(cuMemCreate(&h[0], size, &prop, 0));
	CKD(cuMemCreate(&h[1], size, &prop, 0));
	CKD(cuMemAddressReserve(&va, 2 * size, 0, 0, 0));
	CKD(cuMemMap(va, size, 0, h[0], 0));
	CKD(cuMemMap(va + size, size, 0, h[1], 0));
	SHOWD(cuMemMap(va + 1, size, 0, h[0], 0));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CKD(cuMemSetAccess(va, 2 * size, &acc, 1));
	CKD(cuMemGetAccess(&aflags, &prop.location, va + size));
	printf("access: %llu\n", aflags);

	/* One memset and one copy across the seam of the two. */
	CKD(cuMemsetD32(va, 0xabcdef01u, 2 * size / 4));
	host = (unsigned int *)malloc(2 * size);
	for (i = 0; i < 1024; i++)
		host[i] = (unsigned int)i;
	CKD(cuMemcpyHtoD(va + size - 2048, host, 4096));
	memset(host, 0, 2 * size);
	if (cudaMemcpy(host, (void *)(uintptr_t)va, 2 * size,
		       cudaMemcpyDefault) != cudaSuccess)
		printf("cudaMemcpy of mapped memory failed\n");
	ok = host[0] == 0xabcdef01u && host[2 * size / 4 - 1] == 0xabcdef01u;
	for (i = 0; i < 1024; i++)
		ok &= host[(size - 2048) / 4 + i] == (unsigned int)i;
	xct_drv_expect(ok, "memset and copies across the seam");

	CKD(cuMemGetAllocationPropertiesFromHandle(&got, h[1]));
	xct_drv_expect(got.type == prop.type && got.location.id == dev,
	       "properties from the handle");
	CKD(cuMemRetainAllocationHandle(&back, (void *)(uintptr_t)(va + size)));
	xct_drv_expect(back == h[1], "the handle back from its address");
	CKD(cuMemRelease(back));
	CKD(cuMemGetAddressRange(&base, &rsize, va + size + 100));
	xct_drv_expect(base == va + size && rsize == size, "its address range");

	SHOWD(cuMemAddressFree(va, 2 * size));

	CKD(cuMemUnmap(va, size));
	CKD(cuMemUnmap(va + size, size));
	CKD(cuMemRelease(h[0]));
	CKD(cuMemRelease(h[1]));
	CKD(cuMemAddressFree(va, 2 * size));
	free(host);
	CKD(cuDevicePrimaryCtxRelease(dev));
	printf("driver_vmm: %s\n", xct_drv_failures ? "FAILED" : "PASSED");
	return xct_drv_failures ? 1 : 0;
}
