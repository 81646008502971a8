// SPDX-License-Identifier: MIT
/*
 * The workers' resource limits (rlimits.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "gpumem.h"
#include "log.h"
#include "rlimits.h"

void xd_rlimits_default(struct xd_rlimits *r)
{
	r->data = XD_RLIMIT_DATA_DEFAULT;
	r->nofile = XD_RLIMIT_NOFILE_DEFAULT;
	r->core_dumps = 0;
}

int xd_limit_parse(const char *s, int suffix, uint64_t *v)
{
	unsigned long long n;
	char *end;

	if (!s || !*s)
		return -1;
	if (!strcmp(s, "off") || !strcmp(s, "none") || !strcmp(s, "max")) {
		*v = XD_LIMIT_NONE;
		return 0;
	}
	if (suffix)
		return xd_gpumem_parse(s, v);	/* the same sizes, 0: none */
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*v = n ? n : XD_LIMIT_NONE;
	return 0;
}

void xd_rlimits_settle(struct xd_rlimits *r)
{
#ifdef XD_SHADOW_BUILD
	if (r->data != XD_LIMIT_NONE) {
		xd_log(XD_LOG_WARN, "sanitizer build: workers get no "
		       "RLIMIT_DATA (the shadow memory counts as data)");
		r->data = XD_LIMIT_NONE;
	}
#endif
	xd_log(XD_LOG_INFO, "workers' limits: data %lld MiB, open files "
	       "%lld (-1: the daemon's), core dumps %s",
	       r->data == XD_LIMIT_NONE ? -1LL : (long long)(r->data >> 20),
	       r->nofile == XD_LIMIT_NONE ? -1LL : (long long)r->nofile,
	       r->core_dumps ? "as the daemon's" : "none");
}

/* Soft and hard to @v, or to the hard limit where @v is above it. */
static int xd_rlimit_set(int res, const char *name, uint64_t v)
{
	struct rlimit rl;

	if (v == XD_LIMIT_NONE)
		return 0;
	if (getrlimit(res, &rl))
		goto fail;
	rl.rlim_cur = rl.rlim_max = (rlim_t)v;
	if (!setrlimit(res, &rl))
		return 0;
	/* Not root: the daemon's hard limit is already lower. */
	if (errno == EPERM && !getrlimit(res, &rl) && rl.rlim_max < v) {
		rl.rlim_cur = rl.rlim_max;
		if (!setrlimit(res, &rl))
			return 0;
	}
fail:
	xd_log(XD_LOG_ERROR, "cannot set %s: %s", name, strerror(errno));
	return -1;
}

int xd_rlimits_apply(const struct xd_rlimits *r)
{
	if (xd_rlimit_set(RLIMIT_DATA, "RLIMIT_DATA", r->data) ||
	    xd_rlimit_set(RLIMIT_NOFILE, "RLIMIT_NOFILE", r->nofile))
		return -1;
	/* A core would hold the guest's data and the worker's keys. */
	if (!r->core_dumps && xd_rlimit_set(RLIMIT_CORE, "RLIMIT_CORE", 0))
		return -1;
	return 0;
}
