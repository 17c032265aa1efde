"""Binary identity of compiled variants (docs/formats.md, ir/binaries.tsv):
the digest of a variant's compiled binary, of its TTGIR without source
locations, and its launch configuration, from the files of its Triton cache
folder. No torch, no triton here: ir_meta passes the cache files in, and the
test workers use the same functions on the files they write."""

import hashlib
import json
import os
import re

HEADER = ("variant", "kernel", "binary", "binary_sha256", "ttgir_sha256", "launch")
NONE = "-"

# The binaries Triton's backends write last (NVIDIA: cubin, AMD: hsaco); another
# backend's is the last file of the cache group that is neither metadata nor
# one of the IRs Triton's stages write before the binary.
BINARY_SUFFIXES = (".cubin", ".hsaco")
NOT_BINARY_SUFFIXES = (".json", ".source", ".ttir", ".ttgir", ".llir", ".ptx", ".amdgcn")

# The fields of a variant's metadata that configure its launch beside the
# binary itself (Triton 3.6's CompiledKernel reads them to launch it):
# threads per block, CTAs per cluster, dynamic shared and tensor memory,
# scratch buffers the launcher allocates, cooperative and programmatic
# dependent launch.
LAUNCH_FIELDS = ("num_warps", "warp_size", "num_ctas", "cluster_dims", "shared", "tmem_size",
                 "global_scratch_size", "global_scratch_align", "profile_scratch_size",
                 "profile_scratch_align", "launch_cooperative_grid", "launch_pdl")

_LOC_DEFINITION = re.compile(r"^\s*#loc[\w.$-]*\s*=\s*loc\(")


def strip_locations(text):
    """TTGIR without source locations: every `loc(...)` outside a string
    (parentheses balanced, strings inside skipped) taken out with the
    blanks before it, and every
    `#locN = loc(...)` line dropped; trailing blanks go, every line ends in a
    newline. Two compilations of the same code from different folders (two
    builds of a compiler, two corpus roots) differ only in what this drops."""
    out = []
    for line in text.splitlines():
        if _LOC_DEFINITION.match(line):
            continue
        out.append(_drop_loc_calls(line).rstrip() + "\n")
    return "".join(out)


def _drop_loc_calls(line):
    """line with each `loc(...)` outside a string, and the blanks before
    it, removed."""
    out, i, quoted = [], 0, False
    while i < len(line):
        c = line[i]
        if quoted:
            out.append(line[i:i + 2] if c == "\\" else c)
            i += 2 if c == "\\" else 1
            quoted = c != '"'
            continue
        if line.startswith("loc(", i) and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] in "_.$#")):
            while out and out[-1].isspace():
                out.pop()
            i = _after_parens(line, i + len("loc("))
            continue
        quoted = c == '"'
        out.append(c)
        i += 1
    return "".join(out)


def _after_parens(line, i):
    """The index just past the ')' closing the '(' before i; strings in
    double quotes (with backslash escapes) are skipped."""
    depth, quoted = 1, False
    while i < len(line) and depth:
        c = line[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        i += 1
    return i


def ttgir_digest(text):
    """sha256 hex of a TTGIR text with its locations stripped (bytes that
    are not UTF-8 kept as they were read, through surrogateescape)."""
    return hashlib.sha256(strip_locations(text).encode("utf-8", "surrogateescape")).hexdigest()


def file_digest(path):
    """sha256 hex of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def launch_text(metadata):
    """The launch configuration of a variant's metadata as one field:
    `name=value` of each LAUNCH_FIELDS entry it has (values as compact JSON),
    sorted, joined by ';'; NONE when it has none of them."""
    parts = [f"{k}={json.dumps(metadata[k], separators=(',', ':'), sort_keys=True)}"
             for k in sorted(LAUNCH_FIELDS) if k in metadata]
    return ";".join(parts) if parts else NONE


def binary_file(kernel, group):
    """The compiled binary of a variant in its cache group (file name ->
    path, in the order Triton wrote them): <kernel> with a known binary
    suffix, else the last file that is neither metadata nor IR; None when
    there is none."""
    for suffix in BINARY_SUFFIXES:
        if kernel + suffix in group:
            return group[kernel + suffix]
    others = [path for name, path in group.items() if not name.endswith(NOT_BINARY_SUFFIXES)]
    return others[-1] if others else None


def describe(variant, kernel, group):
    """(variant, kernel, binary file name, binary sha256, TTGIR sha256,
    launch) of one variant from its cache group; NONE for what is missing
    (a metadata file that is not a JSON object has no launch)."""
    binary = binary_file(kernel, group)
    binary = binary if binary and os.path.isfile(binary) else None
    ttgir = group.get(kernel + ".ttgir")
    meta = group.get(kernel + ".json")
    ttgir_sha = NONE
    if ttgir and os.path.isfile(ttgir):
        with open(ttgir, encoding="utf-8", errors="surrogateescape") as f:
            ttgir_sha = ttgir_digest(f.read())
    launch = NONE
    if meta and os.path.isfile(meta):
        with open(meta, encoding="utf-8") as f:
            try:
                metadata = json.load(f)
            except ValueError:
                metadata = None
        launch = launch_text(metadata) if isinstance(metadata, dict) else NONE
    return (variant, kernel, os.path.basename(binary) if binary else NONE, file_digest(binary) if binary else NONE,
            ttgir_sha, launch)


def format_binaries(rows):
    """binaries.tsv text: the header, then one tab-separated line per row, sorted by variant."""
    lines = ["\t".join(HEADER)]
    for row in sorted(rows):
        if len(row) != len(HEADER):
            raise ValueError(f"binaries row {row!r} has {len(row)} fields, not {len(HEADER)}")
        for field in row:
            if not field or any(c in field for c in "\t\n\r"):
                raise ValueError(f"binaries field {field!r} is empty or holds a tab or newline")
        lines.append("\t".join(row))
    return "\n".join(lines) + "\n"
