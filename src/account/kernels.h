/* kernels.h: what each kernel of a cell took and used (docs/formats.md,
 * kernels.jsonl and ir/resources.tsv). After a row's timed samples the
 * timing plugin replays the row once under the profiler and writes, per
 * kernel of the replay, its launches and GPU time, joined to its variant by
 * the launch identity the IR join uses; ir_meta writes each variant's
 * registers, spills, shared memory, stages and warps as loaded.
 *
 * A cell's kernels are summed over the sessions of round a (the sessions
 * whose IR the topology counts): per row, each kernel's GPU time per call
 * of the row is its total over the sessions divided by the calls they
 * profiled. A task compares cells over the rows every one of them
 * profiled. Rows whose replay could not be joined (the line's error) are
 * left out and counted. Old runs have neither file: their cells are
 * simply not profiled. */
#ifndef CB_KERNELS_H
#define CB_KERNELS_H

#include <stddef.h>

#include "caliber.h"
#include "ir/topology.h"

#define CB_KERNELS_FILE "kernels.jsonl"
#define CB_RESOURCES_FILE "ir/resources.tsv"

/* One kernel of one row's profiled replay. */
struct cb_kernel_use {
	char *kernel, *variant;      /* variant NULL: another library's kernel */
	long long launches, total_ns;
};

/* One line of kernels.jsonl: a row's profiled replay. */
struct cb_kernel_row {
	char *row;
	char *error;                 /* why its kernels could not be joined, or NULL */
	long long calls, span_ns;    /* calls replayed; first kernel start to last kernel end */
	struct cb_kernel_use *k;
	size_t nk;
};

struct cb_kernel_file {
	struct cb_kernel_row *rows;
	size_t n;
};

/* Read kernels.jsonl; errors name the file and line. A row listed twice,
 * a count that is not an integer >= 0, calls < 1 and a kernel without a
 * name are refused. */
int cb_kernel_file_parse(const char *data, size_t len, const char *path, struct cb_kernel_file *f,
			 struct cb_err *err);
int cb_kernel_file_load(const char *path, struct cb_kernel_file *f, struct cb_err *err);
void cb_kernel_file_release(struct cb_kernel_file *f);

/* A cell's profiled rows over the sessions of round a: per row the calls,
 * spans and each kernel's launches and GPU time, summed over the sessions
 * that profiled it joined. */
struct cb_cell_kernels {
	int present;                 /* some session left kernels.jsonl */
	char *error;                 /* a kernels.jsonl that cannot be read, and why; the cell then has no rows */
	size_t sessions;             /* sessions whose kernels.jsonl was read */
	size_t unjoined;             /* row replays left out (their line's error) */
	struct cb_kernel_row *rows;  /* sorted by row; error always NULL */
	size_t n;
};

/* The kernels of cell (its name) in task_dir, read from the folder of
 * each session of round a that exists (cb_session_dir). A file that cannot
 * be read is kept in ck->error, not returned: the profile is evidence
 * beside the timing, never a reason to fail a task. -1 only when out of
 * memory. */
int cb_cell_kernels_load(const char *task_dir, const char *cell, struct cb_cell_kernels *ck, struct cb_err *err);
void cb_cell_kernels_release(struct cb_cell_kernels *ck);

/* The rows every one of the n cells profiled, sorted (*rows holds
 * pointers into cells[0], borrowed). */
int cb_cell_kernels_common(const struct cb_cell_kernels *const *cells, size_t n, const char ***rows,
			   size_t *nrows, struct cb_err *err);

/* One kernel's GPU time in a cell: per call of each row, summed over rows. */
struct cb_kernel_time {
	char *kernel, *variant;      /* variant NULL: another library's kernel */
	double ns;
};

/* What the kernels of a cell took over a set of rows. */
struct cb_kernel_sums {
	struct cb_kernel_time *k;    /* sorted by kernel, then variant (NULL first) */
	size_t n, rows;
	double total_ns;             /* every kernel: the GPU time per call, summed over the rows */
	double span_ns;              /* the replays' spans per call, summed over the rows */
};

/* Sum ck over rows (nrows names; NULL: every row of ck). A name ck has no
 * row of is skipped. */
int cb_kernel_sums_of(const struct cb_cell_kernels *ck, const char *const *rows, size_t nrows,
		      struct cb_kernel_sums *s, struct cb_err *err);
/* The GPU time of every kernel of variant in s (0 when it has none). */
double cb_kernel_sums_variant(const struct cb_kernel_sums *s, const char *variant);
/* The kernel name a timed kernel is counted under: its variant's kernel in
 * t when t has the variant, else the profiler's name (borrowed). */
const char *cb_kernels_name(const struct cb_topology *t, const struct cb_kernel_time *k);
void cb_kernel_sums_release(struct cb_kernel_sums *s);

/* Scope t by time instead of launches: a variant counts when it holds at
 * least share_ppm (millionths) of the GPU time s sums (a cell's own rows). */
void cb_kernels_scope_topology(struct cb_topology *t, const struct cb_kernel_sums *s, long long share_ppm);

/* Where the GPU time moved between the baseline and the candidate of a
 * task, by kernel name: a kernel's converts did not change when its
 * measured variants (scoped, in tb and tk) hold as many topology ops in
 * both cells; another library's kernel has none in either. */
struct cb_time_moved {
	int known;                   /* both cells profiled some row in common */
	size_t rows;
	double base_ns, cand_ns;     /* GPU time per call over the common rows */
	double unchanged_ns;         /* base - cand over the kernels whose converts did not change */
	size_t changed;              /* kernels whose converts changed */
	char *top;                   /* of those, the one whose time moved most the way the whole did */
};

int cb_time_moved_of(const struct cb_cell_kernels *base, const struct cb_cell_kernels *cand,
		     const struct cb_topology *tb, const struct cb_topology *tk, struct cb_time_moved *m,
		     struct cb_err *err);
void cb_time_moved_release(struct cb_time_moved *m);

/* What a variant uses, as loaded; -1 where unknown ('-' in the file). */
struct cb_resources {
	long long regs, spills, shared, stages, warps;
};

struct cb_resource_row {
	char *variant, *kernel;
	struct cb_resources r;
};

struct cb_resource_table {
	struct cb_resource_row *rows;
	size_t n;
};

/* Read ir/resources.tsv (header variant, kernel, n_regs, n_spills, shared,
 * num_stages, num_warps; tab-separated); errors name the file and line. */
int cb_resources_parse(const char *data, size_t len, const char *path, struct cb_resource_table *t,
		       struct cb_err *err);
int cb_resources_load(const char *path, struct cb_resource_table *t, struct cb_err *err);
/* The resources of variant in t, or NULL. */
const struct cb_resources *cb_resources_find(const struct cb_resource_table *t, const char *variant);
void cb_resource_table_release(struct cb_resource_table *t);

#endif
