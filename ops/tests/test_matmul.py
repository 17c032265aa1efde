"""Correctness of the matrix products against float32 PyTorch products."""

import pytest
import torch
import torch.nn.functional as F

import caliber_ops as ops
from caliber_ops.testing import assert_close, poisoned, randn, shape_id

SHAPES = [(65, 130, 70), (512, 384, 1024)]  # (M, N, K)


def _ab(dtype, m, n, k):
    """a [M, K] and b [K, N] scaled so the products stay near 1."""
    return randn((m, k), dtype), randn((k, n), dtype) / k ** 0.5


@pytest.mark.matmul
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_matmul(dtype, shape):
    m, n, k = shape
    a, b = _ab(dtype, m, n, k)
    assert_close(ops.matmul(a, b, out=poisoned((m, n), dtype)), a.float() @ b.float(), dtype)


@pytest.mark.bmm
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
])
@pytest.mark.parametrize("shape", [(3, 65, 130, 70), (4, 256, 128, 512)], ids=shape_id)
def test_bmm(dtype, shape):
    batch, m, n, k = shape
    a = randn((batch, m, k), dtype)
    b = randn((batch, k, n), dtype) / k ** 0.5
    assert_close(ops.bmm(a, b, out=poisoned((batch, m, n), dtype)), torch.bmm(a.float(), b.float()), dtype)


@pytest.mark.matmul_bias
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_matmul_bias(dtype, shape):
    m, n, k = shape
    a, b = _ab(dtype, m, n, k)
    bias = randn((n, ), dtype)
    out = ops.matmul_bias(a, b, bias, out=poisoned((m, n), dtype))
    assert_close(out, a.float() @ b.float() + bias.float(), dtype)


@pytest.mark.matmul_bias_gelu
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_matmul_bias_gelu(dtype, shape):
    m, n, k = shape
    a, b = _ab(dtype, m, n, k)
    bias = randn((n, ), dtype)
    out = ops.matmul_bias_gelu(a, b, bias, out=poisoned((m, n), dtype))
    assert_close(out, F.gelu(a.float() @ b.float() + bias.float()), dtype)
