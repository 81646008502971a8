/* SPDX-License-Identifier: MIT */
/*
 * xcuda-bench: the costs that decide whether forwarded CUDA is usable,
 * measured the same way natively and through xcuda (the same binary,
 * built with -cudart shared; run-bench.sh runs it both ways).
 *
 * Each row is measured REPS times (default 7) and the median printed, as
 * CSV on stdout:
 *
 *   metric,size_bytes,value,unit
 *
 * Rows: per-launch host cost of an empty kernel (100000 launches, no
 * synchronisation in the loop), launch + cudaDeviceSynchronize, the same
 * two through the driver API (cuLaunchKernel, cuCtxSynchronize),
 * cudaMalloc + cudaFree, 4-byte cudaMemcpy H2D and D2H, bandwidth H2D
 * and D2H from pinned (cudaMallocHost) and pageable (malloc) memory for
 * 4 KiB .. 256 MiB and from malloc memory registered with
 * cudaHostRegister at 16 and 256 MiB, and a compute-bound kernel (about
 * a second of FMAs over a large matrix), and cuBLAS: the host's cost of
 * a small SGEMM, the same with a synchronisation, and large SGEMM and
 * half-precision GemmEx throughput.  The last row, cpu, is the CPU
 * time (user + system, all threads) the process used for the rows before
 * it: CUDA's own spinning natively, the guest library's through xcuda.
 *
 *   xcuda-bench [--smoke] [--quick] [--reps N] [--only GROUP[,GROUP...]]
 *
 * --smoke: tiny counts, for CI (checks that it runs, measures nothing).
 * --quick: a tenth of the launches, and copies of up to 4 MiB with 16 MiB
 * per measurement, for paths that are slow by construction (an emulated
 * machine); its rows compare only with rows of another --quick run.
 * --only: just these groups of rows: launch, driver, graph, malloc, small,
 * pinned, pageable, registered, managed, compute, blas (to measure one
 * lever without the rest).
 */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <sys/resource.h>

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

static int reps = 7;
static bool quick;
static bool smoke;
static const char *only;

/* Whether the row group @g was asked for (all of them without --only). */
static bool want(const char *g)
{
	size_t n = strlen(g);

	for (const char *p = only; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == n && !strncmp(p, g, n))
			return true;
		p = e ? e + 1 : NULL;
	}
	return !only;
}

#define CK(call)                                                         \
	do {                                                             \
		cudaError_t e_ = (call);                                 \
		if (e_ != cudaSuccess) {                                 \
			fprintf(stderr, "xcuda-bench: %s: %s\n", #call,  \
				cudaGetErrorName(e_));                   \
			exit(2);                                         \
		}                                                        \
	} while (0)

static double now_s()
{
	return std::chrono::duration<double>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

static double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

static void row(const char *metric, size_t size, double value,
		const char *unit)
{
	printf("%s,%zu,%.6g,%s\n", metric, size, value, unit);
	fflush(stdout);
}

__global__ void empty_kernel() {}

/* FMA chains over a matrix: the GPU's work, not the host's. */
__global__ void fma_kernel(float *m, int n, int iters)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float a = m[i], b = 1.0001f, c = 0.9999f;
	for (int k = 0; k < iters; k++) {
		a = fmaf(a, b, c);
		b = fmaf(b, c, a * 1e-7f);
	}
	m[i] = a + b;
}

static void bench_launch()
{
	const int n = smoke ? 100 : quick ? 10000 : 100000;
	std::vector<double> v;

	empty_kernel<<<1, 1>>>();
	CK(cudaDeviceSynchronize());
	for (int r = 0; r < reps; r++) {
		double t0 = now_s();
		for (int i = 0; i < n; i++)
			empty_kernel<<<1, 1>>>();
		double t1 = now_s();
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
		v.push_back((t1 - t0) / n * 1e6);
	}
	row("launch_host", 0, median(v), "us");

	const int m = smoke ? 10 : quick ? 1000 : 10000;
	v.clear();
	for (int r = 0; r < reps; r++) {
		double t0 = now_s();
		for (int i = 0; i < m; i++) {
			empty_kernel<<<1, 1>>>();
			CK(cudaDeviceSynchronize());
		}
		v.push_back((now_s() - t0) / m * 1e6);
	}
	row("launch_sync", 0, median(v), "us");
}

/* An empty kernel as PTX, for the driver API's own module loading. */
static const char drv_ptx[] =
	".version 7.0\n.target sm_70\n.address_size 64\n"
	".visible .entry drv_empty()\n{\n\tret;\n}\n";

/* A driver function, through the runtime: the same way in both runs. */
template <typename T> static T drv(const char *name)
{
	void *p = NULL;
	cudaDriverEntryPointQueryResult q;

	/* 12.0's: at 13.0 cuCtxSynchronize takes a context. */
	CK(cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault,
					    &q));
	if (!p || q != cudaDriverEntryPointSuccess) {
		fprintf(stderr, "xcuda-bench: no %s\n", name);
		exit(2);
	}
	return (T)p;
}

/*
 * The driver API's launches (cuLaunchKernel of a module the program
 * loaded, as CuPy, Triton and NVRTC users launch): the host's cost per
 * launch, and a launch with cuCtxSynchronize.
 */
static void bench_driver()
{
	typedef int (*load_t)(void **, const void *);
	typedef int (*get_t)(void **, void *, const char *);
	typedef int (*launch_t)(void *, unsigned, unsigned, unsigned,
				unsigned, unsigned, unsigned, unsigned, void *,
				void **, void **);
	typedef int (*sync_t)(void);
	load_t load = drv<load_t>("cuModuleLoadData");
	get_t get = drv<get_t>("cuModuleGetFunction");
	launch_t launch = drv<launch_t>("cuLaunchKernel");
	sync_t sync = drv<sync_t>("cuCtxSynchronize");
	const int n = smoke ? 100 : 100000, m = smoke ? 10 : 10000;
	void *mod = NULL, *fn = NULL;
	std::vector<double> v;

	if (load(&mod, drv_ptx) || get(&fn, mod, "drv_empty") ||
	    launch(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) || sync()) {
		fprintf(stderr, "xcuda-bench: the driver's module failed\n");
		exit(2);
	}
	for (int r = 0; r < reps; r++) {
		double t0 = now_s();
		for (int i = 0; i < n; i++)
			launch(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
		double t1 = now_s();
		if (sync())
			exit(2);
		v.push_back((t1 - t0) / n * 1e6);
	}
	row("drv_launch_host", 0, median(v), "us");
	v.clear();
	for (int r = 0; r < reps; r++) {
		double t0 = now_s();
		for (int i = 0; i < m; i++) {
			launch(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
			if (sync())
				exit(2);
		}
		v.push_back((now_s() - t0) / m * 1e6);
	}
	row("drv_launch_sync", 0, median(v), "us");
}

/*
 * A graph of 100 empty kernels captured on a stream, launched over and
 * over: the time per kernel, launch and execution together, as a program
 * that replays graphs sees it.
 */
static void bench_graph()
{
	const int kernels = 100, n = smoke ? 2 : 1000;
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	std::vector<double> v;

	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int i = 0; i < kernels; i++)
		empty_kernel<<<1, 1, 0, s>>>();
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	for (int r = 0; r < reps; r++) {
		double t0 = now_s();
		for (int i = 0; i < n; i++)
			CK(cudaGraphLaunch(ge, s));
		CK(cudaStreamSynchronize(s));
		v.push_back((now_s() - t0) / n / kernels * 1e6);
	}
	row("graph_kernel", kernels, median(v), "us");
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
	CK(cudaStreamDestroy(s));
}

static void bench_malloc()
{
	const int n = smoke ? 10 : 2000;
	std::vector<double> v;
	void *p;

	for (int r = 0; r < reps; r++) {
		double t0 = now_s();
		for (int i = 0; i < n; i++) {
			CK(cudaMalloc(&p, 1 << 20));
			CK(cudaFree(p));
		}
		v.push_back((now_s() - t0) / n * 1e6);
	}
	row("malloc_free", 1 << 20, median(v), "us");
}

static void bench_small_copies()
{
	const int n = smoke ? 10 : 20000;
	std::vector<double> h2d, d2h;
	int *d, h = 7;

	CK(cudaMalloc(&d, sizeof(int)));
	for (int r = 0; r < reps; r++) {
		double t0 = now_s();
		for (int i = 0; i < n; i++)
			CK(cudaMemcpy(d, &h, 4, cudaMemcpyHostToDevice));
		double t1 = now_s();
		for (int i = 0; i < n; i++)
			CK(cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost));
		double t2 = now_s();
		h2d.push_back((t1 - t0) / n * 1e6);
		d2h.push_back((t2 - t1) / n * 1e6);
	}
	row("memcpy4_h2d", 4, median(h2d), "us");
	row("memcpy4_d2h", 4, median(d2h), "us");
	CK(cudaFree(d));
}

/*
 * GB/s each way between @h and @d, for sizes from @from to @max, each
 * @step times the last: rows @h2d_row and @d2h_row.
 */
static void bench_sizes(unsigned char *h, unsigned char *d, size_t from,
			size_t max, size_t step, const char *h2d_row,
			const char *d2h_row)
{
	for (size_t size = from; size <= max; size *= step) {
		/* about 1 GiB per measurement, 4 to 2000 copies */
		size_t target = smoke ? size :
				quick ? (size_t)16 << 20 : (size_t)1 << 30;
		int count = (int)std::min<size_t>(
			2000, std::max<size_t>(4, target / size));
		std::vector<double> h2d, d2h;

		CK(cudaMemcpy(d, h, size, cudaMemcpyHostToDevice));
		for (int r = 0; r < reps; r++) {
			double t0 = now_s();
			for (int i = 0; i < count; i++)
				CK(cudaMemcpy(d, h, size,
					      cudaMemcpyHostToDevice));
			double t1 = now_s();
			for (int i = 0; i < count; i++)
				CK(cudaMemcpy(h, d, size,
					      cudaMemcpyDeviceToHost));
			double t2 = now_s();
			h2d.push_back((double)size * count / (t1 - t0) / 1e9);
			d2h.push_back((double)size * count / (t2 - t1) / 1e9);
		}
		row(h2d_row, size, median(h2d), "GB/s");
		row(d2h_row, size, median(d2h), "GB/s");
	}
}

/* GB/s of @count copies of @size bytes each way, pinned or pageable. */
static void bench_bandwidth(bool pinned, size_t max)
{
	unsigned char *h, *d;

	if (pinned)
		CK(cudaMallocHost(&h, max));
	else if (!(h = (unsigned char *)malloc(max)))
		exit(2);
	memset(h, 0x5a, max); /* touched: pageable pages exist */
	CK(cudaMalloc(&d, max));
	bench_sizes(h, d, 4096, max, 4,
		    pinned ? "pinned_h2d" : "pageable_h2d",
		    pinned ? "pinned_d2h" : "pageable_d2h");
	CK(cudaFree(d));
	if (pinned)
		CK(cudaFreeHost(h));
	else
		free(h);
}

/*
 * The same from malloc memory registered with cudaHostRegister (moved
 * onto memory shared with the worker through xcuda's `local`), at 16
 * and 256 MiB.
 */
static void bench_registered(size_t max)
{
	unsigned char *h = (unsigned char *)malloc(max), *d;

	if (!h)
		exit(2);
	memset(h, 0x5a, max);
	CK(cudaHostRegister(h, max, cudaHostRegisterDefault));
	CK(cudaMalloc(&d, max));
	bench_sizes(h, d, smoke ? 4096 : (size_t)16 << 20, max, 16,
		    "registered_h2d", "registered_d2h");
	CK(cudaFree(d));
	CK(cudaHostUnregister(h));
	free(h);
}

__global__ void managed_inc(unsigned int *p, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] += 1;
}

/*
 * A managed-memory loop: the host writes every byte, a kernel reads and
 * writes them, the host reads them back after a synchronisation.  The
 * row is the bytes of one direction per second of a whole iteration.
 */
static void bench_managed()
{
	const size_t sizes[] = { (size_t)1 << 20, (size_t)64 << 20 };

	for (size_t size : sizes) {
		if (smoke)
			size = 4096;
		size_t n = size / sizeof(unsigned int);
		int iters = size >= ((size_t)64 << 20) ? 8 : 64;
		std::vector<double> v;
		unsigned int *p;
		unsigned long long sum = 0;

		CK(cudaMallocManaged(&p, size));
		for (int r = 0; r < reps; r++) {
			double t0 = now_s();
			for (int it = 0; it < iters; it++) {
				for (size_t i = 0; i < n; i++)
					p[i] = (unsigned int)(i + it);
				managed_inc<<<264, 256>>>(p, n);
				CK(cudaDeviceSynchronize());
				for (size_t i = 0; i < n; i += 1)
					sum += p[i];
			}
			v.push_back((double)size * iters /
				    (now_s() - t0) / 1e9);
		}
		if (!sum)
			fprintf(stderr, "xcuda-bench: managed sum 0\n");
		row("managed_loop", size, median(v), "GB/s");
		CK(cudaFree(p));
		if (smoke)
			break;
	}
}

static void bench_compute()
{
	const int n = smoke ? 1 << 16 : 1 << 24;
	/* about 0.9 s per run on an H100 */
	const int iters = smoke ? 16 : 1 << 19;
	std::vector<double> v;
	float *m;

	CK(cudaMalloc(&m, n * sizeof(float)));
	CK(cudaMemset(m, 0, n * sizeof(float)));
	fma_kernel<<<(n + 255) / 256, 256>>>(m, n, 1);
	CK(cudaDeviceSynchronize());
	for (int r = 0; r < (smoke ? 1 : std::min(reps, 5)); r++) {
		double t0 = now_s();
		fma_kernel<<<(n + 255) / 256, 256>>>(m, n, iters);
		CK(cudaDeviceSynchronize());
		v.push_back(now_s() - t0);
	}
	row("compute", (size_t)n * sizeof(float), median(v), "s");
	CK(cudaFree(m));
}

#define CKB(call)                                                        \
	do {                                                             \
		cublasStatus_t s_ = (call);                              \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                       \
			fprintf(stderr, "xcuda-bench: %s: %d\n", #call,   \
				(int)s_);                                \
			exit(2);                                         \
		}                                                        \
	} while (0)

/*
 * cuBLAS: a 16x16x16 SGEMM's cost to the host (no synchronisation in the
 * loop) and with a stream synchronisation, as a framework's small
 * layers pay it; then 8192x8192x8192 SGEMM and fp16 GemmEx (fp32
 * accumulation), whose throughput says whether forwarding costs the GPU
 * anything.
 */
static void bench_blas()
{
	const int n = smoke ? 100 : 100000, m = smoke ? 10 : 10000;
	const int big = smoke ? 256 : 8192, nbig = smoke ? 1 : 10;
	const float one = 1, zero = 0;
	cublasHandle_t h;
	cudaStream_t s;
	float *a, *b, *c;
	std::vector<double> v;

	CKB(cublasCreate(&h));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CKB(cublasSetStream(h, s));
	CK(cudaMalloc(&a, (size_t)big * big * sizeof(float)));
	CK(cudaMalloc(&b, (size_t)big * big * sizeof(float)));
	CK(cudaMalloc(&c, (size_t)big * big * sizeof(float)));
	CK(cudaMemset(a, 0, (size_t)big * big * sizeof(float)));
	CK(cudaMemset(b, 0, (size_t)big * big * sizeof(float)));
	for (int r = 0; r < reps; r++) {
		double t0 = now_s();
		for (int i = 0; i < n; i++)
			CKB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16,
					&one, a, 16, b, 16, &zero, c, 16));
		double t1 = now_s();
		CK(cudaStreamSynchronize(s));
		v.push_back((t1 - t0) / n * 1e6);
	}
	row("blas_sgemm16_host", 0, median(v), "us");
	v.clear();
	for (int r = 0; r < reps; r++) {
		double t0 = now_s();
		for (int i = 0; i < m; i++) {
			CKB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16,
					&one, a, 16, b, 16, &zero, c, 16));
			CK(cudaStreamSynchronize(s));
		}
		v.push_back((now_s() - t0) / m * 1e6);
	}
	row("blas_sgemm16_sync", 0, median(v), "us");
	for (int half = 0; half < 2; half++) {
		double flop = 2.0 * big * big * big * nbig;

		v.clear();
		for (int r = 0; r < reps; r++) {
			double t0 = now_s();
			for (int i = 0; i < nbig; i++)
				CKB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N,
						 big, big, big, &one, a,
						 half ? CUDA_R_16F : CUDA_R_32F,
						 big, b,
						 half ? CUDA_R_16F : CUDA_R_32F,
						 big, &zero, c, CUDA_R_32F, big,
						 CUBLAS_COMPUTE_32F,
						 CUBLAS_GEMM_DEFAULT));
			CK(cudaStreamSynchronize(s));
			v.push_back(flop / (now_s() - t0) / 1e12);
		}
		row(half ? "blas_hgemm_large" : "blas_sgemm_large",
		    (size_t)big * big * (half ? 2 : 4), median(v), "TFLOP/s");
	}
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(c));
	CKB(cublasDestroy(h));
	CK(cudaStreamDestroy(s));
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--smoke")) {
			smoke = true;
			reps = 1;
		} else if (!strcmp(argv[i], "--quick")) {
			quick = true;
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
			if (reps < 1 || reps > 1000)
				return 2;
		} else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			only = argv[++i];
		} else {
			fprintf(stderr, "usage: xcuda-bench [--smoke] [--quick] [--reps N]"
					" [--only GROUP[,GROUP...]]\n");
			return 2;
		}
	}
	int ndev = 0;
	CK(cudaGetDeviceCount(&ndev));
	CK(cudaSetDevice(0));
	printf("metric,size_bytes,value,unit\n");
	if (want("launch"))
		bench_launch();
	if (want("driver"))
		bench_driver();
	if (want("graph"))
		bench_graph();
	if (want("malloc"))
		bench_malloc();
	if (want("small"))
		bench_small_copies();
	size_t max = smoke ? (size_t)64 << 10 :
		     quick ? (size_t)4 << 20 : (size_t)256 << 20;
	if (want("pinned"))
		bench_bandwidth(true, max);
	if (want("pageable"))
		bench_bandwidth(false, max);
	if (want("registered"))
		bench_registered(max);
	if (want("managed"))
		bench_managed();
	if (want("compute"))
		bench_compute();
	if (want("blas"))
		bench_blas();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	row("cpu", 0, ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
		      (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6, "s");
	return 0;
}
