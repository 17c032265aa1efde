import pytest


@pytest.mark.x
def test_perf_x():
    y = 1 \ 2
