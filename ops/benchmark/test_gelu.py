"""Benchmarks of GELU forward and backward; shapes are (M, N)."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import row_inputs, run_rows

SHAPES = [(16384, 8192), (4096, 4096)]


@pytest.mark.gelu_fwd
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_gelu_fwd(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        (x, ) = row_inputs("gelu_fwd", dtype, shape, [shape])
        out = torch.empty(shape, dtype=dtype, device="cuda")
        return lambda: ops.gelu_fwd(x, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, SHAPES, build)


@pytest.mark.gelu_bwd
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_gelu_bwd(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        dy, x = row_inputs("gelu_bwd", dtype, shape, [shape, shape])
        out = torch.empty(shape, dtype=dtype, device="cuda")
        return lambda: ops.gelu_bwd(dy, x, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, SHAPES, build)
