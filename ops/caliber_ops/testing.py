"""What the corpus's tests share: shape ids, tolerances, poisoned outputs,
and the benchmark row loop. Marks and dtype parameters are written out in
each test file, so that `caliber inventory --corpus ops` reads them; the
tests in tests/python and the inventory command check they agree with
inventory_main.csv."""

import torch

from .fill import random_inputs, row_seed

# (rtol, atol) against a float32 reference cast to the output dtype
TOLERANCES = {torch.float16: (1e-2, 1e-3), torch.bfloat16: (2e-2, 1e-2), torch.float32: (1e-4, 1e-4)}


def shape_id(shape):
    """'37x1000' for (37, 1000): the test id of a shape parameter."""
    return "x".join(str(d) for d in shape)


def randn(shape, dtype):
    """Fresh N(0, 1) data on the GPU (the corpus conftest seeds per test)."""
    return torch.randn(shape, device="cuda").to(dtype)


def poisoned(shape, dtype):
    """An output buffer filled with NaN (or -1 for integers), so unwritten elements show."""
    if dtype.is_floating_point:
        return torch.full(shape, float("nan"), dtype=dtype, device="cuda")
    return torch.full(shape, -1, dtype=dtype, device="cuda")


def assert_close(actual, expected, dtype, rtol=None, atol=None):
    """actual against a float32 reference rounded to actual's dtype; NaN never passes."""
    default_rtol, default_atol = TOLERANCES[dtype]
    torch.testing.assert_close(actual.float(), expected.to(actual.dtype).float(),
                               rtol=default_rtol if rtol is None else rtol,
                               atol=default_atol if atol is None else atol)


def row_inputs(op, dtype, shape, shapes, uniform=False):
    """The inputs of one benchmark row, all from one _fill_random launch."""
    return random_inputs(row_seed(op, dtype, shape_id(shape)), dtype, shapes, uniform=uniform)


def run_rows(caliber_bench, caliber_shapes, dtype, default, build):
    """Time one row per shape: build(shape) returns the function to time."""
    for shape in caliber_shapes(default):
        label = shape_id(shape)
        caliber_bench(build(tuple(shape)), row=label, shape=label, dtype=dtype)
