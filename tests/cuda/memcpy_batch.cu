// SPDX-License-Identifier: MIT
/*
 * cudaMemcpyBatchAsync: host to device, device to host and device to
 * device copies in one batch, from pageable, pinned and stack memory,
 * with two groups of attributes; 3D batches with arrays and pointers;
 * and the arguments CUDA refuses.
 */
#include "common/xct.h"

int main(void)
{
	const size_t n = 1 << 20;
	unsigned char *page = (unsigned char *)malloc(n);
	unsigned char *back = (unsigned char *)malloc(n);
	unsigned char *pin, *pin_back, *d1, *d2, *d3;
	cudaStream_t s;
	int stack_val = 0x5a5a1234, stack_back = 0;

	CK(cudaSetDevice(0));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMallocHost(&pin, n));
	CK(cudaMallocHost(&pin_back, n));
	CK(cudaMalloc(&d1, n));
	CK(cudaMalloc(&d2, n));
	CK(cudaMalloc(&d3, n));
	for (size_t i = 0; i < n; i++) {
		page[i] = (unsigned char)(i * 7 + 1);
		pin[i] = (unsigned char)(i * 13 + 5);
	}

	/* Batch 1: two uploads and a stack value, in two attribute groups. */
	void *dst1[3] = { d1, d2, d3 };
	const void *src1[3] = { page, pin, &stack_val };
	size_t size1[3] = { n, n, sizeof(stack_val) };
	cudaMemcpyAttributes at[2];
	memset(at, 0, sizeof(at));
	at[0].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
	at[1].srcAccessOrder = cudaMemcpySrcAccessOrderDuringApiCall;
	size_t idx[2] = { 0, 2 };
	SHOW(cudaMemcpyBatchAsync(dst1, src1, size1, 3, at, idx, 2, s));
	stack_val = 0;		/* "during the call": already read */

	/* Batch 2: device to device, then everything back. */
	void *dst2[1] = { d2 + n / 2 };
	const void *src2[1] = { d1 };
	size_t size2[1] = { n / 2 };
	size_t idx0[1] = { 0 };
	CK(cudaStreamSynchronize(s));
	SHOW(cudaMemcpyBatchAsync(dst2, src2, size2, 1, at, idx0, 1, s));
	void *dst3[3] = { back, pin_back, &stack_back };
	const void *src3[3] = { d1, d2, d3 };
	size_t size3[3] = { n, n, sizeof(stack_back) };
	at[1].srcAccessOrder = cudaMemcpySrcAccessOrderAny;
	SHOW(cudaMemcpyBatchAsync(dst3, src3, size3, 3, at, idx, 2, s));
	CK(cudaStreamSynchronize(s));

	int bad_page = 0, bad_pin = 0;
	for (size_t i = 0; i < n; i++) {
		bad_page += back[i] != (unsigned char)(i * 7 + 1);
		unsigned char want = i < n / 2 ?
			(unsigned char)(i * 13 + 5) :
			(unsigned char)((i - n / 2) * 7 + 1);
		bad_pin += pin_back[i] != want;
	}
	printf("batch: pageable bad %d, pinned and d2d bad %d, stack %#x\n",
	       bad_page, bad_pin, stack_back);

	/* What CUDA refuses. */
	SHOW(cudaMemcpyBatchAsync(dst1, src1, size1, 0, at, idx, 1, s));
	SHOW(cudaMemcpyBatchAsync(dst1, src1, size1, 3, at, idx, 0, s));
	SHOW(cudaMemcpyBatchAsync(dst1, src1, size1, 1, at, idx, 2, s));
	size_t idx_bad[2] = { 1, 2 };
	SHOW(cudaMemcpyBatchAsync(dst1, src1, size1, 3, at, idx_bad, 2, s));
	size_t idx_down[2] = { 0, 0 };
	SHOW(cudaMemcpyBatchAsync(dst1, src1, size1, 3, at, idx_down, 2, s));
	at[0].srcAccessOrder = cudaMemcpySrcAccessOrderInvalid;
	SHOW(cudaMemcpyBatchAsync(dst1, src1, size1, 3, at, idx, 2, s));
	at[0].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
	SHOW(cudaMemcpyBatchAsync(dst1, src1, size1, 3, at, idx, 2, 0));
	SHOW(cudaMemcpyBatchAsync(NULL, src1, size1, 3, at, idx, 2, s));
	CK(cudaStreamSynchronize(s));

	/* 3D batches: host to array, array to device, a box between two
	 * pointers with their own row and layer lengths. */
	{
		const size_t W = 64, H = 32, D = 4, N = W * H * D;
		float *hf = (float *)malloc(N * 4), *hb = (float *)malloc(N * 4);
		float *df;
		cudaArray_t arr;
		cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();

		for (size_t i = 0; i < N; i++)
			hf[i] = (float)i * 0.5f;
		CK(cudaMalloc3DArray(&arr, &fd, make_cudaExtent(W, H, D)));
		CK(cudaMalloc(&df, N * 4));
		cudaMemcpy3DBatchOp op[2];
		memset(op, 0, sizeof(op));
		op[0].src.type = cudaMemcpyOperandTypePointer;
		op[0].src.op.ptr.ptr = hf;
		op[0].dst.type = cudaMemcpyOperandTypeArray;
		op[0].dst.op.array.array = arr;
		op[0].extent = make_cudaExtent(W, H, D);
		op[0].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
		SHOW(cudaMemcpy3DBatchAsync(1, op, 0, s));
		op[1].src.type = cudaMemcpyOperandTypeArray;
		op[1].src.op.array.array = arr;
		op[1].src.op.array.offset.x = 8;
		op[1].src.op.array.offset.y = 4;
		op[1].src.op.array.offset.z = 1;
		op[1].dst.type = cudaMemcpyOperandTypePointer;
		op[1].dst.op.ptr.ptr = df;
		op[1].dst.op.ptr.rowLength = W;
		op[1].dst.op.ptr.layerHeight = H;
		op[1].extent = make_cudaExtent(16, 8, 2);
		op[1].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
		CK(cudaStreamSynchronize(s));
		CK(cudaMemset(df, 0, N * 4));
		SHOW(cudaMemcpy3DBatchAsync(1, &op[1], 0, s));
		CK(cudaStreamSynchronize(s));
		CK(cudaMemcpy(hb, df, N * 4, cudaMemcpyDeviceToHost));
		int bad3 = 0;
		for (size_t z = 0; z < 2; z++)
			for (size_t y = 0; y < 8; y++)
				for (size_t x = 0; x < 16; x++)
					bad3 += hb[(z * H + y) * W + x] !=
						hf[((z + 1) * H + y + 4) * W +
						   x + 8];
		printf("3D batch: array box bad %d\n", bad3);

		/* Pointer to pointer: bytes, a box of a padded layout. */
		cudaMemcpy3DBatchOp pp;
		memset(&pp, 0, sizeof(pp));
		pp.src.type = cudaMemcpyOperandTypePointer;
		pp.src.op.ptr.ptr = hf;
		pp.src.op.ptr.rowLength = W * 4;
		pp.src.op.ptr.layerHeight = H;
		pp.dst.type = cudaMemcpyOperandTypePointer;
		pp.dst.op.ptr.ptr = df;
		pp.extent = make_cudaExtent(32, 4, 2);
		pp.srcAccessOrder = cudaMemcpySrcAccessOrderDuringApiCall;
		SHOW(cudaMemcpy3DBatchAsync(1, &pp, 0, s));
		CK(cudaStreamSynchronize(s));
		CK(cudaMemcpy(hb, df, 32 * 4 * 2, cudaMemcpyDeviceToHost));
		const unsigned char *src = (const unsigned char *)hf;
		const unsigned char *got = (const unsigned char *)hb;
		int badp = 0;
		for (size_t z = 0; z < 2; z++)
			for (size_t y = 0; y < 4; y++)
				for (size_t x = 0; x < 32; x++)
					badp += got[(z * 4 + y) * 32 + x] !=
						src[(z * H + y) * W * 4 + x];
		printf("3D batch: pointer box bad %d\n", badp);

		SHOW(cudaMemcpy3DBatchAsync(0, op, 0, s));
		SHOW(cudaMemcpy3DBatchAsync(1, op, 1, s));
		SHOW(cudaMemcpy3DBatchAsync(1, NULL, 0, s));
		op[0].extent = make_cudaExtent(W, 0, D);
		SHOW(cudaMemcpy3DBatchAsync(1, op, 0, s));
		op[0].extent = make_cudaExtent(W, H, D);
		op[0].srcAccessOrder = cudaMemcpySrcAccessOrderInvalid;
		SHOW(cudaMemcpy3DBatchAsync(1, op, 0, s));
		op[0].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
		op[0].src.op.ptr.rowLength = W - 1;
		SHOW(cudaMemcpy3DBatchAsync(1, op, 0, s));
		SHOW(cudaMemcpy3DBatchAsync(1, op, 0, 0));
		CK(cudaStreamSynchronize(s));
		CK(cudaFreeArray(arr));
		CK(cudaFree(df));
		free(hf);
		free(hb);
	}

	CK(cudaFree(d1));
	CK(cudaFree(d2));
	CK(cudaFree(d3));
	CK(cudaFreeHost(pin));
	CK(cudaFreeHost(pin_back));
	CK(cudaStreamDestroy(s));
	free(page);
	free(back);
	return xct_finish("memcpy_batch");
}
