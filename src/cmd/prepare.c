/* cmd/prepare.c: `caliber prepare` (docs/design.md section 5): validate a manifest against
 * its inventory, estimate the budget, and freeze manifest and task matrix. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "base/runroot.h"
#include "account/expect.h"
#include "base/fsutil.h"
#include "seal/guard.h"
#include "campaign/inventory.h"
#include "base/jsonio.h"
#include "campaign/manifest.h"
#include "campaign/matrix.h"
#include "opts.h"
#include "campaign/plan.h"
#include "account/receipt.h"
#include "seal/seal.h"

/* "1h02m03s" / "12m00s" / "45s" */
static void fmt_duration(long long s, char *out, size_t cap)
{
	if (s >= 3600)
		snprintf(out, cap, "%lldh%02lldm%02llds", s / 3600, s / 60 % 60, s % 60);
	else if (s >= 60)
		snprintf(out, cap, "%lldm%02llds", s / 60, s % 60);
	else
		snprintf(out, cap, "%llds", s);
}

/* The "expected" cell of a task's row and what it rests on, from the
 * history (expect.h; nothing of a run is measured here). */
static struct cb_expectation row_expectation(const struct cb_history *h, const json_t *t, char *exp, size_t ecap,
					     const char **from)
{
	struct cb_expectation e = cb_task_expect(h, NULL, t);

	*from = e.basis == CB_EXPECT_HISTORY_TASK    ? "task.json wall_ns"
		: e.basis == CB_EXPECT_HISTORY_CELLS ? "cells' wall_ns"
		: e.history_miss                     ? e.history_miss
						     : "nothing measured";
	if (e.basis == CB_EXPECT_NONE)
		snprintf(exp, ecap, "-");
	else
		fmt_duration(e.ms / 1000, exp, ecap);
	return e;
}

/* What run --prescreen is expected to cost a task, in words, for the
 * "expected from" column of --prescreen. */
static const char *prescreen_from(const struct cb_expectation *x)
{
	switch (x->prescreen) {
	case CB_PRESCREEN_IDENTICAL:
		return x->screen_known ? "identical: correctness + screen" : "identical: correctness";
	case CB_PRESCREEN_CHANGED:
		return "changed: full time";
	case CB_PRESCREEN_SHARE:
		return "estimated from the history's share";
	case CB_PRESCREEN_NONE:
		break;
	}
	return "nothing to estimate from";
}

/* A duration of ms for a column, "-" when negative (nothing known). */
static void fmt_ms(long long ms, char *out, size_t cap)
{
	if (ms < 0)
		snprintf(out, cap, "-");
	else
		fmt_duration(ms / 1000, out, cap);
}

/* --prescreen: after the table, the history's share of changed tasks, how
 * many tasks rest on which basis, the history's estimate for a task it
 * does not hold, and the campaign's expected time without and with run
 * --prescreen. n: the tasks; count[]: per enum cb_prescreen_basis;
 * screened: of the identical ones, those whose screen pass the history
 * ran; whole, with: the sums (docs/formats.md, "Deadlines and expected
 * times"). */
static void print_prescreen(const struct cb_history *h, size_t n, const size_t count[4], size_t screened,
			    long long whole, long long with)
{
	const struct cb_history_share *s = &h->share;
	long long share_whole, share_with;
	char mc[32], ms[32], ew[32], es[32], tw[32], tp[32];

	cb_history_share_estimate(h, &share_whole, &share_with);
	if (!s->known)
		printf("prepare: prescreen: share of changed tasks in the history: none of its %zu tasks has a time\n",
		       h->ntasks);
	else
		printf("prepare: prescreen: share of changed tasks in the history: %zu of %zu (%.1f%%)\n", s->changed,
		       s->known, 100.0 * (double)s->changed / (double)s->known);
	printf("prepare: prescreen: %zu identical by construction (their correctness cells, and their screen cells for"
	       " the %zu of them the history screened), %zu changed (full time), %zu estimated from the history's share,"
	       " %zu with nothing to estimate from\n", count[CB_PRESCREEN_IDENTICAL], screened, count[CB_PRESCREEN_CHANGED],
	       count[CB_PRESCREEN_SHARE], count[CB_PRESCREEN_NONE]);
	if (s->known) {
		fmt_ms(s->changed ? s->changed_ms / (long long)s->changed : -1, mc, sizeof(mc));
		fmt_ms(s->known > s->changed ? s->screened_ms / (long long)(s->known - s->changed) : -1, ms,
		       sizeof(ms));
		fmt_ms(share_with, es, sizeof(es));
		fmt_ms(share_whole, ew, sizeof(ew));
		printf("prepare: prescreen: estimated from the history's share: %zu/%zu x %s + %zu/%zu x %s = %s a task"
		       " (without --prescreen %s)\n", s->changed, s->known, mc, s->known - s->changed, s->known, ms, es,
		       ew);
	}
	fmt_ms(whole, tw, sizeof(tw));
	fmt_ms(with, tp, sizeof(tp));
	printf("prepare: prescreen: expected without --prescreen %s, with --prescreen %s (%zu of %zu tasks)\n", tw, tp,
	       n - count[CB_PRESCREEN_NONE], n);
}

/* The budget of every task; with a history (--history), beside it what
 * each is expected to take and what that rests on; with --prescreen as
 * well, what each is expected to cost a run --prescreen, and the totals
 * (print_prescreen). */
static void print_estimate(const struct cb_manifest *m, const json_t *mx, const struct cb_history *h, int prescreen)
{
	const json_t *tasks = json_object_get(mx, "tasks"), *t;
	long long total = 0, worst = 0, expected = 0, whole = 0, with = 0;
	char a[32], b[32], e[32], p[32];
	const char *from;
	size_t i, known = 0, count[4] = { 0, 0, 0, 0 }, screened = 0;

	printf("prepare: campaign %s, selection %s: %zu of %zu workloads x %d cells\n",
	       m->campaign, cb_json_str(mx, "selection"), json_array_size(tasks), m->nworkloads,
	       CB_NROLES);
	if (h && prescreen)
		printf("  %-28s %8s %12s %12s %12s %14s  %s\n", "task", "timeout", "budget", "expected", "prescreen",
		       "worst (+b)", "expected from");
	else if (h)
		printf("  %-28s %8s %12s %12s %14s  %s\n", "task", "timeout", "budget", "expected", "worst (+b)",
		       "expected from");
	else
		printf("  %-28s %8s %12s %14s\n", "task", "timeout", "budget", "worst (+b)");
	json_array_foreach(tasks, i, t) {
		long long ba = cb_json_int(t, "budget_s", 0), bw = cb_json_int(t, "budget_worst_s", 0);
		fmt_duration(ba, a, sizeof(a));
		fmt_duration(bw, b, sizeof(b));
		if (h) {
			struct cb_expectation x = row_expectation(h, t, e, sizeof(e), &from);
			if (prescreen) {
				fmt_ms(x.prescreen == CB_PRESCREEN_NONE ? -1 : x.prescreen_ms, p, sizeof(p));
				printf("  %-28s %7llds %12s %12s %12s %14s  %s; %s\n", cb_json_str(t, "id"),
				       (long long)cb_json_int(t, "timeout_s", 0), a, e, p, b, from, prescreen_from(&x));
			} else {
				printf("  %-28s %7llds %12s %12s %14s  %s\n", cb_json_str(t, "id"),
				       (long long)cb_json_int(t, "timeout_s", 0), a, e, b, from);
			}
			if (x.basis != CB_EXPECT_NONE) {
				expected = cb_budget_add(expected, x.ms);
				known++;
			}
			count[x.prescreen]++;
			screened += x.screen_known != 0;
			whole = cb_budget_add(whole, x.whole_ms);
			with = cb_budget_add(with, x.prescreen_ms);
		} else {
			printf("  %-28s %7llds %12s %14s\n", cb_json_str(t, "id"),
			       (long long)cb_json_int(t, "timeout_s", 0), a, b);
		}
		total = cb_budget_add(total, ba);
		worst = cb_budget_add(worst, bw);
	}
	fmt_duration(total, a, sizeof(a));
	fmt_duration(worst, b, sizeof(b));
	fmt_duration(expected / 1000, e, sizeof(e));
	fmt_ms(with, p, sizeof(p));
	if (h && prescreen)
		printf("  %-28s %8s %12s %12s %12s %14s\n", "total", "", a, e, p, b);
	else if (h)
		printf("  %-28s %8s %12s %12s %14s\n", "total", "", a, e, b);
	else
		printf("  %-28s %8s %12s %14s\n", "total", "", a, b);
	printf("  (budget: correctness and round a in %d cells at each timeout; worst adds round b)\n",
	       CB_NROLES);
	if (h)
		printf("  (expected: what the task took in the --history run, by its task.json wall_ns, else its cells';"
		       " total over %zu of %zu tasks)\n", known, json_array_size(tasks));
	if (h && prescreen) {
		printf("  (prescreen: what run --prescreen is expected to run of the task: of one the history found"
		       " identical by construction its correctness cells, and its screen cells where the history ran"
		       " them; of a changed one its full time; of one the history does not hold, the history's share; its total is"
		       " over every task with an estimate)\n");
		print_prescreen(h, json_array_size(tasks), count, screened, whole, with);
	}
}

/* --max-task-s: the tasks the history expects to take longer than
 * limit_s, each with where its cells' time went, so that the user can
 * narrow a correctness selection (with a reason) before the run: caliber
 * never narrows one itself. */
static void print_over_limit(const json_t *mx, const struct cb_history *h, long long limit_s)
{
	const json_t *tasks = json_object_get(mx, "tasks"), *t;
	size_t i, over = 0, unknown = 0;
	char lim[32], e[32];
	const char *from;

	fmt_duration(limit_s, lim, sizeof(lim));
	json_array_foreach(tasks, i, t) {
		struct cb_expectation x = row_expectation(h, t, e, sizeof(e), &from);
		unknown += x.basis == CB_EXPECT_NONE;
		over += x.basis != CB_EXPECT_NONE && x.ms > limit_s * 1000;
	}
	if (!over)
		printf("prepare: no task is expected to take over --max-task-s %lld (%s)\n", limit_s, lim);
	else
		printf("prepare: %zu task%s expected to take over --max-task-s %lld (%s):\n", over,
		       over == 1 ? " is" : "s are", limit_s, lim);
	json_array_foreach(tasks, i, t) {
		struct cb_expectation x = row_expectation(h, t, e, sizeof(e), &from);
		const struct cb_history_task *ht = cb_history_find(h, cb_json_str(t, "id"));
		char ph[CB_NPHASES][32];
		int p;

		if (x.basis == CB_EXPECT_NONE || x.ms <= limit_s * 1000)
			continue;
		for (p = 0; p < CB_NPHASES; p++) {
			if (ht->phase_ms[p] < 0)
				snprintf(ph[p], sizeof(ph[p]), "-");
			else
				fmt_duration(ht->phase_ms[p] / 1000, ph[p], sizeof(ph[p]));
		}
		printf("  %-28s %12s  (cells: correctness %s, round a %s, round b %s)\n", cb_json_str(t, "id"), e,
		       ph[CB_PH_CORRECTNESS], ph[CB_PH_ROUND_A], ph[CB_PH_ROUND_B]);
	}
	if (over)
		printf("prepare: where correctness is where the time goes, narrow it (workloads[].correctness node_ids"
		       " or k, with a reason); caliber narrows nothing itself\n");
	if (unknown)
		printf("prepare: %zu task%s no expected time to check (see 'expected from')\n", unknown,
		       unknown == 1 ? " has" : "s have");
}

/* --selection all needs the campaign receipt of a sealed canary run of the
 * same manifest in which every task reached a verdict other than X. */
static int check_canary_receipt(const char *path, const struct cb_manifest *m, struct cb_err *err)
{
	struct cb_campaign_summary cs;
	char *root = cb_resolve(path);
	char *slash;
	size_t i;
	int rc = -1;

	if (!root)
		return cb_fail(err, "--canary-receipt: out of memory");
	slash = strrchr(root, '/');
	if (slash && slash != root)
		*slash = '\0';
	if (cb_campaign_summary_load(path, &cs, err) < 0) {
		free(root);
		return cb_prefix(err, "--canary-receipt");
	}
	if (strcmp(cs.selection, "canary") != 0)
		cb_fail(err, "--canary-receipt: %s is a '%s' run, not a canary run", path, cs.selection);
	else if (strcmp(cs.manifest_sha256, m->sha256) != 0)
		cb_fail(err, "--canary-receipt: %s is from another manifest (sha256 %s, this one %s)", path,
			cs.manifest_sha256, m->sha256);
	else if (cb_verify_or_fail(root, err) < 0)
		cb_prefix(err, "--canary-receipt");
	else {
		rc = 0;
		for (i = 0; i < cs.ntasks; i++)
			if (strcmp(cs.tasks[i].verdict, "X") == 0) {
				rc = cb_fail(err, "--canary-receipt: task '%s' has verdict X (%s); the canary must pass before --selection all",
					     cs.tasks[i].id, cs.tasks[i].reason);
				break;
			}
	}
	cb_campaign_summary_release(&cs);
	free(root);
	return rc;
}

/* Write the frozen pair into a fresh directory beside the target and rename
 * it into place, so a failed freeze leaves nothing behind. */
static int freeze(const char *target, const char *manifest_bytes, size_t len, const char *inv_bytes,
		  size_t inv_len, const json_t *mx, struct cb_err *err)
{
	char *tmp = cb_strdupf("%s.tmp.XXXXXX", target);
	char *mpath = NULL, *xpath = NULL, *ipath = NULL;
	int rc = -1;

	if (!tmp)
		return cb_fail(err, "out of memory");
	if (!mkdtemp(tmp)) {
		cb_fail(err, "%s: %s", tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	mpath = cb_path_join(tmp, CB_RUN_MANIFEST);
	xpath = cb_path_join(tmp, CB_RUN_MATRIX);
	ipath = cb_path_join(tmp, CB_FROZEN_INVENTORY);
	if (!mpath || !xpath || !ipath)
		cb_fail(err, "out of memory");
	else if (cb_write_atomic(mpath, manifest_bytes, len, 0444, err) == 0 &&
		 cb_write_atomic(ipath, inv_bytes, inv_len, 0444, err) == 0 &&
		 cb_json_write_atomic(xpath, mx, 0444, err) == 0) {
		if (chmod(tmp, 0555) < 0 || rename(tmp, target) < 0)
			cb_fail(err, "%s: %s", target, strerror(errno));
		else
			rc = 0;
	}
	if (rc < 0) {
		struct cb_err ignored;
		cb_rm_rf(tmp, &ignored);
	}
	free(mpath);
	free(xpath);
	free(ipath);
	free(tmp);
	return rc;
}

static const char prepare_about[] =
	"Validate a campaign manifest and its workloads against the inventory,\n"
	"print the budget estimate (tasks x cells x phases x timeout, and the worst\n"
	"case with round b), and unless --dry-run freeze manifest.json (the same\n"
	"bytes) and task-matrix.json read-only under --output-root. Never\n"
	"overwrites. --selection all needs --canary-receipt of a sealed canary run\n"
	"of the same manifest with no X verdict.\n"
	"--history RUN (a sealed earlier run or canary of the same campaign) adds\n"
	"what each task is expected to take beside its budget: the time the same\n"
	"task (same id, same benchmark and correctness selection) took in RUN, by\n"
	"its task.json wall_ns, else its cells'; `run --history` plans a deadline\n"
	"by the same figure. --max-task-s S then names the tasks expected to take\n"
	"longer than S, with their cells' time per phase, so that their correctness\n"
	"can be narrowed (node_ids or k, with a reason) before the run: caliber\n"
	"never narrows a selection itself.\n"
	"--prescreen (needs --history; with or without --dry-run: prepare only\n"
	"estimates, `run --prescreen` pre-screens) adds what each task is expected\n"
	"to cost a run with --prescreen: a task RUN found identical by\n"
	"construction (task.json identity.identical, or code identical-binaries)\n"
	"its correctness cells, and its screen cells where RUN ran them; a\n"
	"changed task its full time; a task RUN does not hold p x the mean time\n"
	"of RUN's changed tasks + (1-p) x the mean cost of its identical ones\n"
	"(p: RUN's share of changed tasks, changed/known). Four lines starting\n"
	"\"prepare: prescreen:\" follow the table: the share, how many tasks rest\n"
	"on which basis, the estimate for a task RUN does not hold, and the\n"
	"totals without and with --prescreen.\n"
	"The manifest's device.backend must be a backend run can load: caliber's\n"
	"backends/, or those of --backends DIR.";

int cmd_prepare(int argc, const char **argv, struct cb_err *err)
{
	const struct cb_guard g = { "--output-root", NULL, NULL };
	struct cb_manifest m;
	struct cb_inventory inv;
	enum cb_selection sel;
	struct cb_args args = CB_ARGS_INIT;
	char *bytes = NULL, *target = NULL, *name = NULL, *inv_path = NULL, *inv_bytes = NULL, *base = NULL, *dir;
	json_t *mx = NULL;
	size_t len, inv_len, i;
	const char *opt_inventory = NULL, *opt_selection = "canary", *opt_canary = NULL, *opt_output = NULL;
	const char *opt_history = NULL;
	long long opt_max_task_s = LLONG_MIN;  /* not given */
	struct cb_history history;
	const char *opt_backends = NULL;
	struct cb_backend backend;
	int opt_dry_run = 0, opt_prescreen = 0;
	const struct cb_opt opts[] = {
		{ "inventory-dir", CB_OPT_PATH, &opt_inventory, "DIR", "folder holding inventory_main.csv (required)" },
		{ "selection", CB_OPT_STR, &opt_selection, "canary|all", "which workloads (default canary)" },
		{ "canary-receipt", CB_OPT_PATH, &opt_canary, "FILE", "campaign.json of a sealed canary run (for all)" },
		{ "dry-run", CB_OPT_FLAG, &opt_dry_run, NULL, "validate and estimate, write nothing" },
		{ "output-root", CB_OPT_PATH, &opt_output, "DIR", "freeze into DIR/<campaign>-<selection>/" },
		{ "history", CB_OPT_PATH, &opt_history, "RUN", "a sealed run of the campaign: show each task's expected time" },
		{ "prescreen", CB_OPT_FLAG, &opt_prescreen, NULL, "with --history: also what the campaign takes with run --prescreen" },
		{ "max-task-s", CB_OPT_INT, &opt_max_task_s, "S", "with --history: name the tasks expected to take over S" },
		{ "backends", CB_OPT_PATH, &opt_backends, "DIR", "folder of backend files (default caliber's backends/)" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "prepare", "MANIFEST --inventory-dir DIR [options]",
					  prepare_about, opts, 1, 1 };
	int rc = cb_parse_opts(&spec, argc, argv, &args, err);

	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	memset(&inv, 0, sizeof(inv));
	memset(&m, 0, sizeof(m));
	memset(&history, 0, sizeof(history));
	memset(&backend, 0, sizeof(backend));
	rc = CB_EXIT_FAIL;
	if (!opt_inventory) {
		cb_fail(err, "--inventory-dir is required");
		rc = CB_EXIT_USAGE;
		goto out;
	}
	if (cb_selection_parse(opt_selection, &sel) < 0) {
		cb_fail(err, "--selection: expected canary or all, got '%s'", opt_selection);
		rc = CB_EXIT_USAGE;
		goto out;
	}
	if (sel == CB_SEL_ALL && !opt_canary) {
		cb_fail(err, "--selection all needs --canary-receipt (the campaign.json of a sealed canary run)");
		rc = CB_EXIT_USAGE;
		goto out;
	}
	if (!opt_dry_run && !opt_output) {
		cb_fail(err, "--output-root is required unless --dry-run");
		rc = CB_EXIT_USAGE;
		goto out;
	}
	if (opt_max_task_s != LLONG_MIN && !opt_history) {
		cb_fail(err, "--max-task-s needs --history: what a task is expected to take comes from a history run");
		rc = CB_EXIT_USAGE;
		goto out;
	}
	if (opt_prescreen && !opt_history) {
		cb_fail(err, "--prescreen needs --history: which tasks are identical by construction comes from a history run");
		rc = CB_EXIT_USAGE;
		goto out;
	}
	if (opt_max_task_s != LLONG_MIN && (opt_max_task_s <= 0 || opt_max_task_s > LLONG_MAX / 1000)) {
		cb_fail(err, "--max-task-s: expected a number of seconds from 1 to %lld, got %lld", LLONG_MAX / 1000,
			opt_max_task_s);
		rc = CB_EXIT_USAGE;
		goto out;
	}
	if (cb_read_file(args.pos[0], &bytes, &len, err) < 0)
		goto out;
	if (cb_manifest_parse(bytes, len, args.pos[0], &m, err) < 0)
		goto out;
	/* The backend is part of the contract: a name that run cannot load is
	 * refused now, not after the campaign is frozen. */
	if (cb_backend_load(opt_backends, m.backend, &backend, err) < 0) {
		cb_prefix(err, "%s: device.backend", args.pos[0]);
		goto out;
	}
	inv_path = cb_path_join(opt_inventory, CB_INVENTORY_FILE);
	if (!inv_path || cb_read_file(inv_path, &inv_bytes, &inv_len, err) < 0 ||
	    cb_inventory_parse(inv_bytes, inv_len, inv_path, &inv, err) < 0)
		goto out;
	for (i = 0; i < m.nworkloads; i++)
		if (cb_inventory_check_workload(&inv, &m.workloads[i], err) < 0) {
			cb_prefix(err, "%s", args.pos[0]);
			goto out;
		}
	/* Relative compiler roots are the manifest's folder's: args are
	 * absolute, and the folder, which exists, is taken without links or
	 * "..". */
	dir = strndup(args.pos[0], (size_t)(strrchr(args.pos[0], '/') - args.pos[0]));
	base = dir ? cb_resolve(*dir ? dir : "/") : NULL;
	mx = base ? cb_matrix_build(&m, &inv, sel, base, err) : NULL;
	if (!base)
		cb_fail(err, "out of memory");
	free(dir);
	if (!mx) {
		cb_prefix(err, "%s", args.pos[0]);
		goto out;
	}
	if (sel == CB_SEL_ALL && check_canary_receipt(opt_canary, &m, err) < 0)
		goto out;
	if (opt_history && cb_history_load(opt_history, m.campaign, "--history", &history, err) < 0)
		goto out;
	name = cb_strdupf("%s-%s", m.campaign, cb_selection_name(sel));
	target = opt_output ? cb_path_join(opt_output, name ? name : "") : NULL;
	if (!opt_dry_run && cb_guard_check(&g, opt_output, err) < 0)
		goto out;
	if (!opt_dry_run && cb_exists(target)) {
		cb_fail(err, "%s: already exists; refusing to overwrite a frozen campaign", target);
		goto out;
	}
	print_estimate(&m, mx, opt_history ? &history : NULL, opt_prescreen);
	if (opt_max_task_s != LLONG_MIN)
		print_over_limit(mx, &history, opt_max_task_s);
	if (opt_dry_run) {
		printf("prepare: dry run: manifest and inventory valid, nothing written\n");
		rc = CB_EXIT_OK;
		goto out;
	}
	if (cb_guard_mkdir(&g, opt_output, 0777, err) < 0 || freeze(target, bytes, len, inv_bytes, inv_len, mx, err) < 0)
		goto out;
	printf("prepare: frozen %s/" CB_RUN_MANIFEST " (sha256 %s)\n", target, m.sha256);
	printf("prepare: frozen %s/%s (sha256 %s)\n", target, CB_FROZEN_INVENTORY, inv.sha256);
	printf("prepare: frozen %s/" CB_RUN_MATRIX "\n", target);
	rc = CB_EXIT_OK;
out:
	cb_history_release(&history);
	json_decref(mx);
	cb_backend_release(&backend);
	cb_inventory_release(&inv);
	cb_manifest_release(&m);
	free(bytes);
	free(inv_bytes);
	free(inv_path);
	free(target);
	free(name);
	free(base);
	cb_args_release(&args);
	return rc;
}
