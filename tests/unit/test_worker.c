// SPDX-License-Identifier: MIT
/*
 * The worker's request handling without a transport: requests go straight
 * to xd_handle() over an in-memory arena.  Covers the answers that need
 * no GPU: OPEN, ECHO and every argument check the handlers make before
 * CUDA sees anything.  Runs the same with or without a GPU.
 */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "xcuda/hash.h"
#include "dom0-daemon/image_budget.h"
#include "dom0-daemon/log.h"
#include "dom0-daemon/validate.h"
#include "dom0-daemon/watchdog.h"
#include "dom0-daemon/worker.h"
#include "check.h"
#include "cuda_asan.h"

#define SESSION		0x1234abcdu
#define ARENA		(1u << 20)

static struct xd_chan chan;
static struct xd_session sess;
static uint64_t next_id = 1;

/* Builds a request for @op with @len argument bytes copied from @args. */
static void req_init(struct xcuda_request *req, uint16_t op,
		     const void *args, uint16_t len)
{
	memset(req, 0, sizeof(*req));
	req->hdr.op = op;
	req->hdr.len = len;
	req->hdr.session = SESSION;
	req->hdr.id = next_id++;
	if (len)
		memcpy(req->args, args, len);
}

static int call(struct xcuda_request *req, struct xcuda_response *rsp)
{
	struct xcuda_request copy = *req;

	xd_handle(&sess, &copy, rsp);
	return rsp->status;
}

/* Sends @req and checks the status and the response's echo fields. */
static void expect(const char *name, struct xcuda_request *req, int want)
{
	struct xcuda_response rsp;
	int got = call(req, &rsp);

	CHECK_MSG(got == want && rsp.id == req->hdr.id &&
		  rsp.op == req->hdr.op && rsp.flags == req->hdr.flags &&
		  rsp.len == xd_result_size(req->hdr.op), name,
		  "status %d (want %d), id %llu/%llu op %u len %u", got, want,
		  (unsigned long long)rsp.id,
		  (unsigned long long)req->hdr.id, rsp.op, rsp.len);
}

#define REQ(req, op, a)	req_init(req, op, &(a), sizeof(a))

static void test_open(void)
{
	struct xcuda_open_args a = { XCUDA_PROTO_VERSION, 0xffffffffu, ARENA,
				     0 };
	struct xcuda_echo_args e = { 0, 0, 0, 0 };
	struct xcuda_request req;
	struct xcuda_response rsp;
	struct xcuda_open_res r;
	int n = 0, want;

	REQ(&req, XCUDA_OP_ECHO, e);
	req.hdr.data_len = 16;
	expect("echo before OPEN", &req, cudaErrorInitializationError);

	a.arena_size = ARENA / 2;
	REQ(&req, XCUDA_OP_OPEN, a);
	expect("open with the wrong arena size", &req, cudaErrorInvalidValue);
	a.arena_size = ARENA;
	a.version = 0;
	REQ(&req, XCUDA_OP_OPEN, a);
	expect("open version 0", &req, cudaErrorInvalidValue);
	a.version = XCUDA_PROTO_MIN_VERSION - 1;
	REQ(&req, XCUDA_OP_OPEN, a);
	expect("open below the oldest version spoken", &req,
	       cudaErrorInvalidValue);
	REQ(&req, XCUDA_OP_ECHO, e);
	req.hdr.data_len = 16;
	expect("echo after a failed OPEN", &req,
	       cudaErrorInitializationError);

	a.version = 99;
	REQ(&req, XCUDA_OP_OPEN, a);
	call(&req, &rsp);
	memcpy(&r, rsp.out, sizeof(r));
	want = cudaGetDeviceCount(&n);
	cudaGetLastError();
	/* This channel cannot move its arena: no SAME_VA. */
	CHECK_MSG(rsp.status == 0 && r.version == XCUDA_PROTO_VERSION &&
		  r.features == (XCUDA_FEATURES_ALL & ~XCUDA_FEAT_SAME_VA) &&
		  r.init_status == want &&
		  r.device_count == (want ? -1 : n) && r.runtime_version > 0,
		  "open", "status %d version %u features %#x init %d (want %d) "
		  "count %d runtime %d", rsp.status, r.version, r.features,
		  r.init_status, want, r.device_count, r.runtime_version);

	/* The oldest version still spoken is answered as asked. */
	a.version = XCUDA_PROTO_MIN_VERSION;
	a.features = XCUDA_FEAT_ECHO | (1u << 30);
	REQ(&req, XCUDA_OP_OPEN, a);
	call(&req, &rsp);
	memcpy(&r, rsp.out, sizeof(r));
	CHECK_MSG(rsp.status == 0 && r.version == XCUDA_PROTO_MIN_VERSION &&
		  r.features == XCUDA_FEAT_ECHO, "open features intersect",
		  "status %d version %u features %#x", rsp.status, r.version,
		  r.features);
}

static void test_echo(void)
{
	struct xcuda_echo_args e = { 7, 1, 0x1a5, 0 };
	struct xcuda_request req;
	struct xcuda_response rsp;
	struct xcuda_echo_res r;
	uint64_t want;
	uint32_t i, bad = 0;

	for (i = 0; i < 4096; i++)
		chan.arena[1000 + i] = (uint8_t)(i * 31 + 7);
	want = xcuda_fnv1a64(7, chan.arena + 1000, 4096);
	REQ(&req, XCUDA_OP_ECHO, e);
	req.hdr.data_off = 1000;
	req.hdr.data_len = 4096;
	req.hdr.device = 5;	/* ECHO needs no CUDA: no device switch */
	call(&req, &rsp);
	memcpy(&r, rsp.out, sizeof(r));
	for (i = 0; i < 4096; i++)
		bad += chan.arena[1000 + i] != 0xa5;
	CHECK_MSG(rsp.status == 0 && r.checksum == want && r.bytes == 4096 &&
		  !bad && chan.arena[999] == 0 && chan.arena[5096] == 0,
		  "echo checksum and fill", "status %d sum %llx want %llx "
		  "bytes %llu, %u bytes not filled", rsp.status,
		  (unsigned long long)r.checksum, (unsigned long long)want,
		  (unsigned long long)r.bytes, bad);
	e.seed = 0;
	e.fill = 0;
	REQ(&req, XCUDA_OP_ECHO, e);
	req.hdr.data_off = 1000;
	req.hdr.data_len = 4096;
	call(&req, &rsp);
	memcpy(&r, rsp.out, sizeof(r));
	memset(chan.arena + 1000, 0xa5, 4096);
	CHECK_MSG(rsp.status == 0 &&
		  r.checksum == xcuda_fnv1a64(0, chan.arena + 1000, 4096),
		  "echo unseeded, no fill", "sum %llx",
		  (unsigned long long)r.checksum);
	memset(chan.arena, 0, ARENA);
}

static void test_memory(void)
{
	struct xcuda_memcpy_args m = { 0 };
	struct xcuda_memcpy_2d_args m2 = { 0 };
	struct xcuda_memset_args ms = { 0 };
	struct xcuda_request req;

	m.dir = XCUDA_COPY_H2D;
	m.dst = 0x7000000000ull;
	m.src = ARENA - 10;
	m.count = 11;
	REQ(&req, XCUDA_OP_MEMCPY, m);
	expect("memcpy h2d host extent past the arena", &req,
	       cudaErrorInvalidValue);
	m.src = 0xffffffffffffff00ull;
	m.count = 0x200;
	REQ(&req, XCUDA_OP_MEMCPY, m);
	expect("memcpy h2d host extent wraps", &req, cudaErrorInvalidValue);
	m.dir = XCUDA_COPY_D2H;
	m.src = 0x7000000000ull;
	m.dst = ARENA + 1;
	m.count = 0;
	REQ(&req, XCUDA_OP_MEMCPY, m);
	expect("memcpy d2h host offset past the arena", &req,
	       cudaErrorInvalidValue);
	m.dir = 7;
	m.dst = 0;
	REQ(&req, XCUDA_OP_MEMCPY, m);
	expect("memcpy bad direction", &req, cudaErrorInvalidMemcpyDirection);
	m.dir = XCUDA_COPY_H2D;
	m.src = 0;
	m.count = 16;
	m.flags = 1u << 5;
	REQ(&req, XCUDA_OP_MEMCPY, m);
	expect("memcpy unknown copy flag", &req, cudaErrorInvalidValue);
	m.flags = XCUDA_COPY_ASYNC;
	m.stream = 999;
	REQ(&req, XCUDA_OP_MEMCPY, m);
	req.hdr.flags = XCUDA_RF_POSTED;
	expect("memcpy posted on an unknown stream", &req,
	       cudaErrorInvalidResourceHandle);
	m.stream = 3;
	REQ(&req, XCUDA_OP_MEMCPY, m);
	expect("memcpy on reserved stream 3", &req,
	       cudaErrorInvalidResourceHandle);

	m2.dir = XCUDA_COPY_H2D;
	m2.dst = 0x7000000000ull;
	m2.dpitch = 512;
	m2.spitch = 64;
	m2.width = 65;
	m2.height = 2;
	REQ(&req, XCUDA_OP_MEMCPY_2D, m2);
	expect("memcpy2d width over the host pitch", &req,
	       cudaErrorInvalidValue);
	m2.width = 64;
	m2.height = ARENA / 64 + 1;
	REQ(&req, XCUDA_OP_MEMCPY_2D, m2);
	expect("memcpy2d rows past the arena", &req, cudaErrorInvalidValue);
	m2.spitch = 1ull << 62;
	m2.height = 8;
	REQ(&req, XCUDA_OP_MEMCPY_2D, m2);
	expect("memcpy2d span overflows", &req, cudaErrorInvalidValue);
	m2.dir = XCUDA_COPY_D2H;
	m2.src = 0x7000000000ull;
	m2.spitch = 512;
	m2.dst = 0;
	m2.dpitch = ~0ull;
	m2.width = 16;
	m2.height = 3;
	REQ(&req, XCUDA_OP_MEMCPY_2D, m2);
	expect("memcpy2d d2h pitch overflows", &req, cudaErrorInvalidValue);
	m2.dpitch = 64;
	m2.dst = ARENA - 64 * 2;
	REQ(&req, XCUDA_OP_MEMCPY_2D, m2);
	expect("memcpy2d d2h last row past the arena", &req,
	       cudaErrorInvalidValue);
	m2.flags = XCUDA_COPY_ASYNC;
	m2.dst = 0;
	m2.stream = 77;
	REQ(&req, XCUDA_OP_MEMCPY_2D, m2);
	expect("memcpy2d unknown stream", &req,
	       cudaErrorInvalidResourceHandle);

	ms.ptr = 0x7000000000ull;
	ms.count = 16;
	ms.flags = XCUDA_COPY_STAGED;
	REQ(&req, XCUDA_OP_MEMSET, ms);
	expect("memset unknown flag", &req, cudaErrorInvalidValue);
	ms.flags = XCUDA_COPY_ASYNC;
	ms.stream = 4000;
	REQ(&req, XCUDA_OP_MEMSET, ms);
	expect("memset unknown stream", &req,
	       cudaErrorInvalidResourceHandle);

	req_init(&req, XCUDA_OP_ARENA_UNPIN, NULL, 0);
	req.hdr.data_off = 4096;
	req.hdr.data_len = 4096;
	expect("unpin of an extent never pinned", &req,
	       cudaErrorHostMemoryNotRegistered);
}

static void test_handles(void)
{
	struct xcuda_stream_wait_event_args w = { .stream = 0, .event = 16 };
	struct xcuda_event_record_args er = { .event = 20, .stream = 0 };
	struct xcuda_event_elapsed_time_args el = { .start = 16, .end = 17 };
	struct xcuda_func_set_attribute_args fa = { .func = 33 };
	struct xcuda_occupancy_args oc = { .func = 33, .blockSize = 128 };
	struct xcuda_request req;
	static const struct {
		const char *name;
		uint16_t op;
		uint32_t handle;
	} ops[] = {
		{ "stream destroy of stream 0", XCUDA_OP_STREAM_DESTROY, 0 },
		{ "stream destroy of legacy", XCUDA_OP_STREAM_DESTROY, 1 },
		{ "stream destroy unknown", XCUDA_OP_STREAM_DESTROY, 16 },
		{ "stream synchronize unknown", XCUDA_OP_STREAM_SYNCHRONIZE,
		  4111 },
		{ "stream query unknown", XCUDA_OP_STREAM_QUERY, 0xffffffff },
		{ "event synchronize unknown", XCUDA_OP_EVENT_SYNCHRONIZE, 0 },
		{ "event query unknown", XCUDA_OP_EVENT_QUERY, 17 },
		{ "event destroy unknown", XCUDA_OP_EVENT_DESTROY, 99 },
		{ "module unload unknown", XCUDA_OP_MODULE_UNLOAD, 16 },
		{ "func attributes unknown", XCUDA_OP_FUNC_GET_ATTRIBUTES,
		  16 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		/*
		 * Every one of these takes its handle as the first u32 of
		 * an 8-byte args struct (stream, event, module or func).
		 */
		uint32_t h[2] = { ops[i].handle, 0 };

		_Static_assert(sizeof(h) ==
			       sizeof(struct xcuda_stream_destroy_args) &&
			       sizeof(h) ==
			       sizeof(struct xcuda_event_query_args) &&
			       sizeof(h) ==
			       sizeof(struct xcuda_module_unload_args) &&
			       sizeof(h) ==
			       sizeof(struct xcuda_func_get_attributes_args),
			       "handle args");
		REQ(&req, ops[i].op, h);
		if (ops[i].op == XCUDA_OP_FUNC_GET_ATTRIBUTES)
			req.hdr.data_len = sizeof(struct cudaFuncAttributes);
		expect(ops[i].name, &req, cudaErrorInvalidResourceHandle);
	}
	REQ(&req, XCUDA_OP_STREAM_WAIT_EVENT, w);
	expect("stream wait on an unknown event", &req,
	       cudaErrorInvalidResourceHandle);
	REQ(&req, XCUDA_OP_EVENT_RECORD, er);
	req.hdr.flags = XCUDA_RF_POSTED;
	expect("event record unknown, posted", &req,
	       cudaErrorInvalidResourceHandle);
	REQ(&req, XCUDA_OP_EVENT_ELAPSED_TIME, el);
	expect("elapsed time unknown events", &req,
	       cudaErrorInvalidResourceHandle);
	REQ(&req, XCUDA_OP_FUNC_SET_ATTRIBUTE, fa);
	expect("func set attribute unknown", &req,
	       cudaErrorInvalidResourceHandle);
	REQ(&req, XCUDA_OP_OCCUPANCY, oc);
	expect("occupancy unknown", &req, cudaErrorInvalidResourceHandle);
}

static void module_piece(const char *name, uint64_t total, uint64_t off,
			 uint64_t hash, uint32_t flags, uint32_t len, int want)
{
	struct xcuda_module_data_args a = {
		.total = total, .offset = off, .hash = hash, .flags = flags
	};
	struct xcuda_request req;

	REQ(&req, XCUDA_OP_MODULE_DATA, a);
	req.hdr.data_off = 8192;
	req.hdr.data_len = len;
	expect(name, &req, want);
}

static void test_modules(void)
{
	const uint64_t bad = cudaErrorInvalidValue;
	struct xcuda_module_data_args a = { 0 };
	struct xcuda_response rsp;
	struct xcuda_request req;
	uint64_t hash;
	uint32_t h;

	memset(chan.arena + 8192, 0x5c, 4096);
	hash = xcuda_fnv1a64(0, chan.arena + 8192, 300);
	module_piece("module piece without FIRST", 300, 0, hash, 0, 100, bad);
	module_piece("module total 0", 0, 0, hash, XCUDA_MOD_FIRST, 100, bad);
	module_piece("module total over the limit", XCUDA_MAX_MODULE + 1ull,
		     0, hash, XCUDA_MOD_FIRST, 100, bad);
	module_piece("module total 2^64-1", ~0ull, 0, hash, XCUDA_MOD_FIRST,
		     100, bad);
	module_piece("module FIRST at offset 8", 300, 8, hash,
		     XCUDA_MOD_FIRST, 100, bad);
	module_piece("module unknown flags", 300, 0, hash,
		     XCUDA_MOD_FIRST | 4, 100, bad);
	module_piece("module piece longer than total", 300, 0, hash,
		     XCUDA_MOD_FIRST, 301, bad);

	module_piece("module first piece", 300, 0, hash, XCUDA_MOD_FIRST,
		     100, 0);
	a = (struct xcuda_module_data_args){ 300, 0, hash, XCUDA_MOD_FIRST,
					     0 };
	REQ(&req, XCUDA_OP_MODULE_DATA, a);
	req.hdr.data_off = 8192;
	req.hdr.data_len = 100;
	call(&req, &rsp);
	memcpy(&h, rsp.out, sizeof(h));
	CHECK_MSG(!rsp.status && !h, "module restart answers handle 0",
		  "status %d handle %u", rsp.status, h);
	module_piece("module piece with a gap", 300, 150, hash, 0, 50, bad);
	module_piece("module piece after the upload was dropped", 300, 100,
		     hash, 0, 50, bad);
	module_piece("module first again", 300, 0, hash, XCUDA_MOD_FIRST,
		     100, 0);
	module_piece("module piece overlapping", 300, 50, hash, 0, 100, bad);
	module_piece("module first once more", 300, 0, hash, XCUDA_MOD_FIRST,
		     100, 0);
	module_piece("module piece with another total", 400, 100, hash, 0,
		     100, bad);
	module_piece("module first, then", 300, 0, hash, XCUDA_MOD_FIRST,
		     100, 0);
	module_piece("module piece past total", 300, 100, hash, 0, 201, bad);
	module_piece("module LAST short of total", 300, 0, hash,
		     XCUDA_MOD_FIRST | XCUDA_MOD_LAST, 299, bad);
	module_piece("module LAST with a wrong hash", 300, 0, hash ^ 1,
		     XCUDA_MOD_FIRST | XCUDA_MOD_LAST, 300, bad);

	/*
	 * A well-formed upload of garbage with no NUL in it: it gets past
	 * our checks to CUDA, which fails it or (lazy loading, on a GPU)
	 * takes it for PTX text; the worker's NUL guard keeps CUDA inside
	 * the image (AddressSanitizer would see it read on).
	 */
	a = (struct xcuda_module_data_args){ 300, 0, hash,
					     XCUDA_MOD_FIRST | XCUDA_MOD_LAST,
					     0 };
	REQ(&req, XCUDA_OP_MODULE_DATA, a);
	req.hdr.data_off = 8192;
	req.hdr.data_len = 300;
	call(&req, &rsp);
	memcpy(&h, rsp.out, sizeof(h));
	CHECK_MSG(rsp.status ? rsp.status != cudaErrorInvalidValue && !h :
			       h >= XCUDA_HANDLE_FIRST,
		  "module garbage image goes to CUDA", "status %d handle %u",
		  rsp.status, h);
	CHECK_MSG(xd_image_charged() == (rsp.status ? 0 : 301),
		  "module images: a kept one is charged, every dropped or "
		  "failed upload given back", "charged %llu",
		  (unsigned long long)xd_image_charged());

	/* The images a session keeps have a budget: past it, no upload. */
	{
		uint64_t fill = XD_MAX_IMAGE_BYTES - xd_image_charged() - 100;

		REQUIRE_MSG(!xd_image_charge(fill), "budget", "cannot fill");
		module_piece("module upload past the images' budget", 300, 0,
			     hash, XCUDA_MOD_FIRST, 100,
			     cudaErrorMemoryAllocation);
		xd_image_uncharge(fill);
		module_piece("module upload within it again", 300, 0, hash,
			     XCUDA_MOD_FIRST, 100, 0);
	}
}

/*
 * A worker that refused its GPU (one that reaches pageable memory): every
 * CUDA command is answered cudaErrorNotPermitted without reaching CUDA,
 * whatever the guest sends; commands without CUDA still work.
 */
static void test_refused(void)
{
	struct xcuda_malloc_args m = { 4096 };
	struct xcuda_echo_args e = { 1, 0, 0, 0 };
	struct xcuda_request req;

	sess.refused = cudaErrorNotPermitted;
	REQ(&req, XCUDA_OP_MALLOC, m);
	expect("refused GPU: MALLOC answered cudaErrorNotPermitted", &req,
	       cudaErrorNotPermitted);
	REQ(&req, XCUDA_OP_ECHO, e);
	req.hdr.data_off = 0;
	req.hdr.data_len = 64;
	expect("refused GPU: ECHO still answered", &req, 0);
	sess.refused = 0;
}

/* A channel whose guest is gone once the other end of @fd has closed. */
static int fake_peer_gone(struct xd_chan *c)
{
	struct pollfd p = { .fd = (int)(intptr_t)c->priv, .events = POLLRDHUP };

	return poll(&p, 1, 0) > 0 &&
	       (p.revents & (POLLHUP | POLLERR | POLLRDHUP));
}

static const struct xd_chan_ops fake_ops = { .peer_gone = fake_peer_gone };

/*
 * The watch, in a child as a worker runs it: a request starts, ends in
 * time or not (@end_in_time), with a deadline of @deadline_s (0: none)
 * and a guest that goes at once or stays (@gone), the channel closing
 * (@stopped: xd_watchdog_stop()) before the request.  The child sleeps 5 s
 * and exits 0 unless the watch ends it.  Returns its exit status.
 */
static int watch_child(unsigned int deadline_s, int end_in_time, int gone,
		       int stopped, long *took_ms)
{
	struct xd_chan c = { .ops = &fake_ops };
	struct timespec a, b;
	int status = -1, sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv))
		return -1;
	c.priv = (void *)(intptr_t)sv[0];
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = fork();
	if (pid == 0) {
		close(sv[1]);
		if (xd_watchdog_start(&c, deadline_s))
			_exit(9);
		if (stopped)
			xd_watchdog_stop();
		xd_watchdog_note(XCUDA_OP_DEVICE_SYNCHRONIZE);
		if (end_in_time)
			xd_watchdog_note(0);
		sleep(5);
		_exit(0);
	}
	close(sv[0]);
	if (gone)
		close(sv[1]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (!gone)
		close(sv[1]);
	clock_gettime(CLOCK_MONOTONIC, &b);
	*took_ms = (b.tv_sec - a.tv_sec) * 1000 +
		   (b.tv_nsec - a.tv_nsec) / 1000000;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_watchdog(void)
{
	long took = 0;
	int st;

	st = watch_child(1, 0, 0, 0, &took);
	CHECK_MSG(st == XD_WATCHDOG_EXIT && took < 4500,
		  "request deadline: a request past it ends the worker",
		  "exit %d after %ld ms", st, took);
	st = watch_child(1, 1, 0, 0, &took);
	CHECK_MSG(st == 0 && took >= 4900, "request deadline: an ended "
		  "request leaves the worker alone", "exit %d after %ld ms",
		  st, took);
	st = watch_child(0, 0, 1, 0, &took);
	CHECK_MSG(st == XD_WATCHDOG_GONE && took >= 1000 && took < 4500,
		  "a guest gone during a request ends the worker after a "
		  "second", "exit %d after %ld ms", st, took);
	st = watch_child(0, 0, 0, 0, &took);
	CHECK_MSG(st == 0 && took >= 4900, "a long request of a guest that "
		  "stays runs on (no deadline)", "exit %d after %ld ms", st,
		  took);
	st = watch_child(0, 1, 1, 0, &took);
	CHECK_MSG(st == 0 && took >= 4900, "a guest gone while no request "
		  "runs is the worker's loop's to see", "exit %d after %ld ms",
		  st, took);
	st = watch_child(0, 0, 1, 1, &took);
	CHECK_MSG(st == 0 && took >= 4900, "a channel being closed "
		  "(xd_watchdog_stop) is asked no more", "exit %d after %ld ms",
		  st, took);
}

static void test_symbols(void)
{
	struct xcuda_func_get_args s = { .module = 0xffff };
	struct xcuda_launch_args l;
	struct xcuda_request req;

	memset(chan.arena + 8192, 'k', 2 * XCUDA_NAME_MAX);
	REQ(&req, XCUDA_OP_FUNC_GET, s);
	req.hdr.data_off = 8192;
	req.hdr.data_len = 2 * XCUDA_NAME_MAX;
	expect("func get unterminated name", &req, cudaErrorInvalidValue);
	chan.arena[8192 + XCUDA_NAME_MAX] = 0;
	expect("func get name longer than NAME_MAX", &req,
	       cudaErrorInvalidValue);
	chan.arena[8192 + 10] = 0;
	req.hdr.data_len = 10;
	expect("func get NUL past data_len", &req, cudaErrorInvalidValue);
	req.hdr.data_len = 11;
	expect("func get unknown module", &req,
	       cudaErrorInvalidResourceHandle);
	req.hdr.op = XCUDA_OP_VAR_GET;
	req.hdr.data_len = 10;
	expect("var get NUL past data_len", &req, cudaErrorInvalidValue);
	req.hdr.data_len = 11;
	expect("var get unknown module", &req,
	       cudaErrorInvalidResourceHandle);

	memset(&l, 0, sizeof(l));
	l.func = 0xffff;
	l.grid[0] = l.grid[1] = l.grid[2] = 1;
	l.block[0] = l.block[1] = l.block[2] = 1;
	REQ(&req, XCUDA_OP_LAUNCH, l);
	req.hdr.flags = XCUDA_RF_POSTED;
	expect("launch unknown func", &req, cudaErrorInvalidResourceHandle);
	l.args_len = sizeof(l.args) + 1;
	REQ(&req, XCUDA_OP_LAUNCH, l);
	expect("launch inline args too long", &req, cudaErrorInvalidValue);
	l.args_len = 16;
	REQ(&req, XCUDA_OP_LAUNCH, l);
	req.hdr.len = offsetof(struct xcuda_launch_args, args) + 8;
	expect("launch inline args past hdr.len", &req,
	       cudaErrorInvalidValue);
	req.hdr.data_off = 8192;
	req.hdr.data_len = 32;
	expect("launch extent size differs from args_len", &req,
	       cudaErrorInvalidValue);
	req.hdr.data_len = 16;
	expect("launch extent args, unknown func", &req,
	       cudaErrorInvalidResourceHandle);
}

static void test_device(void)
{
	struct xcuda_get_device_properties_args d = { .device = 0 };
	struct xcuda_request req;
	struct xcuda_response rsp;

	REQ(&req, XCUDA_OP_GET_DEVICE_PROPERTIES, d);
	req.hdr.data_len = sizeof(struct cudaDeviceProp) - 1;
	expect("device properties extent too small", &req,
	       cudaErrorInvalidValue);
	/* A CUDA op on a device that does not exist: the switch fails. */
	req_init(&req, XCUDA_OP_DEVICE_SYNCHRONIZE, NULL, 0);
	req.hdr.device = 999;
	call(&req, &rsp);
	CHECK_MSG(rsp.status != 0 && sess.device == 0,
		  "device switch failure is the answer", "status %d device %d",
		  rsp.status, sess.device);
}

/*
 * Generated commands name their buffers with extents in their arguments:
 * each is checked against the arena, its buffer's limit and its call's
 * other arguments before CUDA sees anything.
 */
static void test_extents(void)
{
	struct xcuda_device_get_by_pci_bus_id_args b;
	struct xcuda_device_get_pci_bus_id_args p;
	struct xcuda_stream_get_attribute_args g;
	struct xcuda_stream_set_attribute_args sa;
	struct xcuda_request req;
	uint8_t *arena = chan.arena;

	memset(&b, 0, sizeof(b));
	b.pciBusId = (struct xcuda_extent){ ARENA - 4, 8 };
	REQ(&req, XCUDA_OP_DEVICE_GET_BY_PCI_BUS_ID, b);
	expect("string extent past the arena", &req, cudaErrorInvalidValue);
	b.pciBusId = (struct xcuda_extent){ UINT32_MAX, 2 };
	REQ(&req, XCUDA_OP_DEVICE_GET_BY_PCI_BUS_ID, b);
	expect("string extent wrapping", &req, cudaErrorInvalidValue);
	b.pciBusId = (struct xcuda_extent){ 64, 0 };
	REQ(&req, XCUDA_OP_DEVICE_GET_BY_PCI_BUS_ID, b);
	expect("empty extent that is not NULL's", &req,
	       cudaErrorInvalidValue);
	memset(arena + 64, 'a', 300);
	b.pciBusId = (struct xcuda_extent){ 64, 16 };
	REQ(&req, XCUDA_OP_DEVICE_GET_BY_PCI_BUS_ID, b);
	expect("string without its NUL", &req, cudaErrorInvalidValue);
	arena[64 + 256] = 0;
	b.pciBusId = (struct xcuda_extent){ 64, 257 };
	REQ(&req, XCUDA_OP_DEVICE_GET_BY_PCI_BUS_ID, b);
	expect("string over its limit", &req, cudaErrorInvalidValue);

	memset(&p, 0, sizeof(p));
	p.pciBusId = (struct xcuda_extent){ 64, 8 };
	p.len = 16;
	REQ(&req, XCUDA_OP_DEVICE_GET_PCI_BUS_ID, p);
	expect("buffer shorter than its length", &req,
	       cudaErrorInvalidValue);
	p.len = -1;
	REQ(&req, XCUDA_OP_DEVICE_GET_PCI_BUS_ID, p);
	expect("negative buffer length", &req, cudaErrorInvalidValue);
	p.pciBusId = (struct xcuda_extent){ 64, 257 };
	p.len = 257;
	REQ(&req, XCUDA_OP_DEVICE_GET_PCI_BUS_ID, p);
	expect("buffer over its limit", &req, cudaErrorInvalidValue);

	memset(&g, 0, sizeof(g));
	g.attr = cudaLaunchAttributePriority;
	g.value_out = (struct xcuda_extent){ 64,
					     sizeof(cudaLaunchAttributeValue) -
					     1 };
	REQ(&req, XCUDA_OP_STREAM_GET_ATTRIBUTE, g);
	expect("structure extent of the wrong size", &req,
	       cudaErrorInvalidValue);
	g.value_out.len++;
	g.hStream = XCUDA_HANDLE_FIRST + 7;
	REQ(&req, XCUDA_OP_STREAM_GET_ATTRIBUTE, g);
	expect("unknown stream with a good extent", &req,
	       cudaErrorInvalidResourceHandle);

	memset(&sa, 0, sizeof(sa));
	sa.attr = cudaLaunchAttributeCooperative;
	REQ(&req, XCUDA_OP_STREAM_SET_ATTRIBUTE, sa);
	expect("launch-only attribute on a stream", &req,
	       cudaErrorInvalidValue);
	sa.attr = 12345;
	REQ(&req, XCUDA_OP_STREAM_SET_ATTRIBUTE, sa);
	expect("unknown stream attribute", &req, cudaErrorInvalidValue);
}

/* Objects of the kinds the description declares: pools. */
static void test_objects(void)
{
	struct xcuda_mem_pool_create_args c;
	struct xcuda_mem_pool_trim_to_args t;
	struct xcuda_mem_pool_set_access_args sa;
	struct xcuda_request req;

	memset(&c, 0, sizeof(c));
	c.poolProps.allocType = cudaMemAllocationTypePinned;
	c.poolProps.handleTypes = cudaMemHandleTypeWin32;
	REQ(&req, XCUDA_OP_MEM_POOL_CREATE, c);
	expect("a pool of Windows handles refused", &req,
	       cudaErrorInvalidValue);
	c.poolProps.handleTypes = cudaMemHandleTypeNone;
	c.poolProps.win32SecurityAttributes = (void *)0x1234;
	REQ(&req, XCUDA_OP_MEM_POOL_CREATE, c);
	expect("pool with a guest pointer refused", &req,
	       cudaErrorInvalidValue);

	memset(&t, 0, sizeof(t));
	t.memPool = XCUDA_HANDLE_FIRST + 3;
	REQ(&req, XCUDA_OP_MEM_POOL_TRIM_TO, t);
	expect("unknown pool", &req, cudaErrorInvalidResourceHandle);
	t.memPool = 0;
	REQ(&req, XCUDA_OP_MEM_POOL_TRIM_TO, t);
	expect("pool 0", &req, cudaErrorInvalidResourceHandle);

	memset(&sa, 0, sizeof(sa));
	sa.descList = (struct xcuda_extent){ 64,
					     sizeof(struct cudaMemAccessDesc) };
	sa.count = 2;
	REQ(&req, XCUDA_OP_MEM_POOL_SET_ACCESS, sa);
	expect("more descriptors than the extent holds", &req,
	       cudaErrorInvalidValue);
	sa.count = UINT64_MAX;
	REQ(&req, XCUDA_OP_MEM_POOL_SET_ACCESS, sa);
	expect("a count that overflows", &req, cudaErrorInvalidValue);
}

static void test_close(void)
{
	struct xcuda_request req;
	struct xcuda_response rsp;
	int end;

	req_init(&req, XCUDA_OP_CLOSE, NULL, 0);
	req.hdr.flags = XCUDA_RF_POSTED;
	end = xd_handle(&sess, &req, &rsp);
	CHECK_MSG(!end && rsp.status == cudaErrorInvalidValue,
		  "posted CLOSE refused", "end %d status %d", end, rsp.status);
	req.hdr.flags = 0;
	end = xd_handle(&sess, &req, &rsp);
	CHECK_MSG(end && rsp.status == 0, "close ends the session",
		  "end %d status %d", end, rsp.status);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The rejections below are expected; their warnings are noise. */
	xd_log_setup(XD_LOG_ERROR, 0);
	chan.arena = calloc(1, ARENA);
	chan.arena_size = ARENA;
	chan.session = SESSION;
	REQUIRE_MSG(chan.arena && !xd_session_init(&sess, &chan), "setup",
		    "out of memory");
	test_open();
	test_echo();
	test_memory();
	test_handles();
	test_modules();
	test_refused();
	test_watchdog();
	test_symbols();
	test_device();
	test_extents();
	test_objects();
	test_close();
	xd_session_fini(&sess);
	free(chan.arena);
	return check_summary();
}
