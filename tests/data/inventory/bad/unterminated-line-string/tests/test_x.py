import pytest


@pytest.mark.x
def test_x():
    assert f"{1 + 1}' == "2"
