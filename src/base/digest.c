/* digest.c: tree digests (caliber digest DIR). */
#include "digest.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "walk.h"

/* .git is the repository, not the tree; __pycache__ is written by Python on
 * import, so a frozen root would otherwise change by being used. */
static int skip_dir(const char *name)
{
	return strcmp(name, ".git") == 0 || strcmp(name, "__pycache__") == 0;
}

int cb_tree_digest(const char *dir, char hex[CB_SHA256_HEX], struct cb_err *err)
{
	struct cb_tree t;
	struct cb_sha total;
	size_t i;

	if (cb_walk(dir, skip_dir, CB_WALK_MODES, &t, err) < 0)
		return -1;
	if (cb_sha_init(&total, err) < 0) {
		cb_tree_release(&t);
		return -1;
	}
	for (i = 0; i < t.n; i++) {
		const struct cb_entry *e = &t.v[i];
		char *abs = cb_path_join(dir, e->rel);
		char content[CB_SHA256_HEX];
		const char *mode = "";
		char line[128];
		int rc;

		if (!abs) {
			rc = cb_fail(err, "out of memory");
		} else if (strchr(e->rel, '\n')) {
			rc = cb_fail(err, "%s: a path with a newline cannot be digested", abs);
		} else if (e->kind == CB_ENT_FILE) {
			mode = (e->mode & 0111) ? "100755" : "100644";
			rc = cb_sha256_file(abs, content, err);
		} else if (e->kind == CB_ENT_LINK) {
			char target[PATH_MAX];
			ssize_t n = readlink(abs, target, sizeof(target));
			mode = "120000";
			rc = n < 0 ? cb_fail(err, "%s: readlink: %s", abs, strerror(errno))
				   : cb_sha256_hex(target, (size_t)n, content, err);
		} else {
			rc = cb_fail(err, "%s: neither a file, a directory nor a symlink", abs);
		}
		free(abs);
		if (rc < 0) {
			cb_sha_release(&total);
			cb_tree_release(&t);
			return -1;
		}
		snprintf(line, sizeof(line), "%s %s ", mode, content);
		cb_sha_update(&total, line, strlen(line));
		cb_sha_update(&total, e->rel, strlen(e->rel));
		cb_sha_update(&total, "\n", 1);
	}
	cb_sha_final_hex(&total, hex);
	cb_tree_release(&t);
	return 0;
}
