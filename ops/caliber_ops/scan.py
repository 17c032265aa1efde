"""Inclusive cumulative sum along the rows of a contiguous 2-D tensor (float32 carry)."""

import triton
import triton.language as tl

from ._util import contiguous_2d, out_tensor, pow2


@triton.jit
def _cumsum_kernel(X, Y, N, stride, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    carry = tl.full([], 0.0, tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + row * stride + cols, (tl.cumsum(x, axis=0) + carry).to(Y.dtype.element_ty), mask=mask)
        carry += tl.sum(x, axis=0)


def cumsum(x, out=None):
    """torch.cumsum(x, dim=1)."""
    x = contiguous_2d(x)
    m, n = x.shape
    out = out_tensor(out, x.shape, x.dtype, x.device)
    block_n = min(pow2(n), 4096)
    _cumsum_kernel[(m, )](x, out, n, x.stride(0), BLOCK_N=block_n, num_warps=4 if block_n <= 1024 else 8)
    return out
