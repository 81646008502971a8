// SPDX-License-Identifier: MIT
/*
 * The driver API's commands (spec/cuda-driver.calls) that need more than
 * the description: init, modules, functions and their parameter layout,
 * launches and error strings.  xcudad never links the driver: it starts,
 * and serves the runtime, on a host without one.  The driver's functions
 * are looked up in libcuda.so.1, which the runtime has loaded already on
 * a host that has it.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "common/image.h"
#include "log.h"
#include "jit_opts.h"
#include "image_budget.h"
#include "ops.h"
#include "ops_launch.h"

static void *xd_drv_lib;
static pthread_once_t xd_drv_once = PTHREAD_ONCE_INIT;

static void xd_drv_open(void)
{
	xd_drv_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!xd_drv_lib)
		xd_log(XD_LOG_INFO, "no CUDA driver: %s", dlerror());
}

void *xd_drv_sym(const char *name)
{
	pthread_once(&xd_drv_once, xd_drv_open);
	return xd_drv_lib ? dlsym(xd_drv_lib, name) : NULL;
}

/* A driver function by its symbol, typed as the header declares it. */
/*
 * The images of loaded modules, and the JIT options they were loaded
 * with: with lazy loading, the driver may read the image, and write the
 * logs and their sizes, until the module is unloaded.  A worker serves
 * one session.
 */
struct xd_drv_image {
	CUmodule m;
	uint8_t *image;
	uint64_t size;		/* charged (image_budget.h) */
	struct xd_jit *jit;	/* or NULL */
	struct xd_drv_image *next;
};

static struct xd_drv_image *xd_images;

/* @image and @jit belong to @m's record from now on. */
static int xd_image_keep(CUmodule m, uint8_t *image, uint64_t size,
			 struct xd_jit *jit)
{
	struct xd_drv_image *i = malloc(sizeof(*i));

	if (!i)
		return -1;
	i->m = m;
	i->image = image;
	i->size = size;
	i->jit = jit;
	i->next = xd_images;
	xd_images = i;
	return 0;
}

static void xd_image_drop(CUmodule m)
{
	struct xd_drv_image **pp, *i;

	for (pp = &xd_images; (i = *pp); pp = &i->next)
		if (i->m == m) {
			*pp = i->next;
			xd_image_uncharge(i->size);
			free(i->image);
			if (i->jit) {
				xd_jit_free(i->jit);
				free(i->jit);
			}
			free(i);
			return;
		}
}

void xd_drv_module_unload(CUmodule m)
{
	__typeof__(&cuModuleUnload) unload = XD_DRV(cuModuleUnload);

	if (unload)
		unload(m);
	xd_image_drop(m);
}

int xd_op_drv_init(struct xd_session *s, const struct xcuda_drv_init_args *a,
		   struct xcuda_drv_init_res *r, struct xd_call *call)
{
	__typeof__(&cuInit) init = XD_DRV(cuInit);
	__typeof__(&cuDeviceGetCount) count = XD_DRV(cuDeviceGetCount);
	__typeof__(&cuDriverGetVersion) version = XD_DRV(cuDriverGetVersion);
	int n = 0, v = 0, err;

	(void)s;
	(void)call;
	if (a->rsvd)
		return CUDA_ERROR_INVALID_VALUE;
	/* A driver that finds no device answers so: so does no driver. */
	if (!init || !count || !version)
		return CUDA_ERROR_NO_DEVICE;
	err = init(a->flags);
	if (!err)
		err = count(&n);
	if (!err)
		err = version(&v);
	r->count = n;
	r->version = v;
	return err;
}

/*
 * A module of the image at @e, loaded from a private copy that stays
 * until it is unloaded, with the JIT options @j (NULL: none): its handle
 * in *@module.  On success @j stays with the module, like the copy;
 * otherwise it is still the caller's.
 */
static int xd_module_load(struct xd_session *s, const struct xcuda_extent *e,
			  struct xd_jit *j, uint32_t *module)
{
	__typeof__(&cuModuleLoadDataEx) load = XD_DRV(cuModuleLoadDataEx);
	CUmodule m = NULL;
	uint8_t *image;
	int err;

	if (!e->len || e->len > XCUDA_MAX_MODULE)
		return CUDA_ERROR_INVALID_VALUE;
	/* The images this session keeps have a budget. */
	if (xd_image_charge(e->len + 1))
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* One more byte, a NUL: PTX text is read up to one. */
	image = malloc((size_t)e->len + 1);
	if (!image) {
		xd_image_uncharge(e->len + 1);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	memcpy(image, s->chan->arena + e->off, e->len);
	image[e->len] = 0;
	/*
	 * The driver reads as far as the image's own headers say: they
	 * must stay within the copy (PTX within it and its NUL).
	 */
	err = xcuda_image_size(image, (uint64_t)e->len + 1) ? 0 :
	      CUDA_ERROR_INVALID_IMAGE;
	if (!err && !load)
		err = CUDA_ERROR_NOT_INITIALIZED;
	if (!err)
		err = j ? load(&m, image, j->n, j->opt, j->val) :
			  load(&m, image, 0, NULL, NULL);
	if (err) {
		xd_image_uncharge(e->len + 1);
		free(image);
		return err;
	}
	if (xd_object_add(&s->objects[XD_H_CUMODULE], m, s->device, 0,
			  module)) {
		xd_drv_module_unload(m);
		xd_image_uncharge(e->len + 1);
		free(image);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (xd_image_keep(m, image, e->len + 1, j)) {
		xd_htab_del(&s->objects[XD_H_CUMODULE], *module);
		xd_drv_module_unload(m);
		xd_image_uncharge(e->len + 1);
		free(image);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return 0;
}

int xd_op_drv_module_load_data(struct xd_session *s,
			       const struct xcuda_drv_module_load_data_args *a,
			       struct xcuda_drv_module_load_data_res *r,
			       struct xd_call *call)
{
	(void)call;
	if (a->rsvd)
		return CUDA_ERROR_INVALID_VALUE;
	return xd_module_load(s, &a->image, NULL, &r->module);
}

/* The logs are answered whatever the load's status. */
int xd_op_drv_module_load_ex(struct xd_session *s,
			     const struct xcuda_drv_module_load_ex_args *a,
			     struct xcuda_drv_module_load_ex_res *r,
			     struct xd_call *call)
{
	struct xd_jit *j;
	int err, lerr;

	(void)call;
	if (a->rsvd)
		return CUDA_ERROR_INVALID_VALUE;
	j = calloc(1, sizeof(*j));
	if (!j)
		return CUDA_ERROR_OUT_OF_MEMORY;
	err = xd_jit_get(s, j, a->nopts, &a->opts);
	if (!err)
		err = xd_module_load(s, &a->image, j, &r->module);
	/* A loaded module keeps @j, which is alive until its unload. */
	lerr = a->logs.len ? xd_jit_put_logs(s, j, &a->logs) : 0;
	if (err) {
		xd_jit_free(j);
		free(j);
	}
	return err ? err : lerr;
}

int xd_op_drv_module_unload(struct xd_session *s,
			    const struct xcuda_drv_module_unload_args *a,
			    struct xd_call *call)
{
	__typeof__(&cuModuleUnload) unload = XD_DRV(cuModuleUnload);
	__typeof__(&cuFuncGetModule) owner = XD_DRV(cuFuncGetModule);
	struct xd_htab *funcs = &s->objects[XD_H_CUFUNC];
	CUmodule m, fm;
	uint32_t h;
	int err;

	(void)call;
	m = xd_object_get(&s->objects[XD_H_CUMODULE], a->hmod);
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!unload || !owner)
		return CUDA_ERROR_NOT_INITIALIZED;
	/* Its functions' handles go first, while the driver knows them. */
	for (h = 0; (h = xd_htab_next(funcs, h));)
		if (!owner(&fm, xd_htab_get(funcs, h)->ptr) && fm == m)
			xd_htab_del(funcs, h);
	err = unload(m);
	if (err)
		return err;
	xd_image_drop(m);
	xd_htab_del(&s->objects[XD_H_CUMODULE], a->hmod);
	return 0;
}

/*
 * The function @f of the current context as the session's: its handle in
 * @func, its parameter layout at @params and its count in @nparams.
 */
static int xd_func_answer(struct xd_session *s, CUfunction f,
			  const struct xcuda_extent *params, uint32_t *func,
			  uint32_t *nparams)
{
	__typeof__(&cuFuncGetParamInfo) info = XD_DRV(cuFuncGetParamInfo);
	uint32_t *layout;
	size_t off, size, i;

	if (!info)
		return CUDA_ERROR_NOT_INITIALIZED;
	layout = calloc(1, params->len ? params->len : 8);
	if (!layout)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* The driver answers CUDA_ERROR_INVALID_VALUE past the last one. */
	for (i = 0; !info(f, i, &off, &size); i++) {
		if (i >= XCUDA_MAX_PARAMS || (i + 1) * 8 > params->len ||
		    off > XCUDA_MAX_ARGS_BYTES || size > XCUDA_MAX_ARGS_BYTES) {
			free(layout);
			return CUDA_ERROR_NOT_SUPPORTED;
		}
		layout[2 * i] = (uint32_t)off;
		layout[2 * i + 1] = (uint32_t)size;
	}
	if (params->len)
		xd_arena_put(s, params, (const uint8_t *)layout);
	free(layout);
	/* A function is its module's: the same one keeps its handle. */
	if (xd_object_add(&s->objects[XD_H_CUFUNC], f, s->device, 1, func))
		return CUDA_ERROR_OUT_OF_MEMORY;
	*nparams = (uint32_t)i;
	return 0;
}

int xd_op_drv_module_get_function(
	struct xd_session *s,
	const struct xcuda_drv_module_get_function_args *a,
	struct xcuda_drv_module_get_function_res *r, struct xd_call *call)
{
	__typeof__(&cuModuleGetFunction) get = XD_DRV(cuModuleGetFunction);
	CUfunction f = NULL;
	char *name;
	CUmodule m;
	int err;

	(void)call;
	if (a->rsvd || a->params.len % 8)
		return CUDA_ERROR_INVALID_VALUE;
	m = xd_object_get(&s->objects[XD_H_CUMODULE], a->module);
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!get)
		return CUDA_ERROR_NOT_INITIALIZED;
	name = (char *)xd_arena_copy(s, &a->name, XCUDA_NAME_MAX);
	if (!name || !memchr(name, 0, a->name.len)) {
		free(name);
		return CUDA_ERROR_INVALID_VALUE;
	}
	err = get(&f, m, name);
	free(name);
	if (err)
		return err;
	return xd_func_answer(s, f, &a->params, &r->func, &r->nparams);
}

/* A kernel of a library, as a function of the current context. */
int xd_op_drv_kernel_get_function(
	struct xd_session *s,
	const struct xcuda_drv_kernel_get_function_args *a,
	struct xcuda_drv_kernel_get_function_res *r, struct xd_call *call)
{
	__typeof__(&cuKernelGetFunction) get = XD_DRV(cuKernelGetFunction);
	CUfunction f = NULL;
	cudaKernel_t k;
	int err;

	(void)call;
	if (a->rsvd || a->params.len % 8)
		return CUDA_ERROR_INVALID_VALUE;
	if (xd_kernel_lookup(s, a->kernel, &k))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!get)
		return CUDA_ERROR_NOT_INITIALIZED;
	err = get(&f, (CUkernel)k);
	if (err)
		return err;
	return xd_func_answer(s, f, &a->params, &r->func, &r->nparams);
}

/* The launch's function, stream and private copy of its parameters. */
static int xd_launch_prep(struct xd_session *s, uint32_t func,
			  uint32_t stream, const struct xcuda_extent *params,
			  CUfunction *f, cudaStream_t *st, uint8_t **buf)
{
	int err;

	*buf = NULL;
	if (params->len > XCUDA_MAX_ARGS_BYTES)
		return CUDA_ERROR_INVALID_VALUE;
	*f = xd_object_get(&s->objects[XD_H_CUFUNC], func);
	if (!*f)
		return CUDA_ERROR_INVALID_HANDLE;
	err = xd_stream_lookup(&s->streams, stream, st);
	if (err)
		return err;
	if (params->len) {
		*buf = xd_arena_copy(s, params, XCUDA_MAX_ARGS_BYTES);
		if (!*buf)
			return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return 0;
}

int xd_op_drv_launch_kernel(struct xd_session *s,
			    const struct xcuda_drv_launch_kernel_args *a,
			    struct xd_call *call)
{
	__typeof__(&cuLaunchKernel) launch = XD_DRV(cuLaunchKernel);
	size_t size = a->params.len;
	cudaStream_t st;
	uint8_t *buf;
	void *extra[5];
	CUfunction f;
	int err;

	(void)call;
	err = xd_launch_prep(s, a->func, a->stream, &a->params, &f, &st, &buf);
	if (!err && !launch)
		err = CUDA_ERROR_NOT_INITIALIZED;
	if (err) {
		free(buf);
		return err;
	}
	/*
	 * The packed buffer as the driver takes it: the driver reads the
	 * kernel's own parameter size from it, and refuses a short one.
	 */
	extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
	extra[1] = buf;
	extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
	extra[3] = &size;
	extra[4] = CU_LAUNCH_PARAM_END;
	err = launch(f, a->grid[0], a->grid[1], a->grid[2], a->block[0],
		     a->block[1], a->block[2], a->shmem, st, NULL,
		     a->nparams ? extra : NULL);
	free(buf);
	return err;
}

/*
 * kernelParams pointing into @buf of @len bytes by @f's layout, which
 * the driver answers (the guest's word on it is not taken).
 */
static int xd_params_point(CUfunction f, uint8_t *buf, size_t len,
			   uint32_t nparams, void ***out)
{
	__typeof__(&cuFuncGetParamInfo) info = XD_DRV(cuFuncGetParamInfo);
	size_t off, size;
	void **p;
	uint32_t i;

	*out = NULL;
	if (!nparams)
		return 0;
	if (!info)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (nparams > XCUDA_MAX_PARAMS)
		return CUDA_ERROR_INVALID_VALUE;
	p = calloc(nparams, sizeof(*p));
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (i = 0; i < nparams; i++) {
		if (info(f, i, &off, &size) || off > len || size > len - off) {
			free(p);
			return CUDA_ERROR_INVALID_VALUE;
		}
		p[i] = buf + off;
	}
	/* As many as the kernel takes, no fewer. */
	if (!info(f, nparams, &off, &size)) {
		free(p);
		return CUDA_ERROR_INVALID_VALUE;
	}
	*out = p;
	return 0;
}

int xd_op_drv_launch_cooperative(
	struct xd_session *s, const struct xcuda_drv_launch_cooperative_args *a,
	struct xd_call *call)
{
	__typeof__(&cuLaunchCooperativeKernel) launch =
		XD_DRV(cuLaunchCooperativeKernel);
	void **params = NULL;
	cudaStream_t st;
	uint8_t *buf;
	CUfunction f;
	int err;

	(void)call;
	err = xd_launch_prep(s, a->func, a->stream, &a->params, &f, &st, &buf);
	if (!err && !launch)
		err = CUDA_ERROR_NOT_INITIALIZED;
	if (!err)
		err = xd_params_point(f, buf, a->params.len, a->nparams,
				      &params);
	if (!err)
		err = launch(f, a->grid[0], a->grid[1], a->grid[2],
			     a->block[0], a->block[1], a->block[2], a->shmem,
			     st, params);
	free(params);
	free(buf);
	return err;
}

int xd_op_drv_get_error_string(
	struct xd_session *s, const struct xcuda_drv_get_error_string_args *a,
	struct xcuda_drv_get_error_string_res *r, struct xd_call *call)
{
	__typeof__(&cuGetErrorString) str = XD_DRV(cuGetErrorString);
	const char *text = NULL;
	int err;

	(void)call;
	if (a->rsvd || !a->text.len)
		return CUDA_ERROR_INVALID_VALUE;
	if (!str)
		return CUDA_ERROR_NOT_INITIALIZED;
	err = str((CUresult)a->error, &text);
	if (err || !text)
		return err ? err : CUDA_ERROR_INVALID_VALUE;
	if (xd_arena_put_text(s, &a->text, text, &r->len))
		return CUDA_ERROR_OUT_OF_MEMORY;
	return 0;
}

void xd_drv_mem_release(CUmemGenericAllocationHandle h)
{
	__typeof__(&cuMemRelease) release = XD_DRV(cuMemRelease);

	if (release)
		release(h);
}

/*
 * Allocation properties: Windows handles mean nothing here, and
 * win32HandleMetaData would be a pointer into the guest.
 */
static int xd_drv_prop_ok(const CUmemAllocationProp *p)
{
	return !p->win32HandleMetaData &&
	       !(p->requestedHandleTypes & (CU_MEM_HANDLE_TYPE_WIN32 |
					    CU_MEM_HANDLE_TYPE_WIN32_KMT));
}

int xd_check_drv_mem_prop(struct xd_session *s,
			  const struct xcuda_drv_mem_create_args *a)
{
	(void)s;
	return xd_drv_prop_ok(&a->prop) ? 0 : CUDA_ERROR_INVALID_VALUE;
}

int xd_check_drv_granularity_prop(
	struct xd_session *s, const struct xcuda_drv_mem_get_granularity_args *a)
{
	(void)s;
	return xd_drv_prop_ok(&a->prop) ? 0 : CUDA_ERROR_INVALID_VALUE;
}

enum { XD_TM_TILED, XD_TM_IM2COL, XD_TM_IM2COL_WIDE, XD_TM_REPLACE };

/* An array the program gave (@bit of present), or NULL as it gave. */
#define XD_TM_ARG(a, bit, field) \
	(((a)->present & (1u << (bit))) ? (a)->field : NULL)

int xd_op_drv_tensor_map_encode(
	struct xd_session *s, const struct xcuda_drv_tensor_map_encode_args *a,
	struct xd_call *call)
{
	CUtensorMap map;
	void *g = (void *)(uintptr_t)a->address;
	void *fn;
	int err;

	(void)call;
	if (a->map.len != sizeof(map) || a->rsvd || a->rank > 5 ||
	    (a->present & ~0x3fu))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&map, s->chan->arena + a->map.off, sizeof(map));
	switch (a->how) {
	case XD_TM_TILED:
		fn = xd_drv_sym("cuTensorMapEncodeTiled");
		err = !fn ? CUDA_ERROR_NOT_INITIALIZED :
		      ((__typeof__(&cuTensorMapEncodeTiled))fn)(
			      &map, a->dtype, a->rank, g,
			      XD_TM_ARG(a, 0, dims), XD_TM_ARG(a, 1, strides),
			      XD_TM_ARG(a, 2, box), XD_TM_ARG(a, 3, estrides),
			      a->interleave, a->swizzle, a->l2, a->oob);
		break;
	case XD_TM_IM2COL:
		fn = xd_drv_sym("cuTensorMapEncodeIm2col");
		err = !fn ? CUDA_ERROR_NOT_INITIALIZED :
		      ((__typeof__(&cuTensorMapEncodeIm2col))fn)(
			      &map, a->dtype, a->rank, g,
			      XD_TM_ARG(a, 0, dims), XD_TM_ARG(a, 1, strides),
			      XD_TM_ARG(a, 4, lower), XD_TM_ARG(a, 5, upper),
			      a->channels, a->pixels, XD_TM_ARG(a, 3, estrides),
			      a->interleave, a->swizzle, a->l2, a->oob);
		break;
	case XD_TM_IM2COL_WIDE:
		fn = xd_drv_sym("cuTensorMapEncodeIm2colWide");
		err = !fn ? CUDA_ERROR_NOT_INITIALIZED :
		      ((__typeof__(&cuTensorMapEncodeIm2colWide))fn)(
			      &map, a->dtype, a->rank, g,
			      XD_TM_ARG(a, 0, dims), XD_TM_ARG(a, 1, strides),
			      a->lower_w, a->upper_w, a->channels, a->pixels,
			      XD_TM_ARG(a, 3, estrides), a->interleave, a->mode,
			      a->swizzle, a->l2, a->oob);
		break;
	case XD_TM_REPLACE:
		fn = xd_drv_sym("cuTensorMapReplaceAddress");
		err = !fn ? CUDA_ERROR_NOT_INITIALIZED :
		      ((__typeof__(&cuTensorMapReplaceAddress))fn)(&map, g);
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (!err)
		xd_arena_put(s, &a->map, (const uint8_t *)&map);
	return err;
}

int xd_op_drv_pointer_get_attribute(
	struct xd_session *s,
	const struct xcuda_drv_pointer_get_attribute_args *a,
	struct xcuda_drv_pointer_get_attribute_res *r, struct xd_call *call)
{
	__typeof__(&cuPointerGetAttribute) get = XD_DRV(cuPointerGetAttribute);
	CUpointer_attribute attr = (CUpointer_attribute)a->attr;
	uint8_t v0[16], v1[16];
	uint32_t h;
	int err, i;

	(void)call;
	if (a->rsvd)
		return CUDA_ERROR_INVALID_VALUE;
	if (!get)
		return CUDA_ERROR_NOT_INITIALIZED;
	/* The guest's context is its device's: answer the ordinal. */
	if (attr == CU_POINTER_ATTRIBUTE_CONTEXT)
		attr = CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL;
	memset(v0, 0, sizeof(v0));
	memset(v1, 0xff, sizeof(v1));
	err = get(v0, attr, (CUdeviceptr)a->ptr);
	if (!err)
		err = get(v1, attr, (CUdeviceptr)a->ptr);
	if (err)
		return err;
	/* What the driver wrote differs from one fill or the other. */
	for (i = sizeof(v0); i > 0 && v0[i - 1] == 0 && v1[i - 1] == 0xff;
	     i--)
		;
	r->size = (uint32_t)i;
	memcpy(r->value, v0, sizeof(v0));
	if (attr == CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE) {
		void *pool;

		memcpy(&pool, v0, sizeof(pool));
		h = 0;
		/* CUDA's pool: the session's handle for it, borrowed. */
		if (pool && xd_object_add(&s->objects[XD_H_MEMPOOL], pool,
					  s->device, 1, &h))
			return CUDA_ERROR_OUT_OF_MEMORY;
		memset(r->value, 0, sizeof(r->value));
		memcpy(r->value, &h, sizeof(h));
		r->size = sizeof(void *);
	}
	return 0;
}

int xd_op_drv_occ_potential_block(
	struct xd_session *s,
	const struct xcuda_drv_occ_potential_block_args *a,
	struct xcuda_drv_occ_potential_block_res *r,
	struct xd_call *call)
{
	__typeof__(&cuOccupancyMaxPotentialBlockSizeWithFlags) occ =
		XD_DRV(cuOccupancyMaxPotentialBlockSizeWithFlags);
	int min_grid = 0, block = 0, err;
	CUfunction f;

	(void)call;
	if (a->rsvd)
		return CUDA_ERROR_INVALID_VALUE;
	f = xd_object_get(&s->objects[XD_H_CUFUNC], a->func);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!occ)
		return CUDA_ERROR_NOT_INITIALIZED;
	/* No callback: it would be the guest's, run here. */
	err = occ(&min_grid, &block, f, NULL, (size_t)a->dsmem, a->limit,
		  a->flags);
	r->min_grid = min_grid;
	r->block = block;
	return err;
}

_Static_assert(sizeof(CUlaunchAttribute) == sizeof(cudaLaunchAttribute),
	       "the driver's launch attributes are the runtime's");

int xd_op_drv_launch_kernel_ex(struct xd_session *s,
			       const struct xcuda_drv_launch_kernel_ex_args *a,
			       struct xd_call *call)
{
	__typeof__(&cuLaunchKernelEx) launch = XD_DRV(cuLaunchKernelEx);
	uint64_t abytes = (uint64_t)a->nattrs * sizeof(struct xcuda_launch_attr);
	size_t size = a->params_len;
	struct xd_attrs at;
	CUlaunchConfig cfg;
	cudaStream_t st;
	uint8_t *buf = NULL;
	void *extra[5];
	CUfunction f;
	int err;

	if (a->nattrs > XCUDA_LAUNCH_MAX_ATTRS ||
	    a->params_len > XCUDA_MAX_ARGS_BYTES ||
	    call->data_len != abytes + a->params_len)
		return CUDA_ERROR_INVALID_VALUE;
	f = xd_object_get(&s->objects[XD_H_CUFUNC], a->func);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	err = xd_stream_lookup(&s->streams, a->stream, &st);
	if (!err)
		err = xd_launch_attrs(s, call->data, a->nattrs, &at);
	if (!err && !launch)
		err = CUDA_ERROR_NOT_INITIALIZED;
	if (err)
		return err;
	if (size) {
		/* Our copy: the request's data is the guest's to change. */
		buf = malloc(size);
		if (!buf)
			return CUDA_ERROR_OUT_OF_MEMORY;
		memcpy(buf, call->data + abytes, size);
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDimX = a->grid[0];
	cfg.gridDimY = a->grid[1];
	cfg.gridDimZ = a->grid[2];
	cfg.blockDimX = a->block[0];
	cfg.blockDimY = a->block[1];
	cfg.blockDimZ = a->block[2];
	cfg.sharedMemBytes = a->shmem;
	cfg.hStream = st;
	cfg.attrs = at.n ? (CUlaunchAttribute *)at.cuda : NULL;
	cfg.numAttrs = at.n;
	extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
	extra[1] = buf;
	extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
	extra[3] = &size;
	extra[4] = CU_LAUNCH_PARAM_END;
	err = launch(&cfg, f, NULL, a->nparams ? extra : NULL);
	free(buf);
	if (!err)
		xd_attrs_answer(call, &at);
	return err;
}
