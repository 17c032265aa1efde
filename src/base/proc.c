/* proc.c: spawning children: posix_spawn, process groups, the lifeline that
 * makes a child die with caliber, and the set of children caliber knows it
 * spawned. Waiting on them is proc_wait.c; a child run to its end,
 * proc_run.c. */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "proc_int.h"

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
int proc_know(pid_t pid)
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
void proc_forget(pid_t pid)
{
	size_t i;

	for (i = 0; i < nknown; i++)
		if (known[i] == pid) {
			known[i] = known[--nknown];
			return;
		}
}

/* Whether caliber spawned pid and has not reaped it. */
int proc_is_known(pid_t pid)
{
	size_t i;

	for (i = 0; i < nknown; i++)
		if (known[i] == pid)
			return 1;
	return 0;
}

void proc_close_fd(int *fd)
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
		proc_close_fd(&in[0]); proc_close_fd(&in[1]); proc_close_fd(&out[0]); proc_close_fd(&out[1]);
		proc_close_fd(&er[0]); proc_close_fd(&er[1]); proc_close_fd(&rep[0]); proc_close_fd(&rep[1]);
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
	proc_close_fd(&in[0]);
	proc_close_fd(&out[1]);
	proc_close_fd(&er[1]);
	proc_close_fd(&rep[1]);
	if (rc != 0) {
		proc_close_fd(&in[1]); proc_close_fd(&out[0]); proc_close_fd(&er[0]); proc_close_fd(&rep[0]);
		memset(c, 0, sizeof(*c));
		return cb_fail(err, "%s: cannot start: %s", argv[0], strerror(rc));
	}
	if (!proc_know(c->pid)) {
		proc_close_fd(&in[1]); proc_close_fd(&out[0]); proc_close_fd(&er[0]); proc_close_fd(&rep[0]);
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
