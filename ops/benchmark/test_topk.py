"""Benchmark of topk (k=8) along rows; shapes are (M, N)."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import row_inputs, run_rows

K = 8


@pytest.mark.topk
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_topk(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        (x, ) = row_inputs("topk", dtype, shape, [shape])
        out = (torch.empty((shape[0], K), dtype=dtype, device="cuda"),
               torch.empty((shape[0], K), dtype=torch.int64, device="cuda"))
        return lambda: ops.topk(x, K, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, [(16384, 4096), (65536, 1024)], build)
