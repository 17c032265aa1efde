/* identity.h: identical by construction (docs/design.md section 19). ir_meta records
 * per variant the digest of its compiled binary, of its TTGIR without
 * locations and its launch configuration (ir/binaries.tsv, docs/formats.md);
 * a task is identical by construction when every measured kernel of the
 * candidate and of the control has the same code (the binary without its
 * debug sections), TTGIR and launch as one of the baseline's, kernel for kernel, and both replayed the same autotune
 * decisions the baseline recorded. Its candidate-vs-baseline interval is
 * then an A/A for free, and `run --prescreen` need not time it. */
#ifndef CB_IDENTITY_H
#define CB_IDENTITY_H

#include <stddef.h>

#include <jansson.h>

#include "caliber.h"
#include "manifest.h"
#include "ir/topology.h"

/* "-" in a field of binaries.tsv: the worker found no such file. */
#define CB_BINARY_NONE "-"

/* One row of ir/binaries.tsv. */
struct cb_binary {
	char *variant, *kernel;
	char *binary;                /* the binary's file name in the cache, or "-" */
	char *binary_sha256;         /* of the file as it is */
	char *code_sha256;           /* of what it runs: its debug sections left out (compared) */
	char *ttgir_sha256, *launch;
	size_t line;
};

/* Rows sorted by variant. */
struct cb_binaries {
	struct cb_binary *rows;
	size_t n;
};

/* Parse binaries.tsv (header `variant kernel binary binary_sha256
 * code_sha256 ttgir_sha256 launch`, tab-separated, '\n' or "\r\n" line ends). Refuses a
 * missing or extra column, an empty field, a digest that is neither "-" nor
 * 64 lowercase hex digits, and a variant listed twice; errors name the file
 * and line. */
int cb_binaries_parse(const char *buf, size_t len, const char *path, struct cb_binaries *b,
		      struct cb_err *err);
int cb_binaries_load(const char *path, struct cb_binaries *b, struct cb_err *err);
void cb_binaries_release(struct cb_binaries *b);

/* What one cell offers the comparison: its binaries and the autotune
 * decisions it recorded or replayed (autotune.jsonl, each line in one
 * canonical JSON form, sorted, without repeats). */
struct cb_identity_cell {
	int have;                    /* ir/binaries.tsv was read */
	char *missing;               /* why not (owned), when !have */
	struct cb_binaries bins;
	char **decisions;
	size_t ndecisions;
};

/* Load cell_dir's ir/binaries.tsv and autotune.jsonl into c. A missing
 * binaries.tsv is not an error (c->have 0, c->missing says so: a run from
 * before digests, or a worker without them); one that cannot be parsed is
 * not either, it is named in c->missing. -1 only when out of memory. */
int cb_identity_cell_load(const char *cell_dir, struct cb_identity_cell *c, struct cb_err *err);
void cb_identity_cell_release(struct cb_identity_cell *c);

/* A measured kernel of one cell, as compared (borrowed from its cell). */
struct cb_identity_kernel {
	const struct cb_binary *b;
};

/* The comparison of a task's three cells. */
struct cb_identity {
	int known;                   /* every cell had its binaries */
	int identical;               /* known, and candidate and control identical to the baseline */
	long long floor;             /* measured: launches > floor */
	char *reason;                /* owned: what is identical, or the first difference, or why unknown */
	struct cb_identity_kernel *k[CB_NROLES];   /* each cell's measured kernels, sorted */
	size_t nk[CB_NROLES];
	size_t ndecisions;           /* the baseline's autotune decisions */
};

/* Compare the cells of one phase (by role): the variants of topo[r] with
 * more than floor launches are its measured kernels, each joined to its
 * row of cells[r] by variant name, and matched across cells by kernel
 * name, code, TTGIR and launch (variant names may differ: another build
 * of a compiler names its cache folders differently). id is overwritten.
 * Returns -1 only when out of memory. */
int cb_identity_compare(const struct cb_identity_cell cells[CB_NROLES], const struct cb_topology topo[CB_NROLES],
			long long floor, const struct cb_manifest *m, struct cb_identity *id, struct cb_err *err);
void cb_identity_release(struct cb_identity *id);

/* The receipt's form: {"known", "identical", "floor", "reason",
 * "autotune_decisions", "cells": {role: [{"variant", "kernel", "binary",
 * "binary_sha256", "code_sha256", "ttgir_sha256", "launch"}]}}; phase names the cells
 * compared ("a" or "screen"). NULL when out of memory. */
json_t *cb_identity_json(const struct cb_identity *id, const char *phase);

#endif
