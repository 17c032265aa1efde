/* cmd/run.c: `caliber run`, a frozen campaign on one device into a sealed
 * run root (docs/design.md section 6); the work is the runner's (runner.h). */
#include <string.h>

#include "cmd.h"
#include "run/devices.h"
#include "base/fsutil.h"
#include "base/runroot.h"
#include "opts.h"
#include "run/runner.h"
#include "seal/sign.h"

static const char run_about[] =
	"Run a frozen campaign on one device, serially, into a sealed run root.\n"
	"Preflights run first (binding, sources, imports, device-count, targets,\n"
	"device-idle, plugin-plan, output-root, confinement); if any fails the\n"
	"batch is refused (exit 3) and nothing is written. Each worker, and all it\n"
	"starts, may write only its cell folder, its private caches and TMPDIR\n"
	"(--confinement auto: Landlock, else a mount namespace, else none;\n"
	"the confinement preflight says which; --require-confinement refuses an\n"
	"unconfined run), and every process a\n"
	"worker left ends with its cell. Then per task: correctness in every cell,\n"
	"round a in manifest order, round b in reverse order when the candidate's\n"
	"topology is below the baseline's, and the task receipt; at the end the\n"
	"campaign receipt, matrix.csv, matrix.md and the seal. Every request (each\n"
	"correctness cell, each timed session) runs in a worker process of its own,\n"
	"--prestart N (default 3) of them per cell started ahead of their turn, so\n"
	"that the bootstrap samples processes (--workers session); --workers\n"
	"persistent keeps one process per cell for the run (faster, but a process\n"
	"fixes offsets its sessions cannot sample); --workers task (or --isolate\n"
	"task) starts each one cold, with fresh caches, none ahead.\n"
	"--worker CMD replaces the worker session command (split on spaces,\n"
	"no shell). --stop-after S and --deadline TIME plan by what work is expected\n"
	"to take, never by the timeouts (a timeout stays the cap of a cell): a task\n"
	"starts when its expected time fits before the deadline, that is the time\n"
	"it took in --history RUN (a sealed earlier run or canary of the campaign:\n"
	"its task.json wall_ns, else its cells'), else the time the tasks finished\n"
	"so far in this run took, scaled by budget_s, else (nothing measured yet)\n"
	"whenever time is left. A task that does not fit is not started and named\n"
	"with its expected time and what that rests on, and later ones that fit\n"
	"still run; within a task, a cell starts when this task's earlier cells of\n"
	"its phase say it fits. The ETA of the live progress line sums the same\n"
	"expectations. A run that did not do every task ends with exit 4; --resume\n"
	"(with --history again, if wanted) does every task without a receipt (a\n"
	"task stopped between its cells is redone).\n"
	"The seal's own digest (SHA-256 of SHA256SUMS) is printed at the end, then\n"
	"the line \"verdicts: G n, C n, B n, R n, K n, X n\" (all --quiet prints\n"
	"besides errors, which go to stderr); with\n"
	"--sign-key KEY.pem (Ed25519, `openssl genpkey -algorithm ed25519`) the seal\n"
	"is signed into SHA256SUMS.sig, which `caliber verify --key PUB.pem` checks.\n"
	"--shard K/N runs only shard K of N into its own sealed run root (tasks dealt\n"
	"by budget_s, longest first, onto the least-loaded shard, ties by matrix\n"
	"order); caliber merge joins the shards. --devices LIST runs one shard per\n"
	"listed device in parallel, each a caliber run of its own pinned through the\n"
	"backend's visibility variable and preflighted on its device (all before any\n"
	"starts), into OUTPUT.shards/<K>, and merges them into --output-root (with\n"
	"--sign-key every shard and the merged run are signed).\n"
	"--prescreen: after correctness passed in every cell, a compile-only pass of\n"
	"the benchmark rows (phase screen: each row called as its warm-up calls it,\n"
	"nothing timed) in every cell; a task whose launched kernels are then\n"
	"identical in every cell (binary, TTGIR without locations, launch\n"
	"configuration, autotune decisions) is not timed: verdict B, code\n"
	"identical-binaries, its digests in its receipt. Without it every task is timed.\n"
	"A sealed run ends with `verdicts: G n, C n, B n, R n, K n, X n` and the path\n"
	"of its report (with --quiet too). A task whose correctness fails in every\n"
	"cell gets no timing session. Exit status: 0 for a completed campaign\n"
	"whatever its verdicts, but 5 when a task is X (could not be measured:\n"
	"the first is named; a --shard's X is left to the merged run), or when\n"
	"--fail-on VERDICTS (e.g. K,R) names one that occurred.";

/* Refuse a run without every required option, naming those missing and
 * what each is; a campaign that was never frozen is told to run prepare
 * first, and a frozen manifest given alone is told where its matrix is. */
static void missing_options(const char *manifest, const char *matrix, const char *build_root, const char *corpus,
			    const char *output, struct cb_err *err)
{
	static const char *const what[] = {
		"--manifest FROZEN/manifest.json", "--task-matrix FROZEN/task-matrix.json",
		"--build-root DIR (the compiler's root: the folder `import triton` resolves to)",
		"--corpus DIR (the corpus tree)", "--output-root DIR (the run root to create)"
	};
	const char *given[] = { manifest, matrix, build_root, corpus, output };
	struct cb_buf b = CB_BUF_INIT;
	char *beside = NULL;
	size_t i;

	for (i = 0; i < 5; i++)
		if (!given[i])
			cb_buf_addf(&b, "%s%s", b.len ? ", " : "", what[i]);
	if (manifest && !matrix) {
		const char *slash = strrchr(manifest, '/');
		beside = cb_strdupf("%.*s/" CB_RUN_MATRIX, (int)(slash - manifest), manifest);
	}
	if (beside && cb_exists(beside))
		cb_fail(err, "missing %s (did you mean --task-matrix %s?)", b.data, beside);
	else if (!manifest || !matrix)
		cb_fail(err, "missing %s; the manifest and the task matrix are a frozen campaign: run caliber prepare "
			     "MANIFEST --inventory-dir DIR --output-root FROZEN first, then give FROZEN/<campaign>-<selection>/"
			     "manifest.json and task-matrix.json", b.data ? b.data : "");
	else
		cb_fail(err, "missing %s", b.data ? b.data : "");
	free(beside);
	cb_buf_release(&b);
}

int cmd_run(int argc, char **argv, struct cb_err *err)
{
	struct cb_run_opts o;
	const char *manifest = NULL, *matrix = NULL, *build_root = NULL, *corpus = NULL, *output = NULL;
	const char *worker = NULL, *backends = NULL, *device = NULL, *python = "python3", *isolate = NULL;
	const char *workers = "session";
	long long prestart = CB_PRESTART_DEFAULT;
	int mode;
	const char *fail_on = NULL, *deadline = NULL, *history = NULL, *sign_key = NULL, *shard = NULL, *devices = NULL;
	long long stop_after = 0;
	int resume = 0, quiet = 0, json_progress = 0, allow_dirty = 0, preflight_only = 0, prescreen = 0;
	int no_confinement = 0, require_confinement = 0, confinement;
	const char *confine = "auto";
	struct cb_args args = CB_ARGS_INIT;
	int rc;
	const struct cb_opt opts[] = {
		{ "manifest", CB_OPT_PATH, &manifest, "FILE", "FROZEN/manifest.json (required)" },
		{ "task-matrix", CB_OPT_PATH, &matrix, "FILE", "FROZEN/task-matrix.json (required)" },
		{ "build-root", CB_OPT_PATH, &build_root, "DIR", "the folder `import triton` resolves to (required)" },
		{ "corpus", CB_OPT_PATH, &corpus, "DIR", "the corpus root (required)" },
		{ "output-root", CB_OPT_PATH, &output, "DIR", "the run root to create (required)" },
		{ "worker", CB_OPT_CMD, &worker, "CMD", "worker session command (default: PYTHON -m caliber_pytest.session)" },
		{ "resume", CB_OPT_FLAG, &resume, NULL, "continue a stopped or killed run in --output-root" },
		{ "stop-after", CB_OPT_INT, &stop_after, "S", "start nothing expected to end S seconds after the start" },
		{ "deadline", CB_OPT_STR, &deadline, "TIME", "the same, by a UTC time YYYY-MM-DDTHH:MM:SSZ" },
		{ "history", CB_OPT_PATH, &history, "RUN", "plan the deadline by the times of this sealed run of the campaign" },
		{ "workers", CB_OPT_STR, &workers, "MODE", "session (default), persistent or task: how worker processes live" },
		{ "prestart", CB_OPT_INT, &prestart, "N", "session mode: workers per cell started ahead (0-4, default 3)" },
		{ "isolate", CB_OPT_STR, &isolate, "task", "the same as --workers task" },
		{ "prescreen", CB_OPT_FLAG, &prescreen, NULL, "time no task whose binaries are identical in every cell" },
		{ "shard", CB_OPT_STR, &shard, "K/N", "run only shard K of N (tasks dealt by budget, longest first)" },
		{ "devices", CB_OPT_STR, &devices, "LIST", "one shard per device (e.g. 0,1,2,3), in parallel, then merge" },
		{ "preflight-only", CB_OPT_FLAG, &preflight_only, NULL, "run the preflights and stop (exit 0 or 3), writing nothing" },
		{ "fail-on", CB_OPT_STR, &fail_on, "VERDICTS", "exit 5 when a task gets one of these (e.g. K,R,X)" },
		{ "backends", CB_OPT_PATH, &backends, "DIR", "folder of backend files (default caliber's backends/)" },
		{ "device", CB_OPT_STR, &device, "ID", "value of the visibility variable (default: manifest uuid, else 0)" },
		{ "python", CB_OPT_PROG, &python, "PATH", "interpreter for the worker and preflights (default python3)" },
		{ "quiet", CB_OPT_FLAG, &quiet, NULL, "print only errors and the closing verdict line" },
		{ "json-progress", CB_OPT_FLAG, &json_progress, NULL, "one JSON object per progress event" },
		{ "allow-dirty-harness", CB_OPT_FLAG, &allow_dirty, NULL, "do not check caliber's own commit (recorded)" },
		{ "sign-key", CB_OPT_PATH, &sign_key, "KEY.pem", "sign the seal with this Ed25519 private key (PEM)" },
		{ "confinement", CB_OPT_STR, &confine, "MODE",
		  "auto (default), landlock, namespace or off: how workers are confined" },
		{ "require-confinement", CB_OPT_FLAG, &require_confinement, NULL,
		  "refuse the batch (exit 3) when workers cannot be confined" },
		{ "no-confinement", CB_OPT_FLAG, &no_confinement, NULL, "the same as --confinement off (recorded, and said)" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "run", "--manifest F --task-matrix F --build-root D --corpus D --output-root D [options]",
					  run_about, opts, 0, 0 };

	rc = cb_parse_opts(&spec, argc, argv, &args, err);
	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	rc = CB_EXIT_USAGE;
	if (!manifest || !matrix || !build_root || !corpus || !output) {
		missing_options(manifest, matrix, build_root, corpus, output, err);
	} else if (isolate && strcmp(isolate, "task") != 0) {
		cb_fail(err, "--isolate: the only unit is 'task'");
	} else if ((mode = cb_worker_mode_parse(isolate ? "task" : workers)) < 0) {
		cb_fail(err, "--workers: expected session, persistent or task, got '%s'", workers);
	} else if ((confinement = cb_confine_mode_parse(confine)) < 0) {
		cb_fail(err, "--confinement: expected auto, landlock, namespace or off, got '%s'", confine);
	} else if (no_confinement && confinement != CB_CONFINE_OFF && confinement != CB_CONFINE_AUTO) {
		cb_fail(err, "--no-confinement is --confinement off: not with --confinement %s", confine);
	} else if (prestart < 0 || prestart > CB_PRESTART_MAX) {
		cb_fail(err, "--prestart: expected 0 to %d, got %lld", CB_PRESTART_MAX, prestart);
	} else if (sign_key && cb_sign_key_check(sign_key, err) < 0) {
		/* A key that cannot sign is found before the campaign, not after it. */
		cb_prefix(err, "--sign-key");
	} else if (devices && (shard || device || preflight_only)) {
		cb_fail(err, "--devices deals the shards and pins their devices itself: no --%s with it",
			shard ? "shard" : device ? "device" : "preflight-only");
	} else {
		o = (struct cb_run_opts){ .manifest = manifest, .matrix = matrix, .build_root = build_root,
					  .corpus = corpus, .output = output, .worker = worker, .backends = backends,
					  .device = device, .python = python, .fail_on = fail_on, .deadline = deadline,
					  .history = history, .stop_after = stop_after, .workers = (enum cb_worker_mode)mode,
					  .prestart = (int)prestart, .resume = resume, .quiet = quiet,
					  .json_progress = json_progress, .allow_dirty = allow_dirty, .argc = argc,
					  .argv = argv, .sign_key = sign_key, .preflight_only = preflight_only,
					  .prescreen = prescreen,
					  .confinement = no_confinement ? CB_CONFINE_OFF : (enum cb_confine_mode)confinement,
					  .require_confinement = require_confinement };
		if (devices)
			rc = cb_run_devices(&o, devices, err);
		else if (!shard || cb_shard_parse(shard, "--shard", &o.shard, err) == 0)
			rc = cb_run(&o, err);
	}
	cb_args_release(&args);
	return rc;
}
