"""Correctness of dropout by its defining properties (its mask comes from
Triton's Philox, not torch's RNG)."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import assert_close, poisoned, randn, shape_id

SHAPES = [(37, 1000), (512, 4096)]
P = 0.3


@pytest.mark.dropout
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_dropout(dtype, shape):
    x = randn(shape, dtype)
    y = ops.dropout(x, P, seed=1234, out=poisoned(shape, dtype))
    kept = y != 0
    # every kept element is x / (1 - p), every other one exactly 0
    assert_close(y[kept], x.float()[kept] / (1 - P), dtype)
    assert not torch.isnan(y).any()
    # the drop rate is p within 5 standard deviations of a binomial
    n = x.numel()
    dropped = n - int(kept.sum())
    assert abs(dropped - P * n) < 5 * (n * P * (1 - P)) ** 0.5 + 1
    # the same seed gives the same mask, another seed another one
    assert torch.equal(ops.dropout(x, P, seed=1234), y)
    assert not torch.equal(ops.dropout(x, P, seed=4321) != 0, kept)
