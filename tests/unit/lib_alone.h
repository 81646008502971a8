/* SPDX-License-Identifier: MIT */
/*
 * A guest library of the build on its own, as frameworks load it: with
 * dlopen, from ../lib beside the test program, with no daemon to reach
 * (XCUDA_SOCKET names none) and stubs quiet.
 */
#ifndef XCUDA_TEST_LIB_ALONE_H
#define XCUDA_TEST_LIB_ALONE_H

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

static inline void *lib_alone(const char *soname)
{
	char self[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	void *h;

	setvbuf(stdout, NULL, _IOLBF, 0);
	setenv("XCUDA_QUIET", "1", 1);
	/* No daemon: nothing may reach one. */
	setenv("XCUDA_SOCKET", "/nonexistent/xcudad.sock", 1);
	REQUIRE_MSG(n > 0, "own path", "readlink failed");
	self[n] = '\0';
	snprintf(path, sizeof(path), "%s/../lib/%s", dirname(self), soname);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	REQUIRE_MSG(h, "xcuda's library loads", "%s: %s", soname, dlerror());
	return h;
}

#endif /* XCUDA_TEST_LIB_ALONE_H */
