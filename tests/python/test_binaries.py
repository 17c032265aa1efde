"""Binary identity: TTGIR without locations, the launch configuration, the
binary of a cache group, and binaries.tsv text (caliber_pytest._binaries)."""

import glob
import hashlib
import json
import os
import struct

import pytest

from caliber_pytest import _binaries
from repo_paths import REPO

TTGIR = os.path.join(REPO, "tests", "data", "ttgir")
BINARIES = os.path.join(REPO, "tests", "data", "binaries")


def _expected_binaries():
    """Rows of tests/data/binaries/expected.tsv as dicts."""
    with open(os.path.join(BINARIES, "expected.tsv")) as f:
        lines = f.read().splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, line.split("\t"))) for line in lines[1:]]


@pytest.mark.parametrize("row", _expected_binaries(), ids=lambda r: r["folder"])
def test_h200_kernels_give_the_digests_recorded_on_the_h200(row):
    """Real cubins, TTGIR and metadata of tests/data/binaries, their machine's
    paths replaced: the code digest and the location-free TTGIR digest are
    those of the files as recorded (the probe's own for the TTGIR), and the
    cubin's own digest is not (its debug sections changed)."""
    folder = os.path.join(BINARIES, row["folder"])
    group = {row["kernel"] + s: os.path.join(folder, row["kernel"] + s) for s in (".ttgir", ".cubin", ".json")}
    variant, kernel, binary, binary_sha, code_sha, ttgir_sha, launch = _binaries.describe("V", row["kernel"], group)
    assert (binary, code_sha, ttgir_sha, launch) == (row["kernel"] + ".cubin", row["code_sha256"], row["ttgir_sha256"],
                                                    row["launch"])
    assert binary_sha != row["cubin_sha256"]


def test_h200_matmul_compiled_by_the_demo_baseline_differs_in_code_and_ttgir():
    rows = {r["folder"]: r for r in _expected_binaries()}
    assert rows["matmul"]["code_sha256"] != rows["matmul-off"]["code_sha256"]
    assert rows["matmul"]["ttgir_sha256"] != rows["matmul-off"]["ttgir_sha256"]


def _elf(sections, machine=190, flags=0x5A0559):
    """A little-endian ELF64 with the named sections (name, type, bytes) in
    that order after a null section and .shstrtab, section table last."""
    names = b"\0.shstrtab\0" + b"".join(n.encode() + b"\0" for n, _, _ in sections)
    entries, body, at = [], b"", 64
    table = [("", 0, b""), (".shstrtab", 3, names)] + list(sections)
    for name, kind, data in table:
        name_at = names.index(b"\0" + name.encode() + b"\0") + 1 if name else 0
        entries.append((name_at, kind, 0, 0, at + len(body), len(data), 0, 0, 1, 0))
        body += data
    shoff = 64 + len(body)
    head = b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HHIQQQIHHHHHH", 2, machine, 1, 0, 0, shoff, flags, 64,
                                                           0, 0, 64, len(table), 1)
    return head + body + b"".join(struct.pack("<IIQQQQIIQQ", *e) for e in entries)


def test_code_digest_leaves_out_debug_sections_and_offsets():
    text = (".text._k", 1, b"\x01\x02\x03\x04")
    plain = _elf([text, (".nv.info._k", 0x70000000, b"info")])
    debug = _elf([(".debug_line", 1, b"/a/long/source/path.py"), (".rela.debug_line", 4, b"r" * 24), text,
                  (".nv.info._k", 0x70000000, b"info"), (".nv_debug_ptx_txt", 1, b".file 1 \"/x.py\"")])
    moved = _elf([(".debug_line", 1, b"/b.py"), (".rela.debug_line", 4, b"r" * 24), text,
                  (".nv.info._k", 0x70000000, b"info"), (".nv_debug_ptx_txt", 1, b".file 1 \"/y.py\"")])
    assert hashlib.sha256(debug).hexdigest() != hashlib.sha256(moved).hexdigest()
    assert _binaries.code_digest(debug) == _binaries.code_digest(moved) == _binaries.code_digest(plain)
    assert _binaries.code_digest(_elf([(".text._k", 1, b"\x01\x02\x03\x05"), (".nv.info._k", 0x70000000, b"info")])) \
        != _binaries.code_digest(plain)
    assert _binaries.code_digest(_elf([text, (".nv.info._k", 0x70000000, b"info")], flags=0x5A0556)) \
        != _binaries.code_digest(plain), "another architecture"


def test_code_digest_of_anything_but_a_readable_elf_is_its_bytes():
    for data in (b"not an elf", b"\x7fELF\x02\x01\x01" + bytes(9), _elf([(".text", 1, b"x")])[:-10]):
        assert _binaries.code_digest(data) == hashlib.sha256(data).hexdigest()


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
    sha = hashlib.sha256(b"\x7fELF bytes").hexdigest()
    assert row == ("V1", "_k", "_k.cubin", sha, sha, hashlib.sha256(b"module {\n}\n").hexdigest(), "num_warps=4;shared=0")
    (tmp_path / "_k.cubin").unlink()
    (tmp_path / "_k.json").write_text("not json")
    assert _binaries.describe("V1", "_k", group)[2:5] == ("-", "-", "-")
    assert _binaries.describe("V1", "_k", group)[6] == "-"


def test_binaries_text_is_sorted_with_header():
    text = _binaries.format_binaries([("Z", "_b", "-", "-", "-", "-", "-"),
                                      ("A", "_a", "_a.cubin", "11", "12", "22", "num_warps=4")])
    assert text == ("variant\tkernel\tbinary\tbinary_sha256\tcode_sha256\tttgir_sha256\tlaunch\n"
                    "A\t_a\t_a.cubin\t11\t12\t22\tnum_warps=4\nZ\t_b\t-\t-\t-\t-\t-\n")


@pytest.mark.parametrize("row", [("A", "_a", "x", "1", "1", "2"), ("A", "", "x", "1", "1", "2", "l"),
                                 ("A\tB", "_a", "x", "1", "1", "2", "l")])
def test_bad_binaries_rows_are_refused(row):
    with pytest.raises(ValueError):
        _binaries.format_binaries([row])
