"""Correctness of cross-entropy against PyTorch."""

import pytest
import torch
import torch.nn.functional as F

import caliber_ops as ops
from caliber_ops.testing import assert_close, poisoned, randn, shape_id

SHAPES = [(37, 1000), (256, 5000)]


@pytest.mark.cross_entropy
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_cross_entropy(dtype, shape):
    m, v = shape
    logits = randn(shape, dtype) * 4
    target = torch.randint(0, v, (m, ), device="cuda")
    loss = ops.cross_entropy(logits, target, out=poisoned((m, ), torch.float32))
    expected = F.cross_entropy(logits.float(), target, reduction="none")
    assert_close(loss, expected, torch.float32, rtol=1e-4, atol=1e-3)
