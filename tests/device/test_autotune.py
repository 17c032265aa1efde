"""autotune_record on a real autotuned kernel: record in one worker, replay in
a fresh one with no benchmarking at all, and a replay miss."""

import json

from worker import read_index, read_jsonl, request, run_session

TARGET = "benchmark/test_matmul.py::test_perf_matmul[float16]"
SHAPES = {"values": [[512, 512, 512]]}
KERNEL = "caliber_ops.matmul:_matmul_kernel"
KEY = "(512, 512, 512, 'torch.float16', 'torch.float16', 'torch.float16')"


def test_record_then_replay_then_miss(tmp_path):
    rec = tmp_path / "record"
    replies, _ = run_session([request(rec, TARGET, shapes=SHAPES)], tmp_path / "cache-record")
    assert replies[0]["exit"] == 0
    (decision, ) = read_jsonl(rec / "autotune.jsonl")
    assert decision["kernel"] == KERNEL and decision["key"] == KEY
    tuned = [r for r in read_index(rec) if r["kernel"] == "_matmul_kernel"]
    assert len(tuned) == 3 and all(r["tuning_launches"] > 0 for r in tuned)
    assert sum(r["launches"] > 0 for r in tuned) == 1

    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    rep, miss = tmp_path / "replay", tmp_path / "miss"
    replies, _ = run_session([
        request(rep, TARGET, mode="replay", autotune_file=rec / "autotune.jsonl", shapes=SHAPES),
        request(miss, TARGET, mode="replay", autotune_file=empty, shapes=SHAPES),
    ], tmp_path / "cache-replay")
    assert [r["exit"] for r in replies] == [0, 1]
    assert read_jsonl(rep / "autotune.jsonl") == [decision]
    index = read_index(rep)
    assert all(r["tuning_launches"] == 0 for r in index)
    (mm, ) = [r for r in index if r["kernel"] == "_matmul_kernel"]
    meta = json.loads((rep / "ir" / mm["variant"] / "_matmul_kernel.json").read_text())
    assert meta["num_warps"] == decision["config"]["num_warps"]
    assert meta["num_stages"] == decision["config"]["num_stages"]
    assert json.loads((miss / "replay_miss.json").read_text()) == {"kernel": KERNEL, "key": KEY}
    assert not (rep / "replay_miss.json").exists()
