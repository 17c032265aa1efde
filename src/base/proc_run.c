/* proc_run.c: a child run to its end: cb_run_capture collects its stdout and
 * stderr, cb_run_checked also requires it to succeed. */
#include "proc.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "proc_int.h"

/* Append p[0..n) to b keeping at least its last keep bytes (and at most
 * twice that): where a child's stderr ends is what says why it failed. */
static void keep_tail(struct cb_buf *b, const char *p, size_t n, size_t keep)
{
	cb_buf_add(b, p, n);
	if (b->data && b->len > 2 * keep) {
		memmove(b->data, b->data + b->len - keep, keep);
		b->len = keep;
		b->data[keep] = '\0';
	}
}

int cb_run_capture(const char *const argv[], char *const envp[], long long timeout_ms, char **out,
		   char **errout, int *status, struct cb_err *err)
{
	struct cb_child c;
	struct cb_buf ob = CB_BUF_INIT, eb = CB_BUF_INIT;
	long long deadline = timeout_ms > 0 ? cb_mono_ms() + timeout_ms : 0;
	char buf[4096];

	if (cb_child_spawn(&c, argv, envp, 0, err) < 0)
		return -1;
	cb_child_close_stdin(&c);
	for (;;) {
		struct pollfd pf[2];
		int n = 0, i, pr;
		if (c.out_fd >= 0) { pf[n].fd = c.out_fd; pf[n].events = POLLIN; pf[n].revents = 0; n++; }
		if (c.err_fd >= 0) { pf[n].fd = c.err_fd; pf[n].events = POLLIN; pf[n].revents = 0; n++; }
		/* With its output closed, the child still has to exit by the deadline. */
		pr = n == 0 ? (proc_reap_by(&c, deadline) ? 1 : 0)
			    : poll(pf, (nfds_t)n, deadline ? (int)(deadline - cb_mono_ms() > 0 ? deadline - cb_mono_ms() : 0) : -1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr == 0 || (deadline && cb_mono_ms() >= deadline && !c.reaped)) {
			cb_child_kill(&c, 200);
			cb_child_release(&c);
			cb_buf_release(&ob);
			cb_buf_release(&eb);
			return cb_fail(err, "%s: no answer within %lld ms", argv[0], timeout_ms);
		}
		if (n == 0)
			break;
		for (i = 0; i < n; i++) {
			ssize_t r;
			if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(pf[i].fd, buf, sizeof(buf));
			if (r <= 0) {
				if (r < 0 && errno == EINTR)
					continue;
				if (pf[i].fd == c.out_fd) proc_close_fd(&c.out_fd); else proc_close_fd(&c.err_fd);
				continue;
			}
			if (pf[i].fd == c.out_fd && ob.len < 65536)
				cb_buf_add(&ob, buf, (size_t)r);
			else if (pf[i].fd == c.err_fd)
				keep_tail(&eb, buf, (size_t)r, 4096);
		}
	}
	cb_child_release(&c);
	*status = c.status;
	*out = cb_buf_detach(&ob, NULL);
	if (errout)
		*errout = cb_buf_detach(&eb, NULL);
	else
		cb_buf_release(&eb);
	if (!*out || (errout && !*errout))
		return cb_fail(err, "out of memory");
	return 0;
}

/* The last non-empty line of a child's stderr, trailing blanks cut: for a
 * Python traceback that is the exception, which is what names a failure. */
static const char *last_line(char *text)
{
	size_t n = strlen(text);
	char *nl;

	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
		text[--n] = '\0';
	nl = strrchr(text, '\n');
	return nl ? nl + 1 : text;
}

int cb_run_checked(const char *const argv[], char *const envp[], long long timeout_ms, const char *who,
		   char **out, struct cb_err *err)
{
	char *errout = NULL, how[64];
	int status = 0, rc = 0;

	*out = NULL;
	if (cb_run_capture(argv, envp, timeout_ms, out, &errout, &status, err) < 0)
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		const char *last = last_line(errout);
		cb_describe_status(status, how, sizeof(how));
		rc = cb_fail(err, "%s %s%s%s", who ? who : argv[0], how, last[0] ? ": " : "", last);
		free(*out);
		*out = NULL;
	}
	free(errout);
	return rc;
}

void cb_describe_status(int status, char *out, size_t cap)
{
	if (WIFEXITED(status))
		snprintf(out, cap, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(out, cap, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(out, cap, "status %d", status);
}
