"""Stand-in for ops/benchmark/test_layer_norm.py in the H200 replay campaign: the same test names, nothing run."""
import pytest


@pytest.mark.layer_norm_fwd
@pytest.mark.parametrize("dtype", ["float16"])
def test_perf_layer_norm_fwd(dtype):
    pass
