#!/usr/bin/env python3
"""gen_stats.py: golden data for src/account/stats.c, made independently of it.

A short pure-Python (standard library only) implementation of the
definitions in docs/formats.md, "Statistics": exact integer medians
(statistics.median), splitmix64 + xoshiro256** on Python integers, the
seed from hashlib, the two-level bootstrap (sessions, then repeats within
them), numpy's default quantile, and llround through Decimal. It checks
itself against published vectors, then writes cases.json next to this
script:

    python3 tests/golden/stats/gen_stats.py

The output depends only on this script (input samples come from its own
generator), so running it again gives the same file. A speedup case's rows
hold either one session per cell ("base", "other": lists of samples) or
several ("base_sessions", "other_sessions": lists of sessions, each a list
of samples, as many in every row of a cell); median_* are the row times
(medians pooled over the cell's sessions). Cases with sessions also give
their first resample: the session indices it drew for each cell (0-based,
none for a cell of one session) and its speedup.
"""
import decimal
import hashlib
import json
import math
import os
import statistics
import sys

M64 = (1 << 64) - 1


def splitmix64(x):
    """One splitmix64 step: (new state, output)."""
    x = (x + 0x9E3779B97F4A7C15) & M64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return x, z ^ (z >> 31)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


class Xoshiro256ss:
    def __init__(self, state):
        self.s = list(state)

    @classmethod
    def seeded(cls, seed):
        state = []
        for _ in range(4):
            seed, out = splitmix64(seed)
            state.append(out)
        return cls(state)

    def next(self):
        s = self.s
        result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def index(self, n):
        return self.next() % n


def bootstrap_seed(task, order):
    digest = hashlib.sha256(f"caliber-bootstrap/1:{task}:{order}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def median(v):
    """Exact median of integers, correctly rounded to a float."""
    return float(statistics.median(v))


def quantile(sorted_x, q):
    """numpy.quantile(x, q), method='linear', as the formula in the docs."""
    n = len(sorted_x)
    h = (n - 1) * q
    i = math.floor(h)
    if i + 1 >= n:
        return sorted_x[n - 1]
    return sorted_x[i] + (h - i) * (sorted_x[i + 1] - sorted_x[i])


def row_time(sessions):
    """A row's time in a cell: the median of its samples pooled over the
    cell's sessions."""
    return median([x for session in sessions for x in session])


def geomean_speedup(times_base, times_other):
    acc = 0.0  # a plain loop: sum() compensates on Python >= 3.12
    for tb, to in zip(times_base, times_other):
        acc += math.log(tb / to)
    return math.exp(acc / len(times_base)) - 1


def draw_sessions(rng, cell):
    """The session indices of one resample: as many draws as the cell has
    sessions, or none (its only session, once) when it has one."""
    count = len(cell[0])
    if count == 1:
        return [0]
    return [rng.index(count) for _ in range(count)]


def resample_row(rng, sessions, picks):
    """Row time in one resample: for each picked session in order, draw as
    many of its samples as it has, with replacement; median of them all."""
    drawn = []
    for k in picks:
        session = sessions[k]
        drawn += [session[rng.index(len(session))] for _ in session]
    return median(drawn)


def resample(rng, base, other):
    """One resample's speedup and the sessions it drew for each cell."""
    picks_base = draw_sessions(rng, base)
    picks_other = draw_sessions(rng, other)
    tb, to = [], []
    for rb, ro in zip(base, other):
        tb.append(resample_row(rng, rb, picks_base))
        to.append(resample_row(rng, ro, picks_other))
    return geomean_speedup(tb, to), picks_base, picks_other


def speedup(base, other, confidence, seed, resamples):
    """base, other: cell[r][s] is the list of samples of row r in session s.
    Returns point, lo, hi and the first resample (speedup, sessions drawn)."""
    point = geomean_speedup([row_time(r) for r in base], [row_time(r) for r in other])
    rng = Xoshiro256ss.seeded(seed)
    boot = [resample(rng, base, other) for _ in range(resamples)]
    first = boot[0]
    boot = sorted(b[0] for b in boot)
    return (point, quantile(boot, (1 - confidence) / 2), quantile(boot, (1 + confidence) / 2),
            first)


def ppm(x):
    """llround(x * 1e6): the exact product's double, halves away from zero."""
    y = decimal.Decimal(x * 1e6)
    return int(y.quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def self_check():
    """Published vectors: xoshiro256** from state {1,2,3,4} (Vigna's
    reference code, as in rand_xoshiro's test) and splitmix64 from 1234567
    (Rosetta Code)."""
    g = Xoshiro256ss([1, 2, 3, 4])
    assert [g.next() for _ in range(10)] == XOSHIRO_1234
    x, outs = 1234567, []
    for _ in range(5):
        x, out = splitmix64(x)
        outs.append(out)
    assert outs == SPLITMIX_1234567


XOSHIRO_1234 = [11520, 0, 1509978240, 1215971899390074240, 1216172134540287360,
                607988272756665600, 16172922978634559625, 8476171486693032832,
                10595114339597558777, 2904607092377533576]
SPLITMIX_1234567 = [6457827717110365317, 3203168211198807973, 9817491932198370423,
                    4593380528125082431, 16408922859458223821]


def noisy(rng, n, center, spread):
    """n samples center +- spread/2 from the generator (inputs only)."""
    return [center + rng.index(spread + 1) - spread // 2 for _ in range(n)]


def build_cases():
    g = Xoshiro256ss.seeded(20240611)
    big = 1 << 41
    # (name, task, order, confidence, resamples, rows as (name, base, other))
    specs = [
        ("single_row_odd_gain", "ops/tests/test_mm.py::test_mm[4096]", "a", 0.95, 1000,
         [("r0", [1012, 1003, 998, 1040, 1001, 1007, 995], [805, 812, 799, 830, 801, 808, 797])]),
        ("single_row_even_conf90", "t-even", "b", 0.9, 500,
         [("r0", [5000, 5100, 4900, 5050, 4950, 5025], [4800, 4810, 4790, 4795, 4805, 4820])]),
        ("rows_mixed_counts", "t-mixed", "a", 0.95, 700,
         [("small", [311, 305, 309, 320, 302, 307, 306], [300, 298, 301, 299, 305]),
          ("even_odd", [1204, 1190, 1188, 1211], noisy(g, 9, 1150, 40)),
          ("one_base", [777], [760, 771, 765])]),
        ("clear_regression", "t-regress", "b", 0.95, 1000,
         [("x", noisy(g, 7, 2000, 30), noisy(g, 7, 2400, 30)),
          ("y", noisy(g, 7, 90000, 800), noisy(g, 7, 108000, 900))]),
        ("aa_like", "t-aa", "a-aa", 0.95, 2000,
         [(f"row{i}", noisy(g, 7, c, c // 50), noisy(g, 7, c, c // 50))
          for i, c in enumerate((4000, 17500, 250000))]),
        ("ties", "t-ties", "a", 0.95, 300,
         [("flat", [100] * 7, [100] * 7),
          ("steps", [50, 50, 50, 60, 60, 60, 60], [40, 40, 50, 50, 50, 40, 40])]),
        ("huge_ns", "t-huge", "b", 0.95, 400,
         [("long", [big + d for d in (17, -3, 40001, 9, 123456, -77, 5)],
           [big - (1 << 36) + d for d in (11, 2, -900, 65536, 3, 7, 8)]),
          ("longer", [3 * big + d for d in (1, 2, 3, 4)], [3 * big + d for d in (1, 3, 5, 7)])]),
        ("one_sample_each", "t-n1", "a", 0.95, 200,
         [("p", [1000], [900]), ("q", [2000], [2100]), ("r", [333], [333])]),
        ("three_rows_conf90", "t-c90", "b-aa", 0.9, 800,
         [(f"k{i}", noisy(g, 5 + i, 10000 * (i + 1), 500), noisy(g, 7 - i, 9700 * (i + 1), 500))
          for i in range(3)]),
        ("timing_3x7x2000", "ops/tests/test_softmax.py::test_softmax[fp16-1024]", "a", 0.95, 2000,
         [(f"s{i}", noisy(g, 7, c, c // 20), noisy(g, 7, c * 9 // 10, c // 20))
          for i, c in enumerate((3000, 45000, 800000))]),
        ("single_resample", "t-r1", "a", 0.95, 1,
         [("only", [10, 12, 11], [9, 9, 10])]),
        ("two_resamples_conf50", "t-r2", "b", 0.5, 2,
         [("only", [10, 12, 11, 13], [9, 9, 10])]),
        ("many_rows_conf99", "t-many", "a", 0.99, 600,
         [(f"m{i}", noisy(g, 2 + i % 8, 500 + 97 * i, 60), noisy(g, 9 - i % 8, 480 + 97 * i, 60))
          for i in range(12)]),
        ("utf8_task", "t/\u00fcber-\u6e2c\u8a66", "b", 0.95, 250,
         [("r", [700, 710, 705], [720, 730, 725, 715])]),
    ]
    cases = [make_case(*spec, sessions=False) for spec in specs]
    cases += [make_case(*spec, sessions=True) for spec in session_specs(big)]
    # One session per cell is the bootstrap over repeats, draw for draw.
    same = [c for c in cases if c["name"] in ("single_row_odd_gain", "sessions_1v1_as_single_row")]
    assert [(c["point"], c["lo"], c["hi"]) for c in same].count(
        (same[0]["point"], same[0]["lo"], same[0]["hi"])) == 2
    return cases


def drifting(rng, counts, center, spread, drift):
    """Sessions of the given sample counts: each noisy around center plus
    its own shift in +- drift/2, the drift between passes (inputs only)."""
    sessions = []
    for n in counts:
        shift = rng.index(drift + 1) - drift // 2
        sessions.append(noisy(rng, n, center + shift, spread))
    return sessions


def session_specs(big):
    """Cases with sessions: rows as (name, base sessions, other sessions),
    every row of a cell with the same number of sessions."""
    h = Xoshiro256ss.seeded(20260301)
    same = drifting(h, [6, 7, 5, 7], 20000, 300, 400), drifting(h, [3, 9, 7, 7], 310000, 5000, 4000)
    return [
        ("sessions_1v1_as_single_row", "ops/tests/test_mm.py::test_mm[4096]", "a", 0.95, 1000,
         [("r0", [[1012, 1003, 998, 1040, 1001, 1007, 995]],
           [[805, 812, 799, 830, 801, 808, 797]])]),
        ("sessions_3v3_drift", "ops/tests/test_mm.py::test_mm[8192]", "a", 0.95, 1000,
         [("r0", drifting(h, [7] * 3, 1000, 20, 30), drifting(h, [7] * 3, 950, 20, 30)),
          ("r1", drifting(h, [7] * 3, 52000, 400, 900), drifting(h, [7] * 3, 50000, 400, 900))]),
        ("sessions_1v4", "t-s1v4", "b", 0.9, 500,
         [(f"q{i}", drifting(h, [9], c, c // 40, 0),
           drifting(h, [5, 7, 3, 9], c * 21 // 20, c // 40, c // 30))
          for i, c in enumerate((800, 6400, 120000))]),
        ("sessions_5v2_uneven", "t-uneven", "a-aa", 0.95, 700,
         [(f"u{i}", drifting(h, [1 + h.index(12) for _ in range(5)], c, c // 30, c // 25),
           drifting(h, [1 + h.index(12) for _ in range(2)], c, c // 30, c // 25))
          for i, c in enumerate((3000, 41000, 7000, 900000))]),
        ("sessions_ties", "t-sties", "b", 0.95, 400,
         [("flat", [[100] * 4] * 3, [[100] * 4, [100] * 6]),
          ("two_values", [[50, 60, 50, 60], [60, 60, 50, 50], [50, 50, 50, 60]],
           [[55, 55, 50], [50, 55, 55, 55, 50]]),
          ("pairs", [[7, 7], [8, 8], [7, 8]], [[7, 8], [8, 8]])]),
        ("sessions_huge_ns", "t-shuge", "a", 0.95, 400,
         [("long",
           [[big + d for d in ds] for ds in ((17, -3, 40001, 9), (123456, -77), (5, 6, 7, 8, 9, 10))],
           [[big - (1 << 36) + d for d in ds]
            for ds in ((11, 2), (-900, 65536, 3, 7), (8, 1 << 20), (0, 1))]),
          ("longer", [[3 * big + d for d in ds] for ds in ((1, 2), (3, 4), (5, 6, 7))],
           [[3 * big + d for d in ds] for ds in ((1, 3), (5, 7), (2,), (4, 6, 8, 10))])]),
        ("sessions_single_resample", "t-sr1", "b", 0.95, 1,
         [("only", [[10, 12, 11], [13, 12]], [[9, 9, 10], [11], [8, 10]])]),
        ("sessions_identical_cells", "t-sident", "b-aa", 0.95, 2000,
         [("w0", same[0], same[0]), ("w1", same[1], same[1])]),
        ("sessions_one_sample_each", "t-s1", "a", 0.95, 300,
         [(f"o{i}", [[c + h.index(50)] for _ in range(5)], [[c + h.index(50)] for _ in range(5)])
          for i, c in enumerate((1000, 2000))]),
        ("sessions_campaign_3x5x7", "ops/tests/test_softmax.py::test_softmax[fp16-4096]", "a", 0.95,
         2000,
         [(f"s{i}", drifting(h, [7] * 5, c, c // 100, c // 60),
           drifting(h, [7] * 5, c * 99 // 100, c // 100, c // 60))
          for i, c in enumerate((124000, 450000, 939000))]),
        ("sessions_many_rows_conf99", "t-smany", "b", 0.99, 600,
         [(f"m{i}", drifting(h, [2 + i % 5] * 3, 500 + 97 * i, 40, 30),
           drifting(h, [6 - i % 5, 3, 1 + i % 3], 490 + 97 * i, 40, 30))
          for i in range(10)]),
        ("sessions_50_samples_conf90", "t-s50", "a", 0.9, 300,
         [(f"f{i}", drifting(h, [50, 49, 50, 48], c, c // 10, c // 20),
           drifting(h, [50, 50, 47], c * 51 // 50, c // 10, c // 20))
          for i, c in enumerate((5000, 77777))]),
    ]


def make_case(name, task, order, conf, resamples, rows, sessions):
    """One golden case. Rows are (name, base, other): lists of samples (one
    session per cell, written as "base"/"other") or, with sessions, lists
    of sessions (written as "base_sessions"/"other_sessions")."""
    base = [b if sessions else [b] for _, b, _ in rows]
    other = [o if sessions else [o] for _, _, o in rows]
    for cell in (base, other):
        assert all(len(r) == len(cell[0]) >= 1 and all(r) for r in cell)
    key = "_sessions" if sessions else ""
    out = []
    for (r, b, o), rb, ro in zip(rows, base, other):
        row = {"row": r, "base" + key: b, "other" + key: o}
        for side, cell_row in (("base", rb), ("other", ro)):
            m = row_time(cell_row)
            row[f"median_{side}"] = m
            row[f"median_{side}_hex"] = m.hex()
        out.append(row)
    seed = bootstrap_seed(task, order)
    rng = Xoshiro256ss.seeded(seed)
    point, lo, hi, first = speedup(base, other, conf, seed, resamples)
    case = {
        "name": name, "task": task, "order": order, "confidence": conf,
        "resamples": resamples, "rows": out, "seed": str(seed),
        "rng_first8": [str(rng.next()) for _ in range(8)],
        "point": point, "point_hex": point.hex(),
        "lo": lo, "lo_hex": lo.hex(), "hi": hi, "hi_hex": hi.hex(),
    }
    if sessions:
        one, picks_base, picks_other = first
        case["first_resample"] = {
            "base_sessions_drawn": picks_base if len(base[0]) > 1 else [],
            "other_sessions_drawn": picks_other if len(other[0]) > 1 else [],
            "speedup": one, "speedup_hex": one.hex(),
        }
    return case


def main():
    self_check()
    i64max, i64min = (1 << 63) - 1, -(1 << 63)
    medians = [[5], [3, 1, 2], [4, 1, 3, 2], [7, 7, 7, 7], [1, 2], [-3, -1, -8],
               [(1 << 40) + 2, (1 << 40) + 1], [i64min, i64max], [i64max, i64max],
               [9, 1, 8, 2, 7, 3, 6, 4, 5, 0]]
    ppms = [0.0, 0.0123456, -0.05, 5e-7, -5e-7, 1.5e-6, -2.5e-6, 0.1, 1.0,
            -0.999999, 0.00000049999999, 123.4567895]
    doc = {
        "generator": "tests/golden/stats/gen_stats.py (pure-Python standard library, "
                     "independent of src/account/stats.c; run it from any directory to rewrite this "
                     "file). Compare point/lo/hi with relative tolerance 1e-12 "
                     "(libm log/exp may differ by an ulp across machines), everything else "
                     "exactly.",
        "xoshiro_state_1234": {"state": ["1", "2", "3", "4"],
                               "outputs": [str(v) for v in XOSHIRO_1234]},
        "splitmix_1234567": [str(v) for v in SPLITMIX_1234567],
        "median": [{"samples": v, "median": median(v), "median_hex": median(v).hex()}
                   for v in medians],
        "ppm": [{"x": x, "x_hex": x.hex(), "ppm": str(ppm(x))} for x in ppms],
        "speedup": build_cases(),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
