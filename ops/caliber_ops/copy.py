"""Layout copies: a 2-D transpose and a 3-D permute, both into contiguous outputs.
Each program loads a tile along the input's fast axis and stores it transposed
along the output's, which is where layout conversions come from."""

import triton
import triton.language as tl

from ._util import contiguous_2d, out_tensor

TILE = 64


@triton.jit
def _transpose_kernel(X, Y, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(X + rm[:, None].to(tl.int64) * N + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N))
    mask_t = (rn[:, None] < N) & (rm[None, :] < M)
    tl.store(Y + rn[:, None].to(tl.int64) * M + rm[None, :], tl.trans(x), mask=mask_t)


@triton.jit
def _permute_201_kernel(X, Y, A, B, C, BLOCK_B: tl.constexpr, BLOCK_C: tl.constexpr):
    # Y[c, a, b] = X[a, b, c]
    rb = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    rc = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    a = tl.program_id(2).to(tl.int64)
    x = tl.load(X + a * B * C + rb[:, None].to(tl.int64) * C + rc[None, :],
                mask=(rb[:, None] < B) & (rc[None, :] < C))
    mask_t = (rc[:, None] < C) & (rb[None, :] < B)
    tl.store(Y + rc[:, None].to(tl.int64) * A * B + a * B + rb[None, :], tl.trans(x), mask=mask_t)


def transpose(x, out=None):
    """x.t().contiguous()."""
    x = contiguous_2d(x)
    m, n = x.shape
    out = out_tensor(out, (n, m), x.dtype, x.device)
    _transpose_kernel[(triton.cdiv(m, TILE), triton.cdiv(n, TILE))](x, out, m, n, BLOCK_M=TILE, BLOCK_N=TILE)
    return out


def permute_copy(x, out=None):
    """x.permute(2, 0, 1).contiguous() for a contiguous 3-D x."""
    if x.dim() != 3 or not x.is_contiguous():
        raise ValueError(f"expected a contiguous 3-D tensor, got shape {tuple(x.shape)}")
    a, b, c = x.shape
    if a > 65535:
        raise ValueError("the first dimension is a grid axis and must be at most 65535")
    out = out_tensor(out, (c, a, b), x.dtype, x.device)
    _permute_201_kernel[(triton.cdiv(b, TILE), triton.cdiv(c, TILE), a)](x, out, a, b, c, BLOCK_B=TILE,
                                                                         BLOCK_C=TILE)
    return out
