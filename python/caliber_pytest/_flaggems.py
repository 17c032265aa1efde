"""FlagGems' benchmark harness as the compat plugin sees it, without torch or triton.

FlagGems times every benchmark row in `Benchmark.get_latency(op, *args,
**kwargs)`: once for its torch baseline (`latency_base`, `op` is the
benchmark's `torch_op`, called outside `flag_gems.use_gems()`), then once for
its own kernels (`latency`). `Benchmark.run` calls `record_shapes(*args,
**kwargs)` for each row first; the 2026-08 tree keeps the class in
benchmark/base.py, the 2026-03 tree in benchmark/performance_utils.py. This
module finds that class, names each row from FlagGems' own shape description,
tells the baseline call from the measured one, and re-points the names that
FlagGems' modules bound to its per-session `Config`."""

from ._common import dtype_name

CONFTEST = "benchmark.conftest"
# Where FlagGems' Benchmark class lives, newest layout first.
HOOK_POINTS = (
    ("benchmark.base", "2026-08 per-operator layout"),
    ("benchmark.performance_utils", "2026-03 per-category layout"),
)
HOOKED_METHODS = ("get_latency", "record_shapes")
BASE = "base"
MEASURED = "measured"


def is_benchmark_run(modules, test_modules):
    """Whether a pytest session runs FlagGems benchmarks: FlagGems' benchmark
    conftest (the one defining BenchConfig) is loaded and a selected test lives
    in its package. modules is sys.modules; test_modules the selected tests' module names."""
    conftest = modules.get(CONFTEST)
    if conftest is None or "BenchConfig" not in vars(conftest):
        return False
    return any(name.startswith("benchmark.") for name in test_modules)


def find_benchmark_class(modules):
    """(module name, class) of the first hook point that is loaded and whose
    Benchmark class has get_latency and record_shapes; None when none is."""
    for name, _ in HOOK_POINTS:
        module = modules.get(name)
        cls = vars(module).get("Benchmark") if module is not None else None
        if isinstance(cls, type) and all(callable(getattr(cls, m, None)) for m in HOOKED_METHODS):
            return name, cls
    return None


def missing_hook_point():
    """What a FlagGems benchmark run lacks when find_benchmark_class finds nothing."""
    places = " nor ".join(f"{name}.Benchmark ({layout})" for name, layout in HOOK_POINTS)
    return (f"this is a FlagGems benchmark run, but neither {places} is loaded with "
            f"{' and '.join(HOOKED_METHODS)}: FlagGems' timing cannot be routed to caliber")


def sync_config(modules):
    """Point every `Config` name bound in FlagGems' benchmark modules at this
    session's Config; returns the names of the modules changed.

    FlagGems' modules import it by name (`from .conftest import Config`) when
    first imported, and the 2026-08 conftest makes a new Config in each
    pytest_configure. A worker serves many requests in one process, so without
    this a benchmark would keep the first request's --level, --dtypes and
    --shape_file."""
    conftest = modules.get(CONFTEST)
    current = vars(conftest).get("Config") if conftest is not None else None
    if current is None:
        return []
    changed = []
    for name, module in list(modules.items()):
        if name == CONFTEST or not name.startswith("benchmark.") or module is None:
            continue
        bound = vars(module).get("Config")
        if bound is not None and bound is not current and type(bound) is type(current):
            module.Config = current
            changed.append(name)
    return sorted(changed)


def _is_size(value):
    """A torch.Size as record_shapes leaves it: a tuple of integers."""
    return isinstance(value, tuple) and all(isinstance(d, int) and not isinstance(d, bool) for d in value)


def _render(value):
    """One argument of a shape description."""
    if _is_size(value):
        return "x".join(str(d) for d in value) if value else "()"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_render(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_render(v)}" for k, v in value.items()) + "}"
    return "None" if value is None else dtype_name(value)


def describe(detail):
    """FlagGems' shape detail (what record_shapes returns: the arguments with each
    tensor replaced by its size; a dict when there are only keyword arguments,
    (args, kwargs) when there are both) as one line, e.g. '4096x4096, 1'."""
    if isinstance(detail, tuple) and len(detail) == 2 and isinstance(detail[0], list) \
            and isinstance(detail[1], dict):
        args, kwargs = detail
    elif isinstance(detail, dict):
        args, kwargs = [], detail
    else:
        args, kwargs = list(detail), {}
    parts = [_render(v) for v in args] + [f"{k}={_render(v)}" for k, v in kwargs.items()]
    return ", ".join(parts) if parts else "()"


def _tensors(values):
    """The tensors (objects with dtype and shape) among values, nested lists and dicts included."""
    for value in values:
        if hasattr(value, "dtype") and hasattr(value, "shape"):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from _tensors(value)
        elif isinstance(value, dict):
            yield from _tensors(value.values())


def row_dtype(values):
    """A row's dtype: that of the first floating-point tensor among the arguments
    (FlagGems builds its inputs in the dtype it benchmarks; index and statistics
    tensors may differ), else of the first tensor, else None."""
    tensors = list(_tensors(values))
    for t in tensors:
        if getattr(t.dtype, "is_floating_point", False):
            return t.dtype
    return tensors[0].dtype if tensors else None


def row_key(shape, dtype):
    """The row label before de-duplication: dtype and shape description."""
    name = dtype_name(dtype)
    return f"{name} {shape}" if name else shape


def ms_to_ns(ms):
    """A latency in (real) milliseconds as integer nanoseconds."""
    return int(round(float(ms) * 1e6))


class Rows:
    """One test's FlagGems rows: which get_latency call is the baseline, the
    baseline latency waiting for its measured row, and labels made unique."""

    def __init__(self):
        self.pending = {}
        self.seen = {}

    def role(self, key, wants_base, op_is_torch_op):
        """BASE for the baseline call of a row (latency_base is among the metrics,
        op is the torch op, and no baseline for this row is waiting), else MEASURED."""
        if wants_base and op_is_torch_op and key not in self.pending:
            return BASE
        return MEASURED

    def keep_base(self, key, latency_ms):
        """Hold FlagGems' baseline latency (ms) until the row's measured call."""
        self.pending[key] = latency_ms

    def label(self, key):
        """The row label: the key, with ' #n' from the second row of the same key on
        (an input iterator may yield two inputs with one description)."""
        n = self.seen.get(key, 0) + 1
        self.seen[key] = n
        return key if n == 1 else f"{key} #{n}"

    def extra(self, key):
        """The row's extra object (latency_base_ns), or None when no baseline was timed."""
        if key not in self.pending:
            return None
        return {"latency_base_ns": ms_to_ns(self.pending.pop(key))}
