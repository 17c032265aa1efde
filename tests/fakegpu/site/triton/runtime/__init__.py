"""triton.runtime of the fake GPU."""
from .autotuner import Autotuner, Config  # noqa: F401
from .jit import JITFunction  # noqa: F401
