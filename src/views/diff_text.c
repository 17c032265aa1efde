/* diff_text.c: a run diffed (diff.h) as JSON (docs/formats.md, "caliber
 * diff") and as text for a terminal: the renderers of the diff's model,
 * which read nothing but the model. */
#include "diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account/reaccount.h"
#include "base/jsonio.h"
#include "base/runroot.h"

#define CB_DIFF_SCHEMA "caliber.diff/1"

/* ---- JSON ------------------------------------------------------------------ */

static const char *const change_names[] = { "kept", "removed", "added" };

/* A layout for JSON: its text, or null when none was found. */
static json_t *layout_json(const struct cb_ir_layout *l)
{
	return l->text ? json_string(l->text) : json_null();
}

/* One side of an op: where it is in its file, its layouts and its frames. */
static json_t *op_json(const struct cb_diff *d, const struct cb_ir_op *op)
{
	json_t *at, *j;
	size_t i;

	if (!op)
		return json_null();
	at = json_array();
	for (i = 0; at && i < op->nframes; i++) {
		const struct cb_ir_frame *f = &op->frames[i];
		char *file = cb_diff_path(d, f->file);
		json_t *fj = json_pack("{s:s?, s:I, s:I, s:s?}", "file", file, "line", (json_int_t)f->line, "col",
				       (json_int_t)f->col, "name", f->name);
		free(file);
		if (json_array_append_new(at, fj) < 0) {
			json_decref(at);
			return NULL;
		}
	}
	j = json_pack("{s:I, s:s, s:o, s:o, s:s?, s:o, s:b, s:b}", "line", (json_int_t)op->line, "result", op->result,
		      "src", layout_json(&op->src), "dst", layout_json(&op->dst), "loc", op->loc, "at",
		      at ? at : json_null(), "fused", op->fused, "unresolved", op->unresolved);
	return j;
}

/* One cell's side of a kernel: variant, launches, file, count, layouts. */
static json_t *kernel_cell_json(const struct cb_diff_kernel *k, int r)
{
	json_t *lay = json_object();
	size_t i;

	if (!k->variant[r] || !lay) {
		json_decref(lay);
		return json_null();
	}
	for (i = 0; i < k->ir[r].nlayouts; i++)
		json_object_set_new(lay, k->ir[r].layouts[i].name, json_string(k->ir[r].layouts[i].def));
	return json_pack("{s:s, s:I, s:s, s:I, s:o}", "variant", k->variant[r], "launches",
			 (json_int_t)k->launches[r], "ttgir", k->ttgir[r], "count", (json_int_t)k->ir[r].nops,
			 "layouts", lay);
}

/* ns rounded to an integer (JSON holds no reals). */
static json_int_t ns_int(double ns)
{
	return (json_int_t)llround(ns);
}

/* A kernel's GPU time in each cell of its task, with its share of the
 * cell's: null when the task has none. */
static json_t *kernel_time_json(const struct cb_diff_time *tm, const double *ns)
{
	json_t *j;
	int r;

	if (!tm->known)
		return json_null();
	j = json_object();
	for (r = 0; j && r < CB_NROLES; r++)
		json_object_set_new(j, cb_role_name((enum cb_role)r),
				    !tm->in[r] || ns[r] < 0 ? json_null()
				    : json_pack("{s:I, s:I}", "ns", ns_int(ns[r]), "share_ppm",
						tm->gpu_ns[r] > 0 ? ns_int(1e6 * ns[r] / tm->gpu_ns[r]) : (json_int_t)0));
	return j;
}

/* A count of resources.tsv, null when unknown. */
static json_t *res_value_json(long long v)
{
	return v < 0 ? json_null() : json_integer((json_int_t)v);
}

/* A kernel's resources in each cell (null where not read); null when no cell has them. */
static json_t *resources_json(const struct cb_diff_kernel *k)
{
	json_t *j;
	int r;

	if (!k->have_res[CB_ROLE_BASELINE] && !k->have_res[CB_ROLE_CONTROL] && !k->have_res[CB_ROLE_CANDIDATE])
		return json_null();
	j = json_object();
	for (r = 0; j && r < CB_NROLES; r++) {
		const struct cb_resources *x = &k->res[r];
		json_object_set_new(j, cb_role_name((enum cb_role)r),
				    !k->have_res[r] ? json_null()
				    : json_pack("{s:o, s:o, s:o, s:o, s:o}", "n_regs", res_value_json(x->regs), "n_spills",
						res_value_json(x->spills), "shared", res_value_json(x->shared), "num_stages",
						res_value_json(x->stages), "num_warps", res_value_json(x->warps)));
	}
	return j;
}

/* A task's GPU time: each cell's total and timed median, where it moved,
 * the kernels of no measured variant; null when not profiled and nothing
 * failed to read. */
static json_t *task_time_json(const struct cb_diff_task *t)
{
	const struct cb_diff_time *tm = &t->time;
	json_t *cells, *other;
	size_t i;
	int r;

	if (!tm->known && !tm->error)
		return json_null();
	cells = json_object();
	other = json_array();
	for (r = 0; cells && r < CB_NROLES; r++)
		json_object_set_new(cells, cb_role_name((enum cb_role)r),
				    !tm->in[r] ? json_null()
				    : json_pack("{s:I, s:o}", "gpu_ns", ns_int(tm->gpu_ns[r]), "timed_ns",
						tm->timed_ns[r] < 0 ? json_null() : json_integer(ns_int(tm->timed_ns[r]))));
	for (i = 0; other && i < tm->nother; i++)
		json_array_append_new(other, json_pack("{s:s, s:o}", "kernel", tm->other[i].kernel, "cells",
						       kernel_time_json(tm, tm->other[i].ns)));
	return json_pack("{s:b, s:s?, s:I, s:I, s:o, s:o, s:o}", "known", tm->known, "error", tm->error, "rows",
			 (json_int_t)tm->rows, "unjoined", (json_int_t)tm->unjoined, "cells", cells ? cells : json_null(), "moved",
			 !tm->moved.known ? json_null()
			 : json_pack("{s:I, s:I, s:s?}", "saved_ns", ns_int(tm->moved.base_ns - tm->moved.cand_ns),
				     "unchanged_ns", ns_int(tm->moved.unchanged_ns), "top", tm->moved.top),
			 "other", other ? other : json_null());
}

/* A kernel: its cells, whether the control matches, its lines, its time and resources. */
static json_t *kernel_json(const struct cb_diff *d, const struct cb_diff_time *tm, const struct cb_diff_kernel *k)
{
	json_t *cells = json_object(), *lines = json_array();
	size_t i, j;
	int r;

	for (r = 0; cells && r < CB_NROLES; r++)
		json_object_set_new(cells, cb_role_name((enum cb_role)r), kernel_cell_json(k, r));
	for (i = 0; lines && i < k->nlines; i++) {
		const struct cb_diff_line *l = &k->lines[i];
		json_t *ops = json_array();
		for (j = 0; ops && j < l->n; j++)
			json_array_append_new(ops, json_pack("{s:s, s:o, s:o}", "change", change_names[l->ops[j].change],
							     "baseline", op_json(d, l->ops[j].base), "candidate",
							     op_json(d, l->ops[j].cand)));
		json_array_append_new(lines, json_pack("{s:s?, s:I, s:I, s:I, s:I, s:o}", "file", l->file, "line",
						       (json_int_t)l->line, "removed", (json_int_t)l->removed, "added",
						       (json_int_t)l->added, "kept", (json_int_t)l->kept, "ops", ops));
	}
	return json_pack("{s:s, s:s, s:o, s:b, s:I, s:I, s:I, s:o, s:o, s:o}", "kernel", k->kernel, "file", k->file,
			 "cells", cells, "control_same", k->control_same, "removed", (json_int_t)k->removed, "added",
			 (json_int_t)k->added, "kept", (json_int_t)k->kept, "lines", lines, "time", kernel_time_json(tm, k->ns),
			 "resources", resources_json(k));
}

/* A task: verdict, why it has no topology (or null), counts, kernels. */
static json_t *task_json(const struct cb_diff *d, const struct cb_diff_task *t)
{
	json_t *ks = json_array();
	size_t i;

	for (i = 0; ks && i < t->nk; i++)
		json_array_append_new(ks, kernel_json(d, &t->time, &t->k[i]));
	return json_pack("{s:s, s:s#, s:s, s:s?, s:{s:I, s:I, s:I}, s:I, s:I, s:I, s:o, s:o}", "task", t->id,
			 "verdict", &t->verdict, (int)1, "code", t->code, "error", t->error, "count", "baseline",
			 (json_int_t)t->count[CB_ROLE_BASELINE], "control", (json_int_t)t->count[CB_ROLE_CONTROL],
			 "candidate", (json_int_t)t->count[CB_ROLE_CANDIDATE], "removed", (json_int_t)t->removed,
			 "added", (json_int_t)t->added, "kept", (json_int_t)t->kept, "kernels", ks, "time",
			 task_time_json(t));
}

json_t *cb_diff_json(const struct cb_diff *d)
{
	struct cb_diff_summary s;
	json_t *tasks = json_array();
	size_t i;

	for (i = 0; tasks && i < d->n; i++)
		if (json_array_append_new(tasks, task_json(d, &d->t[i])) < 0) {
			json_decref(tasks);
			return NULL;
		}
	cb_diff_summarize(d, &s);
	return json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:o, s:b, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I}, s:o}",
			 "schema", CB_DIFF_SCHEMA, "campaign", d->v->cs.campaign, "selection", d->v->cs.selection, "op",
			 d->v->m.topology_op, "floor", (json_int_t)d->v->floor, "sealed_floor",
			 (json_int_t)d->v->cs.launch_floor, "time_share_ppm",
			 d->v->by_time ? json_integer((json_int_t)d->v->share_ppm) : json_null(), "derived", d->v->derived != NULL,
			 "summary",
			 "tasks_lost", (json_int_t)s.tasks_lost, "tasks_gained", (json_int_t)s.tasks_gained,
			 "kernels", (json_int_t)s.kernels, "lines", (json_int_t)s.lines, "removed",
			 (json_int_t)s.removed, "added", (json_int_t)s.added, "kept", (json_int_t)s.kept, "tasks",
			 tasks);
}

/* ---- text ------------------------------------------------------------------ */

/* "a/b/c" of the three cells' numbers. */
static void put_triplet(struct cb_buf *b, const long long *v)
{
	cb_buf_addf(b, "%lld/%lld/%lld", v[CB_ROLE_BASELINE], v[CB_ROLE_CONTROL], v[CB_ROLE_CANDIDATE]);
}

/* "N word" or "N words". */
static void put_count(struct cb_buf *b, size_t n, const char *word)
{
	cb_buf_addf(b, "%zu %s%s", n, word, n == 1 ? "" : "s");
}

/* An op's layouts: "#blocked2 -> #mma" ("?" where none was read). */
static void put_layouts(struct cb_buf *b, const struct cb_ir_op *op)
{
	cb_buf_addf(b, "%s -> %s", op->src.text ? op->src.text : "?", op->dst.text ? op->dst.text : "?");
}

/* An op's frames, innermost first: "at f:l:c (name) <- f:l:c ...". */
static void put_frames(struct cb_buf *b, const struct cb_diff *d, const struct cb_ir_op *op)
{
	size_t i;

	if (!op->nframes) {
		if (op->loc)
			cb_buf_addf(b, "at loc(%s), %s", op->loc,
				    op->unresolved ? "which cannot be resolved" : "which names no file position");
		else
			cb_buf_adds(b, "at no location");
		return;
	}
	for (i = 0; i < op->nframes; i++) {
		char *file = cb_diff_path(d, op->frames[i].file);
		cb_buf_addf(b, "%s%s:%lld:%lld", i ? " <- " : "at ", file ? file : "?", op->frames[i].line,
			    op->frames[i].col);
		if (op->frames[i].name)
			cb_buf_addf(b, " (%s)", op->frames[i].name);
		free(file);
	}
	if (op->fused)
		cb_buf_adds(b, " (fused location: its first member)");
}

/* One op of a line: change, result, layouts and lines in the files, then
 * where it comes from (both sides' frames when a kept pair's differ). */
static void put_op(struct cb_buf *b, const struct cb_diff *d, const struct cb_diff_op *o)
{
	const struct cb_ir_op *one = o->base ? o->base : o->cand;

	cb_buf_addf(b, "      %-8s %s%s", change_names[o->change], one->result, *one->result ? " " : "");
	if (o->base) {
		put_layouts(b, o->base);
		cb_buf_addf(b, " (baseline line %zu)", o->base->line);
	}
	if (o->base && o->cand)
		cb_buf_adds(b, ", ");
	if (o->cand) {
		if (o->base && strcmp(o->base->result, o->cand->result) != 0)
			cb_buf_addf(b, "%s ", o->cand->result);
		put_layouts(b, o->cand);
		cb_buf_addf(b, " (candidate line %zu)", o->cand->line);
	}
	cb_buf_adds(b, "\n               ");
	put_frames(b, d, one);
	if (o->base && o->cand && !cb_diff_same_chain(o->base, o->cand)) {
		cb_buf_adds(b, "\n               candidate ");
		put_frames(b, d, o->cand);
	}
	cb_buf_adds(b, "\n");
}

/* The removed, added and kept counts of a line, kernel or task, the
 * non-zero ones: "2 removed, 1 kept"; "no ops" when all are zero. */
static void put_changes(struct cb_buf *b, size_t removed, size_t added, size_t kept)
{
	const size_t v[3] = { removed, added, kept };
	const char *const w[3] = { "removed", "added", "kept" };
	int i, any = 0;

	for (i = 0; i < 3; i++)
		if (v[i]) {
			cb_buf_addf(b, "%s%zu %s", any ? ", " : "", v[i], w[i]);
			any = 1;
		}
	if (!any)
		cb_buf_adds(b, "no ops");
}

/* GPU time in µs: "931.2 µs", "3.14 µs" below 10 µs. */
static void put_us(struct cb_buf *b, double ns)
{
	cb_buf_addf(b, ns < 10000 ? "%.2f µs" : "%.1f µs", ns / 1000);
}

/* A kernel's time in its task: its share of each cell's GPU time, and its
 * time from the baseline to the candidate: "98.1%/98.0%/97.2% of the
 * cell's GPU time, 913.0 µs -> 215.2 µs per call (-76.4%)". */
static void put_time_line(struct cb_buf *b, const struct cb_diff_time *tm, const double *ns)
{
	const double nb = ns[CB_ROLE_BASELINE], nk = ns[CB_ROLE_CANDIDATE];
	int r;

	for (r = 0; r < CB_NROLES; r++) {
		cb_buf_adds(b, r ? "/" : "");
		if (tm->in[r] && ns[r] >= 0 && tm->gpu_ns[r] > 0)
			cb_buf_addf(b, "%.1f%%", 100 * ns[r] / tm->gpu_ns[r]);
		else
			cb_buf_adds(b, "-");
	}
	cb_buf_adds(b, " of the cell's GPU time");
	if (nb < 0 || nk < 0)
		return;
	cb_buf_adds(b, ", ");
	put_us(b, nb);
	cb_buf_adds(b, " -> ");
	put_us(b, nk);
	cb_buf_adds(b, " per call");
	if (nb > 0)
		cb_buf_addf(b, " (%+.1f%%)", 100 * (nk / nb - 1));
}

/* One resource of a kernel: "regs 232 -> 168", "stages 4", "spills ?". */
static void put_resource(struct cb_buf *b, const char *name, long long base, long long cand, int first)
{
	const long long v[2] = { base, cand };
	int i;

	cb_buf_addf(b, "%s%s ", first ? "" : ", ", name);
	for (i = 0; i < (base == cand ? 1 : 2); i++) {
		cb_buf_adds(b, i ? " -> " : "");
		if (v[i] < 0)
			cb_buf_adds(b, "?");
		else
			cb_buf_addf(b, "%lld", v[i]);
	}
}

/* A kernel's time and resources, under its converts line. */
static void put_kernel_use(struct cb_buf *b, const struct cb_diff_time *tm, const struct cb_diff_kernel *k)
{
	const struct cb_resources none = { -1, -1, -1, -1, -1 };
	const struct cb_resources *x = k->have_res[CB_ROLE_BASELINE] ? &k->res[CB_ROLE_BASELINE] : &none;
	const struct cb_resources *y = k->have_res[CB_ROLE_CANDIDATE] ? &k->res[CB_ROLE_CANDIDATE] : &none;

	if (tm->known) {
		cb_buf_adds(b, "    time ");
		put_time_line(b, tm, k->ns);
		cb_buf_adds(b, "\n");
	}
	if (x == &none && y == &none)
		return;
	cb_buf_adds(b, "    ");
	put_resource(b, "regs", x->regs, y->regs, 1);
	put_resource(b, "spills", x->spills, y->spills, 0);
	put_resource(b, "shared", x->shared, y->shared, 0);
	put_resource(b, "stages", x->stages, y->stages, 0);
	put_resource(b, "warps", x->warps, y->warps, 0);
	cb_buf_adds(b, "\n");
}

int cb_diff_moved(const struct cb_diff *d, const struct cb_diff_task *t, char *out, size_t cap)
{
	const struct cb_time_moved *mv = &t->time.moved;
	const double saved = mv->base_ns - mv->cand_ns;
	const double share = saved != 0 ? mv->unchanged_ns / saved : 0;
	const double change = mv->base_ns > 0 ? mv->cand_ns / mv->base_ns - 1 : 0;

	out[0] = '\0';
	if (!t->time.known || !mv->known || !mv->changed || saved == 0 ||
	    (-change < d->v->m.gain && -change > d->v->m.regression))
		return 0;
	if (share > 0.5 && mv->top) {
		snprintf(out, cap, "%s, mostly in kernels whose converts did not change (%.0f%% of the GPU time %s, most in %s)",
			 saved > 0 ? "faster" : "slower", 100 * share, saved > 0 ? "saved" : "lost", mv->top);
		return 1;
	}
	snprintf(out, cap, "%.0f%% of the GPU time %s in kernels whose converts changed", 100 * (1 - share),
		 saved > 0 ? "saved" : "lost");
	return 2;
}

/* Where a task's GPU time moved (cb_diff_moved), on a line of its own. */
static void put_moved(struct cb_buf *b, const struct cb_diff *d, const struct cb_diff_task *t)
{
	char what[512];

	if (cb_diff_moved(d, t, what, sizeof(what)))
		cb_buf_addf(b, "  where it moved: %s\n", what);
}

/* A task's profiled GPU time per cell beside its timed medians, the
 * replays left out, and where it moved. */
static void put_task_time(struct cb_buf *b, const struct cb_diff *d, const struct cb_diff_task *t)
{
	const struct cb_diff_time *tm = &t->time;
	int r, n = 0;

	if (tm->error)
		cb_buf_addf(b, "  profile: %s\n", tm->error);
	if (!tm->known)
		return;
	cb_buf_addf(b, "  GPU time per call, profiled replay of %zu row%s:", tm->rows, tm->rows == 1 ? "" : "s");
	for (r = 0; r < CB_NROLES; r++) {
		if (!tm->in[r])
			continue;
		cb_buf_addf(b, "%s %s ", n++ ? "," : "", cb_role_name((enum cb_role)r));
		put_us(b, tm->gpu_ns[r]);
		if (tm->timed_ns[r] > 0)
			cb_buf_addf(b, " (%.1f%% of the timed median)", 100 * tm->gpu_ns[r] / tm->timed_ns[r]);
	}
	if (tm->gpu_ns[CB_ROLE_BASELINE] > 0)
		cb_buf_addf(b, "; candidate %+.1f%%",
			    100 * (tm->gpu_ns[CB_ROLE_CANDIDATE] / tm->gpu_ns[CB_ROLE_BASELINE] - 1));
	cb_buf_adds(b, "\n");
	if (tm->unjoined)
		cb_buf_addf(b, "  %zu profiled replay%s left out: %s kernels could not be joined to their variants\n",
			    tm->unjoined, tm->unjoined == 1 ? "" : "s", tm->unjoined == 1 ? "its" : "their");
	put_moved(b, d, t);
}

/* The kernels of no measured variant, after a task's measured kernels. */
static void put_other(struct cb_buf *b, const struct cb_diff_time *tm)
{
	size_t i;

	for (i = 0; tm->known && i < tm->nother; i++) {
		cb_buf_addf(b, "%s    %s: ", i ? "" : "  other kernels (no measured variant):\n", tm->other[i].kernel);
		put_time_line(b, tm, tm->other[i].ns);
		cb_buf_adds(b, "\n");
	}
}

/* A kernel: its variants, counts and launches, its lines with their ops,
 * the layouts its ops use in each cell, and its files. */
static void put_kernel(struct cb_buf *b, const struct cb_diff *d, const struct cb_diff_time *tm,
		       const struct cb_diff_kernel *k)
{
	long long count[CB_NROLES];
	size_t i, j;
	int r, same = 1;

	for (r = 0; r < CB_NROLES; r++) {
		count[r] = (long long)k->ir[r].nops;
		same &= k->variant[r] && k->variant[0] && strcmp(k->variant[r], k->variant[0]) == 0;
	}
	cb_buf_addf(b, "  kernel %s, variant%s ", k->kernel, same ? "" : "s");
	for (r = 0; r < (same ? 1 : CB_NROLES); r++)
		cb_buf_addf(b, "%s%s", r ? " / " : "", k->variant[r] ? k->variant[r] : "-");
	cb_buf_adds(b, "\n    converts ");
	put_triplet(b, count);
	cb_buf_adds(b, ", launches ");
	put_triplet(b, k->launches);
	cb_buf_addf(b, "; the control's ops %s the baseline's\n", k->control_same ? "are" : "differ from");
	put_kernel_use(b, tm, k);
	for (i = 0; i < k->nlines; i++) {
		const struct cb_diff_line *l = &k->lines[i];
		if (l->file)
			cb_buf_addf(b, "    %s:%lld: ", l->file, l->line);
		else
			cb_buf_adds(b, "    no location: ");
		put_changes(b, l->removed, l->added, l->kept);
		cb_buf_adds(b, "\n");
		for (j = 0; j < l->n; j++)
			put_op(b, d, &l->ops[j]);
	}
	for (r = 0; r < CB_NROLES; r++) {
		if (!k->ir[r].nlayouts || (r == CB_ROLE_CONTROL && k->control_same))
			continue;
		cb_buf_addf(b, "    layouts of the %s:\n", cb_role_name((enum cb_role)r));
		for (i = 0; i < k->ir[r].nlayouts; i++)
			cb_buf_addf(b, "      %s = %s\n", k->ir[r].layouts[i].name, k->ir[r].layouts[i].def);
	}
	for (r = 0; r < CB_NROLES; r++)
		if (k->ttgir[r])
			cb_buf_addf(b, "    %-9s %s\n", cb_role_name((enum cb_role)r), k->ttgir[r]);
}


void cb_diff_text(struct cb_buf *b, const struct cb_diff *d)
{
	struct cb_diff_summary s;
	size_t i, j, from = b->len;

	cb_diff_summarize(d, &s);
	cb_buf_addf(b, "caliber diff: campaign %s (selection %s), ", d->v->cs.campaign, d->v->cs.selection);
	put_count(b, d->n, "task");
	if (d->v->by_time) {
		const struct cb_scope sc = { 1, d->v->floor, d->v->share_ppm };
		char name[64];
		cb_scope_name(&sc, name, sizeof(name));
		cb_buf_addf(b, "\nseal: holds; scope %s (a derived run; sealed at launch floor %lld)", name,
			    d->v->cs.launch_floor);
	} else {
		cb_buf_addf(b, "\nseal: holds; launch floor %lld", d->v->floor);
	}
	if (d->v->derived && !d->v->by_time)
		cb_buf_addf(b, " (a derived run; sealed at %lld)", d->v->cs.launch_floor);
	cb_buf_addf(b, "; op %s\nwhat changed: ", d->v->m.topology_op);
	put_count(b, s.tasks_lost, "task");
	cb_buf_addf(b, " lost converts, %zu gained some: %zu removed, %zu added, in ", s.tasks_gained, s.removed,
		    s.added);
	put_count(b, s.kernels, "kernel");
	cb_buf_adds(b, " at ");
	put_count(b, s.lines, "source line");
	cb_buf_addf(b, "; %zu kept\n", s.kept);
	for (i = 0; i < d->n; i++) {
		const struct cb_diff_task *t = &d->t[i];
		cb_buf_addf(b, "\n%s: %c %s", t->id, t->verdict, t->code);
		if (t->error) {
			cb_buf_addf(b, "; no topology to compare: %s\n", t->error);
			continue;
		}
		cb_buf_adds(b, "; converts ");
		put_triplet(b, t->count);
		cb_buf_adds(b, " in ");
		put_count(b, t->nk, "kernel");
		cb_buf_adds(b, ": ");
		put_changes(b, t->removed, t->added, t->kept);
		cb_buf_adds(b, "\n");
		put_task_time(b, d, t);
		for (j = 0; j < t->nk; j++)
			put_kernel(b, d, &t->time, &t->k[j]);
		put_other(b, &t->time);
	}
	/* Names and locations come from the TTGIR a worker wrote: no byte of
	 * it may drive the terminal this is printed on. */
	cb_buf_escape_controls(b, from);
}
