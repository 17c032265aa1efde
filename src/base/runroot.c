/* runroot.c: the phase names and the cell and session folders of a run
 * root (runroot.h). */
#include "runroot.h"

#include "fsutil.h"

static const char *const phase_names[CB_NPHASES] = { "correctness", "a", "b", "screen" };

const char *cb_phase_name(enum cb_phase p)
{
	return (unsigned)p < CB_NPHASES ? phase_names[p] : "?";
}

char *cb_cell_dir(const char *task_dir, enum cb_phase p, const char *cell)
{
	return cb_strdupf("%s/" CB_RUN_CELLS "/%s-%s", task_dir, cb_phase_name(p), cell);
}

char *cb_session_dir(const char *task_dir, enum cb_phase p, const char *cell, int k)
{
	if (k <= 1)
		return cb_cell_dir(task_dir, p, cell);
	return cb_strdupf("%s/" CB_RUN_CELLS "/%s-%s.s%d", task_dir, cb_phase_name(p), cell, k);
}
