"""Stand-in for ops/tests/test_cross_entropy.py in the H200 replay campaign: the same test names, nothing run."""
import pytest


@pytest.mark.cross_entropy
@pytest.mark.parametrize("dtype", ["float16"])
def test_cross_entropy(dtype):
    pass
