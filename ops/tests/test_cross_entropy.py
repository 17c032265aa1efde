"""Correctness of cross-entropy against PyTorch."""

import torch
import torch.nn.functional as F

import caliber_ops as ops
from caliber_ops.testing import assert_close, case, poisoned, randn

SHAPES = [(37, 1000), (256, 5000)]


@case("cross_entropy", SHAPES)
def test_cross_entropy(dtype, shape):
    m, v = shape
    logits = randn(shape, dtype) * 4
    target = torch.randint(0, v, (m, ), device="cuda")
    loss = ops.cross_entropy(logits, target, out=poisoned((m, ), torch.float32))
    expected = F.cross_entropy(logits.float(), target, reduction="none")
    assert_close(loss, expected, torch.float32, rtol=1e-4, atol=1e-3)
