"""Benchmarks of the layout copies; transpose shapes are (M, N), permute_copy (A, B, C)."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import row_inputs, run_rows


@pytest.mark.transpose
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_transpose(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        (x, ) = row_inputs("transpose", dtype, shape, [shape])
        out = torch.empty(shape[::-1], dtype=dtype, device="cuda")
        return lambda: ops.transpose(x, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, [(8192, 8192), (4096, 16384)], build)


@pytest.mark.permute_copy
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_permute_copy(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        (x, ) = row_inputs("permute_copy", dtype, shape, [shape])
        a, b, c = shape
        out = torch.empty((c, a, b), dtype=dtype, device="cuda")
        return lambda: ops.permute_copy(x, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, [(64, 1024, 1024), (256, 512, 256)], build)
