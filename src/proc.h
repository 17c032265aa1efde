/* proc.h: child processes (posix_spawn + poll). A child runs in its own
 * process group, so a timeout kills everything it started; its stdout and
 * stderr are pumped through poll() into a sink while the parent waits for a
 * reply line on a third pipe or for the child's exit. No shell in between. */
#ifndef CB_PROC_H
#define CB_PROC_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

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

/* Start argv[0] (looked up in PATH when it has no '/') with exactly envp.
 * with_reply adds a pipe on the child's fd 3 for reply lines. */
int cb_child_spawn(struct cb_child *c, const char *const argv[], char *const envp[], int with_reply,
		   struct cb_err *err);

enum cb_wait {
	CB_WAIT_REPLY,      /* a reply line arrived (returned through *line) */
	CB_WAIT_EXITED,     /* the child exited (and closed its pipes) */
	CB_WAIT_TIMEOUT     /* the deadline passed */
};

/* Pump the child's output into log_fd (-1 discards) until a full reply
 * line arrives, the child exits, or deadline_ms (CLOCK_MONOTONIC ms, 0 = no
 * deadline) passes. *line is a fresh string without its newline. */
int cb_child_wait(struct cb_child *c, int log_fd, long long deadline_ms, enum cb_wait *what,
		  char **line, struct cb_err *err);

/* Close the child's stdin (EOF: a worker session exits). */
void cb_child_close_stdin(struct cb_child *c);

/* SIGTERM to the whole process group, SIGKILL after grace_ms, then reap. */
void cb_child_kill(struct cb_child *c, long long grace_ms);

/* Wait for exit (after EOF or kill) and release everything. */
void cb_child_release(struct cb_child *c);

/* Milliseconds of CLOCK_MONOTONIC, and nanoseconds since t0. */
long long cb_mono_ms(void);
long long cb_mono_ns_since(const struct timespec *t0);

/* Run argv to completion with envp, capturing stdout (at most 64 KiB) and
 * discarding stderr into *errout (first 4 KiB); used by preflights. */
int cb_run_capture(const char *const argv[], char *const envp[], long long timeout_ms, char **out,
		   char **errout, int *status, struct cb_err *err);

/* The absolute path of the running caliber binary (/proc/self/exe), for
 * commands that start caliber again (run --devices) or write scripts that
 * do (slurm). Caller frees. */
char *cb_self_exe(struct cb_err *err);

/* "exited with status 3" / "killed by signal 9" for a waitpid status. */
void cb_describe_status(int status, char *out, size_t cap);

#endif
