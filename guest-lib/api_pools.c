// SPDX-License-Identifier: MIT
/*
 * The stream-ordered allocator and memory pools: the guest side of the
 * calls of spec/cudart-pools.calls that keep guest state (allocations in
 * the range table) or whose value's size depends on an argument.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest.h"

/* Records a device allocation, as cudaMalloc's are recorded. */
static void xc_async_alloc(uint64_t p, size_t size)
{
	struct xc_range rg = { 0 };

	if (!p)
		return;
	rg.start = p;
	rg.size = size;
	rg.kind = XC_R_DEVICE;
	rg.device = xc_cur_device();
	xc_range_add(&rg);
}

static cudaError_t xc_malloc_async(void **devPtr, size_t size,
				   cudaStream_t stream, int per_thread)
{
	struct xcuda_malloc_async_args a = { 0 };
	struct xcuda_malloc_async_res r;
	cudaError_t err;

	if (!devPtr)
		return xc_ret(cudaErrorInvalidValue);
	if (xc_stream_handle(stream, per_thread, &a.hStream))
		return xc_ret(cudaErrorInvalidResourceHandle);
	a.size = size;
	err = xc_call_malloc_async(&a, &r);
	if (err)
		return err;
	*devPtr = (void *)(uintptr_t)r.devPtr;
	xc_async_alloc(r.devPtr, size);
	return cudaSuccess;
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream)
{
	return xc_malloc_async(devPtr, size, stream, 0);
}

cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size,
				 cudaStream_t stream);
cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size,
				 cudaStream_t stream)
{
	return xc_malloc_async(devPtr, size, stream, 1);
}

static cudaError_t xc_malloc_from_pool(void **ptr, size_t size,
				       cudaMemPool_t pool,
				       cudaStream_t stream, int per_thread)
{
	struct xcuda_malloc_from_pool_async_args a = { 0 };
	struct xcuda_malloc_from_pool_async_res r;
	cudaError_t err;

	if (!ptr || !pool)
		return xc_ret(cudaErrorInvalidValue);
	if (xc_handle_in(pool, &a.memPool) ||
	    xc_stream_handle(stream, per_thread, &a.stream))
		return xc_ret(cudaErrorInvalidResourceHandle);
	a.size = size;
	err = xc_call_malloc_from_pool_async(&a, &r);
	if (err)
		return err;
	*ptr = (void *)(uintptr_t)r.ptr;
	xc_async_alloc(r.ptr, size);
	return cudaSuccess;
}

cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size,
				    cudaMemPool_t memPool,
				    cudaStream_t stream)
{
	return xc_malloc_from_pool(ptr, size, memPool, stream, 0);
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size,
					 cudaMemPool_t memPool,
					 cudaStream_t stream);
cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size,
					 cudaMemPool_t memPool,
					 cudaStream_t stream)
{
	return xc_malloc_from_pool(ptr, size, memPool, stream, 1);
}

static cudaError_t xc_free_async(void *devPtr, cudaStream_t stream,
				 int per_thread)
{
	struct xcuda_free_async_args a = { 0 };
	cudaError_t err;

	if (xc_stream_handle(stream, per_thread, &a.hStream))
		return xc_ret(cudaErrorInvalidResourceHandle);
	a.devPtr = (uintptr_t)devPtr;
	err = xc_call_free_async(&a);
	if (!err && devPtr)
		xc_range_del((uintptr_t)devPtr, XC_R_DEVICE, NULL);
	return err;
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream)
{
	return xc_free_async(devPtr, stream, 0);
}

cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t stream);
cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t stream)
{
	return xc_free_async(devPtr, stream, 1);
}

/* The size of an attribute's value: CUDA documents each. */
static size_t xc_pool_attr_size(enum cudaMemPoolAttr attr)
{
	switch (attr) {
	case cudaMemPoolReuseFollowEventDependencies:
	case cudaMemPoolReuseAllowOpportunistic:
	case cudaMemPoolReuseAllowInternalDependencies:
		return sizeof(int);
	default:
		return sizeof(uint64_t);
	}
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool,
				    enum cudaMemPoolAttr attr, void *value)
{
	struct xcuda_mem_pool_set_attribute_args a = { 0 };

	if (!value || !memPool)
		return xc_ret(cudaErrorInvalidValue);
	if (xc_handle_in(memPool, &a.memPool))
		return xc_ret(cudaErrorInvalidResourceHandle);
	a.attr = attr;
	/* Little-endian: an int is the first four of the eight bytes. */
	memcpy(&a.value, value, xc_pool_attr_size(attr));
	return xc_call_mem_pool_set_attribute(&a);
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool,
				    enum cudaMemPoolAttr attr, void *value)
{
	struct xcuda_mem_pool_get_attribute_args a = { 0 };
	struct xcuda_mem_pool_get_attribute_res r;
	cudaError_t err;

	if (!value || !memPool)
		return xc_ret(cudaErrorInvalidValue);
	if (xc_handle_in(memPool, &a.memPool))
		return xc_ret(cudaErrorInvalidResourceHandle);
	a.attr = attr;
	err = xc_call_mem_pool_get_attribute(&a, &r);
	if (!err)
		memcpy(value, &r.value, xc_pool_attr_size(attr));
	return err;
}

/*
 * Pool export between processes of one guest (docs/protocol.md, "Pool
 * export").  CUDA's descriptor stays in Dom0; the program gets a sealed
 * memfd of its own holding the worker's token, which it may pass to
 * another process as it would CUDA's, and which that process's import
 * reads back.
 */
#define XC_POOL_FD_MAGIC	"xcuda pool fd 1"	/* 16 bytes with NUL */

struct xc_pool_fd {
	char magic[16];
	uint8_t token[64];
};

static int xc_pool_fd_make(const uint8_t *token)
{
	struct xc_pool_fd f;
	int fd;

	_Static_assert(sizeof(XC_POOL_FD_MAGIC) == sizeof(f.magic), "magic");
	memcpy(f.magic, XC_POOL_FD_MAGIC, sizeof(f.magic));
	memcpy(f.token, token, sizeof(f.token));
	/* Not close-on-exec: a descriptor a program may hand on. */
	fd = memfd_create("xcuda-mempool", MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	if (pwrite(fd, &f, sizeof(f), 0) != (ssize_t)sizeof(f) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
		  F_SEAL_WRITE | F_SEAL_SEAL)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The token of a descriptor xc_pool_fd_make() made, or -1. */
static int xc_pool_fd_read(int fd, uint8_t *token)
{
	struct xc_pool_fd f;

	if (fd < 0 || pread(fd, &f, sizeof(f), 0) != (ssize_t)sizeof(f) ||
	    memcmp(f.magic, XC_POOL_FD_MAGIC, sizeof(f.magic)))
		return -1;
	memcpy(token, f.token, sizeof(f.token));
	return 0;
}

cudaError_t cudaMemPoolExportToShareableHandle(
	void *shareableHandle, cudaMemPool_t memPool,
	enum cudaMemAllocationHandleType handleType, unsigned int flags)
{
	struct xcuda_mem_pool_export_shareable_args a = { 0 };
	uint8_t out[64];
	struct xc_xfer x = { out, sizeof(out), XC_XFER_OUT, &a.out };
	cudaError_t err;
	int fd;

	if (!shareableHandle || !memPool || xc_handle_in(memPool, &a.pool))
		return xc_ret(cudaErrorInvalidValue);
	if (handleType != cudaMemHandleTypePosixFileDescriptor &&
	    handleType != cudaMemHandleTypeFabric)
		return xc_ret(cudaErrorInvalidValue);
	a.type = handleType;
	a.flags = flags;
	err = xc_forward_xfer(XCUDA_OP_MEM_POOL_EXPORT_SHAREABLE,
			      &a, sizeof(a), NULL, 0, &x, 1);
	if (err)
		return err;
	if (handleType == cudaMemHandleTypeFabric) {
		memcpy(shareableHandle, out, sizeof(cudaMemFabricHandle_t));
		return cudaSuccess;
	}
	fd = xc_pool_fd_make(out);
	if (fd < 0)
		return xc_ret(cudaErrorOperatingSystem);
	memcpy(shareableHandle, &fd, sizeof(fd));
	return cudaSuccess;
}

cudaError_t cudaMemPoolImportFromShareableHandle(
	cudaMemPool_t *memPool, void *shareableHandle,
	enum cudaMemAllocationHandleType handleType, unsigned int flags)
{
	struct xcuda_mem_pool_import_shareable_args a = { 0 };
	struct xcuda_mem_pool_import_shareable_res r;
	cudaError_t err;

	_Static_assert(sizeof(a.handle) == sizeof(cudaMemFabricHandle_t),
		       "fabric handle");
	if (!memPool)
		return xc_ret(cudaErrorInvalidValue);
	a.type = handleType;
	a.flags = flags;
	if (handleType == cudaMemHandleTypePosixFileDescriptor) {
		/* The descriptor travels as the pointer's value. */
		if (xc_pool_fd_read((int)(intptr_t)shareableHandle, a.handle))
			return xc_ret(cudaErrorInvalidValue);
	} else if (handleType == cudaMemHandleTypeFabric && shareableHandle) {
		memcpy(a.handle, shareableHandle, sizeof(a.handle));
	} else {
		return xc_ret(cudaErrorInvalidValue);
	}
	err = xc_call_mem_pool_import_shareable(&a, &r);
	if (err)
		return err;
	if (r.pool < XCUDA_HANDLE_FIRST)
		return xc_ret(cudaErrorUnknown);
	*memPool = (cudaMemPool_t)(uintptr_t)r.pool;
	return cudaSuccess;
}

cudaError_t cudaMemPoolExportPointer(struct cudaMemPoolPtrExportData *
				     exportData, void *ptr)
{
	struct xcuda_mem_pool_export_pointer_args a = { 0 };
	struct xc_xfer x = { exportData, sizeof(*exportData), XC_XFER_OUT,
			     &a.out };

	if (!exportData)
		return xc_ret(cudaErrorInvalidValue);
	a.ptr = (uintptr_t)ptr;
	return xc_forward_xfer(XCUDA_OP_MEM_POOL_EXPORT_POINTER, &a,
			       sizeof(a), NULL, 0, &x, 1);
}

cudaError_t cudaMemPoolImportPointer(void **ptr, cudaMemPool_t memPool,
				     struct cudaMemPoolPtrExportData *
				     exportData)
{
	struct xcuda_mem_pool_import_pointer_args a = { 0 };
	struct xcuda_mem_pool_import_pointer_res r;
	cudaError_t err;

	_Static_assert(sizeof(a.data) == sizeof(*exportData), "export data");
	if (!ptr || !exportData || !memPool ||
	    xc_handle_in(memPool, &a.pool))
		return xc_ret(cudaErrorInvalidValue);
	memcpy(a.data, exportData, sizeof(a.data));
	err = xc_call_mem_pool_import_pointer(&a, &r);
	if (err)
		return err;
	/* The worker's answer is checked as any: no address, no memory. */
	if (!r.ptr || r.ptr > UINTPTR_MAX || r.size > UINTPTR_MAX - r.ptr)
		return xc_ret(cudaErrorUnknown);
	if (r.size)
		xc_async_alloc(r.ptr, (size_t)r.size);
	*ptr = (void *)(uintptr_t)r.ptr;
	return cudaSuccess;
}
