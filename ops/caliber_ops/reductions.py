"""Row and column reductions of a contiguous 2-D tensor, accumulated in float32."""

import torch
import triton
import triton.language as tl

from ._util import contiguous_2d, out_tensor, pow2


def _row_blocks(n):
    """(BLOCK_M, BLOCK_N) for a program that reduces BLOCK_M rows, BLOCK_N columns at a time."""
    block_n = min(pow2(n), 1024)
    return max(1, min(16, 4096 // block_n)), block_n


def _col_blocks(n):
    """(BLOCK_M, BLOCK_N) for a program that reduces BLOCK_N columns, BLOCK_M rows at a time."""
    return 64, 64 if n >= 8192 else 16


@triton.jit
def _sum_rows_kernel(X, OUT, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_ok[:, None] & (cols[None, :] < N)
        x = tl.load(X + rows[:, None].to(tl.int64) * stride_m + cols[None, :], mask=mask, other=0.0)
        acc += x.to(tl.float32)
    tl.store(OUT + rows, tl.sum(acc, axis=1).to(OUT.dtype.element_ty), mask=row_ok)


@triton.jit
def _max_rows_kernel(X, OUT, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    acc = tl.full([BLOCK_M, BLOCK_N], float("-inf"), tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_ok[:, None] & (cols[None, :] < N)
        x = tl.load(X + rows[:, None].to(tl.int64) * stride_m + cols[None, :], mask=mask, other=float("-inf"))
        acc = tl.maximum(acc, x.to(tl.float32))
    tl.store(OUT + rows, tl.max(acc, axis=1).to(OUT.dtype.element_ty), mask=row_ok)


@triton.jit
def _argmax_rows_kernel(X, OUT, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Each lane keeps its first maximum; the row then takes the lowest index among
    # the lanes holding the row maximum, which is torch's first-occurrence rule.
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    best = tl.full([BLOCK_M, BLOCK_N], float("-inf"), tl.float32)
    best_idx = tl.zeros([BLOCK_M, BLOCK_N], tl.int32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_ok[:, None] & (cols[None, :] < N)
        x = tl.load(X + rows[:, None].to(tl.int64) * stride_m + cols[None, :], mask=mask, other=float("-inf"))
        x = x.to(tl.float32)
        better = x > best
        best = tl.where(better, x, best)
        best_idx = tl.where(better, cols[None, :], best_idx)
    row_max = tl.max(best, axis=1)
    candidates = tl.where(best == row_max[:, None], best_idx, 2147483647)
    tl.store(OUT + rows, tl.min(candidates, axis=1).to(tl.int64), mask=row_ok)


@triton.jit
def _var_rows_kernel(X, OUT, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Two passes (mean, then squared deviations) for accuracy; unbiased like torch.var.
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_ok[:, None] & (cols[None, :] < N)
        x = tl.load(X + rows[:, None].to(tl.int64) * stride_m + cols[None, :], mask=mask, other=0.0)
        acc += x.to(tl.float32)
    mean = tl.sum(acc, axis=1) / N
    acc2 = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_ok[:, None] & (cols[None, :] < N)
        x = tl.load(X + rows[:, None].to(tl.int64) * stride_m + cols[None, :], mask=mask, other=0.0)
        d = tl.where(mask, x.to(tl.float32) - mean[:, None], 0.0)
        acc2 += d * d
    tl.store(OUT + rows, (tl.sum(acc2, axis=1) / (N - 1)).to(OUT.dtype.element_ty), mask=row_ok)


@triton.jit
def _col_sums(X, M, stride_m, cols, col_ok, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & col_ok[None, :]
        x = tl.load(X + rows[:, None].to(tl.int64) * stride_m + cols[None, :], mask=mask, other=0.0)
        acc += x.to(tl.float32)
    return tl.sum(acc, axis=0)


@triton.jit
def _sum_cols_kernel(X, OUT, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    total = _col_sums(X, M, stride_m, cols, col_ok, BLOCK_M, BLOCK_N)
    tl.store(OUT + cols, total.to(OUT.dtype.element_ty), mask=col_ok)


@triton.jit
def _mean_cols_kernel(X, OUT, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    total = _col_sums(X, M, stride_m, cols, col_ok, BLOCK_M, BLOCK_N)
    tl.store(OUT + cols, (total / M).to(OUT.dtype.element_ty), mask=col_ok)


@triton.jit
def _min_cols_kernel(X, OUT, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    acc = tl.full([BLOCK_M, BLOCK_N], float("inf"), tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & col_ok[None, :]
        x = tl.load(X + rows[:, None].to(tl.int64) * stride_m + cols[None, :], mask=mask, other=float("inf"))
        acc = tl.minimum(acc, x.to(tl.float32))
    tl.store(OUT + cols, tl.min(acc, axis=0).to(OUT.dtype.element_ty), mask=col_ok)


def _rows(kernel, x, out, dtype):
    """Launch a row-reduction kernel: one output per row."""
    x = contiguous_2d(x)
    m, n = x.shape
    out = out_tensor(out, (m, ), dtype, x.device)
    block_m, block_n = _row_blocks(n)
    kernel[(triton.cdiv(m, block_m), )](x, out, m, n, x.stride(0), BLOCK_M=block_m, BLOCK_N=block_n)
    return out


def sum_rows(x, out=None):
    """x.sum(dim=1)."""
    return _rows(_sum_rows_kernel, x, out, x.dtype)


def max_rows(x, out=None):
    """x.amax(dim=1)."""
    return _rows(_max_rows_kernel, x, out, x.dtype)


def argmax_rows(x, out=None):
    """x.argmax(dim=1) (first occurrence), int64."""
    return _rows(_argmax_rows_kernel, x, out, torch.int64)


def var_rows(x, out=None):
    """x.var(dim=1) (unbiased)."""
    return _rows(_var_rows_kernel, x, out, x.dtype)


def _cols(kernel, x, out):
    """Launch a column-reduction kernel: one output per column."""
    x = contiguous_2d(x)
    m, n = x.shape
    out = out_tensor(out, (n, ), x.dtype, x.device)
    block_m, block_n = _col_blocks(n)
    kernel[(triton.cdiv(n, block_n), )](x, out, m, n, x.stride(0), BLOCK_M=block_m, BLOCK_N=block_n)
    return out


def sum_cols(x, out=None):
    """x.sum(dim=0)."""
    return _cols(_sum_cols_kernel, x, out)


def mean_cols(x, out=None):
    """x.mean(dim=0)."""
    return _cols(_mean_cols_kernel, x, out)


def min_cols(x, out=None):
    """x.amin(dim=0)."""
    return _cols(_min_cols_kernel, x, out)
