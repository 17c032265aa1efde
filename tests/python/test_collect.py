"""caliber_pytest.collect, the targets preflight's collector: how it fails."""

import json
import os
import subprocess
import sys
import textwrap

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


def _collect(tmp_path, corpus, queries, jobs):
    """Run the collector over queries in `jobs` processes; its result."""
    work = tmp_path / f"work{jobs}"
    work.mkdir()
    qfile, rfile = tmp_path / f"q{jobs}.json", tmp_path / f"r{jobs}.json"
    qfile.write_text(json.dumps({"queries": queries}))
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, CALIBER_WORK_DIR=str(work), CALIBER_COLLECT_JOBS=str(jobs))
    proc = subprocess.run([sys.executable, "-m", "caliber_pytest.collect", str(corpus), str(qfile), str(rfile)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(rfile.read_text())


def test_collecting_in_several_processes_gives_what_one_gives(tmp_path):
    """The queries are shared out over CALIBER_COLLECT_JOBS processes (the
    targets preflight of a heavy corpus); each query's result is the same."""
    corpus = tmp_path / "corpus"
    (corpus / "tests").mkdir(parents=True)
    (corpus / "pytest.ini").write_text("[pytest]\nmarkers =\n    a: a\n    b: b\n")
    (corpus / "tests" / "test_x.py").write_text(textwrap.dedent("""
        import pytest

        @pytest.mark.a
        @pytest.mark.parametrize("n", [1, 2, 3])
        def test_a(n):
            pass

        @pytest.mark.b
        def test_b():
            pass
    """))
    queries = [{"id": "a", "args": ["tests/test_x.py", "-m", "a"]},
               {"id": "b", "args": ["tests/test_x.py::test_b"]},
               {"id": "k", "args": ["tests/test_x.py", "-k", "test_a and 2"]},
               {"id": "gone", "args": ["tests/test_x.py::test_c"]}]
    one, three = _collect(tmp_path, corpus, queries, 1), _collect(tmp_path, corpus, queries, 3)
    assert one == three
    got = {k: v["missing"] for k, v in one["queries"].items()}
    assert got == {"a": [], "b": [], "k": [], "gone": ["tests/test_x.py::test_c"]}
    assert one["queries"]["b"]["count"] == 1
