/* fixed.h: evidence fixed when it is done (issue 25, docs/security.md).
 *
 * When a cell ends the runner hashes every file of its folder and makes it
 * read-only (a file with other names is first replaced by a copy of its
 * own: no file outside the run is ever made read-only); when a task ends,
 * its receipt likewise. The digests stay in memory and are appended to the
 * run's ledger RUN/fixed.sha256 (lines as SHA256SUMS has them), so that a
 * resumed run knows them too. The classifier reads a task's evidence only
 * between two checks against them, and before the seal every file of the
 * run is checked again: a file changed, gone or added since it was fixed,
 * or one that no cell and no runner step wrote, is a harness failure that
 * names it, and the run is not sealed. */
#ifndef CB_FIXED_H
#define CB_FIXED_H

#include <jansson.h>

#include "caliber.h"

/* The ledger's name in a run root. */
#define CB_FIXED_FILE "fixed.sha256"

/* The digests of a run's fixed files. Zeroed, it is "none": every
 * function below then does nothing. */
struct cb_fixed {
	char *root;          /* the run root */
	json_t *digests;     /* path relative to root -> sha256 hex */
	json_t *groups;      /* "tasks/<id>" (a path's first two components) -> how many digests lie beneath */
	int fd;              /* the ledger, open for appending; -1 when not */
};

/* Open the ledger of the run root: with resume, what an earlier
 * invocation fixed is read from it (a last line a kill cut short is left
 * out); then it is written again whole, from memory, and kept open for
 * appending. */
int cb_fixed_open(struct cb_fixed *f, const char *root, int resume, struct cb_err *err);
void cb_fixed_release(struct cb_fixed *f);

/* Forget what was fixed beneath rel (a folder relative to the root): a
 * task moved aside by --resume, which cb_fixed_tree then fixes where it
 * went. The ledger on disk is written again whole. */
int cb_fixed_forget(struct cb_fixed *f, const char *rel, struct cb_err *err);

/* Fix every regular file beneath rel (a folder or a file, relative to
 * the root) that is not fixed yet: hashed, made read-only (a hard link
 * copied first), recorded and appended to the ledger. */
int cb_fixed_tree(struct cb_fixed *f, const char *rel, struct cb_err *err);

/* Check the files beneath rel (a task's folder, "tasks/<id>") against
 * their digests: one changed since it was fixed, one gone, or one that was
 * never fixed fails, naming it (a harness failure, never a verdict). */
int cb_fixed_check(const struct cb_fixed *f, const char *rel, struct cb_err *err);

/* cb_fixed_check of the whole run root before its seal, where the files
 * at the top that runner steps write (names, NULL-terminated) need no
 * digest. */
int cb_fixed_check_run(const struct cb_fixed *f, const char *const *runner_files, struct cb_err *err);

#endif
