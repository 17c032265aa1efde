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

int cmd_slurm(int argc, char **argv, struct cb_err *err)
{
	const char *manifest = NULL, *matrix = NULL, *build_root = NULL, *corpus = NULL, *output = NULL, *job = NULL;
	const char *worker = NULL, *backends = NULL, *python = NULL, *isolate = NULL, *partition = NULL,
		   *resource = "gpu";
	long long shards = LLONG_MIN, parallel = LLONG_MIN;   /* LLONG_MIN: not given */
	int allow_dirty = 0, rc;
	struct cb_args args = CB_ARGS_INIT;
	const struct cb_opt opts[] = {
		{ "manifest", CB_OPT_PATH, &manifest, "FILE", "FROZEN/manifest.json (required)" },
		{ "task-matrix", CB_OPT_PATH, &matrix, "FILE", "FROZEN/task-matrix.json (required)" },
		{ "build-root", CB_OPT_PATH, &build_root, "DIR", "the compiler's root on the nodes (required)" },
		{ "corpus", CB_OPT_PATH, &corpus, "DIR", "the corpus root on the nodes (required)" },
		{ "output-root", CB_OPT_PATH, &output, "DIR", "the merged run root; shards go to DIR.shards/ (required)" },
		{ "shards", CB_OPT_INT, &shards, "N", "how many shards, one array task each (required)" },
		{ "parallel", CB_OPT_INT, &parallel, "K", "at most K array tasks at a time (default N)" },
		{ "partition", CB_OPT_STR, &partition, "P", "the Slurm partition (default the cluster's)" },
		{ "resource", CB_OPT_STR, &resource, "gpu|cpu", "what one shard needs: one GPU (default) or a CPU" },
		{ "worker", CB_OPT_CMD, &worker, "CMD", "worker session command for every shard" },
		{ "backends", CB_OPT_PATH, &backends, "DIR", "folder of backend files (default caliber's backends/)" },
		{ "python", CB_OPT_PROG, &python, "PATH", "interpreter for the worker and preflights" },
		{ "isolate", CB_OPT_STR, &isolate, "task", "a fresh worker per task, cell and phase" },
		{ "allow-dirty-harness", CB_OPT_FLAG, &allow_dirty, NULL, "do not check caliber's own commit (recorded)" },
		{ "output", CB_OPT_PATH, &job, "FILE", "the job script to write (required)" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "slurm",
					  "--manifest F --task-matrix F --build-root D --corpus D --output-root D --shards N -o job.sh [options]",
					  slurm_about, opts, 0, 0 };
	struct cb_slurm_opts o;

	rc = cb_parse_opts(&spec, argc, argv, &args, err);
	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	rc = CB_EXIT_USAGE;
	if (!manifest || !matrix || !build_root || !corpus || !output || shards == LLONG_MIN || !job)
		cb_fail(err, "--manifest, --task-matrix, --build-root, --corpus, --output-root, --shards and -o are required");
	else if (shards < 1 || (parallel != LLONG_MIN && parallel < 1))
		cb_fail(err, "--%s: '%lld' is not a count >= 1", shards < 1 ? "shards" : "parallel",
			shards < 1 ? shards : parallel);
	else if (strcmp(resource, "gpu") != 0 && strcmp(resource, "cpu") != 0)
		cb_fail(err, "--resource: '%s' is not gpu or cpu", resource);
	else if (isolate && strcmp(isolate, "task") != 0)
		cb_fail(err, "--isolate: the only unit is 'task'");
	else {
		o = (struct cb_slurm_opts){ manifest, matrix, build_root, corpus, output, worker, backends, python,
					    isolate != NULL, allow_dirty, (size_t)shards,
					    parallel == LLONG_MIN ? 0 : (size_t)parallel, partition,
					    strcmp(resource, "cpu") == 0, job };
		rc = cb_slurm_write(&o, err) < 0 ? CB_EXIT_FAIL : CB_EXIT_OK;
		if (rc == CB_EXIT_OK)
			printf("slurm: wrote %s (%lld shards); submit it with: sh %s\n", job, shards, job);
	}
	cb_args_release(&args);
	return rc;
}
