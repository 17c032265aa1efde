"""Correctness of softmax and log_softmax over rows and columns against PyTorch."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import assert_close, poisoned, randn, shape_id

SHAPES = [(37, 1000), (300, 4096)]


@pytest.mark.softmax_rows
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_softmax_rows(dtype, shape):
    x = randn(shape, dtype) * 3
    assert_close(ops.softmax_rows(x, out=poisoned(shape, dtype)), torch.softmax(x.float(), 1), dtype)


@pytest.mark.log_softmax_rows
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_log_softmax_rows(dtype, shape):
    x = randn(shape, dtype) * 3
    assert_close(ops.log_softmax_rows(x, out=poisoned(shape, dtype)), torch.log_softmax(x.float(), 1), dtype)


@pytest.mark.softmax_cols
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_softmax_cols(dtype, shape):
    x = randn(shape, dtype) * 3
    assert_close(ops.softmax_cols(x, out=poisoned(shape, dtype)), torch.softmax(x.float(), 0), dtype)


@pytest.mark.log_softmax_cols
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_log_softmax_cols(dtype, shape):
    x = randn(shape, dtype) * 3
    assert_close(ops.log_softmax_cols(x, out=poisoned(shape, dtype)), torch.log_softmax(x.float(), 0), dtype)
