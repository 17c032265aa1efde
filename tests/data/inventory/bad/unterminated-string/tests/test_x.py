"""Correctness of x."""
import pytest


@pytest.mark.x
def test_x():
    msg = """never closed
    assert msg
