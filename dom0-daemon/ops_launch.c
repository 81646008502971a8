// SPDX-License-Identifier: MIT
/*
 * The launch paths beyond LAUNCH (spec/cudart-launch.calls): cooperative
 * launches, cudaLaunchKernelExC with launch attributes, and the cluster
 * occupancy queries that take a launch configuration.
 *
 * Launch attributes come as struct xcuda_launch_attr records in the
 * request's extent.  They are copied out of the arena once, at most
 * XCUDA_LAUNCH_MAX_ATTRS of them, and translated into a private
 * cudaLaunchAttribute array: events (programmatic, launch completion)
 * are session handles looked up in the event table; the output handle of
 * a device-updatable kernel node is never taken from the guest; every
 * other value is numbers and device addresses and goes to CUDA as it
 * came, unknown ids included, so that CUDA answers them.
 */
#include <stddef.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "ops.h"
#include "ops_launch.h"

_Static_assert(sizeof(struct xcuda_launch_cooperative_args) ==
	       sizeof(struct xcuda_launch_args), "cooperative = LAUNCH");
_Static_assert(offsetof(struct xcuda_launch_cooperative_args, args) ==
	       offsetof(struct xcuda_launch_args, args), "cooperative args");
_Static_assert(sizeof(cudaLaunchAttributeValue) == XCUDA_LAUNCH_ATTR_VAL,
	       "attribute value");

#define XD_ATTR_BYTES	sizeof(struct xcuda_launch_attr)

/* An event named by a wire handle: 0 is NULL (CUDA answers it). */
static int xd_attr_event(struct xd_session *s, const uint8_t *val,
			 cudaEvent_t *ev)
{
	uint64_t h;

	memcpy(&h, val, sizeof(h));
	*ev = NULL;
	if (!h)
		return 0;
	if (h > UINT32_MAX)
		return cudaErrorInvalidResourceHandle;
	*ev = xd_object_get(&s->events, (uint32_t)h);
	return *ev ? 0 : cudaErrorInvalidResourceHandle;
}

int xd_launch_attrs(struct xd_session *s, const uint8_t *src, uint32_t n,
		    struct xd_attrs *at)
{
	cudaLaunchAttribute *c;
	cudaEvent_t ev;
	uint32_t i;
	int err;

	if (n > XCUDA_LAUNCH_MAX_ATTRS)
		return cudaErrorInvalidValue;
	/* The one read of the guest's records. */
	memcpy(at->wire, src, n * XD_ATTR_BYTES);
	at->n = n;
	for (i = 0; i < n; i++) {
		c = &at->cuda[i];
		memset(c, 0, sizeof(*c));
		/* Any u32 id, known or not: no enum holds a stray value. */
		memcpy(&c->id, &at->wire[i].id, sizeof(c->id));
		memcpy(&c->val, at->wire[i].val, sizeof(c->val));
		switch (at->wire[i].id) {
		case cudaLaunchAttributeProgrammaticEvent:
			err = xd_attr_event(s, at->wire[i].val, &ev);
			if (err)
				return err;
			c->val.programmaticEvent.event = ev;
			break;
		case cudaLaunchAttributeLaunchCompletionEvent:
			err = xd_attr_event(s, at->wire[i].val, &ev);
			if (err)
				return err;
			c->val.launchCompletionEvent.event = ev;
			break;
		case cudaLaunchAttributeDeviceUpdatableKernelNode:
			c->val.deviceUpdatableKernelNode.devNode = NULL;
			break;
		default:
			break;
		}
	}
	return 0;
}

int xd_op_launch_cooperative(struct xd_session *s,
			     const struct xcuda_launch_cooperative_args *a,
			     struct xd_call *call)
{
	struct xcuda_launch_args l;
	cudaKernel_t k;
	cudaStream_t st;
	dim3 grid, block;
	int err;

	memcpy(&l, a, sizeof(l));
	err = xd_launch_fixed(s, &l, call, &k, &st);
	if (err)
		return err;
	grid = (dim3){ a->grid[0], a->grid[1], a->grid[2] };
	block = (dim3){ a->block[0], a->block[1], a->block[2] };
	return cudaLaunchCooperativeKernel((const void *)k, grid, block,
					   s->argv, a->shmem, st);
}

void xd_attrs_answer(struct xd_call *call, const struct xd_attrs *at)
{
	const size_t off = offsetof(struct xcuda_launch_attr, val) +
			   offsetof(cudaLaunchAttributeValue,
				    deviceUpdatableKernelNode.devNode);
	uint64_t node;
	uint32_t i;

	for (i = 0; i < at->n; i++) {
		if (at->wire[i].id !=
		    cudaLaunchAttributeDeviceUpdatableKernelNode)
			continue;
		node = (uintptr_t)
			at->cuda[i].val.deviceUpdatableKernelNode.devNode;
		memcpy(call->data + i * XD_ATTR_BYTES + off, &node,
		       sizeof(node));
	}
}

int xd_op_launch_ex(struct xd_session *s, const struct xcuda_launch_ex_args *a,
		    struct xd_call *call)
{
	struct xd_attrs at;
	cudaLaunchConfig_t cfg;
	uint64_t abytes;
	cudaKernel_t k;
	int err;

	if (a->nattrs > XCUDA_LAUNCH_MAX_ATTRS ||
	    a->args_len > XCUDA_MAX_ARGS_BYTES)
		return cudaErrorInvalidValue;
	abytes = (uint64_t)a->nattrs * XD_ATTR_BYTES;
	if (call->data_len != abytes + a->args_len)
		return cudaErrorInvalidValue;
	memset(&cfg, 0, sizeof(cfg));
	err = xd_stream_lookup(&s->streams, a->stream, &cfg.stream);
	if (!err)
		err = xd_launch_attrs(s, call->data, a->nattrs, &at);
	if (!err)
		err = xd_launch_argv(s, a->func, call->data + abytes,
				     a->args_len, &k);
	if (err)
		return err;
	cfg.gridDim = (dim3){ a->grid[0], a->grid[1], a->grid[2] };
	cfg.blockDim = (dim3){ a->block[0], a->block[1], a->block[2] };
	cfg.dynamicSmemBytes = a->shmem;
	cfg.attrs = at.n ? at.cuda : NULL;
	cfg.numAttrs = at.n;
	err = cudaLaunchKernelExC(&cfg, (const void *)k, s->argv);
	if (!err)
		xd_attrs_answer(call, &at);
	return err;
}

/* The configuration of the cluster occupancy queries, with its kernel. */
static int xd_occ_config(struct xd_session *s, uint32_t func, uint32_t stream,
			 uint32_t nattrs, const uint32_t *grid,
			 const uint32_t *block, uint64_t shmem,
			 struct xd_call *call, struct xd_attrs *at,
			 cudaLaunchConfig_t *cfg, cudaKernel_t *k)
{
	int err;

	if (nattrs > XCUDA_LAUNCH_MAX_ATTRS ||
	    call->data_len != nattrs * XD_ATTR_BYTES)
		return cudaErrorInvalidValue;
	memset(cfg, 0, sizeof(*cfg));
	err = xd_kernel_lookup(s, func, k);
	if (!err)
		err = xd_stream_lookup(&s->streams, stream, &cfg->stream);
	if (!err)
		err = xd_launch_attrs(s, call->data, nattrs, at);
	if (err)
		return err;
	cfg->gridDim = (dim3){ grid[0], grid[1], grid[2] };
	cfg->blockDim = (dim3){ block[0], block[1], block[2] };
	cfg->dynamicSmemBytes = shmem;
	cfg->attrs = at->n ? at->cuda : NULL;
	cfg->numAttrs = at->n;
	return 0;
}

/* The two cluster queries: @active picks which. */
static int xd_occ_cluster(struct xd_session *s, uint32_t func,
			  uint32_t stream, uint32_t nattrs,
			  const uint32_t *grid, const uint32_t *block,
			  uint64_t shmem, struct xd_call *call, int active,
			  int32_t *value)
{
	struct xd_attrs at;
	cudaLaunchConfig_t cfg;
	cudaKernel_t k;
	int err, v = 0;

	err = xd_occ_config(s, func, stream, nattrs, grid, block, shmem, call,
			    &at, &cfg, &k);
	if (!err)
		err = active ?
			cudaOccupancyMaxActiveClusters(&v, (const void *)k,
						       &cfg) :
			cudaOccupancyMaxPotentialClusterSize(&v,
							     (const void *)k,
							     &cfg);
	*value = v;
	return err;
}

int xd_op_occupancy_max_potential_cluster_size(
	struct xd_session *s,
	const struct xcuda_occupancy_max_potential_cluster_size_args *a,
	struct xcuda_occupancy_max_potential_cluster_size_res *r,
	struct xd_call *call)
{
	return xd_occ_cluster(s, a->func, a->stream, a->nattrs, a->grid,
			      a->block, a->shmem, call, 0, &r->value);
}

int xd_op_occupancy_max_active_clusters(
	struct xd_session *s,
	const struct xcuda_occupancy_max_active_clusters_args *a,
	struct xcuda_occupancy_max_active_clusters_res *r,
	struct xd_call *call)
{
	return xd_occ_cluster(s, a->func, a->stream, a->nattrs, a->grid,
			      a->block, a->shmem, call, 1, &r->value);
}

/* Deprecated in CUDA 13, still exported: forwarded for CUDA to answer. */
int xd_op_func_set_shared_mem_config(
	struct xd_session *s,
	const struct xcuda_func_set_shared_mem_config_args *a,
	struct xd_call *call)
{
	cudaKernel_t k;
	int err;

	(void)call;
	err = xd_kernel_lookup(s, a->func, &k);
	if (err)
		return err;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	err = cudaFuncSetSharedMemConfig((const void *)k,
					 (enum cudaSharedMemConfig)a->config);
#pragma GCC diagnostic pop
	return err;
}
