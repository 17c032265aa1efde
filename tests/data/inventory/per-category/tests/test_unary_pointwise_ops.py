"""Unary pointwise correctness."""

import pytest
import torch

from .accuracy_utils import FLOAT_DTYPES, POINTWISE_SHAPES


@pytest.mark.abs
@pytest.mark.parametrize("shape", POINTWISE_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_accuracy_abs(shape, dtype):
    pass


@pytest.mark.neg
@pytest.mark.parametrize("shape", POINTWISE_SHAPES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_accuracy_neg(shape, dtype):
    pass


@pytest.mark.exp
@pytest.mark.parametrize("dtype", [torch.float32])
def test_accuracy_exp(dtype):
    pass
