"""What a compiled variant uses (docs/formats.md, ir/resources.tsv)."""

HEADER = ("variant", "kernel", "n_regs", "n_spills", "shared", "num_stages", "num_warps")
FIELDS = HEADER[2:]
UNKNOWN = "-"


def _count(value):
    """A non-negative integer, or None for anything else (unknown)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def resources(kernel, metadata=None):
    """{field: integer or None} of a loaded variant: n_regs and n_spills from
    Triton's CompiledKernel (what the driver reported when it loaded the
    binary), shared, num_stages and num_warps from its metadata. Without the
    kernel (None), the metadata dict of its .json gives what it holds and the
    registers and spills are unknown."""
    if kernel is not None:
        meta = getattr(kernel, "metadata", None)
        out = {"n_regs": getattr(kernel, "n_regs", None), "n_spills": getattr(kernel, "n_spills", None)}
        out.update({f: getattr(meta, f, None) for f in ("shared", "num_stages", "num_warps")})
    else:
        metadata = metadata or {}
        out = {"n_regs": None, "n_spills": None}
        out.update({f: metadata.get(f) for f in ("shared", "num_stages", "num_warps")})
    return {f: _count(out[f]) for f in FIELDS}


def format_resources(rows):
    """resources.tsv text from (variant, kernel, resources dict) rows: a header,
    then one tab-separated line per variant, sorted, '-' for what is unknown."""
    lines = ["\t".join(HEADER)]
    for variant, kernel, res in sorted(rows, key=lambda r: r[0]):
        for field in (variant, kernel):
            if not field or any(c in field for c in "\t\n\r"):
                raise ValueError(f"resources field {field!r} is empty or holds a tab or newline")
        values = [UNKNOWN if res.get(f) is None else str(res[f]) for f in FIELDS]
        lines.append("\t".join([variant, kernel] + values))
    return "\n".join(lines) + "\n"
