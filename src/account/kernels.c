/* kernels.c: kernels.jsonl and ir/resources.tsv read, a cell's kernels
 * summed over its sessions and rows, and where a task's GPU time moved
 * (kernels.h). */
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/runroot.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "campaign/matrix.h"

/* ---- kernels.jsonl ---------------------------------------------------------- */

static void use_free(struct cb_kernel_use *u)
{
	free(u->kernel);
	free(u->variant);
}

/* Free what a struct cb_kernel_row holds (void *: a cb_json_row_kind's
 * release). */
static void row_free(void *row)
{
	struct cb_kernel_row *r = row;
	size_t i;

	for (i = 0; i < r->nk; i++)
		use_free(&r->k[i]);
	free(r->k);
	free(r->row);
	free(r->error);
	memset(r, 0, sizeof(*r));
}

/* A count of a line: an integer >= min. */
static int line_count(const json_t *obj, const char *key, long long min, long long *out, const char *where,
		      const char *path, size_t lineno, struct cb_err *err)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v) || json_integer_value(v) < min)
		return cb_fail(err, "%s:%zu: %s%s: expected an integer >= %lld", path, lineno, where, key, min);
	*out = (long long)json_integer_value(v);
	return 0;
}

/* The kernels of one line into row (which has none yet). */
static int line_kernels(const json_t *ks, const char *path, size_t lineno, struct cb_kernel_row *row,
			struct cb_err *err)
{
	const json_t *k;
	size_t i;

	if (!json_is_array(ks))
		return cb_fail(err, "%s:%zu: kernels: expected an array", path, lineno);
	row->k = calloc(json_array_size(ks) + 1, sizeof(*row->k));
	if (!row->k)
		return cb_fail(err, "%s:%zu: out of memory", path, lineno);
	json_array_foreach(ks, i, k) {
		struct cb_kernel_use *u = &row->k[row->nk];
		const json_t *variant = json_object_get(k, "variant");
		char where[48];

		snprintf(where, sizeof(where), "kernels[%zu].", i);
		if (!json_is_object(k) || !cb_json_str(k, "kernel") || !*cb_json_str(k, "kernel"))
			return cb_fail(err, "%s:%zu: %skernel: expected a name", path, lineno, where);
		if (!json_is_null(variant) && (!json_is_string(variant) || !*json_string_value(variant)))
			return cb_fail(err, "%s:%zu: %svariant: expected a variant name or null", path, lineno, where);
		if (line_count(k, "launches", 0, &u->launches, where, path, lineno, err) < 0 ||
		    line_count(k, "total_ns", 0, &u->total_ns, where, path, lineno, err) < 0)
			return -1;
		u->kernel = strdup(cb_json_str(k, "kernel"));
		u->variant = json_is_string(variant) ? strdup(json_string_value(variant)) : NULL;
		row->nk++;
		if (!u->kernel || (json_is_string(variant) && !u->variant))
			return cb_fail(err, "%s:%zu: out of memory", path, lineno);
	}
	return 0;
}

/* Parse one line (NUL-terminated) into out, a struct cb_kernel_row. */
static int kernel_line(const char *line, const char *path, size_t lineno, void *out, struct cb_err *err)
{
	struct cb_kernel_row *row = out;
	json_error_t je;
	json_t *j = json_loads(line, JSON_REJECT_DUPLICATES, &je);
	const json_t *error;
	int rc = -1;

	memset(row, 0, sizeof(*row));
	if (!j)
		return cb_fail(err, "%s:%zu: %s", path, lineno, je.text);
	error = json_object_get(j, "error");
	if (!json_is_object(j) || !cb_json_str(j, "row") || !*cb_json_str(j, "row")) {
		cb_fail(err, "%s:%zu: row: expected a row name", path, lineno);
	} else if (!error || (!json_is_null(error) && !json_is_string(error))) {
		cb_fail(err, "%s:%zu: error: expected a string or null", path, lineno);
	} else if (line_count(j, "calls", 1, &row->calls, "", path, lineno, err) == 0 &&
		   line_count(j, "span_ns", 0, &row->span_ns, "", path, lineno, err) == 0 &&
		   line_kernels(json_object_get(j, "kernels"), path, lineno, row, err) == 0) {
		row->row = strdup(cb_json_str(j, "row"));
		row->error = json_is_string(error) ? strdup(json_string_value(error)) : NULL;
		rc = row->row && (!json_is_string(error) || row->error) ? 0 : cb_fail(err, "%s: out of memory", path);
	}
	json_decref(j);
	return rc;
}

/* A row's name, for cb_json_rows. */
static const char *kernel_row_name(const void *row)
{
	return ((const struct cb_kernel_row *)row)->row;
}

/* A row of kernels.jsonl, as cb_json_rows reads one. */
static const struct cb_json_row_kind kernel_rows = {
	.size = sizeof(struct cb_kernel_row), .parse = kernel_line, .release = row_free, .name = kernel_row_name
};

int cb_kernel_file_parse(const char *data, size_t len, const char *path, struct cb_kernel_file *f,
			 struct cb_err *err)
{
	void *rows;

	memset(f, 0, sizeof(*f));
	if (cb_json_rows(data, len, path, &kernel_rows, &rows, &f->n, err) < 0)
		return -1;
	f->rows = rows;
	return 0;
}

int cb_kernel_file_load(const char *path, struct cb_kernel_file *f, struct cb_err *err)
{
	char *buf;
	size_t len;
	int rc;

	memset(f, 0, sizeof(*f));
	if (cb_read_file(path, &buf, &len, err) < 0)
		return -1;
	rc = cb_kernel_file_parse(buf, len, path, f, err);
	free(buf);
	return rc;
}

void cb_kernel_file_release(struct cb_kernel_file *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->n; i++)
		row_free(&f->rows[i]);
	free(f->rows);
	memset(f, 0, sizeof(*f));
}

/* ---- a cell over its sessions -------------------------------------------- */

/* Whether two variants, either NULL, are the same. */
static int same_variant(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Kernel, then variant (NULL first). */
static int cmp_names(const char *ka, const char *va, const char *kb, const char *vb)
{
	int c = strcmp(ka, kb);

	if (c || same_variant(va, vb))
		return c;
	return !va ? -1 : !vb ? 1 : strcmp(va, vb);
}

/* Add one joined replay of a row to its row in ck (the row is added when new). */
static int add_replay(struct cb_cell_kernels *ck, const struct cb_kernel_row *in)
{
	struct cb_kernel_row *row = NULL;
	size_t i, j;

	for (i = 0; i < ck->n && !row; i++)
		if (strcmp(ck->rows[i].row, in->row) == 0)
			row = &ck->rows[i];
	if (!row) {
		struct cb_kernel_row *rows = realloc(ck->rows, (ck->n + 1) * sizeof(*rows));
		if (!rows)
			return -1;
		ck->rows = rows;
		row = &ck->rows[ck->n++];
		memset(row, 0, sizeof(*row));
		if (!(row->row = strdup(in->row)))
			return -1;
	}
	row->calls += in->calls;
	row->span_ns += in->span_ns;
	for (i = 0; i < in->nk; i++) {
		const struct cb_kernel_use *u = &in->k[i];
		struct cb_kernel_use *to = NULL, *more;
		for (j = 0; j < row->nk && !to; j++)
			if (strcmp(row->k[j].kernel, u->kernel) == 0 && same_variant(row->k[j].variant, u->variant))
				to = &row->k[j];
		if (!to) {
			if (!(more = realloc(row->k, (row->nk + 1) * sizeof(*more))))
				return -1;
			row->k = more;
			to = &row->k[row->nk++];
			memset(to, 0, sizeof(*to));
			to->kernel = strdup(u->kernel);
			to->variant = u->variant ? strdup(u->variant) : NULL;
			if (!to->kernel || (u->variant && !to->variant))
				return -1;
		}
		to->launches += u->launches;
		to->total_ns += u->total_ns;
	}
	return 0;
}

static int cmp_row(const void *x, const void *y)
{
	return strcmp(((const struct cb_kernel_row *)x)->row, ((const struct cb_kernel_row *)y)->row);
}

static int cmp_use(const void *x, const void *y)
{
	const struct cb_kernel_use *a = x, *b = y;

	return cmp_names(a->kernel, a->variant, b->kernel, b->variant);
}

int cb_cell_kernels_load(const char *task_dir, const char *cell, struct cb_cell_kernels *ck, struct cb_err *err)
{
	int k;
	size_t i;

	memset(ck, 0, sizeof(*ck));
	for (k = 1; !ck->error; k++) {
		char *dir = cb_session_dir(task_dir, CB_PH_ROUND_A, cell, k), *path;
		struct cb_kernel_file f;
		struct cb_err e;

		if (!dir)
			goto oom;
		if (!cb_is_dir(dir)) {
			free(dir);
			break;
		}
		path = cb_path_join(dir, CB_KERNELS_FILE);
		free(dir);
		if (!path)
			goto oom;
		if (!cb_exists(path)) {
			free(path);
			continue;
		}
		ck->present = 1;
		if (cb_kernel_file_load(path, &f, &e) < 0) {
			free(path);
			if (!(ck->error = strdup(e.msg)))
				goto oom;
			break;
		}
		free(path);
		ck->sessions++;
		for (i = 0; i < f.n; i++) {
			if (f.rows[i].error)
				ck->unjoined++;
			else if (add_replay(ck, &f.rows[i]) < 0) {
				cb_kernel_file_release(&f);
				goto oom;
			}
		}
		cb_kernel_file_release(&f);
	}
	if (ck->error) {
		/* an unreadable file: the cell counts as not profiled */
		for (i = 0; i < ck->n; i++)
			row_free(&ck->rows[i]);
		free(ck->rows);
		ck->rows = NULL;
		ck->n = 0;
	}
	for (i = 0; i < ck->n; i++)
		qsort(ck->rows[i].k, ck->rows[i].nk, sizeof(*ck->rows[i].k), cmp_use);
	if (ck->n)
		qsort(ck->rows, ck->n, sizeof(*ck->rows), cmp_row);
	return 0;
oom:
	cb_cell_kernels_release(ck);
	return cb_fail(err, "out of memory");
}

void cb_cell_kernels_release(struct cb_cell_kernels *ck)
{
	size_t i;

	if (!ck)
		return;
	for (i = 0; i < ck->n; i++)
		row_free(&ck->rows[i]);
	free(ck->rows);
	free(ck->error);
	memset(ck, 0, sizeof(*ck));
}

/* The row of ck named row (ck's rows are sorted), or NULL. */
static const struct cb_kernel_row *find_row(const struct cb_cell_kernels *ck, const char *row)
{
	struct cb_kernel_row key;

	memset(&key, 0, sizeof(key));
	key.row = (char *)row;
	return ck->n ? bsearch(&key, ck->rows, ck->n, sizeof(*ck->rows), cmp_row) : NULL;
}

int cb_cell_kernels_common(const struct cb_cell_kernels *const *cells, size_t n, const char ***rows,
			   size_t *nrows, struct cb_err *err)
{
	size_t i, c;

	*nrows = 0;
	*rows = calloc(n && cells[0]->n ? cells[0]->n : 1, sizeof(**rows));
	if (!*rows)
		return cb_fail(err, "out of memory");
	for (i = 0; n && i < cells[0]->n; i++) {
		int all = 1;
		for (c = 1; c < n && all; c++)
			all = find_row(cells[c], cells[0]->rows[i].row) != NULL;
		if (all)
			(*rows)[(*nrows)++] = cells[0]->rows[i].row;
	}
	return 0;
}

/* ---- sums over rows ------------------------------------------------------------ */

static int cmp_time(const void *x, const void *y)
{
	const struct cb_kernel_time *a = x, *b = y;

	return cmp_names(a->kernel, a->variant, b->kernel, b->variant);
}

/* Add ns to the entry of (kernel, variant) in s, which has room for one more. */
static int add_time(struct cb_kernel_sums *s, const char *kernel, const char *variant, double ns)
{
	struct cb_kernel_time *k;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->k[i].kernel, kernel) == 0 && same_variant(s->k[i].variant, variant)) {
			s->k[i].ns += ns;
			return 0;
		}
	k = &s->k[s->n++];
	k->kernel = strdup(kernel);
	k->variant = variant ? strdup(variant) : NULL;
	k->ns = ns;
	return !k->kernel || (variant && !k->variant) ? -1 : 0;
}

int cb_kernel_sums_of(const struct cb_cell_kernels *ck, const char *const *rows, size_t nrows,
		      struct cb_kernel_sums *s, struct cb_err *err)
{
	size_t cap = 0, i, j, n = rows ? nrows : ck->n;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < ck->n; i++)
		cap += ck->rows[i].nk;
	if (!(s->k = calloc(cap + 1, sizeof(*s->k))))
		return cb_fail(err, "out of memory");
	for (i = 0; i < n; i++) {
		const struct cb_kernel_row *r = rows ? find_row(ck, rows[i]) : &ck->rows[i];
		if (!r)
			continue;
		s->rows++;
		s->span_ns += (double)r->span_ns / (double)r->calls;
		for (j = 0; j < r->nk; j++) {
			double ns = (double)r->k[j].total_ns / (double)r->calls;
			s->total_ns += ns;
			if (add_time(s, r->k[j].kernel, r->k[j].variant, ns) < 0) {
				cb_kernel_sums_release(s);
				return cb_fail(err, "out of memory");
			}
		}
	}
	if (s->n)
		qsort(s->k, s->n, sizeof(*s->k), cmp_time);
	return 0;
}

void cb_kernel_sums_release(struct cb_kernel_sums *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		free(s->k[i].kernel);
		free(s->k[i].variant);
	}
	free(s->k);
	memset(s, 0, sizeof(*s));
}

/* ---- scope by time ----------------------------------------------------------------- */

double cb_kernel_sums_variant(const struct cb_kernel_sums *s, const char *variant)
{
	double ns = 0;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->k[i].variant && strcmp(s->k[i].variant, variant) == 0)
			ns += s->k[i].ns;
	return ns;
}

void cb_kernels_scope_topology(struct cb_topology *t, const struct cb_kernel_sums *s, long long share_ppm)
{
	size_t i;

	t->scoped = t->total = 0;
	for (i = 0; i < t->nv; i++) {
		struct cb_variant *v = &t->v[i];
		v->scoped = cb_kernel_sums_variant(s, v->name) * 1e6 >= (double)share_ppm * s->total_ns;
		t->total += v->count;
		if (v->scoped)
			t->scoped += v->count;
	}
}

/* ---- where the time moved ---------------------------------------------------------- */

const char *cb_kernels_name(const struct cb_topology *t, const struct cb_kernel_time *k)
{
	size_t i;

	for (i = 0; k->variant && i < t->nv; i++)
		if (strcmp(t->v[i].name, k->variant) == 0)
			return t->v[i].kernel;
	return k->kernel;
}

/* The topology ops of the measured variants of kernel in t. */
static long long kernel_converts(const struct cb_topology *t, const char *kernel)
{
	long long n = 0;
	size_t i;

	for (i = 0; i < t->nv; i++)
		if (t->v[i].scoped && strcmp(t->v[i].kernel, kernel) == 0)
			n += t->v[i].count;
	return n;
}

/* One kernel name's time in both cells. */
struct moved {
	const char *kernel;
	double base, cand;
};

/* Add ns to kernel's entry of m (room for one more), on side cand or not. */
static void add_moved(struct moved *m, size_t *n, const char *kernel, double ns, int cand)
{
	size_t i;

	for (i = 0; i < *n && strcmp(m[i].kernel, kernel) != 0; i++)
		;
	if (i == *n) {
		m[(*n)++] = (struct moved){ kernel, 0, 0 };
	}
	if (cand)
		m[i].cand += ns;
	else
		m[i].base += ns;
}

static int cmp_moved(const void *x, const void *y)
{
	return strcmp(((const struct moved *)x)->kernel, ((const struct moved *)y)->kernel);
}

int cb_time_moved_of(const struct cb_cell_kernels *base, const struct cb_cell_kernels *cand,
		     const struct cb_topology *tb, const struct cb_topology *tk, struct cb_time_moved *m,
		     struct cb_err *err)
{
	const struct cb_cell_kernels *const cells[2] = { base, cand };
	struct cb_kernel_sums sb, sk;
	struct moved *by = NULL;
	const char **rows = NULL;
	size_t nrows = 0, n = 0, i;
	double best = 0;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	memset(&sb, 0, sizeof(sb));
	memset(&sk, 0, sizeof(sk));
	if (cb_cell_kernels_common(cells, 2, &rows, &nrows, err) < 0)
		return -1;
	if (!nrows) {
		free(rows);
		return 0;
	}
	if (cb_kernel_sums_of(base, rows, nrows, &sb, err) < 0 || cb_kernel_sums_of(cand, rows, nrows, &sk, err) < 0)
		goto out;
	if (!(by = calloc(sb.n + sk.n + 1, sizeof(*by)))) {
		cb_fail(err, "out of memory");
		goto out;
	}
	for (i = 0; i < sb.n; i++)
		add_moved(by, &n, cb_kernels_name(tb, &sb.k[i]), sb.k[i].ns, 0);
	for (i = 0; i < sk.n; i++)
		add_moved(by, &n, cb_kernels_name(tk, &sk.k[i]), sk.k[i].ns, 1);
	qsort(by, n, sizeof(*by), cmp_moved);
	m->known = 1;
	m->rows = nrows;
	m->base_ns = sb.total_ns;
	m->cand_ns = sk.total_ns;
	for (i = 0; i < n; i++) {
		double moved = by[i].base - by[i].cand;
		if (kernel_converts(tb, by[i].kernel) != kernel_converts(tk, by[i].kernel)) {
			m->changed++;
			continue;
		}
		m->unchanged_ns += moved;
		if (m->base_ns < m->cand_ns)
			moved = -moved;
		if (moved > best) {
			best = moved;
			free(m->top);
			if (!(m->top = strdup(by[i].kernel))) {
				cb_fail(err, "out of memory");
				goto out;
			}
		}
	}
	rc = 0;
out:
	if (rc < 0)
		cb_time_moved_release(m);
	free(by);
	free(rows);
	cb_kernel_sums_release(&sb);
	cb_kernel_sums_release(&sk);
	return rc;
}

void cb_time_moved_release(struct cb_time_moved *m)
{
	if (!m)
		return;
	free(m->top);
	memset(m, 0, sizeof(*m));
}

/* ---- ir/resources.tsv ------------------------------------------------------------- */

#define RES_NCOLS 7
static const char *const res_columns[RES_NCOLS] = {
	"variant", "kernel", "n_regs", "n_spills", "shared", "num_stages", "num_warps"
};

/* A resource field: decimal digits, or '-' for unknown (-1). */
static int res_value(const char *p, size_t n, long long *out)
{
	long long v = 0;
	size_t i;

	if (n == 1 && p[0] == '-') {
		*out = -1;
		return 0;
	}
	if (!n || n > 18)
		return -1;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	*out = v;
	return 0;
}

/* One line p[0..n) of the file into row (line >= 2) or checked as the header. */
static int res_line(const char *p, size_t n, size_t line, const char *path, struct cb_resource_row *row,
		    struct cb_err *err)
{
	long long *values[RES_NCOLS - 2];
	const char *end = p + n;
	size_t i;

	values[0] = &row->r.regs;
	values[1] = &row->r.spills;
	values[2] = &row->r.shared;
	values[3] = &row->r.stages;
	values[4] = &row->r.warps;
	for (i = 0; i < RES_NCOLS; i++) {
		const char *tab = memchr(p, '\t', (size_t)(end - p)), *stop = tab ? tab : end;
		size_t len = (size_t)(stop - p);
		if (!tab && i + 1 < RES_NCOLS)
			return cb_fail(err, "%s:%zu: missing column '%s'", path, line, res_columns[i + 1]);
		if (tab && i + 1 == RES_NCOLS)
			return cb_fail(err, "%s:%zu: extra column after '%s'", path, line, res_columns[i]);
		if (line == 1) {
			if (len != strlen(res_columns[i]) || memcmp(p, res_columns[i], len) != 0)
				return cb_fail(err, "%s:1: column %zu is '%.*s', expected '%s'", path, i + 1,
					       (int)(len < 64 ? len : 64), p, res_columns[i]);
		} else if (i < 2) {
			char **to = i ? &row->kernel : &row->variant;
			if (!len)
				return cb_fail(err, "%s:%zu: %s is empty", path, line, res_columns[i]);
			if (!(*to = strndup(p, len)))
				return cb_fail(err, "%s: out of memory", path);
		} else if (res_value(p, len, values[i - 2]) < 0) {
			return cb_fail(err, "%s:%zu: %s: '%.*s' is not a count >= 0 or '-'", path, line, res_columns[i],
				       (int)(len < 64 ? len : 64), p);
		}
		p = tab ? tab + 1 : end;
	}
	return 0;
}

int cb_resources_parse(const char *data, size_t len, const char *path, struct cb_resource_table *t,
		       struct cb_err *err)
{
	const char *p = data, *end = data + len;
	size_t line = 0, i, nlines = 0;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < len; i++)
		nlines += data[i] == '\n';
	if (!len || memchr(data, '\0', len))
		return cb_fail(err, "%s: %s", path, len ? "a NUL byte in a text file" : "empty file, expected a header");
	if (!(t->rows = calloc(nlines + 1, sizeof(*t->rows))))
		return cb_fail(err, "%s: out of memory", path);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *eol = nl ? nl : end;
		struct cb_resource_row row;

		memset(&row, 0, sizeof(row));
		line++;
		if (eol == p) {
			cb_fail(err, "%s:%zu: empty line", path, line);
			goto fail;
		}
		if (res_line(p, (size_t)(eol - p), line, path, &row, err) < 0) {
			free(row.variant);
			free(row.kernel);
			goto fail;
		}
		for (i = 0; line > 1 && i < t->n; i++)
			if (strcmp(t->rows[i].variant, row.variant) == 0) {
				cb_fail(err, "%s:%zu: variant '%s' is listed twice", path, line, row.variant);
				free(row.variant);
				free(row.kernel);
				goto fail;
			}
		if (line > 1)
			t->rows[t->n++] = row;
		p = nl ? nl + 1 : end;
	}
	return 0;
fail:
	cb_resource_table_release(t);
	return -1;
}

int cb_resources_load(const char *path, struct cb_resource_table *t, struct cb_err *err)
{
	char *buf;
	size_t len;
	int rc;

	memset(t, 0, sizeof(*t));
	if (cb_read_file(path, &buf, &len, err) < 0)
		return -1;
	rc = cb_resources_parse(buf, len, path, t, err);
	free(buf);
	return rc;
}

const struct cb_resources *cb_resources_find(const struct cb_resource_table *t, const char *variant)
{
	size_t i;

	for (i = 0; variant && i < t->n; i++)
		if (strcmp(t->rows[i].variant, variant) == 0)
			return &t->rows[i].r;
	return NULL;
}

void cb_resource_table_release(struct cb_resource_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++) {
		free(t->rows[i].variant);
		free(t->rows[i].kernel);
	}
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
