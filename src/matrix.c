/* matrix.c: building, freezing and binding the task matrix. */
#include "matrix.h"

#include <string.h>

#include "jsonio.h"

static const char *const phase_names[CB_NPHASES] = { "correctness", "a", "b" };

const char *cb_phase_name(enum cb_phase p)
{
	return (unsigned)p < CB_NPHASES ? phase_names[p] : "?";
}

const char *cb_selection_name(enum cb_selection s)
{
	return s == CB_SEL_ALL ? "all" : "canary";
}

int cb_selection_parse(const char *s, enum cb_selection *out)
{
	if (strcmp(s, "canary") == 0)
		*out = CB_SEL_CANARY;
	else if (strcmp(s, "all") == 0)
		*out = CB_SEL_ALL;
	else
		return -1;
	return 0;
}

long long cb_task_budget_s(const struct cb_workload *w, int with_round_b)
{
	return w->timeout_s * CB_NROLES * (with_round_b ? 3 : 2);
}

json_t *cb_matrix_build(const struct cb_manifest *m, enum cb_selection sel, struct cb_err *err)
{
	json_t *mx = json_object(), *cells = json_array(), *tasks = json_array();
	json_t *order_a = json_array(), *order_b = json_array();
	size_t i, n = 0;
	int c;

	if (!mx || !cells || !tasks || !order_a || !order_b)
		goto oom;
	for (c = 0; c < CB_NROLES; c++) {
		json_array_append_new(cells, json_pack("{s:s, s:s}", "name", m->cells[c].name, "role",
						       cb_role_name(m->cells[c].role)));
		json_array_append_new(order_a, json_string(m->cells[c].name));
		json_array_append_new(order_b, json_string(m->cells[CB_NROLES - 1 - c].name));
	}
	for (i = 0; i < m->nworkloads; i++) {
		const struct cb_workload *w = &m->workloads[i];
		if (sel == CB_SEL_CANARY && !w->canary)
			continue;
		json_array_append_new(tasks, json_pack("{s:I, s:s, s:s, s:I, s:I, s:I, s:I}",
			"index", (json_int_t)n, "id", w->id, "op", w->op,
			"workload", (json_int_t)w->index, "timeout_s", (json_int_t)w->timeout_s,
			"budget_s", (json_int_t)cb_task_budget_s(w, 0),
			"budget_worst_s", (json_int_t)cb_task_budget_s(w, 1)));
		n++;
	}
	if (n == 0) {
		cb_fail(err, "workloads: --selection %s selects no workload%s", cb_selection_name(sel),
			sel == CB_SEL_CANARY ? " (no workload has canary: true)" : "");
		goto fail;
	}
	json_object_set_new(mx, "schema", json_string(CB_MATRIX_SCHEMA));
	json_object_set_new(mx, "campaign", json_string(m->campaign));
	json_object_set_new(mx, "selection", json_string(cb_selection_name(sel)));
	json_object_set_new(mx, "manifest_sha256", json_string(m->sha256));
	json_object_set_new(mx, "caliber", json_pack("{s:s, s:s}", "version", cb_version(),
						     "commit", cb_commit()));
	json_object_set_new(mx, "cells", cells);
	json_object_set_new(mx, "phases", json_pack("[{s:s, s:o, s:s}, {s:s, s:o, s:s}, {s:s, s:o, s:s}]",
		"name", "correctness", "order", json_deep_copy(order_a), "when", "always",
		"name", "a", "order", order_a, "when", "always",
		"name", "b", "order", order_b, "when", "candidate topology below baseline"));
	json_object_set_new(mx, "launch_floor", json_integer(m->launch_floor));
	json_object_set_new(mx, "tasks", tasks);
	return mx;
oom:
	cb_fail(err, "task matrix: out of memory");
fail:
	json_decref(order_a);
	json_decref(order_b);
	json_decref(cells);
	json_decref(tasks);
	json_decref(mx);
	return NULL;
}

json_t *cb_matrix_load_bound(const char *path, const struct cb_manifest *m, struct cb_err *err)
{
	json_t *mx = cb_json_load_file(path, err), *want = NULL, *a = NULL, *b = NULL;
	enum cb_selection sel;
	const char *s;

	if (!mx)
		return NULL;
	s = cb_json_str(mx, "schema");
	if (!s || strcmp(s, CB_MATRIX_SCHEMA) != 0) {
		cb_fail(err, "%s: schema: expected '%s'", path, CB_MATRIX_SCHEMA);
		goto fail;
	}
	s = cb_json_str(mx, "manifest_sha256");
	if (!s || strcmp(s, m->sha256) != 0) {
		cb_fail(err, "%s: manifest_sha256 %s does not match %s (sha256 %s)", path, s ? s : "(none)",
			m->path, m->sha256);
		goto fail;
	}
	s = cb_json_str(mx, "selection");
	if (!s || cb_selection_parse(s, &sel) < 0) {
		cb_fail(err, "%s: selection: expected canary or all", path);
		goto fail;
	}
	want = cb_matrix_build(m, sel, err);
	if (!want)
		goto fail;
	a = json_deep_copy(mx);
	b = want;
	json_object_del(a, "caliber");
	json_object_del(b, "caliber");
	if (!json_equal(a, b)) {
		cb_fail(err, "%s: the matrix is not the one its manifest freezes to (edited after prepare?)", path);
		goto fail;
	}
	json_decref(a);
	json_decref(b);
	return mx;
fail:
	json_decref(a);
	json_decref(b);
	json_decref(mx);
	return NULL;
}
