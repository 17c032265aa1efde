"""Binary identity: TTGIR without locations, the launch configuration, the
binary of a cache group, and binaries.tsv text (caliber_pytest._binaries)."""

import glob
import hashlib
import json
import os

import pytest

from caliber_pytest import _binaries
from repo_paths import REPO

TTGIR = os.path.join(REPO, "tests", "data", "ttgir")


def test_locations_are_stripped_from_ops_arguments_and_definitions():
    text = ('#blocked = #ttg.blocked<{sizePerThread = [1]}>\n'
            '#loc = loc("ops/caliber_ops/matmul.py":67:0)\n'
            'module {\n'
            '  tt.func public @k(%A: !tt.ptr<f16> loc("A"(#loc)), %n: i32 loc("n"(#loc))) {\n'
            '    %0 = ttg.convert_layout %c : tensor<128xi32, #blocked> -> tensor<128xi32, #blocked1> loc(#loc12)\n'
            '    %1 = "tt.call"() {note = "loc(kept) inside a string"} : () -> () loc(callsite(#loc3 at #loc4))\n'
            '    tt.return loc(#loc)   \n'
            '  } loc(#loc)\n'
            '} loc(#loc)\n'
            '#loc12 = loc("ops/caliber_ops/matmul.py":47:24)\n'
            '  #loc13 = loc(fused[#loc1, "a\\")"(#loc2)])\n')
    assert _binaries.strip_locations(text) == (
        '#blocked = #ttg.blocked<{sizePerThread = [1]}>\n'
        'module {\n'
        '  tt.func public @k(%A: !tt.ptr<f16>, %n: i32) {\n'
        '    %0 = ttg.convert_layout %c : tensor<128xi32, #blocked> -> tensor<128xi32, #blocked1>\n'
        '    %1 = "tt.call"() {note = "loc(kept) inside a string"} : () -> ()\n'
        '    tt.return\n'
        '  }\n'
        '}\n')


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(TTGIR, "*.ttgir"))))
def test_real_ttgir_digests_do_not_see_where_the_source_lives(path):
    """The H200 fixtures, their source paths moved under another root (a
    second build of the compiler, another checkout of the corpus): the raw
    text differs, the location-free digest does not, and no location is left."""
    with open(path) as f:
        text = f.read()
    moved = text.replace('loc("ops/', 'loc("/elsewhere/ops/').replace('loc("triton/', 'loc("/other/triton/')
    assert moved != text
    assert _binaries.ttgir_digest(moved) == _binaries.ttgir_digest(text)
    stripped = _binaries.strip_locations(text)
    assert "loc(" not in stripped and "#loc" not in stripped
    assert stripped.count("ttg.convert_layout") == text.count("= ttg.convert_layout")


def test_a_changed_operation_changes_the_digest():
    with open(os.path.join(TTGIR, "matmul_bias_gelu.ttgir")) as f:
        stock = f.read()
    with open(os.path.join(TTGIR, "matmul_bias_gelu__baseline.ttgir")) as f:
        baseline = f.read()
    assert _binaries.ttgir_digest(stock) != _binaries.ttgir_digest(baseline)


def test_launch_configuration_keeps_the_launch_fields_only():
    meta = {"hash": "ab", "name": "_k", "num_warps": 8, "num_ctas": 1, "num_stages": 3, "shared": 163840,
            "warp_size": 32, "launch_pdl": False, "cluster_dims": [1, 1, 1], "extern_libs": [["libdevice", "/x"]],
            "tmem_size": 0}
    assert _binaries.launch_text(meta) == ("cluster_dims=[1,1,1];launch_pdl=false;num_ctas=1;num_warps=8;"
                                           "shared=163840;tmem_size=0;warp_size=32")
    assert _binaries.launch_text({"hash": "ab"}) == "-"


def test_the_binary_is_the_cubin_else_the_last_file_that_is_not_ir():
    group = {"_k.ttir": "/c/_k.ttir", "_k.ttgir": "/c/_k.ttgir", "_k.llir": "/c/_k.llir", "_k.ptx": "/c/_k.ptx",
             "_k.cubin": "/c/_k.cubin", "_k.json": "/c/_k.json"}
    assert _binaries.binary_file("_k", group) == "/c/_k.cubin"
    other = {"_k.ttgir": "/c/_k.ttgir", "_k.mubin": "/c/_k.mubin", "_k.json": "/c/_k.json"}
    assert _binaries.binary_file("_k", other) == "/c/_k.mubin"
    assert _binaries.binary_file("_k", {"_k.ttgir": "/c/_k.ttgir", "_k.json": "/c/_k.json"}) is None


def test_describe_digests_the_files_of_a_cache_folder(tmp_path):
    files = {"_k.ttgir": "module {\n} loc(#loc)\n#loc = loc(\"/a/k.py\":1:0)\n", "_k.cubin": b"\x7fELF bytes",
             "_k.json": json.dumps({"num_warps": 4, "shared": 0, "name": "_k"})}
    group = {}
    for name, data in files.items():
        path = tmp_path / name
        (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)
        group[name] = str(path)
    row = _binaries.describe("V1", "_k", group)
    assert row == ("V1", "_k", "_k.cubin", hashlib.sha256(b"\x7fELF bytes").hexdigest(),
                   hashlib.sha256(b"module {\n}\n").hexdigest(), "num_warps=4;shared=0")
    (tmp_path / "_k.cubin").unlink()
    (tmp_path / "_k.json").write_text("not json")
    assert _binaries.describe("V1", "_k", group)[2:4] == ("-", "-")
    assert _binaries.describe("V1", "_k", group)[5] == "-"


def test_binaries_text_is_sorted_with_header():
    text = _binaries.format_binaries([("Z", "_b", "-", "-", "-", "-"), ("A", "_a", "_a.cubin", "11", "22", "num_warps=4")])
    assert text == ("variant\tkernel\tbinary\tbinary_sha256\tttgir_sha256\tlaunch\n"
                    "A\t_a\t_a.cubin\t11\t22\tnum_warps=4\nZ\t_b\t-\t-\t-\t-\n")


@pytest.mark.parametrize("row", [("A", "_a", "x", "1", "2"), ("A", "", "x", "1", "2", "l"), ("A\tB", "_a", "x", "1", "2", "l")])
def test_bad_binaries_rows_are_refused(row):
    with pytest.raises(ValueError):
        _binaries.format_binaries([row])
