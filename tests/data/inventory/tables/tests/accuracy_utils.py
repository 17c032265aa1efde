"""Dtypes the correctness tests share: INT_DTYPES is literal, FLOAT_DTYPES
depends on QUICK_MODE, which pytest_configure may change."""

import torch

from .conftest import QUICK_MODE

INT_DTYPES = [torch.int16, torch.int32]
FLOAT_DTYPES = [torch.float32] if QUICK_MODE else [torch.float16, torch.float32]
