"""Dtype filtering and shape injection: the logic, then the plugin in a real pytest run."""

import os
import subprocess
import sys
import textwrap

import pytest

from caliber_pytest import _shapes
from repo_paths import PYTHON_DIR


class Item:
    def __init__(self, dtype):
        self.dtype = dtype


class TorchLikeDtype:
    """str() like torch.float16."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


def test_parse_dtypes():
    assert _shapes.parse_dtypes("float16;bfloat16") == {"float16", "bfloat16"}
    assert _shapes.parse_dtypes("") is None
    assert _shapes.parse_dtypes(None) is None


def test_dtype_list_keeps_the_workload_order():
    assert _shapes.dtype_list("float32; float16;float32") == ["float32", "float16"]
    assert _shapes.dtype_list("") == []


def test_corpus_options_map_level_file_and_dtypes():
    flaggems_benchmark = {"level", "shape_file", "dtypes"}.__contains__
    spec = {"level": "core", "file": "benchmark/core_shapes.yaml", "values": [[8, 8]]}
    assert _shapes.corpus_options(spec, ["float16"], "a", flaggems_benchmark, "/fg") == (
        {"level": "core", "shape_file": "/fg/benchmark/core_shapes.yaml", "dtypes": ["float16"]}, [])
    assert _shapes.corpus_options(dict(spec, file="/elsewhere/s.yaml"), [], "a", flaggems_benchmark, "/fg") == (
        {"level": "core", "shape_file": "/elsewhere/s.yaml"}, [])
    assert _shapes.corpus_options({}, [], "a", flaggems_benchmark, "/fg") == ({}, [])
    # FlagGems' tests/conftest.py has neither: correctness runs its own shapes, a benchmark cannot
    none = set().__contains__
    assert _shapes.corpus_options(spec, ["float16"], "correctness", none, "/fg") == ({}, [])
    assert _shapes.corpus_options(spec, ["float16"], "a", none, "/fg") == ({}, ["level", "file"])
    assert _shapes.corpus_options(spec, ["float16"], None, none, "/fg") == ({}, ["level", "file"])


def test_split_by_dtype_matches_torch_names():
    items = [Item(TorchLikeDtype("float16")), Item(TorchLikeDtype("float32")), Item(None)]
    kept, dropped = _shapes.split_by_dtype(items, {"float16"}, lambda item: item.dtype)
    assert kept == [items[0], items[2]] and dropped == [items[1]]
    assert _shapes.split_by_dtype(items, None, lambda item: item.dtype) == (items, [])


def test_shapes_values_or_default():
    spec = _shapes.parse_shapes('{"values": [[4096, 4096], [1024, 8]]}')
    assert _shapes.pick_shapes(spec, [(1, 2)]) == [(4096, 4096), (1024, 8)]
    assert _shapes.pick_shapes(_shapes.parse_shapes("{}"), [(1, 2)]) == [(1, 2)]


@pytest.mark.parametrize("text", ['{"values": []}', '{"values": [[0, 1]]}', '{"values": [[1.5]]}',
                                  '{"valuez": [[1]]}', '[1]', '{"level": 3}'])
def test_bad_shapes_are_refused(text):
    with pytest.raises(ValueError):
        _shapes.parse_shapes(text)


CORPUS_CONFTEST = """
def pytest_addoption(parser):
    parser.addoption("--level", default="comprehensive")
"""

CORPUS_TEST = """
import pytest

@pytest.mark.parametrize("dtype", ["float16", "float32", "bfloat16"])
def test_perf(dtype, caliber_shapes, request):
    print("SHAPES", dtype, caliber_shapes([(1, 2)]), "LEVEL", request.config.getoption("level"))
"""


# FlagGems' tests/test_addmm.py in small: the operator's test, marked with
# its name and float32 only under --quick, beside tests of other marks
# without a dtype parameter; a task selects its own with -m addmm.
MARKED_TEST = """
import pytest

@pytest.mark.addmm
@pytest.mark.parametrize("dtype", ["float32"])
@pytest.mark.parametrize("b_column_major", [True, False])
def test_addmm(dtype, b_column_major):
    print("ADDMM", dtype, b_column_major)

@pytest.mark.addmm_dtype
def test_addmm_dtype_fp32_accum():
    print("OTHER")
"""


def _run_corpus(tmp_path, env, test=CORPUS_TEST, args=()):
    (tmp_path / "conftest.py").write_text(textwrap.dedent(CORPUS_CONFTEST))
    (tmp_path / "test_corpus.py").write_text(textwrap.dedent(test))
    full_env = dict(os.environ, PYTHONPATH=PYTHON_DIR, **env)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-p",
                           "caliber_pytest.shapes", "test_corpus.py", *args], cwd=tmp_path, env=full_env,
                          capture_output=True, text=True, timeout=120)


def test_plugin_deselects_and_injects(tmp_path):
    proc = _run_corpus(tmp_path, {"CALIBER_DTYPES": "float16;bfloat16",
                                  "CALIBER_SHAPES": '{"level": "core", "values": [[8, 8]]}'})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed, 1 deselected" in proc.stdout
    assert "SHAPES float16 [(8, 8)] LEVEL core" in proc.stdout
    assert "SHAPES float32" not in proc.stdout


def test_correctness_runs_a_selection_none_of_whose_dtypes_is_measured(tmp_path):
    """FlagGems' --quick tests float32 only: correctness then runs those tests, and says why."""
    env = {"CALIBER_DTYPES": "int8", "CALIBER_SHAPES": "{}"}
    proc = _run_corpus(tmp_path, dict(env, CALIBER_PHASE="correctness"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout and "deselected" not in proc.stdout
    assert ("caliber_pytest.shapes: correctness: none of the 3 selected tests has the workload's dtypes (int8); "
            "running them all at the corpus's own dtypes") in proc.stdout
    proc = _run_corpus(tmp_path, dict(env, CALIBER_PHASE="a"))
    assert proc.returncode == 5 and "3 deselected" in proc.stdout, proc.stdout + proc.stderr


def test_correctness_looks_at_the_tests_the_marker_selected(tmp_path):
    """FlagGems' addmm task runs `--quick tests/test_addmm.py -m addmm`: the dtype check sees the
    two float32 tests -m kept, not the test of another mark without a dtype, so correctness runs them
    (on the H100 of 2026-12-06 it saw that test, deselected both, and -m then deselected it: exit 5)."""
    env = {"CALIBER_DTYPES": "float16", "CALIBER_SHAPES": "{}", "CALIBER_PHASE": "correctness"}
    proc = _run_corpus(tmp_path, env, MARKED_TEST, ("-m", "addmm", "-W", "ignore::pytest.PytestUnknownMarkWarning"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed, 1 deselected" in proc.stdout and "OTHER" not in proc.stdout
    assert "none of the 2 selected tests has the workload's dtypes (float16)" in proc.stdout


def test_plugin_defaults_without_workload_settings(tmp_path):
    proc = _run_corpus(tmp_path, {"CALIBER_DTYPES": "", "CALIBER_SHAPES": "{}"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout and "SHAPES float32 [(1, 2)] LEVEL comprehensive" in proc.stdout


def test_plugin_refuses_a_file_the_corpus_cannot_take(tmp_path):
    proc = _run_corpus(tmp_path, {"CALIBER_SHAPES": '{"file": "shapes.yaml"}'})
    assert proc.returncode == 4
    assert "caliber_pytest.shapes: CALIBER_SHAPES has 'file' but the corpus has no --shape_file option" in (
        proc.stdout + proc.stderr)
