"""Correctness of RMSNorm forward and backward against float32 PyTorch autograd."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import assert_close, poisoned, randn, shape_id

SHAPES = [(37, 1000), (300, 4096)]
EPS_RMS = 1e-6


def _inputs(dtype, shape):
    """x, weight, dy for an RMSNorm of shape."""
    return randn(shape, dtype), 1 + 0.1 * randn((shape[1], ), dtype), randn(shape, dtype)


def _rms_reference(x, w):
    """RMSNorm in float32: x / sqrt(mean(x^2) + eps) * w."""
    return x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + EPS_RMS) * w


@pytest.mark.rms_norm_fwd
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_rms_norm_fwd(dtype, shape):
    x, w, _ = _inputs(dtype, shape)
    m = shape[0]
    y, rstd = ops.rms_norm_fwd(x, w, EPS_RMS, out=(poisoned(shape, dtype), poisoned((m, ), torch.float32)))
    xf = x.float()
    assert_close(y, _rms_reference(xf, w.float()), dtype)
    assert_close(rstd, torch.rsqrt(xf.pow(2).mean(1) + EPS_RMS), torch.float32)


@pytest.mark.rms_norm_bwd
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_rms_norm_bwd(dtype, shape):
    x, w, dy = _inputs(dtype, shape)
    n = shape[1]
    xf = x.float().requires_grad_()
    wf = w.float().requires_grad_()
    _rms_reference(xf, wf).backward(dy.float())
    rstd = torch.rsqrt(x.float().pow(2).mean(1) + EPS_RMS)
    dx, dw = ops.rms_norm_bwd(dy, x, w, rstd, out=(poisoned(shape, dtype), poisoned((n, ), dtype)))
    assert_close(dx, xf.grad, dtype)
    assert_close(dw, wf.grad, dtype)
