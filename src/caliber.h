/*
 * caliber.h: the two rules every file of caliber keeps.
 *
 * OWNERSHIP. Whatever a function returns through its return value or an
 * out-parameter belongs to the caller. Arguments are borrowed: a function
 * never frees or keeps a pointer it was given beyond its own return; the
 * one exception is a context that an `_init` function sets up for later
 * calls (struct cb_worker_ctx, struct cb_preflight), which may point to
 * arguments that must outlive it, and its header says which. jansson values
 * keep jansson's rule instead (`json_*_new` setters steal the reference,
 * getters borrow). The verbs are git's, one meaning each:
 *   <type>_init(s, ...)   prepares s for use;
 *   <type>_release(s)     frees what s holds, not s itself, and leaves s
 *                         zeroed (as good as new);
 *   <type>_free(p)        frees what p holds and p itself (a heap object,
 *                         or a heap array with its strings);
 * plain strings and byte buffers are freed with free(). Every struct is
 * valid when zeroed (`= { 0 }`, memset) or, where a zero is not a valid
 * value, has an `<TYPE>_INIT` to start from; `_release` and `_free` accept
 * NULL and zeroed or initialised structs.
 *
 * ERRORS. A function that can fail returns int: 0 on success, -1 on failure,
 * after filling the caller's `struct cb_err` with one line that names the
 * file, the JSON path, the field or the check concerned, and a code that a
 * caller tests (never the text). Functions add their own context with
 * cb_fail()/cb_prefix() and never print; only main() prints the message,
 * as `caliber: <command>: <message>`.
 */
#ifndef CALIBER_H
#define CALIBER_H

#include <stddef.h>
#include <stdint.h>

#define CB_ERR_MAX 2048

/* What kind of failure an error records: what a caller may test. */
enum cb_err_code {
	CB_ERR_NONE = 0,         /* nothing recorded */
	CB_ERR_FAIL,             /* a failure; the message says what */
	CB_ERR_NOT_SEALED        /* a run root without SHA256SUMS (cb_verify) */
};

struct cb_err {
	enum cb_err_code code;
	char msg[CB_ERR_MAX];
};

#define CB_ERR_INIT { CB_ERR_NONE, "" }

#if defined(__GNUC__)
#define CB_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CB_PRINTF(f, a)
#endif

/* Fill err with a formatted message and the code CB_ERR_FAIL and return -1,
 * so that `return cb_fail(err, "...")` reports and fails in one line. A
 * message longer than CB_ERR_MAX ends in "..." (never cut silently). */
int cb_fail(struct cb_err *err, const char *fmt, ...) CB_PRINTF(2, 3);

/* cb_fail with another code. */
int cb_fail_code(struct cb_err *err, enum cb_err_code code, const char *fmt, ...) CB_PRINTF(3, 4);

/* Put "<formatted context>: " in front of the message already in err and
 * return -1; used when passing an error up through a layer that knows more
 * about where it happened (a file name, a JSON path). */
int cb_prefix(struct cb_err *err, const char *fmt, ...) CB_PRINTF(2, 3);

/* Version and commit this binary was built from (see the Makefile). */
const char *cb_version(void);
const char *cb_commit(void);

/* Exit statuses shared by every command. */
enum {
	CB_EXIT_OK = 0,
	CB_EXIT_FAIL = 1,        /* the command failed; the message says why */
	CB_EXIT_USAGE = 2,       /* bad command line */
	CB_EXIT_PREFLIGHT = 3,   /* run: preflight refused the batch */
	CB_EXIT_STOPPED = 4,     /* run: stopped by --stop-after, resumable */
	CB_EXIT_GATE = 5,        /* run/report: --fail-on matched a verdict */
	CB_EXIT_VERIFY = 6       /* verify: the seal (or its signature) does not hold */
};

#endif
