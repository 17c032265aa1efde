"""Reduction benchmarks."""

import pytest
import torch


@pytest.mark.sum
@pytest.mark.parametrize("dtype", [torch.bfloat16])
def test_perf_sum(dtype):
    pass


class TestReduction:
    @pytest.mark.max
    @pytest.mark.parametrize("dtype", [torch.float32])
    def test_perf_max(self, dtype):
        pass
