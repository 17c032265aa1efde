/* pin.h: a manifest's pins filled from real trees (`caliber pin`).
 *
 * A template is a manifest whose pins (sources.*.commit / tree_sha256 and
 * the cells' own compilers) may hold anything, placeholders included. Each
 * pin is filled from the tree it names: a tree_sha256 by cb_tree_digest, a
 * commit by the HEAD of the git checkout the tree lies in, which must be
 * clean there (nothing changed, nothing untracked). A source pinned by
 * commit whose tree is in no git checkout (an installed caliber, an
 * extracted archive) is pinned by tree_sha256 instead, and the log says so.
 * The harness is caliber itself: the commit this binary was built from
 * where its tree (cb_home) is a checkout, else the tree's digest.
 *
 * Cells: `--cell NAME=DIR` gives cell NAME a compiler of its own at DIR
 * (its root, with the template's pin kind and import, else sources.
 * compiler's). A cell whose template names a compiler but that no --cell
 * names runs the build of --compiler, except the control, which runs the
 * baseline's (the manifest requires it). */
#ifndef CB_PIN_H
#define CB_PIN_H

#include <stddef.h>

#include <jansson.h>

#include "base/buf.h"
#include "caliber.h"

struct cb_pin_cell {
	const char *name;   /* a cell's name */
	const char *root;   /* its compiler's root, absolute */
};

struct cb_pin_opts {
	const char *compiler;               /* sources.compiler's tree, absolute */
	const char *corpus;                 /* sources.corpus's tree, absolute */
	const struct cb_pin_cell *cells;    /* the --cell pairs */
	size_t ncells;
	int allow_dirty_harness;            /* pin the commit of a caliber built from a dirty tree */
};

/* Fill the pins of the template doc in place (borrowed), one line of what
 * was pinned from where per pin appended to log ("sources.compiler:
 * tree_sha256 <hex> of <dir>"). The fields are checked as far as pinning
 * needs; the whole manifest is checked by cb_pin_text. */
int cb_pin(json_t *doc, const struct cb_pin_opts *o, struct cb_buf *log, struct cb_err *err);

/* doc as the text of a manifest, checked by the manifest parser (name is
 * the template's path, for its messages): the template's key order, a
 * two-space indent, a final newline, and each real number in the fewest
 * digits that read back as the same double (0.05 stays 0.05, as Python's
 * repr writes it). Caller frees; NULL with err filled. */
char *cb_pin_text(const json_t *doc, const char *name, struct cb_err *err);

#endif
