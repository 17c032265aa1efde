"""caliber_pytest.shapes: injects the workload's dtypes and shapes.

Tests parametrized over `dtype` whose dtype is not in CALIBER_DTYPES are
deselected. The fixture caliber_shapes(default) gives a benchmark test the
workload's shapes (CALIBER_SHAPES "values") or its own default. A workload's
"level" and "file" go to the corpus's own --level and --shape_file options,
its dtypes to --dtypes where the corpus has that option (FlagGems'
benchmarks). They are set before any conftest's pytest_configure reads them
(FlagGems' benchmark conftest copies them into its Config there)."""

import os

import pytest

from . import _shapes
from ._common import drop_request_state, item_dtype, request_state, usage_error

PLUGIN = "shapes"


class _State:
    """This request's CALIBER_SHAPES object and CALIBER_DTYPES set (None: no filter)."""

    def __init__(self, spec, dtypes):
        self.spec = spec
        self.dtypes = dtypes


# This request's _State lives in its config.stash under STATE, from pytest_configure to pytest_unconfigure.
STATE = pytest.StashKey[_State]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    """Read this request's dtypes and shapes, and set the corpus options they map to."""
    dtypes_text = os.environ.get("CALIBER_DTYPES", "")
    try:
        state = _State(_shapes.parse_shapes(os.environ.get("CALIBER_SHAPES", "")), _shapes.parse_dtypes(dtypes_text))
    except ValueError as e:
        raise usage_error(PLUGIN, str(e))
    settings, missing = _shapes.corpus_options(state.spec, _shapes.dtype_list(dtypes_text),
                                               os.environ.get("CALIBER_PHASE"),
                                               lambda dest: hasattr(config.option, dest),
                                               os.environ.get("CALIBER_CORPUS", ""))
    if missing:
        key = missing[0]
        raise usage_error(PLUGIN, f"CALIBER_SHAPES has {key!r} but the corpus has no "
                                  f"--{_shapes.SHAPE_OPTIONS[key]} option")
    for dest, value in settings.items():
        setattr(config.option, dest, value)
    config.stash[STATE] = state


def pytest_unconfigure(config):
    """Forget this request's settings."""
    drop_request_state(config, STATE)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Deselect the dtypes the workload does not measure. In the correctness
    phase, a selection none of whose tests has those dtypes is run whole, and
    the log says so: a corpus's own reduced mode (FlagGems' --quick tests
    float32 only) still checks the operator, where deselecting every test
    would call the task unsupported. It runs last, on the tests that -m and
    -k kept: FlagGems selects a task's tests with -m OP, and the tests of
    other marks beside them have no dtype to look at."""
    state = request_state(config, STATE)
    kept, dropped = _shapes.split_by_dtype(items, state.dtypes if state is not None else None, item_dtype)
    if dropped and not kept and os.environ.get("CALIBER_PHASE") == "correctness":
        print(f"caliber_pytest.shapes: correctness: none of the {len(items)} selected tests has the "
              f"workload's dtypes ({os.environ.get('CALIBER_DTYPES', '')}); running them all at the "
              f"corpus's own dtypes", flush=True)
        return
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture
def caliber_shapes(request):
    """caliber_shapes(default) -> the list of shapes (tuples) to run."""
    state = request_state(request.config, STATE)
    spec = state.spec if state is not None else {}

    def pick(default):
        return _shapes.pick_shapes(spec, default)

    return pick
