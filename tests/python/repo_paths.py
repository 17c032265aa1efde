"""Where things are in the repository, for the GPU-free tests."""

import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_DIR = os.path.join(REPO, "python")
OPS_DIR = os.path.join(REPO, "ops")
DEMO_DIR = os.path.join(REPO, "examples", "demo-compiler")
TTGIR_DIR = os.path.join(REPO, "tests", "data", "ttgir")
DEVICE_SCRIPTS_DIR = os.path.join(REPO, "scripts", "device")
