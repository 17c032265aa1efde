"""Attention forward (no mask, no dropout): softmax(q k^T * scale) v over
[batch, heads, seq, head_dim] tensors, one program per block of queries, with
an online softmax over blocks of keys (the FlashAttention scheme)."""

import math

import torch
import triton
import triton.language as tl

from ._util import out_tensor

BLOCK_M = 128
BLOCK_N = 64


@triton.jit
def _attention_fwd_kernel(Q, K, V, O, qk_scale, S, H, stride_b, stride_h, stride_s, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr, HEAD_D: tl.constexpr):
    bh = tl.program_id(1)
    base = (bh // H).to(tl.int64) * stride_b + (bh % H).to(tl.int64) * stride_h
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_D)
    q = tl.load(Q + base + offs_m[:, None] * stride_s + offs_d[None, :], mask=offs_m[:, None] < S, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_D], tl.float32)
    for start in range(0, S, BLOCK_N):
        cols = start + offs_n
        # k is loaded transposed, [HEAD_D, BLOCK_N]
        k = tl.load(K + base + cols[None, :] * stride_s + offs_d[:, None], mask=cols[None, :] < S, other=0.0)
        qk = tl.dot(q, k) * qk_scale
        qk = tl.where(cols[None, :] < S, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(V + base + cols[:, None] * stride_s + offs_d[None, :], mask=cols[:, None] < S, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(O + base + offs_m[:, None] * stride_s + offs_d[None, :], out.to(O.dtype.element_ty),
             mask=offs_m[:, None] < S)


def attention_fwd(q, k, v, out=None):
    """softmax(q @ k^T / sqrt(head_dim)) @ v for contiguous [B, H, S, D] float16/bfloat16 q, k, v."""
    if q.dim() != 4 or q.shape != k.shape or q.shape != v.shape:
        raise ValueError("q, k, v must be [batch, heads, seq, head_dim] of one shape")
    if not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous()):
        raise ValueError("q, k, v must be contiguous")
    if q.dtype not in (torch.float16, torch.bfloat16):
        raise ValueError("attention takes float16 or bfloat16")
    b, h, s, d = q.shape
    if d not in (16, 32, 64, 128):
        raise ValueError(f"head_dim {d} is not one of 16, 32, 64, 128")
    out = out_tensor(out, q.shape, q.dtype, q.device)
    qk_scale = 1.4426950408889634 / math.sqrt(d)  # log2(e) / sqrt(d): the kernel uses exp2
    _attention_fwd_kernel[(triton.cdiv(s, BLOCK_M), b * h)](q, k, v, out, qk_scale, s, h, q.stride(0), q.stride(1),
                                                            q.stride(2), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                                                            HEAD_D=d, num_warps=4, num_stages=3)
    return out
