"""Benchmark of cumsum along rows; shapes are (M, N)."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import dtype_params, row_inputs, run_rows


@pytest.mark.cumsum
@pytest.mark.parametrize("dtype", dtype_params("cumsum"))
def test_perf_cumsum(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        (x, ) = row_inputs("cumsum", dtype, shape, [shape])
        out = torch.empty(shape, dtype=dtype, device="cuda")
        return lambda: ops.cumsum(x, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, [(16384, 4096), (4096, 16384)], build)
