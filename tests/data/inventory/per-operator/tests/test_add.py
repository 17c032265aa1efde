"""Correctness of add: the mark on the class, the dtypes on a nested one."""

import pytest
import torch


@pytest.mark.add
class TestAdd:
    x = 1; y = 2

    @pytest.mark.parametrize("dtype", [torch.float16])
    def test_plain(self, dtype):
        pass

    @pytest.mark.parametrize(argnames="dtype", argvalues=[torch.float64])
    class TestNested:
        def test_nested(self, dtype):
            pass
