// SPDX-License-Identifier: MIT
/*
 * xcudactl: an administrator's check of the path from a guest process to
 * its xcudad worker, without CUDA: it opens a session the way any CUDA
 * program would (same library, same transport choice) and uses the
 * protocol's ECHO diagnostic, which the worker answers without touching
 * the GPU.
 *
 *   xcudactl ping [COUNT]     round trips of 64 bytes each way (median,
 *                             99th percentile, CPU per trip)
 *   xcudactl echo SIZE...     moves SIZE bytes (suffix K, M or G) through
 *                             the arena both ways and checks them
 *   xcudactl hold SECONDS     keeps a session busy (small ECHOs) so long
 *   xcudactl info             the session's transport and its limits
 *   xcudactl status [FILE]    GPU memory used and allowed per domain, from
 *                             the daemon's table (its socket's path with
 *                             ".gpumem"; mode 0600: run it as the daemon's
 *                             user, root in Dom0)
 *   xcudactl smi              the GPUs as NVML sees them, in the manner of
 *                             nvidia-smi's summary
 *
 * smi needs no session of its own: it loads libnvidia-ml.so.1 with
 * dlopen, the host's NVML natively and xcuda's in a guest, so that one
 * binary prints the same static fields in both places and shows what the
 * guest's NVML forwards.
 *
 * Exit status: 0 all good, 1 a check failed, 2 usage, 3 the session
 * could not be opened or was lost, or NVML could not be loaded or
 * initialised.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvml.h>

#include "common/ring_wait.h"
#include "dom0-daemon/gpumem.h"
#include "xcuda/local.h"
#include "guest-lib/guest.h"
#include "xcuda/hash.h"

#define XCTL_HOLD_BYTES	4096

static void xctl_usage(FILE *f)
{
	fprintf(f,
"usage: xcudactl ping [COUNT] | echo SIZE... | hold SECONDS | info | smi\n"
"       xcudactl status [FILE]\n"
"Checks the path to xcudad with the protocol's ECHO diagnostic (no GPU\n"
"needed).  SIZE takes a K, M or G suffix.  smi: the GPUs as\n"
"libnvidia-ml.so.1 reports them.  status: GPU memory used and allowed per\n"
"domain, from xcudad's table (FILE; default: the socket's path + \".gpumem\").\n"
"Exit: 0 ok, 1 a check failed, 2 usage,\n"
"3 no session or session lost, or no NVML.\n");
}

static int xctl_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	errno = 0;
	if (!*s || *s == '-')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	else if (*end)
		return -1;
	if (shift && end[1])
		return -1;
	if (v > (UINT32_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static struct xc_session *xctl_session(void)
{
	struct xc_session *s;
	cudaError_t err;

	s = xc_session_get(&err);
	if (!s)
		fprintf(stderr, "xcudactl: no session: %s\n",
			xc_error_name(err));
	return s;
}

/*
 * One ECHO of @len bytes at arena offset @off: the worker sums what we
 * wrote and overwrites it with @pattern.  0, or the error (1: a mismatch).
 */
static int xctl_echo_one(struct xc_session *s, uint64_t off, uint32_t len,
			 uint32_t seed, uint8_t pattern, cudaError_t *cerr)
{
	struct xcuda_echo_args a = { seed, 1, pattern, 0 };
	struct xcuda_echo_res r;
	struct xcuda_request req;
	uint8_t *p = xc_arena_ptr(s, off);
	uint64_t want;
	uint32_t i, x = seed * 2654435761u + 1;

	for (i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
	want = xcuda_fnv1a64(seed, p, len);
	xc_req_echo(&req, &a);
	req.hdr.data_off = (uint32_t)off;
	req.hdr.data_len = len;
	*cerr = xc_call(s, &req, &r, sizeof(r));
	if (*cerr)
		return -1;
	if (r.checksum != want || r.bytes != len)
		return 1;
	for (i = 0; i < len; i++)
		if (p[i] != pattern)
			return 1;
	return 0;
}

/* An arena block for @len bytes, from the heap (large) or staging. */
static uint64_t xctl_block(struct xc_session *s, uint64_t len, int *heap)
{
	uint64_t off, got;

	*heap = 1;
	off = xc_arena_alloc(s->heap, len ? len : 1, XCUDA_PAGE_SIZE);
	if (off != UINT64_MAX)
		return off;
	*heap = 0;
	pthread_mutex_lock(&s->lock);
	off = xc_staging_get(s, len ? len : 1, len ? len : 1, &got);
	pthread_mutex_unlock(&s->lock);
	return off;
}

static void xctl_unblock(struct xc_session *s, uint64_t off, int heap)
{
	xc_arena_release(heap ? s->heap : s->staging, off);
}

static int xctl_echo(int n, char **sizes)
{
	struct xc_session *s;
	uint64_t len, off;
	cudaError_t err;
	int i, heap, bad = 0, r;

	for (i = 0; i < n; i++)
		if (xctl_size(sizes[i], &len)) {
			fprintf(stderr, "xcudactl: bad size '%s'\n", sizes[i]);
			return 2;
		}
	s = xctl_session();
	if (!s)
		return 3;
	for (i = 0; i < n; i++) {
		xctl_size(sizes[i], &len);
		off = xctl_block(s, len, &heap);
		if (off == UINT64_MAX) {
			printf("echo %s FAILED: larger than the arena (%llu "
			       "bytes)\n", sizes[i],
			       (unsigned long long)s->t.arena_size);
			bad = 1;
			continue;
		}
		r = xctl_echo_one(s, off, (uint32_t)len, (uint32_t)(i + 1),
				  (uint8_t)(0xa5 ^ i), &err);
		xctl_unblock(s, off, heap);
		if (r < 0) {
			printf("echo %s FAILED: %s\n", sizes[i],
			       xc_error_name(err));
			return 3;
		}
		printf("echo %s %s\n", sizes[i], r ? "FAILED: corrupted" : "ok");
		bad |= r;
	}
	return bad;
}

static int xctl_hold(const char *arg)
{
	struct timespec now, end;
	struct xc_session *s;
	unsigned long long secs;
	unsigned int rounds = 0;
	cudaError_t err;
	uint64_t off;
	char *e;
	int heap, r = 0;

	errno = 0;
	secs = strtoull(arg, &e, 10);
	if (errno || *e || !*arg || secs > 86400) {
		fprintf(stderr, "xcudactl: bad duration '%s'\n", arg);
		return 2;
	}
	s = xctl_session();
	if (!s)
		return 3;
	off = xctl_block(s, XCTL_HOLD_BYTES, &heap);
	if (off == UINT64_MAX)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)secs;
	do {
		r = xctl_echo_one(s, off, XCTL_HOLD_BYTES, rounds, 0x3c, &err);
		if (r < 0) {
			printf("hold: session lost: %s\n", xc_error_name(err));
			fflush(stdout);
			return 3;
		}
		if (r) {
			printf("hold: round %u corrupted\n", rounds);
			return 1;
		}
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec ||
		 (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	xctl_unblock(s, off, heap);
	printf("hold: %u rounds ok\n", rounds);
	return 0;
}

static int xctl_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double xctl_cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* What our end of the ring has done so far (zeros if nothing counts). */
static struct xr_stats xctl_stats(struct xc_session *s)
{
	struct xr_stats st = { 0 };

	pthread_mutex_lock(&s->lock);
	if (s->t.stats)
		st = *s->t.stats;
	pthread_mutex_unlock(&s->lock);
	return st;
}

/*
 * The ring's side of @trips round trips, from this process's counters
 * between @a and @b: requests pushed, bells rung (a write() each), sleeps
 * (a poll() each), and the records this side copied per round trip (each
 * request once into the ring, each response once out of it: 1 and 1
 * unless something else shared the session).  The worker keeps counters
 * of its own, which the guest cannot see: the line says so.
 */
static void xctl_ping_stats(const struct xc_session *s, unsigned int trips,
			    const struct xr_stats *a, const struct xr_stats *b)
{
	uint64_t n = b->pushed - a->pushed;

	if (!s->t.stats || !trips)
		return;
	printf("ping stats (this process's side only): %llu requests, %llu "
	       "bells rung, %llu sleeps, copies per request: %.3g in, "
	       "%.3g out\n", (unsigned long long)n,
	       (unsigned long long)(b->bells - a->bells),
	       (unsigned long long)(b->sleeps - a->sleeps),
	       (double)n / trips, (double)(b->taken - a->taken) / trips);
}

/*
 * @count round trips of 64 bytes each way; with more than one, the
 * median and 99th percentile, and the CPU this process spent per trip
 * (what spinning for answers costs this side).  Then what the ring did
 * on our side: requests, bells, sleeps, copies.
 */
static int xctl_ping(unsigned int count)
{
	struct timespec t0, t1;
	struct xr_stats st0, st1;
	struct xc_session *s;
	double *us, cpu0, cpu1;
	cudaError_t err;
	uint64_t off;
	unsigned int i;
	int heap, r = 0;

	s = xctl_session();
	if (!s)
		return 3;
	us = calloc(count, sizeof(*us));
	off = xctl_block(s, 64, &heap);
	if (!us || off == UINT64_MAX) {
		free(us);
		return 1;
	}
	st0 = xctl_stats(s);
	cpu0 = xctl_cpu_s();
	for (i = 0; i < count && !r; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		r = xctl_echo_one(s, off, 64, i + 7, 0x5a, &err);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		us[i] = (double)(t1.tv_sec - t0.tv_sec) * 1e6 +
			(double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
	}
	cpu1 = xctl_cpu_s();
	st1 = xctl_stats(s);
	xctl_unblock(s, off, heap);
	if (r < 0) {
		printf("ping FAILED: %s\n", xc_error_name(err));
		free(us);
		return 3;
	}
	if (r) {
		printf("ping FAILED: corrupted\n");
		free(us);
		return 1;
	}
	if (count == 1) {
		printf("ping ok: %s transport, %.0f us\n", s->t.ops->name,
		       us[0]);
	} else {
		qsort(us, count, sizeof(*us), xctl_cmp_double);
		printf("ping ok: %s transport, %u round trips: median %.2f us,"
		       " p99 %.2f us, this process's CPU %.2f us each\n",
		       s->t.ops->name, count, us[count / 2],
		       us[(size_t)count * 99 / 100], (cpu1 - cpu0) * 1e6 / count);
	}
	xctl_ping_stats(s, count, &st0, &st1);
	free(us);
	return 0;
}

static int xctl_info(void)
{
	struct xc_session *s = xctl_session();

	if (!s)
		return 3;
	printf("transport %s\nsession %08x\narena %llu bytes\nslots %u\n"
	       "version %u\nfeatures %#x\ndevices %d\ncuda init status %d "
	       "(%s)\ndriver %d\nruntime %d\n",
	       s->t.ops->name, s->t.session,
	       (unsigned long long)s->t.arena_size, s->t.ring_slots,
	       s->info.version, s->info.features, s->info.device_count,
	       s->info.init_status, xc_error_name(s->info.init_status),
	       s->info.driver_version, s->info.runtime_version);
	return 0;
}

/*
 * NVML's entry points, each looked up by itself so that one this NVML
 * lacks leaves only its field N/A.  The types are spelt out rather than
 * taken with __typeof__ from nvml.h, which marks some deprecated (CUDA
 * 13.1's nvmlDeviceGetTemperature): -Werror would fail on the use.
 */
struct xctl_nvml {
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error_string)(nvmlReturn_t);
	nvmlReturn_t (*driver_version)(char *, unsigned int);
	nvmlReturn_t (*cuda_version)(int *);
	nvmlReturn_t (*nvml_version)(char *, unsigned int);
	nvmlReturn_t (*count)(unsigned int *);
	nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*persistence)(nvmlDevice_t, nvmlEnableState_t *);
	nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *);
	nvmlReturn_t (*display)(nvmlDevice_t, nvmlEnableState_t *);
	nvmlReturn_t (*ecc)(nvmlDevice_t, nvmlMemoryErrorType_t,
			    nvmlEccCounterType_t, unsigned long long *);
	nvmlReturn_t (*fan)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*temp)(nvmlDevice_t, nvmlTemperatureSensors_t,
			     unsigned int *);
	nvmlReturn_t (*pstate)(nvmlDevice_t, nvmlPstates_t *);
	nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*memory_v2)(nvmlDevice_t, nvmlMemory_v2_t *);
	nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t *);
	nvmlReturn_t (*compute_mode)(nvmlDevice_t, nvmlComputeMode_t *);
	nvmlReturn_t (*mig)(nvmlDevice_t, unsigned int *, unsigned int *);
	nvmlReturn_t (*procs)(nvmlDevice_t, unsigned int *,
			      nvmlProcessInfo_t *);
};

#define XCTL_SYM(h, fp, name)	((fp) = (__typeof__(fp))dlsym((h), (name)))

/* A missing entry point answers as NVML does for one it does not have. */
#define XCTL_NV(fp, ...)						\
	((fp) ? (fp)(__VA_ARGS__) : NVML_ERROR_FUNCTION_NOT_FOUND)

/* The versioned names: the unversioned ones are older ABIs. */
static void xctl_nvml_load(void *h, struct xctl_nvml *nv)
{
	XCTL_SYM(h, nv->init, "nvmlInit_v2");
	XCTL_SYM(h, nv->shutdown, "nvmlShutdown");
	XCTL_SYM(h, nv->error_string, "nvmlErrorString");
	XCTL_SYM(h, nv->driver_version, "nvmlSystemGetDriverVersion");
	XCTL_SYM(h, nv->cuda_version, "nvmlSystemGetCudaDriverVersion_v2");
	XCTL_SYM(h, nv->nvml_version, "nvmlSystemGetNVMLVersion");
	XCTL_SYM(h, nv->count, "nvmlDeviceGetCount_v2");
	XCTL_SYM(h, nv->handle, "nvmlDeviceGetHandleByIndex_v2");
	XCTL_SYM(h, nv->name, "nvmlDeviceGetName");
	XCTL_SYM(h, nv->persistence, "nvmlDeviceGetPersistenceMode");
	XCTL_SYM(h, nv->pci, "nvmlDeviceGetPciInfo_v3");
	XCTL_SYM(h, nv->display, "nvmlDeviceGetDisplayActive");
	XCTL_SYM(h, nv->ecc, "nvmlDeviceGetTotalEccErrors");
	XCTL_SYM(h, nv->fan, "nvmlDeviceGetFanSpeed");
	XCTL_SYM(h, nv->temp, "nvmlDeviceGetTemperature");
	XCTL_SYM(h, nv->pstate, "nvmlDeviceGetPerformanceState");
	XCTL_SYM(h, nv->power, "nvmlDeviceGetPowerUsage");
	XCTL_SYM(h, nv->power_limit, "nvmlDeviceGetEnforcedPowerLimit");
	XCTL_SYM(h, nv->memory, "nvmlDeviceGetMemoryInfo");
	XCTL_SYM(h, nv->memory_v2, "nvmlDeviceGetMemoryInfo_v2");
	XCTL_SYM(h, nv->util, "nvmlDeviceGetUtilizationRates");
	XCTL_SYM(h, nv->compute_mode, "nvmlDeviceGetComputeMode");
	XCTL_SYM(h, nv->mig, "nvmlDeviceGetMigMode");
	XCTL_SYM(h, nv->procs, "nvmlDeviceGetComputeRunningProcesses_v3");
}

static const char *xctl_nvml_error(const struct xctl_nvml *nv, nvmlReturn_t r)
{
	static char buf[32];

	if (nv->error_string)
		return nv->error_string(r);
	snprintf(buf, sizeof(buf), "error %d", (int)r);
	return buf;
}

/* @fmt's text in @buf when @r is success, else N/A. */
static __attribute__((format(printf, 4, 5)))
const char *xctl_field(char *buf, size_t len, nvmlReturn_t r,
		       const char *fmt, ...)
{
	va_list ap;

	if (r != NVML_SUCCESS) {
		snprintf(buf, len, "N/A");
		return buf;
	}
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return buf;
}

static const char *xctl_on_off(nvmlReturn_t r, nvmlEnableState_t e)
{
	if (r != NVML_SUCCESS)
		return "N/A";
	return e == NVML_FEATURE_ENABLED ? "On" : "Off";
}

static const char *xctl_compute_mode(nvmlReturn_t r, nvmlComputeMode_t m)
{
	if (r != NVML_SUCCESS)
		return "N/A";
	switch (m) {
	case NVML_COMPUTEMODE_DEFAULT:
		return "Default";
	case NVML_COMPUTEMODE_EXCLUSIVE_THREAD:
		return "Exclusive_Thread";
	case NVML_COMPUTEMODE_PROHIBITED:
		return "Prohibited";
	case NVML_COMPUTEMODE_EXCLUSIVE_PROCESS:
		return "Exclusive_Process";
	default:
		return "N/A";
	}
}

/*
 * Two lines a GPU: what it is and how it is set up, then what it is
 * doing.  The first is the same whoever asks, the host or a guest.
 */
#define XCTL_SMI_ROW1	"%3s  %-30s  %-7s  %-16s  %-6s  %s\n"
#define XCTL_SMI_ROW2	"     %4s  %4s  %4s  %13s  %21s  %4s  %10s  %s\n"
#define XCTL_SMI_RULE	"-----------------------------------------------" \
			"------------------------------------------\n"

static void xctl_smi_gpu(const struct xctl_nvml *nv, unsigned int i)
{
	char idx[16], name[NVML_DEVICE_NAME_V2_BUFFER_SIZE], bus[40];
	char fan[16], temp[16], perf[16], pw[16], cap[16], power[40];
	char used[32], total[32], mem[72], util[16], ecc[32];
	unsigned long long errs = 0;
	unsigned int v = 0, cur = 0, pending = 0;
	nvmlEnableState_t persist = NVML_FEATURE_DISABLED, disp = persist;
	nvmlComputeMode_t mode = NVML_COMPUTEMODE_DEFAULT;
	nvmlPstates_t ps = NVML_PSTATE_UNKNOWN;
	nvmlUtilization_t u = { 0, 0 };
	nvmlMemory_v2_t m2 = { .version = nvmlMemory_v2 };
	nvmlMemory_t m = { 0, 0, 0 };
	nvmlPciInfo_t pci;
	nvmlDevice_t d;
	nvmlReturn_t r, rp, rd, rc, rm;

	snprintf(idx, sizeof(idx), "%u", i);
	r = XCTL_NV(nv->handle, i, &d);
	if (r != NVML_SUCCESS) {
		printf(XCTL_SMI_ROW1, idx, "N/A", "N/A", "N/A", "N/A", "N/A");
		printf("     %s\n", xctl_nvml_error(nv, r));
		return;
	}
	r = XCTL_NV(nv->name, d, name, sizeof(name));
	if (r != NVML_SUCCESS)
		snprintf(name, sizeof(name), "N/A");
	memset(&pci, 0, sizeof(pci));
	r = XCTL_NV(nv->pci, d, &pci);
	pci.busId[sizeof(pci.busId) - 1] = '\0';
	xctl_field(bus, sizeof(bus), r, "%s", pci.busId);
	rp = XCTL_NV(nv->persistence, d, &persist);
	rd = XCTL_NV(nv->display, d, &disp);
	rc = XCTL_NV(nv->compute_mode, d, &mode);
	printf(XCTL_SMI_ROW1, idx, name, xctl_on_off(rp, persist), bus,
	       xctl_on_off(rd, disp), xctl_compute_mode(rc, mode));

	r = XCTL_NV(nv->fan, d, &v);
	xctl_field(fan, sizeof(fan), r, "%u%%", v);
	r = XCTL_NV(nv->temp, d, NVML_TEMPERATURE_GPU, &v);
	xctl_field(temp, sizeof(temp), r, "%uC", v);
	r = XCTL_NV(nv->pstate, d, &ps);
	if (r == NVML_SUCCESS && (unsigned int)ps > NVML_PSTATE_15)
		r = NVML_ERROR_UNKNOWN;		/* NVML_PSTATE_UNKNOWN */
	xctl_field(perf, sizeof(perf), r, "P%u", (unsigned int)ps);
	/* Both in milliwatts. */
	r = XCTL_NV(nv->power, d, &v);
	xctl_field(pw, sizeof(pw), r, "%uW", v / 1000);
	r = XCTL_NV(nv->power_limit, d, &v);
	xctl_field(cap, sizeof(cap), r, "%uW", v / 1000);
	snprintf(power, sizeof(power), "%5s / %5s", pw, cap);
	/*
	 * v2's used leaves out what the driver reserves, as nvidia-smi
	 * shows it; v1's counts it (older drivers have only v1).
	 */
	rm = XCTL_NV(nv->memory_v2, d, &m2);
	if (rm == NVML_SUCCESS) {
		m.total = m2.total;
		m.used = m2.used;
	} else {
		rm = XCTL_NV(nv->memory, d, &m);
	}
	xctl_field(used, sizeof(used), rm, "%lluMiB", m.used >> 20);
	xctl_field(total, sizeof(total), rm, "%lluMiB", m.total >> 20);
	snprintf(mem, sizeof(mem), "%9s / %9s", used, total);
	r = XCTL_NV(nv->util, d, &u);
	xctl_field(util, sizeof(util), r, "%u%%", u.gpu);
	r = XCTL_NV(nv->ecc, d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
		    NVML_VOLATILE_ECC, &errs);
	xctl_field(ecc, sizeof(ecc), r, "%llu", errs);
	r = XCTL_NV(nv->mig, d, &cur, &pending);
	printf(XCTL_SMI_ROW2, fan, temp, perf, power, mem, util, ecc,
	       r != NVML_SUCCESS ? "N/A" :
	       cur == NVML_DEVICE_MIG_ENABLE ? "Enabled" : "Disabled");
}

/*
 * GPU @i's compute processes, as "GPU PID MEMORY" lines; how many lines.
 * The list may grow between the calls: a few tries, with room to spare.
 */
static unsigned int xctl_smi_procs(const struct xctl_nvml *nv,
				   unsigned int i)
{
	nvmlProcessInfo_t *p = NULL;
	unsigned int cap = 16, n = 0, k, tries;
	nvmlDevice_t d;
	nvmlReturn_t r;
	char mem[32];

	r = XCTL_NV(nv->handle, i, &d);
	if (r == NVML_SUCCESS)
		r = NVML_ERROR_INSUFFICIENT_SIZE;	/* no list yet */
	for (tries = 0; r == NVML_ERROR_INSUFFICIENT_SIZE && tries < 4;
	     tries++) {
		free(p);
		p = calloc(cap, sizeof(*p));
		if (!p) {
			r = NVML_ERROR_MEMORY;
			break;
		}
		n = cap;
		r = XCTL_NV(nv->procs, d, &n, p);
		if (r == NVML_ERROR_INSUFFICIENT_SIZE)
			cap = n + 16;
	}
	if (r != NVML_SUCCESS) {
		printf("%3u  %8s  %12s\n", i, "N/A", "N/A");
		free(p);
		return 1;
	}
	for (k = 0; k < n && k < cap; k++) {
		/* NVML_VALUE_NOT_AVAILABLE where the driver cannot tell. */
		xctl_field(mem, sizeof(mem),
			   p[k].usedGpuMemory ==
			   (unsigned long long)NVML_VALUE_NOT_AVAILABLE ?
			   NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS,
			   "%lluMiB", p[k].usedGpuMemory >> 20);
		printf("%3u  %8u  %12s\n", i, p[k].pid, mem);
	}
	free(p);
	return n < cap ? n : cap;
}

/*
 * nvidia-smi's summary, our layout: the host's NVML natively, xcuda's
 * (forwarded to the host's) in a guest.  Any field whose call fails,
 * NVML_ERROR_NOT_SUPPORTED included, is N/A.
 */
static int xctl_smi(void)
{
	char drv[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	char ver[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE], cuda[32];
	struct xctl_nvml nv;
	unsigned int n = 0, i, procs = 0;
	nvmlReturn_t r;
	int cv = 0;
	void *h;

	h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "xcudactl: no libnvidia-ml.so.1: %s\n",
			dlerror());
		return 3;
	}
	xctl_nvml_load(h, &nv);
	r = XCTL_NV(nv.init);
	if (r != NVML_SUCCESS) {
		fprintf(stderr, "xcudactl: NVML: %s\n",
			xctl_nvml_error(&nv, r));
		return 3;
	}
	r = XCTL_NV(nv.count, &n);
	if (r != NVML_SUCCESS) {
		fprintf(stderr, "xcudactl: NVML: %s\n",
			xctl_nvml_error(&nv, r));
		(void)XCTL_NV(nv.shutdown);
		return 3;
	}
	r = XCTL_NV(nv.driver_version, drv, sizeof(drv));
	if (r != NVML_SUCCESS)
		snprintf(drv, sizeof(drv), "N/A");
	r = XCTL_NV(nv.nvml_version, ver, sizeof(ver));
	if (r != NVML_SUCCESS)
		snprintf(ver, sizeof(ver), "N/A");
	r = XCTL_NV(nv.cuda_version, &cv);
	xctl_field(cuda, sizeof(cuda), r, "%d.%d",
		   NVML_CUDA_DRIVER_VERSION_MAJOR(cv),
		   NVML_CUDA_DRIVER_VERSION_MINOR(cv));
	printf("Driver version: %s   CUDA version: %s   NVML version: %s\n",
	       drv, cuda, ver);
	fputs(XCTL_SMI_RULE, stdout);
	printf(XCTL_SMI_ROW1, "GPU", "Name", "Persist", "Bus-Id", "Disp.A",
	       "Compute mode");
	printf(XCTL_SMI_ROW2, "Fan", "Temp", "Perf", "Power / Cap",
	       "Memory used / total", "Util", "Uncorr.ECC", "MIG");
	fputs(XCTL_SMI_RULE, stdout);
	if (!n)
		printf("No devices found\n");
	for (i = 0; i < n; i++) {
		xctl_smi_gpu(&nv, i);
		fputs(XCTL_SMI_RULE, stdout);
	}
	printf("\nProcesses:\n%3s  %8s  %12s\n", "GPU", "PID", "Used memory");
	for (i = 0; i < n; i++)
		procs += xctl_smi_procs(&nv, i);
	if (!procs)
		printf("No running processes found\n");
	/* Not dlclose'd: we exit now, and xcuda's may hold a session. */
	(void)XCTL_NV(nv.shutdown);
	return 0;
}

/*
 * Enough arena for the largest SIZE (the heap is what is left after the
 * staging area): unless the user chose, ask for it.
 */
static void xctl_arena_for(int n, char **sizes)
{
	uint64_t len, max = 0;
	char buf[32];
	int i;

	if (getenv("XCUDA_ARENA_MB"))
		return;
	for (i = 0; i < n; i++)
		if (!xctl_size(sizes[i], &len) && len > max)
			max = len;
	snprintf(buf, sizeof(buf), "%llu",
		 (unsigned long long)((max >> 20) + 2));
	setenv("XCUDA_ARENA_MB", buf, 1);
	setenv("XCUDA_STAGING_MB", "1", 0);
}

/* The daemon's GPU memory table, read without a session. */
static int xctl_status(const char *file)
{
	const char *sock = getenv(XCUDA_LOCAL_SOCKET_ENV);
	char path[4096];
	int err;

	if (!file) {
		if (!sock || !*sock)
			sock = XCUDA_LOCAL_SOCKET_DEFAULT;
		snprintf(path, sizeof(path), "%s" XD_GPUMEM_FILE_SUFFIX, sock);
		file = path;
	}
	err = xd_gpumem_print(file, stdout);
	if (err) {
		fprintf(stderr, "xcudactl: %s: %s\n", file,
			err == -EPROTO ? "not an xcudad GPU memory table" :
			strerror(-err));
		return 3;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		xctl_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		xctl_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "ping") && argc <= 3) {
		unsigned long n = 1;
		char *e = NULL;

		if (argc == 3) {
			errno = 0;
			n = strtoul(argv[2], &e, 10);
			if (errno || *e || !n || n > 10000000) {
				xctl_usage(stderr);
				return 2;
			}
		}
		return xctl_ping((unsigned int)n);
	}
	if (!strcmp(argv[1], "echo") && argc > 2) {
		xctl_arena_for(argc - 2, argv + 2);
		return xctl_echo(argc - 2, argv + 2);
	}
	if (!strcmp(argv[1], "hold") && argc == 3)
		return xctl_hold(argv[2]);
	if (!strcmp(argv[1], "info") && argc == 2)
		return xctl_info();
	if (!strcmp(argv[1], "status") && argc <= 3)
		return xctl_status(argc == 3 ? argv[2] : NULL);
	if (!strcmp(argv[1], "smi") && argc == 2)
		return xctl_smi();
	xctl_usage(stderr);
	return 2;
}
