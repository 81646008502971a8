// SPDX-License-Identifier: MIT
/*
 * The driver API's initialisation, contexts and the helpers every driver
 * call uses (driver.h).  A context is a small record here: the primary
 * context of each device, and those cuCtxCreate makes, which name a
 * device's primary context in the worker.  Each thread has a current
 * context and a stack of pushed ones, as with the driver.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

struct CUctx_st {
	int device;
	int primary;		/* the device's primary context */
	unsigned int flags;
	int live;		/* 0: destroyed (created contexts only) */
};

static pthread_mutex_t xc_drv_lock = PTHREAD_MUTEX_INITIALIZER;
static int xc_drv_inited;	/* cuInit succeeded */
static int xc_drv_ndev;
static int xc_drv_version;
static struct CUctx_st xc_primary[XCUDA_MAX_DEVICES];
static int xc_primary_refs[XCUDA_MAX_DEVICES];

#define XC_CTX_STACK	64

static __thread CUcontext xc_cur_ctx;
/* xc_runtime_called() when the program last set the current context. */
static __thread unsigned int xc_rt_mark;
static __thread CUcontext xc_ctx_stack[XC_CTX_STACK];
static __thread unsigned int xc_ctx_depth;

int xc_drv_device_count(void)
{
	return xc_drv_ndev;
}

/*
 * The thread's current context.  A runtime call made since the program
 * last set it (or ever) left its device's primary context current, as
 * the runtime does natively.
 */
static CUcontext xc_ctx_current(void)
{
	if (!xc_cur_ctx && xc_runtime_called() != xc_rt_mark && xc_drv_ndev)
		return &xc_primary[xc_cur_device()];
	return xc_cur_ctx;
}

static void xc_ctx_make_current(CUcontext c)
{
	xc_cur_ctx = c;
	xc_rt_mark = xc_runtime_called();
	if (c)
		xc_set_cur_device(c->device);
}

int xc_drv_enter(int need_ctx)
{
	CUcontext c;

	/*
	 * The runtime initialises the driver natively: a program that used
	 * the runtime may call the driver without cuInit (PyTorch does).
	 */
	if (!__atomic_load_n(&xc_drv_inited, __ATOMIC_ACQUIRE) &&
	    (!xc_session_peek() || cuInit(0) != CUDA_SUCCESS))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!need_ctx)
		return 0;
	c = xc_ctx_current();
	if (!c || !c->live)
		return CUDA_ERROR_INVALID_CONTEXT;
	xc_set_cur_device(c->device);
	return 0;
}

CUresult xc_drv_result(int err)
{
	switch (err) {
	case cudaErrorInsufficientDriver:
		/* No driver behind the session: none that finds a device. */
		return CUDA_ERROR_NO_DEVICE;
	case cudaErrorInvalidDevicePointer:
	case cudaErrorInvalidMemcpyDirection:
	case cudaErrorInvalidPitchValue:
		return CUDA_ERROR_INVALID_VALUE;
	case cudaErrorInvalidSymbol:
		return CUDA_ERROR_NOT_FOUND;
	case cudaErrorInvalidDeviceFunction:
		return CUDA_ERROR_INVALID_HANDLE;
	default:
		/* The other codes are the driver's own numbers. */
		return (CUresult)err;
	}
}

cudaError_t xc_drv_rt_begin(void)
{
	return xc_last_error(0);
}

CUresult xc_drv_rt_end(cudaError_t saved, cudaError_t err)
{
	xc_set_last_error(saved);
	return xc_drv_result(err);
}

CUresult cuInit(unsigned int Flags)
{
	struct xcuda_drv_init_args a = { Flags, 0 };
	struct xcuda_drv_init_res r = { 0, 0 };
	int err;
	int i;

	pthread_mutex_lock(&xc_drv_lock);
	if (xc_drv_inited) {
		pthread_mutex_unlock(&xc_drv_lock);
		return CUDA_SUCCESS;
	}
	err = xc_drv_forward(XCUDA_OP_DRV_INIT, &a, sizeof(a), &r, sizeof(r));
	if (!err && (r.count < 0 || r.count > XCUDA_MAX_DEVICES))
		err = CUDA_ERROR_UNKNOWN;
	if (!err) {
		xc_drv_ndev = r.count;
		xc_drv_version = r.version;
		for (i = 0; i < XCUDA_MAX_DEVICES; i++) {
			xc_primary[i].device = i;
			xc_primary[i].primary = 1;
			xc_primary[i].live = 1;
		}
		__atomic_store_n(&xc_drv_inited, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&xc_drv_lock);
	return xc_drv_result(err);
}

/* The CUDA version this library implements: the driver API of 13.0. */
#define XC_DRV_API_VERSION	13000

CUresult cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	/* Natively answered before cuInit too: the library's version. */
	*driverVersion = xc_drv_inited && xc_drv_version ? xc_drv_version :
			 XC_DRV_API_VERSION;
	return CUDA_SUCCESS;
}

static int xc_dev_ok(CUdevice dev)
{
	return dev >= 0 && dev < xc_drv_ndev;
}

CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
	CUresult err;

	if (!major || !minor)
		return CUDA_ERROR_INVALID_VALUE;
	err = cuDeviceGetAttribute(major,
				   CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
				   dev);
	if (!err)
		err = cuDeviceGetAttribute(
			minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
			dev);
	return err;
}

/* ---- primary contexts ---- */

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!xc_dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&xc_drv_lock);
	xc_primary_refs[dev]++;
	pthread_mutex_unlock(&xc_drv_lock);
	*pctx = &xc_primary[dev];
	return CUDA_SUCCESS;
}

/*
 * The worker's runtime keeps the primary context alive whatever the
 * program's count says: releasing the last reference leaves it usable,
 * where the driver would destroy it.
 */
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	if (!xc_dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&xc_drv_lock);
	if (xc_primary_refs[dev] > 0)
		xc_primary_refs[dev]--;
	pthread_mutex_unlock(&xc_drv_lock);
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	int err = xc_drv_enter(0);
	int old;

	if (err)
		return (CUresult)err;
	if (!xc_dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	/* The runtime's reset is the primary context's. */
	old = xc_cur_device();
	xc_set_cur_device(dev);
	err = XC_DRV_RT(cudaDeviceReset());
	xc_set_cur_device(old);
	return (CUresult)err;
}

/*
 * The primary contexts' state, as the worker last answered it while
 * active: it stays so until a reset, and its flags until they are set
 * (xc_ctx_epoch() says when either happened).
 */
static struct {
	unsigned int flags;
	unsigned int epoch;
	int known;
} xc_primary_state[XCUDA_MAX_DEVICES];

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags,
				    int *active)
{
	struct xcuda_drv_primary_ctx_get_state_args a = { 0 };
	struct xcuda_drv_primary_ctx_get_state_res r = { 0 };
	unsigned int epoch = xc_ctx_epoch();
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	if (xc_dev_ok(dev)) {
		pthread_mutex_lock(&xc_drv_lock);
		if (xc_primary_state[dev].known &&
		    xc_primary_state[dev].epoch == epoch) {
			*flags = xc_primary_state[dev].flags;
			*active = 1;
			pthread_mutex_unlock(&xc_drv_lock);
			return CUDA_SUCCESS;
		}
		pthread_mutex_unlock(&xc_drv_lock);
	}
	a.dev = dev;
	err = xc_call_drv_primary_ctx_get_state(&a, &r);
	if (err)
		return xc_drv_result(err);
	if (r.active && xc_dev_ok(dev)) {
		pthread_mutex_lock(&xc_drv_lock);
		xc_primary_state[dev].flags = r.flags;
		xc_primary_state[dev].epoch = epoch;
		xc_primary_state[dev].known = 1;
		pthread_mutex_unlock(&xc_drv_lock);
	}
	*flags = r.flags;
	*active = r.active;
	return CUDA_SUCCESS;
}

/* ---- the current context ---- */

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = xc_ctx_current();
	return CUDA_SUCCESS;
}

static int xc_ctx_ok(CUcontext c)
{
	if (c >= xc_primary && c < xc_primary + XCUDA_MAX_DEVICES)
		return xc_dev_ok(c->device);
	return c && c->live;
}

CUcontext xc_ctx_primary(int dev)
{
	return xc_dev_ok(dev) ? &xc_primary[dev] : NULL;
}

int xc_ctx_device(CUcontext c)
{
	return xc_ctx_ok(c) ? c->device : -1;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	if (ctx && !xc_ctx_ok(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	xc_ctx_make_current(ctx);
	return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	if (!ctx || !xc_ctx_ok(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (xc_ctx_depth >= XC_CTX_STACK)
		return CUDA_ERROR_OUT_OF_MEMORY;
	xc_ctx_stack[xc_ctx_depth++] = xc_cur_ctx;
	xc_ctx_make_current(ctx);
	return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
	int err = xc_drv_enter(0);
	CUcontext c;

	if (err)
		return (CUresult)err;
	c = xc_ctx_current();
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (pctx)
		*pctx = c;
	xc_ctx_make_current(xc_ctx_depth ? xc_ctx_stack[--xc_ctx_depth] :
			    NULL);
	return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device)
{
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	*device = xc_ctx_current()->device;
	return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	return XC_DRV_RT(cudaDeviceSynchronize());
}

CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	if (ctx ? !xc_ctx_ok(ctx) : !xc_ctx_current())
		return CUDA_ERROR_INVALID_CONTEXT;
	*version = 3020;	/* every context since CUDA 3.2 */
	return CUDA_SUCCESS;
}

/* ---- created contexts ---- */

static CUresult xc_ctx_create(CUcontext *pctx, unsigned int flags,
			      CUdevice dev)
{
	int err = xc_drv_enter(0);
	CUcontext c;

	if (err)
		return (CUresult)err;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!xc_dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->device = dev;
	c->flags = flags;
	c->live = 1;
	/* A new context is pushed on the thread's stack, as natively. */
	if (xc_ctx_depth >= XC_CTX_STACK) {
		free(c);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	xc_ctx_stack[xc_ctx_depth++] = xc_cur_ctx;
	xc_ctx_make_current(c);
	*pctx = c;
	return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	return xc_ctx_create(pctx, flags, dev);
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params,
			unsigned int flags, CUdevice dev)
{
	/* Execution affinity and CIG need the driver's own contexts. */
	if (params && (params->execAffinityParams || params->cigParams))
		return CUDA_ERROR_NOT_SUPPORTED;
	return xc_ctx_create(pctx, flags, dev);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	int err = xc_drv_enter(0);
	unsigned int i;

	if (err)
		return (CUresult)err;
	if (!ctx || !xc_ctx_ok(ctx) || ctx->primary)
		return CUDA_ERROR_INVALID_CONTEXT;
	/* Its work is done first, as the driver's destroy waits for it. */
	err = XC_DRV_RT(cudaDeviceSynchronize());
	if (xc_cur_ctx == ctx)
		xc_ctx_make_current(NULL);
	for (i = 0; i < xc_ctx_depth; i++)
		if (xc_ctx_stack[i] == ctx)
			xc_ctx_stack[i] = NULL;
	/* Never freed: a stale handle must still read as destroyed. */
	ctx->live = 0;
	return (CUresult)err;
}

/* ---- the context's limits and configuration: the runtime's ---- */

/* CUlimit and CUfunc_cache have cudaLimit's and cudaFuncCache's values. */
CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	return XC_DRV_RT(cudaDeviceGetLimit(pvalue, (enum cudaLimit)limit));
}

CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	return XC_DRV_RT(cudaDeviceSetLimit((enum cudaLimit)limit, value));
}

CUresult cuCtxGetCacheConfig(CUfunc_cache *pconfig)
{
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	return XC_DRV_RT(cudaDeviceGetCacheConfig(
		(enum cudaFuncCache *)pconfig));
}

CUresult cuCtxSetCacheConfig(CUfunc_cache config)
{
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	return XC_DRV_RT(cudaDeviceSetCacheConfig((enum cudaFuncCache)config));
}

CUresult cuCtxGetStreamPriorityRange(int *leastPriority,
				     int *greatestPriority)
{
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	return XC_DRV_RT(cudaDeviceGetStreamPriorityRange(leastPriority,
							  greatestPriority));
}

CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	return XC_DRV_RT(cudaDeviceGetPCIBusId(pciBusId, len, dev));
}

CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	return XC_DRV_RT(cudaDeviceGetByPCIBusId(dev, pciBusId));
}
