// SPDX-License-Identifier: MIT
/*
 * Writes the seed corpus of the harnesses (tests/fuzz/corpus/TARGET/)
 * from valid inputs, laid out with the protocol's own headers:
 *
 *   make fuzz-seeds
 *
 * Each seed is named for what it is; regression inputs that a run found
 * are added beside them by hand, named for the bug.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "xcuda/calls.h"
#include "xcuda/jit.h"
#include "xcuda/launch.h"
#include "xcuda/local.h"
#include "xcuda/proto.h"

static const char *top;
static uint8_t buf[8192];
static size_t len;

static void put(const void *p, size_t n)
{
	if (len + n > sizeof(buf)) {
		fprintf(stderr, "make-seeds: seed too big\n");
		exit(1);
	}
	memcpy(buf + len, p, n);
	len += n;
}

static void put8(uint8_t v) { put(&v, 1); }
static void put32(uint32_t v) { put(&v, 4); }
static void put64(uint64_t v) { put(&v, 8); }

/* Writes the seed built so far as @target/@name, and starts another. */
static void seed(const char *target, const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", top, target);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", top, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
	len = 0;
}

/* A request for @op with @args (@n bytes) and its data extent. */
static struct xcuda_request request(uint16_t op, const void *args, size_t n,
				    uint32_t off, uint32_t dlen)
{
	struct xcuda_request r;

	memset(&r, 0, sizeof(r));
	r.hdr.op = op;
	r.hdr.len = (uint16_t)n;
	r.hdr.session = 7;
	r.hdr.id = 1;
	r.hdr.data_off = off;
	r.hdr.data_len = dlen;
	memcpy(r.args, args, n);
	return r;
}

/* fuzz_validate and fuzz_up_spans: requests the guest library sends. */
static void requests(void)
{
	const uint64_t arena = 1 << 20;
	struct xcuda_open_args open = { .version = 1, .arena_size = arena };
	struct xcuda_echo_args echo = { .seed = 1 };
	struct xcuda_memcpy_args cp = { .count = 4096 };
	struct xcuda_module_data_args mod = { .total = 4096,
		.flags = XCUDA_MOD_FIRST | XCUDA_MOD_LAST };
	struct xcuda_launch_args launch = { .func = 16, .grid = { 1, 1, 1 },
		.block = { 32, 1, 1 }, .args_len = 8 };
	struct xcuda_request r;
	char name[64];
	unsigned int op, n = 0;

	r = request(XCUDA_OP_OPEN, &open, sizeof(open), 0, 0);
	put64(arena); put32(7); put8(0); put(&r, sizeof(r));
	seed("validate", "open");
	r = request(XCUDA_OP_ECHO, &echo, sizeof(echo), 4096, 64);
	put64(arena); put32(7); put8(1); put(&r, sizeof(r));
	seed("validate", "echo");
	cp.dir = XCUDA_COPY_H2D;
	cp.src = 8192;
	r = request(XCUDA_OP_MEMCPY, &cp, sizeof(cp), 0, 0);
	put64(arena); put32(7); put8(1); put(&r, sizeof(r));
	seed("validate", "memcpy-h2d");
	put64(arena); put(&r, sizeof(r));
	seed("up_spans", "memcpy-h2d");
	cp.dir = XCUDA_COPY_D2H;
	cp.dst = 8192;
	cp.src = 0;
	r = request(XCUDA_OP_MEMCPY, &cp, sizeof(cp), 0, 0);
	put64(arena); put(&r, sizeof(r));
	seed("up_spans", "memcpy-d2h");
	r = request(XCUDA_OP_MODULE_DATA, &mod, sizeof(mod), 0, 4096);
	put64(arena); put32(7); put8(1); put(&r, sizeof(r));
	seed("validate", "module-data");
	put64(arena); put(&r, sizeof(r));
	seed("up_spans", "module-data");
	r = request(XCUDA_OP_LAUNCH, &launch,
		    offsetof(struct xcuda_launch_args, args) + 8, 0, 0);
	r.hdr.flags = XCUDA_RF_POSTED;
	put64(arena); put32(7); put8(1); put(&r, sizeof(r));
	seed("validate", "launch-posted");
	/* A command with extents among its arguments, each in the arena. */
	for (op = 0; op < XCUDA_OP_MAX && n < 4; op++) {
		const struct xcuda_call_info *d = xcuda_call((uint16_t)op);
		struct xcuda_extent e = { .off = 4096, .len = 256 };
		unsigned int i;

		if (!d || !d->nr_ext || d->data != XCUDA_DATA_NONE)
			continue;
		memset(&r, 0, sizeof(r));
		r = request((uint16_t)op, NULL, 0, 0, 0);
		r.hdr.len = d->args_size;
		for (i = 0; i < d->nr_ext; i++) {
			memcpy(r.args + d->ext[i].offset, &e, sizeof(e));
			e.off += 4096;
		}
		for (i = 0; d->name[i] && i < sizeof(name) - 1; i++)
			name[i] = (char)tolower((unsigned char)d->name[i]);
		name[i] = 0;
		put64(arena); put32(7); put8(1); put(&r, sizeof(r));
		seed("validate", name);
		put64(arena); put(&r, sizeof(r));
		seed("up_spans", name);
		n++;
	}
}

/* fuzz_image: a PTX text, a fatbinary's header, a cubin's ELF header. */
static void images(void)
{
	static const char ptx[] = ".version 8.0\n.target sm_90\n"
				  ".address_size 64\n";
	struct {
		uint32_t magic;
		uint16_t version, header_size;
		uint64_t fat_size;
	} fat = { 0xba55ed50u, 1, 16, 32 };
	uint8_t elf[64 + 2 * 64 + 16];
	uint64_t v64;
	uint16_t v16;

	put(ptx, sizeof(ptx));
	seed("image", "ptx");
	put(&fat, sizeof(fat));
	for (v64 = 0; v64 < 4; v64++)
		put64(v64);
	seed("image", "fatbin");
	memset(elf, 0, sizeof(elf));
	memcpy(elf, "\x7f" "ELF", 4);
	elf[4] = 2;		/* 64-bit */
	elf[5] = 1;		/* little-endian */
	v64 = 64 + 16;		/* shoff, after 16 bytes of a section */
	memcpy(elf + 40, &v64, 8);
	v16 = 64;		/* ehsize, shentsize, shnum */
	memcpy(elf + 52, &v16, 2);
	memcpy(elf + 58, &v16, 2);
	v16 = 2;
	memcpy(elf + 60, &v16, 2);
	/* Section 1: 16 bytes at offset 64, PROGBITS. */
	v64 = 1;
	memcpy(elf + 64 + 16 + 64 + 4, &v64, 4);
	v64 = 64;
	memcpy(elf + 64 + 16 + 64 + 24, &v64, 8);
	v64 = 16;
	memcpy(elf + 64 + 16 + 64 + 32, &v64, 8);
	put(elf, 64 + 16 + 2 * 64);
	seed("image", "cubin");
}

/* fuzz_transport_local: hellos as the guest library sends them. */
static void hellos(void)
{
	struct xcuda_local_hello h = { XCUDA_LOCAL_MAGIC, XCUDA_LOCAL_VERSION,
				       2, 0, 64 << 20 };

	put8(0); put64(0); put8(0); put8(0); put(&h, sizeof(h));
	seed("transport_local", "hello");
	put8(1 | 4 | 8); put64(16 << 20); put8(1); put8(10);
	put(&h, sizeof(h));
	seed("transport_local", "hello-channel-limits-split");
	h.ring_order = 9;
	h.arena_size = 5ull << 30;
	put8(4); put64(1 << 20); put8(4); put8(0); put(&h, sizeof(h));
	seed("transport_local", "hello-too-much");
}

/* fuzz_launch: the launch paths' requests, and attributes alone. */
static void launches(void)
{
	struct xcuda_launch_args l = { .func = 16, .grid = { 1, 1, 1 },
		.block = { 32, 1, 1 }, .args_len = 16 };
	struct xcuda_launch_ex_args x = { .func = 16, .stream = 16,
		.grid = { 1, 1, 1 }, .block = { 32, 1, 1 }, .nattrs = 2,
		.args_len = 16 };
	struct xcuda_launch_attr a[2];
	uint8_t args[XCUDA_REQ_INLINE];
	uint64_t ev = 17;

	memset(args, 0, sizeof(args));
	memcpy(args, &l, sizeof(l));
	put8(0); put8(0); put32(offsetof(struct xcuda_launch_args, args) + 16);
	put32(0); put32(0); put(args, sizeof(args));
	seed("launch", "launch-inline");
	put8(1); put8(0); put32(sizeof(l)); put32(0); put32(16);
	put(args, sizeof(args));
	seed("launch", "cooperative-extent");
	memset(a, 0, sizeof(a));
	a[0].id = cudaLaunchAttributeProgrammaticEvent;
	memcpy(a[0].val, &ev, sizeof(ev));
	a[1].id = cudaLaunchAttributeDeviceUpdatableKernelNode;
	memset(args, 0, sizeof(args));
	memcpy(args, &x, sizeof(x));
	put8(2); put8(0); put32(sizeof(x)); put32(0);
	put32(sizeof(a) + 16); put(args, sizeof(args)); put(a, sizeof(a));
	seed("launch", "launch-ex-attrs");
	memset(args, 0, sizeof(args));
	args[0] = 2;
	put8(5); put8(0); put32(0); put32(0); put32(0);
	put(args, sizeof(args)); put(a, sizeof(a));
	seed("launch", "attrs-alone");
}

/* fuzz_jit_opts: a log buffer of each kind, and an integer option. */
static void jit(void)
{
	struct xcuda_jit_opt o[5] = {
		{ CU_JIT_INFO_LOG_BUFFER, 0, 0 },
		{ CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, 0, 1024 },
		{ CU_JIT_ERROR_LOG_BUFFER, 0, 0 },
		{ CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, 0, 512 },
		{ CU_JIT_OPTIMIZATION_LEVEL, 0, 3 },
	};

	put32(5); put32(0); put32(sizeof(o)); put32(4096);
	put(o, sizeof(o));
	seed("jit_opts", "logs-and-level");
	put32(1); put32(64); put32(sizeof(o[0])); put32(0);
	put(o, 64); put(&o[4], sizeof(o[4]));
	seed("jit_opts", "level-alone");
}

/* fuzz_upstream_addr: values xcuda-xl writes. */
static void upstreams(void)
{
	static const char *const v[] = {
		"gpu-server.example:7070", "[fd00::2]:7070", "*:7070",
		"192.0.2.10:1",
	};
	static const char *const names[] = { "name", "v6", "any", "v4" };
	unsigned int i;

	for (i = 0; i < 4; i++) {
		put(v[i], strlen(v[i]));
		seed("upstream_addr", names[i]);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: make-seeds CORPUS_DIR\n");
		return 2;
	}
	top = argv[1];
	requests();
	images();
	hellos();
	launches();
	jit();
	upstreams();
	return 0;
}
