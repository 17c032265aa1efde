/* seal.h: sealing a run root (SHA256SUMS + read-only) and verifying a seal. */
#ifndef CB_SEAL_H
#define CB_SEAL_H

#include <stddef.h>

#include "caliber.h"

#define CB_SUMS_FILE "SHA256SUMS"

/* Write SHA256SUMS (sha256sum format, sorted paths, every file of the tree
 * but itself) atomically, then remove write permission from the whole tree.
 * Symlinks and special files are refused: a sealed run holds files only. */
int cb_seal(const char *root, struct cb_err *err);

/* Remove write permission from a tree whose SHA256SUMS is already written
 * (finishes a seal that was interrupted). */
int cb_seal_finish(const char *root, struct cb_err *err);

/* What verify found. Each list holds relative paths (for symlinks
 * "path -> target"), sorted. */
struct cb_verify_report {
	size_t nfiles;               /* files listed in SHA256SUMS */
	char **changed; size_t nchanged;
	char **missing; size_t nmissing;
	char **extra; size_t nextra;
	char **links; size_t nlinks; /* symlinks and special files, never followed */
};

/* Recompute the seal of root into rep. Returns -1 only when it cannot be
 * checked at all (no SHA256SUMS, malformed line, unreadable tree). */
int cb_verify(const char *root, struct cb_verify_report *rep, struct cb_err *err);
int cb_verify_holds(const struct cb_verify_report *rep);
void cb_verify_report_free(struct cb_verify_report *rep);

/* cb_verify, turning any difference into an error that names the first one;
 * used by commands that must not trust an unsealed or altered run. */
int cb_verify_or_fail(const char *root, struct cb_err *err);

/* Whether root holds a SHA256SUMS (is sealed). */
int cb_is_sealed(const char *root);

#endif
