/*
 * caliber.h: the two rules every file of caliber keeps.
 *
 * OWNERSHIP. Whatever a function returns through its return value or an
 * out-parameter belongs to the caller, who releases it with the matching
 * `<type>_free()` (plain strings and byte buffers with `free()`). Arguments
 * are borrowed: a function never frees, keeps or stores a pointer it was
 * given beyond its own return. jansson values keep jansson's rule instead
 * (`json_*_new` setters steal the reference, getters borrow). Every struct
 * is valid when zeroed, and `<type>_free()` accepts NULL and zeroed structs.
 *
 * ERRORS. A function that can fail returns int: 0 on success, -1 on failure,
 * after filling the caller's `struct cb_err` with one line that names the
 * file, the JSON path, the field or the check concerned. Functions add their
 * own context with cb_fail()/cb_prefix() and never print; only main() prints
 * the message, as `caliber: <command>: <message>`.
 */
#ifndef CALIBER_H
#define CALIBER_H

#include <stddef.h>
#include <stdint.h>

#define CB_ERR_MAX 2048

struct cb_err {
	char msg[CB_ERR_MAX];
};

#if defined(__GNUC__)
#define CB_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CB_PRINTF(f, a)
#endif

/* Fill err with a formatted message and return -1, so that
 * `return cb_fail(err, "...")` reports and fails in one line. */
int cb_fail(struct cb_err *err, const char *fmt, ...) CB_PRINTF(2, 3);

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
	CB_EXIT_VERIFY = 6       /* verify: the seal does not hold */
};

#endif
