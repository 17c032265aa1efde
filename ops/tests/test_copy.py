"""Correctness of the layout copies: exact equality with PyTorch."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import poisoned, randn, shape_id


@pytest.mark.transpose
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", [(37, 1000), (512, 300)], ids=shape_id)
def test_transpose(dtype, shape):
    x = randn(shape, dtype)
    out = ops.transpose(x, out=poisoned(shape[::-1], dtype))
    assert torch.equal(out, x.t().contiguous())


@pytest.mark.permute_copy
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", [(3, 37, 100), (16, 128, 65)], ids=shape_id)
def test_permute_copy(dtype, shape):
    x = randn(shape, dtype)
    a, b, c = shape
    out = ops.permute_copy(x, out=poisoned((c, a, b), dtype))
    assert torch.equal(out, x.permute(2, 0, 1).contiguous())
