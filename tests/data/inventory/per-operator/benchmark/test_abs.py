"""Benchmarks of abs and abs_: two ops in one per-operator file."""

import pytest
import torch

from . import common

# @pytest.mark.in_a_comment is not a mark
NOTE = """
@pytest.mark.in_a_docstring
def test_in_a_string():
"""


@pytest.mark.abs
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_abs(dtype):
    common.run("abs", dtype)


@pytest.mark.abs_
@pytest.mark.skipif(
    torch.cuda.device_count() == 0,
    reason="needs a GPU (a ')' in a string)",
)
def test_abs_inplace():
    common.run(f"{'abs' + '_'}", None)
