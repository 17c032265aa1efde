/* cmd/digest.c: `caliber digest DIR`, the tree digest behind sources.*.tree_sha256. */
#include <stdio.h>

#include "cmd.h"
#include "base/digest.h"
#include "opts.h"

static const struct cb_cmd_spec digest_spec = {
	"digest", "DIR",
	"Print the tree digest of DIR, the value of sources.*.tree_sha256 in a\n"
	"manifest: SHA-256 over its files' sorted relative paths, git-style modes\n"
	"and contents. Symlinks are hashed as links and never followed; .git and\n"
	"__pycache__ directories are left out. The same tree gives the same digest\n"
	"on any machine.",
	NULL, 1, 1
};

int cmd_digest(int argc, const char **argv, struct cb_err *err)
{
	struct cb_args args = CB_ARGS_INIT;
	char hex[CB_SHA256_HEX];
	int rc = cb_parse_opts(&digest_spec, argc, argv, &args, err);

	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	rc = cb_tree_digest(args.pos[0], hex, err);
	cb_args_release(&args);
	if (rc < 0)
		return CB_EXIT_FAIL;
	printf("%s\n", hex);
	return CB_EXIT_OK;
}
