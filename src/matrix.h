/* matrix.h: the frozen task matrix, "caliber.task-matrix/1" (SPEC section 5). */
#ifndef CB_MATRIX_H
#define CB_MATRIX_H

#include <jansson.h>

#include "caliber.h"
#include "manifest.h"

#define CB_MATRIX_SCHEMA "caliber.task-matrix/1"

enum cb_selection { CB_SEL_CANARY, CB_SEL_ALL };

/* Phases of one task, in execution order; each cell runs each phase once. */
enum cb_phase { CB_PH_CORRECTNESS, CB_PH_ROUND_A, CB_PH_ROUND_B, CB_NPHASES };

const char *cb_phase_name(enum cb_phase p);     /* "correctness", "a", "b" */
const char *cb_selection_name(enum cb_selection s);
int cb_selection_parse(const char *s, enum cb_selection *out);

/* Budget of one task: every phase of every cell at its timeout. */
long long cb_task_budget_s(const struct cb_workload *w, int with_round_b);

/* Build the matrix of a validated manifest for a selection. The matrix is a
 * pure function of (manifest bytes, selection, caliber version): freezing
 * twice gives the same bytes. Returns a new reference. */
json_t *cb_matrix_build(const struct cb_manifest *m, enum cb_selection sel, struct cb_err *err);

/* Load FROZEN/task-matrix.json and bind it to its manifest: the manifest's
 * SHA-256 must be the one the matrix names, and the matrix must be exactly
 * what cb_matrix_build() derives from it (apart from the caliber identity of
 * the prepare that froze it). Returns a new reference. */
json_t *cb_matrix_load_bound(const char *path, const struct cb_manifest *m, struct cb_err *err);

#endif
