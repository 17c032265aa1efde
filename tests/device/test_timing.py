"""timing and compat on the GPU: a graph-timed row, a direct-timed row, their
launch counts, device.json, and a corpus's own do_bench routed to caliber."""

import json
import os

from worker import QUICK_TIMER, read_index, read_jsonl, request, run_session

TARGET = "benchmark/test_reduction.py::test_perf_sum_rows[float16]"
SHAPES = {"values": [[4096, 1024]]}
COMPAT_CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compat_corpus")


def _op_row(cell):
    """The only timing row of the cell and the launches of the measured kernel."""
    (row, ) = read_jsonl(cell / "timing.jsonl")
    (op, ) = [r for r in read_index(cell) if r["kernel"] == "_sum_rows_kernel"]
    return row, op["launches"]


def _check_samples(row):
    assert len(row["samples_ns"]) == QUICK_TIMER["repeats"]
    assert all(isinstance(s, int) and s > 0 for s in row["samples_ns"])
    for when in ("before", "after"):
        clocks = row["clocks"][when]
        assert clocks is None or (clocks["sm_mhz"] > 0 and clocks["mem_mhz"] > 0)


def test_graph_direct_and_compat(tmp_path):
    graph, direct, compat = tmp_path / "graph", tmp_path / "direct", tmp_path / "compat"
    off = dict(QUICK_TIMER, graph_capture="off")
    replies, out = run_session([
        request(graph, TARGET, shapes=SHAPES),
        request(direct, TARGET, shapes=SHAPES, timer=off, extra_env={"CALIBER_GRAPH_CAPTURE": "0"}),
        request(compat, "bench_compat.py", extra_env={"CALIBER_CORPUS": COMPAT_CORPUS}),
    ], tmp_path / "cache")
    assert [r["exit"] for r in replies] == [0, 0, 0], out[-3000:]

    row, launches = _op_row(graph)
    assert row["timer"] == "graph" and row["timer_reason"] == "captured"
    assert row["row"] == f"{TARGET}|4096x1024" and row["shape"] == "4096x1024" and row["dtype"] == "float16"
    _check_samples(row)
    assert launches == 3 + 5 + row["n_calls"]  # captured once, replays not counted

    row, launches = _op_row(direct)
    assert row["timer"] == "direct" and row["timer_reason"] == "timer.graph_capture is off"
    _check_samples(row)
    assert launches == 3 + 5 + row["n_calls"] * QUICK_TIMER["repeats"]

    rows = read_jsonl(compat / "timing.jsonl")
    assert [r["row"] for r in rows] == ["bench_compat.py::test_own_timing|do_bench#1",
                                        "bench_compat.py::test_own_timing|do_bench#2"]
    for r in rows:
        assert r["timer"] == "graph"
        _check_samples(r)

    device = json.loads((graph / "device.json").read_text())
    assert "H200" in device["name"] and device["uuid"].startswith("GPU-")
    assert sorted(device) == ["clocks", "driver", "index", "name", "uuid"]


def test_failed_capture_falls_back_and_keeps_rng(tmp_path):
    cell = tmp_path / "uncapturable"
    replies, out = run_session([request(cell, "bench_uncapturable.py", extra_env={"CALIBER_CORPUS": COMPAT_CORPUS})],
                               tmp_path / "cache")
    assert [r["exit"] for r in replies] == [0], out[-3000:]
    (row, ) = read_jsonl(cell / "timing.jsonl")
    assert row["timer"] == "direct" and row["timer_reason"].startswith("capture failed: "), row
    _check_samples(row)
