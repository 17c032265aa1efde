"""Stand-in for ops/tests/test_softmax.py in the H200 replay campaign: the same test names, nothing run."""
import pytest


@pytest.mark.softmax_rows
@pytest.mark.parametrize("dtype", ["float16"])
def test_softmax_rows(dtype):
    pass
