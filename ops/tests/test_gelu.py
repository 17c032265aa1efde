"""Correctness of GELU forward and backward against PyTorch."""

import torch.nn.functional as F

import caliber_ops as ops
from caliber_ops.testing import assert_close, case, poisoned, randn

SHAPES = [(37, 1000), (512, 4096)]


@case("gelu_fwd", SHAPES)
def test_gelu_fwd(dtype, shape):
    x = randn(shape, dtype) * 3
    assert_close(ops.gelu_fwd(x, out=poisoned(shape, dtype)), F.gelu(x.float()), dtype)


@case("gelu_bwd", SHAPES)
def test_gelu_bwd(dtype, shape):
    x = randn(shape, dtype) * 3
    dy = randn(shape, dtype)
    xf = x.float().requires_grad_()
    F.gelu(xf).backward(dy.float())
    assert_close(ops.gelu_bwd(dy, x, out=poisoned(shape, dtype)), xf.grad, dtype)
