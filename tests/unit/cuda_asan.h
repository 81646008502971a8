/* SPDX-License-Identifier: MIT */
/*
 * For the tests that call the CUDA runtime in their own process: in
 * sanitizer builds CUDA needs AddressSanitizer's shadow gap.  Include it
 * once per program.
 */
#ifndef XCUDA_TEST_CUDA_ASAN_H
#define XCUDA_TEST_CUDA_ASAN_H

const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "protect_shadow_gap=0";
}

#endif /* XCUDA_TEST_CUDA_ASAN_H */
