/* topology.h: topology accounting (SPEC section 9): count the topology op
 * as an operation in TTGIR, join each variant's IR with ir/index.tsv, and
 * scope the count to variants launched more than the launch floor. */
#ifndef CB_TOPOLOGY_H
#define CB_TOPOLOGY_H

#include <stddef.h>

#include <jansson.h>

#include "caliber.h"
#include "walk.h"

#define CB_DEFAULT_TOPOLOGY_OP "ttg.convert_layout"

/* cb_ttgir_count_file reads a file in chunks of this many bytes, chunk k
 * starting at byte k * CB_TTGIR_CHUNK; tests place text across the edges. */
#define CB_TTGIR_CHUNK ((size_t)256 << 10)

/* An op name is non-empty and made of letters, digits, '_', '.' and '$'
 * (an MLIR dialect.op name); anything else is refused, naming the op. */
int cb_topology_check_op(const char *op, struct cb_err *err);

/* Number of operations named op in TTGIR text data[0..len): a line whose
 * operation is op, in the pretty form (`%x = op ...`, `%a, %b = op ...`,
 * `%x:2 = op ...`, or without results) or the generic form (`"op"(`).
 * Mentions inside loc(...), #loc definitions, strings, attributes and
 * longer names (op_foo, op.bar) do not count; at most one op counts per line.
 * Lines end at '\n' (a '\r' before it is tolerated). Works on any bytes (no
 * NUL needed); op is a name cb_topology_check_op accepts (an empty op
 * counts 0). The exact rule is in docs/formats.md, "Topology". */
long long cb_ttgir_count(const char *data, size_t len, const char *op);

/* cb_ttgir_count over a file, read chunk by chunk into one buffer of
 * CB_TTGIR_CHUNK bytes and a few more (memory does not grow with the file
 * or its lines; read() rather than mmap, which measured 3x slower). An empty
 * file counts 0; anything but a regular file (a symlink is not followed) or
 * an op cb_topology_check_op refuses is an error. */
int cb_ttgir_count_file(const char *path, const char *op, long long *count, struct cb_err *err);

/* Whether a file name is a TTGIR file (*.ttgir): the files a cell's
 * variant folder is counted over. */
int cb_is_ttgir_name(const char *name);

/* cb_ttgir_count over data that comes in pieces (the blocks a verify
 * reads): the pieces are counted as their concatenation, whatever their
 * sizes, with the same bounded buffer as cb_ttgir_count_file. */
struct cb_ttgir_counter;

/* A counter for op (refused as cb_topology_check_op refuses it). */
int cb_ttgir_counter_new(const char *op, struct cb_ttgir_counter **c, struct cb_err *err);
/* The next n bytes of the data. */
void cb_ttgir_counter_feed(struct cb_ttgir_counter *c, const char *p, size_t n);
/* End of the data: the count of everything fed. Nothing may be fed after. */
long long cb_ttgir_counter_result(struct cb_ttgir_counter *c);
void cb_ttgir_counter_free(struct cb_ttgir_counter *c);

/* Counts of .ttgir files already made elsewhere (while verifying a seal),
 * by path as cb_topology_scan spells it (cell_dir "/ir/" variant "/" file),
 * for one op. cb_ttgir_counts_add appends; cb_ttgir_counts_sort must come
 * after the last add and before the table is searched. */
struct cb_ttgir_count_entry {
	char *path;
	long long count;
};

struct cb_ttgir_counts {
	char *op;
	struct cb_ttgir_count_entry *v;
	size_t n, cap;
	/* With root set, listing is the tree under root as the verify walked
	 * it (directories included): a join lists a directory under root from
	 * it, sorted and with the same kinds, instead of asking the file
	 * system again for each of a run's thousands of variant directories. */
	char *root;
	struct cb_tree listing;
};

int cb_ttgir_counts_init(struct cb_ttgir_counts *c, const char *op, struct cb_err *err);
int cb_ttgir_counts_add(struct cb_ttgir_counts *c, const char *path, long long count,
			struct cb_err *err);
void cb_ttgir_counts_sort(struct cb_ttgir_counts *c);
/* The count of path for op; 0 when found, -1 when the table has none. */
int cb_ttgir_counts_find(const struct cb_ttgir_counts *c, const char *op, const char *path,
			 long long *count);
void cb_ttgir_counts_free(struct cb_ttgir_counts *c);

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
void cb_index_free(struct cb_index *ix);

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
void cb_topology_free(struct cb_topology *t);

/* JSON form, as `caliber topology` prints it and receipts keep it:
 * {"floor", "joinable", "unjoinable": [...], "scoped", "total",
 *  "variants": [{"variant","kernel","launches","tuning_launches","count","scoped"}],
 *  "excluded": ["variant", ...]}; scoped and total are null when the
 * topology is not joinable. Returns a new reference, NULL when out of
 * memory. */
json_t *cb_topology_json(const struct cb_topology *t);

#endif
