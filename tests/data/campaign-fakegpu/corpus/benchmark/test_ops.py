"""Benchmarks of the fake-GPU corpus, timed by caliber's timing plugin."""
import pytest
import torch

import fakeops


@pytest.mark.mm
@pytest.mark.parametrize("dtype", [pytest.param(torch.float16, id="float16"), pytest.param(torch.bfloat16, id="bfloat16")])
def test_perf_mm(dtype, caliber_bench, caliber_shapes):
    for m, n, k in caliber_shapes([(1024, 1024, 1024), (2048, 512, 4096)]):
        a, b = torch.randn((m, k), dtype=dtype), torch.randn((k, n), dtype=dtype)
        out = torch.empty((m, n), dtype=dtype)
        caliber_bench(lambda: fakeops.mm(a, b, out), row=f"{m}x{n}x{k}", shape=f"{m}x{n}x{k}", dtype=dtype)


@pytest.mark.scale
@pytest.mark.parametrize("dtype", [pytest.param(torch.float16, id="float16"), pytest.param(torch.bfloat16, id="bfloat16")])
def test_perf_scale(dtype, caliber_bench, caliber_shapes):
    for (n, ) in caliber_shapes([(1 << 20, ), (1 << 24, )]):
        x, out = torch.randn((n, ), dtype=dtype), torch.empty((n, ), dtype=dtype)
        caliber_bench(lambda: fakeops.scale(x, 2.0, out), row=str(n), shape=str(n), dtype=dtype)
