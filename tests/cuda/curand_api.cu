/* SPDX-License-Identifier: MIT */
/*
 * cuRAND's host API as CuPy's cupy.random calls it: every pseudo- and
 * quasi-random generator type with its seed, offset, ordering and
 * dimensions, on a stream of the program's; every distribution
 * (integers, uniform, normal, log-normal, Poisson) in single and double
 * precision; a Poisson distribution that a kernel of the device API
 * reads; the direction vectors and scramble constants that the device
 * API's Sobol' generators start from; and cuRAND's own errors: a length
 * that is not a multiple of a quasi generator's dimensions, a call of
 * the wrong generator type, values out of range.  Results are hashes of
 * the generated bits, which the same library on the same GPU makes
 * identical.
 */
#include <curand.h>
#include <curand_kernel.h>

#include "common/xct.h"

static int failures;

static const char *status_name(curandStatus_t s)
{
	switch (s) {
#define N(x) case x: return #x
	N(CURAND_STATUS_SUCCESS);
	N(CURAND_STATUS_VERSION_MISMATCH);
	N(CURAND_STATUS_NOT_INITIALIZED);
	N(CURAND_STATUS_ALLOCATION_FAILED);
	N(CURAND_STATUS_TYPE_ERROR);
	N(CURAND_STATUS_OUT_OF_RANGE);
	N(CURAND_STATUS_LENGTH_NOT_MULTIPLE);
	N(CURAND_STATUS_DOUBLE_PRECISION_REQUIRED);
	N(CURAND_STATUS_LAUNCH_FAILURE);
	N(CURAND_STATUS_PREEXISTING_FAILURE);
	N(CURAND_STATUS_INITIALIZATION_FAILED);
	N(CURAND_STATUS_ARCH_MISMATCH);
	N(CURAND_STATUS_INTERNAL_ERROR);
#undef N
	}
	return "(unknown status)";
}

#define CKR(...) ckr((__VA_ARGS__), #__VA_ARGS__)
#define EXPECTR(want, ...) expectr((want), (__VA_ARGS__), #__VA_ARGS__)

static void ckr(curandStatus_t s, const char *what)
{
	if (s != CURAND_STATUS_SUCCESS) {
		printf("FAILED: %s -> %s\n", what, status_name(s));
		exit(1);
	}
}

static void expectr(curandStatus_t want, curandStatus_t s, const char *what)
{
	printf("%s -> %s\n", what, status_name(s));
	if (s != want) {
		printf("FAILED: expected %s\n", status_name(want));
		failures++;
	}
}

/* FNV-1a of @n bytes of device memory, once the work before is done. */
static uint64_t hash_dev(const void *d, size_t n)
{
	unsigned char *h = (unsigned char *)malloc(n);
	uint64_t x = 1469598103934665603ull;

	/* The generators' stream does not wait for the legacy one. */
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < n; i++)
		x = (x ^ h[i]) * 1099511628211ull;
	free(h);
	return x;
}

static const struct {
	curandRngType_t type;
	const char *name;
	int quasi, wide;
} types[] = {
	{ CURAND_RNG_PSEUDO_XORWOW, "XORWOW", 0, 0 },
	{ CURAND_RNG_PSEUDO_MRG32K3A, "MRG32K3A", 0, 0 },
	{ CURAND_RNG_PSEUDO_MTGP32, "MTGP32", 0, 0 },
	{ CURAND_RNG_PSEUDO_MT19937, "MT19937", 0, 0 },
	{ CURAND_RNG_PSEUDO_PHILOX4_32_10, "PHILOX4_32_10", 0, 0 },
	{ CURAND_RNG_QUASI_SOBOL32, "SOBOL32", 1, 0 },
	{ CURAND_RNG_QUASI_SCRAMBLED_SOBOL32, "SCRAMBLED_SOBOL32", 1, 0 },
	{ CURAND_RNG_QUASI_SOBOL64, "SOBOL64", 1, 1 },
	{ CURAND_RNG_QUASI_SCRAMBLED_SOBOL64, "SCRAMBLED_SOBOL64", 1, 1 },
};

/* Every distribution of one generator type, on @st. */
static void generate_all(int t, cudaStream_t st, void *buf)
{
	const size_t n = 4096;	/* a multiple of every quasi dimension */
	curandGenerator_t g;

	CKR(curandCreateGenerator(&g, types[t].type));
	CKR(curandSetStream(g, st));
	if (types[t].quasi) {
		CKR(curandSetQuasiRandomGeneratorDimensions(g, 4));
	} else {
		CKR(curandSetPseudoRandomGeneratorSeed(g, 1234ull + t));
		/* The Mersenne twisters have no offset: TYPE_ERROR. */
		printf("%-18s offset  %s\n", types[t].name,
		       status_name(curandSetGeneratorOffset(g, 17)));
	}
	CKR(curandGenerateSeeds(g));
	if (types[t].wide)
		CKR(curandGenerateLongLong(g, (unsigned long long *)buf, n));
	else
		CKR(curandGenerate(g, (unsigned int *)buf, n));
	CK(cudaStreamSynchronize(st));
	printf("%-18s bits    %016llx\n", types[t].name,
	       (unsigned long long)hash_dev(buf, n * (types[t].wide ? 8 : 4)));
	CKR(curandGenerateUniform(g, (float *)buf, n));
	printf("%-18s uniform %016llx\n", types[t].name,
	       (unsigned long long)hash_dev(buf, n * 4));
	CKR(curandGenerateUniformDouble(g, (double *)buf, n));
	printf("%-18s udouble %016llx\n", types[t].name,
	       (unsigned long long)hash_dev(buf, n * 8));
	CKR(curandGenerateNormal(g, (float *)buf, n, 1.5f, 2.0f));
	printf("%-18s normal  %016llx\n", types[t].name,
	       (unsigned long long)hash_dev(buf, n * 4));
	CKR(curandGenerateNormalDouble(g, (double *)buf, n, -1.0, 0.5));
	printf("%-18s ndouble %016llx\n", types[t].name,
	       (unsigned long long)hash_dev(buf, n * 8));
	CKR(curandGenerateLogNormal(g, (float *)buf, n, 0.0f, 0.25f));
	printf("%-18s lognorm %016llx\n", types[t].name,
	       (unsigned long long)hash_dev(buf, n * 4));
	CKR(curandGenerateLogNormalDouble(g, (double *)buf, n, 0.5, 0.125));
	printf("%-18s lndoubl %016llx\n", types[t].name,
	       (unsigned long long)hash_dev(buf, n * 8));
	CKR(curandGeneratePoisson(g, (unsigned int *)buf, n, 3.5));
	printf("%-18s poisson %016llx\n", types[t].name,
	       (unsigned long long)hash_dev(buf, n * 4));
	CKR(curandDestroyGenerator(g));
}

/* The device API drawing from a distribution the host API made. */
__global__ void draw(curandDiscreteDistribution_t d, unsigned int *out,
		     int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	curandStatePhilox4_32_10_t s;

	if (i >= n)
		return;
	curand_init(42, i, 0, &s);
	out[i] = curand_discrete(&s, d);
}

static void discrete(void *buf)
{
	curandDiscreteDistribution_t d;
	const int n = 1024;

	CKR(curandCreatePoissonDistribution(7.25, &d));
	draw<<<n / 128, 128>>>(d, (unsigned int *)buf, n);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	printf("discrete poisson %016llx\n",
	       (unsigned long long)hash_dev(buf, n * 4));
	CKR(curandDestroyDistribution(d));
	EXPECTR(CURAND_STATUS_OUT_OF_RANGE,
		curandCreatePoissonDistribution(-1.0, &d));
}

static uint64_t hash_host(const void *p, size_t n)
{
	const unsigned char *h = (const unsigned char *)p;
	uint64_t x = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		x = (x ^ h[i]) * 1099511628211ull;
	return x;
}

/* The device API's scrambled Sobol' generator, from the host's tables. */
__global__ void sobol(const unsigned int *dv, const unsigned int *sc,
		      float *out, int n)
{
	int d = blockIdx.x;	/* one dimension per block */
	curandStateScrambledSobol32_t s;

	curand_init((unsigned int *)dv + 32 * d, sc[d], threadIdx.x, &s);
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		out[d * n + i] = curand_uniform(&s);
}

static void tables(void *buf)
{
	curandDirectionVectors32_t *v32, *s32;
	curandDirectionVectors64_t *v64, *s64;
	unsigned int *c32, *dv, *sc;
	unsigned long long *c64;

	CKR(curandGetDirectionVectors32(&v32,
		CURAND_DIRECTION_VECTORS_32_JOEKUO6));
	CKR(curandGetDirectionVectors32(&s32,
		CURAND_SCRAMBLED_DIRECTION_VECTORS_32_JOEKUO6));
	CKR(curandGetDirectionVectors64(&v64,
		CURAND_DIRECTION_VECTORS_64_JOEKUO6));
	CKR(curandGetDirectionVectors64(&s64,
		CURAND_SCRAMBLED_DIRECTION_VECTORS_64_JOEKUO6));
	CKR(curandGetScrambleConstants32(&c32));
	CKR(curandGetScrambleConstants64(&c64));
	printf("direction vectors 32 %016llx scrambled %016llx\n",
	       (unsigned long long)hash_host(v32, 20000 * sizeof(*v32)),
	       (unsigned long long)hash_host(s32, 20000 * sizeof(*s32)));
	printf("direction vectors 64 %016llx scrambled %016llx\n",
	       (unsigned long long)hash_host(v64, 20000 * sizeof(*v64)),
	       (unsigned long long)hash_host(s64, 20000 * sizeof(*s64)));
	printf("scramble constants 32 %016llx 64 %016llx\n",
	       (unsigned long long)hash_host(c32, 20000 * sizeof(*c32)),
	       (unsigned long long)hash_host(c64, 20000 * sizeof(*c64)));
	EXPECTR(CURAND_STATUS_OUT_OF_RANGE,
		curandGetDirectionVectors32(&v32,
			CURAND_DIRECTION_VECTORS_64_JOEKUO6));
	EXPECTR(CURAND_STATUS_OUT_OF_RANGE,
		curandGetDirectionVectors64(&v64,
			(curandDirectionVectorSet_t)7));

	/* Eight dimensions of 512 points, on the device. */
	CK(cudaMalloc(&dv, 8 * sizeof(*s32)));
	CK(cudaMalloc(&sc, 8 * sizeof(*c32)));
	CK(cudaMemcpy(dv, s32, 8 * sizeof(*s32), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(sc, c32, 8 * sizeof(*c32), cudaMemcpyHostToDevice));
	sobol<<<8, 128>>>(dv, sc, (float *)buf, 512);
	CKLAUNCH();
	printf("device scrambled sobol %016llx\n",
	       (unsigned long long)hash_dev(buf, 8 * 512 * 4));
	CK(cudaFree(dv));
	CK(cudaFree(sc));
}

static void orderings(void *buf)
{
	static const struct {
		curandOrdering_t o;
		const char *name;
	} ords[] = {
		{ CURAND_ORDERING_PSEUDO_BEST, "PSEUDO_BEST" },
		{ CURAND_ORDERING_PSEUDO_DEFAULT, "PSEUDO_DEFAULT" },
		{ CURAND_ORDERING_PSEUDO_SEEDED, "PSEUDO_SEEDED" },
		{ CURAND_ORDERING_PSEUDO_LEGACY, "PSEUDO_LEGACY" },
		{ CURAND_ORDERING_PSEUDO_DYNAMIC, "PSEUDO_DYNAMIC" },
	};
	curandGenerator_t g;

	CKR(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_XORWOW));
	CKR(curandSetPseudoRandomGeneratorSeed(g, 99));
	for (size_t i = 0; i < sizeof(ords) / sizeof(ords[0]); i++) {
		curandStatus_t s = curandSetGeneratorOrdering(g, ords[i].o);

		printf("XORWOW ordering %s -> %s", ords[i].name,
		       status_name(s));
		if (s == CURAND_STATUS_SUCCESS) {
			CKR(curandGenerateUniform(g, (float *)buf, 1000));
			printf(" %016llx", (unsigned long long)hash_dev(buf,
								       4000));
		}
		printf("\n");
	}
	CKR(curandDestroyGenerator(g));
}

static void errors(void *buf)
{
	curandGenerator_t g, q;

	EXPECTR(CURAND_STATUS_TYPE_ERROR,
		curandCreateGenerator(&g, (curandRngType_t)12345));
	CKR(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10));
	CKR(curandCreateGenerator(&q, CURAND_RNG_QUASI_SOBOL32));
	/* An odd count of normal values: Philox makes them. */
	EXPECTR(CURAND_STATUS_SUCCESS,
		curandGenerateNormal(g, (float *)buf, 1001, 0.0f, 1.0f));
	/* A quasi generator's length is a multiple of its dimensions. */
	CKR(curandSetQuasiRandomGeneratorDimensions(q, 3));
	EXPECTR(CURAND_STATUS_LENGTH_NOT_MULTIPLE,
		curandGenerateUniform(q, (float *)buf, 1000));
	EXPECTR(CURAND_STATUS_TYPE_ERROR,
		curandSetPseudoRandomGeneratorSeed(q, 5));
	EXPECTR(CURAND_STATUS_TYPE_ERROR,
		curandSetQuasiRandomGeneratorDimensions(g, 2));
	EXPECTR(CURAND_STATUS_TYPE_ERROR,
		curandGenerateLongLong(g, (unsigned long long *)buf, 16));
	EXPECTR(CURAND_STATUS_OUT_OF_RANGE,
		curandSetQuasiRandomGeneratorDimensions(q, 0));
	EXPECTR(CURAND_STATUS_OUT_OF_RANGE,
		curandSetQuasiRandomGeneratorDimensions(q, 1u << 30));
	EXPECTR(CURAND_STATUS_OUT_OF_RANGE,
		curandSetGeneratorOrdering(g, (curandOrdering_t)999));
	EXPECTR(CURAND_STATUS_OUT_OF_RANGE,
		curandGeneratePoisson(g, (unsigned int *)buf, 16, -2.0));
	/* What the calls left works on. */
	CKR(curandGenerateUniform(g, (float *)buf, 16));
	CK(cudaDeviceSynchronize());
	CKR(curandDestroyGenerator(q));
	CKR(curandDestroyGenerator(g));
}

int main(void)
{
	int v, major, minor, patch;
	cudaStream_t st;
	void *buf;

	/* Without a GPU (CI's, the Xen rig's Dom0) this is where it ends. */
	CK(cudaMalloc(&buf, 4096 * 8));
	CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CKR(curandGetVersion(&v));
	CKR(curandGetProperty(MAJOR_VERSION, &major));
	CKR(curandGetProperty(MINOR_VERSION, &minor));
	CKR(curandGetProperty(PATCH_LEVEL, &patch));
	printf("cuRAND %d (%d.%d.%d)\n", v, major, minor, patch);
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		generate_all((int)t, st, buf);
	orderings(buf);
	discrete(buf);
	tables(buf);
	errors(buf);
	CK(cudaStreamDestroy(st));
	CK(cudaFree(buf));
	printf("%s: %d failures\n", failures ? "FAILED" : "PASSED", failures);
	return failures ? 1 : 0;
}
