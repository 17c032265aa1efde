/* cmd/export.c: `caliber export RUN [--format json|csv] [-o FILE]`: a
 * sealed run as rows for other tools (export.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cmd.h"
#include "views/export.h"
#include "base/fsutil.h"
#include "base/runroot.h"
#include "seal/guard.h"
#include "opts.h"

static const char export_about[] =
	"Export a sealed run for other tools (a spreadsheet, pandas, a dashboard):\n"
	"one row per task, order, cell and benchmark row, with the row's median,\n"
	"min, max and interquartile range in microseconds (every session pooled),\n"
	"its own speedup against the baseline's median, the task's speedup and\n"
	"interval in that order and its A/A point and bounds in percent, the\n"
	"cell's topology, and the task's verdict, code and reason. A task that\n"
	"timed nothing has one row with its verdict and empty measurements. The\n"
	"seal is checked first; a run whose seal does not hold is refused.\n"
	"Formats: json (the rows with the campaign's facts, described by\n"
	"docs/schema/export.schema.json) and csv (the rows alone, RFC 4180).\n"
	"Without --format the format follows -o's extension (.csv), else json.\n"
	"-o FILE is written atomically; without it the export goes to stdout.\n"
	"See docs/formats.md, \"Export\".";

/* caliber export: check the seal, gather the rows, write them. */
int cmd_export(int argc, const char **argv, struct cb_err *err)
{
	struct cb_args args = CB_ARGS_INIT;
	struct cb_buf b = CB_BUF_INIT;
	const char *format = NULL, *output = NULL;
	struct cb_run_view v = { 0 };
	json_t *doc = NULL;
	char *data = NULL;
	size_t len = 0, n;
	int rc, csv = 0;
	const struct cb_opt opts[] = {
		{ "format", CB_OPT_STR, &format, "FMT", "json or csv (default: from -o's extension, else json)" },
		{ "output", CB_OPT_PATH, &output, "FILE", "write the export there, not to stdout" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "export", "RUN_ROOT [--format json|csv] [-o FILE]", export_about, opts, 1, 1 };

	rc = cb_parse_opts(&spec, argc, argv, &args, err);
	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	rc = CB_EXIT_USAGE;
	if (format && strcmp(format, "json") != 0 && strcmp(format, "csv") != 0) {
		cb_fail(err, "--format: '%s' is not one of json, csv", format);
		goto out;
	}
	n = output ? strlen(output) : 0;
	csv = format ? strcmp(format, "csv") == 0 : n > 4 && strcmp(output + n - 4, ".csv") == 0;
	rc = CB_EXIT_FAIL;
	if (output) {
		const struct cb_guard g = { "-o", args.pos[0], "an export is written outside the run it reads" };
		if (cb_guard_check(&g, output, err) < 0)
			goto out;
	}
	/* A derived run holds no timing of its own: its run root is the one
	 * to export. */
	if (cb_exists_in(args.pos[0], CB_RUN_DERIVED)) {
		cb_fail(err, "%s: a derived run (" CB_RUN_DERIVED "): export its run root, whose receipts it re-reads",
			args.pos[0]);
		goto out;
	}
	if (!cb_exists_in(args.pos[0], CB_RUN_CAMPAIGN)) {
		cb_fail(err, "%s: no campaign receipt (" CB_RUN_CAMPAIGN "): not a run root", args.pos[0]);
		goto out;
	}
	if (cb_run_view_open(&v, args.pos[0], NULL, CB_RUN_VIEW_ROOT_ONLY, err) < 0 || !(doc = cb_export_run(&v, err)))
		goto out;
	if (csv) {
		cb_export_csv(&b, doc);
		if (!(data = cb_buf_detach(&b, &len)))
			cb_fail(err, "out of memory");
	} else if ((data = cb_export_json_text(doc, err))) {
		len = strlen(data);
	}
	if (!data)
		goto out;
	if (output) {
		const struct cb_guard g = { "-o", args.pos[0], "an export is written outside the run it reads" };
		if (cb_guard_mkdir_parent(&g, output, 0755, err) < 0 || cb_write_atomic(output, data, len, 0644, err) < 0)
			goto out;
		printf("export: wrote %s (%s, %zu rows)\n", output, csv ? "csv" : "json",
		       json_array_size(json_object_get(doc, "rows")));
	} else if (fwrite(data, 1, len, stdout) != len) {
		cb_fail(err, "stdout: write failed");
		goto out;
	}
	rc = CB_EXIT_OK;
out:
	free(data);
	cb_buf_release(&b);
	json_decref(doc);
	cb_run_view_release(&v);
	cb_args_release(&args);
	return rc;
}
