/* test_kernels.c: kernels.jsonl and ir/resources.tsv (kernels.h): what
 * their readers take and the exact refusals, a cell's replays pooled over
 * its sessions, the rows cells share, where a task's time moved, and the
 * scope by time. Cells are built in a temporary folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "account/kernels.h"
#include "tlib.h"

/* One kernels.jsonl line: row r0, 10 calls, a Triton kernel and another library's. */
#define LINE "{\"calls\": 10, \"error\": null, \"kernels\": [" \
	"{\"kernel\": \"_mm\", \"launches\": 10, \"max_ns\": 9100, \"min_ns\": 8900, \"total_ns\": 90000, \"variant\": \"MM\"}, " \
	"{\"kernel\": \"fill\", \"launches\": 10, \"max_ns\": 1000, \"min_ns\": 1000, \"total_ns\": 10000, \"variant\": null}], " \
	"\"launches\": 10, \"row\": \"r0\", \"span_ns\": 101000, \"timer\": \"graph\", \"wall_ns\": 123}\n"

static void reads_a_line(void **state)
{
	struct cb_kernel_file f;
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_kernel_file_parse(LINE, strlen(LINE), "k.jsonl", &f, &err), 0);
	assert_int_equal(f.n, 1);
	assert_string_equal(f.rows[0].row, "r0");
	assert_null(f.rows[0].error);
	assert_int_equal(f.rows[0].calls, 10);
	assert_int_equal(f.rows[0].span_ns, 101000);
	assert_int_equal(f.rows[0].nk, 2);
	assert_string_equal(f.rows[0].k[0].variant, "MM");
	assert_int_equal(f.rows[0].k[0].total_ns, 90000);
	assert_null(f.rows[0].k[1].variant);
	cb_kernel_file_release(&f);
}

static const struct {
	const char *text, *msg;
} kernel_refusals[] = {
	{ "{\"row\": \"r\"\n", "k.jsonl:1: '}' expected near end of file" },
	{ "{\"calls\": 1, \"error\": null, \"kernels\": [], \"span_ns\": 0}\n", "k.jsonl:1: row: expected a row name" },
	{ "{\"calls\": 1, \"kernels\": [], \"row\": \"r\", \"span_ns\": 0}\n", "k.jsonl:1: error: expected a string or null" },
	{ "{\"calls\": 0, \"error\": null, \"kernels\": [], \"row\": \"r\", \"span_ns\": 0}\n",
	  "k.jsonl:1: calls: expected an integer >= 1" },
	{ "{\"calls\": 1, \"error\": null, \"kernels\": [], \"row\": \"r\", \"span_ns\": 1.5}\n",
	  "k.jsonl:1: span_ns: expected an integer >= 0" },
	{ "{\"calls\": 1, \"error\": null, \"kernels\": {}, \"row\": \"r\", \"span_ns\": 0}\n",
	  "k.jsonl:1: kernels: expected an array" },
	{ "{\"calls\": 1, \"error\": null, \"kernels\": [{\"kernel\": \"\", \"launches\": 1, \"total_ns\": 1, \"variant\": null}], \"row\": \"r\", \"span_ns\": 0}\n",
	  "k.jsonl:1: kernels[0].kernel: expected a name" },
	{ "{\"calls\": 1, \"error\": null, \"kernels\": [{\"kernel\": \"k\", \"launches\": 1, \"total_ns\": 1, \"variant\": \"\"}], \"row\": \"r\", \"span_ns\": 0}\n",
	  "k.jsonl:1: kernels[0].variant: expected a variant name or null" },
	{ "{\"calls\": 1, \"error\": null, \"kernels\": [{\"kernel\": \"k\", \"launches\": 1, \"total_ns\": -1, \"variant\": null}], \"row\": \"r\", \"span_ns\": 0}\n",
	  "k.jsonl:1: kernels[0].total_ns: expected an integer >= 0" },
	{ LINE LINE, "k.jsonl:2: row 'r0' appears twice" },
	{ "{\"calls\": 1, \"calls\": 2}\n", "k.jsonl:1: duplicate object key near '\"calls\"'" },
};

static void refuses_bad_lines(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(kernel_refusals) / sizeof(kernel_refusals[0]); i++) {
		struct cb_kernel_file f;
		struct cb_err err = CB_ERR_INIT;
		if (cb_kernel_file_parse(kernel_refusals[i].text, strlen(kernel_refusals[i].text), "k.jsonl", &f, &err) == 0)
			fail_msg("accepted: %s", kernel_refusals[i].text);
		if (strcmp(err.msg, kernel_refusals[i].msg) != 0)
			fail_msg("%s: got '%s', expected '%s'", kernel_refusals[i].text, err.msg, kernel_refusals[i].msg);
		assert_int_equal(f.n, 0);
	}
}

#define RES_HEADER "variant\tkernel\tn_regs\tn_spills\tshared\tnum_stages\tnum_warps\n"

static void reads_resources(void **state)
{
	const char *text = RES_HEADER "MM\t_mm\t232\t0\t98304\t4\t8\nRAND\t_fill\t-\t-\t0\t1\t4\n";
	struct cb_resource_table t;
	const struct cb_resources *r;
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_resources_parse(text, strlen(text), "r.tsv", &t, &err), 0);
	assert_int_equal(t.n, 2);
	r = cb_resources_find(&t, "MM");
	assert_non_null(r);
	assert_int_equal(r->regs, 232);
	assert_int_equal(r->shared, 98304);
	assert_int_equal(r->stages, 4);
	r = cb_resources_find(&t, "RAND");
	assert_int_equal(r->regs, -1);
	assert_int_equal(r->spills, -1);
	assert_int_equal(r->warps, 4);
	assert_null(cb_resources_find(&t, "NONE"));
	cb_resource_table_release(&t);
}

static const struct {
	const char *text, *msg;
} res_refusals[] = {
	{ "", "r.tsv: empty file, expected a header" },
	{ "variant\tkernel\tregs\tn_spills\tshared\tnum_stages\tnum_warps\n",
	  "r.tsv:1: column 3 is 'regs', expected 'n_regs'" },
	{ RES_HEADER "MM\t_mm\t232\t0\t98304\t4\n", "r.tsv:2: missing column 'num_warps'" },
	{ RES_HEADER "MM\t_mm\t232\t0\t98304\t4\t8\t1\n", "r.tsv:2: extra column after 'num_warps'" },
	{ RES_HEADER "MM\t_mm\t23a\t0\t98304\t4\t8\n", "r.tsv:2: n_regs: '23a' is not a count >= 0 or '-'" },
	{ RES_HEADER "\t_mm\t232\t0\t98304\t4\t8\n", "r.tsv:2: variant is empty" },
	{ RES_HEADER "\n", "r.tsv:2: empty line" },
	{ RES_HEADER "MM\t_mm\t1\t0\t0\t1\t4\nMM\t_mm\t1\t0\t0\t1\t4\n", "r.tsv:3: variant 'MM' is listed twice" },
};

static void refuses_bad_resources(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(res_refusals) / sizeof(res_refusals[0]); i++) {
		struct cb_resource_table t;
		struct cb_err err = CB_ERR_INIT;
		if (cb_resources_parse(res_refusals[i].text, strlen(res_refusals[i].text), "r.tsv", &t, &err) == 0)
			fail_msg("accepted: %s", res_refusals[i].text);
		if (strcmp(err.msg, res_refusals[i].msg) != 0)
			fail_msg("got '%s', expected '%s'", err.msg, res_refusals[i].msg);
	}
}

/* Write text to <task>/cells/<cell>/kernels.jsonl. */
static void put_kernels(const char *task, const char *cell, const char *text)
{
	char *dir = cb_strdupf("%s/cells/%s", task, cell), *path = cb_strdupf("%s/kernels.jsonl", dir);
	struct cb_err err;

	assert_int_equal(cb_mkdir_p(dir, 0755, &err), 0);
	assert_int_equal(cb_write_atomic(path, text, strlen(text), 0644, &err), 0);
	free(dir);
	free(path);
}

/* A row line of one Triton kernel V (kernel k) of ns per call over calls, and fill of 1000 ns per call. */
static char *row_line(const char *row, long long calls, const char *k, const char *v, long long ns, const char *error)
{
	return cb_strdupf("{\"calls\": %lld, \"error\": %s%s%s, \"kernels\": [{\"kernel\": \"%s\", \"launches\": %lld, "
			  "\"total_ns\": %lld, \"variant\": \"%s\"}, {\"kernel\": \"fill\", \"launches\": %lld, "
			  "\"total_ns\": %lld, \"variant\": null}], \"row\": \"%s\", \"span_ns\": %lld}\n",
			  calls, error ? "\"" : "", error ? error : "null", error ? "\"" : "", k, calls, ns * calls, v, calls,
			  1000 * calls, row, (ns + 1000) * calls);
}

/* Sessions pooled: a row's time per call is its total over the sessions over
 * their calls; an unjoined replay is left out and counted. */
static void pools_sessions(void **state)
{
	char *task = cb_strdupf("%s/pool", tl_tmpdir());
	char *a = row_line("r0", 10, "_mm", "MM", 9000, NULL), *b = row_line("r1", 4, "_mm", "MM", 3000, NULL);
	char *c = row_line("r0", 30, "_mm", "MM", 11000, NULL), *u = row_line("r1", 4, "_mm", "MM", 1, "order");
	char *one = cb_strdupf("%s%s", a, b), *two = cb_strdupf("%s%s", c, u);
	struct cb_cell_kernels ck;
	struct cb_kernel_sums s;
	struct cb_err err;

	(void)state;
	put_kernels(task, "a-off", one);
	put_kernels(task, "a-off.s2", two);
	assert_int_equal(cb_cell_kernels_load(task, "off", &ck, &err), 0);
	assert_true(ck.present);
	assert_null(ck.error);
	assert_int_equal(ck.sessions, 2);
	assert_int_equal(ck.unjoined, 1);
	assert_int_equal(ck.n, 2);
	assert_int_equal(ck.rows[0].calls, 40);
	assert_int_equal(cb_kernel_sums_of(&ck, NULL, 0, &s, &err), 0);
	/* r0: (90000 + 330000) / 40 = 10500 of _mm; r1: 3000; fill 1000 a call in each */
	assert_int_equal(s.rows, 2);
	assert_true(cb_kernel_sums_variant(&s, "MM") == 13500);
	assert_true(s.total_ns == 15500);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.k[0].kernel, "_mm");
	assert_null(s.k[1].variant);
	cb_kernel_sums_release(&s);
	cb_cell_kernels_release(&ck);
	free(a);
	free(b);
	free(c);
	free(u);
	free(one);
	free(two);
	free(task);
}

/* A file that cannot be read leaves the cell unprofiled, saying why. */
static void unreadable_file_is_kept_as_error(void **state)
{
	char *task = cb_strdupf("%s/bad", tl_tmpdir());
	struct cb_cell_kernels ck;
	struct cb_err err;

	(void)state;
	put_kernels(task, "a-off", LINE "{\"calls\": 0}\n");
	assert_int_equal(cb_cell_kernels_load(task, "off", &ck, &err), 0);
	assert_true(ck.present);
	assert_int_equal(ck.n, 0);
	assert_non_null(ck.error);
	assert_non_null(strstr(ck.error, "/bad/cells/a-off/kernels.jsonl:2: row: expected a row name"));
	cb_cell_kernels_release(&ck);
	assert_int_equal(cb_cell_kernels_load(task, "none", &ck, &err), 0);
	assert_false(ck.present);
	assert_null(ck.error);
	cb_cell_kernels_release(&ck);
	free(task);
}

/* A topology of variants (name, kernel, count), all scoped. */
static void topo(struct cb_topology *t, const char *const *names, const char *const *kernels, const long long *counts,
		 size_t n)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->v = calloc(n, sizeof(*t->v));
	t->nv = n;
	t->joinable = 1;
	for (i = 0; i < n; i++) {
		t->v[i].name = strdup(names[i]);
		t->v[i].kernel = strdup(kernels[i]);
		t->v[i].count = counts[i];
		t->v[i].scoped = 1;
		t->v[i].launches = 10;
		t->scoped += counts[i];
	}
	t->total = t->scoped;
}

/* Where the time moved: _mm lost converts and 1000 ns a call, _add kept its
 * converts and lost 4000: 80 % in kernels whose converts did not change. */
static void time_moved_by_kernel(void **state)
{
	const char *const names[] = { "MM", "ADD" }, *const kernels[] = { "_mm", "_add" };
	const long long before[] = { 3, 0 }, after[] = { 1, 0 };
	char *task = cb_strdupf("%s/moved", tl_tmpdir());
	char *b = cb_strdupf("{\"calls\": 1, \"error\": null, \"kernels\": [{\"kernel\": \"_mm\", \"launches\": 1, \"total_ns\": 6000, \"variant\": \"MM\"}, "
			     "{\"kernel\": \"_add\", \"launches\": 1, \"total_ns\": 10000, \"variant\": \"ADD\"}], \"row\": \"r0\", \"span_ns\": 16000}\n");
	char *k = cb_strdupf("{\"calls\": 1, \"error\": null, \"kernels\": [{\"kernel\": \"_mm\", \"launches\": 1, \"total_ns\": 5000, \"variant\": \"MM\"}, "
			     "{\"kernel\": \"_add\", \"launches\": 1, \"total_ns\": 6000, \"variant\": \"ADD\"}], \"row\": \"r0\", \"span_ns\": 11000}\n");
	struct cb_cell_kernels cb, ck;
	struct cb_topology tb, tk;
	struct cb_time_moved m;
	struct cb_kernel_sums s;
	struct cb_err err;

	(void)state;
	put_kernels(task, "a-off", b);
	put_kernels(task, "a-candidate", k);
	assert_int_equal(cb_cell_kernels_load(task, "off", &cb, &err), 0);
	assert_int_equal(cb_cell_kernels_load(task, "candidate", &ck, &err), 0);
	topo(&tb, names, kernels, before, 2);
	topo(&tk, names, kernels, after, 2);
	assert_int_equal(cb_time_moved_of(&cb, &ck, &tb, &tk, &m, &err), 0);
	assert_true(m.known);
	assert_int_equal(m.rows, 1);
	assert_true(m.base_ns == 16000 && m.cand_ns == 11000);
	assert_true(m.unchanged_ns == 4000);
	assert_int_equal(m.changed, 1);
	assert_string_equal(m.top, "_add");
	cb_time_moved_release(&m);
	/* scoped by time: MM holds 6000 of 16000, 37.5 % */
	assert_int_equal(cb_kernel_sums_of(&cb, NULL, 0, &s, &err), 0);
	cb_kernels_scope_topology(&tb, &s, 375000);
	assert_true(tb.v[0].scoped && tb.v[1].scoped);
	assert_int_equal(tb.scoped, 3);
	cb_kernels_scope_topology(&tb, &s, 375001);
	assert_false(tb.v[0].scoped);
	assert_true(tb.v[1].scoped);
	assert_int_equal(tb.scoped, 0);
	assert_int_equal(tb.total, 3);
	cb_kernel_sums_release(&s);
	cb_topology_release(&tb);
	cb_topology_release(&tk);
	cb_cell_kernels_release(&cb);
	cb_cell_kernels_release(&ck);
	free(b);
	free(k);
	free(task);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_a_line),
		cmocka_unit_test(refuses_bad_lines),
		cmocka_unit_test(reads_resources),
		cmocka_unit_test(refuses_bad_resources),
		cmocka_unit_test(pools_sessions),
		cmocka_unit_test(unreadable_file_is_kept_as_error),
		cmocka_unit_test(time_moved_by_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
