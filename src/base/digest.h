/* digest.h: the tree digest behind sources.*.tree_sha256. */
#ifndef CB_DIGEST_H
#define CB_DIGEST_H

#include "caliber.h"
#include "sha.h"

/* SHA-256 over the sorted entries of dir (see docs/formats.md, "Tree
 * digest"): per entry its git-style mode, the SHA-256 of its content (of
 * the link text for a symlink, never followed) and its relative path.
 * Directories named .git or __pycache__ are left out. */
int cb_tree_digest(const char *dir, char hex[CB_SHA256_HEX], struct cb_err *err);

#endif
