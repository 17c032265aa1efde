/* diff.c: where the topology changed (diff.h), the model: a run's
 * measured kernels matched across cells and their topology ops compared
 * line by line of the kernels' source; their GPU time is diff_time.c's,
 * the text and JSON diff_text.c's. */
#include "diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/runroot.h"
#include "diff_time.h"
#include "account/evidence.h"
#include "account/reaccount.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "account/stats.h"
#include "base/suggest.h"
#include "account/timing.h"
#include "ir/topology.h"

/* ---- paths ---------------------------------------------------------------- */

char *cb_diff_path(const struct cb_diff *d, const char *file)
{
	const char *best = NULL;
	size_t i, n = 0;

	for (i = 0; file[0] == '/' && i < d->nroots; i++) {
		size_t k = strlen(d->roots[i]);
		if (k > n && strncmp(file, d->roots[i], k) == 0 && file[k] == '/') {
			best = d->roots[i];
			n = k;
		}
	}
	if (best) {
		const char *base = strrchr(best, '/');
		return cb_strdupf("%s%s", base ? base + 1 : best, file + n);
	}
	return strdup(file);
}

/* The string values of campaign.json's roots (one level of objects deep),
 * without trailing slashes; the root "/" is left out. */
static int load_roots(struct cb_diff *d, struct cb_err *err)
{
	json_t *roots = json_object_get(d->v->cs.doc, "roots"), *v, *w;
	const char *k, *k2;
	size_t cap = 0;

	json_object_foreach(roots, k, v) {
		cap += json_is_object(v) ? json_object_size(v) : 1;
	}
	d->roots = calloc(cap + 1, sizeof(*d->roots));
	if (!d->roots)
		return cb_fail(err, "out of memory");
	json_object_foreach(roots, k, v) {
		json_t *one = json_is_object(v) ? v : NULL;
		json_object_foreach(one, k2, w) {
			if (json_is_string(w) && d->nroots < cap && !(d->roots[d->nroots++] = strdup(json_string_value(w))))
				return cb_fail(err, "out of memory");
		}
		if (!one && json_is_string(v) && d->nroots < cap && !(d->roots[d->nroots++] = strdup(json_string_value(v))))
			return cb_fail(err, "out of memory");
	}
	for (cap = 0; cap < d->nroots; cap++) {
		size_t n = strlen(d->roots[cap]);
		while (n > 1 && d->roots[cap][n - 1] == '/')
			d->roots[cap][--n] = '\0';
	}
	return 0;
}

/* ---- comparing two cells' ops ------------------------------------------- */

/* Whether two strings, either NULL, are equal. */
static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Whether two ops come from the same source line (cb_ir_op_source). */
static int same_line(const struct cb_ir_op *a, const struct cb_ir_op *b)
{
	const struct cb_ir_frame *x = cb_ir_op_source(a), *y = cb_ir_op_source(b);

	return x == y || (x && y && x->line == y->line && strcmp(x->file, y->file) == 0);
}

/* Whether two ops have the same whole chain of frames. */
int cb_diff_same_chain(const struct cb_ir_op *a, const struct cb_ir_op *b)
{
	size_t i;

	if (a->nframes != b->nframes)
		return 0;
	for (i = 0; i < a->nframes; i++)
		if (a->frames[i].line != b->frames[i].line || a->frames[i].col != b->frames[i].col ||
		    strcmp(a->frames[i].file, b->frames[i].file) != 0)
			return 0;
	return 1;
}

/* Whether two ops convert between the same layouts (their definitions
 * with aliases expanded, so that #blocked2 here can be #blocked there). */
static int same_layouts(const struct cb_ir_op *a, const struct cb_ir_op *b)
{
	return same_str(a->src.expanded, b->src.expanded) && same_str(a->dst.expanded, b->dst.expanded);
}

/* Pair the ops of x with those of y, most alike first: in pass 0 the same
 * line, chain and layouts; in pass 1 the same line and chain; in pass 2
 * the same line. mx[i] / my[j] receive the partner's index + 1 (0: none).
 * With passes = 1 only the first pass runs. */
static void pair_ops(const struct cb_ir_module *x, const struct cb_ir_module *y, size_t *mx, size_t *my,
		     int passes)
{
	int pass;
	size_t i, j;

	for (pass = 0; pass < passes; pass++)
		for (i = 0; i < x->nops; i++)
			for (j = 0; !mx[i] && j < y->nops; j++) {
				const struct cb_ir_op *a = &x->ops[i], *b = &y->ops[j];
				if (my[j] || !same_line(a, b) || (pass < 2 && !cb_diff_same_chain(a, b)) ||
				    (pass < 1 && !same_layouts(a, b)))
					continue;
				mx[i] = j + 1;
				my[j] = i + 1;
			}
}

/* The index in k->lines of the line whose source is op's, appended when
 * new (k->lines has room for every op of both sides); -1 when out of
 * memory. */
static long line_of(const struct cb_diff *d, struct cb_diff_kernel *k, const struct cb_ir_op *op)
{
	const struct cb_ir_frame *f = cb_ir_op_source(op);
	char *shown = f ? cb_diff_path(d, f->file) : NULL;
	size_t i;

	if (f && !shown)
		return -1;
	for (i = 0; i < k->nlines; i++)
		if (same_str(k->lines[i].file, shown) && (!f || k->lines[i].line == f->line)) {
			free(shown);
			return (long)i;
		}
	k->lines[k->nlines].file = shown;
	k->lines[k->nlines].line = f ? f->line : 0;
	return (long)k->nlines++;
}

/* Append an op to its line, counted by its change. */
static void add_op(struct cb_diff_line *l, enum cb_change c, const struct cb_ir_op *base, const struct cb_ir_op *cand)
{
	l->ops[l->n++] = (struct cb_diff_op){ c, base, cand };
	l->removed += c == CB_CHANGE_REMOVED;
	l->added += c == CB_CHANGE_ADDED;
	l->kept += c == CB_CHANGE_KEPT;
}

/* Lines by file, then line; the ops without a location last. */
static int cmp_line(const void *x, const void *y)
{
	const struct cb_diff_line *a = x, *b = y;
	int c;

	if (!a->file || !b->file)
		return !a->file - !b->file;
	c = strcmp(a->file, b->file);
	return c ? c : (a->line > b->line) - (a->line < b->line);
}

/* Put the ops of k into its lines: every baseline op (kept with its
 * partner mb[i] - 1, or removed), then every candidate op left alone
 * (added). at[] gets each op's line, baseline ops first. */
static int place_ops(const struct cb_diff *d, struct cb_diff_kernel *k, const size_t *mb, const size_t *mc,
		     long *at)
{
	const struct cb_ir_module *b = &k->ir[CB_ROLE_BASELINE], *c = &k->ir[CB_ROLE_CANDIDATE];
	size_t i, n;

	for (i = 0; i < b->nops + c->nops; i++) {
		const struct cb_ir_op *op = i < b->nops ? &b->ops[i] : &c->ops[i - b->nops];
		at[i] = i >= b->nops && mc[i - b->nops] ? -2 : line_of(d, k, op);
		if (at[i] == -1)
			return -1;
		if (at[i] >= 0)
			k->lines[at[i]].n++;
	}
	for (i = 0; i < k->nlines; i++) {
		n = k->lines[i].n;
		k->lines[i].n = 0;
		if (!(k->lines[i].ops = calloc(n, sizeof(*k->lines[i].ops))))
			return -1;
	}
	for (i = 0; i < b->nops; i++)
		add_op(&k->lines[at[i]], mb[i] ? CB_CHANGE_KEPT : CB_CHANGE_REMOVED, &b->ops[i],
		       mb[i] ? &c->ops[mb[i] - 1] : NULL);
	for (i = 0; i < c->nops; i++)
		if (at[b->nops + i] >= 0)
			add_op(&k->lines[at[b->nops + i]], CB_CHANGE_ADDED, NULL, &c->ops[i]);
	return 0;
}

/* Compare the baseline's and the candidate's ops of kernel k into its
 * lines, and the control's with the baseline's. */
static int compare_kernel(const struct cb_diff *d, struct cb_diff_kernel *k, struct cb_err *err)
{
	const struct cb_ir_module *b = &k->ir[CB_ROLE_BASELINE], *c = &k->ir[CB_ROLE_CANDIDATE];
	const struct cb_ir_module *ctl = &k->ir[CB_ROLE_CONTROL];
	size_t nb = b->nops, nc = c->nops, i;
	size_t *mb = calloc(nb + 1, sizeof(*mb)), *mc = calloc(nc + 1, sizeof(*mc));
	size_t *m1 = calloc(nb + 1, sizeof(*m1)), *m2 = calloc(ctl->nops + 1, sizeof(*m2));
	long *at = calloc(nb + nc + 1, sizeof(*at));
	int rc = -1;

	k->lines = calloc(nb + nc + 1, sizeof(*k->lines));
	if (!mb || !mc || !m1 || !m2 || !at || !k->lines)
		goto out;
	pair_ops(b, c, mb, mc, 3);
	if (place_ops(d, k, mb, mc, at) < 0)
		goto out;
	if (k->nlines)
		qsort(k->lines, k->nlines, sizeof(*k->lines), cmp_line);
	for (i = 0; i < k->nlines; i++) {
		k->removed += k->lines[i].removed;
		k->added += k->lines[i].added;
		k->kept += k->lines[i].kept;
		k->changed_lines += k->lines[i].removed || k->lines[i].added;
	}
	pair_ops(b, ctl, m1, m2, 1);
	k->control_same = b->nops == ctl->nops;
	for (i = 0; i < nb; i++)
		k->control_same &= m1[i] != 0;
	rc = 0;
out:
	free(mb);
	free(mc);
	free(m1);
	free(m2);
	free(at);
	return rc < 0 ? cb_fail(err, "out of memory") : 0;
}

/* ---- a task's kernels ------------------------------------------------------ */

/* A measured variant's .ttgir in one cell, before it is matched. */
struct found {
	int role;
	const struct cb_variant *v;
	char *file;
	int taken;
};

/* An entry of t for found f: kernel, file and role filled, its IR read. */
static int fill_kernel(const struct cb_diff *d, struct cb_diff_kernel *k, const struct found *f, const char *cell,
		       const struct cb_diff_task *t, struct cb_err *err)
{
	char *path;

	if ((!k->kernel && !(k->kernel = strdup(f->v->kernel))) || (!k->file && !(k->file = strdup(f->file))))
		return cb_fail(err, "out of memory");
	k->variant[f->role] = strdup(f->v->name);
	k->launches[f->role] = f->v->launches;
	k->ttgir[f->role] = cb_strdupf(CB_RUN_TASKS "/%s/" CB_RUN_CELLS "/%s-%s/ir/%s/%s", t->id, t->phase, cell, f->v->name, f->file);
	path = k->ttgir[f->role] ? cb_path_join(d->v->root, k->ttgir[f->role]) : NULL;
	if (!k->variant[f->role] || !path) {
		free(path);
		return cb_fail(err, "out of memory");
	}
	if (cb_ir_module_load(path, d->v->m.topology_op, &k->ir[f->role], err) < 0) {
		free(path);
		return -1;
	}
	free(path);
	return 0;
}

/* The .ttgir files of every measured variant of every cell of task t. */
static int find_variants(const struct cb_diff *d, const char *tdir, const char *phase, const struct cb_topology *topo,
			 struct found **out, size_t *nout, struct cb_err *err)
{
	size_t cap = 0, i, j;
	int r;

	*out = NULL;
	*nout = 0;
	for (r = 0; r < CB_NROLES; r++)
		for (i = 0; i < topo[r].nv; i++) {
			const struct cb_variant *v = &topo[r].v[i];
			const char *cell = cb_manifest_cell(&d->v->m, (enum cb_role)r)->name;
			char *vdir;
			char **names;
			size_t n;

			if (!v->scoped)
				continue;
			vdir = cb_strdupf("%s/" CB_RUN_CELLS "/%s-%s/ir/%s", tdir, phase, cell, v->name);
			if (!vdir || cb_list_dir(vdir, &names, &n, err) < 0) {
				free(vdir);
				return vdir ? -1 : cb_fail(err, "out of memory");
			}
			free(vdir);
			for (j = 0; j < n; j++) {
				struct found *g;
				if (!cb_is_ttgir_name(names[j]))
					continue;
				if (*nout == cap) {
					g = realloc(*out, (cap = cap ? 2 * cap : 16) * sizeof(*g));
					if (!g) {
						cb_strv_free(names, n);
						return cb_fail(err, "out of memory");
					}
					*out = g;
				}
				(*out)[(*nout)++] = (struct found){ r, v, names[j], 0 };
				names[j] = NULL;
			}
			cb_strv_free(names, n);
		}
	return 0;
}

/* Whether entry k can take found f: the same kernel and file, nothing yet
 * from f's cell, and (exact) a variant of the same name in another cell. */
static int takes(const struct cb_diff_kernel *k, const struct found *f, int exact)
{
	int r, named = 0;

	if (k->variant[f->role] || strcmp(k->kernel, f->v->kernel) != 0 || strcmp(k->file, f->file) != 0)
		return 0;
	for (r = 0; r < CB_NROLES; r++)
		named |= k->variant[r] && strcmp(k->variant[r], f->v->name) == 0;
	return !exact || named;
}

/* Kernels by name, then file, then the first cell's variant. */
static int cmp_kernel(const void *x, const void *y)
{
	const struct cb_diff_kernel *a = x, *b = y;
	int c = strcmp(a->kernel, b->kernel), r;

	if (c)
		return c;
	if ((c = strcmp(a->file, b->file)) != 0)
		return c;
	for (r = 0; r < CB_NROLES; r++)
		if (a->variant[r] && b->variant[r])
			return strcmp(a->variant[r], b->variant[r]);
	return 0;
}

/* The entry of t that takes found f by variant name (takes, exact). */
static struct cb_diff_kernel *named_entry(struct cb_diff_task *t, const struct found *f)
{
	size_t j;

	for (j = 0; j < t->nk; j++)
		if (takes(&t->k[j], f, 1))
			return &t->k[j];
	return NULL;
}

/* The entry that takes f by kernel and file name alone, when exactly one
 * does and f is the only variant of its cell left with those names. */
static struct cb_diff_kernel *sole_entry(struct cb_diff_task *t, const struct found *f, const struct found *all,
					 size_t nf)
{
	struct cb_diff_kernel *k = NULL;
	size_t j, fits = 0, peers = 0;

	for (j = 0; j < t->nk; j++)
		if (takes(&t->k[j], f, 0) && !fits++)
			k = &t->k[j];
	for (j = 0; j < nf; j++)
		peers += !all[j].taken && all[j].role == f->role && strcmp(all[j].v->kernel, f->v->kernel) == 0 &&
			 strcmp(all[j].file, f->file) == 0;
	return fits == 1 && peers == 1 ? k : NULL;
}

/* Match the found variants (in role order) into t's kernels: the
 * baseline's each start one, and the other cells' join the one with their
 * variant name; then what is left joins by kernel and file name
 * (sole_entry); then the rest start their own, or join one so started
 * with their variant name. */
static int match_kernels(const struct cb_diff *d, struct cb_diff_task *t, struct found *f, size_t nf,
			 struct cb_err *err)
{
	size_t i;
	int pass;

	t->k = calloc(nf + 1, sizeof(*t->k));
	if (!t->k)
		return cb_fail(err, "out of memory");
	for (pass = 0; pass < 3; pass++)
		for (i = 0; i < nf; i++) {
			struct cb_diff_kernel *k;

			if (f[i].taken)
				continue;
			if (pass == 1)
				k = sole_entry(t, &f[i], f, nf);
			else if (pass == 0 && f[i].role == CB_ROLE_BASELINE)
				k = &t->k[t->nk++];
			else if (!(k = named_entry(t, &f[i])) && pass == 2)
				k = &t->k[t->nk++];
			if (!k)
				continue;
			f[i].taken = 1;
			if (fill_kernel(d, k, &f[i], cb_manifest_cell(&d->v->m, (enum cb_role)f[i].role)->name, t, err) < 0)
				return -1;
		}
	if (t->nk)
		qsort(t->k, t->nk, sizeof(*t->k), cmp_kernel);
	return 0;
}

/* The topology of each cell of task t (round a's first session, or the
 * screen's of a task that ran no round), as the task was accounted;
 * t->error says why when a cell has none. */
static int scan_cells(const struct cb_diff *d, const struct cb_ttgir_counts *counts, const char *tdir,
		      struct cb_diff_task *t, struct cb_topology *topo, struct cb_err *err)
{
	char *a = cb_cell_dir(tdir, CB_PH_ROUND_A, cb_manifest_cell(&d->v->m, CB_ROLE_BASELINE)->name);
	char *s = cb_cell_dir(tdir, CB_PH_SCREEN, cb_manifest_cell(&d->v->m, CB_ROLE_BASELINE)->name);
	enum cb_phase p = a && s && !cb_exists(a) && cb_exists(s) ? CB_PH_SCREEN : CB_PH_ROUND_A;
	int r;

	free(a);
	free(s);
	t->phase = cb_phase_name(p);
	for (r = 0; r < CB_NROLES && !t->error; r++) {
		const char *cell = cb_manifest_cell(&d->v->m, (enum cb_role)r)->name;
		char *cdir = cb_cell_dir(tdir, p, cell);
		char *index = cdir ? cb_path_join(cdir, "ir/index.tsv") : NULL;
		struct cb_err e = CB_ERR_INIT;
		int ok = 0;

		if (index && !cb_exists(index))
			t->error = cb_strdupf("cell %s left no IR in %s (no ir/index.tsv)", cell,
					      p == CB_PH_SCREEN ? "its screen" : "round a");
		else if (index && cb_topology_scan_counted(cdir, d->v->m.topology_op, d->v->floor, counts, &topo[r], &e) < 0)
			t->error = cb_diff_relative_msg(d, e.msg);
		else if (index && !topo[r].joinable)
			t->error = cb_strdupf("cell %s: its IR cannot be joined to its launch index: %s", cell,
					      topo[r].nunjoinable ? topo[r].unjoinable[0] : "?");
		else
			ok = index != NULL;
		free(cdir);
		free(index);
		if (!ok && !t->error)
			return cb_fail(err, "out of memory");
	}
	return 0;
}

/* The verdict and code shown for task t: the derived ones in a derived
 * run, else those of its receipt; sealed gets the topology its receipt
 * holds (*have 0 when it holds none). */
static int task_verdict(const struct cb_diff *d, const char *tdir, struct cb_diff_task *t,
			long long sealed[CB_NROLES], int *have, struct cb_err *err)
{
	struct cb_task_result res;
	char *p = cb_path_join(tdir, CB_RUN_TASK);
	const json_t *e;
	size_t i;
	int rc;

	if (!p)
		return cb_fail(err, "out of memory");
	rc = cb_task_result_load(p, &res, err);
	free(p);
	if (rc < 0)
		return -1;
	t->verdict = res.verdict;
	t->code = res.code;
	*have = res.have_topology;
	memcpy(sealed, res.topology, sizeof(res.topology));
	res.code = NULL;
	cb_task_result_release(&res);
	json_array_foreach(json_object_get(d->v->derived, "tasks"), i, e) {
		const json_t *dv = json_object_get(e, "derived");
		const char *v = cb_json_str(dv, "verdict"), *code = cb_json_str(dv, "code");
		if (!same_str(cb_json_str(e, "id"), t->id) || !v || strlen(v) != 1 || !code)
			continue;
		t->verdict = v[0];
		free(t->code);
		if (!(t->code = strdup(code)))
			return cb_fail(err, "out of memory");
	}
	return t->code ? 0 : cb_fail(err, "out of memory");
}

/* Diff task t (its id set): verdict, cells' topology, kernels, ops, time. */
static int diff_task(const struct cb_diff *d, const struct cb_ttgir_counts *counts, struct cb_diff_task *t,
		     struct cb_err *err)
{
	struct cb_topology topo[CB_NROLES];
	struct cb_cell_kernels ck[CB_NROLES];
	long long sealed[CB_NROLES];
	int have_sealed = 0;
	char *tdir = cb_strdupf("%s/" CB_RUN_TASKS "/%s", d->v->root, t->id);
	struct found *f = NULL;
	size_t nf = 0, i;
	int r, rc = -1;

	memset(topo, 0, sizeof(topo));
	memset(ck, 0, sizeof(ck));
	if (!tdir)
		return cb_fail(err, "out of memory");
	if (task_verdict(d, tdir, t, sealed, &have_sealed, err) < 0 || scan_cells(d, counts, tdir, t, topo, err) < 0)
		goto out;
	if (!t->error && cb_diff_load_profiles(d, tdir, t, topo, ck, err) < 0)
		goto out;
	if (!t->error && (find_variants(d, tdir, t->phase, topo, &f, &nf, err) < 0 || match_kernels(d, t, f, nf, err) < 0))
		goto out;
	for (i = 0; i < t->nk; i++) {
		if (compare_kernel(d, &t->k[i], err) < 0)
			goto out;
		for (r = 0; r < CB_NROLES; r++)
			t->count[r] += (long long)t->k[i].ir[r].nops;
		t->removed += t->k[i].removed;
		t->added += t->k[i].added;
		t->kept += t->k[i].kept;
		t->changed_kernels += t->k[i].removed || t->k[i].added;
		t->changed_lines += t->k[i].changed_lines;
	}
	/* What the ops listed add up to is what was accounted at the run's
	 * floor: IR that says otherwise (a TTGIR emptied and the run sealed
	 * again) is refused, never shown under the sealed counts. */
	if (!t->error && !d->v->derived && have_sealed && memcmp(t->count, sealed, sizeof(sealed)) != 0) {
		cb_fail(err, "its TTGIR counts %lld/%lld/%lld, its receipt (" CB_RUN_TASKS "/%s/" CB_RUN_TASK ") sealed "
			"%lld/%lld/%lld: the IR is not what was accounted", t->count[CB_ROLE_BASELINE],
			t->count[CB_ROLE_CONTROL], t->count[CB_ROLE_CANDIDATE], t->id, sealed[CB_ROLE_BASELINE],
			sealed[CB_ROLE_CONTROL], sealed[CB_ROLE_CANDIDATE]);
		goto out;
	}
	if (!t->error && cb_diff_attribute(d, tdir, t, topo, ck, err) < 0)
		goto out;
	rc = 0;
out:
	for (i = 0; i < nf; i++)
		free(f[i].file);
	free(f);
	for (r = 0; r < CB_NROLES; r++) {
		cb_topology_release(&topo[r]);
		cb_cell_kernels_release(&ck[r]);
	}
	free(tdir);
	return rc;
}

/* ---- loading the run ---------------------------------------------------- */

/* Refuse task, which the run does not hold, naming the task it most
 * likely misspells. */
static void no_task(const struct cb_campaign_summary *cs, const char *root, const char *task, struct cb_err *err)
{
	const char **ids = calloc(cs->ntasks ? cs->ntasks : 1, sizeof(*ids));
	const char *near = NULL;
	size_t i;

	for (i = 0; ids && i < cs->ntasks; i++)
		ids[i] = cs->tasks[i].id;
	if (ids)
		near = cb_suggest(task, ids, cs->ntasks);
	if (near)
		cb_fail(err, "%s: no task '%s' in this run (did you mean %s?)", root, task, near);
	else
		cb_fail(err, "%s: no task '%s' in this run (" CB_RUN_CAMPAIGN " lists %zu)", root, task, cs->ntasks);
	free(ids);
}

int cb_diff_load(struct cb_diff *d, const struct cb_run_view *v, const char *task, struct cb_err *err)
{
	size_t i;

	memset(d, 0, sizeof(*d));
	d->v = v;
	if (cb_run_view_require(v, 1, err) < 0 || cb_run_view_check_derived(v, err) < 0 || load_roots(d, err) < 0)
		return -1;
	d->t = calloc(v->cs.ntasks + 1, sizeof(*d->t));
	if (!d->t)
		return cb_fail(err, "out of memory");
	for (i = 0; i < v->cs.ntasks; i++) {
		const char *id = v->cs.tasks[i].id;
		if (task && strcmp(task, id) != 0)
			continue;
		if (!cb_is_ident(id))
			return cb_fail(err, "%s/" CB_RUN_CAMPAIGN ": tasks[%zu]: '%s' is not a task name", v->root, i, id);
		if (!(d->t[d->n].id = strdup(id)))
			return cb_fail(err, "out of memory");
		if (diff_task(d, v->counted ? &v->counts : NULL, &d->t[d->n++], err) < 0)
			return cb_prefix(err, "task %s", id);
	}
	if (task && !d->n) {
		no_task(&v->cs, v->root, task, err);
		return -1;
	}
	return 0;
}

void cb_diff_release(struct cb_diff *d)
{
	size_t i, j, l;
	int r;

	for (i = 0; d->t && i < d->n; i++) {
		struct cb_diff_task *t = &d->t[i];
		for (j = 0; j < t->nk; j++) {
			struct cb_diff_kernel *k = &t->k[j];
			for (r = 0; r < CB_NROLES; r++) {
				free(k->variant[r]);
				free(k->ttgir[r]);
				cb_ir_module_release(&k->ir[r]);
			}
			for (l = 0; l < k->nlines; l++) {
				free(k->lines[l].file);
				free(k->lines[l].ops);
			}
			free(k->lines);
			free(k->kernel);
			free(k->file);
		}
		free(t->k);
		free(t->id);
		free(t->code);
		free(t->error);
		for (j = 0; j < t->time.nother; j++)
			free(t->time.other[j].kernel);
		free(t->time.other);
		free(t->time.error);
		cb_time_moved_release(&t->time.moved);
	}
	free(d->t);
	cb_strv_free(d->roots, d->nroots);
	memset(d, 0, sizeof(*d));
}

void cb_diff_summarize(const struct cb_diff *d, struct cb_diff_summary *s)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < d->n; i++) {
		const struct cb_diff_task *t = &d->t[i];
		s->tasks_lost += t->removed > 0;
		s->tasks_gained += t->added > 0;
		s->kernels += t->changed_kernels;
		s->lines += t->changed_lines;
		s->removed += t->removed;
		s->added += t->added;
		s->kept += t->kept;
	}
}
