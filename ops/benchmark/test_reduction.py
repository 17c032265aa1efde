"""Benchmarks of the row and column reductions; shapes are (M, N)."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import row_inputs, run_rows

ROW_SHAPES = [(16384, 8192), (65536, 1024)]
COL_SHAPES = [(8192, 16384), (32768, 2048)]


def _bench_rows(op, fn, out_dtype, dtype, caliber_bench, caliber_shapes):
    """Time fn(x, out=...) over the row shapes: one output per row."""
    def build(shape):
        (x, ) = row_inputs(op, dtype, shape, [shape])
        out = torch.empty(shape[0], dtype=out_dtype or dtype, device="cuda")
        return lambda: fn(x, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, ROW_SHAPES, build)


def _bench_cols(op, fn, dtype, caliber_bench, caliber_shapes):
    """Time fn(x, out=...) over the column shapes: one output per column."""
    def build(shape):
        (x, ) = row_inputs(op, dtype, shape, [shape])
        out = torch.empty(shape[1], dtype=dtype, device="cuda")
        return lambda: fn(x, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, COL_SHAPES, build)


@pytest.mark.sum_rows
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_sum_rows(dtype, caliber_bench, caliber_shapes):
    _bench_rows("sum_rows", ops.sum_rows, None, dtype, caliber_bench, caliber_shapes)


@pytest.mark.max_rows
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_max_rows(dtype, caliber_bench, caliber_shapes):
    _bench_rows("max_rows", ops.max_rows, None, dtype, caliber_bench, caliber_shapes)


@pytest.mark.argmax_rows
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_argmax_rows(dtype, caliber_bench, caliber_shapes):
    _bench_rows("argmax_rows", ops.argmax_rows, torch.int64, dtype, caliber_bench, caliber_shapes)


@pytest.mark.var_rows
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_var_rows(dtype, caliber_bench, caliber_shapes):
    _bench_rows("var_rows", ops.var_rows, None, dtype, caliber_bench, caliber_shapes)


@pytest.mark.sum_cols
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_sum_cols(dtype, caliber_bench, caliber_shapes):
    _bench_cols("sum_cols", ops.sum_cols, dtype, caliber_bench, caliber_shapes)


@pytest.mark.mean_cols
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_mean_cols(dtype, caliber_bench, caliber_shapes):
    _bench_cols("mean_cols", ops.mean_cols, dtype, caliber_bench, caliber_shapes)


@pytest.mark.min_cols
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_min_cols(dtype, caliber_bench, caliber_shapes):
    _bench_cols("min_cols", ops.min_cols, dtype, caliber_bench, caliber_shapes)
