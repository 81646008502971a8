// SPDX-License-Identifier: MIT
/*
 * Hostile requests about arrays, textures and surfaces, straight to the
 * worker's xd_handle() over in-memory arenas: a handle or an object value
 * of another session, extents that overflow or leave the arena, bogus
 * copy calls and resource types, descriptors naming unknown arrays.
 * Every case is refused before CUDA sees it, so the test runs the same
 * with or without a GPU.  The objects planted in a session's tables are
 * not CUDA's: they are taken out again before the session ends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "dom0-daemon/log.h"
#include "dom0-daemon/validate.h"
#include "dom0-daemon/worker.h"
#include "check.h"
#include "cuda_asan.h"
#include "worker_harness.h"

#define ARENA		(1u << 20)

struct sess {
	struct xd_chan chan;
	struct xd_session s;
	uint32_t id;
};

static struct sess A, B;

/* A request of @x's. */
static int send(struct sess *x, uint16_t op, const void *args,
		uint16_t len)
{
	return call(&x->s, op, args, len, 0, 0);
}

#define SEND(x, op, a)	send(x, op, &(a), sizeof(a))
#define ANSWER(name, got, want)						\
	CHECK_MSG((got) == (want), name, "status %d, want %d", (got), (want))

static void open_sess(struct sess *x, uint32_t id)
{
	struct xcuda_open_args a = { XCUDA_PROTO_VERSION, 0xffffffffu, ARENA,
				     0 };

	x->id = id;
	x->chan.arena = calloc(1, ARENA);
	x->chan.arena_size = ARENA;
	x->chan.session = id;
	REQUIRE_MSG(x->chan.arena && !xd_session_init(&x->s, &x->chan),
		    "setup", "out of memory");
	ANSWER("open", SEND(x, XCUDA_OP_OPEN, a), 0);
}

/* Plants an object that is not CUDA's; its handle. */
static uint32_t plant(struct sess *x, int kind, uintptr_t v)
{
	uint32_t h = 0;

	REQUIRE_MSG(!xd_object_add(&x->s.objects[kind], (void *)v, 0, 0, &h),
		    "plant", "table full");
	return h;
}

static void unplant(struct sess *x, int kind, uint32_t h)
{
	xd_htab_del(&x->s.objects[kind], h);
}

static void test_other_session(uint32_t arr, uint32_t mip)
{
	struct xcuda_free_array_args f = { 0 };
	struct xcuda_array_get_info_args gi;
	struct xcuda_array_copy_args c;
	struct xcuda_create_surface_object_args so;
	struct xcuda_create_texture_object_args to;
	struct xcuda_destroy_texture_object_args dt = { 0 };
	struct xcuda_destroy_surface_object_args ds = { 0 };
	struct xcuda_get_texture_object_resource_desc_args gr;
	struct xcuda_free_mipmapped_array_args fm = { 0 };

	f.array = arr;
	ANSWER("free another session's array", SEND(&B, XCUDA_OP_FREE_ARRAY,
						    f),
	       cudaErrorInvalidResourceHandle);
	fm.mipmappedArray = mip;
	ANSWER("free another session's mipmapped array",
	       SEND(&B, XCUDA_OP_FREE_MIPMAPPED_ARRAY, fm),
	       cudaErrorInvalidResourceHandle);
	memset(&gi, 0, sizeof(gi));
	gi.array = arr;
	ANSWER("query another session's array",
	       SEND(&B, XCUDA_OP_ARRAY_GET_INFO, gi),
	       cudaErrorInvalidResourceHandle);
	memset(&c, 0, sizeof(c));
	c.fn = XCUDA_AC_2D_ARRAY_TO_ARRAY;
	c.src_array = arr;
	c.dst_array = arr;
	c.extent[0] = c.extent[1] = c.extent[2] = 1;
	ANSWER("copy between another session's arrays",
	       SEND(&B, XCUDA_OP_ARRAY_COPY, c),
	       cudaErrorInvalidResourceHandle);
	memset(&so, 0, sizeof(so));
	so.res_type = cudaResourceTypeArray;
	so.array = arr;
	ANSWER("surface on another session's array",
	       SEND(&B, XCUDA_OP_CREATE_SURFACE_OBJECT, so),
	       cudaErrorInvalidResourceHandle);
	memset(&to, 0, sizeof(to));
	to.res_type = cudaResourceTypeMipmappedArray;
	to.array = mip;
	ANSWER("texture on another session's mipmapped array",
	       SEND(&B, XCUDA_OP_CREATE_TEXTURE_OBJECT, to),
	       cudaErrorInvalidResourceHandle);

	/* Object values: B never got 0x4242 or 0x4343 from CUDA. */
	dt.texObject = 0x4242;
	ANSWER("destroy another session's texture",
	       SEND(&B, XCUDA_OP_DESTROY_TEXTURE_OBJECT, dt),
	       cudaErrorInvalidValue);
	ds.surfObject = 0x4343;
	ANSWER("destroy another session's surface",
	       SEND(&B, XCUDA_OP_DESTROY_SURFACE_OBJECT, ds),
	       cudaErrorInvalidValue);
	memset(&gr, 0, sizeof(gr));
	gr.obj = 0x4242;
	gr.desc = (struct xcuda_extent){ 0, 72 };
	ANSWER("resource of another session's texture",
	       SEND(&B, XCUDA_OP_GET_TEXTURE_OBJECT_RESOURCE_DESC, gr),
	       cudaErrorInvalidValue);
	dt.texObject = 0;
	ANSWER("destroy texture 0", SEND(&A, XCUDA_OP_DESTROY_TEXTURE_OBJECT,
					 dt),
	       cudaErrorInvalidValue);
}

static void test_copies(uint32_t arr)
{
	struct xcuda_array_copy_args c, base;

	memset(&base, 0, sizeof(base));
	base.fn = XCUDA_AC_2D_TO_ARRAY;
	base.kind = cudaMemcpyHostToDevice;
	base.flags = XCUDA_COPY_SRC_ARENA;
	base.dst_array = arr;
	base.spitch = 64;
	base.extent[0] = 64;
	base.extent[1] = 1ull << 60;
	base.extent[2] = 1;

	c = base;
	ANSWER("2D rows times pitch overflow", SEND(&A, XCUDA_OP_ARRAY_COPY,
						    c),
	       cudaErrorInvalidValue);
	c = base;
	c.extent[1] = 2;
	c.src = ARENA - 100;
	ANSWER("2D host side past the arena",
	       SEND(&A, XCUDA_OP_ARRAY_COPY, c), cudaErrorInvalidValue);
	c.src = UINT64_MAX - 10;
	ANSWER("2D host offset that wraps", SEND(&A, XCUDA_OP_ARRAY_COPY, c),
	       cudaErrorInvalidValue);
	c = base;
	c.fn = XCUDA_AC_TO_ARRAY;
	c.extent[0] = ARENA + 1;
	c.extent[1] = 1;
	ANSWER("1D count larger than the arena",
	       SEND(&A, XCUDA_OP_ARRAY_COPY, c), cudaErrorInvalidValue);

	/* 3D between a device pointer and the arena: no array, no CUDA. */
	memset(&c, 0, sizeof(c));
	c.fn = XCUDA_AC_3D;
	c.kind = cudaMemcpyDeviceToHost;
	c.flags = XCUDA_COPY_DST_ARENA;
	c.src = 0x10000;
	c.spitch = c.dpitch = 256;
	c.sysize = c.dysize = 16;
	c.extent[0] = 256;
	c.extent[1] = 16;
	c.extent[2] = UINT64_MAX / 4;
	ANSWER("3D slices overflow", SEND(&A, XCUDA_OP_ARRAY_COPY, c),
	       cudaErrorInvalidValue);
	c.extent[2] = 2;
	c.dpos[2] = UINT64_MAX;
	ANSWER("3D position overflows", SEND(&A, XCUDA_OP_ARRAY_COPY, c),
	       cudaErrorInvalidValue);
	c.dpos[2] = 0;
	c.dysize = UINT64_MAX / 2;
	ANSWER("3D pitch times rows overflows",
	       SEND(&A, XCUDA_OP_ARRAY_COPY, c), cudaErrorInvalidValue);
	c.dysize = 16;
	c.extent[2] = ARENA / (256 * 16) + 1;
	ANSWER("3D box past the arena", SEND(&A, XCUDA_OP_ARRAY_COPY, c),
	       cudaErrorInvalidValue);
	c.fn = XCUDA_AC_3D_PEER;
	ANSWER("3D peer box past the arena",
	       SEND(&A, XCUDA_OP_ARRAY_COPY, c), cudaErrorInvalidValue);
	c.extent[2] = 2;
	c.dpos[1] = UINT64_MAX / 256;
	ANSWER("3D peer row times pitch overflows",
	       SEND(&A, XCUDA_OP_ARRAY_COPY, c), cudaErrorInvalidValue);
	c.dpos[1] = 0;
	c.fn = XCUDA_AC_3D;
	c.ddev = 1;
	ANSWER("a device named by a copy that is not a peer copy",
	       SEND(&A, XCUDA_OP_ARRAY_COPY, c), cudaErrorInvalidValue);
	c.ddev = 0;
	c.sdev = -1;
	ANSWER("a negative source device outside a peer copy",
	       SEND(&A, XCUDA_OP_ARRAY_COPY, c), cudaErrorInvalidValue);

	/* An array position whose end wraps. */
	memset(&c, 0, sizeof(c));
	c.fn = XCUDA_AC_2D_ARRAY_TO_ARRAY;
	c.src_array = c.dst_array = arr;
	c.extent[0] = 16;
	c.extent[1] = c.extent[2] = 1;
	c.dpos[0] = UINT64_MAX - 3;
	ANSWER("array offset plus width wraps",
	       SEND(&A, XCUDA_OP_ARRAY_COPY, c), cudaErrorInvalidValue);
	c.dpos[0] = 0;
	c.spos[1] = UINT64_MAX;
	ANSWER("array row plus height wraps",
	       SEND(&A, XCUDA_OP_ARRAY_COPY, c), cudaErrorInvalidValue);

	/*
	 * A pointer side that is not the arena, called host memory: CUDA
	 * would read or write the worker's own memory.
	 */
	c = base;
	c.extent[1] = 2;
	c.flags = 0;
	c.src = 0x10000;
	ANSWER("2D host kind on a side outside the arena",
	       SEND(&A, XCUDA_OP_ARRAY_COPY, c), cudaErrorInvalidValue);
	c.src_array = arr;
	ANSWER("2D host side outside the arena, a source array named",
	       SEND(&A, XCUDA_OP_ARRAY_COPY, c), cudaErrorInvalidValue);
	memset(&c, 0, sizeof(c));
	c.fn = XCUDA_AC_3D;
	c.kind = cudaMemcpyDeviceToHost;
	c.src = 0x10000;
	c.dst = 0x20000;
	c.spitch = c.dpitch = 64;
	c.sysize = c.dysize = 1;
	c.extent[0] = 64;
	c.extent[1] = c.extent[2] = 1;
	ANSWER("3D host destination outside the arena",
	       SEND(&A, XCUDA_OP_ARRAY_COPY, c), cudaErrorInvalidValue);
	c.kind = cudaMemcpyHostToHost;
	ANSWER("3D host to host outside the arena",
	       SEND(&A, XCUDA_OP_ARRAY_COPY, c), cudaErrorInvalidValue);
	c.kind = 7;
	ANSWER("3D unknown kind", SEND(&A, XCUDA_OP_ARRAY_COPY, c),
	       cudaErrorInvalidMemcpyDirection);

	/* Malformed calls. */
	c = base;
	c.extent[1] = 1;
	c.fn = 0;
	ANSWER("copy call 0", SEND(&A, XCUDA_OP_ARRAY_COPY, c),
	       cudaErrorInvalidValue);
	c.fn = XCUDA_AC_3D_PEER + 1;
	ANSWER("copy call past the last", SEND(&A, XCUDA_OP_ARRAY_COPY, c),
	       cudaErrorInvalidValue);
	c.fn = 99;
	ANSWER("copy call 99", SEND(&A, XCUDA_OP_ARRAY_COPY, c),
	       cudaErrorInvalidValue);
	c.fn = XCUDA_AC_2D_TO_ARRAY;
	c.flags |= 1u << 9;
	ANSWER("unknown copy flag", SEND(&A, XCUDA_OP_ARRAY_COPY, c),
	       cudaErrorInvalidValue);
	c.flags = XCUDA_COPY_DST_ARENA;
	ANSWER("an array side named as arena",
	       SEND(&A, XCUDA_OP_ARRAY_COPY, c), cudaErrorInvalidValue);
	c.flags = XCUDA_COPY_SRC_ARENA;
	c.dst_array = XCUDA_HANDLE_FIRST + 60;
	ANSWER("unknown destination array",
	       SEND(&A, XCUDA_OP_ARRAY_COPY, c),
	       cudaErrorInvalidResourceHandle);
	c = base;
	c.fn = XCUDA_AC_3D;
	c.flags = XCUDA_COPY_SRC_ARENA;
	c.src_array = arr;
	c.dst_array = 0;
	ANSWER("3D arena side that also names an array",
	       SEND(&A, XCUDA_OP_ARRAY_COPY, c), cudaErrorInvalidValue);
}

static void test_resources(void)
{
	struct xcuda_create_texture_object_args t;
	struct xcuda_create_surface_object_args so;
	struct xcuda_get_surface_object_resource_desc_args gs;

	memset(&t, 0, sizeof(t));
	t.res_type = 99;
	ANSWER("bogus resource type", SEND(&A,
					   XCUDA_OP_CREATE_TEXTURE_OBJECT, t),
	       cudaErrorInvalidValue);
	t.res_type = -1;
	ANSWER("negative resource type",
	       SEND(&A, XCUDA_OP_CREATE_TEXTURE_OBJECT, t),
	       cudaErrorInvalidValue);
	t.res_type = cudaResourceTypeArray;
	t.array = XCUDA_HANDLE_FIRST + 33;
	ANSWER("texture on an unknown array",
	       SEND(&A, XCUDA_OP_CREATE_TEXTURE_OBJECT, t),
	       cudaErrorInvalidResourceHandle);
	t.array = 0;
	ANSWER("texture on array 0",
	       SEND(&A, XCUDA_OP_CREATE_TEXTURE_OBJECT, t),
	       cudaErrorInvalidResourceHandle);
	t.res_type = cudaResourceTypeMipmappedArray;
	t.array = XCUDA_HANDLE_FIRST + 34;
	ANSWER("texture on an unknown mipmapped array",
	       SEND(&A, XCUDA_OP_CREATE_TEXTURE_OBJECT, t),
	       cudaErrorInvalidResourceHandle);
	t.res_type = cudaResourceTypeLinear;
	t.view = (struct xcuda_extent){ 0, 5 };
	ANSWER("view descriptor of the wrong size",
	       SEND(&A, XCUDA_OP_CREATE_TEXTURE_OBJECT, t),
	       cudaErrorInvalidValue);
	t.view = (struct xcuda_extent){ ARENA - 8,
					sizeof(struct cudaResourceViewDesc) };
	ANSWER("view descriptor past the arena",
	       SEND(&A, XCUDA_OP_CREATE_TEXTURE_OBJECT, t),
	       cudaErrorInvalidValue);
	t.view = (struct xcuda_extent){ 0, 0 };
	t.tex = (struct xcuda_extent){ 0, 5 };
	ANSWER("texture descriptor of the wrong size",
	       SEND(&A, XCUDA_OP_CREATE_TEXTURE_OBJECT, t),
	       cudaErrorInvalidValue);
	t.tex = (struct xcuda_extent){ ARENA - 8,
				       sizeof(struct cudaTextureDesc) };
	ANSWER("texture descriptor past the arena",
	       SEND(&A, XCUDA_OP_CREATE_TEXTURE_OBJECT, t),
	       cudaErrorInvalidValue);

	memset(&so, 0, sizeof(so));
	so.res_type = 7;
	ANSWER("bogus surface resource type",
	       SEND(&A, XCUDA_OP_CREATE_SURFACE_OBJECT, so),
	       cudaErrorInvalidValue);
	so.res_type = cudaResourceTypeArray;
	so.array = XCUDA_HANDLE_FIRST + 35;
	ANSWER("surface on an unknown array",
	       SEND(&A, XCUDA_OP_CREATE_SURFACE_OBJECT, so),
	       cudaErrorInvalidResourceHandle);

	memset(&gs, 0, sizeof(gs));
	gs.obj = 0x4343;
	gs.desc = (struct xcuda_extent){ 0, 71 };
	ANSWER("resource extent of the wrong size",
	       SEND(&A, XCUDA_OP_GET_SURFACE_OBJECT_RESOURCE_DESC, gs),
	       cudaErrorInvalidValue);
}

int main(void)
{
	uint32_t arr, mip, tex, surf;

	setvbuf(stdout, NULL, _IOLBF, 0);
	xd_log_setup(XD_LOG_ERROR, 0);
	open_sess(&A, 0x1111);
	open_sess(&B, 0x2222);
	/* A's objects, at handles B's tables have free. */
	arr = plant(&A, XD_H_ARRAY, 0x1000);
	mip = plant(&A, XD_H_MIPMAP, 0x2000);
	tex = plant(&A, XD_H_TEXOBJ, 0x4242);
	surf = plant(&A, XD_H_SURFOBJ, 0x4343);
	CHECK_MSG(xd_value_find(&A.s.objects[XD_H_TEXOBJ], 0x4242) == tex &&
		  !xd_value_find(&B.s.objects[XD_H_TEXOBJ], 0x4242) &&
		  !xd_value_find(&A.s.objects[XD_H_TEXOBJ], 0),
		  "values are found in their own session only", "tex %u",
		  tex);
	test_other_session(arr, mip);
	test_copies(arr);
	test_resources();
	unplant(&A, XD_H_ARRAY, arr);
	unplant(&A, XD_H_MIPMAP, mip);
	unplant(&A, XD_H_TEXOBJ, tex);
	unplant(&A, XD_H_SURFOBJ, surf);
	xd_session_fini(&A.s);
	xd_session_fini(&B.s);
	free(A.chan.arena);
	free(B.chan.arena);
	return check_summary();
}
