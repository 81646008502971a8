/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the stream query programs.  Compiled into each program with
 * its own flags, so stream 0 here is the legacy stream, or the per-thread
 * one under --default-stream per-thread.
 */
#ifndef XCT_STREAMS_H
#define XCT_STREAMS_H

#include "xct.h"

__global__ void fill(int *p, int n, int v)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		p[i] = v + i;
}

static inline unsigned long long stream_id(cudaStream_t s)
{
	unsigned long long id = 0;
	CK(cudaStreamGetId(s, &id));
	return id;
}

/* Ids of the default streams as a second host thread sees them. */
struct ThreadIds {
	cudaError_t err;
	unsigned long long legacy, per_thread, zero;
};

static inline void thread_ids(ThreadIds *t)
{
	t->err = cudaStreamGetId(cudaStreamLegacy, &t->legacy);
	if (t->err == cudaSuccess)
		t->err = cudaStreamGetId(cudaStreamPerThread, &t->per_thread);
	if (t->err == cudaSuccess)
		t->err = cudaStreamGetId(0, &t->zero);
}

#endif /* XCT_STREAMS_H */
