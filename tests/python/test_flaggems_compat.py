"""The compat plugin on FlagGems benchmarks, without a GPU: _flaggems' logic,
then a FlagGems-like corpus (both tree layouts) run by a caliber worker over
fake torch, triton and flag_gems, with the shapes, timing and compat plugins.

The fake corpus times like FlagGems: Benchmark.run calls record_shapes, then
get_latency(torch_op) for latency_base, then get_latency again inside
flag_gems.use_gems() for latency; get_latency calls triton.testing.do_bench
(or do_bench_cudagraph, or a wall-clock loop in operator mode). The fake op
lasts 0.02 ms on the simulated clock, 0.01 ms under use_gems."""

import json
import os
import textwrap
import types

import pytest

from caliber_pytest import _flaggems
from fake_gpu import write_fake_site
from repo_paths import PYTHON_DIR
from worker_session import request, serve

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
PLUGINS = ["-p", "caliber_pytest.shapes", "-p", "caliber_pytest.timing", "-p", "caliber_pytest.compat"]
TIMER = {"graph_capture": "auto", "kind": "native-event", "rep_ms": 3, "repeats": 3, "warmup_ms": 1}


# --- _flaggems without pytest ------------------------------------------------------------------

class Dtype:
    """Like torch.dtype: str() is 'torch.<name>', is_floating_point says what it holds."""

    def __init__(self, name, floating):
        self.name, self.is_floating_point = name, floating

    def __str__(self):
        return f"torch.{self.name}"


class Tensor:
    """What _flaggems takes for a tensor: something with shape and dtype."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


F16, F32, I64 = Dtype("float16", True), Dtype("float32", True), Dtype("int64", False)


def test_describe_renders_flaggems_shape_detail():
    assert _flaggems.describe([(4096, 4096), 1]) == "4096x4096, 1"
    assert _flaggems.describe([(1048576,)]) == "1048576"
    assert _flaggems.describe([(4, 1024), [1024], (1024,), (1024,), 1e-05]) == "4x1024, [1024], 1024, 1024, 1e-05"
    assert _flaggems.describe(([(8, 8), F16], {"out": (8, 8)})) == "8x8, float16, out=8x8"
    assert _flaggems.describe({"input": (2, 3)}) == "input=2x3"
    assert _flaggems.describe([(), None, True]) == "(), None, True"
    assert _flaggems.describe([]) == "()"


def test_row_dtype_prefers_the_first_floating_tensor():
    assert _flaggems.row_dtype([Tensor((4,), I64), Tensor((4, 4), F16), Tensor((4,), F32)]) is F16
    assert _flaggems.row_dtype([[Tensor((4,), I64)], {"w": Tensor((4,), F32)}]) is F32
    assert _flaggems.row_dtype([Tensor((4,), I64), 3]) is I64
    assert _flaggems.row_dtype([3, "x"]) is None
    assert _flaggems.row_key("64x64, 1", F16) == "float16 64x64, 1"
    assert _flaggems.row_key("64x64", None) == "64x64"


def test_rows_pair_each_baseline_with_its_measured_call():
    rows = _flaggems.Rows()
    key = "float16 8x8"
    assert rows.role(key, wants_base=True, op_is_torch_op=True) == _flaggems.BASE
    rows.keep_base(key, 0.0123456)
    # the measured call uses the same torch op (under use_gems): the waiting baseline says it is not one
    assert rows.role(key, wants_base=True, op_is_torch_op=True) == _flaggems.MEASURED
    assert (rows.label(key), rows.extra(key)) == (key, {"latency_base_ns": 12346})
    # a second input with the same description: baseline again, then a row of its own
    assert rows.role(key, wants_base=True, op_is_torch_op=True) == _flaggems.BASE
    rows.keep_base(key, 1)
    assert (rows.label(key), rows.extra(key)) == (f"{key} #2", {"latency_base_ns": 1000000})
    assert rows.role(key, wants_base=False, op_is_torch_op=True) == _flaggems.MEASURED
    assert rows.role(key, wants_base=True, op_is_torch_op=False) == _flaggems.MEASURED
    assert rows.extra(key) is None


def _module(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


class BenchConfig:
    pass


class Benchmark:
    def get_latency(self, op, *args, **kwargs):
        pass

    def record_shapes(self, *args, **kwargs):
        pass


def test_finds_the_benchmark_class_in_either_layout():
    assert _flaggems.find_benchmark_class({"benchmark.base": _module("benchmark.base", Benchmark=Benchmark)}) == (
        "benchmark.base", Benchmark)
    old = {"benchmark.performance_utils": _module("benchmark.performance_utils", Benchmark=Benchmark)}
    assert _flaggems.find_benchmark_class(old) == ("benchmark.performance_utils", Benchmark)
    assert _flaggems.find_benchmark_class({"benchmark.base": _module("benchmark.base", Benchmark=BenchConfig)}) is None
    assert _flaggems.find_benchmark_class({}) is None
    assert "neither benchmark.base.Benchmark (2026-08 per-operator layout) nor benchmark.performance_utils" \
           ".Benchmark (2026-03 per-category layout)" in _flaggems.missing_hook_point()


def test_a_flaggems_run_needs_its_conftest_and_a_benchmark_test():
    modules = {"benchmark.conftest": _module("benchmark.conftest", BenchConfig=BenchConfig)}
    assert _flaggems.is_benchmark_run(modules, {"benchmark.test_gelu"})
    assert not _flaggems.is_benchmark_run(modules, {"tests.test_gelu"})
    assert not _flaggems.is_benchmark_run({"benchmark.conftest": _module("benchmark.conftest")},
                                          {"benchmark.test_softmax"})
    assert not _flaggems.is_benchmark_run({}, {"benchmark.test_softmax"})


def test_sync_config_rebinds_names_bound_to_an_earlier_session():
    old, new = BenchConfig(), BenchConfig()
    modules = {"benchmark.conftest": _module("benchmark.conftest", Config=new),
               "benchmark.base": _module("benchmark.base", Config=old),
               "benchmark.test_mm": _module("benchmark.test_mm", Config=new),
               "benchmark.test_x": _module("benchmark.test_x", Config="not a BenchConfig"),
               "tests.accuracy_utils": _module("tests.accuracy_utils", Config=old)}
    assert _flaggems.sync_config(modules) == ["benchmark.base"]
    assert modules["benchmark.base"].Config is new and modules["tests.accuracy_utils"].Config is old


# --- a FlagGems-like corpus in a caliber worker ------------------------------------------------

CONFTEST = {
    # 2026-08: a new Config object in every pytest_configure
    "2026-08": """
        import os

        import pytest
        import torch

        Config = None


        class BenchConfig:
            pass


        def pytest_addoption(parser):
            parser.addoption("--mode", default="kernel", choices=["kernel", "operator", "cudagraph"])
            parser.addoption("--level", default="comprehensive", choices=["comprehensive", "core"])
            parser.addoption("--warmup", default=1000)
            parser.addoption("--iter", default=100)
            parser.addoption("--dtypes", action="append", default=None)
            parser.addoption("--shape_file", default=os.path.join(os.path.dirname(__file__), "core_shapes.yaml"))


        def pytest_configure(config):
            global Config
            Config = BenchConfig()
            _read_options(config)
    """,
    # 2026-03: one Config object, set again in every pytest_configure
    "2026-03": """
        import os

        import pytest
        import torch


        class BenchConfig:
            pass


        Config = BenchConfig()


        def pytest_addoption(parser):
            parser.addoption("--mode", default="kernel", choices=["kernel", "operator", "cudagraph"])
            parser.addoption("--level", default="comprehensive", choices=["comprehensive", "core"])
            parser.addoption("--warmup", default=1000)
            parser.addoption("--iter", default=100)
            parser.addoption("--dtypes", action="append", default=None)
            parser.addoption("--shape_file", default=os.path.join(os.path.dirname(__file__), "core_shapes.yaml"))


        def pytest_configure(config):
            _read_options(config)
    """,
}

READ_OPTIONS = """

    def _read_options(config):
        Config.mode = config.getoption("--mode")
        Config.bench_level = config.getoption("--level")
        Config.warm_up = int(config.getoption("--warmup"))
        Config.repetition = int(config.getoption("--iter"))
        types_str = config.getoption("--dtypes")
        Config.user_desired_dtypes = [getattr(torch, d) for d in types_str] if types_str else None
        Config.shape_file = config.getoption("--shape_file")
"""

BENCHMARK_MODULE = """
    import time

    import torch
    import triton

    import flag_gems
    {config_import}


    class Benchmark:
        DEFAULT_METRICS = ["latency_base", "latency", "speedup"]

        def __init__(self, op_name, torch_op, dtypes=None, **kwargs):
            self.op_name = op_name
            self.torch_op = torch_op
            self.gems_op = kwargs.get("gems_op")
            self.dtypes = dtypes or [torch.float16, torch.float32]
            self.to_bench_metrics = list(self.DEFAULT_METRICS)

        def shapes(self):
            with open(Config.shape_file) as f:
                levels = dict(line.split(":") for line in f.read().split())
            return [tuple(int(d) for d in s.split("x")) for s in levels[Config.bench_level].split(",")]

        def record_shapes(self, *args, **kwargs):
            def deep_parse(item):
                if isinstance(item, torch.Tensor):
                    return item.size()
                if isinstance(item, (int, float, str, torch.dtype)):
                    return item
                if isinstance(item, (list, tuple)):
                    return [deep_parse(x) for x in item]
                if isinstance(item, dict):
                    return {{k: deep_parse(v) for k, v in item.items()}}
                return None

            parsed_args = [deep_parse(a) for a in args]
            parsed_kwargs = {{k: deep_parse(v) for k, v in kwargs.items()}}
            if parsed_args and parsed_kwargs:
                return parsed_args, parsed_kwargs
            return parsed_args if parsed_args else parsed_kwargs

        def get_latency(self, op, *args, **kwargs):
            fn = lambda: op(*args, **kwargs)
            if getattr(self, "is_backward", False):
                # as FlagGems: the forward runs here, before the timer is called
                out = fn()
                dout = torch.randn_like(out)
                xs = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
                fn = lambda: torch.autograd.grad((out,), xs, grad_outputs=(dout,), retain_graph=True)
            if Config.mode == "operator":
                start = time.time()
                fn()
                return (time.time() - start) * 1000
            if Config.mode == "cudagraph":
                return triton.testing.do_bench_cudagraph(fn, rep=Config.repetition, return_mode="median",
                                                         grad_to_none=None)
            return triton.testing.do_bench(fn, warmup=Config.warm_up, rep=Config.repetition,
                                           return_mode="median", grad_to_none=None)

        def get_input_iter(self, dtype):
            for shape in self.shapes():
                yield torch.randn(shape, dtype=dtype), 1

        def run(self):
            for dtype in Config.user_desired_dtypes or self.dtypes:
                for inp in self.get_input_iter(dtype):
                    args = [a for a in inp if not isinstance(a, dict)]
                    kwargs = {{k: v for a in inp if isinstance(a, dict) for k, v in a.items()}}
                    metric = {{"shape_detail": self.record_shapes(*args, **kwargs)}}
                    if "latency_base" in self.to_bench_metrics:
                        metric["latency_base"] = self.get_latency(self.torch_op, *args, **kwargs)
                    if self.gems_op:
                        metric["latency"] = self.get_latency(self.gems_op, *args, **kwargs)
                    else:
                        with flag_gems.use_gems():
                            metric["latency"] = self.get_latency(self.torch_op, *args, **kwargs)
                    metric["speedup"] = metric["latency_base"] / metric["latency"]
                    print("FLAGGEMS", self.op_name, dtype, metric)
"""

TEST_MODULE = """
    import pytest
    import torch
    import triton

    import flag_gems
    {benchmark_import}


    def softmax(x, dim):
        return flag_gems.kernel(x, 0.02, 0.01)


    @pytest.mark.softmax
    def test_softmax():
        Benchmark(op_name="softmax", torch_op=softmax).run()


    class TwiceBenchmark(Benchmark):
        def get_input_iter(self, dtype):
            for _ in range(2):
                yield torch.randn((8, 8), dtype=dtype), {{"out": torch.randn((8, 8), dtype=dtype)}}


    @pytest.mark.twice
    def test_same_description_twice():
        TwiceBenchmark(op_name="twice", torch_op=lambda x, out: flag_gems.kernel(x, 0.02, 0.01),
                       dtypes=[torch.float16]).run()


    class BackwardBenchmark(Benchmark):
        is_backward = True

        def get_input_iter(self, dtype):
            for shape in self.shapes():
                yield (torch.randn(shape, dtype=dtype).requires_grad_(),)


    @pytest.mark.gelu_backward
    def test_gelu_backward():
        BackwardBenchmark(op_name="gelu_backward", torch_op=lambda x: flag_gems.kernel_with_grad(x, 0.03, 0.01),
                          dtypes=[torch.float16]).run()


    @pytest.mark.own_timing
    def test_own_do_bench():
        assert triton.testing.do_bench(lambda: flag_gems.kernel(None, 0.004, 0.004), return_mode="median") == 0.004
"""

LAYOUTS = {
    # layout -> (module holding Benchmark, how it imports Config, how the test module imports Benchmark)
    "2026-08": ("base", "from .conftest import Config", "from .base import Benchmark"),
    "2026-03": ("performance_utils", "from benchmark.conftest import Config",
                "from benchmark.performance_utils import Benchmark"),
}


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())


def _corpus(root, layout, benchmark_module=None):
    """A FlagGems-like tree: benchmark/ with conftest, Benchmark class, tests, shapes."""
    module, config_import, benchmark_import = LAYOUTS[layout]
    module = benchmark_module or module
    _write(root / "benchmark" / "__init__.py", "")
    _write(root / "benchmark" / "conftest.py", textwrap.dedent(CONFTEST[layout]) + textwrap.dedent(READ_OPTIONS))
    _write(root / "benchmark" / f"{module}.py", BENCHMARK_MODULE.format(config_import=config_import))
    _write(root / "benchmark" / "test_ops.py",
           TEST_MODULE.format(benchmark_import=f"from .{module} import Benchmark" if benchmark_module
                              else benchmark_import))
    _write(root / "benchmark" / "core_shapes.yaml",
           "core:64x64,4096x4096\ncomprehensive:64x64,4096x4096,16x1024x1024\n")
    return root


def _env(tmp_path):
    """The worker's environment: caliber's python/, the fake packages, the fake GPU, a Triton call log."""
    site = write_fake_site(tmp_path / "site")
    return {"PYTHONPATH": os.pathsep.join([PYTHON_DIR, TESTS_DIR, site]), "CALIBER_GRAPH_CAPTURE": "1",
            "FAKE_TRITON_LOG": str(tmp_path / "triton.log")}


def _request(tmp_path, name, target, shapes, dtypes="float16", extra_argv=(), phase="a"):
    """A request as the runner sends it, its cell folder tmp_path/name."""
    cell = tmp_path / name
    env = {"CALIBER_CELL_DIR": str(cell), "CALIBER_TASK": name, "CALIBER_PHASE": phase,
           "CALIBER_DTYPES": dtypes, "CALIBER_SHAPES": json.dumps(shapes), "CALIBER_TIMER": json.dumps(TIMER)}
    return request(name, ["-q", "-s", "-p", "no:cacheprovider", *PLUGINS, target, *extra_argv], env, phase)


def _rows(cell):
    return [json.loads(line) for line in (cell / "timing.jsonl").read_text().splitlines()]


def _triton_calls(tmp_path):
    """The calls that reached the fake Triton's own do_bench functions."""
    path = tmp_path / "triton.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_each_flaggems_row_becomes_one_timing_row(tmp_path, layout):
    corpus = _corpus(tmp_path / "FlagGems", layout)
    status, replies, out = serve(corpus, [_request(tmp_path, "r1", "benchmark/test_ops.py::test_softmax",
                                                   {"level": "core"})], _env(tmp_path))
    assert status == 0 and replies[0]["exit"] == 0, out
    rows = _rows(tmp_path / "r1")
    node = "benchmark/test_ops.py::test_softmax"
    assert [r["row"] for r in rows] == [f"{node}|float16 64x64, 1", f"{node}|float16 4096x4096, 1"]
    for row in rows:
        # caliber timed FlagGems' kernels (0.01 ms); FlagGems' own do_bench timed the torch op (0.02 ms)
        assert row["samples_ns"] == [10000, 10000, 10000] and row["timer"] == "graph"
        assert row["extra"] == {"latency_base_ns": 20000}
        assert row["dtype"] == "float16" and row["shape"] in ("64x64, 1", "4096x4096, 1")
    # only the baselines reached Triton's do_bench, with the campaign timer's budget
    assert _triton_calls(tmp_path) == [{"name": "do_bench", "rep": 3, "warmup": 1}] * 2
    # FlagGems got caliber's median back as its latency
    assert out.count("'latency': 0.01,") == 2, out


def test_a_backward_benchmark_is_captured_in_every_session(tmp_path):
    """FlagGems' backward benchmarks run their forward before calling the timer,
    and autograd runs the backward on the forward's stream: captured on any other
    stream, the first row's capture failed, the row was timed directly, and the
    failed capture left torch's capture stream current, so the next rows and the
    next session captured (gelu_backward on the H200: X, "timed differently in
    session 2"). Tests of a timed phase now run on the request's own stream, which
    the capture uses: every row is captured in the first session too."""
    corpus = _corpus(tmp_path / "FlagGems", "2026-08")
    target = "benchmark/test_ops.py::test_gelu_backward"
    status, replies, out = serve(corpus, [_request(tmp_path, "s1", target, {"level": "core"}),
                                          _request(tmp_path, "s2", target, {"level": "core"})], _env(tmp_path))
    assert status == 0 and [r["exit"] for r in replies] == [0, 0], out
    for session in ("s1", "s2"):
        rows = _rows(tmp_path / session)
        assert [(r["row"].split("|")[1], r["timer"], r["timer_reason"]) for r in rows] == [
            ("float16 64x64", "graph", "captured"), ("float16 4096x4096", "graph", "captured")], rows
        # what was timed is the backward (0.01 ms), captured with the forward outside the graph
        assert all(r["samples_ns"] == [10000, 10000, 10000] for r in rows), rows


def test_a_later_session_times_each_row_as_the_first_did(tmp_path):
    """CALIBER_TIMER_PLAN (the cell's first session's timing.jsonl): a row the first
    session timed directly is timed directly again, without a capture attempt."""
    corpus = _corpus(tmp_path / "FlagGems", "2026-08")
    target = "benchmark/test_ops.py::test_softmax"
    first = tmp_path / "first.jsonl"
    node = "benchmark/test_ops.py::test_softmax"
    first.write_text(json.dumps({"row": f"{node}|float16 64x64, 1", "timer": "direct",
                                 "timer_reason": "capture failed: RuntimeError: no"}) + "\n" +
                     json.dumps({"row": f"{node}|float16 4096x4096, 1", "timer": "graph", "timer_reason": "captured"}) + "\n")
    req = json.loads(_request(tmp_path, "s2", target, {"level": "core"}))
    req["env"].update(CALIBER_TIMER_PLAN=str(first), CALIBER_SESSION="2")
    status, replies, out = serve(corpus, [json.dumps(req) + "\n"], _env(tmp_path))
    assert replies[0]["exit"] == 0, out
    assert [(r["timer"], r["timer_reason"]) for r in _rows(tmp_path / "s2")] == [
        ("direct", "timed direct as in the cell's first session (capture failed: RuntimeError: no)"),
        ("graph", "captured")]


def test_a_persistent_worker_follows_each_request_settings(tmp_path):
    corpus = _corpus(tmp_path / "FlagGems", "2026-08")
    status, replies, out = serve(corpus, [
        _request(tmp_path, "r1", "benchmark/test_ops.py::test_softmax", {"level": "core"}),
        _request(tmp_path, "r2", "benchmark/test_ops.py::test_softmax", {"level": "comprehensive"},
                 dtypes="float32;float16"),
    ], _env(tmp_path))
    assert status == 0 and [r["exit"] for r in replies] == [0, 0], out
    assert len(_rows(tmp_path / "r1")) == 2
    # the second request's level and dtypes (in the workload's order) reached FlagGems' Config
    assert [r["row"].split("|")[1] for r in _rows(tmp_path / "r2")] == [
        "float32 64x64, 1", "float32 4096x4096, 1", "float32 16x1024x1024, 1",
        "float16 64x64, 1", "float16 4096x4096, 1", "float16 16x1024x1024, 1"]


def test_same_description_twice_and_plain_do_bench(tmp_path):
    corpus = _corpus(tmp_path / "FlagGems", "2026-08")
    status, replies, out = serve(corpus, [_request(tmp_path, "r1", "benchmark/test_ops.py", {"level": "core"},
                                                   extra_argv=["-k", "twice or own"])], _env(tmp_path))
    assert replies[0]["exit"] == 0, out
    rows = {r["row"]: r for r in _rows(tmp_path / "r1")}
    twice = "benchmark/test_ops.py::test_same_description_twice|float16 8x8, out=8x8"
    assert sorted(rows) == ["benchmark/test_ops.py::test_own_do_bench|do_bench#1", twice, twice + " #2"]
    assert rows[twice + " #2"]["extra"] == {"latency_base_ns": 20000}
    assert "extra" not in rows["benchmark/test_ops.py::test_own_do_bench|do_bench#1"]


def test_cudagraph_mode_is_routed_too(tmp_path):
    corpus = _corpus(tmp_path / "FlagGems", "2026-03")
    status, replies, out = serve(corpus, [_request(tmp_path, "r1", "benchmark/test_ops.py::test_softmax",
                                                   {"level": "core"}, extra_argv=["--mode", "cudagraph"])],
                                 _env(tmp_path))
    assert replies[0]["exit"] == 0, out
    assert [r["extra"] for r in _rows(tmp_path / "r1")] == [{"latency_base_ns": 20000}] * 2
    assert _triton_calls(tmp_path) == [{"name": "do_bench_cudagraph", "rep": 3}] * 2


def test_a_row_caliber_cannot_time_fails_its_test(tmp_path):
    corpus = _corpus(tmp_path / "FlagGems", "2026-08")
    status, replies, out = serve(corpus, [_request(tmp_path, "r1", "benchmark/test_ops.py::test_softmax",
                                                   {"level": "core"}, extra_argv=["--mode", "operator"])],
                                 _env(tmp_path))
    assert replies[0]["exit"] == 1, out
    assert ("caliber_pytest.compat: FlagGems timed row 'float16 64x64, 1' without triton.testing.do_bench or "
            "do_bench_cudagraph") in out


def test_no_hook_point_is_a_usage_error(tmp_path):
    corpus = _corpus(tmp_path / "FlagGems", "2026-08", benchmark_module="harness")
    status, replies, out = serve(corpus, [_request(tmp_path, "r1", "benchmark/test_ops.py::test_softmax",
                                                   {"level": "core"})], _env(tmp_path))
    assert replies[0]["exit"] == 4, out
    assert "caliber_pytest.compat: this is a FlagGems benchmark run, but neither benchmark.base.Benchmark" in out


def test_correctness_tests_keep_their_shapes(tmp_path):
    """FlagGems' tests/conftest.py has no --level: the correctness phase runs them anyway."""
    corpus = _corpus(tmp_path / "FlagGems", "2026-08")
    _write(corpus / "tests" / "__init__.py", "")
    _write(corpus / "tests" / "conftest.py", """
        def pytest_addoption(parser):
            parser.addoption("--quick", action="store_true")
    """)
    _write(corpus / "tests" / "test_softmax.py", """
        def test_softmax():
            pass
    """)
    status, replies, out = serve(corpus, [
        _request(tmp_path, "c1", "tests/test_softmax.py", {"level": "core"}, phase="correctness"),
        _request(tmp_path, "c2", "tests/test_softmax.py", {"level": "core"}, phase="a"),
    ], _env(tmp_path))
    assert [r["exit"] for r in replies] == [0, 4], out
    assert "caliber_pytest.shapes: CALIBER_SHAPES has 'level' but the corpus has no --level option" in out
