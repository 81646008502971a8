/* SPDX-License-Identifier: MIT */
/*
 * cuBLASLt's descriptors on the wire.  The guest keeps matmul
 * descriptors, matrix layouts and preferences itself, as the attributes
 * the program set, and sends them with the calls that use them
 * (BLASLT_MATMUL, BLASLT_HEURISTIC, BLASLT_GET_ATTRIBUTE): a matmul that
 * frameworks describe anew each time is then one round trip, not
 * twenty.  The worker makes the library's objects from them for the
 * call (docs/protocol.md, "Math library calls").
 */
#ifndef XCUDA_BLASLT_H
#define XCUDA_BLASLT_H

#include <stdint.h>

#define XCUDA_LT_MAX_ATTRS	32	/* attributes one object holds */
#define XCUDA_LT_ATTR_BYTES	64	/* the largest attribute value */

enum xcuda_lt_kind {
	XCUDA_LT_MATMUL_DESC = 1,	/* cublasLtMatmulDesc_t */
	XCUDA_LT_LAYOUT = 2,		/* cublasLtMatrixLayout_t */
	XCUDA_LT_PREF = 3,		/* cublasLtMatmulPreference_t */
};

struct xcuda_lt_attr {
	uint32_t id;			/* the kind's attribute enum */
	uint32_t len;			/* bytes of val the program set */
	uint8_t val[XCUDA_LT_ATTR_BYTES];
};

/* One object: this header, then nattrs struct xcuda_lt_attr. */
struct xcuda_lt_obj {
	uint32_t kind;			/* enum xcuda_lt_kind */
	uint32_t nattrs;
	int32_t type_a;			/* desc: compute type; layout: type */
	int32_t type_b;			/* desc: scale type */
	uint64_t rows;			/* layout: rows, cols, ld */
	uint64_t cols;
	int64_t ld;
};

_Static_assert(sizeof(struct xcuda_lt_attr) == 72, "lt attr");
_Static_assert(sizeof(struct xcuda_lt_obj) == 40, "lt obj");

#endif /* XCUDA_BLASLT_H */
