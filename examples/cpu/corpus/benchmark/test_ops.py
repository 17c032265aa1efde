"""The example corpus's benchmarks. caliber's targets preflight collects them
(each must exist, as in a real corpus); the stand-in worker does not run
them: it writes what the plugins would have written (../../worker.py)."""
import pytest


@pytest.mark.matmul
@pytest.mark.parametrize("dtype", ["float16"])
def test_perf_matmul(dtype):
    pass


@pytest.mark.layer_norm
@pytest.mark.parametrize("dtype", ["float16"])
def test_perf_layer_norm(dtype):
    pass


@pytest.mark.softmax
@pytest.mark.parametrize("dtype", ["float16"])
def test_perf_softmax(dtype):
    pass


@pytest.mark.transpose
@pytest.mark.parametrize("dtype", ["float16"])
def test_perf_transpose(dtype):
    pass


@pytest.mark.gelu
@pytest.mark.parametrize("dtype", ["float16"])
def test_perf_gelu(dtype):
    pass
