/* worker_int.h: what the pieces behind worker.h share, for src/run/ only.
 * worker.c builds the context, environments and requests; worker_proc.c
 * starts and keeps a cell's worker processes and their slots;
 * worker_cell.c runs one request (cb_cell_run); worker_reply.c judges
 * what it came to (the reply, the log, the cell folder). */
#ifndef CB_WORKER_INT_H
#define CB_WORKER_INT_H

#include <stddef.h>

#include <jansson.h>

#include "caliber.h"
#include "account/evidence.h"
#include "base/proc.h"
#include "worker.h"

/* The longest worker error a cell receipt quotes (a longer one is cut
 * and says so), and room for a detail: a protocol error of reply.h (at
 * most a struct cb_err message), a note of tidy.h, the end of the log. */
#define ERROR_QUOTE_MAX 1024
#define CELL_DETAIL_MAX (CB_ERR_MAX + 256)

/* worker_proc.c: a cell's worker processes and their slots. */
void worker_drop_slot(char **slot);
int worker_take(const struct cb_worker_ctx *ctx, struct cb_cell_proc *cp, struct cb_err *err);
void worker_stop_serving(struct cb_cell_proc *cp);
int worker_slot_in(struct cb_cell_proc *cp, const char *dir, json_t *removed, struct cb_err *err);
int worker_slot_out(struct cb_cell_proc *cp, const char *dir, struct cb_err *err);

/* worker_reply.c: what a request came to. */
json_t *worker_outputs_of(const char *dir);
int worker_file_in(const char *dir, const char *name);
void worker_log_tail(const char *log, char *out, size_t cap);
void worker_judge_reply(struct cb_cell_proc *cp, enum cb_wait what, const char *line, size_t len,
		 const char *id, long long timeout_s, enum cb_outcome *outcome, long long *pytest_exit,
		 char *detail, size_t cap, int *broke);
int worker_tidy_cell(const char *dir, json_t *removed, enum cb_outcome *outcome, char *detail,
	      size_t cap, struct cb_err *err);

#endif
