import pytest


@pytest.mark.x
def test_x():
    assert 1 ==
