/* proc_wait.c: waiting on a child spawned by proc.c: pumping its stdout and
 * stderr into sinks, taking its reply lines, its exit and reaping; and the
 * strays that caliber, as subreaper, inherits from a worker. */
#include "proc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "buf.h"
#include "proc_int.h"

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

void cb_sink_init(struct cb_sink *s, int fd, unsigned long long cap)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->cap = cap;
}

/* n bytes of the child's output into the sink: up to its cap, then the
 * line that says where it was cut, then nothing but the count. */
static void sink_add(struct cb_sink *s, const char *p, size_t n)
{
	unsigned long long room;

	if (!s)
		return;
	room = s->written < s->cap ? s->cap - s->written : 0;
	if (n <= room) {
		write_all(s->fd, p, n);
		s->written += n;
		return;
	}
	write_all(s->fd, p, (size_t)room);
	s->written += room;
	if (!s->dropped) {
		char note[96];
		int k = snprintf(note, sizeof(note), "\ncaliber: output cut at %llu bytes\n", s->cap);
		write_all(s->fd, note, (size_t)k);
	}
	s->dropped += n - room;
}

/* Take one complete line out of the reply buffer, if there is one. */
static char *take_line(struct cb_child *c, size_t *len)
{
	char *nl = c->reply_buf ? memchr(c->reply_buf, '\n', c->reply_len) : NULL;
	char *line;
	size_t n;

	if (!nl)
		return NULL;
	n = (size_t)(nl - c->reply_buf);
	line = malloc(n + 1);
	if (!line)
		return NULL;
	memcpy(line, c->reply_buf, n);
	line[n] = '\0';
	memmove(c->reply_buf, nl + 1, c->reply_len - n - 1);
	c->reply_len -= n + 1;
	*len = n;
	return line;
}

/* Whether the child has exited (waiting for that with block), reaped or
 * not; it is left unreaped: a zombie still holds its pid and so its
 * process group id, which cannot name another group until it is reaped. */
static int exited(struct cb_child *c, int block)
{
	siginfo_t si;
	int r;

	if (c->reaped)
		return 1;
	memset(&si, 0, sizeof(si));
	do
		r = waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOWAIT | (block ? 0 : WNOHANG));
	while (r < 0 && errno == EINTR);
	return r == 0 && si.si_pid == c->pid;
}

/* Reap the child once it has exited (waiting for that with block). What
 * it started and left in its process group is killed first, while the
 * group id is still its own: a worker's children end with it, and cannot
 * hold its pipes open or the device busy after it. */
static void reap(struct cb_child *c, int block)
{
	pid_t r;

	if (!c->pid || c->reaped || !exited(c, block))
		return;
	kill(-c->pid, SIGKILL);
	do
		r = waitpid(c->pid, &c->status, 0);
	while (r < 0 && errno == EINTR);
	if (r == c->pid) {
		c->reaped = 1;
		proc_forget(c->pid);
	}
}

/* Reap the child, waiting until deadline_ms at most (0: as long as it
 * takes); whether it was reaped. Polled, so that a child which closed its
 * pipes but keeps running cannot hold caliber past a deadline. */
int proc_reap_by(struct cb_child *c, long long deadline_ms)
{
	long long nap_ms = 1;

	if (deadline_ms <= 0) {
		reap(c, 1);
		return c->reaped;
	}
	for (;;) {
		long long left;

		reap(c, 0);
		if (c->reaped || !c->pid)
			return 1;
		left = deadline_ms - cb_mono_ms();
		if (left <= 0)
			return 0;
		if (nap_ms > left)
			nap_ms = left;
		nanosleep(&(struct timespec){ (time_t)(nap_ms / 1000), (long)(nap_ms % 1000) * 1000000L }, NULL);
		if (nap_ms < 50)
			nap_ms *= 2;
	}
}

/* Append n bytes read from the reply pipe; past CB_REPLY_MAX without a
 * newline the pipe is no longer read. Returns -1 when out of memory. */
static int reply_add(struct cb_child *c, const char *p, size_t n)
{
	char *nb = realloc(c->reply_buf, c->reply_len + n);

	if (!nb)
		return -1;
	memcpy(nb + c->reply_len, p, n);
	c->reply_buf = nb;
	c->reply_len += n;
	return 0;
}

/* Whether the reply buffer holds more than CB_REPLY_MAX bytes and no
 * newline: the line would never end within bounds. */
static int reply_overlong(const struct cb_child *c)
{
	return c->reply_len > CB_REPLY_MAX && !memchr(c->reply_buf, '\n', c->reply_len);
}

/* How often (ms) a wait looks whether the child has exited while its
 * pipes stay open (something it started may hold them), and how long (ms)
 * the pipes of a child seen gone are still read: what it wrote before it
 * went, while the rest of its group dies. */
#define EXIT_LOOK_MS 100
#define DRAIN_MS 2000

int cb_child_wait(struct cb_child *c, struct cb_sink *sink, long long deadline_ms, enum cb_wait *what,
		  char **line, size_t *len, struct cb_err *err)
{
	char buf[65536];
	long long gone_at = 0;   /* when the child was seen gone with its pipes open */

	*line = NULL;
	*len = 0;
	if (!c->pid) {
		*what = CB_WAIT_EXITED;
		return 0;
	}
	if ((*line = take_line(c, len))) {
		*what = CB_WAIT_REPLY;
		return 0;
	}
	for (;;) {
		struct pollfd pf[3];
		int fds[3] = { c->out_fd, c->err_fd, c->reply_fd }, n = 0, i, timeout, pr;
		long long until = deadline_ms;

		if (reply_overlong(c)) {
			*what = CB_WAIT_OVERLONG;
			return 0;
		}
		for (i = 0; i < 3; i++)
			if (fds[i] >= 0) {
				pf[n].fd = fds[i];
				pf[n].events = POLLIN;
				pf[n].revents = 0;
				n++;
			}
		if (n == 0) {
			/* Every pipe closed: the child is gone or going, or it
			 * closed them and runs on; either way within the deadline. */
			*what = proc_reap_by(c, deadline_ms) ? CB_WAIT_EXITED : CB_WAIT_TIMEOUT;
			return 0;
		}
		if (gone_at && (until <= 0 || gone_at + DRAIN_MS < until))
			until = gone_at + DRAIN_MS;
		timeout = gone_at ? -1 : EXIT_LOOK_MS;
		if (until > 0) {
			long long left = until - cb_mono_ms();
			if (left <= 0) {
				/* Gone, and what held its pipes has not let go (it
				 * left the group): its output ends here. */
				if (gone_at)
					reap(c, 1);
				*what = gone_at ? CB_WAIT_EXITED : CB_WAIT_TIMEOUT;
				return 0;
			}
			if (timeout < 0 || left < timeout)
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
				if (pf[i].fd == c->out_fd) proc_close_fd(&c->out_fd);
				else if (pf[i].fd == c->err_fd) proc_close_fd(&c->err_fd);
				else proc_close_fd(&c->reply_fd);
				continue;
			}
			if (pf[i].fd == c->reply_fd) {
				if (reply_add(c, buf, (size_t)r) < 0)
					return cb_fail(err, "out of memory");
			} else {
				sink_add(sink, buf, (size_t)r);
			}
		}
		if ((*line = take_line(c, len))) {
			*what = CB_WAIT_REPLY;
			return 0;
		}
		if (!gone_at && exited(c, 0)) {
			/* Gone while its pipes stay open: what it started holds
			 * them. That goes now (its group is still its own); what
			 * is in the pipes is read until they close. */
			kill(-c->pid, SIGKILL);
			gone_at = cb_mono_ms();
		}
	}
}

int cb_child_reply_pending(struct cb_child *c)
{
	char buf[4096];

	if (!c->pid)
		return 0;
	while (c->reply_len == 0 && c->reply_fd >= 0) {
		struct pollfd pf = { c->reply_fd, POLLIN, 0 };
		ssize_t r;

		if (poll(&pf, 1, 0) <= 0 || !(pf.revents & (POLLIN | POLLHUP | POLLERR)))
			break;
		r = read(c->reply_fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			proc_close_fd(&c->reply_fd);
			break;
		}
		if (reply_add(c, buf, (size_t)r) < 0)
			return 1;
	}
	return c->reply_len > 0;
}

void cb_child_close_stdin(struct cb_child *c)
{
	if (c->pid)
		proc_close_fd(&c->in_fd);
}

void cb_child_kill(struct cb_child *c, long long grace_ms)
{
	if (!c->pid || c->reaped)
		return;
	kill(-c->pid, SIGTERM);
	if (!proc_reap_by(c, cb_mono_ms() + grace_ms)) {
		kill(-c->pid, SIGKILL);
		proc_reap_by(c, cb_mono_ms() + grace_ms);
	}
	/* Whatever else is left of the group goes too. */
	kill(-c->pid, SIGKILL);
}

void cb_child_release(struct cb_child *c)
{
	if (!c->pid)
		return;
	proc_close_fd(&c->in_fd);
	proc_close_fd(&c->out_fd);
	proc_close_fd(&c->err_fd);
	proc_close_fd(&c->reply_fd);
	if (!c->reaped) {
		kill(-c->pid, SIGKILL);
		proc_reap_by(c, cb_mono_ms() + 5000);
	}
	free(c->reply_buf);
	c->reply_buf = NULL;
	c->reply_len = 0;
}

int cb_become_subreaper(struct cb_err *err)
{
#ifdef __linux__
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		return cb_fail(err, "prctl(PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
#else
	(void)err;
#endif
	return 0;
}

#ifdef __linux__
/* One process as /proc/PID/stat shows it. */
struct pinfo {
	pid_t pid, ppid, pgrp;
	char state;
	char name[32];
};

/* Read /proc/PID/stat of the process named by the folder name; 0 when it
 * is gone or not a process. The name (comm) may hold ')' and spaces: it
 * ends at the last ')'. */
static int read_stat(const char *name, struct pinfo *p)
{
	char path[300], buf[512], *open_paren, *close_paren;
	ssize_t n;
	int fd, ppid, pgrp;

	if (strlen(name) > 20)
		return 0;
	snprintf(path, sizeof(path), "/proc/%s/stat", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren ||
	    sscanf(close_paren + 1, " %c %d %d", &p->state, &ppid, &pgrp) != 3)
		return 0;
	p->pid = (pid_t)atol(name);
	p->ppid = (pid_t)ppid;
	p->pgrp = (pid_t)pgrp;
	snprintf(p->name, sizeof(p->name), "%.*s", (int)(close_paren - open_paren - 1), open_paren + 1);
	return 1;
}

/* Every process now, into *list (*n of them); -1 when out of memory. */
static int scan_procs(struct pinfo **list, size_t *n)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t cap = 0;

	*list = NULL;
	*n = 0;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct pinfo p;
		if (!isdigit((unsigned char)e->d_name[0]) || !read_stat(e->d_name, &p))
			continue;
		if (*n == cap) {
			struct pinfo *l = realloc(*list, (cap = cap ? 2 * cap : 256) * sizeof(*l));
			if (!l) {
				closedir(d);
				free(*list);
				*list = NULL;
				return -1;
			}
			*list = l;
		}
		(*list)[(*n)++] = p;
	}
	closedir(d);
	return 0;
}

/* Whether p descends from the process root (following parents through
 * list, a snapshot of every process). */
static int descends(const struct pinfo *p, pid_t root, const struct pinfo *list, size_t n)
{
	pid_t at = p->ppid;
	size_t depth, i;

	for (depth = 0; at > 1 && depth < n; depth++) {
		if (at == root)
			return 1;
		for (i = 0; i < n && list[i].pid != at; i++)
			;
		if (i == n)
			return 0;
		at = list[i].ppid;
	}
	return 0;
}
#endif

/* How long cb_reap_strays tries before it gives up on a process that
 * will not die (one stuck in the kernel). */
#define STRAY_MS 10000

int cb_reap_strays(pid_t keep, json_t *killed, struct cb_err *err)
{
#ifdef __linux__
	long long deadline = cb_mono_ms() + STRAY_MS;
	pid_t self = getpid();

	for (;;) {
		struct pinfo *list;
		size_t n, i, alive = 0;

		if (scan_procs(&list, &n) < 0)
			return cb_fail(err, "out of memory");
		for (i = 0; i < n; i++) {
			const struct pinfo *p = &list[i];
			int orphan = p->ppid == self && !proc_is_known(p->pid);
			int escaped = keep > 0 && p->pid != keep && descends(p, keep, list, n);
			char what[64];

			if (!orphan && !escaped)
				continue;
			if (p->state == 'Z') {
				/* dead already: an orphan of caliber is reaped */
				if (orphan)
					waitpid(p->pid, NULL, WNOHANG);
				continue;
			}
			alive++;
			kill(p->pid, SIGKILL);
			snprintf(what, sizeof(what), "%s (pid %ld)", p->name, (long)p->pid);
			if (killed) {
				size_t k;
				for (k = 0; k < json_array_size(killed); k++)
					if (strcmp(json_string_value(json_array_get(killed, k)), what) == 0)
						break;
				if (k == json_array_size(killed))
					json_array_append_new(killed, json_string(what));
			}
		}
		free(list);
		if (!alive)
			return 0;
		if (cb_mono_ms() > deadline)
			return cb_fail(err, "%zu process%s a worker started would not end within %d s", alive,
				       alive == 1 ? "" : "es", STRAY_MS / 1000);
		nanosleep(&(struct timespec){ 0, 5000000L }, NULL);
	}
#else
	(void)keep;
	(void)killed;
	(void)err;
	return 0;
#endif
}
