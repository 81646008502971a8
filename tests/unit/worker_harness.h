/* SPDX-License-Identifier: MIT */
/*
 * Shared by the tests that drive a worker's sessions in-process: requests
 * go straight to xd_handle(); open_session() gives a session an arena of
 * ARENA bytes (the test's own, else 1 MiB) on the heap.  Each test is
 * one translation unit; not every one uses every helper.
 */
#ifndef XCUDA_TEST_WORKER_HARNESS_H
#define XCUDA_TEST_WORKER_HARNESS_H

#include <stdlib.h>
#include <string.h>

#include "xcuda/calls.h"
#include "dom0-daemon/worker.h"
#include "check.h"

#ifndef ARENA
#define ARENA		(1u << 20)
#endif

static uint64_t wh_next_id = 1;

/* One request of @s's, up to @res_len bytes of result into @res. */
static inline int call_res(struct xd_session *s, uint16_t op,
			   const void *args, uint16_t len, uint32_t off,
			   uint32_t dlen, void *res, size_t res_len)
{
	struct xcuda_request req;
	struct xcuda_response rsp;

	memset(&req, 0, sizeof(req));
	req.hdr.op = op;
	req.hdr.len = len;
	req.hdr.session = s->id;
	req.hdr.id = wh_next_id++;
	req.hdr.data_off = off;
	req.hdr.data_len = dlen;
	memcpy(req.args, args, len);
	xd_handle(s, &req, &rsp);
	if (res)
		memcpy(res, rsp.out, res_len);
	return rsp.status;
}

/* One request of @s's; the worker's status. */
static inline int call(struct xd_session *s, uint16_t op, const void *args,
		       uint16_t len, uint32_t off, uint32_t dlen)
{
	return call_res(s, op, args, len, off, dlen, NULL, 0);
}

/* A session @id of @domain on @c, opened. */
static inline void open_session(struct xd_session *s, struct xd_chan *c,
				uint32_t id, uint64_t domain)
{
	struct xcuda_open_args a = { XCUDA_PROTO_VERSION, 0, ARENA, 0 };

	c->arena = calloc(1, ARENA);
	c->arena_size = ARENA;
	c->session = id;
	c->domain = domain;
	REQUIRE_MSG(c->arena && !xd_session_init(s, c), "setup",
		    "out of memory");
	CHECK_EQ(call(s, XCUDA_OP_OPEN, &a, sizeof(a), 0, 0), 0, "open");
}

#endif /* XCUDA_TEST_WORKER_HARNESS_H */
