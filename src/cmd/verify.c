/* cmd/verify.c: `caliber verify RUN_ROOT`, the seal of a run root checked
 * again: every file that changed, is missing or is extra. */
#include <stdio.h>

#include "cmd.h"
#include "opts.h"
#include "seal.h"

static void print_list(const char *what, char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		printf("%s: %s\n", what, v[i]);
}

static const struct cb_cmd_spec verify_spec = {
	"verify", "RUN_ROOT",
	"Recompute the seal of a run root: every file listed in SHA256SUMS is\n"
	"hashed again. Prints each file that changed, is missing or is extra, and\n"
	"every symlink or special file (never followed). Exit 0 when the seal\n"
	"holds, 6 when it does not.",
	NULL, 1, 1
};

int cmd_verify(int argc, char **argv, struct cb_err *err)
{
	struct cb_verify_report rep;
	struct cb_args args = CB_ARGS_INIT;
	int rc = cb_parse_opts(&verify_spec, argc, argv, &args, err);

	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	rc = cb_verify(args.pos[0], &rep, err);
	if (rc < 0) {
		cb_args_release(&args);
		return CB_EXIT_FAIL;
	}
	print_list("changed", rep.changed, rep.nchanged);
	print_list("missing", rep.missing, rep.nmissing);
	print_list("extra", rep.extra, rep.nextra);
	print_list("symlink", rep.links, rep.nlinks);
	if (cb_verify_holds(&rep)) {
		printf("verify: %s: seal holds (%zu files)\n", args.pos[0], rep.nfiles);
		rc = CB_EXIT_OK;
	} else {
		cb_fail(err, "%s: seal does not hold: %zu changed, %zu missing, %zu extra, %zu symlinks",
			args.pos[0], rep.nchanged, rep.nmissing, rep.nextra, rep.nlinks);
		rc = CB_EXIT_VERIFY;
	}
	cb_verify_report_release(&rep);
	cb_args_release(&args);
	return rc;
}
