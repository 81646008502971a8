// SPDX-License-Identifier: MIT
/*
 * Graph copies over the upstream link, the server's side (graph_remote.h,
 * xcuda/upstream.h).  A graph's copies run at each GRAPH_LAUNCH, with the
 * arena copy of this worker as host memory: the guest's bytes are here
 * only where the relay brought them, and what the device writes here must
 * go back.  So, for each executable graph of a relayed session, the worker
 * keeps the parameters of its memcpy nodes (child graphs and conditional
 * bodies included), and whenever a request makes or changes the exec it
 * works out the host sides that lie in the arena:
 *
 *  - in: the sources, which the relay sends before each launch (a PUT
 *    frame), announced to it with graph_ext before the request's answer;
 *  - out: the destinations, noted after each launch as a posted copy's
 *    (note_out), so they reach the guest with the next synchronous answer.
 *
 * A destination that may not be written at a launch (in a conditional
 * body, or one whose width depends on a CUDA array) is read too, so that
 * what goes back is at worst the guest's own bytes.  Disabled nodes copy
 * nothing.  An exec whose copies cannot be described (more spans than a
 * frame carries, a conditional body we cannot see) has its launches
 * refused with cudaErrorNotSupported.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "xcuda/upstream.h"
#include "graph_remote.h"
#include "log.h"
#include "ops.h"
#include "up_graph.h"

/* Child graphs within child graphs; memcpy nodes an exec may have. */
#define XD_RG_DEPTH	16
#define XD_RG_NODES	(4 * XCUDA_UP_GEXT_MAX)

struct xd_rg_node {
	/* The node, and the same node as an update's graph has it. */
	cudaGraphNode_t node, alias;
	/* The exec's top-level node it is in (itself at the top). */
	cudaGraphNode_t top, top_alias;
	int enabled;
	int uncertain;		/* it may not run: its destination is read */
	struct cudaMemcpy3DParms cp;
	/* With an array: its element's bytes, asked while it surely lives. */
	uint64_t elem;
};

struct xd_rg_exec {
	uint32_t h;
	int bad;		/* its copies cannot be described */
	unsigned int announced;	/* spans the relay holds for it */
	struct xd_rg_node *v;
	unsigned int n, cap;
	struct xd_up_span *out;	/* nout of them */
	unsigned int nout;
};

struct xd_rgraph {
	struct xd_rg_exec *v;
	unsigned int n, cap;
	unsigned int total;	/* spans announced, all execs */
	/* Scratch, XCUDA_UP_GEXT_MAX each: an exec's in and out spans. */
	struct xd_up_span *in, *out;
};

static struct xd_rgraph *xd_rg(struct xd_session *s)
{
	if (!s->rgraph) {
		s->rgraph = calloc(1, sizeof(*s->rgraph));
		if (s->rgraph) {
			s->rgraph->in = malloc(XCUDA_UP_GEXT_MAX *
					       sizeof(*s->rgraph->in));
			s->rgraph->out = malloc(XCUDA_UP_GEXT_MAX *
						sizeof(*s->rgraph->out));
		}
		if (s->rgraph && (!s->rgraph->in || !s->rgraph->out)) {
			free(s->rgraph->in);
			free(s->rgraph->out);
			free(s->rgraph);
			s->rgraph = NULL;
		}
	}
	return s->rgraph;
}

static struct xd_rg_exec *xd_rg_find(struct xd_session *s, uint32_t h)
{
	unsigned int i;

	for (i = 0; s->rgraph && i < s->rgraph->n; i++)
		if (s->rgraph->v[i].h == h)
			return &s->rgraph->v[i];
	return NULL;
}

static int xd_rg_push(struct xd_rg_exec *x, const struct xd_rg_node *n)
{
	if (x->n == x->cap) {
		unsigned int cap = x->cap ? x->cap * 2 : 8;
		struct xd_rg_node *v;

		if (x->n >= XD_RG_NODES)
			return -E2BIG;
		v = realloc(x->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		x->v = v;
		x->cap = cap;
	}
	x->v[x->n++] = *n;
	return 0;
}

/* Bytes an element of @arr takes; 0 when unknown. */
static uint64_t xd_rg_elem(cudaArray_const_t arr)
{
	struct cudaChannelFormatDesc d;

	if (cudaArrayGetInfo(&d, NULL, NULL, (cudaArray_t)arr)) {
		cudaGetLastError();
		return 0;
	}
	if (d.x < 0 || d.y < 0 || d.z < 0 || d.w < 0)
		return 0;
	return ((uint64_t)d.x + d.y + d.z + d.w) / 8;
}

/* The element size a copy's width counts, 1 without an array; 0: unknown. */
static uint64_t xd_rg_elem_of(const struct cudaMemcpy3DParms *cp)
{
	/* No array, or two: no host side counts elements. */
	if (!cp->srcArray == !cp->dstArray)
		return 1;
	return xd_rg_elem(cp->srcArray ? cp->srcArray : cp->dstArray);
}

static int xd_rg_walk(struct xd_session *s, struct xd_rg_exec *x,
		      cudaGraph_t g, cudaGraphNode_t top, int uncertain,
		      int depth);

/* A conditional node's bodies: the graphs the session lent for it. */
static int xd_rg_bodies(struct xd_session *s, struct xd_rg_exec *x,
			cudaGraphNode_t n, cudaGraphNode_t top, int depth)
{
	struct xd_htab *nodes = &s->objects[XD_H_NODE];
	struct xd_htab *graphs = &s->objects[XD_H_GRAPH];
	struct xd_hent *e;
	uint32_t nh, gh;
	int err;

	for (nh = 0; (nh = xd_htab_next(nodes, nh));)
		if (xd_htab_get(nodes, nh)->ptr == n)
			break;
	/* A clone's, say: bodies no handle names, which we cannot see. */
	if (!nh)
		return -ENOENT;
	for (gh = 0; (gh = xd_htab_next(graphs, gh));) {
		e = xd_htab_get(graphs, gh);
		if (!e->borrowed || e->owner != nh)
			continue;
		err = xd_rg_walk(s, x, e->ptr, top, 1, depth + 1);
		if (err)
			return err;
	}
	return 0;
}

/* Adds graph @g's memcpy nodes, those of its child graphs, bodies. */
static int xd_rg_walk(struct xd_session *s, struct xd_rg_exec *x,
		      cudaGraph_t g, cudaGraphNode_t top, int uncertain,
		      int depth)
{
	cudaGraphNode_t *v = NULL, child_top;
	enum cudaGraphNodeType type;
	struct xd_rg_node rn;
	cudaGraph_t child;
	size_t cnt = 0, i;
	int err = 0;

	if (depth > XD_RG_DEPTH)
		return -E2BIG;
	if (cudaGraphGetNodes(g, NULL, &cnt)) {
		cudaGetLastError();
		return -EINVAL;
	}
	if (!cnt)
		return 0;
	v = calloc(cnt, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (cudaGraphGetNodes(g, v, &cnt))
		err = -EINVAL;
	for (i = 0; i < cnt && !err; i++) {
		child_top = top ? top : v[i];
		if (cudaGraphNodeGetType(v[i], &type)) {
			err = -EINVAL;
			break;
		}
		switch (type) {
		case cudaGraphNodeTypeMemcpy:
			memset(&rn, 0, sizeof(rn));
			rn.node = v[i];
			rn.top = child_top;
			rn.enabled = 1;
			rn.uncertain = uncertain;
			if (cudaGraphMemcpyNodeGetParams(v[i], &rn.cp))
				err = -EINVAL;
			rn.elem = err ? 0 : xd_rg_elem_of(&rn.cp);
			if (!err)
				err = xd_rg_push(x, &rn);
			break;
		case cudaGraphNodeTypeGraph:
			if (cudaGraphChildGraphNodeGetGraph(v[i], &child))
				err = -EINVAL;
			else
				err = xd_rg_walk(s, x, child, child_top,
						 uncertain, depth + 1);
			break;
		case cudaGraphNodeTypeConditional:
			err = xd_rg_bodies(s, x, v[i], child_top, depth);
			break;
		default:
			break;
		}
	}
	if (err == -EINVAL)
		cudaGetLastError();
	free(v);
	return err;
}

static int xd_rg_side(struct xd_session *s, const struct cudaPitchedPtr *pp,
		      const struct cudaPos *pos, uint64_t width,
		      const struct cudaExtent *ext, struct xd_up_span *v,
		      unsigned int *n)
{
	int64_t off = xd_arena_off(s, pp->ptr);
	struct xd_up_gside sd;

	if (off < 0)
		return 0;
	sd = (struct xd_up_gside){ (uint64_t)off, pp->pitch, pp->ysize,
				   { pos->x, pos->y, pos->z } };
	return xd_up_gside_spans(&sd, width, ext->height, ext->depth,
				 s->chan->arena_size, v, n,
				 XCUDA_UP_GEXT_MAX);
}

/* The exec's spans now: in (into @in) and out (into @out). */
static int xd_rg_spans(struct xd_session *s, struct xd_rg_exec *x,
		       struct xd_up_span *in, unsigned int *nin,
		       struct xd_up_span *out, unsigned int *nout)
{
	unsigned int i;
	uint64_t width;
	int err = 0, both;

	*nin = *nout = 0;
	for (i = 0; i < x->n && !err; i++) {
		struct xd_rg_node *rn = &x->v[i];
		const struct cudaMemcpy3DParms *cp = &rn->cp;

		if (!rn->enabled)
			continue;
		/* With an array, the width counts its elements. */
		if (!rn->elem &&
		    xd_arena_off(s, cp->srcArray ? cp->dstPtr.ptr :
				 cp->srcPtr.ptr) < 0)
			continue;	/* no host side here */
		if (!rn->elem || __builtin_mul_overflow(cp->extent.width,
							rn->elem, &width))
			return -EINVAL;
		both = rn->uncertain || cp->srcArray || cp->dstArray;
		if (!cp->srcArray)
			err = xd_rg_side(s, &cp->srcPtr, &cp->srcPos, width,
					 &cp->extent, in, nin);
		if (!err && !cp->dstArray)
			err = xd_rg_side(s, &cp->dstPtr, &cp->dstPos, width,
					 &cp->extent, out, nout);
		if (!err && !cp->dstArray && both)
			err = xd_rg_side(s, &cp->dstPtr, &cp->dstPos, width,
					 &cp->extent, in, nin);
	}
	return err;
}

static const char *xd_rg_why(int err)
{
	switch (err) {
	case -E2BIG:
		return "more extents than the link carries";
	case -ENOENT:
		return "a node or a conditional body the session does not "
		       "name";
	case -ENOMEM:
		return "out of memory";
	default:
		return "a copy not within the arena, or a graph CUDA would "
		       "not list";
	}
}

/* Works out @x's spans again and tells the relay what changed. */
static void xd_rg_update(struct xd_session *s, struct xd_rg_exec *x,
			 int walk_err)
{
	struct xd_rgraph *rg = s->rgraph;
	cudaGraphExec_t ge = xd_object_get(&s->objects[XD_H_GRAPHEXEC], x->h);
	unsigned int nin = 0, nout = 0;
	struct xd_up_span *o;
	int err = walk_err;

	if (!err && !ge)
		err = -EINVAL;
	if (!err && !x->bad)
		err = xd_rg_spans(s, x, rg->in, &nin, rg->out, &nout);
	/* The exec keeps its out spans, as many as it has. */
	if (!err && !x->bad && nout != x->nout) {
		o = nout ? realloc(x->out, nout * sizeof(*o)) : NULL;
		if (nout && !o) {
			err = -ENOMEM;
		} else {
			if (!nout)
				free(x->out);
			x->out = o;
		}
	}
	if (!err && !x->bad) {
		x->nout = nout;
		if (nout)
			memcpy(x->out, rg->out, nout * sizeof(*o));
	}
	if (!err && !x->bad && nin > XCUDA_UP_GEXT_TOTAL - (rg->total -
							     x->announced))
		err = -E2BIG;
	if (err || x->bad) {
		if (!x->bad)
			xd_log_ratelimited(XD_LOG_WARN, "executable graph %u: "
					   "its copies to and from host memory "
					   "cannot go over the upstream link "
					   "(%s): its launches fail",
					   x->h, xd_rg_why(err));
		x->bad = 1;
		x->nout = 0;
		nin = 0;
	}
	if (!nin && !x->announced)
		return;
	rg->total -= x->announced;
	x->announced = 0;
	if (s->chan->ops->graph_ext &&
	    !s->chan->ops->graph_ext(s->chan, x->h, rg->in, nin)) {
		x->announced = nin;
		rg->total += nin;
	}
}

static void xd_rg_forget(struct xd_session *s, uint32_t h)
{
	struct xd_rg_exec *x = xd_rg_find(s, h);

	if (!x)
		return;
	if (x->announced) {
		s->rgraph->total -= x->announced;
		if (s->chan->ops->graph_ext)
			(void)s->chan->ops->graph_ext(s->chan, h, NULL, 0);
	}
	free(x->v);
	free(x->out);
	*x = s->rgraph->v[--s->rgraph->n];
}

/* A new exec @h, made from graph @gh. */
static void xd_rg_made(struct xd_session *s, uint32_t h, uint32_t gh)
{
	cudaGraph_t g = xd_object_get(&s->objects[XD_H_GRAPH], gh);
	struct xd_rgraph *rg;
	struct xd_rg_exec *x;

	xd_rg_forget(s, h);
	rg = xd_rg(s);
	if (!rg)
		return;
	if (rg->n == rg->cap) {
		unsigned int cap = rg->cap ? rg->cap * 2 : 8;
		struct xd_rg_exec *v = realloc(rg->v, cap * sizeof(*v));

		/* Untracked, its launches are refused (xd_rgraph_before). */
		if (!v)
			return;
		rg->v = v;
		rg->cap = cap;
	}
	x = &rg->v[rg->n++];
	memset(x, 0, sizeof(*x));
	x->h = h;
	xd_rg_update(s, x, g ? xd_rg_walk(s, x, g, NULL, 0, 0) : -EINVAL);
}

/* Exec @h was updated from graph @gh: the same nodes, new parameters. */
static void xd_rg_updated(struct xd_session *s, uint32_t h, uint32_t gh)
{
	cudaGraph_t g = xd_object_get(&s->objects[XD_H_GRAPH], gh);
	struct xd_rg_exec *x = xd_rg_find(s, h), y;
	unsigned int i;
	int err;

	if (!x || !g)
		return;
	memset(&y, 0, sizeof(y));
	err = xd_rg_walk(s, &y, g, NULL, 0, 0);
	/*
	 * Nodes pair up in order (the topology is the same): CUDA names
	 * them by the graph instantiated from still, and an update changes
	 * parameters, not whether a node is enabled.
	 */
	if (!err && y.n == x->n) {
		for (i = 0; i < y.n; i++) {
			y.v[i].alias = y.v[i].node;
			y.v[i].top_alias = y.v[i].top;
			y.v[i].node = x->v[i].node;
			y.v[i].top = x->v[i].top;
			y.v[i].enabled = x->v[i].enabled;
		}
	}
	free(x->v);
	x->v = y.v;
	x->n = y.n;
	x->cap = y.cap;
	x->bad = 0;
	xd_rg_update(s, x, err);
}

static int xd_rg_is(const struct xd_rg_node *rn, cudaGraphNode_t n)
{
	return rn->node == n || (rn->alias && rn->alias == n);
}

void xd_rgraph_node_set(struct xd_session *s, uint32_t exec,
			cudaGraphNode_t node,
			const struct cudaMemcpy3DParms *cp, cudaGraph_t child)
{
	struct xd_rg_exec *x;
	unsigned int i, j;
	int err = 0, found = 0;

	if (!(s->chan->flags & XD_CHAN_REMOTE))
		return;
	x = xd_rg_find(s, exec);
	if (!x)
		return;
	if (cp) {
		for (i = 0; i < x->n; i++) {
			if (xd_rg_is(&x->v[i], node)) {
				x->v[i].cp = *cp;
				x->v[i].elem = xd_rg_elem_of(cp);
				found = 1;
			}
		}
		/* A node we did not find: we cannot say what it copies. */
		xd_rg_update(s, x, found ? 0 : -ENOENT);
		return;
	}
	if (!child)
		return;
	/* The child node's copies are the new graph's now. */
	for (i = j = 0; i < x->n; i++) {
		if (x->v[i].top == node || (x->v[i].top_alias &&
					    x->v[i].top_alias == node))
			continue;
		x->v[j++] = x->v[i];
	}
	x->n = j;
	err = xd_rg_walk(s, x, child, node, 0, 1);
	xd_rg_update(s, x, err);
}

int xd_rgraph_before(struct xd_session *s, const struct xcuda_request *req)
{
	struct xcuda_graph_launch_args a;
	struct xd_rg_exec *x;

	if (req->hdr.op != XCUDA_OP_GRAPH_LAUNCH)
		return 0;
	memcpy(&a, req->args, sizeof(a));
	x = xd_rg_find(s, a.graphExec);
	/* Not an exec (its handler says so), or one whose copies we know. */
	if (x ? !x->bad :
	    !xd_object_get(&s->objects[XD_H_GRAPHEXEC], a.graphExec))
		return 0;
	xd_log_ratelimited(XD_LOG_WARN, "executable graph %u: its copies to "
			   "and from host memory are not supported over the "
			   "upstream link", a.graphExec);
	return cudaErrorNotSupported;
}

/* After a launch: its copies' destinations are a posted copy's. */
static void xd_rg_launched(struct xd_session *s,
			   const struct xcuda_graph_launch_args *a)
{
	enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
	struct xd_rg_exec *x = xd_rg_find(s, a->graphExec);
	cudaStream_t st;
	unsigned int i;

	if (!x || !x->nout)
		return;
	/* Launched into a capture, it runs with the graph captured. */
	if (xd_stream_lookup(&s->streams, a->stream, &st))
		return;
	if (st && st != cudaStreamLegacy &&
	    !cudaStreamIsCapturing(st, &cs) &&
	    cs != cudaStreamCaptureStatusNone)
		return;
	cudaGetLastError();
	for (i = 0; i < x->nout; i++)
		xd_arena_wrote(s, x->out[i].off, x->out[i].width,
			       x->out[i].pitch, x->out[i].rows);
}

void xd_rgraph_after(struct xd_session *s, const struct xcuda_request *req,
		     int status, const void *res)
{
	const void *args = req->args;

	if (status)
		return;
	switch (req->hdr.op) {
	case XCUDA_OP_GRAPH_INSTANTIATE: {
		const struct xcuda_graph_instantiate_args *a = args;
		const struct xcuda_graph_instantiate_res *r = res;

		xd_rg_made(s, r->pGraphExec, a->graph);
		break;
	}
	case XCUDA_OP_GRAPH_INSTANTIATE_WITH_FLAGS: {
		const struct xcuda_graph_instantiate_with_flags_args *a = args;
		const struct xcuda_graph_instantiate_with_flags_res *r = res;

		xd_rg_made(s, r->pGraphExec, a->graph);
		break;
	}
	case XCUDA_OP_GRAPH_INSTANTIATE_WITH_PARAMS: {
		const struct xcuda_graph_instantiate_with_params_args *a = args;
		const struct xcuda_graph_instantiate_with_params_res *r = res;

		if (!r->status && r->exec)
			xd_rg_made(s, r->exec, a->graph);
		break;
	}
	case XCUDA_OP_GRAPH_EXEC_UPDATE: {
		const struct xcuda_graph_exec_update_args *a = args;
		const struct xcuda_graph_exec_update_res *r = res;

		if (!r->status)
			xd_rg_updated(s, a->exec, a->graph);
		break;
	}
	case XCUDA_OP_GRAPH_EXEC_DESTROY: {
		const struct xcuda_graph_exec_destroy_args *a = args;

		xd_rg_forget(s, a->graphExec);
		break;
	}
	case XCUDA_OP_EXEC_CHILD_NODE_SET_GRAPH: {
		const struct xcuda_exec_child_node_set_graph_args *a = args;

		xd_rgraph_node_set(s, a->hGraphExec,
				   xd_object_get(&s->objects[XD_H_NODE],
						 a->node), NULL,
				   xd_object_get(&s->objects[XD_H_GRAPH],
						 a->childGraph));
		break;
	}
	case XCUDA_OP_GRAPH_NODE_SET_ENABLED: {
		const struct xcuda_graph_node_set_enabled_args *a = args;
		struct xd_rg_exec *x = xd_rg_find(s, a->hGraphExec);
		cudaGraphNode_t n = xd_object_get(&s->objects[XD_H_NODE],
						  a->hNode);
		unsigned int i;

		/*
		 * Kept here, not asked of CUDA: the graph the exec was made
		 * from, whose nodes CUDA would want, may be gone by now.
		 */
		for (i = 0; x && n && i < x->n; i++)
			if (xd_rg_is(&x->v[i], n) &&
			    (x->v[i].top == x->v[i].node))
				x->v[i].enabled = !!a->isEnabled;
		if (x)
			xd_rg_update(s, x, 0);
		break;
	}
	case XCUDA_OP_GRAPH_LAUNCH:
		xd_rg_launched(s, args);
		break;
	default:
		break;
	}
}

static void xd_rgraph_fini(struct xd_session *s)
{
	unsigned int i;

	if (!s->rgraph)
		return;
	for (i = 0; i < s->rgraph->n; i++) {
		free(s->rgraph->v[i].v);
		free(s->rgraph->v[i].out);
	}
	free(s->rgraph->v);
	free(s->rgraph->in);
	free(s->rgraph->out);
	free(s->rgraph);
	s->rgraph = NULL;
}

XD_SESSION_HOOKS(rgraph, 20, NULL, xd_rgraph_fini);
