/* cmd/demo.c: `caliber demo` (docs/design.md section 13), the main job with nothing to
 * configure. With a GPU and Triton present it runs the canary campaign of
 * the built-in corpus against the demo compiler change; without them it
 * verifies the sealed H200 campaign shipped in the repository and
 * re-accounts it at floors 1 and 0. It says which of the two it did, and
 * either way it ends with the verdict matrix and an HTML report kept in
 * its output folder (default ./caliber-demo-<UTC time>), and exits 5 when
 * a task it ran is X, naming the first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "base/buf.h"
#include "base/home.h"
#include "base/runroot.h"
#include "cmd.h"
#include "base/fsutil.h"
#include "seal/guard.h"
#include "base/jsonio.h"
#include "opts.h"
#include "campaign/pin.h"
#include "campaign/plan.h"
#include "base/proc.h"
#include "account/receipt.h"
#include "views/report.h"

extern char **environ;

#define SHIPPED_RUN "campaigns/demo-h200/runs/all"

/* The demo writes everything under its output folder, which the output
 * guard keeps out of every sealed run. */
static const struct cb_guard guard = { "--output", NULL, NULL };
#define TEMPLATE "campaigns/demo-h200/manifest.in.json"

/* Whether this machine has a CUDA GPU that torch sees and Triton; *triton
 * gets Triton's package folder and *gpu the name of the device the run
 * will pin (CUDA_VISIBLE_DEVICES=device, as the run sets it), or why says
 * what is missing. */
static int have_gpu(const char *device, char **triton, char **gpu, struct cb_err *why)
{
	static const char script[] =
		"import os, sys\n"
		"os.environ['CUDA_VISIBLE_DEVICES'] = sys.argv[1]\n"
		"import torch, triton\n"
		"assert torch.cuda.is_available(), 'torch sees no CUDA device'\n"
		"print(os.path.dirname(os.path.abspath(triton.__file__)))\n"
		"print(torch.cuda.get_device_name(0))\n";
	const char *argv[] = { "python3", "-c", script, device, NULL };
	char *name;
	char *out = NULL, *err_text = NULL;
	int status = 0;

	*triton = *gpu = NULL;
	if (cb_run_capture(argv, environ, 120000, &out, &err_text, &status, why) < 0)
		return 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char *last = err_text, *p;
		for (p = err_text; *p; p++)
			if (*p == '\n' && p[1])
				last = p + 1;
		last[strcspn(last, "\n")] = '\0';
		cb_fail(why, "python3 cannot use a GPU with Triton: %s", *last ? last : "(no message)");
		free(out);
		free(err_text);
		return 0;
	}
	free(err_text);
	name = out + strcspn(out, "\n");
	if (*name)
		*name++ = '\0';
	name[strcspn(name, "\n")] = '\0';
	if (!*name || !(*gpu = strdup(name))) {
		cb_fail(why, "python3 did not name the GPU");
		free(out);
		return 0;
	}
	*triton = out;
	return 1;
}

/* Run a command of the table in-process with the given arguments. */
static int call(int (*fn)(int, const char **, struct cb_err *), const char *const *args, struct cb_err *err)
{
	const char *argv[32];
	int argc = 0;

	while (args[argc] && argc < 31) {
		argv[argc] = args[argc];
		argc++;
	}
	argv[argc] = NULL;
	*err = (struct cb_err)CB_ERR_INIT;
	return fn(argc, argv, err);
}

/* Print "$ caliber ..." for a command the demo runs, so a user can repeat it. */
static void show(const char *const *args)
{
	printf("\n$ caliber");
	for (; *args; args++)
		printf(" %s", *args);
	printf("\n");
	fflush(stdout);
}

/* The ending both demos share: the HTML report of run written to
 * out_dir/report.html, then the task table of its text report (sorted as
 * the report sorts, within 80 columns). */
static int finish(const char *run, const char *what, const char *out_dir, struct cb_err *err)
{
	char *html = cb_path_join(out_dir, "report.html"), line[96];
	struct cb_buf table = CB_BUF_INIT;
	struct cb_report rp;
	struct cb_run_view v;
	int rc = CB_EXIT_FAIL;

	memset(&rp, 0, sizeof(rp));
	memset(&v, 0, sizeof(v));
	if (!html) {
		cb_fail(err, "out of memory");
		goto out;
	}
	{
		const char *const args[] = { "report", run, "-o", html, NULL };
		show(args);
		if ((rc = call(cmd_report, args, err)) != CB_EXIT_OK)
			goto out;
	}
	rc = CB_EXIT_FAIL;
	if (cb_run_view_open(&v, run, NULL, CB_RUN_VIEW_COUNT, err) < 0 ||
	    cb_report_load(&rp, &v, NULL, 0, err) < 0 || cb_report_table_text(&table, &rp, err) < 0)
		goto out;
	printf("\nverdict matrix of %s (%s):\n\n%s", run, what, table.data ? table.data : "");
	printf("\ncaliber demo: kept %s (report.html: the run's report as one HTML file)\n", out_dir);
	cb_campaign_verdict_line(&rp.v->cs, line);
	printf("%s\nreport: %s\n", line, html);
	rc = CB_EXIT_OK;
out:
	cb_report_release(&rp);
	cb_run_view_release(&v);
	cb_buf_release(&table);
	free(html);
	return rc;
}

/* The offline demo: verify, re-account at 1 and 0, show the matrix. */
static int offline(const char *why, const char *out_dir, struct cb_err *err)
{
	char *run = cb_path_join(cb_home(), SHIPPED_RUN), *d1 = NULL, *d0 = NULL;
	int rc = CB_EXIT_FAIL;

	printf("caliber demo: offline (%s):\n"
	       "  replaying the sealed H200 campaign shipped in %s into %s\n", why, SHIPPED_RUN, out_dir);
	d1 = cb_path_join(out_dir, "floor1");
	d0 = cb_path_join(out_dir, "floor0");
	if (!run || !d1 || !d0) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (cb_guard_mkdir(&guard, out_dir, 0755, err) < 0)
		goto out;
	{
		const char *const verify[] = { "verify", run, NULL };
		const char *const floor1[] = { "reaccount", run, "--floor", "1", "--output", d1, NULL };
		const char *const floor0[] = { "reaccount", run, "--floor", "0", "--output", d0, NULL };
		const char *const *steps[] = { verify, floor1, floor0 };
		int (*const fns[])(int, const char **, struct cb_err *) = { cmd_verify, cmd_reaccount, cmd_reaccount };
		size_t i;

		for (i = 0; i < 3; i++) {
			show(steps[i]);
			if ((rc = call(fns[i], steps[i], err)) != CB_EXIT_OK)
				goto out;
		}
	}
	rc = finish(run, "sealed on an NVIDIA H200", out_dir, err);
out:
	free(d0);
	free(d1);
	free(run);
	return rc;
}

/* Exit 5 naming the first X task of the sealed run, 0 when there is none. */
static int gate_on_x(const char *run, struct cb_err *err)
{
	struct cb_campaign_summary cs;
	int rc;

	if (cb_campaign_summary_of_run(run, &cs, err) < 0)
		return CB_EXIT_FAIL;
	rc = cb_campaign_check_x(&cs, err) < 0 ? CB_EXIT_GATE : CB_EXIT_OK;
	cb_campaign_summary_release(&cs);
	return rc;
}

/* The GPU demo: pin the template to this machine's Triton, the built-in
 * corpus, caliber itself (pin.h) and the device it found (gpu, its name,
 * which the device preflight then checks), prepare the canary, run it. */
static int on_gpu(const char *triton, const char *gpu, const char *out_dir, const char *device, struct cb_err *err)
{
	char *tpl = NULL, *mpath = NULL, *frozen = NULL, *fm = NULL, *fx = NULL, *run = NULL, *ops = NULL, *pinned = NULL;
	struct cb_buf log = CB_BUF_INIT;
	json_t *doc = NULL;
	int rc = CB_EXIT_FAIL;

	printf("caliber demo: GPU and Triton found (%s): running the canary campaign of the built-in corpus into %s\n",
	       triton, out_dir);
	tpl = cb_path_join(cb_home(), TEMPLATE);
	ops = cb_path_join(cb_home(), "ops");
	mpath = cb_path_join(out_dir, CB_RUN_MANIFEST);
	frozen = cb_path_join(out_dir, "frozen");
	fm = cb_path_join(out_dir, "frozen/demo-h200-canary/" CB_RUN_MANIFEST);
	fx = cb_path_join(out_dir, "frozen/demo-h200-canary/" CB_RUN_MATRIX);
	run = cb_path_join(out_dir, "run-canary");
	if (!tpl || !mpath || !frozen || !fm || !fx || !run || !ops) {
		cb_fail(err, "out of memory");
		goto out;
	}
	{
		const struct cb_pin_opts po = { triton, ops, NULL, 0, 0 };
		if (!(doc = cb_json_load_file(tpl, err)) || cb_pin(doc, &po, &log, err) < 0 ||
		    (json_object_set_new(json_object_get(doc, "device"), "name", json_string(gpu)) < 0 &&
		     cb_fail(err, "device: not an object")) ||
		    !(pinned = cb_pin_text(doc, tpl, err))) {
			cb_prefix(err, "pinning %s", tpl);
			goto out;
		}
	}
	if (cb_guard_mkdir(&guard, out_dir, 0755, err) < 0 ||
	    cb_write_atomic(mpath, pinned, strlen(pinned), 0644, err) < 0)
		goto out;
	{
		const char *const prepare[] = { "prepare", mpath, "--inventory-dir", ops, "--output-root", frozen, NULL };
		const char *const campaign[] = { "run", "--manifest", fm, "--task-matrix", fx, "--build-root", triton,
						 "--corpus", ops, "--output-root", run, "--device", device, NULL };
		show(prepare);
		if ((rc = call(cmd_prepare, prepare, err)) != CB_EXIT_OK)
			goto out;
		show(campaign);
		/* A run with X tasks (exit 5) still ends with its matrix and
		 * report; the demo then exits 5 itself, below. */
		if ((rc = call(cmd_run, campaign, err)) != CB_EXIT_OK && rc != CB_EXIT_GATE)
			goto out;
	}
	if ((rc = finish(run, "measured on this machine", out_dir, err)) == CB_EXIT_OK)
		rc = gate_on_x(run, err);
out:
	json_decref(doc);
	cb_buf_release(&log);
	free(pinned);
	free(tpl);
	free(mpath);
	free(frozen);
	free(fm);
	free(fx);
	free(run);
	free(ops);
	return rc;
}

static const char demo_about[] =
	"The main job with nothing to configure. With a GPU that torch sees and\n"
	"Triton installed: the canary campaign of the built-in corpus (ops/)\n"
	"against the demo compiler change (examples/demo-compiler), pinned to this\n"
	"machine's Triton and to the commit caliber was built from. Without: verify\n"
	"the sealed H200 campaign shipped in " SHIPPED_RUN ",\n"
	"re-account it at floors 1 and 0. It says which of the two it did; --offline\n"
	"forces the second. Either way it ends with the verdict matrix and keeps\n"
	"everything, an HTML report (report.html) included, in its output folder.\n"
	"Exit status 5 when a task it ran is X (could not be measured), naming the\n"
	"first.";

int cmd_demo(int argc, const char **argv, struct cb_err *err)
{
	const char *out_dir = NULL, *device = "0";
	int offline_only = 0;
	struct cb_args args = CB_ARGS_INIT;
	char *triton = NULL, *gpu = NULL, *stamped = NULL, stamp[64];
	struct cb_err why = CB_ERR_INIT;
	const struct cb_opt opts[] = {
		{ "offline", CB_OPT_FLAG, &offline_only, NULL, "replay the shipped run even when a GPU is present" },
		{ "output", CB_OPT_PATH, &out_dir, "DIR", "where everything goes (default ./caliber-demo-<UTC time>)" },
		{ "device", CB_OPT_STR, &device, "ID", "the GPU to measure on (index or UUID, default 0)" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "demo", "[--offline] [--output DIR] [--device ID]", demo_about, opts, 0, 0 };
	int rc = cb_parse_opts(&spec, argc, argv, &args, err);

	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	if (!out_dir) {
		time_t t = time(NULL);
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(stamp, sizeof(stamp), "caliber-demo-%Y%m%dT%H%M%SZ", &tm);
		if (cb_absolute(stamp, &stamped, err) < 0) {
			cb_args_release(&args);
			return CB_EXIT_FAIL;
		}
		out_dir = stamped;
	}
	if (cb_exists(out_dir) && !cb_is_dir(out_dir)) {
		cb_fail(err, "--output %s: exists and is not a folder", out_dir);
		rc = CB_EXIT_USAGE;
	} else if (offline_only || !have_gpu(device, &triton, &gpu, &why)) {
		rc = offline(offline_only ? "--offline" : why.msg, out_dir, err);
	} else {
		rc = on_gpu(triton, gpu, out_dir, device, err);
	}
	free(triton);
	free(gpu);
	free(stamped);
	cb_args_release(&args);
	return rc;
}
