"""GPU-free tests of caliber's Python side: no torch, no triton needed.
Puts the repository's python/ folder first on sys.path."""

import sys

from repo_paths import PYTHON_DIR

if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)
