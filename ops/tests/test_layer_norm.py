"""Correctness of LayerNorm forward and backward against PyTorch autograd in float32."""

import pytest
import torch
import torch.nn.functional as F

import caliber_ops as ops
from caliber_ops.testing import assert_close, poisoned, randn, shape_id

SHAPES = [(37, 1000), (300, 4096)]
EPS_LN = 1e-5


def _ln_inputs(dtype, shape):
    """x, weight, bias, dy for a LayerNorm of shape."""
    n = shape[1]
    return randn(shape, dtype), 1 + 0.1 * randn((n, ), dtype), 0.1 * randn((n, ), dtype), randn(shape, dtype)


@pytest.mark.layer_norm_fwd
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_layer_norm_fwd(dtype, shape):
    x, w, b, _ = _ln_inputs(dtype, shape)
    m = shape[0]
    y, mean, rstd = ops.layer_norm_fwd(x, w, b, EPS_LN, out=(poisoned(shape, dtype), poisoned((m, ), torch.float32),
                                                             poisoned((m, ), torch.float32)))
    xf = x.float()
    assert_close(y, F.layer_norm(xf, (shape[1], ), w.float(), b.float(), EPS_LN), dtype)
    assert_close(mean, xf.mean(1), torch.float32)
    assert_close(rstd, torch.rsqrt(xf.var(1, unbiased=False) + EPS_LN), torch.float32)


@pytest.mark.layer_norm_bwd
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_layer_norm_bwd(dtype, shape):
    x, w, b, dy = _ln_inputs(dtype, shape)
    n = shape[1]
    xf = x.float().requires_grad_()
    wf = w.float().requires_grad_()
    bf = b.float().requires_grad_()
    F.layer_norm(xf, (n, ), wf, bf, EPS_LN).backward(dy.float())
    mean = x.float().mean(1)
    rstd = torch.rsqrt(x.float().var(1, unbiased=False) + EPS_LN)
    dx, dw, db = ops.layer_norm_bwd(dy, x, w, mean, rstd,
                                    out=(poisoned(shape, dtype), poisoned((n, ), dtype), poisoned((n, ), dtype)))
    assert_close(dx, xf.grad, dtype)
    assert_close(dw, wf.grad, dtype)
    assert_close(db, bf.grad, dtype)
