"""caliber_pytest.inventory, the static reader behind `caliber inventory`: the
corners of the language a grep would get wrong (strings, f-strings, line
endings, continuations, nesting of defs and classes), every form of marks and
dtypes it reads, what it evaluates statically (lists, names, +,
comprehensions, imports inside the corpus) and what it leaves unknown with a
warning; then its refusals, message for message. Whole corpus trees are
covered by tests/cli/t1000-inventory.sh."""

import json
import os
import subprocess
import sys

import pytest

from caliber_pytest import inventory
from repo_paths import PYTHON_DIR


def render(root, src, files=None):
    """What the reader says of t.py holding src (bytes or text), with the other
    files of the corpus in files: one line per test, "id@line marks=a,b
    params=c dtypes=x;y" (dtypes '*' when not known, '-' without a dtype
    parameter), then "warning LINE: message" lines; or "error LINE: message"."""
    for rel, text in {**(files or {}), "t.py": src}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    res = inventory.read_corpus(str(root), ["t.py"])
    if "error" in res:
        return f"error {res['error']['line']}: {res['error']['message']}\n"
    out = []
    for t in res["files"][0]["tests"]:
        dt = {"none": "-", "any": "*"}.get(t["dtype"], "")
        out.append(f"{t['id']}@{t['line']} marks={','.join(t['marks'])} params={','.join(t['param_marks'])} "
                   f"dtypes={dt}{';'.join(t['dtypes'])}")
    out += [f"warning {w['line']}: {w['message']}" for w in res["files"][0]["warnings"]]
    return "".join(line + "\n" for line in out)


def test_strings_and_comments_hide_marks_and_defs(tmp_path):
    assert render(tmp_path, "s = '''\n@pytest.mark.a\ndef test_no():\n'''\n"
                            "t = r\"\\\"\" ; u = b'\\x00' b'def test_no2():'\n"
                            "# @pytest.mark.b\n"
                            "@pytest.mark.c  # a comment after the decorator\n\n"
                            "# a comment between\n"
                            "def test_yes(): pass\n") == "test_yes@10 marks=c params= dtypes=-\n"


def test_fstrings_nest(tmp_path):
    assert render(tmp_path, "x = f\"{d['k']} {f'{1:>{w}}'} {x!r:^10} {{literal}} {'}'}\"\n"
                            "y = rf'\\{a}' F\"\"\"\n{\n  b['''x''']\n}\"\"\"\n"
                            "@pytest.mark.a\ndef test_after(): pass\n") == "test_after@7 marks=a params= dtypes=-\n"


def test_fstrings_nested_the_python_3_12_way_need_that_python(tmp_path):
    got = render(tmp_path, "x = f\"{d[\"k\"]}\"\n@pytest.mark.a\ndef test_after(): pass\n")
    if sys.version_info >= (3, 12):
        assert got == "test_after@3 marks=a params= dtypes=-\n"
    else:
        assert got.startswith("error 1: f-string: ")


def test_line_endings_bom_tabs_and_continuations(tmp_path):
    assert render(tmp_path, b"\xef\xbb\xbfimport pytest\r\n"
                            b"class TestA:\r"
                            b"\t@pytest.mark.a\r\n"
                            b"\t@pytest.mark.parametrize(\"dtype\",\r\n"
                            b"\t\t[torch.float16,  # half\r\n"
                            b"\t\t torch.bfloat16])\r\n"
                            b"\tdef test_x(self, \\\r\n"
                            b"\t           dtype): pass\r\n"
                            b"x = 1 + \\\n"
                            b"    2; y = 3\n"
                            b"\f@pytest.mark.b\n"
                            b"def test_y(): pass") == ("TestA::test_x@7 marks=a params= dtypes=bfloat16;float16\n"
                                                       "test_y@12 marks=b params= dtypes=-\n")


def test_nesting_decides_what_pytest_collects(tmp_path):
    assert render(tmp_path, "import pytest\n"
                            "if True:\n"
                            "    @pytest.mark.a\n"
                            "    def test_in_if(): pass\n"
                            "else:\n"
                            "    def test_other(): pass\n"
                            "def helper():\n"
                            "    def test_inner(): pass\n"
                            "    class TestInFunc:\n"
                            "        def test_m(self): pass\n"
                            "class Helper:\n"
                            "    def test_not_collected(self): pass\n"
                            "class TestOuter:\n"
                            "    class TestInner:\n"
                            "        @pytest.mark.b\n"
                            "        async def test_deep(self): pass\n"
                            "    class NotTest:\n"
                            "        def test_no(self): pass\n"
                            "    def test_outer(self): pass\n"
                            "def testing_prefix(): pass\n") == (
        "test_in_if@4 marks=a params= dtypes=-\n"
        "test_other@6 marks= params= dtypes=-\n"
        "TestOuter::TestInner::test_deep@16 marks=b params= dtypes=-\n"
        "TestOuter::test_outer@19 marks= params= dtypes=-\n"
        "testing_prefix@20 marks= params= dtypes=-\n")


def test_marks_of_classes_and_pytestmark_and_pytests_own(tmp_path):
    assert render(tmp_path, "import pytest\n"
                            "pytestmark = pytest.mark.replaced\n"
                            "pytestmark = [pytest.mark.m, pytest.mark.skipif(True, reason='x'),\n"
                            "              pytest.mark.parametrize('dtype', [torch.int8])]\n"
                            "@pytest.mark.c\n"
                            "@pytest.mark.parametrize(\"dtype\", [torch.int16])\n"
                            "class TestC:\n"
                            "    pytestmark = (pytest.mark.cm,)\n"
                            "    @pytest.mark.own\n"
                            "    @pytest.mark.own\n"
                            "    def test_a(self): pass\n"
                            "@pytest.mark.usefixtures(\"x\")\n"
                            "@pytest.mark.xfail\n"
                            "@pytest.mark.skip\n"
                            "@pytest.mark.timeout(5)\n"
                            "@pytest.mark.filterwarnings(\"ignore\")\n"
                            "@pytest.mark.gr\u00f6\u00dfe\n"
                            "@pytest.mark.with_args(1)\n"
                            "@pytest.mark.a.b\n"
                            "@mark.plain\n"
                            "def test_b(): pass\n") == (
        "TestC::test_a@11 marks=own,c,cm,m params= dtypes=int16;int8\n"
        "test_b@21 marks=m params= dtypes=int8\n"
        "warning 19: decorator @pytest.mark.a.b cannot be read without running the file "
        "(`b` is not an attribute of a mark); the marks it may set are left out\n"
        "warning 20: decorator @mark.plain cannot be read without running the file "
        "(`mark` is not bound in the module); the marks it may set are left out\n")


def test_marks_imported_from_pytest_and_pytest_under_another_name(tmp_path):
    assert render(tmp_path, "import pytest as pt\n"
                            "from pytest import mark, param\n"
                            "@mark.a\n"
                            "@pt.mark.b\n"
                            "@mark.parametrize('x', [param(1, marks=mark.c)])\n"
                            "def test_x(x): pass\n") == "test_x@6 marks=a,b params=c dtypes=-\n"


def test_dtypes_literal_and_not(tmp_path):
    assert render(tmp_path, "@pytest.mark.parametrize('dtype', [torch.half, torch.cfloat, torch.float8_e4m3fn])\n"
                            "def test_aliases(dtype): pass\n"
                            "@pytest.mark.parametrize(['shape', 'dtype'], [((1,), torch.bool), [(2,), torch.uint8]])\n"
                            "def test_names_list(shape, dtype): pass\n"
                            "@pytest.mark.parametrize(('dtype',), [(torch.int64,)])\n"
                            "def test_names_tuple(dtype): pass\n"
                            "@pytest.mark.parametrize('dtype,', [torch.int32])\n"
                            "def test_trailing_comma(dtype): pass\n"
                            "@pytest.mark.parametrize('dtype', [pytest.param(torch.float16, marks=pytest.mark.skip, "
                            "id='h')])\n"
                            "@pytest.mark.parametrize('other', OTHERS)\n"
                            "def test_param(dtype, other): pass\n"
                            "@pytest.mark.parametrize('x', [1])\n"
                            "@pytest.mark.parametrize('dtype', [])\n"
                            "def test_empty(x, dtype): pass\n"
                            "@pytest.mark.parametrize('dtype', [torch.float32] + EXTRA)\n"
                            "def test_sum(dtype): pass\n"
                            "@pytest.mark.parametrize('dtype', [getattr(torch, n) for n in NAMES])\n"
                            "def test_comprehension(dtype): pass\n"
                            "@pytest.mark.parametrize('dtype', [torch.float32, torch.not_a_dtype])\n"
                            "def test_unknown(dtype): pass\n"
                            "@pytest.mark.parametrize(*ARGS)\n"
                            "def test_star(dtype): pass\n"
                            "@pytest.mark.parametrize(NAMES, VALUES)\n"
                            "def test_names_variable(dtype): pass\n"
                            "@pytest.mark.parametrize('dtype, x', [pytest.param(torch.float16, 1), "
                            "pytest.param(torch.float32)])\n"
                            "def test_short_param(dtype, x): pass\n"
                            "@pytest.mark.parametrize('dtype', (torch.float16,))\n"
                            "@pytest.mark.parametrize('dtype', DTYPES)\n"
                            "def test_any_wins(dtype): pass\n"
                            "@pytest.mark.parametrize(argnames='shape,\\n dtype', argvalues=[(1, torch.float64)])\n"
                            "def test_keywords(shape, dtype): pass\n") == (
        "test_aliases@2 marks= params= dtypes=complex64;float16;float8_e4m3fn\n"
        "test_names_list@4 marks= params= dtypes=bool;uint8\n"
        "test_names_tuple@6 marks= params= dtypes=int64\n"
        "test_trailing_comma@8 marks= params= dtypes=int32\n"
        "test_param@11 marks= params= dtypes=float16\n"
        "test_empty@14 marks= params= dtypes=\n"
        "test_sum@16 marks= params= dtypes=*\n"
        "test_comprehension@18 marks= params= dtypes=*\n"
        "test_unknown@20 marks= params= dtypes=*\n"
        "test_star@22 marks= params= dtypes=*\n"
        "test_names_variable@24 marks= params= dtypes=*\n"
        "test_short_param@26 marks= params= dtypes=*\n"
        "test_any_wins@29 marks= params= dtypes=*\n"
        "test_keywords@31 marks= params= dtypes=float64\n")


def test_every_dtype_name_comes_out_sorted(tmp_path):
    assert render(tmp_path, "@pytest.mark.parametrize('dtype', [torch.uint8, torch.uint64, torch.uint32,\n"
                            "  torch.uint16, torch.quint8, torch.quint4x2, torch.quint2x4, torch.qint8,\n"
                            "  torch.qint32, torch.int8,\n"
                            "  torch.long, torch.int, torch.short, torch.float8_e8m0fnu, torch.float8_e5m2fnuz,\n"
                            "  torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e4m3fn, torch.double,\n"
                            "  torch.float4_e2m1fn_x2, torch.float, torch.half, torch.complex64, torch.chalf,\n"
                            "  torch.cdouble, torch.bool, torch.bfloat16])\n"
                            "def test_all(dtype): pass\n") == (
        "test_all@8 marks= params= dtypes=bfloat16;bool;complex128;complex32;complex64;float16;float32;"
        "float4_e2m1fn_x2;float64;float8_e4m3fn;float8_e4m3fnuz;float8_e5m2;float8_e5m2fnuz;float8_e8m0fnu;"
        "int16;int32;int64;int8;qint32;qint8;quint2x4;quint4x2;quint8;uint16;uint32;uint64;uint8\n")


# -- what is evaluated statically ------------------------------------------

# One parametrized case per name o, marked with it.
CASE = "pytest.param(o, marks=getattr(pytest.mark, o))"

TABLE = ("import pytest\nimport torch\n"
         "FLOAT = [torch.float16, torch.float32]\n"
         "forward = [\n"
         "    (\"abs\", torch.abs, FLOAT),\n"
         "    (\"neg\", lambda x: -x, FLOAT),\n"
         "]\n"
         "more = forward + [(\"exp\", torch.exp, FLOAT)]\n")


def test_a_comprehension_over_a_module_level_table_marks_each_case(tmp_path):
    assert render(tmp_path, TABLE +
                  "@pytest.mark.parametrize(\n"
                  "    'op_name, op, dtypes',\n"
                  "    [pytest.param(name, op, dt, marks=getattr(pytest.mark, name, None)) for name, op, dt in more],\n"
                  ")\n"
                  "def test_table(op_name, op, dtypes): pass\n"
                  "@pytest.mark.parametrize('name', [\n"
                  "    pytest.param(n, marks=getattr(pytest.mark, n + '_backward', None))\n"
                  "                                  for n, _, _ in forward if n != 'neg'])\n"
                  "def test_backward(name): pass\n"
                  "@pytest.mark.parametrize('name', [pytest.param(n, marks=getattr(pytest.mark, f'{n}_out'))\n"
                  "                                  for (n, *_) in forward[:1]])\n"
                  "def test_out(name): pass\n") == (
        "test_table@13 marks= params=abs,neg,exp dtypes=-\n"
        "test_backward@17 marks= params=abs_backward dtypes=-\n"
        "test_out@20 marks= params=abs_out dtypes=-\n")


def test_marks_of_pytest_param_in_every_form(tmp_path):
    assert render(tmp_path, "import pytest\n"
                            "MARKS = [pytest.mark.b, pytest.mark.c]\n"
                            "CASES = (pytest.param(1, marks=pytest.mark.a), pytest.param(2, marks=MARKS),\n"
                            "         pytest.param(3, marks=(pytest.mark.d, pytest.mark.skip)), pytest.param(4),\n"
                            "         pytest.param(5, marks=None), 6)\n"
                            "@pytest.mark.a\n"
                            "@pytest.mark.parametrize('x', [*CASES, pytest.param(7, marks=[pytest.mark.e])])\n"
                            "def test_x(x): pass\n"
                            "pytestmark = pytest.mark.parametrize('y', [pytest.param(0, marks=pytest.mark.f)])\n") == (
        "test_x@8 marks=a params=b,c,d,e,f dtypes=-\n")


def test_dtypes_from_names_sums_and_splices(tmp_path):
    assert render(tmp_path, "import torch\n"
                            "F = [torch.float16, torch.float32]\n"
                            "I = (torch.int8,)\n"
                            "ALL = F + [torch.bfloat16]\n"
                            "ALL += [torch.float64]\n"
                            "@pytest.mark.parametrize('dtype', ALL)\n"
                            "def test_names(dtype): pass\n"
                            "@pytest.mark.parametrize('dtype', [*I, *F[1:]])\n"
                            "def test_splice(dtype): pass\n"
                            "@pytest.mark.parametrize('shape, dtype', [(s, d) for s in [(1,), (2,)] for d in I])\n"
                            "def test_product(shape, dtype): pass\n") == (
        "test_names@7 marks= params= dtypes=bfloat16;float16;float32;float64\n"
        "test_splice@9 marks= params= dtypes=float32;int8\n"
        "test_product@11 marks= params= dtypes=int8\n")


def test_names_bound_under_a_condition_or_changed_are_unknown_with_a_warning(tmp_path):
    assert render(tmp_path, "import os, pytest\n"
                            "if os.environ.get('X'):\n"
                            "    OPS = ['a']\n"
                            f"    @pytest.mark.parametrize('o', [{CASE} for o in OPS])\n"
                            "    def test_inside(o): pass\n"
                            "else:\n"
                            "    OPS = ['b']\n"
                            f"@pytest.mark.parametrize('o', [{CASE} for o in OPS])\n"
                            "def test_after(o): pass\n"
                            "LATER = ['c']\n"
                            "ALIAS = LATER\n"
                            "ALIAS.append('d')\n"
                            f"@pytest.mark.parametrize('o', [{CASE} for o in LATER])\n"
                            "def test_changed(o): pass\n"
                            "@pytest.mark.parametrize('o', make_cases())\n"
                            "def test_call(o): pass\n"
                            f"@pytest.mark.parametrize('o', [{CASE} for o in OPS "
                            "if os.environ.get(o)])\n"
                            "def test_condition(o): pass\n"
                            "@pytest.mark.parametrize('o', [1, 2] if os.environ.get('Y') else [3])\n"
                            "def test_no_marks_no_warning(o): pass\n") == (
        "test_inside@5 marks= params=a dtypes=-\n"
        "test_after@9 marks= params= dtypes=-\n"
        "test_changed@14 marks= params= dtypes=-\n"
        "test_call@16 marks= params= dtypes=-\n"
        "test_condition@18 marks= params= dtypes=-\n"
        "test_no_marks_no_warning@20 marks= params= dtypes=-\n"
        "warning 8: the values of @pytest.mark.parametrize cannot be read without running the file "
        "(`OPS` is bound inside the if at line 2); the marks they may set are left out\n"
        "warning 13: marks= of pytest.param cannot be read without running the file "
        "(`ALIAS` is changed by .append() at line 12); left out\n"
        "warning 17: the values of @pytest.mark.parametrize cannot be read without running the file "
        "(`OPS` is bound inside the if at line 2); the marks they may set are left out\n")


def test_a_call_that_may_make_marks_is_warned_about(tmp_path):
    assert render(tmp_path, "import pytest\n"
                            "def cases():\n"
                            "    return [pytest.param(1, marks=pytest.mark.hidden)]\n"
                            "@pytest.mark.parametrize('o', cases())\n"
                            "def test_local(o): pass\n"
                            "@pytest.mark.parametrize('o', [pytest.param(1, marks=pytest.mark.skipif(x, reason='r')) "
                            "for x in unknown()])\n"
                            "def test_own_marks_only(o): pass\n"
                            "@getattr(pytest.mark, NAME)\n"
                            "def test_decorator(): pass\n") == (
        "test_local@5 marks= params= dtypes=-\n"
        "test_own_marks_only@7 marks= params= dtypes=-\n"
        "test_decorator@9 marks= params= dtypes=-\n"
        "warning 4: the values of @pytest.mark.parametrize cannot be read without running the file "
        "(a call to cases() at line 4); the marks they may set are left out\n"
        "warning 8: decorator @getattr(pytest.mark, NAME) cannot be read without running the file "
        "(`NAME` is not bound in the module); the marks it may set are left out\n")


def test_helpers_and_outside_objects_that_may_mark_are_warned_about(tmp_path):
    assert render(tmp_path, "import pytest, torch\n"
                            "from outside import needs_gpu, marks as M\n"
                            "def op(name):\n"
                            "    return getattr(pytest.mark, name)\n"
                            "@op('abs')\n"
                            "def test_helper(): pass\n"
                            "@pytest.mark.parametrize('x', [pytest.param(1, marks=[needs_gpu, pytest.mark.a])])\n"
                            "def test_outside(x): pass\n"
                            "pytestmark = [M.abs, pytest.mark.m]\n"
                            "@torch.no_grad()\n"
                            "def test_plain(): pass\n") == (
        "test_helper@6 marks=m params= dtypes=-\n"
        "test_outside@8 marks=m params=a dtypes=-\n"
        "test_plain@11 marks=m params= dtypes=-\n"
        "warning 5: decorator @op('abs') cannot be read without running the file (a call to op() at line 5); "
        "the marks it may set are left out\n"
        "warning 7: a mark of pytest.param cannot be read without running the file "
        "(`outside.needs_gpu` comes from outside the corpus); left out\n"
        "warning 9: an entry of pytestmark cannot be read without running the file "
        "(`outside.marks.abs` comes from outside the corpus); left out\n")


def test_a_name_a_function_declares_global_is_unknown(tmp_path):
    assert render(tmp_path, "import torch\n"
                            "QUICK = False\n"
                            "def pytest_configure(config):\n"
                            "    global QUICK\n"
                            "    QUICK = True\n"
                            "@pytest.mark.parametrize('dtype', [torch.float16] if QUICK else [torch.float32])\n"
                            "def test_x(dtype): pass\n") == "test_x@7 marks= params= dtypes=*\n"


def test_names_imported_from_the_corpus_are_read_from_their_files(tmp_path):
    files = {
        "__init__.py": "",
        "consts.py": "import torch\nFLOAT = [torch.float16, torch.bfloat16]\nfrom .more import EXTRA\n",
        "more.py": "import torch\nEXTRA = (torch.int8,)\nCOND = [torch.int8] if X else []\n",
        "pkg/__init__.py": "",
        "pkg/table.py": "OPS = ['a', 'b']\n",
        "cycle.py": "from .t import NAMES\n",
    }
    assert render(tmp_path, "import pytest\n"
                            "from . import consts as c\n"
                            "from .consts import FLOAT, EXTRA\n"
                            "from .pkg.table import OPS\n"
                            "import pkg.table\n"
                            "from .more import COND\n"
                            "from .missing import GONE\n"
                            "from .cycle import NAMES\n"
                            "@pytest.mark.parametrize('dtype', c.FLOAT + list_of_nothing)\n"
                            "def test_unknown_part(dtype): pass\n"
                            "@pytest.mark.parametrize('dtype', FLOAT + list(EXTRA))\n"
                            "def test_call(dtype): pass\n"
                            "@pytest.mark.parametrize('dtype', c.FLOAT + [*EXTRA])\n"
                            "def test_imported(dtype): pass\n"
                            f"@pytest.mark.parametrize('o', [{CASE} for o in OPS + pkg.table.OPS])\n"
                            "def test_ops(o): pass\n"
                            "@pytest.mark.parametrize('dtype', COND)\n"
                            "def test_cond(dtype): pass\n"
                            f"@pytest.mark.parametrize('o', [{CASE} for o in GONE])\n"
                            "def test_gone(o): pass\n"
                            f"@pytest.mark.parametrize('o', [{CASE} for o in NAMES])\n"
                            "def test_cycle(o): pass\n", files) == (
        "test_unknown_part@10 marks= params= dtypes=*\n"
        "test_call@12 marks= params= dtypes=*\n"
        "test_imported@14 marks= params= dtypes=bfloat16;float16;int8\n"
        "test_ops@16 marks= params=a,b dtypes=-\n"
        "test_cond@18 marks= params= dtypes=*\n"
        "test_gone@20 marks= params= dtypes=-\n"
        "test_cycle@22 marks= params= dtypes=-\n"
        "warning 19: the values of @pytest.mark.parametrize cannot be read without running the file "
        "(`.missing` is not a file of the corpus); the marks they may set are left out\n"
        "warning 21: the values of @pytest.mark.parametrize cannot be read without running the file "
        "(`t.py` is imported while it is being read (an import cycle)); the marks they may set are left out\n")


def test_a_link_out_of_the_corpus_is_not_followed(tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("OPS = ['secret']\n")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "__init__.py").write_text("")
    (corpus / "helper.py").symlink_to(outside)
    assert render(corpus, f"from .helper import OPS\n@pytest.mark.parametrize('o', [{CASE} for o in OPS])\n"
                          "def test_x(o): pass\n") == (
        "test_x@3 marks= params= dtypes=-\n"
        "warning 2: the values of @pytest.mark.parametrize cannot be read without running the file "
        "(`.helper` is not a file of the corpus); the marks they may set are left out\n")


def test_pytestmark_as_the_module_ends(tmp_path):
    assert render(tmp_path, "import os, pytest\n"
                            "pytestmark = [pytest.mark.a]\n"
                            "pytestmark += [pytest.mark.b]\n"
                            "def test_x(): pass\n"
                            "class TestC:\n"
                            "    if os.environ.get('X'):\n"
                            "        pytestmark = pytest.mark.c\n"
                            "    def test_y(self): pass\n") == (
        "test_x@4 marks=a,b params= dtypes=-\n"
        "TestC::test_y@8 marks=a,b params= dtypes=-\n"
        "warning 6: pytestmark cannot be read without running the file "
        "(`pytestmark` is bound inside the if at line 6); the marks it may set are left out\n")


def test_a_test_defined_twice_in_a_helper_module_does_not_stop_its_import(tmp_path):
    assert render(tmp_path, "from .helper import D\n"
                            "@pytest.mark.parametrize('dtype', D)\n"
                            "def test_x(dtype): pass\n",
                  {"helper.py": "import torch\nD = [torch.int8]\ndef test_h(): pass\ndef test_h(): pass\n"}) == (
        "test_x@3 marks= params= dtypes=int8\n")


def test_hostile_input_stays_bounded(tmp_path):
    src = ("import pytest\n"
           "A = [1] * 3\n"
           "B = list(range(1000))\n"
           "L = ['x'] + ['y'] + ['z'] + ['w'] + ['v'] + ['u'] + ['t'] + ['s'] + ['r'] + ['q']\n"
           "BIG = [(a, b, c) for a in L for b in L for c in L]\n"
           "HUGE = [1 for a in BIG for b in BIG]\n"
           "DEEP = " + "[" * 150 + "]" * 150 + "\n"
           "S = 'ab'\n" + "S = S + S\n" * 30 +
           "X = " + " + ".join(["[pytest.mark.x]"] * 300) + "\n"
           "@pytest.mark.parametrize('o', [pytest.param(1, marks=X)])\n"
           "def test_x(o): pass\n")
    got = render(tmp_path, src)
    assert got.startswith("test_x@41 marks= params= dtypes=-\nwarning 40: marks= of pytest.param cannot be read")
    assert "nested more than 100 deep" in got


# -- refusals ---------------------------------------------------------------

@pytest.mark.parametrize("src, want", [
    ("x = (1, 2]\n", "error 1: closing parenthesis ']' does not match opening parenthesis '('"),
    ("x = 1\n)\n", "error 2: unmatched ')'"),
    ("x = [\n\n", "error 1: '[' was never closed"),
    ("x = 1\ny = '\xc3\x28'\n", "error 2: not UTF-8 (byte 0xc3)"),
    ("s = '\xc0\xaf'\n", "error 1: not UTF-8 (byte 0xc0)"),
    ("\r\r\ns = '\xed\xa0\x80'\n", "error 3: not UTF-8 (byte 0xed)"),
    ("x = '\xf4\x90\x80\x80'\n", "error 1: not UTF-8 (byte 0xf4)"),
    ("# -*- coding: latin-1 -*-\nx = 'caf\xe9'\n", "error 2: not UTF-8 (byte 0xe9)"),
    ("a = 1\n\0\n", "error 2: a NUL byte (Python source cannot hold one)"),
    ("def (x): pass\n", "error 1: invalid syntax"),
    ("x = 1 \\ y\n", "error 1: unexpected character after line continuation character"),
    ("y = 'a\\\nb\n", "error 1: unterminated string literal (detected at line 2)"),
    ("x = 1\ny = '''a\\'''\n", "error 2: unterminated triple-quoted string literal (detected at line 2)"),
    ("if x:\npass\n", "error 2: expected an indented block after 'if' statement on line 1"),
    ("@pytest.mark.parametrize('dtype', [\n    torch.float16])\nclass_ = 1\n",
     "error 1: decorator @pytest.mark.parametrize('dtype', [... is not followed by a def or class "
     "(line 3 is not one)"),
    ("@pytest.mark.a\n@pytest.mark.b\n",
     "error 1: decorator @pytest.mark.a is not followed by a def or class (the file ends)"),
    ("@pytest.mark.a  # c\n\n# c\nx = 1\n",
     "error 1: decorator @pytest.mark.a is not followed by a def or class (line 4 is not one)"),
    ("@pytest.mark.a_mark_with_a_very_long_name_that_goes_on_and_on_and_on_and_on\n",
     "error 1: decorator @pytest.mark.a_mark_with_a_very_long_name_that_goes_on_and_o... is not followed by a "
     "def or class (the file ends)"),
    ("@pytest.mark.\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
     "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\n",
     "error 1: decorator @pytest.mark.\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
     "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9... is not followed by a def or class "
     "(the file ends)"),
    ("class TestA:\n  def test_a(self): pass\n  async def test_a(self): pass\n",
     "error 3: test 'TestA::test_a' is defined twice, at lines 2 and 3"),
    ("x = " + "[" * 300 + "]" * 300 + "\n", "error 1: too many nested parentheses"),
    ("x = 1\ny = " + "-" * 200000 + "1\n", "error 2: nested too deeply for Python's parser"),
])
def test_refusals(tmp_path, src, want):
    data = src.encode("latin-1") if "\xc3" in src or "\xe9'" in src or "\xc0" in src or "\xed" in src or \
        "\xf4" in src else src.encode()
    assert render(tmp_path, data) == want + "\n"


def test_a_file_that_cannot_be_opened_is_refused_without_a_line(tmp_path):
    (tmp_path / "t.py").mkdir()
    assert inventory.read_corpus(str(tmp_path), ["t.py"]) == {
        "error": {"file": 0, "line": None, "message": "cannot read: Is a directory"}}


def test_the_first_file_refused_stops_the_reading(tmp_path):
    (tmp_path / "a.py").write_text("def test_a(): pass\n")
    (tmp_path / "b.py").write_text("x = (\n")
    (tmp_path / "c.py").write_text("x = [\n")
    assert inventory.read_corpus(str(tmp_path), ["a.py", "b.py", "c.py"]) == {
        "error": {"file": 1, "line": 1, "message": "'(' was never closed"}}


def test_the_command_writes_its_result_file_and_imports_nothing_of_the_corpus(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "tests").mkdir(parents=True)
    (corpus / "tests" / "test_x.py").write_text("import json\nraise SystemExit('run!')\n"
                                                "@pytest.mark.x\ndef test_x(): pass\n")
    (corpus / "json.py").write_text("raise SystemExit('imported!')\n")
    result = tmp_path / "out.json"
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": PYTHON_DIR, "PYTHONSAFEPATH": "1",
           "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, "-m", "caliber_pytest.inventory", str(corpus), str(result),
                          "tests/test_x.py"], cwd=corpus, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert json.loads(result.read_text()) == {"files": [{"tests": [
        {"id": "test_x", "line": 4, "marks": ["x"], "param_marks": [], "dtype": "none", "dtypes": []}],
        "warnings": []}]}
    bad = subprocess.run([sys.executable, "-m", "caliber_pytest.inventory", str(corpus)], env=env,
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "usage:" in bad.stderr
