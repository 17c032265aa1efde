"""Benchmarks of the indexed reads and writes. gather shapes are (M, N, K);
index_select, embedding and scatter_add shapes are (V rows, D, M indices).
Indices come from the row's one fill (uniform values), turned into int64 by
torch outside the timed call."""

import pytest
import torch

import caliber_ops as ops
from caliber_ops.testing import row_inputs, run_rows


def _indices(u, high):
    """Uniform [0, 1) values as int64 indices in [0, high)."""
    return (u.float().clamp(0, 0.999999) * high).long()


@pytest.mark.gather
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_gather(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        m, n, k = shape
        x, u = row_inputs("gather", dtype, shape, [(m, n), (m, k)], uniform=True)
        idx = _indices(u, n)
        out = torch.empty((m, k), dtype=dtype, device="cuda")
        return lambda: ops.gather(x, idx, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, [(16384, 4096, 2048), (4096, 16384, 4096)], build)


@pytest.mark.index_select
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_index_select(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        v, d, m = shape
        x, u = row_inputs("index_select", dtype, shape, [(v, d), (m, )], uniform=True)
        idx = _indices(u, v)
        out = torch.empty((m, d), dtype=dtype, device="cuda")
        return lambda: ops.index_select(x, idx, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, [(65536, 1024, 32768), (8192, 4096, 16384)], build)


@pytest.mark.embedding
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
    pytest.param(torch.float32, id="float32"),
])
def test_perf_embedding(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        v, d, m = shape
        w, u = row_inputs("embedding", dtype, shape, [(v, d), (m, )], uniform=True)
        ids = _indices(u, v)
        out = torch.empty((m, d), dtype=dtype, device="cuda")
        return lambda: ops.embedding(w, ids, out=out)
    run_rows(caliber_bench, caliber_shapes, dtype, [(32000, 4096, 16384), (128000, 2048, 32768)], build)


@pytest.mark.scatter_add
@pytest.mark.parametrize("dtype", [
    pytest.param(torch.float32, id="float32"),
])
def test_perf_scatter_add(dtype, caliber_bench, caliber_shapes):
    def build(shape):
        v, d, m = shape
        out, src, u = row_inputs("scatter_add", dtype, shape, [(v, d), (m, d), (m, )], uniform=True)
        idx = _indices(u, v)
        return lambda: ops.scatter_add(out, idx, src)
    run_rows(caliber_bench, caliber_shapes, dtype, [(16384, 1024, 65536), (4096, 4096, 16384)], build)
