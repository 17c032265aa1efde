"""Correctness of attention forward against float32 PyTorch."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import assert_close, poisoned, randn, shape_id


@pytest.mark.attention_fwd
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
])
@pytest.mark.parametrize("shape", [(1, 2, 100, 64), (2, 4, 512, 64)], ids=shape_id)
def test_attention_fwd(dtype, shape):
    q, k, v = randn(shape, dtype), randn(shape, dtype), randn(shape, dtype)
    out = ops.attention_fwd(q, k, v, out=poisoned(shape, dtype))
    scores = q.float() @ k.float().transpose(-1, -2) / shape[-1] ** 0.5
    expected = torch.softmax(scores, -1) @ v.float()
    atol = 2e-3 if dtype == torch.float16 else 1e-2
    assert_close(out, expected, dtype, atol=atol)
