// The demo: a vector add through whatever libcudart.so.13 the loader picks,
// saying which library served it and which GPU ran it.
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>

__global__ void vadd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

static int check(cudaError_t e, const char *what)
{
	if (e == cudaSuccess)
		return 0;
	printf("%s: %s (%s)\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
	return 1;
}

int main()
{
	const int n = 1 << 20;
	Dl_info info;
	int count = 0;

	/* cudaMalloc is also a template in cuda_runtime.h: name the C one. */
	cudaError_t (*c_malloc)(void **, size_t) = cudaMalloc;

	if (dladdr((void *)c_malloc, &info) && info.dli_fname)
		printf("libcudart: %s\n", info.dli_fname);
	if (check(cudaGetDeviceCount(&count), "cudaGetDeviceCount"))
		return 2;
	cudaDeviceProp p;
	if (check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties"))
		return 2;
	printf("device 0 of %d: %s (compute capability %d.%d, %zu MiB)\n",
	       count, p.name, p.major, p.minor, p.totalGlobalMem >> 20);

	float *a = (float *)malloc(n * sizeof(float));
	float *b = (float *)malloc(n * sizeof(float));
	float *c = (float *)malloc(n * sizeof(float));
	for (int i = 0; i < n; i++) {
		a[i] = (float)i;
		b[i] = 2.0f * i;
	}
	float *da, *db, *dc;
	if (check(cudaMalloc(&da, n * sizeof(float)), "cudaMalloc") ||
	    check(cudaMalloc(&db, n * sizeof(float)), "cudaMalloc") ||
	    check(cudaMalloc(&dc, n * sizeof(float)), "cudaMalloc") ||
	    check(cudaMemcpy(da, a, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy") ||
	    check(cudaMemcpy(db, b, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy"))
		return 2;
	vadd<<<(n + 255) / 256, 256>>>(da, db, dc, n);
	if (check(cudaGetLastError(), "launch") ||
	    check(cudaMemcpy(c, dc, n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy"))
		return 2;
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += c[i] != 3.0f * i;
	printf("vector add of %d floats: %s\n", n, bad ? "WRONG" : "correct");
	cudaFree(da);
	cudaFree(db);
	cudaFree(dc);
	free(a);
	free(b);
	free(c);
	return bad ? 1 : 0;
}
