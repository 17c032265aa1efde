/* inventory.c: reading ops/inventory_main.csv and checking workloads against it. */
#include "inventory.h"

#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"

const char *const cb_inv_columns[CB_INV_NCOLS] = {
	"op", "benchmark_file", "benchmark_test", "correctness_file",
	"correctness_selector", "dtypes", "kind", "layout", "corpus_tree_sha256"
};

/* Whether s is 64 lowercase hex digits, as cb_tree_digest writes them. */
static int is_sha256_hex(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return i == 64;
}

/* The optional columns' values: a layout caliber knows, a tree digest. */
static int check_optional(const struct cb_inv_row *ir, const char *path, struct cb_err *err)
{
	const char *layout = ir->col[CB_INV_LAYOUT], *sha = ir->col[CB_INV_CORPUS_SHA];

	if (layout && strcmp(layout, "per-operator") != 0 && strcmp(layout, "per-category") != 0)
		return cb_fail(err, "%s:%zu: layout '%s' is neither per-operator nor per-category", path,
			       ir->line, layout);
	if (sha && !is_sha256_hex(sha))
		return cb_fail(err, "%s:%zu: corpus_tree_sha256 '%s' is not 64 lowercase hex digits", path,
			       ir->line, sha);
	return 0;
}

/* Split s on ';' into fresh strings; empty pieces are refused by the caller. */
static int split_dtypes(const char *s, char ***out, size_t *n)
{
	size_t cnt = 1, i = 0;
	const char *p;
	char **v;

	for (p = s; *p; p++)
		cnt += *p == ';';
	v = calloc(cnt, sizeof(*v));
	if (!v)
		return -1;
	for (p = s;; ) {
		const char *q = strchr(p, ';');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		v[i] = strndup(p, len);
		if (!v[i]) {
			cb_strv_free(v, i);
			return -1;
		}
		i++;
		if (!q)
			break;
		p = q + 1;
	}
	*out = v;
	*n = cnt;
	return 0;
}

/* inv->by_op over the first n rows, and the first op listed twice among
 * them refused (in O(n log n): a corpus may list tens of thousands). */
static int index_ops(struct cb_inventory *inv, size_t n, struct cb_err *err)
{
	const char **ops = calloc(n ? n : 1, sizeof(*ops));
	size_t r, dup, first;
	int rc;

	if (!ops)
		return cb_fail(err, "%s: out of memory", inv->path);
	cb_strindex_release(&inv->by_op);
	for (r = 0; r < n; r++)
		ops[r] = inv->rows[r].col[CB_INV_OP];
	rc = cb_strindex_init(&inv->by_op, ops, n, err);
	free(ops);
	if (rc < 0)
		return cb_prefix(err, "%s", inv->path);
	if (cb_strindex_first_dup(&inv->by_op, &dup, &first))
		return cb_fail(err, "%s:%zu: op '%s' is already listed at line %zu", inv->path, inv->rows[dup].line,
			       inv->rows[dup].col[CB_INV_OP], inv->rows[first].line);
	return 0;
}

int cb_inventory_parse(const char *buf, size_t len, const char *path, struct cb_inventory *inv,
		       struct cb_err *err)
{
	int map[CB_INV_NCOLS];
	const struct cb_csv_row *hdr;
	size_t r = 0, c, j;
	int empty_field = 0;

	memset(inv, 0, sizeof(*inv));
	inv->path = strdup(path);
	if (!inv->path)
		return cb_fail(err, "%s: out of memory", path);
	if (cb_sha256_hex(buf, len, inv->sha256, err) < 0 ||
	    cb_csv_parse(buf, len, path, &inv->csv, err) < 0)
		goto fail;
	hdr = &inv->csv.rows[0];
	for (c = 0; c < CB_INV_NCOLS; c++)
		map[c] = -1;
	for (j = 0; j < hdr->nfields; j++) {
		for (c = 0; c < CB_INV_NCOLS; c++)
			if (strcmp(hdr->fields[j], cb_inv_columns[c]) == 0)
				break;
		if (c == CB_INV_NCOLS) {
			cb_fail(err, "%s:1: unknown column '%s'", path, hdr->fields[j]);
			goto fail;
		}
		if (map[c] >= 0) {
			cb_fail(err, "%s:1: column '%s' appears twice", path, hdr->fields[j]);
			goto fail;
		}
		map[c] = (int)j;
	}
	for (c = 0; c < CB_INV_NREQUIRED; c++)
		if (map[c] < 0) {
			cb_fail(err, "%s:1: missing column '%s'", path, cb_inv_columns[c]);
			goto fail;
		}
	inv->nrows = inv->csv.nrows - 1;
	inv->rows = calloc(inv->nrows ? inv->nrows : 1, sizeof(*inv->rows));
	if (!inv->rows) {
		cb_fail(err, "%s: out of memory", path);
		goto fail;
	}
	for (r = 0; r < inv->nrows; r++) {
		const struct cb_csv_row *row = &inv->csv.rows[r + 1];
		struct cb_inv_row *ir = &inv->rows[r];

		ir->line = row->line;
		for (c = 0; c < CB_INV_NCOLS; c++) {
			ir->col[c] = map[c] < 0 ? NULL : row->fields[map[c]];
			if (ir->col[c] && !*ir->col[c]) {
				cb_fail(err, "%s:%zu: %s is empty", path, row->line, cb_inv_columns[c]);
				empty_field = 1;
				goto fail;
			}
		}
		if (split_dtypes(ir->col[CB_INV_DTYPES], &ir->dtypes, &ir->ndtypes) < 0) {
			cb_fail(err, "%s: out of memory", path);
			goto fail;
		}
		for (j = 0; j < ir->ndtypes; j++) {
			if (!*ir->dtypes[j]) {
				cb_fail(err, "%s:%zu: dtypes has an empty entry in '%s'", path, row->line,
					ir->col[CB_INV_DTYPES]);
				goto fail;
			}
			if (strcmp(ir->dtypes[j], "*") == 0 && ir->ndtypes > 1) {
				cb_fail(err, "%s:%zu: dtypes '*' (any dtype) must stand alone, not in '%s'", path,
					row->line, ir->col[CB_INV_DTYPES]);
				goto fail;
			}
		}
		ir->any_dtype = strcmp(ir->col[CB_INV_DTYPES], "*") == 0;
		if (check_optional(ir, path, err) < 0)
			goto fail;
	}
	if (index_ops(inv, inv->nrows, err) < 0) {
		cb_inventory_release(inv);
		return -1;
	}
	return 0;
fail:
	/* The first error in the file is the one named: an op listed twice
	 * in a row before this one, or in this one when its fields are all
	 * there (the op is checked before its dtypes), comes first. */
	if (inv->rows && r > 0) {
		struct cb_err dup;
		if (index_ops(inv, r + (r < inv->nrows && !empty_field), &dup) < 0)
			*err = dup;
	}
	cb_inventory_release(inv);
	return -1;
}

void cb_inventory_release(struct cb_inventory *inv)
{
	size_t r;

	if (!inv)
		return;
	for (r = 0; r < inv->nrows && inv->rows; r++)
		cb_strv_free(inv->rows[r].dtypes, inv->rows[r].ndtypes);
	free(inv->rows);
	cb_strindex_release(&inv->by_op);
	cb_csv_release(&inv->csv);
	free(inv->path);
	memset(inv, 0, sizeof(*inv));
}

const struct cb_inv_row *cb_inventory_find(const struct cb_inventory *inv, const char *op)
{
	size_t r;

	return cb_strindex_find(&inv->by_op, op, &r) ? &inv->rows[r] : NULL;
}

/* Whether node id "file::test..." lies in file. */
static int node_in_file(const char *node, const char *file)
{
	size_t n = strlen(file);

	return strncmp(node, file, n) == 0 && strncmp(node + n, "::", 2) == 0;
}

int cb_inventory_check_workload(const struct cb_inventory *inv, const struct cb_workload *w,
				struct cb_err *err)
{
	const struct cb_inv_row *row;
	const char *bf, *bt;
	size_t i, j, bfl;

	if (w->inventory_reason)
		return 0;
	row = cb_inventory_find(inv, w->op);
	if (!row)
		return cb_fail(err, "workloads[%zu].op: '%s' is not in the inventory (%s); add it or give inventory_reason",
			       w->index, w->op, inv->path);
	bf = row->col[CB_INV_BENCH_FILE];
	bt = row->col[CB_INV_BENCH_TEST];
	bfl = strlen(bf);
	if (strncmp(w->bench_target, bf, bfl) != 0 || strncmp(w->bench_target + bfl, "::", 2) != 0 ||
	    strcmp(w->bench_target + bfl + 2, bt) != 0)
		return cb_fail(err, "workloads[%zu].benchmark.target: '%s' is not the inventory's '%s::%s' for op '%s'",
			       w->index, w->bench_target, bf, bt, w->op);
	for (i = 0; i < w->ndtypes && !row->any_dtype; i++) {
		for (j = 0; j < row->ndtypes; j++)
			if (strcmp(w->dtypes[i], row->dtypes[j]) == 0)
				break;
		if (j == row->ndtypes)
			return cb_fail(err, "workloads[%zu].dtypes: '%s' is not among the inventory's dtypes for op '%s' (%s)",
				       w->index, w->dtypes[i], w->op, row->col[CB_INV_DTYPES]);
	}
	if (w->corr_file && strcmp(w->corr_file, row->col[CB_INV_CORR_FILE]) != 0)
		return cb_fail(err, "workloads[%zu].correctness.file: '%s' is not the inventory's '%s' for op '%s'",
			       w->index, w->corr_file, row->col[CB_INV_CORR_FILE], w->op);
	for (i = 0; i < w->nnode_ids; i++)
		if (!node_in_file(w->node_ids[i], row->col[CB_INV_CORR_FILE]))
			return cb_fail(err, "workloads[%zu].correctness.node_ids[%zu]: '%s' is not in the inventory's correctness file '%s' for op '%s'",
				       w->index, i, w->node_ids[i], row->col[CB_INV_CORR_FILE], w->op);
	return 0;
}
