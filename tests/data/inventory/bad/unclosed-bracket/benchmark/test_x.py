import pytest
import torch


@pytest.mark.x
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32]
def test_perf_x(dtype):
    pass
