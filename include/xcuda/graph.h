/* SPDX-License-Identifier: MIT */
/*
 * Graph node parameters on the wire (spec/cudart-graph-nodes.calls):
 * GRAPH_ADD_NODE, GRAPH_NODE_SET_PARAMS and GRAPH_NODE_GET_PARAMS carry
 * one struct xcuda_gparams in an arena extent, followed by the kernel's
 * packed argument bytes (args_len), the allocation's access descriptors
 * (nacc, 12 bytes each: struct cudaMemAccessDesc) or, in GRAPH_ADD_NODE's
 * answer, the conditional bodies' graph handles (cond_size u32).  Nothing
 * in it is a pointer of either side: kernels, events and graphs are
 * handles, host memory is an arena offset, a host node's function is
 * the guest's token for it.
 */
#ifndef XCUDA_GRAPH_H
#define XCUDA_GRAPH_H

#include <stdint.h>

/* The entry point the program called ("entry" of the node calls). */
enum xcuda_gentry {
	XCUDA_GN_KERNEL = 1,
	XCUDA_GN_MEMCPY,	/* cudaMemcpy3DParms */
	XCUDA_GN_MEMCPY_1D,	/* dst, src, extent[0] bytes, kind */
	XCUDA_GN_MEMSET,
	XCUDA_GN_EVENT_RECORD,
	XCUDA_GN_EVENT_WAIT,
	XCUDA_GN_CHILD,
	XCUDA_GN_EMPTY,
	XCUDA_GN_MEM_ALLOC,
	XCUDA_GN_MEM_FREE,
	XCUDA_GN_GENERIC,	/* cudaGraphAddNode, cudaGraph*NodeSetParams */
	XCUDA_GN_HOST,		/* cudaGraphAddHostNode, its get and set */
};

/* What GRAPH_NODE_LIST lists. */
enum xcuda_glist {
	XCUDA_GL_NODES = 1,
	XCUDA_GL_ROOTS,
	XCUDA_GL_EDGES,
	XCUDA_GL_DEPS,
	XCUDA_GL_DEPENDENTS,
};

/* Where a copy's or a memset's side lies. */
#define XCUDA_GSIDE_DEV		0	/* ptr is a device address */
#define XCUDA_GSIDE_ARENA	1	/* ptr is an arena offset */
/* ptr is a CUDA array's handle (copies): the width is in elements */
#define XCUDA_GSIDE_ARRAY	2

/* One side of a copy (cudaPitchedPtr and cudaPos), or a memset's dst. */
struct xcuda_gside {
	uint64_t ptr;
	uint64_t pitch;
	uint64_t xsize;
	uint64_t ysize;
	uint64_t pos[3];
	uint32_t where;		/* XCUDA_GSIDE_* */
	uint32_t rsvd;
};

struct xcuda_gparams {
	uint32_t type;		/* cudaGraphNodeType */
	uint32_t func;		/* kernel: the kernel's handle */
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t shmem;
	uint32_t args_len;	/* kernel: argument bytes after the struct */
	uint32_t event;		/* event record and wait: its handle */
	uint32_t graph;		/* child graph: the graph's handle */
	uint32_t ownership;	/* child graph: ownership (clone, move) */
	uint32_t kind;		/* memcpy: cudaMemcpyKind */
	uint32_t value;		/* memset */
	uint32_t elem;		/* memset: element size */
	uint32_t cond_type;	/* conditional: IF, WHILE, SWITCH */
	uint32_t cond_size;	/* conditional: body graphs */
	uint64_t cond_handle;	/* conditional: its handle's value */
	struct xcuda_gside src;	/* memcpy */
	struct xcuda_gside dst;	/* memcpy, memset */
	uint64_t extent[3];	/* memcpy: width bytes, height, depth;
				 * memset: width elements, height */
	uint32_t alloc_type;	/* mem alloc: poolProps */
	uint32_t handle_types;
	uint32_t loc_type;
	uint32_t loc_id;
	uint64_t bytesize;	/* mem alloc */
	uint64_t dptr;		/* mem alloc (answer), mem free */
	uint32_t nacc;		/* mem alloc: access descriptors */
	uint32_t rsvd;
	uint64_t token;		/* host node: the guest's host function
				 * (docs/protocol.md, "Host functions") */
};

#define XCUDA_GACC_SIZE		12	/* struct cudaMemAccessDesc */
#define XCUDA_GACC_MAX		64	/* access descriptors a node */
#define XCUDA_GCOND_MAX		64	/* conditional bodies a node */
#define XCUDA_GLIST_MAX		4096	/* entries of one array */
#define XCUDA_GDOT_MAX		(4u << 20)	/* dot text bytes */

#endif /* XCUDA_GRAPH_H */
