import pytest


@pytest.mark.softmax
def test_rdna4_softmax():
    pass
