"""Loads the caliber demo compiler change into every Python process whose
PYTHONPATH holds this folder, without importing triton early: a finder on
sys.meta_path waits for `import triton`, lets it finish, then installs the
stage hook of caliber_demo_rlc."""

import importlib.abc
import importlib.util
import sys


class _AfterTritonImport(importlib.abc.MetaPathFinder):
    """One-shot finder: wraps triton's loader so the hook goes in right after it loads."""

    def find_spec(self, name, path=None, target=None):
        if name != "triton":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_install(module):
            exec_module(module)
            import caliber_demo_rlc

            caliber_demo_rlc.install()

        spec.loader.exec_module = exec_and_install
        return spec


sys.meta_path.insert(0, _AfterTritonImport())
