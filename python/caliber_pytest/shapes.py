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
from ._common import item_dtype, usage_error

PLUGIN = "shapes"

_spec = None
_dtypes = None


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    """Read this request's dtypes and shapes, and set the corpus options they map to."""
    global _spec, _dtypes
    dtypes_text = os.environ.get("CALIBER_DTYPES", "")
    try:
        _spec = _shapes.parse_shapes(os.environ.get("CALIBER_SHAPES", ""))
        _dtypes = _shapes.parse_dtypes(dtypes_text)
    except ValueError as e:
        raise usage_error(PLUGIN, str(e))
    settings, missing = _shapes.corpus_options(_spec, _shapes.dtype_list(dtypes_text),
                                               os.environ.get("CALIBER_PHASE"),
                                               lambda dest: hasattr(config.option, dest),
                                               os.environ.get("CALIBER_CORPUS", ""))
    if missing:
        key = missing[0]
        raise usage_error(PLUGIN, f"CALIBER_SHAPES has {key!r} but the corpus has no "
                                  f"--{_shapes.SHAPE_OPTIONS[key]} option")
    for dest, value in settings.items():
        setattr(config.option, dest, value)


def pytest_unconfigure(config):
    """Forget this request's settings (the module outlives the pytest session)."""
    global _spec, _dtypes
    _spec = None
    _dtypes = None


def pytest_collection_modifyitems(config, items):
    """Deselect the dtypes the workload does not measure."""
    kept, dropped = _shapes.split_by_dtype(items, _dtypes, item_dtype)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture
def caliber_shapes():
    """caliber_shapes(default) -> the list of shapes (tuples) to run."""
    spec = _spec if _spec is not None else {}

    def pick(default):
        return _shapes.pick_shapes(spec, default)

    return pick
