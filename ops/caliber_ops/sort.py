"""Top-k of each row: K rounds of (max, first index of the max), each round
masking the element it took. Values equal torch.topk's; on ties the indices may
differ, but they always point at the values returned."""

import torch
import triton
import triton.language as tl

from ._util import contiguous_2d, out_tensor, pow2, row_warps

MAX_ROW = 8192


@triton.jit
def _topk_kernel(X, VALUES, INDICES, N, stride, K: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(X + row * stride + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
    for j in tl.static_range(K):
        best, where = tl.max(x, axis=0, return_indices=True)
        tl.store(VALUES + row * K + j, best.to(VALUES.dtype.element_ty))
        tl.store(INDICES + row * K + j, where.to(tl.int64))
        x = tl.where(cols == where, float("-inf"), x)


def topk(x, k=8, out=None):
    """(values, indices) of torch.topk(x, k, dim=1), largest first."""
    x = contiguous_2d(x)
    m, n = x.shape
    if not 1 <= k <= n or n > MAX_ROW:
        raise ValueError(f"need 1 <= k <= N <= {MAX_ROW}, got k={k}, N={n}")
    values, indices = out if out is not None else (None, None)
    values = out_tensor(values, (m, k), x.dtype, x.device)
    indices = out_tensor(indices, (m, k), torch.int64, x.device)
    block_n = pow2(n)
    _topk_kernel[(m, )](x, values, indices, n, x.stride(0), K=k, BLOCK_N=block_n, num_warps=row_warps(block_n))
    return values, indices
