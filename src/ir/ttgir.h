/* ttgir.h: counting the topology op in TTGIR text (docs/design.md section 9,
 * docs/formats.md "Topology"): in a buffer, a file, data that comes in
 * pieces, and a table of counts made elsewhere (while a seal is verified). */
#ifndef CB_TTGIR_H
#define CB_TTGIR_H

#include <stddef.h>

#include "caliber.h"
#include "base/walk.h"

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

/* Where the operations cb_ttgir_count(data, len, op) counts are: for
 * each, in order, the offset in data of its line's first byte. *at is a
 * fresh array of *n entries (NULL when none); *n is that count. Refuses
 * an op cb_topology_check_op refuses. */
int cb_ttgir_op_lines(const char *data, size_t len, const char *op, size_t **at, size_t *n,
		      struct cb_err *err);

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
void cb_ttgir_counts_release(struct cb_ttgir_counts *c);

#endif
