"""Correctness of the indexed reads (exact) and of scatter_add against PyTorch."""

import pytest
import torch
import torch.nn.functional as F

import caliber_ops as ops
from caliber_ops.testing import assert_close, poisoned, randn, shape_id


@pytest.mark.gather
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", [(37, 1000, 100), (256, 4096, 700)], ids=shape_id)
def test_gather(dtype, shape):
    m, n, k = shape
    x = randn((m, n), dtype)
    idx = torch.randint(0, n, (m, k), device="cuda")
    assert torch.equal(ops.gather(x, idx, out=poisoned((m, k), dtype)), torch.gather(x, 1, idx))


@pytest.mark.index_select
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", [(100, 37, 50), (5000, 1000, 3000)], ids=shape_id)
def test_index_select(dtype, shape):
    v, d, m = shape
    x = randn((v, d), dtype)
    idx = torch.randint(0, v, (m, ), device="cuda")
    assert torch.equal(ops.index_select(x, idx, out=poisoned((m, d), dtype)), x.index_select(0, idx))


@pytest.mark.embedding
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", [(100, 37, 50), (5000, 1000, 3000)], ids=shape_id)
def test_embedding(dtype, shape):
    v, d, m = shape
    w = randn((v, d), dtype)
    ids = torch.randint(0, v, (m, ), device="cuda")
    assert torch.equal(ops.embedding(w, ids, out=poisoned((m, d), dtype)), F.embedding(ids, w))


@pytest.mark.scatter_add
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float32, id="float32"),
])
@pytest.mark.parametrize("shape", [(100, 37, 50), (1000, 1000, 5000)], ids=shape_id)
def test_scatter_add(dtype, shape):
    v, d, m = shape
    base = randn((v, d), dtype)  # random, not zeros: an overwrite instead of an add shows
    src = randn((m, d), dtype)
    idx = torch.randint(0, v, (m, ), device="cuda")
    expected = base.clone().index_add_(0, idx, src)
    assert_close(ops.scatter_add(base, idx, src), expected, dtype, rtol=1e-5, atol=1e-5)
