/* SPDX-License-Identifier: MIT */
/*
 * xcuda wire protocol: the request/response slots of the xcuda I/O ring and
 * the fixed argument layout of every command.
 *
 * This header is shared by the guest library, xcuda-front.ko, xcuda-back.ko
 * and xcudad, so it compiles both in the kernel and in user space.  The ring
 * itself comes from Xen's public ring.h (DEFINE_RING_TYPES); it is included,
 * never copied.
 *
 * All fields are little-endian, naturally aligned, and fixed-size: a struct
 * here never contains a pointer or a size_t.  Bulk bytes never ride in the
 * ring; they live in the session's arena, which requests address by offset
 * and length.  See docs/protocol.md.
 */
#ifndef XCUDA_PROTO_H
#define XCUDA_PROTO_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/stddef.h>
#include <xen/interface/io/ring.h>
#else
#include <stddef.h>
#include <stdint.h>
/*
 * Xen's ring.h leaves the barriers to its includer in user space, but only
 * from interface 3.2.8 on: below that (the default when nobody asks for a
 * version) it maps them onto mb()/rmb()/wmb(), which user space lacks.
 */
#ifndef __XEN_INTERFACE_VERSION__
#define __XEN_INTERFACE_VERSION__ 0x00030208
#elif __XEN_INTERFACE_VERSION__ < 0x00030208
#error "include xcuda/proto.h before other Xen headers"
#endif
#ifndef xen_mb
#define xen_mb()  __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define xen_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define xen_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)
#endif
#include <xen/io/ring.h>
#endif

/*
 * Version 2: the command layouts generated from the call description
 * (spec/), which replaced version 1's.  An end speaks every version from
 * XCUDA_PROTO_MIN_VERSION to XCUDA_PROTO_VERSION.
 */
#define XCUDA_PROTO_VERSION	2
#define XCUDA_PROTO_MIN_VERSION	2

/* Feature bits negotiated by XCUDA_OP_OPEN: the answer is the intersection. */
#define XCUDA_FEAT_POSTED	(1u << 0)	/* posted (fire-and-forget) calls */
#define XCUDA_FEAT_PINNED_ARENA	(1u << 1)	/* worker pins arena extents */
#define XCUDA_FEAT_ECHO		(1u << 2)	/* diagnostic echo/checksum */
#define XCUDA_FEAT_SAME_VA	(1u << 3)	/* worker maps the arena at the
						 * guest's address */
#define XCUDA_FEATURES_ALL	(XCUDA_FEAT_POSTED | XCUDA_FEAT_PINNED_ARENA | \
				 XCUDA_FEAT_ECHO | XCUDA_FEAT_SAME_VA)

/* Request flags. */
#define XCUDA_RF_POSTED		(1u << 0)	/* sender will not wait for it */

/* Limits that both ends enforce. */
#define XCUDA_REQ_INLINE	224	/* inline argument bytes per request */
#define XCUDA_RSP_INLINE	40	/* inline result bytes per response */
#define XCUDA_NAME_MAX		1024	/* symbol names, including the NUL */
#define XCUDA_MAX_PARAMS	1024	/* kernel parameters reported */
#define XCUDA_MAX_ARGS_BYTES	32768	/* packed kernel argument bytes */
#define XCUDA_MAX_MODULE	(256u << 20)	/* one fatbinary */
#define XCUDA_MAX_HANDLES	4096	/* streams, events, modules, functions */
#define XCUDA_MAX_DEVICES	64

/*
 * Handles.  Streams, events, modules and kernels are named on the wire by
 * small integers that index the worker's per-session tables, never by
 * Dom0 pointers.  Stream handle 0 is the legacy default stream, 1 and 2
 * keep CUDA's cudaStreamLegacy and cudaStreamPerThread meanings.
 */
#define XCUDA_STREAM_LEGACY	1u
#define XCUDA_STREAM_PER_THREAD	2u
#define XCUDA_HANDLE_FIRST	16u	/* first handle a table hands out */

struct xcuda_req_hdr {
	uint16_t op;		/* XCUDA_OP_* */
	uint16_t flags;		/* XCUDA_RF_* */
	uint16_t device;	/* the calling thread's current device */
	uint16_t len;		/* argument bytes used in args[] */
	uint32_t session;	/* from XCUDA_OP_OPEN's answer */
	uint32_t rsvd;		/* must be zero */
	uint64_t id;		/* echoed in the response */
	uint32_t data_off;	/* arena extent of the command's blob */
	uint32_t data_len;
};

struct xcuda_request {
	struct xcuda_req_hdr hdr;
	uint8_t args[XCUDA_REQ_INLINE];
};

struct xcuda_response {
	uint64_t id;		/* the request's id */
	uint16_t op;		/* the request's op */
	uint16_t flags;		/* the request's flags */
	int32_t status;		/* a cudaError_t value, 0 for success */
	uint32_t len;		/* result bytes used in out[] */
	uint32_t rsvd;
	uint8_t out[XCUDA_RSP_INLINE];
};

/*
 * Response flags, added to the request's flags in an answer.  Request
 * flags take bits from 0 up, these from 15 down (15 was the `xen`
 * transport's GONE in its version 1; unused since).
 * OUTPUT: the worker holds device output (kernel printf, assert messages)
 * that the guest has not taken yet; OUTPUT_TAKE fetches it.
 */
#define XCUDA_RSPF_OUTPUT	(1u << 14)

DEFINE_RING_TYPES(xcuda, struct xcuda_request, struct xcuda_response);

/* Ring pages: one order per end, as in Xen's multi-page ring protocols. */
#define XCUDA_PAGE_SIZE		4096u
#define XCUDA_MAX_RING_ORDER	4
#define XCUDA_RING_SIZE(order) \
	__CONST_RING_SIZE(xcuda, XCUDA_PAGE_SIZE << (order))

/* True if [off, off + len) lies inside an arena of @size bytes. */
static inline int xcuda_extent_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* ------------------------------------------------------------------ */
/*
 * The commands themselves (opcodes, argument and result layouts) are
 * described in the .calls files of spec/; tools/gen-calls.py turns them
 * into xcuda/calls.h, which user space includes.  What follows are the
 * constants and pieces those layouts share.
 */

/*
 * An arena extent named in a command's arguments.  len 0 stands for a
 * NULL pointer (off is then 0 too); the receiver checks every extent
 * against the arena before use and copies what it reads.
 */
struct xcuda_extent {
	uint32_t off;
	uint32_t len;
};

/* Copy directions on the wire: the host side is always an arena offset. */
enum xcuda_copy_dir {
	XCUDA_COPY_H2D = 1,	/* src is an arena offset */
	XCUDA_COPY_D2H = 2,	/* dst is an arena offset */
	XCUDA_COPY_D2D = 3,
};

#define XCUDA_COPY_ASYNC	(1u << 0)	/* stream-ordered, no host sync */
/*
 * The host side is a staging block that the guest reuses as soon as the
 * answer arrives: the worker answers only once the copy has completed.
 */
#define XCUDA_COPY_STAGED	(1u << 1)
/* ARRAY_COPY: a pointer side is an arena offset, not a device address. */
#define XCUDA_COPY_SRC_ARENA	(1u << 2)
#define XCUDA_COPY_DST_ARENA	(1u << 3)

/* ARRAY_COPY: the CUDA call the worker makes. */
enum xcuda_array_copy_fn {
	XCUDA_AC_3D = 1,		/* cudaMemcpy3D(Async) */
	XCUDA_AC_2D_TO_ARRAY = 2,	/* cudaMemcpy2DToArray(Async) */
	XCUDA_AC_2D_FROM_ARRAY = 3,	/* cudaMemcpy2DFromArray(Async) */
	XCUDA_AC_2D_ARRAY_TO_ARRAY = 4,	/* cudaMemcpy2DArrayToArray */
	XCUDA_AC_TO_ARRAY = 5,		/* cudaMemcpyToArray(Async) */
	XCUDA_AC_FROM_ARRAY = 6,	/* cudaMemcpyFromArray(Async) */
	XCUDA_AC_ARRAY_TO_ARRAY = 7,	/* cudaMemcpyArrayToArray */
	XCUDA_AC_3D_PEER = 8,		/* cudaMemcpy3DPeer(Async) */
};

/*
 * Fatbinaries travel in pieces of at most the data extent: MODULE_DATA
 * appends, the last piece carries XCUDA_MOD_LAST and loads the module.
 */
#define XCUDA_MOD_FIRST		(1u << 0)
#define XCUDA_MOD_LAST		(1u << 1)

/* VAR_GET: a __managed__ variable only (cudaLibraryGetManaged). */
#define XCUDA_VAR_MANAGED	(1u << 0)

/* FUNC_GET writes XCUDA_MAX_PARAMS at most of these into its extent. */
struct xcuda_param {
	uint32_t offset;
	uint32_t size;
};

/* LAUNCH: the bytes before its inline kernel arguments. */
#define XCUDA_LAUNCH_FIXED	40

/* Command flags (spec: "flags"). */
#define XCUDA_CF_POSTABLE	(1u << 0)	/* may be sent posted */
#define XCUDA_CF_CUDA		(1u << 1)	/* needs the CUDA runtime */
#define XCUDA_CF_VARARGS	(1u << 2)	/* args may be shorter (launch) */
/* Another library's call (driver API, cuBLAS, NVML): its own status. */
#define XCUDA_CF_DRIVER		(1u << 3)

/* Use of the header's data extent (spec: "data"). */
enum xcuda_data {
	XCUDA_DATA_NONE = 0,	/* data_off and data_len must be zero */
	XCUDA_DATA_IN,		/* guest wrote it, worker reads it */
	XCUDA_DATA_OUT,		/* worker writes it */
	XCUDA_DATA_INOUT,
	XCUDA_DATA_OPT_IN,	/* optional input (may be empty) */
};

#endif /* XCUDA_PROTO_H */
