import pytest


@pytest.mark.x
def test_perf_x():
    pass
