import pytest


@pytest.mark.x
@pytest.mark.parametrize(
    "dtype", [None]
)
test_x = make_test()
