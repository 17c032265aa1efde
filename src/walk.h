/* walk.h: list a tree without following links, sorted bytewise by relative
 * path (the order SHA256SUMS and tree digests use). */
#ifndef CB_WALK_H
#define CB_WALK_H

#include <stddef.h>
#include <sys/types.h>

#include "caliber.h"

enum cb_entry_kind { CB_ENT_FILE, CB_ENT_LINK, CB_ENT_OTHER };

struct cb_entry {
	char *rel;              /* path relative to the root, '/'-separated */
	enum cb_entry_kind kind;
	mode_t mode;
	off_t size;
};

struct cb_tree {
	struct cb_entry *v;
	size_t n;
};

/* skip(name) returning non-zero leaves out a directory of that name at any
 * depth (NULL: keep everything). Directories themselves are not entries. */
int cb_walk(const char *root, int (*skip_dir)(const char *name), struct cb_tree *t,
	    struct cb_err *err);
void cb_tree_free(struct cb_tree *t);

#endif
