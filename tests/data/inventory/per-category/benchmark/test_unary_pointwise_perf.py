"""Unary pointwise benchmarks, one file for the category."""

import pytest
import torch

from .attri_util import FLOAT_DTYPES

forward_operations = [
    ("exp", torch.exp, FLOAT_DTYPES),
]


@pytest.mark.parametrize(
    "op_name, torch_op, dtypes",
    [
        pytest.param(name, op, dtype, marks=getattr(pytest.mark, name, None))
        for name, op, dtype in forward_operations
    ],
)
def test_general_unary_pointwise_perf(op_name, torch_op, dtypes):
    pass


@pytest.mark.abs
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_perf_abs(dtype):
    pass


@pytest.mark.neg
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_perf_neg(dtype):
    pass
