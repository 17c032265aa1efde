"""Correctness of topk: torch.topk's values exactly, and indices that point at them."""

import torch

import caliber_ops as ops
from caliber_ops.testing import case, poisoned, randn

K = 8


@case("topk", [(37, 1000), (256, 4096)])
def test_topk(dtype, shape):
    x = randn(shape, dtype)
    m = shape[0]
    values, indices = ops.topk(x, K, out=(poisoned((m, K), dtype), poisoned((m, K), torch.int64)))
    assert torch.equal(values, torch.topk(x, K, dim=1).values)
    assert torch.equal(torch.gather(x, 1, indices), values)
    assert all(len(set(row)) == K for row in indices.tolist())
