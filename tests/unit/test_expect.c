/* test_expect.c: what a task is expected to take (expect.h), in the order
 * the deadline planner asks: the same task in a history run (its task.json
 * wall_ns, else its cells'), else the tasks measured so far scaled by
 * budget, else nothing. The history is the sealed run root built from
 * tests/golden/prepare/history/spec.json, whose wall times are fixtures:
 * softmax_rows 754321 ms and layer_norm_fwd 95500 ms by task.json,
 * matmul_bias_gelu by its cells only (41 + 30 + 29 s in each of 3 cells),
 * gelu_bwd not in it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "account/expect.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "runroot.h"
#include "seal/seal.h"
#include "tlib.h"

static char *build_history(void)
{
	static int n;
	char name[32];
	char *root;
	struct cb_err err;

	snprintf(name, sizeof(name), "history%d", n++);
	root = cb_path_join(tl_tmpdir(), name);
	if (rr_build(tl_path("tests/golden/prepare/history/spec.json"), root, &err) < 0)
		fail_msg("rr_build: %s", err.msg);
	return root;
}

/* The entry of task id in the history's own frozen matrix (a copy). */
static json_t *matrix_task(const struct cb_history *h, const char *id)
{
	json_t *t;
	size_t i;

	json_array_foreach(json_object_get(h->matrix, "tasks"), i, t)
		if (strcmp(cb_json_str(t, "id"), id) == 0)
			return json_deep_copy(t);
	fail_msg("no task %s in the history's matrix", id);
	return NULL;
}

static void history_records_task_and_cell_times(void **state)
{
	char *root = build_history();
	struct cb_history h;
	struct cb_err err = CB_ERR_INIT;
	const struct cb_history_task *t;

	(void)state;
	assert_int_equal(cb_history_load(root, "example-rlc", "--history", &h, &err), 0);
	assert_int_equal(h.ntasks, 3);
	t = cb_history_find(&h, "softmax_rows");
	assert_non_null(t);
	assert_int_equal(t->ms, 754321);
	assert_false(t->from_cells);
	assert_int_equal(t->phase_ms[CB_PH_CORRECTNESS], 540000);
	assert_int_equal(t->phase_ms[CB_PH_ROUND_A], 180000);
	assert_int_equal(t->phase_ms[CB_PH_ROUND_B], -1);
	t = cb_history_find(&h, "matmul_bias_gelu");
	assert_non_null(t);
	assert_true(t->from_cells);
	assert_int_equal(t->ms, 300000);
	assert_int_equal(t->phase_ms[CB_PH_ROUND_B], 87000);
	assert_null(cb_history_find(&h, "gelu_bwd"));
	assert_null(cb_history_find(NULL, "softmax_rows"));
	cb_history_release(&h);
	cb_history_release(&h);
	free(root);
}

static void the_history_comes_first_then_the_run_then_nothing(void **state)
{
	char *root = build_history();
	struct cb_history h;
	struct cb_err err = CB_ERR_INIT;
	struct cb_expect_so_far none = { 0, 0, 0 }, so_far = { 0, 0, 0 };
	struct cb_expectation e;
	json_t *sm, *mm, *gelu;

	(void)state;
	assert_int_equal(cb_history_load(root, "example-rlc", "--history", &h, &err), 0);
	sm = matrix_task(&h, "softmax_rows");
	mm = matrix_task(&h, "matmul_bias_gelu");
	gelu = matrix_task(&h, "gelu_bwd");
	cb_expect_so_far_add(&so_far, 60000, 720);   /* a task of 12m00s budget took 1m00s */

	e = cb_task_expect(&h, &so_far, sm);
	assert_int_equal(e.basis, CB_EXPECT_HISTORY_TASK);
	assert_int_equal(e.ms, 754321);
	assert_null(e.history_miss);
	e = cb_task_expect(&h, &so_far, mm);
	assert_int_equal(e.basis, CB_EXPECT_HISTORY_CELLS);
	assert_int_equal(e.ms, 300000);

	/* not in the history: scaled by budget (9m00s of budget, 12m00s took 1m00s) */
	e = cb_task_expect(&h, &so_far, gelu);
	assert_int_equal(e.basis, CB_EXPECT_SO_FAR);
	assert_int_equal(e.ms, 45000);
	assert_string_equal(e.history_miss, "not in the history run");
	assert_int_equal(e.so_far.ntasks, 1);
	e = cb_task_expect(&h, &none, gelu);
	assert_int_equal(e.basis, CB_EXPECT_NONE);
	assert_int_equal(e.ms, 0);

	/* a selection narrowed since: not the work the history timed */
	json_array_append_new(json_object_get(sm, "correctness_args"), json_string("-k"));
	e = cb_task_expect(&h, &so_far, sm);
	assert_int_equal(e.basis, CB_EXPECT_SO_FAR);
	assert_int_equal(e.ms, 60000);
	assert_string_equal(e.history_miss, "the history run selected it differently");
	json_object_set_new(mm, "benchmark_args", json_pack("[s]", "benchmark/test_matmul.py::other"));
	e = cb_task_expect(&h, NULL, mm);
	assert_int_equal(e.basis, CB_EXPECT_NONE);
	assert_string_equal(e.history_miss, "the history run selected it differently");

	/* no history at all */
	e = cb_task_expect(NULL, NULL, gelu);
	assert_int_equal(e.basis, CB_EXPECT_NONE);
	assert_null(e.history_miss);
	json_decref(sm);
	json_decref(mm);
	json_decref(gelu);
	cb_history_release(&h);
	free(root);
}

static void scaling_by_budget_neither_overflows_nor_divides_by_zero(void **state)
{
	struct cb_expect_so_far s = { 0, 0, 0 };
	struct cb_expectation e;
	json_t *t = json_pack("{s:s, s:I}", "id", "big", "budget_s", (json_int_t)(LLONG_MAX / 2));

	(void)state;
	cb_expect_so_far_add(&s, 5000, 0);          /* a task with no budget: no ratio */
	e = cb_task_expect(NULL, &s, t);
	assert_int_equal(e.basis, CB_EXPECT_NONE);
	cb_expect_so_far_add(&s, LLONG_MAX / 4, 1000);
	e = cb_task_expect(NULL, &s, t);
	assert_int_equal(e.basis, CB_EXPECT_SO_FAR);
	assert_int_equal(e.ms, LLONG_MAX);
	cb_expect_so_far_add(&s, LLONG_MAX, LLONG_MAX);   /* sums are held at LLONG_MAX */
	assert_int_equal(s.wall_ms, LLONG_MAX);
	assert_int_equal(s.budget_s, LLONG_MAX);
	assert_int_equal(s.ntasks, 3);
	json_decref(t);
}

/* prepare --prescreen: the fixture history has no identity, so its three
 * timed tasks are changed (p = 1): each costs its full time, and a task it
 * does not hold the mean of the three, with and without the pre-screen. */
static void a_history_without_identical_tasks_prices_every_task_at_its_full_time(void **state)
{
	char *root = build_history();
	struct cb_history h;
	struct cb_err err = CB_ERR_INIT;
	struct cb_expectation e;
	long long whole, with;
	json_t *sm, *gelu;

	(void)state;
	assert_int_equal(cb_history_load(root, "example-rlc", "--history", &h, &err), 0);
	assert_int_equal(h.share.known, 3);
	assert_int_equal(h.share.changed, 3);
	assert_int_equal(h.share.changed_ms, 754321 + 95500 + 300000);
	assert_int_equal(h.share.screened_ms, 0);
	sm = matrix_task(&h, "softmax_rows");
	gelu = matrix_task(&h, "gelu_bwd");
	e = cb_task_expect(&h, NULL, sm);
	assert_int_equal(e.prescreen, CB_PRESCREEN_CHANGED);
	assert_int_equal(e.prescreen_ms, 754321);
	assert_int_equal(e.whole_ms, 754321);
	e = cb_task_expect(&h, NULL, gelu);
	assert_int_equal(e.basis, CB_EXPECT_NONE);
	assert_int_equal(e.prescreen, CB_PRESCREEN_SHARE);
	assert_int_equal(e.prescreen_ms, (754321 + 95500 + 300000) / 3);
	assert_int_equal(e.whole_ms, (754321 + 95500 + 300000) / 3);
	cb_history_share_estimate(&h, &whole, &with);
	assert_int_equal(with, e.prescreen_ms);
	e = cb_task_expect(NULL, NULL, gelu);
	assert_int_equal(e.prescreen, CB_PRESCREEN_NONE);
	assert_int_equal(e.prescreen_ms, 0);
	json_decref(sm);
	json_decref(gelu);
	cb_history_release(&h);
	free(root);
}

static void each_basis_says_what_it_rests_on(void **state)
{
	struct cb_expectation e = { .basis = CB_EXPECT_HISTORY_TASK };
	char out[256];

	(void)state;
	cb_expect_describe(&e, out, sizeof(out));
	assert_string_equal(out, "the time it took in the --history run (its task.json wall_ns)");
	e.basis = CB_EXPECT_HISTORY_CELLS;
	cb_expect_describe(&e, out, sizeof(out));
	assert_string_equal(out, "the time its cells took in the --history run (their cell.json wall_ns)");
	e.basis = CB_EXPECT_SO_FAR;
	e.so_far = (struct cb_expect_so_far){ 125000, 540, 2 };
	cb_expect_describe(&e, out, sizeof(out));
	assert_string_equal(out, "the 2 tasks measured so far in this run, scaled by budget (2m05s for 9m00s of budget)");
	e.so_far.ntasks = 1;
	cb_expect_describe(&e, out, sizeof(out));
	assert_string_equal(out, "the 1 task measured so far in this run, scaled by budget (2m05s for 9m00s of budget)");
	e.basis = CB_EXPECT_NONE;
	cb_expect_describe(&e, out, sizeof(out));
	assert_string_equal(out, "nothing measured yet");
	assert_string_equal(cb_expect_basis_name(CB_EXPECT_NONE), "none");
	assert_string_equal(cb_expect_basis_name(CB_EXPECT_HISTORY_TASK), "history-task");
	assert_string_equal(cb_expect_basis_name(CB_EXPECT_HISTORY_CELLS), "history-cells");
	assert_string_equal(cb_expect_basis_name(CB_EXPECT_SO_FAR), "so-far");
}

static void durations_are_written_as_run_writes_them(void **state)
{
	static const struct { long long ms; const char *text; } cases[] = {
		{ 0, "0s" }, { 999, "0s" }, { 59999, "59s" }, { 60000, "1m00s" }, { 3599999, "59m59s" },
		{ 3600000, "1h00m" }, { 20000000, "5h33m" }, { LLONG_MAX, "2562047788015h12m" },
	};
	char out[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cb_fmt_elapsed(cases[i].ms, out, sizeof(out));
		assert_string_equal(out, cases[i].text);
	}
}

static void a_history_of_another_campaign_or_unsealed_is_refused(void **state)
{
	char *root = build_history(), *sums = cb_path_join(root, "SHA256SUMS"), want[1024];
	struct cb_history h;
	struct cb_err err = CB_ERR_INIT;

	(void)state;
	assert_int_equal(cb_history_load(root, "cpu-test", "--history", &h, &err), -1);
	snprintf(want, sizeof(want),
		 "--history: %s is a run of campaign 'example-rlc', not 'cpu-test': its times are not this campaign's",
		 root);
	assert_string_equal(err.msg, want);
	assert_null(h.tasks);
	assert_int_equal(chmod(root, 0755), 0);
	assert_int_equal(unlink(sums), 0);
	assert_int_equal(cb_history_load(root, "example-rlc", "--history", &h, &err), -1);
	snprintf(want, sizeof(want), "--history: %s: not sealed (no SHA256SUMS)", root);
	assert_string_equal(err.msg, want);
	free(sums);
	free(root);
}

/* A sealed history whose campaign receipt names a task by a path, not a
 * name, is refused (by the receipt's own check): the name would lead the
 * reader out of tasks/. */
static void a_history_task_that_is_no_name_is_refused(void **state)
{
	char *root = build_history(), *camp = cb_path_join(root, "campaign.json"), *sums = cb_path_join(root, "SHA256SUMS");
	char *seal = cb_path_join(root, "SEAL"), want[1024];
	struct cb_history h;
	struct cb_err err = CB_ERR_INIT;
	json_t *j;

	(void)state;
	assert_non_null(j = cb_json_load_file(camp, &err));
	json_object_set_new(json_array_get(json_object_get(j, "tasks"), 0), "id", json_string("../../x"));
	assert_int_equal(chmod(root, 0755), 0);
	assert_int_equal(unlink(camp), 0);
	assert_int_equal(unlink(sums), 0);
	assert_int_equal(unlink(seal), 0);
	assert_int_equal(cb_json_write_atomic(camp, j, 0644, &err), 0);
	assert_int_equal(cb_seal(root, &err), 0);
	assert_int_equal(cb_history_load(root, "example-rlc", "--history", &h, &err), -1);
	snprintf(want, sizeof(want),
		 "--history: %s/campaign.json: tasks[0].id: '../../x' is not a task id ([A-Za-z0-9._-], not starting"
		 " with '.' or '-', at most 128 characters)", root);
	assert_string_equal(err.msg, want);
	json_decref(j);
	free(camp);
	free(sums);
	free(seal);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(history_records_task_and_cell_times),
		cmocka_unit_test(the_history_comes_first_then_the_run_then_nothing),
		cmocka_unit_test(scaling_by_budget_neither_overflows_nor_divides_by_zero),
		cmocka_unit_test(a_history_without_identical_tasks_prices_every_task_at_its_full_time),
		cmocka_unit_test(each_basis_says_what_it_rests_on),
		cmocka_unit_test(durations_are_written_as_run_writes_them),
		cmocka_unit_test(a_history_of_another_campaign_or_unsealed_is_refused),
		cmocka_unit_test(a_history_task_that_is_no_name_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
