// SPDX-License-Identifier: MIT
/*
 * cuBLAS and cuBLASLt's hostile inputs in the worker, without a GPU or
 * the libraries (XCUDA_MATH_LIBS names a directory without them): a
 * handle or stream the session was never given, cuBLASLt objects that
 * say they are longer or other than what was sent, a heuristic asked for
 * more results than its buffer holds, an extent past the arena.  Each is refused with cuBLAS's own status before the library;
 * without the library what is left answers NOT_INITIALIZED, and the
 * worker lives on.  tests/cuda/cublas_api.cu shows the library's own
 * answers (absurd dimensions, a workspace too small) on a GPU.
 */
#include <cublasLt.h>
#include <cublas_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dom0-daemon/ipc_table.h"
#include "dom0-daemon/ops.h"
#include "dom0-daemon/worker.h"
#include "xcuda/blaslt.h"
#include "check.h"
#include "worker_harness.h"

static struct xd_session s;
static struct xd_chan chan;

#define NOT_OURS	(XCUDA_HANDLE_FIRST + 7)

static void test_handles(void)
{
	struct xcuda_blas_sgemm_args g;
	struct xcuda_blas_set_stream_args st;
	struct xcuda_blas_destroy_args d;
	struct xcuda_blaslt_matmul_args m;

	memset(&g, 0, sizeof(g));
	g.handle = NOT_OURS;
	g.m = g.n = g.k = 4;
	g.A = 0xdead0000;
	g.alpha[0] = 0x1000;	/* an address in the worker, were it read */
	CHECK_EQ(call(&s, XCUDA_OP_BLAS_SGEMM, &g, sizeof(g), 0, 0),
		 CUBLAS_STATUS_NOT_INITIALIZED,
		 "sgemm on a handle that is not the session's");
	g.handle = 0;
	CHECK_EQ(call(&s, XCUDA_OP_BLAS_SGEMM, &g, sizeof(g), 0, 0),
		 CUBLAS_STATUS_NOT_INITIALIZED, "sgemm on handle 0");

	memset(&st, 0, sizeof(st));
	st.handle = NOT_OURS;
	st.streamId = 999;
	CHECK_EQ(call(&s, XCUDA_OP_BLAS_SET_STREAM, &st, sizeof(st), 0, 0),
		 CUBLAS_STATUS_NOT_INITIALIZED, "a stream set on another's");

	d.handle = NOT_OURS;
	CHECK_EQ(call(&s, XCUDA_OP_BLAS_DESTROY, &d, sizeof(d), 0, 0),
		 CUBLAS_STATUS_NOT_INITIALIZED, "destroying another's handle");

	memset(&m, 0, sizeof(m));
	m.handle = NOT_OURS;
	m.has_algo = 7;
	CHECK_EQ(call(&s, XCUDA_OP_BLASLT_MATMUL, &m, sizeof(m), 0, 0),
		 CUBLAS_STATUS_NOT_INITIALIZED,
		 "a matmul on a handle that is not the session's");
}

/* cuBLASLt's objects as the guest sends them (include/xcuda/blaslt.h). */
static size_t put_obj(uint8_t *p, uint32_t kind, uint32_t nattrs,
		      uint32_t len)
{
	struct xcuda_lt_obj w = { kind, nattrs, 68, 0, 4, 4, 4 };
	struct xcuda_lt_attr a;
	uint32_t i;

	memcpy(p, &w, sizeof(w));
	for (i = 0; i < nattrs; i++) {
		memset(&a, 0, sizeof(a));
		a.id = i;
		a.len = len;
		memcpy(p + sizeof(w) + i * sizeof(a), &a, sizeof(a));
	}
	return sizeof(w) + nattrs * sizeof(a);
}

static void test_objects(void)
{
	static const uint32_t kinds[5] = {
		XCUDA_LT_MATMUL_DESC, XCUDA_LT_LAYOUT, XCUDA_LT_LAYOUT,
		XCUDA_LT_LAYOUT, XCUDA_LT_LAYOUT,
	};
	static uint8_t blob[8192];
	uint32_t other = 9;
	size_t n = 0;
	int i;

	n += put_obj(blob, XCUDA_LT_MATMUL_DESC, 3, 4);
	for (i = 0; i < 4; i++)
		n += put_obj(blob + n, XCUDA_LT_LAYOUT, 1, 8);
	CHECK_EQ(xd_lt_check(blob, n, kinds, 5), 0,
		 "a descriptor and four layouts");
	CHECK_EQ(xd_lt_check(blob, n - 1, kinds, 5), -1,
		 "an attribute cut short");
	CHECK_EQ(xd_lt_check(blob, n + 8, kinds, 5), -1,
		 "bytes left over");
	CHECK_EQ(xd_lt_check(blob, n, kinds, 4), -1,
		 "one object more than the call takes");
	CHECK_EQ(xd_lt_check(blob, 20, kinds, 1), -1, "a header cut short");
	CHECK_EQ(xd_lt_check(blob, n, &other, 1), -1,
		 "an object of no kind");
	put_obj(blob, XCUDA_LT_LAYOUT, 3, 4);
	CHECK_EQ(xd_lt_check(blob, n, kinds, 5), -1,
		 "a layout where the descriptor goes");
	n = put_obj(blob, XCUDA_LT_MATMUL_DESC, 3, XCUDA_LT_ATTR_BYTES + 1);
	CHECK_EQ(xd_lt_check(blob, n, kinds, 1), -1,
		 "an attribute longer than its room");
	n = put_obj(blob, XCUDA_LT_MATMUL_DESC, 3, 0);
	CHECK_EQ(xd_lt_check(blob, n, kinds, 1), -1, "an empty attribute");
	n = put_obj(blob, XCUDA_LT_MATMUL_DESC, 0, 4);
	((struct xcuda_lt_obj *)blob)->nattrs = 1u << 30;
	CHECK_EQ(xd_lt_check(blob, n, kinds, 1), -1,
		 "more attributes than an object holds");
}

static void test_buffers(void)
{
	struct xcuda_blaslt_heuristic_args h;
	struct xcuda_blaslt_get_attribute_args ga;
	struct xcuda_blaslt_matmul_args m;

	memset(&h, 0, sizeof(h));
	h.handle = NOT_OURS;
	h.requested = 1 << 20;
	h.results = (struct xcuda_extent){ 0, 4096 };
	CHECK_EQ(call(&s, XCUDA_OP_BLASLT_HEURISTIC, &h, sizeof(h), 0, 0),
		 CUBLAS_STATUS_INVALID_VALUE,
		 "more results asked for than the library gives");
	h.requested = 4;
	CHECK_EQ(call(&s, XCUDA_OP_BLASLT_HEURISTIC, &h, sizeof(h), 0, 0),
		 CUBLAS_STATUS_INVALID_VALUE,
		 "a results buffer of the wrong size");
	h.requested = -1;
	CHECK_EQ(call(&s, XCUDA_OP_BLASLT_HEURISTIC, &h, sizeof(h), 0, 0),
		 CUBLAS_STATUS_INVALID_VALUE, "a negative count");
	h.requested = 1;
	h.results = (struct xcuda_extent){ ARENA - 8, 96 };
	CHECK_EQ(call(&s, XCUDA_OP_BLASLT_HEURISTIC, &h, sizeof(h), 0, 0),
		 CUBLAS_STATUS_INVALID_VALUE, "results past the arena");

	memset(&ga, 0, sizeof(ga));
	ga.size = 4096;
	ga.buf = (struct xcuda_extent){ 0, 4096 };
	CHECK_EQ(call(&s, XCUDA_OP_BLASLT_GET_ATTRIBUTE, &ga, sizeof(ga), 0,
		      0), CUBLAS_STATUS_INVALID_VALUE,
		 "an attribute larger than any");
	ga.size = 8;
	ga.buf = (struct xcuda_extent){ 0, 4 };
	CHECK_EQ(call(&s, XCUDA_OP_BLASLT_GET_ATTRIBUTE, &ga, sizeof(ga), 0,
		      0), CUBLAS_STATUS_INVALID_VALUE,
		 "a reply longer than its buffer");

	memset(&m, 0, sizeof(m));
	m.handle = NOT_OURS;
	m.objs = (struct xcuda_extent){ ARENA - 16, 64 };
	CHECK_EQ(call(&s, XCUDA_OP_BLASLT_MATMUL, &m, sizeof(m), 0, 0),
		 CUBLAS_STATUS_INVALID_VALUE, "objects past the arena");
}

static void test_no_library(void)
{
	struct xcuda_blas_get_property_args p = { MAJOR_VERSION, { 0 } };
	struct xcuda_blaslt_create_res r;
	uint64_t none = 0;	/* no arguments: a pointer all the same */

	CHECK_EQ(call(&s, XCUDA_OP_BLAS_GET_PROPERTY, &p, sizeof(p), 0, 0),
		 CUBLAS_STATUS_NOT_INITIALIZED,
		 "without the library: NOT_INITIALIZED");
	CHECK_EQ(call_res(&s, XCUDA_OP_BLASLT_CREATE, &none, 0, 0, 0, &r,
			  sizeof(r)), CUBLAS_STATUS_NOT_INITIALIZED,
		 "cublasLtCreate without the library");
	CHECK_EQ(call_res(&s, XCUDA_OP_BLAS_CREATE, &none, 0, 0, 0, &r,
			  sizeof(r)), CUBLAS_STATUS_NOT_INITIALIZED,
		 "cublasCreate without the library");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Never NVIDIA's libraries, wherever this runs. */
	setenv("XCUDA_MATH_LIBS", "/nonexistent", 1);
	open_session(&s, &chan, 0x4444bbbb, XD_DOMAIN_LOCAL | 1001);
	test_handles();
	test_objects();
	test_buffers();
	test_no_library();
	xd_session_fini(&s);
	free(chan.arena);
	return check_summary();
}
