/* SPDX-License-Identifier: MIT */
/*
 * Built with --default-stream per-thread: stream 0 is the calling thread's
 * per-thread default stream, and the stream calls are the _ptsz entry
 * points (cudaStreamGetPriority_ptsz, cudaStreamGetFlags_ptsz,
 * cudaStreamGetId_ptsz, cudaStreamGetAttribute_ptsz,
 * cudaStreamSetAttribute_ptsz, cudaEventRecordWithFlags_ptsz, ...).
 * cudaStreamGetPriority, cudaStreamGetFlags, cudaStreamGetId and the
 * stream attributes on stream 0; cudaEventRecordWithFlags on stream 0;
 * stream 0 against cudaStreamPerThread and cudaStreamLegacy, also from a
 * second host thread.  Stream ids are only compared, never printed.
 */
#include <thread>
#include "common/streams.h"

int main(void)
{
	CK(cudaSetDevice(0));
	unsigned flags = 0xdead;
	int prio = 0xdead;
	CK(cudaStreamGetFlags(0, &flags));
	CK(cudaStreamGetPriority(0, &prio));
	printf("stream 0: flags 0x%x priority %d\n", flags, prio);
	unsigned flags_pt = 0xdead;
	int prio_pt = 0xdead;
	CK(cudaStreamGetFlags(cudaStreamPerThread, &flags_pt));
	CK(cudaStreamGetPriority(cudaStreamPerThread, &prio_pt));
	printf("same as cudaStreamPerThread's: %s\n",
	       xct_yes(flags == flags_pt && prio == prio_pt));

	unsigned long long zero = stream_id(0);
	unsigned long long pt = stream_id(cudaStreamPerThread);
	unsigned long long legacy = stream_id(cudaStreamLegacy);
	printf("id(0) == id(cudaStreamPerThread): %s\n", xct_yes(zero == pt));
	printf("id(0) == id(cudaStreamLegacy): %s\n", xct_yes(zero == legacy));
	printf("id(0) stable: %s\n", xct_yes(stream_id(0) == zero));
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	unsigned long long sid = stream_id(s);
	printf("a created stream's id differs: %s\n",
	       xct_yes(sid != zero && sid != legacy));

	ThreadIds ti = {cudaSuccess, 0, 0, 0};
	std::thread th(thread_ids, &ti);
	th.join();
	printf("second thread: %s\n", cudaGetErrorName(ti.err));
	if (ti.err == cudaSuccess) {
		printf("  its id(0) == its id(cudaStreamPerThread): %s\n",
		       xct_yes(ti.zero == ti.per_thread));
		printf("  its id(0) == our id(0): %s\n", xct_yes(ti.zero == zero));
		printf("  its id(cudaStreamLegacy) == ours: %s\n",
		       xct_yes(ti.legacy == legacy));
	}

	SHOW(cudaStreamGetPriority(0, NULL));
	SHOW(cudaStreamGetFlags(0, NULL));
	SHOW(cudaStreamGetId(0, NULL));

	/*
	 * Stream attributes of stream 0, which here is this thread's own
	 * default stream: read, set, read back.
	 */
	const cudaStreamAttrID kPrio = cudaLaunchAttributePriority,
			       kSync = cudaLaunchAttributeSynchronizationPolicy;
	cudaStreamAttrValue v;
	memset(&v, 0, sizeof(v));
	v.priority = 0x7777;
	if (SHOW(cudaStreamGetAttribute(0, kPrio, &v)) == cudaSuccess)
		printf("  priority %d\n", v.priority);
	memset(&v, 0, sizeof(v));
	if (SHOW(cudaStreamGetAttribute(0, kSync, &v)) == cudaSuccess)
		printf("  sync policy %d\n", (int)v.syncPolicy);
	/* set it to what it reads (CUDA 13 reads -1, outside the enum) */
	SHOW(cudaStreamSetAttribute(0, kSync, &v));
	memset(&v, 0, sizeof(v));
	v.syncPolicy = cudaSyncPolicyYield;
	SHOW(cudaStreamSetAttribute(0, kSync, &v));
	memset(&v, 0, sizeof(v));
	if (SHOW(cudaStreamGetAttribute(0, kSync, &v)) == cudaSuccess)
		printf("  sync policy %d\n", (int)v.syncPolicy);
	int least = 0, greatest = 0;
	CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
	memset(&v, 0, sizeof(v));
	v.priority = greatest;
	SHOW(cudaStreamSetAttribute(0, kPrio, &v));
	memset(&v, 0, sizeof(v));
	v.priority = 0x7777;
	if (SHOW(cudaStreamGetAttribute(0, kPrio, &v)) == cudaSuccess)
		printf("  priority is the greatest: %s\n",
		       xct_yes(v.priority == greatest));
	prio = 0x7777;
	if (SHOW(cudaStreamGetPriority(0, &prio)) == cudaSuccess)
		printf("  cudaStreamGetPriority is the greatest: %s\n",
		       xct_yes(prio == greatest));
	prio_pt = 0x7777;
	CK(cudaStreamGetPriority(cudaStreamPerThread, &prio_pt));
	printf("  same as cudaStreamPerThread's: %s\n", xct_yes(prio == prio_pt));
	/* the legacy stream is not this thread's: only read */
	prio = 0x7777;
	CK(cudaStreamGetPriority(cudaStreamLegacy, &prio));
	printf("cudaStreamLegacy priority %d\n", prio);
	SHOW(cudaStreamGetAttribute(0, (cudaStreamAttrID)999, &v));

	/* cudaEventRecordWithFlags on stream 0 */
	const int n = 1 << 16;
	int *d, *h;
	CK(cudaMalloc(&d, n * sizeof(int)));
	CK(cudaMallocHost(&h, n * sizeof(int)));
	cudaEvent_t ev;
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	static const struct {
		unsigned flags;
		const char *name;
	} recs[] = {
		{cudaEventRecordDefault, "cudaEventRecordDefault"},
		{cudaEventRecordExternal, "cudaEventRecordExternal"},
		{0x4, "0x4"},
	};
	int seed = 10;
	for (auto &r : recs) {
		printf("record on stream 0, %s:\n", r.name);
		fill<<<32, 256>>>(d, n, seed);
		CKLAUNCH();
		SHOW(cudaEventRecordWithFlags(ev, 0, r.flags));
		SHOW(cudaEventSynchronize(ev));
		SHOW(cudaEventQuery(ev));
		SHOW(cudaStreamQuery(0));
		CK(cudaMemcpyAsync(h, d, n * sizeof(int),
				   cudaMemcpyDeviceToHost, 0));
		CK(cudaStreamSynchronize(0));
		int bad = 0;
		for (int i = 0; i < n; i++)
			bad += h[i] != seed + i;
		printf("  data: bad=%d\n", bad);
		REQUIRE(bad == 0, "data");
		seed += 10;
	}
	/* the C++ default arguments: stream 0, cudaEventRecordDefault */
	SHOW(cudaEventRecordWithFlags(ev));
	SHOW(cudaEventSynchronize(ev));
	SHOW(cudaEventQuery(ev));

	CK(cudaDeviceSynchronize());
	CK(cudaEventDestroy(ev));
	CK(cudaStreamDestroy(s));
	CK(cudaFreeHost(h));
	CK(cudaFree(d));
	EXPECT(cudaSuccess, cudaGetLastError());
	return xct_finish("stream_queries_ptsz");
}
