/* cmd/slurm.c: `caliber slurm`, a Slurm job array for the shards of a
 * frozen campaign and a merge job after it (docs/design.md section 16); the script
 * is slurm.h's. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "opts.h"
#include "run/slurm.h"

static const char slurm_about[] =
	"Write a job script that runs a frozen campaign on a Slurm cluster: `sh\n"
	"job.sh` submits one job array of N tasks (--array=0-(N-1)%K), each running\n"
	"one shard (caliber run --shard K/N) on one GPU (--gres=gpu:1; the device is\n"
	"the one Slurm makes visible through the backend's visibility variable), and\n"
	"a merge job (--dependency=afterok) that joins the sealed shards into\n"
	"--output-root. Shards go to OUTPUT.shards/<K>, with Slurm's logs; a\n"
	"requeued array task resumes its shard. --resource cpu asks for no GPU (the\n"
	"test backends). The campaign is checked first: manifest, backend, task\n"
	"matrix bound to both, N no more than its tasks.";

int cmd_slurm(int argc, const char **argv, struct cb_err *err)
{
	/* Each option is bound straight into the struct cb_slurm_write takes;
	 * only those that need checking first have a local. */
	struct cb_slurm_opts o = { 0 };
	const char *isolate = NULL, *resource = "gpu";
	long long shards = LLONG_MIN, parallel = LLONG_MIN;   /* LLONG_MIN: not given */
	int rc;
	struct cb_args args = CB_ARGS_INIT;
	const struct cb_opt opts[] = {
		{ .name = "manifest", .kind = CB_OPT_PATH, .dst = &o.manifest, .arg = "FILE",
		  .help = "FROZEN/manifest.json (required)" },
		{ .name = "task-matrix", .kind = CB_OPT_PATH, .dst = &o.matrix, .arg = "FILE",
		  .help = "FROZEN/task-matrix.json (required)" },
		{ .name = "build-root", .kind = CB_OPT_PATH, .dst = &o.build_root, .arg = "DIR",
		  .help = "the compiler's root on the nodes (required)" },
		{ .name = "corpus", .kind = CB_OPT_PATH, .dst = &o.corpus, .arg = "DIR",
		  .help = "the corpus root on the nodes (required)" },
		{ .name = "output-root", .kind = CB_OPT_PATH, .dst = &o.output, .arg = "DIR",
		  .help = "the merged run root; shards go to DIR.shards/ (required)" },
		{ .name = "shards", .kind = CB_OPT_INT, .dst = &shards, .arg = "N",
		  .help = "how many shards, one array task each (required)" },
		{ .name = "parallel", .kind = CB_OPT_INT, .dst = &parallel, .arg = "K",
		  .help = "at most K array tasks at a time (default N)" },
		{ .name = "partition", .kind = CB_OPT_STR, .dst = &o.partition, .arg = "P",
		  .help = "the Slurm partition (default the cluster's)" },
		{ .name = "resource", .kind = CB_OPT_STR, .dst = &resource, .arg = "gpu|cpu",
		  .help = "what one shard needs: one GPU (default) or a CPU" },
		{ .name = "worker", .kind = CB_OPT_CMD, .dst = &o.worker, .arg = "CMD",
		  .help = "worker session command for every shard" },
		{ .name = "backends", .kind = CB_OPT_PATH, .dst = &o.backends, .arg = "DIR",
		  .help = "folder of backend files (default caliber's backends/)" },
		{ .name = "python", .kind = CB_OPT_PROG, .dst = &o.python, .arg = "PATH",
		  .help = "interpreter for the worker and preflights" },
		{ .name = "isolate", .kind = CB_OPT_STR, .dst = &isolate, .arg = "task",
		  .help = "a fresh worker per task, cell and phase" },
		{ .name = "allow-dirty-harness", .kind = CB_OPT_FLAG, .dst = &o.allow_dirty,
		  .help = "do not check caliber's own commit (recorded)" },
		{ .name = "output", .kind = CB_OPT_PATH, .dst = &o.job, .arg = "FILE",
		  .help = "the job script to write (required)" },
		{ .name = NULL }
	};
	const struct cb_cmd_spec spec = { "slurm",
					  "--manifest F --task-matrix F --build-root D --corpus D --output-root D --shards N -o job.sh [options]",
					  slurm_about, opts, 0, 0 };

	rc = cb_parse_opts(&spec, argc, argv, &args, err);
	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	rc = CB_EXIT_USAGE;
	if (!o.manifest || !o.matrix || !o.build_root || !o.corpus || !o.output || shards == LLONG_MIN || !o.job)
		cb_fail(err, "--manifest, --task-matrix, --build-root, --corpus, --output-root, --shards and -o are required");
	else if (shards < 1 || (parallel != LLONG_MIN && parallel < 1))
		cb_fail(err, "--%s: '%lld' is not a count >= 1", shards < 1 ? "shards" : "parallel",
			shards < 1 ? shards : parallel);
	else if (strcmp(resource, "gpu") != 0 && strcmp(resource, "cpu") != 0)
		cb_fail(err, "--resource: '%s' is not gpu or cpu", resource);
	else if (isolate && strcmp(isolate, "task") != 0)
		cb_fail(err, "--isolate: the only unit is 'task'");
	else {
		o.isolate = isolate != NULL;
		o.shards = (size_t)shards;
		o.parallel = parallel == LLONG_MIN ? 0 : (size_t)parallel;
		o.cpu = strcmp(resource, "cpu") == 0;
		rc = cb_slurm_write(&o, err) < 0 ? CB_EXIT_FAIL : CB_EXIT_OK;
		if (rc == CB_EXIT_OK)
			printf("slurm: wrote %s (%lld shards); submit it with: sh %s\n", o.job, shards, o.job);
	}
	cb_args_release(&args);
	return rc;
}
