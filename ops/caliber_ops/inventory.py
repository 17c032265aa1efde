"""ops/inventory_main.csv, read with the csv module (no torch needed)."""

import csv
import os

PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "inventory_main.csv")
COLUMNS = ("op", "benchmark_file", "benchmark_test", "correctness_file", "correctness_selector", "dtypes", "kind")


def rows(path=PATH):
    """The inventory rows as dicts, in file order."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path}: header must be {','.join(COLUMNS)}")
        return list(reader)


def ops(path=PATH):
    """Every op name, in file order."""
    return [row["op"] for row in rows(path)]
