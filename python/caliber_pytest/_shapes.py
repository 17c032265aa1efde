"""The workload's dtypes and shapes (CALIBER_DTYPES, CALIBER_SHAPES)."""

import json
import os

from ._common import dtype_name

SHAPE_KEYS = ("values", "level", "file")
# CALIBER_SHAPES key -> the destination of the corpus's pytest option it sets
SHAPE_OPTIONS = {"level": "level", "file": "shape_file"}
DTYPES_OPTION = "dtypes"


def dtype_list(text):
    """CALIBER_DTYPES ('float16;bfloat16') as a list in the workload's order, without repeats."""
    names = [part.strip() for part in (text or "").split(";") if part.strip()]
    return list(dict.fromkeys(names))


def parse_dtypes(text):
    """CALIBER_DTYPES as a set; empty or unset means no filter (None)."""
    names = dtype_list(text)
    return set(names) if names else None


def corpus_options(spec, dtypes, phase, has_option, corpus):
    """(settings, missing): the corpus options the workload sets, {dest: value},
    and the CALIBER_SHAPES keys the corpus has no option for.

    "level" goes to --level and "file" to --shape_file (FlagGems' benchmark
    options), a relative file taken from the corpus root (pytest runs in a
    private working directory, not in the corpus); the dtypes go to --dtypes where the corpus has it (FlagGems'
    benchmark tests are not parametrized over dtype). The correctness phase
    runs the corpus's tests, whose conftest need not have the benchmark's
    options: there a missing one is skipped, the tests keep their own shapes."""
    settings, missing = {}, []
    for key, dest in SHAPE_OPTIONS.items():
        if key not in spec:
            continue
        if has_option(dest):
            settings[dest] = os.path.join(corpus, spec[key]) if key == "file" else spec[key]
        elif phase != "correctness":
            missing.append(key)
    if dtypes and has_option(DTYPES_OPTION):
        settings[DTYPES_OPTION] = list(dtypes)
    return settings, missing


def parse_shapes(text):
    """CALIBER_SHAPES as a dict with only the known keys, validated."""
    spec = json.loads(text) if text and text.strip() else {}
    if not isinstance(spec, dict):
        raise ValueError("CALIBER_SHAPES must be a JSON object")
    unknown = set(spec) - set(SHAPE_KEYS)
    if unknown:
        raise ValueError(f"CALIBER_SHAPES: unknown keys {sorted(unknown)}")
    if "values" in spec:
        values = spec["values"]
        if not isinstance(values, list) or not values:
            raise ValueError("CALIBER_SHAPES.values must be a non-empty list of shapes")
        for shape in values:
            if not isinstance(shape, list) or not shape or not all(
                    isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape):
                raise ValueError(f"CALIBER_SHAPES.values: {shape!r} is not a list of positive integers")
    for key in ("level", "file"):
        if key in spec and not isinstance(spec[key], str):
            raise ValueError(f"CALIBER_SHAPES.{key} must be a string")
    return spec


def pick_shapes(spec, default):
    """The shapes a benchmark test runs: the workload's values when given, else its default."""
    if "values" in spec:
        return [tuple(shape) for shape in spec["values"]]
    return [tuple(shape) for shape in default]


def split_by_dtype(items, dtypes, dtype_of):
    """(kept, deselected): items whose dtype parameter is not in dtypes are deselected;
    items without a dtype parameter, and every item when dtypes is None, are kept."""
    if dtypes is None:
        return list(items), []
    kept, dropped = [], []
    for item in items:
        name = dtype_name(dtype_of(item))
        (kept if name is None or name in dtypes else dropped).append(item)
    return kept, dropped
