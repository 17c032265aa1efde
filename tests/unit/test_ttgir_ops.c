/* test_ttgir_ops.c: the topology ops of a module with their locations and
 * layouts (ttgir_ops.h).
 *
 * Every real fixture of tests/data/ttgir: as many ops as expected.tsv
 * counts, each with a resolved chain whose outermost frame lies in the
 * corpus (ops/caliber_ops/) and both layouts defined. Then cases written
 * by hand, one per piece of the location syntax (aliases, callsite, fused,
 * names, ranges, unknown), the generic form, inline layouts and nested
 * aliases, and what must not loop or fail: aliases that refer to each
 * other, undefined aliases, a "loc(" inside a string. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlib.h"
#include "ir/ttgir.h"
#include "ir/ttgir_ops.h"

#define OP CB_DEFAULT_TOPOLOGY_OP

/* Parse text, which must hold n ops, into m. */
static void parse(const char *text, size_t n, struct cb_ir_module *m)
{
	struct cb_err err = CB_ERR_INIT;

	assert_int_equal(cb_ir_module_parse(text, strlen(text), OP, m, &err), 0);
	assert_int_equal(m->nops, n);
	assert_int_equal(cb_ttgir_count(text, strlen(text), OP), (long long)n);
}

/* Frame k of op is file:line:col, named name (NULL: unnamed). */
static void frame_is(const struct cb_ir_op *op, size_t k, const char *file, long long line, long long col,
		     const char *name)
{
	assert_true(k < op->nframes);
	assert_string_equal(op->frames[k].file, file);
	assert_int_equal(op->frames[k].line, line);
	assert_int_equal(op->frames[k].col, col);
	if (name)
		assert_string_equal(op->frames[k].name, name);
	else
		assert_null(op->frames[k].name);
}

/* Every fixture: counts, frames in the corpus, layouts defined. */
static void real_fixtures(void **state)
{
	char *tsv = tl_slurp(tl_path("tests/data/ttgir/expected.tsv"), NULL), *line, *save = NULL;
	size_t files = 0;

	(void)state;
	for (line = strtok_r(tsv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t'), rel[512];
		struct cb_ir_module m;
		struct cb_err err = CB_ERR_INIT;
		size_t i;

		if (!tab || strcmp(line, "file\tcount") == 0)
			continue;
		*tab = '\0';
		snprintf(rel, sizeof(rel), "tests/data/ttgir/%s", line);
		assert_int_equal(cb_ir_module_load(tl_path(rel), OP, &m, &err), 0);
		assert_int_equal((long long)m.nops, atoll(tab + 1));
		for (i = 0; i < m.nops; i++) {
			const struct cb_ir_op *op = &m.ops[i];
			assert_false(op->unresolved);
			assert_true(op->nframes > 0);
			assert_non_null(strstr(op->frames[op->nframes - 1].file, "ops/caliber_ops/"));
			assert_non_null(cb_ir_op_source(op));
			assert_non_null(op->src.text);
			assert_non_null(op->dst.text);
			assert_int_equal(op->src.expanded[0], '#');
			assert_null(strstr(op->src.expanded, "#blocked"));
			assert_null(strstr(op->dst.expanded, "#mma"));
		}
		cb_ir_module_release(&m);
		files++;
	}
	assert_int_equal(files, 20);
	free(tsv);
}

/* The README's table, read again: matmul's one op, and the baseline
 * attention's four with their lines and layouts. */
static void readme_table(void **state)
{
	static const struct {
		size_t line;
		const char *result, *src, *dst;
		long long source_line;
	} want[] = {
		{ 162, "%qk_124", "#mma", "#blocked", 33 },
		{ 191, "%acc_142", "#blocked", "#mma", 40 },
		{ 195, "%acc_146", "#mma", "#blocked", 40 },
		{ 242, "%6", "#blocked", "#blocked1", 43 },
	};
	struct cb_ir_module m;
	struct cb_err err = CB_ERR_INIT;
	size_t i;

	(void)state;
	assert_int_equal(cb_ir_module_load(tl_path("tests/data/ttgir/attention_fwd__baseline.ttgir"), OP, &m, &err), 0);
	assert_int_equal(m.nops, 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(m.ops[i].line, want[i].line);
		assert_string_equal(m.ops[i].result, want[i].result);
		assert_string_equal(m.ops[i].src.text, want[i].src);
		assert_string_equal(m.ops[i].dst.text, want[i].dst);
		assert_int_equal(cb_ir_op_source(&m.ops[i])->line, want[i].source_line);
	}
	assert_int_equal(m.nlayouts, 3);
	assert_string_equal(m.layouts[0].name, "#blocked");
	assert_string_equal(m.layouts[2].name, "#mma");
	assert_string_equal(m.layouts[2].def,
			    "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>");
	cb_ir_module_release(&m);
	assert_int_equal(cb_ir_module_load(tl_path("tests/data/ttgir/matmul.ttgir"), OP, &m, &err), 0);
	assert_int_equal(m.nops, 1);
	frame_is(&m.ops[0], 0, "ops/caliber_ops/matmul.py", 61, 68, NULL);
	frame_is(&m.ops[0], 1, "ops/caliber_ops/matmul.py", 71, 75, NULL);
	assert_string_equal(m.ops[0].loc, "#loc118");
	cb_ir_module_release(&m);
}

/* A callsite of name locations through aliases: innermost first, the
 * name on the frame it wraps, and the source the innermost frame in the
 * outermost frame's file (the library frame passed over). */
static void callsite_chain(void **state)
{
	static const char text[] =
		"#loc1 = loc(\"lib/standard.py\":129:31)\n"
		"#loc2 = loc(\"k.py\":47:19)\n"
		"#loc3 = loc(\"acc\"(#loc2))\n"
		"#loc4 = loc(callsite(#loc1 at #loc3))\n"
		"#loc5 = loc(\"k.py\":70:9)\n"
		"    %acc_99 = ttg.convert_layout %a : tensor<8xf32, #blocked2> -> tensor<8xf32, #mma> loc(#loc6)\n"
		"#loc6 = loc(callsite(#loc4 at #loc5))\n";
	struct cb_ir_module m;

	(void)state;
	parse(text, 1, &m);
	assert_int_equal(m.ops[0].line, 6);
	assert_string_equal(m.ops[0].result, "%acc_99");
	assert_int_equal(m.ops[0].nframes, 3);
	frame_is(&m.ops[0], 0, "lib/standard.py", 129, 31, NULL);
	frame_is(&m.ops[0], 1, "k.py", 47, 19, "acc");
	frame_is(&m.ops[0], 2, "k.py", 70, 9, NULL);
	assert_ptr_equal(cb_ir_op_source(&m.ops[0]), &m.ops[0].frames[1]);
	assert_string_equal(m.ops[0].src.text, "#blocked2");
	assert_string_equal(m.ops[0].src.def, "#blocked2");   /* not defined here: as written */
	cb_ir_module_release(&m);
}

/* Locations written inline, a fused one (its first member with frames),
 * a range (its end dropped), unknown, and a name with nothing inside. */
static void inline_forms(void **state)
{
	static const char text[] =
		"%0 = ttg.convert_layout %x : tensor<4xf32, #a> -> tensor<4xf32, #b> loc(\"f.py\":1:2)\n"
		"%1 = ttg.convert_layout %x : tensor<4xf32, #a> -> tensor<4xf32, #b> loc(fused<\"x\">[unknown, \"g.py\":3:4, \"h.py\":5:6])\n"
		"%2 = ttg.convert_layout %x : tensor<4xf32, #a> -> tensor<4xf32, #b> loc(\"f.py\":7:8 to 9:10)\n"
		"%3 = ttg.convert_layout %x : tensor<4xf32, #a> -> tensor<4xf32, #b> loc(unknown)\n"
		"%4 = ttg.convert_layout %x : tensor<4xf32, #a> -> tensor<4xf32, #b> loc(\"just a name\")\n"
		"%5 = ttg.convert_layout %x : tensor<4xf32, #a> -> tensor<4xf32, #b> loc(callsite(\"a\\\\b\\22c.py\":1:1 at \"d.py\":2))\n";
	struct cb_ir_module m;

	(void)state;
	parse(text, 6, &m);
	frame_is(&m.ops[0], 0, "f.py", 1, 2, NULL);
	assert_true(m.ops[1].fused);
	assert_int_equal(m.ops[1].nframes, 1);
	frame_is(&m.ops[1], 0, "g.py", 3, 4, NULL);
	assert_int_equal(m.ops[2].nframes, 1);
	frame_is(&m.ops[2], 0, "f.py", 7, 8, NULL);
	assert_int_equal(m.ops[3].nframes, 0);
	assert_false(m.ops[3].unresolved);
	assert_string_equal(m.ops[3].loc, "unknown");
	assert_int_equal(m.ops[4].nframes, 0);
	assert_false(m.ops[4].unresolved);
	assert_null(cb_ir_op_source(&m.ops[4]));
	frame_is(&m.ops[5], 0, "a\\b\"c.py", 1, 1, NULL);
	frame_is(&m.ops[5], 1, "d.py", 2, 0, NULL);
	cb_ir_module_release(&m);
}

/* The generic form, results of several values, no results, an attribute
 * dictionary, an inline layout whose alias is expanded, nested aliases. */
static void forms_and_layouts(void **state)
{
	static const char text[] =
		"#blocked = #ttg.blocked<{sizePerThread = [1]}>\n"
		"#mma = #ttg.nvidia_mma<{versionMajor = 3}>\n"
		"#dot_op = #ttg.dot_op<{opIdx = 0, parent = #mma}>\n"
		"%1 = \"ttg.convert_layout\"(%0) : (tensor<4x!tt.ptr<f16>, #blocked>) -> tensor<4x!tt.ptr<f16>, #dot_op> loc(#loc)\n"
		"%a, %b = ttg.convert_layout %x {allocation.offset = 0 : i32} : tensor<4xf32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<4xf32, #mma>\n"
		"ttg.convert_layout %x : tensor<4xf32> -> tensor<4xf32, #mma>\n"
		"#loc = loc(\"k.py\":3:0)\n";
	struct cb_ir_module m;

	(void)state;
	parse(text, 3, &m);
	assert_string_equal(m.ops[0].result, "%1");
	assert_string_equal(m.ops[0].src.text, "#blocked");
	assert_string_equal(m.ops[0].dst.text, "#dot_op");
	assert_string_equal(m.ops[0].dst.def, "#ttg.dot_op<{opIdx = 0, parent = #mma}>");
	assert_string_equal(m.ops[0].dst.expanded, "#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 3}>}>");
	frame_is(&m.ops[0], 0, "k.py", 3, 0, NULL);
	assert_string_equal(m.ops[1].result, "%a, %b");
	assert_string_equal(m.ops[1].src.text, "#ttg.slice<{dim = 1, parent = #blocked}>");
	assert_string_equal(m.ops[1].src.expanded, "#ttg.slice<{dim = 1, parent = #ttg.blocked<{sizePerThread = [1]}>}>");
	assert_null(m.ops[1].loc);
	assert_int_equal(m.ops[1].nframes, 0);
	assert_string_equal(m.ops[2].result, "");
	assert_null(m.ops[2].src.text);
	assert_string_equal(m.ops[2].dst.text, "#mma");
	/* every alias the layouts use, through #dot_op to #mma, once each */
	assert_int_equal(m.nlayouts, 3);
	assert_string_equal(m.layouts[0].name, "#blocked");
	assert_string_equal(m.layouts[1].name, "#dot_op");
	assert_string_equal(m.layouts[2].name, "#mma");
	cb_ir_module_release(&m);
}

/* What must end and be said, never loop or fail: aliases that name each
 * other or themselves, an undefined alias, a syntax error, a "loc(" in a
 * string, a layout alias that refers to itself. */
static void hostile(void **state)
{
	static const char text[] =
		"#loc1 = loc(#loc2)\n"
		"#loc2 = loc(callsite(#loc1 at #loc1))\n"
		"#self = #ttg.blocked<{parent = #self}>\n"
		"%0 = ttg.convert_layout %x : tensor<4xf32, #self> -> tensor<4xf32, #self> loc(#loc1)\n"
		"%1 = ttg.convert_layout %x : tensor<4xf32, #a> -> tensor<4xf32, #b> loc(#nowhere)\n"
		"%2 = ttg.convert_layout %x : tensor<4xf32, #a> -> tensor<4xf32, #b> loc(callsite(\"a.py\":1:1 at))\n"
		"%3 = ttg.convert_layout %x {note = \"loc(\\\"x.py\\\":1:1)\"} : tensor<4xf32, #a> -> tensor<4xf32, #b>\n";
	struct cb_ir_module m;
	size_t i;

	(void)state;
	parse(text, 4, &m);
	for (i = 0; i < 3; i++) {
		assert_true(m.ops[i].unresolved);
		assert_non_null(m.ops[i].loc);
	}
	assert_string_equal(m.ops[1].loc, "#nowhere");
	assert_null(m.ops[3].loc);
	assert_int_equal(m.ops[3].nframes, 0);
	assert_non_null(strstr(m.ops[0].src.expanded, "#ttg.blocked"));
	assert_int_equal(m.nlayouts, 1);
	cb_ir_module_release(&m);
}

/* Alias lookup by counted name: names that prefix one another (#loc1,
 * #loc12, #loc) each find their own definition, and of two definitions of
 * one name the first wins, as MLIR's parser keeps it. */
static void alias_names(void **state)
{
	static const char text[] =
		"#loc12 = loc(\"b.py\":12:2)\n"
		"#loc1 = loc(\"a.py\":1:1)\n"
		"#loc = loc(\"c.py\":3:3)\n"
		"#loc1 = loc(\"z.py\":9:9)\n"
		"%0 = ttg.convert_layout %x : tensor<4xf32, #a> -> tensor<4xf32, #b> loc(#loc1)\n"
		"%1 = ttg.convert_layout %x : tensor<4xf32, #a> -> tensor<4xf32, #b> loc(#loc12)\n"
		"%2 = ttg.convert_layout %x : tensor<4xf32, #a> -> tensor<4xf32, #b> loc(#loc)\n";
	static const struct {
		const char *file;
		long long line, col;
	} want[] = { { "a.py", 1, 1 }, { "b.py", 12, 2 }, { "c.py", 3, 3 } };
	struct cb_ir_module m;
	size_t i;

	(void)state;
	parse(text, 3, &m);
	for (i = 0; i < 3; i++)
		frame_is(&m.ops[i], 0, want[i].file, want[i].line, want[i].col, NULL);
	cb_ir_module_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(real_fixtures),
		cmocka_unit_test(readme_table),
		cmocka_unit_test(callsite_chain),
		cmocka_unit_test(inline_forms),
		cmocka_unit_test(forms_and_layouts),
		cmocka_unit_test(hostile),
		cmocka_unit_test(alias_names),
	};

	return cmocka_run_group_tests_name("ttgir_ops", tests, NULL, NULL);
}
