"""Correctness of the indexed reads (exact) and of scatter_add against PyTorch."""

import torch
import torch.nn.functional as F

import caliber_ops as ops
from caliber_ops.testing import assert_close, case, poisoned, randn


@case("gather", [(37, 1000, 100), (256, 4096, 700)])
def test_gather(dtype, shape):
    m, n, k = shape
    x = randn((m, n), dtype)
    idx = torch.randint(0, n, (m, k), device="cuda")
    assert torch.equal(ops.gather(x, idx, out=poisoned((m, k), dtype)), torch.gather(x, 1, idx))


@case("index_select", [(100, 37, 50), (5000, 1000, 3000)])
def test_index_select(dtype, shape):
    v, d, m = shape
    x = randn((v, d), dtype)
    idx = torch.randint(0, v, (m, ), device="cuda")
    assert torch.equal(ops.index_select(x, idx, out=poisoned((m, d), dtype)), x.index_select(0, idx))


@case("embedding", [(100, 37, 50), (5000, 1000, 3000)])
def test_embedding(dtype, shape):
    v, d, m = shape
    w = randn((v, d), dtype)
    ids = torch.randint(0, v, (m, ), device="cuda")
    assert torch.equal(ops.embedding(w, ids, out=poisoned((m, d), dtype)), F.embedding(ids, w))


@case("scatter_add", [(100, 37, 50), (1000, 1000, 5000)])
def test_scatter_add(dtype, shape):
    v, d, m = shape
    base = randn((v, d), dtype)  # random, not zeros: an overwrite instead of an add shows
    src = randn((m, d), dtype)
    idx = torch.randint(0, v, (m, ), device="cuda")
    expected = base.clone().index_add_(0, idx, src)
    assert_close(ops.scatter_add(base, idx, src), expected, dtype, rtol=1e-5, atol=1e-5)
