// SPDX-License-Identifier: MIT
/*
 * Libraries the program loads itself: cudaLibraryLoadData and
 * cudaLibraryLoadFromFile upload the image at once (MODULE_DATA, as the
 * registry does for fatbinaries on first use); kernels and globals are
 * looked up by name with FUNC_GET and VAR_GET.  A cudaKernel_t of a
 * library is a kernel of the registry, so every launch path takes it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest.h"

/* Room for the names of a library's kernels, at first. */
#define XC_LIB_NAMES	4096u

static cudaError_t xc_lib_open(cudaLibrary_t *library, const void *code,
			       unsigned int nopts)
{
	struct xc_module *m;
	struct xc_session *s;
	cudaError_t err;
	uint64_t size;
	static int said;

	if (!library || !code)
		return cudaErrorInvalidValue;
	if (nopts) {
		xc_warn_once(&said, "cudaLibraryLoadData: JIT and library "
			     "options are not supported");
		return cudaErrorNotSupported;
	}
	err = xc_ready(&s);
	if (err)
		return err;
	code = xc_image_unwrap(code);
	size = code ? xc_image_size(code) : 0;
	if (!size)
		return cudaErrorInvalidKernelImage;
	m = xc_lib_new(code, size);
	if (!m)
		return cudaErrorMemoryAllocation;
	pthread_mutex_lock(&s->lock);
	err = xc_lib_load(s, m);
	pthread_mutex_unlock(&s->lock);
	if (err) {
		xc_lib_drop(m);
		return err;
	}
	*library = (cudaLibrary_t)m;
	return cudaSuccess;
}

cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code,
				enum cudaJitOption *jitOptions,
				void **jitOptionsValues,
				unsigned int numJitOptions,
				enum cudaLibraryOption *libraryOptions,
				void **libraryOptionValues,
				unsigned int numLibraryOptions)
{
	(void)jitOptions; (void)jitOptionsValues;
	(void)libraryOptions; (void)libraryOptionValues;
	return xc_ret(xc_lib_open(library, code,
				  numJitOptions + numLibraryOptions));
}

/* The whole file, NUL-terminated (PTX is text); NULL with errno set. */
static void *xc_read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t len = 0, cap = 1 << 16, n;
	char *buf = NULL, *p;

	if (!f)
		return NULL;
	for (;;) {
		if (!buf || len + 1 >= cap) {
			if (buf)
				cap *= 2;
			if (cap > (size_t)XCUDA_MAX_MODULE + 1) {
				errno = EFBIG;
				break;
			}
			p = realloc(buf, cap);
			if (!p)
				break;
			buf = p;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (n)
			continue;
		if (ferror(f))
			break;
		fclose(f);
		buf[len] = 0;
		return buf;
	}
	fclose(f);
	free(buf);
	return NULL;
}

cudaError_t cudaLibraryLoadFromFile(cudaLibrary_t *library,
				    const char *fileName,
				    enum cudaJitOption *jitOptions,
				    void **jitOptionsValues,
				    unsigned int numJitOptions,
				    enum cudaLibraryOption *libraryOptions,
				    void **libraryOptionValues,
				    unsigned int numLibraryOptions)
{
	cudaError_t err;
	void *image;

	(void)jitOptions; (void)jitOptionsValues;
	(void)libraryOptions; (void)libraryOptionValues;
	if (!library || !fileName)
		return xc_ret(cudaErrorInvalidValue);
	image = xc_read_file(fileName);
	if (!image)
		return xc_ret(errno == ENOMEM ? cudaErrorMemoryAllocation :
			      cudaErrorFileNotFound);
	err = xc_lib_open(library, image, numJitOptions + numLibraryOptions);
	free(image);
	return xc_ret(err);
}

/* The library @lib and the session, lock held on success. */
static cudaError_t xc_lib_locked(cudaLibrary_t lib, struct xc_session **s,
				 struct xc_module **m)
{
	cudaError_t err = xc_ready(s);

	if (err)
		return err;
	*m = lib ? xc_lib_get(lib) : NULL;
	if (!*m)
		return cudaErrorInvalidResourceHandle;
	pthread_mutex_lock(&(*s)->lock);
	err = xc_lib_load(*s, *m);
	if (err)
		pthread_mutex_unlock(&(*s)->lock);
	return err;
}

cudaError_t cudaLibraryUnload(cudaLibrary_t library)
{
	struct xcuda_module_unload_args a = { 0 };
	struct xc_session *s;
	struct xc_module *m;
	cudaError_t err;

	err = xc_lib_locked(library, &s, &m);
	if (err)
		return xc_ret(err);
	a.module = xc_lib_handle(m);
	xc_lib_drop(m);
	pthread_mutex_unlock(&s->lock);
	return xc_call_module_unload(&a);
}

cudaError_t cudaLibraryGetKernel(cudaKernel_t *pKernel, cudaLibrary_t library,
				 const char *name)
{
	struct xc_session *s;
	struct xc_module *m;
	struct xc_func *f;
	cudaError_t err;

	if (!pKernel || !name)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_lib_locked(library, &s, &m);
	if (err)
		return xc_ret(err);
	f = xc_lib_kernel(m, name);
	err = f ? xc_func_resolve(s, f) : cudaErrorMemoryAllocation;
	pthread_mutex_unlock(&s->lock);
	if (!err)
		*pKernel = (cudaKernel_t)f;
	return xc_ret(err);
}

/* A library's variable by name: VAR_GET with @flags. */
static cudaError_t xc_lib_var(cudaLibrary_t library, const char *name,
			      uint32_t flags, uint64_t *p, uint64_t *size)
{
	struct xc_session *s;
	struct xc_module *m;
	cudaError_t err;

	if (!name)
		return cudaErrorInvalidValue;
	err = xc_lib_locked(library, &s, &m);
	if (err)
		return err;
	err = xc_lib_global(s, m, name, flags, p, size);
	pthread_mutex_unlock(&s->lock);
	return err;
}

cudaError_t cudaLibraryGetGlobal(void **dptr, size_t *bytes,
				 cudaLibrary_t library, const char *name)
{
	uint64_t p = 0, size = 0;
	cudaError_t err = xc_lib_var(library, name, 0, &p, &size);

	if (err)
		return xc_ret(err);
	if (dptr)
		*dptr = (void *)(uintptr_t)p;
	if (bytes)
		*bytes = size;
	return cudaSuccess;
}

/*
 * LIBRARY_KERNELS into a staging block of at least @room bytes; the
 * names are left in the block at *@blk for the caller to free.
 */
static cudaError_t xc_lib_kernels(struct xc_session *s, struct xc_module *m,
				  uint64_t room,
				  struct xcuda_library_kernels_res *r,
				  uint64_t *blk)
{
	struct xcuda_library_kernels_args a = { 0 };
	struct xcuda_request req;
	uint64_t got = 0;
	cudaError_t err;

	*blk = UINT64_MAX;
	a.module = xc_lib_handle(m);
	xc_req_library_kernels(&req, &a);
	if (room < XC_LIB_NAMES)
		room = XC_LIB_NAMES;
	*blk = xc_staging_get(s, room, room, &got);
	if (*blk == UINT64_MAX)
		return cudaErrorMemoryAllocation;
	req.hdr.data_off = (uint32_t)*blk;
	req.hdr.data_len = (uint32_t)got;
	err = xc_round_trip_locked(s, &req, r, sizeof(*r));
	if (err) {
		xc_arena_release(s->staging, *blk);
		*blk = UINT64_MAX;
	}
	return err;
}

cudaError_t cudaLibraryGetKernelCount(unsigned int *count, cudaLibrary_t lib)
{
	struct xcuda_library_kernels_res r;
	struct xc_session *s;
	struct xc_module *m;
	cudaError_t err;
	uint64_t blk;

	if (!count)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_lib_locked(lib, &s, &m);
	if (err)
		return xc_ret(err);
	err = xc_lib_kernels(s, m, 0, &r, &blk);
	if (!err)
		xc_arena_release(s->staging, blk);
	pthread_mutex_unlock(&s->lock);
	if (!err)
		*count = r.count;
	return xc_ret(err);
}

cudaError_t cudaLibraryEnumerateKernels(cudaKernel_t *kernels,
					unsigned int numKernels,
					cudaLibrary_t lib)
{
	struct xcuda_library_kernels_res r;
	struct xc_session *s;
	struct xc_module *m;
	struct xc_func *f;
	cudaError_t err;
	uint64_t blk, off;
	unsigned int i;
	char *names, *end, *name;

	if (!kernels || !numKernels)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_lib_locked(lib, &s, &m);
	if (err)
		return xc_ret(err);
	err = xc_lib_kernels(s, m, 0, &r, &blk);
	if (!err && r.bytes > XC_LIB_NAMES) {
		/* Again with room for every name. */
		xc_arena_release(s->staging, blk);
		err = xc_lib_kernels(s, m, r.bytes, &r, &blk);
		if (!err && r.bytes > xc_arena_find(s->staging, blk, &off)) {
			xc_arena_release(s->staging, blk);
			err = cudaErrorInvalidValue;	/* changed under us */
		}
	}
	if (err)
		goto out;
	/* One copy out of the arena; the worker's names are checked there. */
	names = malloc(r.bytes + 1);
	if (!names) {
		err = cudaErrorMemoryAllocation;
		xc_arena_release(s->staging, blk);
		goto out;
	}
	memcpy(names, xc_arena_ptr(s, blk), r.bytes);
	names[r.bytes] = 0;
	xc_arena_release(s->staging, blk);
	end = names + r.bytes;
	for (i = 0, off = 0; !err && i < numKernels && i < r.count; i++) {
		name = names + off;
		if (name >= end) {
			err = cudaErrorInvalidValue;
			break;
		}
		off += strlen(name) + 1;
		f = xc_lib_kernel(m, name);
		err = f ? xc_func_resolve(s, f) : cudaErrorMemoryAllocation;
		if (!err)
			kernels[i] = (cudaKernel_t)f;
	}
	free(names);
out:
	pthread_mutex_unlock(&s->lock);
	return xc_ret(err);
}

cudaError_t cudaKernelSetAttributeForDevice(cudaKernel_t kernel,
					    enum cudaFuncAttribute attr,
					    int value, int device)
{
	struct xcuda_kernel_set_attribute_for_device_args a = { 0 };
	struct xc_func *f = xc_func_by_kernel(kernel);
	cudaError_t err;

	err = xc_func_handle(kernel, &a.kernel, cudaErrorInvalidResourceHandle);
	if (err)
		return xc_ret(err);
	a.attr = attr;
	a.value = value;
	a.device = device;
	err = xc_call_kernel_set_attribute_for_device(&a);
	/* Launches on this device are checked against the new limit. */
	if (!err && f && device == xc_cur_device() &&
	    attr == cudaFuncAttributeMaxDynamicSharedMemorySize)
		f->max_dyn_smem = value;
	return err;
}

/*
 * A __managed__ variable of a library: mapped into the process at its
 * device address, as the program's own are (managed.c), on first ask.
 */
cudaError_t cudaLibraryGetManaged(void **dptr, size_t *bytes,
				  cudaLibrary_t library, const char *name)
{
	uint64_t p = 0, size = 0;
	cudaError_t err;
	struct xc_session *s = xc_session_peek();

	err = xc_lib_var(library, name, XCUDA_VAR_MANAGED, &p, &size);
	if (err)
		return xc_ret(err);
	if (!p || !size)
		return xc_ret(cudaErrorSymbolNotFound);
	/* Asked again, or beside another variable: it joins the region. */
	if (xc_managed_map(s, p, size, 1, xc_cur_device(), 0))
		return xc_ret(cudaErrorMemoryAllocation);
	if (dptr)
		*dptr = (void *)(uintptr_t)p;
	if (bytes)
		*bytes = size;
	return cudaSuccess;
}
