"""The launch index: counting and index.tsv text."""

import pytest

from caliber_pytest._index import LaunchCounts, format_index


def test_counts_split_tuning_from_measured_launches():
    counts = LaunchCounts()
    counts.note_compiled("BBB", "_mm")
    for _ in range(3):
        counts.note_launch("BBB", "_mm", tuning=True)
    for _ in range(41):
        counts.note_launch("BBB", "_mm", tuning=False)
    counts.note_launch("AAA", "_fill_random", tuning=False)
    counts.note_compiled("CCC", "_unused")
    assert counts.rows() == [("AAA", "_fill_random", 1, 0), ("BBB", "_mm", 41, 3), ("CCC", "_unused", 0, 0)]


def test_index_text_is_sorted_with_header():
    text = format_index([("Z2", "_b", 2, 0), ("A1", "_a", 41, 5)])
    assert text == "variant\tkernel\tlaunches\ttuning_launches\nA1\t_a\t41\t5\nZ2\t_b\t2\t0\n"


def test_empty_index_is_only_the_header():
    assert format_index([]) == "variant\tkernel\tlaunches\ttuning_launches\n"


def test_a_variant_cannot_change_kernel():
    counts = LaunchCounts()
    counts.note_compiled("V", "_a")
    with pytest.raises(ValueError):
        counts.note_launch("V", "_b", tuning=False)


@pytest.mark.parametrize("row", [("A\tB", "_k", 1, 0), ("A", "", 1, 0), ("A", "_k", -1, 0)])
def test_bad_rows_are_refused(row):
    with pytest.raises(ValueError):
        format_index([row])
