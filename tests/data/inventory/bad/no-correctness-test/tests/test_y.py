import pytest


@pytest.mark.y
def test_y():
    pass
