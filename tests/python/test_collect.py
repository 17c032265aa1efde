"""caliber_pytest.collect, the targets preflight's collector: how it fails."""

import os
import subprocess
import sys

from repo_paths import PYTHON_DIR


def test_the_collector_fails_in_one_line(tmp_path):
    """caliber_pytest.collect (the targets preflight) says what went wrong in
    one line on stderr, which the preflight quotes, never as a traceback."""
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, CALIBER_WORK_DIR=str(tmp_path))
    missing = tmp_path / "missing.json"
    proc = subprocess.run([sys.executable, "-m", "caliber_pytest.collect", str(tmp_path), str(missing),
                           str(tmp_path / "result.json")], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr == (f"caliber_pytest.collect: FileNotFoundError: [Errno 2] No such file or directory: "
                           f"'{missing}'\n")
