/* diff.c: where the topology changed (diff.h): a run's measured kernels
 * matched across cells, their topology ops compared line by line of the
 * kernels' source, as text and JSON. */
#include "diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account/evidence.h"
#include "account/reaccount.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "account/stats.h"
#include "base/suggest.h"
#include "account/timing.h"
#include "ir/topology.h"

#define CB_DIFF_SCHEMA "caliber.diff/1"

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
static int same_chain(const struct cb_ir_op *a, const struct cb_ir_op *b)
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
				if (my[j] || !same_line(a, b) || (pass < 2 && !same_chain(a, b)) ||
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
	k->ttgir[f->role] = cb_strdupf("tasks/%s/cells/%s-%s/ir/%s/%s", t->id, t->phase, cell, f->v->name, f->file);
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
			vdir = cb_strdupf("%s/cells/%s-%s/ir/%s", tdir, phase, cell, v->name);
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

/* A message about a file under the run root, without the root's path. */
static char *relative_msg(const struct cb_diff *d, const char *msg)
{
	size_t n = strlen(d->v->root);

	return strdup(strncmp(msg, d->v->root, n) == 0 && msg[n] == '/' ? msg + n + 1 : msg);
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
			t->error = relative_msg(d, e.msg);
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
	char *p = cb_path_join(tdir, "task.json");
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

/* ---- a task's GPU time ---------------------------------------------------- */

/* Each cell's profiled replays into ck; in a derived run scoped by time,
 * each cell's topology scoped so, as reaccount scoped it (an X or K task
 * keeps the sealed floor). A cell that cannot be scoped gives the task no
 * topology to compare. */
static int load_profiles(const struct cb_diff *d, const char *tdir, struct cb_diff_task *t, struct cb_topology *topo,
			 struct cb_cell_kernels *ck, struct cb_err *err)
{
	int r;

	for (r = 0; r < CB_NROLES; r++) {
		const char *cell = cb_manifest_cell(&d->v->m, (enum cb_role)r)->name;
		struct cb_kernel_sums s;

		if (cb_cell_kernels_load(tdir, cell, &ck[r], err) < 0)
			return -1;
		t->time.unjoined += ck[r].unjoined;
		if (ck[r].error && !t->time.error && !(t->time.error = relative_msg(d, ck[r].error)))
			return cb_fail(err, "out of memory");
		if (!d->v->by_time || t->verdict == 'X' || t->verdict == 'K' || t->error)
			continue;
		if (!ck[r].n) {
			t->error = cb_strdupf("cell %s has no profiled replay in round a to scope by time", cell);
			return t->error ? 0 : cb_fail(err, "out of memory");
		}
		if (cb_kernel_sums_of(&ck[r], NULL, 0, &s, err) < 0)
			return -1;
		cb_kernels_scope_topology(&topo[r], &s, d->v->share_ppm);
		cb_kernel_sums_release(&s);
	}
	return 0;
}

/* Each kernel's resources in each cell, from a-<cell>/ir/resources.tsv
 * where it exists; one that cannot be read is the task's time.error. */
static int load_resources(const struct cb_diff *d, const char *tdir, struct cb_diff_task *t, struct cb_err *err)
{
	int r;
	size_t i;

	for (r = 0; r < CB_NROLES; r++) {
		char *path = cb_strdupf("%s/cells/a-%s/%s", tdir, cb_manifest_cell(&d->v->m, (enum cb_role)r)->name,
					CB_RESOURCES_FILE);
		struct cb_resource_table tab;
		struct cb_err e;

		if (!path)
			return cb_fail(err, "out of memory");
		if (!cb_exists(path)) {
			free(path);
			continue;
		}
		if (cb_resources_load(path, &tab, &e) < 0) {
			free(path);
			if (!t->time.error && !(t->time.error = relative_msg(d, e.msg)))
				return cb_fail(err, "out of memory");
			continue;
		}
		free(path);
		for (i = 0; i < t->nk; i++) {
			const struct cb_resources *res = cb_resources_find(&tab, t->k[i].variant[r]);
			if (res) {
				t->k[i].res[r] = *res;
				t->k[i].have_res[r] = 1;
			}
		}
		cb_resource_table_release(&tab);
	}
	return 0;
}

/* The timed median per call of each of rows in cell, its round-a
 * sessions' samples pooled, summed over the rows into *out; -1 there when
 * a session's timing cannot be read or a row has no samples. */
static int timed_sum(const char *tdir, const char *cell, const char *const *rows, size_t nrows, double *out,
		     struct cb_err *err)
{
	struct cb_timing *ts = NULL;
	size_t nt = 0, i, j, k;
	int s, rc = 0;

	*out = 0;
	for (s = 1;; s++) {
		char *dir = cb_session_dir(tdir, CB_PH_ROUND_A, cell, s), *path = dir ? cb_path_join(dir, "timing.jsonl") : NULL;
		struct cb_timing *more;
		struct cb_err e;
		int there = path && cb_is_dir(dir);

		free(dir);
		if (!path || !there) {
			free(path);
			if (!path)
				rc = cb_fail(err, "out of memory");
			break;
		}
		if (!cb_exists(path)) {
			free(path);
			continue;
		}
		if (!(more = realloc(ts, (nt + 1) * sizeof(*ts)))) {
			free(path);
			rc = cb_fail(err, "out of memory");
			break;
		}
		ts = more;
		if (cb_timing_load(path, &ts[nt], &e) < 0)
			*out = -1;
		else
			nt++;
		free(path);
	}
	for (i = 0; rc == 0 && *out >= 0 && i < nrows; i++) {
		int64_t *v = NULL, *more;
		size_t n = 0;
		for (j = 0; j < nt; j++)
			for (k = 0; k < ts[j].n; k++) {
				if (strcmp(ts[j].rows[k].row, rows[i]) != 0)
					continue;
				if (!(more = realloc(v, (n + ts[j].rows[k].n) * sizeof(*v)))) {
					free(v);
					rc = cb_fail(err, "out of memory");
					goto out;
				}
				v = more;
				memcpy(v + n, ts[j].rows[k].samples, ts[j].rows[k].n * sizeof(*v));
				n += ts[j].rows[k].n;
			}
		*out = n ? *out + cb_median_i64(v, n) : -1;
		free(v);
	}
out:
	for (j = 0; j < nt; j++)
		cb_timing_release(&ts[j]);
	free(ts);
	return rc;
}

/* Add ns to the other kernel of name in t (appended when new). */
static int add_other(struct cb_diff_time *tm, const char *name, int r, double ns)
{
	struct cb_diff_other *o;
	size_t i;
	int q;

	for (i = 0; i < tm->nother; i++)
		if (strcmp(tm->other[i].kernel, name) == 0) {
			tm->other[i].ns[r] += ns;
			return 0;
		}
	if (!(o = realloc(tm->other, (tm->nother + 1) * sizeof(*o))))
		return -1;
	tm->other = o;
	o = &tm->other[tm->nother];
	if (!(o->kernel = strdup(name)))
		return -1;
	for (q = 0; q < CB_NROLES; q++)
		o->ns[q] = tm->in[q] ? 0 : -1;
	o->ns[r] = ns;
	tm->nother++;
	return 0;
}

static int cmp_other(const void *x, const void *y)
{
	return strcmp(((const struct cb_diff_other *)x)->kernel, ((const struct cb_diff_other *)y)->kernel);
}

/* Whether variant is the variant in cell r of one of t's kernels. */
static int measured(const struct cb_diff_task *t, int r, const char *variant)
{
	size_t i;

	for (i = 0; variant && i < t->nk; i++)
		if (same_str(t->k[i].variant[r], variant))
			return 1;
	return 0;
}

/* The GPU time of each cell's kernels in its task, over the rows every
 * profiled cell has (the control's left out when it has none of them), and
 * where the time moved. */
static int attribute(const struct cb_diff *d, const char *tdir, struct cb_diff_task *t, const struct cb_topology *topo,
		     const struct cb_cell_kernels *ck, struct cb_err *err)
{
	struct cb_diff_time *tm = &t->time;
	const struct cb_cell_kernels *cells[CB_NROLES];
	struct cb_kernel_sums s;
	const char **rows = NULL;
	size_t nrows = 0, nc, i;
	int r, rc = -1;

	for (i = 0; i < t->nk; i++)
		for (r = 0; r < CB_NROLES; r++)
			t->k[i].ns[r] = -1;
	if (load_resources(d, tdir, t, err) < 0)
		return -1;
	for (r = 0; r < CB_NROLES; r++)
		tm->in[r] = ck[r].n > 0;
	if (!tm->in[CB_ROLE_BASELINE] || !tm->in[CB_ROLE_CANDIDATE])
		return 0;
	for (;;) {
		for (r = 0, nc = 0; r < CB_NROLES; r++)
			if (tm->in[r])
				cells[nc++] = &ck[r];
		free(rows);
		if (cb_cell_kernels_common(cells, nc, &rows, &nrows, err) < 0)
			return -1;
		if (nrows || !tm->in[CB_ROLE_CONTROL])
			break;
		tm->in[CB_ROLE_CONTROL] = 0;
	}
	if (!nrows) {
		free(rows);
		tm->in[CB_ROLE_BASELINE] = tm->in[CB_ROLE_CANDIDATE] = 0;
		return 0;
	}
	tm->known = 1;
	tm->rows = nrows;
	for (r = 0; r < CB_NROLES; r++) {
		tm->gpu_ns[r] = tm->timed_ns[r] = -1;
		if (!tm->in[r])
			continue;
		if (cb_kernel_sums_of(&ck[r], rows, nrows, &s, err) < 0)
			goto out;
		tm->gpu_ns[r] = s.total_ns;
		for (i = 0; i < t->nk; i++)
			if (t->k[i].variant[r])
				t->k[i].ns[r] = cb_kernel_sums_variant(&s, t->k[i].variant[r]);
		for (i = 0; i < s.n; i++)
			if (!measured(t, r, s.k[i].variant) && add_other(tm, cb_kernels_name(&topo[r], &s.k[i]), r, s.k[i].ns) < 0) {
				cb_kernel_sums_release(&s);
				cb_fail(err, "out of memory");
				goto out;
			}
		cb_kernel_sums_release(&s);
		if (timed_sum(tdir, cb_manifest_cell(&d->v->m, (enum cb_role)r)->name, rows, nrows, &tm->timed_ns[r], err) < 0)
			goto out;
	}
	if (tm->nother)
		qsort(tm->other, tm->nother, sizeof(*tm->other), cmp_other);
	rc = cb_time_moved_of(&ck[CB_ROLE_BASELINE], &ck[CB_ROLE_CANDIDATE], &topo[CB_ROLE_BASELINE],
			      &topo[CB_ROLE_CANDIDATE], &tm->moved, err);
out:
	free(rows);
	return rc;
}

/* Diff task t (its id set): verdict, cells' topology, kernels, ops, time. */
static int diff_task(const struct cb_diff *d, const struct cb_ttgir_counts *counts, struct cb_diff_task *t,
		     struct cb_err *err)
{
	struct cb_topology topo[CB_NROLES];
	struct cb_cell_kernels ck[CB_NROLES];
	long long sealed[CB_NROLES];
	int have_sealed = 0;
	char *tdir = cb_strdupf("%s/tasks/%s", d->v->root, t->id);
	struct found *f = NULL;
	size_t nf = 0, i;
	int r, rc = -1;

	memset(topo, 0, sizeof(topo));
	memset(ck, 0, sizeof(ck));
	if (!tdir)
		return cb_fail(err, "out of memory");
	if (task_verdict(d, tdir, t, sealed, &have_sealed, err) < 0 || scan_cells(d, counts, tdir, t, topo, err) < 0)
		goto out;
	if (!t->error && load_profiles(d, tdir, t, topo, ck, err) < 0)
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
		cb_fail(err, "its TTGIR counts %lld/%lld/%lld, its receipt (tasks/%s/task.json) sealed "
			"%lld/%lld/%lld: the IR is not what was accounted", t->count[CB_ROLE_BASELINE],
			t->count[CB_ROLE_CONTROL], t->count[CB_ROLE_CANDIDATE], t->id, sealed[CB_ROLE_BASELINE],
			sealed[CB_ROLE_CONTROL], sealed[CB_ROLE_CANDIDATE]);
		goto out;
	}
	if (!t->error && attribute(d, tdir, t, topo, ck, err) < 0)
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
		cb_fail(err, "%s: no task '%s' in this run (campaign.json lists %zu)", root, task, cs->ntasks);
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
	if (o->base && o->cand && !same_chain(o->base, o->cand)) {
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
