# SPDX-License-Identifier: MIT
"""NVML as Python programs use it: pynvml (nvidia-ml-py), which loads
libnvidia-ml.so.1 with ctypes, and PyTorch's GPU queries built on it.
What the GPU says of itself is printed; what moves (temperature, power,
utilisation, memory in use) is checked for sense.  Run natively and
through xcuda by run-frameworks.sh, which compares the two outputs."""

import pynvml as N


def show(what, fn, *args):
    try:
        v = fn(*args)
    except N.NVMLError as e:
        v = 'error: %s' % e
    print('%s: %s' % (what, v))


def main():
    N.nvmlInit()
    show('driver', N.nvmlSystemGetDriverVersion)
    show('cuda driver', N.nvmlSystemGetCudaDriverVersion_v2)
    n = N.nvmlDeviceGetCount()
    print('gpus:', n)
    for i in range(n):
        h = N.nvmlDeviceGetHandleByIndex(i)
        print('gpu', i)
        show('  name', N.nvmlDeviceGetName, h)
        show('  uuid', N.nvmlDeviceGetUUID, h)
        show('  pci', lambda d: N.nvmlDeviceGetPciInfo(d).busId, h)
        show('  memory total',
             lambda d: N.nvmlDeviceGetMemoryInfo(d).total, h)
        show('  compute mode', N.nvmlDeviceGetComputeMode, h)
        show('  persistence', N.nvmlDeviceGetPersistenceMode, h)
        show('  capability', N.nvmlDeviceGetCudaComputeCapability, h)
        show('  power limit', N.nvmlDeviceGetEnforcedPowerLimit, h)
        show('  mig', N.nvmlDeviceGetMigMode, h)
        show('  ecc', N.nvmlDeviceGetEccMode, h)
        show('  fan', N.nvmlDeviceGetFanSpeed, h)
        show('  same by uuid',
             lambda d: N.nvmlDeviceGetIndex(
                 N.nvmlDeviceGetHandleByUUID(N.nvmlDeviceGetUUID(d))), h)
        u = N.nvmlDeviceGetUtilizationRates(h)
        print('  utilization sane:', 0 <= u.gpu <= 100)
        t = N.nvmlDeviceGetTemperature(h, N.NVML_TEMPERATURE_GPU)
        print('  temperature sane:', 0 < t < 120)
        m = N.nvmlDeviceGetMemoryInfo(h)
        print('  used + free = total:', m.used + m.free == m.total)
        show('  processes listed',
             lambda d: isinstance(
                 N.nvmlDeviceGetComputeRunningProcesses(d), list), h)
    try:
        N.nvmlDeviceGetHandleByIndex(n)
    except N.NVMLError as e:
        print('handle past the count:', e)
    N.nvmlShutdown()

    try:
        import torch
    except ImportError:
        return
    # PyTorch's queries map CUDA's device to NVML's GPU themselves.
    print('torch sees', torch.cuda.device_count())
    for q in ('utilization', 'temperature', 'power_draw', 'clock_rate',
              'device_memory_used'):
        fn = getattr(torch.cuda, q, None)
        if fn is None:
            continue
        try:
            v = fn(0)
            print('torch.cuda.%s: %s' % (q, 'a number' if isinstance(
                v, (int, float)) and v >= 0 else v))
        except Exception as e:  # noqa: BLE001 - printed for the diff
            print('torch.cuda.%s: %s' % (q, type(e).__name__))


main()
