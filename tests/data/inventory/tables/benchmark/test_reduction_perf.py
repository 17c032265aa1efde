"""Reduction benchmarks as FlagGems v4.2 writes them: tables of ops whose
cases are marked through pytest.param, built by comprehensions."""

import os

import pytest
import torch

from benchmark.attri_util import FLOAT_DTYPES, INT_DTYPES

forward_operations = [
    ("amax", torch.amax, FLOAT_DTYPES),
    ("sum", torch.sum, FLOAT_DTYPES),
]
more_operations = forward_operations + [("argmax", torch.argmax, INT_DTYPES)]


@pytest.mark.parametrize(
    "op_name, torch_op, dtypes",
    [
        pytest.param(name, op, dtype, marks=getattr(pytest.mark, name, None))
        for name, op, dtype in more_operations
    ],
)
def test_general_reduction_perf(op_name, torch_op, dtypes):
    pass


@pytest.mark.parametrize(
    "op_name",
    [
        pytest.param(name, marks=getattr(pytest.mark, name + "_backward", None))
        for name, _, _ in forward_operations
        if name != "amax"
    ],
)
def test_general_reduction_backward_perf(op_name):
    pass


@pytest.mark.parametrize(
    "op_name, dtype",
    [
        pytest.param("cumsum", torch.float32, marks=pytest.mark.cumsum),
        pytest.param(
            "cummax",
            torch.float16,
            marks=[pytest.mark.cummax, pytest.mark.skipif(os.environ.get("CPU"), reason="GPU")],
        ),
    ],
)
def test_generic_reduction_benchmark(op_name, dtype):
    pass


@pytest.mark.sum
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_perf_sum(dtype):
    """sum's own benchmark: it wins over sum's case in the table above."""


if os.environ.get("EXTRA_OPS"):
    extra_operations = [("prod", torch.prod, FLOAT_DTYPES)]
else:
    extra_operations = []


@pytest.mark.parametrize(
    "op_name, torch_op, dtypes",
    [pytest.param(n, o, d, marks=getattr(pytest.mark, n)) for n, o, d in extra_operations],
)
def test_extra_perf(op_name, torch_op, dtypes):
    pass
