"""The pytest plugin bench/offset_probe.py loads first in every request: the
switches of its levels, read from the worker's environment.

OFFSET_PROBE_NVML=0: caliber_pytest's NVML reader sees no NVML, so the
timing plugin neither samples clocks nor paces (as on a machine without
nvidia-ml-py). OFFSET_PROBE_PLACEMENT=1: before the request's tests run, the
CUDA caching allocator gives its memory back to the driver and a buffer of a
random size (0 to 64 MiB) is held until the request ends, so that the
request's tensors land at fresh device addresses."""

import os
import random

_pad = []


def pytest_configure(config):
    if os.environ.get("OFFSET_PROBE_NVML") == "0":
        from caliber_pytest import _nvml

        _nvml._nvml = False


def pytest_sessionstart(session):
    if os.environ.get("OFFSET_PROBE_PLACEMENT") == "1":
        import torch

        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        _pad.append(torch.empty(random.randrange(0, 64 << 20) + 1, dtype=torch.uint8, device="cuda"))


def pytest_sessionfinish(session, exitstatus):
    if _pad:
        import torch

        _pad.clear()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
