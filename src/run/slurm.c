/* slurm.c: the job script of `caliber slurm`. One POSIX sh file plays
 * three parts, chosen by CALIBER_SLURM_STEP: run by hand (`sh job.sh`) it
 * submits itself as the shard array and then as the merge job depending
 * on it (afterok); as an array task it runs shard SLURM_ARRAY_TASK_ID + 1
 * on the device Slurm made visible, resuming it when the task is
 * requeued; as the merge job it merges the shards. Every value caliber
 * puts in it is single-quoted, so paths with blanks or quotes stay
 * whole. */
#include "slurm.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/fsutil.h"
#include "seal/guard.h"
#include "campaign/manifest.h"
#include "campaign/matrix.h"
#include "campaign/plan.h"
#include "base/proc.h"
#include "campaign/shard.h"

/* s for inside single quotes: each quote closed, escaped and reopened. */
static void sq_body(struct cb_buf *b, const char *s)
{
	for (; *s; s++)
		if (*s == '\'')
			cb_buf_adds(b, "'\\''");
		else
			cb_buf_add(b, s, 1);
}

/* s as one single-quoted shell word. */
static void sq(struct cb_buf *b, const char *s)
{
	cb_buf_adds(b, "'");
	sq_body(b, s);
	cb_buf_adds(b, "'");
}

/* " --NAME 'VALUE'" when value is set. */
static void opt(struct cb_buf *b, const char *name, const char *value)
{
	if (!value)
		return;
	cb_buf_addf(b, " \\\n\t\t--%s ", name);
	sq(b, value);
}

/* The shard step: the run of shard K on the device Slurm gave the task. */
static void shard_step(struct cb_buf *b, const struct cb_slurm_opts *o, const char *vis)
{
	cb_buf_adds(b, "shard)\n"
		       "\tk=$((SLURM_ARRAY_TASK_ID + 1))\n"
		       "\troot=\"$OUT.shards/$k\"\n"
		       "\tresume=\n"
		       "\t# a requeued array task continues its shard\n"
		       "\tif [ -d \"$root\" ]; then resume=--resume; fi\n");
	if (!o->cpu)
		cb_buf_addf(b, "\tdevice=${%s:?Slurm made no device visible (%s is not set): does gres.conf on the node declare its GPUs?}\n"
			       "\techo \"caliber slurm: shard $k/$SHARDS on $(hostname), %s=$device\"\n",
			    vis, vis, vis);
	else
		cb_buf_adds(b, "\techo \"caliber slurm: shard $k/$SHARDS on $(hostname)\"\n");
	cb_buf_adds(b, "\texec \"$CALIBER\" run");
	opt(b, "manifest", o->manifest);
	opt(b, "task-matrix", o->matrix);
	opt(b, "build-root", o->build_root);
	opt(b, "corpus", o->corpus);
	opt(b, "worker", o->worker);
	opt(b, "backends", o->backends);
	opt(b, "python", o->python);
	opt(b, "isolate", o->isolate ? "task" : NULL);
	if (o->allow_dirty)
		cb_buf_adds(b, " \\\n\t\t--allow-dirty-harness");
	cb_buf_addf(b, " \\\n\t\t--output-root \"$root\" --shard \"$k/$SHARDS\"%s $resume\n\t;;\n",
		    o->cpu ? "" : " --device \"$device\"");
}

/* The submit step: the array, then the merge job after it. */
static void submit_step(struct cb_buf *b, const struct cb_slurm_opts *o, const char *name)
{
	cb_buf_adds(b, "submit)\n"
		       "\tmkdir -p \"$OUT.shards\"\n"
		       "\tarray=$(sbatch --parsable --job-name=");
	sq(b, name);
	cb_buf_addf(b, " --array=0-%zu%%%zu%s", o->shards - 1, o->parallel ? o->parallel : o->shards,
		    o->cpu ? " --ntasks=1" : " --ntasks=1 --gres=gpu:1");
	if (o->partition) {
		cb_buf_adds(b, " --partition=");
		sq(b, o->partition);
	}
	cb_buf_adds(b, " \\\n\t\t--output=\"$OUT.shards/slurm-%A_%a.out\" --export=ALL,CALIBER_SLURM_STEP=shard \"$0\")\n"
		       "\tarray=${array%%;*}\n"
		       "\tmerge=$(sbatch --parsable --job-name=");
	cb_buf_adds(b, "'");
	sq_body(b, name);
	cb_buf_adds(b, "-merge' --ntasks=1 --dependency=afterok:\"$array\"");
	if (o->partition) {
		cb_buf_adds(b, " --partition=");
		sq(b, o->partition);
	}
	cb_buf_adds(b, " \\\n\t\t--output=\"$OUT.shards/slurm-%j-merge.out\" --export=ALL,CALIBER_SLURM_STEP=merge \"$0\")\n"
		       "\tmerge=${merge%%;*}\n"
		       "\techo \"caliber slurm: shards: job $array (array tasks 0..$((SHARDS - 1))), merge: job $merge (after every shard succeeded)\"\n"
		       "\techo \"caliber slurm: shard roots and Slurm's logs in $OUT.shards/, the merged run will be $OUT\"\n"
		       "\t;;\n");
}

/* The whole script. */
static char *script(const struct cb_slurm_opts *o, const struct cb_manifest *m, const char *vis, const char *self,
		    size_t ntasks, size_t *len)
{
	struct cb_buf b = CB_BUF_INIT;
	char *name = cb_strdupf("caliber-%s", m->campaign);

	cb_buf_addf(&b, "#!/bin/sh\n"
			"# Written by `caliber slurm` (caliber %s, commit %s):\n"
			"# campaign %s, %zu tasks in %zu shards, at most %zu running at a time, one %s each.\n"
			"#\n"
			"#   sh THIS_FILE      submits the shards as one job array and a merge job that\n"
			"#                     runs when every shard has succeeded (afterok)\n"
			"#\n"
			"# Array task a runs shard a+1 into OUT.shards/<a+1>, a sealed run root; a task\n"
			"# that is requeued resumes its shard. The merge job joins them into OUT.\n"
			"# Slurm reads its other options from the environment of sbatch (SBATCH_TIMELIMIT,\n"
			"# SBATCH_ACCOUNT, ...).\n"
			"set -eu\n",
		    cb_version(), cb_commit(), m->campaign, ntasks, o->shards, o->parallel ? o->parallel : o->shards,
		    o->cpu ? "CPU" : "GPU");
	cb_buf_adds(&b, "CALIBER=");
	sq(&b, self);
	cb_buf_adds(&b, "\nOUT=");
	sq(&b, o->output);
	cb_buf_addf(&b, "\nSHARDS=%zu\n\ncase \"${CALIBER_SLURM_STEP:-submit}\" in\n", o->shards);
	submit_step(&b, o, name ? name : "caliber");
	shard_step(&b, o, vis);
	cb_buf_adds(&b, "merge)\n"
			"\tset --\n"
			"\tk=1\n"
			"\twhile [ \"$k\" -le \"$SHARDS\" ]; do set -- \"$@\" \"$OUT.shards/$k\"; k=$((k + 1)); done\n"
			"\texec \"$CALIBER\" merge \"$@\" --output-root \"$OUT\"\n"
			"\t;;\n"
			"*)\n"
			"\techo \"caliber slurm: unknown CALIBER_SLURM_STEP '$CALIBER_SLURM_STEP' (submit, shard or merge)\" >&2\n"
			"\texit 2\n"
			"\t;;\n"
			"esac\n");
	free(name);
	return cb_buf_detach(&b, len);
}

int cb_slurm_write(const struct cb_slurm_opts *o, struct cb_err *err)
{
	struct cb_manifest m;
	struct cb_backend be;
	json_t *mx = NULL;
	size_t *deal = NULL, len = 0, n;
	char *self = NULL, *text = NULL;
	int rc = -1;

	memset(&m, 0, sizeof(m));
	memset(&be, 0, sizeof(be));
	if (o->shards < 1 || o->shards > CB_SHARD_MAX)
		return cb_fail(err, "--shards: %zu is not a number of shards from 1 to %d", o->shards, CB_SHARD_MAX);
	if (cb_manifest_load(o->manifest, &m, err) < 0 || cb_backend_load(o->backends, m.backend, &be, err) < 0 ||
	    !(mx = cb_matrix_load_bound(o->matrix, &m, err)))
		goto out;
	n = json_array_size(json_object_get(mx, "tasks"));
	deal = calloc(n ? n : 1, sizeof(*deal));
	if (!deal) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (cb_shard_deal(json_object_get(mx, "tasks"), o->shards, deal, err) < 0) {
		cb_prefix(err, "--shards %zu", o->shards);
		goto out;
	}
	if (!(self = cb_self_exe(err)))
		goto out;
	text = script(o, &m, be.visibility_env, self, n, &len);
	if (!text) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (cb_guard_mkdir_parent(&(struct cb_guard){ "-o", NULL, NULL }, o->job, 0755, err) < 0 ||
	    cb_write_atomic(o->job, text, len, 0755, err) < 0)
		goto out;
	rc = 0;
out:
	free(text);
	free(self);
	free(deal);
	json_decref(mx);
	cb_backend_release(&be);
	cb_manifest_release(&m);
	return rc;
}
