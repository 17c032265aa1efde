/* matrix.c: building, freezing and binding the task matrix. */
#include "matrix.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/sha.h"

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
	const long long cells = CB_NROLES * (with_round_b ? 3 : 2);

	return w->timeout_s > LLONG_MAX / cells ? LLONG_MAX : w->timeout_s * cells;
}

long long cb_budget_add(long long a, long long b)
{
	return a > LLONG_MAX - b ? LLONG_MAX : a + b;
}

/* The pytest selection of a workload's benchmark and correctness phases;
 * the correctness options (e.g. FlagGems' --quick) come first. */
static int task_args(const struct cb_workload *w, const struct cb_inventory *inv, json_t **bench,
		     json_t **corr, struct cb_err *err)
{
	const struct cb_inv_row *row = cb_inventory_find(inv, w->op);
	const char *file = w->corr_file ? w->corr_file : row ? row->col[CB_INV_CORR_FILE] : NULL;
	size_t i;

	*bench = json_pack("[s]", w->bench_target);
	if (w->bench_mark) {
		json_array_append_new(*bench, json_string("-m"));
		json_array_append_new(*bench, json_string(w->bench_mark));
	}
	*corr = json_array();
	for (i = 0; i < w->ncorr_options; i++)
		json_array_append_new(*corr, json_string(w->corr_options[i]));
	if (w->nnode_ids) {
		for (i = 0; i < w->nnode_ids; i++)
			json_array_append_new(*corr, json_string(w->node_ids[i]));
		return 0;
	}
	if (!file)
		return cb_fail(err, "workloads[%zu].correctness: the inventory does not know op '%s'; give correctness.file or node_ids",
			       w->index, w->op);
	json_array_append_new(*corr, json_string(file));
	if (w->k) {
		json_array_append_new(*corr, json_string("-k"));
		json_array_append_new(*corr, json_string(w->k));
	} else if (row && !w->corr_file) {
		json_array_append_new(*corr, json_string("-m"));
		json_array_append_new(*corr, json_string(row->col[CB_INV_CORR_SELECTOR]));
	}
	return 0;
}

const char **cb_matrix_args(const json_t *task, const char *key)
{
	const json_t *a = json_object_get(task, key);
	size_t i, n = json_array_size(a);
	const char **v = calloc(n + 1, sizeof(*v));

	for (i = 0; v && i < n; i++)
		v[i] = json_string_value(json_array_get(a, i));
	return v;
}

/* The matrix's record of a cell's own compiler: its identity and its root
 * made absolute (lexically: the root need not exist before run), a
 * relative one against root_base; *relative is set when one was. */
static json_t *cell_compiler(const struct cb_cell *cell, int c, const char *root_base, int *relative,
			     struct cb_err *err)
{
	const struct cb_source *s = &cell->compiler;
	const char *root = cell->compiler_root;
	char *joined = NULL, *abs = NULL;
	json_t *j = NULL;

	if (root[0] != '/') {
		if (!root_base) {
			cb_fail(err, "cells[%d].compiler.root: '%s' is relative, and there is no manifest folder to resolve it against",
				c, root);
			return NULL;
		}
		*relative = 1;
		joined = cb_path_join(root_base, root);
		if (!joined) {
			cb_fail(err, "out of memory");
			return NULL;
		}
	}
	if (cb_absolute(joined ? joined : root, &abs, err) < 0) {
		cb_prefix(err, "cells[%d].compiler.root", c);
	} else if (cb_is_fs_root(abs)) {
		cb_fail(err, "cells[%d].compiler.root: '%s' is the file system's root, not a build's folder", c, root);
	} else {
		j = json_pack("{s:s, s:s}", "root", abs, s->commit ? "commit" : "tree_sha256",
			      s->commit ? s->commit : s->tree_sha256);
		if (j && s->import)
			json_object_set_new(j, "import", json_string(s->import));
		if (!j)
			cb_fail(err, "out of memory");
	}
	free(joined);
	free(abs);
	return j;
}

const char *cb_matrix_compiler_root(const json_t *mx, const char *cell)
{
	const json_t *c;
	size_t i;

	json_array_foreach(json_object_get(mx, "cells"), i, c) {
		const char *name = cb_json_str(c, "name");
		if (name && strcmp(name, cell) == 0)
			return cb_json_str(json_object_get(c, "compiler"), "root");
	}
	return NULL;
}

json_t *cb_matrix_build(const struct cb_manifest *m, const struct cb_inventory *inv,
			enum cb_selection sel, const char *root_base, struct cb_err *err)
{
	json_t *mx = json_object(), *cells = json_array(), *tasks = json_array();
	json_t *order_a = json_array(), *order_b = json_array();
	size_t i, n = 0;
	int c, relative = 0;

	if (!mx || !cells || !tasks || !order_a || !order_b)
		goto oom;
	for (c = 0; c < CB_NROLES; c++) {
		json_t *cell = json_pack("{s:s, s:s}", "name", m->cells[c].name, "role", cb_role_name(m->cells[c].role));

		json_array_append_new(cells, cell);
		if (m->cells[c].compiler_root) {
			json_t *comp = cell_compiler(&m->cells[c], c, root_base, &relative, err);
			if (!comp)
				goto fail;
			json_object_set_new(cell, "compiler", comp);
		}
		json_array_append_new(order_a, json_string(m->cells[c].name));
		json_array_append_new(order_b, json_string(m->cells[CB_NROLES - 1 - c].name));
	}
	for (i = 0; i < m->nworkloads; i++) {
		const struct cb_workload *w = &m->workloads[i];
		json_t *bench, *corr;

		if (sel == CB_SEL_CANARY && !w->canary)
			continue;
		if (task_args(w, inv, &bench, &corr, err) < 0) {
			json_decref(bench);
			json_decref(corr);
			goto fail;
		}
		json_array_append_new(tasks, json_pack("{s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:o}",
			"index", (json_int_t)n, "id", w->id, "op", w->op,
			"workload", (json_int_t)w->index, "timeout_s", (json_int_t)w->timeout_s,
			"budget_s", (json_int_t)cb_task_budget_s(w, 0),
			"budget_worst_s", (json_int_t)cb_task_budget_s(w, 1),
			"benchmark_args", bench, "correctness_args", corr));
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
	json_object_set_new(mx, "inventory_sha256", json_string(inv->sha256));
	json_object_set_new(mx, "caliber", json_pack("{s:s, s:s}", "version", cb_version(),
						     "commit", cb_commit()));
	json_object_set_new(mx, "cells", cells);
	json_object_set_new(mx, "phases", json_pack("[{s:s, s:o, s:s}, {s:s, s:o, s:s}, {s:s, s:o, s:s}]",
		"name", "correctness", "order", json_deep_copy(order_a), "when", "always",
		"name", "a", "order", order_a, "when", "always",
		"name", "b", "order", order_b, "when", "candidate topology below baseline"));
	json_object_set_new(mx, "launch_floor", json_integer(m->launch_floor));
	if (relative)
		json_object_set_new(mx, "compiler_root_base", json_string(root_base));
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
	struct cb_inventory inv;
	enum cb_selection sel;
	const char *s, *slash = strrchr(path, '/');
	char *ipath = slash ? cb_strdupf("%.*s/%s", (int)(slash - path), path, CB_FROZEN_INVENTORY)
			    : strdup(CB_FROZEN_INVENTORY);
	char *ibuf = NULL;
	size_t ilen;

	memset(&inv, 0, sizeof(inv));
	if (!mx || !ipath)
		goto fail;
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
	if (cb_read_file(ipath, &ibuf, &ilen, err) < 0 ||
	    cb_inventory_parse(ibuf, ilen, ipath, &inv, err) < 0)
		goto fail;
	s = cb_json_str(mx, "inventory_sha256");
	if (!s || strcmp(s, inv.sha256) != 0) {
		cb_fail(err, "%s: inventory_sha256 %s does not match %s (sha256 %s)", path, s ? s : "(none)",
			ipath, inv.sha256);
		goto fail;
	}
	want = cb_matrix_build(m, &inv, sel, cb_json_str(mx, "compiler_root_base"), err);
	if (!want) {
		cb_prefix(err, "%s", path);
		goto fail;
	}
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
	cb_inventory_release(&inv);
	free(ibuf);
	free(ipath);
	return mx;
fail:
	json_decref(a);
	json_decref(b);
	json_decref(mx);
	cb_inventory_release(&inv);
	free(ibuf);
	free(ipath);
	return NULL;
}
