/* slurm.h: `caliber slurm` (docs/design.md section 16). caliber schedules nothing
 * across machines itself: it writes a job script that submits the shards
 * of a frozen campaign as one Slurm job array (one shard per array task,
 * one device each) and a merge job that runs once every shard succeeded
 * (docs/formats.md, "Slurm job script"). */
#ifndef CB_SLURM_H
#define CB_SLURM_H

#include <stddef.h>

#include "caliber.h"

/* What the script runs. Strings are borrowed; paths absolute. */
struct cb_slurm_opts {
	const char *manifest, *matrix;     /* the frozen campaign */
	const char *build_root, *corpus;
	const char *output;                /* the merged run root; shards go to <output>.shards/<K> */
	const char *worker, *backends, *python;   /* passed to every shard's run (NULL: run's default) */
	int isolate, allow_dirty;
	size_t shards;                     /* N */
	size_t parallel;                   /* at most this many array tasks at a time (0: N) */
	const char *partition;             /* NULL: the cluster's default */
	int cpu;                           /* the resource is CPUs: no --gres, no device from Slurm */
	const char *job;                   /* the script to write */
};

/* Check the campaign (manifest, backend, matrix bound to both, N shards
 * dealable) and write the job script, executable, atomically. */
int cb_slurm_write(const struct cb_slurm_opts *o, struct cb_err *err);

#endif
