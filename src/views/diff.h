/* diff.h: where the topology changed (docs/design.md section 15, `caliber diff`):
 * per task and per measured kernel, the topology ops of the baseline,
 * control and candidate cells with their source lines and layouts, and
 * which were removed, added or kept, grouped by source line.
 *
 * A measured kernel is a variant launched more than the run's launch floor
 * (a derived run's floor for a derived run), exactly the variants topology
 * accounting counts (topology.h), so that a kernel's ops add up to the
 * counts in the task receipt. Variants are matched across cells by kernel
 * name and specialization: the variant name is Triton's cache key, which
 * hashes the kernel's source, its specialization and the compile options;
 * where the cells' compilers differ the names differ too, and a kernel
 * that has one measured variant (.ttgir file) in each cell left unmatched
 * is matched by its kernel and file name.
 *
 * Where the cells' profiled replays are there (kernels.h), each kernel
 * also carries its GPU time per call in each cell over the rows every
 * profiled cell has, with its share of the cell's GPU time, and its
 * resources as loaded (ir/resources.tsv); the task carries each cell's
 * total beside its timed medians, where the time moved by kernels whose
 * converts changed or not (the classifier's reading), and the kernels of
 * no measured variant. A derived run scoped by time measures the variants
 * its scope counts. */
#ifndef CB_DIFF_H
#define CB_DIFF_H

#include <stddef.h>

#include <jansson.h>

#include "base/buf.h"
#include "caliber.h"
#include "account/kernels.h"
#include "campaign/manifest.h"
#include "account/receipt.h"
#include "account/runview.h"
#include "ir/ttgir_ops.h"

enum cb_change { CB_CHANGE_KEPT, CB_CHANGE_REMOVED, CB_CHANGE_ADDED };

/* One op of the comparison: the baseline's, the candidate's, or a pair. */
struct cb_diff_op {
	enum cb_change change;
	const struct cb_ir_op *base, *cand;   /* into the kernel's modules; NULL on the side it is not */
};

/* The ops of one source line (the frame cb_ir_op_source gives). */
struct cb_diff_line {
	char *file;                  /* as shown (cb_diff_path); NULL: ops without a location */
	long long line;
	struct cb_diff_op *ops;
	size_t n, removed, added, kept;
};

/* One measured kernel: a variant's .ttgir in each cell that has it. */
struct cb_diff_kernel {
	char *kernel, *file;         /* kernel name, and the .ttgir file's name */
	char *variant[CB_NROLES];    /* NULL: no measured variant of it in that cell */
	char *ttgir[CB_NROLES];      /* the file, relative to the run root */
	long long launches[CB_NROLES];
	struct cb_ir_module ir[CB_NROLES];
	int control_same;            /* the control's ops are the baseline's: places and layouts */
	double ns[CB_NROLES];        /* GPU time per call over the task's profiled rows; < 0: not profiled */
	struct cb_resources res[CB_NROLES];
	int have_res[CB_NROLES];     /* res[r] was read (ir/resources.tsv has the variant) */
	struct cb_diff_line *lines;  /* sorted by file and line; ops without a location last */
	size_t nlines, removed, added, kept, changed_lines;
};

/* A kernel of no measured variant (another library's, or a Triton variant
 * the scope leaves out), by name: its GPU time per call in each cell. */
struct cb_diff_other {
	char *kernel;
	double ns[CB_NROLES];
};

/* A task's profiled GPU time. */
struct cb_diff_time {
	int known;                   /* the baseline and the candidate profiled rows in common */
	int in[CB_NROLES];           /* the cells whose time is shown (a control without a profile is not) */
	size_t rows;                 /* the rows every cell in has profiled */
	double gpu_ns[CB_NROLES];    /* every kernel's GPU time per call, summed over the rows */
	double timed_ns[CB_NROLES];  /* the timed median per call (round a's sessions pooled), summed likewise */
	struct cb_time_moved moved;  /* where the time moved, as the classifier reads it */
	struct cb_diff_other *other; /* by name */
	size_t nother;
	size_t unjoined;             /* replays left out, over the cells: their kernels could not be joined */
	char *error;                 /* a profile or resources file that could not be read, or NULL */
};

struct cb_diff_task {
	char *id, *code;             /* the verdict shown: derived in a derived run */
	char verdict;
	char *error;                 /* why the task has no topology to compare, or NULL */
	const char *phase;           /* whose IR: "a", or "screen" for a task run --prescreen left untimed */
	long long count[CB_NROLES];  /* the ops of its measured kernels, per cell */
	struct cb_diff_kernel *k;
	size_t nk, removed, added, kept, changed_kernels, changed_lines;
	struct cb_diff_time time;
};

/* A run diffed; zeroed is empty. */
struct cb_diff {
	const struct cb_run_view *v; /* the run, borrowed: it outlives the diff */
	char **roots;                /* campaign.json's roots: a path under one is shown from its name */
	size_t nroots;
	struct cb_diff_task *t;
	size_t n;
};

/* Diff the run v opened (runview.h; a sealed run root, or a derived run
 * with its run root): its seal must hold, its manifest be the sealed one,
 * and a derived run come from its campaign; the ops are those v counted
 * while verifying. With task, only that task. Refusals name the
 * directory, the file or the task. */
int cb_diff_load(struct cb_diff *d, const struct cb_run_view *v, const char *task, struct cb_err *err);
void cb_diff_release(struct cb_diff *d);

/* Whether two ops have the same whole chain of frames (every inlined
 * location, file, line and column). */
int cb_diff_same_chain(const struct cb_ir_op *a, const struct cb_ir_op *b);

/* How many tasks lost converts (removed > 0) and gained some, and in how
 * many kernels and source lines ops were removed or added: the "what
 * changed" line of diff and report. */
struct cb_diff_summary {
	size_t tasks_lost, tasks_gained, kernels, lines, removed, added, kept;
};
void cb_diff_summarize(const struct cb_diff *d, struct cb_diff_summary *s);

/* A frame's file as shown: a path under one of the run's roots (compiler,
 * corpus, harness) as the root's last component and the rest
 * ("ops/caliber_ops/matmul.py", "triton/language/standard.py"), the
 * deepest root winning; any other path as written. A fresh string. */
char *cb_diff_path(const struct cb_diff *d, const char *file);

/* Where task t's GPU time moved between the baseline and the candidate, in
 * words, as the classifier reads it: when the profiled change passes the
 * manifest's gain or regression threshold and some kernel's converts
 * changed, 1 with "faster, mostly in kernels whose converts did not change
 * (81% of the GPU time saved, most in K)" when more than half of it moved
 * in kernels whose converts did not, else 2 with "99% of the GPU time
 * saved in kernels whose converts changed"; 0 (out empty) otherwise. */
int cb_diff_moved(const struct cb_diff *d, const struct cb_diff_task *t, char *out, size_t cap);

/* The diff as JSON (docs/formats.md, "caliber diff"): a new reference,
 * NULL when out of memory. */
json_t *cb_diff_json(const struct cb_diff *d);
/* The diff as text for a terminal. */
void cb_diff_text(struct cb_buf *b, const struct cb_diff *d);

#endif
