import pytest


@pytest.mark.skip
@pytest.mark.parametrize("dtype", [1])
def test_perf_x(dtype):
    pass
