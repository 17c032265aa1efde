"""Matrix products in float16/bfloat16 with float32 accumulation: plain,
batched, with a bias, and with a bias and an exact-GELU epilogue. matmul, bmm
and matmul_bias_gelu pick their tile config with triton.autotune (small config
lists, so tuning stays quick); matmul_bias uses one fixed config."""

import torch
import triton
import triton.language as tl

from ._util import out_tensor


def _configs(shapes):
    """triton.Config objects from (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps) tuples."""
    return [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for bm, bn, bk, s, w in shapes]


MATMUL_CONFIGS = _configs([(128, 128, 64, 3, 8), (128, 256, 64, 3, 8), (64, 128, 64, 4, 4)])
BMM_CONFIGS = _configs([(128, 128, 64, 3, 8), (64, 128, 64, 4, 4)])
GELU_CONFIGS = _configs([(128, 128, 64, 3, 8), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4)])


@triton.jit
def _tile_ids(M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    # grouped ordering of the output tiles, for L2 reuse of the A rows
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * num_pid_n
    first_m = (pid // in_group) * GROUP_M
    group_m = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % in_group) % group_m
    pid_n = (pid % in_group) // group_m
    return pid_m, pid_n


@triton.jit
def _mm_acc(A, B, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, pid_m, pid_n, BLOCK_M: tl.constexpr,
            BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # float32 accumulator of one BLOCK_M x BLOCK_N output tile
    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = A + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = B + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    return acc


@triton.jit
def _store_tile(C, value, M, N, stride_cm, stride_cn, pid_m, pid_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(C + rm[:, None] * stride_cm + rn[None, :] * stride_cn, value.to(C.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.autotune(configs=MATMUL_CONFIGS, key=["M", "N", "K"])
@triton.jit
def _matmul_kernel(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = _tile_ids(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = _mm_acc(A, B, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, pid_m, pid_n, BLOCK_M, BLOCK_N, BLOCK_K)
    _store_tile(C, acc, M, N, stride_cm, stride_cn, pid_m, pid_n, BLOCK_M, BLOCK_N)


@triton.autotune(configs=BMM_CONFIGS, key=["M", "N", "K"])
@triton.jit
def _bmm_kernel(A, B, C, M, N, K, stride_ab, stride_am, stride_ak, stride_bb, stride_bk, stride_bn, stride_cb,
                stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                GROUP_M: tl.constexpr):
    batch = tl.program_id(1).to(tl.int64)
    pid_m, pid_n = _tile_ids(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = _mm_acc(A + batch * stride_ab, B + batch * stride_bb, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  pid_m, pid_n, BLOCK_M, BLOCK_N, BLOCK_K)
    _store_tile(C + batch * stride_cb, acc, M, N, stride_cm, stride_cn, pid_m, pid_n, BLOCK_M, BLOCK_N)


@triton.jit
def _biased(acc, BIAS, N, pid_n, BLOCK_N: tl.constexpr):
    # acc + bias[n], bias broadcast down the rows
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    bias = tl.load(BIAS + rn, mask=rn < N, other=0.0).to(tl.float32)
    return acc + bias[None, :]


@triton.jit
def _matmul_bias_kernel(A, B, BIAS, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = _tile_ids(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = _mm_acc(A, B, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, pid_m, pid_n, BLOCK_M, BLOCK_N, BLOCK_K)
    _store_tile(C, _biased(acc, BIAS, N, pid_n, BLOCK_N), M, N, stride_cm, stride_cn, pid_m, pid_n, BLOCK_M, BLOCK_N)


@triton.autotune(configs=GELU_CONFIGS, key=["M", "N", "K"])
@triton.jit
def _matmul_bias_gelu_kernel(A, B, BIAS, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                             stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                             GROUP_M: tl.constexpr):
    pid_m, pid_n = _tile_ids(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = _mm_acc(A, B, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, pid_m, pid_n, BLOCK_M, BLOCK_N, BLOCK_K)
    z = _biased(acc, BIAS, N, pid_n, BLOCK_N)
    y = 0.5 * z * (1.0 + tl.math.erf(z * 0.7071067811865476))
    _store_tile(C, y, M, N, stride_cm, stride_cn, pid_m, pid_n, BLOCK_M, BLOCK_N)


def _check(a, b):
    """(M, N, K) of a 2-D product a @ b in float16 or bfloat16."""
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"cannot multiply {tuple(a.shape)} by {tuple(b.shape)}")
    if a.dtype not in (torch.float16, torch.bfloat16) or b.dtype != a.dtype:
        raise ValueError("matmuls take float16 or bfloat16 inputs of one dtype")
    return a.shape[0], b.shape[1], a.shape[1]


def _grid(m, n):
    """Launch grid of a tiled product: one program per output tile."""
    return lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]), )


def matmul(a, b, out=None):
    """a @ b."""
    m, n, k = _check(a, b)
    out = out_tensor(out, (m, n), a.dtype, a.device)
    _matmul_kernel[_grid(m, n)](a, b, out, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                out.stride(0), out.stride(1))
    return out


def bmm(a, b, out=None):
    """torch.bmm(a, b) for 3-D a [batch, M, K] and b [batch, K, N]."""
    if a.dim() != 3 or b.dim() != 3 or a.shape[0] != b.shape[0]:
        raise ValueError(f"cannot batch-multiply {tuple(a.shape)} by {tuple(b.shape)}")
    m, n, k = _check(a[0], b[0])
    batch = a.shape[0]
    out = out_tensor(out, (batch, m, n), a.dtype, a.device)
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]), batch)  # noqa: E731
    _bmm_kernel[grid](a, b, out, m, n, k, a.stride(0), a.stride(1), a.stride(2), b.stride(0), b.stride(1),
                      b.stride(2), out.stride(0), out.stride(1), out.stride(2))
    return out


def matmul_bias(a, b, bias, out=None):
    """a @ b + bias (bias of length N)."""
    m, n, k = _check(a, b)
    out = out_tensor(out, (m, n), a.dtype, a.device)
    _matmul_bias_kernel[(triton.cdiv(m, 128) * triton.cdiv(n, 128), )](
        a, b, bias, out, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1),
        BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_stages=3, num_warps=8)
    return out


def matmul_bias_gelu(a, b, bias, out=None):
    """F.gelu(a @ b + bias) (erf form), the epilogue fused into the product."""
    m, n, k = _check(a, b)
    out = out_tensor(out, (m, n), a.dtype, a.device)
    _matmul_bias_gelu_kernel[_grid(m, n)](a, b, bias, out, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                                          b.stride(1), out.stride(0), out.stride(1))
    return out
