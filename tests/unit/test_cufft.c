// SPDX-License-Identifier: MIT
/*
 * cuFFT's hostile inputs in the worker, without a GPU or the library
 * (XCUDA_MATH_LIBS names a directory without it): a plan or stream the
 * session was never given is refused with cuFFT's own status before the
 * library is reached; every cuFFT opcode with arguments of all zeros and
 * all ones answers an error; and the worker lives on.
 * tests/cuda/cufft_api.cu shows the library's own answers on a GPU.
 */
#include <cufftXt.h>
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

static void test_plans(void)
{
	struct xcuda_cufft_exec_c2c_args x;
	struct xcuda_cufft_set_stream_args st;
	struct xcuda_cufft_destroy_args d;
	struct xcuda_cufft_plan_many_args pm;

	memset(&x, 0, sizeof(x));
	x.plan = 1;	/* the library's first plan, were it the session's */
	x.idata = 0xdead0000;
	x.odata = 0xdead0000;
	CHECK_EQ(call(&s, XCUDA_OP_CUFFT_EXEC_C2C, &x, sizeof(x), 0, 0),
		 CUFFT_INVALID_PLAN,
		 "a transform with a plan that is not the session's");
	st.plan = 1;
	st.stream = 999;
	CHECK_EQ(call(&s, XCUDA_OP_CUFFT_SET_STREAM, &st, sizeof(st), 0, 0),
		 CUFFT_INVALID_PLAN, "a stream set on another's plan");
	d.plan = 7;
	CHECK_EQ(call(&s, XCUDA_OP_CUFFT_DESTROY, &d, sizeof(d), 0, 0),
		 CUFFT_INVALID_PLAN, "destroying another's plan");
	memset(&pm, 0, sizeof(pm));
	pm.rank = 3;
	pm.n = (struct xcuda_extent){ ARENA - 4, 12 };
	CHECK_EQ(call(&s, XCUDA_OP_CUFFT_PLAN_MANY, &pm, sizeof(pm), 0, 0),
		 CUFFT_INVALID_VALUE, "dimensions past the arena");
}

/* Every cuFFT opcode, with arguments of all zeros and all ones. */
static void test_sweep(int fill)
{
	static const int ok[] = { CUFFT_INVALID_PLAN, CUFFT_INVALID_VALUE,
				  CUFFT_SETUP_FAILED };

	if (sweep_opcodes(&s, "CUFFT_", -1, fill, ok, 3) < 30)
		CHECK_WHY("fewer cuFFT opcodes than described");
	check_case(check_name("every cuFFT opcode with arguments of 0x%02x: "
			      "an error", fill));
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Never NVIDIA's library, wherever this runs. */
	setenv("XCUDA_MATH_LIBS", "/nonexistent", 1);
	open_session(&s, &chan, 0x46465421, XD_DOMAIN_LOCAL | 1001);
	test_plans();
	test_sweep(0);
	test_sweep(0xff);
	check_alive(&s, &chan);
	xd_session_fini(&s);
	free(chan.arena);
	return check_summary();
}
