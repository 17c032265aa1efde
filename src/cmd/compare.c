/* cmd/compare.c: `caliber compare RUN_A RUN_B [--format text|json]`: two
 * sealed runs of the same corpus side by side (compare.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cmd.h"
#include "views/compare.h"
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
int cmd_compare(int argc, const char **argv, struct cb_err *err)
{
	struct cb_compare c;
	struct cb_run_view va, vb;
	struct cb_buf b = CB_BUF_INIT;
	struct cb_args args = CB_ARGS_INIT;
	const char *format = "text";
	int rc, json;
	const struct cb_opt opts[] = {
		{ "format", CB_OPT_STR, &format, "FMT", "text or json (default text)" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "compare", "RUN_A RUN_B [--format text|json]", compare_about, opts, 2, 2 };

	rc = cb_parse_opts(&spec, argc, argv, &args, err);
	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	memset(&c, 0, sizeof(c));
	memset(&va, 0, sizeof(va));
	memset(&vb, 0, sizeof(vb));
	if (cb_opt_format_json(format, &json, err) < 0)
		rc = CB_EXIT_USAGE;
	else if (cb_run_view_open(&va, args.pos[0], NULL, CB_RUN_VIEW_ROOT_ONLY, err) < 0 ||
		 cb_run_view_require(&va, 0, err) < 0 ||
		 cb_run_view_open(&vb, args.pos[1], NULL, CB_RUN_VIEW_ROOT_ONLY, err) < 0 ||
		 cb_run_view_require(&vb, 0, err) < 0 || cb_compare_load(&c, &va, &vb, err) < 0)
		rc = CB_EXIT_FAIL;
	else if (json)
		rc = cb_print_json(cb_compare_json(&c), err);
	else {
		cb_compare_text(&b, &c);
		rc = cb_print_buf(&b, err);
	}
	cb_compare_release(&c);
	cb_run_view_release(&va);
	cb_run_view_release(&vb);
	cb_args_release(&args);
	return rc;
}
