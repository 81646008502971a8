// SPDX-License-Identifier: MIT
/*
 * The driver's JIT linker (cuLink*), made by the worker's driver.  A
 * guest CUlinkState is a record of this library's: the worker's handle,
 * where the program wants its logs, and the linked cubin once
 * cuLinkComplete has read it back, which lives until cuLinkDestroy as
 * the driver's does.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

/* The linked cubin comes back in pieces of this size. */
#define XC_LINK_PIECE	(1u << 20)

struct xc_link {
	struct xc_link *next;
	uint32_t handle;
	struct xc_jit jit;	/* the options, and where the logs go */
	void *cubin;
};

static pthread_mutex_t xc_link_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xc_link *xc_links;

/* @state if it is a link of this library's; taken off the list if @take. */
static struct xc_link *xc_link_find(CUlinkState state, int take)
{
	struct xc_link **pp, *l = NULL;

	pthread_mutex_lock(&xc_link_lock);
	for (pp = &xc_links; *pp; pp = &(*pp)->next) {
		if (*pp != (struct xc_link *)state)
			continue;
		l = *pp;
		if (take)
			*pp = l->next;
		break;
	}
	pthread_mutex_unlock(&xc_link_lock);
	return l;
}

/* Before a step of a link: the session, and @state's record. */
static CUresult xc_link_enter(CUlinkState state, struct xc_link **l)
{
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	*l = xc_link_find(state, 0);
	return *l ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options,
			 void **optionValues, CUlinkState *stateOut)
{
	struct xcuda_drv_link_create_args a;
	struct xcuda_drv_link_create_res r = { 0, 0 };
	struct xc_xfer x;
	struct xc_link *l;
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	if (!stateOut)
		return CUDA_ERROR_INVALID_VALUE;
	l = calloc(1, sizeof(*l));
	if (!l)
		return CUDA_ERROR_OUT_OF_MEMORY;
	err = xc_jit_opts(&l->jit, numOptions, options, optionValues);
	if (err) {
		free(l);
		return (CUresult)err;
	}
	memset(&a, 0, sizeof(a));
	a.nopts = l->jit.n;
	x = (struct xc_xfer){ l->jit.opt, (uint64_t)l->jit.n *
			      sizeof(l->jit.opt[0]), XC_XFER_IN, &a.opts };
	err = xc_drv_forward_xfer(XCUDA_OP_DRV_LINK_CREATE, &a, sizeof(a), &r,
				  sizeof(r), &x, 1);
	if (!err && r.link < XCUDA_HANDLE_FIRST)
		err = CUDA_ERROR_UNKNOWN;
	if (err) {
		free(l);
		return xc_drv_result(err);
	}
	l->handle = r.link;
	pthread_mutex_lock(&xc_link_lock);
	l->next = xc_links;
	xc_links = l;
	pthread_mutex_unlock(&xc_link_lock);
	*stateOut = (CUlinkState)l;
	return CUDA_SUCCESS;
}

/* The two versions' prototypes are the same. */
CUresult cuLinkCreate(unsigned int numOptions, CUjit_option *options,
		      void **optionValues, CUlinkState *stateOut)
	__attribute__((alias("cuLinkCreate_v2")));

/* The worker's logs into the program's buffers, after each step. */
static void xc_link_logs(struct xc_link *l)
{
	struct xcuda_drv_link_logs_args a;
	uint64_t size = xc_jit_logs_size(&l->jit);
	struct xc_xfer x;
	uint8_t *buf;

	if (!size)
		return;
	buf = malloc(size);
	if (!buf)
		return;
	memset(&a, 0, sizeof(a));
	a.link = l->handle;
	x = (struct xc_xfer){ buf, size, XC_XFER_OUT, &a.logs };
	if (!xc_drv_forward_xfer(XCUDA_OP_DRV_LINK_LOGS, &a, sizeof(a), NULL,
				 0, &x, 1))
		xc_jit_logs_put(&l->jit, buf);
	free(buf);
}

static CUresult xc_link_add(struct xc_link *l, CUjitInputType type,
			    const void *data, size_t size, const char *name)
{
	struct xcuda_drv_link_add_data_args a;
	struct xc_xfer x[2];
	int err;

	memset(&a, 0, sizeof(a));
	a.link = l->handle;
	a.type = (uint32_t)type;
	x[0] = (struct xc_xfer){ (void *)data, size, XC_XFER_IN, &a.data };
	x[1] = (struct xc_xfer){ (void *)name,
				 xc_strsize(name, XCUDA_NAME_MAX),
				 XC_XFER_IN, &a.name };
	err = xc_drv_forward_xfer(XCUDA_OP_DRV_LINK_ADD_DATA, &a, sizeof(a),
				  NULL, 0, x, 2);
	xc_link_logs(l);
	return err ? xc_drv_result(err) : CUDA_SUCCESS;
}

/* Options of one input only tune it: the worker's driver uses its own. */
CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data,
			  size_t size, const char *name,
			  unsigned int numOptions, CUjit_option *options,
			  void **optionValues)
{
	struct xc_link *l;
	CUresult err = xc_link_enter(state, &l);

	(void)numOptions;
	(void)options;
	(void)optionValues;
	if (err)
		return err;
	if (!data || !size || size > XCUDA_MAX_MODULE)
		return CUDA_ERROR_INVALID_VALUE;
	return xc_link_add(l, type, data, size, name ? name : "");
}

CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void *data,
		       size_t size, const char *name, unsigned int numOptions,
		       CUjit_option *options, void **optionValues)
	__attribute__((alias("cuLinkAddData_v2")));

CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type,
			  const char *path, unsigned int numOptions,
			  CUjit_option *options, void **optionValues)
{
	struct xc_link *l;
	uint8_t *buf;
	size_t len;
	CUresult ret = xc_link_enter(state, &l);

	(void)numOptions;
	(void)options;
	(void)optionValues;
	if (ret)
		return ret;
	if (!path)
		return CUDA_ERROR_INVALID_VALUE;
	ret = xc_read_file(path, &buf, &len);
	if (ret)
		return ret;
	ret = xc_link_add(l, type, buf, len, path);
	free(buf);
	return ret;
}

CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type,
		       const char *path, unsigned int numOptions,
		       CUjit_option *options, void **optionValues)
	__attribute__((alias("cuLinkAddFile_v2")));

/* The completed link's cubin, @size bytes, read into @l->cubin. */
static int xc_link_read(struct xc_link *l, uint64_t size)
{
	struct xcuda_drv_link_cubin_args a;
	struct xc_xfer x;
	uint64_t off;
	uint8_t *cubin;
	int err;

	cubin = malloc(size);
	if (!cubin)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (off = 0; off < size; off += x.len) {
		memset(&a, 0, sizeof(a));
		a.link = l->handle;
		a.offset = off;
		x = (struct xc_xfer){ cubin + off, size - off < XC_LINK_PIECE ?
				      size - off : XC_LINK_PIECE,
				      XC_XFER_OUT, &a.buf };
		err = xc_drv_forward_xfer(XCUDA_OP_DRV_LINK_CUBIN, &a,
					  sizeof(a), NULL, 0, &x, 1);
		if (err) {
			free(cubin);
			return err;
		}
	}
	free(l->cubin);
	l->cubin = cubin;
	return 0;
}

CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
	struct xcuda_drv_link_complete_args a;
	struct xcuda_drv_link_complete_res r = { 0 };
	struct xc_link *l;
	int err = xc_link_enter(state, &l);

	if (err)
		return (CUresult)err;
	if (!cubinOut || !sizeOut)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&a, 0, sizeof(a));
	a.link = l->handle;
	err = xc_drv_forward(XCUDA_OP_DRV_LINK_COMPLETE, &a, sizeof(a), &r,
			     sizeof(r));
	xc_link_logs(l);
	if (!err && (!r.size || r.size > XCUDA_MAX_MODULE))
		err = CUDA_ERROR_UNKNOWN;
	if (!err)
		err = xc_link_read(l, r.size);
	if (err)
		return xc_drv_result(err);
	*cubinOut = l->cubin;
	*sizeOut = (size_t)r.size;
	return CUDA_SUCCESS;
}

CUresult cuLinkDestroy(CUlinkState state)
{
	struct xcuda_drv_link_destroy_args a;
	struct xc_link *l;
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	l = xc_link_find(state, 1);
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	memset(&a, 0, sizeof(a));
	a.link = l->handle;
	err = xc_drv_forward(XCUDA_OP_DRV_LINK_DESTROY, &a, sizeof(a), NULL,
			     0);
	/* The program's state is gone whatever the worker answered. */
	free(l->cubin);
	free(l);
	return err ? xc_drv_result(err) : CUDA_SUCCESS;
}
