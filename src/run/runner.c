/* runner.c: `caliber run` (docs/design.md section 6): preflights, then the frozen task
 * matrix on one device, serially, into a run root that ends sealed. For
 * each task: correctness in every cell, round a of the benchmark in
 * manifest order, topology, round b in reverse order only when the
 * candidate's topology is below the baseline's, then the task receipt;
 * with --prescreen, a compile-only pass between correctness and round a
 * that leaves a task whose binaries are identical in every cell untimed.
 * By default every request (so every timed session) runs in a worker
 * process of its own, started ahead of its turn (worker.h).
 * With --stop-after or --deadline, no task or cell starts that would end
 * past the deadline by what it is expected to take (expect.h); a task
 * that would not is passed over, and --resume does it.
 * This file runs the steps in order; one task is runner_task.c's, the
 * run root's making, resuming and tidying runner_root.c's, run.json and
 * the campaign receipt runner_record.c's (runner_int.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "account/expect.h"
#include "base/confine.h"
#include "seal/fixed.h"
#include "base/jsonio.h"
#include "campaign/manifest.h"
#include "campaign/matrix.h"
#include "campaign/plan.h"
#include "preflight.h"
#include "base/proc.h"
#include "base/runroot.h"
#include "account/receipt.h"
#include "runner.h"
#include "runner_int.h"
#include "seal/seal.h"
#include "seal/sign.h"
#include "seal/tidy.h"
#include "worker.h"

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil), so that a UTC time needs no timegm. */
static long long days_from_civil(long long y, long long m, long long d)
{
	long long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* The run's deadline on the monotonic clock, from --stop-after S (S
 * seconds after this invocation started) and --deadline TIME (a UTC time,
 * YYYY-MM-DDTHH:MM:SSZ); the earlier of the two when both are given. */
static int set_deadline(struct runner *rn, long long stop_after, const char *when, struct cb_err *err)
{
	if (stop_after < 0)
		return cb_fail(err, "--stop-after: '%lld' is not a number of seconds >= 0", stop_after);
	if (stop_after > 0)
		rn->deadline_ms = rn->t0_ms + stop_after * 1000;
	if (when) {
		int y, mo, d, h, mi, sec, n = 0;
		long long at_ms;
		if (sscanf(when, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 ||
		    (size_t)n != strlen(when) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
			return cb_fail(err, "--deadline: '%s' is not a UTC time YYYY-MM-DDTHH:MM:SSZ", when);
		at_ms = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60000LL + sec * 1000LL;
		at_ms = cb_mono_ms() + (at_ms - (long long)time(NULL) * 1000);
		if (!rn->deadline_ms || at_ms < rn->deadline_ms)
			rn->deadline_ms = at_ms;
	}
	return 0;
}

int cb_run_verdicts(const char *root, int json, int gate_x, struct cb_err *err)
{
	struct cb_campaign_summary cs;
	char line[96];
	int rc;

	if (cb_campaign_summary_of_run(root, &cs, err) < 0)
		return CB_EXIT_FAIL;
	cb_campaign_verdict_line(&cs, line);
	if (json)
		cb_json_print_line(stdout, json_pack("{s:s, s:s, s:o}", "event", "verdicts", "line", line, "report",
						     json_sprintf("%s/matrix.md", root)));
	else
		printf("%s\nreport: %s/matrix.md (caliber report %s -o report.html: the HTML report)\n", line, root, root);
	fflush(stdout);
	rc = gate_x && cb_campaign_check_x(&cs, err) < 0 ? CB_EXIT_GATE : CB_EXIT_OK;
	cb_campaign_summary_release(&cs);
	return rc;
}

/* The files at the top of a run root that runner steps write, which the
 * check before the seal takes as they are (fixed.h): the frozen inputs,
 * run.json, the ledger, the campaign receipt and the verdict matrix. */
static const char *const runner_files[] = {
	CB_RUN_MANIFEST, CB_RUN_MATRIX, CB_FROZEN_INVENTORY, CB_RUN_RUN, CB_FIXED_FILE, CB_RUN_CAMPAIGN,
	CB_RUN_MATRIX_CSV, CB_RUN_MATRIX_MD, NULL
};

int cb_run(const struct cb_run_opts *o, struct cb_err *err)
{
	struct runner rn;
	struct cb_manifest m;
	struct cb_backend backend;
	struct cb_preflight pf;
	struct cb_history history;
	struct cb_confine confine;
	struct cb_task_result *res = NULL;
	const char *manifest = o->manifest, *matrix = o->matrix, *output = o->output;
	char fail_set[8] = "", digest[CB_SHA256_HEX], shard[32];
	json_t *dealt = NULL, *mx = NULL, *tidied = json_array();
	struct cb_err bind_err = CB_ERR_INIT;
	size_t i, ndone = 0;
	int c, rc;

	memset(&rn, 0, sizeof(rn));
	rn.planted = json_array();
	memset(&m, 0, sizeof(m));
	memset(&backend, 0, sizeof(backend));
	memset(&pf, 0, sizeof(pf));
	memset(&history, 0, sizeof(history));
	rn.t0_ms = cb_mono_ms();
	rn.prescreen = o->prescreen;
	rn.progress = o->quiet ? PROGRESS_QUIET : o->json_progress ? PROGRESS_JSON
				: isatty(STDOUT_FILENO) ? PROGRESS_LIVE : PROGRESS_LINES;
	for (c = 0; c < CB_NPHASES; c++)
		rn.task_ms[c] = -1;
	if (cb_fail_on_parse(o->fail_on, fail_set, err) < 0 || set_deadline(&rn, o->stop_after, o->deadline, err) < 0) {
		rc = CB_EXIT_USAGE;
		goto out;
	}
	rc = CB_EXIT_FAIL;
	cb_confine_probe(o->confinement, &confine);
	if (cb_become_subreaper(err) < 0 || cb_manifest_load(manifest, &m, err) < 0 ||
	    cb_backend_load(o->backends, m.backend, &backend, err) < 0)
		goto out;
	/* A history that cannot be trusted is refused before anything runs:
	 * the user asked to plan by it. */
	if (o->history) {
		if (cb_history_load(o->history, m.campaign, "--history", &history, err) < 0)
			goto out;
		rn.history = &history;
	}
	if (o->resume && cb_is_sealed(output)) {
		/* Killed while sealing, or simply done: finish and say so. */
		if (cb_seal_finish(output, err) < 0 || cb_verify_or_fail(output, err) < 0)
			goto out;
		runner_note(&rn, json_pack("{s:s, s:s}", "event", "already-sealed", "root", output),
		     "run: %s is already complete and sealed; nothing to resume", output);
		rc = cb_run_verdicts(output, rn.progress == PROGRESS_JSON, !o->shard.n, err);
		goto out;
	}
	/* The matrix is loaded and bound once, here: each cell that names its
	 * own compiler runs it where the matrix says, the binding check reports
	 * how the binding went, and the tasks run are this matrix's. */
	mx = cb_matrix_load_bound(matrix, &m, &bind_err);
	if (cb_worker_ctx_init(&rn.ctx, &m, &backend, o->corpus, o->build_root, o->device, o->python, o->worker,
			       o->workers, o->prestart, err) < 0 || cb_worker_ctx_compilers(&rn.ctx, mx, err) < 0)
		goto out;

	pf.w = &rn.ctx;
	pf.manifest_path = manifest;
	pf.matrix_path = matrix;
	pf.matrix = mx;
	pf.bind_err = &bind_err;
	pf.output_root = output;
	pf.python = o->python;
	pf.resume = o->resume;
	pf.allow_dirty_harness = o->allow_dirty;
	pf.shard = &o->shard;
	pf.confine = &confine;
	pf.require_confinement = o->require_confinement;
	pf.json = rn.progress == PROGRESS_JSON;
	pf.quiet = rn.progress == PROGRESS_QUIET;
	if (cb_preflight_run(&pf, stdout) > 0) {
		cb_fail(err, "preflight refused the batch: %zu check%s failed (%s); nothing was written", pf.failed,
			pf.failed == 1 ? "" : "s", pf.failed_names);
		rc = CB_EXIT_PREFLIGHT;
		goto out;
	}
	if (o->preflight_only) {
		rc = CB_EXIT_OK;
		goto out;
	}

	rn.root = output;
	rn.tasks = json_object_get(mx, "tasks");
	if (o->shard.n) {
		cb_shard_name(&o->shard, shard);
		if (!(dealt = cb_shard_tasks(rn.tasks, &o->shard, err))) {
			cb_prefix(err, "--shard %s", shard);
			goto out;
		}
		rn.tasks = dealt;
	}
	rn.ntasks = json_array_size(rn.tasks);
	res = calloc(rn.ntasks ? rn.ntasks : 1, sizeof(*res));
	rn.done = calloc(rn.ntasks ? rn.ntasks : 1, 1);
	if (!res || !rn.done)
		goto out;
	if (!o->resume) {
		if (runner_make_skeleton(manifest, matrix, output, err) < 0)
			goto out;
	} else if (!tidied || runner_remove_slots(output, tidied, err) < 0 ||
		   cb_tidy_resume(output, CB_SCRATCH_PREFIX, tidied, err) < 0) {
		goto out;
	}
	if (cb_fixed_open(&rn.fixed, output, o->resume, err) < 0 || (o->resume && runner_prepare_resume(&rn, res, err) < 0))
		goto out;
	if (cb_worker_ctx_confine(&rn.ctx, cb_confine_code(&confine), output, err) < 0)
		goto out;
	for (i = 0; i < rn.ntasks; i++)
		ndone += rn.done[i];
	for (i = 0; i < json_array_size(tidied); i++)
		runner_note(&rn, json_pack("{s:s, s:s}", "event", "resume-tidied", "what", json_string_value(json_array_get(tidied, i))),
		     "resume: %s", json_string_value(json_array_get(tidied, i)));
	if ((o->resume && runner_same_prescreen(output, o->prescreen, err) < 0) ||
	    runner_record_invocation(output, o->argc, o->argv, o->resume, o->shard.n ? shard : NULL, rn.ctx.scratch, tidied,
			      &confine, err) < 0)
		goto out;
	for (c = 0; c < CB_NROLES; c++) {
		rn.procs[c].cell = &m.cells[c];
		if (ndone < rn.ntasks && cb_cell_proc_prestart(&rn.ctx, &rn.procs[c], err) < 0)
			goto out;
	}
	for (i = 0; i < rn.ntasks; i++) {
		int t = rn.done[i] ? 0 : runner_run_task(&rn, i, json_array_get(rn.tasks, i), &res[i], err);
		if (t < 0)
			goto out;
		if (t > 0 && rn.stop[0]) {
			if (rn.progress == PROGRESS_LIVE)
				printf("\r\033[K");
			runner_note(&rn, json_pack("{s:s, s:s, s:s}", "event", "not-finished", "task",
					    cb_json_str(json_array_get(rn.tasks, i), "id"), "why", rn.stop),
			     "not finished: %s; --resume redoes the task", rn.stop);
		}
	}
	for (ndone = 0, i = 0; i < rn.ntasks; i++)
		ndone += rn.done[i];
	if (ndone < rn.ntasks) {
		char why[64];
		snprintf(why, sizeof(why), "%zu not done before the deadline", rn.ntasks - ndone);
		runner_note(&rn, json_pack("{s:s, s:I, s:I, s:s}", "event", "stopped", "tasks_done", (json_int_t)ndone,
				    "tasks", (json_int_t)rn.ntasks, "why", why),
		     "stopped after %zu of %zu tasks: %s; continue with --resume", ndone, rn.ntasks, why);
		if (rn.progress == PROGRESS_QUIET)
			fprintf(stderr, "caliber: run: stopped after %zu of %zu tasks: %s; continue with --resume\n",
				ndone, rn.ntasks, why);
		rc = CB_EXIT_STOPPED;
		goto out;
	}
	for (c = 0; c < CB_NROLES; c++)
		cb_cell_proc_stop(&rn.procs[c]);
	/* What the last workers left goes before anything is sealed. */
	if (cb_reap_strays(0, NULL, err) < 0 || runner_tidy_before_seal(&rn, err) < 0 ||
	    runner_write_campaign(&rn, &pf, res, cb_json_str(mx, "selection"), &o->shard, err) < 0 ||
	    cb_write_verdict_matrix(output, res, rn.ntasks, err) < 0 ||
	    cb_fixed_check_run(&rn.fixed, runner_files, err) < 0 || cb_seal_signed(output, o->sign_key, err) < 0 ||
	    cb_seal_digest(output, digest, err) < 0)
		goto out;
	runner_note(&rn, json_pack("{s:s, s:I, s:s}", "event", "sealed", "tasks", (json_int_t)rn.ntasks, "root", output),
	     "run: %zu tasks, sealed %s", rn.ntasks, output);
	runner_note(&rn, json_pack("{s:s, s:s, s:b}", "event", "seal-digest", "sha256", digest, "signed", o->sign_key != NULL),
	     "run: seal: SHA256SUMS sha256 %s%s (record it elsewhere to anchor the run)", digest,
	     o->sign_key ? ", signed in " CB_SIG_FILE : "");
	/* A shard's X is judged in the merged run (--devices, caliber merge):
	 * a shard that exits 5 would keep the merge from running. */
	rc = cb_run_verdicts(output, rn.progress == PROGRESS_JSON, !o->shard.n, err);
	if (rc == CB_EXIT_OK && fail_set[0]) {
		struct cb_gate g;
		cb_gate_init(&g, o->fail_on, fail_set);
		for (i = 0; i < rn.ntasks && rc == CB_EXIT_OK; i++)
			if (cb_gate_add(&g, res[i].id, res[i].verdict, err) < 0)
				rc = CB_EXIT_FAIL;
		if (rc == CB_EXIT_OK && cb_gate_judge(&g, err) < 0)
			rc = CB_EXIT_GATE;
		cb_gate_release(&g);
	}
out:
	for (c = 0; c < CB_NROLES; c++)
		cb_cell_proc_release(&rn.procs[c]);
	cb_fixed_release(&rn.fixed);
	json_decref(rn.planted);
	for (i = 0; res && i < rn.ntasks; i++)
		cb_task_result_release(&res[i]);
	free(res);
	free(rn.done);
	cb_history_release(&history);
	json_decref(dealt);
	cb_worker_ctx_release(&rn.ctx);
	json_decref(mx);
	json_decref(pf.results);
	json_decref(tidied);
	cb_backend_release(&backend);
	cb_manifest_release(&m);
	return rc;
}
