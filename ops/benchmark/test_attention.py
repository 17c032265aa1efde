"""Benchmark of attention forward; shapes are (batch, heads, seq, head_dim)."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import row_inputs, run_rows


@pytest.mark.attention_fwd
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
])
def test_perf_attention_fwd(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        q, k, v = row_inputs("attention_fwd", dtype, shape, [shape, shape, shape])
        out = torch.empty(shape, dtype=dtype, device="cuda")
        return lambda: ops.attention_fwd(q, k, v, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, [(4, 16, 2048, 64), (8, 16, 1024, 64)], build)
