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
	result(!st && r.init_status == init_status &&
	       r.device_count == (init_status ? -1 : device_count),
	       "OPEN matches this process's runtime",
	       "status %d init %d/%d count %d/%d", st, r.init_status,
	       init_status, r.device_count, device_count);
	return (uint32_t)r.init_status;
}

static void test_device(void)
{
	struct xcuda_dev_args dev = { 0, 0 };
	struct xcuda_attr_args at = { cudaDevAttrComputeCapabilityMajor, 0 };
	struct xcuda_limit_args lim = { cudaLimitStackSize, 0, 0 };
	struct xcuda_int_res ir = { 0 };
	struct xcuda_u64_res ur = { 0 };
	struct xcuda_meminfo_res mi = { 0 };
	struct cudaDeviceProp mine, theirs;
	int st, major = 0;
	size_t stack = 0;

	st = op(XCUDA_OP_GET_DEVICE_COUNT, NULL, 0, 0, 0, 0, &ir, sizeof(ir));
	result(!st && ir.value == device_count, "GET_DEVICE_COUNT",
	       "status %d count %d", st, ir.value);
	st = OP_NORES(XCUDA_OP_SET_DEVICE, dev);
	result(!st, "SET_DEVICE 0", "status %d", st);
	dev.device = device_count;
	st = OP_NORES(XCUDA_OP_SET_DEVICE, dev);
	result(st == cudaErrorInvalidDevice, "SET_DEVICE past the last",
	       "status %d", st);
	dev.device = 0;

	cudaGetDeviceProperties(&mine, 0);
	memset(arena(OFF_SCRATCH), 0, sizeof(theirs));
	st = op(XCUDA_OP_GET_DEVICE_PROPERTIES, &dev, sizeof(dev),
		OFF_SCRATCH, sizeof(theirs), 0, NULL, 0);
	memcpy(&theirs, arena(OFF_SCRATCH), sizeof(theirs));
	result(!st && !strcmp(mine.name, theirs.name) &&
	       mine.totalGlobalMem == theirs.totalGlobalMem &&
	       mine.major == theirs.major,
	       "GET_DEVICE_PROPERTIES", "status %d name '%s' vs '%s'", st,
	       theirs.name, mine.name);

	cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
	st = OP(XCUDA_OP_DEVICE_GET_ATTRIBUTE, at, ir);
	result(!st && ir.value == major, "DEVICE_GET_ATTRIBUTE",
	       "status %d major %d want %d", st, ir.value, major);

	cudaDeviceGetLimit(&stack, cudaLimitStackSize);
	st = OP(XCUDA_OP_DEVICE_GET_LIMIT, lim, ur);
	result(!st && ur.value == stack, "DEVICE_GET_LIMIT",
	       "status %d stack %llu want %zu", st,
	       (unsigned long long)ur.value, stack);
	lim.value = ur.value;
	st = OP_NORES(XCUDA_OP_DEVICE_SET_LIMIT, lim);
	result(!st, "DEVICE_SET_LIMIT", "status %d", st);

	st = op(XCUDA_OP_MEM_GET_INFO, NULL, 0, 0, 0, 0, &mi, sizeof(mi));
	result(!st && mi.total && mi.free <= mi.total, "MEM_GET_INFO",
	       "status %d free %llu total %llu", st,
	       (unsigned long long)mi.free, (unsigned long long)mi.total);
	st = op(XCUDA_OP_GET_DEVICE_FLAGS, NULL, 0, 0, 0, 0, &ir, sizeof(ir));
	result(!st, "GET_DEVICE_FLAGS", "status %d", st);
	st = op(XCUDA_OP_DEVICE_SYNCHRONIZE, NULL, 0, 0, 0, 0, NULL, 0);
	result(!st, "DEVICE_SYNCHRONIZE", "status %d", st);
}

static uint64_t dmalloc(uint64_t size)
{
	struct xcuda_malloc_args a = { size };
	struct xcuda_u64_res r = { 0 };

	if (OP(XCUDA_OP_MALLOC, a, r))
		return 0;
	return r.value;
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
	struct xcuda_memcpy2d_args m2 = { 0 };
	struct xcuda_pitch_args pa = { 100, 20 };
	struct xcuda_pitch_res pr = { 0 };
	struct xcuda_ptr_args fr = { 0 };
	uint64_t d1 = dmalloc(XFER), d2 = dmalloc(XFER);
	uint32_t i, bad = 0;
	int st;

	result(d1 && d2, "MALLOC", "pointers %llx %llx",
	       (unsigned long long)d1, (unsigned long long)d2);
	if (!d1 || !d2)
		return;

	fill(OFF_SCRATCH, XFER, 1);
	st = copy(XCUDA_COPY_H2D, d1, OFF_SCRATCH, XFER, 0, 0, 0);
	result(!st, "MEMCPY h2d", "status %d", st);
	st = copy(XCUDA_COPY_D2D, d2, d1, XFER, 0, 0, 0);
	result(!st, "MEMCPY d2d", "status %d", st);
	memset(arena(OFF_BACK), 0, XFER);
	st = copy(XCUDA_COPY_D2H, OFF_BACK, d2, XFER, 0, 0, 0);
	result(!st && !memcmp(arena(OFF_BACK), arena(OFF_SCRATCH), XFER),
	       "MEMCPY d2h round trip", "status %d", st);

	/* Staged async copies are complete when answered. */
	fill(OFF_SCRATCH, XFER, 2);
	st = copy(XCUDA_COPY_H2D, d1, OFF_SCRATCH, XFER,
		  XCUDA_COPY_ASYNC | XCUDA_COPY_STAGED, stream,
		  XCUDA_RF_POSTED);
	result(!st, "MEMCPY h2d async staged, posted", "status %d", st);
	memset(arena(OFF_BACK), 0, XFER);
	st = copy(XCUDA_COPY_D2H, OFF_BACK, d1, XFER,
		  XCUDA_COPY_ASYNC | XCUDA_COPY_STAGED, stream, 0);
	result(!st && !memcmp(arena(OFF_BACK), arena(OFF_SCRATCH), XFER),
	       "MEMCPY async staged round trip", "status %d", st);

	ms.ptr = d1 + 100;
	ms.count = 1000;
	ms.value = 0x5a;
	ms.flags = XCUDA_COPY_ASYNC;
	ms.stream = stream;
	st = op(XCUDA_OP_MEMSET, &ms, sizeof(ms), 0, 0, XCUDA_RF_POSTED,
		NULL, 0);
	result(!st, "MEMSET async posted", "status %d", st);
	st = copy(XCUDA_COPY_D2H, OFF_BACK, d1, 2000, 0, 0, 0);
	for (i = 0; i < 2000; i++)
		bad += arena(OFF_BACK)[i] != (i >= 100 && i < 1100 ? 0x5a :
					      arena(OFF_SCRATCH)[i]);
	result(!st && !bad, "MEMSET result", "status %d, %u bytes wrong", st,
	       bad);

	st = OP(XCUDA_OP_MALLOC_PITCH, pa, pr);
	result(!st && pr.ptr && pr.pitch >= 100, "MALLOC_PITCH",
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
	result(!st, "MEMCPY_2D h2d", "status %d", st);
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
	result(!st && !bad, "MEMCPY_2D round trip", "status %d, %u rows "
	       "wrong", st, bad);

	fr.ptr = pr.ptr;
	st = OP_NORES(XCUDA_OP_FREE, fr);
	fr.ptr = d2;
	st |= OP_NORES(XCUDA_OP_FREE, fr);
	result(!st, "FREE", "status %d", st);
	fr.ptr = d1;
	OP_NORES(XCUDA_OP_FREE, fr);
}

static void test_pin(void)
{
	struct xcuda_pin_args a = { cudaHostRegisterMapped, 0 };
	struct xcuda_pin_res r = { 0 };
	int st;

	st = op(XCUDA_OP_ARENA_PIN, &a, sizeof(a), OFF_PIN, 1u << 20, 0, &r,
		sizeof(r));
	result(!st && r.device_ptr, "ARENA_PIN mapped",
	       "status %d device_ptr %llx", st,
	       (unsigned long long)r.device_ptr);
	st = op(XCUDA_OP_ARENA_PIN, &a, sizeof(a), OFF_PIN, 1u << 20, 0, &r,
		sizeof(r));
	result(st == cudaErrorHostMemoryAlreadyRegistered,
	       "ARENA_PIN twice", "status %d", st);
	st = op(XCUDA_OP_ARENA_UNPIN, NULL, 0, OFF_PIN, 1u << 20, 0, NULL, 0);
	result(!st, "ARENA_UNPIN", "status %d", st);
	st = op(XCUDA_OP_ARENA_UNPIN, NULL, 0, OFF_PIN, 1u << 20, 0, NULL, 0);
	result(st == cudaErrorHostMemoryNotRegistered, "ARENA_UNPIN twice",
	       "status %d", st);
	/* Left pinned: the worker unpins it when the session ends. */
	a.flags = 0;
	st = op(XCUDA_OP_ARENA_PIN, &a, sizeof(a), OFF_PIN, 1u << 20, 0, &r,
		sizeof(r));
	result(!st && r.device_ptr, "ARENA_PIN without Mapped still maps",
	       "status %d", st);
}

static uint32_t handle_op(uint16_t code, const void *a, uint16_t len,
			  int *st)
{
	struct xcuda_handle_res r = { 0 };

	*st = op(code, a, len, 0, 0, 0, &r, sizeof(r));
	return r.handle;
}

static void test_streams(uint32_t *stream_out)
{
	struct xcuda_stream_create_args sc = { cudaStreamNonBlocking, 0 };
	struct xcuda_u32_args ec = { cudaEventDefault, 0 };
	struct xcuda_handle_args h = { 0, 0 };
	struct xcuda_event_record_args er = { 0, 0 };
	struct xcuda_elapsed_args el = { 0, 0 };
	struct xcuda_stream_wait_args sw = { 0, 0, 0, 0 };
	struct xcuda_float_res fr = { -1, 0 };
	uint32_t s1, s2, e1, e2;
	int st;

	s1 = handle_op(XCUDA_OP_STREAM_CREATE, &sc, sizeof(sc), &st);
	result(!st && s1 >= XCUDA_HANDLE_FIRST, "STREAM_CREATE",
	       "status %d handle %u", st, s1);
	s2 = handle_op(XCUDA_OP_STREAM_CREATE, &sc, sizeof(sc), &st);
	e1 = handle_op(XCUDA_OP_EVENT_CREATE, &ec, sizeof(ec), &st);
	e2 = handle_op(XCUDA_OP_EVENT_CREATE, &ec, sizeof(ec), &st);
	result(!st && e1 >= XCUDA_HANDLE_FIRST && e2 != e1, "EVENT_CREATE",
	       "status %d handles %u %u", st, e1, e2);

	er.event = e1;
	er.stream = s1;
	st = op(XCUDA_OP_EVENT_RECORD, &er, sizeof(er), 0, 0, XCUDA_RF_POSTED,
		NULL, 0);
	result(!st, "EVENT_RECORD posted", "status %d", st);
	sw.stream = s2;
	sw.event = e1;
	st = OP_NORES(XCUDA_OP_STREAM_WAIT_EVENT, sw);
	result(!st, "STREAM_WAIT_EVENT", "status %d", st);
	er.event = e2;
	er.stream = s1;
	st = OP_NORES(XCUDA_OP_EVENT_RECORD, er);
	h.handle = e2;
	st |= OP_NORES(XCUDA_OP_EVENT_SYNCHRONIZE, h);
	result(!st, "EVENT_SYNCHRONIZE", "status %d", st);
	st = OP_NORES(XCUDA_OP_EVENT_QUERY, h);
	result(!st, "EVENT_QUERY", "status %d", st);
	el.start = e1;
	el.end = e2;
	st = OP(XCUDA_OP_EVENT_ELAPSED_TIME, el, fr);
	result(!st && fr.value >= 0, "EVENT_ELAPSED_TIME", "status %d ms %f",
	       st, (double)fr.value);
	h.handle = s1;
	st = OP_NORES(XCUDA_OP_STREAM_SYNCHRONIZE, h);
	result(!st, "STREAM_SYNCHRONIZE", "status %d", st);
	st = OP_NORES(XCUDA_OP_STREAM_QUERY, h);
	result(!st || st == cudaErrorNotReady, "STREAM_QUERY", "status %d",
	       st);
	h.handle = XCUDA_STREAM_PER_THREAD;
	st = OP_NORES(XCUDA_OP_STREAM_SYNCHRONIZE, h);
	result(!st, "STREAM_SYNCHRONIZE per-thread", "status %d", st);

	h.handle = e1;
	st = OP_NORES(XCUDA_OP_EVENT_DESTROY, h);
	h.handle = e2;
	st |= OP_NORES(XCUDA_OP_EVENT_DESTROY, h);
	result(!st, "EVENT_DESTROY", "status %d", st);
	st = OP_NORES(XCUDA_OP_EVENT_DESTROY, h);
	result(st == cudaErrorInvalidResourceHandle, "EVENT_DESTROY twice",
	       "status %d", st);
	h.handle = s2;
	st = OP_NORES(XCUDA_OP_STREAM_DESTROY, h);
	result(!st, "STREAM_DESTROY", "status %d", st);
	st = OP_NORES(XCUDA_OP_STREAM_QUERY, h);
	result(st == cudaErrorInvalidResourceHandle,
	       "destroyed stream is unknown", "status %d", st);
	*stream_out = s1;
}

/* Uploads the PTX (NUL included) in two pieces; returns the handle. */
static uint32_t upload(int *st)
{
	struct xcuda_module_args a = { sizeof(ptx), 0, 0, XCUDA_MOD_FIRST, 0 };
	struct xcuda_handle_res r = { 0 };
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
	struct xcuda_symbol_args a = { module, 0 };

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
	struct xcuda_func_res fr = { 0 }, fr2 = { 0 }, fr0 = { 0 };
	struct xcuda_var_res vr = { 0 }, vr2 = { 0 };
	struct xcuda_handle_args h = { 0, 0 };
	struct xcuda_func_attr_args fa = { 0, 0, 0, 0 };
	struct xcuda_occupancy_args oc = { 0, 128, 0, 0, 0 };
	struct xcuda_int_res ir = { 0 };
	struct xcuda_param got[4];
	struct cudaFuncAttributes attr;
	struct saxpy_args sa;
	float x[N], y[N];
	uint64_t dx, dy;
	uint32_t mod, mod2, fr2_noargs = 0, i, bad = 0, counter = 0;
	int st;

	mod = upload(&st);
	result(!st && mod >= XCUDA_HANDLE_FIRST, "MODULE_DATA loads PTX",
	       "status %d handle %u", st, mod);
	if (st)
		return;
	mod2 = upload(&st);
	result(!st && mod2 != mod && mod2 >= XCUDA_HANDLE_FIRST,
	       "same bytes twice are two modules", "status %d handles %u %u",
	       st, mod, mod2);

	st = symbol(XCUDA_OP_FUNC_GET, mod, "xc_saxpy", &fr, sizeof(fr));
	memcpy(got, arena(OFF_SCRATCH), sizeof(got));
	result(!st && fr.handle >= XCUDA_HANDLE_FIRST && fr.nparams == 4 &&
	       fr.args_size == 28 && !memcmp(got, want, sizeof(want)),
	       "FUNC_GET layout", "status %d handle %u nparams %u size %u "
	       "first {%u,%u} last {%u,%u}", st, fr.handle, fr.nparams,
	       fr.args_size, got[0].offset, got[0].size, got[3].offset,
	       got[3].size);
	st = symbol(XCUDA_OP_FUNC_GET, mod, "xc_saxpy", &fr2, sizeof(fr2));
	result(!st && fr2.handle == fr.handle, "FUNC_GET twice, same handle",
	       "status %d handle %u", st, fr2.handle);
	st = symbol(XCUDA_OP_FUNC_GET, mod, "xc_noargs", &fr0, sizeof(fr0));
	result(!st && fr0.nparams == 0 && fr0.args_size == 0 &&
	       fr0.handle != fr.handle, "FUNC_GET without parameters",
	       "status %d nparams %u", st, fr0.nparams);
	st = symbol(XCUDA_OP_FUNC_GET, mod, "no_such_kernel", &fr2,
		    sizeof(fr2));
	result(st > 0 && st != TRANSPORT_ERR, "FUNC_GET unknown name fails",
	       "status %d", st);
	st = symbol(XCUDA_OP_VAR_GET, mod, "xc_counter", &vr, sizeof(vr));
	result(!st && vr.ptr && vr.size == 4, "VAR_GET", "status %d size %llu",
	       st, (unsigned long long)vr.size);
	st = symbol(XCUDA_OP_VAR_GET, mod2, "xc_counter", &vr2, sizeof(vr2));
	result(!st && vr2.ptr && vr2.ptr != vr.ptr,
	       "each module has its own variables", "status %d", st);
	st = symbol(XCUDA_OP_FUNC_GET, mod2, "xc_noargs", &fr2, sizeof(fr2));
	result(!st && fr2.handle >= XCUDA_HANDLE_FIRST,
	       "FUNC_GET in the second module", "status %d", st);
	fr2_noargs = fr2.handle;

	h.handle = fr.handle;
	st = op(XCUDA_OP_FUNC_GET_ATTRIBUTES, &h, sizeof(h), OFF_BACK,
		sizeof(attr), 0, NULL, 0);
	memcpy(&attr, arena(OFF_BACK), sizeof(attr));
	result(!st && attr.maxThreadsPerBlock > 0, "FUNC_GET_ATTRIBUTES",
	       "status %d maxThreadsPerBlock %d", st,
	       attr.maxThreadsPerBlock);
	fa.func = fr.handle;
	fa.attr = cudaFuncAttributeMaxDynamicSharedMemorySize;
	fa.value = 1024;
	st = OP_NORES(XCUDA_OP_FUNC_SET_ATTRIBUTE, fa);
	result(!st, "FUNC_SET_ATTRIBUTE", "status %d", st);
	oc.func = fr.handle;
	st = OP(XCUDA_OP_OCCUPANCY, oc, ir);
	result(!st && ir.value > 0, "OCCUPANCY", "status %d blocks %d", st,
	       ir.value);

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
	result(!st, "LAUNCH inline, posted", "status %d", st);
	st = launch(fr.handle, stream, &sa, 28, 1, 0);
	result(!st, "LAUNCH extent", "status %d", st);
	st = launch(fr.handle, stream, &sa, 24, 0, 0);
	result(st == cudaErrorInvalidValue, "LAUNCH with the wrong size",
	       "status %d", st);
	st = launch(fr0.handle, 0, NULL, 0, 0, 0);
	result(!st, "LAUNCH without parameters", "status %d", st);
	h.handle = stream;
	st = OP_NORES(XCUDA_OP_STREAM_SYNCHRONIZE, h);
	st |= copy(XCUDA_COPY_D2H, OFF_BACK, dy, sizeof(y), 0, 0, 0);
	st |= copy(XCUDA_COPY_D2H, OFF_BACK + sizeof(y), vr.ptr, 4, 0, 0, 0);
	memcpy(y, arena(OFF_BACK), sizeof(y));
	memcpy(&counter, arena(OFF_BACK + sizeof(y)), 4);
	for (i = 0; i < N; i++)
		bad += y[i] != 1.0f + 4.0f * (float)i;
	result(!st && !bad && counter == 2 * N, "kernel results",
	       "status %d, %u wrong, counter %u", st, bad, counter);

	h.handle = mod;
	st = op(XCUDA_OP_MODULE_UNLOAD, &h, sizeof(h), 0, 0, XCUDA_RF_POSTED,
		NULL, 0);
	result(!st, "unload, posted", "status %d", st);
	st = launch(fr.handle, stream, &sa, 28, 0, 0);
	result(st == cudaErrorInvalidResourceHandle,
	       "kernels of an unloaded module are unknown", "status %d", st);
	st = launch(fr2_noargs, 0, NULL, 0, 0, 0);
	st |= op(XCUDA_OP_DEVICE_SYNCHRONIZE, NULL, 0, 0, 0, 0, NULL, 0);
	result(!st, "the other module's kernels still run", "status %d", st);
	st = OP_NORES(XCUDA_OP_MODULE_UNLOAD, h);
	result(st == cudaErrorInvalidResourceHandle, "unload once too often",
	       "status %d", st);
	h.handle = mod2;
	st = OP_NORES(XCUDA_OP_MODULE_UNLOAD, h);
	result(!st, "unload of the second module", "status %d", st);
}

static void test_reset(uint32_t stream)
{
	struct xcuda_handle_args h = { stream, 0 };
	int st;

	/* A module that outlives the reset, and its kernel. */
	uint32_t mod = upload(&st);
	struct xcuda_func_res fr = { 0 };

	st = op(XCUDA_OP_DEVICE_RESET, NULL, 0, 0, 0, 0, NULL, 0);
	result(!st, "DEVICE_RESET", "status %d", st);
	st = OP_NORES(XCUDA_OP_STREAM_SYNCHRONIZE, h);
	result(st == cudaErrorInvalidResourceHandle,
	       "streams are gone after the reset", "status %d", st);
	st = symbol(XCUDA_OP_FUNC_GET, mod, "xc_noargs", &fr, sizeof(fr));
	st |= launch(fr.handle, 0, NULL, 0, 0, 0);
	st |= op(XCUDA_OP_DEVICE_SYNCHRONIZE, NULL, 0, 0, 0, 0, NULL, 0);
	result(!st, "modules survive the reset", "status %d", st);
}

int main(void)
{
	struct xcuda_request req;
	struct xcuda_response rsp;
	uint32_t stream = 0;
	char needle[80];
	int err, status;

	if (harness_setup())
		return 1;
	result(!start_daemon("8"), "daemon starts", "see the log");
	if (daemon_pid < 0)
		return harness_finish();
	err = sess_open(&t);
	result(!err, "session opens", "err %d", err);
	if (err)
		goto stop;
	if (gpu_open()) {
		printf("SKIP gpu: no usable GPU here (init status %d)\n",
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

	req_init(&t, &req, XCUDA_OP_CLOSE, NULL, 0);
	err = rpc(&t, &req, &rsp);
	result(!err && !rsp.status, "CLOSE", "err %d", err);
	snprintf(needle, sizeof(needle), "session %08x: worker %d exited\n",
		 t.session, (int)worker_pid(t.session));
	result(wait_log(needle, 10000), "worker exits cleanly",
	       "no \"%s\" in the log", needle);
	t.ops->close(&t);
stop:
	status = stop_daemon(SIGTERM, TIMEOUT_MS);
	result(status >= 0 && WIFEXITED(status) && !WEXITSTATUS(status),
	       "daemon stops cleanly", "wait status %#x", status);
	return harness_finish();
}
