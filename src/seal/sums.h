/* sums.h: the two files of a seal as text: SHA256SUMS (one sha256sum line
 * per file) and SEAL (what SHA256SUMS cannot say: how many lines it has,
 * and the folders that hold nothing). Parsing and writing only; seal.c
 * walks trees and hashes. Formats: docs/formats.md, "Seal". */
#ifndef CB_SUMS_H
#define CB_SUMS_H

#include <stddef.h>

#include "caliber.h"
#include "base/sha.h"

#define CB_SUMS_FILE "SHA256SUMS"
#define CB_SEAL_FILE "SEAL"
#define CB_SEAL_FORMAT 2          /* the format sealing writes; 1: SHA256SUMS alone */

/* One line of SHA256SUMS. */
struct cb_sum_line {
	char hex[CB_SHA256_HEX];
	char *rel;                  /* path relative to the run root */
	size_t line;                /* 1-based line in SHA256SUMS */
};

/* SHA256SUMS parsed: lines sorted by path. */
struct cb_sums {
	struct cb_sum_line *v;
	size_t n;
};

/* Parse SHA256SUMS (len bytes of buf; name is used in errors as
 * "name:line: what"): every line "<64 lowercase hex>  <path>" (or " *"),
 * newline-terminated, each path listed once; a path listed twice is refused
 * naming both lines. */
int cb_sums_parse(const char *buf, size_t len, const char *name, struct cb_sums *out, struct cb_err *err);
void cb_sums_release(struct cb_sums *s);

/* Index of rel in s, or s->n when it is not listed. */
size_t cb_sums_find(const struct cb_sums *s, const char *rel);

/* SEAL parsed. */
struct cb_seal_record {
	int format;                 /* CB_SEAL_FORMAT */
	size_t files;               /* lines of the SHA256SUMS it belongs to, its own line included */
	char **dirs;                /* folders that held nothing when sealed, sorted */
	size_t ndirs;
};

/* Parse SEAL: "caliber-seal 2", "files N", then one "dir PATH" per empty
 * folder, sorted, each newline-terminated; anything else is refused with
 * its line. */
int cb_seal_record_parse(const char *buf, size_t len, const char *name, struct cb_seal_record *out,
			 struct cb_err *err);
void cb_seal_record_release(struct cb_seal_record *r);

/* The text of a SEAL for files lines and the sorted dirs; caller frees.
 * NULL only when out of memory. */
char *cb_seal_record_format(size_t files, char *const *dirs, size_t ndirs, size_t *len);

/* Whether a name can be listed in SHA256SUMS or SEAL: not empty, no
 * newline, no backslash (sha256sum would escape them). */
int cb_sums_listable(const char *rel);

/* Whether one of the n elements (size bytes each) at base, sorted by the
 * path key(element) gives (strcmp order), lies below the folder dir: its
 * path starts with "dir/". A binary search. */
int cb_sorted_has_below(const void *base, size_t n, size_t size, const char *(*key)(const void *),
			const char *dir);

#endif
