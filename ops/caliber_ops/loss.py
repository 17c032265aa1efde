"""Cross-entropy per row of logits, with an online log-sum-exp over the vocabulary."""

import torch
import triton
import triton.language as tl

from ._util import contiguous_2d, out_tensor

BLOCK_V = 2048


@triton.jit
def _cross_entropy_kernel(LOGITS, TARGET, LOSS, V, stride, BLOCK_V: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = LOGITS + row * stride
    m = tl.full([], float("-inf"), tl.float32)
    s = tl.full([], 0.0, tl.float32)
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(base + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    target = tl.load(TARGET + row)
    picked = tl.load(base + target).to(tl.float32)
    tl.store(LOSS + row, m + tl.log(s) - picked)


def cross_entropy(logits, target, out=None):
    """F.cross_entropy(logits, target, reduction='none') as float32."""
    logits = contiguous_2d(logits)
    m, v = logits.shape
    out = out_tensor(out, (m, ), torch.float32, logits.device)
    _cross_entropy_kernel[(m, )](logits, target, out, v, logits.stride(0), BLOCK_V=BLOCK_V, num_warps=8)
    return out
