"""Benchmark of cumsum along rows; shapes are (M, N)."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import row_inputs, run_rows


@pytest.mark.cumsum
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_cumsum(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        (x, ) = row_inputs("cumsum", dtype, shape, [shape])
        out = torch.empty(shape, dtype=dtype, device="cuda")
        return lambda: ops.cumsum(x, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, [(16384, 4096), (4096, 16384)], build)
