"""Benchmarks of add: a test method, dtype among several parameter names."""

import pytest
import torch

from . import common

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
SHAPES = [(2, 3),
          (4, 5)]


class TestAdd:
    @pytest.mark.add
    @pytest.mark.parametrize(
        "shape, dtype",
        [
            ((1024,), torch.float32),
            pytest.param((2048,), torch.half, id="half"),  # torch.half is float16
        ],
    )
    def test_perf(self, shape, dtype):
        common.run("add", dtype, shape)

    def helper(self):
        @pytest.mark.not_collected
        def test_inner():
            pass
        return test_inner
