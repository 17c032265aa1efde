/* proc.c: posix_spawn, process groups, poll-driven pumping. */
#include "proc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "buf.h"
#include "confine.h"
#include "fsutil.h"

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

/* The children this caliber spawned and has not reaped yet. Any other
 * child it has is an orphan that came to it as the subreaper
 * (cb_become_subreaper): what a worker started and left behind. */
static pid_t *known;
static size_t nknown, capknown;

/* Add pid to the children caliber knows; 0 when out of memory (the child
 * is then killed by the caller, as a child it cannot account for). */
static int know(pid_t pid)
{
	if (nknown == capknown) {
		size_t cap = capknown ? 2 * capknown : 16;
		pid_t *k = realloc(known, cap * sizeof(*k));
		if (!k)
			return 0;
		known = k;
		capknown = cap;
	}
	known[nknown++] = pid;
	return 1;
}

/* Forget pid, reaped. */
static void forget(pid_t pid)
{
	size_t i;

	for (i = 0; i < nknown; i++)
		if (known[i] == pid) {
			known[i] = known[--nknown];
			return;
		}
}

/* Whether caliber spawned pid and has not reaped it. */
static int is_known(pid_t pid)
{
	size_t i;

	for (i = 0; i < nknown; i++)
		if (known[i] == pid)
			return 1;
	return 0;
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

/* The file PATH would run for name (which has no '/'), as posix_spawnp
 * looks it up: a fresh string, or NULL when no executable file is found. */
static char *find_in_path(const char *name)
{
	const char *path = getenv("PATH"), *p, *colon;

	for (p = path ? path : "/bin:/usr/bin";; p = colon + 1) {
		size_t n;
		char *cand;
		struct stat st;

		colon = strchr(p, ':');
		n = colon ? (size_t)(colon - p) : strlen(p);
		cand = n ? cb_strdupf("%.*s/%s", (int)n, p, name) : cb_strdupf("./%s", name);
		if (cand && stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
			return cand;
		free(cand);
		if (!colon)
			return NULL;
	}
}

/* The strings lifeline_argv makes, to free once the child is spawned. */
struct lifeline {
	const char **argv;      /* the wrapped argv; its other strings are borrowed */
	char *path, *pid, *abi, *ndirs;
};

static void lifeline_release(struct lifeline *l)
{
	free(l->argv);
	free(l->path);
	free(l->pid);
	free(l->abi);
	free(l->ndirs);
	memset(l, 0, sizeof(*l));
}

/* The argv that runs argv through caliber's own binary as the lifeline
 * exec wrapper (cb_lifeline_exec), confined to the ndirs folders it finds
 * open from CB_CONFINE_FD0 on as abi says (cb_confine_code: a Landlock
 * ABI, CB_CONFINE_NS for a mount namespace, 0: not confined),
 * into l. 0 when the wrapper cannot be used here (not Linux, no
 * /proc/self/exe): argv then runs as it is, and unconfined, which abi 0
 * must then be. -1 when argv[0] is not found. */
static int lifeline_argv(const char *const argv[], int abi, size_t ndirs, struct lifeline *l, struct cb_err *err)
{
#ifdef __linux__
	size_t n = 0, i, k = 0;

	memset(l, 0, sizeof(*l));
	if (access("/proc/self/exe", X_OK) != 0)
		return abi ? cb_fail(err, "%s: cannot confine it: /proc/self/exe: %s", argv[0], strerror(errno)) : 0;
	l->path = strchr(argv[0], '/') ? strdup(argv[0]) : find_in_path(argv[0]);
	if (!l->path)
		return cb_fail(err, "%s: cannot start: %s", argv[0], strerror(ENOENT));
	while (argv[n])
		n++;
	if (!abi)
		ndirs = 0;
	l->pid = cb_strdupf("%ld", (long)getpid());
	l->abi = cb_strdupf("%d", abi);
	l->ndirs = cb_strdupf("%zu", ndirs);
	l->argv = calloc(n + 7, sizeof(*l->argv));
	if (!l->pid || !l->abi || !l->ndirs || !l->argv) {
		lifeline_release(l);
		return cb_fail(err, "%s: out of memory", argv[0]);
	}
	l->argv[k++] = "caliber";
	l->argv[k++] = CB_LIFELINE_ARG;
	l->argv[k++] = l->pid;
	l->argv[k++] = l->abi;
	l->argv[k++] = l->ndirs;
	l->argv[k++] = l->path;
	for (i = 0; i < n; i++)
		l->argv[k++] = argv[i];
	return 1;
#else
	(void)argv;
	(void)ndirs;
	memset(l, 0, sizeof(*l));
	return abi ? cb_fail(err, "%s: cannot confine it: only on Linux", argv[0]) : 0;
#endif
}

int cb_lifeline_exec(int argc, char **argv, struct cb_err *err)
{
#ifdef __linux__
	char *end;
	long parent, abi;
	unsigned long ndirs;
	int at;

	if (argc < 7)
		return cb_fail(err, "usage: caliber %s PID ABI N PATH ARGV0 [ARGS...]", CB_LIFELINE_ARG);
	parent = strtol(argv[2], &end, 10);
	if (*end || parent <= 1)
		return cb_fail(err, "'%s' is not the runner's pid", argv[2]);
	abi = strtol(argv[3], &end, 10);
	if (*end || abi < CB_CONFINE_NS)
		return cb_fail(err, "'%s' is not a Landlock ABI, %d (a mount namespace) or 0", argv[3], CB_CONFINE_NS);
	ndirs = strtoul(argv[4], &end, 10);
	if (*end || ndirs > CB_CONFINE_MAX)
		return cb_fail(err, "'%s' is not a count of folders", argv[4]);
	at = 5;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return cb_fail(err, "prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
	/* The runner may have died before the signal was asked for. */
	if (getppid() != (pid_t)parent)
		return cb_fail(err, "the runner (pid %ld) is gone; not starting %s", parent, argv[at]);
	/* Confined before exec: the worker, and all it starts, never held more. */
	if (abi && cb_confine_self((int)abi, ndirs, err) < 0)
		return cb_prefix(err, "cannot confine %s", argv[at]);
	execv(argv[at], argv + at + 1);
	return cb_fail(err, "%s: cannot start: %s", argv[at], strerror(errno));
#else
	(void)argc;
	(void)argv;
	return cb_fail(err, "%s: only on Linux", CB_LIFELINE_ARG);
#endif
}

int cb_child_spawn(struct cb_child *c, const char *const argv[], char *const envp[], int flags,
		   struct cb_err *err)
{
	return cb_child_spawn_confined(c, argv, envp, flags, 0, NULL, 0, err);
}

int cb_child_spawn_confined(struct cb_child *c, const char *const argv[], char *const envp[], int flags, int abi,
			    const char *const *dirs, size_t ndirs, struct cb_err *err)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, er[2] = { -1, -1 }, rep[2] = { -1, -1 };
	const int with_reply = (flags & CB_CHILD_REPLY) != 0;
	struct lifeline ll;
	int dirfd[CB_CONFINE_MAX];
	size_t i;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int rc, lifeline = 0;

	memset(c, 0, sizeof(*c));
	memset(&ll, 0, sizeof(ll));
	if (abi && (!(flags & CB_CHILD_LIFELINE) || ndirs > CB_CONFINE_MAX))
		return cb_fail(err, "%s: only a lifeline child can be confined, to at most %d folders", argv[0],
			       CB_CONFINE_MAX);
	if (!abi)
		ndirs = 0;
	for (i = 0; i < ndirs; i++) {
		dirfd[i] = open(dirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dirfd[i] < 0) {
			rc = cb_fail(err, "%s: cannot confine it to %s: %s", argv[0], dirs[i], strerror(errno));
			while (i--)
				close(dirfd[i]);
			return rc;
		}
	}
	if ((flags & CB_CHILD_LIFELINE) && (lifeline = lifeline_argv(argv, abi, ndirs, &ll, err)) < 0) {
		for (i = 0; i < ndirs; i++)
			close(dirfd[i]);
		return -1;
	}
	if (cloexec_pipe(in) < 0 || cloexec_pipe(out) < 0 || cloexec_pipe(er) < 0 ||
	    (with_reply && cloexec_pipe(rep) < 0)) {
		rc = errno;
		close_fd(&in[0]); close_fd(&in[1]); close_fd(&out[0]); close_fd(&out[1]);
		close_fd(&er[0]); close_fd(&er[1]); close_fd(&rep[0]); close_fd(&rep[1]);
		lifeline_release(&ll);
		for (i = 0; i < ndirs; i++)
			close(dirfd[i]);
		return cb_fail(err, "%s: pipe: %s", argv[0], strerror(rc));
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, er[1], 2);
	if (with_reply)
		posix_spawn_file_actions_adddup2(&fa, rep[1], 3);
	for (i = 0; i < ndirs; i++)
		posix_spawn_file_actions_adddup2(&fa, dirfd[i], CB_CONFINE_FD0 + (int)i);
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
		const char *const *run = lifeline ? ll.argv : argv;
		char *const *av;
		memcpy(&av, &run, sizeof(av));
		rc = lifeline ? posix_spawn(&c->pid, "/proc/self/exe", &fa, &attr, av, envp)
		     : strchr(argv[0], '/') ? posix_spawn(&c->pid, argv[0], &fa, &attr, av, envp)
					    : posix_spawnp(&c->pid, argv[0], &fa, &attr, av, envp);
	}
	lifeline_release(&ll);
	for (i = 0; i < ndirs; i++)
		close(dirfd[i]);
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
	if (!know(c->pid)) {
		close_fd(&in[1]); close_fd(&out[0]); close_fd(&er[0]); close_fd(&rep[0]);
		kill(-c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
		memset(c, 0, sizeof(*c));
		return cb_fail(err, "%s: out of memory", argv[0]);
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
		forget(c->pid);
	}
}

/* Reap the child, waiting until deadline_ms at most (0: as long as it
 * takes); whether it was reaped. Polled, so that a child which closed its
 * pipes but keeps running cannot hold caliber past a deadline. */
static int reap_by(struct cb_child *c, long long deadline_ms)
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
			*what = reap_by(c, deadline_ms) ? CB_WAIT_EXITED : CB_WAIT_TIMEOUT;
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
				if (pf[i].fd == c->out_fd) close_fd(&c->out_fd);
				else if (pf[i].fd == c->err_fd) close_fd(&c->err_fd);
				else close_fd(&c->reply_fd);
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
			close_fd(&c->reply_fd);
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
		close_fd(&c->in_fd);
}

void cb_child_kill(struct cb_child *c, long long grace_ms)
{
	if (!c->pid || c->reaped)
		return;
	kill(-c->pid, SIGTERM);
	if (!reap_by(c, cb_mono_ms() + grace_ms)) {
		kill(-c->pid, SIGKILL);
		reap_by(c, cb_mono_ms() + grace_ms);
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
	if (!c->reaped) {
		kill(-c->pid, SIGKILL);
		reap_by(c, cb_mono_ms() + 5000);
	}
	free(c->reply_buf);
	c->reply_buf = NULL;
	c->reply_len = 0;
}

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
		pr = n == 0 ? (reap_by(&c, deadline) ? 1 : 0)
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
				if (pf[i].fd == c.out_fd) close_fd(&c.out_fd); else close_fd(&c.err_fd);
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
			int orphan = p->ppid == self && !is_known(p->pid);
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
