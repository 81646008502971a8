// SPDX-License-Identifier: MIT
/*
 * The launch paths beyond <<<>>> and cudaLaunchKernel: cooperative
 * launches, cudaLaunchKernelExC (and the cudaLaunchKernelEx templates of
 * cuda_runtime.h built on it) with its launch attributes, the cluster
 * occupancy queries, and the kernel queries answered from the registry.
 *
 * Cooperative and attributed launches are round trips rather than posted:
 * CUDA answers their most common errors (a grid too large to be
 * co-resident, a cluster shape the grid or the device refuses) at the
 * call, and so must we.
 */
#include <string.h>

#include "xcuda/launch.h"
#include "guest.h"

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim,
					     dim3 blockDim, void **args,
					     size_t sharedMem,
					     cudaStream_t stream);
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config,
				     const void *func, void **args);

/*
 * Sends @req and waits for its answer (lock held), copying up to @res_len
 * result bytes.  Launches report earlier asynchronous errors as posted
 * launches do, later; queries (@latched) take them as any call does.
 */
static cudaError_t xc_round_trip(struct xc_session *s,
				 struct xcuda_request *req, void *res,
				 size_t res_len, int latched)
{
	cudaError_t err = xc_round_trip_locked(s, req, res, res_len);

	if (!err && latched)
		err = xc_take_latched(s);
	return err;
}

static cudaError_t xc_launch_coop(const void *func, dim3 g, dim3 b,
				  void **args, size_t shmem,
				  cudaStream_t stream, int per_thread)
{
	struct xc_func *f = xc_func_lookup(func);
	struct xcuda_request req;
	struct xc_session *s;
	cudaError_t err = xc_ready(&s);
	uint64_t blk = UINT64_MAX;
	uint32_t sh;

	if (err)
		return xc_ret(err);
	if (!f)
		return xc_ret(cudaErrorInvalidResourceHandle);
	if (xc_stream_handle(stream, per_thread, &sh))
		return xc_ret(cudaErrorInvalidResourceHandle);
	err = xc_launch_check(NULL, g, b, shmem);
	if (!err && shmem > UINT32_MAX)
		err = cudaErrorInvalidValue;
	if (err)
		return xc_ret(err);

	pthread_mutex_lock(&s->lock);
	err = xc_launch_req(s, f, XCUDA_OP_LAUNCH_COOPERATIVE, sh, g, b, shmem,
			    args, &req, &blk);
	if (!err)
		err = xc_round_trip(s, &req, NULL, 0, 0);
	if (blk != UINT64_MAX)
		xc_arena_release(s->staging, blk);
	pthread_mutex_unlock(&s->lock);
	return xc_ret(err);
}

cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim,
					dim3 blockDim, void **args,
					size_t sharedMem, cudaStream_t stream)
{
	return xc_launch_coop(func, gridDim, blockDim, args, sharedMem,
			      stream, 0);
}

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim,
					     dim3 blockDim, void **args,
					     size_t sharedMem,
					     cudaStream_t stream)
{
	return xc_launch_coop(func, gridDim, blockDim, args, sharedMem,
			      stream, 1);
}

/* A configuration's grid and block, as the wire has them. */
static void xc_cfg_dims(const cudaLaunchConfig_t *c, uint32_t grid[3],
			uint32_t block[3])
{
	grid[0] = c->gridDim.x;
	grid[1] = c->gridDim.y;
	grid[2] = c->gridDim.z;
	block[0] = c->blockDim.x;
	block[1] = c->blockDim.y;
	block[2] = c->blockDim.z;
}

cudaError_t xc_attrs_out(const cudaLaunchAttribute *attrs,
				unsigned int n, struct xcuda_launch_attr *w)
{
	const cudaLaunchAttributeValue *v;
	cudaEvent_t ev;
	uint64_t h64;
	uint32_t h;
	unsigned int i;

	for (i = 0; i < n; i++) {
		v = &attrs[i].val;
		memset(&w[i], 0, sizeof(w[i]));
		memcpy(&w[i].id, &attrs[i].id, sizeof(w[i].id));
		memcpy(w[i].val, v, sizeof(w[i].val));
		switch (w[i].id) {
		case cudaLaunchAttributeProgrammaticEvent:
		case cudaLaunchAttributeLaunchCompletionEvent:
			/* Both keep their event first. */
			ev = v->programmaticEvent.event;
			h = 0;
			if (ev && xc_event_handle(ev, &h))
				return cudaErrorInvalidResourceHandle;
			h64 = h;
			memcpy(w[i].val, &h64, sizeof(h64));
			break;
		case cudaLaunchAttributeDeviceUpdatableKernelNode:
			memset(w[i].val + offsetof(cudaLaunchAttributeValue,
				deviceUpdatableKernelNode.devNode), 0,
			       sizeof(void *));
			break;
		default:
			break;
		}
	}
	return cudaSuccess;
}

void xc_attrs_in(cudaLaunchAttribute *attrs, unsigned int n,
			const struct xcuda_launch_attr *w)
{
	const size_t off = offsetof(cudaLaunchAttributeValue,
				    deviceUpdatableKernelNode.devNode);
	unsigned int i;

	for (i = 0; i < n; i++)
		if (w[i].id == cudaLaunchAttributeDeviceUpdatableKernelNode)
			memcpy((uint8_t *)&attrs[i].val + off, w[i].val + off,
			       sizeof(void *));
}

/* The checks of a launch configuration that need no worker. */
static cudaError_t xc_config_ok(const cudaLaunchConfig_t *c)
{
	if (!c || (c->numAttrs && !c->attrs))
		return cudaErrorInvalidValue;
	if (c->numAttrs > XCUDA_LAUNCH_MAX_ATTRS)
		return cudaErrorInvalidValue;
	return cudaSuccess;
}

static cudaError_t xc_launch_ex(const cudaLaunchConfig_t *c,
				const void *func, void **args, int per_thread)
{
	struct xcuda_launch_ex_args a = { 0 };
	struct xc_func *f = xc_func_lookup(func);
	struct xcuda_launch_attr *w;
	struct xcuda_request req;
	struct xc_session *s;
	cudaError_t err = xc_ready(&s);
	uint64_t blk = UINT64_MAX, abytes, size, got, unused;

	if (err)
		return xc_ret(err);
	err = xc_config_ok(c);
	if (err)
		return xc_ret(err);
	if (!f)
		return xc_ret(cudaErrorInvalidResourceHandle);
	if (xc_stream_handle(c->stream, per_thread, &a.stream))
		return xc_ret(cudaErrorInvalidResourceHandle);
	err = xc_launch_check(NULL, c->gridDim, c->blockDim,
			      c->dynamicSmemBytes);
	if (err)
		return xc_ret(err);

	pthread_mutex_lock(&s->lock);
	err = xc_func_resolve(s, f);
	if (!err)
		err = xc_launch_check(f, c->gridDim, c->blockDim,
				      c->dynamicSmemBytes);
	if (err)
		goto out;
	abytes = (uint64_t)c->numAttrs * sizeof(*w);
	size = abytes + f->args_size;
	if (size) {
		blk = xc_staging_get(s, size, size, &got);
		if (blk == UINT64_MAX) {
			err = cudaErrorMemoryAllocation;
			goto out;
		}
	}
	w = blk == UINT64_MAX ? NULL : xc_arena_ptr(s, blk);
	err = xc_attrs_out(c->attrs, c->numAttrs, w);
	if (!err && f->args_size)
		err = xc_args_pack(s, f, args, &req, (uint8_t *)w + abytes,
				   f->args_size, &unused);
	if (err)
		goto out;
	a.func = f->handle;
	xc_cfg_dims(c, a.grid, a.block);
	a.nattrs = c->numAttrs;
	a.args_len = f->args_size;
	a.shmem = c->dynamicSmemBytes;
	xc_req_launch_ex(&req, &a);
	if (blk != UINT64_MAX) {
		req.hdr.data_off = (uint32_t)blk;
		req.hdr.data_len = (uint32_t)size;
	}
	err = xc_round_trip(s, &req, NULL, 0, 0);
	if (!err)
		xc_attrs_in(c->attrs, c->numAttrs, w);
out:
	if (blk != UINT64_MAX)
		xc_arena_release(s->staging, blk);
	pthread_mutex_unlock(&s->lock);
	return xc_ret(err);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config,
				const void *func, void **args)
{
	return xc_launch_ex(config, func, args, 0);
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config,
				     const void *func, void **args)
{
	return xc_launch_ex(config, func, args, 1);
}

/*
 * The cluster occupancy queries: both take the kernel and a launch
 * configuration, and answer one int.
 */
static cudaError_t xc_occ_cluster(uint16_t op, int *out, const void *func,
				  const cudaLaunchConfig_t *c)
{
	struct xcuda_occupancy_max_active_clusters_args a = { 0 };
	struct xcuda_occupancy_max_active_clusters_res r;
	struct xc_func *f = xc_func_lookup(func);
	struct xcuda_request req;
	struct xc_session *s;
	cudaError_t err = xc_ready(&s);
	uint64_t blk = UINT64_MAX, size, got;

	if (err)
		return xc_ret(err);
	if (!out)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_config_ok(c);
	if (err)
		return xc_ret(err);
	if (!f)
		return xc_ret(xc_func_unknown(func));
	if (xc_stream_handle(c->stream, 0, &a.stream))
		return xc_ret(cudaErrorInvalidResourceHandle);

	pthread_mutex_lock(&s->lock);
	err = xc_func_resolve(s, f);
	if (err)
		goto out;
	size = (uint64_t)c->numAttrs * sizeof(struct xcuda_launch_attr);
	if (size) {
		blk = xc_staging_get(s, size, size, &got);
		if (blk == UINT64_MAX) {
			err = cudaErrorMemoryAllocation;
			goto out;
		}
		err = xc_attrs_out(c->attrs, c->numAttrs,
				   xc_arena_ptr(s, blk));
		if (err)
			goto out;
	}
	a.func = f->handle;
	a.nattrs = c->numAttrs;
	xc_cfg_dims(c, a.grid, a.block);
	a.shmem = c->dynamicSmemBytes;
	/* The two commands share their layout (checked below). */
	xc_req_init(&req, op, sizeof(a));
	memcpy(req.args, &a, sizeof(a));
	if (blk != UINT64_MAX) {
		req.hdr.data_off = (uint32_t)blk;
		req.hdr.data_len = (uint32_t)size;
	}
	err = xc_round_trip(s, &req, &r, sizeof(r), 1);
	if (!err)
		*out = r.value;
out:
	if (blk != UINT64_MAX)
		xc_arena_release(s->staging, blk);
	pthread_mutex_unlock(&s->lock);
	return xc_ret(err);
}

_Static_assert(sizeof(struct xcuda_occupancy_max_active_clusters_args) ==
	       sizeof(struct xcuda_occupancy_max_potential_cluster_size_args),
	       "cluster occupancy layouts");
_Static_assert(sizeof(struct xcuda_occupancy_max_active_clusters_res) ==
	       sizeof(struct xcuda_occupancy_max_potential_cluster_size_res),
	       "cluster occupancy results");

cudaError_t cudaOccupancyMaxPotentialClusterSize(
	int *clusterSize, const void *func,
	const cudaLaunchConfig_t *launchConfig)
{
	return xc_occ_cluster(XCUDA_OP_OCCUPANCY_MAX_POTENTIAL_CLUSTER_SIZE,
			      clusterSize, func, launchConfig);
}

cudaError_t cudaOccupancyMaxActiveClusters(
	int *numClusters, const void *func,
	const cudaLaunchConfig_t *launchConfig)
{
	return xc_occ_cluster(XCUDA_OP_OCCUPANCY_MAX_ACTIVE_CLUSTERS,
			      numClusters, func, launchConfig);
}

/*
 * Kernel queries the registry answers: the name the program registered
 * (the mangled one, as CUDA answers), the layout the worker reported,
 * and the registry's own handle as the kernel or function.  Each waits
 * for the session first, so that a process without a GPU fails them as
 * CUDA does.  A pointer that names no kernel answers as CUDA 13 does:
 * cudaErrorInvalidResourceHandle where a cudaKernel_t is accepted,
 * cudaErrorInvalidDeviceFunction from the two that take only an entry
 * function's address (cudaGetKernel, cudaGetFuncBySymbol).
 */
/* A query's kernel: the session ready, @out given, @func known. */
static cudaError_t xc_func_query(const void *func, const void *out,
				 cudaError_t unknown, struct xc_func **f)
{
	struct xc_session *s;
	cudaError_t err = xc_ready(&s);

	if (err)
		return err;
	if (!out)
		return cudaErrorInvalidValue;
	*f = xc_func_lookup(func);
	return *f ? cudaSuccess : unknown;
}

cudaError_t cudaFuncGetName(const char **name, const void *func)
{
	struct xc_func *f;
	cudaError_t err = xc_func_query(func, name, xc_func_unknown(func), &f);

	if (err)
		return xc_ret(err);
	*name = f->name;
	return cudaSuccess;
}

cudaError_t cudaFuncGetParamInfo(const void *func, size_t paramIndex,
				 size_t *paramOffset, size_t *paramSize)
{
	struct xc_session *s;
	struct xc_func *f = xc_func_lookup(func);
	cudaError_t err = xc_ready(&s);

	if (err)
		return xc_ret(err);
	if (!f)
		return xc_ret(xc_func_unknown(func));
	pthread_mutex_lock(&s->lock);
	err = xc_func_resolve(s, f);
	if (!err && paramIndex >= f->nparams)
		err = cudaErrorInvalidValue;
	if (!err) {
		if (paramOffset)
			*paramOffset = f->params[paramIndex].offset;
		if (paramSize)
			*paramSize = f->params[paramIndex].size;
	}
	pthread_mutex_unlock(&s->lock);
	return xc_ret(err);
}

static cudaError_t xc_kernel_of(void **out, const void *func)
{
	struct xc_func *f;
	cudaError_t err = xc_func_query(func, out,
					cudaErrorInvalidDeviceFunction, &f);

	if (err)
		return xc_ret(err);
	*out = f;
	return cudaSuccess;
}

cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
	return xc_kernel_of((void **)kernelPtr, entryFuncAddr);
}

/*
 * The handle answered is the registry's, which every runtime call that
 * takes a kernel accepts; it is no driver CUfunction (no libcuda here).
 */
cudaError_t cudaGetFuncBySymbol(cudaFunction_t *functionPtr,
				const void *symbolPtr)
{
	return xc_kernel_of((void **)functionPtr, symbolPtr);
}
