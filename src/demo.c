/* demo.c: `caliber demo` (SPEC section 13), the main job with nothing to
 * configure. With a GPU and Triton present it runs the canary campaign of
 * the built-in corpus against the demo compiler change into a fresh folder;
 * without them it verifies the sealed H200 campaign shipped in the
 * repository, re-accounts it at floors 1 and 0, and prints its verdict
 * matrix. It says which of the two it did. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "buf.h"
#include "cmd.h"
#include "digest.h"
#include "fsutil.h"
#include "opts.h"
#include "plan.h"
#include "proc.h"

extern char **environ;

#define SHIPPED_RUN "campaigns/demo-h200/runs/all"
#define TEMPLATE "campaigns/demo-h200/manifest.in.json"

/* Whether this machine has a CUDA GPU that torch sees and Triton; *triton
 * gets Triton's package folder. why says what is missing. */
static int have_gpu(char **triton, char *why, size_t cap)
{
	static const char script[] =
		"import os, torch, triton\n"
		"assert torch.cuda.is_available(), 'torch sees no CUDA device'\n"
		"print(os.path.dirname(triton.__file__))\n";
	const char *argv[] = { "python3", "-c", script, NULL };
	char *out = NULL, *err_text = NULL;
	struct cb_err err;
	int status = 0;

	*triton = NULL;
	if (cb_run_capture(argv, environ, 120000, &out, &err_text, &status, &err) < 0) {
		snprintf(why, cap, "%s", err.msg);
		return 0;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char *last = err_text, *p;
		for (p = err_text; *p; p++)
			if (*p == '\n' && p[1])
				last = p + 1;
		last[strcspn(last, "\n")] = '\0';
		snprintf(why, cap, "python3 cannot use a GPU with Triton: %s", *last ? last : "(no message)");
		free(out);
		free(err_text);
		return 0;
	}
	free(err_text);
	out[strcspn(out, "\n")] = '\0';
	*triton = out;
	return 1;
}

/* Run a command of the table in-process with the given arguments. */
static int call(int (*fn)(int, char **, struct cb_err *), const char *const *args, struct cb_err *err)
{
	char *argv[32];
	int argc = 0;

	while (args[argc] && argc < 31) {
		argv[argc] = (char *)(uintptr_t)args[argc];
		argc++;
	}
	argv[argc] = NULL;
	err->msg[0] = '\0';
	return fn(argc, argv, err);
}

/* The offline demo: verify, re-account at 1 and 0, show the matrix. */
static int offline(const char *why, const char *keep, struct cb_err *err)
{
	char *run = cb_path_join(cb_home(), SHIPPED_RUN), *tmp = NULL, *d1 = NULL, *d0 = NULL, *md = NULL;
	char *text = NULL;
	const char *t = getenv("TMPDIR");
	int rc = CB_EXIT_FAIL;

	printf("caliber demo: offline (%s):\n"
	       "  replaying the sealed H200 campaign shipped in %s\n\n", why, SHIPPED_RUN);
	tmp = keep ? strdup(keep) : cb_strdupf("%s/caliber-demo.XXXXXX", t && *t ? t : "/tmp");
	if (!run || !tmp || (!keep && !mkdtemp(tmp)) || (keep && cb_mkdir_p(keep, 0755, err) < 0)) {
		if (!err->msg[0])
			cb_fail(err, "cannot create a folder for the derived runs");
		goto out;
	}
	d1 = cb_path_join(tmp, "floor1");
	d0 = cb_path_join(tmp, "floor0");
	md = cb_path_join(run, "matrix.md");
	if (!d1 || !d0 || !md)
		goto out;
	printf("$ caliber verify %s\n", SHIPPED_RUN);
	fflush(stdout);
	if ((rc = call(cmd_verify, (const char *const[]){ "verify", run, NULL }, err)) != CB_EXIT_OK)
		goto out;
	printf("\n$ caliber reaccount %s --floor 1 --output %s\n", SHIPPED_RUN, d1);
	fflush(stdout);
	if ((rc = call(cmd_reaccount, (const char *const[]){ "reaccount", run, "--floor", "1", "--output", d1, NULL },
		       err)) != CB_EXIT_OK)
		goto out;
	printf("\n$ caliber reaccount %s --floor 0 --output %s\n", SHIPPED_RUN, d0);
	fflush(stdout);
	if ((rc = call(cmd_reaccount, (const char *const[]){ "reaccount", run, "--floor", "0", "--output", d0, NULL },
		       err)) != CB_EXIT_OK)
		goto out;
	if (cb_read_file(md, &text, NULL, err) < 0) {
		rc = CB_EXIT_FAIL;
		goto out;
	}
	printf("\nverdict matrix of %s (sealed on an NVIDIA H200):\n\n%s", SHIPPED_RUN, text);
	if (keep)
		printf("\nderived runs kept in %s\n", keep);
	rc = CB_EXIT_OK;
out:
	if (tmp && !keep) {
		struct cb_err ignored;
		cb_rm_rf(tmp, &ignored);
	}
	free(text);
	free(md);
	free(d0);
	free(d1);
	free(tmp);
	free(run);
	return rc;
}

/* The GPU demo: pin the template to this machine's Triton and to the
 * commit caliber was built from, prepare the canary, run it. */
static int on_gpu(const char *triton, const char *out_dir, const char *device, struct cb_err *err)
{
	const char *commit = cb_commit();
	char tree[CB_SHA256_HEX], *tpl = NULL, *manifest = NULL, *mpath = NULL, *frozen = NULL;
	char *fm = NULL, *fx = NULL, *run = NULL, *ops = NULL, *pinned = NULL;
	int rc = CB_EXIT_FAIL;

	if (!cb_is_hex(commit, 40))
		return cb_fail(err, "demo on a GPU pins caliber by commit, but this caliber was built from %s; build it from a clean checkout",
			       commit);
	printf("caliber demo: GPU and Triton found (%s): running the canary campaign of the built-in corpus\n", triton);
	tpl = cb_path_join(cb_home(), TEMPLATE);
	if (!tpl || cb_tree_digest(triton, tree, err) < 0 || cb_read_file(tpl, &manifest, NULL, err) < 0)
		goto out;
	{
		static const char *const keys[] = { "@TRITON_TREE@", "@CORPUS_COMMIT@", "@HARNESS_COMMIT@" };
		const char *const vals[] = { tree, commit, commit };
		pinned = cb_substitute(manifest, keys, vals, 3);
	}
	mpath = cb_path_join(out_dir, "manifest.json");
	frozen = cb_path_join(out_dir, "frozen");
	fm = cb_path_join(out_dir, "frozen/demo-h200-canary/manifest.json");
	fx = cb_path_join(out_dir, "frozen/demo-h200-canary/task-matrix.json");
	run = cb_path_join(out_dir, "run-canary");
	ops = cb_path_join(cb_home(), "ops");
	if (!mpath || !frozen || !fm || !fx || !run || !ops || !pinned || cb_mkdir_p(out_dir, 0755, err) < 0 ||
	    cb_write_atomic(mpath, pinned, strlen(pinned), 0644, err) < 0)
		goto out;
	if ((rc = call(cmd_prepare, (const char *const[]){ "prepare", mpath, "--inventory-dir", ops,
							    "--output-root", frozen, NULL }, err)) != CB_EXIT_OK)
		goto out;
	rc = call(cmd_run, (const char *const[]){ "run", "--manifest", fm, "--task-matrix", fx, "--build-root",
						  triton, "--corpus", ops, "--output-root", run, "--device", device, NULL },
		  err);
	if (rc == CB_EXIT_OK)
		printf("caliber demo: sealed run in %s; `caliber report %s` shows it\n", run, run);
out:
	free(pinned);
	free(tpl);
	free(manifest);
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
	"machine's Triton and to the commit caliber was built from, into a fresh\n"
	"folder. Without: verify the sealed H200 campaign shipped in\n"
	SHIPPED_RUN ", re-account it at floors 1 and 0, and print\n"
	"its verdict matrix. It says which of the two it did; --offline forces the\n"
	"second.";

int cmd_demo(int argc, char **argv, struct cb_err *err)
{
	const char *out_dir = NULL, *device = "0";
	int offline_only = 0;
	char **pos = NULL, *triton = NULL, why[512] = "", stamp[32];
	size_t npos;
	const struct cb_opt opts[] = {
		{ "offline", CB_OPT_FLAG, &offline_only, NULL, "replay the shipped run even when a GPU is present" },
		{ "output", CB_OPT_STR, &out_dir, "DIR", "where runs go (default ./caliber-demo-<time>; offline: a temporary folder)" },
		{ "device", CB_OPT_STR, &device, "ID", "the GPU to measure on (index or UUID, default 0)" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "demo", "[--offline] [--output DIR] [--device ID]", demo_about, opts, 0, 0 };
	int rc = cb_parse_opts(&spec, argc, argv, &pos, &npos, err);

	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	free(pos);
	if (offline_only)
		snprintf(why, sizeof(why), "--offline");
	if (offline_only || !have_gpu(&triton, why, sizeof(why)))
		return offline(why, out_dir, err);
	if (!out_dir) {
		time_t t = time(NULL);
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(stamp, sizeof(stamp), "caliber-demo-%Y%m%dT%H%M%SZ", &tm);
		out_dir = stamp;
	}
	rc = on_gpu(triton, out_dir, device, err);
	free(triton);
	return rc;
}
