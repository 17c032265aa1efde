/* diff_time.c: a diffed task's GPU time (diff_time.h): each cell's
 * profiled replays, the kernels' resources, the timed medians beside them,
 * and where the time moved. */
#include "diff_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account/stats.h"
#include "account/timing.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/runroot.h"
#include "ir/topology.h"

/* A message about a file under the run root, without the root's path. */
char *cb_diff_relative_msg(const struct cb_diff *d, const char *msg)
{
	size_t n = strlen(d->v->root);

	return strdup(strncmp(msg, d->v->root, n) == 0 && msg[n] == '/' ? msg + n + 1 : msg);
}

/* Each cell's profiled replays into ck; in a derived run scoped by time,
 * each cell's topology scoped so, as reaccount scoped it (an X or K task
 * keeps the sealed floor). A cell that cannot be scoped gives the task no
 * topology to compare. */
int cb_diff_load_profiles(const struct cb_diff *d, const char *tdir, struct cb_diff_task *t, struct cb_topology *topo,
			  struct cb_cell_kernels *ck, struct cb_err *err)
{
	int r;

	for (r = 0; r < CB_NROLES; r++) {
		const char *cell = cb_manifest_cell(&d->v->m, (enum cb_role)r)->name;
		struct cb_kernel_sums s;

		if (cb_cell_kernels_load(tdir, cell, &ck[r], err) < 0)
			return -1;
		t->time.unjoined += ck[r].unjoined;
		if (ck[r].error && !t->time.error && !(t->time.error = cb_diff_relative_msg(d, ck[r].error)))
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
		char *path = cb_strdupf("%s/" CB_RUN_CELLS "/a-%s/%s", tdir, cb_manifest_cell(&d->v->m, (enum cb_role)r)->name,
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
			if (!t->time.error && !(t->time.error = cb_diff_relative_msg(d, e.msg)))
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
		char *dir = cb_session_dir(tdir, CB_PH_ROUND_A, cell, s), *path = dir ? cb_path_join(dir, CB_RUN_TIMING) : NULL;
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
		if (t->k[i].variant[r] && strcmp(t->k[i].variant[r], variant) == 0)
			return 1;
	return 0;
}

/* The GPU time of each cell's kernels in its task, over the rows every
 * profiled cell has (the control's left out when it has none of them), and
 * where the time moved. */
int cb_diff_attribute(const struct cb_diff *d, const char *tdir, struct cb_diff_task *t, const struct cb_topology *topo,
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
