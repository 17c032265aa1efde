"""Elementwise ops over contiguous tensors: exact (erf) GELU forward and
backward, and dropout with Triton's on-device Philox RNG."""

import triton
import triton.language as tl

from ._util import out_tensor

BLOCK = 1024


@triton.jit
def _gelu_fwd_kernel(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _gelu_bwd_kernel(DY, X, DX, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(DY + offs, mask=mask, other=0.0).to(tl.float32)
    cdf = 0.5 * (1.0 + tl.math.erf(x * 0.7071067811865476))
    pdf = tl.exp(-0.5 * x * x) * 0.3989422804014327
    tl.store(DX + offs, (dy * (cdf + x * pdf)).to(DX.dtype.element_ty), mask=mask)


@triton.jit(do_not_specialize=["seed"])
def _dropout_kernel(X, Y, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    keep = tl.rand(seed, offs) >= p
    y = tl.where(keep, x / (1.0 - p), 0.0)
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


def _flat(x):
    """Number of elements of a contiguous tensor."""
    if not x.is_contiguous():
        raise ValueError("expected a contiguous tensor")
    return x.numel()


def gelu_fwd(x, out=None):
    """F.gelu(x) (erf form)."""
    n = _flat(x)
    out = out_tensor(out, x.shape, x.dtype, x.device)
    _gelu_fwd_kernel[(triton.cdiv(n, BLOCK), )](x, out, n, BLOCK=BLOCK)
    return out


def gelu_bwd(dy, x, out=None):
    """The gradient of F.gelu (erf form) at x for the output gradient dy."""
    n = _flat(x)
    out = out_tensor(out, x.shape, x.dtype, x.device)
    _gelu_bwd_kernel[(triton.cdiv(n, BLOCK), )](dy, x, out, n, BLOCK=BLOCK)
    return out


def dropout(x, p, seed, out=None):
    """Zero each element with probability p, scale the rest by 1/(1-p); the mask is
    a function of (seed, element index) only."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"p={p} must be in [0, 1)")
    n = _flat(x)
    if n >= 2**31:
        raise ValueError("tensor too large for 32-bit offsets")
    out = out_tensor(out, x.shape, x.dtype, x.device)
    _dropout_kernel[(triton.cdiv(n, BLOCK), )](x, out, n, p, seed, BLOCK=BLOCK)
    return out
