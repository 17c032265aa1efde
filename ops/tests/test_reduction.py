"""Correctness of the row and column reductions against PyTorch."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import assert_close, poisoned, randn, shape_id

SHAPES = [(37, 1000), (256, 4099)]


@pytest.mark.sum_rows
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_sum_rows(dtype, shape):
    x = randn(shape, dtype)
    out = ops.sum_rows(x, out=poisoned((shape[0], ), dtype))
    assert_close(out, x.float().sum(1), dtype)


@pytest.mark.max_rows
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_max_rows(dtype, shape):
    x = randn(shape, dtype)
    out = ops.max_rows(x, out=poisoned((shape[0], ), dtype))
    assert_close(out, x.float().amax(1), dtype, rtol=0, atol=0)


@pytest.mark.argmax_rows
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_argmax_rows(dtype, shape):
    x = randn(shape, dtype)
    out = ops.argmax_rows(x, out=poisoned((shape[0], ), torch.int64))
    assert torch.equal(out, x.argmax(1))


@pytest.mark.var_rows
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_var_rows(dtype, shape):
    x = randn(shape, dtype)
    out = ops.var_rows(x, out=poisoned((shape[0], ), dtype))
    assert_close(out, x.float().var(1), dtype)


@pytest.mark.sum_cols
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_sum_cols(dtype, shape):
    x = randn(shape, dtype)
    out = ops.sum_cols(x, out=poisoned((shape[1], ), dtype))
    assert_close(out, x.float().sum(0), dtype)


@pytest.mark.mean_cols
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_mean_cols(dtype, shape):
    x = randn(shape, dtype)
    out = ops.mean_cols(x, out=poisoned((shape[1], ), dtype))
    assert_close(out, x.float().mean(0), dtype)


@pytest.mark.min_cols
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_min_cols(dtype, shape):
    x = randn(shape, dtype)
    out = ops.min_cols(x, out=poisoned((shape[1], ), dtype))
    assert_close(out, x.float().amin(0), dtype, rtol=0, atol=0)
