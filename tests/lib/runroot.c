/* runroot.c: run roots from JSON specs, for tests. */
#include "runroot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "account/evidence.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "campaign/manifest.h"
#include "campaign/matrix.h"
#include "account/receipt.h"
#include "seal/seal.h"

/* Folder of the spec file, for its relative paths. */
static char *spec_dir(const char *spec)
{
	const char *slash = strrchr(spec, '/');

	return slash ? strndup(spec, (size_t)(slash - spec)) : strdup(".");
}

static int write_text(const char *path, const char *text, struct cb_err *err)
{
	return cb_write_atomic(path, text, strlen(text), 0644, err);
}

/* A synthetic TTGIR module with n convert_layout operations, plus mentions
 * that must not count (loc, a string attribute). */
static char *synthetic_ttgir(long long n, const char *kernel)
{
	struct cb_buf b = CB_BUF_INIT;
	long long i;

	cb_buf_addf(&b, "#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>\n"
			"#loc = loc(\"/src/ttg.convert_layout/%s.py\":1:0)\n"
			"module attributes {\"ttg.num-warps\" = 4 : i32, note = \"ttg.convert_layout\"} {\n"
			"  tt.func public @%s(%%arg0: !tt.ptr<f32>) {\n", kernel, kernel);
	for (i = 0; i < n; i++)
		cb_buf_addf(&b, "    %%%lld = ttg.convert_layout %%x : tensor<128xf32, #blocked> -> tensor<128xf32, #blocked1> loc(#loc%lld)\n",
			    i, i);
	cb_buf_adds(&b, "    tt.return loc(#loc)\n  } loc(#loc)\n} loc(#loc)\n");
	return cb_buf_detach(&b, NULL);
}

static int write_ir(const char *cell_dir, const char *sdir, const json_t *ir, struct cb_err *err)
{
	struct cb_buf index = CB_BUF_INIT;
	const json_t *v;
	char *irdir = cb_path_join(cell_dir, "ir"), *path = NULL;
	size_t i;
	int rc = -1;

	if (!irdir || cb_mkdir_p(irdir, 0755, err) < 0)
		goto out;
	cb_buf_adds(&index, "variant\tkernel\tlaunches\ttuning_launches\n");
	json_array_foreach(ir, i, v) {
		const char *variant = cb_json_str(v, "variant");
		const char *kernel = cb_json_str(v, "kernel") ? cb_json_str(v, "kernel") : "kernel";
		const char *file = cb_json_str(v, "ttgir");
		char *vdir, *text = NULL;

		if (!json_is_true(json_object_get(v, "no_row")))
			cb_buf_addf(&index, "%s\t%s\t%lld\t%lld\n", variant, kernel,
				    (long long)cb_json_int(v, "launches", 0),
				    (long long)cb_json_int(v, "tuning_launches", 0));
		if (json_is_true(json_object_get(v, "no_ir")))
			continue;
		vdir = cb_path_join(irdir, variant);
		free(path);
		path = vdir ? cb_strdupf("%s/%s.ttgir", vdir, kernel) : NULL;
		if (!path || cb_mkdir_p(vdir, 0755, err) < 0) {
			free(vdir);
			goto out;
		}
		free(vdir);
		if (file) {
			char *src = cb_path_join(sdir, file);
			size_t len;
			if (!src || cb_read_file(src, &text, &len, err) < 0) {
				free(src);
				goto out;
			}
			free(src);
		} else {
			text = synthetic_ttgir(cb_json_int(v, "converts", 0), kernel);
		}
		if (!text || write_text(path, text, err) < 0) {
			free(text);
			goto out;
		}
		free(text);
	}
	free(path);
	path = cb_path_join(irdir, "index.tsv");
	rc = path ? write_text(path, index.data, err) : cb_fail(err, "out of memory");
out:
	cb_buf_release(&index);
	free(irdir);
	free(path);
	return rc;
}

static int write_timing(const char *cell_dir, const json_t *rows, struct cb_err *err)
{
	struct cb_buf b = CB_BUF_INIT;
	const json_t *r;
	char *path;
	size_t i;
	int rc;

	json_array_foreach(rows, i, r) {
		const json_t *samples = json_object_get(r, "samples");
		const char *timer = cb_json_str(r, "timer") ? cb_json_str(r, "timer") : "graph";
		json_t *line = json_pack("{s:s, s:s, s:s, s:[]}", "row", cb_json_str(r, "row"), "timer", timer,
					 "timer_reason", strcmp(timer, "graph") ? "timer.graph_capture is off" : "captured",
					 "samples_ns");
		char *s;

		if (samples) {
			json_array_extend(json_object_get(line, "samples_ns"), (json_t *)samples);
		} else {
			/* n samples spread +-0.1% around ns, deterministic */
			long long ns = cb_json_int(r, "ns", 1000), n = cb_json_int(r, "n", 7), k;
			for (k = 0; k < n; k++)
				json_array_append_new(json_object_get(line, "samples_ns"),
						      json_integer(ns + ns * (2 * k - (n - 1)) / (1000 * (n > 1 ? n - 1 : 1))));
		}
		s = json_dumps(line, JSON_SORT_KEYS | JSON_COMPACT);
		cb_buf_addf(&b, "%s\n", s);
		free(s);
		json_decref(line);
	}
	path = cb_path_join(cell_dir, "timing.jsonl");
	rc = path ? write_text(path, b.data ? b.data : "", err) : cb_fail(err, "out of memory");
	free(path);
	cb_buf_release(&b);
	return rc;
}

/* A file of the spec (path relative to its folder) copied to path verbatim. */
static int copy_spec_file(const char *sdir, const char *file, const char *path, struct cb_err *err)
{
	char *src = cb_path_join(sdir, file), *text = NULL;
	size_t len;
	int rc = src && cb_read_file(src, &text, &len, err) == 0 ? cb_write_atomic(path, text, len, 0644, err) : -1;

	free(src);
	free(text);
	return rc;
}

/* kernels.jsonl of a phase: a file of the spec, or lines built from
 * {"row", "calls", "kernels": [{"kernel", "variant", "ns"}], "error"}
 * (ns per call; each kernel launched once a call). */
static int write_kernels(const char *cell_dir, const char *sdir, const json_t *spec, struct cb_err *err)
{
	struct cb_buf b = CB_BUF_INIT;
	char *path = cb_path_join(cell_dir, "kernels.jsonl");
	const json_t *r, *k;
	size_t i, j;
	int rc;

	if (!path)
		return cb_fail(err, "out of memory");
	if (json_is_string(spec)) {
		rc = copy_spec_file(sdir, json_string_value(spec), path, err);
		free(path);
		return rc;
	}
	json_array_foreach(spec, i, r) {
		long long calls = cb_json_int(r, "calls", 10), span = 0, launches = 0;
		json_t *ks = json_array(), *line;
		char *text;

		json_array_foreach(json_object_get(r, "kernels"), j, k) {
			long long ns = cb_json_int(k, "ns", 1000);
			const char *variant = cb_json_str(k, "variant");
			span += ns * calls;
			launches += variant ? calls : 0;
			json_array_append_new(ks, json_pack("{s:s, s:s?, s:I, s:I, s:I, s:I}", "kernel", cb_json_str(k, "kernel"),
							    "variant", variant, "launches", (json_int_t)calls, "total_ns",
							    (json_int_t)(ns * calls), "min_ns", (json_int_t)ns, "max_ns",
							    (json_int_t)ns));
		}
		line = json_pack("{s:I, s:s?, s:o, s:I, s:s, s:I, s:s, s:I}", "calls", (json_int_t)calls, "error",
				 cb_json_str(r, "error"), "kernels", ks, "launches", (json_int_t)launches, "row",
				 cb_json_str(r, "row"), "span_ns", (json_int_t)span, "timer", "graph", "wall_ns", (json_int_t)0);
		text = json_dumps(line, JSON_SORT_KEYS | JSON_COMPACT);
		cb_buf_addf(&b, "%s\n", text);
		free(text);
		json_decref(line);
	}
	rc = write_text(path, b.data ? b.data : "", err);
	cb_buf_release(&b);
	free(path);
	return rc;
}

/* ir/resources.tsv of a phase: a file of the spec, or rows built from
 * [{"variant", "kernel", "n_regs", "n_spills", "shared", "num_stages",
 * "num_warps"}] (a field left out is unknown, '-'). */
static int write_resources(const char *cell_dir, const char *sdir, const json_t *spec, struct cb_err *err)
{
	static const char *const fields[] = { "n_regs", "n_spills", "shared", "num_stages", "num_warps" };
	struct cb_buf b = CB_BUF_INIT;
	char *irdir = cb_path_join(cell_dir, "ir"), *path = irdir ? cb_path_join(irdir, "resources.tsv") : NULL;
	const json_t *v;
	size_t i, f;
	int rc = -1;

	if (!path || cb_mkdir_p(irdir, 0755, err) < 0)
		goto out;
	if (json_is_string(spec)) {
		rc = copy_spec_file(sdir, json_string_value(spec), path, err);
		goto out;
	}
	cb_buf_adds(&b, "variant\tkernel\tn_regs\tn_spills\tshared\tnum_stages\tnum_warps\n");
	json_array_foreach(spec, i, v) {
		cb_buf_addf(&b, "%s\t%s", cb_json_str(v, "variant"), cb_json_str(v, "kernel"));
		for (f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
			if (json_is_integer(json_object_get(v, fields[f])))
				cb_buf_addf(&b, "\t%lld", (long long)cb_json_int(v, fields[f], 0));
			else
				cb_buf_adds(&b, "\t-");
		cb_buf_adds(&b, "\n");
	}
	rc = write_text(path, b.data, err);
out:
	if (rc < 0 && !err->msg[0])
		cb_fail(err, "out of memory");
	cb_buf_release(&b);
	free(irdir);
	free(path);
	return rc;
}

/* One phase of one cell: its receipt (outcome) and what the worker left. */
static int write_phase(const char *task_dir, const char *sdir, const char *task, enum cb_phase p,
		       const struct cb_cell *cell, const json_t *spec, struct cb_err *err)
{
	const char *outcome = json_is_string(spec) ? json_string_value(spec) : cb_json_str(spec, "outcome");
	char *dir = cb_cell_dir(task_dir, p, cell->name), *path = NULL;
	json_t *r = cb_receipt_new(CB_CELL_SCHEMA);
	enum cb_outcome o;
	int rc = -1;

	if (!dir || !r || cb_mkdir_p(dir, 0755, err) < 0)
		goto out;
	if (!outcome || cb_outcome_parse(outcome, &o) < 0) {
		cb_fail(err, "task %s, cell %s, phase %s: unknown outcome '%s'", task, cell->name,
			cb_phase_name(p), outcome ? outcome : "");
		goto out;
	}
	if (json_is_object(spec) && json_object_get(spec, "ir") &&
	    write_ir(dir, sdir, json_object_get(spec, "ir"), err) < 0)
		goto out;
	if (json_is_object(spec) && json_object_get(spec, "timing") &&
	    write_timing(dir, json_object_get(spec, "timing"), err) < 0)
		goto out;
	if (json_is_object(spec) && json_object_get(spec, "kernels") &&
	    write_kernels(dir, sdir, json_object_get(spec, "kernels"), err) < 0)
		goto out;
	if (json_is_object(spec) && json_object_get(spec, "resources") &&
	    write_resources(dir, sdir, json_object_get(spec, "resources"), err) < 0)
		goto out;
	if (json_is_object(spec) && json_object_get(spec, "compile")) {
		path = cb_path_join(dir, "compile.json");
		if (!path || cb_json_write_atomic(path, json_object_get(spec, "compile"), 0644, err) < 0)
			goto out;
		free(path);
		path = NULL;
	}
	json_object_set_new(r, "task", json_string(task));
	json_object_set_new(r, "cell", json_string(cell->name));
	json_object_set_new(r, "role", json_string(cb_role_name(cell->role)));
	json_object_set_new(r, "phase", json_string(cb_phase_name(p)));
	json_object_set_new(r, "outcome", json_string(outcome));
	json_object_set_new(r, "detail", json_string(json_is_object(spec) && cb_json_str(spec, "detail")
						     ? cb_json_str(spec, "detail") : outcome));
	if (json_is_object(spec) && json_object_get(spec, "wall_ms"))
		json_object_set_new(r, "wall_ns", json_integer(cb_json_int(spec, "wall_ms", 0) * 1000000));
	path = cb_path_join(dir, "cell.json");
	rc = path ? cb_receipt_write(path, r, err) : cb_fail(err, "out of memory");
out:
	json_decref(r);
	free(dir);
	free(path);
	return rc;
}

static int build(const char *spec_path, const char *root, int finish, struct cb_err *err)
{
	json_t *spec = cb_json_load_file(spec_path, err), *tasks, *t, *mx = NULL, *camp = NULL, *summary;
	struct cb_manifest m;
	struct cb_inventory inv;
	struct cb_task_result *res = NULL;
	char *sdir = spec_dir(spec_path), *mpath = NULL, *path = NULL, *bytes = NULL, *ipath = NULL;
	char *ibytes = NULL;
	size_t ilen;
	const char *selection;
	enum cb_selection sel;
	size_t i, len, ntasks = 0;
	int c, p, rc = -1;

	memset(&m, 0, sizeof(m));
	memset(&inv, 0, sizeof(inv));
	if (!spec || !sdir)
		goto out;
	ipath = cb_path_join(sdir, cb_json_str(spec, "inventory") ? cb_json_str(spec, "inventory") : "inventory_main.csv");
	if (!ipath || cb_read_file(ipath, &ibytes, &ilen, err) < 0 ||
	    cb_inventory_parse(ibytes, ilen, ipath, &inv, err) < 0)
		goto out;
	mpath = cb_path_join(sdir, cb_json_str(spec, "manifest"));
	if (!mpath || cb_read_file(mpath, &bytes, &len, err) < 0 ||
	    cb_manifest_parse(bytes, len, mpath, &m, err) < 0)
		goto out;
	selection = cb_json_str(spec, "selection") ? cb_json_str(spec, "selection") : "canary";
	if (cb_selection_parse(selection, &sel) < 0) {
		cb_fail(err, "%s: selection: expected canary or all", spec_path);
		goto out;
	}
	if (cb_exists(root)) {
		cb_fail(err, "%s: exists", root);
		goto out;
	}
	if (cb_mkdir_p(root, 0755, err) < 0)
		goto out;
	path = cb_path_join(root, "manifest.json");
	if (!path || cb_write_atomic(path, bytes, len, 0444, err) < 0)
		goto out;
	free(path);
	path = cb_path_join(root, CB_FROZEN_INVENTORY);
	if (!path || cb_write_atomic(path, ibytes, ilen, 0444, err) < 0)
		goto out;
	mx = cb_matrix_build(&m, &inv, sel, NULL, err);
	free(path);
	path = cb_path_join(root, "task-matrix.json");
	if (!mx || !path || cb_json_write_atomic(path, mx, 0444, err) < 0)
		goto out;
	tasks = json_object_get(spec, "tasks");
	ntasks = json_array_size(tasks);
	res = calloc(ntasks ? ntasks : 1, sizeof(*res));
	if (!res)
		goto out;
	json_array_foreach(tasks, i, t) {
		const char *id = cb_json_str(t, "id");
		char *tdir = cb_strdupf("%s/tasks/%s", root, id);
		const json_t *cells = json_object_get(t, "cells");

		if (!tdir || cb_mkdir_p(tdir, 0755, err) < 0) {
			free(tdir);
			goto out;
		}
		for (c = 0; c < CB_NROLES; c++) {
			const json_t *cs = json_object_get(cells, m.cells[c].name);
			for (p = 0; p < CB_NPHASES; p++) {
				const json_t *ps = json_object_get(cs, cb_phase_name((enum cb_phase)p));
				if (ps && write_phase(tdir, sdir, id, (enum cb_phase)p, &m.cells[c], ps, err) < 0) {
					free(tdir);
					goto out;
				}
			}
		}
		if (finish) {
			struct cb_task_account acc;
			json_t *extra = json_object_get(t, "wall_ms")
				? json_pack("{s:I}", "wall_ns", cb_json_int(t, "wall_ms", 0) * 1000000) : NULL;
			int wrc = cb_task_account(tdir, id, &m, m.launch_floor, CB_BOOTSTRAP_RESAMPLES, NULL, &acc, err);
			if (wrc == 0)
				wrc = cb_task_receipt_write(tdir, i, cb_json_str(t, "op") ? cb_json_str(t, "op") : id, &m,
							    m.launch_floor, &acc, extra, &res[i], err);
			json_decref(extra);
			cb_task_account_release(&acc);
			if (wrc < 0) {
				free(tdir);
				goto out;
			}
		}
		free(tdir);
	}
	if (!finish) {
		rc = 0;
		goto out;
	}
	camp = cb_receipt_new(CB_CAMPAIGN_SCHEMA);
	summary = json_array();
	for (i = 0; i < ntasks; i++)
		json_array_append_new(summary, cb_task_result_json(&res[i]));
	json_object_set_new(camp, "campaign", json_string(m.campaign));
	json_object_set_new(camp, "selection", json_string(selection));
	json_object_set_new(camp, "manifest_sha256", json_string(m.sha256));
	json_object_set_new(camp, "status", json_string("complete"));
	json_object_set_new(camp, "launch_floor", json_integer(m.launch_floor));
	json_object_set_new(camp, "tasks", summary);
	free(path);
	path = cb_path_join(root, "campaign.json");
	if (!path || cb_receipt_write(path, camp, err) < 0 ||
	    cb_write_verdict_matrix(root, res, ntasks, err) < 0 || cb_seal(root, err) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0 && !err->msg[0])
		cb_fail(err, "runroot: out of memory");
	for (i = 0; res && i < ntasks; i++)
		cb_task_result_release(&res[i]);
	free(res);
	json_decref(camp);
	json_decref(mx);
	json_decref(spec);
	cb_manifest_release(&m);
	cb_inventory_release(&inv);
	free(bytes);
	free(ibytes);
	free(ipath);
	free(sdir);
	free(mpath);
	free(path);
	return rc;
}

int rr_build(const char *spec_path, const char *root, struct cb_err *err)
{
	err->msg[0] = '\0';
	return build(spec_path, root, 1, err);
}

int rr_build_cells(const char *spec_path, const char *root, struct cb_err *err)
{
	err->msg[0] = '\0';
	return build(spec_path, root, 0, err);
}
