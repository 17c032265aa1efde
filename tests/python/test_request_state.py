"""Each plugin's state belongs to one request. A worker serves many requests in
one process, one pytest session each; a plugin keeps what it knows of a
request in that session's config.stash, so nothing of one request reaches the
next. Run through the real worker session over the fake GPU of tests/fakegpu
(fake torch and triton), as the runner does."""

import hashlib
import json
import os
import textwrap

from caliber_pytest._variant import variant_name
from fake_gpu import write_fake_site
from repo_paths import PYTHON_DIR
from worker_session import request, serve

TIMER = {"graph_capture": "auto", "kind": "native-event", "rep_ms": 3, "repeats": 3, "warmup_ms": 1}


def _corpus(tmp_path, tests):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in tests.items():
        (corpus / name).write_text(textwrap.dedent(text))
    return corpus


def _env(tmp_path):
    """The worker's environment: caliber's python/ and the fake torch and triton."""
    return {"PYTHONPATH": os.pathsep.join([PYTHON_DIR, write_fake_site(tmp_path)]),
            "FAKE_TRITON_LOG": str(tmp_path / "triton.log"), "CALIBER_GRAPH_CAPTURE": None,
            "CALIBER_CELL_DIR": None, "CALIBER_TIMER": None, "CALIBER_DTYPES": None, "CALIBER_SHAPES": None}


def _request(tmp_path, task, plugins, target, **env):
    """A request whose cell folder is tmp_path/task."""
    return request(task, ["-q", "-s", "-p", "no:cacheprovider", *[a for p in plugins for a in ("-p", p)], target],
                   dict(env, CALIBER_CELL_DIR=str(tmp_path / task), CALIBER_TASK=task))


# --- ir_meta ----------------------------------------------------------------------------------------

LAUNCH_TEST = """
    import os

    from triton import knobs

    FUNCTIONS = {"a": 0x7F0000001000, "b": 0x7F0000002000, "c": 0x7F0000003000}
    HASHES = {"a": "aa" * 32, "b": "bb" * 32, "c": "cc" * 32}


    class Metadata:
        def __init__(self, fields):
            self.fields = fields

        def get(self):
            return dict(self.fields)


    def load(kernel):
        group = {}
        for suffix in (".ttgir", ".json"):
            path = os.path.abspath(f"k_{kernel}{suffix}")
            with open(path, "w") as f:
                f.write(kernel + suffix)
            group[f"k_{kernel}{suffix}"] = path
        knobs.runtime.kernel_load_end_hook(None, FUNCTIONS[kernel], f"k_{kernel}", group, HASHES[kernel])


    def launch(kernel, n):
        for _ in range(int(n)):
            knobs.runtime.launch_enter_hook(Metadata({"function": FUNCTIONS[kernel], "name": f"k_{kernel}"}))


    def test_launches():
        # exactly this request's handlers are attached: the last request's are off
        assert len(knobs.runtime.kernel_load_end_hook.calls) == 1
        assert len(knobs.runtime.launch_enter_hook.calls) == 1
        for step in os.environ["LAUNCHES"].split(";"):
            if step:
                action, *args = step.split()
                {"load": load, "launch": launch}[action](*args)
"""


def _index(cell):
    return (cell / "ir" / "index.tsv").read_text().splitlines()


def test_ir_meta_counts_each_request_alone(tmp_path):
    """The second request launches variant a again (loaded by the first: the
    process-wide function map still joins it) and counts only its own launch;
    the unknown launch of the second request does not fail the third."""
    corpus = _corpus(tmp_path, {"test_launch.py": LAUNCH_TEST})
    plugins = ["caliber_pytest.ir_meta"]
    status, replies, out = serve(corpus, [
        _request(tmp_path, "r1", plugins, "test_launch.py", LAUNCHES="load a;launch a 3"),
        _request(tmp_path, "r2", plugins, "test_launch.py", LAUNCHES="launch a 1;load b;launch b 2;launch c 1"),
        _request(tmp_path, "r3", plugins, "test_launch.py", LAUNCHES=""),
    ], _env(tmp_path))
    assert status == 0, out
    assert [r["exit"] for r in replies] == [0, 3, 0], out
    a, b = variant_name("aa" * 32), variant_name("bb" * 32)
    header = "variant\tkernel\tlaunches\ttuning_launches"
    assert _index(tmp_path / "r1") == [header, f"{a}\tk_a\t3\t0"]
    assert _index(tmp_path / "r2") == [header] + sorted([f"{a}\tk_a\t1\t0", f"{b}\tk_b\t2\t0"])
    assert _index(tmp_path / "r3") == [header]
    assert sorted(os.listdir(tmp_path / "r1" / "ir")) == sorted([a, "binaries.tsv", "index.tsv", "resources.tsv"])
    assert sorted(os.listdir(tmp_path / "r2" / "ir")) == sorted([a, b, "binaries.tsv", "index.tsv", "resources.tsv"])
    assert sorted(os.listdir(tmp_path / "r3" / "ir")) == ["binaries.tsv", "index.tsv", "resources.tsv"]
    # loaded by hand, with no CompiledKernel behind the hook and no JSON metadata: nothing is known
    header = "variant\tkernel\tn_regs\tn_spills\tshared\tnum_stages\tnum_warps"
    assert (tmp_path / "r2" / "ir" / "resources.tsv").read_text().splitlines() == [header] + sorted(
        [f"{a}\tk_a\t-\t-\t-\t-\t-", f"{b}\tk_b\t-\t-\t-\t-\t-"])
    assert (tmp_path / "r2" / "ir" / b / "k_b.ttgir").read_text() == "b.ttgir"
    # no binary in the group, and metadata that is not JSON: only the TTGIR is digested
    ttgir_a = hashlib.sha256(b"a.ttgir\n").hexdigest()
    assert (tmp_path / "r1" / "ir" / "binaries.tsv").read_text().splitlines() == [
        "variant\tkernel\tbinary\tbinary_sha256\tcode_sha256\tttgir_sha256\tlaunch", f"{a}\tk_a\t-\t-\t-\t{ttgir_a}\t-"]
    assert out.count("launches of kernels loaded before the hook was attached: k_c;") == 1, out


# --- timing -----------------------------------------------------------------------------------------

BENCH_TEST = """
    import torch


    def test_row(caliber_bench):
        caliber_bench(lambda: torch.cuda.run(0.02), "r", shape="8x8", dtype="float16")
"""


def _rows(cell):
    return [json.loads(line) for line in (cell / "timing.jsonl").read_text().splitlines()]


def test_timing_rows_and_settings_are_each_requests_own(tmp_path):
    """Both requests time the same row (the first one's rows would make it
    'timed twice'), each with its own timer and graph setting, into its own cell."""
    corpus = _corpus(tmp_path, {"test_bench.py": BENCH_TEST})
    plugins = ["caliber_pytest.timing"]
    status, replies, out = serve(corpus, [
        _request(tmp_path, "r1", plugins, "test_bench.py", CALIBER_TIMER=json.dumps(TIMER)),
        _request(tmp_path, "r2", plugins, "test_bench.py", CALIBER_TIMER=json.dumps(dict(TIMER, rep_ms=6)),
                 CALIBER_GRAPH_CAPTURE="1"),
    ], _env(tmp_path))
    assert status == 0 and [r["exit"] for r in replies] == [0, 0], out
    first, second = _rows(tmp_path / "r1"), _rows(tmp_path / "r2")
    assert [r["row"] for r in first] == [r["row"] for r in second] == ["test_bench.py::test_row|r"]
    assert (first[0]["n_calls"], first[0]["timer"], first[0]["timer_reason"]) == (
        50, "direct", "CALIBER_GRAPH_CAPTURE is not set")
    assert (second[0]["n_calls"], second[0]["timer"], second[0]["timer_reason"]) == (100, "graph", "captured")


# --- compat -----------------------------------------------------------------------------------------

BY_NAME_TEST = """
    import pytest
    import torch
    from triton.testing import do_bench


    def test_own_timing():
        assert do_bench(lambda: torch.cuda.run(0.004), return_mode="median") == pytest.approx(0.004)
"""


def _triton_calls(tmp_path):
    path = tmp_path / "triton.log"
    return [json.loads(line)["name"] for line in path.read_text().splitlines()] if path.exists() else []


def test_do_bench_bound_by_name_follows_the_request(tmp_path):
    """The test module binds do_bench by name when the first request imports it,
    and the worker keeps the module: the second request still routes that
    do_bench, to its own rows; a request without compat gets Triton's own."""
    corpus = _corpus(tmp_path, {"test_by_name.py": BY_NAME_TEST})
    compat = ["caliber_pytest.timing", "caliber_pytest.compat"]
    timer = json.dumps(TIMER)
    status, replies, out = serve(corpus, [
        _request(tmp_path, "r1", compat, "test_by_name.py", CALIBER_TIMER=timer),
        _request(tmp_path, "r2", compat, "test_by_name.py", CALIBER_TIMER=timer),
        _request(tmp_path, "r3", ["caliber_pytest.timing"], "test_by_name.py", CALIBER_TIMER=timer),
    ], _env(tmp_path))
    assert status == 0 and [r["exit"] for r in replies] == [0, 0, 0], out
    for task in ("r1", "r2"):
        assert [r["row"] for r in _rows(tmp_path / task)] == ["test_by_name.py::test_own_timing|do_bench#1"]
    assert _rows(tmp_path / "r3") == []
    assert _triton_calls(tmp_path) == ["do_bench"]


# --- shapes -----------------------------------------------------------------------------------------

SHAPES_TEST = """
    import pytest


    @pytest.mark.parametrize("dtype", ["float16", "float32", "bfloat16"])
    def test_perf(dtype, caliber_shapes):
        print("SHAPES", dtype, caliber_shapes([(1, 2)]))
"""


def test_shapes_and_dtypes_are_each_requests_own(tmp_path):
    corpus = _corpus(tmp_path, {"test_shapes.py": SHAPES_TEST})
    plugins = ["caliber_pytest.shapes"]
    status, replies, out = serve(corpus, [
        _request(tmp_path, "r1", plugins, "test_shapes.py", CALIBER_DTYPES="float16",
                 CALIBER_SHAPES='{"values": [[8, 8]]}'),
        _request(tmp_path, "r2", plugins, "test_shapes.py", CALIBER_DTYPES="", CALIBER_SHAPES="{}"),
    ], _env(tmp_path))
    assert status == 0 and [r["exit"] for r in replies] == [0, 0], out
    assert "1 passed, 2 deselected" in out and "3 passed" in out, out
    assert out.count("SHAPES float16 [(8, 8)]") == 1 and "SHAPES float32 [(8, 8)]" not in out, out
    assert all(f"SHAPES {d} [(1, 2)]" in out for d in ("float16", "float32", "bfloat16")), out
