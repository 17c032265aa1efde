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

int cmd_run(int argc, const char **argv, struct cb_err *err)
{
	struct cb_run_opts o = { .python = "python3" };
	const char *isolate = NULL, *workers = "session", *shard = NULL, *devices = NULL, *confine = "auto";
	long long prestart = CB_PRESTART_DEFAULT;
	int mode, no_confinement = 0, confinement;
	struct cb_args args = CB_ARGS_INIT;
	int rc;
	const struct cb_opt opts[] = {
		{ .name = "manifest", .kind = CB_OPT_PATH, .dst = &o.manifest, .arg = "FILE",
		  .help = "FROZEN/manifest.json (required)" },
		{ .name = "task-matrix", .kind = CB_OPT_PATH, .dst = &o.matrix, .arg = "FILE",
		  .help = "FROZEN/task-matrix.json (required)" },
		{ .name = "build-root", .kind = CB_OPT_PATH, .dst = &o.build_root, .arg = "DIR",
		  .help = "the folder `import triton` resolves to (required)" },
		{ .name = "corpus", .kind = CB_OPT_PATH, .dst = &o.corpus, .arg = "DIR",
		  .help = "the corpus root (required)" },
		{ .name = "output-root", .kind = CB_OPT_PATH, .dst = &o.output, .arg = "DIR",
		  .help = "the run root to create (required)" },
		{ .name = "worker", .kind = CB_OPT_CMD, .dst = &o.worker, .arg = "CMD",
		  .help = "worker session command (default: PYTHON -m caliber_pytest.session)" },
		{ .name = "resume", .kind = CB_OPT_FLAG, .dst = &o.resume,
		  .help = "continue a stopped or killed run in --output-root" },
		{ .name = "stop-after", .kind = CB_OPT_INT, .dst = &o.stop_after, .arg = "S",
		  .help = "start nothing expected to end S seconds after the start" },
		{ .name = "deadline", .kind = CB_OPT_STR, .dst = &o.deadline, .arg = "TIME",
		  .help = "the same, by a UTC time YYYY-MM-DDTHH:MM:SSZ" },
		{ .name = "history", .kind = CB_OPT_PATH, .dst = &o.history, .arg = "RUN",
		  .help = "plan the deadline by the times of this sealed run of the campaign" },
		{ .name = "workers", .kind = CB_OPT_STR, .dst = &workers, .arg = "MODE",
		  .help = "session (default), persistent or task: how worker processes live" },
		{ .name = "prestart", .kind = CB_OPT_INT, .dst = &prestart, .arg = "N",
		  .help = "session mode: workers per cell started ahead (0-4, default 3)" },
		{ .name = "isolate", .kind = CB_OPT_STR, .dst = &isolate, .arg = "task",
		  .help = "the same as --workers task" },
		{ .name = "prescreen", .kind = CB_OPT_FLAG, .dst = &o.prescreen,
		  .help = "time no task whose binaries are identical in every cell" },
		{ .name = "shard", .kind = CB_OPT_STR, .dst = &shard, .arg = "K/N",
		  .help = "run only shard K of N (tasks dealt by budget, longest first)" },
		{ .name = "devices", .kind = CB_OPT_STR, .dst = &devices, .arg = "LIST",
		  .help = "one shard per device (e.g. 0,1,2,3), in parallel, then merge" },
		{ .name = "preflight-only", .kind = CB_OPT_FLAG, .dst = &o.preflight_only,
		  .help = "run the preflights and stop (exit 0 or 3), writing nothing" },
		{ .name = "fail-on", .kind = CB_OPT_STR, .dst = &o.fail_on, .arg = "VERDICTS",
		  .help = "exit 5 when a task gets one of these (e.g. K,R,X)" },
		{ .name = "backends", .kind = CB_OPT_PATH, .dst = &o.backends, .arg = "DIR",
		  .help = "folder of backend files (default caliber's backends/)" },
		{ .name = "device", .kind = CB_OPT_STR, .dst = &o.device, .arg = "ID",
		  .help = "value of the visibility variable (default: manifest uuid, else 0)" },
		{ .name = "python", .kind = CB_OPT_PROG, .dst = &o.python, .arg = "PATH",
		  .help = "interpreter for the worker and preflights (default python3)" },
		{ .name = "quiet", .kind = CB_OPT_FLAG, .dst = &o.quiet,
		  .help = "print only errors and the closing verdict line" },
		{ .name = "json-progress", .kind = CB_OPT_FLAG, .dst = &o.json_progress,
		  .help = "one JSON object per progress event" },
		{ .name = "allow-dirty-harness", .kind = CB_OPT_FLAG, .dst = &o.allow_dirty,
		  .help = "do not check caliber's own commit (recorded)" },
		{ .name = "sign-key", .kind = CB_OPT_PATH, .dst = &o.sign_key, .arg = "KEY.pem",
		  .help = "sign the seal with this Ed25519 private key (PEM)" },
		{ .name = "confinement", .kind = CB_OPT_STR, .dst = &confine, .arg = "MODE",
		  .help = "auto (default), landlock, namespace or off: how workers are confined" },
		{ .name = "require-confinement", .kind = CB_OPT_FLAG, .dst = &o.require_confinement,
		  .help = "refuse the batch (exit 3) when workers cannot be confined" },
		{ .name = "no-confinement", .kind = CB_OPT_FLAG, .dst = &no_confinement,
		  .help = "the same as --confinement off (recorded, and said)" },
		{ .name = NULL }
	};
	const struct cb_cmd_spec spec = { "run", "--manifest F --task-matrix F --build-root D --corpus D --output-root D [options]",
					  run_about, opts, 0, 0 };

	rc = cb_parse_opts(&spec, argc, argv, &args, err);
	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	rc = CB_EXIT_USAGE;
	if (!o.manifest || !o.matrix || !o.build_root || !o.corpus || !o.output) {
		missing_options(o.manifest, o.matrix, o.build_root, o.corpus, o.output, err);
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
	} else if (o.sign_key && cb_sign_key_check(o.sign_key, err) < 0) {
		/* A key that cannot sign is found before the campaign, not after it. */
		cb_prefix(err, "--sign-key");
	} else if (devices && (shard || o.device || o.preflight_only)) {
		cb_fail(err, "--devices deals the shards and pins their devices itself: no --%s with it",
			shard ? "shard" : o.device ? "device" : "preflight-only");
	} else {
		o.workers = (enum cb_worker_mode)mode;
		o.prestart = (int)prestart;
		o.confinement = no_confinement ? CB_CONFINE_OFF : (enum cb_confine_mode)confinement;
		o.argc = argc;
		o.argv = argv;
		if (devices)
			rc = cb_run_devices(&o, devices, err);
		else if (!shard || cb_shard_parse(shard, "--shard", &o.shard, err) == 0)
			rc = cb_run(&o, err);
	}
	cb_args_release(&args);
	return rc;
}
