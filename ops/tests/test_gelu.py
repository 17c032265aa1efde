"""Correctness of GELU forward and backward against PyTorch."""

import pytest
import torch
import torch.nn.functional as F

import caliber_ops as ops
from caliber_ops.testing import assert_close, poisoned, randn, shape_id

SHAPES = [(37, 1000), (512, 4096)]


@pytest.mark.gelu_fwd
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_gelu_fwd(dtype, shape):
    x = randn(shape, dtype) * 3
    assert_close(ops.gelu_fwd(x, out=poisoned(shape, dtype)), F.gelu(x.float()), dtype)


@pytest.mark.gelu_bwd
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_gelu_bwd(dtype, shape):
    x = randn(shape, dtype) * 3
    dy = randn(shape, dtype)
    xf = x.float().requires_grad_()
    F.gelu(xf).backward(dy.float())
    assert_close(ops.gelu_bwd(dy, x, out=poisoned(shape, dtype)), xf.grad, dtype)
