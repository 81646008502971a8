// SPDX-License-Identifier: MIT
/*
 * Every command through the real xcudad on a real GPU, speaking the wire
 * protocol directly: device queries, memory and copies (plain, async,
 * staged, 2D), pinning, streams and events, and a module written in PTX
 * here (so no nvcc is needed) that is uploaded in pieces, shared, has its
 * kernel's parameter layout read back and is launched with inline and
 * extent arguments.  Results are checked against the CUDA runtime called
 * in this process.  Without a usable GPU it checks that xcudad says so
 * and skips the rest.
 */
#include "xcuda/hash.h"
#include "daemon_harness.h"

/* saxpy(float a, const float *x, float *y, unsigned n) and a counter. */
static const char ptx[] =
".version 7.0\n"
".target sm_52\n"
".address_size 64\n"
".visible .global .align 4 .u32 xc_counter;\n"
".visible .entry xc_saxpy(\n"
"	.param .f32 xc_saxpy_a,\n"
"	.param .u64 xc_saxpy_x,\n"
"	.param .u64 xc_saxpy_y,\n"
"	.param .u32 xc_saxpy_n\n"
")\n"
"{\n"
"	.reg .pred %p<2>;\n"
"	.reg .f32 %f<5>;\n"
"	.reg .b32 %r<6>;\n"
"	.reg .b64 %rd<8>;\n"
"	ld.param.f32 %f1, [xc_saxpy_a];\n"
"	ld.param.u64 %rd1, [xc_saxpy_x];\n"
"	ld.param.u64 %rd2, [xc_saxpy_y];\n"
"	ld.param.u32 %r2, [xc_saxpy_n];\n"
"	mov.u32 %r3, %ctaid.x;\n"
"	mov.u32 %r4, %ntid.x;\n"
"	mov.u32 %r5, %tid.x;\n"
"	mad.lo.s32 %r1, %r3, %r4, %r5;\n"
"	setp.ge.u32 %p1, %r1, %r2;\n"
"	@%p1 bra DONE;\n"
"	cvta.to.global.u64 %rd3, %rd1;\n"
"	cvta.to.global.u64 %rd4, %rd2;\n"
"	mul.wide.u32 %rd5, %r1, 4;\n"
"	add.s64 %rd6, %rd3, %rd5;\n"
"	add.s64 %rd7, %rd4, %rd5;\n"
"	ld.global.f32 %f2, [%rd6];\n"
"	ld.global.f32 %f3, [%rd7];\n"
"	fma.rn.f32 %f4, %f1, %f2, %f3;\n"
"	st.global.f32 [%rd7], %f4;\n"
"	atom.global.add.u32 %r5, [xc_counter], 1;\n"
"DONE:\n"
"	ret;\n"
"}\n"
".visible .entry xc_noargs()\n"
"{\n"
"	ret;\n"
"}\n"
".visible .global .align 4 .u32 xc_stop;\n"
".visible .entry xc_spin()\n"
"{\n"
"	.reg .pred %p<2>;\n"
"	.reg .b32 %r<2>;\n"
"SPIN:\n"
"	ld.volatile.global.u32 %r1, [xc_stop];\n"
"	setp.eq.u32 %p1, %r1, 0;\n"
"	@%p1 bra SPIN;\n"
"	ret;\n"
"}\n";

#define N		1000
#define XFER		(1u << 20)
/* Arena layout of this test. */
#define OFF_SCRATCH	0
#define OFF_BACK	(4u << 20)
#define OFF_PIN		(16u << 20)

#define TRANSPORT_ERR	(-1000)

static struct xc_transport t;

/* One call; returns its status, TRANSPORT_ERR if no proper answer came. */
static int op(uint16_t code, const void *args, uint16_t len, uint32_t off,
	      uint32_t dlen, uint16_t flags, void *res, size_t reslen)
{
	struct xcuda_request req;
	struct xcuda_response rsp;

	req_init(&t, &req, code, args, len);
	req.hdr.data_off = off;
	req.hdr.data_len = dlen;
	req.hdr.flags = flags;
	if (rpc(&t, &req, &rsp))
		return TRANSPORT_ERR;
	if (res)
		memcpy(res, rsp.out, reslen);
	return rsp.status;
}

#define OP(code, a, res)						\
	op(code, &(a), sizeof(a), 0, 0, 0, &(res), sizeof(res))
#define OP_NORES(code, a)	op(code, &(a), sizeof(a), 0, 0, 0, NULL, 0)

static uint8_t *arena(uint64_t off)
{
	return (uint8_t *)t.arena + off;
}

static uint32_t gpu_open(void)
{
	struct xcuda_open_args a = { XCUDA_PROTO_VERSION, XCUDA_FEATURES_ALL,
				     0, 0 };
	struct xcuda_open_res r = { 0 };
	int st;

	a.arena_size = t.arena_size;
	st = OP(XCUDA_OP_OPEN, a, r);
	CHECK_MSG(!st && r.init_status == init_status &&
		  r.device_count == (init_status ? -1 : device_count),
		  "OPEN matches this process's runtime",
		  "status %d init %d/%d count %d/%d", st, r.init_status,
		  init_status, r.device_count, device_count);
	return (uint32_t)r.init_status;
}

static void test_device(void)
{
	struct xcuda_set_device_args dev = { .device = 0 };
	struct xcuda_get_device_properties_args pa = { .device = 0 };
	struct xcuda_device_get_attribute_args at = {
		.attr = cudaDevAttrComputeCapabilityMajor, .device = 0
	};
	struct xcuda_device_get_limit_args gl = { .limit = cudaLimitStackSize };
	struct xcuda_device_set_limit_args lim = {
		.limit = cudaLimitStackSize
	};
	struct xcuda_get_device_count_res cr = { 0 };
	struct xcuda_device_get_attribute_res ar = { 0 };
	struct xcuda_get_device_flags_res fr = { 0 };
	struct xcuda_device_get_limit_res ur = { 0 };
	struct xcuda_mem_get_info_res mi = { 0 };
	struct cudaDeviceProp mine, theirs;
	int st, major = 0;
	size_t stack = 0;

	st = op(XCUDA_OP_GET_DEVICE_COUNT, NULL, 0, 0, 0, 0, &cr, sizeof(cr));
	CHECK_MSG(!st && cr.count == device_count, "GET_DEVICE_COUNT",
		  "status %d count %d", st, cr.count);
	st = OP_NORES(XCUDA_OP_SET_DEVICE, dev);
	CHECK_EQ(st, 0, "SET_DEVICE 0");
	dev.device = device_count;
	st = OP_NORES(XCUDA_OP_SET_DEVICE, dev);
	CHECK_EQ(st, cudaErrorInvalidDevice, "SET_DEVICE past the last");
	dev.device = 0;

	cudaGetDeviceProperties(&mine, 0);
	memset(arena(OFF_SCRATCH), 0, sizeof(theirs));
	st = op(XCUDA_OP_GET_DEVICE_PROPERTIES, &pa, sizeof(pa),
		OFF_SCRATCH, sizeof(theirs), 0, NULL, 0);
	memcpy(&theirs, arena(OFF_SCRATCH), sizeof(theirs));
	CHECK_MSG(!st && !strcmp(mine.name, theirs.name) &&
		  mine.totalGlobalMem == theirs.totalGlobalMem &&
		  mine.major == theirs.major,
		  "GET_DEVICE_PROPERTIES", "status %d name '%s' vs '%s'", st,
		  theirs.name, mine.name);

	cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
	st = OP(XCUDA_OP_DEVICE_GET_ATTRIBUTE, at, ar);
	CHECK_MSG(!st && ar.value == major, "DEVICE_GET_ATTRIBUTE",
		  "status %d major %d want %d", st, ar.value, major);

	cudaDeviceGetLimit(&stack, cudaLimitStackSize);
	st = OP(XCUDA_OP_DEVICE_GET_LIMIT, gl, ur);
	CHECK_MSG(!st && ur.pValue == stack, "DEVICE_GET_LIMIT",
		  "status %d stack %llu want %zu", st,
		  (unsigned long long)ur.pValue, stack);
	lim.value = ur.pValue;
	st = OP_NORES(XCUDA_OP_DEVICE_SET_LIMIT, lim);
	CHECK_EQ(st, 0, "DEVICE_SET_LIMIT");

	st = op(XCUDA_OP_MEM_GET_INFO, NULL, 0, 0, 0, 0, &mi, sizeof(mi));
	CHECK_MSG(!st && mi.total && mi.free <= mi.total, "MEM_GET_INFO",
		  "status %d free %llu total %llu", st,
		  (unsigned long long)mi.free, (unsigned long long)mi.total);
	st = op(XCUDA_OP_GET_DEVICE_FLAGS, NULL, 0, 0, 0, 0, &fr, sizeof(fr));
	CHECK_EQ(st, 0, "GET_DEVICE_FLAGS");
	st = op(XCUDA_OP_DEVICE_SYNCHRONIZE, NULL, 0, 0, 0, 0, NULL, 0);
	CHECK_EQ(st, 0, "DEVICE_SYNCHRONIZE");
}

static uint64_t dmalloc(uint64_t size)
{
	struct xcuda_malloc_args a = { size };
	struct xcuda_malloc_res r = { 0 };

	if (OP(XCUDA_OP_MALLOC, a, r))
		return 0;
	return r.ptr;
}

static int copy(uint32_t way, uint64_t dst, uint64_t src, uint64_t count,
		uint32_t flags, uint32_t stream, uint16_t rflags)
{
	struct xcuda_memcpy_args a = { 0 };

	a.dst = dst;
	a.src = src;
	a.count = count;
	a.dir = way;
	a.flags = flags;
	a.stream = stream;
	return op(XCUDA_OP_MEMCPY, &a, sizeof(a), 0, 0, rflags, NULL, 0);
}

static void fill(uint64_t off, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		arena(off)[i] = (uint8_t)(i * 7 + seed + (i >> 11));
}

static void test_memory(uint32_t stream)
{
	struct xcuda_memset_args ms = { 0 };
	struct xcuda_memcpy_2d_args m2 = { 0 };
	struct xcuda_malloc_pitch_args pa = { .width = 100, .height = 20 };
	struct xcuda_malloc_pitch_res pr = { 0 };
	struct xcuda_free_args fr = { 0 };
	uint64_t d1 = dmalloc(XFER), d2 = dmalloc(XFER);
	uint32_t i, bad = 0;
	int st;

	CHECK_MSG(d1 && d2, "MALLOC", "pointers %llx %llx",
		  (unsigned long long)d1, (unsigned long long)d2);
	if (!d1 || !d2)
		return;

	fill(OFF_SCRATCH, XFER, 1);
	st = copy(XCUDA_COPY_H2D, d1, OFF_SCRATCH, XFER, 0, 0, 0);
	CHECK_EQ(st, 0, "MEMCPY h2d");
	st = copy(XCUDA_COPY_D2D, d2, d1, XFER, 0, 0, 0);
	CHECK_EQ(st, 0, "MEMCPY d2d");
	memset(arena(OFF_BACK), 0, XFER);
	st = copy(XCUDA_COPY_D2H, OFF_BACK, d2, XFER, 0, 0, 0);
	CHECK_MSG(!st && !memcmp(arena(OFF_BACK), arena(OFF_SCRATCH), XFER),
		  "MEMCPY d2h round trip", "status %d", st);

	/* Staged async copies are complete when answered. */
	fill(OFF_SCRATCH, XFER, 2);
	st = copy(XCUDA_COPY_H2D, d1, OFF_SCRATCH, XFER,
		  XCUDA_COPY_ASYNC | XCUDA_COPY_STAGED, stream,
		  XCUDA_RF_POSTED);
	CHECK_EQ(st, 0, "MEMCPY h2d async staged, posted");
	memset(arena(OFF_BACK), 0, XFER);
	st = copy(XCUDA_COPY_D2H, OFF_BACK, d1, XFER,
		  XCUDA_COPY_ASYNC | XCUDA_COPY_STAGED, stream, 0);
	CHECK_MSG(!st && !memcmp(arena(OFF_BACK), arena(OFF_SCRATCH), XFER),
		  "MEMCPY async staged round trip", "status %d", st);

	ms.ptr = d1 + 100;
	ms.count = 1000;
	ms.value = 0x5a;
	ms.flags = XCUDA_COPY_ASYNC;
	ms.stream = stream;
	st = op(XCUDA_OP_MEMSET, &ms, sizeof(ms), 0, 0, XCUDA_RF_POSTED,
		NULL, 0);
	CHECK_EQ(st, 0, "MEMSET async posted");
	st = copy(XCUDA_COPY_D2H, OFF_BACK, d1, 2000, 0, 0, 0);
	for (i = 0; i < 2000; i++)
		bad += arena(OFF_BACK)[i] != (i >= 100 && i < 1100 ? 0x5a :
					      arena(OFF_SCRATCH)[i]);
	CHECK_MSG(!st && !bad, "MEMSET result", "status %d, %u bytes wrong", st,
		  bad);

	st = OP(XCUDA_OP_MALLOC_PITCH, pa, pr);
	CHECK_MSG(!st && pr.ptr && pr.pitch >= 100, "MALLOC_PITCH",
		  "status %d pitch %llu", st, (unsigned long long)pr.pitch);
	fill(OFF_SCRATCH, 64 * 20, 3);
	m2.dst = pr.ptr;
	m2.dpitch = pr.pitch;
	m2.src = OFF_SCRATCH;
	m2.spitch = 64;
	m2.width = 60;
	m2.height = 20;
	m2.dir = XCUDA_COPY_H2D;
	st = op(XCUDA_OP_MEMCPY_2D, &m2, sizeof(m2), 0, 0, 0, NULL, 0);
	CHECK_EQ(st, 0, "MEMCPY_2D h2d");
	memset(arena(OFF_BACK), 0, 64 * 20);
	m2.dst = OFF_BACK;
	m2.dpitch = 64;
	m2.src = pr.ptr;
	m2.spitch = pr.pitch;
	m2.dir = XCUDA_COPY_D2H;
	m2.flags = XCUDA_COPY_ASYNC | XCUDA_COPY_STAGED;
	m2.stream = stream;
	st = op(XCUDA_OP_MEMCPY_2D, &m2, sizeof(m2), 0, 0, 0, NULL, 0);
	for (i = 0, bad = 0; i < 20; i++)
		bad += !!memcmp(arena(OFF_BACK) + i * 64,
				arena(OFF_SCRATCH) + i * 64, 60) +
		       (arena(OFF_BACK)[i * 64 + 60] != 0);
	CHECK_MSG(!st && !bad, "MEMCPY_2D round trip", "status %d, %u rows "
		  "wrong", st, bad);

	fr.ptr = pr.ptr;
	st = OP_NORES(XCUDA_OP_FREE, fr);
	fr.ptr = d2;
	st |= OP_NORES(XCUDA_OP_FREE, fr);
	CHECK_EQ(st, 0, "FREE");
	fr.ptr = d1;
	OP_NORES(XCUDA_OP_FREE, fr);
}

static void test_pin(void)
{
	struct xcuda_arena_pin_args a = { .flags = cudaHostRegisterMapped };
	struct xcuda_arena_pin_res r = { 0 };
	int st;

	st = op(XCUDA_OP_ARENA_PIN, &a, sizeof(a), OFF_PIN, 1u << 20, 0, &r,
		sizeof(r));
	CHECK_MSG(!st && r.device_ptr, "ARENA_PIN mapped",
		  "status %d device_ptr %llx", st,
		  (unsigned long long)r.device_ptr);
	st = op(XCUDA_OP_ARENA_PIN, &a, sizeof(a), OFF_PIN, 1u << 20, 0, &r,
		sizeof(r));
	CHECK_EQ(st, cudaErrorHostMemoryAlreadyRegistered, "ARENA_PIN twice");
	st = op(XCUDA_OP_ARENA_UNPIN, NULL, 0, OFF_PIN, 1u << 20, 0, NULL, 0);
	CHECK_EQ(st, 0, "ARENA_UNPIN");
	st = op(XCUDA_OP_ARENA_UNPIN, NULL, 0, OFF_PIN, 1u << 20, 0, NULL, 0);
	CHECK_EQ(st, cudaErrorHostMemoryNotRegistered, "ARENA_UNPIN twice");
	/* Left pinned: the worker unpins it when the session ends. */
	a.flags = 0;
	st = op(XCUDA_OP_ARENA_PIN, &a, sizeof(a), OFF_PIN, 1u << 20, 0, &r,
		sizeof(r));
	CHECK_MSG(!st && r.device_ptr, "ARENA_PIN without Mapped still maps",
		  "status %d", st);
}

static uint32_t handle_op(uint16_t code, const void *a, uint16_t len,
			  int *st)
{
	/* STREAM_CREATE's and EVENT_CREATE's results: the same layout. */
	struct xcuda_stream_create_res r = { 0 };

	_Static_assert(sizeof(struct xcuda_stream_create_res) ==
		       sizeof(struct xcuda_event_create_res) &&
		       offsetof(struct xcuda_event_create_res, handle) == 0,
		       "handle results");
	*st = op(code, a, len, 0, 0, 0, &r, sizeof(r));
	return r.handle;
}

static void test_streams(uint32_t *stream_out)
{
	struct xcuda_stream_create_args sc = { cudaStreamNonBlocking, 0 };
	struct xcuda_event_create_args ec = { .flags = cudaEventDefault };
	struct xcuda_event_synchronize_args esy = { 0 };
	struct xcuda_event_query_args eq = { 0 };
	struct xcuda_event_destroy_args ed = { 0 };
	struct xcuda_stream_synchronize_args ssy = { 0 };
	struct xcuda_stream_query_args sq = { 0 };
	struct xcuda_stream_destroy_args sd = { 0 };
	struct xcuda_event_record_args er = { 0, 0 };
	struct xcuda_event_elapsed_time_args el = { 0, 0 };
	struct xcuda_stream_wait_event_args sw = { 0 };
	struct xcuda_event_elapsed_time_res fr = { .ms = -1 };
	uint32_t s1, s2, e1, e2;
	int st;

	s1 = handle_op(XCUDA_OP_STREAM_CREATE, &sc, sizeof(sc), &st);
	CHECK_MSG(!st && s1 >= XCUDA_HANDLE_FIRST, "STREAM_CREATE",
		  "status %d handle %u", st, s1);
	s2 = handle_op(XCUDA_OP_STREAM_CREATE, &sc, sizeof(sc), &st);
	e1 = handle_op(XCUDA_OP_EVENT_CREATE, &ec, sizeof(ec), &st);
	e2 = handle_op(XCUDA_OP_EVENT_CREATE, &ec, sizeof(ec), &st);
	CHECK_MSG(!st && e1 >= XCUDA_HANDLE_FIRST && e2 != e1, "EVENT_CREATE",
		  "status %d handles %u %u", st, e1, e2);

	er.event = e1;
	er.stream = s1;
	st = op(XCUDA_OP_EVENT_RECORD, &er, sizeof(er), 0, 0, XCUDA_RF_POSTED,
		NULL, 0);
	CHECK_EQ(st, 0, "EVENT_RECORD posted");
	sw.stream = s2;
	sw.event = e1;
	st = OP_NORES(XCUDA_OP_STREAM_WAIT_EVENT, sw);
	CHECK_EQ(st, 0, "STREAM_WAIT_EVENT");
	er.event = e2;
	er.stream = s1;
	st = OP_NORES(XCUDA_OP_EVENT_RECORD, er);
	esy.event = e2;
	st |= OP_NORES(XCUDA_OP_EVENT_SYNCHRONIZE, esy);
	CHECK_EQ(st, 0, "EVENT_SYNCHRONIZE");
	eq.event = e2;
	st = OP_NORES(XCUDA_OP_EVENT_QUERY, eq);
	CHECK_EQ(st, 0, "EVENT_QUERY");
	el.start = e1;
	el.end = e2;
	st = OP(XCUDA_OP_EVENT_ELAPSED_TIME, el, fr);
	CHECK_MSG(!st && fr.ms >= 0, "EVENT_ELAPSED_TIME", "status %d ms %f",
		  st, (double)fr.ms);
	ssy.stream = s1;
	st = OP_NORES(XCUDA_OP_STREAM_SYNCHRONIZE, ssy);
	CHECK_EQ(st, 0, "STREAM_SYNCHRONIZE");
	sq.stream = s1;
	st = OP_NORES(XCUDA_OP_STREAM_QUERY, sq);
	CHECK_MSG(!st || st == cudaErrorNotReady, "STREAM_QUERY", "status %d",
		  st);
	ssy.stream = XCUDA_STREAM_PER_THREAD;
	st = OP_NORES(XCUDA_OP_STREAM_SYNCHRONIZE, ssy);
	CHECK_EQ(st, 0, "STREAM_SYNCHRONIZE per-thread");

	ed.event = e1;
	st = OP_NORES(XCUDA_OP_EVENT_DESTROY, ed);
	ed.event = e2;
	st |= OP_NORES(XCUDA_OP_EVENT_DESTROY, ed);
	CHECK_EQ(st, 0, "EVENT_DESTROY");
	st = OP_NORES(XCUDA_OP_EVENT_DESTROY, ed);
	CHECK_EQ(st, cudaErrorInvalidResourceHandle, "EVENT_DESTROY twice");
	sd.stream = s2;
	st = OP_NORES(XCUDA_OP_STREAM_DESTROY, sd);
	CHECK_EQ(st, 0, "STREAM_DESTROY");
	sq.stream = s2;
	st = OP_NORES(XCUDA_OP_STREAM_QUERY, sq);
	CHECK_EQ(st, cudaErrorInvalidResourceHandle,
		 "destroyed stream is unknown");
	*stream_out = s1;
}

/* Uploads the PTX (NUL included) in two pieces; returns the handle. */
static uint32_t upload(int *st)
{
	struct xcuda_module_data_args a = {
		.total = sizeof(ptx), .flags = XCUDA_MOD_FIRST
	};
	struct xcuda_module_data_res r = { 0 };
	uint32_t half = sizeof(ptx) / 2;

	a.hash = xcuda_fnv1a64(0, ptx, sizeof(ptx));
	memcpy(arena(OFF_SCRATCH), ptx, half);
	*st = op(XCUDA_OP_MODULE_DATA, &a, sizeof(a), OFF_SCRATCH, half, 0, &r,
		 sizeof(r));
	if (*st || r.handle)
		return 0;
	a.offset = half;
	a.flags = XCUDA_MOD_LAST;
	memcpy(arena(OFF_SCRATCH + 4096), ptx + half, sizeof(ptx) - half);
	*st = op(XCUDA_OP_MODULE_DATA, &a, sizeof(a), OFF_SCRATCH + 4096,
		 sizeof(ptx) - half, 0, &r, sizeof(r));
	return r.handle;
}

static int symbol(uint16_t code, uint32_t module, const char *name,
		  void *res, size_t reslen)
{
	/* FUNC_GET's and VAR_GET's arguments: the same layout. */
	struct xcuda_func_get_args a = { .module = module };

	_Static_assert(sizeof(struct xcuda_func_get_args) ==
		       sizeof(struct xcuda_var_get_args) &&
		       offsetof(struct xcuda_var_get_args, module) == 0,
		       "symbol args");

	memset(arena(OFF_SCRATCH), 0xee, 16384);
	strcpy((char *)arena(OFF_SCRATCH), name);
	return op(code, &a, sizeof(a), OFF_SCRATCH, 16384, 0, res, reslen);
}

struct saxpy_args {
	float a;
	uint32_t pad;
	uint64_t x;
	uint64_t y;
	uint32_t n;
};

static int launch(uint32_t func, uint32_t stream, const void *args,
		  uint32_t len, int extent, uint16_t flags)
{
	struct xcuda_launch_args l;
	uint16_t hlen = offsetof(struct xcuda_launch_args, args);

	memset(&l, 0, sizeof(l));
	l.func = func;
	l.stream = stream;
	l.grid[0] = (N + 127) / 128;
	l.grid[1] = l.grid[2] = 1;
	l.block[0] = 128;
	l.block[1] = l.block[2] = 1;
	l.args_len = len;
	if (extent) {
		if (len)
			memcpy(arena(OFF_SCRATCH), args, len);
		return op(XCUDA_OP_LAUNCH, &l, hlen, OFF_SCRATCH, len, flags,
			  NULL, 0);
	}
	if (len)
		memcpy(l.args, args, len);
	return op(XCUDA_OP_LAUNCH, &l, (uint16_t)(hlen + len), 0, 0, flags,
		  NULL, 0);
}

static void test_modules(uint32_t stream)
{
	static const struct xcuda_param want[4] = {
		{ 0, 4 }, { 8, 8 }, { 16, 8 }, { 24, 4 },
	};
	struct xcuda_func_get_res fr = { 0 }, fr2 = { 0 }, fr0 = { 0 };
	struct xcuda_var_get_res vr = { 0 }, vr2 = { 0 };
	struct xcuda_func_get_attributes_args ga = { 0 };
	struct xcuda_stream_synchronize_args ssy = { 0 };
	struct xcuda_module_unload_args mu = { 0 };
	struct xcuda_func_set_attribute_args fa = { 0 };
	struct xcuda_occupancy_args oc = { .func = 0, .blockSize = 128 };
	struct xcuda_occupancy_res ir = { 0 };
	struct xcuda_param got[4];
	struct cudaFuncAttributes attr;
	struct saxpy_args sa;
	float x[N], y[N];
	uint64_t dx, dy;
	uint32_t mod, mod2, fr2_noargs = 0, i, bad = 0, counter = 0;
	int st;

	mod = upload(&st);
	CHECK_MSG(!st && mod >= XCUDA_HANDLE_FIRST, "MODULE_DATA loads PTX",
		  "status %d handle %u", st, mod);
	if (st)
		return;
	mod2 = upload(&st);
	CHECK_MSG(!st && mod2 != mod && mod2 >= XCUDA_HANDLE_FIRST,
		  "same bytes twice are two modules", "status %d handles %u %u",
		  st, mod, mod2);

	st = symbol(XCUDA_OP_FUNC_GET, mod, "xc_saxpy", &fr, sizeof(fr));
	memcpy(got, arena(OFF_SCRATCH), sizeof(got));
	CHECK_MSG(!st && fr.handle >= XCUDA_HANDLE_FIRST && fr.nparams == 4 &&
		  fr.args_size == 28 && !memcmp(got, want, sizeof(want)),
		  "FUNC_GET layout", "status %d handle %u nparams %u size %u "
		  "first {%u,%u} last {%u,%u}", st, fr.handle, fr.nparams,
		  fr.args_size, got[0].offset, got[0].size, got[3].offset,
		  got[3].size);
	st = symbol(XCUDA_OP_FUNC_GET, mod, "xc_saxpy", &fr2, sizeof(fr2));
	CHECK_MSG(!st && fr2.handle == fr.handle, "FUNC_GET twice, same handle",
		  "status %d handle %u", st, fr2.handle);
	st = symbol(XCUDA_OP_FUNC_GET, mod, "xc_noargs", &fr0, sizeof(fr0));
	CHECK_MSG(!st && fr0.nparams == 0 && fr0.args_size == 0 &&
		  fr0.handle != fr.handle, "FUNC_GET without parameters",
		  "status %d nparams %u", st, fr0.nparams);
	st = symbol(XCUDA_OP_FUNC_GET, mod, "no_such_kernel", &fr2,
		    sizeof(fr2));
	CHECK_MSG(st > 0 && st != TRANSPORT_ERR, "FUNC_GET unknown name fails",
		  "status %d", st);
	st = symbol(XCUDA_OP_VAR_GET, mod, "xc_counter", &vr, sizeof(vr));
	CHECK_MSG(!st && vr.ptr && vr.size == 4, "VAR_GET",
		  "status %d size %llu", st, (unsigned long long)vr.size);
	st = symbol(XCUDA_OP_VAR_GET, mod2, "xc_counter", &vr2, sizeof(vr2));
	CHECK_MSG(!st && vr2.ptr && vr2.ptr != vr.ptr,
		  "each module has its own variables", "status %d", st);
	st = symbol(XCUDA_OP_FUNC_GET, mod2, "xc_noargs", &fr2, sizeof(fr2));
	CHECK_MSG(!st && fr2.handle >= XCUDA_HANDLE_FIRST,
		  "FUNC_GET in the second module", "status %d", st);
	fr2_noargs = fr2.handle;

	ga.func = fr.handle;
	st = op(XCUDA_OP_FUNC_GET_ATTRIBUTES, &ga, sizeof(ga), OFF_BACK,
		sizeof(attr), 0, NULL, 0);
	memcpy(&attr, arena(OFF_BACK), sizeof(attr));
	CHECK_MSG(!st && attr.maxThreadsPerBlock > 0, "FUNC_GET_ATTRIBUTES",
		  "status %d maxThreadsPerBlock %d", st,
		  attr.maxThreadsPerBlock);
	fa.func = fr.handle;
	fa.attr = cudaFuncAttributeMaxDynamicSharedMemorySize;
	fa.value = 1024;
	st = OP_NORES(XCUDA_OP_FUNC_SET_ATTRIBUTE, fa);
	CHECK_EQ(st, 0, "FUNC_SET_ATTRIBUTE");
	oc.func = fr.handle;
	st = OP(XCUDA_OP_OCCUPANCY, oc, ir);
	CHECK_MSG(!st && ir.numBlocks > 0, "OCCUPANCY", "status %d blocks %d",
		  st, ir.numBlocks);

	for (i = 0; i < N; i++) {
		x[i] = (float)i;
		y[i] = 1.0f;
	}
	dx = dmalloc(sizeof(x));
	dy = dmalloc(sizeof(y));
	memcpy(arena(OFF_BACK), x, sizeof(x));
	memcpy(arena(OFF_BACK + sizeof(x)), y, sizeof(y));
	st = copy(XCUDA_COPY_H2D, dx, OFF_BACK, sizeof(x), 0, 0, 0);
	st |= copy(XCUDA_COPY_H2D, dy, OFF_BACK + sizeof(x), sizeof(y), 0, 0,
		   0);
	memset(&sa, 0, sizeof(sa));
	sa.a = 2.0f;
	sa.x = dx;
	sa.y = dy;
	sa.n = N;
	st |= launch(fr.handle, stream, &sa, 28, 0, XCUDA_RF_POSTED);
	CHECK_EQ(st, 0, "LAUNCH inline, posted");
	st = launch(fr.handle, stream, &sa, 28, 1, 0);
	CHECK_EQ(st, 0, "LAUNCH extent");
	st = launch(fr.handle, stream, &sa, 24, 0, 0);
	CHECK_EQ(st, cudaErrorInvalidValue, "LAUNCH with the wrong size");
	st = launch(fr0.handle, 0, NULL, 0, 0, 0);
	CHECK_EQ(st, 0, "LAUNCH without parameters");
	ssy.stream = stream;
	st = OP_NORES(XCUDA_OP_STREAM_SYNCHRONIZE, ssy);
	st |= copy(XCUDA_COPY_D2H, OFF_BACK, dy, sizeof(y), 0, 0, 0);
	st |= copy(XCUDA_COPY_D2H, OFF_BACK + sizeof(y), vr.ptr, 4, 0, 0, 0);
	memcpy(y, arena(OFF_BACK), sizeof(y));
	memcpy(&counter, arena(OFF_BACK + sizeof(y)), 4);
	for (i = 0; i < N; i++)
		bad += y[i] != 1.0f + 4.0f * (float)i;
	CHECK_MSG(!st && !bad && counter == 2 * N, "kernel results",
		  "status %d, %u wrong, counter %u", st, bad, counter);

	mu.module = mod;
	st = op(XCUDA_OP_MODULE_UNLOAD, &mu, sizeof(mu), 0, 0, XCUDA_RF_POSTED,
		NULL, 0);
	CHECK_EQ(st, 0, "unload, posted");
	st = launch(fr.handle, stream, &sa, 28, 0, 0);
	CHECK_EQ(st, cudaErrorInvalidResourceHandle,
		 "kernels of an unloaded module are unknown");
	st = launch(fr2_noargs, 0, NULL, 0, 0, 0);
	st |= op(XCUDA_OP_DEVICE_SYNCHRONIZE, NULL, 0, 0, 0, 0, NULL, 0);
	CHECK_EQ(st, 0, "the other module's kernels still run");
	st = OP_NORES(XCUDA_OP_MODULE_UNLOAD, mu);
	CHECK_EQ(st, cudaErrorInvalidResourceHandle, "unload once too often");
	mu.module = mod2;
	st = OP_NORES(XCUDA_OP_MODULE_UNLOAD, mu);
	CHECK_EQ(st, 0, "unload of the second module");
}

static void test_reset(uint32_t stream)
{
	struct xcuda_stream_synchronize_args h = { .stream = stream };
	int st;

	/* A module that outlives the reset, and its kernel. */
	uint32_t mod = upload(&st);
	struct xcuda_func_get_res fr = { 0 };

	st = op(XCUDA_OP_DEVICE_RESET, NULL, 0, 0, 0, 0, NULL, 0);
	CHECK_EQ(st, 0, "DEVICE_RESET");
	st = OP_NORES(XCUDA_OP_STREAM_SYNCHRONIZE, h);
	CHECK_EQ(st, cudaErrorInvalidResourceHandle,
		 "streams are gone after the reset");
	st = symbol(XCUDA_OP_FUNC_GET, mod, "xc_noargs", &fr, sizeof(fr));
	st |= launch(fr.handle, 0, NULL, 0, 0, 0);
	st |= op(XCUDA_OP_DEVICE_SYNCHRONIZE, NULL, 0, 0, 0, 0, NULL, 0);
	CHECK_EQ(st, 0, "modules survive the reset");
}

/*
 * Last: a kernel that never ends, waited for, and a guest that goes
 * meanwhile (its end of the channel closes, as when it is killed).  The
 * worker must not wait for the GPU forever: it ends, and the GPU memory
 * it held returns.
 */
static void test_never_ending(void)
{
	struct xcuda_malloc_args m = { 256u << 20 };
	struct xcuda_func_get_res fr = { 0 };
	struct xcuda_request req;
	size_t free0 = 0, free1 = 0, free2 = 0, total = 0;
	uint64_t dptr = 0;
	long t0, waited;
	uint32_t mod;
	pid_t pid;
	int st;

	pid = worker_pid(t.session);
	mod = upload(&st);
	st |= symbol(XCUDA_OP_FUNC_GET, mod, "xc_spin", &fr, sizeof(fr));
	CHECK_MSG(!st && pid > 0, "spinning kernel found", "status %d pid %d",
		  st, (int)pid);
	if (st || pid <= 0)
		return;
	cudaMemGetInfo(&free0, &total);
	st = OP(XCUDA_OP_MALLOC, m, dptr);
	st |= launch(fr.handle, 0, NULL, 0, 0, 0);
	cudaMemGetInfo(&free1, &total);
	CHECK_MSG(!st && free0 - free1 >= m.size, "the worker holds 256 MiB "
		  "of GPU memory", "status %d free %zu then %zu", st, free0,
		  free1);
	/* Waited for, and never answered. */
	req_init(&t, &req, XCUDA_OP_DEVICE_SYNCHRONIZE, NULL, 0);
	st = t.ops->submit(&t, &req, 1);
	nap_ms(300);
	t.ops->close(&t);
	t0 = now_ms();
	while (kill(pid, 0) == 0 && now_ms() - t0 < 10000)
		nap_ms(50);
	waited = now_ms() - t0;
	CHECK_MSG(st >= 0 && kill(pid, 0) && errno == ESRCH &&
		  wait_log("the guest went during a DEVICE_SYNCHRONIZE", 1000),
		  "a worker waiting for a kernel that never ends goes with "
		  "its guest", "submit %d, worker %s after %ld ms", st,
		  kill(pid, 0) ? "gone" : "alive", waited);
	for (t0 = now_ms(); now_ms() - t0 < 5000; nap_ms(100)) {
		cudaMemGetInfo(&free2, &total);
		if (free2 + (64u << 20) >= free0)
			break;
	}
	CHECK_MSG(free2 + (64u << 20) >= free0, "its GPU memory returns",
		  "free %zu before, %zu now", free0, free2);
}

int main(void)
{
	uint32_t stream = 0;
	int err;

	harness_setup();
	CHECK_MSG(!start_daemon("8"), "daemon starts", "see the log");
	if (daemon_pid < 0)
		return check_summary();
	err = sess_open(&t);
	CHECK_EQ(err, 0, "session opens");
	if (err)
		goto stop;
	if (gpu_open()) {
		SKIP("gpu", "no usable GPU here (init status %d)",
		     init_status);
		t.ops->close(&t);
		goto stop;
	}
	test_device();
	test_streams(&stream);
	test_memory(stream);
	test_pin();
	test_modules(stream);
	test_reset(stream);

	check_close(&t, "CLOSE", "worker exits cleanly", 10000);
	t.ops->close(&t);
	/* A second session for the kernel that never ends. */
	err = sess_open(&t);
	CHECK_EQ(err, 0, "second session opens");
	if (!err && !gpu_open())
		test_never_ending();
	else if (!err)
		t.ops->close(&t);
stop:
	check_daemon_stops("daemon stops cleanly");
	return check_summary();
}
