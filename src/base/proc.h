/* proc.h: child processes (posix_spawn + poll). A child runs in its own
 * process group, so a timeout kills everything it started; its stdout and
 * stderr are pumped through poll() into a sink while the parent waits for a
 * reply line on a third pipe or for the child's exit. No shell in between. */
#ifndef CB_PROC_H
#define CB_PROC_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include <jansson.h>

#include "caliber.h"

/* A child process. Zeroed, it is "no child": every function below then
 * does nothing (its descriptors are only looked at while pid is set). */
struct cb_child {
	pid_t pid;              /* also its process group id; 0 when none */
	int in_fd;              /* its stdin (write end), -1 when closed */
	int out_fd, err_fd;     /* its stdout and stderr (read ends), -1 at EOF */
	int reply_fd;           /* fd 3 in the child (read end), -1 when none or EOF */
	struct timespec start;  /* CLOCK_MONOTONIC at spawn */
	int reaped;             /* waitpid done; status below is valid */
	int status;             /* as from waitpid */
	char *reply_buf;        /* bytes of an incomplete reply line */
	size_t reply_len;
};

/* cb_child_spawn's flags. */
enum {
	CB_CHILD_REPLY = 1,     /* a pipe on the child's fd 3 for reply lines */
	CB_CHILD_LIFELINE = 2   /* the child dies with caliber (see cb_lifeline_exec) */
};

/* Start argv[0] (looked up in PATH when it has no '/') with exactly envp,
 * as flags say. */
int cb_child_spawn(struct cb_child *c, const char *const argv[], char *const envp[], int flags,
		   struct cb_err *err);

/* The most folders a confined child may write beneath. */
#define CB_CONFINE_MAX 4

/* cb_child_spawn for a CB_CHILD_LIFELINE child that abi, not 0, confines
 * (cb_confine_code: a Landlock ABI, or CB_CONFINE_NS for a mount
 * namespace; confine.h): it and all it starts may write only beneath the ndirs
 * folders dirs (and /dev), from before its first instruction. The folders
 * are opened here and handed over open, so that the child is confined to
 * them even when they move before it starts. abi 0 is cb_child_spawn. */
int cb_child_spawn_confined(struct cb_child *c, const char *const argv[], char *const envp[], int flags, int abi,
			    const char *const *dirs, size_t ndirs, struct cb_err *err);

/* The argument that makes caliber an exec wrapper (main() checks it
 * first): `caliber --lifeline-exec PID ABI N PATH ARGV0 ARGS...`. */
#define CB_LIFELINE_ARG "--lifeline-exec"

/* The exec wrapper CB_CHILD_LIFELINE spawns a child through (Linux), since
 * posix_spawn cannot ask for a parent-death signal: set PR_SET_PDEATHSIG
 * to SIGKILL, make sure the runner PID is still the parent (it may have
 * died before), with ABI not 0 (cb_confine_code) confine itself to the N
 * folders open from descriptor CB_CONFINE_FD0 on (cb_confine_self), then exec PATH with ARGV0 ARGS.... Returns only on
 * failure, with err filled. */
int cb_lifeline_exec(int argc, char **argv, struct cb_err *err);

/* The longest reply line taken; a longer one ends the wait with
 * CB_WAIT_OVERLONG (a worker cannot grow caliber's memory without bound). */
#define CB_REPLY_MAX (1024 * 1024)

/* Where a child's stdout and stderr go while it is waited for: fd (-1
 * discards) gets at most cap bytes, then the line "caliber: output cut at
 * <cap> bytes"; what comes after is only counted. */
struct cb_sink {
	int fd;
	unsigned long long cap;
	unsigned long long written;   /* bytes of the child's output written to fd */
	unsigned long long dropped;   /* bytes left out after the cap */
};

/* A sink into fd (-1: discard) capped at cap bytes. */
void cb_sink_init(struct cb_sink *s, int fd, unsigned long long cap);

enum cb_wait {
	CB_WAIT_REPLY,      /* a reply line arrived (returned through *line) */
	CB_WAIT_EXITED,     /* the child exited (and closed its pipes) */
	CB_WAIT_TIMEOUT,    /* the deadline passed */
	CB_WAIT_OVERLONG    /* more than CB_REPLY_MAX bytes without a newline on the reply pipe */
};

/* Pump the child's output into sink (NULL discards) until a full reply
 * line arrives, the child exits, or deadline_ms (CLOCK_MONOTONIC ms, 0 = no
 * deadline) passes; a child that closed every pipe but keeps running is
 * waited for against the deadline too. A child that exited while what it
 * started holds its pipes open is seen within a tenth of a second: the
 * rest of its group is killed and the pipes read until they close (2 s at
 * most, for a process that left the group). *line is a fresh
 * NUL-terminated copy of the line without its newline, *len its length (a
 * NUL byte inside stays in it); after CB_WAIT_EXITED, reply_len says how
 * much of a reply line came without its newline. */
int cb_child_wait(struct cb_child *c, struct cb_sink *sink, long long deadline_ms, enum cb_wait *what,
		  char **line, size_t *len, struct cb_err *err);

/* Whether the child sent reply bytes after the last line cb_child_wait
 * returned: buffered already, or readable on the reply pipe right now
 * (read without waiting). */
int cb_child_reply_pending(struct cb_child *c);

/* Close the child's stdin (EOF: a worker session exits). */
void cb_child_close_stdin(struct cb_child *c);

/* SIGTERM to the whole process group, SIGKILL after grace_ms, then reap
 * (waiting at most grace_ms more: a process stuck in the kernel is left). */
void cb_child_kill(struct cb_child *c, long long grace_ms);

/* Release everything; a child not reaped yet (exited or killed before) is
 * killed with its group and reaped, waiting a bounded time. Whenever a
 * child is reaped, what is left of its process group is killed first. */
void cb_child_release(struct cb_child *c);

/* Milliseconds of CLOCK_MONOTONIC, and nanoseconds since t0. */
long long cb_mono_ms(void);
long long cb_mono_ns_since(const struct timespec *t0);

/* Run argv to completion with envp, capturing stdout (at most 64 KiB) and
 * stderr into *errout (its last 4 KiB or more: where a traceback ends is
 * what names the failure), within timeout_ms (0: none; a child
 * that closes its output and keeps running is killed at it); used by
 * preflights. */
int cb_run_capture(const char *const argv[], char *const envp[], long long timeout_ms, char **out,
		   char **errout, int *status, struct cb_err *err);

/* cb_run_capture for a child that must succeed: its stdout into *out (NULL
 * on failure); an exit other than 0 fails with "WHO <how it ended>: <the
 * last line of its stderr>" (who NULL: argv[0]). */
int cb_run_checked(const char *const argv[], char *const envp[], long long timeout_ms, const char *who,
		   char **out, struct cb_err *err);

/* The absolute path of the running caliber binary (/proc/self/exe), for
 * commands that start caliber again (run --devices) or write scripts that
 * do (slurm). Caller frees. */
char *cb_self_exe(struct cb_err *err);

/* Make caliber the child subreaper (Linux): what a worker starts and
 * leaves behind, even in a session of its own (setsid), becomes caliber's
 * child when its parent dies, instead of init's, so that cb_reap_strays
 * finds it. */
int cb_become_subreaper(struct cb_err *err);

/* End what workers left behind: every child of caliber that it did not
 * spawn (an orphan that came to the subreaper) and, when keep is a living
 * worker (a persistent one, between two requests), every descendant of
 * keep, in its process group or not (a child that has yet to call setsid
 * is still in it); killed and reaped, again and again until none remains (their own
 * children come next), each named "NAME (pid N)" once in killed (NULL:
 * not named). Fails only when some would not die within 10 s. */
int cb_reap_strays(pid_t keep, json_t *killed, struct cb_err *err);

/* "exited with status 3" / "killed by signal 9" for a waitpid status. */
void cb_describe_status(int status, char *out, size_t cap);

#endif
