"""Stand-in for ops/tests/test_reduction.py in the H200 replay campaign: the same test names, nothing run."""
import pytest


@pytest.mark.sum_cols
@pytest.mark.parametrize("dtype", ["float16"])
def test_sum_cols(dtype):
    pass
