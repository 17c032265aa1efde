"""The workload's dtypes and shapes (CALIBER_DTYPES, CALIBER_SHAPES)."""

import json

from ._common import dtype_name

SHAPE_KEYS = ("values", "level", "file")


def parse_dtypes(text):
    """CALIBER_DTYPES ('float16;bfloat16') as a set; empty or unset means no filter (None)."""
    names = [part.strip() for part in (text or "").split(";") if part.strip()]
    return set(names) if names else None


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
