/* worker_reply.c: what one request of a cell came to (worker_cell.c):
 * the wait for the reply judged as an outcome and a detail (the reply
 * line itself is parsed by reply.c), the end of the worker's log, what
 * the worker left in the cell folder, and what a seal cannot hold taken
 * out of it. */
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/runroot.h"
#include "reply.h"
#include "seal/tidy.h"
#include "worker_int.h"

/* Sorted names of what the worker left in the cell folder. */
json_t *worker_outputs_of(const char *dir)
{
	json_t *a = json_array();
	char **names = NULL;
	size_t n = 0, i;
	struct cb_err err;

	if (cb_list_dir(dir, &names, &n, &err) == 0)
		for (i = 0; i < n; i++)
			if (strcmp(names[i], CB_RUN_CELL) != 0)
				json_array_append_new(a, cb_json_text(names[i]));
	cb_strv_free(names, n);
	return a;
}

int worker_file_in(const char *dir, const char *name)
{
	char *p = cb_path_join(dir, name);
	int r = p && cb_exists(p);

	free(p);
	return r;
}

/* The last line of the worker's log that says something, at most cap - 1
 * bytes of its end: for a failed request, pytest's error or summary, so
 * that a receipt says why without the log being opened. "" when none. */
void worker_log_tail(const char *log, char *out, size_t cap)
{
	char buf[4096], *end, *start;
	ssize_t n = 0;
	int fd = open(log, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	off_t size;

	out[0] = '\0';
	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	if (size > 0 && lseek(fd, size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0, SEEK_SET) >= 0)
		n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (end = buf + n; end > buf && isspace((unsigned char)end[-1]); end--)
		;
	*end = '\0';
	for (start = end; start > buf && start[-1] != '\n'; start--)
		;
	for (; *start && isspace((unsigned char)*start); start++)
		;
	if ((size_t)(end - start) >= cap) {
		memcpy(out, "...", 3);
		memcpy(out + 3, end - (cap - 4), cap - 3);
		return;
	}
	memcpy(out, start, (size_t)(end - start) + 1);
}

/* The outcome of a reply's pytest exit code. */
static enum cb_outcome outcome_of_exit(long long code)
{
	switch (code) {
	case 0: return CB_OUT_PASSED;
	case 1: return CB_OUT_FAILED;
	case 5: return CB_OUT_UNSUPPORTED;
	default: return CB_OUT_ERROR;
	}
}

/* What the wait for a reply gave, as an outcome and detail; *broke set
 * when the worker broke the protocol (it is killed then). */
void worker_judge_reply(struct cb_cell_proc *cp, enum cb_wait what, const char *line, size_t len,
		 const char *id, long long timeout_s, enum cb_outcome *outcome, long long *pytest_exit,
		 char *detail, size_t cap, int *broke)
{
	struct cb_reply reply = { 0, NULL };
	struct cb_err perr = CB_ERR_INIT;

	*broke = 0;
	if (what == CB_WAIT_OVERLONG) {
		*outcome = CB_OUT_ERROR;
		*broke = 1;
		snprintf(detail, cap, "a reply line longer than %d bytes (request '%s'); process group killed",
			 CB_REPLY_MAX, id);
	} else if (what == CB_WAIT_TIMEOUT) {
		*outcome = CB_OUT_TIMEOUT;
		snprintf(detail, cap, "no reply within %lld s; process group killed", timeout_s);
	} else if (what != CB_WAIT_REPLY) {
		*outcome = CB_OUT_CRASHED;
	} else if (cb_reply_parse(line, len, id, &reply, &perr) < 0) {
		*outcome = CB_OUT_ERROR;
		*broke = 1;
		snprintf(detail, cap, "%s; process group killed", perr.msg);
	} else if (cb_child_reply_pending(&cp->child)) {
		*outcome = CB_OUT_ERROR;
		*broke = 1;
		snprintf(detail, cap, "more than one reply to request '%s'; process group killed", id);
	} else {
		*pytest_exit = reply.exit;
		*outcome = outcome_of_exit(reply.exit);
		if (reply.error && strlen(reply.error) > ERROR_QUOTE_MAX)
			snprintf(detail, cap, "worker error: %.*s... (cut at %d bytes)", ERROR_QUOTE_MAX, reply.error,
				 ERROR_QUOTE_MAX);
		else if (reply.error)
			snprintf(detail, cap, "worker error: %s", reply.error);
		else
			snprintf(detail, cap, "pytest exit %lld", reply.exit);
	}
	cb_reply_release(&reply);
}

/* Take out of the cell folder what a seal cannot hold (tidy.h); when
 * anything was, or when removed holds anything already (what was taken
 * out before the request started, cb_tidy_fresh), the cell is a harness
 * failure that names the first. removed, with what was taken out now
 * appended, is the receipt's "removed". */
int worker_tidy_cell(const char *dir, json_t *removed, enum cb_outcome *outcome, char *detail,
	      size_t cap, struct cb_err *err)
{
	json_t *changes = json_array();
	size_t n, before = json_array_size(removed);

	if (!changes)
		return cb_fail(err, "out of memory");
	if (cb_tidy_tree(dir, changes, err) < 0) {
		json_decref(changes);
		return cb_prefix(err, "cell folder");
	}
	n = json_array_size(changes);
	if (before) {
		*outcome = CB_OUT_ERROR;
		snprintf(detail, cap, "the cell folder held what its worker did not leave: %s%s",
			 json_string_value(json_array_get(removed, 0)), before + n > 1 ? " (and more, see removed)" : "");
	} else if (n) {
		*outcome = CB_OUT_ERROR;
		snprintf(detail, cap, "the worker left what a seal cannot hold: %s%s", json_string_value(json_array_get(changes, 0)),
			 n > 1 ? " (and more, see removed)" : "");
	}
	json_array_extend(removed, changes);
	json_decref(changes);
	return 0;
}
