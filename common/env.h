/* SPDX-License-Identifier: MIT */
/*
 * Settings from the environment, read the same way by the guest library
 * and the worker: plain unsigned decimal, nothing else.
 */
#ifndef XCUDA_COMMON_ENV_H
#define XCUDA_COMMON_ENV_H

/*
 * Unsigned decimal from the environment: 0 if unset (*v untouched), 1 if
 * set and <= @max, -EINVAL otherwise (a sign, spaces, other bases, an
 * empty string, trailing bytes, too large).
 */
int xcuda_env_uint(const char *name, unsigned long long max,
		   unsigned long long *v);

#endif /* XCUDA_COMMON_ENV_H */
