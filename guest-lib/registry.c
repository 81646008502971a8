// SPDX-License-Identifier: MIT
/*
 * What the program's CUDA constructors register (fatbinaries, kernels,
 * device variables), and their lazy resolution with the worker: a module
 * is uploaded the first time one of its kernels or variables is used, and
 * each kernel's parameter layout is learnt once, from the real runtime.
 */
#include <stdlib.h>
#include <string.h>

#include "common/image.h"
#include "guest.h"
#include "xcuda/hash.h"

#define XC_FATBINC_MAGIC	0x466243b1u
#define XC_FATBIN_MAGIC		0xba55ed50u

/* What nvcc's registration code passes to __cudaRegisterFatBinary. */
struct xc_fatbin_wrapper {
	int magic;
	int version;
	const void *data;
	void *filename_or_fatbins;
};

/* The fatbinary's own header: its size is header_size + fat_size. */
struct xc_fatbin_header {
	uint32_t magic;
	uint16_t version;
	uint16_t header_size;
	uint64_t fat_size;
};

struct xc_module {
	void *cookie;		/* the handle CUDA code stores is &cookie */
	const void *image;
	uint64_t size;
	int bad;		/* not a fatbinary we understand */
	struct xc_session *sess;	/* where it is loaded */
	uint32_t handle;
	cudaError_t load_err;
	int lib;		/* cudaLibraryLoadData's: owns image */
};

/* A tiny pointer-keyed hash map; entries are never removed. */
#define XC_MAP_BITS 10

struct xc_map_ent {
	const void *key;
	void *val;
	struct xc_map_ent *next;
};

struct xc_map {
	struct xc_map_ent *b[1u << XC_MAP_BITS];
};

static pthread_mutex_t xc_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xc_map xc_funcs_by_host, xc_funcs_by_self, xc_vars, xc_libs;

static unsigned int xc_map_hash(const void *key)
{
	uint64_t k = (uintptr_t)key * 0x9e3779b97f4a7c15ull;

	return (unsigned int)(k >> (64 - XC_MAP_BITS));
}

static void *xc_map_get(struct xc_map *m, const void *key)
{
	struct xc_map_ent *e;

	for (e = m->b[xc_map_hash(key)]; e; e = e->next)
		if (e->key == key)
			return e->val;
	return NULL;
}

/* xc_map_get() under the registry's lock. */
static void *xc_map_find(struct xc_map *m, const void *key)
{
	void *val;

	pthread_mutex_lock(&xc_reg_lock);
	val = xc_map_get(m, key);
	pthread_mutex_unlock(&xc_reg_lock);
	return val;
}

static int xc_map_put(struct xc_map *m, const void *key, void *val)
{
	unsigned int h = xc_map_hash(key);
	struct xc_map_ent *e = malloc(sizeof(*e));

	if (!e)
		return -1;
	e->key = key;
	e->val = val;
	e->next = m->b[h];
	m->b[h] = e;
	return 0;
}

/* Removes every entry whose value satisfies @match; the values stay. */
static void xc_map_drop(struct xc_map *m, int (*match)(void *val, void *arg),
			void *arg)
{
	struct xc_map_ent **pp, *e;
	size_t i;

	for (i = 0; i < sizeof(m->b) / sizeof(m->b[0]); i++) {
		pp = &m->b[i];
		while ((e = *pp)) {
			if (match(e->val, arg)) {
				*pp = e->next;
				free(e);
			} else {
				pp = &e->next;
			}
		}
	}
}

static void xc_map_each(struct xc_map *m, void (*fn)(void *val))
{
	struct xc_map_ent *e;
	size_t i;

	for (i = 0; i < sizeof(m->b) / sizeof(m->b[0]); i++)
		for (e = m->b[i]; e; e = e->next)
			fn(e->val);
}

void **xc_reg_fatbin(void *wrapper)
{
	const struct xc_fatbin_wrapper *w = wrapper;
	struct xc_module *m = calloc(1, sizeof(*m));
	const struct xc_fatbin_header *h;

	if (!m)
		return NULL;
	m->bad = 1;
	if (w && (uint32_t)w->magic == XC_FATBINC_MAGIC && w->data) {
		h = w->data;
		if (h->magic == XC_FATBIN_MAGIC && h->header_size >= sizeof(*h)
		    && h->fat_size <= XCUDA_MAX_MODULE) {
			m->image = h;
			m->size = h->header_size + h->fat_size;
			m->bad = 0;
		}
	}
	return &m->cookie;
}

static struct xc_module *xc_module_of(void **handle)
{
	return (struct xc_module *)handle;
}

void xc_reg_func(void **mod, const char *host_fun, const char *name)
{
	struct xc_func *f = calloc(1, sizeof(*f));

	if (!f || !mod)
		goto fail;
	f->magic = XC_FUNC_MAGIC;
	f->mod = xc_module_of(mod);
	f->host_fun = host_fun;
	f->name = strdup(name);
	f->max_dyn_smem = -1;
	f->max_threads = -1;
	if (!f->name)
		goto fail;
	pthread_mutex_lock(&xc_reg_lock);
	if (xc_map_put(&xc_funcs_by_host, host_fun, f) ||
	    xc_map_put(&xc_funcs_by_self, f, f)) {
		pthread_mutex_unlock(&xc_reg_lock);
		goto fail;
	}
	pthread_mutex_unlock(&xc_reg_lock);
	return;
fail:
	xc_log("cannot register kernel %s", name ? name : "?");
	if (f)
		free(f->name);
	free(f);
}

void xc_reg_var(void **mod, const char *host_var, const char *name,
		size_t size)
{
	struct xc_var *v = calloc(1, sizeof(*v));

	if (!v || !mod)
		goto fail;
	v->mod = xc_module_of(mod);
	v->host_var = host_var;
	v->size = size;
	v->name = strdup(name);
	if (!v->name)
		goto fail;
	pthread_mutex_lock(&xc_reg_lock);
	if (xc_map_put(&xc_vars, host_var, v)) {
		pthread_mutex_unlock(&xc_reg_lock);
		goto fail;
	}
	pthread_mutex_unlock(&xc_reg_lock);
	return;
fail:
	xc_log("cannot register variable %s", name ? name : "?");
	if (v)
		free(v->name);
	free(v);
}

static int xc_func_of_module(void *val, void *mod)
{
	return ((struct xc_func *)val)->mod == mod;
}

static int xc_is(void *val, void *arg)
{
	return val == arg;
}

static int xc_var_of_module(void *val, void *mod)
{
	return ((struct xc_var *)val)->mod == mod;
}

void xc_unreg_fatbin(void **mod)
{
	struct xc_module *m = mod ? xc_module_of(mod) : NULL;
	struct xcuda_module_unload_args a = { 0 };
	struct xcuda_request req;
	struct xc_session *s;

	if (!m)
		return;
	/*
	 * A library that is dlclose()d and opened again registers the same
	 * host addresses anew: it must find its new kernels and variables,
	 * and get fresh device variables, as with CUDA.  The entries go; the
	 * structs stay, since another thread may still hold one (they are
	 * small, and a module is unregistered once).
	 */
	pthread_mutex_lock(&xc_reg_lock);
	xc_map_drop(&xc_funcs_by_host, xc_func_of_module, m);
	xc_map_drop(&xc_funcs_by_self, xc_func_of_module, m);
	xc_map_drop(&xc_vars, xc_var_of_module, m);
	pthread_mutex_unlock(&xc_reg_lock);

	/* Never opens a session: at exit there may be none, and no need. */
	s = xc_session_peek();
	if (!s) {
		m->bad = 1;
		return;
	}
	pthread_mutex_lock(&s->lock);
	if (m->sess == s && !m->load_err && m->handle && !s->dead) {
		a.module = m->handle;
		xc_req_module_unload(&req, &a);
		/* Posted: its answer is collected with the next call's. */
		xc_post_locked(s, &req, UINT64_MAX);
	}
	m->sess = NULL;
	m->handle = 0;
	m->bad = 1;	/* a stale kernel of it fails rather than reloads */
	pthread_mutex_unlock(&s->lock);
}

static void xc_func_forget(void *val)
{
	struct xc_func *f = val;

	f->handle = 0;
	f->max_dyn_smem = -1;
	f->max_threads = -1;
}

static void xc_var_forget(void *val)
{
	((struct xc_var *)val)->dptr = 0;
}

void xc_reg_device_reset(void)
{
	/*
	 * The worker's libraries survive a reset, but what they put on the
	 * device does not: variables get new addresses (and their initial
	 * values again) and kernels their default attributes.  Everything
	 * is looked up again on next use.
	 */
	pthread_mutex_lock(&xc_reg_lock);
	xc_map_each(&xc_funcs_by_self, xc_func_forget);
	xc_map_each(&xc_vars, xc_var_forget);
	pthread_mutex_unlock(&xc_reg_lock);
}


struct xc_func *xc_func_by_host(const void *host_fun)
{
	return xc_map_find(&xc_funcs_by_host, host_fun);
}

struct xc_func *xc_func_by_kernel(const void *kernel)
{
	return xc_map_find(&xc_funcs_by_self, kernel);
}

/* Sends a NUL-terminated name in a staging block.  Lock held. */
static cudaError_t xc_name_call(struct xc_session *s,
				struct xcuda_request *req, const char *name,
				uint64_t out_min, struct xcuda_response *rsp,
				uint64_t *blk)
{
	size_t len = strlen(name) + 1;
	uint64_t need = len > out_min ? len : out_min, got, off, id;
	cudaError_t err;

	if (len > XCUDA_NAME_MAX)
		return cudaErrorInvalidSymbol;
	off = xc_staging_get(s, need, need, &got);
	if (off == UINT64_MAX)
		return cudaErrorMemoryAllocation;
	memcpy(xc_arena_ptr(s, off), name, len);
	req->hdr.data_off = (uint32_t)off;
	req->hdr.data_len = (uint32_t)got;
	/* The caller reads the answer out of the block, then frees it. */
	err = xc_send_locked(s, req, UINT64_MAX, &id);
	if (!err)
		err = xc_wait_locked(s, id, rsp);
	if (err)
		xc_arena_release(s->staging, off);
	else
		*blk = off;
	return err;
}

static cudaError_t xc_module_load(struct xc_session *s, struct xc_module *m)
{
	struct xcuda_module_data_args a = { 0 };
	struct xcuda_module_data_res res;
	struct xcuda_response rsp;
	struct xcuda_request req;
	cudaError_t err = cudaSuccess;
	uint64_t done = 0;

	if (m->sess == s)
		return m->load_err;
	if (m->bad)
		return cudaErrorInvalidKernelImage;
	a.total = m->size;
	a.hash = xcuda_fnv1a64(0, m->image, m->size);
	while (done < m->size) {
		uint64_t piece, off, id;

		off = xc_staging_get(s, m->size - done, 1, &piece);
		if (off == UINT64_MAX)
			return cudaErrorMemoryAllocation;
		if (piece > m->size - done)
			piece = m->size - done;
		memcpy(xc_arena_ptr(s, off), (const uint8_t *)m->image + done,
		       piece);
		a.offset = done;
		a.flags = (done ? 0 : XCUDA_MOD_FIRST) |
			  (done + piece == m->size ? XCUDA_MOD_LAST : 0);
		xc_req_module_data(&req, &a);
		req.hdr.data_off = (uint32_t)off;
		req.hdr.data_len = (uint32_t)piece;
		err = xc_send_locked(s, &req, off, &id);
		if (!err)
			err = xc_wait_locked(s, id, &rsp);
		if (!err)
			err = (cudaError_t)rsp.status;
		if (err)
			break;
		done += piece;
	}
	m->sess = s;
	m->load_err = err;
	if (!err) {
		memcpy(&res, rsp.out, sizeof(res));
		m->handle = res.handle;
		if (res.handle < XCUDA_HANDLE_FIRST)
			m->load_err = cudaErrorInvalidKernelImage;
	}
	return m->load_err;
}

cudaError_t xc_func_resolve(struct xc_session *s, struct xc_func *f)
{
	struct xcuda_func_get_args a = { 0 };
	struct xcuda_func_get_attributes_args fa = { 0 };
	struct xcuda_func_get_res res;
	struct xcuda_response rsp;
	struct xcuda_request req;
	struct cudaFuncAttributes attr;
	struct xcuda_param *params = NULL;
	const uint64_t out = XCUDA_MAX_PARAMS * sizeof(struct xcuda_param);
	cudaError_t err;
	uint64_t blk, got;
	uint32_t i;

	if (f->mod->sess == s && f->handle)
		return cudaSuccess;
	err = xc_module_load(s, f->mod);
	if (err)
		return err;
	a.module = f->mod->handle;
	xc_req_func_get(&req, &a);
	err = xc_name_call(s, &req, f->name, out, &rsp, &blk);
	if (err)
		return err;
	err = (cudaError_t)rsp.status;
	memcpy(&res, rsp.out, sizeof(res));
	if (!err && (res.nparams > XCUDA_MAX_PARAMS ||
		     res.args_size > XCUDA_MAX_ARGS_BYTES ||
		     res.handle < XCUDA_HANDLE_FIRST))
		err = cudaErrorInvalidDeviceFunction;
	if (!err && res.nparams) {
		params = malloc(res.nparams * sizeof(*params));
		if (!params)
			err = cudaErrorMemoryAllocation;
	}
	if (!err && res.nparams) {
		/* One copy out of shared memory, then check the copy. */
		memcpy(params, xc_arena_ptr(s, blk),
		       res.nparams * sizeof(*params));
		for (i = 0; i < res.nparams; i++)
			if (params[i].offset > res.args_size ||
			    params[i].size > res.args_size - params[i].offset)
				err = cudaErrorInvalidDeviceFunction;
	}
	xc_arena_release(s->staging, blk);
	if (err) {
		free(params);
		return err;
	}
	free(f->params);
	f->params = params;
	f->nparams = res.nparams;
	f->args_size = res.args_size;
	f->handle = res.handle;

	/* The kernel's own limits let launches be checked here. */
	f->max_dyn_smem = -1;
	f->max_threads = -1;
	fa.func = f->handle;
	xc_req_func_get_attributes(&req, &fa);
	blk = xc_staging_get(s, sizeof(attr), sizeof(attr), &got);
	if (blk != UINT64_MAX) {
		uint64_t id;

		req.hdr.data_off = (uint32_t)blk;
		req.hdr.data_len = sizeof(attr);
		if (!xc_send_locked(s, &req, UINT64_MAX, &id) &&
		    !xc_wait_locked(s, id, &rsp) && !rsp.status) {
			memcpy(&attr, xc_arena_ptr(s, blk), sizeof(attr));
			if (attr.maxDynamicSharedSizeBytes >= 0)
				f->max_dyn_smem =
					attr.maxDynamicSharedSizeBytes;
			if (attr.maxThreadsPerBlock > 0)
				f->max_threads = attr.maxThreadsPerBlock;
		}
		xc_arena_release(s->staging, blk);
	}
	return cudaSuccess;
}

cudaError_t xc_var_resolve(struct xc_session *s, const void *host_var,
			   struct xc_var **out)
{
	struct xc_var *v = xc_map_find(&xc_vars, host_var);
	uint64_t p = 0, size = 0;
	cudaError_t err;

	if (!v)
		return cudaErrorInvalidSymbol;
	*out = v;
	if (v->mod->sess == s && v->dptr)
		return cudaSuccess;
	err = xc_lib_global(s, v->mod, v->name, 0, &p, &size);
	if (err)
		return err;
	if (!p)
		return cudaErrorInvalidSymbol;
	v->dptr = p;
	if (size < v->size)
		v->size = size;
	return cudaSuccess;
}

/* ---- libraries the program loads itself (cudaLibrary_t) ---- */

uint64_t xc_image_size(const void *image)
{
	/* The program's memory: as far as the image says, within reason. */
	return xcuda_image_size(image, XCUDA_MAX_MODULE + 1);
}

struct xc_module *xc_lib_new(const void *image, uint64_t size)
{
	struct xc_module *m = calloc(1, sizeof(*m));
	void *copy = malloc(size);

	if (!m || !copy) {
		free(m);
		free(copy);
		return NULL;
	}
	/* A copy: the program may free its image once it is loaded. */
	memcpy(copy, image, size);
	m->image = copy;
	m->size = size;
	m->lib = 1;
	m->cookie = m;
	pthread_mutex_lock(&xc_reg_lock);
	if (xc_map_put(&xc_libs, m, m)) {
		pthread_mutex_unlock(&xc_reg_lock);
		free(copy);
		free(m);
		return NULL;
	}
	pthread_mutex_unlock(&xc_reg_lock);
	return m;
}

struct xc_module *xc_lib_get(const void *lib)
{
	return xc_map_find(&xc_libs, lib);
}

cudaError_t xc_lib_load(struct xc_session *s, struct xc_module *m)
{
	return xc_module_load(s, m);
}

uint32_t xc_lib_handle(const struct xc_module *m)
{
	return m->handle;
}

/* Forgets @m and its kernels; the caller unloads it from the worker. */
void xc_lib_drop(struct xc_module *m)
{
	pthread_mutex_lock(&xc_reg_lock);
	xc_map_drop(&xc_libs, xc_is, m);
	xc_map_drop(&xc_funcs_by_self, xc_func_of_module, m);
	pthread_mutex_unlock(&xc_reg_lock);
	/* Kernels handed out stay allocated: the program may still hold one. */
	m->bad = 1;
	m->sess = NULL;
	m->handle = 0;
	free((void *)m->image);
	m->image = NULL;
	m->size = 0;
}

const void *xc_image_unwrap(const void *image)
{
	const struct xc_fatbin_wrapper *w = image;
	uint32_t magic = 0;

	if (strnlen(image, sizeof(magic)) == sizeof(magic))
		memcpy(&magic, image, sizeof(magic));
	return magic == XC_FATBINC_MAGIC ? w->data : image;
}

struct xc_func *xc_lib_kernel(struct xc_module *m, const char *name)
{
	struct xc_func *f = NULL, *g;
	struct xc_map_ent *e;
	size_t i;

	pthread_mutex_lock(&xc_reg_lock);
	/* One cudaKernel_t per library and name, as with CUDA. */
	for (i = 0; !f && i < sizeof(xc_funcs_by_self.b) /
			       sizeof(xc_funcs_by_self.b[0]); i++)
		for (e = xc_funcs_by_self.b[i]; !f && e; e = e->next) {
			g = e->val;
			if (g->mod == m && !strcmp(g->name, name))
				f = g;
		}
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (f) {
			f->magic = XC_FUNC_MAGIC;
			f->mod = m;
			f->name = strdup(name);
			f->max_dyn_smem = -1;
			f->max_threads = -1;
		}
		if (f && (!f->name || xc_map_put(&xc_funcs_by_self, f, f))) {
			free(f->name);
			free(f);
			f = NULL;
		}
	}
	pthread_mutex_unlock(&xc_reg_lock);
	return f;
}

cudaError_t xc_lib_global(struct xc_session *s, struct xc_module *m,
			  const char *name, uint32_t flags, uint64_t *dptr,
			  uint64_t *size)
{
	struct xcuda_var_get_args a = { .flags = flags };
	struct xcuda_var_get_res res;
	struct xcuda_response rsp;
	struct xcuda_request req;
	cudaError_t err;
	uint64_t blk;

	err = xc_module_load(s, m);
	if (err)
		return err;
	a.module = m->handle;
	xc_req_var_get(&req, &a);
	err = xc_name_call(s, &req, name, 0, &rsp, &blk);
	if (err)
		return err;
	xc_arena_release(s->staging, blk);
	if (rsp.status)
		return (cudaError_t)rsp.status;
	memcpy(&res, rsp.out, sizeof(res));
	*dptr = res.ptr;
	*size = res.size;
	return cudaSuccess;
}

static uint32_t xc_find_handle;
static struct xc_func *xc_found;

static void xc_func_match(void *val)
{
	struct xc_func *f = val;

	if (xc_find_handle && f->handle == xc_find_handle)
		xc_found = f;
}

struct xc_func *xc_func_by_handle(uint32_t h)
{
	struct xc_func *f;

	pthread_mutex_lock(&xc_reg_lock);
	xc_find_handle = h;
	xc_found = NULL;
	xc_map_each(&xc_funcs_by_self, xc_func_match);
	f = xc_found;
	xc_find_handle = 0;
	pthread_mutex_unlock(&xc_reg_lock);
	return f;
}
