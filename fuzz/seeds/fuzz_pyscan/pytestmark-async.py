"""Benchmarks of mul: an async test, marked through pytestmark."""

import pytest
import torch

from . import common

pytestmark = [pytest.mark.mul, pytest.mark.skipif(False, reason="never")]


async def test_mul():
    x = \
        common.run("mul", torch.float16)
    return x
