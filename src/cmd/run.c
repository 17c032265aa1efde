/* cmd/run.c: `caliber run`, a frozen campaign on one device into a sealed
 * run root (SPEC section 6); the work is the runner's (runner.h). */
#include <string.h>

#include "cmd.h"
#include "devices.h"
#include "opts.h"
#include "runner.h"
#include "sign.h"

static const char run_about[] =
	"Run a frozen campaign on one device, serially, into a sealed run root.\n"
	"Preflights run first (binding, sources, imports, device-count, targets,\n"
	"device-idle, plugin-plan, output-root); if any fails the batch is refused\n"
	"(exit 3) and nothing is written. Then per task: correctness in every cell,\n"
	"round a in manifest order, round b in reverse order when the candidate's\n"
	"topology is below the baseline's, and the task receipt; at the end the\n"
	"campaign receipt, matrix.csv, matrix.md and the seal. Each cell keeps one\n"
	"worker process across tasks; --isolate task starts one per task, cell and\n"
	"phase. --worker CMD replaces the worker session command (split on spaces,\n"
	"no shell). --stop-after S and --deadline TIME stop cleanly (exit 4) rather\n"
	"than start a task or a cell that would end past the deadline by what it is\n"
	"expected to take: the longest such cell of this task so far, else of this\n"
	"run, else its timeout; --resume continues from the first task without a\n"
	"receipt (a task stopped between its cells is redone).\n"
	"The seal's own digest (SHA-256 of SHA256SUMS) is printed at the end; with\n"
	"--sign-key KEY.pem (Ed25519, `openssl genpkey -algorithm ed25519`) the seal\n"
	"is signed into SHA256SUMS.sig, which `caliber verify --key PUB.pem` checks.\n"
	"--shard K/N runs only shard K of N into its own sealed run root (tasks dealt\n"
	"by budget_s, longest first, onto the least-loaded shard, ties by matrix\n"
	"order); caliber merge joins the shards. --devices LIST runs one shard per\n"
	"listed device in parallel, each a caliber run of its own pinned through the\n"
	"backend's visibility variable and preflighted on its device (all before any\n"
	"starts), into OUTPUT.shards/<K>, and merges them into --output-root.\n"
	"--prescreen: after correctness passed in every cell, a compile-only pass of\n"
	"the benchmark rows (phase screen: each row called as its warm-up calls it,\n"
	"nothing timed) in every cell; a task whose launched kernels are then\n"
	"identical in every cell (binary, TTGIR without locations, launch\n"
	"configuration, autotune decisions) is not timed: verdict B, code\n"
	"identical-binaries, its digests in its receipt. Without it every task is timed.\n"
	"Exit status: 0 for a completed campaign whatever its verdicts, unless\n"
	"--fail-on VERDICTS (e.g. K,R,X) names one that occurred (exit 5).";

int cmd_run(int argc, char **argv, struct cb_err *err)
{
	struct cb_run_opts o;
	const char *manifest = NULL, *matrix = NULL, *build_root = NULL, *corpus = NULL, *output = NULL;
	const char *worker = NULL, *backends = NULL, *device = NULL, *python = "python3", *isolate = NULL;
	const char *fail_on = NULL, *deadline = NULL, *sign_key = NULL, *shard = NULL, *devices = NULL;
	long long stop_after = 0;
	int resume = 0, quiet = 0, json_progress = 0, allow_dirty = 0, preflight_only = 0, prescreen = 0;
	struct cb_args args = CB_ARGS_INIT;
	int rc;
	const struct cb_opt opts[] = {
		{ "manifest", CB_OPT_PATH, &manifest, "FILE", "FROZEN/manifest.json (required)" },
		{ "task-matrix", CB_OPT_PATH, &matrix, "FILE", "FROZEN/task-matrix.json (required)" },
		{ "build-root", CB_OPT_PATH, &build_root, "DIR", "the compiler's root (required)" },
		{ "corpus", CB_OPT_PATH, &corpus, "DIR", "the corpus root (required)" },
		{ "output-root", CB_OPT_PATH, &output, "DIR", "the run root to create (required)" },
		{ "worker", CB_OPT_CMD, &worker, "CMD", "worker session command (default: PYTHON -m caliber_pytest.session)" },
		{ "resume", CB_OPT_FLAG, &resume, NULL, "continue a stopped or killed run in --output-root" },
		{ "stop-after", CB_OPT_INT, &stop_after, "S", "start nothing that would end S seconds after the start" },
		{ "deadline", CB_OPT_STR, &deadline, "TIME", "the same, by a UTC time YYYY-MM-DDTHH:MM:SSZ" },
		{ "isolate", CB_OPT_STR, &isolate, "task", "a fresh worker per task, cell and phase" },
		{ "prescreen", CB_OPT_FLAG, &prescreen, NULL, "time no task whose binaries are identical in every cell" },
		{ "shard", CB_OPT_STR, &shard, "K/N", "run only shard K of N (tasks dealt by budget, longest first)" },
		{ "devices", CB_OPT_STR, &devices, "LIST", "one shard per device (e.g. 0,1,2,3), in parallel, then merge" },
		{ "preflight-only", CB_OPT_FLAG, &preflight_only, NULL, "run the preflights and stop (exit 0 or 3), writing nothing" },
		{ "fail-on", CB_OPT_STR, &fail_on, "VERDICTS", "exit 5 when a task gets one of these (e.g. K,R,X)" },
		{ "backends", CB_OPT_PATH, &backends, "DIR", "folder of backend files (default caliber's backends/)" },
		{ "device", CB_OPT_STR, &device, "ID", "value of the visibility variable (default: manifest uuid, else 0)" },
		{ "python", CB_OPT_PROG, &python, "PATH", "interpreter for the worker and preflights (default python3)" },
		{ "quiet", CB_OPT_FLAG, &quiet, NULL, "no progress output" },
		{ "json-progress", CB_OPT_FLAG, &json_progress, NULL, "one JSON object per progress event" },
		{ "allow-dirty-harness", CB_OPT_FLAG, &allow_dirty, NULL, "do not check caliber's own commit (recorded)" },
		{ "sign-key", CB_OPT_PATH, &sign_key, "KEY.pem", "sign the seal with this Ed25519 private key (PEM)" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "run", "--manifest F --task-matrix F --build-root D --corpus D --output-root D [options]",
					  run_about, opts, 0, 0 };

	rc = cb_parse_opts(&spec, argc, argv, &args, err);
	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	rc = CB_EXIT_USAGE;
	if (!manifest || !matrix || !build_root || !corpus || !output) {
		cb_fail(err, "--manifest, --task-matrix, --build-root, --corpus and --output-root are required");
	} else if (isolate && strcmp(isolate, "task") != 0) {
		cb_fail(err, "--isolate: the only unit is 'task'");
	} else if (sign_key && cb_sign_key_check(sign_key, err) < 0) {
		/* A key that cannot sign is found before the campaign, not after it. */
		cb_prefix(err, "--sign-key");
	} else if (devices && (shard || device || preflight_only)) {
		cb_fail(err, "--devices deals the shards and pins their devices itself: no --%s with it",
			shard ? "shard" : device ? "device" : "preflight-only");
	} else if (devices && sign_key) {
		cb_fail(err, "--devices: merge does not sign; sign the shards (run --shard K/N --sign-key) and merge them");
	} else {
		o = (struct cb_run_opts){ manifest, matrix, build_root, corpus, output, worker, backends, device, python,
					  fail_on, deadline, stop_after, isolate != NULL, resume, quiet, json_progress,
					  allow_dirty, argc, argv, sign_key, { 0, 0 }, preflight_only, prescreen };
		if (devices)
			rc = cb_run_devices(&o, devices, err);
		else if (!shard || cb_shard_parse(shard, "--shard", &o.shard, err) == 0)
			rc = cb_run(&o, err);
	}
	cb_args_release(&args);
	return rc;
}
