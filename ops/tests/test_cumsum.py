"""Correctness of cumsum against PyTorch."""

import torch

import caliber_ops as ops
from caliber_ops.testing import assert_close, case, poisoned, randn

SHAPES = [(37, 1000), (64, 9000)]


@case("cumsum", SHAPES)
def test_cumsum(dtype, shape):
    x = randn(shape, dtype)
    out = ops.cumsum(x, out=poisoned(shape, dtype))
    atol = 1e-3 if dtype == torch.float32 else None
    assert_close(out, torch.cumsum(x.float(), 1), dtype, atol=atol)
