import pytest


@pytest.mark.softmax
def test_perf_softmax():
    pass
