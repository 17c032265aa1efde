/* merge_int.h: what merge.c and merge_check.c share and nothing else
 * includes: the state of one merge, and the checks merge.c runs first. */
#ifndef CB_MERGE_INT_H
#define CB_MERGE_INT_H

#include <pthread.h>
#include <stddef.h>

#include <jansson.h>

#include "base/sha.h"
#include "campaign/shard.h"
#include "seal/guard.h"
#include "merge.h"

/* One shard given on the command line. */
struct shard_in {
	const char *root;
	char *resolved;              /* symlink-free, to find one given twice */
	json_t *campaign;            /* its campaign receipt */
	struct cb_shard s;
};

/* A file of the merged root whose digest a shard's verified seal gives. */
struct known {
	char *rel;
	char hex[CB_SHA256_HEX];
};

struct merge {
	const struct cb_merge_opts *o;
	struct shard_in *in;         /* by shard index once checked */
	size_t n;
	char *tmp;                   /* the merged root while it is built */
	size_t cur;                  /* the shard being copied */
	pthread_mutex_t lock;        /* guards failed and err (copy callbacks run on several threads) */
	pthread_mutex_t dirs;        /* held while a folder of the merged root is made */
	int failed;
	struct cb_err err;
	struct known *known;
	size_t nknown;
};

/* merge_check.c */
extern const char *const merge_common_keys[];
extern const struct cb_guard merge_output_guard;
int merge_check_shards(struct merge *mg, struct cb_err *err);

#endif
