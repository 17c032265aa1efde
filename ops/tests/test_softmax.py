"""Correctness of softmax and log_softmax over rows and columns against PyTorch."""

import torch

import caliber_ops as ops
from caliber_ops.testing import assert_close, case, poisoned, randn

SHAPES = [(37, 1000), (300, 4096)]


@case("softmax_rows", SHAPES)
def test_softmax_rows(dtype, shape):
    x = randn(shape, dtype) * 3
    assert_close(ops.softmax_rows(x, out=poisoned(shape, dtype)), torch.softmax(x.float(), 1), dtype)


@case("log_softmax_rows", SHAPES)
def test_log_softmax_rows(dtype, shape):
    x = randn(shape, dtype) * 3
    assert_close(ops.log_softmax_rows(x, out=poisoned(shape, dtype)), torch.log_softmax(x.float(), 1), dtype)


@case("softmax_cols", SHAPES)
def test_softmax_cols(dtype, shape):
    x = randn(shape, dtype) * 3
    assert_close(ops.softmax_cols(x, out=poisoned(shape, dtype)), torch.softmax(x.float(), 0), dtype)


@case("log_softmax_cols", SHAPES)
def test_log_softmax_cols(dtype, shape):
    x = randn(shape, dtype) * 3
    assert_close(ops.log_softmax_cols(x, out=poisoned(shape, dtype)), torch.log_softmax(x.float(), 0), dtype)
