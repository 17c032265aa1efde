"""Unary pointwise benchmarks, one file for the category."""

import pytest
import torch

from .common import FLOAT_DTYPES

BY_TABLE = [
    ("exp", torch.exp, FLOAT_DTYPES),
]


@pytest.mark.parametrize(
    "op_name, torch_op, dtypes",
    [
        pytest.param(name, op, dtype, marks=getattr(pytest.mark, name, None))
        for name, op, dtype in BY_TABLE
    ],
)
def test_perf_by_table(op_name, torch_op, dtypes):
    pass


@pytest.mark.abs
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_perf_abs(dtype):
    pass


@pytest.mark.neg
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_perf_neg(dtype):
    pass
