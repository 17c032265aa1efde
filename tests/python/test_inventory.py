"""ops/inventory_main.csv agrees with the corpus's test files (read with ast,
no torch): every op has its benchmark test and its correctness tests, marked."""

import ast
import csv
import importlib.util
import os

import pytest

from repo_paths import OPS_DIR

REQUIRED = ["sum_rows", "sum_cols", "max_rows", "argmax_rows", "var_rows", "softmax_rows", "softmax_cols",
            "log_softmax_rows", "log_softmax_cols", "layer_norm_fwd", "layer_norm_bwd", "rms_norm_fwd",
            "rms_norm_bwd", "gelu_fwd", "gelu_bwd", "cross_entropy", "cumsum", "transpose", "permute_copy",
            "matmul", "bmm", "matmul_bias", "matmul_bias_gelu", "attention_fwd", "gather", "index_select",
            "scatter_add", "embedding", "dropout", "topk"]
KINDS = {"reduction", "normalization", "pointwise", "loss", "scan", "copy", "matmul", "attention", "indexing",
         "random", "sort"}
DTYPES = {"float16", "bfloat16", "float32"}


def _inventory():
    """ops/caliber_ops/inventory.py, loaded by path (its package imports torch)."""
    spec = importlib.util.spec_from_file_location("inventory", os.path.join(OPS_DIR, "caliber_ops", "inventory.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ROWS = _inventory().rows()


def _marks(path):
    """{test function name: set of op marks} of a test file: its @pytest.mark.<op> decorators."""
    with open(os.path.join(OPS_DIR, path)) as f:
        tree = ast.parse(f.read())
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            marks = set()
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute) and \
                        target.value.attr == "mark" and target.attr not in ("parametrize", ):
                    marks.add(target.attr)
            found[node.name] = marks
    return found


def test_header_and_one_record_per_line():
    with open(os.path.join(OPS_DIR, "inventory_main.csv"), newline="") as f:
        text = f.read()
    assert text.startswith("op,benchmark_file,benchmark_test,correctness_file,correctness_selector,dtypes,kind\n")
    assert text.endswith("\n") and "\r" not in text and '"' not in text
    assert len(list(csv.reader(text.splitlines()))) == len(ROWS) + 1


def test_thirty_two_distinct_ops_with_the_required_ones():
    ops = [row["op"] for row in ROWS]
    assert len(ops) == 32 and len(set(ops)) == 32
    assert set(REQUIRED) <= set(ops)


def test_rows_named_by_the_example_manifest():
    by_op = {row["op"]: row for row in ROWS}
    for op in ("softmax_rows", "layer_norm_fwd", "gelu_bwd", "matmul_bias_gelu"):
        row = by_op[op]
        assert row["benchmark_file"].startswith("benchmark/test_") and row["benchmark_test"] == f"test_perf_{op}"
        assert row["correctness_file"].startswith("tests/test_")


@pytest.mark.parametrize("row", ROWS, ids=[row["op"] for row in ROWS])
def test_row_matches_the_test_files(row):
    op = row["op"]
    assert row["kind"] in KINDS
    assert set(row["dtypes"].split(";")) <= DTYPES
    assert row["correctness_selector"] == op
    bench = _marks(row["benchmark_file"])
    assert row["benchmark_test"] == f"test_perf_{op}" and op in bench[row["benchmark_test"]]
    tests = _marks(row["correctness_file"])
    assert any(op in marks for marks in tests.values()), f"no correctness test marked {op}"


def test_matmuls_take_half_precisions():
    for row in ROWS:
        if row["kind"] == "matmul":
            assert row["dtypes"] == "float16;bfloat16"


def _dtype_ids(path, test):
    """The ids of a test's literal dtype parameters (pytest.param(torch.X, id="X"))."""
    with open(os.path.join(OPS_DIR, path)) as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == test:
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and getattr(dec.func, "attr", "") == "parametrize" and \
                        dec.args[0].value == "dtype":
                    return [kw.value.value for p in dec.args[1].elts for kw in p.keywords if kw.arg == "id"]
    return None


@pytest.mark.parametrize("row", ROWS, ids=[row["op"] for row in ROWS])
def test_written_dtypes_are_the_inventorys(row):
    """Each test file spells out the dtypes inventory_main.csv lists for its op."""
    want = row["dtypes"].split(";")
    assert _dtype_ids(row["benchmark_file"], row["benchmark_test"]) == want
    marked = [name for name, marks in _marks(row["correctness_file"]).items() if row["op"] in marks]
    assert marked and all(_dtype_ids(row["correctness_file"], name) == want for name in marked)
