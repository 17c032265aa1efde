"""Correctness of the row and column reductions against PyTorch."""

import torch

import caliber_ops as ops
from caliber_ops.testing import assert_close, case, poisoned, randn

SHAPES = [(37, 1000), (256, 4099)]


@case("sum_rows", SHAPES)
def test_sum_rows(dtype, shape):
    x = randn(shape, dtype)
    out = ops.sum_rows(x, out=poisoned((shape[0], ), dtype))
    assert_close(out, x.float().sum(1), dtype)


@case("max_rows", SHAPES)
def test_max_rows(dtype, shape):
    x = randn(shape, dtype)
    out = ops.max_rows(x, out=poisoned((shape[0], ), dtype))
    assert_close(out, x.float().amax(1), dtype, rtol=0, atol=0)


@case("argmax_rows", SHAPES)
def test_argmax_rows(dtype, shape):
    x = randn(shape, dtype)
    out = ops.argmax_rows(x, out=poisoned((shape[0], ), torch.int64))
    assert torch.equal(out, x.argmax(1))


@case("var_rows", SHAPES)
def test_var_rows(dtype, shape):
    x = randn(shape, dtype)
    out = ops.var_rows(x, out=poisoned((shape[0], ), dtype))
    assert_close(out, x.float().var(1), dtype)


@case("sum_cols", SHAPES)
def test_sum_cols(dtype, shape):
    x = randn(shape, dtype)
    out = ops.sum_cols(x, out=poisoned((shape[1], ), dtype))
    assert_close(out, x.float().sum(0), dtype)


@case("mean_cols", SHAPES)
def test_mean_cols(dtype, shape):
    x = randn(shape, dtype)
    out = ops.mean_cols(x, out=poisoned((shape[1], ), dtype))
    assert_close(out, x.float().mean(0), dtype)


@case("min_cols", SHAPES)
def test_min_cols(dtype, shape):
    x = randn(shape, dtype)
    out = ops.min_cols(x, out=poisoned((shape[1], ), dtype))
    assert_close(out, x.float().amin(0), dtype, rtol=0, atol=0)
