/* identity.c: identical by construction (identity.h, docs/design.md section 19). */
#include "identity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/strindex.h"

/* ---- ir/binaries.tsv ---------------------------------------------------- */

#define BIN_NCOLS 7
static const char *const bin_columns[BIN_NCOLS] = {
	"variant", "kernel", "binary", "binary_sha256", "code_sha256", "ttgir_sha256", "launch"
};

/* Longest field quoted in a message; the rest is cut. */
#define QUOTE_MAX 64

static int quote_len(size_t n)
{
	return (int)(n < QUOTE_MAX ? n : QUOTE_MAX);
}

/* Whether p[0..n) is "-" or 64 lowercase hex digits. */
static int is_digest(const char *p, size_t n)
{
	size_t i;

	if (n == 1 && p[0] == '-')
		return 1;
	if (n != 64)
		return 0;
	for (i = 0; i < n; i++)
		if (!strchr("0123456789abcdef", p[i]) || !p[i])
			return 0;
	return 1;
}

/* Split line p[0..n) on tabs into exactly BIN_NCOLS fields. */
static int split_fields(const char *p, size_t n, const char *f[BIN_NCOLS], size_t fn[BIN_NCOLS], const char *path,
			size_t line, struct cb_err *err)
{
	const char *end = p + n;
	size_t i;

	for (i = 0; i < BIN_NCOLS; i++) {
		const char *tab = memchr(p, '\t', (size_t)(end - p));
		f[i] = p;
		fn[i] = (size_t)((tab ? tab : end) - p);
		if (!tab && i + 1 < BIN_NCOLS)
			return cb_fail(err, "%s:%zu: missing column '%s'", path, line, bin_columns[i + 1]);
		if (tab && i + 1 == BIN_NCOLS)
			return cb_fail(err, "%s:%zu: extra column after '%s'", path, line, bin_columns[BIN_NCOLS - 1]);
		p = tab ? tab + 1 : end;
	}
	return 0;
}

/* Check a data row's fields and append it to b (which has room). */
static int add_binary(struct cb_binaries *b, const char *f[BIN_NCOLS], const size_t fn[BIN_NCOLS], const char *path,
		      size_t line, struct cb_err *err)
{
	struct cb_binary *r = &b->rows[b->n];
	char **dst[BIN_NCOLS] = { &r->variant, &r->kernel, &r->binary, &r->binary_sha256, &r->code_sha256,
				  &r->ttgir_sha256, &r->launch };
	size_t i;

	for (i = 0; i < BIN_NCOLS; i++)
		if (!fn[i])
			return cb_fail(err, "%s:%zu: %s is empty", path, line, bin_columns[i]);
	for (i = 3; i < 6; i++)
		if (!is_digest(f[i], fn[i]))
			return cb_fail(err, "%s:%zu: %s: '%.*s' is neither '-' nor a sha256 (64 lowercase hex digits)",
				       path, line, bin_columns[i], quote_len(fn[i]), f[i]);
	for (i = 0; i < BIN_NCOLS; i++)
		if (!(*dst[i] = strndup(f[i], fn[i]))) {
			while (i--) {
				free(*dst[i]);
				*dst[i] = NULL;
			}
			return cb_fail(err, "%s: out of memory", path);
		}
	r->line = line;
	b->n++;
	return 0;
}

static int cmp_binary(const void *x, const void *y)
{
	return strcmp(((const struct cb_binary *)x)->variant, ((const struct cb_binary *)y)->variant);
}

/* The first variant listed twice refused, then the rows sorted. */
static int check_and_sort(struct cb_binaries *b, const char *path, struct cb_err *err)
{
	const char **names = calloc(b->n ? b->n : 1, sizeof(*names));
	struct cb_strindex x;
	size_t i, dup, first;
	int rc;

	if (!names)
		return cb_fail(err, "%s: out of memory", path);
	for (i = 0; i < b->n; i++)
		names[i] = b->rows[i].variant;
	rc = cb_strindex_init(&x, names, b->n, err);
	if (rc == 0 && cb_strindex_first_dup(&x, &dup, &first))
		rc = cb_fail(err, "%s:%zu: variant '%.*s' is already listed at line %zu", path, b->rows[dup].line,
			     quote_len(strlen(b->rows[dup].variant)), b->rows[dup].variant, b->rows[first].line);
	cb_strindex_release(&x);
	free(names);
	if (rc == 0 && b->n)
		qsort(b->rows, b->n, sizeof(*b->rows), cmp_binary);
	return rc;
}

int cb_binaries_parse(const char *buf, size_t len, const char *path, struct cb_binaries *b, struct cb_err *err)
{
	const char *p, *end = buf + len;
	size_t line = 0, nlines = 0, i;

	memset(b, 0, sizeof(*b));
	if (!len)
		return cb_fail(err, "%s: empty file, expected the header %s, %s, %s, %s, %s, %s, %s (tab-separated)",
			       path, bin_columns[0], bin_columns[1], bin_columns[2], bin_columns[3], bin_columns[4],
			       bin_columns[5], bin_columns[6]);
	for (p = buf; p < end; p++)
		nlines += *p == '\n';
	if (!(b->rows = calloc(nlines + 1, sizeof(*b->rows))))
		return cb_fail(err, "%s: out of memory", path);
	for (p = buf; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *eol = nl ? nl : end;
		const char *f[BIN_NCOLS];
		size_t fn[BIN_NCOLS];

		line++;
		if (eol > p && eol[-1] == '\r')
			eol--;
		if (memchr(p, '\0', (size_t)(eol - p)) || memchr(p, '\r', (size_t)(eol - p))) {
			cb_fail(err, "%s:%zu: NUL byte or carriage return inside a line", path, line);
			goto fail;
		}
		if (eol == p) {
			cb_fail(err, "%s:%zu: empty line", path, line);
			goto fail;
		}
		if (split_fields(p, (size_t)(eol - p), f, fn, path, line, err) < 0)
			goto fail;
		if (line == 1) {
			for (i = 0; i < BIN_NCOLS; i++)
				if (fn[i] != strlen(bin_columns[i]) || memcmp(f[i], bin_columns[i], fn[i])) {
					cb_fail(err, "%s:1: column %zu is '%.*s', expected '%s'", path, i + 1,
						quote_len(fn[i]), f[i], bin_columns[i]);
					goto fail;
				}
		} else if (add_binary(b, f, fn, path, line, err) < 0) {
			goto fail;
		}
		p = nl ? nl + 1 : end;
	}
	if (check_and_sort(b, path, err) == 0)
		return 0;
fail:
	cb_binaries_release(b);
	return -1;
}

int cb_binaries_load(const char *path, struct cb_binaries *b, struct cb_err *err)
{
	char *buf;
	size_t len;
	int rc;

	memset(b, 0, sizeof(*b));
	if (cb_read_file(path, &buf, &len, err) < 0)
		return -1;
	rc = cb_binaries_parse(buf, len, path, b, err);
	free(buf);
	return rc;
}

void cb_binaries_release(struct cb_binaries *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->n; i++) {
		free(b->rows[i].variant);
		free(b->rows[i].kernel);
		free(b->rows[i].binary);
		free(b->rows[i].binary_sha256);
		free(b->rows[i].code_sha256);
		free(b->rows[i].ttgir_sha256);
		free(b->rows[i].launch);
	}
	free(b->rows);
	memset(b, 0, sizeof(*b));
}

/* ---- a cell's side ------------------------------------------------------ */

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The decisions of autotune.jsonl at path (none when it does not exist),
 * each in canonical form, sorted, repeats dropped. A line that is not a
 * JSON object is named in c->missing. */
static int load_decisions(const char *path, struct cb_identity_cell *c, struct cb_err *err)
{
	char *buf = NULL, *p, *end;
	size_t len, cap = 0, line = 0, i, k;
	struct cb_err e2;

	if (!cb_exists(path))
		return 0;
	if (cb_read_file(path, &buf, &len, &e2) < 0) {
		c->missing = strdup(e2.msg);
		return c->missing ? 0 : cb_fail(err, "out of memory");
	}
	for (p = buf, end = buf + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *eol = nl ? nl : end, **more;
		json_t *j;

		line++;
		if (eol == p || strspn(p, " \t\r") == (size_t)(eol - p)) {
			p = nl ? nl + 1 : end;
			continue;
		}
		j = cb_json_load_buf(p, (size_t)(eol - p), path, &e2);
		if (!json_is_object(j)) {
			json_decref(j);
			free(buf);
			c->missing = j ? cb_strdupf("%s:%zu: not a JSON object", path, line) : strdup(e2.msg);
			return c->missing ? 0 : cb_fail(err, "out of memory");
		}
		if (c->ndecisions == cap) {
			more = realloc(c->decisions, (cap = cap ? 2 * cap : 8) * sizeof(*more));
			if (!more) {
				json_decref(j);
				free(buf);
				return cb_fail(err, "out of memory");
			}
			c->decisions = more;
		}
		c->decisions[c->ndecisions] = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
		json_decref(j);
		if (!c->decisions[c->ndecisions]) {
			free(buf);
			return cb_fail(err, "out of memory");
		}
		c->ndecisions++;
		p = nl ? nl + 1 : end;
	}
	free(buf);
	if (c->ndecisions)
		qsort(c->decisions, c->ndecisions, sizeof(*c->decisions), cmp_str);
	for (i = k = 0; i < c->ndecisions; i++) {
		if (k && strcmp(c->decisions[k - 1], c->decisions[i]) == 0)
			free(c->decisions[i]);
		else
			c->decisions[k++] = c->decisions[i];
	}
	c->ndecisions = k;
	return 0;
}

int cb_identity_cell_load(const char *cell_dir, struct cb_identity_cell *c, struct cb_err *err)
{
	char *bins = cb_strdupf("%s/ir/binaries.tsv", cell_dir), *tune = cb_path_join(cell_dir, "autotune.jsonl");
	struct cb_err e2;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	if (!bins || !tune)
		rc = cb_fail(err, "out of memory");
	else if (!cb_exists(bins))
		c->missing = strdup("no ir/binaries.tsv");
	else if (cb_binaries_load(bins, &c->bins, &e2) < 0)
		c->missing = strdup(e2.msg);
	else if ((rc = load_decisions(tune, c, err)) == 0 && !c->missing)
		c->have = 1;
	if (rc == 0 && !c->have && !c->missing)
		rc = cb_fail(err, "out of memory");
	free(bins);
	free(tune);
	return rc;
}

void cb_identity_cell_release(struct cb_identity_cell *c)
{
	if (!c)
		return;
	cb_binaries_release(&c->bins);
	cb_strv_free(c->decisions, c->ndecisions);
	free(c->missing);
	memset(c, 0, sizeof(*c));
}

/* ---- comparing cells ----------------------------------------------------- */

/* Kernels in the order they are matched: name, code, TTGIR, launch, and
 * the variant last (it may differ between identical kernels). */
static int cmp_kernel(const void *x, const void *y)
{
	const struct cb_binary *a = ((const struct cb_identity_kernel *)x)->b, *b = ((const struct cb_identity_kernel *)y)->b;
	int c;

	if ((c = strcmp(a->kernel, b->kernel)) || (c = strcmp(a->code_sha256, b->code_sha256)) ||
	    (c = strcmp(a->ttgir_sha256, b->ttgir_sha256)) || (c = strcmp(a->launch, b->launch)))
		return c;
	return strcmp(a->variant, b->variant);
}

/* Whether two kernels match (all but the variant name and the binary
 * file's own digest, which sees its debug sections). */
static int same_kernel(const struct cb_binary *a, const struct cb_binary *b)
{
	return strcmp(a->kernel, b->kernel) == 0 && strcmp(a->code_sha256, b->code_sha256) == 0 &&
	       strcmp(a->ttgir_sha256, b->ttgir_sha256) == 0 && strcmp(a->launch, b->launch) == 0;
}

static const struct cb_binary *find_binary(const struct cb_binaries *b, const char *variant)
{
	struct cb_binary key;

	key.variant = (char *)(uintptr_t)variant;
	return b->n ? bsearch(&key, b->rows, b->n, sizeof(*b->rows), cmp_binary) : NULL;
}

/* Set id->reason (taking s; NULL: out of memory). */
static int say(struct cb_identity *id, char *s, struct cb_err *err)
{
	free(id->reason);
	id->reason = s;
	return s ? 0 : cb_fail(err, "out of memory");
}

/* Role r's measured kernels into id->k[r], sorted; 1 when one has no
 * digest to compare (id->reason says which), -1 when out of memory. */
static int measured(const struct cb_identity_cell *c, const struct cb_topology *t, long long floor, const char *cell,
		    struct cb_identity *id, int r, struct cb_err *err)
{
	size_t i;

	id->k[r] = calloc(t->nv + 1, sizeof(*id->k[r]));
	if (!id->k[r])
		return cb_fail(err, "out of memory");
	for (i = 0; i < t->nv; i++) {
		const struct cb_variant *v = &t->v[i];
		const struct cb_binary *b;

		if (v->launches <= floor)
			continue;
		if (!(b = find_binary(&c->bins, v->name)))
			return say(id, cb_strdupf("cell %s: variant %s (kernel %s) has no row in ir/binaries.tsv", cell,
						  v->name, v->kernel), err) ? -1 : 1;
		if (strcmp(b->code_sha256, CB_BINARY_NONE) == 0 || strcmp(b->ttgir_sha256, CB_BINARY_NONE) == 0)
			return say(id, cb_strdupf("cell %s: variant %s (kernel %s) has no %s digest", cell, v->name,
						  v->kernel, strcmp(b->code_sha256, CB_BINARY_NONE) == 0 ? "binary" : "TTGIR"),
				   err) ? -1 : 1;
		id->k[r][id->nk[r]++].b = b;
	}
	if (id->nk[r])
		qsort(id->k[r], id->nk[r], sizeof(*id->k[r]), cmp_kernel);
	return 0;
}

/* How many of role r's measured kernels are named kernel. */
static size_t count_named(const struct cb_identity *id, int r, const char *kernel)
{
	size_t i, n = 0;

	for (i = 0; i < id->nk[r]; i++)
		n += strcmp(id->k[r][i].b->kernel, kernel) == 0;
	return n;
}

/* The first kernel-name difference between role r and the baseline, in
 * words; NULL when every name is measured as often in both. */
static char *name_difference(const struct cb_identity *id, int r, const char *cell, const char *base)
{
	const int roles[2] = { r, CB_ROLE_BASELINE };
	size_t s, i;

	for (s = 0; s < 2; s++)
		for (i = 0; i < id->nk[roles[s]]; i++) {
			const char *name = id->k[roles[s]][i].b->kernel;
			size_t here = count_named(id, r, name), there = count_named(id, CB_ROLE_BASELINE, name);
			if (here == there)
				continue;
			if (!here || !there)
				return cb_strdupf("cell %s %s kernel %s, which cell %s %s", here ? cell : base,
						  "measures", name, here ? base : cell, "does not");
			return cb_strdupf("kernel %s: cell %s measures %zu variants of it, cell %s %zu", name, cell, here,
					  base, there);
		}
	return NULL;
}

/* The first 12 hex digits of a digest, for messages. */
static void short_digest(const char *d, char out[16])
{
	snprintf(out, 16, "%.12s", d);
}

/* Role r against the baseline: 0 when identical, 1 with id->reason saying
 * the first difference, -1 when out of memory. */
static int compare_role(const struct cb_identity_cell cells[CB_NROLES], struct cb_identity *id, int r,
			const char *cell, const char *base, struct cb_err *err)
{
	const struct cb_identity_cell *c = &cells[r], *bc = &cells[CB_ROLE_BASELINE];
	char *name = name_difference(id, r, cell, base);
	size_t i;

	if (name)
		return say(id, name, err) ? -1 : 1;
	for (i = 0; i < id->nk[r]; i++) {
		const struct cb_binary *a = id->k[r][i].b, *b = id->k[CB_ROLE_BASELINE][i].b;
		char x[16], y[16];

		if (same_kernel(a, b))
			continue;
		if (strcmp(a->code_sha256, b->code_sha256) != 0) {
			short_digest(a->code_sha256, x);
			short_digest(b->code_sha256, y);
			return say(id, cb_strdupf("kernel %s: its binary differs in cell %s (code sha256 %s..., cell %s %s...)",
						  a->kernel, cell, x, base, y), err) ? -1 : 1;
		}
		if (strcmp(a->ttgir_sha256, b->ttgir_sha256) != 0)
			return say(id, cb_strdupf("kernel %s: its TTGIR differs in cell %s (the binaries are equal)",
						  a->kernel, cell), err) ? -1 : 1;
		return say(id, cb_strdupf("kernel %s: its launch configuration differs in cell %s (%s; cell %s %s)",
					  a->kernel, cell, a->launch, base, b->launch), err) ? -1 : 1;
	}
	if (c->ndecisions != bc->ndecisions)
		return say(id, cb_strdupf("cell %s has %zu autotune decisions, cell %s %zu", cell, c->ndecisions, base,
					  bc->ndecisions), err) ? -1 : 1;
	for (i = 0; i < c->ndecisions; i++)
		if (strcmp(c->decisions[i], bc->decisions[i]) != 0)
			return say(id, cb_strdupf("cell %s's autotune decisions differ from cell %s's: %s", cell, base,
						  c->decisions[i]), err) ? -1 : 1;
	return 0;
}

int cb_identity_compare(const struct cb_identity_cell cells[CB_NROLES], const struct cb_topology topo[CB_NROLES],
			long long floor, const struct cb_manifest *m, struct cb_identity *id, struct cb_err *err)
{
	const char *base = cb_manifest_cell(m, CB_ROLE_BASELINE)->name;
	static const int others[] = { CB_ROLE_CANDIDATE, CB_ROLE_CONTROL };
	size_t i;
	int r, rc;

	memset(id, 0, sizeof(*id));
	id->floor = floor;
	for (r = 0; r < CB_NROLES; r++)
		if (!cells[r].have)
			return say(id, cb_strdupf("cell %s: %s", cb_manifest_cell(m, (enum cb_role)r)->name,
						  cells[r].missing ? cells[r].missing : "no binaries"), err);
	id->known = 1;
	for (r = 0; r < CB_NROLES; r++) {
		const char *cell = cb_manifest_cell(m, (enum cb_role)r)->name;
		if (!topo[r].joinable)
			return say(id, cb_strdupf("cell %s: its IR cannot be joined to its launch index", cell), err);
		if ((rc = measured(&cells[r], &topo[r], floor, cell, id, r, err)) != 0)
			return rc < 0 ? -1 : 0;
	}
	if (!id->nk[CB_ROLE_BASELINE])
		return say(id, cb_strdupf("cell %s measures no kernel (none launched more than %lld time%s)", base, floor,
					  floor == 1 ? "" : "s"), err);
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if ((rc = compare_role(cells, id, others[i], cb_manifest_cell(m, (enum cb_role)others[i])->name, base,
				       err)) != 0)
			return rc < 0 ? -1 : 0;
	id->identical = 1;
	id->ndecisions = cells[CB_ROLE_BASELINE].ndecisions;
	return say(id, cb_strdupf("the %zu measured kernel%s of the candidate and the control %s identical to the "
				  "baseline's: binary, TTGIR without locations and launch configuration, with the same "
				  "%zu autotune decision%s",
				  id->nk[CB_ROLE_BASELINE], id->nk[CB_ROLE_BASELINE] == 1 ? "" : "s",
				  id->nk[CB_ROLE_BASELINE] == 1 ? "is" : "are", id->ndecisions,
				  id->ndecisions == 1 ? "" : "s"), err);
}

void cb_identity_release(struct cb_identity *id)
{
	int r;

	if (!id)
		return;
	for (r = 0; r < CB_NROLES; r++)
		free(id->k[r]);
	free(id->reason);
	memset(id, 0, sizeof(*id));
}

json_t *cb_identity_json(const struct cb_identity *id, const char *phase)
{
	json_t *j = json_pack("{s:s, s:b, s:b, s:I, s:s?, s:I}", "phase", phase, "known", id->known, "identical",
			      id->identical, "floor", (json_int_t)id->floor, "reason", id->reason,
			      "autotune_decisions", (json_int_t)id->ndecisions);
	json_t *cells = json_object();
	size_t i;
	int r, bad = !j || !cells;

	for (r = 0; !bad && r < CB_NROLES; r++) {
		json_t *list = json_array();
		bad = !list || json_object_set_new(cells, cb_role_name((enum cb_role)r), list) < 0;
		for (i = 0; !bad && i < id->nk[r]; i++) {
			const struct cb_binary *b = id->k[r][i].b;
			bad = json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "variant",
				b->variant, "kernel", b->kernel, "binary", b->binary, "binary_sha256", b->binary_sha256,
				"code_sha256", b->code_sha256, "ttgir_sha256", b->ttgir_sha256, "launch", b->launch)) < 0;
		}
	}
	if (!bad)
		bad = json_object_set_new(j, "cells", cells) < 0;
	else
		json_decref(cells);
	if (bad) {
		json_decref(j);
		return NULL;
	}
	return j;
}
