"""A corpus benchmark that times itself with triton.testing.do_bench, as many
corpora do; the compat plugin must turn each call into a caliber timing row."""

import torch
import triton.testing

import caliber_ops as ops


def test_own_timing():
    x = torch.randn(4096, 1024, device="cuda", dtype=torch.float16)
    out = torch.empty(4096, device="cuda", dtype=torch.float16)
    median = triton.testing.do_bench(lambda: ops.sum_rows(x, out=out), return_mode="median")
    assert isinstance(median, float) and median > 0
    quantiles = triton.testing.do_bench(lambda: ops.sum_rows(x, out=out), quantiles=[0.5, 0.2, 0.8])
    assert isinstance(quantiles, list) and len(quantiles) == 3 and all(q > 0 for q in quantiles)
