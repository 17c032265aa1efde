/* seal.h: sealing a run root (SHA256SUMS + read-only) and verifying a seal. */
#ifndef CB_SEAL_H
#define CB_SEAL_H

#include <stddef.h>

#include "caliber.h"
#include "base/sha.h"
#include "sums.h"

/* Seal root (format 2, docs/formats.md "Seal"): write SEAL (the number of
 * lines SHA256SUMS will have, and every folder that holds nothing), then
 * SHA256SUMS (sha256sum format, sorted paths, every file of the tree but
 * itself and its signature, SEAL included), atomically, then remove write
 * permission from the whole tree. Symlinks and special files are refused,
 * named by their kind: a sealed run holds files and folders only. */
int cb_seal(const char *root, struct cb_err *err);

/* cb_seal, and with key_path (NULL: none) SHA256SUMS.sig, the Ed25519
 * signature of SHA256SUMS by the private key in key_path (sign.h). */
int cb_seal_signed(const char *root, const char *key_path, struct cb_err *err);

/* The seal's own digest: SHA-256 of root's SHA256SUMS, to be recorded
 * elsewhere (nothing inside a run can hold the digest of the file that
 * hashes it). */
int cb_seal_digest(const char *root, char hex[CB_SHA256_HEX], struct cb_err *err);

/* Digests a caller vouches for: digest(rel, ctx) gives the SHA-256 (hex)
 * of the file at rel, or NULL when the seal must hash it. merge links or
 * copies files whose digests the verified seals of their shards give, so
 * its seal need not read them again. Called from the hashing threads. */
struct cb_known_digests {
	const char *(*digest)(const char *rel, void *ctx);
	void *ctx;
};

/* cb_seal_signed, taking the digests known gives instead of hashing those
 * files. */
int cb_seal_known(const char *root, const struct cb_known_digests *known, const char *key_path,
		  struct cb_err *err);

/* Remove write permission from a tree whose SHA256SUMS is already written
 * (finishes a seal that was interrupted). */
int cb_seal_finish(const char *root, struct cb_err *err);

/* What verify found. Each list holds relative paths, sorted. */
struct cb_verify_report {
	int format;                  /* 1: SHA256SUMS alone (sealed before SEAL existed); 2: with SEAL */
	char digest[CB_SHA256_HEX];  /* the seal's own digest (cb_seal_digest) */
	size_t nfiles;               /* the run's files listed in SHA256SUMS (SEAL not counted) */
	char **changed; size_t nchanged;
	char **missing; size_t nmissing;
	char **extra; size_t nextra; /* files, and (format 2) folders as "path/" */
	char **links; size_t nlinks; /* symlinks, "path -> target", never followed */
	char **specials; size_t nspecials;  /* FIFOs, sockets, devices: "path (a FIFO)", never opened */
	char **sums; size_t nsums;   /* format 2: what SEAL says of SHA256SUMS that does not hold
				      * (lines removed or added), or why SEAL cannot be read */
};

/* Recompute the seal of root into rep. Returns -1 only when it cannot be
 * checked at all (no SHA256SUMS, a malformed or duplicated line, an
 * unreadable tree). */
int cb_verify(const char *root, struct cb_verify_report *rep, struct cb_err *err);

/* Lets a caller process files in the same read that verifies them, so
 * that a file verify has to read anyway is not read a second time. For
 * each regular file of the tree, begin(rel, ctx) returns a state to feed,
 * or NULL to leave the file alone (not wanted, or no memory: the caller
 * then reads it itself). chunk(state, p, n) then gets the file's bytes in
 * order, exactly the bytes hashed, and end(state, ok, ctx) closes the
 * state: ok is 1 when the whole file was read, 0 when reading failed.
 * Callbacks run on the hashing threads, on several files at once: what
 * they share through ctx must be locked. A file that was fed has not been
 * compared with the seal yet: its bytes can be trusted only once the
 * report says the seal holds. */
struct cb_tree;
struct cb_verify_observer {
	void *(*begin)(const char *rel, void *ctx);
	void (*chunk)(void *state, const char *p, size_t n);
	void (*end)(void *state, int ok, void *ctx);
	void *ctx;
	/* Non-NULL: receives the tree verify walked, directories included
	 * (CB_WALK_DIRS), when the verify could be made; the caller frees it
	 * with cb_tree_release. Like the bytes fed, it is what the seal was
	 * checked against: to be trusted once the report says it holds. */
	struct cb_tree *listing;
};

/* cb_verify, showing the files to obs (NULL: cb_verify). */
int cb_verify_observed(const char *root, const struct cb_verify_observer *obs,
		       struct cb_verify_report *rep, struct cb_err *err);
int cb_verify_holds(const struct cb_verify_report *rep);
/* "1 changed, 0 missing, 0 extra, 0 symlinks, 0 special files" (and what
 * SEAL says, when it does not hold), for messages. */
void cb_verify_describe(const struct cb_verify_report *rep, char *out, size_t cap);
/* The first difference, as "changed: PATH" (or missing, extra, symlink,
 * special file, or what SEAL says), for messages. */
void cb_verify_first(const struct cb_verify_report *rep, char *out, size_t cap);
void cb_verify_report_release(struct cb_verify_report *rep);

/* 0 when rep holds, else -1 with err naming root and the first
 * difference (what cb_verify_or_fail says). */
int cb_verify_fail(const char *root, const struct cb_verify_report *rep, struct cb_err *err);
/* cb_verify, turning any difference into an error that names the first one;
 * used by commands that must not trust an unsealed or altered run. */
int cb_verify_or_fail(const char *root, struct cb_err *err);
/* cb_verify_or_fail, showing the files to obs (see cb_verify_observer). */
int cb_verify_or_fail_observed(const char *root, const struct cb_verify_observer *obs,
			       struct cb_err *err);

/* The signature of root's seal (SHA256SUMS.sig, docs/formats.md "Signed
 * seal"). With pub (an Ed25519 public key, PEM) it must hold for that key:
 * a missing one, another key's or one that does not hold fails. Without
 * pub it is only read. key gets the fingerprint of the key that signed
 * ("" when root is not signed). A SHA256SUMS.sig that is not a regular
 * file (a symlink) is refused, never followed. */
int cb_seal_signature(const char *root, const char *pub, char key[CB_SHA256_HEX], struct cb_err *err);

/* cb_seal_signature said in one line for a reader, into line (cap bytes):
 * "signature: holds, key sha256:K (PUB)" when pub checked it, "signature:
 * SHA256SUMS.sig by key sha256:K, not checked (...)" when root is signed
 * and no pub was given, "" when it is not signed. */
int cb_seal_signature_check(const char *root, const char *pub, char *line, size_t cap, struct cb_err *err);

/* Whether root holds a SHA256SUMS (is sealed). */
int cb_is_sealed(const char *root);

#endif
