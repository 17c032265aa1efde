"""Loads the caliber demo compiler change into every Python process whose
PYTHONPATH holds this folder, without importing triton early: a finder on
sys.meta_path waits for `import triton`, lets it finish, then installs the
stage hook of caliber_demo_rlc."""

import importlib.abc
import importlib.util
import sys


class _AfterTritonImport(importlib.abc.MetaPathFinder):
    """Wraps triton's loader so the hook goes in right after triton loads.

    It stays on sys.meta_path until triton has loaded: a library that only
    asks importlib.util.find_spec("triton") whether Triton is there gets a
    spec that is never executed, and the import that follows must still be
    seen. (A one-shot finder, removed at the first find_spec, is the likely
    reason why no cell of the H200 canary of 2026-12-01 had the change:
    bench/RESULTS.md, "The canary of 2026-12-01".)"""

    def __init__(self):
        self.looking = False

    def find_spec(self, name, path=None, target=None):
        if name != "triton" or self.looking:
            return None
        self.looking = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.looking = False
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_install(module):
            exec_module(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            import caliber_demo_rlc

            caliber_demo_rlc.install()

        spec.loader.exec_module = exec_and_install
        return spec


sys.meta_path.insert(0, _AfterTritonImport())
