/* worker_proc.c: a cell's worker processes (worker.h, struct
 * cb_cell_proc): starting one with its private folder and, confined, its
 * slot; keeping --prestart of them started ahead of their turn (session
 * mode); taking the serving one for a request; ending them; and moving
 * the serving worker's slot into and out of the cell folder. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "seal/tidy.h"
#include "worker_int.h"

/* Remove the slot *slot of a worker that is gone (its processes with it),
 * and forget it. */
void worker_drop_slot(char **slot)
{
	struct cb_err ignored;

	if (*slot)
		cb_rm_rf(*slot, &ignored);
	free(*slot);
	*slot = NULL;
}

/* Start a worker of the cell into c. Its private folder (caches, HOME,
 * working directory, TMPDIR) and environment are the cell's for the whole
 * run, but fresh for every process in task mode. Confined, it gets a
 * fresh slot (*slot, under ctx->slots) and may write only there and in
 * its private folder. */
static int start_worker(const struct cb_worker_ctx *ctx, struct cb_cell_proc *cp, struct cb_child *c,
			char **slot, struct cb_err *err)
{
	const char *dirs[2];

	if (ctx->mode == CB_WORKERS_TASK || !cp->dir) {
		free(cp->dir);
		cb_env_release(&cp->env);
		json_decref(cp->overlay);
		cp->overlay = NULL;
		cp->dir = cb_strdupf("%s/%s-%d", ctx->scratch, cp->cell->name, cp->spawned);
		if (!cp->dir)
			return cb_fail(err, "out of memory");
		if (cb_worker_env(ctx, cp->cell, cp->dir, &cp->env, &cp->overlay, err) < 0)
			return -1;
	}
	*slot = NULL;
	if (ctx->slots) {
		*slot = cb_strdupf("%s/%s-%d", ctx->slots, cp->cell->name, cp->spawned);
		if (!*slot)
			return cb_fail(err, "out of memory");
		if (mkdir(*slot, 0755) < 0) {
			cb_fail(err, "%s: %s", *slot, strerror(errno));
			free(*slot);
			*slot = NULL;
			return -1;
		}
	}
	cp->spawned++;
	dirs[0] = cp->dir;
	dirs[1] = *slot;
	if (cb_child_spawn_confined(c, ctx->worker_argv, cp->env.v, CB_CHILD_REPLY | CB_CHILD_LIFELINE,
				    ctx->confine_abi, dirs, 2, err) < 0) {
		worker_drop_slot(slot);
		return cb_prefix(err, "cell %s: worker", cp->cell->name);
	}
	return 0;
}

int cb_cell_proc_prestart(const struct cb_worker_ctx *ctx, struct cb_cell_proc *cp, struct cb_err *err)
{
	while (cp->nahead < (size_t)ctx->prestart && cp->nahead < CB_PRESTART_MAX) {
		memset(&cp->ahead[cp->nahead], 0, sizeof(cp->ahead[cp->nahead]));
		if (start_worker(ctx, cp, &cp->ahead[cp->nahead], &cp->ahead_slot[cp->nahead], err) < 0)
			return -1;
		cp->ahead_ms[cp->nahead++] = cb_mono_ms();
	}
	return 0;
}

/* The cell's serving worker: the oldest started ahead, else a new one. */
int worker_take(const struct cb_worker_ctx *ctx, struct cb_cell_proc *cp, struct cb_err *err)
{
	if (cp->nahead) {
		cp->child = cp->ahead[0];
		cp->started_ms = cp->ahead_ms[0];
		cp->slot = cp->ahead_slot[0];
		memmove(&cp->ahead[0], &cp->ahead[1], (cp->nahead - 1) * sizeof(cp->ahead[0]));
		memmove(&cp->ahead_ms[0], &cp->ahead_ms[1], (cp->nahead - 1) * sizeof(cp->ahead_ms[0]));
		memmove(&cp->ahead_slot[0], &cp->ahead_slot[1], (cp->nahead - 1) * sizeof(cp->ahead_slot[0]));
		memset(&cp->ahead[--cp->nahead], 0, sizeof(cp->ahead[0]));
		cp->ahead_slot[cp->nahead] = NULL;
	} else {
		memset(&cp->child, 0, sizeof(cp->child));
		if (start_worker(ctx, cp, &cp->child, &cp->slot, err) < 0)
			return -1;
		cp->started_ms = -1;
	}
	cp->alive = 1;
	return 0;
}

/* Kill the workers waiting ahead. */
static void drop_ahead(struct cb_cell_proc *cp)
{
	while (cp->nahead) {
		cb_child_kill(&cp->ahead[--cp->nahead], 1000);
		cb_child_release(&cp->ahead[cp->nahead]);
		worker_drop_slot(&cp->ahead_slot[cp->nahead]);
	}
}

/* End the cell's serving worker: EOF on stdin, a short wait, then kill;
 * the workers waiting ahead stay. */
void worker_stop_serving(struct cb_cell_proc *cp)
{
	enum cb_wait what;
	char *line = NULL;
	size_t len;
	struct cb_err err;

	if (!cp->alive)
		return;
	cb_child_close_stdin(&cp->child);
	if (cb_child_wait(&cp->child, NULL, cb_mono_ms() + 5000, &what, &line, &len, &err) == 0 &&
	    what != CB_WAIT_EXITED)
		cb_child_kill(&cp->child, 1000);
	free(line);
	cb_child_release(&cp->child);
	cp->alive = 0;
}

void cb_cell_proc_stop(struct cb_cell_proc *cp)
{
	drop_ahead(cp);
	worker_stop_serving(cp);
	worker_drop_slot(&cp->slot);
}

void cb_cell_proc_release(struct cb_cell_proc *cp)
{
	if (!cp)
		return;
	drop_ahead(cp);
	if (cp->alive) {
		cb_child_kill(&cp->child, 1000);
		cb_child_release(&cp->child);
		cp->alive = 0;
	}
	worker_drop_slot(&cp->slot);
	cb_env_release(&cp->env);
	json_decref(cp->overlay);
	free(cp->dir);
	cp->overlay = NULL;
	cp->dir = NULL;
}

/* Make the serving worker's slot the cell folder dir (empty, made by the
 * runner): what the worker put in its slot before its request was not
 * written for this cell, and is taken out into removed (tidy.h) before
 * the slot takes dir's place. */
int worker_slot_in(struct cb_cell_proc *cp, const char *dir, json_t *removed, struct cb_err *err)
{
	if (cb_tidy_fresh(cp->slot, removed, err) < 0)
		return cb_prefix(err, "worker slot");
	if (rmdir(dir) < 0)
		return cb_fail(err, "%s: cannot make way for the worker's slot: %s", dir, strerror(errno));
	if (rename(cp->slot, dir) < 0)
		return cb_fail(err, "%s: cannot move the worker's slot %s there: %s", dir, cp->slot, strerror(errno));
	return 0;
}

/* The cell ends: the slot leaves the cell folder dir for its place under
 * .slots, and what is in it moves into a new folder at dir, which the
 * worker's rules do not reach (Landlock grants rights beneath a folder,
 * wherever it is moved, never beneath a folder made after). */
int worker_slot_out(struct cb_cell_proc *cp, const char *dir, struct cb_err *err)
{
	char **names = NULL;
	size_t n = 0, i;
	int rc = 0;

	if (rename(dir, cp->slot) < 0)
		return cb_fail(err, "%s: cannot move the worker's slot back to %s: %s", dir, cp->slot, strerror(errno));
	if (mkdir(dir, 0755) < 0)
		return cb_fail(err, "%s: %s", dir, strerror(errno));
	if (cb_list_dir(cp->slot, &names, &n, err) < 0)
		return -1;
	for (i = 0; i < n && rc == 0; i++) {
		char *from = cb_path_join(cp->slot, names[i]), *to = cb_path_join(dir, names[i]);
		if (!from || !to)
			rc = cb_fail(err, "out of memory");
		else if (rename(from, to) < 0)
			rc = cb_fail(err, "%s: cannot move into the cell folder: %s", from, strerror(errno));
		free(from);
		free(to);
	}
	cb_strv_free(names, n);
	return rc;
}
