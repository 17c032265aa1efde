"""The example corpus's correctness tests, collected by the targets preflight;
the stand-in worker answers for them from the stand-in compiler."""
import pytest


@pytest.mark.matmul
@pytest.mark.parametrize("dtype", ["float16"])
def test_matmul(dtype):
    pass


@pytest.mark.layer_norm
@pytest.mark.parametrize("dtype", ["float16"])
def test_layer_norm(dtype):
    pass


@pytest.mark.softmax
@pytest.mark.parametrize("dtype", ["float16"])
def test_softmax(dtype):
    pass


@pytest.mark.transpose
@pytest.mark.parametrize("dtype", ["float16"])
def test_transpose(dtype):
    pass


@pytest.mark.gelu
@pytest.mark.parametrize("dtype", ["float16"])
def test_gelu(dtype):
    pass
