/* topology.h: topology accounting (docs/design.md section 9): count the topology op
 * as an operation in TTGIR, join each variant's IR with ir/index.tsv, and
 * scope the count to variants launched more than the launch floor. */
#ifndef CB_TOPOLOGY_H
#define CB_TOPOLOGY_H

#include <stddef.h>

#include <jansson.h>

#include "caliber.h"
#include "ttgir.h"

/* One row of ir/index.tsv. */
struct cb_index_row {
	char *variant, *kernel;
	long long launches, tuning_launches;
	size_t line;              /* its line in the file */
};

struct cb_index {
	struct cb_index_row *rows;
	size_t n;
};

/* Read an index (header `variant kernel launches tuning_launches`, tab
 * separated, '\n' or "\r\n" line ends). Refuses a missing or extra column,
 * a negative or non-integer count, a variant listed twice, an empty field or
 * line, and a variant that is not a directory name; errors name the file and
 * line. Rows keep the file's order. */
int cb_index_parse(const char *buf, size_t len, const char *path, struct cb_index *ix,
		   struct cb_err *err);
int cb_index_load(const char *path, struct cb_index *ix, struct cb_err *err);
void cb_index_release(struct cb_index *ix);

/* A variant as joined: its row and its IR. */
struct cb_variant {
	char *name, *kernel;
	long long launches, tuning_launches;
	long long count;          /* topology ops in its .ttgir files */
	int scoped;               /* launches > floor */
};

struct cb_topology {
	long long floor;
	int joinable;             /* 0: see unjoinable; counts are then meaningless */
	char **unjoinable;        /* "variant V: no row in ir/index.tsv" / "row V: no IR" */
	size_t nunjoinable;
	struct cb_variant *v;     /* sorted by name */
	size_t nv;
	long long scoped;         /* sum of count over scoped variants */
	long long total;          /* sum over all variants (unscoped) */
};

/* Scan CELL_DIR/ir/: every ir/<variant>/ directory with its *.ttgir files
 * and every index row. A malformed index or unreadable IR is an error; a
 * variant without a row or a row without IR makes the topology unjoinable
 * (not an error: the classifier turns it into X with the names). Only real
 * directories are variants; other entries of ir/ (index.tsv, files, links)
 * are not. A .ttgir that is not a regular file (a link included) is an
 * error. unjoinable is sorted by variant. */
int cb_topology_scan(const char *cell_dir, const char *op, long long floor,
		     struct cb_topology *t, struct cb_err *err);
/* cb_topology_scan taking the count of each .ttgir that pre holds for op
 * from pre instead of reading the file, and the directories under pre's
 * root from its listing (pre NULL: the file system for everything). */
int cb_topology_scan_counted(const char *cell_dir, const char *op, long long floor,
			     const struct cb_ttgir_counts *pre, struct cb_topology *t,
			     struct cb_err *err);
/* The same join with a new floor, without reading files again. */
void cb_topology_rescope(struct cb_topology *t, long long floor);
void cb_topology_release(struct cb_topology *t);

/* JSON form, as `caliber topology` prints it and receipts keep it:
 * {"floor", "joinable", "unjoinable": [...], "scoped", "total",
 *  "variants": [{"variant","kernel","launches","tuning_launches","count","scoped"}],
 *  "excluded": ["variant", ...]}; scoped and total are null when the
 * topology is not joinable. Returns a new reference, NULL when out of
 * memory. */
json_t *cb_topology_json(const struct cb_topology *t);

/* The schema `caliber topology` names in what it prints (the object of
 * cb_topology_json with a "schema" field; receipts keep it without one). */
#define CB_TOPOLOGY_SCHEMA "caliber.topology/1"

#endif
