/* expect.h: how long a task is expected to take, for planning (docs/design.md section
 * 6, Deadlines). In this order: the time the same task took in a history
 * run (a sealed earlier run or canary of the campaign, `--history RUN`);
 * else the time the tasks measured so far in this run took, scaled by
 * their budgets; else nothing is known, and the task is started. A
 * timeout is a worst-case cap, never an expectation. One function,
 * cb_task_expect, answers for `run` (deadlines and the ETA) and for
 * `prepare --dry-run` alike. */
#ifndef CB_EXPECT_H
#define CB_EXPECT_H

#include <jansson.h>

#include "caliber.h"
#include "campaign/matrix.h"

/* What an expectation rests on. */
enum cb_expect_basis {
	CB_EXPECT_NONE,          /* nothing measured yet: start it */
	CB_EXPECT_HISTORY_TASK,  /* the history run's task.json wall_ns */
	CB_EXPECT_HISTORY_CELLS, /* the sum of the history run's cell.json wall_ns of the task */
	CB_EXPECT_SO_FAR         /* the tasks measured so far in this run, scaled by budget */
};

/* One task of a history run: its time, and the selection it timed. */
struct cb_history_task {
	char *id;
	long long ms;                      /* task.json wall_ns, else its cells' sum; -1: neither */
	int from_cells;                    /* ms is its cells' sum (task.json has no wall_ns) */
	long long phase_ms[CB_NPHASES];    /* its cells' wall_ns summed per phase; -1: no cell */
	int identical;                     /* identical by construction: task.json identity.identical,
					    * or code identical-binaries (run --prescreen left it untimed) */
	long long screened_ms;             /* what run --prescreen runs of it: its correctness cells,
					    * and its screen cells where it has them */
	const json_t *benchmark_args, *correctness_args;   /* of the history's task-matrix.json */
};

/* The history's share of changed tasks, over its tasks with a time
 * (known): changed are those not identical by construction, which run
 * --prescreen still times. The sums: of the known tasks' ms, of the
 * changed ones' ms, and of the identical ones' screened_ms. */
struct cb_history_share {
	size_t known, changed;
	long long known_ms, changed_ms, screened_ms;
};

/* A history run, opened once: verified, of the campaign asked for. */
struct cb_history {
	char *root;                        /* as given */
	json_t *matrix;                    /* its task-matrix.json */
	json_t *index;                     /* task id -> index into tasks */
	struct cb_history_task *tasks;
	size_t ntasks;
	struct cb_history_share share;
};

/* What this run has measured so far: its finished tasks' wall time and
 * their budgets (budget_s of the frozen matrix). Zeroed: nothing yet. */
struct cb_expect_so_far {
	long long wall_ms, budget_s;
	size_t ntasks;
};

/* What a task is expected to cost a campaign run with --prescreen (and,
 * for comparison, without), by the history (`prepare --prescreen`). */
enum cb_prescreen_basis {
	CB_PRESCREEN_NONE,       /* no history, or none of its tasks has a time */
	CB_PRESCREEN_IDENTICAL,  /* the history found it identical by construction: its screened_ms */
	CB_PRESCREEN_CHANGED,    /* the history timed it: its full time */
	CB_PRESCREEN_SHARE       /* the history does not hold it: from the history's share */
};

/* The expectation of one task. history_miss, with a history given, says
 * why it did not apply (NULL when it did, or when none was given).
 * whole_ms and prescreen_ms are the task's cost to a campaign without and
 * with run --prescreen: with CB_PRESCREEN_IDENTICAL and _CHANGED whole_ms
 * is ms; with CB_PRESCREEN_SHARE, where p = changed / known tasks of the
 * history, prescreen_ms is p x the mean time of the history's changed
 * tasks + (1 - p) x the mean screened_ms of its identical ones, and
 * whole_ms the mean time of its known tasks; 0 with CB_PRESCREEN_NONE. */
struct cb_expectation {
	long long ms;                      /* 0 with CB_EXPECT_NONE */
	enum cb_expect_basis basis;
	const char *history_miss;          /* static text */
	struct cb_expect_so_far so_far;    /* CB_EXPECT_SO_FAR: what it was scaled from */
	enum cb_prescreen_basis prescreen;
	long long whole_ms, prescreen_ms;
	int screen_known;                  /* CB_PRESCREEN_IDENTICAL: the history ran its screen pass */
};

/* Open the run at root as the history of campaign: its seal must hold
 * (refused otherwise: an altered or unfinished run says nothing reliable)
 * and its campaign receipt must name the same campaign. opt names the
 * option in messages ("--history"). */
int cb_history_load(const char *root, const char *campaign, const char *opt, struct cb_history *h,
		    struct cb_err *err);
void cb_history_release(struct cb_history *h);

/* The history's record of task id, or NULL. */
const struct cb_history_task *cb_history_find(const struct cb_history *h, const char *id);

/* Add a finished task of this run: wall_ms it took, budget_s it had. */
void cb_expect_so_far_add(struct cb_expect_so_far *s, long long wall_ms, long long budget_s);

/* How long task (an entry of the frozen matrix's tasks: id, budget_s,
 * benchmark_args, correctness_args) is expected to take. h: the history,
 * or NULL; it applies to a task of the same id whose benchmark and
 * correctness selections are those the history ran. s: what this run has
 * measured so far, or NULL. */
struct cb_expectation cb_task_expect(const struct cb_history *h, const struct cb_expect_so_far *s,
				     const json_t *task);

/* The history's estimate for a task it does not hold (CB_PRESCREEN_SHARE):
 * whole_ms and prescreen_ms of struct cb_expectation. -1 when the history
 * has no task with a time. */
void cb_history_share_estimate(const struct cb_history *h, long long *whole_ms, long long *prescreen_ms);

/* The basis as a word for JSON: "none", "history-task", "history-cells",
 * "so-far". */
const char *cb_expect_basis_name(enum cb_expect_basis b);

/* What e rests on, in words, to follow "by": "the time it took in the
 * --history run (its task.json wall_ns)", ... */
void cb_expect_describe(const struct cb_expectation *e, char *out, size_t cap);

/* "1h02m", "3m05s", "45s": a duration of ms, as run's messages write it. */
void cb_fmt_elapsed(long long ms, char *out, size_t cap);

#endif
