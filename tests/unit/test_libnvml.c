// SPDX-License-Identifier: MIT
/*
 * xcuda's libnvidia-ml.so.1 on its own, without a GPU or a daemon: what
 * it answers in the guest (guest-lib/nvml/).  Before nvmlInit every call
 * answers NVML_ERROR_UNINITIALIZED without reaching for a session, as
 * NVML does; nvmlShutdown without an init is UNINITIALIZED too; an init
 * that cannot reach xcudad answers NVML_ERROR_DRIVER_NOT_LOADED, as
 * NVML does on a host without its driver, and counts for nothing;
 * nvmlErrorString answers the code's name while no session can tell the
 * worker's NVML's text; stubs answer NVML_ERROR_NOT_SUPPORTED; and the
 * library exports every name of NVIDIA's (guest-lib/exports/
 * libnvidia-ml.so.1.syms, whose path the build compiles in).  The
 * library is the build's (../lib beside this program), loaded with
 * dlopen as monitoring tools and frameworks load it.
 */
#include <dlfcn.h>
#include <limits.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvml.h>

#include "check.h"
#include "lib_alone.h"

/* The committed export list; the Makefile names it by its full path. */
#ifndef XC_NVML_SYMS
#define XC_NVML_SYMS	"guest-lib/exports/libnvidia-ml.so.1.syms"
#endif

static void *lib;

static void *sym(const char *name)
{
	return dlsym(lib, name);
}

/* @name's address as the prototype of @fn in nvml.h. */
#define NVML_SYM(fn)	((__typeof__(&fn))sym(#fn))

/* A handle that no nvmlDeviceGetHandleBy* gave. */
#define MADE_UP		((nvmlDevice_t)(uintptr_t)0x1000)

static void test_before_init(void)
{
	__typeof__(&nvmlDeviceGetCount_v2) count =
		NVML_SYM(nvmlDeviceGetCount_v2);
	__typeof__(&nvmlDeviceGetHandleByIndex_v2) by_index =
		NVML_SYM(nvmlDeviceGetHandleByIndex_v2);
	__typeof__(&nvmlDeviceGetHandleByUUID) by_uuid =
		NVML_SYM(nvmlDeviceGetHandleByUUID);
	__typeof__(&nvmlSystemGetDriverVersion) version =
		NVML_SYM(nvmlSystemGetDriverVersion);
	__typeof__(&nvmlDeviceGetName) name = NVML_SYM(nvmlDeviceGetName);
	__typeof__(&nvmlDeviceGetMemoryInfo) memory =
		NVML_SYM(nvmlDeviceGetMemoryInfo);
	__typeof__(&nvmlDeviceGetIndex) index = NVML_SYM(nvmlDeviceGetIndex);
	__typeof__(&nvmlDeviceGetComputeRunningProcesses_v3) procs =
		NVML_SYM(nvmlDeviceGetComputeRunningProcesses_v3);
	__typeof__(&nvmlShutdown) shutdown = NVML_SYM(nvmlShutdown);
	nvmlDevice_t dev = MADE_UP;
	nvmlMemory_t mem;
	unsigned int n = 77;
	char buf[80];

	REQUIRE_MSG(count && by_index && by_uuid && version && name &&
		    memory && index && procs && shutdown,
		    "the calls before nvmlInit", "not exported");
	CHECK(count(&n) == NVML_ERROR_UNINITIALIZED && n == 77,
	      "nvmlDeviceGetCount_v2 before nvmlInit: UNINITIALIZED");
	CHECK_EQ(count(NULL), NVML_ERROR_UNINITIALIZED,
		 "nvmlDeviceGetCount_v2(NULL) before nvmlInit: UNINITIALIZED");
	dev = NULL;
	CHECK(by_index(0, &dev) == NVML_ERROR_UNINITIALIZED && !dev,
	      "nvmlDeviceGetHandleByIndex_v2(0) before nvmlInit: "
	      "UNINITIALIZED, no handle");
	CHECK_EQ(by_index(UINT_MAX, NULL), NVML_ERROR_UNINITIALIZED,
		 "nvmlDeviceGetHandleByIndex_v2(UINT_MAX, NULL) before "
		 "nvmlInit");
	CHECK_EQ(by_uuid("GPU-00000000-0000-0000-0000-000000000000", &dev),
		 NVML_ERROR_UNINITIALIZED,
		 "nvmlDeviceGetHandleByUUID before nvmlInit");
	memset(buf, 0x5a, sizeof(buf));
	CHECK(version(buf, sizeof(buf)) == NVML_ERROR_UNINITIALIZED &&
	      buf[0] == 0x5a && buf[79] == 0x5a,
	      "nvmlSystemGetDriverVersion before nvmlInit: UNINITIALIZED, "
	      "nothing written");
	CHECK(name(MADE_UP, buf, sizeof(buf)) == NVML_ERROR_UNINITIALIZED &&
	      buf[0] == 0x5a,
	      "nvmlDeviceGetName of a made-up handle before nvmlInit: "
	      "UNINITIALIZED");
	CHECK_EQ(name(NULL, NULL, 0), NVML_ERROR_UNINITIALIZED,
		 "nvmlDeviceGetName(NULL, NULL, 0) before nvmlInit");
	CHECK_EQ(memory(MADE_UP, &mem), NVML_ERROR_UNINITIALIZED,
		 "nvmlDeviceGetMemoryInfo of a made-up handle before nvmlInit");
	n = 77;
	CHECK(index(MADE_UP, &n) == NVML_ERROR_UNINITIALIZED && n == 77,
	      "nvmlDeviceGetIndex of a made-up handle before nvmlInit");
	CHECK_EQ(procs(MADE_UP, &n, NULL), NVML_ERROR_UNINITIALIZED,
		 "nvmlDeviceGetComputeRunningProcesses_v3 before nvmlInit");
	CHECK_EQ(shutdown(), NVML_ERROR_UNINITIALIZED,
		 "nvmlShutdown without nvmlInit: UNINITIALIZED");
}

static void test_error_names(const char *when)
{
	static const struct {
		nvmlReturn_t code;
		const char *name;
	} names[] = {
		{ NVML_SUCCESS, "NVML_SUCCESS" },
		{ NVML_ERROR_UNINITIALIZED, "NVML_ERROR_UNINITIALIZED" },
		{ NVML_ERROR_NOT_FOUND, "NVML_ERROR_NOT_FOUND" },
		{ NVML_ERROR_DRIVER_NOT_LOADED,
		  "NVML_ERROR_DRIVER_NOT_LOADED" },
		{ NVML_ERROR_LIBRARY_NOT_FOUND,
		  "NVML_ERROR_LIBRARY_NOT_FOUND" },
		{ NVML_ERROR_RESET_TYPE_NOT_SUPPORTED,
		  "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED" },
		{ NVML_ERROR_UNKNOWN, "NVML_ERROR_UNKNOWN" },
		/* No code of nvml.h's: NVML's own word for it. */
		{ (nvmlReturn_t)31, "NVML_ERROR_UNKNOWN" },
		{ (nvmlReturn_t)-1, "NVML_ERROR_UNKNOWN" },
		{ (nvmlReturn_t)123456, "NVML_ERROR_UNKNOWN" },
	};
	__typeof__(&nvmlErrorString) str = NVML_SYM(nvmlErrorString);
	const char *s;
	unsigned int i;

	REQUIRE_MSG(str, "nvmlErrorString", "not exported");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		s = str(names[i].code);
		CHECK_MSG(s && !strcmp(s, names[i].name),
			  check_name("nvmlErrorString(%d) %s is %s",
				     (int)names[i].code, when, names[i].name),
			  "got \"%s\"", s ? s : "(null)");
	}
	s = str(NVML_ERROR_NOT_FOUND);
	CHECK(s && s == str(NVML_ERROR_NOT_FOUND),
	      check_name("nvmlErrorString %s: the same string each time",
			 when));
}

static void test_init(void)
{
	__typeof__(&nvmlInit_v2) init_v2 = NVML_SYM(nvmlInit_v2);
	__typeof__(&nvmlInitWithFlags) init_flags =
		NVML_SYM(nvmlInitWithFlags);
	nvmlReturn_t (*init_v1)(void) = (nvmlReturn_t (*)(void))sym("nvmlInit");
	__typeof__(&nvmlShutdown) shutdown = NVML_SYM(nvmlShutdown);
	__typeof__(&nvmlDeviceGetCount_v2) count =
		NVML_SYM(nvmlDeviceGetCount_v2);
	unsigned int n = 77;

	REQUIRE_MSG(init_v2 && init_flags && init_v1 && shutdown && count,
		    "the init calls", "not exported");
	CHECK_EQ(init_v2(), NVML_ERROR_DRIVER_NOT_LOADED,
		 "nvmlInit_v2 with no daemon: DRIVER_NOT_LOADED");
	CHECK_EQ(init_flags(0), NVML_ERROR_DRIVER_NOT_LOADED,
		 "nvmlInitWithFlags(0) with no daemon: DRIVER_NOT_LOADED");
	CHECK_EQ(init_flags(NVML_INIT_FLAG_NO_GPUS),
		 NVML_ERROR_DRIVER_NOT_LOADED,
		 "nvmlInitWithFlags(NO_GPUS) with no daemon");
	CHECK_EQ(init_v1(), NVML_ERROR_DRIVER_NOT_LOADED,
		 "nvmlInit (v1) with no daemon: DRIVER_NOT_LOADED");
	/* A failed init counts for nothing. */
	CHECK(count(&n) == NVML_ERROR_UNINITIALIZED && n == 77,
	      "nvmlDeviceGetCount_v2 after a failed init: UNINITIALIZED");
	CHECK_EQ(shutdown(), NVML_ERROR_UNINITIALIZED,
		 "nvmlShutdown after a failed init: UNINITIALIZED");
}

static void test_stubs(void)
{
	static const char *const stubs[] = {
		"nvmlDeviceSetPersistenceMode",
		"nvmlDeviceSetPowerManagementLimit",
	};
	int (*stub)(void);
	unsigned int i;

	for (i = 0; i < sizeof(stubs) / sizeof(stubs[0]); i++) {
		stub = (int (*)(void))sym(stubs[i]);
		CHECK_MSG(stub && stub() == NVML_ERROR_NOT_SUPPORTED,
			  check_name("the stub %s answers "
				     "NVML_ERROR_NOT_SUPPORTED (3)", stubs[i]),
			  "%s", stub ? "another answer" : "not exported");
	}
}

/* Every name of NVIDIA's library is one of ours, defined in ours. */
static void test_exports(void)
{
	char *list = check_slurp(XC_NVML_SYMS, NULL), *line, *save = NULL;
	void *own = sym("nvmlInit_v2"), *p;
	Dl_info self, info;
	unsigned int n = 0, missing = 0;

	EXPECT(list, "cannot read %s", XC_NVML_SYMS);
	EXPECT(own && dladdr(own, &self), "nvmlInit_v2 is not ours");
	for (line = strtok_r(list, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, " \t")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		n++;
		p = sym(line);
		if (!p) {
			if (!missing++)
				CHECK_WHY("%s is not exported", line);
		} else if (!dladdr(p, &info) ||
			   info.dli_fbase != self.dli_fbase) {
			if (!missing++)
				CHECK_WHY("%s comes from %s", line,
					  info.dli_fname ? info.dli_fname :
					  "elsewhere");
		}
	}
	EXPECT(n >= 100, "only %u names in %s", n, XC_NVML_SYMS);
out:
	free(list);
	check_case(check_name("dlsym finds each of the %u names of "
			      "libnvidia-ml.so.1.syms in our library "
			      "(%u not)", n, missing));
}

int main(void)
{
	lib = lib_alone("libnvidia-ml.so.1");
	test_error_names("before any session");
	test_before_init();
	test_init();
	test_error_names("after a failed init");
	test_stubs();
	test_exports();
	return check_summary();
}
