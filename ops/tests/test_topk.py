"""Correctness of topk: torch.topk's values exactly, and indices that point at them."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import poisoned, randn, shape_id

K = 8


@pytest.mark.topk
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", [(37, 1000), (256, 4096)], ids=shape_id)
def test_topk(dtype, shape):
    x = randn(shape, dtype)
    m = shape[0]
    values, indices = ops.topk(x, K, out=(poisoned((m, K), dtype), poisoned((m, K), torch.int64)))
    assert torch.equal(values, torch.topk(x, K, dim=1).values)
    assert torch.equal(torch.gather(x, 1, indices), values)
    assert all(len(set(row)) == K for row in indices.tolist())
