/* walk.h: list a tree without following links, sorted bytewise by relative
 * path (the order SHA256SUMS and tree digests use). */
#ifndef CB_WALK_H
#define CB_WALK_H

#include <stddef.h>
#include <sys/types.h>

#include "caliber.h"

enum cb_entry_kind { CB_ENT_FILE, CB_ENT_LINK, CB_ENT_OTHER, CB_ENT_DIR };

struct cb_entry {
	char *rel;              /* path relative to the root, '/'-separated */
	enum cb_entry_kind kind;
	mode_t mode;            /* with CB_WALK_MODES, else 0 */
};

struct cb_tree {
	struct cb_entry *v;
	size_t n;
};

/* cb_walk's flags. */
enum {
	CB_WALK_DIRS = 1,     /* list each directory too, as a CB_ENT_DIR entry */
	CB_WALK_MODES = 2     /* fill in each entry's mode (an lstat per entry) */
};

/* skip(name) returning non-zero leaves out a directory of that name at any
 * depth (NULL: keep everything); it is called from several threads.
 * Directories themselves are entries only with CB_WALK_DIRS (a join that
 * lists directories can then use the tree instead of the file system).
 * When more than one directory cannot be read, the error names the first
 * that a thread met. */
int cb_walk(const char *root, int (*skip_dir)(const char *name), int flags, struct cb_tree *t,
	    struct cb_err *err);
void cb_tree_release(struct cb_tree *t);

#endif
