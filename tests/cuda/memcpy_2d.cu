/* SPDX-License-Identifier: MIT */
/*
 * Pitched memory: cudaMallocPitch, cudaMemcpy2D H2D/D2D/D2H between
 * different pitches, a kernel that walks the pitch, cudaMemset2D and
 * cudaMemcpy2DAsync.  The pitch itself is not printed, only its properties.
 */
#include "common/xct.h"

__global__ void add_rowcol(unsigned char *p, size_t pitch, int w, int h)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x < w && y < h)
		p[(size_t)y * pitch + x] += (unsigned char)(x + 3 * y);
}

int main(void)
{
	CK(cudaSetDevice(0));
	const int W = 1000, H = 37, HP = 1003; /* host pitch */
	unsigned char *d;
	size_t pitch = 0;
	CK(cudaMallocPitch((void **)&d, &pitch, W, H));
	printf("pitch >= width: %s, pitch %% 32 == 0: %s\n",
	       pitch >= W ? "yes" : "no", pitch % 32 == 0 ? "yes" : "no");
	REQUIRE(pitch >= W, "pitch");

	unsigned char *src = (unsigned char *)malloc(HP * H);
	unsigned char *dst = (unsigned char *)malloc(W * H);
	unsigned char *want = (unsigned char *)malloc(W * H);
	REQUIRE(src && dst && want, "host malloc");
	xct_fill(src, HP * H, 2);
	CK(cudaMemcpy2D(d, pitch, src, HP, W, H, cudaMemcpyHostToDevice));
	dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
	add_rowcol<<<grid, block>>>(d, pitch, W, H);
	CKLAUNCH();
	CK(cudaMemcpy2D(dst, W, d, pitch, W, H, cudaMemcpyDeviceToHost));
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			want[y * W + x] = (unsigned char)(src[y * HP + x] + x +
							  3 * y);
	printf("h2d+kernel+d2h: match=%d fnv=%016llx\n",
	       memcmp(dst, want, W * H) == 0,
	       (unsigned long long)xct_fnv(dst, W * H));
	REQUIRE(memcmp(dst, want, W * H) == 0, "2D round trip");

	/* D2D: a 100x10 window at (50, 5) into a second pitched buffer at
	 * (7, 2), after cudaMemset2D cleared it to 0x99 */
	unsigned char *e;
	size_t epitch;
	CK(cudaMallocPitch((void **)&e, &epitch, 300, 20));
	CK(cudaMemset2D(e, epitch, 0x99, 300, 20));
	CK(cudaMemcpy2D(e + 2 * epitch + 7, epitch, d + 5 * pitch + 50, pitch,
			100, 10, cudaMemcpyDeviceToDevice));
	unsigned char win[300 * 20], wwin[300 * 20];
	CK(cudaMemcpy2D(win, 300, e, epitch, 300, 20, cudaMemcpyDeviceToHost));
	memset(wwin, 0x99, sizeof(wwin));
	for (int y = 0; y < 10; y++)
		memcpy(wwin + (y + 2) * 300 + 7, want + (y + 5) * W + 50, 100);
	printf("d2d window: match=%d fnv=%016llx\n",
	       memcmp(win, wwin, sizeof(win)) == 0,
	       (unsigned long long)xct_fnv(win, sizeof(win)));
	REQUIRE(memcmp(win, wwin, sizeof(win)) == 0, "2D d2d");

	/* cudaMemset2D on a sub-rectangle, cudaMemcpy2DAsync both ways */
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	CK(cudaMemset2DAsync(d + 3 * pitch + 10, pitch, 0, 20, 4, s));
	for (int y = 3; y < 7; y++)
		memset(want + y * W + 10, 0, 20);
	unsigned char *pin;
	CK(cudaMallocHost(&pin, W * H));
	CK(cudaMemcpy2DAsync(pin, W, d, pitch, W, H, cudaMemcpyDeviceToHost, s));
	CK(cudaStreamSynchronize(s));
	printf("memset2d async: match=%d fnv=%016llx\n",
	       memcmp(pin, want, W * H) == 0,
	       (unsigned long long)xct_fnv(pin, W * H));
	REQUIRE(memcmp(pin, want, W * H) == 0, "cudaMemset2DAsync");
	/* a narrow column copy: width 1 */
	unsigned char col[H];
	CK(cudaMemcpy2D(col, 1, d + 999, pitch, 1, H, cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int y = 0; y < H; y++)
		bad += col[y] != want[y * W + 999];
	printf("column copy: bad=%d\n", bad);
	REQUIRE(bad == 0, "column copy");
	/* H2D async from pinned memory with a host pitch larger than width */
	for (int i = 0; i < W * H; i++)
		pin[i] = (unsigned char)(i * 7);
	CK(cudaMemcpy2DAsync(e, epitch, pin, W, 300, 20, cudaMemcpyHostToDevice,
			     s));
	CK(cudaMemcpy2DAsync(win, 300, e, epitch, 300, 20,
			     cudaMemcpyDeviceToHost, s));
	CK(cudaStreamSynchronize(s));
	for (int y = 0; y < 20; y++)
		memcpy(wwin + y * 300, pin + y * W, 300);
	printf("h2d async: match=%d\n", memcmp(win, wwin, sizeof(win)) == 0);
	REQUIRE(memcmp(win, wwin, sizeof(win)) == 0, "2D async h2d");

	/* D2H into pageable memory with a host pitch larger than width: the
	 * bytes between the rows stay as they were */
	const int GP = W + 24;
	unsigned char *gap = (unsigned char *)malloc(GP * H);
	REQUIRE(gap, "host malloc");
	memset(gap, 0xee, GP * H);
	CK(cudaMemcpy2D(gap, GP, d, pitch, W, H, cudaMemcpyDeviceToHost));
	int gbad = 0;
	for (int y = 0; y < H; y++) {
		gbad += memcmp(gap + y * GP, want + y * W, W) != 0;
		for (int x = W; x < GP; x++)
			gbad += gap[y * GP + x] != 0xee;
	}
	printf("pitched d2h: bad=%d\n", gbad);
	REQUIRE(gbad == 0, "2D d2h into a pitched host buffer");
	free(gap);

	/* invalid: width larger than pitch */
	EXPECT(cudaErrorInvalidPitchValue,
	       cudaMemcpy2D(dst, 10, d, pitch, 20, 2, cudaMemcpyDeviceToHost));

	CK(cudaStreamDestroy(s));
	CK(cudaFreeHost(pin));
	CK(cudaFree(d));
	CK(cudaFree(e));
	free(src);
	free(dst);
	free(want);
	return xct_finish("memcpy_2d");
}
