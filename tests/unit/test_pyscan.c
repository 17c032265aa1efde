/* test_pyscan.c: the Python scanner behind `caliber inventory` on the
 * corners of the language a grep would get wrong (strings of every kind,
 * f-strings nested the Python 3.12 way, line endings, continuations,
 * nesting of defs and classes) and on every form of marks and dtypes it
 * reads; then its refusals, message for message. Whole corpus trees are
 * covered by tests/cli/t1000-inventory.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "inventory_scan.h"

/* One line per test: "id marks=a,b dtypes=x;y" (dtypes '*' when not
 * literal, '-' without a dtype parameter), or "error: <message>". */
static char *render(const char *src, size_t len)
{
	struct cb_buf out = CB_BUF_INIT;
	struct cb_py_file f;
	struct cb_err err;
	size_t i, k;

	if (cb_pyscan(src, len, "t.py", &f, &err) < 0) {
		cb_buf_addf(&out, "error: %s\n", err.msg);
		return cb_buf_detach(&out, NULL);
	}
	for (i = 0; i < f.ntests; i++) {
		const struct cb_py_test *t = &f.tests[i];
		cb_buf_addf(&out, "%s@%zu marks=", t->id, t->line);
		for (k = 0; k < t->nmarks; k++)
			cb_buf_addf(&out, "%s%s", k ? "," : "", t->marks[k]);
		cb_buf_adds(&out, " dtypes=");
		if (t->dtype_kind == CB_PY_DTYPES_NONE)
			cb_buf_adds(&out, "-");
		else if (t->dtype_kind == CB_PY_DTYPES_ANY)
			cb_buf_adds(&out, "*");
		for (k = 0; k < t->ndtypes; k++)
			cb_buf_addf(&out, "%s%s", k ? ";" : "", t->dtypes[k]);
		cb_buf_adds(&out, "\n");
	}
	cb_py_file_free(&f);
	return cb_buf_detach(&out, NULL);
}

static void expect(const char *src, const char *want)
{
	char *got = render(src, strlen(src));

	assert_string_equal(got, want);
	free(got);
}

static void strings_hide_marks_and_defs(void **state)
{
	(void)state;
	expect("s = '''\n@pytest.mark.a\ndef test_no():\n'''\n"
	       "t = r\"\\\"\" ; u = b'\\x00' 'def test_no2():'\n"
	       "# @pytest.mark.b\n"
	       "@pytest.mark.c  # a comment after the decorator\n\n"
	       "# a comment between\n"
	       "def test_yes(): pass\n",
	       "test_yes@10 marks=c dtypes=-\n");
}

static void fstrings_nest_quotes_as_python_3_12(void **state)
{
	(void)state;
	expect("x = f\"{d[\"k\"]} {f\"{1:>{w}}\"} {x!r:'^10} {{literal}} {'}'}\"\n"
	       "y = rf'\\{a}' F\"\"\"\n{\n  b[\"\"\"]\"\"\"]\n}\"\"\"\n"
	       "@pytest.mark.a\ndef test_after(): pass\n",
	       "test_after@7 marks=a dtypes=-\n");
}

static void line_endings_bom_tabs_and_continuations(void **state)
{
	(void)state;
	expect("\xef\xbb\xbfimport pytest\r\n"
	       "class TestA:\r"
	       "\t@pytest.mark.a\r\n"
	       "\t@pytest.mark.parametrize(\"dtype\",\r\n"
	       "\t\t[torch.float16,  # half\r\n"
	       "\t\t torch.bfloat16])\r\n"
	       "\tdef test_x(self, \\\r\n"
	       "\t           dtype): pass\r\n"
	       "x = 1 + \\\n"
	       "    2; y = 3\n"
	       "\f@pytest.mark.b\n"
	       "def test_y(): pass",
	       "TestA::test_x@7 marks=a dtypes=bfloat16;float16\n"
	       "test_y@12 marks=b dtypes=-\n");
}

static void nesting_decides_what_pytest_collects(void **state)
{
	(void)state;
	expect("import pytest\n"
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
	       "def testing_prefix(): pass\n",
	       "test_in_if@4 marks=a dtypes=-\n"
	       "test_other@6 marks= dtypes=-\n"
	       "TestOuter::TestInner::test_deep@16 marks=b dtypes=-\n"
	       "TestOuter::test_outer@19 marks= dtypes=-\n"
	       "testing_prefix@20 marks= dtypes=-\n");
}

static void marks_of_classes_and_pytestmark_and_pytests_own(void **state)
{
	(void)state;
	expect("import pytest\n"
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
	       "@pytest.mark.gr\xc3\xb6\xc3\x9f" "e\n"
	       "@pytest.mark.with_args(1)\n"
	       "@pytest.mark.a.b\n"
	       "@mark.plain\n"
	       "def test_b(): pass\n",
	       "TestC::test_a@11 marks=own,c,cm,m dtypes=int16;int8\n"
	       "test_b@21 marks=m dtypes=int8\n");
}

static void dtypes_literal_and_not(void **state)
{
	(void)state;
	expect("@pytest.mark.parametrize('dtype', [torch.half, torch.cfloat, torch.float8_e4m3fn])\n"
	       "def test_aliases(dtype): pass\n"
	       "@pytest.mark.parametrize(['shape', 'dtype'], [((1,), torch.bool), [(2,), torch.uint8]])\n"
	       "def test_names_list(shape, dtype): pass\n"
	       "@pytest.mark.parametrize(('dtype',), [(torch.int64,)])\n"
	       "def test_names_tuple(dtype): pass\n"
	       "@pytest.mark.parametrize('dtype,', [torch.int32])\n"
	       "def test_trailing_comma(dtype): pass\n"
	       "@pytest.mark.parametrize('dtype', [pytest.param(torch.float16, marks=pytest.mark.skip, id='h')])\n"
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
	       "@pytest.mark.parametrize('dtype, x', [pytest.param(torch.float16, 1), pytest.param(torch.float32)])\n"
	       "def test_short_param(dtype, x): pass\n"
	       "@pytest.mark.parametrize('dtype', (torch.float16,))\n"
	       "@pytest.mark.parametrize('dtype', DTYPES)\n"
	       "def test_any_wins(dtype): pass\n",
	       "test_aliases@2 marks= dtypes=complex64;float16;float8_e4m3fn\n"
	       "test_names_list@4 marks= dtypes=bool;uint8\n"
	       "test_names_tuple@6 marks= dtypes=int64\n"
	       "test_trailing_comma@8 marks= dtypes=int32\n"
	       "test_param@11 marks= dtypes=float16\n"
	       "test_empty@14 marks= dtypes=\n"
	       "test_sum@16 marks= dtypes=*\n"
	       "test_comprehension@18 marks= dtypes=*\n"
	       "test_unknown@20 marks= dtypes=*\n"
	       "test_star@22 marks= dtypes=*\n"
	       "test_names_variable@24 marks= dtypes=*\n"
	       "test_short_param@26 marks= dtypes=*\n"
	       "test_any_wins@29 marks= dtypes=*\n");
}

/* Brackets nested past the parser's depth limit read as "not literal"
 * instead of recursing without bound. */
static void deep_brackets_read_as_not_literal(void **state)
{
	struct cb_buf b = CB_BUF_INIT;
	char *src, *got;
	size_t i, len;

	(void)state;
	cb_buf_adds(&b, "@pytest.mark.parametrize('dtype', ");
	for (i = 0; i < 1000; i++)
		cb_buf_adds(&b, "[");
	for (i = 0; i < 1000; i++)
		cb_buf_adds(&b, "]");
	cb_buf_adds(&b, ")\ndef test_deep(dtype): pass\n");
	src = cb_buf_detach(&b, &len);
	got = render(src, len);
	assert_string_equal(got, "test_deep@2 marks= dtypes=*\n");
	free(got);
	free(src);
}

static void every_dtype_name_comes_out_sorted(void **state)
{
	(void)state;
	expect("@pytest.mark.parametrize('dtype', [torch.uint8, torch.uint64, torch.uint32, torch.uint16,\n"
	       "  torch.quint8, torch.quint4x2, torch.quint2x4, torch.qint8, torch.qint32, torch.int8,\n"
	       "  torch.long, torch.int, torch.short, torch.float8_e8m0fnu, torch.float8_e5m2fnuz,\n"
	       "  torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e4m3fn, torch.double,\n"
	       "  torch.float4_e2m1fn_x2, torch.float, torch.half, torch.complex64, torch.chalf,\n"
	       "  torch.cdouble, torch.bool, torch.bfloat16])\n"
	       "def test_all(dtype): pass\n",
	       "test_all@7 marks= dtypes=bfloat16;bool;complex128;complex32;complex64;float16;float32;"
	       "float4_e2m1fn_x2;float64;float8_e4m3fn;float8_e4m3fnuz;float8_e5m2;float8_e5m2fnuz;"
	       "float8_e8m0fnu;int16;int32;int64;int8;qint32;qint8;quint2x4;quint4x2;quint8;uint16;"
	       "uint32;uint64;uint8\n");
}

static void refusals(void **state)
{
	static const struct {
		const char *src, *want;
	} cases[] = {
		{ "x = (1, 2]\n", "error: t.py:1: ']' does not match '(' opened at line 1\n" },
		{ "x = 1\n)\n", "error: t.py:2: unmatched ')'\n" },
		{ "x = [\n\n", "error: t.py:1: '[' is never closed: the file ends first\n" },
		{ "a = $b\n", "error: t.py:1: invalid character '$'\n" },
		{ "a = 1\x01\n", "error: t.py:1: invalid character 0x01\n" },
		{ "x = 1\ny = '\xc3\x28'\n", "error: t.py:2: not UTF-8 (byte 0xc3)\n" },
		{ "s = '\xc0\xaf'\n", "error: t.py:1: not UTF-8 (byte 0xc0)\n" },
		{ "\r\r\ns = '\xed\xa0\x80'\n", "error: t.py:3: not UTF-8 (byte 0xed)\n" },
		{ "x = '\xf4\x90\x80\x80'\n", "error: t.py:1: not UTF-8 (byte 0xf4)\n" },
		{ "def (x): pass\n", "error: t.py:1: 'def' is not followed by a name\n" },
		{ "class :\n", "error: t.py:1: 'class' is not followed by a name\n" },
		{ "x = 1 \\", "error: t.py:1: a backslash outside a string must end its line\n" },
		{ "x = f'{a:\n'\n", "error: t.py:1: unterminated string: the line ends inside a format spec\n" },
		{ "x = f'{a\n", "error: t.py:1: unterminated string: the file ends before its closing quote\n" },
		{ "x = 1\ny = '''a\\'''\n", "error: t.py:2: unterminated string: the file ends before its closing quote\n" },
		{ "y = 'a\\\nb\n", "error: t.py:1: unterminated string: the line ends before its closing quote\n" },
		{ "@pytest.mark.parametrize('dtype', [\n    torch.float16])\nclass_ = 1\n",
		  "error: t.py:1: decorator @pytest.mark.parametrize('dtype', [... is not followed by a def or class (line 3 is not one)\n" },
		{ "@pytest.mark.a\n@pytest.mark.b\n",
		  "error: t.py:1: decorator @pytest.mark.a is not followed by a def or class (the file ends)\n" },
		{ "@pytest.mark.a_mark_with_a_very_long_name_that_goes_on_and_on_and_on_and_on\n",
		  "error: t.py:1: decorator @pytest.mark.a_mark_with_a_very_long_name_that_goes_on_and_o... is not followed by a def or class (the file ends)\n" },
		{ "class TestA:\n  def test_a(self): pass\n  async def test_a(self): pass\n",
		  "error: t.py:3: test 'TestA::test_a' is defined twice, at lines 2 and 3\n" },
	};
	size_t i;
	char *got;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect(cases[i].src, cases[i].want);
	got = render("a = 1\n\0\n", 8);
	assert_string_equal(got, "error: t.py:2: a NUL byte (Python source cannot hold one)\n");
	free(got);
}

/* f-strings inside f-strings recurse; past 200 levels they are refused
 * rather than allowed to exhaust the stack. */
static void deep_fstrings_are_refused(void **state)
{
	struct cb_buf b = CB_BUF_INIT;
	char *src, *got;
	size_t i, len;

	(void)state;
	cb_buf_adds(&b, "x = ");
	for (i = 0; i < 300; i++)
		cb_buf_adds(&b, "f'{");
	src = cb_buf_detach(&b, &len);
	got = render(src, len);
	assert_string_equal(got, "error: t.py:1: f-strings nested more than 200 deep\n");
	free(got);
	free(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(strings_hide_marks_and_defs),
		cmocka_unit_test(fstrings_nest_quotes_as_python_3_12),
		cmocka_unit_test(line_endings_bom_tabs_and_continuations),
		cmocka_unit_test(nesting_decides_what_pytest_collects),
		cmocka_unit_test(marks_of_classes_and_pytestmark_and_pytests_own),
		cmocka_unit_test(dtypes_literal_and_not),
		cmocka_unit_test(deep_brackets_read_as_not_literal),
		cmocka_unit_test(every_dtype_name_comes_out_sorted),
		cmocka_unit_test(refusals),
		cmocka_unit_test(deep_fstrings_are_refused),
	};

	return cmocka_run_group_tests_name("pyscan", tests, NULL, NULL);
}
