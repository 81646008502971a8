# SPDX-License-Identifier: MIT
"""CuPy on the GPU, printed so that two runs on the same GPU and the same
libraries print the same text: natively, and through xcuda
(tests/frameworks/run-frameworks.sh compares them).  Needs a CuPy built
against the shared CUDA runtime (tests/frameworks/build-cupy.sh) on
PYTHONPATH: the wheels' static runtime cannot run on xcuda.

Array creation and the random generator (CuPy's own kernels, linked in by
nvcc and registered through the runtime); elementwise operations and
reductions (kernels compiled by NVRTC at run time), with CUB and Thrust
(sort, cumsum); ElementwiseKernel, ReductionKernel and RawKernel; matmul
in fp32 and fp16 (cuBLAS) and FFTs (cuFFT) against NumPy; streams and
events; the runtime's device queries.
"""
import sys

import numpy as np

import cupy as cp


def show(name, a):
    """An array's shape, dtype and a weighted checksum, on the host."""
    h = cp.asnumpy(a)
    f = h.astype(np.float64).ravel()
    w = np.arange(1, f.size + 1, dtype=np.float64) % 7 + 1
    print('%s: %s %s %.10g' % (name, h.shape, h.dtype, float((f * w).sum())))


def main():
    print('cupy', cp.__version__)
    rt = cp.cuda.runtime
    print('runtime version:', rt.runtimeGetVersion())
    print('devices:', rt.getDeviceCount())
    props = rt.getDeviceProperties(0)
    name = props['name']
    print('name:', name.decode() if isinstance(name, bytes) else name)
    print('capability: %d.%d' % (props['major'], props['minor']))
    free, total = rt.memGetInfo()
    print('memGetInfo free <= total:', 0 < free <= total)

    # Creation.
    z = cp.zeros((3, 4), dtype=cp.float32)
    show('zeros', z)
    a = cp.arange(1000, dtype=cp.float64)
    show('arange', a)
    h = np.linspace(-1, 1, 1000).reshape(40, 25)
    b = cp.asarray(h)
    print('asarray round trip:', bool((cp.asnumpy(b) == h).all()))
    rng = cp.random.default_rng(1234)
    r = rng.random((256, 128), dtype=cp.float64)
    show('default_rng random', r)
    n = rng.standard_normal(10000, dtype=cp.float32)
    print('standard_normal mean %.2f std %.2f' % (float(n.mean()),
                                                  float(n.std())))

    # Elementwise and reductions (NVRTC).
    show('a*a+1', a * a + 1)
    show('sin exp', cp.sin(b) * cp.exp(b))
    print('sum %.6f mean %.6f max %.6f argmax %d' % (
        float(a.sum()), float(b.mean()), float((a * 0.5).max()),
        int((cp.sin(a)).argmax())))
    show('sum axis 0', b.sum(axis=0))
    show('mean axis 1', b.mean(axis=1))
    show('max axis 1', r.max(axis=1))
    show('argmax axis 0', r.argmax(axis=0))
    show('where', cp.where(b > 0, b, -2 * b))
    show('cumsum', cp.cumsum(r[0]))
    show('sort', cp.sort(r[1]))
    show('argsort', cp.argsort(r[2]))
    print('reductions agree with numpy:', bool(
        np.allclose(cp.asnumpy(r.sum(axis=1)), cp.asnumpy(r).sum(axis=1))))

    # User kernels.
    sq_diff = cp.ElementwiseKernel(
        'T x, T y', 'T z', 'z = (x - y) * (x - y)', 'xcuda_sq_diff')
    show('ElementwiseKernel', sq_diff(a, a[::-1].copy()))
    l2 = cp.ReductionKernel(
        'T x', 'T y', 'x * x', 'a + b', 'y = sqrt(a)', '0', 'xcuda_l2')
    show('ReductionKernel', l2(b, axis=1))
    add = cp.RawKernel(r'''
extern "C" __global__ void xcuda_add(const float *x, const float *y,
                                     float *z, int n)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n)
        z[i] = x[i] + 2.0f * y[i];
}
''', 'xcuda_add')
    nel = 5000
    x = cp.arange(nel, dtype=cp.float32)
    y = cp.full(nel, 0.25, dtype=cp.float32)
    out = cp.empty_like(x)
    add(((nel + 255) // 256,), (256,), (x, y, out, cp.int32(nel)))
    show('RawKernel', out)
    print('RawKernel right:', bool((cp.asnumpy(out) ==
                                    np.arange(nel, dtype=np.float32) +
                                    0.5).all()))

    # Matmul (cuBLAS).
    hx = np.random.RandomState(0).standard_normal((128, 96))
    hy = np.random.RandomState(1).standard_normal((96, 64))
    for dt, tol in ((np.float32, 1e-4), (np.float16, 2e-2)):
        gx = cp.asarray(hx.astype(dt))
        gy = cp.asarray(hy.astype(dt))
        g = cp.matmul(gx, gy)
        ref = hx.astype(dt).astype(np.float64) @ hy.astype(dt).astype(
            np.float64)
        got = cp.asnumpy(g).astype(np.float64)
        print('matmul %s: %s %s close to numpy: %s' % (
            np.dtype(dt).name, g.shape, g.dtype,
            bool(np.allclose(got, ref, rtol=tol, atol=tol * 10))))
    bm = cp.matmul(cp.asarray(hx.astype(np.float32)).reshape(4, 32, 96),
                   cp.asarray(hy.astype(np.float32)))
    print('batched matmul:', bm.shape, bm.dtype)

    # FFTs (cuFFT) against NumPy's.
    hs = np.random.RandomState(2).standard_normal((8, 128))
    f = cp.fft.fft(cp.asarray(hs))
    print('fft close to numpy:',
          bool(np.allclose(cp.asnumpy(f), np.fft.fft(hs), atol=1e-9)))
    rf = cp.fft.irfft2(cp.fft.rfft2(cp.asarray(hs)), s=hs.shape)
    show('rfft2 then irfft2', rf)

    # Streams and events.
    s = cp.cuda.Stream(non_blocking=True)
    start = cp.cuda.Event()
    end = cp.cuda.Event()
    with s:
        start.record()
        p = cp.arange(1 << 20, dtype=cp.float32)
        for _ in range(20):
            p = p * 1.0001 + 1
        q = p.sum()
        end.record()
    s.synchronize()
    end.synchronize()
    print('stream done:', s.done, 'event done:', end.done)
    print('elapsed_time > 0:', cp.cuda.get_elapsed_time(start, end) > 0)
    print('stream result %.3f' % float(q))
    cp.cuda.Device(0).synchronize()
    pool = cp.get_default_memory_pool()
    print('memory pool in use > 0:', pool.used_bytes() > 0)
    return 0


if __name__ == '__main__':
    sys.exit(main())
