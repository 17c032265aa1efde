"""compile.json: what a request spent compiling. CompileLog against Triton
3.6's listener protocol (keyword arguments, a CompileTimes in microseconds),
then ir_meta over the fake GPU's triton, which calls the listener as Triton's
compile() does: on a compile, on a hit in the cell's on-disk cache, and not
at all for a kernel the process already holds."""

import importlib.util
import json
import os
import textwrap
import types

from caliber_pytest._compile_log import CompileLog
from fake_gpu import SITE, write_fake_site
from repo_paths import PYTHON_DIR
from worker_session import request, serve


def _fake_knobs():
    spec = importlib.util.spec_from_file_location("_fake_knobs", os.path.join(SITE, "triton", "knobs.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


KNOBS = _fake_knobs()


def _compile(log, stages, cache_hit=False):
    times = KNOBS.CompileTimes(ir_initialization=stages[0], lowering_stages=list(stages[1]),
                               store_results=stages[2])
    log(src=object(), metadata={"name": "k"}, metadata_group={}, times=times, cache_hit=cache_hit)


def test_counts_compiles_and_hits_in_microseconds_and_chains(tmp_path):
    """times.total (make_ir + stages + store) goes to compile_us or, on a cache
    hit, cache_hit_us; the listener that was there is still called, and is
    back after detach; the counts written after detach say it listened."""
    seen = []
    knobs = types.SimpleNamespace(compilation=types.SimpleNamespace(listener=lambda **kw: seen.append(kw)))
    previous = knobs.compilation.listener
    log = CompileLog()
    log.attach(knobs)
    assert knobs.compilation.listener is log
    _compile(knobs.compilation.listener, (2000, [("ttir", 1000), ("ttgir", 4000), ("cubin", 30000)], 500))
    _compile(knobs.compilation.listener, (1500, [("ttir", 700)], 0))
    _compile(knobs.compilation.listener, (200, [], 0), cache_hit=True)
    log.detach(knobs)
    assert knobs.compilation.listener is previous
    assert [kw["cache_hit"] for kw in seen] == [False, False, True]
    assert sorted(seen[0]) == ["cache_hit", "metadata", "metadata_group", "src", "times"]
    log.write(str(tmp_path))
    assert json.loads((tmp_path / "compile.json").read_text()) == {
        "cache_hit_us": 200, "cache_hits": 1, "compile_us": 37500 + 2200, "compiles": 2, "listened": True}


def test_a_triton_without_the_listener_is_not_listened_to(tmp_path):
    """No knobs.compilation.listener (a Triton before 3.4): nothing attached, listened false."""
    knobs = types.SimpleNamespace(runtime=types.SimpleNamespace())
    log = CompileLog()
    log.attach(knobs)
    log.detach(knobs)
    log.write(str(tmp_path))
    assert json.loads((tmp_path / "compile.json").read_text()) == {
        "cache_hit_us": 0, "cache_hits": 0, "compile_us": 0, "compiles": 0, "listened": False}


KERNEL_TEST = """
    import triton
    import triton.language as tl


    @triton.jit
    def copy_kernel(n, BLOCK: tl.constexpr):
        pass


    def test_launch():
        copy_kernel[(1,)](8, BLOCK=128)
        copy_kernel[(1,)](8, BLOCK=128)
"""

# The fake triton's CompileTimes of a kernel without converts (jit.py): make_ir 2000,
# ttir 1000, ttgir 4000, llir 3000, ptx 5000, cubin 30000, store 500; a cache hit is its lookup, 200.
COMPILE_US, HIT_US = 45500, 200


def _serve(tmp_path, tasks, cache):
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    (corpus / "test_kernel.py").write_text(textwrap.dedent(KERNEL_TEST))
    env = {"PYTHONPATH": os.pathsep.join([PYTHON_DIR, write_fake_site(tmp_path)]), "TRITON_CACHE_DIR": str(cache),
           "CALIBER_CELL_DIR": None, "CALIBER_GRAPH_CAPTURE": None}
    requests = [request(t, ["-q", "-p", "no:cacheprovider", "-p", "caliber_pytest.ir_meta", "test_kernel.py"],
                        {"CALIBER_CELL_DIR": str(tmp_path / t), "CALIBER_TASK": t}) for t in tasks]
    status, replies, out = serve(corpus, requests, env)
    assert status == 0 and [r["exit"] for r in replies] == [0] * len(tasks), out
    return [json.loads((tmp_path / t / "compile.json").read_text()) for t in tasks]


def test_ir_meta_writes_what_each_request_compiled(tmp_path):
    """One worker: the first request compiles the kernel (launched twice,
    compiled once), the second finds it in the process and compiles nothing.
    A second worker on the same cache loads it from there: a cache hit."""
    cache = tmp_path / "triton"
    first, second = _serve(tmp_path, ["r1", "r2"], cache)
    assert first == {"cache_hit_us": 0, "cache_hits": 0, "compile_us": COMPILE_US, "compiles": 1, "listened": True}
    assert second == {"cache_hit_us": 0, "cache_hits": 0, "compile_us": 0, "compiles": 0, "listened": True}
    (third,) = _serve(tmp_path, ["r3"], cache)
    assert third == {"cache_hit_us": HIT_US, "cache_hits": 1, "compile_us": 0, "compiles": 0, "listened": True}
