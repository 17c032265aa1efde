/* proc.c: posix_spawn, process groups, poll-driven pumping. */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"

char *cb_self_exe(struct cb_err *err)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *s;

	if (n <= 0) {
		cb_fail(err, "cannot find the caliber binary (/proc/self/exe): %s", strerror(errno));
		return NULL;
	}
	exe[n] = '\0';
	s = strdup(exe);
	if (!s)
		cb_fail(err, "out of memory");
	return s;
}

long long cb_mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

long long cb_mono_ns_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return ((long long)t.tv_sec - t0->tv_sec) * 1000000000LL + (t.tv_nsec - t0->tv_nsec);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* A pipe whose both ends are close-on-exec; the child's end is dup2'ed by
 * the spawn file actions, which clears the flag on the copy. */
static int cloexec_pipe(int p[2])
{
	if (pipe(p) < 0)
		return -1;
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
	return 0;
}

int cb_child_spawn(struct cb_child *c, const char *const argv[], char *const envp[], int with_reply,
		   struct cb_err *err)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, er[2] = { -1, -1 }, rep[2] = { -1, -1 };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int rc;

	memset(c, 0, sizeof(*c));
	if (cloexec_pipe(in) < 0 || cloexec_pipe(out) < 0 || cloexec_pipe(er) < 0 ||
	    (with_reply && cloexec_pipe(rep) < 0)) {
		rc = errno;
		close_fd(&in[0]); close_fd(&in[1]); close_fd(&out[0]); close_fd(&out[1]);
		close_fd(&er[0]); close_fd(&er[1]); close_fd(&rep[0]); close_fd(&rep[1]);
		return cb_fail(err, "%s: pipe: %s", argv[0], strerror(rc));
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, er[1], 2);
	if (with_reply)
		posix_spawn_file_actions_adddup2(&fa, rep[1], 3);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
					POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(&attr, 0);
	{
		sigset_t none, all;
		sigemptyset(&none);
		sigfillset(&all);
		posix_spawnattr_setsigmask(&attr, &none);
		posix_spawnattr_setsigdefault(&attr, &all);
	}
	/* posix_spawn takes char *const argv[] for historical reasons and
	 * does not modify the strings; the cast is the one place that says so. */
	{
		char *const *av;
		memcpy(&av, &argv, sizeof(av));
		rc = strchr(argv[0], '/') ? posix_spawn(&c->pid, argv[0], &fa, &attr, av, envp)
					  : posix_spawnp(&c->pid, argv[0], &fa, &attr, av, envp);
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close_fd(&in[0]);
	close_fd(&out[1]);
	close_fd(&er[1]);
	close_fd(&rep[1]);
	if (rc != 0) {
		close_fd(&in[1]); close_fd(&out[0]); close_fd(&er[0]); close_fd(&rep[0]);
		memset(c, 0, sizeof(*c));
		return cb_fail(err, "%s: cannot start: %s", argv[0], strerror(rc));
	}
	clock_gettime(CLOCK_MONOTONIC, &c->start);
	c->in_fd = in[1];
	c->out_fd = out[0];
	c->err_fd = er[0];
	c->reply_fd = rep[0];
	/* Writing a request to a worker that died must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static void write_all(int fd, const char *p, size_t n)
{
	while (fd >= 0 && n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* Take one complete line out of the reply buffer, if there is one. */
static char *take_line(struct cb_child *c)
{
	char *nl = c->reply_buf ? memchr(c->reply_buf, '\n', c->reply_len) : NULL;
	char *line;
	size_t n;

	if (!nl)
		return NULL;
	n = (size_t)(nl - c->reply_buf);
	line = strndup(c->reply_buf, n);
	memmove(c->reply_buf, nl + 1, c->reply_len - n - 1);
	c->reply_len -= n + 1;
	return line;
}

static void reap(struct cb_child *c, int block)
{
	pid_t r;

	if (!c->pid || c->reaped)
		return;
	do
		r = waitpid(c->pid, &c->status, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == c->pid)
		c->reaped = 1;
}

int cb_child_wait(struct cb_child *c, int log_fd, long long deadline_ms, enum cb_wait *what,
		  char **line, struct cb_err *err)
{
	char buf[65536];

	if (!c->pid) {
		*line = NULL;
		*what = CB_WAIT_EXITED;
		return 0;
	}
	*line = take_line(c);
	if (*line) {
		*what = CB_WAIT_REPLY;
		return 0;
	}
	for (;;) {
		struct pollfd pf[3];
		int fds[3] = { c->out_fd, c->err_fd, c->reply_fd }, n = 0, i, timeout = -1, pr;

		for (i = 0; i < 3; i++)
			if (fds[i] >= 0) {
				pf[n].fd = fds[i];
				pf[n].events = POLLIN;
				pf[n].revents = 0;
				n++;
			}
		if (n == 0) {
			/* every pipe closed: the child is gone or going */
			reap(c, 1);
			*what = CB_WAIT_EXITED;
			return 0;
		}
		if (deadline_ms > 0) {
			long long left = deadline_ms - cb_mono_ms();
			if (left <= 0) {
				*what = CB_WAIT_TIMEOUT;
				return 0;
			}
			timeout = left > 1000000 ? 1000000 : (int)left;
		}
		pr = poll(pf, (nfds_t)n, timeout);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return cb_fail(err, "poll: %s", strerror(errno));
		for (i = 0; i < n; i++) {
			ssize_t r;
			if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(pf[i].fd, buf, sizeof(buf));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				if (pf[i].fd == c->out_fd) close_fd(&c->out_fd);
				else if (pf[i].fd == c->err_fd) close_fd(&c->err_fd);
				else close_fd(&c->reply_fd);
				continue;
			}
			if (pf[i].fd == c->reply_fd) {
				char *nb = realloc(c->reply_buf, c->reply_len + (size_t)r);
				if (!nb)
					return cb_fail(err, "out of memory");
				memcpy(nb + c->reply_len, buf, (size_t)r);
				c->reply_buf = nb;
				c->reply_len += (size_t)r;
			} else {
				write_all(log_fd, buf, (size_t)r);
			}
		}
		*line = take_line(c);
		if (*line) {
			*what = CB_WAIT_REPLY;
			return 0;
		}
	}
}

void cb_child_close_stdin(struct cb_child *c)
{
	if (c->pid)
		close_fd(&c->in_fd);
}

void cb_child_kill(struct cb_child *c, long long grace_ms)
{
	long long until;

	if (!c->pid || c->reaped)
		return;
	kill(-c->pid, SIGTERM);
	until = cb_mono_ms() + grace_ms;
	for (;;) {
		reap(c, 0);
		if (c->reaped)
			break;
		if (cb_mono_ms() >= until) {
			kill(-c->pid, SIGKILL);
			reap(c, 1);
			break;
		}
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	/* Whatever else is left of the group goes too. */
	kill(-c->pid, SIGKILL);
}

void cb_child_release(struct cb_child *c)
{
	if (!c->pid)
		return;
	close_fd(&c->in_fd);
	close_fd(&c->out_fd);
	close_fd(&c->err_fd);
	close_fd(&c->reply_fd);
	reap(c, 1);
	free(c->reply_buf);
	c->reply_buf = NULL;
	c->reply_len = 0;
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
	while (c.out_fd >= 0 || c.err_fd >= 0) {
		struct pollfd pf[2];
		int n = 0, i, pr;
		if (c.out_fd >= 0) { pf[n].fd = c.out_fd; pf[n].events = POLLIN; pf[n].revents = 0; n++; }
		if (c.err_fd >= 0) { pf[n].fd = c.err_fd; pf[n].events = POLLIN; pf[n].revents = 0; n++; }
		pr = poll(pf, (nfds_t)n, deadline ? (int)(deadline - cb_mono_ms() > 0 ? deadline - cb_mono_ms() : 0) : -1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr == 0 || (deadline && cb_mono_ms() >= deadline)) {
			cb_child_kill(&c, 200);
			cb_child_release(&c);
			cb_buf_release(&ob);
			cb_buf_release(&eb);
			return cb_fail(err, "%s: no answer within %lld ms", argv[0], timeout_ms);
		}
		for (i = 0; i < n; i++) {
			ssize_t r;
			if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(pf[i].fd, buf, sizeof(buf));
			if (r <= 0) {
				if (r < 0 && errno == EINTR)
					continue;
				if (pf[i].fd == c.out_fd) close_fd(&c.out_fd); else close_fd(&c.err_fd);
				continue;
			}
			if (pf[i].fd == c.out_fd && ob.len < 65536)
				cb_buf_add(&ob, buf, (size_t)r);
			else if (pf[i].fd == c.err_fd && eb.len < 4096)
				cb_buf_add(&eb, buf, (size_t)r);
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

void cb_describe_status(int status, char *out, size_t cap)
{
	if (WIFEXITED(status))
		snprintf(out, cap, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(out, cap, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(out, cap, "status %d", status);
}
