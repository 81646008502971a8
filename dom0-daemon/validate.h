/* SPDX-License-Identifier: MIT */
/*
 * Request validation.  Every request the worker handles is a private copy
 * of a ring slot that a hostile guest wrote; xd_validate() checks its
 * header against the command table (generated from the call description)
 * before any handler looks at it; the generated dispatch then checks the
 * arena extents the arguments name, and handlers their own arguments.
 */
#ifndef XCUDAD_VALIDATE_H
#define XCUDAD_VALIDATE_H

#include <stdint.h>

#include "xcuda/calls.h"

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
