// SPDX-License-Identifier: MIT
/*
 * Device management with guest-side semantics.  The device count,
 * properties and attributes do not change while a process runs, so each
 * is asked for once and answered locally after that; the current device
 * is per thread.  The plain round trips are generated from
 * spec/cudart.calls.
 */
#include <stdlib.h>
#include <string.h>

#include "guest.h"

#define XC_ATTR_MAX 256

/*
 * What managed memory through xcuda provides (docs/managed-memory.md):
 * the host must not touch managed memory while the device may use it,
 * and pageable memory is not device-accessible.
 */
static void xc_managed_props(struct cudaDeviceProp *p)
{
	if (!p->managedMemory)
		return;
	p->concurrentManagedAccess = 0;
	p->pageableMemoryAccess = 0;
	p->pageableMemoryAccessUsesHostPageTables = 0;
	p->directManagedMemAccessFromHost = 0;
}

static int xc_managed_attr(enum cudaDeviceAttr attr, int value)
{
	switch (attr) {
	case cudaDevAttrConcurrentManagedAccess:
	case cudaDevAttrPageableMemoryAccess:
	case cudaDevAttrPageableMemoryAccessUsesHostPageTables:
	case cudaDevAttrDirectManagedMemAccessFromHost:
		return 0;
	default:
		return value;
	}
}

static pthread_mutex_t xc_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cudaDeviceProp *xc_prop_cache[XCUDA_MAX_DEVICES];
static int xc_attr_cache[XCUDA_MAX_DEVICES][XC_ATTR_MAX];
static unsigned char xc_attr_known[XCUDA_MAX_DEVICES][XC_ATTR_MAX];

cudaError_t cudaGetDeviceCount(int *count)
{
	struct xc_session *s;
	cudaError_t err = xc_ready(&s);

	if (err)
		return xc_ret(err);
	if (!count)
		return xc_ret(cudaErrorInvalidValue);
	*count = s->info.device_count;
	return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
	struct xcuda_set_device_args a = { device, 0 };
	cudaError_t err;

	err = xc_call_set_device(&a);
	if (!err)
		xc_set_cur_device(device);
	return err;
}

cudaError_t cudaGetDevice(int *device)
{
	struct xc_session *s;
	cudaError_t err = xc_ready(&s);

	if (err)
		return xc_ret(err);
	if (!device)
		return xc_ret(cudaErrorInvalidValue);
	*device = xc_cur_device();
	return cudaSuccess;
}

cudaError_t xc_props(int dev, const struct cudaDeviceProp **p)
{
	struct xcuda_get_device_properties_args a = { dev, 0 };
	struct xcuda_request req;
	struct cudaDeviceProp *prop;
	struct xc_session *s;
	cudaError_t err = xc_ready(&s);
	uint64_t off, got;

	if (err)
		return err;
	if (dev < 0 || dev >= s->info.device_count)
		return cudaErrorInvalidDevice;
	pthread_mutex_lock(&xc_dev_lock);
	if (xc_prop_cache[dev]) {
		*p = xc_prop_cache[dev];
		goto out;
	}
	prop = malloc(sizeof(*prop));
	if (!prop) {
		err = cudaErrorMemoryAllocation;
		goto out;
	}
	pthread_mutex_lock(&s->lock);
	off = xc_staging_get(s, sizeof(*prop), sizeof(*prop), &got);
	if (off == UINT64_MAX) {
		err = cudaErrorMemoryAllocation;
	} else {
		xc_req_get_device_properties(&req, &a);
		req.hdr.data_off = (uint32_t)off;
		req.hdr.data_len = sizeof(*prop);
		err = xc_round_trip_locked(s, &req, NULL, 0);
		if (!err)
			memcpy(prop, xc_arena_ptr(s, off), sizeof(*prop));
		xc_arena_release(s->staging, off);
	}
	pthread_mutex_unlock(&s->lock);
	if (err) {
		free(prop);
		goto out;
	}
	/* Strings from the peer are terminated here, whatever it sent. */
	prop->name[sizeof(prop->name) - 1] = '\0';
	xc_managed_props(prop);
	xc_prop_cache[dev] = prop;
	*p = prop;
out:
	pthread_mutex_unlock(&xc_dev_lock);
	return err;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	const struct cudaDeviceProp *p;
	cudaError_t err;

	if (!prop)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_props(device, &p);
	if (err)
		return xc_ret(err);
	*prop = *p;
	return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr,
				   int device)
{
	struct xcuda_device_get_attribute_args a = { attr, device };
	struct xcuda_device_get_attribute_res r;
	cudaError_t err;
	int cache = device >= 0 && device < XCUDA_MAX_DEVICES &&
		    (int)attr >= 0 && attr < XC_ATTR_MAX;

	if (!value)
		return xc_ret(cudaErrorInvalidValue);
	if (cache && __atomic_load_n(&xc_attr_known[device][attr],
				     __ATOMIC_ACQUIRE)) {
		*value = xc_attr_cache[device][attr];
		return cudaSuccess;
	}
	err = xc_call_device_get_attribute(&a, &r);
	if (err)
		return err;
	*value = xc_managed_attr(attr, r.value);
	if (cache) {
		xc_attr_cache[device][attr] = *value;
		__atomic_store_n(&xc_attr_known[device][attr], 1,
				 __ATOMIC_RELEASE);
	}
	return cudaSuccess;
}

cudaError_t cudaDeviceReset(void)
{
	struct xcuda_request req;
	struct xc_session *s;
	cudaError_t err = xc_ready(&s), late;

	if (err)
		return xc_ret(err);
	pthread_mutex_lock(&s->lock);
	xc_req_device_reset(&req);
	err = xc_round_trip_locked(s, &req, NULL, 0);
	/*
	 * Errors of work posted before the reset are not the reset's: as
	 * with CUDA, they stay the last error and the reset answers its own.
	 */
	late = xc_take_latched(s);
	/* A reset makes a broken context usable again. */
	if (!err)
		s->sticky = cudaSuccess;
	pthread_mutex_unlock(&s->lock);
	xc_ret(late);
	if (err)
		return xc_ret(err);
	/* The reset destroyed the context and its streams. */
	xc_ctx_changed();
	xc_stream_gone();
	/* The reset freed every device allocation of the process. */
	xc_range_drop_kind(XC_R_DEVICE);
	xc_managed_forget_all(s);
	xc_reg_device_reset();
	xc_pt_streams_reset(xc_cur_device());
	return cudaSuccess;
}
