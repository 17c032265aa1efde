"""triton for the fake GPU (tests/fakegpu/README.md): jit, autotune, knobs
and the rest that caliber's plugins, its demo compiler and its corpus use."""

from . import knobs, language, testing  # noqa: F401
from .runtime.autotuner import Config, autotune  # noqa: F401
from .runtime.jit import jit  # noqa: F401

__version__ = "3.6.0+fakegpu"


def cdiv(x, y):
    return (x + y - 1) // y


def next_power_of_2(n):
    return 1 << max(int(n) - 1, 0).bit_length()
