# SPDX-License-Identifier: MIT
"""PyTorch's training speed, as CSV rows of xcuda-bench's format
(metric,size_bytes,value,unit): an MLP's training steps per second
(forward, backward and SGD on a batch of 256, three 1024-wide layers),
the median of REPS timed runs of STEPS steps after a warm-up.  Run by
run-bench.sh natively and through xcuda-run."""
import sys
import time

import torch


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    steps = 200
    torch.manual_seed(0)
    dev = torch.device('cuda')
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = torch.randn(256, 512, device=dev)
    target = torch.randint(0, 10, (256,), device=dev)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(model(data), target).backward()
        opt.step()

    for _ in range(20):
        step()
    torch.cuda.synchronize()
    rates = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        rates.append(steps / (time.perf_counter() - t0))
    rates.sort()
    print('torch_mlp_train,0,%.1f,steps/s' % rates[len(rates) // 2])
    return 0


if __name__ == '__main__':
    sys.exit(main())
