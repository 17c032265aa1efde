"""Benchmark inputs: one Triton launch builds all the inputs of a row.

_fill_random takes the element count and the seed as constexprs, so each
benchmark row's input build is a variant of its own, launched exactly once;
a campaign's measured_launch_floor of 1 leaves exactly these out of the
topology count. The row's tensors are slices of that one buffer."""

import math
import zlib

import torch
import triton
import triton.language as tl

BLOCK = 1024
ALIGN = 64  # elements: every slice starts 128-byte aligned or better


@triton.jit
def _fill_random(out_ptr, N: tl.constexpr, SEED: tl.constexpr, UNIFORM: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    if UNIFORM:
        value = tl.rand(SEED, offs)
    else:
        value = tl.randn(SEED, offs)
    tl.store(out_ptr + offs, value.to(out_ptr.dtype.element_ty), mask=mask)


def row_seed(*parts):
    """A seed fixed by the row's identity (op, dtype, shape), so reruns get the same data."""
    return zlib.crc32("|".join(str(p) for p in parts).encode()) & 0x7FFFFFFF


def random_inputs(seed, dtype, shapes, uniform=False, device="cuda"):
    """Tensors of the given shapes, N(0,1) (or U[0,1) with uniform=True), all sliced
    from one buffer that a single _fill_random launch fills."""
    sizes = [math.prod(s) for s in shapes]
    starts, total = [], 0
    for n in sizes:
        starts.append(total)
        total += -(-n // ALIGN) * ALIGN
    if total >= 2**31:
        raise ValueError(f"{total} elements are too many for one fill")
    buf = torch.empty(total, dtype=dtype, device=device)
    _fill_random[(triton.cdiv(total, BLOCK), )](buf, N=total, SEED=seed, UNIFORM=uniform, BLOCK=BLOCK)
    return [buf[s:s + n].view(shape) for s, n, shape in zip(starts, sizes, shapes)]
