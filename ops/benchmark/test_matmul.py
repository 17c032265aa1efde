"""Benchmarks of the matrix products; shapes are (M, N, K), bmm (batch, M, N, K)."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import row_inputs, run_rows

SHAPES = [(4096, 4096, 4096), (2048, 2048, 2048), (8192, 4096, 1024)]


@pytest.mark.matmul
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
])
def test_perf_matmul(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        m, n, k = shape
        a, b = row_inputs("matmul", dtype, shape, [(m, k), (k, n)])
        out = torch.empty((m, n), dtype=dtype, device="cuda")
        return lambda: ops.matmul(a, b, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, SHAPES, build)


@pytest.mark.bmm
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
])
def test_perf_bmm(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        batch, m, n, k = shape
        a, b = row_inputs("bmm", dtype, shape, [(batch, m, k), (batch, k, n)])
        out = torch.empty((batch, m, n), dtype=dtype, device="cuda")
        return lambda: ops.bmm(a, b, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, [(32, 1024, 1024, 1024), (64, 512, 512, 512)], build)


@pytest.mark.matmul_bias
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
])
def test_perf_matmul_bias(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        m, n, k = shape
        a, b, bias = row_inputs("matmul_bias", dtype, shape, [(m, k), (k, n), (n, )])
        out = torch.empty((m, n), dtype=dtype, device="cuda")
        return lambda: ops.matmul_bias(a, b, bias, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, SHAPES[:2], build)


@pytest.mark.matmul_bias_gelu
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
])
def test_perf_matmul_bias_gelu(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        m, n, k = shape
        a, b, bias = row_inputs("matmul_bias_gelu", dtype, shape, [(m, k), (k, n), (n, )])
        out = torch.empty((m, n), dtype=dtype, device="cuda")
        return lambda: ops.matmul_bias_gelu(a, b, bias, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, SHAPES[:2], build)
