"""Fuzz caliber_pytest.inventory with Hypothesis: the corpus trees of
tests/data/inventory mutated (bytes flipped, lines dropped or repeated,
brackets and quotes left open, Python fragments and bad bytes put in,
files cut short), and arbitrary bytes. Whatever the input, the reader never
raises: it returns the tests of the file, well formed, or refuses it with a
line inside the file. Derandomized, so that `make check` runs the same
examples every time."""

import json
import os
import tempfile

from hypothesis import HealthCheck, given, settings, strategies as st

from caliber_pytest import inventory
from repo_paths import REPO

TREES = os.path.join(REPO, "tests", "data", "inventory")
SEEDS = sorted(os.path.join(d, f) for d, _, fs in os.walk(TREES) for f in fs if f.endswith(".py"))
SEED_BYTES = [open(p, "rb").read() for p in SEEDS]

# What a mutation may put in: brackets and quotes that do not close, line
# breaks of every kind, bytes that are not UTF-8, and the Python the reader
# evaluates (so that mutations reach its evaluation, not only the parser).
FRAGMENTS = [b"(", b")", b"[", b"]", b"{", b"}", b"'", b'"', b'"""', b"'''", b"\\", b"\n", b"\r", b"\r\n",
             b"\t", b"\f", b" ", b"#", b"@", b":", b",", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\0", b"\xef\xbb\xbf",
             b"@pytest.mark.x\n", b"@pytest.mark.parametrize('dtype', DT)\n", b"def test_a(dtype): pass\n",
             b"class TestK:\n", b"    ", b"if X:\n", b"for n in OPS:\n", b"else:\n", b"global OPS\n",
             b"OPS = ['a', 'b'] + OPS\n", b"OPS.append('c')\n", b"DT = [torch.float16, torch.half]\n",
             b"pytestmark = [pytest.mark.m]\n", b"from .helper import *\n", b"from . import helper as h\n",
             b"[pytest.param(n, marks=getattr(pytest.mark, n + '_b', None)) for n in OPS if n != 'a']",
             b"f'{n}_x'", b"h.OPS", b"*OPS", b"OPS[1:]", b"lambda: 0", b"async ", b"match x:\n    case [a, *b]:\n"]

mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 1 << 20), st.integers(0, 255)),
    st.tuples(st.just("drop"), st.integers(0, 1 << 20), st.integers(1, 3)),
    st.tuples(st.just("repeat"), st.integers(0, 1 << 20), st.integers(1, 3)),
    st.tuples(st.just("insert"), st.integers(0, 1 << 20), st.sampled_from(FRAGMENTS)),
    st.tuples(st.just("cut"), st.integers(0, 1 << 20), st.just(0)),
)


def mutate(data, steps):
    """data with each mutation applied in turn (positions taken modulo the size)."""
    for kind, at, arg in steps:
        if kind in ("drop", "repeat"):
            lines = data.splitlines(keepends=True)
            if lines:
                i = at % len(lines)
                part = lines[i:i + arg]
                lines[i:i + arg] = [] if kind == "drop" else part * 2
                data = b"".join(lines)
            continue
        i = at % (len(data) + 1)
        if kind == "flip" and data:
            i = min(i, len(data) - 1)
            data = data[:i] + bytes([arg]) + data[i + 1:]
        elif kind == "insert":
            data = data[:i] + arg + data[i:]
        elif kind == "cut":
            data = data[:i]
    return data


def line_count(data):
    """Lines as the reader counts them: LF, CRLF and a lone CR end one."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n") + 1


def check(root, data, helper):
    """Read t.py holding data (helper.py beside it) and check what comes back."""
    with open(os.path.join(root, "t.py"), "wb") as f:
        f.write(data)
    with open(os.path.join(root, "helper.py"), "wb") as f:
        f.write(helper)
    res = inventory.read_corpus(root, ["t.py"])
    json.dumps(res, ensure_ascii=True)
    lines = line_count(data)
    if "error" in res:
        err = res["error"]
        assert set(res) == {"error"} and err["file"] == 0 and err["message"]
        assert err["line"] is None or 1 <= err["line"] <= lines, (err, lines)
        return
    (entry,) = res["files"]
    ids = [t["id"] for t in entry["tests"]]
    assert len(ids) == len(set(ids))
    for t in entry["tests"]:
        assert all(part.isidentifier() for part in t["id"].split("::"))
        assert 1 <= t["line"] <= lines
        for marks in (t["marks"], t["param_marks"]):
            assert len(marks) == len(set(marks)) and all(inventory.is_op_mark(m) for m in marks)
        assert not set(t["marks"]) & set(t["param_marks"])
        assert t["dtype"] in ("none", "any", "literal")
        assert t["dtypes"] == sorted(set(t["dtypes"])) and set(t["dtypes"]) <= inventory.DTYPES
        assert t["dtype"] == "literal" or not t["dtypes"]
    for w in entry["warnings"]:
        assert 1 <= w["line"] <= lines and w["message"]


FUZZ = settings(max_examples=300, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(st.sampled_from(SEED_BYTES), st.lists(mutation, max_size=6), st.sampled_from(SEED_BYTES))
def test_mutated_corpus_files_are_read_or_refused_at_a_line(seed, steps, helper):
    with tempfile.TemporaryDirectory() as root:
        check(root, mutate(seed, steps), mutate(helper, steps[:1]))


@FUZZ
@given(st.binary(max_size=512), st.lists(st.sampled_from(FRAGMENTS), max_size=12))
def test_arbitrary_bytes_are_read_or_refused_at_a_line(noise, fragments):
    with tempfile.TemporaryDirectory() as root:
        check(root, b"".join(fragments) + noise, b"OPS = ['a']\n")


# Valid modules built from the expressions and statements the reader
# evaluates, so that what runs is its evaluation rather than the parser.
NAMES = ["OPS", "DT", "h.OPS", "n", "name", "x", "pytest", "torch", "unknown"]
atom = st.one_of(
    st.sampled_from(NAMES + ["'a'", "'b_'", "1", "0", "None", "True", "torch.float16", "torch.half",
                             "torch.nope", "pytest.mark.abs", "pytest.mark.skip", "getattr", "lambda: 0"]),
    st.lists(st.sampled_from("abc_"), max_size=4).map(lambda cs: repr("".join(cs))))


def compound(inner):
    """Expressions over inner ones."""
    return st.one_of(
        st.lists(inner, max_size=4).map(lambda v: "[" + ", ".join(v) + "]"),
        st.lists(inner, max_size=4).map(lambda v: "(" + "".join(e + ", " for e in v) + ")"),
        st.tuples(inner, inner).map(lambda v: f"{v[0]} + {v[1]}"),
        st.tuples(inner, inner).map(lambda v: f"{v[0]} if {v[1]} else {v[0]}"),
        st.tuples(inner, inner).map(lambda v: f"{v[0]}[{v[1]}]"),
        st.tuples(inner, inner).map(lambda v: f"{v[0]}[1:{v[1]}]"),
        st.tuples(inner, inner).map(lambda v: f"[{v[0]} for n in {v[1]}]"),
        st.tuples(inner, inner, inner).map(lambda v: f"[{v[0]} for n, *x in {v[1]} if n != {v[2]}]"),
        st.tuples(inner, inner).map(lambda v: f"pytest.param({v[0]}, marks={v[1]})"),
        st.tuples(inner, inner).map(lambda v: f"getattr(pytest.mark, {v[0]}, {v[1]})"),
        st.tuples(inner).map(lambda v: f"[*{v[0]}]"),
        st.tuples(inner).map(lambda v: f"f'{{{v[0]}}}_b'"),
        st.tuples(inner, inner).map(lambda v: f"pytest.mark.parametrize({v[0]}, {v[1]})"),
    )


expr = st.recursive(atom, compound, max_leaves=12)
statement = st.one_of(
    st.tuples(st.sampled_from(["OPS", "DT", "n", "pytestmark", "x"]), expr).map(lambda v: f"{v[0]} = {v[1]}\n"),
    st.tuples(st.sampled_from(["OPS", "DT"]), expr).map(lambda v: f"{v[0]} += {v[1]}\n"),
    st.tuples(expr, st.sampled_from(["OPS", "DT"])).map(lambda v: f"{v[1]}.append({v[0]})\n"),
    st.tuples(expr, expr).map(lambda v: f"@{v[0]}\n@pytest.mark.parametrize('dtype', {v[1]})\n"
                                        f"def test_{abs(hash(v)) % 7}(dtype): pass\n"),
    st.tuples(expr, expr).map(lambda v: f"if {v[0]}:\n    OPS = {v[1]}\nelse:\n    del DT\n"),
    st.tuples(expr, expr).map(lambda v: f"for n in {v[0]}:\n    @pytest.mark.parametrize('x', {v[1]})\n"
                                        f"    def test_loop(x): pass\n"),
    st.tuples(expr, expr).map(lambda v: f"@pytest.mark.c\nclass TestC:\n    pytestmark = {v[0]}\n"
                                        f"    @pytest.mark.parametrize('x', {v[1]})\n    def test_m(self, x): pass\n"),
    st.sampled_from(["from .helper import *\n", "from . import helper as h\n", "from .helper import OPS\n",
                     "import pytest\n", "from pytest import mark, param\n", "def f():\n    global OPS\n",
                     "OPS, *DT = OPS\n", "with open('x') as n:\n    OPS = n\n"]),
)


@settings(FUZZ, max_examples=150)
@given(st.lists(statement, max_size=8), st.lists(statement, max_size=4))
def test_valid_modules_of_what_the_reader_evaluates(module, helper):
    with tempfile.TemporaryDirectory() as root:
        check(root, "".join(module).encode(), "".join(helper).encode())


def test_the_seeds_are_the_trees_of_the_cli_tests():
    assert len(SEEDS) > 20 and any(p.endswith("test_reduction_perf.py") for p in SEEDS)
