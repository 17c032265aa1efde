"""LayerNorm and RMSNorm over the last dimension of a contiguous 2-D tensor,
forward and backward, computed in float32.

The backward kernels write dx per row and per-program partial sums of the
weight (and bias) gradients; a second kernel sums the partials down the
columns, so no atomics decide the result's rounding."""

import torch
import triton
import triton.language as tl

from ._util import contiguous_2d, out_tensor, pow2, row_warps

MAX_ROW = 16384
ROWS_PER_PROGRAM = 32  # rows whose weight gradients one backward program sums


@triton.jit
def _layer_norm_fwd_kernel(X, W, B, Y, MEAN, RSTD, N, stride, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * stride + cols, (d * rstd * w + b).to(Y.dtype.element_ty), mask=mask)
    tl.store(MEAN + row, mean)
    tl.store(RSTD + row, rstd)


@triton.jit
def _layer_norm_bwd_kernel(X, W, DY, MEAN, RSTD, DX, DW_PART, DB_PART, M, N, stride,
                           ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], tl.float32)
    db = tl.zeros([BLOCK_N], tl.float32)
    for i in range(ROWS):
        row = pid * ROWS + i
        if row < M:
            offs = row.to(tl.int64) * stride + cols
            x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(DY + offs, mask=mask, other=0.0).to(tl.float32)
            mean = tl.load(MEAN + row)
            rstd = tl.load(RSTD + row)
            xhat = tl.where(mask, (x - mean) * rstd, 0.0)
            wdy = tl.where(mask, w * dy, 0.0)
            c1 = tl.sum(xhat * wdy, axis=0) / N
            c2 = tl.sum(wdy, axis=0) / N
            dx = (wdy - (xhat * c1 + c2)) * rstd
            tl.store(DX + offs, dx.to(DX.dtype.element_ty), mask=mask)
            dw += dy * xhat
            db += dy
    tl.store(DW_PART + pid * N + cols, dw, mask=mask)
    tl.store(DB_PART + pid * N + cols, db, mask=mask)


@triton.jit
def _rms_norm_fwd_kernel(X, W, Y, RSTD, N, stride, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * stride + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)
    tl.store(RSTD + row, rstd)


@triton.jit
def _rms_norm_bwd_kernel(X, W, DY, RSTD, DX, DW_PART, M, N, stride, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], tl.float32)
    for i in range(ROWS):
        row = pid * ROWS + i
        if row < M:
            offs = row.to(tl.int64) * stride + cols
            x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(DY + offs, mask=mask, other=0.0).to(tl.float32)
            rstd = tl.load(RSTD + row)
            xhat = x * rstd
            wdy = w * dy
            c1 = tl.sum(xhat * wdy, axis=0) / N
            dx = (wdy - xhat * c1) * rstd
            tl.store(DX + offs, dx.to(DX.dtype.element_ty), mask=mask)
            dw += dy * xhat
    tl.store(DW_PART + pid * N + cols, dw, mask=mask)


@triton.jit
def _sum_partials_kernel(P, OUT, G, N, BLOCK_G: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    acc = tl.zeros([BLOCK_G, BLOCK_N], tl.float32)
    for start in range(0, G, BLOCK_G):
        g = start + tl.arange(0, BLOCK_G)
        mask = (g[:, None] < G) & col_ok[None, :]
        acc += tl.load(P + g[:, None] * N + cols[None, :], mask=mask, other=0.0)
    tl.store(OUT + cols, tl.sum(acc, axis=0).to(OUT.dtype.element_ty), mask=col_ok)


def _check_rows(x):
    """(x, M, N, BLOCK_N) for a whole-row norm kernel."""
    x = contiguous_2d(x)
    m, n = x.shape
    if n > MAX_ROW:
        raise ValueError(f"rows longer than {MAX_ROW} are not supported")
    return x, m, n, pow2(n)


def _sum_partials(partial, out):
    """out[n] = partial.sum(0), by _sum_partials_kernel."""
    g, n = partial.shape
    _sum_partials_kernel[(triton.cdiv(n, 64), )](partial, out, g, n, BLOCK_G=32, BLOCK_N=64)
    return out


def layer_norm_fwd(x, weight, bias, eps=1e-5, out=None):
    """(y, mean, rstd) of F.layer_norm over the last dim; mean and rstd are float32."""
    x, m, n, block_n = _check_rows(x)
    y, mean, rstd = out if out is not None else (None, None, None)
    y = out_tensor(y, x.shape, x.dtype, x.device)
    mean = out_tensor(mean, (m, ), torch.float32, x.device)
    rstd = out_tensor(rstd, (m, ), torch.float32, x.device)
    _layer_norm_fwd_kernel[(m, )](x, weight, bias, y, mean, rstd, n, x.stride(0), eps, BLOCK_N=block_n,
                                  num_warps=row_warps(block_n))
    return y, mean, rstd


def layer_norm_bwd(dy, x, weight, mean, rstd, out=None):
    """(dx, dweight, dbias) of layer_norm given the forward's mean and rstd."""
    x, m, n, block_n = _check_rows(x)
    dx, dw, db = out if out is not None else (None, None, None)
    dx = out_tensor(dx, x.shape, x.dtype, x.device)
    dw = out_tensor(dw, (n, ), weight.dtype, x.device)
    db = out_tensor(db, (n, ), weight.dtype, x.device)
    groups = triton.cdiv(m, ROWS_PER_PROGRAM)
    dw_part = torch.empty((groups, n), dtype=torch.float32, device=x.device)
    db_part = torch.empty((groups, n), dtype=torch.float32, device=x.device)
    _layer_norm_bwd_kernel[(groups, )](x, weight, dy, mean, rstd, dx, dw_part, db_part, m, n, x.stride(0),
                                       ROWS=ROWS_PER_PROGRAM, BLOCK_N=block_n, num_warps=row_warps(block_n))
    return dx, _sum_partials(dw_part, dw), _sum_partials(db_part, db)


def rms_norm_fwd(x, weight, eps=1e-6, out=None):
    """(y, rstd) of RMSNorm over the last dim: y = x / sqrt(mean(x^2) + eps) * weight."""
    x, m, n, block_n = _check_rows(x)
    y, rstd = out if out is not None else (None, None)
    y = out_tensor(y, x.shape, x.dtype, x.device)
    rstd = out_tensor(rstd, (m, ), torch.float32, x.device)
    _rms_norm_fwd_kernel[(m, )](x, weight, y, rstd, n, x.stride(0), eps, BLOCK_N=block_n,
                                num_warps=row_warps(block_n))
    return y, rstd


def rms_norm_bwd(dy, x, weight, rstd, out=None):
    """(dx, dweight) of RMSNorm given the forward's rstd."""
    x, m, n, block_n = _check_rows(x)
    dx, dw = out if out is not None else (None, None)
    dx = out_tensor(dx, x.shape, x.dtype, x.device)
    dw = out_tensor(dw, (n, ), weight.dtype, x.device)
    groups = triton.cdiv(m, ROWS_PER_PROGRAM)
    dw_part = torch.empty((groups, n), dtype=torch.float32, device=x.device)
    _rms_norm_bwd_kernel[(groups, )](x, weight, dy, rstd, dx, dw_part, m, n, x.stride(0), ROWS=ROWS_PER_PROGRAM,
                                     BLOCK_N=block_n, num_warps=row_warps(block_n))
    return dx, _sum_partials(dw_part, dw)
