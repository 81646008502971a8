/* SPDX-License-Identifier: MIT */
/*
 * Stream queries and stream attributes: cudaDeviceGetStreamPriorityRange
 * (also with NULL arguments), cudaStreamGetPriority, cudaStreamGetFlags and
 * cudaStreamGetId on created streams (flags, priorities, clamped
 * priorities) and on the default streams (0, cudaStreamLegacy,
 * cudaStreamPerThread, also from a second host thread);
 * cudaStreamSetAttribute/cudaStreamGetAttribute with
 * cudaLaunchAttributePriority, cudaLaunchAttributeSynchronizationPolicy and
 * cudaLaunchAttributeAccessPolicyWindow; cudaEventRecordWithFlags; and the
 * errors CUDA reports synchronously: NULL outputs, attribute ids that are
 * not valid for streams, invalid attribute values and record flags.
 *
 * Stream ids are never printed, only compared; the access policy window's
 * base pointer is printed as an offset into the buffer it was set on.
 * Results CUDA may legitimately choose (error names of edge cases, clamped
 * values) are printed rather than asserted: the native run is the
 * reference.
 *
 * No destroyed or invalid stream handle is passed anywhere: CUDA 13
 * (driver 580, H100) crashes on a destroyed stream or event in
 * cudaStreamQuery, cudaStreamGetPriority, cudaStreamGetId, cudaEventQuery
 * and the like, and a NULL value pointer with a valid attribute id crashes
 * cudaStreamGetAttribute/cudaStreamSetAttribute.
 *
 * Built without --default-stream: stream 0 is the legacy default stream.
 * stream_queries_ptsz.cu is the per-thread counterpart.
 */
#include <thread>
#include "common/streams.h"

/* Short names, so that each SHOW() fits on one line of source and output. */
static const cudaStreamAttrID kPrio = cudaLaunchAttributePriority,
			      kSync = cudaLaunchAttributeSynchronizationPolicy,
			      kWindow = cudaLaunchAttributeAccessPolicyWindow;

static int check_fill(const int *d, int n, int v)
{
	int *h = (int *)malloc(n * sizeof(int));
	REQUIRE(h, "host malloc");
	CK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += h[i] != v + i;
	free(h);
	return bad;
}

/* Flags and priority of a stream that must answer both. */
static void describe(const char *name, cudaStream_t s)
{
	unsigned flags = 0xdead;
	int prio = 0xdead;
	CK(cudaStreamGetFlags(s, &flags));
	CK(cudaStreamGetPriority(s, &prio));
	printf("%s: flags 0x%x priority %d\n", name, flags, prio);
}

/* The default streams may refuse some queries: print whatever CUDA says. */
static void describe_default(const char *name, cudaStream_t s)
{
	unsigned flags = 0xdead;
	int prio = 0xdead;
	unsigned long long id = 0;
	printf("%s:\n", name);
	if (SHOW(cudaStreamGetFlags(s, &flags)) == cudaSuccess)
		printf("  flags 0x%x\n", flags);
	if (SHOW(cudaStreamGetPriority(s, &prio)) == cudaSuccess)
		printf("  priority %d\n", prio);
	SHOW(cudaStreamGetId(s, &id));
}

static void priorities(int *least_out, int *greatest_out)
{
	int least = 0x7777, greatest = 0x7777;
	CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
	printf("stream priority range: least %d greatest %d\n", least,
	       greatest);
	REQUIRE(greatest <= least, "greatest %d least %d", greatest, least);
	int one = 0x7777;
	SHOW(cudaDeviceGetStreamPriorityRange(&one, NULL));
	printf("  least alone matches: %s\n", xct_yes(one == least));
	one = 0x7777;
	SHOW(cudaDeviceGetStreamPriorityRange(NULL, &one));
	printf("  greatest alone matches: %s\n", xct_yes(one == greatest));
	SHOW(cudaDeviceGetStreamPriorityRange(NULL, NULL));
	*least_out = least;
	*greatest_out = greatest;
}

static void stream_ids(cudaStream_t *made, int nmade)
{
	unsigned long long ids[16];
	REQUIRE(nmade <= 16, "too many streams");
	for (int i = 0; i < nmade; i++)
		ids[i] = stream_id(made[i]);
	bool distinct = true, stable = true;
	for (int i = 0; i < nmade; i++) {
		for (int j = i + 1; j < nmade; j++)
			distinct = distinct && ids[i] != ids[j];
		stable = stable && stream_id(made[i]) == ids[i];
	}
	printf("ids of %d created streams distinct: %s, stable: %s\n", nmade,
	       xct_yes(distinct), xct_yes(stable));

	unsigned long long zero = stream_id(0);
	unsigned long long legacy = stream_id(cudaStreamLegacy);
	unsigned long long pt = stream_id(cudaStreamPerThread);
	printf("id(0) == id(cudaStreamLegacy): %s\n", xct_yes(zero == legacy));
	printf("id(0) == id(cudaStreamPerThread): %s\n", xct_yes(zero == pt));
	printf("id(0) stable: %s\n", xct_yes(stream_id(0) == zero));
	bool apart = true;
	for (int i = 0; i < nmade; i++)
		apart = apart && ids[i] != legacy && ids[i] != pt;
	printf("created ids differ from the default streams': %s\n",
	       xct_yes(apart));

	/* "The Id is unique for the life of the program." */
	cudaStream_t t;
	CK(cudaStreamCreate(&t));
	unsigned long long first = stream_id(t);
	CK(cudaStreamDestroy(t));
	CK(cudaStreamCreate(&t));
	unsigned long long second = stream_id(t);
	CK(cudaStreamDestroy(t));
	bool fresh = first != second && first != legacy && first != pt &&
		     second != legacy && second != pt;
	for (int i = 0; i < nmade; i++)
		fresh = fresh && ids[i] != first && ids[i] != second;
	printf("a stream created after a destroy gets a new id: %s\n",
	       xct_yes(fresh));

	/* A second host thread: same legacy stream, its own per-thread one. */
	ThreadIds ti = {cudaSuccess, 0, 0, 0};
	std::thread th(thread_ids, &ti);
	th.join();
	printf("second thread: %s\n", cudaGetErrorName(ti.err));
	if (ti.err == cudaSuccess) {
		printf("  its id(cudaStreamLegacy) == ours: %s\n",
		       xct_yes(ti.legacy == legacy));
		printf("  its id(cudaStreamPerThread) == ours: %s\n",
		       xct_yes(ti.per_thread == pt));
		printf("  its id(0) == id(cudaStreamLegacy): %s\n",
		       xct_yes(ti.zero == legacy));
	}
}

static void sync_policy(cudaStream_t s)
{
	cudaStreamAttrValue v;
	memset(&v, 0, sizeof(v));
	CK(cudaStreamGetAttribute(s, kSync, &v));
	printf("sync policy of a new stream: %d\n", (int)v.syncPolicy);
	static const cudaSynchronizationPolicy pols[] = {
		cudaSyncPolicySpin, cudaSyncPolicyYield,
		cudaSyncPolicyBlockingSync, cudaSyncPolicyAuto};
	for (cudaSynchronizationPolicy p : pols) {
		memset(&v, 0, sizeof(v));
		v.syncPolicy = p;
		CK(cudaStreamSetAttribute(s, kSync, &v));
		memset(&v, 0, sizeof(v));
		CK(cudaStreamGetAttribute(s, kSync, &v));
		printf("sync policy set %d, read back %d\n", (int)p,
		       (int)v.syncPolicy);
	}
	/* values outside the enum */
	static const int badpols[] = {0, 5};
	for (int bp : badpols) {
		memset(&v, 0, sizeof(v));
		v.syncPolicy = (cudaSynchronizationPolicy)bp;
		printf("sync policy %d:\n", bp);
		SHOW(cudaStreamSetAttribute(s, kSync, &v));
		memset(&v, 0, sizeof(v));
		CK(cudaStreamGetAttribute(s, kSync, &v));
		printf("  read back %d\n", (int)v.syncPolicy);
	}
}

static void priority_attr(cudaStream_t s, int least, int greatest)
{
	cudaStreamAttrValue v;
	memset(&v, 0, sizeof(v));
	v.priority = 0x7777;
	CK(cudaStreamGetAttribute(s, kPrio, &v));
	printf("priority attribute of a new stream: %d\n", v.priority);
	const struct {
		const char *name;
		int prio;
	} want[] = {
		{"greatest", greatest},
		{"least", least},
		{"greatest - 100", greatest - 100},
		{"least + 100", least + 100},
	};
	for (auto &w : want) {
		memset(&v, 0, sizeof(v));
		v.priority = w.prio;
		printf("priority attribute %s:\n", w.name);
		SHOW(cudaStreamSetAttribute(s, kPrio, &v));
		memset(&v, 0, sizeof(v));
		v.priority = 0x7777;
		CK(cudaStreamGetAttribute(s, kPrio, &v));
		int p = 0x7777;
		CK(cudaStreamGetPriority(s, &p));
		printf("  read back %d, cudaStreamGetPriority %d\n", v.priority,
		       p);
	}
}

/* base_ptr is printed as NULL or as an offset into buf, never itself. */
static void show_window(const char *what, const cudaAccessPolicyWindow &w,
			const int *buf, size_t bytes)
{
	const char *b = (const char *)w.base_ptr, *lo = (const char *)buf;
	if (!b)
		printf("%s: base_ptr NULL", what);
	else if (b >= lo && b <= lo + bytes)
		printf("%s: base_ptr buf+%zu", what, (size_t)(b - lo));
	else
		printf("%s: base_ptr OUTSIDE buf", what);
	printf(" num_bytes %zu hitRatio %.4f hitProp %d missProp %d\n",
	       w.num_bytes, w.hitRatio, (int)w.hitProp, (int)w.missProp);
}

static void access_window(cudaStream_t s, int *buf, int n)
{
	int maxwin = -1, maxpersist = -1;
	CK(cudaDeviceGetAttribute(&maxwin,
				  cudaDevAttrMaxAccessPolicyWindowSize, 0));
	CK(cudaDeviceGetAttribute(&maxpersist,
				  cudaDevAttrMaxPersistingL2CacheSize, 0));
	printf("max access policy window: %d, max persisting L2: %d\n", maxwin,
	       maxpersist);

	const size_t bytes = (size_t)n * sizeof(int);
	cudaStreamAttrValue v;
	memset(&v, 0x55, sizeof(v));
	CK(cudaStreamGetAttribute(s, kWindow, &v));
	show_window("window of a new stream", v.accessPolicyWindow, buf, bytes);

	memset(&v, 0, sizeof(v));
	v.accessPolicyWindow.base_ptr = buf;
	v.accessPolicyWindow.num_bytes = bytes;
	v.accessPolicyWindow.hitRatio = 0.6f;
	v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
	v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
	CK(cudaStreamSetAttribute(s, kWindow, &v));
	memset(&v, 0x55, sizeof(v));
	CK(cudaStreamGetAttribute(s, kWindow, &v));
	show_window("window set (1 MiB, 0.6, persisting, streaming)",
		    v.accessPolicyWindow, buf, bytes);

	/* work in the stream under the window */
	fill<<<64, 256, 0, s>>>(buf, n, 11);
	CKLAUNCH();
	CK(cudaStreamSynchronize(s));
	int bad = check_fill(buf, n, 11);
	printf("kernel under the window: bad=%d\n", bad);
	REQUIRE(bad == 0, "kernel under the window");

	/* a second window over half the buffer, hit ratio 1, normal */
	memset(&v, 0, sizeof(v));
	v.accessPolicyWindow.base_ptr = buf + n / 2;
	v.accessPolicyWindow.num_bytes = bytes / 2;
	v.accessPolicyWindow.hitRatio = 1.0f;
	v.accessPolicyWindow.hitProp = cudaAccessPropertyNormal;
	v.accessPolicyWindow.missProp = cudaAccessPropertyNormal;
	CK(cudaStreamSetAttribute(s, kWindow, &v));
	memset(&v, 0x55, sizeof(v));
	CK(cudaStreamGetAttribute(s, kWindow, &v));
	show_window("window replaced (second half, 1.0, normal, normal)",
		    v.accessPolicyWindow, buf, bytes);

	/* invalid windows: each is printed, then what the stream holds */
	struct {
		const char *what;
		size_t num_bytes;
		float ratio;
		cudaAccessProperty miss;
	} bad_windows[] = {
		{"missProp persisting", bytes, 0.5f,
		 cudaAccessPropertyPersisting},
		{"hitRatio 1.5", bytes, 1.5f, cudaAccessPropertyStreaming},
		{"hitRatio -0.5", bytes, -0.5f, cudaAccessPropertyStreaming},
		{"num_bytes max + 1", (size_t)maxwin + 1, 0.5f,
		 cudaAccessPropertyStreaming},
	};
	for (auto &b : bad_windows) {
		memset(&v, 0, sizeof(v));
		v.accessPolicyWindow.base_ptr = buf;
		v.accessPolicyWindow.num_bytes = b.num_bytes;
		v.accessPolicyWindow.hitRatio = b.ratio;
		v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
		v.accessPolicyWindow.missProp = b.miss;
		printf("window with %s:\n", b.what);
		SHOW(cudaStreamSetAttribute(s, kWindow, &v));
		memset(&v, 0x55, sizeof(v));
		CK(cudaStreamGetAttribute(s, kWindow, &v));
		show_window("  now", v.accessPolicyWindow, buf, bytes);
	}

	/* num_bytes 0 turns the window off */
	memset(&v, 0, sizeof(v));
	CK(cudaStreamSetAttribute(s, kWindow, &v));
	memset(&v, 0x55, sizeof(v));
	CK(cudaStreamGetAttribute(s, kWindow, &v));
	show_window("window cleared", v.accessPolicyWindow, buf, bytes);
}

/* Attribute ids that are not stream attributes, and NULL values. */
static void bad_attrs(cudaStream_t s)
{
	static const struct {
		int id;
		const char *name;
	} ids[] = {
		{cudaLaunchAttributeIgnore, "Ignore"},
		{cudaLaunchAttributeCooperative, "Cooperative"},
		{cudaLaunchAttributeClusterDimension, "ClusterDimension"},
		{cudaLaunchAttributeProgrammaticStreamSerialization,
		 "ProgrammaticStreamSerialization"},
		{999, "999"},
		{-1, "-1"},
	};
	cudaStreamAttrValue v;
	for (auto &a : ids) {
		printf("attribute %s:\n", a.name);
		memset(&v, 0, sizeof(v));
		SHOW(cudaStreamGetAttribute(s, (cudaStreamAttrID)a.id, &v));
		memset(&v, 0, sizeof(v));
		SHOW(cudaStreamSetAttribute(s, (cudaStreamAttrID)a.id, &v));
	}
	/*
	 * NULL values: CUDA 13 checks the id first, so a bad id with NULL is
	 * cudaErrorInvalidValue; a valid id with NULL crashes natively
	 * (cudaStreamGetAttribute and cudaStreamSetAttribute alike), so it is
	 * not tried.
	 */
	SHOW(cudaStreamGetAttribute(s, (cudaStreamAttrID)999, NULL));
}

/* Stream attributes of the default streams: printed, never set. */
static void default_attrs(const char *name, cudaStream_t s)
{
	cudaStreamAttrValue v;
	printf("attributes of %s:\n", name);
	memset(&v, 0, sizeof(v));
	v.priority = 0x7777;
	if (SHOW(cudaStreamGetAttribute(s, kPrio, &v)) == cudaSuccess)
		printf("  priority %d\n", v.priority);
	memset(&v, 0, sizeof(v));
	if (SHOW(cudaStreamGetAttribute(s, kSync, &v)) == cudaSuccess)
		printf("  sync policy %d\n", (int)v.syncPolicy);
}

static void record_with_flags(cudaStream_t s, int *buf, int n)
{
	cudaEvent_t ev;
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	struct {
		const char *what;
		cudaStream_t stream;
		unsigned flags;
		int seed;
	} recs[] = {
		{"created stream, cudaEventRecordDefault", s,
		 cudaEventRecordDefault, 100},
		{"created stream, cudaEventRecordExternal", s,
		 cudaEventRecordExternal, 200},
		{"stream 0, cudaEventRecordDefault", 0, cudaEventRecordDefault,
		 300},
		{"stream 0, cudaEventRecordExternal", 0,
		 cudaEventRecordExternal, 400},
		{"cudaStreamPerThread, cudaEventRecordDefault",
		 cudaStreamPerThread, cudaEventRecordDefault, 500},
		{"created stream, flags 0x4", s, 0x4, 600},
		{"created stream, flags 0xffffffff", s, 0xffffffffu, 700},
	};
	for (auto &r : recs) {
		printf("record: %s\n", r.what);
		fill<<<64, 256, 0, r.stream>>>(buf, n, r.seed);
		CKLAUNCH();
		SHOW(cudaEventRecordWithFlags(ev, r.stream, r.flags));
		SHOW(cudaEventSynchronize(ev));
		SHOW(cudaEventQuery(ev));
		CK(cudaStreamSynchronize(r.stream));
		int bad = check_fill(buf, n, r.seed);
		printf("  data after the stream: bad=%d\n", bad);
		REQUIRE(bad == 0, "data");
	}
	/* the C++ default arguments: stream 0, cudaEventRecordDefault */
	SHOW(cudaEventRecordWithFlags(ev));
	SHOW(cudaEventSynchronize(ev));
	SHOW(cudaEventQuery(ev));
	CK(cudaEventDestroy(ev));
}

int main(void)
{
	CK(cudaSetDevice(0));
	int least, greatest;
	priorities(&least, &greatest);

	cudaStream_t plain, nb, hi, lo_nb, clamp_hi, clamp_lo, mid;
	CK(cudaStreamCreate(&plain));
	CK(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithPriority(&hi, cudaStreamDefault, greatest));
	CK(cudaStreamCreateWithPriority(&lo_nb, cudaStreamNonBlocking, least));
	CK(cudaStreamCreateWithPriority(&clamp_hi, cudaStreamDefault,
					greatest - 100));
	CK(cudaStreamCreateWithPriority(&clamp_lo, cudaStreamNonBlocking,
					least + 100));
	CK(cudaStreamCreateWithPriority(&mid, cudaStreamDefault,
					(least + greatest) / 2));
	describe("cudaStreamCreate", plain);
	describe("cudaStreamCreateWithFlags(NonBlocking)", nb);
	describe("priority greatest", hi);
	describe("priority least, NonBlocking", lo_nb);
	describe("priority greatest - 100 (clamped)", clamp_hi);
	describe("priority least + 100 (clamped), NonBlocking", clamp_lo);
	describe("priority (least + greatest) / 2", mid);
	describe_default("stream 0", 0);
	describe_default("cudaStreamLegacy", cudaStreamLegacy);
	describe_default("cudaStreamPerThread", cudaStreamPerThread);

	cudaStream_t made[] = {plain, nb, hi, lo_nb, clamp_hi, clamp_lo, mid};
	stream_ids(made, (int)(sizeof(made) / sizeof(made[0])));

	/* NULL outputs */
	SHOW(cudaStreamGetPriority(plain, NULL));
	SHOW(cudaStreamGetFlags(plain, NULL));
	SHOW(cudaStreamGetId(plain, NULL));
	SHOW(cudaStreamGetPriority(0, NULL));
	SHOW(cudaStreamGetFlags(0, NULL));
	SHOW(cudaStreamGetId(0, NULL));

	/* attributes on a stream of their own */
	const int n = 1 << 18; /* 1 MiB of ints */
	int *buf;
	CK(cudaMalloc(&buf, n * sizeof(int)));
	cudaStream_t as;
	CK(cudaStreamCreate(&as));
	priority_attr(as, least, greatest);
	sync_policy(as);
	access_window(as, buf, n);
	bad_attrs(as);
	/* the stream still works */
	fill<<<64, 256, 0, as>>>(buf, n, 5);
	CKLAUNCH();
	CK(cudaStreamSynchronize(as));
	int bad = check_fill(buf, n, 5);
	printf("kernel in the attribute stream: bad=%d\n", bad);
	REQUIRE(bad == 0, "attribute stream");
	default_attrs("stream 0", 0);
	default_attrs("cudaStreamLegacy", cudaStreamLegacy);
	default_attrs("cudaStreamPerThread", cudaStreamPerThread);

	record_with_flags(nb, buf, n);

	CK(cudaDeviceSynchronize());
	CK(cudaStreamDestroy(as));
	for (cudaStream_t s : made)
		CK(cudaStreamDestroy(s));
	CK(cudaFree(buf));
	EXPECT(cudaSuccess, cudaGetLastError());
	return xct_finish("stream_queries");
}
