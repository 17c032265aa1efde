"""Reduction correctness, with dtypes imported from accuracy_utils."""

import pytest
import torch

from . import accuracy_utils as utils
from .accuracy_utils import INT_DTYPES


@pytest.mark.amax
@pytest.mark.parametrize("dtype", utils.FLOAT_DTYPES)
def test_accuracy_amax(dtype):
    pass


@pytest.mark.argmax
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_accuracy_argmax(dtype):
    pass


@pytest.mark.sum
@pytest.mark.parametrize("dtype", [torch.bfloat16] + utils.INT_DTYPES)
def test_accuracy_sum(dtype):
    pass


BACKWARD_CASES = [pytest.param("dim", marks=pytest.mark.sum_backward)]


@pytest.mark.parametrize("case", BACKWARD_CASES)
def test_accuracy_sum_backward(case):
    pass


@pytest.mark.cumsum
@pytest.mark.cummax
@pytest.mark.parametrize("dtype", [torch.float32])
def test_accuracy_scan(dtype):
    pass


HIDDEN = ["prod"]
HIDDEN.append("mean")


@pytest.mark.parametrize("op", [pytest.param(o, marks=getattr(pytest.mark, o)) for o in HIDDEN])
def test_accuracy_hidden(op):
    pass
