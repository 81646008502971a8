// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>

#include "env.h"

int xcuda_env_uint(const char *name, unsigned long long max,
		   unsigned long long *v)
{
	const char *s = getenv(name);
	unsigned long long x;
	char *end;

	if (!s)
		return 0;
	/* strtoull() would take a sign or leading blanks: we do not. */
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end || x > max)
		return -EINVAL;
	*v = x;
	return 1;
}
