// SPDX-License-Identifier: MIT
/*
 * The driver's log and its callbacks (ops_logs.c, api_logs.c), hostile
 * input on both sides:
 *
 * - the worker's commands: reserved fields, unknown bits, a dump without
 *   its buffer, registrations without setup, with token 0, with payload
 *   buffers outside the arena or of bad sizes, unknown tokens to
 *   unregister; none leaves a host function context behind;
 * - a payload trampoline driven directly: a message longer than the
 *   buffer is cut at the buffer, nothing is written past it, and once
 *   the context is dropped nothing is published;
 * - the guest's runner: a length from the worker beyond the buffer, a
 *   buffer without a NUL, levels out of range, a short notification,
 *   the handle the program gets.
 */
#include <dlfcn.h>
#include <pthread.h>

#include "daemon_harness.h"
#include "worker_harness.h"
#include "guest-lib/guest.h"
#include "guest-lib/hostfn.h"
#include "dom0-daemon/hostfn.h"
#include "dom0-daemon/log.h"
#include "dom0-daemon/worker.h"
#include "xcuda/hostfn.h"

#define WSESSION	0x10c5c0deu
#define WARENA		(1u << 20)
#define AREA_OFF	8192u
#define PAY_OFF		65536u

static struct xd_chan wchan;
static struct xd_session wsess;

static int fake_peer_gone(struct xd_chan *c)
{
	(void)c;
	return 0;
}

static const struct xd_chan_ops fake_ops = {
	.name = "fake",
	.peer_gone = fake_peer_gone,
};

static int wcall(uint16_t op, const void *args, uint16_t len, void *res,
		 size_t res_len, uint32_t data_off, uint32_t data_len)
{
	return call_res(&wsess, op, args, len, data_off, data_len, res,
			res_len);
}

static void wsession(void)
{
	struct xcuda_open_args a = { XCUDA_PROTO_VERSION, 0, WARENA, 0 };
	struct xcuda_open_res r;

	memset(wchan.arena, 0, WARENA);
	wchan.ops = NULL;
	wchan.flags = 0;
	REQUIRE_MSG(!xd_session_init(&wsess, &wchan), "worker setup",
		    "session init");
	wchan.ops = &fake_ops;
	REQUIRE_MSG(!wcall(XCUDA_OP_OPEN, &a, sizeof(a), &r, sizeof(r), 0, 0),
		    "worker setup", "OPEN failed");
}

static int wsetup(void)
{
	struct xcuda_hostfn_setup_args a = {
		AREA_OFF, sizeof(struct xcuda_hostfn_area)
	};

	return wcall(XCUDA_OP_HOSTFN_SETUP, &a, sizeof(a), NULL, 0, 0, 0);
}

static int reg_log(uint64_t token, uint64_t off, uint32_t len, uint32_t rsvd)
{
	struct xcuda_logs_register_callback_args a = { token, off, len, rsvd };

	return wcall(XCUDA_OP_LOGS_REGISTER_CALLBACK, &a, sizeof(a), NULL, 0,
		     0, 0);
}

static int reg_async(uint64_t token, uint64_t off, uint32_t len, int dev)
{
	struct xcuda_device_register_async_notification_args a = {
		token, off, len, dev
	};

	return wcall(XCUDA_OP_DEVICE_REGISTER_ASYNC_NOTIFICATION, &a,
		     sizeof(a), NULL, 0, 0, 0);
}

/*
 * CUDA 13.0 writes its log into the buffer even when told it holds
 * nothing.  While set, this stand-in for the worker's CUDA does so, with
 * the most CUDA keeps; otherwise the real runtime answers.
 */
#define FAKE_LOG	25600u
static int fake_overrun;

cudaError_t cudaLogsDumpToMemory(cudaLogIterator *iterator, char *buffer,
				 size_t *size, unsigned int flags)
{
	cudaError_t (*real)(cudaLogIterator *, char *, size_t *,
			    unsigned int);

	if (fake_overrun) {
		if (buffer)
			memset(buffer, 'x', FAKE_LOG);
		if (size)
			*size = FAKE_LOG;
		return cudaSuccess;
	}
	*(void **)&real = dlsym(RTLD_NEXT, "cudaLogsDumpToMemory");
	return real ? real(iterator, buffer, size, flags) :
		      cudaErrorNotSupported;
}

/* The worker's own buffer takes CUDA's overrun; the arena gets none. */
static void test_dump_overrun(void)
{
	struct xcuda_logs_dump_args d;
	struct xcuda_logs_dump_res dr;
	int err, i, clean = 1;

	wsession();
	memset(&d, 0, sizeof(d));
	d.what = 2 | 4;
	d.size = 0;
	memset(wchan.arena + PAY_OFF, 0x5a, 512);
	fake_overrun = 1;
	err = wcall(XCUDA_OP_LOGS_DUMP, &d, sizeof(d), &dr, sizeof(dr),
		    PAY_OFF, 128);
	fake_overrun = 0;
	CHECK_EQ(err, 0, "dump past a zero size: answered");
	CHECK_EQ(dr.size, (uint64_t)FAKE_LOG,
		 "dump past a zero size: CUDA's count goes back");
	for (i = 0; i < 512; i++)
		clean &= wchan.arena[PAY_OFF + i] == 0x5a;
	CHECK(clean, "dump past a zero size: nothing written to the arena");
	xd_session_fini(&wsess);
}

static void test_worker_checks(void)
{
	struct xcuda_logs_current_args cur = { 0, 1 };
	struct xcuda_logs_dump_args d;
	struct xcuda_logs_dump_res dr;
	struct xcuda_logs_unregister_callback_args ul = { 77 };
	struct xcuda_device_unregister_async_notification_args ua = {
		77, 0, 0
	};
	int err;

	wsession();
	EXPECT(wcall(XCUDA_OP_LOGS_CURRENT, &cur, sizeof(cur), NULL, 0, 0,
		     0) == cudaErrorInvalidValue, "current: rsvd accepted");
	memset(&d, 0, sizeof(d));
	d.what = 1u << 3;
	EXPECT(wcall(XCUDA_OP_LOGS_DUMP, &d, sizeof(d), NULL, 0, 0, 0) ==
	       cudaErrorInvalidValue, "dump: unknown bits accepted");
	d.what = 0;
	d.rsvd = 1;
	EXPECT(wcall(XCUDA_OP_LOGS_DUMP, &d, sizeof(d), NULL, 0, 0, 0) ==
	       cudaErrorInvalidValue, "dump: rsvd accepted");
	d.rsvd = 0;
	d.what = 2 | 4;
	d.size = 1u << 30;
	EXPECT(wcall(XCUDA_OP_LOGS_DUMP, &d, sizeof(d), NULL, 0, 0, 0) ==
	       cudaErrorInvalidValue, "dump: a buffer without an extent");
	/* A buffer larger than the extent: CUDA never sees more. */
	memset(wchan.arena + PAY_OFF, 0x5a, 256);
	memset(&dr, 0xff, sizeof(dr));
	err = wcall(XCUDA_OP_LOGS_DUMP, &d, sizeof(d), &dr, sizeof(dr),
		    PAY_OFF, 128);
	EXPECT(err == 0, "dump: %d", err);
	EXPECT(dr.status != 0 || dr.size < 128, "dump: size %llu past the "
	       "extent", (unsigned long long)dr.size);
	for (int i = 128; i < 256; i++)
		EXPECT(wchan.arena[PAY_OFF + i] == 0x5a,
		       "dump wrote past its extent at %d", i);

	/* Registrations: no setup yet. */
	EXPECT(reg_log(5, PAY_OFF, 4096, 0) == cudaErrorInvalidValue,
	       "log callback without setup");
	EXPECT(reg_async(5, PAY_OFF, 64, 0) == cudaErrorInvalidValue,
	       "async callback without setup");
	EXPECT(wsetup() == 0, "setup");
	EXPECT(reg_log(0, PAY_OFF, 4096, 0) == cudaErrorInvalidValue,
	       "token 0");
	EXPECT(reg_log(5, PAY_OFF, 4096, 1) == cudaErrorInvalidValue,
	       "rsvd");
	EXPECT(reg_log(5, WARENA - 32, 64, 0) == cudaErrorInvalidValue,
	       "a buffer past the arena");
	EXPECT(reg_log(5, UINT64_MAX - 10, 64, 0) == cudaErrorInvalidValue,
	       "a wrapping buffer");
	EXPECT(reg_log(5, PAY_OFF, 8, 0) == cudaErrorInvalidValue,
	       "a buffer too small");
	EXPECT(reg_log(5, 0, 65537, 0) == cudaErrorInvalidValue,
	       "a buffer too large");
	EXPECT(reg_async(5, WARENA, 64, 0) == cudaErrorInvalidValue,
	       "async: a buffer past the arena");
	EXPECT(xd_hostfn_ctx_count(&wsess) == 0, "%u contexts left by "
	       "refused registrations", xd_hostfn_ctx_count(&wsess));
	EXPECT(wcall(XCUDA_OP_LOGS_UNREGISTER_CALLBACK, &ul, sizeof(ul),
		     NULL, 0, 0, 0) == cudaErrorInvalidValue,
	       "unregistered an unknown token");
	EXPECT(wcall(XCUDA_OP_DEVICE_UNREGISTER_ASYNC_NOTIFICATION, &ua,
		     sizeof(ua), NULL, 0, 0, 0) == cudaErrorInvalidValue,
	       "unregistered an unknown async token");
	ua.rsvd = 1;
	EXPECT(wcall(XCUDA_OP_DEVICE_UNREGISTER_ASYNC_NOTIFICATION, &ua,
		     sizeof(ua), NULL, 0, 0, 0) == cudaErrorInvalidValue,
	       "async unregister: rsvd");
	/* A good one: CUDA's answer (no driver here: an error). */
	err = reg_log(9, PAY_OFF, 4096, 0);
	if (err) {
		EXPECT(xd_hostfn_ctx_count(&wsess) == 0, "a context left by "
		       "CUDA's refusal");
	} else {
		ul.token = 9;
		EXPECT(reg_log(9, PAY_OFF, 4096, 0) == cudaErrorInvalidValue,
		       "the same token twice");
		/* Not the async kind. */
		ua.token = 9;
		ua.rsvd = 0;
		EXPECT(wcall(XCUDA_OP_DEVICE_UNREGISTER_ASYNC_NOTIFICATION,
			     &ua, sizeof(ua), NULL, 0, 0, 0) ==
		       cudaErrorInvalidValue, "a log token as async");
		EXPECT(wcall(XCUDA_OP_LOGS_UNREGISTER_CALLBACK, &ul,
			     sizeof(ul), NULL, 0, 0, 0) == 0, "unregister");
		EXPECT(xd_hostfn_ctx_count(&wsess) == 0, "context left");
	}
out:
	xd_session_fini(&wsess);
	check_case("worker: log commands refuse bad input, leak nothing");
}

/* ---- a payload trampoline ---- */

struct fire {
	void *ud;
	const char *msg;
	size_t len;
	int done;
};

static void *fire_main(void *arg)
{
	struct fire *f = arg;

	xd_hostfn_fire_data(f->ud, 1, f->msg, f->len);
	__atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int pending(struct xcuda_hostfn_area *a, long ms)
{
	long end = now_ms() + ms;

	do {
		for (int i = 0; i < XCUDA_HOSTFN_SLOTS; i++)
			if (__atomic_load_n(&a->slot[i].seq,
					    __ATOMIC_ACQUIRE) !=
			    __atomic_load_n(&a->slot[i].done,
					    __ATOMIC_ACQUIRE))
				return i;
		nap_ms(1);
	} while (now_ms() < end);
	return -1;
}

static void test_payload(void)
{
	struct xcuda_hostfn_area *a =
		(struct xcuda_hostfn_area *)(wchan.arena + AREA_OFF);
	static char msg[10000];
	struct fire f;
	pthread_t th;
	void *ud = NULL;
	int slot, started = 0;

	wsession();
	memset(msg, 'm', sizeof(msg));
	memset(wchan.arena + PAY_OFF, 0x5a, 256);
	EXPECT(wsetup() == 0, "setup");
	EXPECT(xd_hostfn_ctx_new(&wsess, 42, XD_HOSTFN_GRAPH, &ud) == 0,
	       "context");
	EXPECT(xd_hostfn_ctx_payload(&wsess, ud, WARENA - 63, 64) ==
	       cudaErrorInvalidValue, "a buffer past the arena");
	EXPECT(xd_hostfn_ctx_payload(&wsess, (void *)(uintptr_t)12345,
				     PAY_OFF, 64) == cudaErrorInvalidValue,
	       "a garbage context");
	EXPECT(xd_hostfn_ctx_payload(&wsess, ud, PAY_OFF, 64) == 0,
	       "payload");
	f = (struct fire){ ud, msg, sizeof(msg), 0 };
	EXPECT(!pthread_create(&th, NULL, fire_main, &f), "thread");
	started = 1;
	slot = pending(a, TIMEOUT_MS);
	EXPECT(slot >= 0, "no record");
	EXPECT(a->slot[slot].token == 42 && a->slot[slot].arg == 64 &&
	       a->slot[slot].status == 1, "record: token %llu arg %llu",
	       (unsigned long long)a->slot[slot].token,
	       (unsigned long long)a->slot[slot].arg);
	for (int i = 0; i < 64; i++)
		EXPECT(wchan.arena[PAY_OFF + i] == 'm', "payload byte %d", i);
	for (int i = 64; i < 256; i++)
		EXPECT(wchan.arena[PAY_OFF + i] == 0x5a,
		       "written past the buffer at %d", i);
	a->slot[slot].done = a->slot[slot].seq - 1;	/* garbage */
	nap_ms(20);
	EXPECT(!__atomic_load_n(&f.done, __ATOMIC_ACQUIRE),
	       "a wrong completion released it");
	__atomic_store_n(&a->slot[slot].done, a->slot[slot].seq,
			 __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	started = 0;
	xd_hostfn_ctx_drop_wait(ud);
	EXPECT(xd_hostfn_ctx_count(&wsess) == 0, "context left");
	memset(wchan.arena + PAY_OFF, 0x5a, 64);
	xd_hostfn_fire_data(ud, 0, msg, 10);	/* dropped: returns */
	EXPECT(pending(a, 20) < 0, "a dropped context published");
	EXPECT(wchan.arena[PAY_OFF] == 0x5a, "a dropped context wrote");
out:
	if (started) {
		xd_hostfn_abort(&wsess);
		pthread_join(th, NULL);
	}
	xd_session_fini(&wsess);
	check_case("worker: a payload is cut at its buffer, never stale");
}

/* ---- the guest's runner ---- */

static int log_calls, log_level;
static size_t log_len, log_strlen;
static void *log_data;

static void CUDART_CB log_fn(void *data, cudaLogLevel level, char *message,
			     size_t length)
{
	log_calls++;
	log_level = level;
	log_len = length;
	log_strlen = strlen(message);
	log_data = data;
}

static int async_calls;
static cudaAsyncNotificationInfo_t async_info;
static cudaAsyncCallbackHandle_t async_h;

static void async_fn(cudaAsyncNotificationInfo_t *info, void *data,
		     cudaAsyncCallbackHandle_t h)
{
	(void)data;
	async_calls++;
	async_info = *info;
	async_h = h;
}

static void record(struct xcuda_hostfn_area *a, int slot, uint64_t token,
		   int32_t status, uint64_t arg)
{
	a->slot[slot].token = token;
	a->slot[slot].status = status;
	a->slot[slot].arg = arg;
	a->slot[slot].seq++;
	if (a->slot[slot].seq == a->slot[slot].done)
		a->slot[slot].seq++;
}

static void test_guest_scan(void)
{
	static struct xcuda_hostfn_area a;
	static char pay[64], apay[64];
	struct xc_hostfn l = { .kind = XC_HOSTFN_LOG, .fn.log = log_fn,
			       .data = &a, .payload = pay,
			       .payload_len = sizeof(pay) };
	struct xc_hostfn n = { .kind = XC_HOSTFN_ASYNC, .fn.async = async_fn,
			       .payload = apay, .payload_len = sizeof(apay) };
	struct xc_hostfn z = { .kind = XC_HOSTFN_LOG, .fn.log = log_fn };
	uint64_t tl = 0, tn = 0, tz = 0;

	EXPECT(!xc_hostfn_register(&l, XC_HOSTFN_KEEP, &tl), "register");
	EXPECT(!xc_hostfn_register(&n, XC_HOSTFN_KEEP, &tn), "register");
	EXPECT(!xc_hostfn_register(&z, XC_HOSTFN_KEEP, &tz), "register");
	/* No NUL in the buffer, a length far beyond it. */
	memset(pay, 'A', sizeof(pay));
	record(&a, 0, tl, 1, UINT64_MAX);
	EXPECT(xc_hostfn_scan(&a, 0) == 1 && log_calls == 1, "log ran %d",
	       log_calls);
	EXPECT(log_strlen == sizeof(pay) - 1 && log_len == log_strlen &&
	       log_level == cudaLogLevelWarning && log_data == &a,
	       "message %zu/%zu level %d", log_strlen, log_len, log_level);
	EXPECT(pay[sizeof(pay) - 1] == 'A', "the guest wrote its buffer");
	/* Levels CUDA does not have are errors; a short length holds. */
	record(&a, 1, tl, -7, 5);
	EXPECT(xc_hostfn_scan(&a, 0) == 1 && log_calls == 2 &&
	       log_level == cudaLogLevelError && log_strlen == 5,
	       "level %d length %zu", log_level, log_strlen);
	/* A registration without a buffer runs nothing. */
	record(&a, 2, tz, 0, 10);
	EXPECT(xc_hostfn_scan(&a, 0) == 1 && log_calls == 2,
	       "ran without a buffer");
	EXPECT(a.slot[2].done == a.slot[2].seq, "left pending");
	/* A notification shorter than the structure: zeroes after it. */
	memset(apay, 0xee, sizeof(apay));
	record(&a, 3, tn, 0, 2);
	EXPECT(xc_hostfn_scan(&a, 0) == 1 && async_calls == 1, "async ran");
	EXPECT(async_info.info.overBudget.bytesOverBudget == 0 &&
	       async_h == (cudaAsyncCallbackHandle_t)(uintptr_t)tn,
	       "notification copy or handle");
	record(&a, 4, tn, 0, 1u << 20);
	EXPECT(xc_hostfn_scan(&a, 0) == 1 && async_calls == 2 &&
	       async_info.info.overBudget.bytesOverBudget ==
	       0xeeeeeeeeeeeeeeeeull, "a full notification");
	/* Kept: the token still answers; forgotten: nothing runs. */
	xc_hostfn_forget(tl);
	record(&a, 5, tl, 0, 3);
	EXPECT(xc_hostfn_scan(&a, 0) == 1 && log_calls == 2,
	       "a forgotten callback ran");
out:
	xc_hostfn_forget(tn);
	xc_hostfn_forget(tz);
	check_case("guest: log and notification payloads are bounded");
}

/* ---- both halves: the worker's function and the guest's runner ---- */

static void test_end_to_end(void)
{
	struct xcuda_hostfn_area *a =
		(struct xcuda_hostfn_area *)(wchan.arena + AREA_OFF);
	struct xc_hostfn l = { .kind = XC_HOSTFN_LOG, .fn.log = log_fn,
			       .data = &wsess,
			       .payload = wchan.arena + PAY_OFF,
			       .payload_len = 128, .payload_off = PAY_OFF };
	static const char text[] = "a message the driver logged";
	uint64_t token = 0;
	void *ud = NULL;
	long end;
	int before = log_calls;

	wsession();
	wchan.flags = XD_CHAN_SHARED_FUTEX;
	EXPECT(wsetup() == 0, "setup");
	EXPECT(!xc_hostfn_register(&l, XC_HOSTFN_KEEP, &token), "register");
	EXPECT(xd_hostfn_ctx_new(&wsess, token, XD_HOSTFN_GRAPH, &ud) == 0,
	       "context");
	EXPECT(xd_hostfn_ctx_payload(&wsess, ud, PAY_OFF, 128) == 0,
	       "payload");
	/* The runner serves this arena from now on: never freed. */
	EXPECT(xc_hostfn_serve(a, 1) == cudaSuccess, "serve");
	/* As CUDA calls it: returns once the guest's function returned. */
	xd_hostfn_fire_data(ud, 0, text, sizeof(text) - 1);
	EXPECT(log_calls == before + 1 && log_len == sizeof(text) - 1 &&
	       log_level == cudaLogLevelError && log_data == &wsess,
	       "calls %d length %zu", log_calls - before, log_len);
	xd_hostfn_fire_data(ud, 1, text, sizeof(text) - 1);
	EXPECT(log_calls == before + 2 && log_level == cudaLogLevelWarning,
	       "a second message");
	xd_hostfn_ctx_drop_wait(ud);
	xd_hostfn_fire_data(ud, 1, text, sizeof(text) - 1);
	end = now_ms() + 50;
	while (now_ms() < end)
		nap_ms(5);
	EXPECT(log_calls == before + 2, "a dropped registration fired");
out:
	xc_hostfn_forget(token);
	check_case("both: a log message reaches the program's callback");
}

int main(void)
{
	harness_setup();
	xd_log_setup(XD_LOG_ERROR, 0);
	wchan.arena = calloc(1, WARENA);
	wchan.arena_size = WARENA;
	wchan.session = WSESSION;
	REQUIRE_MSG(wchan.arena, "setup", "out of memory");
	test_worker_checks();
	test_dump_overrun();
	test_payload();
	test_guest_scan();
	test_end_to_end();
	return check_summary();
}
