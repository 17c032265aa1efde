"""Two Triton kernels for the fake GPU (tests/fakegpu): an autotuned matrix
product, whose converts the demo compiler change removes, and an autotuned
pointwise scale, which has none (the demo change compiles it as it was). Their bodies are real Triton; on the fake GPU they
are compiled and timed, never run."""

import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=4), triton.Config({"BLOCK": 128}, num_warps=8)],
                 key=["M", "N", "K"])
@triton.jit
def _mm_kernel(A, B, C, M, N, K, BLOCK: tl.constexpr):
    rm = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rn = tl.arange(0, BLOCK)
    rk = tl.arange(0, BLOCK)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    b = tl.load(B + rk[:, None] * N + rn[None, :])
    tl.store(C + rm[:, None] * N + rn[None, :], tl.dot(a, b).to(C.dtype.element_ty))


@triton.autotune(configs=[triton.Config({"BLOCK": 512}, num_warps=4), triton.Config({"BLOCK": 1024}, num_warps=8)],
                 key=["n"])
@triton.jit
def _scale_kernel(X, Y, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(Y + offs, tl.load(X + offs, mask=mask) * factor, mask=mask)


def mm(a, b, out):
    m, k = a.shape
    n = b.shape[1]
    _mm_kernel[lambda meta: (triton.cdiv(m, meta["BLOCK"]), )](a, b, out, m, n, k)
    return out


def scale(x, factor, out):
    _scale_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]), )](x, out, x.numel(), factor)
    return out


def poisoned(shape, dtype):
    return torch.full(shape, float("nan"), dtype=dtype, device="cuda")
