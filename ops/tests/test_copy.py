"""Correctness of the layout copies: exact equality with PyTorch."""

import torch

import caliber_ops as ops
from caliber_ops.testing import case, poisoned, randn


@case("transpose", [(37, 1000), (512, 300)])
def test_transpose(dtype, shape):
    x = randn(shape, dtype)
    out = ops.transpose(x, out=poisoned(shape[::-1], dtype))
    assert torch.equal(out, x.t().contiguous())


@case("permute_copy", [(3, 37, 100), (16, 128, 65)])
def test_permute_copy(dtype, shape):
    x = randn(shape, dtype)
    a, b, c = shape
    out = ops.permute_copy(x, out=poisoned((c, a, b), dtype))
    assert torch.equal(out, x.permute(2, 0, 1).contiguous())
