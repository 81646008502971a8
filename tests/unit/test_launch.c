// SPDX-License-Identifier: MIT
/*
 * Hostile launch attributes (LAUNCH_EX, the cluster occupancy commands)
 * and cooperative launches, in the worker without a transport: counts
 * past the bound, extents that do not match, events of another session
 * or out of range, unknown ids with huge values (passed to CUDA as they
 * came), and a device-updatable node's output pointer never taken from
 * the guest.  Runs the same with or without a GPU: every case is refused
 * before CUDA sees it, or checks the translation itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "xcuda/launch.h"
#include "dom0-daemon/log.h"
#include "dom0-daemon/ops_launch.h"
#include "dom0-daemon/validate.h"
#include "dom0-daemon/worker.h"
#include "check.h"
#include "cuda_asan.h"
#include "worker_harness.h"

#define SESSION_A	0x1111aaaau
#define SESSION_B	0x2222bbbbu
#define ARENA		(1u << 20)
#define ATTR		sizeof(struct xcuda_launch_attr)

static struct xd_chan chan_a, chan_b;
static struct xd_session sa, sb;

static void put_attr(struct xd_chan *c, uint32_t i, uint32_t id,
		     uint64_t first)
{
	struct xcuda_launch_attr w;

	memset(&w, 0, sizeof(w));
	w.id = id;
	memcpy(w.val, &first, sizeof(first));
	memcpy(c->arena + i * ATTR, &w, sizeof(w));
}

static void test_launch_ex_bounds(void)
{
	struct xcuda_launch_ex_args a;
	int e;

	memset(&a, 0, sizeof(a));
	a.func = XCUDA_HANDLE_FIRST;
	a.grid[0] = a.grid[1] = a.grid[2] = 1;
	a.block[0] = a.block[1] = a.block[2] = 1;

	a.nattrs = XCUDA_LAUNCH_MAX_ATTRS + 1;
	e = call(&sa, XCUDA_OP_LAUNCH_EX, &a, sizeof(a), 0,
		 a.nattrs * ATTR);
	CHECK_EQ(e, cudaErrorInvalidValue, "65 attributes refused");
	a.nattrs = 0xffffffffu;
	e = call(&sa, XCUDA_OP_LAUNCH_EX, &a, sizeof(a), 0, 72);
	CHECK_EQ(e, cudaErrorInvalidValue, "2^32-1 attributes refused");
	/* nattrs * 72 wraps to 0 in 32 bits: the check is in 64. */
	a.nattrs = 0x38e38e39u;	/* * 72 = 2^32 + 8 */
	e = call(&sa, XCUDA_OP_LAUNCH_EX, &a, sizeof(a), 0, 8);
	CHECK_EQ(e, cudaErrorInvalidValue, "wrapping count refused");

	a.nattrs = 2;
	a.args_len = 16;
	e = call(&sa, XCUDA_OP_LAUNCH_EX, &a, sizeof(a), 0, 2 * ATTR);
	CHECK_EQ(e, cudaErrorInvalidValue, "extent shorter than the args");
	e = call(&sa, XCUDA_OP_LAUNCH_EX, &a, sizeof(a), 0,
		 2 * ATTR + 17);
	CHECK_EQ(e, cudaErrorInvalidValue, "extent longer than the args");
	a.args_len = XCUDA_MAX_ARGS_BYTES + 1;
	e = call(&sa, XCUDA_OP_LAUNCH_EX, &a, sizeof(a), 0,
		 2 * ATTR + a.args_len);
	CHECK_EQ(e, cudaErrorInvalidValue, "too many argument bytes");
	a.args_len = 0;
	e = call(&sa, XCUDA_OP_LAUNCH_EX, &a, sizeof(a), ARENA - 72,
		 2 * ATTR);
	CHECK_EQ(e, cudaErrorInvalidValue, "records past the arena");

	/* Well-formed records naming an unknown event: refused before the
	 * kernel is looked up. */
	a.stream = 0;
	put_attr(&chan_a, 0, cudaLaunchAttributePriority, 0);
	put_attr(&chan_a, 1, cudaLaunchAttributeProgrammaticEvent, 0x7777);
	e = call(&sa, XCUDA_OP_LAUNCH_EX, &a, sizeof(a), 0, 2 * ATTR);
	CHECK_EQ(e, cudaErrorInvalidResourceHandle, "unknown event refused");
	a.stream = 0x999;
	e = call(&sa, XCUDA_OP_LAUNCH_EX, &a, sizeof(a), 0, 2 * ATTR);
	CHECK_EQ(e, cudaErrorInvalidResourceHandle, "unknown stream refused");
}

static void test_occupancy_bounds(void)
{
	struct xcuda_occupancy_max_active_clusters_args a;
	int e;

	memset(&a, 0, sizeof(a));
	a.func = XCUDA_HANDLE_FIRST;
	a.nattrs = 1;
	e = call(&sa, XCUDA_OP_OCCUPANCY_MAX_ACTIVE_CLUSTERS, &a, sizeof(a),
		 0, 0);
	CHECK_EQ(e, cudaErrorInvalidValue, "occupancy: records missing");
	a.nattrs = XCUDA_LAUNCH_MAX_ATTRS + 1;
	e = call(&sa, XCUDA_OP_OCCUPANCY_MAX_POTENTIAL_CLUSTER_SIZE, &a,
		 sizeof(a), 0, a.nattrs * ATTR);
	CHECK_EQ(e, cudaErrorInvalidValue, "occupancy: 65 records");
	a.nattrs = 0;
	e = call(&sa, XCUDA_OP_OCCUPANCY_MAX_ACTIVE_CLUSTERS, &a, sizeof(a),
		 0, 0);
	CHECK_EQ(e, cudaErrorInvalidResourceHandle, "occupancy: no kernel");
}

static void test_cooperative_bounds(void)
{
	struct xcuda_launch_cooperative_args a;
	int e;

	memset(&a, 0, sizeof(a));
	a.func = XCUDA_HANDLE_FIRST;
	a.args_len = sizeof(a.args) + 1;
	e = call(&sa, XCUDA_OP_LAUNCH_COOPERATIVE, &a, sizeof(a), 0, 0);
	CHECK_EQ(e, cudaErrorInvalidValue, "cooperative: inline too long");
	a.args_len = 8;
	e = call(&sa, XCUDA_OP_LAUNCH_COOPERATIVE, &a,
		 offsetof(struct xcuda_launch_cooperative_args, args) + 4, 0,
		 0);
	CHECK_EQ(e, cudaErrorInvalidValue, "cooperative: args cut short");
	e = call(&sa, XCUDA_OP_LAUNCH_COOPERATIVE, &a, sizeof(a), 0, 16);
	CHECK_EQ(e, cudaErrorInvalidValue, "cooperative: extent length");
	e = call(&sa, XCUDA_OP_LAUNCH_COOPERATIVE, &a, sizeof(a), 0, 0);
	CHECK_EQ(e, cudaErrorInvalidResourceHandle, "cooperative: no kernel");
	/* Never posted: CUDA's answer is needed at the call. */
	{
		struct xcuda_request req;
		struct xcuda_response rsp;

		memset(&req, 0, sizeof(req));
		req.hdr.op = XCUDA_OP_LAUNCH_COOPERATIVE;
		req.hdr.flags = XCUDA_RF_POSTED;
		req.hdr.len = sizeof(a);
		req.hdr.session = sa.id;
		req.hdr.id = wh_next_id++;
		memcpy(req.args, &a, sizeof(a));
		xd_handle(&sa, &req, &rsp);
		CHECK_EQ(rsp.status, cudaErrorInvalidValue,
			 "cooperative: posting refused");
	}
}

/* The translation itself, with events placed in the tables by hand. */
static void test_translation(void)
{
	static struct xd_attrs at;
	uint8_t recs[4 * ATTR], huge[XCUDA_LAUNCH_ATTR_VAL];
	struct xcuda_launch_attr w;
	void *fake_a = (void *)0x5a5a000, *fake_b = (void *)0x6b6b000;
	void *fake_c = (void *)0x7c7c000;
	uint32_t ha, ha0, hb;
	uint64_t v;
	int e;

	/* A holds two events, B one: A's second is a number B never gave. */
	REQUIRE_MSG(xd_htab_add(&sa.events, fake_c, &ha0) &&
		    xd_htab_add(&sa.events, fake_a, &ha) &&
		    xd_htab_add(&sb.events, fake_b, &hb) && ha != hb,
		    "fake events", "table full");

	/* A's event is A's: translated to A's pointer. */
	memset(recs, 0, sizeof(recs));
	memset(&w, 0, sizeof(w));
	w.id = cudaLaunchAttributeLaunchCompletionEvent;
	v = ha;
	memcpy(w.val, &v, 8);
	w.val[8] = 3;		/* flags stay */
	memcpy(recs, &w, sizeof(w));
	e = xd_launch_attrs(&sa, recs, 1, &at);
	CHECK_MSG(!e && at.cuda[0].val.launchCompletionEvent.event == fake_a &&
		  at.cuda[0].val.launchCompletionEvent.flags == 3,
		  "own event translated", "err %d", e);
	/* ...and unknown to B, even where B has an event of its own. */
	e = xd_launch_attrs(&sb, recs, 1, &at);
	CHECK_EQ(e, cudaErrorInvalidResourceHandle,
		 "another session's event refused");
	w.id = cudaLaunchAttributeProgrammaticEvent;
	v = hb;
	memcpy(w.val, &v, 8);
	memcpy(recs, &w, sizeof(w));
	e = xd_launch_attrs(&sb, recs, 1, &at);
	CHECK_MSG(!e && at.cuda[0].val.programmaticEvent.event == fake_b,
		  "B's programmatic event in B", "err %d", e);
	/* The same number in A names A's own object, never B's. */
	e = xd_launch_attrs(&sa, recs, 1, &at);
	CHECK_MSG(!e && hb == ha0 &&
		  at.cuda[0].val.programmaticEvent.event == fake_c,
		  "a handle number is per session", "err %d", e);
	v = (1ull << 32) | ha;
	memcpy(w.val, &v, 8);
	memcpy(recs, &w, sizeof(w));
	e = xd_launch_attrs(&sa, recs, 1, &at);
	CHECK_EQ(e, cudaErrorInvalidResourceHandle,
		 "event handle above 32 bits refused");
	v = 0;
	memcpy(w.val, &v, 8);
	memcpy(recs, &w, sizeof(w));
	e = xd_launch_attrs(&sa, recs, 1, &at);
	CHECK_MSG(!e && !at.cuda[0].val.programmaticEvent.event,
		  "event 0 is NULL, for CUDA to answer", "err %d", e);

	/* Unknown ids with huge values reach CUDA as they came. */
	memset(huge, 0xff, sizeof(huge));
	memset(&w, 0, sizeof(w));
	w.id = 0xffffffffu;
	memcpy(w.val, huge, sizeof(huge));
	memcpy(recs, &w, sizeof(w));
	w.id = 15;
	memcpy(recs + ATTR, &w, sizeof(w));
	w.id = cudaLaunchAttributeClusterDimension;
	memcpy(recs + 2 * ATTR, &w, sizeof(w));
	/* A device-updatable node's output pointer is never the guest's. */
	w.id = cudaLaunchAttributeDeviceUpdatableKernelNode;
	memcpy(recs + 3 * ATTR, &w, sizeof(w));
	e = xd_launch_attrs(&sa, recs, 4, &at);
	CHECK_MSG(!e && at.n == 4 &&
		  !memcmp(&at.cuda[0].id, &(uint32_t){ 0xffffffffu }, 4) &&
		  !memcmp(&at.cuda[0].val, huge, sizeof(huge)) &&
		  !memcmp(&at.cuda[1].id, &(uint32_t){ 15 }, 4) &&
		  !memcmp(&at.cuda[2].val, huge, sizeof(huge)),
		  "unknown ids and values pass unchanged", "err %d", e);
	CHECK_MSG(!e && !at.cuda[3].val.deviceUpdatableKernelNode.devNode &&
		  at.cuda[3].val.deviceUpdatableKernelNode.deviceUpdatable ==
		  -1, "devNode cleared", "err %d", e);

	e = xd_launch_attrs(&sa, recs, XCUDA_LAUNCH_MAX_ATTRS + 1, &at);
	CHECK_EQ(e, cudaErrorInvalidValue, "translation bounded");

	/* The fakes must never reach cudaEventDestroy. */
	xd_htab_del(&sa.events, ha);
	xd_htab_del(&sa.events, ha0);
	xd_htab_del(&sb.events, hb);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	xd_log_setup(XD_LOG_ERROR, 0);
	open_session(&sa, &chan_a, SESSION_A, 0);
	open_session(&sb, &chan_b, SESSION_B, 0);
	test_launch_ex_bounds();
	test_occupancy_bounds();
	test_cooperative_bounds();
	test_translation();
	xd_session_fini(&sa);
	xd_session_fini(&sb);
	free(chan_a.arena);
	free(chan_b.arena);
	return check_summary();
}
