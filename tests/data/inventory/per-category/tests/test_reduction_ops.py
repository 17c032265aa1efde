"""Reduction correctness."""

import pytest
import torch


@pytest.mark.sum
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_sum(dtype):
    pass


@pytest.mark.max
@pytest.mark.parametrize("dtype", [torch.float32])
def test_max(dtype):
    pass
