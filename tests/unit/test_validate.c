// SPDX-License-Identifier: MIT
/*
 * xd_validate(): every command with a well-formed header passes, and
 * every way a hostile guest can break a header gets the documented error.
 * The expectations come from the generated command table, row by row.
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "dom0-daemon/validate.h"
#include "check.h"

#define SESSION		0x5e55104du
#define ARENA		(64u << 20)

struct row {
	const char *name;
	uint16_t op;
	uint32_t flags;
	uint16_t args;
	uint16_t res;
	int data;
};

/* The rows of the generated command table, filled by main(). */
static struct row rows[XCUDA_OP_MAX];
static size_t NROWS;

static void load_rows(void)
{
	uint16_t op;

	for (op = 1; op < XCUDA_OP_MAX; op++) {
		const struct xcuda_call_info *c = &xcuda_calls[op];

		if (c->name)
			rows[NROWS++] = (struct row){ c->name, op, c->flags,
						      c->args_size,
						      c->res_size, c->data };
	}
}

/* A well-formed request for @r. */
static void good(const struct row *r, struct xcuda_request *req)
{
	memset(req, 0, sizeof(*req));
	req->hdr.op = r->op;
	req->hdr.len = r->args;
	req->hdr.session = SESSION;
	req->hdr.id = 42;
	if (r->data != XCUDA_DATA_NONE && r->data != XCUDA_DATA_OPT_IN) {
		req->hdr.data_off = 4096;
		req->hdr.data_len = 8192;
	}
}

static void expect(const char *what, const struct row *r,
		   const struct xcuda_request *req, uint64_t arena, int opened,
		   int want)
{
	char name[128];
	int got = xd_validate(req, SESSION, arena, opened);

	snprintf(name, sizeof(name), "%s %s", what, r ? r->name : "");
	CHECK_MSG(got == want, name,
		  "op %u len %u extent %u+%u: got %d, want %d", req->hdr.op,
		  req->hdr.len, req->hdr.data_off, req->hdr.data_len, got,
		  want);
}

static int is_known(unsigned int op)
{
	unsigned int i;

	for (i = 0; i < NROWS; i++)
		if (rows[i].op == op)
			return 1;
	return 0;
}

static void test_table(void)
{
	unsigned int i, known = 0, op;
	char name[128];

	for (i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];
		const struct xcuda_call_info *d = xcuda_call(r->op);

		snprintf(name, sizeof(name), "table %s", r->name);
		CHECK_MSG(d && !strcmp(d->name, r->name) &&
			  d->flags == r->flags && d->args_size == r->args &&
			  d->res_size == r->res && d->data == r->data &&
			  xd_result_size(r->op) == r->res &&
			  !strcmp(xd_op_name(r->op), r->name), name,
			  "row does not match the table");
	}
	for (op = 0; op <= 0xffff; op++)
		if (xcuda_call((uint16_t)op))
			known++;
	CHECK_MSG(known == NROWS, "table has exactly its rows",
		  "%u known opcodes, %zu rows", known, NROWS);
	CHECK_MSG(!strcmp(xd_op_name(0), "?") && !xd_result_size(0) &&
		  !xd_result_size(XCUDA_OP_MAX), "table unknown opcode names",
		  "unknown opcodes must read as \"?\" with no result");
}

static void test_good(void)
{
	struct xcuda_request req;
	unsigned int i;

	for (i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];

		good(r, &req);
		expect("good", r, &req, ARENA, 1, 0);
		if (r->flags & XCUDA_CF_POSTABLE) {
			req.hdr.flags = XCUDA_RF_POSTED;
			expect("good posted", r, &req, ARENA, 1, 0);
		}
		if (r->data == XCUDA_DATA_OPT_IN) {
			req.hdr.data_off = 128;
			req.hdr.data_len = 64;
			expect("good with extent", r, &req, ARENA, 1, 0);
		}
		if (r->data != XCUDA_DATA_NONE) {
			/* The whole arena, and its very last byte. */
			good(r, &req);
			req.hdr.data_off = 0;
			req.hdr.data_len = ARENA;
			expect("good whole arena", r, &req, ARENA, 1, 0);
			req.hdr.data_off = ARENA - 1;
			req.hdr.data_len = 1;
			expect("good last byte", r, &req, ARENA, 1, 0);
		}
		good(r, &req);
		req.hdr.device = 7;
		expect("good other device", r, &req, ARENA, 1, 0);
	}
}

static void test_opcodes(void)
{
	static const unsigned int bad[] = { 0, XCUDA_OP_MAX, 0xffff,
					    XCUDA_OP_MAX + 1, 0x8000 };
	struct xcuda_request req;
	unsigned int i, op, gaps = 0;
	char name[64];

	memset(&req, 0, sizeof(req));
	req.hdr.session = SESSION;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		req.hdr.op = (uint16_t)bad[i];
		snprintf(name, sizeof(name), "opcode %#x unknown", bad[i]);
		CHECK_EQ(xd_validate(&req, SESSION, ARENA, 1),
			 cudaErrorNotSupported, name);
	}
	/* Every gap below XCUDA_OP_MAX, before and after OPEN. */
	for (op = 1; op < XCUDA_OP_MAX; op++) {
		if (is_known(op))
			continue;
		req.hdr.op = (uint16_t)op;
		if (xd_validate(&req, SESSION, ARENA, 1) !=
			    cudaErrorNotSupported ||
		    xd_validate(&req, SESSION, ARENA, 0) !=
			    cudaErrorNotSupported) {
			snprintf(name, sizeof(name), "opcode gap %u", op);
			CHECK_MSG(0, name, "not answered NotSupported");
		}
		gaps++;
	}
	CHECK_MSG(gaps > 0, "opcode gaps unknown", "no gap tested");
}

static void test_header(void)
{
	struct xcuda_request req;
	unsigned int i;

	for (i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];

		good(r, &req);
		req.hdr.session = SESSION ^ 1;
		expect("wrong session", r, &req, ARENA, 1,
		       cudaErrorInvalidValue);
		req.hdr.session = 0;
		expect("session 0", r, &req, ARENA, 1, cudaErrorInvalidValue);

		good(r, &req);
		req.hdr.rsvd = 1;
		expect("rsvd set", r, &req, ARENA, 1, cudaErrorInvalidValue);

		good(r, &req);
		req.hdr.flags = 2;
		expect("unknown flag", r, &req, ARENA, 1,
		       cudaErrorInvalidValue);
		req.hdr.flags = 0x8000 | XCUDA_RF_POSTED;
		expect("unknown flag with posted", r, &req, ARENA, 1,
		       cudaErrorInvalidValue);

		if (!(r->flags & XCUDA_CF_POSTABLE)) {
			good(r, &req);
			req.hdr.flags = XCUDA_RF_POSTED;
			expect("posted non-postable", r, &req, ARENA, 1,
			       cudaErrorInvalidValue);
		}

		good(r, &req);
		req.hdr.len = r->args + 1;
		expect("len too long", r, &req, ARENA, 1,
		       cudaErrorInvalidValue);
		req.hdr.len = 0xffff;
		expect("len 0xffff", r, &req, ARENA, 1, cudaErrorInvalidValue);
		if (r->args && !(r->flags & XCUDA_CF_VARARGS)) {
			req.hdr.len = r->args - 1;
			expect("len too short", r, &req, ARENA, 1,
			       cudaErrorInvalidValue);
			req.hdr.len = 0;
			expect("len 0", r, &req, ARENA, 1,
			       cudaErrorInvalidValue);
		}

		if (r->op != XCUDA_OP_OPEN) {
			good(r, &req);
			expect("before OPEN", r, &req, ARENA, 0,
			       cudaErrorInitializationError);
		} else {
			good(r, &req);
			expect("OPEN before OPEN", r, &req, ARENA, 0, 0);
			req.hdr.session = SESSION + 1;
			expect("OPEN with the wrong session", r, &req, ARENA, 0,
			       cudaErrorInvalidValue);
		}
	}
}

static void test_varargs(void)
{
	const size_t min = offsetof(struct xcuda_launch_args, args);
	const struct row *r = NULL;
	struct xcuda_request req;
	unsigned int i;

	for (i = 0; i < NROWS; i++)
		if (rows[i].op == XCUDA_OP_LAUNCH)
			r = &rows[i];
	if (!r) {
		CHECK_MSG(0, "varargs", "no LAUNCH row");
		return;
	}
	good(r, &req);
	req.hdr.len = (uint16_t)min;
	expect("varargs shortest", r, &req, ARENA, 1, 0);
	req.hdr.len = (uint16_t)(min + 1);
	expect("varargs one byte", r, &req, ARENA, 1, 0);
	req.hdr.len = sizeof(struct xcuda_launch_args);
	expect("varargs longest", r, &req, ARENA, 1, 0);
	req.hdr.len = (uint16_t)(min - 1);
	expect("varargs too short", r, &req, ARENA, 1, cudaErrorInvalidValue);
	req.hdr.len = 0;
	expect("varargs len 0", r, &req, ARENA, 1, cudaErrorInvalidValue);
	req.hdr.len = sizeof(struct xcuda_launch_args) + 1;
	expect("varargs too long", r, &req, ARENA, 1, cudaErrorInvalidValue);
}

static void test_extents(void)
{
	struct xcuda_request req;
	unsigned int i;

	for (i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];

		good(r, &req);
		if (r->data == XCUDA_DATA_NONE) {
			req.hdr.data_len = 16;
			expect("extent for NONE", r, &req, ARENA, 1,
			       cudaErrorInvalidValue);
			req.hdr.data_len = 0;
			req.hdr.data_off = 16;
			expect("offset for NONE", r, &req, ARENA, 1,
			       cudaErrorInvalidValue);
			continue;
		}
		if (r->data == XCUDA_DATA_OPT_IN) {
			req.hdr.data_off = 16;
			req.hdr.data_len = 0;
			expect("empty extent with offset", r, &req, ARENA, 1,
			       cudaErrorInvalidValue);
		} else {
			req.hdr.data_off = 0;
			req.hdr.data_len = 0;
			expect("extent missing", r, &req, ARENA, 1,
			       cudaErrorInvalidValue);
			req.hdr.data_off = 4096;
			expect("extent empty", r, &req, ARENA, 1,
			       cudaErrorInvalidValue);
		}
		req.hdr.data_off = ARENA + 1;
		req.hdr.data_len = 1;
		expect("extent offset past the arena", r, &req, ARENA, 1,
		       cudaErrorInvalidValue);
		req.hdr.data_off = ARENA;
		expect("extent at the arena's end", r, &req, ARENA, 1,
		       cudaErrorInvalidValue);
		req.hdr.data_off = 4096;
		req.hdr.data_len = ARENA - 4096 + 1;
		expect("extent len past the arena", r, &req, ARENA, 1,
		       cudaErrorInvalidValue);
		req.hdr.data_off = 0;
		req.hdr.data_len = ARENA + 1;
		expect("extent longer than the arena", r, &req, ARENA, 1,
		       cudaErrorInvalidValue);
		req.hdr.data_off = 0xffffffffu;
		req.hdr.data_len = 0xffffffffu;
		expect("extent wraps", r, &req, ARENA, 1,
		       cudaErrorInvalidValue);
		req.hdr.data_off = 16;
		req.hdr.data_len = 0xfffffff8u;
		expect("extent wraps 32-bit", r, &req, ARENA, 1,
		       cudaErrorInvalidValue);
		/* A 4 GiB arena: 32-bit offsets reach its end exactly. */
		req.hdr.data_off = 0xffffffffu;
		req.hdr.data_len = 1;
		expect("extent last byte of 4 GiB", r, &req, 1ull << 32, 1, 0);
		req.hdr.data_len = 2;
		expect("extent past 4 GiB", r, &req, 1ull << 32, 1,
		       cudaErrorInvalidValue);
		req.hdr.data_off = 0;
		req.hdr.data_len = 1;
		expect("extent in an empty arena", r, &req, 0, 1,
		       cudaErrorInvalidValue);
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	load_rows();
	test_table();
	test_good();
	test_opcodes();
	test_header();
	test_varargs();
	test_extents();
	return check_summary();
}
