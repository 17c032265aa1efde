/* report.h: a sealed run, or a derived run written by reaccount, as a
 * report sees it (the model), and the renderers beside it: text for a
 * terminal, Markdown for a pull request (report_text.c), one
 * self-contained HTML file with inline CSS and SVG for a browser
 * (report_html.c, report_svg.c, report_task.c).
 *
 * Everything shown comes from the receipts and the files the worker left;
 * the report adds nothing but sample medians and layout, and never the time
 * or a path of the machine it runs on, so the same run gives the same bytes.
 * The seal is checked once, when the run is opened (runview.h), and its
 * status stated, never assumed: a report of a run whose seal does not hold
 * says so first. */
#ifndef CB_REPORT_H
#define CB_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "caliber.h"
#include "diff.h"
#include "campaign/matrix.h"
#include "account/receipt.h"
#include "account/runview.h"
#include "account/timing.h"

/* The clocks of one timed cell in one order, over its sessions' rows:
 * the SM clock's range while they ran, and how they were paced. */
struct cb_report_clocks {
	int known;                      /* some row recorded an SM clock */
	long long sm_min, sm_max;       /* MHz */
	size_t sessions, rows, throttled, retried;
	long long rested_ms;            /* rests before rows, summed */
};

/* One benchmark row in one cell, every session pooled. */
struct cb_report_cell_row {
	int64_t *samples;               /* the row's samples of every session, in session order (owned) */
	size_t n, sessions;             /* samples, and the sessions holding the row */
	double median_ns;               /* cb_median_i64 of the samples; -1: the cell has no such row */
	const struct cb_timing_row *first; /* the row in its first session (timer, clocks), or NULL */
};

/* One benchmark row of one order: its label and, per cell, its samples
 * and their median. */
struct cb_report_row {
	char *label;                    /* the row's shape, else its key after the last '|' */
	const char *key;                /* its "row" key, borrowed from the first cell's timing */
	struct cb_report_cell_row cell[CB_NROLES];
};

/* One task: its sealed receipt and, in a derived run, what reaccount made
 * of it. */
struct cb_report_task {
	struct cb_task_result sealed;   /* from tasks/<id>/task.json */
	json_t *doc;                    /* that receipt, for the figures the result leaves out */
	int derived;                    /* a derived verdict exists (derived run) */
	char dverdict;
	const char *dcode, *dreason;    /* borrowed from derived.json */
	int dhave_topology;
	long long dtopology[CB_NROLES];
	int changed;                    /* verdict or counts differ from the seal */
	const json_t *dexcluded;        /* variants left out at the new floor, per role */
	int cell_have[CB_NROLES];       /* the topology plot: per cell, the count shown, */
	long long cell_count[CB_NROLES];/* the sealed one, or the derived at its floor */
	struct cb_report_clocks clocks[CB_NORDERS][CB_NROLES];
	long long wall_ms;              /* the task, start to end of its receipt; -1 unknown */
	long long cell_ms[CB_NPHASES][CB_NROLES]; /* each cell's wall time, its sessions summed */
	size_t cell_runs[CB_NPHASES][CB_NROLES];  /* the cell receipts summed (sessions) */
	long long cell_compile_us[CB_NPHASES][CB_NROLES]; /* of that time, compiling (compile.json) */
	size_t cell_compiled[CB_NPHASES][CB_NROLES];      /* the receipts of those whose compile.json is known */
	struct cb_timing *timing[CB_NORDERS][CB_NROLES];  /* each session's timing.jsonl (clocks[o][r].sessions) */
	int timing_seen[CB_NORDERS][CB_NROLES];  /* the first session's timing.jsonl is there */
	char *timing_error[CB_NORDERS][CB_NROLES]; /* why a session's timing.jsonl could not be read, or NULL */
	struct cb_report_row *rows[CB_NORDERS];   /* the rows of the first cell timed (baseline, candidate,
	                                             control), in its order */
	size_t nrows[CB_NORDERS];
	size_t ntimes[CB_NORDERS];      /* the rows the tables of times show: nrows when the baseline was timed, else 0 */
	size_t repeats_min, repeats_max;/* samples of a row in one session, over its timed orders' cells (0: none) */
	int timed;                      /* some order was timed: effect is known */
	double effect;                  /* geometric mean over the timed orders of 1 + speedup, less 1 */
	const struct cb_diff_task *diff;/* its topology ops compared (rp->diff), or NULL */
	size_t index;                   /* its place in the run (campaign.json's tasks) */
};

/* Everything a report is written from; zeroed is empty. */
struct cb_report {
	const struct cb_run_view *v;    /* the run, borrowed (runview.h): root, derived run, receipts, seal */
	struct cb_report_task *t;
	size_t n;
	char seal[CB_ERR_MAX + 64];     /* the seal's status in words: room for a whole error */
	char *href;                     /* the run root seen from where the report goes */
	char *dhref;                    /* the derived folder, likewise */
	struct cb_diff *diff;           /* `caliber diff` of the run, NULL when the seal does not hold */
	int compile_known;              /* some cell receipt's folder holds a listened compile.json */
	char *workers;                  /* how the run's workers were confined (run.json), each way its
	                                   invocations ran them, joined by "; then "; NULL: not recorded */
};

/* Load the run v opened (runview.h: a run root, or a derived run with its
 * run root) into rp (zeroed first; v is borrowed and must outlive rp):
 * every task receipt, derived.json's verdicts, the links to the receipts
 * as seen from output (the file the report goes to, or NULL for stdout),
 * the seal's status in words (rp->seal), from the view's one verify, and,
 * when it holds, the run's diff, from that same verify. With gate (a
 * --fail-on is asked for), a seal that does not hold ends the load there:
 * a gate reads nothing a broken seal may have changed, so a receipt that
 * can no longer be parsed fails it as a broken seal, not as bad JSON. Tasks
 * are sorted by verdict (G, C, B, R, K, X, the shown verdict) and then by
 * effect, largest first. Returns 1 when the seal holds, 0 when it does not
 * or cannot be checked, -1 with err filled when the run cannot be read. */
int cb_report_load(struct cb_report *rp, const struct cb_run_view *v, const char *output, int gate,
		   struct cb_err *err);
void cb_report_release(struct cb_report *rp);

/* The task at place k of the run (rp->t is sorted for reading; a gate
 * names tasks in the run's order). */
const struct cb_report_task *cb_report_task_at(const struct cb_report *rp, size_t k);

/* The verdict, code and reason a task is shown and gated by: the derived
 * ones in a derived run, else the sealed ones. */
char cb_report_verdict(const struct cb_report_task *t);
const char *cb_report_code(const struct cb_report_task *t);
const char *cb_report_reason(const struct cb_report_task *t);

/* Whether dir holds the named file. */
int cb_report_has_file(const char *dir, const char *name);

/* The thresholds the verdicts used: the campaign receipt's, else (a run
 * built by the test tools) the first task receipt's. */
const json_t *cb_report_thresholds(const struct cb_report *rp);

/* Figures as words, shared by every renderer: a share in ppm ("95%"), one
 * order's speedup and interval (w: width of the number column, md:
 * Markdown), the timer of a result, the topology column of a task, and how
 * many tasks have verdict v (the derived one unless sealed). */
void cb_report_fmt_share(long long ppm, char *out, size_t cap);
void cb_report_fmt_order(const struct cb_task_result *r, int o, int md, int w, char *out, size_t cap);
void cb_report_fmt_timer(const struct cb_task_result *r, const char *none, char *out, size_t cap);
void cb_report_fmt_topology_col(const struct cb_report_task *t, int md, char *out, size_t cap);
size_t cb_report_count_verdict(const struct cb_report *rp, char v, int sealed);

/* What the run's intervals resample, in words, from its receipts: the
 * confidence, the outer level (worker processes, or sessions of one
 * persistent process) with how many of them each cell and order had, the
 * repeats of a row in each, and the bootstrap's resamples, e.g. "95 % over
 * 3 worker processes x 9 repeats, 2000 bootstrap resamples" (utf8: "×"). */
void cb_report_fmt_intervals(const struct cb_report *rp, int utf8, char *out, size_t cap);

/* The run's A/A line (aa.h), from the sealed results of its tasks. */
void cb_report_fmt_aa(const struct cb_report *rp, char *out, size_t cap);

/* The free A/A and the pre-screen of the run, in words (docs/design.md section 19),
 * from the sealed results: aa "k of n identical-by-construction tasks
 * exclude zero (round a; nominal 5%)", screen "N of M tasks not timed
 * (identical binaries)"; "" for what does not apply (a run without binary
 * digests, or without --prescreen). */
void cb_report_fmt_identity(const struct cb_report *rp, char *aa, size_t aa_cap, char *screen, size_t screen_cap);

/* The geometric mean of 1 + effect over the timed tasks whose shown
 * verdict is v (0: every timed task), less 1, in ppm; *n says over how
 * many (0: none, and the mean is 0). */
long long cb_report_geomean_ppm(const struct cb_report *rp, char v, size_t *n);

/* The renderers: rp as text, as Markdown, as one HTML page. */
int cb_report_text(struct cb_buf *b, const struct cb_report *rp, struct cb_err *err);
int cb_report_md(struct cb_buf *b, const struct cb_report *rp, struct cb_err *err);
/* The text report's task table alone (what caliber demo ends with): one
 * line per task and timed order, in the report's order, within 80 columns. */
int cb_report_table_text(struct cb_buf *b, const struct cb_report *rp, struct cb_err *err);
void cb_report_html(struct cb_buf *b, const struct cb_report *rp);

#endif
