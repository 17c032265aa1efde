"""Benchmark of cross-entropy; shapes are (M rows, V classes)."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import row_inputs, run_rows


@pytest.mark.cross_entropy
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_cross_entropy(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        m, v = shape
        logits, u = row_inputs("cross_entropy", dtype, shape, [shape, (m, )])
        target = (u.float().clamp(0, 0.999999) * v).long()  # uniform class ids (torch, untimed)
        out = torch.empty(m, device="cuda")
        return lambda: ops.cross_entropy(logits, target, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, [(4096, 32000), (16384, 8192)], build)
