"""Benchmarks of RMSNorm forward and backward; shapes are (M, N)."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import row_inputs, run_rows

SHAPES = [(16384, 4096), (4096, 8192)]
EPS = 1e-6


@pytest.mark.rms_norm_fwd
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_rms_norm_fwd(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        x, w = row_inputs("rms_norm_fwd", dtype, shape, [shape, shape[1:]])
        out = (torch.empty(shape, dtype=dtype, device="cuda"), torch.empty(shape[0], device="cuda"))
        return lambda: ops.rms_norm_fwd(x, w, EPS, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, SHAPES, build)


@pytest.mark.rms_norm_bwd
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_rms_norm_bwd(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        x, w, dy = row_inputs("rms_norm_bwd", dtype, shape, [shape, shape[1:], shape])
        rstd = torch.rsqrt(x.float().pow(2).mean(1) + EPS)  # the forward's, by torch outside the timed call
        out = (torch.empty_like(x), torch.empty_like(w))
        return lambda: ops.rms_norm_bwd(dy, x, w, rstd, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, SHAPES, build)
