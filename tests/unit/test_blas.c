// SPDX-License-Identifier: MIT
/*
 * cuBLAS and cuBLASLt's hostile inputs in the worker, without a GPU or
 * the libraries (XCUDA_MATH_LIBS names a directory without them): a
 * handle, descriptor or stream the session was never given, attribute
 * buffers that say they are longer than what was sent, a heuristic
 * asked for more results than its buffer holds, an extent past the
 * arena.  Each is refused with cuBLAS's own status before the library;
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
#include "dom0-daemon/worker.h"
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
	struct xcuda_blaslt_layout_destroy_args ld;

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

	ld.matLayout = NOT_OURS;
	CHECK_EQ(call(&s, XCUDA_OP_BLASLT_LAYOUT_DESTROY, &ld, sizeof(ld), 0,
		      0), CUBLAS_STATUS_NOT_INITIALIZED,
		 "destroying another's layout");
}

static void test_buffers(void)
{
	struct xcuda_blaslt_matmul_desc_set_attribute_args sa;
	struct xcuda_blaslt_pref_get_attribute_args pa;
	struct xcuda_blaslt_algo_get_heuristic_args h;

	memset(&sa, 0, sizeof(sa));
	sa.matmulDesc = NOT_OURS;
	sa.attr = CUBLASLT_MATMUL_DESC_POINTER_MODE;
	sa.buf = (struct xcuda_extent){ 0, 4 };
	sa.sizeInBytes = 4096;
	CHECK_EQ(call(&s, XCUDA_OP_BLASLT_MATMUL_DESC_SET_ATTRIBUTE, &sa,
		      sizeof(sa), 0, 0), CUBLAS_STATUS_INVALID_VALUE,
		 "an attribute longer than what was sent");
	sa.buf = (struct xcuda_extent){ ARENA - 2, 4 };
	sa.sizeInBytes = 4;
	CHECK_EQ(call(&s, XCUDA_OP_BLASLT_MATMUL_DESC_SET_ATTRIBUTE, &sa,
		      sizeof(sa), 0, 0), CUBLAS_STATUS_INVALID_VALUE,
		 "an attribute past the arena");
	sa.buf = (struct xcuda_extent){ 0, 4 };
	CHECK_EQ(call(&s, XCUDA_OP_BLASLT_MATMUL_DESC_SET_ATTRIBUTE, &sa,
		      sizeof(sa), 0, 0), CUBLAS_STATUS_NOT_INITIALIZED,
		 "an attribute of a descriptor that is not the session's");

	memset(&pa, 0, sizeof(pa));
	pa.pref = NOT_OURS;
	pa.buf = (struct xcuda_extent){ 0, 8 };
	pa.sizeInBytes = 64;
	CHECK_EQ(call(&s, XCUDA_OP_BLASLT_PREF_GET_ATTRIBUTE, &pa, sizeof(pa),
		      0, 0), CUBLAS_STATUS_INVALID_VALUE,
		 "a reply longer than its buffer");

	memset(&h, 0, sizeof(h));
	h.lightHandle = NOT_OURS;
	h.requestedAlgoCount = 1 << 20;
	h.heuristicResultsArray = (struct xcuda_extent){ 0, 4096 };
	CHECK_EQ(call(&s, XCUDA_OP_BLASLT_ALGO_GET_HEURISTIC, &h, sizeof(h), 0,
		      0), CUBLAS_STATUS_INVALID_VALUE,
		 "more results asked for than the buffer holds");
	h.requestedAlgoCount = -1;
	CHECK_EQ(call(&s, XCUDA_OP_BLASLT_ALGO_GET_HEURISTIC, &h, sizeof(h), 0,
		      0), CUBLAS_STATUS_INVALID_VALUE, "a negative count");
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
	test_buffers();
	test_no_library();
	xd_session_fini(&s);
	free(chan.arena);
	return check_summary();
}
