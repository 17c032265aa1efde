/* cmd/diff.c: `caliber diff RUN [TASK] [--format text|json] [--run DIR]`:
 * which topology ops the candidate removed, added or kept, in which
 * measured kernel and at which source line (docs/design.md section 15, diff.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cmd.h"
#include "views/diff.h"
#include "base/fsutil.h"
#include "base/runroot.h"
#include "opts.h"

static const char diff_about[] =
	"Show where the topology changed (docs/design.md section 15): per task and\n"
	"per measured kernel (a variant launched more than the launch floor, as\n"
	"topology accounting counts it), every topology op of the baseline, control\n"
	"and candidate cells\n"
	"with its source location (the loc(...) chain resolved to file:line:col,\n"
	"innermost first; '<-' reads 'inlined from') and its source and destination\n"
	"layouts as the module writes them (#blocked, #mma, ...; their definitions\n"
	"follow), grouped by source line as removed, added or kept. Kernels are\n"
	"matched across cells by kernel name and variant (Triton's cache key).\n"
	"RUN is a sealed run root, or a derived run that 'caliber reaccount' wrote\n"
	"(its floor is used; --run DIR names its run root when derived.json's\n"
	"run.root is elsewhere). The seal is checked first and must hold. With\n"
	"TASK, only that task. Formats: text (the default) and json\n"
	"(docs/formats.md, \"caliber diff\"). Paths under the run's compiler, corpus\n"
	"and harness roots are shown from the root's name (ops/caliber_ops/...).\n"
	"Needs no GPU.";

/* caliber diff: load and compare the run, print it. */
int cmd_diff(int argc, const char **argv, struct cb_err *err)
{
	struct cb_diff d;
	struct cb_run_view v;
	struct cb_buf b = CB_BUF_INIT;
	struct cb_args args = CB_ARGS_INIT;
	const char *format = "text", *run = NULL;
	int rc, json;
	const struct cb_opt opts[] = {
		{ "format", CB_OPT_STR, &format, "FMT", "text or json (default text)" },
		{ "run", CB_OPT_PATH, &run, "DIR", "derived run: the run root, when derived.json's run.root is elsewhere" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "diff", "RUN_ROOT|DERIVED_DIR [TASK] [--format text|json] [--run DIR]",
					  diff_about, opts, 1, 2 };

	rc = cb_parse_opts_words(&spec, 1, argc, argv, &args, err);
	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	memset(&d, 0, sizeof(d));
	memset(&v, 0, sizeof(v));
	rc = CB_EXIT_USAGE;
	if (cb_opt_format_json(format, &json, err) < 0)
		goto out;
	if (args.npos == 2 && !cb_is_ident(args.pos[1])) {
		cb_fail(err, "TASK: '%s' is not a task name (letters, digits, '.', '_', '-')", args.pos[1]);
		goto out;
	}
	if (run && cb_is_dir(args.pos[0]) && !cb_exists_in(args.pos[0], CB_RUN_DERIVED)) {
		cb_fail(err, "--run DIR applies to a derived run only, and %s holds no " CB_RUN_DERIVED, args.pos[0]);
		goto out;
	}
	rc = CB_EXIT_FAIL;
	if (cb_run_view_open(&v, args.pos[0], run, CB_RUN_VIEW_COUNT, err) < 0 ||
	    cb_diff_load(&d, &v, args.npos == 2 ? args.pos[1] : NULL, err) < 0)
		goto out;
	if (json) {
		rc = cb_print_json(cb_diff_json(&d), err);
	} else {
		cb_diff_text(&b, &d);
		rc = cb_print_buf(&b, err);
	}
out:
	cb_diff_release(&d);
	cb_run_view_release(&v);
	cb_args_release(&args);
	return rc;
}
