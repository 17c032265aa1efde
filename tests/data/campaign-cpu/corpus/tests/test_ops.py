"""Correctness tests of the CPU test corpus: they only need to exist and be collected."""
import pytest


@pytest.mark.gain
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gain(dtype):
    pass


@pytest.mark.same
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_same(dtype):
    pass


@pytest.mark.flat
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_flat(dtype):
    pass


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_slow(dtype):
    pass


@pytest.mark.wrong
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_wrong(dtype):
    pass


@pytest.mark.slowpoke
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_slowpoke(dtype):
    pass


@pytest.mark.slower
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_slower(dtype):
    pass


@pytest.mark.faster
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_faster(dtype):
    pass
