// SPDX-License-Identifier: MIT
/*
 * What the guest keeps of cuBLAS handles: the pointer mode that says
 * where scalars are, and the stream a program set.  A process has few
 * of them at a time, so a list does.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"

static pthread_mutex_t xc_blas_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xc_blas_obj *xc_blas_objs;

static struct xc_blas_obj **xc_blas_find(uintptr_t key,
					 enum xc_blas_kind kind)
{
	struct xc_blas_obj **pp;

	for (pp = &xc_blas_objs; *pp; pp = &(*pp)->next)
		if ((*pp)->key == key && (*pp)->kind == kind)
			return pp;
	return NULL;
}

int xc_blas_obj_get(uintptr_t key, enum xc_blas_kind kind,
		    struct xc_blas_obj *out)
{
	struct xc_blas_obj **pp;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	out->key = key;
	out->kind = kind;
	out->mode = CUBLAS_POINTER_MODE_HOST;
	pthread_mutex_lock(&xc_blas_lock);
	pp = xc_blas_find(key, kind);
	if (pp) {
		*out = **pp;
		ret = 0;
	}
	pthread_mutex_unlock(&xc_blas_lock);
	out->next = NULL;
	return ret;
}

int xc_blas_obj_put(const struct xc_blas_obj *o)
{
	struct xc_blas_obj **pp, *n;

	pthread_mutex_lock(&xc_blas_lock);
	pp = xc_blas_find(o->key, o->kind);
	if (pp) {
		n = (*pp)->next;
		**pp = *o;
		(*pp)->next = n;
		pthread_mutex_unlock(&xc_blas_lock);
		return 0;
	}
	n = malloc(sizeof(*n));
	if (!n) {
		pthread_mutex_unlock(&xc_blas_lock);
		return -1;
	}
	*n = *o;
	n->next = xc_blas_objs;
	xc_blas_objs = n;
	pthread_mutex_unlock(&xc_blas_lock);
	return 0;
}

void xc_blas_obj_drop(uintptr_t key, enum xc_blas_kind kind)
{
	struct xc_blas_obj **pp, *o = NULL;

	pthread_mutex_lock(&xc_blas_lock);
	pp = xc_blas_find(key, kind);
	if (pp) {
		o = *pp;
		*pp = o->next;
	}
	pthread_mutex_unlock(&xc_blas_lock);
	free(o);
}
