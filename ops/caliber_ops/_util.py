"""Small helpers shared by the kernels' Python wrappers."""

import torch
import triton


def out_tensor(out, shape, dtype, device):
    """`out` when given (checked), else a fresh tensor of that shape and dtype."""
    shape = tuple(shape)
    if out is None:
        return torch.empty(shape, dtype=dtype, device=device)
    if tuple(out.shape) != shape or out.dtype != dtype or not out.is_contiguous():
        raise ValueError(f"out must be a contiguous {dtype} tensor of shape {shape}, "
                         f"got {out.dtype} {tuple(out.shape)}")
    return out


def contiguous_2d(x):
    """x as a contiguous 2-D tensor (a check, not a copy: the corpus measures kernels)."""
    if x.dim() != 2 or not x.is_contiguous():
        raise ValueError(f"expected a contiguous 2-D tensor, got shape {tuple(x.shape)}")
    return x


def row_warps(block):
    """num_warps for a kernel whose program holds `block` elements of one row."""
    return 4 if block <= 1024 else 8 if block <= 4096 else 16


def pow2(n):
    """The next power of two >= n."""
    return triton.next_power_of_2(n)
