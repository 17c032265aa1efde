"""The convert counter of capture_ttgir.py, and the real TTGIR fixtures of
tests/data/ttgir against expected.tsv."""

import importlib.util
import os
import re

import pytest

from repo_paths import DEVICE_SCRIPTS_DIR, TTGIR_DIR


def _capture():
    """scripts/device/capture_ttgir.py, loaded by path (it imports triton only in main)."""
    spec = importlib.util.spec_from_file_location("capture_ttgir", os.path.join(DEVICE_SCRIPTS_DIR, "capture_ttgir.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


count_converts = _capture().count_converts


@pytest.mark.parametrize("line, count", [
    ("    %3 = ttg.convert_layout %2 : tensor<4xi32, #blocked> -> tensor<4xi32, #blocked1> loc(#loc35)", 1),
    ("      %qk_124 = ttg.convert_layout %qk_123#0 : tensor<128x64xf32, #mma> -> tensor<128x64xf32, #blocked>", 1),
    ("    %a, %b = ttg.convert_layout %x : tensor<4xf32, #blocked> -> tensor<4xf32, #blocked1>", 1),
    ('    %5 = "ttg.convert_layout"(%4) : (tensor<4xf32, #blocked>) -> tensor<4xf32, #blocked1>', 1),
    ('#loc35 = loc("ttg.convert_layout")', 0),
    ('    %7 = arith.addf %5, %6 : tensor<4xf32> loc("ttg.convert_layout"(#loc3))', 0),
    ('    tt.print " ttg.convert_layout " {hex = false} : %x', 0),
    ('    %8 = tt.call @f() {note = "ttg.convert_layout"} : () -> i32', 0),
    ("    %9 = ttg.convert_layouts %2 : tensor<4xf32>", 0),
    ("    // ttg.convert_layout in a comment", 0),
])
def test_counter_counts_operations_only(line, count):
    assert count_converts(line) == count


def _expected():
    with open(os.path.join(TTGIR_DIR, "expected.tsv")) as f:
        lines = f.read().splitlines()
    assert lines[0] == "file\tcount"
    return {name: int(n) for name, n in (line.split("\t") for line in lines[1:])}


def test_every_fixture_is_listed_and_counted():
    expected = _expected()
    files = sorted(f for f in os.listdir(TTGIR_DIR) if f.endswith(".ttgir"))
    assert files == sorted(expected) and len(files) >= 14
    for name in files:
        with open(os.path.join(TTGIR_DIR, name)) as f:
            assert count_converts(f.read()) == expected[name], name
    assert any(expected.values()) and not all(expected.values())


def test_baseline_fixtures_keep_more_converts():
    expected = _expected()
    for label in ("matmul_bias_gelu", "attention_fwd"):
        assert expected[f"{label}__baseline.ttgir"] > expected[f"{label}.ttgir"]


def test_fixtures_are_small_and_hold_no_absolute_paths():
    total = 0
    for name in os.listdir(TTGIR_DIR):
        with open(os.path.join(TTGIR_DIR, name)) as f:
            text = f.read()
        total += len(text.encode())
        assert not re.search(r'loc\("/', text), name
    assert total < 1 << 20
