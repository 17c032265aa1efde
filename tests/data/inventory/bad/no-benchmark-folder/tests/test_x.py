import pytest


@pytest.mark.x
def test_x():
    pass
