"""Correctness of the fake-GPU corpus: on the fake GPU a comparison sees the
shapes, and whether a kernel wrote the output it was given."""
import pytest
import torch

import fakeops


@pytest.mark.mm
@pytest.mark.parametrize("dtype", [pytest.param(torch.float16, id="float16"), pytest.param(torch.bfloat16, id="bfloat16")])
@pytest.mark.parametrize("shape", [(64, 64, 64), (256, 128, 512)], ids=lambda s: "x".join(map(str, s)))
def test_mm(dtype, shape):
    m, n, k = shape
    a, b = torch.randn((m, k), dtype=dtype), torch.randn((k, n), dtype=dtype)
    torch.testing.assert_close(fakeops.mm(a, b, fakeops.poisoned((m, n), dtype)), (a.float() @ b.float()).to(dtype))


@pytest.mark.scale
@pytest.mark.parametrize("dtype", [pytest.param(torch.float16, id="float16"), pytest.param(torch.bfloat16, id="bfloat16")])
def test_scale(dtype):
    x = torch.randn((1000, ), dtype=dtype)
    torch.testing.assert_close(fakeops.scale(x, 2.0, fakeops.poisoned((1000, ), dtype)), x * 2.0)
