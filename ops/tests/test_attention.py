"""Correctness of attention forward against float32 PyTorch."""

import torch

import caliber_ops as ops
from caliber_ops.testing import assert_close, case, poisoned, randn


@case("attention_fwd", [(1, 2, 100, 64), (2, 4, 512, 64)])
def test_attention_fwd(dtype, shape):
    q, k, v = randn(shape, dtype), randn(shape, dtype), randn(shape, dtype)
    out = ops.attention_fwd(q, k, v, out=poisoned(shape, dtype))
    scores = q.float() @ k.float().transpose(-1, -2) / shape[-1] ** 0.5
    expected = torch.softmax(scores, -1) @ v.float()
    atol = 2e-3 if dtype == torch.float16 else 1e-2
    assert_close(out, expected, dtype, atol=atol)
