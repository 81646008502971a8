/* SPDX-License-Identifier: MIT */
/* driver_link's second input, a cubin: the function kernels_a.cu calls. */
__device__ float twice(float v)
{
	return 2.0f * v + 0.5f;
}
