/* SPDX-License-Identifier: MIT */
/*
 * The upstream link: a worker whose GPU is on another host.  xcudad
 * started with --upstream HOST:PORT serves its guests' sessions by
 * relaying each one over TCP to the xcudad of a GPU server, started with
 * --listen HOST:PORT; there a worker runs the session's calls on the
 * real GPU as it would for a local guest.  See docs/protocol.md, "The
 * upstream link".
 *
 * One TCP connection per session.  All integers are little-endian.
 *
 * Handshake: both ends hold the same key (--key FILE, at least 32
 * bytes).  Each proves it to the other with HMAC-SHA256 over both
 * nonces, so that neither can be replayed and a server that does not
 * know the key is found out too:
 *
 *   relay  -> server  struct xcuda_up_hello    (nonce_r)
 *   server -> relay   struct xcuda_up_chal     (nonce_s,
 *                     HMAC(key, "xcuda-up server" | nonce_r | nonce_s))
 *   relay  -> server  struct xcuda_up_open     (HMAC(key, "xcuda-up relay"
 *                     | nonce_s | nonce_r), the session's arena size,
 *                     whose guest it is)
 *   server -> relay   struct xcuda_up_welcome  (status, session id)
 *
 * A server that finds a wrong MAC answers the welcome with -EACCES and
 * closes; a relay that finds a wrong MAC closes at once.  The key
 * authenticates the ends; it does not encrypt or sign what follows: run
 * the link on a network the host trusts, or inside a tunnel.
 *
 * Then, relay -> server, one frame per request: struct xcuda_up_req and
 * in_len bytes: the arena bytes the worker will read for it, which both
 * ends list alike from the request alone (dom0-daemon/up_spans.h): the
 * header's data extent and the extents among the arguments (those the
 * worker writes too, since it may write them only in part), the host
 * side of a copy from the arena (MEMCPY, MEMCPY_2D, ARRAY_COPY), each
 * lying within the arena, row by row, in that order.  Server -> relay,
 * one frame per response, in request order: struct xcuda_up_rsp, then
 * nr_out extents, each a struct xcuda_up_ext and its rows, packed: the
 * arena bytes the worker wrote (the same extents, the host side of a
 * copy into the arena), on success only.  The extent of a synchronous
 * command comes with its own answer; that of a posted one (an
 * asynchronous copy into the arena) comes with the next answer to a
 * synchronous command, after the server has waited for the device,
 * which is when the guest may look at it; the server may also send such
 * extents alone, in a frame of XCUDA_UP_DATA_MAGIC whose response is
 * zeros and answers nothing.  Until they are sent the server keeps the
 * bytes the device writes there from the guest's: it drops what a later
 * request brings for them.
 *
 * Graph copies to and from the arena run at each GRAPH_LAUNCH, long
 * after any request named their bytes.  The server works out, whenever
 * a request makes or changes an executable graph, which arena bytes its
 * copies read, and tells the relay before that request's answer in a
 * frame of XCUDA_UP_GEXT_MAGIC: struct xcuda_up_gext and nr
 * descriptions (struct xcuda_up_ext, no bytes); nr 0 drops the exec.
 * Before each GRAPH_LAUNCH of such an exec the relay sends those bytes,
 * as they are in the guest's arena then, in a frame of
 * XCUDA_UP_PUT_MAGIC: struct xcuda_up_put and nr extents with their
 * rows, as in a response.  The server checks that frame alone (it need
 * not agree with the relay's table) and keeps its pending bytes.  What
 * the launch's copies write into the arena is pending, as a posted
 * copy's, until the next synchronous answer.
 *
 * Host functions (docs/protocol.md, "Host functions" and "The upstream
 * link"): the guest's slot area is in its arena, of which the server has
 * only a copy.  A trampoline of the server that publishes a record in
 * the copy also sends it, server -> relay, as a struct xcuda_up_rec and
 * its payload bytes; the relay writes payload, slot (seq last) and then
 * bumps the area's wake word in the guest's arena (and wakes it, on a
 * shared futex).  The relay learns where the area is from the guest's
 * HOSTFN_SETUP and its answer 0.  Before a record the server sends the
 * pending extents (a posted copy into the arena before the function in
 * its stream has landed, and the function may read it), and keeps them
 * pending.  When the guest has stored done = seq, the relay sends, relay
 * -> server, a struct xcuda_up_done and nr_ext extents: the arena bytes
 * that copies from the arena, sent after the function was enqueued, will
 * read, as the function may have written them; the server puts them in
 * its copy (less pending bytes), then stores done in its copy's slot,
 * which releases the trampoline.  Either frame may come between any two
 * others.
 *
 * Mapped page-locked memory (docs/protocol.md, "Mapped memory over the
 * link"): the server maps its copy of the arena at the guest's address
 * where it can (XCUDA_FEAT_SAME_VA), so that a kernel handed the guest's
 * pointer finds the copy.  Both ends keep a shadow of each pinned extent
 * that requests hand to kernels (the relay finds their addresses among
 * the requests' words): before each request the relay sends, relay ->
 * server, the runs in which the guest's bytes differ from the shadow in
 * a frame of XCUDA_UP_XMAP_MAGIC (struct xcuda_up_xmap and nr runs, each
 * a struct xcuda_up_ext of one row and its bytes, within one extent the
 * server pinned); with each synchronous answer the server sends, in data
 * frames before it, the runs in which its copy differs from its shadow.
 * Both ends check every frame as they check a ring's: magic, sizes,
 * extents within the arena.  Anything else ends the session.  A relay
 * that loses the link, or hears nothing for XCUDA_UPSTREAM_TIMEOUT_S
 * (default 30) while requests are outstanding (a busy server sends
 * empty extents frames: alive_ms), answers them
 * cudaErrorDevicesUnavailable and ends the session.
 */
#ifndef XCUDA_UPSTREAM_H
#define XCUDA_UPSTREAM_H

#include <stdint.h>

#include "xcuda/proto.h"

#define XCUDA_UP_MAGIC		0x70756378u	/* "xcup" */
/*
 * 2: the open names the guest; 3: graph copies; 4: host functions;
 * 5: mapped memory (XMAP)
 */
#define XCUDA_UP_VERSION	5
#define XCUDA_UP_NONCE		32
#define XCUDA_UP_MAC		32	/* HMAC-SHA256 */
#define XCUDA_UP_KEY_MIN	32
#define XCUDA_UP_KEY_MAX	1024
#define XCUDA_UP_ORIGIN		16
#define XCUDA_UP_REQ_MAGIC	0x71657278u	/* "xreq" */
#define XCUDA_UP_RSP_MAGIC	0x70737278u	/* "xrsp" */
#define XCUDA_UP_DATA_MAGIC	0x74616478u	/* "xdat": no answer */
#define XCUDA_UP_GEXT_MAGIC	0x78656778u	/* "xgex": server -> relay */
#define XCUDA_UP_PUT_MAGIC	0x74757078u	/* "xput": relay -> server */
#define XCUDA_UP_REC_MAGIC	0x63657278u	/* "xrec": a host fn record */
#define XCUDA_UP_DONE_MAGIC	0x6e6f6478u	/* "xdon": its completion */
#define XCUDA_UP_XMAP_MAGIC	0x70616d78u	/* "xmap": mapped memory */
/* Most payload bytes a record carries. */
#define XCUDA_UP_REC_MAX	65536
/* Most extents one frame carries. */
#define XCUDA_UP_MAX_OUT	4096
/* Most extents one executable graph reads, and a session's execs in all. */
#define XCUDA_UP_GEXT_MAX	XCUDA_UP_MAX_OUT
#define XCUDA_UP_GEXT_TOTAL	65536

struct xcuda_up_hello {
	uint32_t magic;
	uint32_t version;
	uint8_t nonce[XCUDA_UP_NONCE];
};

struct xcuda_up_chal {
	uint32_t magic;
	uint32_t version;
	uint8_t nonce[XCUDA_UP_NONCE];
	uint8_t mac[XCUDA_UP_MAC];
};

struct xcuda_up_open {
	uint8_t mac[XCUDA_UP_MAC];
	uint64_t arena_size;	/* wanted; the server may lower it */
	uint32_t ring_order;	/* the relay's ring (0: not said) */
	/*
	 * While a request runs, the server sends an empty extents frame
	 * this often (ms), so that a busy server is told from a vanished
	 * one; 0: never (the relay waits forever).
	 */
	uint32_t alive_ms;
	/*
	 * Whose guest: the relay's own random id, drawn when it starts, and
	 * its name for the guest's domain (0: none).  The server opens IPC
	 * handles and pool exports only between sessions that name the same
	 * pair, so a guest's processes share them as they would on one host.
	 */
	uint8_t origin[XCUDA_UP_ORIGIN];
	uint64_t domain;
};

struct xcuda_up_welcome {
	int32_t status;		/* 0, or a negative errno: closing */
	uint32_t session;	/* the id the server's worker checks */
	uint64_t arena_size;	/* granted: at most the one asked for */
};

struct xcuda_up_req {
	uint32_t magic;		/* XCUDA_UP_REQ_MAGIC */
	uint32_t in_len;	/* the bytes of the request's in extents */
	struct xcuda_request req;
};

struct xcuda_up_rsp {
	uint32_t magic;		/* XCUDA_UP_RSP_MAGIC, or _DATA_MAGIC */
	uint32_t nr_out;	/* extents that follow, at most MAX_OUT */
	struct xcuda_response rsp;
};

/* rows * width bytes follow, row after row. */
struct xcuda_up_ext {
	uint64_t off;		/* of the first row, in the arena */
	uint64_t width;		/* bytes a row: not 0 */
	uint64_t pitch;		/* row to row: >= width (1 row: any) */
	uint64_t rows;		/* not 0 */
};

/*
 * Server -> relay, before the answer of the request that made or changed
 * executable graph @exec: the arena bytes its copies read at each launch,
 * @nr descriptions (struct xcuda_up_ext alone) that replace those known
 * for @exec; 0 forgets it (destroyed, or nothing to send).
 */
struct xcuda_up_gext {
	uint32_t magic;		/* XCUDA_UP_GEXT_MAGIC */
	uint32_t exec;		/* the exec's handle, as the guest has it */
	uint32_t nr;		/* at most XCUDA_UP_GEXT_MAX */
	uint32_t rsvd;		/* zero */
};

/*
 * Relay -> server, right before a GRAPH_LAUNCH request: @nr extents, each
 * a struct xcuda_up_ext and its rows, as in a response: the guest's bytes
 * now, for the server's arena copy.
 */
struct xcuda_up_put {
	uint32_t magic;		/* XCUDA_UP_PUT_MAGIC */
	uint32_t nr;		/* 1 to XCUDA_UP_GEXT_MAX */
};

/*
 * Relay -> server, before any request: @nr runs of the guest's mapped
 * page-locked memory that changed, each a struct xcuda_up_ext of one row
 * (pitch = width) and its bytes, each within one pinned extent.
 */
struct xcuda_up_xmap {
	uint32_t magic;		/* XCUDA_UP_XMAP_MAGIC */
	uint32_t nr;		/* 1 to XCUDA_UP_MAX_OUT */
};

_Static_assert(sizeof(struct xcuda_up_gext) == 16, "xcuda_up_gext");
_Static_assert(sizeof(struct xcuda_up_xmap) == 8, "xcuda_up_xmap");
_Static_assert(sizeof(struct xcuda_up_put) == 8, "xcuda_up_put");
_Static_assert(sizeof(struct xcuda_up_open) == 72, "xcuda_up_open");

/*
 * Server -> relay: a record the server published in slot @slot of its
 * copy of the slot area (struct xcuda_hostfn_slot, xcuda/hostfn.h), and
 * @plen bytes that follow: the payload, for [poff, poff + plen) of the
 * arena (plen 0: none, poff 0).
 */
struct xcuda_up_rec {
	uint32_t magic;		/* XCUDA_UP_REC_MAGIC */
	uint32_t slot;		/* < XCUDA_HOSTFN_SLOTS */
	uint64_t token;
	uint32_t seq;		/* never 0 */
	int32_t status;
	uint32_t flags;
	uint32_t plen;		/* at most XCUDA_UP_REC_MAX */
	uint64_t arg;
	uint64_t poff;
};

/*
 * Relay -> server: the guest stored @done in slot @slot's done word;
 * @nr_ext extents follow (struct xcuda_up_ext and its rows, as in a
 * response frame): arena bytes to refresh first.
 */
struct xcuda_up_done {
	uint32_t magic;		/* XCUDA_UP_DONE_MAGIC */
	uint32_t slot;		/* < XCUDA_HOSTFN_SLOTS */
	uint32_t done;
	uint32_t nr_ext;	/* at most XCUDA_UP_MAX_OUT */
};

_Static_assert(sizeof(struct xcuda_up_rec) == 48, "xcuda_up_rec");
_Static_assert(sizeof(struct xcuda_up_done) == 16, "xcuda_up_done");
_Static_assert(sizeof(struct xcuda_up_req) == 8 + sizeof(struct xcuda_request),
	       "xcuda_up_req");
_Static_assert(sizeof(struct xcuda_up_rsp) ==
	       8 + sizeof(struct xcuda_response), "xcuda_up_rsp");
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the upstream link's frames are little-endian structures"
#endif

#endif /* XCUDA_UPSTREAM_H */
