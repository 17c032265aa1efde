"""Correctness of cumsum against PyTorch."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import assert_close, poisoned, randn, shape_id

SHAPES = [(37, 1000), (64, 9000)]


@pytest.mark.cumsum
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_cumsum(dtype, shape):
    x = randn(shape, dtype)
    out = ops.cumsum(x, out=poisoned(shape, dtype))
    atol = 1e-3 if dtype == torch.float32 else None
    assert_close(out, torch.cumsum(x.float(), 1), dtype, atol=atol)
