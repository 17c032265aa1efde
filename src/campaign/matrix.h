/* matrix.h: the frozen task matrix, "caliber.task-matrix/1" (docs/design.md section 5). */
#ifndef CB_MATRIX_H
#define CB_MATRIX_H

#include <jansson.h>

#include "caliber.h"
#include "base/runroot.h"
#include "inventory.h"
#include "manifest.h"

#define CB_MATRIX_SCHEMA "caliber.task-matrix/1"

enum cb_selection { CB_SEL_CANARY, CB_SEL_ALL };

const char *cb_selection_name(enum cb_selection s);
int cb_selection_parse(const char *s, enum cb_selection *out);

/* Budget of one task: every phase of every cell at its timeout (held at
 * LLONG_MAX rather than overflowing; a valid manifest's timeouts keep it
 * far below). */
long long cb_task_budget_s(const struct cb_workload *w, int with_round_b);

/* a + b of two budgets >= 0, held at LLONG_MAX rather than overflowing:
 * how budgets are summed. */
long long cb_budget_add(long long a, long long b);

#define CB_FROZEN_INVENTORY "inventory.csv"

/* Build the matrix of a validated manifest for a selection, resolving each
 * task's pytest selection through the inventory: benchmark_args (the target,
 * and -m MARK when given) and correctness_args (pinned node ids; or the
 * correctness file with -k EXPR, or with -m SELECTOR from the inventory).
 * A cell that names its own compiler is recorded with it, its root made
 * absolute: a relative root is resolved against root_base (the folder of
 * the manifest prepare read, recorded as compiler_root_base), and refused
 * when root_base is NULL. The matrix is a pure function of (manifest
 * bytes, inventory bytes, selection, caliber version, and root_base where a
 * root is relative): freezing twice gives the same bytes. Returns a new
 * reference. */
json_t *cb_matrix_build(const struct cb_manifest *m, const struct cb_inventory *inv,
			enum cb_selection sel, const char *root_base, struct cb_err *err);

/* Load FROZEN/task-matrix.json and bind it to its manifest and the frozen
 * inventory beside it: the SHA-256s must be the ones the matrix names, and
 * the matrix must be exactly what cb_matrix_build() derives from them and
 * the compiler_root_base it records (apart from the caliber identity of the
 * prepare that froze it). Returns a new reference. */
json_t *cb_matrix_load_bound(const char *path, const struct cb_manifest *m, struct cb_err *err);

/* The root the matrix records for the compiler of the cell named `cell`
 * (absolute), or NULL when that cell runs sources.compiler. Borrowed. */
const char *cb_matrix_compiler_root(const json_t *mx, const char *cell);

/* A task's pytest selection from the matrix, as a NULL-terminated array of
 * borrowed strings (caller frees the array only). */
const char **cb_matrix_args(const json_t *task, const char *key);

#endif
