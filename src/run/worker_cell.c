/* worker_cell.c: one request of one cell (cb_cell_run, worker.h): the
 * serving worker taken, the request sent with its id, the reply waited
 * for into worker.log, the worker kept or ended, what it left reaped, and
 * the cell receipt written; the facts of the request go to
 * cb_cell_receipt_write (receipt.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "seal/guard.h"
#include "base/jsonio.h"
#include "base/runroot.h"
#include "account/receipt.h"
#include "worker_int.h"

/* Open a cell's worker.log for writing, emptied: never through a link (a
 * symlink is refused by O_NOFOLLOW; a hard link, which O_TRUNC would empty
 * wherever its other names are, is refused before anything is cut), and
 * only a regular file (O_NONBLOCK: a FIFO planted there cannot block). */
static int open_log(const char *log, int *fd, struct cb_err *err)
{
	struct stat st;
	int rc = 0;

	*fd = open(log, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
	if (*fd < 0)
		return cb_fail(err, "%s: %s", log,
			       errno == ELOOP ? "a symlink; caliber never writes through one" : strerror(errno));
	if (fstat(*fd, &st) < 0)
		rc = cb_fail(err, "%s: %s", log, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		rc = cb_fail(err, "%s: %s, not a regular file", log, cb_file_kind(st.st_mode));
	else if (st.st_nlink != 1)
		rc = cb_fail(err, "%s: a hard link (%ju names); caliber never writes a file that has other names", log,
			     (uintmax_t)st.st_nlink);
	else if (ftruncate(*fd, 0) < 0)
		rc = cb_fail(err, "%s: %s", log, strerror(errno));
	if (rc < 0) {
		close(*fd);
		*fd = -1;
	}
	return rc;
}

/* The request id of cp's next request (docs/formats.md): fresh string. */
static char *next_request_id(struct cb_cell_proc *cp, const char *task, enum cb_phase p)
{
	return cb_strdupf("%s/%s/%s/%llu", task, cb_phase_name(p), cp->cell->name, ++cp->requests);
}

/* Write all of req to the worker's stdin; a worker that died before
 * reading shows up as EXITED when its reply is waited for. */
static void send_request(struct cb_cell_proc *cp, const char *req)
{
	size_t n = strlen(req), done = 0;

	while (done < n) {
		ssize_t w = write(cp->child.in_fd, req + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
}

/* The deadline of a request with timeout_s (CLOCK_MONOTONIC ms), bounded
 * as the manifest bounds it, so that no timeout overflows. */
static long long deadline_of(long long timeout_s)
{
	if (timeout_s < 1)
		timeout_s = 1;
	if (timeout_s > CB_TIMEOUT_S_MAX)
		timeout_s = CB_TIMEOUT_S_MAX;
	return cb_mono_ms() + timeout_s * 1000;
}

int cb_cell_run(const struct cb_worker_ctx *ctx, struct cb_cell_proc *cp, json_t *request,
		const char *task, enum cb_phase p, long long timeout_s, const json_t *found,
		enum cb_outcome *outcome, struct cb_err *err)
{
	const char *dir = cb_json_str(request, "dir");
	char *log = cb_path_join(dir, "worker.log"), *line = NULL, *req = NULL, *id = NULL;
	char started[32], finished[32], detail[CELL_DETAIL_MAX] = "", how[64] = "";
	struct timespec t0;
	struct cb_sink sink;
	enum cb_wait what = CB_WAIT_EXITED;
	long long pytest_exit = -1;
	json_t *removed = found ? json_deep_copy(found) : json_array(), *killed = json_array();
	json_t *compiler = NULL, *outputs = NULL;
	size_t len = 0;
	long long ahead_ms = 0, reply_ns = -1;
	int fresh = 0, log_fd = -1, rc = -1, broke = 0, slotted = 0;

	/* The cell's folder goes through the output guard: a link that a
	 * worker (or anyone) left in the tree above it must not lead into a
	 * sealed run. */
	if (!log || !removed || !killed) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (cb_guard_mkdir(&(struct cb_guard){ NULL, NULL, NULL }, dir, 0755, err) < 0)
		goto out;
	if (!cp->alive) {
		if (worker_take(ctx, cp, err) < 0)
			goto out;
		fresh = 1;
	}
	if (cp->slot) {
		if (worker_slot_in(cp, dir, removed, err) < 0)
			goto out;
		slotted = 1;
	}
	if (open_log(log, &log_fd, err) < 0)
		goto out;
	cb_now_utc(started);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ahead_ms = cp->started_ms < 0 ? 0 : cb_mono_ms() - cp->started_ms;
	id = next_request_id(cp, task, p);
	if (id && json_object_set_new(request, "id", json_string(id)) == 0) {
		char *j = json_dumps(request, JSON_COMPACT | JSON_SORT_KEYS);
		req = j ? cb_strdupf("%s\n", j) : NULL;
		free(j);
	}
	if (!req) {
		cb_fail(err, "out of memory");
		goto out;
	}
	send_request(cp, req);
	if (ctx->mode != CB_WORKERS_PERSISTENT)
		cb_child_close_stdin(&cp->child);
	if (cb_cell_proc_prestart(ctx, cp, err) < 0)
		goto out;
	cb_sink_init(&sink, log_fd, CB_WORKER_LOG_MAX);
	if (cb_child_wait(&cp->child, &sink, deadline_of(timeout_s), &what, &line, &len, err) < 0)
		goto out;
	if (what == CB_WAIT_REPLY)
		reply_ns = cb_mono_ns_since(&t0);
	worker_judge_reply(cp, what, line, len, id, timeout_s, outcome, &pytest_exit, detail, sizeof(detail), &broke);
	if (what == CB_WAIT_TIMEOUT || broke) {
		cb_child_kill(&cp->child, 2000);
	} else if (what == CB_WAIT_EXITED) {
		size_t cut = cp->child.reply_len;
		cb_child_release(&cp->child);
		cb_describe_status(cp->child.status, how, sizeof(how));
		if (cut)
			snprintf(detail, sizeof(detail), "worker %s in the middle of its reply (%zu bytes, no newline)",
				 how, cut);
		else
			snprintf(detail, sizeof(detail), "worker %s without replying", how);
		cp->alive = 0;
	}
	/* A worker that timed out, crashed, erred or broke the protocol is not
	 * trusted again; but in persistent mode every worker ends here. */
	if (cp->alive && (ctx->mode != CB_WORKERS_PERSISTENT || *outcome == CB_OUT_TIMEOUT || *outcome == CB_OUT_ERROR)) {
		if (*outcome == CB_OUT_TIMEOUT || broke)
			cb_child_release(&cp->child);
		else
			worker_stop_serving(cp);
		if (!how[0])
			cb_describe_status(cp->child.status, how, sizeof(how));
		cp->alive = 0;
	}
	/* The cell is over only when nothing its worker left runs on. */
	if (cb_reap_strays(cp->alive ? cp->child.pid : 0, killed, err) < 0) {
		cb_prefix(err, "cell %s of task %s", cp->cell->name, task);
		goto out;
	}
	if (slotted) {
		slotted = 0;
		if (worker_slot_out(cp, dir, err) < 0)
			goto out;
		if (!cp->alive)
			worker_drop_slot(&cp->slot);
	}
	if (broke) {
		/* the reply is not the answer: nothing the cell left counts */
	} else if (worker_file_in(dir, "replay_miss.json")) {
		*outcome = CB_OUT_REPLAY_MISS;
		snprintf(detail, sizeof(detail), "autotune replay found no recorded config (replay_miss.json)");
	} else if (p != CB_PH_CORRECTNESS && *outcome == CB_OUT_PASSED &&
		   (!worker_file_in(dir, CB_RUN_TIMING) || !worker_file_in(dir, "ir/index.tsv"))) {
		*outcome = CB_OUT_MISSING_OUTPUT;
		snprintf(detail, sizeof(detail), "the benchmark passed but left no %s",
			 worker_file_in(dir, CB_RUN_TIMING) ? "ir/index.tsv" : CB_RUN_TIMING);
	}
	close(log_fd);
	log_fd = -1;
	if (worker_tidy_cell(dir, removed, outcome, detail, sizeof(detail), err) < 0)
		goto out;
	if (*outcome != CB_OUT_PASSED && *outcome != CB_OUT_REPLAY_MISS) {
		char tail[160];
		size_t used = strlen(detail);
		worker_log_tail(log, tail, sizeof(tail));
		if (tail[0] && used + 4 < sizeof(detail))
			snprintf(detail + used, sizeof(detail) - used, ": %s", tail);
	}
	cb_now_utc(finished);
	compiler = cb_worker_compiler_json(ctx, cp->cell);
	outputs = worker_outputs_of(dir);
	{
		const struct cb_cell_facts f = {
			.task = task, .cell = cp->cell->name, .role = cb_role_name(cp->cell->role),
			.phase = cb_phase_name(p), .request_id = id, .session = cb_json_int(request, "session", 1),
			.argv = json_object_get(request, "argv"), .env = json_object_get(request, "env"),
			.compiler = compiler, .worker_argv = ctx->worker_argv, .mode = cb_worker_mode_name(ctx->mode),
			.pid = cp->child.pid, .started_ahead_ms = fresh ? ahead_ms : 0, .fresh = fresh,
			.env_overlay = cp->overlay, .plugins = ctx->plugins, .nplugins = ctx->nplugins,
			.started = started, .finished = finished, .wall_ns = cb_mono_ns_since(&t0), .reply_ns = reply_ns,
			.timeout_s = timeout_s, .replied = what == CB_WAIT_REPLY, .timed_out = what == CB_WAIT_TIMEOUT,
			.pytest_exit = pytest_exit, .process = how[0] ? how : NULL,
			.log_bytes = sink.written, .log_cut_bytes = sink.dropped,
			.outcome = cb_outcome_name(*outcome), .detail = detail,
			.outputs = outputs, .removed = removed, .killed = killed
		};
		rc = cb_cell_receipt_write(dir, &f, err);
	}
out:
	if (slotted) {
		/* caliber failed mid-request: the worker goes, the slot leaves */
		struct cb_err ignored;
		if (cp->alive) {
			cb_child_kill(&cp->child, 1000);
			cb_child_release(&cp->child);
			cp->alive = 0;
		}
		cb_reap_strays(0, NULL, &ignored);
		if (worker_slot_out(cp, dir, &ignored) == 0)
			worker_drop_slot(&cp->slot);
	}
	if (log_fd >= 0)
		close(log_fd);
	json_decref(killed);
	json_decref(removed);
	json_decref(compiler);
	json_decref(outputs);
	free(line);
	free(req);
	free(log);
	free(id);
	return rc;
}
