"""Benchmarks of softmax and log_softmax over rows and columns; shapes are (M, N)."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import row_inputs, run_rows

ROW_SHAPES = [(16384, 8192), (65536, 1024)]
COL_SHAPES = [(8192, 8192), (1024, 65536)]


def _bench(op, fn, default, dtype, caliber_bench, caliber_shapes):
    """Time fn(x, out=...) with an output of x's shape."""
    def build(shape):
        (x, ) = row_inputs(op, dtype, shape, [shape])
        out = torch.empty(shape, dtype=dtype, device="cuda")
        return lambda: fn(x, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, default, build)


@pytest.mark.softmax_rows
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_softmax_rows(dtype, caliber_bench, caliber_shapes):
    _bench("softmax_rows", ops.softmax_rows, ROW_SHAPES, dtype, caliber_bench, caliber_shapes)


@pytest.mark.log_softmax_rows
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_log_softmax_rows(dtype, caliber_bench, caliber_shapes):
    _bench("log_softmax_rows", ops.log_softmax_rows, ROW_SHAPES, dtype, caliber_bench, caliber_shapes)


@pytest.mark.softmax_cols
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_softmax_cols(dtype, caliber_bench, caliber_shapes):
    _bench("softmax_cols", ops.softmax_cols, COL_SHAPES, dtype, caliber_bench, caliber_shapes)


@pytest.mark.log_softmax_cols
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_log_softmax_cols(dtype, caliber_bench, caliber_shapes):
    _bench("log_softmax_cols", ops.log_softmax_cols, COL_SHAPES, dtype, caliber_bench, caliber_shapes)
