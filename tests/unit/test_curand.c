// SPDX-License-Identifier: MIT
/*
 * cuRAND's hostile inputs in the worker, without a GPU or the library
 * (XCUDA_MATH_LIBS names a directory without it): a generator, stream or
 * Poisson distribution the session was never given is refused with
 * cuRAND's own status before the library is reached; every cuRAND opcode
 * with arguments of all zeros and all ones answers an error; and the
 * worker lives on.  tests/cuda/curand_api.cu shows the library's own
 * answers (lengths, types, ranges) on a GPU.
 */
#include <curand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dom0-daemon/ipc_table.h"
#include "dom0-daemon/ops.h"
#include "dom0-daemon/worker.h"
#include "check.h"
#include "worker_harness.h"

static struct xd_session s;
static struct xd_chan chan;

#define NOT_OURS	(XCUDA_HANDLE_FIRST + 7)

static void test_objects(void)
{
	struct xcuda_curand_generate_uniform_args g;
	struct xcuda_curand_set_stream_args st;
	struct xcuda_curand_destroy_generator_args d;
	struct xcuda_curand_destroy_dist_args dd;

	memset(&g, 0, sizeof(g));
	g.generator = NOT_OURS;
	g.outputPtr = 0xdead0000;
	g.num = 1u << 20;
	CHECK_EQ(call(&s, XCUDA_OP_CURAND_GENERATE_UNIFORM, &g, sizeof(g), 0,
		      0), CURAND_STATUS_NOT_INITIALIZED,
		 "generating with a generator that is not the session's");
	g.generator = 0;
	CHECK_EQ(call(&s, XCUDA_OP_CURAND_GENERATE_UNIFORM, &g, sizeof(g), 0,
		      0), CURAND_STATUS_NOT_INITIALIZED,
		 "generating with generator 0");

	st.generator = NOT_OURS;
	st.stream = 999;
	CHECK_EQ(call(&s, XCUDA_OP_CURAND_SET_STREAM, &st, sizeof(st), 0, 0),
		 CURAND_STATUS_NOT_INITIALIZED,
		 "a stream set on another's generator");

	d.generator = NOT_OURS;
	CHECK_EQ(call(&s, XCUDA_OP_CURAND_DESTROY_GENERATOR, &d, sizeof(d), 0,
		      0), CURAND_STATUS_NOT_INITIALIZED,
		 "destroying another's generator");

	/* An address the library would free were it passed on. */
	dd.discrete_distribution = (uintptr_t)&dd;
	CHECK_EQ(call(&s, XCUDA_OP_CURAND_DESTROY_DIST, &dd, sizeof(dd), 0,
		      0), CURAND_STATUS_OUT_OF_RANGE,
		 "destroying a distribution the session was not given");
}

static void test_no_library(void)
{
	struct xcuda_curand_create_generator_args c = {
		CURAND_RNG_PSEUDO_DEFAULT, { 0 } };
	struct xcuda_curand_create_generator_res r;
	uint64_t none = 0;	/* no arguments: a pointer all the same */
	struct xcuda_curand_get_version_res v;

	CHECK_EQ(call_res(&s, XCUDA_OP_CURAND_CREATE_GENERATOR, &c, sizeof(c),
			  0, 0, &r, sizeof(r)),
		 CURAND_STATUS_INITIALIZATION_FAILED,
		 "curandCreateGenerator without the library");
	CHECK_EQ(call_res(&s, XCUDA_OP_CURAND_GET_VERSION, &none, 0, 0, 0, &v,
			  sizeof(v)), CURAND_STATUS_INITIALIZATION_FAILED,
		 "curandGetVersion without the library");
}

/* Every cuRAND opcode, with arguments of all zeros and all ones. */
static void test_sweep(int fill)
{
	static const int ok[] = { CURAND_STATUS_NOT_INITIALIZED,
				  CURAND_STATUS_INITIALIZATION_FAILED,
				  CURAND_STATUS_OUT_OF_RANGE };

	if (sweep_opcodes(&s, "CURAND_", -1, fill, ok, 3) < 20)
		CHECK_WHY("fewer cuRAND opcodes than described");
	check_case(check_name("every cuRAND opcode with arguments of 0x%02x: "
			      "an error", fill));
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Never NVIDIA's library, wherever this runs. */
	setenv("XCUDA_MATH_LIBS", "/nonexistent", 1);
	open_session(&s, &chan, 0x52414e44, XD_DOMAIN_LOCAL | 1001);
	test_objects();
	test_no_library();
	test_sweep(0);
	test_sweep(0xff);
	check_alive(&s, &chan);
	xd_session_fini(&s);
	free(chan.arena);
	return check_summary();
}
