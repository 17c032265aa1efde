/* cmd/report.c: `caliber report RUN [--format text|md|html] [-o FILE]
 * [--fail-on VERDICTS]`: what a sealed run, or a derived run written by
 * reaccount, found (report.h); --fail-on gates on the verdicts, and never
 * passes a run whose seal does not hold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "views/bundle.h"
#include "account/classify.h"
#include "cmd.h"
#include "base/fsutil.h"
#include "base/runroot.h"
#include "seal/guard.h"
#include "opts.h"
#include "views/report.h"

/* ------------------------------------------------------------------ */
/* The command                                                          */

/* The formats; formats[] is indexed by them and names their file
 * extensions. */
enum format { FMT_TEXT, FMT_MD, FMT_HTML };

static const struct {
	const char *name, *ext1, *ext2;
	enum format f;
} formats[] = {
	{ "text", ".txt", NULL, FMT_TEXT },
	{ "md", ".md", ".markdown", FMT_MD },
	{ "html", ".html", ".htm", FMT_HTML },
};

/* The format a -o FILE's extension asks for; text when it names none. */
static enum format format_of_file(const char *path)
{
	size_t i, n = strlen(path);

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		const char *e1 = formats[i].ext1, *e2 = formats[i].ext2;
		if ((n > strlen(e1) && strcmp(path + n - strlen(e1), e1) == 0) ||
		    (e2 && n > strlen(e2) && strcmp(path + n - strlen(e2), e2) == 0))
			return formats[i].f;
	}
	return FMT_TEXT;
}

static const char report_about[] =
	"Report what a run found: a sealed run root, or a derived run that\n"
	"'caliber reaccount' wrote (then sealed and derived verdicts side by side,\n"
	"with what changed and why). The seal of the run is checked again and its\n"
	"status stated first. Formats:\n"
	"  text  verdict counts, then one aligned row per task: verdict and reason\n"
	"        code, topology baseline/control/candidate, speedup and interval in\n"
	"        round a and round b, timer (the default)\n"
	"  md    the same tables in GitHub Markdown, for a pull request\n"
	"  html  one self-contained file (inline CSS and SVG, no script, nothing\n"
	"        fetched): header, verdict matrix, topology and forest plots, and\n"
	"        per task its cells, rows, samples and links to the receipts\n"
	"Without --format the format follows -o's extension (.md, .html), else\n"
	"text. -o FILE is written atomically; without it the report goes to\n"
	"stdout. Links in HTML are relative to FILE's folder.\n"
	"--bundle DIR writes the HTML report as DIR/report.html with every receipt\n"
	"and TTGIR file it links copied beside it (DIR/run/..., DIR/derived/...),\n"
	"so that the folder can be attached to a pull request or moved anywhere;\n"
	"its run/SHA256SUMS checks them (sha256sum -c --ignore-missing).\n"
	"A derived run names its run root in derived.json (run.root, as given to\n"
	"reaccount, taken from the current directory); --run DIR points at it\n"
	"from elsewhere.\n"
	"Exit status: 0 whatever the verdicts, unless --fail-on VERDICTS (e.g.\n"
	"K,R,X) names one that a task has (for a derived run: its derived\n"
	"verdict): then 5, after the report is written.";

/* caliber report: load the run (and derived run), check the seal, render,
 * write, then gate on --fail-on. */
int cmd_report(int argc, const char **argv, struct cb_err *err)
{
	struct cb_report rp;
	struct cb_run_view v;
	struct cb_buf b = CB_BUF_INIT;
	const char *format = NULL, *output = NULL, *fail_on = NULL, *run = NULL, *bundle = NULL;
	struct cb_args args = CB_ARGS_INIT;
	char fail_set[8] = "", *data = NULL, *page = NULL;
	enum format fmt = FMT_TEXT;
	size_t i, len, copied = 0;
	struct cb_gate gate;
	int rc, sealed = 0;
	const struct cb_opt opts[] = {
		{ "format", CB_OPT_STR, &format, "FMT", "text, md or html (default: from -o's extension, else text)" },
		{ "output", CB_OPT_PATH, &output, "FILE", "write the report there, not to stdout" },
		{ "fail-on", CB_OPT_STR, &fail_on, "VERDICTS", "exit 5 when a task has one of these (e.g. K,R,X)" },
		{ "run", CB_OPT_PATH, &run, "DIR", "derived run: the run root, when derived.json's run.root is elsewhere" },
		{ "bundle", CB_OPT_PATH, &bundle, "DIR", "write DIR/report.html with every file it links, to attach or move" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "report", "RUN_ROOT|DERIVED_DIR [--format text|md|html] [-o FILE | --bundle DIR] [--fail-on VERDICTS]",
					  report_about, opts, 1, 1 };

	rc = cb_parse_opts(&spec, argc, argv, &args, err);
	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	memset(&rp, 0, sizeof(rp));
	memset(&v, 0, sizeof(v));
	rc = CB_EXIT_USAGE;
	if (cb_fail_on_parse(fail_on, fail_set, err) < 0)
		goto out;
	if (bundle && (output || (format && strcmp(format, "html") != 0))) {
		cb_fail(err, output ? "--bundle DIR writes DIR/report.html: no -o with it"
				    : "--bundle writes the HTML report: no --format %s with it", format);
		goto out;
	}
	if (format) {
		for (i = 0; i < sizeof(formats) / sizeof(formats[0]) && strcmp(formats[i].name, format) != 0; i++)
			;
		if (i == sizeof(formats) / sizeof(formats[0])) {
			cb_fail(err, "--format: '%s' is not one of text, md, html", format);
			goto out;
		}
		fmt = formats[i].f;
	} else if (output) {
		fmt = format_of_file(output);
	}
	if (bundle) {
		fmt = FMT_HTML;
		if (!(page = cb_path_join(bundle, "report.html"))) {
			cb_fail(err, "out of memory");
			rc = CB_EXIT_FAIL;
			goto out;
		}
	}
	if (run && cb_is_dir(args.pos[0]) && !cb_report_has_file(args.pos[0], CB_RUN_DERIVED)) {
		cb_fail(err, "--run DIR applies to a derived run only, and %s holds no " CB_RUN_DERIVED, args.pos[0]);
		goto out;
	}
	rc = CB_EXIT_FAIL;
	if (cb_run_view_open(&v, args.pos[0], run, CB_RUN_VIEW_COUNT, err) < 0 ||
	    (sealed = cb_report_load(&rp, &v, bundle ? page : output, fail_set[0] != '\0', err)) < 0)
		goto out;
	if (bundle && rp.href) {
		/* The bundle holds the run's files under run/, the derived run's
		 * under derived/: the page links there. */
		free(rp.href);
		free(rp.dhref);
		rp.href = strdup(CB_BUNDLE_RUN);
		rp.dhref = rp.v->derived_dir ? strdup(CB_BUNDLE_DERIVED) : NULL;
		if (!rp.href || (rp.v->derived_dir && !rp.dhref)) {
			cb_fail(err, "out of memory");
			goto out;
		}
	}
	if (!sealed && fail_set[0]) {
		/* A gate never passes a run whose receipts cannot be trusted, and
		 * writes nothing for it. */
		cb_fail(err, "--fail-on %s: %s: the seal %s; a run that does not verify passes no gate", fail_on,
			rp.v->root, rp.seal);
		rc = CB_EXIT_VERIFY;
		goto out;
	}
	if (fmt == FMT_TEXT ? cb_report_text(&b, &rp, err) < 0 : fmt == FMT_MD ? cb_report_md(&b, &rp, err) < 0 : 0)
		goto out;
	if (fmt == FMT_HTML)
		cb_report_html(&b, &rp);
	data = cb_buf_detach(&b, &len);
	if (!data) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (bundle) {
		if (cb_report_bundle(&rp, data, len, bundle, &copied, err) < 0)
			goto out;
		printf("report: wrote %s and the %zu files it links (html, %zu tasks; seal %s)\n", page, copied, rp.n,
		       rp.seal);
	} else if (output) {
		/* cb_report_load checked -o against every folder of the run. */
		const struct cb_guard g = { "-o", NULL, NULL };
		if (cb_guard_mkdir_parent(&g, output, 0755, err) < 0 || cb_write_atomic(output, data, len, 0644, err) < 0)
			goto out;
		printf("report: wrote %s (%s, %zu tasks; seal %s)\n", output, formats[fmt].name, rp.n, rp.seal);
	} else if (fwrite(data, 1, len, stdout) != len) {
		cb_fail(err, "stdout: write failed");
		goto out;
	}
	rc = CB_EXIT_OK;
	cb_gate_init(&gate, fail_on, fail_set);
	for (i = 0; i < rp.n && rc == CB_EXIT_OK; i++)
		if (cb_gate_add(&gate, cb_report_task_at(&rp, i)->sealed.id, cb_report_verdict(cb_report_task_at(&rp, i)),
				err) < 0)
			rc = CB_EXIT_FAIL;
	if (rc == CB_EXIT_OK && cb_gate_judge(&gate, err) < 0)
		rc = CB_EXIT_GATE;
	cb_gate_release(&gate);
out:
	free(page);
	free(data);
	cb_buf_release(&b);
	cb_report_release(&rp);
	cb_run_view_release(&v);
	cb_args_release(&args);
	return rc;
}
