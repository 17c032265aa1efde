/* merge.h: `caliber merge` (docs/design.md section 16): sealed shards of one frozen
 * campaign joined into one sealed run root, the run a serial run of the
 * whole matrix would have written, but for times and the shards' own
 * receipts (docs/formats.md, "Merged run"). */
#ifndef CB_MERGE_H
#define CB_MERGE_H

#include <stddef.h>

#include "caliber.h"

/* What to merge. Strings are borrowed; paths absolute. */
struct cb_merge_opts {
	const char *const *shards;   /* the shard run roots, in any order */
	size_t nshards;
	const char *output;          /* the merged run root to create */
	const char *key;             /* NULL, or a public key (PEM) every shard's signature must hold for */
	const char *sign_key;        /* NULL, or the private key (PEM) that signs the merged seal */
	int quiet;                   /* no progress lines on stdout */
	int argc;                    /* the command line, recorded in the campaign receipt */
	const char **argv;
};

/* Check every shard (sealed, a shard, of the same campaign, frozen manifest
 * and matrix, dealt as the matrix deals, none missing or given twice,
 * holding nothing the deal does not name, signed by o->key when it is
 * given) and the output root before anything is written; then copy the
 * shards' tasks, verifying each shard's seal in the same read, write the
 * merged campaign receipt and verdict matrix, and seal the result (signed
 * with o->sign_key when it is given), which appears whole or not at all. Returns 0, or -1 with err naming the shard and what
 * is wrong (nothing written then). */
int cb_merge(const struct cb_merge_opts *o, struct cb_err *err);

#endif
