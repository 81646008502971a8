// SPDX-License-Identifier: MIT
/*
 * The GPU memory quota per domain (gpumem.h, ops_gpumem.c), without a
 * GPU: every allocating command above the quota is answered
 * cudaErrorMemoryAllocation before CUDA is reached (below it, CUDA's own
 * error comes back: no device here), the count is shared by the
 * sessions of one domain (separate worker processes) and not across
 * domains, frees and the session's end give it back, a killed worker's
 * share returns when xcudad reaps it, and the daemon's file shows usage
 * and quota per domain.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "dom0-daemon/gpumem.h"
#include "dom0-daemon/ipc_table.h"
#include "dom0-daemon/log.h"
#include "dom0-daemon/ops.h"
#include "dom0-daemon/supervise.h"
#include "dom0-daemon/worker.h"
#include "check.h"
#include "cuda_asan.h"
#include "worker_harness.h"

#define DOM_A		(XD_DOMAIN_XEN | 5)
#define DOM_B		(XD_DOMAIN_XEN | 6)
#define MIB		(1ull << 20)
#define QUOTA		(8 * MIB)

static char table_path[64];

static void test_parse(void)
{
	static const struct { const char *s; uint64_t v; } good[] = {
		{ "4096", 4096 }, { "8K", 8192 }, { "8k", 8192 },
		{ "3M", 3 * MIB }, { "8G", 8ull << 30 }, { "2t", 2ull << 40 },
		{ "none", XD_GPUMEM_NONE }, { "0", XD_GPUMEM_NONE },
	};
	static const char *const bad[] = {
		"", "G", "-1", "8X", "8GB", " 8G", "8G ", "1.5G", "none1",
		"99999999999T", "18446744073709551616",
	};
	unsigned int i;
	uint64_t v;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECKF(!xd_gpumem_parse(good[i].s, &v) && v == good[i].v,
		       "size '%s' parses", good[i].s);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECKF(xd_gpumem_parse(bad[i], &v), "size '%s' is refused",
		       bad[i]);
}

/* One allocating request of each kind, asking for @bytes or about. */
struct alloc_case {
	const char *name;
	uint16_t op;
	uint8_t args[64];
	uint16_t len;
};

static unsigned int alloc_cases(struct alloc_case *c, uint64_t bytes)
{
	struct cudaChannelFormatDesc f4 = { 32, 0, 0, 0,
					    cudaChannelFormatKindFloat };
	unsigned int n = 0;

	memset(c, 0, 11 * sizeof(*c));
#define CASE(NAME, OP, TYPE, ...) do {					\
		TYPE a_ = { __VA_ARGS__ };				\
		c[n].name = NAME;					\
		c[n].op = OP;						\
		memcpy(c[n].args, &a_, sizeof(a_));			\
		c[n].len = sizeof(a_);					\
		n++;							\
	} while (0)
	CASE("cudaMalloc", XCUDA_OP_MALLOC, struct xcuda_malloc_args,
	     .size = bytes);
	CASE("cudaMallocPitch", XCUDA_OP_MALLOC_PITCH,
	     struct xcuda_malloc_pitch_args, .width = 4096,
	     .height = bytes / 4096);
	CASE("cudaMalloc3D", XCUDA_OP_MALLOC_3D, struct xcuda_malloc_3d_args,
	     .extent = { 4096, 16, bytes / 4096 / 16 });
	CASE("cudaMallocAsync", XCUDA_OP_MALLOC_ASYNC,
	     struct xcuda_malloc_async_args, .size = bytes);
	CASE("cudaMallocFromPoolAsync", XCUDA_OP_MALLOC_FROM_POOL_ASYNC,
	     struct xcuda_malloc_from_pool_async_args, .size = bytes,
	     .memPool = 1);
	CASE("cudaMallocManaged", XCUDA_OP_MALLOC_MANAGED,
	     struct xcuda_malloc_managed_args, .size = bytes,
	     .flags = cudaMemAttachGlobal);
	CASE("cudaMallocArray", XCUDA_OP_MALLOC_ARRAY,
	     struct xcuda_malloc_array_args, .desc = f4, .width = 1024,
	     .height = bytes / 4096);
	CASE("cudaMalloc3DArray", XCUDA_OP_MALLOC_3D_ARRAY,
	     struct xcuda_malloc_3d_array_args, .desc = f4,
	     .extent = { 1024, 16, bytes / 4096 / 16 });
	CASE("cudaMallocMipmappedArray", XCUDA_OP_MALLOC_MIPMAPPED_ARRAY,
	     struct xcuda_malloc_mipmapped_array_args, .desc = f4,
	     .extent = { 1024, bytes / 4096 / 2, 0 }, .numLevels = 4);
	CASE("cuMemAlloc", XCUDA_OP_DRV_MEM_ALLOC,
	     struct xcuda_drv_mem_alloc_args, .bytesize = bytes);
	CASE("cuMemCreate", XCUDA_OP_DRV_MEM_CREATE,
	     struct xcuda_drv_mem_create_args, .size = bytes,
	     .prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
		       .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } });
#undef CASE
	return n;
}

/*
 * In this process, bound as a session of DOM_A: each kind above the
 * quota is refused with the out-of-memory error and leaves nothing
 * charged; below it, CUDA answers (here: not that error).
 */
static void test_refused_before_cuda(struct xd_session *s)
{
	struct alloc_case c[11];
	unsigned int i, n;
	int st;

	n = alloc_cases(c, QUOTA + MIB);
	for (i = 0; i < n; i++) {
		st = call(s, c[i].op, c[i].args, c[i].len, 0, 0);
		CHECK_MSG(st == cudaErrorMemoryAllocation &&
			  xd_gpumem_used(DOM_A) == 0,
			  check_name("%s above the quota: out of memory, "
				     "nothing charged", c[i].name),
			  "status %d, used %llu", st,
			  (unsigned long long)xd_gpumem_used(DOM_A));
	}
	n = alloc_cases(c, MIB);
	for (i = 0; i < n; i++) {
		st = call(s, c[i].op, c[i].args, c[i].len, 0, 0);
		CHECK_MSG(st != cudaErrorMemoryAllocation &&
			  xd_gpumem_used(DOM_A) == 0,
			  check_name("%s within the quota reaches CUDA, whose "
				     "failure charges nothing", c[i].name),
			  "status %d, used %llu", st,
			  (unsigned long long)xd_gpumem_used(DOM_A));
	}
	CHECK_EQ(CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation,
		 "the driver API's out-of-memory error is the same code");
}

/* A request and what its handler answered, without CUDA. */
static void fake(struct xd_session *s, uint16_t op, const void *args,
		 size_t len, const void *res, size_t rlen, int err)
{
	struct xcuda_request req;
	uint8_t out[XCUDA_RSP_INLINE];
	uint64_t charged = 0;

	memset(&req, 0, sizeof(req));
	memset(out, 0, sizeof(out));
	req.hdr.op = op;
	memcpy(req.args, args, len);
	if (res)
		memcpy(out, res, rlen);
	if (xd_gpumem_before(s, &req, &charged))
		return;
	xd_gpumem_after(s, &req, charged, err, out);
}

/* What successful allocations would charge, and their frees give back. */
static void test_frees(struct xd_session *s)
{
	struct xcuda_malloc_args m = { 3 * MIB + 1 };
	struct xcuda_malloc_res mr = { 0x7000000000ull };
	struct xcuda_free_args f = { 0x7000000000ull };
	struct xcuda_drv_mem_create_args vc = { .size = 2 * MIB };
	struct xcuda_drv_mem_create_res vr = { 0x42 };
	struct xcuda_drv_mem_release_args vrel = { 0x42 };
	struct cudaChannelFormatDesc f1 = { 8, 0, 0, 0,
					    cudaChannelFormatKindUnsigned };
	struct xcuda_malloc_array_args am = { .desc = f1, .width = 1000,
					      .height = 3 };
	struct xcuda_malloc_array_res ar = { 9, { 0 } };
	struct xcuda_free_array_args af = { 9, { 0 } };

	fake(s, XCUDA_OP_MALLOC, &m, sizeof(m), &mr, sizeof(mr), 0);
	CHECK_EQ(xd_gpumem_used(DOM_A), 3 * MIB + 4096,
		 "an allocation is charged rounded up to a page");
	fake(s, XCUDA_OP_MALLOC, &m, sizeof(m), &mr, sizeof(mr),
	     cudaErrorInvalidValue);
	CHECK_EQ(xd_gpumem_used(DOM_A), 3 * MIB + 4096,
		 "a failed allocation charges nothing");
	fake(s, XCUDA_OP_DRV_MEM_CREATE, &vc, sizeof(vc), &vr, sizeof(vr), 0);
	fake(s, XCUDA_OP_MALLOC_ARRAY, &am, sizeof(am), &ar, sizeof(ar), 0);
	CHECK_EQ(xd_gpumem_used(DOM_A), 5 * MIB + 8192,
		 "cuMemCreate and arrays are charged (rows of 512 bytes)");
	fake(s, XCUDA_OP_MALLOC, &m, sizeof(m), &mr, sizeof(mr), 0);
	CHECK_EQ(xd_gpumem_used(DOM_A), 5 * MIB + 8192,
		 "the same pointer again replaces its charge");
	fake(s, XCUDA_OP_FREE, &f, sizeof(f), NULL, 0, cudaErrorInvalidValue);
	CHECK_EQ(xd_gpumem_used(DOM_A), 5 * MIB + 8192,
		 "a failed free gives nothing back");
	fake(s, XCUDA_OP_FREE, &f, sizeof(f), NULL, 0, 0);
	fake(s, XCUDA_OP_FREE, &f, sizeof(f), NULL, 0, 0);
	CHECK_EQ(xd_gpumem_used(DOM_A), 2 * MIB + 4096,
		 "cudaFree gives back once");
	fake(s, XCUDA_OP_DRV_MEM_RELEASE, &vrel, sizeof(vrel), NULL, 0, 0);
	fake(s, XCUDA_OP_FREE_ARRAY, &af, sizeof(af), NULL, 0, 0);
	CHECK_EQ(xd_gpumem_used(DOM_A), 0,
		 "cuMemRelease and cudaFreeArray give back");
	fake(s, XCUDA_OP_MALLOC, &m, sizeof(m), &mr, sizeof(mr), 0);
	CHECK_EQ(xd_gpumem_used(DOM_A), 3 * MIB + 4096, "charged again");
}

/*
 * A second session of @domain in a worker of its own holds @hold bytes
 * and asks for 2 MiB: the child's exit status is 0 when it got the
 * out-of-memory error, 1 when CUDA's (or another) answer came.
 */
static int second_session(uint64_t domain, uint64_t hold)
{
	struct xcuda_malloc_args m = { 2 * MIB };
	struct xd_session s2;
	struct xd_chan c2;
	pid_t pid;
	int st;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		memset(&s2, 0, sizeof(s2));
		memset(&c2, 0, sizeof(c2));
		if (xd_gpumem_bind(0x2222, domain, QUOTA))
			_exit(3);
		if (hold && xd_gpumem_charge(hold))
			_exit(4);
		open_session(&s2, &c2, 0x2222, domain);
		st = call(&s2, XCUDA_OP_MALLOC, &m, sizeof(m), 0, 0);
		_exit(st == cudaErrorMemoryAllocation ? 0 : 1);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	xd_gpumem_forget_session(0x2222);
	return WEXITSTATUS(st);
}

static void test_shared(void)
{
	/* This process holds 3 MiB + 4 KiB of DOM_A's 8 MiB. */
	CHECK_EQ(second_session(DOM_A, 0), 1,
		 "a second session of the domain gets what is left");
	CHECK_EQ(second_session(DOM_A, 4 * MIB), 0,
		 "the domain's sessions share one quota, across workers");
	CHECK_EQ(second_session(DOM_B, 4 * MIB), 1,
		 "another domain's usage does not count");
	CHECK_EQ(xd_gpumem_used(DOM_A), 3 * MIB + 4096,
		 "an ended worker's share is gone");
}

static int body_charge_and_die(void *arg, uint32_t session)
{
	(void)arg;
	if (xd_gpumem_bind(session, DOM_A, QUOTA) ||
	    xd_gpumem_charge(4 * MIB))
		return 3;
	raise(SIGKILL);		/* no free, no session teardown */
	return 4;
}

static void test_reaped_worker(void)
{
	uint64_t before = xd_gpumem_used(DOM_A);
	struct xd_super sv;
	int i;

	REQUIRE_MSG(!xd_super_init(&sv, 2), "supervisor", "no memory");
	sv.gone = xd_gpumem_forget_session;
	CHECK_MSG(xd_super_spawn(&sv, 0x77, body_charge_and_die, NULL) > 0,
		  "worker forked", "fork failed");
	for (i = 0; i < 500 && xd_gpumem_used(DOM_A) == before; i++)
		usleep(10000);
	CHECK_EQ(xd_gpumem_used(DOM_A), before + 4 * MIB,
		 "a worker's charge is seen by the parent");
	for (i = 0; i < 500 && sv.live; i++) {
		usleep(10000);
		xd_super_reap(&sv);
	}
	CHECK_MSG(!sv.live && xd_gpumem_used(DOM_A) == before,
		  "a killed worker's share returns when it is reaped",
		  "live %u, used %llu", sv.live,
		  (unsigned long long)xd_gpumem_used(DOM_A));
	xd_super_fini(&sv);
}

static void test_status(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int err;

	REQUIRE_MSG(f, "memstream", "no memory");
	err = xd_gpumem_print(table_path, f);
	fclose(f);
	CHECK_MSG(!err && strstr(text, "xen:5 ") &&
		  strstr(text, "3149824 (3.0 MiB)") &&
		  strstr(text, "8388608 (8.0 MiB)"),
		  "the table's file shows usage and quota per domain",
		  "err %d, text:\n%s", err, text ? text : "");
	free(text);
	CHECK_EQ(xd_gpumem_print("/nonexistent/x.gpumem", stdout), -ENOENT,
		 "no daemon's file: an error");
}

int main(void)
{
	struct xd_session s;
	struct xd_chan c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	xd_log_setup(XD_LOG_ERROR, 0);
	test_parse();
	snprintf(table_path, sizeof(table_path), "/tmp/xcuda-gpumem-%d",
		 (int)getpid());
	REQUIRE_MSG(!xd_gpumem_create(8, table_path), "table", "create");
	REQUIRE_MSG(!xd_gpumem_bind(0x1111, DOM_A, QUOTA), "bind", "bind");
	memset(&s, 0, sizeof(s));
	memset(&c, 0, sizeof(c));
	open_session(&s, &c, 0x1111, DOM_A);
	test_refused_before_cuda(&s);
	test_frees(&s);
	test_shared();
	test_reaped_worker();
	test_status();
	xd_session_fini(&s);
	CHECK_EQ(xd_gpumem_used(DOM_A), 0,
		 "the session's end gives back what it held");
	free(c.arena);
	xd_gpumem_destroy();
	CHECK(access(table_path, F_OK) && errno == ENOENT,
	      "the daemon's file goes with its table");
	return check_summary();
}
