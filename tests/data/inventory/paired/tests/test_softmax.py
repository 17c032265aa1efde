import pytest


@pytest.mark.softmax
def test_softmax():
    pass
