"""A corpus benchmark whose operator syncs with the host, so graph capture
fails, and whose next input comes from torch.randn, as FlagGems' gelu_backward
benchmark does: the row must fall back to direct timing and the draw after
it must still work."""

import torch
import triton.testing

import caliber_ops as ops


def test_uncapturable_then_randn():
    x = torch.randn(4096, 1024, device="cuda", dtype=torch.float16)
    out = torch.empty(4096, device="cuda", dtype=torch.float16)

    def op():
        ops.sum_rows(x, out=out)
        return out[0].item()  # a host sync: not allowed while capturing

    assert triton.testing.do_bench(op, return_mode="median") > 0
    y = torch.randn(4096, 1024, device="cuda", dtype=torch.float16)
    assert torch.isfinite(y).all()
