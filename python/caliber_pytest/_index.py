"""The launch index of one request (docs/formats.md, ir/index.tsv)."""

HEADER = ("variant", "kernel", "launches", "tuning_launches")


class LaunchCounts:
    """Variants compiled or launched during one request, with their launch counts.

    Launches made while the autotuner benchmarks configs go to tuning_launches,
    all others to launches."""

    def __init__(self):
        self._rows = {}

    def _row(self, variant, kernel):
        row = self._rows.get(variant)
        if row is None:
            row = self._rows[variant] = {"kernel": kernel, "launches": 0, "tuning_launches": 0}
        elif row["kernel"] != kernel:
            raise ValueError(f"variant {variant} seen as kernel {row['kernel']} and {kernel}")
        return row

    def note_compiled(self, variant, kernel):
        """A variant was compiled or loaded in this request (it gets a row even unlaunched)."""
        self._row(variant, kernel)

    def note_launch(self, variant, kernel, tuning):
        """One launch of variant; tuning says whether the autotuner was benchmarking."""
        row = self._row(variant, kernel)
        row["tuning_launches" if tuning else "launches"] += 1

    def variants(self):
        """The variants of this request, sorted."""
        return sorted(self._rows)

    def rows(self):
        """(variant, kernel, launches, tuning_launches) tuples sorted by variant."""
        return [(v, self._rows[v]["kernel"], self._rows[v]["launches"], self._rows[v]["tuning_launches"])
                for v in self.variants()]


def format_index(rows):
    """index.tsv text: a header, then one tab-separated line per row, sorted by variant."""
    lines = ["\t".join(HEADER)]
    for variant, kernel, launches, tuning in sorted(rows):
        for field in (variant, kernel):
            if not field or any(c in field for c in "\t\n\r"):
                raise ValueError(f"index field {field!r} is empty or holds a tab or newline")
        if launches < 0 or tuning < 0:
            raise ValueError(f"negative launch count for {variant}")
        lines.append(f"{variant}\t{kernel}\t{int(launches)}\t{int(tuning)}")
    return "\n".join(lines) + "\n"
