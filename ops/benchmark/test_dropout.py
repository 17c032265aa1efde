"""Benchmark of dropout (p=0.1); shapes are (M, N)."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import row_inputs, run_rows

SHAPES = [(16384, 8192), (4096, 4096)]


@pytest.mark.dropout
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_dropout(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        (x, ) = row_inputs("dropout", dtype, shape, [shape])
        out = torch.empty(shape, dtype=dtype, device="cuda")
        return lambda: ops.dropout(x, 0.1, 1234, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, SHAPES, build)
