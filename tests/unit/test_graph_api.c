// SPDX-License-Identifier: MIT
/*
 * A hostile guest against the worker's graph commands
 * (spec/cudart-graph-nodes.calls), in process, without a transport: two
 * sessions over in-memory arenas, graphs and nodes planted in their
 * tables (never handed to CUDA: every case fails before CUDA would see
 * them), then requests naming another session's node, a node of a
 * destroyed graph, counts that overflow, kernel parameters too large,
 * malformed node parameters, and the bound of the dot print.  Host node
 * setters and the getter are CUDA of this program's own, so that a set
 * that succeeds can be read back; so are kernel node attributes (events
 * of another session, ids CUDA does not know) and an array's format
 * (arrays of another session, widths counted in elements).  Runs the
 * same with or without a GPU.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <cuda_runtime_api.h>

#include "xcuda/graph.h"
#include "xcuda/launch.h"
#include "dom0-daemon/hostfn.h"
#include "dom0-daemon/log.h"
#include "dom0-daemon/ops.h"
#include "dom0-daemon/worker.h"
#include "check.h"
#include "cuda_asan.h"

#define ARENA		(1u << 20)
#define GP		((uint32_t)sizeof(struct xcuda_gparams))

struct side {
	struct xd_chan chan;
	struct xd_session s;
};

static struct side A = { .chan = { .session = 0x1111u } };
static struct side B = { .chan = { .session = 0x2222u } };
static uint64_t next_id = 1;

static void req_init(struct side *d, struct xcuda_request *req, uint16_t op,
		     const void *args, uint16_t len)
{
	memset(req, 0, sizeof(*req));
	req->hdr.op = op;
	req->hdr.len = len;
	req->hdr.session = d->chan.session;
	req->hdr.id = next_id++;
	memcpy(req->args, args, len);
}

static int call(struct side *d, uint16_t op, const void *args, uint16_t len,
		void *res, size_t res_len)
{
	struct xcuda_request req;
	struct xcuda_response rsp;

	req_init(d, &req, op, args, len);
	xd_handle(&d->s, &req, &rsp);
	if (res)
		memcpy(res, rsp.out, res_len);
	return rsp.status;
}

#define CALL(d, op, a)	call(d, op, &(a), sizeof(a), NULL, 0)

/*
 * CUDA's host node setters and getter, replaced in this program (the
 * worker's objects link here first): without a GPU the real ones refuse
 * every node, and what matters is what the worker hands CUDA and how it
 * reads it back.  Only the planted nodes below are known.
 */
#define FAKE_NODE	((cudaGraphNode_t)(uintptr_t)0xf00d0)
#define FAKE_EXEC	((cudaGraphExec_t)(uintptr_t)0xe8ec0)
static struct cudaHostNodeParams fake_graph_hp, fake_exec_hp;

cudaError_t CUDARTAPI cudaGraphHostNodeSetParams(
	cudaGraphNode_t node, const struct cudaHostNodeParams *p)
{
	if (node != FAKE_NODE || !p)
		return cudaErrorInvalidValue;
	fake_graph_hp = *p;
	return cudaSuccess;
}

cudaError_t CUDARTAPI cudaGraphHostNodeGetParams(
	cudaGraphNode_t node, struct cudaHostNodeParams *p)
{
	if (node != FAKE_NODE || !p)
		return cudaErrorInvalidValue;
	*p = fake_graph_hp;
	return cudaSuccess;
}

cudaError_t CUDARTAPI cudaGraphExecHostNodeSetParams(
	cudaGraphExec_t x, cudaGraphNode_t node,
	const struct cudaHostNodeParams *p)
{
	if (x != FAKE_EXEC || node != FAKE_NODE || !p)
		return cudaErrorInvalidValue;
	fake_exec_hp = *p;
	return cudaSuccess;
}

cudaError_t CUDARTAPI cudaGraphNodeSetParams(cudaGraphNode_t node,
					     struct cudaGraphNodeParams *p)
{
	struct cudaHostNodeParams hp;

	if (!p || p->type != cudaGraphNodeTypeHost)
		return cudaErrorInvalidValue;
	hp.fn = p->host.fn;
	hp.userData = p->host.userData;
	return cudaGraphHostNodeSetParams(node, &hp);
}

cudaError_t CUDARTAPI cudaGraphExecNodeSetParams(
	cudaGraphExec_t x, cudaGraphNode_t node, struct cudaGraphNodeParams *p)
{
	struct cudaHostNodeParams hp;

	if (!p || p->type != cudaGraphNodeTypeHost)
		return cudaErrorInvalidValue;
	hp.fn = p->host.fn;
	hp.userData = p->host.userData;
	return cudaGraphExecHostNodeSetParams(x, node, &hp);
}

/*
 * Kernel node attributes and an array's format, replaced as well: the
 * worker's translation is what is tested.  The fake node keeps one
 * attribute; FAKE_ARRAY has 4-byte elements.
 */
#define FAKE_ARRAY	((cudaArray_t)(uintptr_t)0xa1a10)
static cudaLaunchAttributeID fake_attr_id;
static cudaLaunchAttributeValue fake_attr_val;
static int fake_attr_sets;

cudaError_t CUDARTAPI cudaGraphKernelNodeSetAttribute(
	cudaGraphNode_t node, cudaKernelNodeAttrID id,
	const cudaKernelNodeAttrValue *v)
{
	if (node != FAKE_NODE || !v)
		return cudaErrorInvalidValue;
	fake_attr_id = id;
	fake_attr_val = *v;
	fake_attr_sets++;
	return cudaSuccess;
}

cudaError_t CUDARTAPI cudaGraphKernelNodeGetAttribute(
	cudaGraphNode_t node, cudaKernelNodeAttrID id,
	cudaKernelNodeAttrValue *v)
{
	if (node != FAKE_NODE || !v || id != fake_attr_id)
		return cudaErrorInvalidValue;
	*v = fake_attr_val;
	return cudaSuccess;
}

cudaError_t CUDARTAPI cudaArrayGetInfo(struct cudaChannelFormatDesc *d,
				       struct cudaExtent *e,
				       unsigned int *flags, cudaArray_t arr)
{
	if (arr != FAKE_ARRAY)
		return cudaErrorInvalidResourceHandle;
	if (d)
		*d = (struct cudaChannelFormatDesc){
			32, 0, 0, 0, cudaChannelFormatKindFloat };
	if (e)
		*e = (struct cudaExtent){ 64, 0, 0 };
	if (flags)
		*flags = 0;
	return cudaSuccess;
}

static void expect(const char *name, int got, int want)
{
	CHECK_MSG(got == want, name, "status %d, want %d", got, want);
}

static void open_side(struct side *d)
{
	struct xcuda_open_args a = { XCUDA_PROTO_VERSION, 0, ARENA, 0 };

	d->chan.arena = calloc(1, ARENA);
	d->chan.arena_size = ARENA;
	REQUIRE_MSG(d->chan.arena && !xd_session_init(&d->s, &d->chan),
		    "setup", "out of memory");
	call(d, XCUDA_OP_OPEN, &a, sizeof(a), NULL, 0);
	REQUIRE_MSG(d->s.opened, "open", "the session did not open");
}

/* Plants an object CUDA never made: only for requests refused first. */
static uint32_t plant(struct side *d, int kind, uintptr_t ptr, int borrowed,
		      uint32_t owner)
{
	uint32_t h = 0;
	struct xd_hent *e = xd_htab_add(&d->s.objects[kind], (void *)ptr, &h);

	REQUIRE_MSG(e != NULL, "plant", "table full");
	e->borrowed = (uint8_t)borrowed;
	e->owner = owner;
	return h;
}

/* Takes the planted objects out before the session's teardown. */
static void unplant(struct side *d)
{
	static const int kinds[] = { XD_H_NODE, XD_H_GRAPH, XD_H_GRAPHEXEC,
				     XD_H_USEROBJ };
	uint32_t h;
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		for (h = 0; (h = xd_htab_next(&d->s.objects[kinds[i]], h));)
			xd_htab_del(&d->s.objects[kinds[i]], h);
}

static int node_known(struct side *d, uint32_t h)
{
	return xd_object_get(&d->s.objects[XD_H_NODE], h) != NULL;
}

static void test_other_session(void)
{
	struct xcuda_graph_node_get_type_args t = { 0 };
	struct xcuda_graph_node_list_args l = { 0 };
	struct xcuda_graph_add_node_args an = { 0 };
	struct xcuda_graph_destroy_node_args dn = { 0 };
	struct xcuda_graph_node_find_in_clone_args fc = { 0 };
	struct xcuda_graph_event_node_get_event_args ev = { 0 };
	struct xcuda_graph_node_set_params_args sp = { 0 };
	struct xcuda_gparams *w;
	uint32_t ga, na, gb, *deps;

	/* Handles are per-session numbers: A's must not be one of B's. */
	plant(&A, XD_H_GRAPH, 0x1000, 0, 0);
	ga = plant(&A, XD_H_GRAPH, 0x1100, 0, 0);
	na = plant(&A, XD_H_NODE, 0x2000, 1, ga);
	gb = plant(&B, XD_H_GRAPH, 0x3000, 0, 0);
	REQUIRE_MSG(ga != gb, "setup", "the same handle in both sessions");

	t.node = na;
	expect("another session's node: type", CALL(&B,
	       XCUDA_OP_GRAPH_NODE_GET_TYPE, t),
	       cudaErrorInvalidResourceHandle);
	l.obj = na;
	l.what = XCUDA_GL_DEPS;
	l.cap = UINT64_MAX;
	expect("another session's node: dependencies", CALL(&B,
	       XCUDA_OP_GRAPH_NODE_LIST, l), cudaErrorInvalidResourceHandle);
	l.obj = ga;
	l.what = XCUDA_GL_NODES;
	expect("another session's graph: nodes", CALL(&B,
	       XCUDA_OP_GRAPH_NODE_LIST, l), cudaErrorInvalidResourceHandle);
	dn.node = na;
	expect("another session's node: destroy", CALL(&B,
	       XCUDA_OP_GRAPH_DESTROY_NODE, dn),
	       cudaErrorInvalidResourceHandle);
	CHECK_MSG(node_known(&A, na), "A's node survives B's destroy", "gone");
	fc.originalNode = na;
	fc.clonedGraph = gb;
	expect("another session's node: find in clone", CALL(&B,
	       XCUDA_OP_GRAPH_NODE_FIND_IN_CLONE, fc),
	       cudaErrorInvalidResourceHandle);
	ev.node = na;
	expect("another session's node: event", CALL(&B,
	       XCUDA_OP_GRAPH_EVENT_NODE_GET_EVENT, ev),
	       cudaErrorInvalidResourceHandle);

	/* As a dependency of an empty node in B's own graph. */
	w = (struct xcuda_gparams *)(B.chan.arena + 4096);
	memset(w, 0, GP);
	w->type = cudaGraphNodeTypeEmpty;
	deps = (uint32_t *)(B.chan.arena + 8192);
	deps[0] = na;
	an.graph = gb;
	an.entry = XCUDA_GN_EMPTY;
	an.ndeps = 1;
	an.deps = (struct xcuda_extent){ 8192, 4 };
	an.params = (struct xcuda_extent){ 4096, GP };
	expect("another session's node as a dependency", CALL(&B,
	       XCUDA_OP_GRAPH_ADD_NODE, an), cudaErrorInvalidResourceHandle);
	/* Its parameters set in B. */
	sp.node = na;
	sp.entry = XCUDA_GN_GENERIC;
	sp.params = (struct xcuda_extent){ 4096, GP };
	expect("another session's node: set params", CALL(&B,
	       XCUDA_OP_GRAPH_NODE_SET_PARAMS, sp),
	       cudaErrorInvalidResourceHandle);
	unplant(&A);
	unplant(&B);
}

static void test_destroyed_graph(void)
{
	struct xcuda_graph_node_get_type_args t = { 0 };
	struct xcuda_graph_destroy_args gd = { 0 };
	struct xcuda_graph_node_list_args l = { 0 };
	uint32_t g, g2, n1, n2, child, n3, n4;

	g = plant(&A, XD_H_GRAPH, 0x1000, 0, 0);
	g2 = plant(&A, XD_H_GRAPH, 0x1100, 0, 0);
	n1 = plant(&A, XD_H_NODE, 0x2000, 1, g);
	n2 = plant(&A, XD_H_NODE, 0x2100, 1, g);
	/* A child graph that n1 owns, with a node of its own. */
	child = plant(&A, XD_H_GRAPH, 0x1200, 1, n1);
	n3 = plant(&A, XD_H_NODE, 0x2200, 1, child);
	n4 = plant(&A, XD_H_NODE, 0x2300, 1, g2);

	gd.graph = child;
	expect("a node's graph cannot be destroyed", CALL(&A,
	       XCUDA_OP_GRAPH_DESTROY, gd), cudaErrorInvalidValue);
	CHECK_MSG(node_known(&A, n3), "the child's node stays", "gone");

	xd_graph_forget(&A.s, g);
	CHECK_MSG(!node_known(&A, n1) && !node_known(&A, n2) &&
		  !node_known(&A, n3), "a destroyed graph's nodes go",
		  "n1 %d n2 %d n3 %d", node_known(&A, n1),
		  node_known(&A, n2), node_known(&A, n3));
	CHECK_MSG(!xd_object_get(&A.s.objects[XD_H_GRAPH], child) &&
		  !xd_object_get(&A.s.objects[XD_H_GRAPH], g),
		  "the graphs its nodes owned go", "still there");
	CHECK_MSG(node_known(&A, n4) &&
		  xd_object_get(&A.s.objects[XD_H_GRAPH], g2),
		  "another graph's nodes stay", "gone");
	t.node = n1;
	expect("a node of a destroyed graph", CALL(&A,
	       XCUDA_OP_GRAPH_NODE_GET_TYPE, t),
	       cudaErrorInvalidResourceHandle);
	l.obj = n3;
	l.what = XCUDA_GL_DEPENDENTS;
	l.cap = UINT64_MAX;
	expect("a node of a destroyed child graph", CALL(&A,
	       XCUDA_OP_GRAPH_NODE_LIST, l), cudaErrorInvalidResourceHandle);
	gd.graph = g;
	expect("the destroyed graph itself", CALL(&A, XCUDA_OP_GRAPH_DESTROY,
	       gd), cudaErrorInvalidResourceHandle);
	unplant(&A);
}

static void test_counts(void)
{
	struct xcuda_graph_node_list_args l = { 0 };
	struct xcuda_graph_dependencies_args d = { 0 };
	struct xcuda_graph_add_node_args an = { 0 };
	struct xcuda_stream_get_capture_info_args ci = { 0 };
	struct xcuda_stream_update_capture_dependencies_args uc = { 0 };
	struct xcuda_stream_begin_capture_to_graph_args bc = { 0 };
	struct xcuda_gparams *w;
	uint32_t g;

	g = plant(&A, XD_H_GRAPH, 0x1000, 0, 0);
	l.obj = g;
	l.what = XCUDA_GL_NODES;
	l.cap = UINT64_MAX - 1;
	l.nodes = (struct xcuda_extent){ 0, 4096 };
	expect("list: a count that overflows", CALL(&A,
	       XCUDA_OP_GRAPH_NODE_LIST, l), cudaErrorInvalidValue);
	l.cap = XCUDA_GLIST_MAX + 1;
	l.nodes = (struct xcuda_extent){ 0, 4 * (XCUDA_GLIST_MAX + 1) };
	expect("list: over the bound", CALL(&A, XCUDA_OP_GRAPH_NODE_LIST, l),
	       cudaErrorInvalidValue);
	l.cap = 10;
	l.nodes = (struct xcuda_extent){ 0, 36 };
	expect("list: room short of the count", CALL(&A,
	       XCUDA_OP_GRAPH_NODE_LIST, l), cudaErrorInvalidValue);
	l.what = XCUDA_GL_EDGES;
	l.nodes = (struct xcuda_extent){ 0, 40 };
	l.to = (struct xcuda_extent){ 64, 8 };
	expect("edges: destinations short", CALL(&A,
	       XCUDA_OP_GRAPH_NODE_LIST, l), cudaErrorInvalidValue);
	l.to = (struct xcuda_extent){ 64, 40 };
	l.edata = (struct xcuda_extent){ 128, 16 };
	expect("edges: edge data short", CALL(&A, XCUDA_OP_GRAPH_NODE_LIST,
	       l), cudaErrorInvalidValue);

	d.graph = g;
	d.count = UINT64_MAX;
	d.from = (struct xcuda_extent){ 0, 64 };
	d.to = (struct xcuda_extent){ 64, 64 };
	expect("dependencies: a count that overflows", CALL(&A,
	       XCUDA_OP_GRAPH_DEPENDENCIES, d), cudaErrorInvalidValue);
	d.count = (1ull << 62) + 1;
	expect("dependencies: a count that wraps", CALL(&A,
	       XCUDA_OP_GRAPH_DEPENDENCIES, d), cudaErrorInvalidValue);
	d.count = 17;
	expect("dependencies: more than the extents hold", CALL(&A,
	       XCUDA_OP_GRAPH_DEPENDENCIES, d), cudaErrorInvalidValue);
	d.count = 1;
	d.remove = 2;
	expect("dependencies: neither add nor remove", CALL(&A,
	       XCUDA_OP_GRAPH_DEPENDENCIES, d), cudaErrorInvalidValue);

	w = (struct xcuda_gparams *)(A.chan.arena + 4096);
	memset(w, 0, GP);
	w->type = cudaGraphNodeTypeEmpty;
	an.graph = g;
	an.entry = XCUDA_GN_EMPTY;
	an.params = (struct xcuda_extent){ 4096, GP };
	an.ndeps = UINT64_MAX;
	an.deps = (struct xcuda_extent){ 0, 64 };
	expect("add node: a dependency count that overflows", CALL(&A,
	       XCUDA_OP_GRAPH_ADD_NODE, an), cudaErrorInvalidValue);
	an.ndeps = 2;
	an.edata = (struct xcuda_extent){ 128, 16 };
	expect("add node: edge data for a typed entry", CALL(&A,
	       XCUDA_OP_GRAPH_ADD_NODE, an), cudaErrorInvalidValue);

	ci.cap = XCUDA_GLIST_MAX + 1;
	ci.deps = (struct xcuda_extent){ 0, 4 * (XCUDA_GLIST_MAX + 1) };
	expect("capture info: over the bound", CALL(&A,
	       XCUDA_OP_STREAM_GET_CAPTURE_INFO, ci), cudaErrorInvalidValue);
	ci.cap = 8;
	ci.deps = (struct xcuda_extent){ 0, 16 };
	expect("capture info: room short", CALL(&A,
	       XCUDA_OP_STREAM_GET_CAPTURE_INFO, ci), cudaErrorInvalidValue);

	uc.count = UINT64_MAX / 2;
	uc.deps = (struct xcuda_extent){ 0, 64 };
	expect("update capture: a count that overflows", CALL(&A,
	       XCUDA_OP_STREAM_UPDATE_CAPTURE_DEPENDENCIES, uc),
	       cudaErrorInvalidValue);
	bc.graph = g;
	bc.count = 1ull << 40;
	bc.deps = (struct xcuda_extent){ 0, 64 };
	expect("capture to graph: a count that overflows", CALL(&A,
	       XCUDA_OP_STREAM_BEGIN_CAPTURE_TO_GRAPH, bc),
	       cudaErrorInvalidValue);
	bc.count = 0;
	bc.rsvd = 1;
	expect("capture to graph: reserved bits", CALL(&A,
	       XCUDA_OP_STREAM_BEGIN_CAPTURE_TO_GRAPH, bc),
	       cudaErrorInvalidValue);
	unplant(&A);
}

/* An ADD_NODE of @entry with the parameters at arena offset 4096. */
static int add(uint32_t g, uint32_t entry, uint32_t len)
{
	struct xcuda_graph_add_node_args an = { 0 };

	an.graph = g;
	an.entry = entry;
	an.params = (struct xcuda_extent){ 4096, len };
	return CALL(&A, XCUDA_OP_GRAPH_ADD_NODE, an);
}

static void test_params(void)
{
	struct xcuda_graph_node_get_params_args gp = { 0 };
	struct xcuda_gparams *w = (struct xcuda_gparams *)(A.chan.arena +
							   4096);
	uint32_t g = plant(&A, XD_H_GRAPH, 0x1000, 0, 0);
	uint32_t n = plant(&A, XD_H_NODE, 0x2000, 1, g);

	memset(w, 0, GP);
	w->type = cudaGraphNodeTypeKernel;
	w->args_len = XCUDA_MAX_ARGS_BYTES + 8;
	expect("kernel arguments too large", add(g, XCUDA_GN_KERNEL,
	       GP + XCUDA_MAX_ARGS_BYTES + 8), cudaErrorInvalidValue);
	w->args_len = 64;
	expect("kernel arguments past the extent", add(g, XCUDA_GN_KERNEL,
	       GP + 16), cudaErrorInvalidValue);
	w->args_len = 16;
	w->func = 0x7777;
	expect("an unknown kernel", add(g, XCUDA_GN_KERNEL, GP + 16),
	       cudaErrorInvalidResourceHandle);
	expect("parameters shorter than their structure", add(g,
	       XCUDA_GN_KERNEL, GP - 8), cudaErrorInvalidValue);
	expect("an unknown entry", add(g, 99, GP), cudaErrorInvalidValue);
	expect("entry 0", add(g, 0, GP), cudaErrorInvalidValue);
	w->type = cudaGraphNodeTypeMemset;
	expect("a type the entry does not make", add(g, XCUDA_GN_KERNEL, GP),
	       cudaErrorInvalidValue);

	memset(w, 0, GP);
	w->type = cudaGraphNodeTypeEmpty;
	w->rsvd = 1;
	expect("reserved bits", add(g, XCUDA_GN_EMPTY, GP),
	       cudaErrorInvalidValue);

	memset(w, 0, GP);
	w->type = cudaGraphNodeTypeMemcpy;
	w->src.where = XCUDA_GSIDE_ARENA;
	w->src.ptr = ARENA - 4;
	w->src.pitch = 16;
	w->dst.where = XCUDA_GSIDE_DEV;
	w->extent[0] = 16;
	w->extent[1] = w->extent[2] = 1;
	expect("a copy past the arena", add(g, XCUDA_GN_MEMCPY, GP),
	       cudaErrorInvalidValue);
	w->src.ptr = 0;
	w->src.pitch = 8;
	w->extent[1] = 2;
	expect("a copy wider than its pitch", add(g, XCUDA_GN_MEMCPY, GP),
	       cudaErrorInvalidValue);
	w->src.pitch = UINT64_MAX / 2;
	w->src.ysize = UINT64_MAX / 2;
	w->extent[2] = 4;
	expect("a copy whose extent overflows", add(g, XCUDA_GN_MEMCPY, GP),
	       cudaErrorInvalidValue);
	w->src.where = XCUDA_GSIDE_ARENA;
	w->src.pitch = 16;
	w->src.ysize = 1;
	w->extent[0] = 8;
	w->extent[1] = 1;
	w->extent[2] = 1;
	w->dst.where = 7;
	expect("a side neither device nor arena", add(g, XCUDA_GN_MEMCPY, GP),
	       cudaErrorInvalidValue);
	w->dst.where = XCUDA_GSIDE_DEV;
	w->src.pos[1] = ARENA / 16;
	expect("a copy position past the arena", add(g, XCUDA_GN_MEMCPY, GP),
	       cudaErrorInvalidValue);

	memset(w, 0, GP);
	w->type = cudaGraphNodeTypeMemset;
	w->elem = 8;
	expect("a memset of 8-byte elements", add(g, XCUDA_GN_MEMSET, GP),
	       cudaErrorInvalidValue);
	w->elem = 4;
	w->dst.where = XCUDA_GSIDE_ARENA;
	w->dst.ptr = ARENA - 8;
	w->extent[0] = 4;
	w->extent[1] = 1;
	expect("a memset past the arena", add(g, XCUDA_GN_MEMSET, GP),
	       cudaErrorInvalidValue);

	memset(w, 0, GP);
	w->type = cudaGraphNodeTypeMemAlloc;
	w->nacc = XCUDA_GACC_MAX + 1;
	expect("too many access descriptors", add(g, XCUDA_GN_MEM_ALLOC,
	       GP + (XCUDA_GACC_MAX + 1) * XCUDA_GACC_SIZE),
	       cudaErrorInvalidValue);
	w->nacc = 2;
	expect("access descriptors past the extent", add(g,
	       XCUDA_GN_MEM_ALLOC, GP + XCUDA_GACC_SIZE),
	       cudaErrorInvalidValue);
	w->nacc = 0;
	w->handle_types = cudaMemHandleTypePosixFileDescriptor;
	expect("an exportable allocation", add(g, XCUDA_GN_MEM_ALLOC, GP),
	       cudaErrorInvalidValue);

	memset(w, 0, GP);
	w->type = cudaGraphNodeTypeConditional;
	w->cond_size = XCUDA_GCOND_MAX + 1;
	expect("too many conditional bodies", add(g, XCUDA_GN_GENERIC,
	       GP + 4 * (XCUDA_GCOND_MAX + 1)), cudaErrorInvalidValue);
	w->cond_size = 4;
	expect("no room for the bodies' handles", add(g, XCUDA_GN_GENERIC,
	       GP), cudaErrorInvalidValue);

	memset(w, 0, GP);
	w->type = cudaGraphNodeTypeHost;
	expect("a host node without the host function area",
	       add(g, XCUDA_GN_GENERIC, GP), cudaErrorInvalidValue);
	expect("a host node's entry, another type",
	       add(g, XCUDA_GN_HOST, GP), cudaErrorInvalidValue);
	w->type = cudaGraphNodeTypeKernel;
	expect("a kernel through the host node's entry",
	       add(g, XCUDA_GN_HOST, GP), cudaErrorInvalidValue);
	w->type = cudaGraphNodeTypeHost;
	w->token = 7;
	expect("a host node's entry past the last",
	       add(g, XCUDA_GN_HOST + 1, GP), cudaErrorInvalidValue);
	w->token = 0;
	w->type = cudaGraphNodeTypeExtSemaphoreSignal;
	expect("an external semaphore", add(g, XCUDA_GN_GENERIC, GP),
	       cudaErrorNotSupported);
	w->type = cudaGraphNodeTypeEventRecord;
	w->event = 0x4444;
	expect("an unknown event", add(g, XCUDA_GN_GENERIC, GP),
	       cudaErrorInvalidResourceHandle);
	w->type = cudaGraphNodeTypeGraph;
	w->graph = 0x4444;
	expect("an unknown child graph", add(g, XCUDA_GN_GENERIC, GP),
	       cudaErrorInvalidResourceHandle);

	gp.node = n;
	gp.entry = XCUDA_GN_KERNEL;
	gp.params = (struct xcuda_extent){ 4096, GP - 8 };
	expect("get params: no room for the structure", CALL(&A,
	       XCUDA_OP_GRAPH_NODE_GET_PARAMS, gp), cudaErrorInvalidValue);
	gp.params = (struct xcuda_extent){ 4096,
		GP + XCUDA_MAX_ARGS_BYTES + 8 };
	expect("get params: more room than allowed", CALL(&A,
	       XCUDA_OP_GRAPH_NODE_GET_PARAMS, gp), cudaErrorInvalidValue);
	gp.node = 0x5555;
	gp.params = (struct xcuda_extent){ 4096, GP };
	expect("get params: an unknown node", CALL(&A,
	       XCUDA_OP_GRAPH_NODE_GET_PARAMS, gp),
	       cudaErrorInvalidResourceHandle);
	unplant(&A);
}

static int memfd_with(size_t n)
{
	int fd = memfd_create("test-dot", MFD_CLOEXEC);
	char chunk[4096];
	size_t done;

	memset(chunk, 'd', sizeof(chunk));
	for (done = 0; fd >= 0 && done < n; done += sizeof(chunk))
		if (write(fd, chunk, n - done < sizeof(chunk) ?
			  n - done : sizeof(chunk)) < 0)
			break;
	return fd;
}

static void test_dot(void)
{
	struct xcuda_graph_debug_dot_print_args a = { 0 };
	uint8_t *buf = NULL;
	uint64_t size = 0;
	int fd, err;

	fd = memfd_with(100);
	err = xd_dot_take(fd, 64, &buf, &size);
	CHECK_MSG(err == cudaErrorMemoryAllocation && !buf,
		  "dot: text longer than the room", "err %d", err);
	err = xd_dot_take(fd, 128, &buf, &size);
	CHECK_MSG(!err && buf && size == 100 && buf[0] == 'd' &&
		  buf[99] == 'd' && buf[100] == 0, "dot: text that fits",
		  "err %d size %llu", err, (unsigned long long)size);
	free(buf);
	close(fd);
	fd = memfd_with(XCUDA_GDOT_MAX + 1);
	err = xd_dot_take(fd, UINT32_MAX, &buf, &size);
	CHECK_MSG(err == cudaErrorMemoryAllocation && !buf,
		  "dot: text over the bound", "err %d", err);
	close(fd);

	a.graph = 0x6666;
	a.out = (struct xcuda_extent){ 0, 4096 };
	expect("dot: an unknown graph", CALL(&A,
	       XCUDA_OP_GRAPH_DEBUG_DOT_PRINT, a),
	       cudaErrorInvalidResourceHandle);
	a.graph = plant(&A, XD_H_GRAPH, 0x1000, 0, 0);
	a.out = (struct xcuda_extent){ ARENA - 16, 4096 };
	expect("dot: room outside the arena", CALL(&A,
	       XCUDA_OP_GRAPH_DEBUG_DOT_PRINT, a), cudaErrorInvalidValue);
	unplant(&A);
}

/* User objects: references counted per session, checked before CUDA. */
static void test_user_objects(void)
{
	struct xcuda_user_object_create_args c = { 0 };
	struct xcuda_user_object_retain_args rt = { 0 };
	struct xcuda_user_object_release_args rl = { 0 };
	struct xcuda_graph_retain_user_object_args gr = { 0 };
	struct xcuda_stream_end_capture_args ec = { 0 };
	uint32_t uo, g;
	struct xd_hent *e;

	c.count = 0;
	c.token = 5;
	expect("a user object with no reference",
	       CALL(&A, XCUDA_OP_USER_OBJECT_CREATE, c), cudaErrorInvalidValue);
	c.count = 0x80000001u;
	expect("a user object with too many references",
	       CALL(&A, XCUDA_OP_USER_OBJECT_CREATE, c), cudaErrorInvalidValue);
	c.count = 1;
	expect("a user object without the host function area",
	       CALL(&A, XCUDA_OP_USER_OBJECT_CREATE, c), cudaErrorInvalidValue);

	uo = plant(&A, XD_H_USEROBJ, 0x7000, 0, 0);
	e = xd_htab_get(&A.s.objects[XD_H_USEROBJ], uo);
	e->ref = 2;
	g = plant(&A, XD_H_GRAPH, 0x7100, 0, 0);

	rl.object = uo;
	rl.count = 3;
	expect("releasing more than the session holds",
	       CALL(&A, XCUDA_OP_USER_OBJECT_RELEASE, rl),
	       cudaErrorInvalidValue);
	rl.count = 0;
	expect("releasing none", CALL(&A, XCUDA_OP_USER_OBJECT_RELEASE, rl),
	       cudaErrorInvalidValue);
	rl.count = 1;
	expect("another session's user object",
	       CALL(&B, XCUDA_OP_USER_OBJECT_RELEASE, rl),
	       cudaErrorInvalidResourceHandle);
	rt.object = uo;
	rt.count = 0x7fffffffu;
	expect("retaining past 2^31", CALL(&A, XCUDA_OP_USER_OBJECT_RETAIN, rt),
	       cudaErrorInvalidValue);
	rt.count = 0;
	expect("retaining none", CALL(&A, XCUDA_OP_USER_OBJECT_RETAIN, rt),
	       cudaErrorInvalidValue);
	rt.count = 1;
	expect("retaining another session's",
	       CALL(&B, XCUDA_OP_USER_OBJECT_RETAIN, rt),
	       cudaErrorInvalidResourceHandle);
	gr.graph = g;
	gr.object = uo;
	gr.count = 3;
	gr.flags = cudaGraphUserObjectMove;
	expect("moving more than the session holds",
	       CALL(&A, XCUDA_OP_GRAPH_RETAIN_USER_OBJECT, gr),
	       cudaErrorInvalidValue);
	gr.count = 1;
	expect("moving into another session's graph",
	       CALL(&B, XCUDA_OP_GRAPH_RETAIN_USER_OBJECT, gr),
	       cudaErrorInvalidResourceHandle);
	CHECK_MSG(e->ref == 2 && xd_object_get(&A.s.objects[XD_H_USEROBJ], uo),
		  "refused calls keep the references", "ref %u", e->ref);

	ec.stream = 0;
	ec.nograph = 2;
	expect("end capture, nograph not a flag",
	       CALL(&A, XCUDA_OP_STREAM_END_CAPTURE, ec),
	       cudaErrorInvalidValue);
	unplant(&A);
}

/*
 * Host nodes answer their token from the worker's own context, never for
 * another session's; a host node's context goes when its add fails.
 */
static void test_host_tokens(void)
{
	struct xcuda_hostfn_setup_args hs = { 8192, 4096 };
	struct xcuda_gparams *w = (struct xcuda_gparams *)(A.chan.arena +
							   4096);
	struct xcuda_graph_add_node_args an = { 0 };
	unsigned int before;
	void *ud = NULL;

	expect("host function area", CALL(&A, XCUDA_OP_HOSTFN_SETUP, hs), 0);
	REQUIRE_MSG(!xd_hostfn_ctx_new(&A.s, 42, XD_HOSTFN_GRAPH, &ud),
		    "host context", "no context");
	CHECK_MSG(xd_hostfn_ctx_token(&A.s, ud) == 42, "the session's token",
		  "got %llu", (unsigned long long)xd_hostfn_ctx_token(&A.s,
								       ud));
	CHECK_MSG(xd_hostfn_ctx_token(&B.s, ud) == 0,
		  "another session learns no token", "got %llu",
		  (unsigned long long)xd_hostfn_ctx_token(&B.s, ud));
	CHECK_MSG(xd_hostfn_ctx_token(&A.s, (void *)(uintptr_t)0x12345) == 0,
		  "a made-up context names no token", "it did");
	xd_hostfn_ctx_drop(ud);
	CHECK_MSG(xd_hostfn_ctx_token(&A.s, ud) == 0,
		  "a dropped context names no token", "it did");

	/* A host node into a graph that is not the session's. */
	before = xd_hostfn_ctx_count(&A.s);
	memset(w, 0, GP);
	w->type = cudaGraphNodeTypeHost;
	w->token = 7;
	an.graph = 0x7777;
	an.entry = XCUDA_GN_HOST;
	an.params.off = 4096;
	an.params.len = GP;
	expect("a host node into an unknown graph",
	       CALL(&A, XCUDA_OP_GRAPH_ADD_NODE, an),
	       cudaErrorInvalidResourceHandle);
	CHECK_MSG(xd_hostfn_ctx_count(&A.s) == before,
		  "the refused node's context is gone", "%u, was %u",
		  xd_hostfn_ctx_count(&A.s), before);
}

/* The token of the context @hp names, or 0 when it is not ours. */
static uint64_t hp_token(const struct cudaHostNodeParams *hp)
{
	if (hp->fn != xd_hostfn_trampoline)
		return 0;
	return xd_hostfn_ctx_token(&A.s, hp->userData);
}

/* A host node set through @entry (of @exec): token @tok into CUDA. */
static int host_set(uint32_t exec, uint32_t node, uint32_t entry,
		    uint64_t tok)
{
	struct xcuda_gparams *w = (struct xcuda_gparams *)(A.chan.arena +
							   4096);
	struct xcuda_graph_node_set_params_args sp = { 0 };

	memset(w, 0, GP);
	w->type = cudaGraphNodeTypeHost;
	w->token = tok;
	sp.exec = exec;
	sp.node = node;
	sp.entry = entry;
	sp.params.off = 4096;
	sp.params.len = GP;
	return CALL(&A, XCUDA_OP_GRAPH_NODE_SET_PARAMS, sp);
}

/*
 * A host node's new function, set in its graph or in an executable graph
 * by either entry point, keeps its context: the node's get answers its
 * token, and the context is there to run it.  A refused set leaves none.
 */
static void test_host_set(void)
{
	struct xcuda_gparams *w = (struct xcuda_gparams *)(A.chan.arena +
							   4096);
	struct xcuda_graph_node_get_params_args gp = { 0 };
	uint32_t node, other, exec;
	unsigned int before;

	node = plant(&A, XD_H_NODE, (uintptr_t)FAKE_NODE, 0, 0);
	other = plant(&A, XD_H_NODE, 0xbad0, 0, 0);
	exec = plant(&A, XD_H_GRAPHEXEC, (uintptr_t)FAKE_EXEC, 0, 0);
	before = xd_hostfn_ctx_count(&A.s);

	expect("set a host node", host_set(0, node, XCUDA_GN_HOST, 9), 0);
	CHECK_MSG(hp_token(&fake_graph_hp) == 9,
		  "the set node's function runs the token", "token %llu",
		  (unsigned long long)hp_token(&fake_graph_hp));
	gp.node = node;
	gp.entry = XCUDA_GN_HOST;
	gp.params.off = 4096;
	gp.params.len = GP;
	memset(w, 0, GP);
	expect("get the set host node",
	       CALL(&A, XCUDA_OP_GRAPH_NODE_GET_PARAMS, gp), 0);
	CHECK_MSG(w->token == 9 && w->type == cudaGraphNodeTypeHost,
		  "the set host node answers its token", "token %llu",
		  (unsigned long long)w->token);

	expect("set an executable graph's host node",
	       host_set(exec, node, XCUDA_GN_HOST, 10), 0);
	CHECK_MSG(hp_token(&fake_exec_hp) == 10,
		  "the executable graph's node runs the token", "token %llu",
		  (unsigned long long)hp_token(&fake_exec_hp));
	CHECK_MSG(hp_token(&fake_graph_hp) == 9,
		  "the graph's node keeps its own", "token %llu",
		  (unsigned long long)hp_token(&fake_graph_hp));

	expect("set a host node through the generic entry",
	       host_set(0, node, XCUDA_GN_GENERIC, 11), 0);
	memset(w, 0, GP);
	expect("get the generically set host node",
	       CALL(&A, XCUDA_OP_GRAPH_NODE_GET_PARAMS, gp), 0);
	CHECK_MSG(w->token == 11, "the generic set's token answers",
		  "token %llu", (unsigned long long)w->token);
	expect("set an executable graph's host node, generic entry",
	       host_set(exec, node, XCUDA_GN_GENERIC, 12), 0);
	CHECK_MSG(hp_token(&fake_exec_hp) == 12,
		  "the generic executable set's token runs", "token %llu",
		  (unsigned long long)hp_token(&fake_exec_hp));
	/* The replaced ones stay: something made before may run them. */
	CHECK_MSG(xd_hostfn_ctx_count(&A.s) == before + 4,
		  "each set node holds a context", "%u, was %u",
		  xd_hostfn_ctx_count(&A.s), before);

	expect("CUDA refuses the set",
	       host_set(0, other, XCUDA_GN_HOST, 13), cudaErrorInvalidValue);
	expect("CUDA refuses the executable set",
	       host_set(exec, other, XCUDA_GN_GENERIC, 14),
	       cudaErrorInvalidValue);
	CHECK_MSG(xd_hostfn_ctx_count(&A.s) == before + 4,
		  "a refused set leaves no context", "%u, was %u",
		  xd_hostfn_ctx_count(&A.s), before);
	CHECK_MSG(hp_token(&fake_graph_hp) == 11,
		  "the node keeps the function it had", "token %llu",
		  (unsigned long long)hp_token(&fake_graph_hp));
	unplant(&A);
}

/* GRAPH_KERNEL_NODE_ATTRIBUTE with the record at arena offset @off. */
static int attr_at(struct side *d, uint32_t node, uint32_t set,
		   uint64_t off, uint32_t len)
{
	struct xcuda_graph_kernel_node_attribute_args a = { 0 };

	a.node = node;
	a.set = set;
	a.attr = (struct xcuda_extent){ off, len };
	return CALL(d, XCUDA_OP_GRAPH_KERNEL_NODE_ATTRIBUTE, a);
}

static int attr_call(struct side *d, uint32_t node, uint32_t set,
		     uint32_t len)
{
	return attr_at(d, node, set, 4096, len);
}

static void test_attributes(void)
{
	struct xcuda_launch_attr *ra = (struct xcuda_launch_attr *)
		(A.chan.arena + 4096);
	struct xcuda_launch_attr *rb = (struct xcuda_launch_attr *)
		(B.chan.arena + 4096);
	const uint32_t len = sizeof(*ra);
	uint32_t ga = plant(&A, XD_H_GRAPH, 0x1000, 0, 0);
	uint32_t gb = plant(&B, XD_H_GRAPH, 0x3000, 0, 0);
	uint32_t na, nb, ea = 0, eb = 0, e0 = 0;
	uint64_t h;
	int v;

	/* A holds one more of each, so that the numbers differ. */
	plant(&A, XD_H_NODE, 0x2000, 1, ga);
	na = plant(&A, XD_H_NODE, (uintptr_t)FAKE_NODE, 1, ga);
	nb = plant(&B, XD_H_NODE, (uintptr_t)FAKE_NODE, 1, gb);
	/* B holds one more event than A: its second is none of A's. */
	REQUIRE_MSG(xd_htab_add(&A.s.events, (void *)(uintptr_t)0xe0a0, &ea)
		    && xd_htab_add(&B.s.events, (void *)(uintptr_t)0xe000,
				   &e0)
		    && xd_htab_add(&B.s.events, (void *)(uintptr_t)0xe0b0,
				   &eb), "plant events", "table full");
	REQUIRE_MSG(na != nb && !xd_object_get(&A.s.events, eb) &&
		    !xd_object_get(&B.s.objects[XD_H_NODE], na), "setup",
		    "the same handles in both sessions");

	memset(ra, 0, len);
	ra->id = cudaLaunchAttributePriority;
	v = 3;
	memcpy(ra->val, &v, sizeof(v));
	expect("attribute: another session's node", attr_call(&B, na, 1, len),
	       cudaErrorInvalidResourceHandle);
	expect("attribute: get or set, nothing else", attr_call(&A, na, 2,
	       len), cudaErrorInvalidValue);
	expect("attribute: a record too short", attr_call(&A, na, 1, len - 1),
	       cudaErrorInvalidValue);
	expect("attribute: a record too long", attr_call(&A, na, 1, len + 8),
	       cudaErrorInvalidValue);
	expect("attribute: past the arena", attr_at(&A, na, 1, ARENA - 8, len),
	       cudaErrorInvalidValue);
	fake_attr_sets = 0;
	expect("attribute: priority set", attr_call(&A, na, 1, len),
	       cudaSuccess);
	CHECK_MSG(fake_attr_sets == 1 && fake_attr_id ==
		  cudaLaunchAttributePriority && fake_attr_val.priority == 3,
		  "attribute: CUDA got the priority", "sets %d id %d val %d",
		  fake_attr_sets, (int)fake_attr_id, fake_attr_val.priority);
	memset(ra->val, 0x5a, sizeof(ra->val));
	expect("attribute: priority get", attr_call(&A, na, 0, len),
	       cudaSuccess);
	memcpy(&v, ra->val, sizeof(v));
	CHECK_MSG(v == 3 && ra->id == cudaLaunchAttributePriority,
		  "attribute: the priority came back", "%d", v);

	/* An id CUDA does not know goes to CUDA, which answers it. */
	ra->id = 0x7fff;
	expect("attribute: an unknown id reaches CUDA", attr_call(&A, na, 1,
	       len), cudaSuccess);
	CHECK_MSG(fake_attr_id == 0x7fff, "attribute: the id as it came",
		  "%d", (int)fake_attr_id);

	/* Events: B's event named in A's request, A's own, garbage. */
	ra->id = cudaLaunchAttributeProgrammaticEvent;
	memset(ra->val, 0, sizeof(ra->val));
	h = eb;
	memcpy(ra->val, &h, sizeof(h));
	fake_attr_sets = 0;
	expect("attribute: another session's event", attr_call(&A, na, 1,
	       len), cudaErrorInvalidResourceHandle);
	h = (uint64_t)ea << 32 | ea;
	memcpy(ra->val, &h, sizeof(h));
	expect("attribute: an event handle over 32 bits", attr_call(&A, na, 1,
	       len), cudaErrorInvalidResourceHandle);
	CHECK_MSG(fake_attr_sets == 0, "attribute: CUDA saw no bad event",
		  "%d sets", fake_attr_sets);
	h = ea;
	memcpy(ra->val, &h, sizeof(h));
	v = 1;			/* triggerAtBlockStart */
	memcpy(ra->val + offsetof(cudaLaunchAttributeValue,
		programmaticEvent.triggerAtBlockStart), &v, sizeof(v));
	expect("attribute: the session's event", attr_call(&A, na, 1, len),
	       cudaSuccess);
	CHECK_MSG(fake_attr_val.programmaticEvent.event ==
		  (cudaEvent_t)(uintptr_t)0xe0a0 &&
		  fake_attr_val.programmaticEvent.triggerAtBlockStart == 1,
		  "attribute: the event as CUDA's", "%p",
		  (void *)fake_attr_val.programmaticEvent.event);
	memset(ra->val, 0, sizeof(ra->val));
	expect("attribute: an event get", attr_call(&A, na, 0, len),
	       cudaSuccess);
	memcpy(&h, ra->val, sizeof(h));
	CHECK_MSG(h == ea, "attribute: the event as the session's handle",
		  "%llu", (unsigned long long)h);
	/* The same node in B: the event is none of B's, never its pointer. */
	memset(rb, 0, len);
	rb->id = cudaLaunchAttributeProgrammaticEvent;
	expect("attribute: get of an event the session lacks", attr_call(&B,
	       nb, 0, len), cudaErrorInvalidResourceHandle);
	memcpy(&h, rb->val, sizeof(h));
	CHECK_MSG(h == 0, "attribute: nothing of the event answered", "%llx",
		  (unsigned long long)h);

	/* A device-updatable node's handle is never the guest's. */
	memset(ra, 0, len);
	ra->id = cudaLaunchAttributeDeviceUpdatableKernelNode;
	ra->val[0] = 1;
	memset(ra->val + offsetof(cudaLaunchAttributeValue,
		deviceUpdatableKernelNode.devNode), 0x77, sizeof(void *));
	expect("attribute: device-updatable set", attr_call(&A, na, 1, len),
	       cudaSuccess);
	CHECK_MSG(fake_attr_val.deviceUpdatableKernelNode.devNode == NULL,
		  "attribute: the guest's node pointer dropped", "%p",
		  (void *)fake_attr_val.deviceUpdatableKernelNode.devNode);

	/* Copying attributes: B may not name A's node on either side. */
	{
		struct xcuda_graph_kernel_node_copy_attributes_args c = { 0 };

		c.hDst = nb;
		c.hSrc = na;
		expect("copy attributes: another session's source", CALL(&B,
		       XCUDA_OP_GRAPH_KERNEL_NODE_COPY_ATTRIBUTES, c),
		       cudaErrorInvalidResourceHandle);
		c.hDst = na;
		c.hSrc = nb;
		expect("copy attributes: another session's destination",
		       CALL(&B, XCUDA_OP_GRAPH_KERNEL_NODE_COPY_ATTRIBUTES, c),
		       cudaErrorInvalidResourceHandle);
	}
	xd_htab_del(&B.s.events, e0);
	xd_htab_del(&A.s.events, ea);
	xd_htab_del(&B.s.events, eb);
	unplant(&A);
	unplant(&B);
}

static void test_arrays(void)
{
	struct xcuda_gparams *w = (struct xcuda_gparams *)(A.chan.arena +
							   4096);
	struct xcuda_gparams *wb = (struct xcuda_gparams *)(B.chan.arena +
							    4096);
	struct xcuda_graph_add_node_args an = { 0 };
	uint32_t g = plant(&A, XD_H_GRAPH, 0x1000, 0, 0);
	uint32_t gb = plant(&B, XD_H_GRAPH, 0x3000, 0, 0);
	uint32_t arr = 0, other = 0;

	REQUIRE_MSG(xd_htab_add(&A.s.objects[XD_H_ARRAY], FAKE_ARRAY, &arr) &&
		    xd_htab_add(&A.s.objects[XD_H_ARRAY],
				(void *)(uintptr_t)0xa2a20, &other),
		    "plant arrays", "table full");
	/* B names A's array: B holds no arrays at all. */
	memset(wb, 0, GP);
	wb->type = cudaGraphNodeTypeMemcpy;
	wb->src.where = XCUDA_GSIDE_ARRAY;
	wb->src.ptr = arr;
	wb->dst.where = XCUDA_GSIDE_DEV;
	wb->dst.pitch = 64;
	wb->extent[0] = wb->extent[1] = wb->extent[2] = 1;
	an.graph = gb;
	an.entry = XCUDA_GN_MEMCPY;
	an.params = (struct xcuda_extent){ 4096, GP };
	expect("an array of another session", CALL(&B,
	       XCUDA_OP_GRAPH_ADD_NODE, an), cudaErrorInvalidResourceHandle);
	wb->src.where = XCUDA_GSIDE_DEV;
	wb->dst.where = XCUDA_GSIDE_ARRAY;
	wb->dst.ptr = arr;
	expect("an array of another session as the destination", CALL(&B,
	       XCUDA_OP_GRAPH_ADD_NODE, an), cudaErrorInvalidResourceHandle);

	memset(w, 0, GP);
	w->type = cudaGraphNodeTypeMemcpy;
	w->src.where = XCUDA_GSIDE_ARRAY;
	w->src.ptr = (uint64_t)1 << 32 | arr;
	w->dst.where = XCUDA_GSIDE_ARENA;
	w->dst.pitch = 256;
	w->extent[0] = 64;
	w->extent[1] = w->extent[2] = 1;
	expect("an array handle over 32 bits", add(g, XCUDA_GN_MEMCPY, GP),
	       cudaErrorInvalidResourceHandle);
	w->src.ptr = arr;
	w->dst.ptr = ARENA - 128;
	/* 64 elements of 4 bytes: 256 bytes, past the arena's end. */
	expect("an array's width counts its elements", add(g, XCUDA_GN_MEMCPY,
	       GP), cudaErrorInvalidValue);
	w->src.ptr = other;
	expect("an array without an element size", add(g, XCUDA_GN_MEMCPY,
	       GP), cudaErrorInvalidValue);
	w->src.ptr = arr;
	w->extent[0] = UINT64_MAX / 2;
	w->dst.ptr = 0;
	expect("an array's width in bytes overflows", add(g, XCUDA_GN_MEMCPY,
	       GP), cudaErrorInvalidValue);
	w->extent[0] = 8;
	expect("a 1D copy names no array", add(g, XCUDA_GN_MEMCPY_1D, GP),
	       cudaErrorInvalidValue);
	w->type = cudaGraphNodeTypeMemset;
	w->dst = w->src;
	w->elem = 4;
	w->extent[1] = 1;
	expect("a memset names no array", add(g, XCUDA_GN_MEMSET, GP),
	       cudaErrorInvalidValue);
	/* The worker's own memory named as a host side: never CUDA's. */
	{
		static uint8_t mine[256];

		memset(w, 0, GP);
		w->type = cudaGraphNodeTypeMemcpy;
		w->src.where = XCUDA_GSIDE_ARRAY;
		w->src.ptr = arr;
		w->dst.where = XCUDA_GSIDE_DEV;
		w->dst.ptr = (uintptr_t)mine;
		w->dst.pitch = sizeof(mine);
		w->extent[0] = 16;
		w->extent[1] = w->extent[2] = 1;
		w->kind = cudaMemcpyDeviceToHost;
		expect("worker memory as an array copy's host side", add(g,
		       XCUDA_GN_MEMCPY, GP), cudaErrorInvalidValue);
		w->src.where = XCUDA_GSIDE_DEV;
		w->src.ptr = (uintptr_t)mine;
		w->src.pitch = sizeof(mine);
		w->dst.where = XCUDA_GSIDE_ARENA;
		w->dst.ptr = 0;
		w->kind = cudaMemcpyHostToDevice;
		expect("worker memory as a copy's host source", add(g,
		       XCUDA_GN_MEMCPY, GP), cudaErrorInvalidValue);
	}
	xd_htab_del(&A.s.objects[XD_H_ARRAY], arr);
	xd_htab_del(&A.s.objects[XD_H_ARRAY], other);
	unplant(&A);
	unplant(&B);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	xd_log_setup(XD_LOG_ERROR, 0);
	open_side(&A);
	open_side(&B);
	test_other_session();
	test_destroyed_graph();
	test_counts();
	test_params();
	test_dot();
	test_user_objects();
	test_host_tokens();
	test_host_set();
	test_attributes();
	test_arrays();
	xd_session_fini(&A.s);
	xd_session_fini(&B.s);
	free(A.chan.arena);
	free(B.chan.arena);
	return check_summary();
}
