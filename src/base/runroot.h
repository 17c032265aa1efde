/* runroot.h: the names of a run root (docs/formats.md, "The run root"):
 * every file and folder caliber writes there, the phases a task's cells
 * are measured in, and the builders of a cell's and a session's folder.
 * Nothing else spells a run root's layout; seal, accounting, runner and
 * views all name its files through these. */
#ifndef CB_RUNROOT_H
#define CB_RUNROOT_H

/* Files at the top of a run root. */
#define CB_RUN_CAMPAIGN "campaign.json"     /* the campaign receipt */
#define CB_RUN_DERIVED "derived.json"       /* what reaccount writes instead */
#define CB_RUN_RUN "run.json"               /* invocations, workers, devices */
#define CB_RUN_MANIFEST "manifest.json"     /* the frozen manifest, copied */
#define CB_RUN_MATRIX "task-matrix.json"    /* the frozen task matrix, copied */
#define CB_RUN_MATRIX_CSV "matrix.csv"      /* the verdict matrix */
#define CB_RUN_MATRIX_MD "matrix.md"
/* Folders: tasks/<id>/, and in each cells/<phase>-<cell>[.s<k>]/. */
#define CB_RUN_TASKS "tasks"
#define CB_RUN_CELLS "cells"
/* Files of a task folder and of a cell folder. */
#define CB_RUN_TASK "task.json"             /* the task receipt */
#define CB_RUN_CELL "cell.json"             /* the cell receipt */
#define CB_RUN_TIMING "timing.jsonl"        /* a session's timed rows */

/* Phases of one task: correctness, rounds a and b of the benchmark, and
 * screen, the compile-only pass of run --prescreen (docs/design.md section 19), which
 * runs after correctness when it runs at all. */
enum cb_phase { CB_PH_CORRECTNESS, CB_PH_ROUND_A, CB_PH_ROUND_B, CB_PH_SCREEN, CB_NPHASES };

const char *cb_phase_name(enum cb_phase p);     /* "correctness", "a", "b", "screen" */

/* TASK_DIR/cells/<phase>-<cell>: a cell's folder (its first session's).
 * Fresh string, NULL on allocation failure. */
char *cb_cell_dir(const char *task_dir, enum cb_phase p, const char *cell);

/* The folder of session k (1-based) of a cell: the cell folder for k <= 1,
 * else TASK_DIR/cells/<phase>-<cell>.s<k>. Fresh string. */
char *cb_session_dir(const char *task_dir, enum cb_phase p, const char *cell, int k);

#endif
