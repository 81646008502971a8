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
#include "xcuda/hash.h"
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

/*
 * Every opcode whose name starts with @prefix but @skip, with arguments
 * of all @fill bytes: each answer must be one of the @n codes @ok (when
 * @ok is NULL, anything but a crash).  The opcodes sent.
 */
static inline unsigned int sweep_opcodes(struct xd_session *s,
					 const char *prefix, int skip,
					 int fill, const int *ok, int n)
{
	uint8_t args[XCUDA_REQ_INLINE];
	const struct xcuda_call_info *d;
	unsigned int op, sent = 0;
	int err, i;

	memset(args, fill, sizeof(args));
	for (op = 0; op < XCUDA_OP_MAX; op++) {
		d = xcuda_call((uint16_t)op);
		if (!d || strncmp(d->name, prefix, strlen(prefix)) ||
		    (int)op == skip)
			continue;
		sent++;
		err = call(s, (uint16_t)op, args, d->args_size, 0, 0);
		for (i = 0; ok && i < n && err != ok[i]; i++)
			;
		if (ok && i == n)
			CHECK_WHY("%s answered %d", d->name, err);
	}
	return sent;
}

/* @s on @c still answers: an ECHO of 4 KiB, checksummed. */
static inline void check_alive(struct xd_session *s, struct xd_chan *c)
{
	struct xcuda_echo_args e = { 0x3c3c, 0, 0, 0 };
	struct xcuda_echo_res r = { 0, 0 };
	uint64_t want;
	uint32_t i;
	int err;

	for (i = 0; i < 4096; i++)
		c->arena[i] = (uint8_t)(i * 13 + 1);
	want = xcuda_fnv1a64(0x3c3c, c->arena, 4096);
	err = call_res(s, XCUDA_OP_ECHO, &e, sizeof(e), 0, 4096, &r,
		       sizeof(r));
	CHECK_MSG(!err && r.checksum == want && r.bytes == 4096,
		  "the session still answers an ECHO",
		  "status %d sum %llx want %llx bytes %llu", err,
		  (unsigned long long)r.checksum, (unsigned long long)want,
		  (unsigned long long)r.bytes);
}

#endif /* XCUDA_TEST_WORKER_HARNESS_H */
