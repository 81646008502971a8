// SPDX-License-Identifier: MIT
/*
 * Modules (fatbinaries loaded as cudaLibrary_t), kernels and launches.
 *
 * MODULE_DATA  args {total, offset, hash, flags}; the piece is the extent.
 *              XCUDA_MOD_FIRST starts an upload (offset 0, 0 < total <=
 *              XCUDA_MAX_MODULE) and drops any unfinished one; every piece
 *              continues exactly where the last one ended, with the same
 *              total, and stays within it.  XCUDA_MOD_LAST needs offset +
 *              len == total and xcuda_fnv1a64(0, image) == hash; then the
 *              image is loaded with cudaLibraryLoadData and a new handle
 *              answered (the load's error is the answer); the same bytes
 *              loaded twice are two modules, each with its own device
 *              variables, as with CUDA.  Other pieces answer handle 0.  Any
 *              bad piece ends the upload: the guest starts over with FIRST.
 *              A loaded image stays allocated until its unload: lazy
 *              loading may still read it.  The copy ends in a NUL that is not part of the
 *              image, so an unterminated "PTX" cannot make CUDA read on.
 * MODULE_UNLOAD  unloads the library (cudaLibraryUnload, its error is the
 *              answer) and invalidates the module's kernel handles.
 * FUNC_GET     args {module}; the extent starts with the NUL-terminated
 *              kernel name (NUL within data_len and XCUDA_NAME_MAX, else
 *              cudaErrorInvalidValue), copied out before use.
 *              cudaLibraryGetKernel, then the parameter layout from
 *              cudaFuncGetParamInfo for i = 0, 1, ... until
 *              cudaErrorInvalidValue (past the end), through the driver's
 *              cuKernelGetParamInfo (cudaGetDriverEntryPointByVersion,
 *              never by linking libcuda) if the runtime refuses the
 *              cudaKernel_t.  The xcuda_param array is written at the start
 *              of the extent (nparams * 8 must fit data_len, else
 *              cudaErrorInvalidValue); more than XCUDA_MAX_PARAMS
 *              parameters or XCUDA_MAX_ARGS_BYTES argument bytes answer
 *              cudaErrorNotSupported.  Result {handle, nparams, args_size =
 *              max(offset + size)}.  The same (module, name) gives the same
 *              handle.
 * VAR_GET      args {module}, name as above; cudaLibraryGetGlobal ->
 *              {ptr, size}.
 * LAUNCH       args {func, stream, grid, block, shmem, args_len, args}.
 *              With data_len 0 the packed argument bytes are inline
 *              (args_len <= sizeof args, and hdr.len covers them), else
 *              they are the extent (data_len == args_len).  args_len must
 *              equal the kernel's args_size.  The bytes are copied to a
 *              private buffer, the parameter pointers built from the
 *              stored layout, and cudaLaunchKernel called on the stream.
 * FUNC_GET_ATTRIBUTES  args {handle}: cudaFuncGetAttributes; struct
 *              cudaFuncAttributes goes into the extent (which must hold it,
 *              else cudaErrorInvalidValue).
 * FUNC_SET_ATTRIBUTE   cudaFuncSetAttribute(func, attr, value).
 * OCCUPANCY    cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags
 *              (func, block_size, shmem, flags) -> {value}.
 * Unknown module or kernel handles answer cudaErrorInvalidResourceHandle.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "xcuda/hash.h"
#include "log.h"
#include "common/image.h"
#include "image_budget.h"
#include "ops.h"

struct xd_module {
	uint8_t *image;
	uint64_t size;
	uint64_t hash;
};

struct xd_func {
	cudaKernel_t kernel;
	uint32_t module;
	uint32_t nparams;
	uint32_t args_size;
	struct xcuda_param *params;
	char *name;
};

#define XD_MOD_FLAGS	(XCUDA_MOD_FIRST | XCUDA_MOD_LAST)

static void xd_upload_drop(struct xd_session *s)
{
	if (s->upload.image)
		xd_image_uncharge(s->upload.total + 1);
	free(s->upload.image);
	memset(&s->upload, 0, sizeof(s->upload));
}

/* Loads a complete upload; takes ownership of @image. */
static int xd_module_load(struct xd_session *s, uint8_t *image,
			  uint64_t size, uint64_t hash, uint32_t *out)
{
	struct xd_module *m;
	struct xd_hent *e;
	cudaLibrary_t lib;
	cudaError_t err;
	uint32_t h;

	/*
	 * Every registration is a module of its own, even with the same
	 * bytes as another: each has its own __device__ variables, as with
	 * CUDA (a library opened, closed and opened again starts afresh).
	 */
	err = cudaLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0);
	if (err) {
		xd_image_uncharge(size + 1);
		free(image);
		return err;
	}
	m = malloc(sizeof(*m));
	e = m ? xd_htab_add(&s->modules, lib, &h) : NULL;
	if (!e) {
		cudaLibraryUnload(lib);
		free(m);
		xd_image_uncharge(size + 1);
		free(image);
		return cudaErrorMemoryAllocation;
	}
	m->image = image;
	m->size = size;
	m->hash = hash;
	e->meta = m;
	e->ref = 1;
	*out = h;
	return 0;
}

int xd_op_module_data(struct xd_session *s,
		      const struct xcuda_module_data_args *a,
		      struct xcuda_module_data_res *r, struct xd_call *call)
{
	struct xd_upload *u = &s->upload;
	uint64_t len = call->data_len;
	uint8_t *image;
	uint32_t h = 0;
	int err;

	if (a->flags & ~XD_MOD_FLAGS)
		goto bad;
	if (a->flags & XCUDA_MOD_FIRST) {
		xd_upload_drop(s);
		if (a->offset || !a->total || a->total > XCUDA_MAX_MODULE)
			return cudaErrorInvalidValue;
		/* The images this session keeps have a budget. */
		if (xd_image_charge(a->total + 1))
			return cudaErrorMemoryAllocation;
		/*
		 * One more byte, a NUL: CUDA takes an image that is not a
		 * cubin or fatbinary for PTX text and reads it up to a NUL.
		 */
		u->image = malloc(a->total + 1);
		if (!u->image) {
			xd_image_uncharge(a->total + 1);
			return cudaErrorMemoryAllocation;
		}
		u->image[a->total] = 0;
		u->total = a->total;
	} else if (!u->image || a->total != u->total) {
		goto bad;
	}
	if (a->offset != u->got || len > u->total - u->got)
		goto bad;
	memcpy(u->image + u->got, call->data, len);
	u->got += len;
	if (!(a->flags & XCUDA_MOD_LAST))
		return 0;
	if (u->got != u->total)
		goto bad;
	image = u->image;
	u->image = NULL;
	xd_upload_drop(s);
	/* The hash covers our private copy: later guest writes don't count. */
	if (xcuda_fnv1a64(0, image, a->total) != a->hash) {
		xd_image_uncharge(a->total + 1);
		free(image);
		return cudaErrorInvalidValue;
	}
	/* CUDA reads as far as the image's headers say: within the copy. */
	if (!xcuda_image_size(image, a->total + 1)) {
		xd_image_uncharge(a->total + 1);
		free(image);
		return cudaErrorInvalidKernelImage;
	}
	err = xd_module_load(s, image, a->total, a->hash, &h);
	if (!err)
		r->handle = h;
	return err;
bad:
	xd_upload_drop(s);
	return cudaErrorInvalidValue;
}

static void xd_func_free(struct xd_func *f)
{
	if (!f)
		return;
	free(f->params);
	free(f->name);
	free(f);
}

/* Drops the kernels of module @mh (all modules if 0). */
static void xd_funcs_drop(struct xd_session *s, uint32_t mh)
{
	struct xd_hent *e;
	uint32_t h;

	for (h = 0; (h = xd_htab_next(&s->funcs, h));) {
		e = xd_htab_get(&s->funcs, h);
		if (mh && e->owner != mh)
			continue;
		xd_func_free(e->meta);
		xd_htab_del(&s->funcs, h);
	}
}

static void xd_module_free(struct xd_hent *e)
{
	struct xd_module *m = e->meta;

	cudaLibraryUnload((cudaLibrary_t)e->ptr);
	xd_image_uncharge(m->size + 1);
	free(m->image);
	free(m);
}

int xd_op_module_unload(struct xd_session *s,
			const struct xcuda_module_unload_args *a,
			struct xd_call *call)
{
	struct xd_module *m;
	struct xd_hent *e;
	cudaError_t err;

	(void)call;
	e = xd_htab_get(&s->modules, a->module);
	if (!e)
		return cudaErrorInvalidResourceHandle;
	xd_funcs_drop(s, a->module);
	m = e->meta;
	err = cudaLibraryUnload((cudaLibrary_t)e->ptr);
	xd_image_uncharge(m->size + 1);
	free(m->image);
	free(m);
	xd_htab_del(&s->modules, a->module);
	return err;
}

static void xd_modules_fini(struct xd_session *s)
{
	uint32_t h;

	xd_funcs_drop(s, 0);
	for (h = 0; (h = xd_htab_next(&s->modules, h));)
		xd_module_free(xd_htab_get(&s->modules, h));
	xd_htab_free(&s->funcs);
	xd_htab_free(&s->modules);
}

/*
 * Copies the NUL-terminated name at the start of the extent into @buf
 * (XCUDA_NAME_MAX bytes); the guest may rewrite the arena meanwhile, so
 * only the copy is ever looked at.
 */
static int xd_get_name(const struct xd_call *call, char *buf)
{
	uint32_t n = call->data_len < XCUDA_NAME_MAX ? call->data_len :
						       XCUDA_NAME_MAX;

	memcpy(buf, call->data, n);
	if (!memchr(buf, 0, n))
		return cudaErrorInvalidValue;
	return 0;
}

static int xd_module_arg(struct xd_session *s, uint32_t module,
			 uint32_t *mh, cudaLibrary_t *lib)
{
	struct xd_hent *e;

	e = xd_htab_get(&s->modules, module);
	if (!e)
		return cudaErrorInvalidResourceHandle;
	*mh = module;
	*lib = (cudaLibrary_t)e->ptr;
	return 0;
}

/* The driver's cuKernelGetParamInfo, looked up once, NULL if absent. */
static PFN_cuKernelGetParamInfo_v12040 xd_drv_param_info(void)
{
	static PFN_cuKernelGetParamInfo_v12040 fn;
	static int tried;
	enum cudaDriverEntryPointQueryResult q;
	void *p = NULL;

	if (!tried) {
		tried = 1;
		if (!cudaGetDriverEntryPointByVersion("cuKernelGetParamInfo",
						      &p, 12040,
						      cudaEnableDefault, &q) &&
		    q == cudaDriverEntryPointSuccess && p)
			fn = (PFN_cuKernelGetParamInfo_v12040)p;
		else
			xd_log(XD_LOG_DEBUG,
			       "no cuKernelGetParamInfo in the driver");
		cudaGetLastError();
	}
	return fn;
}

static int xd_drv_param(cudaKernel_t k, uint32_t i, size_t *off,
			size_t *size)
{
	PFN_cuKernelGetParamInfo_v12040 fn = xd_drv_param_info();
	CUresult r;

	if (!fn)
		return -1;
	r = fn((CUkernel)k, i, off, size);
	if (r == CUDA_SUCCESS)
		return cudaSuccess;
	return r == CUDA_ERROR_INVALID_VALUE ? cudaErrorInvalidValue : -1;
}

/*
 * One parameter's place.  cudaFuncGetParamInfo takes a cudaKernel_t; if
 * the runtime refuses one, the driver's entry point answers instead.
 * *@drv remembers which of the two this kernel needs.
 */
static int xd_param_info(cudaKernel_t k, uint32_t i, size_t *off,
			 size_t *size, int *drv)
{
	cudaError_t err;
	int r;

	if (*drv)
		return xd_drv_param(k, i, off, size);
	err = cudaFuncGetParamInfo((const void *)k, i, off, size);
	if (err == cudaSuccess ||
	    (err == cudaErrorInvalidValue && i > 0))
		return err;
	/* Index 0 too: "no parameters" and "not a kernel" look alike. */
	r = xd_drv_param(k, i, off, size);
	if (r == cudaSuccess ||
	    (r == cudaErrorInvalidValue && err != cudaErrorInvalidValue)) {
		*drv = 1;
		return r;
	}
	return err;
}

/* Learns @f's parameter layout. */
static int xd_func_layout(struct xd_func *f)
{
	size_t off, size;
	uint64_t end, max = 0;
	uint32_t i;
	int err, drv = 0;

	f->params = malloc(XCUDA_MAX_PARAMS * sizeof(*f->params));
	if (!f->params)
		return cudaErrorMemoryAllocation;
	for (i = 0;; i++) {
		err = xd_param_info(f->kernel, i, &off, &size, &drv);
		if (err == cudaErrorInvalidValue)
			break;
		if (err)
			goto out;
		err = cudaErrorNotSupported;
		if (i == XCUDA_MAX_PARAMS || off > XCUDA_MAX_ARGS_BYTES ||
		    size > XCUDA_MAX_ARGS_BYTES - off)
			goto out;
		f->params[i].offset = (uint32_t)off;
		f->params[i].size = (uint32_t)size;
		end = off + size;
		if (end > max)
			max = end;
	}
	err = 0;
	f->nparams = i;
	f->args_size = (uint32_t)max;
out:
	/* Probing past the end is not this thread's error. */
	cudaGetLastError();
	return err;
}

static int xd_func_answer(struct xd_call *call, struct xcuda_func_get_res *r,
			  uint32_t h, const struct xd_func *f)
{
	uint64_t need = (uint64_t)f->nparams * sizeof(*f->params);

	if (need > call->data_len)
		return cudaErrorInvalidValue;
	memcpy(call->data, f->params, need);
	r->handle = h;
	r->nparams = f->nparams;
	r->args_size = f->args_size;
	return 0;
}

int xd_op_func_get(struct xd_session *s, const struct xcuda_func_get_args *a,
		   struct xcuda_func_get_res *r, struct xd_call *call)
{
	char name[XCUDA_NAME_MAX];
	struct xd_func *f;
	struct xd_hent *e;
	cudaLibrary_t lib;
	cudaKernel_t k;
	uint32_t mh, h;
	int err;

	/* The guest's bytes first, then its handles. */
	err = xd_get_name(call, name);
	if (!err)
		err = xd_module_arg(s, a->module, &mh, &lib);
	if (err)
		return err;
	for (h = 0; (h = xd_htab_next(&s->funcs, h));) {
		e = xd_htab_get(&s->funcs, h);
		f = e->meta;
		if (e->owner == mh && !strcmp(f->name, name))
			return xd_func_answer(call, r, h, f);
	}
	err = cudaLibraryGetKernel(&k, lib, name);
	if (err)
		return err;
	f = calloc(1, sizeof(*f));
	if (!f)
		return cudaErrorMemoryAllocation;
	f->kernel = k;
	f->module = mh;
	err = xd_func_layout(f);
	if (err)
		goto fail;
	err = cudaErrorMemoryAllocation;
	f->name = strdup(name);
	if (!f->name)
		goto fail;
	/* Check the room for the layout before handing out a handle. */
	if ((uint64_t)f->nparams * sizeof(*f->params) > call->data_len) {
		err = cudaErrorInvalidValue;
		goto fail;
	}
	e = xd_htab_add(&s->funcs, k, &h);
	if (!e)
		goto fail;
	e->meta = f;
	e->owner = mh;
	return xd_func_answer(call, r, h, f);
fail:
	xd_func_free(f);
	return err;
}

int xd_op_var_get(struct xd_session *s, const struct xcuda_var_get_args *a,
		  struct xcuda_var_get_res *r, struct xd_call *call)
{
	char name[XCUDA_NAME_MAX];
	cudaLibrary_t lib;
	void *p = NULL;
	size_t size = 0;
	uint32_t mh;
	int err;

	if (a->flags & ~XCUDA_VAR_MANAGED)
		return cudaErrorInvalidValue;
	err = xd_get_name(call, name);
	if (!err)
		err = xd_module_arg(s, a->module, &mh, &lib);
	if (err)
		return err;
	if (a->flags & XCUDA_VAR_MANAGED)
		err = cudaLibraryGetManaged(&p, &size, lib, name);
	else
		err = cudaLibraryGetGlobal(&p, &size, lib, name);
	/* __managed__ variables, which the guest maps (managed.c). */
	if (!a->flags && (err == cudaErrorSymbolNotFound ||
			  err == cudaErrorInvalidValue)) {
		p = NULL;
		size = 0;
		if (cudaLibraryGetManaged(&p, &size, lib, name) == cudaSuccess)
			err = 0;
	}
	if (err)
		return err;
	r->ptr = (uintptr_t)p;
	r->size = size;
	return 0;
}

static int xd_func(struct xd_session *s, uint32_t h, struct xd_func **f)
{
	struct xd_hent *e = xd_htab_get(&s->funcs, h);

	if (!e)
		return cudaErrorInvalidResourceHandle;
	*f = e->meta;
	return 0;
}

int xd_launch_argv(struct xd_session *s, uint32_t func, const uint8_t *src,
		   uint32_t len, cudaKernel_t *k)
{
	struct xd_func *f;
	uint32_t i;
	int err;

	err = xd_func(s, func, &f);
	if (err)
		return err;
	if (len != f->args_size)
		return cudaErrorInvalidValue;
	/* One copy: the guest cannot change the arguments under CUDA. */
	memcpy(s->argbuf, src, len);
	for (i = 0; i < f->nparams; i++)
		s->argv[i] = s->argbuf + f->params[i].offset;
	*k = f->kernel;
	return 0;
}

int xd_launch_fixed(struct xd_session *s, const struct xcuda_launch_args *a,
		    struct xd_call *call, cudaKernel_t *k, cudaStream_t *st)
{
	const size_t inl = offsetof(struct xcuda_launch_args, args);
	const uint8_t *src;
	int err;

	if (!call->data_len) {
		if (a->args_len > sizeof(a->args) ||
		    call->req->hdr.len < inl + a->args_len)
			return cudaErrorInvalidValue;
		src = a->args;
	} else {
		if (call->data_len != a->args_len)
			return cudaErrorInvalidValue;
		src = call->data;
	}
	err = xd_stream_lookup(&s->streams, a->stream, st);
	if (!err)
		err = xd_launch_argv(s, a->func, src, a->args_len, k);
	return err;
}

int xd_op_launch(struct xd_session *s, const struct xcuda_launch_args *a,
		 struct xd_call *call)
{
	cudaKernel_t k;
	cudaStream_t st;
	dim3 grid, block;
	int err;

	err = xd_launch_fixed(s, a, call, &k, &st);
	if (err)
		return err;
	grid.x = a->grid[0];
	grid.y = a->grid[1];
	grid.z = a->grid[2];
	block.x = a->block[0];
	block.y = a->block[1];
	block.z = a->block[2];
	return cudaLaunchKernel((const void *)k, grid, block, s->argv,
				a->shmem, st);
}

int xd_op_func_get_attributes(struct xd_session *s,
			      const struct xcuda_func_get_attributes_args *a,
			      struct xd_call *call)
{
	struct cudaFuncAttributes attr;
	struct xd_func *f;
	int err;

	err = xd_func(s, a->func, &f);
	if (err)
		return err;
	if (call->data_len < sizeof(attr))
		return cudaErrorInvalidValue;
	memset(&attr, 0, sizeof(attr));
	err = cudaFuncGetAttributes(&attr, (const void *)f->kernel);
	if (!err)
		memcpy(call->data, &attr, sizeof(attr));
	return err;
}

int xd_kernel_lookup(struct xd_session *s, uint32_t h, cudaKernel_t *k)
{
	struct xd_func *f;
	int err = xd_func(s, h, &f);

	if (!err)
		*k = f->kernel;
	return err;
}

/* LAUNCH builds its argument vector in buffers of the session's own. */
static int xd_modules_init(struct xd_session *s)
{
	s->argbuf = malloc(XCUDA_MAX_ARGS_BYTES);
	s->argv = calloc(XCUDA_MAX_PARAMS, sizeof(*s->argv));
	return s->argbuf && s->argv ? 0 : -ENOMEM;
}

/* Kernels go with their modules, after the streams that run them. */
static void xd_modules_teardown(struct xd_session *s)
{
	xd_upload_drop(s);
	xd_modules_fini(s);
	free(s->argbuf);
	free(s->argv);
	s->argbuf = NULL;
	s->argv = NULL;
}

XD_SESSION_HOOKS(modules, 20, xd_modules_init, xd_modules_teardown);

int xd_op_library_kernels(struct xd_session *s,
			  const struct xcuda_library_kernels_args *a,
			  struct xcuda_library_kernels_res *r,
			  struct xd_call *call)
{
	cudaKernel_t *k = NULL;
	unsigned int n = 0, i;
	uint64_t need = 0, put = 0;
	cudaLibrary_t lib;
	const char *name;
	uint32_t mh;
	size_t len;
	int err;

	err = xd_module_arg(s, a->module, &mh, &lib);
	if (!err)
		err = cudaLibraryGetKernelCount(&n, lib);
	if (err)
		return err;
	if (n) {
		k = calloc(n, sizeof(*k));
		if (!k)
			return cudaErrorMemoryAllocation;
		err = cudaLibraryEnumerateKernels(k, n, lib);
	}
	/* Whole names only: the guest asks again when they do not fit. */
	for (i = 0; !err && i < n; i++) {
		err = cudaFuncGetName(&name, (const void *)k[i]);
		if (err)
			break;
		len = strnlen(name, XCUDA_NAME_MAX - 1) + 1;
		if (put == need && len <= call->data_len - put) {
			memcpy(call->data + put, name, len - 1);
			call->data[put + len - 1] = 0;
			put += len;
		}
		need += len;
	}
	free(k);
	if (err)
		return err;
	if (need > UINT32_MAX)
		return cudaErrorNotSupported;
	r->count = n;
	r->bytes = (uint32_t)need;
	return 0;
}

int xd_op_kernel_set_attribute_for_device(
		struct xd_session *s,
		const struct xcuda_kernel_set_attribute_for_device_args *a,
		struct xd_call *call)
{
	cudaKernel_t k;
	int err;

	(void)call;
	err = xd_kernel_lookup(s, a->kernel, &k);
	if (err)
		return err;
	return cudaKernelSetAttributeForDevice(k,
		(enum cudaFuncAttribute)a->attr, a->value, a->device);
}

int xd_kernel_argv(struct xd_session *s, uint32_t h, uint8_t *args,
		   uint32_t len, cudaKernel_t *k, void ***argv)
{
	struct xd_func *f;
	uint32_t i;
	int err = xd_func(s, h, &f);

	if (err)
		return err;
	if (len != f->args_size)
		return cudaErrorInvalidValue;
	*argv = calloc(f->nparams ? f->nparams : 1, sizeof(**argv));
	if (!*argv)
		return cudaErrorMemoryAllocation;
	for (i = 0; i < f->nparams; i++)
		(*argv)[i] = args + f->params[i].offset;
	*k = f->kernel;
	return 0;
}

/*
 * The session's kernel that CUDA answered as @kernel: the same handle,
 * or (should CUDA answer another name of it) the same function.
 */
static uint32_t xd_kernel_find(struct xd_session *s, const void *kernel)
{
	cudaFunction_t want = NULL, fn;
	uint32_t h;

	for (h = 0; (h = xd_htab_next(&s->funcs, h));)
		if (xd_htab_get(&s->funcs, h)->ptr == kernel)
			return h;
	if (!kernel)
		return 0;
	/* A symbol of the kernel, or its function itself. */
	if (cudaGetFuncBySymbol(&want, kernel) || !want)
		want = (cudaFunction_t)kernel;
	for (h = 0; (h = xd_htab_next(&s->funcs, h));) {
		fn = NULL;
		if (!cudaGetFuncBySymbol(&fn, xd_htab_get(&s->funcs, h)->ptr) &&
		    fn == want) {
			cudaGetLastError();
			return h;
		}
	}
	cudaGetLastError();
	return 0;
}

int xd_kernel_pack(struct xd_session *s, const void *kernel, void **argv,
		   uint8_t *out, uint32_t cap, uint32_t *h, uint32_t *len)
{
	struct xd_func *f;
	uint32_t i, fh = xd_kernel_find(s, kernel);

	if (!fh)
		return cudaErrorNotSupported;
	f = xd_htab_get(&s->funcs, fh)->meta;
	if (f->args_size > cap || (f->nparams && !argv))
		return cudaErrorInvalidValue;
	memset(out, 0, f->args_size);
	for (i = 0; i < f->nparams; i++)
		memcpy(out + f->params[i].offset, argv[i], f->params[i].size);
	*h = fh;
	*len = f->args_size;
	return 0;
}
