"""Correctness of mul."""

import pytest
import torch


@pytest.mark.mul
@pytest.mark.parametrize("dtype", [torch.float16, torch.int32])
def test_mul(dtype):
    pass


def not_a_test():
    @pytest.mark.mul
    @pytest.mark.parametrize("dtype", ANYTHING)
    def test_hidden(dtype):
        pass
