/* cmd/worker.c: `caliber worker`, one phase of one task in one cell by hand,
 * exactly as `caliber run` runs it. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "seal/guard.h"
#include "base/jsonio.h"
#include "campaign/manifest.h"
#include "campaign/matrix.h"
#include "opts.h"
#include "campaign/plan.h"
#include "run/worker.h"

static const char worker_about[] =
	"Run one phase of one task in one cell by hand, exactly as `caliber run`\n"
	"does: the cell's clean environment with fresh private caches, the plugin\n"
	"plan of the backend (refused when empty), the task's pytest selection, and\n"
	"the cell receipt. Writes <out>/cells/<phase>-<cell>/ (session 1) or\n"
	"<out>/cells/<phase>-<cell>.s<k>/ (--session k) and prints its outcome.\n"
	"No preflight runs; for a campaign use `caliber run`.";

int cmd_worker(int argc, const char **argv, struct cb_err *err)
{
	struct cb_manifest m;
	struct cb_backend backend;
	struct cb_worker_ctx ctx;
	struct cb_cell_proc cp;
	const char *manifest = NULL, *matrix = NULL, *task_id = NULL, *cell = NULL, *phase = NULL;
	const char *corpus = NULL, *build_root = NULL, *out = NULL, *worker = NULL, *backends = NULL;
	const char *device = NULL, *python = "python3";
	long long session = 1;
	const json_t *task = NULL, *t;
	json_t *mx = NULL, *req = NULL;
	enum cb_outcome outcome;
	struct cb_args args = CB_ARGS_INIT;
	size_t i;
	int p, c, rc;
	const struct cb_opt opts[] = {
		{ "manifest", CB_OPT_PATH, &manifest, "FILE", "FROZEN/manifest.json (required)" },
		{ "task-matrix", CB_OPT_PATH, &matrix, "FILE", "FROZEN/task-matrix.json (required)" },
		{ "task", CB_OPT_STR, &task_id, "ID", "task id (required)" },
		{ "cell", CB_OPT_STR, &cell, "NAME", "cell name (required)" },
		{ "phase", CB_OPT_STR, &phase, "correctness|a|b|screen", "phase (required)" },
		{ "session", CB_OPT_INT, &session, "K", "timed session of a round, 1 (default) to timer.sessions" },
		{ "corpus", CB_OPT_PATH, &corpus, "DIR", "the corpus root (required)" },
		{ "build-root", CB_OPT_PATH, &build_root, "DIR", "the compiler's root (required)" },
		{ "out", CB_OPT_PATH, &out, "DIR", "the task folder to write into (required)" },
		{ "worker", CB_OPT_CMD, &worker, "CMD", "worker session command" },
		{ "backends", CB_OPT_PATH, &backends, "DIR", "folder of backend files" },
		{ "device", CB_OPT_STR, &device, "ID", "value of the visibility variable" },
		{ "python", CB_OPT_PROG, &python, "PATH", "interpreter (default python3)" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "worker", "--manifest F --task-matrix F --task ID --cell NAME --phase P --corpus D --build-root D --out DIR",
					  worker_about, opts, 0, 0 };

	rc = cb_parse_opts(&spec, argc, argv, &args, err);
	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	memset(&m, 0, sizeof(m));
	memset(&backend, 0, sizeof(backend));
	memset(&ctx, 0, sizeof(ctx));
	memset(&cp, 0, sizeof(cp));
	if (!manifest || !matrix || !task_id || !cell || !phase || !corpus || !build_root || !out) {
		cb_fail(err, "--manifest, --task-matrix, --task, --cell, --phase, --corpus, --build-root and --out are required");
		rc = CB_EXIT_USAGE;
		goto out;
	}
	for (p = 0; p < CB_NPHASES; p++)
		if (strcmp(phase, cb_phase_name((enum cb_phase)p)) == 0)
			break;
	if (p == CB_NPHASES) {
		cb_fail(err, "--phase: expected correctness, a, b or screen, got '%s'", phase);
		rc = CB_EXIT_USAGE;
		goto out;
	}
	rc = CB_EXIT_FAIL;
	if (cb_guard_check(&(struct cb_guard){ "--out", NULL, NULL }, out, err) < 0)
		goto out;
	if (cb_manifest_load(manifest, &m, err) < 0)
		goto out;
	if (session < 1 || session > (p == CB_PH_CORRECTNESS || p == CB_PH_SCREEN ? 1 : m.sessions)) {
		cb_fail(err, "--session: expected 1 to %lld for phase %s, got %lld",
			p == CB_PH_CORRECTNESS || p == CB_PH_SCREEN ? 1 : m.sessions, phase, session);
		rc = CB_EXIT_USAGE;
		goto out;
	}
	if (cb_backend_load(backends, m.backend, &backend, err) < 0 ||
	    !(mx = cb_matrix_load_bound(matrix, &m, err)))
		goto out;
	json_array_foreach(json_object_get(mx, "tasks"), i, t)
		if (strcmp(cb_json_str(t, "id"), task_id) == 0)
			task = t;
	for (c = 0; c < CB_NROLES; c++)
		if (strcmp(m.cells[c].name, cell) == 0)
			cp.cell = &m.cells[c];
	if (!task || !cp.cell) {
		cb_fail(err, "%s: no %s '%s' in this campaign", task ? manifest : matrix, task ? "cell" : "task",
			task ? cell : task_id);
		goto out;
	}
	if (cb_worker_ctx_init(&ctx, &m, &backend, corpus, build_root, device, python, worker, CB_WORKERS_TASK, 0, err) < 0 ||
	    cb_worker_ctx_compilers(&ctx, mx, err) < 0)
		goto out;
	if (ctx.nplugins == 0) {
		cb_fail(err, "backend '%s' declares no capability: the plugin plan is empty; refusing to run pytest without plugins",
			backend.name);
		goto out;
	}
	/* Made by the guard, now that nothing is left to refuse: checked
	 * again once made. */
	if (cb_guard_mkdir(&(struct cb_guard){ "--out", NULL, NULL }, out, 0755, err) < 0)
		goto out;
	req = cb_worker_request(&ctx, task, &m.workloads[cb_json_int(task, "workload", 0)], cp.cell,
				(enum cb_phase)p, (int)session, out, err);
	if (!req || cb_cell_run(&ctx, &cp, req, task_id, (enum cb_phase)p, cb_json_int(task, "timeout_s", 60), NULL,
				&outcome, err) < 0)
		goto out;
	printf("worker: %s %s %s: %s (%s)\n", task_id, cell, phase, cb_outcome_name(outcome),
	       cb_json_str(req, "dir"));
	rc = outcome == CB_OUT_PASSED ? CB_EXIT_OK : CB_EXIT_FAIL;
	if (rc != CB_EXIT_OK)
		cb_fail(err, "%s %s %s: %s", task_id, cell, phase, cb_outcome_name(outcome));
out:
	cb_args_release(&args);
	cb_cell_proc_release(&cp);
	cb_worker_ctx_release(&ctx);
	json_decref(req);
	json_decref(mx);
	cb_backend_release(&backend);
	cb_manifest_release(&m);
	return rc;
}
