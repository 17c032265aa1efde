"""Indexed reads and writes: gather along dim 1, index_select along dim 0,
embedding lookup, and scatter_add along dim 0 (float32 atomics)."""

import torch
import triton
import triton.language as tl

from ._util import contiguous_2d, out_tensor, pow2, row_warps


@triton.jit
def _gather_kernel(X, IDX, OUT, M, N, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rk = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    mask = (rm[:, None] < M) & (rk[None, :] < K)
    at = rm[:, None].to(tl.int64) * K + rk[None, :]
    idx = tl.load(IDX + at, mask=mask, other=0)
    x = tl.load(X + rm[:, None].to(tl.int64) * N + idx, mask=mask)
    tl.store(OUT + at, x, mask=mask)


@triton.jit
def _index_select_kernel(X, IDX, OUT, M, D, BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    row_ok = rm < M
    mask = row_ok[:, None] & (rd[None, :] < D)
    idx = tl.load(IDX + rm, mask=row_ok, other=0)
    x = tl.load(X + idx[:, None] * D + rd[None, :], mask=mask)
    tl.store(OUT + rm[:, None].to(tl.int64) * D + rd[None, :], x, mask=mask)


@triton.jit
def _embedding_kernel(W, IDS, OUT, D, BLOCK_D: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    token = tl.load(IDS + row)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    tl.store(OUT + row * D + cols, tl.load(W + token * D + cols, mask=mask), mask=mask)


@triton.jit
def _scatter_add_kernel(OUT, IDX, SRC, M, D, BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    row_ok = rm < M
    mask = row_ok[:, None] & (rd[None, :] < D)
    idx = tl.load(IDX + rm, mask=row_ok, other=0)
    src = tl.load(SRC + rm[:, None].to(tl.int64) * D + rd[None, :], mask=mask, other=0.0)
    tl.atomic_add(OUT + idx[:, None] * D + rd[None, :], src, mask=mask, sem="relaxed")


def _index_vector(idx):
    """A contiguous 1-D int64 index tensor."""
    if idx.dim() != 1 or idx.dtype != torch.int64 or not idx.is_contiguous():
        raise ValueError("indices must be a contiguous 1-D int64 tensor")
    return idx


def gather(x, idx, out=None):
    """torch.gather(x, 1, idx) for 2-D x and int64 idx [M, K]."""
    x = contiguous_2d(x)
    idx = contiguous_2d(idx)
    m, n = x.shape
    k = idx.shape[1]
    if idx.shape[0] != m or idx.dtype != torch.int64:
        raise ValueError("idx must be int64 with as many rows as x")
    out = out_tensor(out, idx.shape, x.dtype, x.device)
    _gather_kernel[(triton.cdiv(m, 16), triton.cdiv(k, 128))](x, idx, out, m, n, k, BLOCK_M=16, BLOCK_K=128)
    return out


def index_select(x, idx, out=None):
    """x.index_select(0, idx) for 2-D x."""
    x = contiguous_2d(x)
    idx = _index_vector(idx)
    m, d = idx.shape[0], x.shape[1]
    out = out_tensor(out, (m, d), x.dtype, x.device)
    _index_select_kernel[(triton.cdiv(m, 8), triton.cdiv(d, 256))](x, idx, out, m, d, BLOCK_M=8, BLOCK_D=256)
    return out


def embedding(weight, ids, out=None):
    """F.embedding(ids, weight) for 1-D int64 ids."""
    weight = contiguous_2d(weight)
    ids = _index_vector(ids)
    d = weight.shape[1]
    out = out_tensor(out, (ids.shape[0], d), weight.dtype, weight.device)
    block_d = pow2(d)
    _embedding_kernel[(ids.shape[0], )](weight, ids, out, d, BLOCK_D=block_d, num_warps=row_warps(block_d))
    return out


def scatter_add(out, idx, src):
    """out.index_add_(0, idx, src) in place for float32 out [V, D] and src [M, D]; returns out.
    Atomic adds: the order of additions into one row is not fixed."""
    out = contiguous_2d(out)
    src = contiguous_2d(src)
    idx = _index_vector(idx)
    if out.dtype != torch.float32 or src.dtype != torch.float32:
        raise ValueError("scatter_add takes float32")
    m, d = src.shape
    _scatter_add_kernel[(triton.cdiv(m, 8), triton.cdiv(d, 256))](out, idx, src, m, d, BLOCK_M=8, BLOCK_D=256)
    return out
