/* preflight.h: the checks `caliber run` makes before any work
 * (docs/design.md section 6), in this order: binding, sources, imports, device-count,
 * targets, device-idle, plugin-plan, output-root, confinement. Every check runs even
 * after one fails and prints its own name with ok or the reason; if any
 * failed, the batch is refused before anything is written. */
#ifndef CB_PREFLIGHT_H
#define CB_PREFLIGHT_H

#include <stdio.h>

#include <jansson.h>

#include "caliber.h"
#include "base/confine.h"
#include "campaign/shard.h"
#include "worker.h"

struct cb_preflight {
	const struct cb_worker_ctx *w;  /* manifest, backend, roots, plan */
	const char *matrix_path;        /* FROZEN/task-matrix.json */
	const char *manifest_path;      /* FROZEN/manifest.json */
	const char *output_root;
	const char *python;             /* interpreter for imports and targets */
	const struct cb_shard *shard;   /* the shard to run (NULL or n 0: the whole matrix) */
	int resume;
	int allow_dirty_harness;
	const struct cb_confine *confine;   /* how workers will be confined */
	int require_confinement;        /* an unconfined run is refused */
	int json;                       /* print each check as a JSON Lines event */
	int quiet;                      /* print the failed checks only (run --quiet) */
	const json_t *matrix;           /* the matrix the caller loaded and bound (cb_matrix_load_bound), or NULL */
	const struct cb_err *bind_err;  /* when matrix is NULL: why binding failed */
	json_t *results;                /* [{name, ok, detail}], for the campaign receipt */
	size_t failed;
	char failed_names[256];
};

/* Run every check, printing one line each to out: "preflight: NAME: ok
 * (...)" or "preflight: NAME: FAILED: why" (with quiet, the failed ones
 * only), or with json an event {"event": "preflight", "check", "ok",
 * "detail"}. Returns the number of checks that failed (0: the batch may
 * start). */
size_t cb_preflight_run(struct cb_preflight *pf, FILE *out);

#endif
