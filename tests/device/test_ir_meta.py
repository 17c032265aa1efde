"""ir_meta on real kernels: the launch index, the IR copies, and a variant
compiled by an earlier request of the same worker process."""

import os

from worker import read_index, read_jsonl, request, run_session

TARGET = "benchmark/test_reduction.py::test_perf_sum_rows[float16]"
SHAPES = {"values": [[4096, 1024]]}


def test_index_and_ir_across_two_requests(tmp_path):
    cache = tmp_path / "cache"
    cells = [tmp_path / "first", tmp_path / "second"]
    replies, _ = run_session([request(cell, TARGET, shapes=SHAPES) for cell in cells], cache)
    assert [r["exit"] for r in replies] == [0, 0]
    indexes = [read_index(cell) for cell in cells]
    # The second request compiles nothing: both kernels come from the process's
    # in-memory cache, loaded (and hooked) during the first request only.
    assert [r["variant"] for r in indexes[0]] == [r["variant"] for r in indexes[1]]
    for cell, index in zip(cells, indexes):
        assert [r["variant"] for r in index] == sorted(r["variant"] for r in index)
        by_kernel = {r["kernel"]: r for r in index}
        assert set(by_kernel) == {"_fill_random", "_sum_rows_kernel"}
        assert by_kernel["_fill_random"]["launches"] == 1
        (row, ) = read_jsonl(cell / "timing.jsonl")
        assert by_kernel["_sum_rows_kernel"]["launches"] == 3 + 5 + row["n_calls"]  # warm-up, estimate, capture
        for r in index:
            assert r["tuning_launches"] == 0
            for suffix in (".ttgir", ".json"):
                copied = cell / "ir" / r["variant"] / (r["kernel"] + suffix)
                cached = cache / r["variant"] / (r["kernel"] + suffix)
                assert copied.read_bytes() == cached.read_bytes()
        assert sorted(os.listdir(cell / "ir")) == sorted([r["variant"] for r in index] + ["index.tsv", "resources.tsv"])
