"""Stand-in for ops/tests/test_attention.py in the H200 replay campaign: the same test names, nothing run."""
import pytest


@pytest.mark.attention_fwd
@pytest.mark.parametrize("dtype", ["float16"])
def test_attention_fwd(dtype):
    pass
