/* SPDX-License-Identifier: MIT */
/*
 * Request validation.  Every request the worker handles is a private copy
 * of a ring slot that a hostile guest wrote; xd_validate() checks its
 * header against the command table (xcuda/calls.def) before any handler
 * looks at it.  Handlers then only check their own arguments.
 */
#ifndef XCUDAD_VALIDATE_H
#define XCUDAD_VALIDATE_H

#include <stdint.h>

#include "xcuda/proto.h"

/* One row of calls.def as the daemon sees it. */
struct xd_call_desc {
	const char *name;	/* "OPEN"; NULL for an unknown opcode */
	uint32_t flags;		/* XCUDA_CF_* */
	uint16_t args_size;	/* sizeof the args struct */
	uint16_t min_len;	/* shortest hdr.len accepted (VARARGS) */
	uint16_t res_size;	/* sizeof the result struct */
	uint8_t data;		/* enum xcuda_data */
};

/* Indexed by opcode; rows for unknown opcodes are all zero. */
extern const struct xd_call_desc xd_calls[XCUDA_OP_MAX];

/* The row for @op, or NULL if @op is not a command. */
const struct xd_call_desc *xd_call_lookup(uint16_t op);
/* The command's name for logs; "?" for an unknown opcode. */
const char *xd_op_name(uint16_t op);
/* Bytes of the command's result; 0 for an unknown opcode. */
uint32_t xd_result_size(uint16_t op);

/*
 * Checks @req's header for a session whose id is @session and whose
 * arena has @arena_size bytes; @opened tells whether OPEN has succeeded.
 * Returns 0 or the cudaError_t to answer with:
 *   cudaErrorNotSupported (801)        unknown opcode
 *   cudaErrorInitializationError (3)   anything but OPEN before OPEN
 *   cudaErrorInvalidValue (1)          any other malformation
 */
int xd_validate(const struct xcuda_request *req, uint32_t session,
		uint64_t arena_size, int opened);

#endif /* XCUDAD_VALIDATE_H */
