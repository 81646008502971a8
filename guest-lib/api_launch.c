// SPDX-License-Identifier: MIT
/*
 * Registration and launch of kernels, as CUDA 13's nvcc lowers <<<>>>:
 * __cudaPushCallConfiguration, then the stub's __cudaPopCallConfiguration,
 * __cudaGetKernel and __cudaLaunchKernel.  A launch packs the argument
 * bytes by the layout the worker reported, and is posted: its error comes
 * back at the next synchronising call, except for the configuration errors
 * that CUDA reports at once, which are checked here against the device's
 * cached limits.
 */
#include <string.h>

#include "guest.h"
#include "ptsz.h"

void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun,
			    char *deviceFun, const char *deviceName,
			    int thread_limit, uint3 *tid, uint3 *bid,
			    dim3 *bDim, dim3 *gDim, int *wSize);
void __cudaRegisterVar(void **fatCubinHandle, char *hostVar,
		       char *deviceAddress, const char *deviceName, int ext,
		       size_t size, int constant, int global);
char __cudaInitModule(void **fatCubinHandle);
void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
			      char *deviceAddress, const char *deviceName,
			      int ext, size_t size, int constant, int global);
void *__cudaRegisterHostVar(void **fatCubinHandle, const char *deviceName,
			    void *hostVar, size_t size);
void *__cudaRegisterUnifiedTable(void **fatCubinHandle, void *a1, void *a2,
				 void *a3, void *a4);
void *__cudaGetProcAddress(void);
unsigned int __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim,
					 size_t sharedMem, void *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
				       size_t *sharedMem, void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *funcAddr);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim,
			       dim3 blockDim, void **args, size_t sharedMem,
			       cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim,
				    dim3 blockDim, void **args,
				    size_t sharedMem, cudaStream_t stream);

void **__cudaRegisterFatBinary(void *fatCubin)
{
	return xc_reg_fatbin(fatCubin);
}

void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
	(void)fatCubinHandle;
}

void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
	xc_unreg_fatbin(fatCubinHandle);
}

void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun,
			    char *deviceFun, const char *deviceName,
			    int thread_limit, uint3 *tid, uint3 *bid,
			    dim3 *bDim, dim3 *gDim, int *wSize)
{
	(void)deviceFun; (void)thread_limit; (void)tid; (void)bid;
	(void)bDim; (void)gDim; (void)wSize;
	xc_reg_func(fatCubinHandle, hostFun, deviceName);
}

void __cudaRegisterVar(void **fatCubinHandle, char *hostVar,
		       char *deviceAddress, const char *deviceName, int ext,
		       size_t size, int constant, int global)
{
	(void)deviceAddress; (void)ext; (void)constant; (void)global;
	xc_reg_var(fatCubinHandle, hostVar, deviceName, size);
}

/*
 * Host code reaches a __managed__ variable through the pointer its
 * registration named, after calling this once per translation unit: the
 * module's variables are resolved and mapped here (managed.c).
 */
char __cudaInitModule(void **fatCubinHandle)
{
	return (char)xc_managed_init_module(fatCubinHandle);
}

/* A __managed__ variable: *hostVarPtrAddress is set by __cudaInitModule. */
void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
			      char *deviceAddress, const char *deviceName,
			      int ext, size_t size, int constant, int global)
{
	(void)deviceAddress; (void)ext; (void)constant; (void)global;
	xc_managed_reg_var(fatCubinHandle, hostVarPtrAddress, deviceName,
			   size);
}

/*
 * Registrations of things xcuda cannot back yet: host variables and
 * unified-function tables.  The registration itself must not fail, or
 * the program dies in its constructors before main(); it says once what
 * will not work.  They answer 0 whatever their callers expect.
 */
void *__cudaRegisterHostVar(void **fatCubinHandle, const char *deviceName,
			    void *hostVar, size_t size)
{
	static int said;

	(void)fatCubinHandle; (void)deviceName; (void)hostVar; (void)size;
	xc_warn_once(&said, "__cudaRegisterHostVar is not supported");
	return NULL;
}

void *__cudaRegisterUnifiedTable(void **fatCubinHandle, void *a1, void *a2,
				 void *a3, void *a4)
{
	static int said;

	(void)fatCubinHandle; (void)a1; (void)a2; (void)a3; (void)a4;
	xc_warn_once(&said, "__cudaRegisterUnifiedTable is not supported");
	return NULL;
}

/* The real runtime's export answers NULL unconditionally; so does ours. */
void *__cudaGetProcAddress(void)
{
	return NULL;
}

unsigned int __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim,
					 size_t sharedMem, void *stream)
{
	struct xc_launch_cfg c = { gridDim, blockDim, sharedMem, stream };

	return xc_cfg_push(&c) ? 1 : 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
				       size_t *sharedMem, void *stream)
{
	struct xc_launch_cfg c;

	if (xc_cfg_pop(&c))
		return cudaErrorMissingConfiguration;
	*gridDim = c.grid;
	*blockDim = c.block;
	*sharedMem = c.shmem;
	*(cudaStream_t *)stream = c.stream;
	return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *funcAddr)
{
	struct xc_func *f = xc_func_by_host(funcAddr);

	if (!kernel)
		return cudaErrorInvalidValue;
	if (!f)
		return cudaErrorInvalidDeviceFunction;
	*kernel = (cudaKernel_t)f;
	return cudaSuccess;
}

/*
 * The configuration errors CUDA reports synchronously, from the device's
 * cached limits.  CUDA 13 reports every one of them as
 * cudaErrorInvalidValue (older runtimes said cudaErrorInvalidConfiguration).
 */
static cudaError_t xc_check_config(const struct cudaDeviceProp *p, dim3 g,
				   dim3 b)
{
	if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z)
		return cudaErrorInvalidValue;
	if (b.x > (unsigned int)p->maxThreadsDim[0] ||
	    b.y > (unsigned int)p->maxThreadsDim[1] ||
	    b.z > (unsigned int)p->maxThreadsDim[2] ||
	    (uint64_t)b.x * b.y * b.z > (uint64_t)p->maxThreadsPerBlock)
		return cudaErrorInvalidValue;
	if (g.x > (unsigned int)p->maxGridSize[0] ||
	    g.y > (unsigned int)p->maxGridSize[1] ||
	    g.z > (unsigned int)p->maxGridSize[2])
		return cudaErrorInvalidValue;
	return cudaSuccess;
}

/* The kernel's own limits: __launch_bounds__ and its dynamic shared memory. */
static cudaError_t xc_check_func(const struct xc_func *f, dim3 b,
				 size_t shmem)
{
	if (f->max_threads > 0 &&
	    (uint64_t)b.x * b.y * b.z > (uint64_t)f->max_threads)
		return cudaErrorInvalidValue;
	if (f->max_dyn_smem >= 0 && shmem > (size_t)f->max_dyn_smem)
		return cudaErrorInvalidValue;
	return cudaSuccess;
}

cudaError_t xc_launch_check(const struct xc_func *f, dim3 g, dim3 b,
			    size_t shmem)
{
	const struct cudaDeviceProp *p;
	cudaError_t err = xc_props(xc_cur_device(), &p);

	if (!err)
		err = xc_check_config(p, g, b);
	if (!err && f)
		err = xc_check_func(f, b, shmem);
	return err;
}

cudaError_t xc_args_pack(struct xc_session *s, const struct xc_func *f,
			 void **args, struct xcuda_request *req,
			 uint8_t *inl, size_t cap, uint64_t *blk)
{
	uint64_t got;
	uint8_t *buf;
	uint32_t i;

	*blk = UINT64_MAX;
	if (f->nparams && !args)
		return cudaErrorInvalidValue;
	if (f->args_size <= cap) {
		buf = inl;
	} else {
		*blk = xc_staging_get(s, f->args_size, f->args_size, &got);
		if (*blk == UINT64_MAX)
			return cudaErrorMemoryAllocation;
		buf = xc_arena_ptr(s, *blk);
		req->hdr.data_off = (uint32_t)*blk;
		req->hdr.data_len = f->args_size;
	}
	for (i = 0; i < f->nparams; i++)
		memcpy(buf + f->params[i].offset, args[i], f->params[i].size);
	return cudaSuccess;
}

/* LAUNCH_COOPERATIVE's arguments are LAUNCH's, under another opcode. */
_Static_assert(sizeof(struct xcuda_launch_args) ==
	       sizeof(struct xcuda_launch_cooperative_args) &&
	       offsetof(struct xcuda_launch_args, args) ==
	       offsetof(struct xcuda_launch_cooperative_args, args),
	       "the launches share their layout");

cudaError_t xc_launch_req(struct xc_session *s, struct xc_func *f,
			  uint16_t op, uint32_t sh, dim3 g, dim3 b,
			  size_t shmem, void **args,
			  struct xcuda_request *req, uint64_t *blk)
{
	struct xcuda_launch_args *a;
	cudaError_t err = xc_func_resolve(s, f);

	*blk = UINT64_MAX;
	if (!err)
		err = xc_launch_check(f, g, b, shmem);
	if (err)
		return err;
	xc_req_init(req, op, sizeof(*a));
	a = (struct xcuda_launch_args *)req->args;
	a->func = f->handle;
	a->stream = sh;
	a->grid[0] = g.x; a->grid[1] = g.y; a->grid[2] = g.z;
	a->block[0] = b.x; a->block[1] = b.y; a->block[2] = b.z;
	a->shmem = (uint32_t)shmem;
	a->args_len = f->args_size;
	err = xc_args_pack(s, f, args, req, a->args, sizeof(a->args), blk);
	if (err)
		return err;
	req->hdr.len = (uint16_t)offsetof(struct xcuda_launch_args, args);
	if (*blk == UINT64_MAX)
		req->hdr.len += (uint16_t)f->args_size;
	return cudaSuccess;
}

static cudaError_t xc_launch(struct xc_func *f, dim3 g, dim3 b, void **args,
			     size_t shmem, cudaStream_t stream, int per_thread)
{
	struct xcuda_request req;
	struct xc_session *s;
	cudaError_t err = xc_ready(&s);
	uint64_t blk;
	uint32_t sh;

	if (err)
		return xc_ret(err);
	if (!f || f->magic != XC_FUNC_MAGIC)
		return xc_ret(cudaErrorInvalidResourceHandle);
	if (xc_stream_handle(stream, per_thread, &sh))
		return xc_ret(cudaErrorInvalidResourceHandle);
	err = xc_launch_check(NULL, g, b, shmem);
	if (err)
		return xc_ret(err);
	if (shmem > UINT32_MAX)
		return xc_ret(cudaErrorInvalidValue);

	pthread_mutex_lock(&s->lock);
	err = xc_launch_req(s, f, XCUDA_OP_LAUNCH, sh, g, b, shmem, args, &req,
			    &blk);
	if (!err)
		err = xc_post_locked(s, &req, blk);
	pthread_mutex_unlock(&s->lock);
	return xc_ret(err);
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim,
			       dim3 blockDim, void **args, size_t sharedMem,
			       cudaStream_t stream)
{
	return xc_launch(xc_func_by_kernel(kernel), gridDim, blockDim, args,
			 sharedMem, stream, 0);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim,
				    dim3 blockDim, void **args,
				    size_t sharedMem, cudaStream_t stream)
{
	return xc_launch(xc_func_by_kernel(kernel), gridDim, blockDim, args,
			 sharedMem, stream, 1);
}

struct xc_func *xc_func_lookup(const void *func)
{
	struct xc_func *f = xc_func_by_host(func);

	return f ? f : xc_func_by_kernel(func);
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim,
			     void **args, size_t sharedMem,
			     cudaStream_t stream)
{
	return xc_launch(xc_func_lookup(func), gridDim, blockDim, args,
			 sharedMem, stream, 0);
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim,
				  dim3 blockDim, void **args,
				  size_t sharedMem, cudaStream_t stream)
{
	return xc_launch(xc_func_lookup(func), gridDim, blockDim, args,
			 sharedMem, stream, 1);
}

/*
 * What a query answers for a pointer that names no kernel.  CUDA 13 takes
 * an unknown non-NULL pointer for a cudaKernel_t handle, which the driver
 * refuses (cudaErrorInvalidResourceHandle); NULL is no function at all.
 */
cudaError_t xc_func_unknown(const void *func)
{
	return func ? cudaErrorInvalidResourceHandle :
		      cudaErrorInvalidDeviceFunction;
}

/*
 * Resolves @func for a query; a pointer that names no kernel answers
 * @unknown (NULL: cudaErrorInvalidDeviceFunction).  Returns with the
 * session lock held.
 */
static cudaError_t xc_func_locked(const void *func, cudaError_t unknown,
				  struct xc_session **sp, struct xc_func **fp)
{
	struct xc_func *f = xc_func_lookup(func);
	cudaError_t err = xc_ready(sp);

	if (err)
		return err;
	if (!f)
		return func ? unknown : cudaErrorInvalidDeviceFunction;
	pthread_mutex_lock(&(*sp)->lock);
	err = xc_func_resolve(*sp, f);
	if (err) {
		pthread_mutex_unlock(&(*sp)->lock);
		return err;
	}
	*fp = f;
	return cudaSuccess;
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr,
				  const void *func)
{
	struct xcuda_func_get_attributes_args a = { 0 };
	struct xcuda_request req;
	struct xc_session *s;
	struct xc_func *f;
	uint64_t off, got;
	cudaError_t err;

	if (!attr)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_func_locked(func, xc_func_unknown(func), &s, &f);
	if (err)
		return xc_ret(err);
	off = xc_staging_get(s, sizeof(*attr), sizeof(*attr), &got);
	if (off == UINT64_MAX) {
		err = cudaErrorMemoryAllocation;
		goto out;
	}
	a.func = f->handle;
	xc_req_func_get_attributes(&req, &a);
	req.hdr.data_off = (uint32_t)off;
	req.hdr.data_len = sizeof(*attr);
	err = xc_round_trip_locked(s, &req, NULL, 0);
	if (!err) {
		memcpy(attr, xc_arena_ptr(s, off), sizeof(*attr));
		/* What launches are checked against follows CUDA's answer. */
		if (attr->maxDynamicSharedSizeBytes >= 0)
			f->max_dyn_smem = attr->maxDynamicSharedSizeBytes;
	}
	xc_arena_release(s->staging, off);
out:
	pthread_mutex_unlock(&s->lock);
	return xc_ret(err);
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr,
				 int value)
{
	struct xcuda_func_set_attribute_args a = { 0 };
	struct xc_func *f = xc_func_lookup(func);
	cudaError_t err;

	err = xc_func_handle(func, &a.func, xc_func_unknown(func));
	if (err)
		return xc_ret(err);
	a.attr = attr;
	a.value = value;
	err = xc_call_func_set_attribute(&a);
	if (!err && attr == cudaFuncAttributeMaxDynamicSharedMemorySize)
		f->max_dyn_smem = value;
	return err;
}

cudaError_t xc_func_handle(const void *func, uint32_t *h,
			   cudaError_t unknown)
{
	struct xc_session *s;
	struct xc_func *f;
	cudaError_t err;

	err = xc_func_locked(func, unknown, &s, &f);
	if (err)
		return err;
	*h = f->handle;
	pthread_mutex_unlock(&s->lock);
	return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(
	int *numBlocks, const void *func, int blockSize,
	size_t dynamicSMemSize)
{
	return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
		numBlocks, func, blockSize, dynamicSMemSize,
		cudaOccupancyDefault);
}
