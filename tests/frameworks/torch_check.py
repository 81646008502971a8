# SPDX-License-Identifier: MIT
"""PyTorch on the GPU, printed so that two runs on the same GPU and the
same libraries print the same text: natively, and through xcuda
(tests/frameworks/run-frameworks.sh compares them).

Tensors, elementwise operations and reductions; matmul in fp32, fp16 and
bf16 (cuBLAS and cuBLASLt: nn.Linear's bias is a cuBLASLt epilogue);
FFTs (cuFFT), half precision included;
streams, events and pinned memory; the caching allocator with
expandable segments (the driver's virtual memory API); 50 steps of an
MLP's training with deterministic algorithms and a fixed seed.
"""
import os
import sys

os.environ.setdefault('PYTORCH_CUDA_ALLOC_CONF', 'expandable_segments:True')
os.environ.setdefault('CUBLAS_WORKSPACE_CONFIG', ':4096:8')

import torch  # noqa: E402


def show(name, t):
    """A tensor's checksum, exact to the bit."""
    t = t.detach().double().cpu()
    w = torch.arange(1, t.numel() + 1, dtype=torch.float64) % 7 + 1
    print('%s: %s %.10g' % (name, tuple(t.shape), float((t.flatten() * w)
                                                          .sum())))


def main():
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print('cuda available:', torch.cuda.is_available())
    print('devices:', torch.cuda.device_count())
    print('capability:', torch.cuda.get_device_capability(0))
    dev = torch.device('cuda')

    # Creation, elementwise, reductions.
    a = torch.arange(1000, dtype=torch.float32, device=dev)
    b = torch.linspace(-1, 1, 1000, device=dev)
    show('arange*linspace+1', a * b + 1)
    show('sin exp', torch.sin(b) * torch.exp(b))
    print('sum %.6f mean %.6f max %.6f argmin %d' % (
        a.sum().item(), b.mean().item(), (a * b).max().item(),
        (a * b).argmin().item()))
    show('cumsum', torch.cumsum(b, 0))
    r = torch.randn(256, 256, device=dev)
    show('randn', r)
    show('softmax', torch.softmax(r, dim=1))
    show('sort', torch.sort(r[0])[0])

    # Matmul: cuBLAS (fp32, fp16 and bf16 GemmEx) and batched.
    x = torch.randn(128, 96, device=dev)
    y = torch.randn(96, 64, device=dev)
    show('matmul fp32', x @ y)
    show('matmul fp16', x.half() @ y.half())
    show('matmul bf16', x.bfloat16() @ y.bfloat16())
    show('bmm', torch.bmm(x.view(4, 32, 96), y.expand(4, 96, 64)))
    show('addmm (cuBLASLt)', torch.addmm(torch.ones(64, device=dev), x, y))
    show('mv', torch.mv(x, y[:, 0]))
    show('dot', torch.dot(x[0], x[1]))

    # FFTs (cuFFT): complex, real, 2D, and half precision.
    show('fft', torch.view_as_real(torch.fft.fft(r[:4].contiguous())))
    show('rfft', torch.view_as_real(torch.fft.rfft(r[0])))
    show('irfft(rfft)', torch.fft.irfft(torch.fft.rfft(r[0]), n=256))
    show('fft2', torch.view_as_real(torch.fft.fft2(r[:32, :64])))
    show('fft fp16', torch.view_as_real(torch.fft.fft(r[0, :64].half())))

    # Streams, events, pinned memory.
    s = torch.cuda.Stream()
    e = torch.cuda.Event()
    pinned = torch.arange(4096, dtype=torch.float32).pin_memory()
    print('pinned:', pinned.is_pinned())
    with torch.cuda.stream(s):
        g = pinned.to(dev, non_blocking=True) * 2
        e.record(s)
    e.wait(torch.cuda.current_stream())
    back = torch.empty(4096, dtype=torch.float32).pin_memory()
    back.copy_(g, non_blocking=True)
    torch.cuda.synchronize()
    print('event done:', e.query())
    show('stream copy', back)

    # The caching allocator with expandable segments.
    before = torch.cuda.memory_allocated()
    big = [torch.empty(1 << 22, device=dev) for _ in range(8)]
    print('allocated +%d MiB' % ((torch.cuda.memory_allocated() - before)
                                 >> 20))
    del big
    torch.cuda.empty_cache()
    print('allocator conf:', os.environ['PYTORCH_CUDA_ALLOC_CONF'])

    # An MLP's training, deterministic.
    torch.manual_seed(1234)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    data = torch.randn(512, 64, device=dev)
    target = torch.randint(0, 10, (512,), device=dev)
    loss_fn = torch.nn.CrossEntropyLoss()
    for step in range(50):
        opt.zero_grad()
        loss = loss_fn(model(data), target)
        loss.backward()
        opt.step()
        if step % 10 == 9 or step == 0:
            print('step %2d loss %.8f' % (step + 1, loss.item()))
    show('final weights', model[0].weight)
    return 0


if __name__ == '__main__':
    sys.exit(main())
