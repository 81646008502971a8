// SPDX-License-Identifier: MIT
/*
 * The driver API's hostile inputs, without a GPU: module images are
 * measured within what was sent (a truncated fatbinary, a cubin whose
 * sections lie past its end, PTX without a NUL), and the worker refuses
 * images that would make the driver read past its copy, modules and
 * functions that are not the session's, parameter buffers of the wrong
 * shape, before any driver call.  Where a driver is present the answers
 * past the checks are its own; here it is absent and they read
 * CUDA_ERROR_NOT_INITIALIZED.
 */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

#include "common/image.h"
#include "dom0-daemon/ipc_table.h"
#include "dom0-daemon/worker.h"
#include "check.h"
#include "worker_harness.h"

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

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_image_size();
	open_session(&s, &chan, 0x4444dddd, XD_DOMAIN_LOCAL | 1000);
	test_refusals();
	xd_session_fini(&s);
	free(chan.arena);
	return check_summary();
}
