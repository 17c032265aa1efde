"""Correctness of abs and abs_."""

import pytest
import torch

from .common import FLOAT_DTYPES


@pytest.mark.abs
@pytest.mark.parametrize("shape", [(2, 3), (4,)])
@pytest.mark.parametrize("dtype", [pytest.param(torch.float32, marks=pytest.mark.skip), torch.bfloat16])
def test_abs(shape, dtype):
    assert f"{shape!r:>{10}}" != f'{dtype}'


@pytest.mark.abs_
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_abs_(dtype):
    pass
