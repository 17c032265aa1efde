/* inventory.h: the operator inventory, ops/inventory_main.csv (docs/design.md section 4),
 * and its validation of a manifest's workloads. */
#ifndef CB_INVENTORY_H
#define CB_INVENTORY_H

#include "caliber.h"
#include "base/csv.h"
#include "manifest.h"
#include "base/sha.h"
#include "base/strindex.h"

#define CB_INVENTORY_FILE "inventory_main.csv"

/* The first CB_INV_NREQUIRED columns are required; layout and
 * corpus_tree_sha256, written by `caliber inventory`, are optional. */
enum cb_inv_col {
	CB_INV_OP, CB_INV_BENCH_FILE, CB_INV_BENCH_TEST, CB_INV_CORR_FILE,
	CB_INV_CORR_SELECTOR, CB_INV_DTYPES, CB_INV_KIND, CB_INV_NREQUIRED,
	CB_INV_LAYOUT = CB_INV_NREQUIRED, CB_INV_CORPUS_SHA, CB_INV_NCOLS
};

extern const char *const cb_inv_columns[CB_INV_NCOLS];

/* One operator. Strings point into the parsed CSV the inventory owns; an
 * optional column the file does not have is NULL. */
struct cb_inv_row {
	size_t line;
	const char *col[CB_INV_NCOLS];
	char **dtypes;          /* split of col[CB_INV_DTYPES] on ';'; "*" alone: any dtype */
	size_t ndtypes;
	int any_dtype;          /* dtypes is "*": the corpus does not list them literally */
};

struct cb_inventory {
	char *path;
	char sha256[CB_SHA256_HEX];   /* of the file's bytes */
	struct cb_csv csv;
	struct cb_inv_row *rows;
	size_t nrows;
	struct cb_strindex by_op;     /* the rows by op, for cb_inventory_find */
};

/* Parse and check an inventory (header, one row per op, non-empty fields,
 * a known layout and a 64-hex digest where those columns are present). */
int cb_inventory_parse(const char *buf, size_t len, const char *path, struct cb_inventory *inv,
		       struct cb_err *err);
void cb_inventory_release(struct cb_inventory *inv);

const struct cb_inv_row *cb_inventory_find(const struct cb_inventory *inv, const char *op);

/* A workload must name a known op and target, with dtypes the inventory
 * lists (any, for a row whose dtypes are "*"), unless it states
 * inventory_reason. */
int cb_inventory_check_workload(const struct cb_inventory *inv, const struct cb_workload *w,
				struct cb_err *err);

#endif
