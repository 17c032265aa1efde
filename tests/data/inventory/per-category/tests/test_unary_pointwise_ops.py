"""Unary pointwise correctness."""

import pytest
import torch

from .common import FLOAT_DTYPES, SHAPES


@pytest.mark.abs
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_abs(shape, dtype):
    pass


@pytest.mark.neg
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_neg(shape, dtype):
    pass


@pytest.mark.exp
@pytest.mark.parametrize("dtype", [torch.float32])
def test_exp(dtype):
    pass
