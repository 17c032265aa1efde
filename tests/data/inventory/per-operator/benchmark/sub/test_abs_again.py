"""A second benchmark of abs: 'sub/test_abs_again.py' sorts before
'test_abs.py', so this one is the inventory's."""

import pytest
import torch


@pytest.mark.abs
@pytest.mark.parametrize("dtype", (torch.float32,))
def test_abs_again(dtype):
    pass
