// SPDX-License-Identifier: MIT
/*
 * The driver API's hostile inputs, without a GPU: module images are
 * measured within what was sent (a truncated fatbinary, a cubin whose
 * sections lie past its end, PTX without a NUL), and the worker refuses
 * images that would make the driver read past its copy, modules and
 * functions that are not the session's, parameter buffers of the wrong
 * shape, link options that are pointers or too large, link states that
 * are not the session's, before any driver call.  Where a driver is
 * present the answers past the checks are its own (and a link's inputs
 * cut short are refused before it); without one they read
 * CUDA_ERROR_NOT_INITIALIZED.
 */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

#include "common/image.h"
#include "xcuda/jit.h"
#include "dom0-daemon/ipc_table.h"
#include "dom0-daemon/worker.h"
#include "check.h"
#include "worker_harness.h"

/* A handle no command of the session's answered. */
#define NOT_OURS	(XCUDA_HANDLE_FIRST + 77)

struct fatbin_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t header_size;
	uint64_t fat_size;
};

static void test_image_size(void)
{
	uint8_t buf[4096];
	struct fatbin_hdr h = { XCUDA_FATBIN_MAGIC, 1, 16, 100 };
	uint64_t shoff = 64, shnum = 2;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &h, sizeof(h));
	CHECK_EQ(xcuda_image_size(buf, sizeof(buf)), 116,
		 "a fatbinary: header and payload");
	CHECK_EQ(xcuda_image_size(buf, 115), 0,
		 "a fatbinary longer than what was sent");
	CHECK_EQ(xcuda_image_size(buf, 8), 0, "a fatbinary's header cut");
	h.header_size = 4;
	memcpy(buf, &h, sizeof(h));
	CHECK_EQ(xcuda_image_size(buf, sizeof(buf)), 0,
		 "a fatbinary header too short");
	h.header_size = 16;
	h.fat_size = (uint64_t)XCUDA_MAX_MODULE + 1;
	memcpy(buf, &h, sizeof(h));
	CHECK_EQ(xcuda_image_size(buf, sizeof(buf)), 0,
		 "a fatbinary over the limit");

	/* An ELF64 header with its section table at 64. */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, "\x7f" "ELF", 4);
	buf[4] = 2;
	memcpy(buf + 40, &shoff, 8);	/* e_shoff */
	buf[58] = 64;			/* e_shentsize */
	memcpy(buf + 60, &shnum, 2);	/* e_shnum */
	CHECK_EQ(xcuda_image_size(buf, sizeof(buf)), 64 + 2 * 64,
		 "a cubin: its section table");
	CHECK_EQ(xcuda_image_size(buf, 100), 0,
		 "a cubin whose section table was cut");
	{
		uint64_t off = 1000, size = 5000;

		/* Section 1 says its bytes run past the image. */
		memcpy(buf + 64 + 64 + 24, &off, 8);
		memcpy(buf + 64 + 64 + 32, &size, 8);
		buf[64 + 64 + 4] = 1;	/* SHT_PROGBITS */
		CHECK_EQ(xcuda_image_size(buf, sizeof(buf)), 0,
			 "a cubin whose section lies past its end");
	}

	memset(buf, 'x', sizeof(buf));
	CHECK_EQ(xcuda_image_size(buf, sizeof(buf)), 0,
		 "text without a NUL is not PTX");
	buf[10] = 0;
	CHECK_EQ(xcuda_image_size(buf, sizeof(buf)), 11, "PTX and its NUL");
}

static struct xd_chan chan;
static struct xd_session s;

static void test_refusals(void)
{
	struct xcuda_drv_module_load_data_args ld;
	struct xcuda_drv_module_get_function_args gf;
	struct xcuda_drv_launch_kernel_args lk;
	struct xcuda_drv_module_unload_args ul;
	struct xcuda_drv_get_error_string_args es;
	struct xcuda_drv_init_args in;
	struct fatbin_hdr h = { XCUDA_FATBIN_MAGIC, 1, 16, 4096 };

	/* A fatbinary header that claims 4 KiB more than was sent. */
	memcpy(chan.arena, &h, sizeof(h));
	memset(&ld, 0, sizeof(ld));
	ld.image = (struct xcuda_extent){ 0, 64 };
	CHECK_EQ(call(&s, XCUDA_OP_DRV_MODULE_LOAD_DATA, &ld, sizeof(ld), 0,
		      0), CUDA_ERROR_INVALID_IMAGE,
		 "a truncated fatbinary never reaches the driver");
	memset(chan.arena, 'p', 256);
	{
		int st = call(&s, XCUDA_OP_DRV_MODULE_LOAD_DATA, &ld,
			      sizeof(ld), 0, 0);

		/* Past the checks: the driver's word, or no driver. */
		CHECK_MSG(st != CUDA_SUCCESS && st != CUDA_ERROR_INVALID_IMAGE &&
			  st != CUDA_ERROR_INVALID_VALUE,
			  "unterminated PTX gets a NUL of the worker's",
			  "status %d", st);
	}
	ld.image = (struct xcuda_extent){ ARENA - 16, 64 };
	CHECK_EQ(call(&s, XCUDA_OP_DRV_MODULE_LOAD_DATA, &ld, sizeof(ld), 0,
		      0), CUDA_ERROR_INVALID_VALUE,
		 "an image past the arena");
	ld.image = (struct xcuda_extent){ 0, 0 };
	CHECK_EQ(call(&s, XCUDA_OP_DRV_MODULE_LOAD_DATA, &ld, sizeof(ld), 0,
		      0), CUDA_ERROR_INVALID_VALUE, "an empty image");
	ld.image = (struct xcuda_extent){ 0, 64 };
	ld.rsvd = 1;
	CHECK_EQ(call(&s, XCUDA_OP_DRV_MODULE_LOAD_DATA, &ld, sizeof(ld), 0,
		      0), CUDA_ERROR_INVALID_VALUE, "module load: reserved");

	memset(&gf, 0, sizeof(gf));
	gf.module = XCUDA_HANDLE_FIRST + 5;
	strcpy((char *)chan.arena, "kernel");
	gf.name = (struct xcuda_extent){ 0, 7 };
	gf.params = (struct xcuda_extent){ 4096, 8192 };
	CHECK_EQ(call(&s, XCUDA_OP_DRV_MODULE_GET_FUNCTION, &gf, sizeof(gf),
		      0, 0), CUDA_ERROR_INVALID_HANDLE,
		 "a module that is not the session's");
	gf.params.len = 12;
	CHECK_EQ(call(&s, XCUDA_OP_DRV_MODULE_GET_FUNCTION, &gf, sizeof(gf),
		      0, 0), CUDA_ERROR_INVALID_VALUE,
		 "a layout buffer of no whole entries");

	memset(&lk, 0, sizeof(lk));
	lk.func = XCUDA_HANDLE_FIRST + 2;
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LAUNCH_KERNEL, &lk, sizeof(lk), 0, 0),
		 CUDA_ERROR_INVALID_HANDLE,
		 "a function that is not the session's");
	lk.params = (struct xcuda_extent){ 0, XCUDA_MAX_ARGS_BYTES + 8 };
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LAUNCH_KERNEL, &lk, sizeof(lk), 0, 0),
		 CUDA_ERROR_INVALID_VALUE, "parameters over the limit");

	memset(&ul, 0, sizeof(ul));
	ul.hmod = 12345;
	CHECK_EQ(call(&s, XCUDA_OP_DRV_MODULE_UNLOAD, &ul, sizeof(ul), 0, 0),
		 CUDA_ERROR_INVALID_HANDLE, "unloading another's module");

	memset(&es, 0, sizeof(es));
	es.error = CUDA_ERROR_INVALID_VALUE;
	CHECK_EQ(call(&s, XCUDA_OP_DRV_GET_ERROR_STRING, &es, sizeof(es), 0,
		      0), CUDA_ERROR_INVALID_VALUE, "no room for the text");

	/* The virtual memory API: handles and properties. */
	{
		struct xcuda_drv_mem_release_args rl = { 0x1234 };
		struct xcuda_drv_mem_create_args mc;

		CHECK_EQ(call(&s, XCUDA_OP_DRV_MEM_RELEASE, &rl, sizeof(rl), 0,
			      0), CUDA_ERROR_INVALID_VALUE,
			 "releasing a handle never made (the driver would "
			 "crash)");
		memset(&mc, 0, sizeof(mc));
		mc.size = 2 << 20;
		mc.prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
		mc.prop.win32HandleMetaData = (void *)0x1000;
		CHECK_EQ(call(&s, XCUDA_OP_DRV_MEM_CREATE, &mc, sizeof(mc), 0,
			      0), CUDA_ERROR_INVALID_VALUE,
			 "an allocation with a guest pointer in it");
		mc.prop.win32HandleMetaData = NULL;
		mc.prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_WIN32;
		CHECK_EQ(call(&s, XCUDA_OP_DRV_MEM_CREATE, &mc, sizeof(mc), 0,
			      0), CUDA_ERROR_INVALID_VALUE,
			 "an allocation of Windows handles");
	}

	memset(&in, 0, sizeof(in));
	in.rsvd = 3;
	CHECK_EQ(call(&s, XCUDA_OP_DRV_INIT, &in, sizeof(in), 0, 0),
		 CUDA_ERROR_INVALID_VALUE, "init: reserved");
	in.rsvd = 0;
	{
		int st = call(&s, XCUDA_OP_DRV_INIT, &in, sizeof(in), 0, 0);

		/* Under ASan a real driver may refuse (out of memory). */
		CHECK_MSG(st != CUDA_ERROR_INVALID_VALUE &&
			  (st == CUDA_SUCCESS || st == CUDA_ERROR_NO_DEVICE ||
			   st == CUDA_ERROR_OUT_OF_MEMORY),
			  "init: the driver's answer, or no device without "
			  "one", "status %d", st);
	}
}

/* With a driver: inputs of a link of the session's that lie. */
static void test_link_inputs(uint32_t link)
{
	struct fatbin_hdr h = { XCUDA_FATBIN_MAGIC, 1, 16, 4096 };
	struct xcuda_drv_link_add_data_args ad;
	struct xcuda_drv_link_cubin_args cu;
	struct xcuda_drv_link_logs_args lg;
	struct xcuda_drv_link_destroy_args de = { link, 0 };

	memset(&ad, 0, sizeof(ad));
	ad.link = link;
	memcpy(chan.arena, &h, sizeof(h));
	strcpy((char *)chan.arena + 4096, "in");
	ad.data = (struct xcuda_extent){ 0, 64 };
	ad.name = (struct xcuda_extent){ 4096, 3 };
	ad.type = CU_JIT_INPUT_FATBINARY;
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_ADD_DATA, &ad, sizeof(ad), 0, 0),
		 CUDA_ERROR_INVALID_IMAGE,
		 "link: a fatbinary cut short never reaches the driver");
	ad.type = CU_JIT_INPUT_LIBRARY;
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_ADD_DATA, &ad, sizeof(ad), 0, 0),
		 CUDA_ERROR_INVALID_IMAGE, "link: a library that is no archive");
	ad.type = 99;
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_ADD_DATA, &ad, sizeof(ad), 0, 0),
		 CUDA_ERROR_INVALID_VALUE, "link: an input of no type");
	ad.type = CU_JIT_INPUT_PTX;
	ad.name.len = 2;	/* "in" without its NUL */
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_ADD_DATA, &ad, sizeof(ad), 0, 0),
		 CUDA_ERROR_INVALID_VALUE, "link: a name without its NUL");
	memset(&cu, 0, sizeof(cu));
	cu.link = link;
	cu.buf = (struct xcuda_extent){ 0, 16 };
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_CUBIN, &cu, sizeof(cu), 0, 0),
		 CUDA_ERROR_INVALID_VALUE, "link: a cubin before completion");
	memset(&lg, 0, sizeof(lg));
	lg.link = link;
	lg.logs = (struct xcuda_extent){ 0, 8192 };
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_LOGS, &lg, sizeof(lg), 0, 0),
		 CUDA_ERROR_INVALID_VALUE, "link: logs of another size");
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_DESTROY, &de, sizeof(de), 0, 0),
		 0, "link: destroyed");
}

/* The linker: options, link states and inputs the session never made. */
static void test_link(void)
{
	struct xcuda_drv_link_create_args lc;
	struct xcuda_drv_link_add_data_args ad;
	struct xcuda_drv_link_complete_args co = { NOT_OURS, 0 };
	struct xcuda_drv_link_cubin_args cu;
	struct xcuda_drv_link_logs_args lg;
	struct xcuda_drv_link_destroy_args de = { NOT_OURS, 0 };
	struct xcuda_drv_link_create_res lr = { 0, 0 };
	struct xcuda_jit_opt o[2];
	int st;

	memset(&lc, 0, sizeof(lc));
	lc.nopts = XCUDA_JIT_MAX_OPTS + 1;
	lc.opts = (struct xcuda_extent){ 0, lc.nopts * sizeof(o[0]) };
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_CREATE, &lc, sizeof(lc), 0, 0),
		 CUDA_ERROR_INVALID_VALUE, "link: more options than any");
	lc.nopts = 2;
	lc.opts.len = sizeof(o[0]);
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_CREATE, &lc, sizeof(lc), 0, 0),
		 CUDA_ERROR_INVALID_VALUE, "link: options shorter than said");
	lc.opts.len = sizeof(o);
	memset(o, 0, sizeof(o));
	o[0] = (struct xcuda_jit_opt){ CU_JIT_INFO_LOG_BUFFER, 0, 0x1000 };
	memcpy(chan.arena, o, sizeof(o));
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_CREATE, &lc, sizeof(lc), 0, 0),
		 CUDA_ERROR_INVALID_VALUE,
		 "link: a log buffer at a guest address");
	o[0] = (struct xcuda_jit_opt){ CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, 0,
					XCUDA_JIT_LOG_MAX + 1 };
	memcpy(chan.arena, o, sizeof(o));
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_CREATE, &lc, sizeof(lc), 0, 0),
		 CUDA_ERROR_INVALID_VALUE, "link: a log larger than any");
	o[0] = (struct xcuda_jit_opt){ CU_JIT_GLOBAL_SYMBOL_NAMES, 0, 0x1000 };
	memcpy(chan.arena, o, sizeof(o));
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_CREATE, &lc, sizeof(lc), 0, 0),
		 CUDA_ERROR_INVALID_VALUE,
		 "link: an option whose value is a pointer");
	o[0] = (struct xcuda_jit_opt){ CU_JIT_OPTIMIZATION_LEVEL, 1, 3 };
	memcpy(chan.arena, o, sizeof(o));
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_CREATE, &lc, sizeof(lc), 0, 0),
		 CUDA_ERROR_INVALID_VALUE, "link: an option's reserved word");
	o[0].rsvd = 0;
	o[1] = (struct xcuda_jit_opt){ CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, 0,
					4096 };
	memcpy(chan.arena, o, sizeof(o));
	st = call_res(&s, XCUDA_OP_DRV_LINK_CREATE, &lc, sizeof(lc), 0, 0, &lr,
		      sizeof(lr));
	CHECK_MSG(st != CUDA_ERROR_INVALID_VALUE,
		  "link: good options reach the driver", "status %d", st);
	if (!st)
		test_link_inputs(lr.link);

	memset(&ad, 0, sizeof(ad));
	ad.link = NOT_OURS;
	ad.type = CU_JIT_INPUT_PTX;
	ad.data = (struct xcuda_extent){ 0, 64 };
	ad.name = (struct xcuda_extent){ 64, 8 };
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_ADD_DATA, &ad, sizeof(ad), 0, 0),
		 CUDA_ERROR_INVALID_HANDLE,
		 "link: an input to a link that is not the session's");
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_COMPLETE, &co, sizeof(co), 0, 0),
		 CUDA_ERROR_INVALID_HANDLE,
		 "link: completing another's link");
	memset(&cu, 0, sizeof(cu));
	cu.link = NOT_OURS;
	cu.buf = (struct xcuda_extent){ 0, 4096 };
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_CUBIN, &cu, sizeof(cu), 0, 0),
		 CUDA_ERROR_INVALID_HANDLE, "link: another's cubin");
	memset(&lg, 0, sizeof(lg));
	lg.link = NOT_OURS;
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_LOGS, &lg, sizeof(lg), 0, 0),
		 CUDA_ERROR_INVALID_HANDLE, "link: another's logs");
	CHECK_EQ(call(&s, XCUDA_OP_DRV_LINK_DESTROY, &de, sizeof(de), 0, 0),
		 CUDA_ERROR_INVALID_HANDLE, "link: destroying another's");
}

/* A module loaded with options, and a kernel's function, refused. */
static void test_load_ex(void)
{
	struct xcuda_drv_module_load_ex_args le;
	struct xcuda_drv_kernel_get_function_args kf;
	struct xcuda_jit_opt o = { CU_JIT_WALL_TIME, 0, 0 };
	struct fatbin_hdr h = { XCUDA_FATBIN_MAGIC, 1, 16, 4096 };

	memset(&le, 0, sizeof(le));
	le.nopts = 1;
	le.opts = (struct xcuda_extent){ 8192, sizeof(o) };
	memcpy(chan.arena + 8192, &o, sizeof(o));
	memcpy(chan.arena, &h, sizeof(h));
	le.image = (struct xcuda_extent){ 0, 64 };
	CHECK_EQ(call(&s, XCUDA_OP_DRV_MODULE_LOAD_EX, &le, sizeof(le), 0,
		      0), CUDA_ERROR_INVALID_VALUE,
		 "load with options: one the driver writes back");
	le.nopts = 0;
	le.opts = (struct xcuda_extent){ 0, 0 };
	CHECK_EQ(call(&s, XCUDA_OP_DRV_MODULE_LOAD_EX, &le, sizeof(le), 0,
		      0), CUDA_ERROR_INVALID_IMAGE,
		 "load with options: a fatbinary cut short");
	le.nopts = 2;
	le.opts = (struct xcuda_extent){ 8192, sizeof(o) };
	CHECK_EQ(call(&s, XCUDA_OP_DRV_MODULE_LOAD_EX, &le, sizeof(le), 0,
		      0), CUDA_ERROR_INVALID_VALUE,
		 "load with options: fewer than said");

	memset(&kf, 0, sizeof(kf));
	kf.kernel = NOT_OURS;
	kf.params = (struct xcuda_extent){ 0, 64 };
	CHECK_EQ(call(&s, XCUDA_OP_DRV_KERNEL_GET_FUNCTION, &kf, sizeof(kf),
		      0, 0), CUDA_ERROR_INVALID_HANDLE,
		 "the function of a kernel that is not the session's");
	kf.params.len = 12;
	CHECK_EQ(call(&s, XCUDA_OP_DRV_KERNEL_GET_FUNCTION, &kf, sizeof(kf),
		      0, 0), CUDA_ERROR_INVALID_VALUE,
		 "a kernel's layout buffer of no whole entries");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_image_size();
	open_session(&s, &chan, 0x4444dddd, XD_DOMAIN_LOCAL | 1000);
	test_refusals();
	test_link();
	test_load_ex();
	xd_session_fini(&s);
	free(chan.arena);
	return check_summary();
}
