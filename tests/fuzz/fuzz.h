/* SPDX-License-Identifier: MIT */
/*
 * What the libFuzzer harnesses share: reading a fuzzer's input as the
 * fields a harness needs (zeros past its end), and the check that stops
 * the run when a decoder broke one of its promises.
 */
#ifndef XCUDA_FUZZ_H
#define XCUDA_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fuzzer's entry point (libFuzzer declares none for C). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz_in {
	const uint8_t *p;
	size_t n;
};

/* @len bytes into @dst, zeros where the input has run out. */
static inline void fz_take(struct fz_in *in, void *dst, size_t len)
{
	size_t k = len < in->n ? len : in->n;

	memcpy(dst, in->p, k);
	memset((uint8_t *)dst + k, 0, len - k);
	in->p += k;
	in->n -= k;
}

static inline uint8_t fz_u8(struct fz_in *in)
{
	uint8_t v;

	fz_take(in, &v, sizeof(v));
	return v;
}

static inline uint32_t fz_u32(struct fz_in *in)
{
	uint32_t v;

	fz_take(in, &v, sizeof(v));
	return v;
}

static inline uint64_t fz_u64(struct fz_in *in)
{
	uint64_t v;

	fz_take(in, &v, sizeof(v));
	return v;
}

/* A broken promise: libFuzzer keeps the input that made it. */
#define FZ_CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

#endif /* XCUDA_FUZZ_H */
