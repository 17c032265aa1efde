"""ir_meta on real kernels: the launch index, the IR copies, the binaries
(ir/binaries.tsv), a variant compiled by an earlier request of the same
worker process, and the compile-only pass of run --prescreen."""

import csv
import hashlib
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
        assert sorted(os.listdir(cell / "ir")) == sorted([r["variant"] for r in index] + ["index.tsv", "resources.tsv", "binaries.tsv"])
    binaries = [read_binaries(cell) for cell in cells]
    assert binaries[0] == binaries[1], "the same process runs the same binaries in both requests"
    for row in binaries[0]:
        cubin = (cache / row["variant"] / (row["kernel"] + ".cubin")).read_bytes()
        assert row["binary"] == row["kernel"] + ".cubin" and row["binary_sha256"] == hashlib.sha256(cubin).hexdigest()
        # ptxas's line tables name the source folders: the code digest leaves them out
        assert row["code_sha256"] != row["binary_sha256"] and "num_warps=" in row["launch"], row


def read_binaries(cell_dir):
    """ir/binaries.tsv rows as dicts."""
    with open(os.path.join(cell_dir, "ir", "binaries.tsv"), newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def test_compile_only_pass_launches_the_warm_up_and_times_nothing(tmp_path):
    """CALIBER_PHASE=screen: the row is called as its warm-up starts (and
    once more), its IR, index and binaries are written, no timing row."""
    cell = tmp_path / "screen"
    replies, _ = run_session([request(cell, TARGET, shapes=SHAPES, phase="screen")], tmp_path / "cache")
    assert [r["exit"] for r in replies] == [0]
    by_kernel = {r["kernel"]: r for r in read_index(cell)}
    assert by_kernel["_sum_rows_kernel"]["launches"] == 3 + 1
    assert (cell / "timing.jsonl").read_text() == ""
    assert {r["kernel"] for r in read_binaries(cell)} == {"_fill_random", "_sum_rows_kernel"}
