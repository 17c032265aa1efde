"""Benchmark of norm, which has no correctness test: left out."""

import pytest


@pytest.mark.norm
def test_norm():
    pass
