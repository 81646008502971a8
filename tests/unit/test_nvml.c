// SPDX-License-Identifier: MIT
/*
 * NVML's hostile inputs in the worker (spec/nvml.calls,
 * dom0-daemon/ops_nvml.c), without a GPU or NVIDIA's libnvidia-ml.so.1:
 * NVML_INIT with reserved bits or flags NVML does not know, a GPU index
 * before the session's NVML_INIT, extents past the arena, buffers that
 * say they are longer than their extent, strings without a NUL, an
 * error text with no room.  Each is refused with NVML's own status
 * before NVML is asked, and the worker lives on.
 *
 * The generated handlers check in this order: the extents (dispatch),
 * the buffers and strings, the session's GPU indexes (xd_nvml_dev_of),
 * and only then look for the library.  So a device query before a
 * successful NVML_INIT answers NVML_ERROR_UNINITIALIZED, with or
 * without the library, and a query that names no GPU answers
 * NVML_ERROR_LIBRARY_NOT_FOUND where the worker has no NVML (this
 * machine; where it has one, those checks are skipped with a line that
 * says which library was found).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <nvml.h>

#include "dom0-daemon/ipc_table.h"
#include "dom0-daemon/ops.h"
#include "dom0-daemon/worker.h"
#include "check.h"
#include "worker_harness.h"

static struct xd_session s;
static struct xd_chan chan;
/* The worker found a libnvidia-ml.so.1: its path, else NULL. */
static const char *nvml_lib;

/* @n bytes of the arena at @off, each @c. */
static void arena_fill(uint32_t off, int c, size_t n)
{
	memset(chan.arena + off, c, n);
}

/* 1 if the @n bytes at @off are all still @c: the worker left them. */
static int arena_is(uint32_t off, int c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (chan.arena[off + i] != (uint8_t)c)
			return 0;
	return 1;
}

static int dev_name(uint32_t dev, uint32_t off, uint32_t len, uint32_t length)
{
	struct xcuda_nvml_dev_name_args a;

	memset(&a, 0, sizeof(a));
	a.device = dev;
	a.name = (struct xcuda_extent){ off, len };
	a.length = length;
	return call(&s, XCUDA_OP_NVML_DEV_NAME, &a, sizeof(a), 0, 0);
}

static int dev_memory(uint32_t dev, uint32_t off, uint32_t len)
{
	struct xcuda_nvml_dev_memory_info_args a;

	memset(&a, 0, sizeof(a));
	a.device = dev;
	a.memory = (struct xcuda_extent){ off, len };
	return call(&s, XCUDA_OP_NVML_DEV_MEMORY_INFO, &a, sizeof(a), 0, 0);
}

static int dev_p2p(uint32_t dev1, uint32_t dev2, int32_t index)
{
	struct xcuda_nvml_dev_p2p_status_args a;
	struct xcuda_nvml_dev_p2p_status_res r = { 77, { 0 } };
	int err;

	memset(&a, 0, sizeof(a));
	a.device1 = dev1;
	a.device2 = dev2;
	a.p2pIndex = index;
	err = call_res(&s, XCUDA_OP_NVML_DEV_P2P_STATUS, &a, sizeof(a), 0, 0,
		       &r, sizeof(r));
	/* A failed call's result is all zeros. */
	if (err && r.p2pStatus)
		return -1;
	return err;
}

static int nvml_init(uint32_t flags, uint32_t rsvd, uint32_t *count)
{
	struct xcuda_nvml_init_args a = { flags, rsvd };
	struct xcuda_nvml_init_res r = { 99, 99 };
	int err;

	err = call_res(&s, XCUDA_OP_NVML_INIT, &a, sizeof(a), 0, 0, &r,
		       sizeof(r));
	*count = r.count;
	return err;
}

static int error_string(int32_t code, uint32_t rsvd, uint32_t off,
			uint32_t len, uint32_t *text_len)
{
	struct xcuda_nvml_error_string_args a;
	struct xcuda_nvml_error_string_res r = { 99, 99 };
	int err;

	memset(&a, 0, sizeof(a));
	a.error = code;
	a.rsvd = rsvd;
	a.text = (struct xcuda_extent){ off, len };
	err = call_res(&s, XCUDA_OP_NVML_ERROR_STRING, &a, sizeof(a), 0, 0,
		       &r, sizeof(r));
	*text_len = r.len;
	return err;
}

/* NVML_DEV_HANDLE_BY_UUID, _BY_PCI_BUS_ID, _BY_SERIAL: one extent. */
static int by_string(uint16_t op, uint32_t off, uint32_t len)
{
	struct xcuda_extent e = { off, len };
	struct xcuda_nvml_dev_handle_by_uuid_res r = { 99, { 0 } };
	int err;

	err = call_res(&s, op, &e, sizeof(e), 0, 0, &r, sizeof(r));
	if (err && r.device)
		return -1;
	return err;
}

/* The map of GPU indexes to NVML devices, of a session without NVML. */
static void test_map_uninit(const char *when)
{
	nvmlDevice_t dev = (nvmlDevice_t)(uintptr_t)0x5eed;
	uint32_t index = 12345;

	CHECK_EQ(xd_nvml_dev_of(&s, 0, &dev), NVML_ERROR_UNINITIALIZED,
		 check_name("dev_of(0) %s", when));
	CHECK_EQ(xd_nvml_dev_of(&s, UINT32_MAX, &dev),
		 NVML_ERROR_UNINITIALIZED,
		 check_name("dev_of(UINT32_MAX) %s", when));
	CHECK(dev == (nvmlDevice_t)(uintptr_t)0x5eed,
	      check_name("dev_of leaves the device alone %s", when));
	CHECK_EQ(xd_nvml_dev_index(&s, (nvmlDevice_t)(uintptr_t)0x1000,
				   &index), NVML_ERROR_UNINITIALIZED,
		 check_name("dev_index of a made-up device %s", when));
	CHECK_EQ(xd_nvml_dev_index(&s, NULL, &index),
		 NVML_ERROR_UNINITIALIZED,
		 check_name("dev_index(NULL) %s", when));
	CHECK_EQ(index, 12345,
		 check_name("dev_index leaves the index alone %s", when));
}

static void test_init_args(void)
{
	uint32_t n;

	CHECK(nvml_init(0, 1, &n) == NVML_ERROR_INVALID_ARGUMENT && !n,
	      "NVML_INIT with a nonzero rsvd: INVALID_ARGUMENT, no count");
	CHECK_EQ(nvml_init(0, 0x80000000u, &n), NVML_ERROR_INVALID_ARGUMENT,
		 "NVML_INIT with rsvd's top bit");
	CHECK_EQ(nvml_init(4, 0, &n), NVML_ERROR_INVALID_ARGUMENT,
		 "NVML_INIT with flag 4 (unknown)");
	CHECK_EQ(nvml_init(NVML_INIT_FLAG_NO_GPUS | NVML_INIT_FLAG_NO_ATTACH |
			   0x100, 0, &n), NVML_ERROR_INVALID_ARGUMENT,
		 "NVML_INIT with known flags and an unknown one");
	CHECK_EQ(nvml_init(UINT32_MAX, UINT32_MAX, &n),
		 NVML_ERROR_INVALID_ARGUMENT, "NVML_INIT with every bit set");
	CHECK(!s.nvml, "a refused NVML_INIT leaves the session without NVML");
	/* The header checks, before any handler, answer the runtime's code. */
	CHECK_EQ(call(&s, XCUDA_OP_NVML_INIT, &n, 4, 0, 0),
		 cudaErrorInvalidValue,
		 "an NVML_INIT shorter than its arguments is refused");
}

static void test_before_init(void)
{
	arena_fill(0, 0x5a, 64);
	CHECK_EQ(dev_name(0, 0, 64, 64), NVML_ERROR_UNINITIALIZED,
		 "GET_NAME of GPU 0 before NVML_INIT");
	CHECK(arena_is(0, 0x5a, 64), "a refused GET_NAME writes no name");
	CHECK_EQ(dev_name(7, 0, 64, 64), NVML_ERROR_UNINITIALIZED,
		 "GET_NAME of GPU 7 before NVML_INIT");
	CHECK_EQ(dev_name(UINT32_MAX, 0, 0, 0), NVML_ERROR_UNINITIALIZED,
		 "GET_NAME of GPU UINT32_MAX, no buffer, before NVML_INIT");
	CHECK_EQ(dev_memory(0, 0, 24), NVML_ERROR_UNINITIALIZED,
		 "GET_MEMORY_INFO of GPU 0 before NVML_INIT");
	CHECK(arena_is(0, 0x5a, 64),
	      "a refused GET_MEMORY_INFO writes nothing");
	CHECK_EQ(dev_memory(1u << 31, 0, 0), NVML_ERROR_UNINITIALIZED,
		 "GET_MEMORY_INFO of GPU 2^31, no buffer, before NVML_INIT");
	CHECK_EQ(dev_p2p(0, 1, NVML_P2P_CAPS_INDEX_READ),
		 NVML_ERROR_UNINITIALIZED,
		 "GET_P2P_STATUS of GPUs 0 and 1 before NVML_INIT");
	CHECK_EQ(dev_p2p(UINT32_MAX, 0, 0), NVML_ERROR_UNINITIALIZED,
		 "GET_P2P_STATUS of GPUs UINT32_MAX and 0 before NVML_INIT");
	CHECK_EQ(dev_p2p(0, UINT32_MAX, -1), NVML_ERROR_UNINITIALIZED,
		 "GET_P2P_STATUS of GPU UINT32_MAX, index -1, before "
		 "NVML_INIT");
}

/*
 * Extents and lengths come first: these answer INVALID_ARGUMENT, not
 * UNINITIALIZED, though no NVML_INIT was made.
 */
static void test_extents(void)
{
	struct xcuda_nvml_system_get_driver_version_args v;

	CHECK_EQ(dev_name(0, ARENA - 8, 64, 64), NVML_ERROR_INVALID_ARGUMENT,
		 "a name's extent past the arena");
	CHECK_EQ(dev_name(0, ARENA, 1, 1), NVML_ERROR_INVALID_ARGUMENT,
		 "a name's extent at the arena's end");
	CHECK_EQ(dev_name(0, UINT32_MAX, UINT32_MAX, 16),
		 NVML_ERROR_INVALID_ARGUMENT, "a name's extent that wraps");
	CHECK_EQ(dev_name(0, 16, 0, 0), NVML_ERROR_INVALID_ARGUMENT,
		 "an empty name extent that points somewhere");
	CHECK_EQ(dev_name(0, 0, 64, 65), NVML_ERROR_INVALID_ARGUMENT,
		 "a name length one past its extent");
	CHECK_EQ(dev_name(0, 0, 0, 1), NVML_ERROR_INVALID_ARGUMENT,
		 "a name length without a buffer");
	CHECK_EQ(dev_name(0, 0, 64, UINT32_MAX), NVML_ERROR_INVALID_ARGUMENT,
		 "a name length of UINT32_MAX");
	CHECK_EQ(dev_name(0, 0, 8192, 8192), NVML_ERROR_INVALID_ARGUMENT,
		 "a name buffer over the 4096-byte most");

	CHECK_EQ(dev_memory(0, ARENA - 16, 24), NVML_ERROR_INVALID_ARGUMENT,
		 "an nvmlMemory_t past the arena");
	CHECK_EQ(dev_memory(0, 0, 23), NVML_ERROR_INVALID_ARGUMENT,
		 "an nvmlMemory_t one byte short");
	CHECK_EQ(dev_memory(0, 0, 25), NVML_ERROR_INVALID_ARGUMENT,
		 "an nvmlMemory_t one byte long");
	CHECK_EQ(dev_memory(0, 0, 40), NVML_ERROR_INVALID_ARGUMENT,
		 "an nvmlMemory_v2_t where an nvmlMemory_t goes");

	memset(&v, 0, sizeof(v));
	v.version = (struct xcuda_extent){ ARENA - 4, 80 };
	v.length = 80;
	CHECK_EQ(call(&s, XCUDA_OP_NVML_SYSTEM_GET_DRIVER_VERSION, &v,
		      sizeof(v), 0, 0), NVML_ERROR_INVALID_ARGUMENT,
		 "a driver version's extent past the arena");
	v.version = (struct xcuda_extent){ 0, 80 };
	v.length = 81;
	CHECK_EQ(call(&s, XCUDA_OP_NVML_SYSTEM_GET_DRIVER_VERSION, &v,
		      sizeof(v), 0, 0), NVML_ERROR_INVALID_ARGUMENT,
		 "a driver version length past its extent");
}

static void test_error_string(void)
{
	uint32_t len;

	CHECK(error_string(NVML_ERROR_NOT_FOUND, 0, 0, 0, &len) ==
	      NVML_ERROR_INVALID_ARGUMENT && !len,
	      "ERROR_STRING with no room: INVALID_ARGUMENT, no length");
	CHECK_EQ(error_string(NVML_ERROR_NOT_FOUND, 1, 0, 64, &len),
		 NVML_ERROR_INVALID_ARGUMENT,
		 "ERROR_STRING with a nonzero rsvd");
	CHECK_EQ(error_string(NVML_ERROR_NOT_FOUND, 0, ARENA - 8, 64, &len),
		 NVML_ERROR_INVALID_ARGUMENT,
		 "ERROR_STRING's room past the arena");
	CHECK_EQ(error_string(NVML_ERROR_NOT_FOUND, 0, 8, 0, &len),
		 NVML_ERROR_INVALID_ARGUMENT,
		 "ERROR_STRING's empty room that points somewhere");
	CHECK_EQ(error_string(NVML_ERROR_NOT_FOUND, 0, 0, UINT32_MAX, &len),
		 NVML_ERROR_INVALID_ARGUMENT,
		 "ERROR_STRING's room longer than the arena");
}

static void test_strings(void)
{
	static const struct {
		uint16_t op;
		const char *name;
	} ops[] = {
		{ XCUDA_OP_NVML_DEV_HANDLE_BY_UUID, "GET_HANDLE_BY_UUID" },
		{ XCUDA_OP_NVML_DEV_HANDLE_BY_PCI_BUS_ID,
		  "GET_HANDLE_BY_PCI_BUS_ID" },
		{ XCUDA_OP_NVML_DEV_HANDLE_BY_SERIAL, "GET_HANDLE_BY_SERIAL" },
	};
	unsigned int i;

	arena_fill(0, 'A', 8192);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		CHECK_EQ(by_string(ops[i].op, 0, 64),
			 NVML_ERROR_INVALID_ARGUMENT,
			 check_name("%s: a string without a NUL", ops[i].name));
		CHECK_EQ(by_string(ops[i].op, 0, 1),
			 NVML_ERROR_INVALID_ARGUMENT,
			 check_name("%s: one byte, not a NUL", ops[i].name));
		CHECK_EQ(by_string(ops[i].op, 0, 4097),
			 NVML_ERROR_INVALID_ARGUMENT,
			 check_name("%s: a string over the 4096-byte most",
				    ops[i].name));
		CHECK_EQ(by_string(ops[i].op, ARENA - 4, 8),
			 NVML_ERROR_INVALID_ARGUMENT,
			 check_name("%s: a string past the arena",
				    ops[i].name));
		CHECK_EQ(by_string(ops[i].op, 32, 0),
			 NVML_ERROR_INVALID_ARGUMENT,
			 check_name("%s: an empty extent that points somewhere",
				    ops[i].name));
	}
	/* The NUL at the extent's last byte, and nowhere before. */
	chan.arena[63] = 0;
	if (nvml_lib)
		SKIP("GET_HANDLE_BY_UUID of a string ended at its last byte",
		     "the worker has an NVML (%s)", nvml_lib);
	else
		CHECK_EQ(by_string(XCUDA_OP_NVML_DEV_HANDLE_BY_UUID, 0, 64),
			 NVML_ERROR_LIBRARY_NOT_FOUND,
			 "GET_HANDLE_BY_UUID of a string ended at its last "
			 "byte reaches the library lookup");
	arena_fill(0, 0, 8192);
}

/* What is left when the checks pass: the library, and there is none. */
static void test_no_library(void)
{
	struct xcuda_nvml_system_get_driver_version_args v;
	struct xcuda_nvml_system_get_cuda_driver_version_res cv = { 5, { 0 } };
	uint32_t n, len;

	if (nvml_lib) {
		SKIP("NVML_INIT without libnvidia-ml.so.1",
		     "the worker found one: %s", nvml_lib);
		SKIP("the queries that name no GPU without libnvidia-ml.so.1",
		     "the worker found one: %s", nvml_lib);
		return;
	}
	n = 99;
	CHECK(nvml_init(0, 0, &n) == NVML_ERROR_LIBRARY_NOT_FOUND && !n,
	      "NVML_INIT without libnvidia-ml.so.1: LIBRARY_NOT_FOUND");
	CHECK_EQ(nvml_init(NVML_INIT_FLAG_NO_GPUS, 0, &n),
		 NVML_ERROR_LIBRARY_NOT_FOUND,
		 "NVML_INIT(NO_GPUS) without libnvidia-ml.so.1");
	CHECK_EQ(nvml_init(0, 0, &n), NVML_ERROR_LIBRARY_NOT_FOUND,
		 "NVML_INIT again: the same answer");
	CHECK(!s.nvml, "a failed NVML_INIT leaves the session without NVML");
	CHECK_EQ(dev_name(0, 0, 64, 64), NVML_ERROR_UNINITIALIZED,
		 "GET_NAME after a failed NVML_INIT");
	CHECK_EQ(dev_p2p(0, 0, 0), NVML_ERROR_UNINITIALIZED,
		 "GET_P2P_STATUS after a failed NVML_INIT");

	arena_fill(0, 0x5a, 80);
	memset(&v, 0, sizeof(v));
	v.version = (struct xcuda_extent){ 0, 80 };
	v.length = 80;
	CHECK_EQ(call(&s, XCUDA_OP_NVML_SYSTEM_GET_DRIVER_VERSION, &v,
		      sizeof(v), 0, 0), NVML_ERROR_LIBRARY_NOT_FOUND,
		 "GET_DRIVER_VERSION without libnvidia-ml.so.1");
	CHECK(arena_is(0, 0x5a, 80),
	      "GET_DRIVER_VERSION without the library writes nothing");
	CHECK(call_res(&s, XCUDA_OP_NVML_SYSTEM_GET_CUDA_DRIVER_VERSION, &v,
		       0, 0, 0, &cv, sizeof(cv)) ==
	      NVML_ERROR_LIBRARY_NOT_FOUND && !cv.cudaDriverVersion,
	      "GET_CUDA_DRIVER_VERSION without libnvidia-ml.so.1");
	CHECK(error_string(NVML_ERROR_NOT_FOUND, 0, 0, 64, &len) ==
	      NVML_ERROR_LIBRARY_NOT_FOUND && !len &&
	      arena_is(0, 0x5a, 64),
	      "ERROR_STRING without libnvidia-ml.so.1 writes nothing");
}

/*
 * Every NVML opcode but NVML_INIT (a real NVML_INIT changes what the rest
 * answer), with arguments of all zeros and of all ones: an error, never
 * a crash.  Without the library and before NVML_INIT, nothing but these
 * three can come back.
 */
static void test_sweep(int fill)
{
	static const int ok[] = { NVML_ERROR_UNINITIALIZED,
				  NVML_ERROR_LIBRARY_NOT_FOUND,
				  NVML_ERROR_INVALID_ARGUMENT };
	unsigned int n;

	n = sweep_opcodes(&s, "NVML_", XCUDA_OP_NVML_INIT, fill,
			  nvml_lib ? NULL : ok, 3);
	if (n < 90)
		CHECK_WHY("only %u NVML opcodes", n);
	check_case(check_name("every NVML opcode with arguments of 0x%02x: "
			      "an error%s", fill,
			      nvml_lib ? " or NVML's answer" : ""));
}

int main(void)
{
	void *sym;
	Dl_info info;

	setvbuf(stdout, NULL, _IOLBF, 0);
	open_session(&s, &chan, 0x4e564d4c, XD_DOMAIN_LOCAL | 1001);
	test_map_uninit("before NVML_INIT");
	test_init_args();
	test_before_init();
	test_extents();
	test_error_string();
	/* The worker's own lookup: what NVML_INIT would find. */
	sym = xd_nvml_sym("nvmlInitWithFlags");
	if (sym) {
		nvml_lib = dladdr(sym, &info) && info.dli_fname ?
			info.dli_fname : "libnvidia-ml.so.1";
		printf("# the worker found an NVML: %s\n", nvml_lib);
	}
	test_strings();
	test_sweep(0);
	test_sweep(0xff);
	test_no_library();
	test_map_uninit("after every refused request");
	check_alive(&s, &chan);
	xd_session_fini(&s);
	free(chan.arena);
	return check_summary();
}
