"""softmax and log_softmax over the rows (dim=1) or the columns (dim=0) of a
contiguous 2-D tensor, computed in float32."""

import triton
import triton.language as tl

from ._util import contiguous_2d, out_tensor, pow2, row_warps

MAX_ROW = 16384  # a row is held whole in one program


@triton.jit
def _row_shifted(X, row, N, stride, BLOCK_N: tl.constexpr):
    # (x - max(x), mask, offsets) for one whole row, in float32
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    return x - tl.max(x, axis=0), mask, cols


@triton.jit
def _softmax_rows_kernel(X, Y, N, stride_x, stride_y, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    z, mask, cols = _row_shifted(X, row, N, stride_x, BLOCK_N)
    e = tl.exp(z)
    tl.store(Y + row * stride_y + cols, (e / tl.sum(e, axis=0)).to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _log_softmax_rows_kernel(X, Y, N, stride_x, stride_y, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    z, mask, cols = _row_shifted(X, row, N, stride_x, BLOCK_N)
    y = z - tl.log(tl.sum(tl.exp(z), axis=0))
    tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _col_stats(X, M, stride_m, cols, col_ok, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # online max and sum of exp(x - max) down each column
    m_i = tl.full([BLOCK_N], float("-inf"), tl.float32)
    s_i = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & col_ok[None, :]
        x = tl.load(X + rows[:, None].to(tl.int64) * stride_m + cols[None, :], mask=mask, other=float("-inf"))
        x = x.to(tl.float32)
        m_new = tl.maximum(m_i, tl.max(x, axis=0))
        s_i = s_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(x - m_new[None, :]), axis=0)
        m_i = m_new
    return m_i, s_i


@triton.jit
def _softmax_cols_kernel(X, Y, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    m_i, s_i = _col_stats(X, M, stride_m, cols, col_ok, BLOCK_M, BLOCK_N)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & col_ok[None, :]
        offs = rows[:, None].to(tl.int64) * stride_m + cols[None, :]
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        y = tl.exp(x - m_i[None, :]) / s_i[None, :]
        tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _log_softmax_cols_kernel(X, Y, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    m_i, s_i = _col_stats(X, M, stride_m, cols, col_ok, BLOCK_M, BLOCK_N)
    shift = m_i + tl.log(s_i)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & col_ok[None, :]
        offs = rows[:, None].to(tl.int64) * stride_m + cols[None, :]
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + offs, (x - shift[None, :]).to(Y.dtype.element_ty), mask=mask)


def _rows(kernel, x, out):
    """Launch a whole-row kernel, one program per row."""
    x = contiguous_2d(x)
    m, n = x.shape
    if n > MAX_ROW:
        raise ValueError(f"rows longer than {MAX_ROW} are not supported")
    out = out_tensor(out, x.shape, x.dtype, x.device)
    block_n = pow2(n)
    kernel[(m, )](x, out, n, x.stride(0), out.stride(0), BLOCK_N=block_n, num_warps=row_warps(block_n))
    return out


def _cols(kernel, x, out):
    """Launch a column kernel, one program per 32 columns."""
    x = contiguous_2d(x)
    m, n = x.shape
    out = out_tensor(out, x.shape, x.dtype, x.device)
    kernel[(triton.cdiv(n, 32), )](x, out, m, n, x.stride(0), BLOCK_M=64, BLOCK_N=32)
    return out


def softmax_rows(x, out=None):
    """torch.softmax(x, dim=1)."""
    return _rows(_softmax_rows_kernel, x, out)


def log_softmax_rows(x, out=None):
    """torch.log_softmax(x, dim=1)."""
    return _rows(_log_softmax_rows_kernel, x, out)


def softmax_cols(x, out=None):
    """torch.softmax(x, dim=0)."""
    return _cols(_softmax_cols_kernel, x, out)


def log_softmax_cols(x, out=None):
    """torch.log_softmax(x, dim=0)."""
    return _cols(_log_softmax_cols_kernel, x, out)
