// SPDX-License-Identifier: MIT
/*
 * The driver API's modules, functions and launches.  A CUmodule and a
 * CUfunction are the worker's handles, as the runtime's objects are.  A
 * function's parameter layout comes with it (DRV_MODULE_GET_FUNCTION),
 * so that cuLaunchKernel packs kernelParams here and sends the bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"

/* A function's parameters: offset and size of each, and their extent. */
struct xc_drv_func {
	uint32_t handle;	/* 0: a free slot */
	uint32_t nparams;
	uint32_t size;		/* bytes of the packed parameters */
	uint32_t *layout;	/* nparams offset/size pairs */
};

static pthread_mutex_t xc_func_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xc_drv_func *xc_funcs;
static size_t xc_nfuncs;

/* Records @layout for @handle, replacing what an older handle left. */
static int xc_func_put(uint32_t handle, uint32_t n, uint32_t *layout)
{
	struct xc_drv_func *f = NULL, *grown;
	uint32_t i, size = 0;
	size_t k;

	for (i = 0; i < n; i++) {
		if (layout[2 * i] > XCUDA_MAX_ARGS_BYTES ||
		    layout[2 * i + 1] > XCUDA_MAX_ARGS_BYTES - layout[2 * i])
			return -1;
		if (layout[2 * i] + layout[2 * i + 1] > size)
			size = layout[2 * i] + layout[2 * i + 1];
	}
	pthread_mutex_lock(&xc_func_lock);
	for (k = 0; k < xc_nfuncs; k++) {
		if (xc_funcs[k].handle == handle) {
			f = &xc_funcs[k];
			break;
		}
		if (!xc_funcs[k].handle && !f)
			f = &xc_funcs[k];
	}
	if (!f) {
		grown = realloc(xc_funcs, (xc_nfuncs + 16) * sizeof(*grown));
		if (!grown) {
			pthread_mutex_unlock(&xc_func_lock);
			return -1;
		}
		memset(grown + xc_nfuncs, 0, 16 * sizeof(*grown));
		xc_funcs = grown;
		f = &xc_funcs[xc_nfuncs];
		xc_nfuncs += 16;
	}
	free(f->layout);
	f->handle = handle;
	f->nparams = n;
	f->size = size;
	f->layout = layout;
	pthread_mutex_unlock(&xc_func_lock);
	return 0;
}

/* A copy of @handle's record (its layout malloc'd), or -1. */
static int xc_func_get(uint32_t handle, struct xc_drv_func *out)
{
	size_t k, bytes;
	int ret = -1;

	pthread_mutex_lock(&xc_func_lock);
	for (k = 0; k < xc_nfuncs; k++) {
		if (xc_funcs[k].handle != handle)
			continue;
		*out = xc_funcs[k];
		bytes = (size_t)out->nparams * 8;
		out->layout = malloc(bytes ? bytes : 1);
		if (out->layout) {
			memcpy(out->layout, xc_funcs[k].layout, bytes);
			ret = 0;
		}
		break;
	}
	pthread_mutex_unlock(&xc_func_lock);
	return ret;
}

static CUresult xc_module_load(CUmodule *module, const void *image,
			       uint64_t size)
{
	struct xcuda_drv_module_load_data_args a;
	struct xcuda_drv_module_load_data_res r = { 0, 0 };
	struct xc_xfer x;
	int err;

	memset(&a, 0, sizeof(a));
	x.ptr = (void *)image;
	x.len = size;
	x.dir = XC_XFER_IN;
	x.ext = &a.image;
	err = xc_drv_forward_xfer(XCUDA_OP_DRV_MODULE_LOAD_DATA, &a, sizeof(a),
				  &r, sizeof(r), &x, 1);
	if (err)
		return xc_drv_result(err);
	if (r.module < XCUDA_HANDLE_FIRST)
		return CUDA_ERROR_UNKNOWN;
	*module = (CUmodule)(uintptr_t)r.module;
	return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	int err = xc_drv_enter(1);
	uint64_t size;

	if (err)
		return (CUresult)err;
	if (!module || !image)
		return CUDA_ERROR_INVALID_VALUE;
	size = xc_image_size(image);
	if (!size)
		return CUDA_ERROR_INVALID_IMAGE;
	return xc_module_load(module, image, size);
}

CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
	return cuModuleLoadData(module, fatCubin);
}

/*
 * The options that tune the compilation travel by value; the logs come
 * back into the program's buffers whether the load succeeds or not.
 */
CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
			    unsigned int numOptions, CUjit_option *options,
			    void **optionValues)
{
	struct xcuda_drv_module_load_ex_args a;
	struct xcuda_drv_module_load_ex_res r = { 0, 0 };
	struct xc_xfer x[3];
	struct xc_jit j;
	uint64_t size, lsize;
	uint8_t *logs = NULL;
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	if (!module || !image)
		return CUDA_ERROR_INVALID_VALUE;
	err = xc_jit_opts(&j, numOptions, options, optionValues);
	if (err)
		return (CUresult)err;
	size = xc_image_size(image);
	if (!size)
		return CUDA_ERROR_INVALID_IMAGE;
	lsize = xc_jit_logs_size(&j);
	if (lsize && !(logs = calloc(1, lsize)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(&a, 0, sizeof(a));
	a.nopts = j.n;
	x[0] = (struct xc_xfer){ j.opt, (uint64_t)j.n * sizeof(j.opt[0]),
				 XC_XFER_IN, &a.opts };
	x[1] = (struct xc_xfer){ (void *)image, size, XC_XFER_IN, &a.image };
	x[2] = (struct xc_xfer){ logs, lsize, XC_XFER_OUT | XC_XFER_KEEP,
				 &a.logs };
	err = xc_drv_forward_xfer(XCUDA_OP_DRV_MODULE_LOAD_EX, &a, sizeof(a),
				  &r, sizeof(r), x, 3);
	if (logs && (!err || err == CUDA_ERROR_INVALID_PTX ||
		     err == CUDA_ERROR_INVALID_IMAGE ||
		     err == CUDA_ERROR_NO_BINARY_FOR_GPU))
		xc_jit_logs_put(&j, logs);
	free(logs);
	if (!err && r.module < XCUDA_HANDLE_FIRST)
		err = CUDA_ERROR_UNKNOWN;
	if (err)
		return xc_drv_result(err);
	*module = (CUmodule)(uintptr_t)r.module;
	return CUDA_SUCCESS;
}

CUresult xc_read_file(const char *path, uint8_t **data, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	ssize_t got;
	size_t off = 0;
	int fd;

	/* The file is the guest's: read here, never opened in Dom0. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_FILE_NOT_FOUND;
	if (fstat(fd, &st) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > XCUDA_MAX_MODULE) {
		close(fd);
		return CUDA_ERROR_INVALID_IMAGE;
	}
	/* One more byte: PTX text ends at its NUL. */
	buf = calloc(1, (size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	while (off < (size_t)st.st_size) {
		got = read(fd, buf + off, (size_t)st.st_size - off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		off += (size_t)got;
	}
	close(fd);
	if (off != (size_t)st.st_size) {
		free(buf);
		return CUDA_ERROR_FILE_NOT_FOUND;
	}
	*data = buf;
	*len = off;
	return CUDA_SUCCESS;
}

CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
	int err = xc_drv_enter(1);
	uint8_t *buf;
	size_t len;
	CUresult ret;

	if (err)
		return (CUresult)err;
	if (!module || !fname)
		return CUDA_ERROR_INVALID_VALUE;
	ret = xc_read_file(fname, &buf, &len);
	if (ret)
		return ret;
	ret = cuModuleLoadData(module, buf);
	free(buf);
	return ret;
}

/*
 * A function the worker answered (@err its status): its @layout of
 * @nparams recorded, the handle in *@hfunc.  Takes @layout.
 */
static CUresult xc_func_new(int err, uint32_t func, uint32_t nparams,
			    uint32_t *layout, CUfunction *hfunc)
{
	if (!err && (func < XCUDA_HANDLE_FIRST || nparams > XCUDA_MAX_PARAMS))
		err = CUDA_ERROR_UNKNOWN;
	/* The worker's layout is checked as any answer of its. */
	if (!err && xc_func_put(func, nparams, layout))
		err = CUDA_ERROR_UNKNOWN;
	if (err) {
		free(layout);
		return xc_drv_result(err);
	}
	*hfunc = (CUfunction)(uintptr_t)func;
	return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
			     const char *name)
{
	struct xcuda_drv_module_get_function_args a;
	struct xcuda_drv_module_get_function_res r = { 0, 0 };
	uint32_t *layout;
	struct xc_xfer x[2];
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	memset(&a, 0, sizeof(a));
	if (!hfunc || !name || !hmod)
		return CUDA_ERROR_INVALID_VALUE;
	if (xc_handle_in(hmod, &a.module))
		return CUDA_ERROR_INVALID_HANDLE;
	layout = calloc(XCUDA_MAX_PARAMS, 8);
	if (!layout)
		return CUDA_ERROR_OUT_OF_MEMORY;
	x[0] = (struct xc_xfer){ (void *)name,
				 xc_strsize(name, XCUDA_NAME_MAX),
				 XC_XFER_IN, &a.name };
	x[1] = (struct xc_xfer){ layout, (uint64_t)XCUDA_MAX_PARAMS * 8,
				 XC_XFER_OUT, &a.params };
	err = xc_drv_forward_xfer(XCUDA_OP_DRV_MODULE_GET_FUNCTION, &a,
				  sizeof(a), &r, sizeof(r), x, 2);
	return xc_func_new(err, r.func, r.nparams, layout, hfunc);
}

/* A CUkernel is a cudaKernel_t: the runtime's handle names it. */
CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	struct xcuda_drv_kernel_get_function_args a;
	struct xcuda_drv_kernel_get_function_res r = { 0, 0 };
	uint32_t *layout;
	struct xc_xfer x;
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	memset(&a, 0, sizeof(a));
	if (!pFunc)
		return CUDA_ERROR_INVALID_VALUE;
	if (!kernel || !xc_func_by_kernel(kernel))
		return CUDA_ERROR_INVALID_HANDLE;
	err = XC_DRV_RT(xc_func_handle(kernel, &a.kernel,
				       cudaErrorInvalidResourceHandle));
	if (err)
		return (CUresult)err;
	layout = calloc(XCUDA_MAX_PARAMS, 8);
	if (!layout)
		return CUDA_ERROR_OUT_OF_MEMORY;
	x = (struct xc_xfer){ layout, (uint64_t)XCUDA_MAX_PARAMS * 8,
			      XC_XFER_OUT, &a.params };
	err = xc_drv_forward_xfer(XCUDA_OP_DRV_KERNEL_GET_FUNCTION, &a,
				  sizeof(a), &r, sizeof(r), &x, 1);
	return xc_func_new(err, r.func, r.nparams, layout, pFunc);
}

/* The packed parameters from kernelParams, or from extra's buffer. */
static CUresult xc_pack(const struct xc_drv_func *f, void **kernelParams,
			void **extra, uint8_t *buf)
{
	void *ebuf = NULL;
	size_t esize = 0, *psize = NULL;
	uint32_t i;

	if (kernelParams) {
		for (i = 0; i < f->nparams; i++) {
			if (!kernelParams[i])
				return CUDA_ERROR_INVALID_VALUE;
			memcpy(buf + f->layout[2 * i], kernelParams[i],
			       f->layout[2 * i + 1]);
		}
		return CUDA_SUCCESS;
	}
	if (!extra)
		return f->nparams ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
	for (i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			ebuf = extra[i + 1];
		else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			psize = extra[i + 1];
		else
			return CUDA_ERROR_INVALID_VALUE;
	}
	if (psize)
		esize = *psize;
	if ((f->size && !ebuf) || esize < f->size)
		return CUDA_ERROR_INVALID_VALUE;
	if (f->size)
		memcpy(buf, ebuf, f->size);
	return CUDA_SUCCESS;
}

/*
 * Posts DRV_LAUNCH_KERNEL with @size bytes of parameters staged in the
 * arena (freed when the worker answers), as the runtime's launches are
 * posted: a later synchronising call reports the driver's error.
 */
static CUresult xc_launch_post(struct xcuda_drv_launch_kernel_args *a,
			       const uint8_t *buf, uint32_t size)
{
	struct xc_session *s = xc_session_peek();
	struct xcuda_request req;
	uint64_t off = UINT64_MAX, got;
	cudaError_t err;

	if (!s)
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&s->lock);
	if (size) {
		off = xc_staging_get(s, size, size, &got);
		if (off == UINT64_MAX) {
			pthread_mutex_unlock(&s->lock);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		memcpy(xc_arena_ptr(s, off), buf, size);
		a->params = (struct xcuda_extent){ (uint32_t)off, size };
	}
	xc_req_init(&req, XCUDA_OP_DRV_LAUNCH_KERNEL, sizeof(*a));
	memcpy(req.args, a, sizeof(*a));
	err = xc_post_locked(s, &req, off);
	pthread_mutex_unlock(&s->lock);
	return xc_drv_result(err);
}

/*
 * One launch: DRV_LAUNCH_KERNEL, or with @coop DRV_LAUNCH_COOPERATIVE,
 * whose arguments are laid out alike.
 */
static CUresult xc_launch(CUfunction fn, unsigned int gx, unsigned int gy,
			  unsigned int gz, unsigned int bx, unsigned int by,
			  unsigned int bz, unsigned int shmem, CUstream st,
			  void **kernelParams, void **extra, int per_thread,
			  int coop)
{
	struct xcuda_drv_launch_kernel_args a;
	struct xc_drv_func f;
	struct xc_xfer x;
	uint8_t *buf;
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	memset(&a, 0, sizeof(a));
	if (!fn || xc_handle_in(fn, &a.func) || xc_func_get(a.func, &f)) {
		/* A CUkernel launches as its function in the context. */
		if (!fn || !xc_func_by_kernel(fn))
			return CUDA_ERROR_INVALID_HANDLE;
		err = cuKernelGetFunction(&fn, (CUkernel)fn);
		if (err)
			return (CUresult)err;
		if (xc_handle_in(fn, &a.func) || xc_func_get(a.func, &f))
			return CUDA_ERROR_INVALID_HANDLE;
	}
	if (xc_stream_handle(st, per_thread, &a.stream)) {
		free(f.layout);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	buf = calloc(1, f.size ? f.size : 1);
	if (!buf) {
		free(f.layout);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	err = xc_pack(&f, kernelParams, extra, buf);
	/* The configuration's errors are the call's own, as natively. */
	if (!err && xc_launch_check(NULL, (dim3){ gx, gy, gz },
				    (dim3){ bx, by, bz }, shmem))
		err = CUDA_ERROR_INVALID_VALUE;
	if (!err) {
		a.grid[0] = gx;
		a.grid[1] = gy;
		a.grid[2] = gz;
		a.block[0] = bx;
		a.block[1] = by;
		a.block[2] = bz;
		a.shmem = shmem;
		a.nparams = f.nparams;
		_Static_assert(sizeof(a) ==
			       sizeof(struct xcuda_drv_launch_cooperative_args),
			       "launch layouts");
		if (coop) {
			x = (struct xc_xfer){ f.size ? buf : NULL, f.size,
					      XC_XFER_IN, &a.params };
			err = xc_drv_result(xc_drv_forward_xfer(
				XCUDA_OP_DRV_LAUNCH_COOPERATIVE, &a, sizeof(a),
				NULL, 0, &x, 1));
		} else {
			err = xc_launch_post(&a, buf, f.size);
		}
	}
	free(buf);
	free(f.layout);
	return (CUresult)err;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX,
			unsigned int gridDimY, unsigned int gridDimZ,
			unsigned int blockDimX, unsigned int blockDimY,
			unsigned int blockDimZ, unsigned int sharedMemBytes,
			CUstream hStream, void **kernelParams, void **extra)
{
	return xc_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX,
			 blockDimY, blockDimZ, sharedMemBytes, hStream,
			 kernelParams, extra, 0, 0);
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX,
			     unsigned int gridDimY, unsigned int gridDimZ,
			     unsigned int blockDimX, unsigned int blockDimY,
			     unsigned int blockDimZ,
			     unsigned int sharedMemBytes, CUstream hStream,
			     void **kernelParams, void **extra);
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX,
			     unsigned int gridDimY, unsigned int gridDimZ,
			     unsigned int blockDimX, unsigned int blockDimY,
			     unsigned int blockDimZ,
			     unsigned int sharedMemBytes, CUstream hStream,
			     void **kernelParams, void **extra)
{
	return xc_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX,
			 blockDimY, blockDimZ, sharedMemBytes, hStream,
			 kernelParams, extra, 1, 0);
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
				   unsigned int gridDimY,
				   unsigned int gridDimZ,
				   unsigned int blockDimX,
				   unsigned int blockDimY,
				   unsigned int blockDimZ,
				   unsigned int sharedMemBytes, CUstream hStream,
				   void **kernelParams)
{
	/* No extra here: the parameters come from kernelParams alone. */
	if (!kernelParams)
		return CUDA_ERROR_INVALID_VALUE;
	return xc_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX,
			 blockDimY, blockDimZ, sharedMemBytes, hStream,
			 kernelParams, NULL, 0, 1);
}

CUresult cuLaunchCooperativeKernel_ptsz(
	CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
	unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
	unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
	void **kernelParams);
CUresult cuLaunchCooperativeKernel_ptsz(
	CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
	unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
	unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
	void **kernelParams)
{
	if (!kernelParams)
		return CUDA_ERROR_INVALID_VALUE;
	return xc_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX,
			 blockDimY, blockDimZ, sharedMemBytes, hStream,
			 kernelParams, NULL, 1, 1);
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex,
			    size_t *paramOffset, size_t *paramSize)
{
	struct xc_drv_func f;
	uint32_t h;
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	if (!func || xc_handle_in(func, &h) || xc_func_get(h, &f))
		return CUDA_ERROR_INVALID_HANDLE;
	/* The layout came with the function: answered here. */
	err = paramIndex < f.nparams ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	if (!err && paramOffset)
		*paramOffset = f.layout[2 * paramIndex];
	if (!err && paramSize)
		*paramSize = f.layout[2 * paramIndex + 1];
	free(f.layout);
	return (CUresult)err;
}

/*
 * With a callback, the guest computes: for each block size a multiple of
 * the warp's, up to the function's and the program's limits, the blocks
 * a multiprocessor holds with the shared memory the callback asks for;
 * the size that keeps the most threads busy wins, the larger on a tie.
 */
static CUresult xc_occupancy_local(int *min_grid, int *block, CUfunction f,
				   CUoccupancyB2DSize b2d, int limit,
				   unsigned int flags)
{
	int max_threads, warp, sms, dev, size, blocks, best = 0, best_b = 0;
	CUresult err;

	err = cuFuncGetAttribute(&max_threads,
				 CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f);
	if (!err)
		err = cuCtxGetDevice(&dev);
	if (!err)
		err = cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE,
					   dev);
	if (!err)
		err = cuDeviceGetAttribute(
			&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
	if (err)
		return err;
	if (limit > 0 && limit < max_threads)
		max_threads = limit;
	for (size = max_threads / warp * warp; size > 0; size -= warp) {
		err = cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
			&blocks, f, size, b2d(size), flags);
		if (err)
			return err;
		if (blocks * size > best) {
			best = blocks * size;
			best_b = size;
		}
	}
	*block = best_b;
	*min_grid = best_b ? best / best_b * sms : 0;
	return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(
	int *minGridSize, int *blockSize, CUfunction func,
	CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
	int blockSizeLimit, unsigned int flags)
{
	struct xcuda_drv_occ_potential_block_args a;
	struct xcuda_drv_occ_potential_block_res r = { 0, 0 };
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	if (!minGridSize || !blockSize)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&a, 0, sizeof(a));
	if (!func || xc_handle_in(func, &a.func))
		return CUDA_ERROR_INVALID_HANDLE;
	if (blockSizeToDynamicSMemSize)
		return xc_occupancy_local(minGridSize, blockSize, func,
					  blockSizeToDynamicSMemSize,
					  blockSizeLimit, flags);
	a.flags = flags;
	a.dsmem = dynamicSMemSize;
	a.limit = blockSizeLimit;
	err = xc_drv_forward(XCUDA_OP_DRV_OCC_POTENTIAL_BLOCK,
			     &a, sizeof(a), &r, sizeof(r));
	if (err)
		return xc_drv_result(err);
	*minGridSize = r.min_grid;
	*blockSize = r.block;
	return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxPotentialBlockSize(
	int *minGridSize, int *blockSize, CUfunction func,
	CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
	int blockSizeLimit)
{
	return cuOccupancyMaxPotentialBlockSizeWithFlags(
		minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
		dynamicSMemSize, blockSizeLimit, CU_OCCUPANCY_DEFAULT);
}

/*
 * cuLaunchKernelEx: the attributes travel as LAUNCH_EX's (the driver's
 * are laid out as the runtime's), then the packed parameters, in one
 * staged block; a round trip, since a device-updatable node's handle
 * comes back.
 */
static CUresult xc_launch_ex(const CUlaunchConfig *c, CUfunction fn,
			     void **kernelParams, void **extra,
			     int per_thread)
{
	struct xcuda_drv_launch_kernel_ex_args a;
	struct xc_session *s = xc_session_peek();
	struct xcuda_launch_attr *w = NULL;
	struct xcuda_request req;
	struct xc_drv_func f;
	uint64_t blk = UINT64_MAX, abytes, size, got;
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	if (!s || !c || (c->numAttrs && !c->attrs) ||
	    c->numAttrs > XCUDA_LAUNCH_MAX_ATTRS)
		return s ? CUDA_ERROR_INVALID_VALUE :
			   CUDA_ERROR_NOT_INITIALIZED;
	memset(&a, 0, sizeof(a));
	if (!fn || xc_handle_in(fn, &a.func) || xc_func_get(a.func, &f)) {
		/* A CUkernel launches as its function in the context. */
		if (!fn || !xc_func_by_kernel(fn))
			return CUDA_ERROR_INVALID_HANDLE;
		err = cuKernelGetFunction(&fn, (CUkernel)fn);
		if (err)
			return (CUresult)err;
		if (xc_handle_in(fn, &a.func) || xc_func_get(a.func, &f))
			return CUDA_ERROR_INVALID_HANDLE;
	}
	if (xc_stream_handle(c->hStream, per_thread, &a.stream)) {
		free(f.layout);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	abytes = (uint64_t)c->numAttrs * sizeof(*w);
	size = abytes + f.size;
	pthread_mutex_lock(&s->lock);
	if (size) {
		blk = xc_staging_get(s, size, size, &got);
		if (blk == UINT64_MAX) {
			err = CUDA_ERROR_OUT_OF_MEMORY;
			goto out;
		}
		w = xc_arena_ptr(s, blk);
		memset(w, 0, size);
	}
	if (xc_attrs_out((const cudaLaunchAttribute *)c->attrs, c->numAttrs,
			 w)) {
		err = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	err = xc_pack(&f, kernelParams, extra, (uint8_t *)w + abytes);
	if (err)
		goto out;
	a.grid[0] = c->gridDimX;
	a.grid[1] = c->gridDimY;
	a.grid[2] = c->gridDimZ;
	a.block[0] = c->blockDimX;
	a.block[1] = c->blockDimY;
	a.block[2] = c->blockDimZ;
	a.shmem = c->sharedMemBytes;
	a.nattrs = c->numAttrs;
	a.nparams = f.nparams;
	a.params_len = f.size;
	xc_req_drv_launch_kernel_ex(&req, &a);
	if (blk != UINT64_MAX) {
		req.hdr.data_off = (uint32_t)blk;
		req.hdr.data_len = (uint32_t)size;
	}
	err = xc_drv_result(xc_round_trip_locked(s, &req, NULL, 0));
	if (!err)
		xc_attrs_in((cudaLaunchAttribute *)c->attrs, c->numAttrs, w);
out:
	if (blk != UINT64_MAX)
		xc_arena_release(s->staging, blk);
	pthread_mutex_unlock(&s->lock);
	free(f.layout);
	return (CUresult)err;
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
			  void **kernelParams, void **extra)
{
	return xc_launch_ex(config, f, kernelParams, extra, 0);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
			       void **kernelParams, void **extra);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
			       void **kernelParams, void **extra)
{
	return xc_launch_ex(config, f, kernelParams, extra, 1);
}
