/* topology.c: topology accounting (docs/design.md section 9): a cell's IR joined to
 * its launch index (ir/index.tsv), counted (ttgir.c) and scoped to the
 * variants launched more than the floor. */
#include "topology.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/strindex.h"

/* ---- ir/index.tsv ------------------------------------------------------ */

#define INDEX_NCOLS 4
static const char *const index_columns[INDEX_NCOLS] = {
	"variant", "kernel", "launches", "tuning_launches"
};

/* Longest field quoted in a message; the rest is cut. */
#define QUOTE_MAX 64

static int quote_len(size_t n)
{
	return (int)(n < QUOTE_MAX ? n : QUOTE_MAX);
}

struct field {
	const char *p;
	size_t n;
};

/* Split the line p[0..n) on tabs into f[0..INDEX_NCOLS); refuses a line
 * with fewer or more fields, naming the first missing column. */
static int split_line(const char *p, size_t n, struct field f[INDEX_NCOLS], const char *path,
		      size_t line, struct cb_err *err)
{
	const char *end = p + n;
	size_t i;

	for (i = 0; i < INDEX_NCOLS; i++) {
		const char *tab = memchr(p, '\t', (size_t)(end - p));
		f[i].p = p;
		f[i].n = (size_t)((tab ? tab : end) - p);
		if (!tab && i + 1 < INDEX_NCOLS)
			return cb_fail(err, "%s:%zu: missing column '%s'", path, line, index_columns[i + 1]);
		if (tab && i + 1 == INDEX_NCOLS)
			return cb_fail(err, "%s:%zu: extra column after '%s'", path, line,
				       index_columns[INDEX_NCOLS - 1]);
		p = tab ? tab + 1 : end;
	}
	return 0;
}

/* A launch count: decimal digits only, no sign, fitting a long long. */
static int parse_count(const struct field *f, const char *col, long long *out, const char *path,
		       size_t line, struct cb_err *err)
{
	long long v = 0;
	size_t i;

	if (!f->n)
		return cb_fail(err, "%s:%zu: %s: '' is not a count >= 0", path, line, col);
	for (i = 0; i < f->n; i++) {
		int d = f->p[i] - '0';
		if (d < 0 || d > 9)
			return cb_fail(err, "%s:%zu: %s: '%.*s' is not a count >= 0", path, line, col,
				       quote_len(f->n), f->p);
		if (v > (LLONG_MAX - d) / 10)
			return cb_fail(err, "%s:%zu: %s: '%.*s' is too large", path, line, col,
				       quote_len(f->n), f->p);
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* The first variant listed twice refused, in O(n log n) (a cell may have
 * compiled a hundred thousand variants). */
static int check_unique(const struct cb_index *ix, const char *path, struct cb_err *err)
{
	const char **names = calloc(ix->n ? ix->n : 1, sizeof(*names));
	struct cb_strindex x;
	size_t i, dup, first;
	int rc;

	if (!names)
		return cb_fail(err, "%s: out of memory", path);
	for (i = 0; i < ix->n; i++)
		names[i] = ix->rows[i].variant;
	rc = cb_strindex_init(&x, names, ix->n, err);
	if (rc == 0 && cb_strindex_first_dup(&x, &dup, &first)) {
		const char *v = ix->rows[dup].variant;
		rc = cb_fail(err, "%s:%zu: variant '%.*s' is already listed at line %zu", path, ix->rows[dup].line,
			     quote_len(strlen(v)), v, ix->rows[first].line);
	}
	cb_strindex_release(&x);
	free(names);
	return rc;
}

/* Check one data row's fields and append it to ix (which has room). */
static int add_row(struct cb_index *ix, const struct field f[INDEX_NCOLS], const char *path,
		   size_t line, struct cb_err *err)
{
	struct cb_index_row *r = &ix->rows[ix->n];
	size_t i;

	for (i = 0; i < 2; i++)
		if (!f[i].n)
			return cb_fail(err, "%s:%zu: %s is empty", path, line, index_columns[i]);
	if (memchr(f[0].p, '/', f[0].n) || (f[0].n == 1 && f[0].p[0] == '.') ||
	    (f[0].n == 2 && f[0].p[0] == '.' && f[0].p[1] == '.'))
		return cb_fail(err, "%s:%zu: variant '%.*s' is not a directory name", path, line,
			       quote_len(f[0].n), f[0].p);
	r->variant = strndup(f[0].p, f[0].n);
	r->kernel = strndup(f[1].p, f[1].n);
	r->line = line;
	if (!r->variant || !r->kernel) {
		free(r->variant);
		free(r->kernel);
		r->variant = r->kernel = NULL;
		return cb_fail(err, "%s: out of memory", path);
	}
	/* Kept from here on, so that a duplicate of it is named before its
	 * counts are (cb_index_parse). */
	ix->n++;
	if (parse_count(&f[2], index_columns[2], &r->launches, path, line, err) < 0 ||
	    parse_count(&f[3], index_columns[3], &r->tuning_launches, path, line, err) < 0)
		return -1;
	return 0;
}

int cb_index_parse(const char *buf, size_t len, const char *path, struct cb_index *ix,
		   struct cb_err *err)
{
	const char *p = buf, *end = buf + len;
	size_t line = 0, nlines = 0;

	memset(ix, 0, sizeof(*ix));
	if (!len)
		return cb_fail(err, "%s: empty file, expected the header %s, %s, %s, %s (tab-separated)",
			       path, index_columns[0], index_columns[1], index_columns[2], index_columns[3]);
	for (p = buf; p < end; p++)
		nlines += *p == '\n';
	ix->rows = calloc(nlines + 1, sizeof(*ix->rows));
	if (!ix->rows)
		return cb_fail(err, "%s: out of memory", path);
	for (p = buf; p < end; ) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		struct field f[INDEX_NCOLS];
		size_t i;

		line++;
		if (eol > p && eol[-1] == '\r')
			eol--;
		if (memchr(p, '\0', (size_t)(eol - p))) {
			cb_fail(err, "%s:%zu: NUL byte inside a line", path, line);
			goto fail;
		}
		if (memchr(p, '\r', (size_t)(eol - p))) {
			cb_fail(err, "%s:%zu: carriage return inside a line", path, line);
			goto fail;
		}
		if (eol == p) {
			cb_fail(err, "%s:%zu: empty line", path, line);
			goto fail;
		}
		if (split_line(p, (size_t)(eol - p), f, path, line, err) < 0)
			goto fail;
		if (line == 1) {
			for (i = 0; i < INDEX_NCOLS; i++)
				if (f[i].n != strlen(index_columns[i]) || memcmp(f[i].p, index_columns[i], f[i].n)) {
					cb_fail(err, "%s:1: column %zu is '%.*s', expected '%s'", path, i + 1,
						quote_len(f[i].n), f[i].p, index_columns[i]);
					goto fail;
				}
		} else if (add_row(ix, f, path, line, err) < 0) {
			goto fail;
		}
		p = nl ? nl + 1 : end;
	}
	if (check_unique(ix, path, err) < 0) {
		cb_index_release(ix);
		return -1;
	}
	return 0;
fail:
	/* The first error in the file is the one named: a variant listed
	 * twice in a row before this one (or in this one, whose variant is
	 * checked before its counts) comes first. */
	if (ix->n) {
		struct cb_err dup;
		if (check_unique(ix, path, &dup) < 0)
			*err = dup;
	}
	cb_index_release(ix);
	return -1;
}

int cb_index_load(const char *path, struct cb_index *ix, struct cb_err *err)
{
	char *buf;
	size_t len;
	int rc;

	memset(ix, 0, sizeof(*ix));
	if (cb_read_file(path, &buf, &len, err) < 0)
		return -1;
	rc = cb_index_parse(buf, len, path, ix, err);
	free(buf);
	return rc;
}

void cb_index_release(struct cb_index *ix)
{
	size_t i;

	if (!ix)
		return;
	for (i = 0; i < ix->n; i++) {
		free(ix->rows[i].variant);
		free(ix->rows[i].kernel);
	}
	free(ix->rows);
	memset(ix, 0, sizeof(*ix));
}

/* ---- joining a cell's IR with its index --------------------------------- */


/* dir relative to pre's root, or NULL when pre has no listing or dir does
 * not lie under its root (spelled as the verify spelled its paths). */
static const char *listed_rel(const struct cb_ttgir_counts *pre, const char *dir)
{
	size_t n;

	if (!pre || !pre->root)
		return NULL;
	n = strlen(pre->root);
	return strncmp(dir, pre->root, n) == 0 && dir[n] == '/' && dir[n + 1] ? dir + n + 1 : NULL;
}

/* The path of a listing's entry, for cb_lower_bound. */
static const char *entry_rel(const void *e)
{
	return ((const struct cb_entry *)e)->rel;
}

/* The names in directory rel of a listing, sorted as cb_list_dir sorts
 * them (all of one directory's children share its prefix, so their order
 * in the listing is their names' order), directories only when dirs_only.
 * A rel that is not a listed directory fails as opening it would. */
static int list_listed(const struct cb_tree *t, const char *dir, const char *rel, int dirs_only,
		       char ***names, size_t *n, struct cb_err *err)
{
	size_t at = cb_lower_bound(t->v, t->n, sizeof(*t->v), entry_rel, rel), len = strlen(rel), cnt = 0, i;
	char **v;

	*names = NULL;
	*n = 0;
	if (at == t->n || strcmp(t->v[at].rel, rel) != 0)
		return cb_fail(err, "%s: %s", dir, strerror(ENOENT));
	if (t->v[at].kind != CB_ENT_DIR)
		return cb_fail(err, "%s: %s", dir, strerror(ENOTDIR));
	for (i = at + 1; i < t->n && strncmp(t->v[i].rel, rel, len) == 0; i++)
		cnt += t->v[i].rel[len] == '/';
	v = calloc(cnt ? cnt : 1, sizeof(*v));
	if (!v)
		return cb_fail(err, "%s: out of memory", dir);
	for (i = at + 1; i < t->n && strncmp(t->v[i].rel, rel, len) == 0; i++) {
		const char *name = t->v[i].rel + len + 1;
		if (t->v[i].rel[len] != '/' || strchr(name, '/') ||
		    (dirs_only && t->v[i].kind != CB_ENT_DIR))
			continue;
		if (!(v[*n] = strdup(name))) {
			cb_strv_free(v, *n);
			*n = 0;
			return cb_fail(err, "%s: out of memory", dir);
		}
		(*n)++;
	}
	*names = v;
	return 0;
}

/* The names in dir, sorted; only its directories (not links or files)
 * when dirs_only. From pre's listing when dir lies under pre's root, else
 * from the file system. */
static int list_entries(const struct cb_ttgir_counts *pre, const char *dir, int dirs_only,
			char ***out, size_t *n, struct cb_err *err)
{
	const char *rel = listed_rel(pre, dir);
	char **names;
	size_t cnt, i, k = 0;

	if (rel)
		return list_listed(&pre->listing, dir, rel, dirs_only, out, n, err);
	if (!dirs_only)
		return cb_list_dir(dir, out, n, err);
	if (cb_list_dir(dir, &names, &cnt, err) < 0)
		return -1;
	for (i = 0; i < cnt; i++) {
		char *path = cb_path_join(dir, names[i]);
		struct stat st;

		if (!path) {
			cb_strv_free(names + i, cnt - i);
			cb_strv_free(names, k);
			return cb_fail(err, "%s: out of memory", dir);
		}
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			names[k++] = names[i];
		else
			free(names[i]);
		free(path);
	}
	*out = names;
	*n = k;
	return 0;
}

/* Sum the op over dir's *.ttgir files; *nfiles says how many there were.
 * A file pre counted is not read again; cb_ttgir_count_file refuses
 * anything but a regular file, links included. */
static int count_variant(const char *dir, const char *op, const struct cb_ttgir_counts *pre,
			 long long *count, size_t *nfiles, struct cb_err *err)
{
	char **names;
	size_t n, i;
	int rc = 0;

	*count = 0;
	*nfiles = 0;
	if (list_entries(pre, dir, 0, &names, &n, err) < 0)
		return -1;
	for (i = 0; i < n && rc == 0; i++) {
		char *path;
		long long c;

		if (!cb_is_ttgir_name(names[i]))
			continue;
		path = cb_path_join(dir, names[i]);
		if (!path)
			rc = cb_fail(err, "%s: out of memory", dir);
		else if (cb_ttgir_counts_find(pre, op, path, &c) == 0 ||
			 (rc = cb_ttgir_count_file(path, op, &c, err)) == 0) {
			*count += c;
			(*nfiles)++;
		}
		free(path);
	}
	cb_strv_free(names, n);
	return rc;
}

static int cmp_row(const void *a, const void *b)
{
	return strcmp(((const struct cb_index_row *)a)->variant, ((const struct cb_index_row *)b)->variant);
}

/* Record one reason the topology cannot be joined (t has room). */
static int add_unjoinable(struct cb_topology *t, const char *what, const char *name,
			  const char *why, struct cb_err *err)
{
	char *s = cb_strdupf("%s %s: %s", what, name, why);

	if (!s)
		return cb_fail(err, "out of memory");
	t->unjoinable[t->nunjoinable++] = s;
	t->joinable = 0;
	return 0;
}

/* Move row r into t's variants with its count (t has room). */
static void add_variant(struct cb_topology *t, struct cb_index_row *r, long long count)
{
	struct cb_variant *v = &t->v[t->nv++];

	v->name = r->variant;
	v->kernel = r->kernel;
	r->variant = r->kernel = NULL;
	v->launches = r->launches;
	v->tuning_launches = r->tuning_launches;
	v->count = count;
}

/* Merge-join the sorted variant directories with the index rows (sorted
 * here), so both kinds of reasons come out in variant order. */
static int join(struct cb_topology *t, const char *ir_dir, char **dirs, size_t nd,
		struct cb_index *ix, const char *op, const struct cb_ttgir_counts *pre,
		struct cb_err *err)
{
	size_t i = 0, j = 0;

	if (ix->n)
		qsort(ix->rows, ix->n, sizeof(*ix->rows), cmp_row);
	t->v = calloc(ix->n + 1, sizeof(*t->v));
	t->unjoinable = calloc(nd + ix->n + 1, sizeof(*t->unjoinable));
	if (!t->v || !t->unjoinable)
		return cb_fail(err, "out of memory");
	t->joinable = 1;
	while (i < nd || j < ix->n) {
		int c = i == nd ? 1 : j == ix->n ? -1 : strcmp(dirs[i], ix->rows[j].variant);
		long long count;
		size_t nfiles;
		char *vdir;
		int rc;

		if (c < 0) {
			if (add_unjoinable(t, "variant", dirs[i++], "no row in ir/index.tsv", err) < 0)
				return -1;
			continue;
		}
		if (c > 0) {
			if (add_unjoinable(t, "row", ix->rows[j++].variant, "no IR", err) < 0)
				return -1;
			continue;
		}
		vdir = cb_path_join(ir_dir, dirs[i]);
		if (!vdir)
			return cb_fail(err, "out of memory");
		rc = count_variant(vdir, op, pre, &count, &nfiles, err);
		free(vdir);
		if (rc < 0)
			return -1;
		if (!nfiles) {
			if (add_unjoinable(t, "row", ix->rows[j].variant, "no IR", err) < 0)
				return -1;
		} else {
			add_variant(t, &ix->rows[j], count);
		}
		i++;
		j++;
	}
	return 0;
}

int cb_topology_scan(const char *cell_dir, const char *op, long long floor,
		     struct cb_topology *t, struct cb_err *err)
{
	return cb_topology_scan_counted(cell_dir, op, floor, NULL, t, err);
}

int cb_topology_scan_counted(const char *cell_dir, const char *op, long long floor,
			     const struct cb_ttgir_counts *pre, struct cb_topology *t,
			     struct cb_err *err)
{
	struct cb_index ix;
	char *ir_dir, *index_path;
	char **dirs = NULL;
	size_t nd = 0;
	int rc = -1;

	memset(t, 0, sizeof(*t));
	memset(&ix, 0, sizeof(ix));
	if (cb_topology_check_op(op, err) < 0)
		return -1;
	ir_dir = cb_path_join(cell_dir, "ir");
	index_path = ir_dir ? cb_path_join(ir_dir, "index.tsv") : NULL;
	if (!index_path)
		cb_fail(err, "out of memory");
	else if (cb_index_load(index_path, &ix, err) == 0 && list_entries(pre, ir_dir, 1, &dirs, &nd, err) == 0)
		rc = join(t, ir_dir, dirs, nd, &ix, op, pre, err);
	if (rc == 0)
		cb_topology_rescope(t, floor);
	else
		cb_topology_release(t);
	cb_strv_free(dirs, nd);
	cb_index_release(&ix);
	free(index_path);
	free(ir_dir);
	return rc;
}

void cb_topology_rescope(struct cb_topology *t, long long floor)
{
	size_t i;

	t->floor = floor;
	t->scoped = t->total = 0;
	for (i = 0; i < t->nv; i++) {
		struct cb_variant *v = &t->v[i];
		v->scoped = v->launches > floor;
		t->total += v->count;
		if (v->scoped)
			t->scoped += v->count;
	}
}

void cb_topology_release(struct cb_topology *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nv; i++) {
		free(t->v[i].name);
		free(t->v[i].kernel);
	}
	free(t->v);
	cb_strv_free(t->unjoinable, t->nunjoinable);
	memset(t, 0, sizeof(*t));
}

/* ---- JSON and the command ---------------------------------------------- */

json_t *cb_topology_json(const struct cb_topology *t)
{
	json_t *j = json_object(), *vars = json_array(), *excl = json_array(), *unj = json_array();
	int bad = !j || !vars || !excl || !unj;
	size_t i;

	for (i = 0; !bad && i < t->nunjoinable; i++)
		bad = json_array_append_new(unj, json_string(t->unjoinable[i])) < 0;
	for (i = 0; !bad && i < t->nv; i++) {
		const struct cb_variant *v = &t->v[i];
		bad = json_array_append_new(vars, json_pack("{s:s, s:s, s:I, s:I, s:I, s:b}",
			"variant", v->name, "kernel", v->kernel, "launches", (json_int_t)v->launches,
			"tuning_launches", (json_int_t)v->tuning_launches, "count", (json_int_t)v->count,
			"scoped", v->scoped)) < 0;
		if (!bad && !v->scoped)
			bad = json_array_append_new(excl, json_string(v->name)) < 0;
	}
	if (!bad)
		bad = json_object_set_new(j, "floor", json_integer(t->floor)) < 0 ||
		      json_object_set_new(j, "joinable", json_boolean(t->joinable)) < 0 ||
		      json_object_set_new(j, "scoped", t->joinable ? json_integer(t->scoped) : json_null()) < 0 ||
		      json_object_set_new(j, "total", t->joinable ? json_integer(t->total) : json_null()) < 0 ||
		      json_object_set(j, "unjoinable", unj) < 0 || json_object_set(j, "variants", vars) < 0 ||
		      json_object_set(j, "excluded", excl) < 0;
	json_decref(unj);
	json_decref(vars);
	json_decref(excl);
	if (bad) {
		json_decref(j);
		return NULL;
	}
	return j;
}
