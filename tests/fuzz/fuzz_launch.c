// SPDX-License-Identifier: MIT
/*
 * Launch parameter blocks: the worker's xd_handle() (dom0-daemon/
 * worker.c) on LAUNCH, LAUNCH_COOPERATIVE, LAUNCH_EX and the two cluster
 * occupancy queries, through the generated dispatch to the handlers of
 * ops_launch.c and ops_module.c: the inline or extent argument bytes and
 * their lengths, the launch attribute records (xd_launch_attrs()), the
 * stream and event handles they name.  Every check of a guest's bytes
 * comes before the first CUDA call; the session knows no kernel, so each
 * request stops there at the latest, and CUDA is never called.
 *
 * Input: which command (u8), the header's flags (u8), len (u16),
 * data_off and data_len (u32 each), the 224 argument bytes, then the
 * arena's first bytes.  A sixth choice runs xd_launch_attrs() alone on
 * the arena, with the record count from the first argument word.
 *
 * What must hold: every answer is one of the decoders' own errors
 * (invalid value, invalid handle), never CUDA's; attributes that pass
 * name only the session's own events, and never a guest's node handle.
 */
#include <cuda_runtime_api.h>

#include "dom0-daemon/ops.h"
#include "dom0-daemon/ops_launch.h"
#include "fuzz.h"

#define ARENA	(64u << 10)
#define NEVENTS	3

static const uint16_t ops[] = {
	XCUDA_OP_LAUNCH,
	XCUDA_OP_LAUNCH_COOPERATIVE,
	XCUDA_OP_LAUNCH_EX,
	XCUDA_OP_OCCUPANCY_MAX_ACTIVE_CLUSTERS,
	XCUDA_OP_OCCUPANCY_MAX_POTENTIAL_CLUSTER_SIZE,
};
#define NOPS	(sizeof(ops) / sizeof(ops[0]))

static uint8_t arena[ARENA];
static struct xd_chan chan = { .arena = arena, .arena_size = ARENA,
			       .session = 1 };
static struct xd_session sess;
/* Events and a stream of the session: handles only, never called. */
static char events[NEVENTS], stream;

static void setup(void)
{
	uint32_t h;
	int i;

	FZ_CHECK(!xd_session_init(&sess, &chan));
	sess.opened = 1;
	for (i = 0; i < NEVENTS; i++)
		FZ_CHECK(!xd_object_add(&sess.events, &events[i], 0, 0, &h));
	FZ_CHECK(!xd_object_add(&sess.streams, &stream, 0, 0, &h));
}

static int is_ours(const void *ev)
{
	return !ev || (ev >= (const void *)events &&
		       ev < (const void *)(events + NEVENTS));
}

static void attrs_alone(const uint8_t *args)
{
	struct xd_attrs *at = malloc(sizeof(*at));
	const struct xcuda_launch_attr *w;
	uint32_t n, i;
	int err;

	FZ_CHECK(at);
	memcpy(&n, args, sizeof(n));
	/* The handlers' callers bound it by the extent: as much here. */
	if (n > XCUDA_LAUNCH_MAX_ATTRS + 1)
		n = n % (XCUDA_LAUNCH_MAX_ATTRS + 2);
	err = xd_launch_attrs(&sess, arena, n, at);
	if (n > XCUDA_LAUNCH_MAX_ATTRS) {
		FZ_CHECK(err == cudaErrorInvalidValue);
		free(at);
		return;
	}
	FZ_CHECK(!err || err == cudaErrorInvalidResourceHandle);
	if (err) {
		free(at);
		return;
	}
	FZ_CHECK(at->n == n);
	for (i = 0; i < n; i++) {
		w = (const struct xcuda_launch_attr *)arena + i;
		FZ_CHECK((uint32_t)at->cuda[i].id == w->id);
		switch (w->id) {
		case cudaLaunchAttributeProgrammaticEvent:
			FZ_CHECK(is_ours(at->cuda[i].val.programmaticEvent.event));
			break;
		case cudaLaunchAttributeLaunchCompletionEvent:
			FZ_CHECK(is_ours(
				at->cuda[i].val.launchCompletionEvent.event));
			break;
		case cudaLaunchAttributeDeviceUpdatableKernelNode:
			FZ_CHECK(!at->cuda[i].val.deviceUpdatableKernelNode
					  .devNode);
			break;
		default:
			FZ_CHECK(!memcmp(&at->cuda[i].val, w->val,
					 sizeof(w->val)));
		}
	}
	free(at);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct fz_in in = { data, size };
	struct xcuda_request req;
	struct xcuda_response rsp;
	uint8_t sel = fz_u8(&in);

	if (!ready) {
		setup();
		ready = 1;
	}
	memset(&req, 0, sizeof(req));
	req.hdr.flags = fz_u8(&in) & XCUDA_RF_POSTED;
	req.hdr.len = fz_u32(&in) & 0xffff;
	req.hdr.data_off = fz_u32(&in);
	req.hdr.data_len = fz_u32(&in);
	req.hdr.session = chan.session;
	req.hdr.id = 1;
	fz_take(&in, req.args, sizeof(req.args));
	fz_take(&in, arena, in.n < ARENA ? in.n : ARENA);

	if (sel % (NOPS + 1) == NOPS) {
		attrs_alone(req.args);
		return 0;
	}
	req.hdr.op = ops[sel % (NOPS + 1)];
	FZ_CHECK(!xd_handle(&sess, &req, &rsp));
	FZ_CHECK(rsp.op == req.hdr.op && rsp.id == 1);
	/* Refused by the checks of the guest's bytes, never by CUDA. */
	FZ_CHECK(rsp.status == cudaErrorInvalidValue ||
		 rsp.status == cudaErrorInvalidResourceHandle);
	return 0;
}
