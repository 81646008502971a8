/* SPDX-License-Identifier: MIT */
/*
 * Device queries and calls that programs use around their main work:
 * peer access and peer copies, capture status, a stream's device,
 * cudaInitDevice, cudaChooseDevice, the 1D linear texture limit, the
 * dynamic shared memory left for a kernel, copying stream attributes,
 * RDMA write flushes, atomic capabilities, cudaSetValidDevices.  Results
 * and error names only.
 */
#include "common/xct.h"

__global__ void scale(float *p, int n, float k)
{
	extern __shared__ float tmp[];
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		tmp[threadIdx.x] = p[i];
		p[i] = tmp[threadIdx.x] * k;
	}
}

#define SHOWV(call, fmt, v)                                               \
	do {                                                              \
		cudaError_t e_ = (call);                                  \
		printf("%s -> %s", #call, cudaGetErrorName(e_));          \
		if (e_ == cudaSuccess)                                    \
			printf(", " fmt, v);                              \
		printf("\n");                                             \
		cudaGetLastError();                                       \
	} while (0)

int main(void)
{
	int n = 0, v = -1;

	CK(cudaGetDeviceCount(&n));
	CK(cudaSetDevice(0));
	printf("devices: %s\n", n > 1 ? "several" : "one");

	/* Peers: with one device, the device and itself. */
	SHOWV(cudaDeviceCanAccessPeer(&v, 0, 0), "%d", v);
	SHOWV(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported,
					0, 0), "%d", v);
	SHOWV(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrPerformanceRank,
					0, 99), "%d", v);
	SHOW(cudaDeviceEnablePeerAccess(0, 0));
	SHOW(cudaDeviceDisablePeerAccess(0));
	if (n > 1) {
		SHOWV(cudaDeviceCanAccessPeer(&v, 0, 1), "%d", v);
		SHOWV(cudaDeviceCanAccessPeer(&v, 1, 0), "%d", v);
	}

	/* Peer copies between buffers of device 0. */
	const int len = 1 << 16;
	float *a, *b, *h = (float *)malloc(len * sizeof(float));
	cudaStream_t s, s2;
	for (int i = 0; i < len; i++)
		h[i] = (float)i;
	CK(cudaMalloc(&a, len * sizeof(float)));
	CK(cudaMalloc(&b, len * sizeof(float)));
	CK(cudaStreamCreate(&s));
	CK(cudaStreamCreateWithPriority(&s2, cudaStreamNonBlocking, -1));
	CK(cudaMemcpy(a, h, len * sizeof(float), cudaMemcpyHostToDevice));
	SHOW(cudaMemcpyPeer(b, 0, a, 0, len * sizeof(float)));
	scale<<<len / 256, 256, 256 * sizeof(float), s>>>(b, len, 2.0f);
	CKLAUNCH();
	SHOW(cudaMemcpyPeerAsync(a, 0, b, 0, len * sizeof(float), s));
	CK(cudaStreamSynchronize(s));
	CK(cudaMemcpy(h, a, len * sizeof(float), cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < len; i++)
		bad += h[i] != 2.0f * i;
	printf("peer copies: bad=%d\n", bad);
	SHOW(cudaMemcpyPeer(b, 0, a, 99, 16));

	/* Streams: capture status, device, attributes copied. */
	cudaStreamCaptureStatus cs = cudaStreamCaptureStatusInvalidated;
	SHOWV(cudaStreamIsCapturing(s, &cs), "%d", (int)cs);
	SHOWV(cudaStreamIsCapturing(0, &cs), "%d", (int)cs);
	SHOWV(cudaStreamGetDevice(s, &v), "%d", v);
	SHOWV(cudaStreamGetDevice(cudaStreamPerThread, &v), "%d", v);
	cudaLaunchAttributeValue val, got;
	memset(&val, 0, sizeof(val));
	val.priority = -2;
	SHOW(cudaStreamSetAttribute(s2, cudaLaunchAttributePriority, &val));
	SHOW(cudaStreamCopyAttributes(s, s2));
	memset(&got, 0, sizeof(got));
	SHOWV(cudaStreamGetAttribute(s, cudaLaunchAttributePriority, &got),
	      "%d", got.priority);

	/* Device selection and limits. */
	SHOW(cudaInitDevice(0, 0, 0));
	SHOW(cudaInitDevice(99, 0, 0));
	cudaDeviceProp want;
	memset(&want, 0, sizeof(want));
	want.major = 9;
	SHOWV(cudaChooseDevice(&v, &want), "%d", v);
	SHOW(cudaChooseDevice(&v, NULL));
	cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
	size_t w = 0;
	SHOWV(cudaDeviceGetTexture1DLinearMaxWidth(&w, &fd, 0), "%zu", w);
	fd = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindSigned);
	SHOWV(cudaDeviceGetTexture1DLinearMaxWidth(&w, &fd, 0), "%zu", w);
	size_t smem = 0;
	SHOWV(cudaOccupancyAvailableDynamicSMemPerBlock(&smem, scale, 4, 256),
	      "%zu", smem);
	SHOWV(cudaOccupancyAvailableDynamicSMemPerBlock(&smem, scale, 4, 4096),
	      "%zu", smem);
	SHOW(cudaDeviceFlushGPUDirectRDMAWrites(
		cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
		cudaFlushGPUDirectRDMAWritesToOwner));

	/* Atomic capabilities, several operations at once. */
	cudaAtomicOperation ops[4] = { cudaAtomicOperationIntegerAdd,
				       cudaAtomicOperationCAS,
				       cudaAtomicOperationFloatAdd,
				       cudaAtomicOperationFloatMax };
	unsigned int caps[4] = { 77, 77, 77, 77 };
	cudaError_t e = cudaDeviceGetHostAtomicCapabilities(caps, ops, 4, 0);
	printf("host atomic capabilities -> %s: %#x %#x %#x %#x\n",
	       cudaGetErrorName(e), caps[0], caps[1], caps[2], caps[3]);
	cudaGetLastError();
	for (int i = 0; i < 4; i++)
		caps[i] = 77;
	e = cudaDeviceGetP2PAtomicCapabilities(caps, ops, 4, 0, 0);
	printf("p2p atomic capabilities -> %s: %#x %#x %#x %#x\n",
	       cudaGetErrorName(e), caps[0], caps[1], caps[2], caps[3]);
	cudaGetLastError();

	int valid[1] = { 0 };
	SHOW(cudaSetValidDevices(valid, 1));
	int invalid[1] = { 99 };
	SHOW(cudaSetValidDevices(invalid, 1));

	/* The L2's persisting lines; the deprecated bank configuration. */
	SHOW(cudaCtxResetPersistingL2Cache());
	enum cudaSharedMemConfig smc = cudaSharedMemBankSizeFourByte;
	SHOWV(cudaDeviceGetSharedMemConfig(&smc), "%d", (int)smc);
	SHOW(cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte));
	SHOWV(cudaDeviceGetSharedMemConfig(&smc), "%d", (int)smc);
	SHOW(cudaDeviceSetSharedMemConfig((enum cudaSharedMemConfig)7));

	/* Pools by memory location (CUDA 13). */
	cudaMemPool_t dp = NULL, cp = NULL, hp = NULL;
	cudaMemLocation loc;
	memset(&loc, 0, sizeof(loc));
	loc.type = cudaMemLocationTypeDevice;
	loc.id = 0;
	SHOW(cudaMemGetDefaultMemPool(&dp, &loc, cudaMemAllocationTypePinned));
	SHOW(cudaMemGetMemPool(&cp, &loc, cudaMemAllocationTypePinned));
	printf("current pool is the default: %d\n", dp && cp == dp);
	SHOW(cudaMemSetMemPool(&loc, cudaMemAllocationTypePinned, dp));
	loc.type = cudaMemLocationTypeHost;
	SHOW(cudaMemGetDefaultMemPool(&hp, &loc, cudaMemAllocationTypePinned));
	printf("host pool is another: %d\n", hp != NULL && hp != dp);
	loc.type = cudaMemLocationTypeDevice;
	loc.id = 99;
	SHOW(cudaMemGetDefaultMemPool(&dp, &loc, cudaMemAllocationTypePinned));
	SHOW(cudaMemGetDefaultMemPool(NULL, &loc, cudaMemAllocationTypePinned));

	/* Graph memory: nothing allocated by graphs here. */
	unsigned long long gm = 77;
	SHOW(cudaDeviceGraphMemTrim(0));
	SHOW(cudaDeviceGraphMemTrim(99));
	SHOWV(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent,
					     &gm), "%llu", gm);
	SHOWV(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemHigh,
					     &gm), "%llu", gm);
	gm = 0;
	SHOW(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh,
					    &gm));
	gm = 5;
	SHOW(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh,
					    &gm));
	SHOW(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent,
					    &gm));

	CK(cudaStreamDestroy(s));
	CK(cudaStreamDestroy(s2));
	CK(cudaFree(a));
	CK(cudaFree(b));
	free(h);
	return xct_finish("device_misc");
}
