/* SPDX-License-Identifier: MIT */
/*
 * Managed memory (cudaMallocManaged): host writes, a kernel reads and
 * writes, the host reads after a synchronisation, at several sizes up to
 * 64 MiB; a kernel in a loop with host updates in between; a linked list
 * across allocations that kernels follow; cudaMemcpy and cudaMemset on
 * managed pointers (default and explicit kinds); cudaMemPrefetchAsync
 * both ways; cudaPointerGetAttributes; cudaMemAdvise and
 * cudaMemRangeGetAttribute; cudaStreamAttachMemAsync; free and reuse;
 * the errors CUDA reports.  Prints checksums only.
 */
#include "common/xct.h"

__global__ void add_one(unsigned char *p, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = (unsigned char)(p[i] + 1);
}

__global__ void scale(int *p, int n, int k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = p[i] * k + i;
}

struct node {
	int value;
	node *next;
};

/* Follows the list from @head, writing the sum into @out. */
__global__ void walk(const node *head, long long *out)
{
	long long s = 0;
	int hops = 0;

	for (const node *n = head; n && hops < 1000; n = n->next, hops++)
		s += n->value * (hops + 1);
	*out = s;
}

__global__ void bump_list(node *head)
{
	for (node *n = head; n; n = n->next)
		n->value += 10;
}

/* xct_sum of the pattern of @seed with every byte one higher. */
static uint64_t plus_one_sum(size_t n, uint32_t seed)
{
	unsigned char *e = (unsigned char *)malloc(n);

	REQUIRE(e, "malloc");
	for (size_t i = 0; i < n; i++)
		e[i] = (unsigned char)(xct_pattern_byte(i, seed) + 1);
	uint64_t s = xct_sum(e, n);
	free(e);
	return s;
}

static void round_trip(size_t n, uint32_t seed)
{
	unsigned char *p;

	CK(cudaMallocManaged(&p, n));
	xct_fill(p, n, seed);
	uint64_t before = xct_sum(p, n);
	add_one<<<256, 256>>>(p, n);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	uint64_t after = xct_sum(p, n);
	uint64_t want = plus_one_sum(n, seed);
	printf("round trip %zu bytes: before %llu after %llu %s\n", n,
	       (unsigned long long)before, (unsigned long long)after,
	       after == want ? "ok" : "WRONG");
	CK(cudaFree(p));
}

static void loop(void)
{
	const int n = 100000;
	int *p;
	long long sum = 0;

	CK(cudaMallocManaged(&p, n * sizeof(int)));
	for (int i = 0; i < n; i++)
		p[i] = i % 7;
	for (int it = 0; it < 20; it++) {
		scale<<<(n + 255) / 256, 256>>>(p, n, 3);
		CKLAUNCH();
		CK(cudaDeviceSynchronize());
		/* The host reads one element and writes a few. */
		sum += p[it * 97];
		for (int j = 0; j < 10; j++)
			p[(it * 1013 + j * 7919) % n] = it + j;
		for (int j = 0; j < n; j++)
			p[j] &= 0xffff;
	}
	uint64_t h = xct_fnv(p, n * sizeof(int));
	printf("loop: sampled %lld fnv %016llx\n", sum, (unsigned long long)h);
	CK(cudaFree(p));
}

static void linked(void)
{
	enum { N = 9 };
	node *nodes[N];
	long long *out;

	CK(cudaMallocManaged(&out, sizeof(*out)));
	for (int i = 0; i < N; i++)
		CK(cudaMallocManaged(&nodes[i], sizeof(node)));
	/* A list in an order unrelated to allocation order. */
	for (int i = 0; i < N; i++) {
		int k = (i * 4) % N;
		nodes[k]->value = i * 3 + 1;
		nodes[k]->next = i + 1 < N ? nodes[((i + 1) * 4) % N] : NULL;
	}
	walk<<<1, 1>>>(nodes[0], out);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	printf("linked: sum %lld\n", *out);
	bump_list<<<1, 1>>>(nodes[0]);
	CK(cudaDeviceSynchronize());
	long long host = 0;
	int hops = 0;
	for (node *n = nodes[0]; n; n = n->next, hops++)
		host += n->value * (hops + 1);
	printf("linked: host walk after bump %lld over %d nodes\n", host,
	       hops);
	/* The host relinks; the kernel sees the new order. */
	nodes[0]->next = nodes[N - 1];
	nodes[N - 1]->next = NULL;
	walk<<<1, 1>>>(nodes[0], out);
	CK(cudaDeviceSynchronize());
	printf("linked: after relink %lld\n", *out);
	for (int i = 0; i < N; i++)
		CK(cudaFree(nodes[i]));
	CK(cudaFree(out));
}

static void copies(void)
{
	const size_t n = (3u << 20) + 333;
	unsigned char *m, *m2, *d, *h;

	CK(cudaMallocManaged(&m, n));
	CK(cudaMallocManaged(&m2, n));
	CK(cudaMalloc(&d, n));
	h = (unsigned char *)malloc(n);
	REQUIRE(h, "malloc");
	xct_fill(h, n, 11);
	uint64_t want = xct_sum(h, n);

	/* Host to managed, both kinds, then read on the host. */
	CK(cudaMemcpy(m, h, n, cudaMemcpyDefault));
	printf("copy h->m default: %s\n", xct_yes(xct_sum(m, n) == want));
	memset(m, 0, 100);
	CK(cudaMemcpy(m, h, n, cudaMemcpyHostToDevice));
	printf("copy h->m explicit: %s\n", xct_yes(xct_sum(m, n) == want));
	/* Managed written by the host, to device memory, back. */
	m[5] = (unsigned char)(m[5] + 1);
	want = xct_sum(m, n);
	CK(cudaMemcpy(d, m, n, cudaMemcpyDefault));
	CK(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost));
	printf("copy m->d default: %s\n", xct_yes(xct_sum(h, n) == want));
	CK(cudaMemcpy(m2, m, n, cudaMemcpyDeviceToDevice));
	printf("copy m->m: %s\n", xct_yes(xct_sum(m2, n) == want));
	memset(h, 0, n);
	CK(cudaMemcpy(h, m2, n, cudaMemcpyDeviceToHost));
	printf("copy m->h explicit: %s\n", xct_yes(xct_sum(h, n) == want));
	CK(cudaMemcpy(m2, d, 1000, cudaMemcpyDefault));
	printf("copy d->m: %s\n", xct_yes(xct_fnv(m2, 1000) ==
					   xct_fnv(h, 1000)));
	/* Memsets: part of it, asynchronously too. */
	CK(cudaMemset(m, 7, n));
	CK(cudaMemsetAsync(m + 10, 9, 20, 0));
	CK(cudaDeviceSynchronize());
	printf("memset: sum %llu\n", (unsigned long long)xct_sum(m, n));
	/* A host write in the middle, then a memset of the start only. */
	m[n / 2] = 1;
	CK(cudaMemset(m, 2, 4096));
	printf("memset part: sum %llu\n", (unsigned long long)xct_sum(m, n));
	/* Asynchronous copies on a stream. */
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	xct_fill(h, n, 12);
	CK(cudaMemcpyAsync(m, h, n, cudaMemcpyDefault, s));
	CK(cudaStreamSynchronize(s));
	printf("async h->m: %s\n",
	       xct_yes(xct_sum(m, n) == xct_sum(h, n)));
	CK(cudaStreamDestroy(s));
	free(h);
	CK(cudaFree(d));
	CK(cudaFree(m2));
	CK(cudaFree(m));
}

static void prefetch_and_advice(void)
{
	const size_t n = 8u << 20;
	unsigned char *m;
	cudaMemLocation dev = { cudaMemLocationTypeDevice, 0 };
	cudaMemLocation host = { cudaMemLocationTypeHost, 0 };

	CK(cudaMallocManaged(&m, n));
	xct_fill(m, n, 21);
	CK(cudaMemPrefetchAsync(m, n, dev, 0, 0));
	add_one<<<128, 256>>>(m, n);
	CKLAUNCH();
	CK(cudaMemPrefetchAsync(m, n, host, 0, 0));
	CK(cudaDeviceSynchronize());
	uint64_t want = plus_one_sum(n, 21);
	printf("prefetch both ways: %s\n", xct_yes(xct_sum(m, n) == want));

	EXPECT(cudaSuccess, cudaMemAdvise(m, n, cudaMemAdviseSetReadMostly,
					  dev));
	int v = -1;
	EXPECT(cudaSuccess, cudaMemRangeGetAttribute(
		       &v, sizeof(v), cudaMemRangeAttributeReadMostly, m, n));
	printf("read mostly: %d\n", v);
	EXPECT(cudaSuccess, cudaMemAdvise(m, n, cudaMemAdviseUnsetReadMostly,
					  dev));
	EXPECT(cudaSuccess, cudaMemAdvise(m, n,
					  cudaMemAdviseSetPreferredLocation,
					  dev));
	v = -5;
	EXPECT(cudaSuccess, cudaMemRangeGetAttribute(
		       &v, sizeof(v),
		       cudaMemRangeAttributePreferredLocation, m, n));
	printf("preferred location: %d\n", v);
	int rm = -1, pl = -1;
	void *datas[2] = { &rm, &pl };
	size_t sizes[2] = { sizeof(rm), sizeof(pl) };
	cudaMemRangeAttribute attrs[2] = {
		cudaMemRangeAttributeReadMostly,
		cudaMemRangeAttributePreferredLocation };
	EXPECT(cudaSuccess, cudaMemRangeGetAttributes(datas, sizes, attrs, 2,
						      m, n));
	printf("attributes: read mostly %d preferred %d\n", rm, pl);
	EXPECT(cudaSuccess, cudaMemAdvise(m, n, cudaMemAdviseSetAccessedBy,
					  dev));
	/* Errors CUDA reports. */
	void *d;
	CK(cudaMalloc(&d, 4096));
	EXPECT_ERR(cudaErrorInvalidValue,
		   cudaMemAdvise(d, 4096, cudaMemAdviseSetReadMostly, dev));
	EXPECT_ERR(cudaErrorInvalidValue,
		   cudaMemPrefetchAsync(d, 4096, dev, 0, 0));
	EXPECT_ERR(cudaErrorInvalidValue,
		   cudaMemRangeGetAttribute(&v, sizeof(v),
					    cudaMemRangeAttributeReadMostly,
					    d, 4096));
	CK(cudaFree(d));
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	EXPECT(cudaSuccess, cudaStreamAttachMemAsync(s, m, 0,
						     cudaMemAttachSingle));
	CK(cudaStreamSynchronize(s));
	EXPECT(cudaSuccess, cudaStreamAttachMemAsync(s, m, 0,
						     cudaMemAttachGlobal));
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));
	CK(cudaFree(m));
}

static void attributes(void)
{
	int *m;
	cudaPointerAttributes a;

	CK(cudaMallocManaged(&m, 4096));
	CK(cudaPointerGetAttributes(&a, m + 10));
	printf("attributes: type %d device %d dev==ptr %s host==ptr %s\n",
	       (int)a.type, a.device, xct_yes(a.devicePointer == m + 10),
	       xct_yes(a.hostPointer == m + 10));
	CK(cudaFree(m));
	CK(cudaMallocManaged(&m, 1000, cudaMemAttachHost));
	m[3] = 5;
	scale<<<1, 256>>>(m, 250, 2);
	CK(cudaDeviceSynchronize());
	printf("attach host: %d\n", m[3]);
	CK(cudaFree(m));
	/* Errors of the allocation itself. */
	EXPECT_ERR(cudaErrorInvalidValue, cudaMallocManaged(&m, 0));
	EXPECT_ERR(cudaErrorInvalidValue, cudaMallocManaged(&m, 64, 4));
	EXPECT_ERR(cudaErrorInvalidValue,
		   cudaMallocManaged((void **)NULL, 64));
}

__global__ void slow_fill(unsigned int *p, size_t n, long long cycles)
{
	long long t0 = clock64();

	while (clock64() - t0 < cycles)
		;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = (unsigned int)i;
}

/* cudaFree while a kernel still writes the memory: CUDA waits for it. */
static void free_while_running(void)
{
	unsigned int *p;
	const size_t n = 1u << 20;

	CK(cudaMallocManaged(&p, n * sizeof(*p)));
	p[0] = 1;
	slow_fill<<<64, 256>>>(p, n, 100000000ll);
	CKLAUNCH();
	EXPECT(cudaSuccess, cudaFree(p));
	EXPECT(cudaSuccess, cudaDeviceSynchronize());
	/* A managed pointer freed twice, and one inside an allocation. */
	CK(cudaMallocManaged(&p, 4096));
	EXPECT_ERR(cudaErrorInvalidValue, cudaFree(p + 1));
	EXPECT(cudaSuccess, cudaFree(p));
	EXPECT_ERR(cudaErrorInvalidValue, cudaFree(p));
}

static void reuse(void)
{
	uint64_t total = 0;

	for (int i = 0; i < 50; i++) {
		size_t n = 4096u * (size_t)(1 + i % 7) + (size_t)i;
		unsigned char *p;

		CK(cudaMallocManaged(&p, n));
		memset(p, i, n);
		add_one<<<8, 128>>>(p, n);
		CK(cudaDeviceSynchronize());
		total += xct_sum(p, n);
		CK(cudaFree(p));
	}
	printf("reuse: %llu\n", (unsigned long long)total);
}

int main(void)
{
	int count = 0, managed = 0;

	CK(cudaGetDeviceCount(&count));
	CK(cudaSetDevice(0));
	CK(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, 0));
	printf("managed memory: %d\n", managed);
	round_trip(1, 1);
	round_trip(4095, 2);
	round_trip(1u << 20, 3);
	round_trip((2u << 20) + 1, 4);
	round_trip(64u << 20, 5);
	loop();
	linked();
	copies();
	prefetch_and_advice();
	attributes();
	reuse();
	free_while_running();
	return xct_finish("managed");
}
