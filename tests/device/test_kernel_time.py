"""Per-kernel time and resources on the GPU (issue 28): the profiled replay of
each timed row joined to the launch index's variants, the index as it would
be without it, resources.tsv from the loaded CompiledKernels, and the
profiled GPU time of a large kernel against its timed median."""

import csv
import os
import statistics

from worker import QUICK_TIMER, read_index, read_jsonl, request, run_session

SUM_ROWS = "benchmark/test_reduction.py::test_perf_sum_rows[float16]"
GELU = "benchmark/test_matmul.py::test_perf_matmul_bias_gelu[float16]"


def _resources(cell):
    with open(os.path.join(cell, "ir", "resources.tsv"), newline="") as f:
        return {r["variant"]: r for r in csv.DictReader(f, delimiter="\t")}


def test_profiled_replays_join_and_leave_the_index_alone(tmp_path):
    cells = {"graph": tmp_path / "graph", "direct": tmp_path / "direct", "gelu": tmp_path / "gelu"}
    off = dict(QUICK_TIMER, graph_capture="off")
    replies, out = run_session([
        request(cells["graph"], SUM_ROWS, shapes={"values": [[4096, 1024]]}),
        request(cells["direct"], SUM_ROWS, shapes={"values": [[4096, 1024]]}, timer=off,
                extra_env={"CALIBER_GRAPH_CAPTURE": "0"}),
        request(cells["gelu"], GELU, shapes={"values": [[2048, 2048, 2048]]}),
    ], tmp_path / "cache")
    assert [r["exit"] for r in replies] == [0, 0, 0], out[-3000:]
    for name, cell in cells.items():
        (row, ) = read_jsonl(cell / "timing.jsonl")
        (line, ) = read_jsonl(cell / "kernels.jsonl")
        index = {r["variant"]: r for r in read_index(cell)}
        assert line["error"] is None, (name, line)
        assert line["row"] == row["row"] and line["timer"] == row["timer"]
        assert line["calls"] == min(row["n_calls"], 200)
        triton = [k for k in line["kernels"] if k["variant"] is not None]
        assert triton and all(k["variant"] in index and index[k["variant"]]["kernel"] == k["kernel"] for k in triton)
        assert sum(k["launches"] for k in triton) == line["launches"]
        res = _resources(cell)
        assert set(res) == set(index)
        for v in res.values():
            assert int(v["n_regs"]) > 0 and int(v["num_warps"]) > 0 and v["n_spills"] != "-", v
        if name == "graph":
            (op, ) = [r for r in index.values() if r["kernel"] == "_sum_rows_kernel"]
            # warm-up and sizing, and the timed graph's capture; the profiled replay's capture is not counted
            assert op["launches"] == 3 + 5 + row["n_calls"]
    # a large kernel back to back in a graph: the profiled GPU time per call is the timed median's
    (row, ) = read_jsonl(cells["gelu"] / "timing.jsonl")
    (line, ) = read_jsonl(cells["gelu"] / "kernels.jsonl")
    gpu = sum(k["total_ns"] for k in line["kernels"]) / line["calls"]
    assert abs(gpu / statistics.median(row["samples_ns"]) - 1) < 0.05, (gpu, row["samples_ns"])
