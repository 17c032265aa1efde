"""Binary identity of compiled variants (docs/formats.md, ir/binaries.tsv):
the digest of a variant's compiled binary, of its TTGIR without source
locations, and its launch configuration, from the files of its Triton cache
folder. No torch, no triton here: ir_meta passes the cache files in, and the
test workers use the same functions on the files they write."""

import hashlib
import json
import os
import re
import struct

HEADER = ("variant", "kernel", "binary", "binary_sha256", "code_sha256", "ttgir_sha256", "launch")
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


# Sections of an ELF binary that only describe it for a debugger or a
# profiler (DWARF, NVIDIA's line tables and embedded PTX text) and their
# relocations: ptxas writes the source files' absolute paths there, so two
# builds of a compiler at different roots give cubins that differ only in them.
DEBUG_SECTIONS = (".debug", ".nv_debug", ".rel.debug", ".rela.debug", ".rel.nv_debug", ".rela.nv_debug")
_SHT_NOBITS = 8


def code_digest(data):
    """sha256 hex of what a binary runs: for an ELF (a cubin, an hsaco), its
    header's identity (class, machine, flags: the architecture) and every
    section but the debug ones (DEBUG_SECTIONS) and the table of section
    names (each section's name is digested with it) by name, attributes and
    bytes, in table order, with no file offsets (which move when a debug
    section's length changes); for anything else, or an ELF this cannot
    read, the bytes themselves (the same as the file's digest)."""
    try:
        return _elf_code_digest(data)
    except (ValueError, struct.error, IndexError, UnicodeDecodeError):
        return hashlib.sha256(data).hexdigest()


def _elf_code_digest(data):
    if data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        raise ValueError("not an ELF file")
    end = "<" if data[5] == 1 else ">"
    wide = data[4] == 2
    head = struct.unpack_from(end + ("HHIQQQIHHHHHH" if wide else "HHIIIIIHHHHHH"), data, 16)
    e_type, e_machine, e_version, e_entry, _, e_shoff, e_flags, _, _, _, e_shentsize, e_shnum, e_shstrndx = head
    fmt = end + ("IIQQQQIIQQ" if wide else "IIIIIIIIII")
    if e_shentsize != struct.calcsize(fmt) or not e_shnum or e_shstrndx >= e_shnum:
        raise ValueError("no section table")
    sections = [struct.unpack_from(fmt, data, e_shoff + i * e_shentsize) for i in range(e_shnum)]
    names = sections[e_shstrndx]
    strtab = data[names[4]:names[4] + names[5]]
    h = hashlib.sha256()
    h.update(data[:16] + struct.pack("<HHIQI", e_type, e_machine, e_version, e_entry, e_flags))
    for i, (name_at, sh_type, flags, addr, offset, size, link, info, align, entsize) in enumerate(sections):
        name = strtab[name_at:strtab.index(b"\0", name_at)].decode("utf-8")
        if name.startswith(DEBUG_SECTIONS) or i == e_shstrndx:
            continue
        body = b"" if sh_type == _SHT_NOBITS else data[offset:offset + size]
        if len(body) != (0 if sh_type == _SHT_NOBITS else size):
            raise ValueError(f"section {name} runs past the end of the file")
        h.update(struct.pack("<I", len(name)) + name.encode() + struct.pack("<IQQIIQQQ", sh_type, flags, addr, link,
                                                                           info, align, entsize, size) + body)
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
    """(variant, kernel, binary file name, binary sha256, code sha256, TTGIR
    sha256, launch) of one variant from its cache group; NONE for what is
    missing (a metadata file that is not a JSON object has no launch)."""
    binary = binary_file(kernel, group)
    binary = binary if binary and os.path.isfile(binary) else None
    data = None
    if binary:
        with open(binary, "rb") as f:
            data = f.read()
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
    return (variant, kernel, os.path.basename(binary) if binary else NONE,
            hashlib.sha256(data).hexdigest() if binary else NONE, code_digest(data) if binary else NONE, ttgir_sha, launch)


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
