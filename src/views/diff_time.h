/* diff_time.h: the GPU time of a diffed task (docs/design.md section 15),
 * the part of the diff's model (diff.h) that reads the cells' profiled
 * replays (kernels.h) and timing rows, and what diff.c and diff_time.c
 * share. Used by them only. */
#ifndef CB_DIFF_TIME_H
#define CB_DIFF_TIME_H

#include "caliber.h"
#include "diff.h"
#include "account/kernels.h"
#include "ir/topology.h"

/* Each cell's profiled replays of task t (in tdir) into ck; in a derived
 * run scoped by time, each cell's topology scoped so, as reaccount scoped
 * it (an X or K task keeps the sealed floor). A cell that cannot be scoped
 * gives the task no topology to compare (t->error). */
int cb_diff_load_profiles(const struct cb_diff *d, const char *tdir, struct cb_diff_task *t, struct cb_topology *topo,
			  struct cb_cell_kernels *ck, struct cb_err *err);

/* Task t's GPU time (t->time) from the profiles in ck: per kernel and
 * cell, the cells' totals beside their timed medians, and where the time
 * moved. A profile or resources file that cannot be read is kept in
 * t->time.error, not failed. */
int cb_diff_attribute(const struct cb_diff *d, const char *tdir, struct cb_diff_task *t, const struct cb_topology *topo,
		      const struct cb_cell_kernels *ck, struct cb_err *err);

/* A message about a file under the run root, without the root's path (a
 * fresh string, NULL when out of memory): what the diff shows is the same
 * from anywhere. */
char *cb_diff_relative_msg(const struct cb_diff *d, const char *msg);

#endif
