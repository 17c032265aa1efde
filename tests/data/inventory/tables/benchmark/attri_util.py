"""Dtypes the benchmarks share: literal lists, read from here statically."""

import torch

FLOAT_DTYPES = [torch.float16, torch.float32]
INT_DTYPES = [torch.int16, torch.int32]
