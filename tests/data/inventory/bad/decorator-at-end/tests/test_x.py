import pytest


@pytest.mark.x
def test_x():
    pass


@pytest.mark.y
@pytest.mark.parametrize("dtype", [])
