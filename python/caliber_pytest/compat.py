"""caliber_pytest.compat: a corpus's own benchmark timing goes through caliber.

While a test runs, triton.testing.do_bench and do_bench_cudagraph are routed to
caliber_pytest.timing: the call becomes a timing row (label `do_bench#N` or
`do_bench_cudagraph#N`, N counting within the test) with caliber's samples,
timer and clocks, and the caller gets back what it asked for (a float, its
quantiles, or all samples in ms) computed from those samples. Calls made while
the autotuner benchmarks configs, or outside a test, go to Triton's own
functions. Code that imported do_bench by name before this plugin was
configured keeps Triton's function; code that imports it by name while the
plugin is configured gets the routed one, which stays routed in every later
request of the worker that loads compat (and is Triton's own in one that does not).

FlagGems benchmarks (see _flaggems): at the end of collection FlagGems'
Benchmark.get_latency is wrapped (benchmark/base.py in the 2026-08 tree,
benchmark/performance_utils.py in the 2026-03 tree; neither found is a usage
error). The call that times FlagGems' kernels becomes one timing row labelled
'<dtype> <FlagGems' shape description>'; the call that times its torch
baseline runs Triton's own do_bench, with the campaign timer's warmup_ms and
rep_ms in place of FlagGems' --warmup/--iter, and its result goes into that
row's extra object as latency_base_ns. A FlagGems row that reaches no routed
function (FlagGems' --mode operator or wrapper) fails its test."""

import functools
import inspect
import os
import sys

import pytest

from . import _flaggems, _timing_rows, _tuning
from ._common import drop_request_state, item_dtype, request_state, usage_error

PLUGIN = "compat"
ROUTED = ("do_bench", "do_bench_cudagraph")


class _State:
    """This request's timer, the test now running, the rows it has timed, the
    FlagGems get_latency call in progress (None, _flaggems.BASE or a _Row), and
    FlagGems' Benchmark class with its own get_latency while this request wraps it."""

    def __init__(self, timer):
        self.timer = timer
        self.item = None
        self.calls = {}
        self.rows = _flaggems.Rows()
        self.flaggems = None
        self.hooked = None


# This request's _State lives in its config.stash under STATE, from pytest_configure to pytest_unconfigure.
STATE = pytest.StashKey[_State]()


class _Row:
    """A FlagGems row waiting for the routed call that times it."""

    def __init__(self, label, shape, dtype, extra):
        self.label = label
        self.shape = shape
        self.dtype = dtype
        self.extra = extra
        self.timed = False


class _Route:
    """The replacement of triton.testing.<name> (self.function), taking the same arguments.

    Process-wide by design: one function per name for the life of the process,
    so code that bound the name while some request was configured (`from
    triton.testing import do_bench` in a test module, imported once and kept by
    the worker) is routed in every later request too, as attribute lookups are.
    It reaches a request's state only through self.state, which pytest_configure
    binds to the _State it put in config.stash and pytest_unconfigure takes off;
    unbound, the function is Triton's own."""

    def __init__(self, name):
        self.name = name
        self.original = None  # Triton's own function, once this route has replaced it
        self.state = None

        def routed(*args, **kwargs):
            return self.call(args, kwargs)

        routed.__name__ = name
        routed.__doc__ = f"triton.testing.{name}, timed by caliber_pytest.timing inside a test."
        self.function = routed

    def call(self, args, kwargs):
        """One call of the routed function."""
        state, original, name = self.state, self.original, self.name
        if state is None or state.item is None or _tuning.active():
            return original(*args, **kwargs)
        params = inspect.signature(original).bind(*args, **kwargs)
        params.apply_defaults()
        if state.flaggems is _flaggems.BASE:
            for arg, key in (("warmup", "warmup_ms"), ("rep", "rep_ms")):
                if arg in params.arguments:
                    params.arguments[arg] = state.timer[key]
            return original(*params.args, **params.kwargs)
        from triton.testing import _summarize_statistics

        from . import timing

        fn, grad_to_none = params.arguments["fn"], params.arguments.get("grad_to_none")
        call = fn
        if grad_to_none is not None:
            def call():
                for x in grad_to_none:
                    x.grad = None
                fn()
        item, row = state.item, state.flaggems
        if isinstance(row, _Row) and not row.timed:
            row.timed = True
            measured = timing.measure(item.config, item.nodeid, call, row.label, shape=row.shape, dtype=row.dtype,
                                      extra=row.extra)
        else:
            state.calls[name] = state.calls.get(name, 0) + 1
            measured = timing.measure(item.config, item.nodeid, call, f"{name}#{state.calls[name]}",
                                      dtype=item_dtype(item))
        samples_ms = [ns / 1e6 for ns in measured["samples_ns"]]
        return _summarize_statistics(samples_ms, params.arguments.get("quantiles"),
                                     params.arguments.get("return_mode", "mean"))


_routes = {name: _Route(name) for name in ROUTED}


def _wrap_get_latency(original, state):
    """FlagGems' Benchmark.get_latency, telling its baseline call from its measured one,
    for the request of state."""

    @functools.wraps(original)
    def get_latency(bench, op, *args, **kwargs):
        if state.item is None or state.flaggems is not None:
            return original(bench, op, *args, **kwargs)
        shape = _flaggems.describe(bench.record_shapes(*args, **kwargs))
        dtype = _flaggems.row_dtype(list(args) + list(kwargs.values()))
        key = _flaggems.row_key(shape, dtype)
        wants_base = "latency_base" in (getattr(bench, "to_bench_metrics", None) or ())
        if state.rows.role(key, wants_base, op is getattr(bench, "torch_op", None)) == _flaggems.BASE:
            state.flaggems = _flaggems.BASE
            try:
                latency = original(bench, op, *args, **kwargs)
            finally:
                state.flaggems = None
            state.rows.keep_base(key, latency)
            return latency
        row = _Row(state.rows.label(key), shape, dtype, state.rows.extra(key))
        state.flaggems = row
        try:
            latency = original(bench, op, *args, **kwargs)
        finally:
            state.flaggems = None
        if not row.timed:
            raise usage_error(PLUGIN, f"FlagGems timed row {row.label!r} without triton.testing.do_bench or "
                                      "do_bench_cudagraph (FlagGems --mode must be kernel or cudagraph)")
        return latency

    get_latency.caliber_compat = True
    return get_latency


def _hook(cls, state):
    """Wrap cls.get_latency for the request of state (a wrapper left by an earlier request is replaced)."""
    current = cls.get_latency
    original = current.__wrapped__ if getattr(current, "caliber_compat", False) else current
    cls.get_latency = _wrap_get_latency(original, state)
    state.hooked = (cls, original)


def _unhook(state):
    """Give FlagGems' Benchmark its own get_latency back."""
    if state.hooked is not None:
        cls, original = state.hooked
        cls.get_latency = original
        state.hooked = None


def pytest_configure(config):
    """Route Triton's benchmark functions; needs the timing plugin in the same run."""
    if config.pluginmanager.get_plugin("caliber_pytest.timing") is None:
        raise usage_error(PLUGIN, "needs caliber_pytest.timing (-p caliber_pytest.timing)")
    try:
        timer = _timing_rows.parse_timer(os.environ.get("CALIBER_TIMER", ""))
    except ValueError as e:
        raise usage_error(PLUGIN, str(e))
    try:
        import triton.testing
    except ImportError as e:
        raise usage_error(PLUGIN, f"triton.testing cannot be imported: {e}")
    missing = [n for n in ROUTED + ("_summarize_statistics",) if not hasattr(triton.testing, n)]
    if missing:
        raise usage_error(PLUGIN, f"triton.testing has no {', '.join(missing)}")
    _tuning.acquire()
    state = config.stash[STATE] = _State(timer)
    for name, route in _routes.items():
        current = getattr(triton.testing, name)
        if current is not route.function:
            route.original = current
            setattr(triton.testing, name, route.function)
        route.state = state


def pytest_collection_finish(session):
    """Adapt FlagGems' Benchmark class when this session runs FlagGems benchmarks."""
    state = request_state(session.config, STATE)
    if state is None:
        return
    test_modules = {getattr(getattr(item, "module", None), "__name__", "") for item in session.items}
    if not _flaggems.is_benchmark_run(sys.modules, test_modules):
        return
    _flaggems.sync_config(sys.modules)
    found = _flaggems.find_benchmark_class(sys.modules)
    if found is None:
        raise usage_error(PLUGIN, _flaggems.missing_hook_point())
    _hook(found[1], state)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Know which test a routed call belongs to."""
    state = request_state(item.config, STATE)
    if state is not None:
        state.item, state.calls, state.rows, state.flaggems = item, {}, _flaggems.Rows(), None
    try:
        yield
    finally:
        if state is not None:
            state.item = None


def pytest_unconfigure(config):
    """Put Triton's functions and FlagGems' get_latency back."""
    state = drop_request_state(config, STATE)
    if state is None:
        return
    _tuning.release()
    _unhook(state)
    import triton.testing

    for name, route in _routes.items():
        route.state = None
        setattr(triton.testing, name, route.original)
