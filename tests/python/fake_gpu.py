"""The fake GPU of tests/fakegpu/ for the Python tests: FakeCuda (torch.cuda's
events, graphs and generator over a clock that kernels advance), for tests
that drive a plugin in-process, and the fake site (torch, triton, flag_gems)
for pytest runs in a child process."""

import importlib.util
import os

SITE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fakegpu", "site")


def _load_fake_cuda():
    spec = importlib.util.spec_from_file_location("_fake_cuda", os.path.join(SITE, "torch", "_fake_cuda.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FakeCuda


FakeCuda = _load_fake_cuda()


def write_fake_site(root):
    """The folder to put on PYTHONPATH for the fake torch, triton and flag_gems
    (root is not written: the site is a folder of the repository)."""
    return SITE
