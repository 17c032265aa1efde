"""caliber_pytest.compat: a corpus's own benchmark timing goes through caliber.

While a test runs, triton.testing.do_bench and do_bench_cudagraph are routed to
caliber_pytest.timing: the call becomes a timing row (label `do_bench#N` or
`do_bench_cudagraph#N`, N counting within the test) with caliber's samples,
timer and clocks, and the caller gets back what it asked for (a float, its
quantiles, or all samples in ms) computed from those samples. Calls made while
the autotuner benchmarks configs, or outside a test, go to Triton's own
functions. Code that imported do_bench by name before this plugin was
configured keeps Triton's function; FlagGems' Benchmark class is not adapted yet."""

import inspect

import pytest

from . import _tuning
from ._common import item_dtype, usage_error

PLUGIN = "compat"
ROUTED = ("do_bench", "do_bench_cudagraph")

_originals = {}
_state = None


class _State:
    """The test now running and how many rows it has timed per routed function."""

    def __init__(self):
        self.item = None
        self.calls = {}


def _route(name):
    """A replacement for triton.testing.<name>, taking the same arguments."""

    def routed(*args, **kwargs):
        state = _state
        original = _originals[name]
        if state is None or state.item is None or _tuning.active():
            return original(*args, **kwargs)
        from triton.testing import _summarize_statistics

        from . import timing

        params = inspect.signature(original).bind(*args, **kwargs)
        params.apply_defaults()
        fn, grad_to_none = params.arguments["fn"], params.arguments.get("grad_to_none")
        call = fn
        if grad_to_none is not None:
            def call():
                for x in grad_to_none:
                    x.grad = None
                fn()
        state.calls[name] = state.calls.get(name, 0) + 1
        row = timing.measure(state.item.nodeid, call, f"{name}#{state.calls[name]}", dtype=item_dtype(state.item))
        samples_ms = [ns / 1e6 for ns in row["samples_ns"]]
        return _summarize_statistics(samples_ms, params.arguments.get("quantiles"),
                                     params.arguments.get("return_mode", "mean"))

    routed.__name__ = name
    routed.__doc__ = f"triton.testing.{name}, timed by caliber_pytest.timing inside a test."
    return routed


_routes = {name: _route(name) for name in ROUTED}


def pytest_configure(config):
    """Route Triton's benchmark functions; needs the timing plugin in the same run."""
    global _state
    if config.pluginmanager.get_plugin("caliber_pytest.timing") is None:
        raise usage_error(PLUGIN, "needs caliber_pytest.timing (-p caliber_pytest.timing)")
    try:
        import triton.testing
    except ImportError as e:
        raise usage_error(PLUGIN, f"triton.testing cannot be imported: {e}")
    missing = [n for n in ROUTED + ("_summarize_statistics",) if not hasattr(triton.testing, n)]
    if missing:
        raise usage_error(PLUGIN, f"triton.testing has no {', '.join(missing)}")
    for name in ROUTED:
        current = getattr(triton.testing, name)
        if current is not _routes[name]:
            _originals[name] = current
            setattr(triton.testing, name, _routes[name])
    _state = _State()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Know which test a routed call belongs to."""
    state = _state
    if state is not None:
        state.item, state.calls = item, {}
    try:
        yield
    finally:
        if state is not None:
            state.item = None


def pytest_unconfigure(config):
    """Put Triton's functions back."""
    global _state
    _state = None
    if not _originals:
        return
    import triton.testing

    for name, original in _originals.items():
        setattr(triton.testing, name, original)
    _originals.clear()
