/* cmd/compare.c: `caliber compare RUN_A RUN_B [--format text|json]`: two
 * sealed runs of the same corpus side by side (compare.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmd.h"
#include "compare.h"
#include "jsonio.h"
#include "opts.h"

static const char compare_about[] =
	"Compare two sealed runs of the same corpus (a compiler change measured at two\n"
	"commits, or a re-run): per task found in both (matched by id), the verdicts,\n"
	"topologies and speedups of A and B side by side, what changed, and whether\n"
	"each order's speedup moved by more than both runs' A/A bands. The move is\n"
	"relative, (1 + speedup B) / (1 + speedup A) - 1, as the A/A band is (control\n"
	"against baseline); it is beyond a band when it exceeds the band's farthest\n"
	"edge from zero. Both seals must hold. Formats: text (the default) and json\n"
	"(docs/formats.md, \"caliber compare\").";

/* caliber compare: load both runs, compare, print. */
int cmd_compare(int argc, char **argv, struct cb_err *err)
{
	struct cb_compare c;
	struct cb_buf b = CB_BUF_INIT;
	struct cb_args args = CB_ARGS_INIT;
	const char *format = "text";
	char *out = NULL;
	json_t *j = NULL;
	int rc;
	const struct cb_opt opts[] = {
		{ "format", CB_OPT_STR, &format, "FMT", "text or json (default text)" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "compare", "RUN_A RUN_B [--format text|json]", compare_about, opts, 2, 2 };

	rc = cb_parse_opts(&spec, argc, argv, &args, err);
	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	memset(&c, 0, sizeof(c));
	rc = CB_EXIT_USAGE;
	if (strcmp(format, "json") != 0 && strcmp(format, "text") != 0) {
		cb_fail(err, "--format: '%s' is not one of text, json", format);
		goto out;
	}
	rc = CB_EXIT_FAIL;
	if (cb_compare_load(&c, args.pos[0], args.pos[1], err) < 0)
		goto out;
	if (strcmp(format, "json") == 0) {
		j = cb_compare_json(&c);
		out = j ? cb_json_dumps(j, err) : NULL;
	} else {
		cb_compare_text(&b, &c);
		out = cb_buf_detach(&b, NULL);
	}
	if (!out && !j)
		cb_fail(err, "out of memory");
	if (out && fputs(out, stdout) != EOF)
		rc = CB_EXIT_OK;
	else if (out)
		cb_fail(err, "stdout: write failed");
out:
	free(out);
	json_decref(j);
	cb_buf_release(&b);
	cb_compare_release(&c);
	cb_args_release(&args);
	return rc;
}
