/* main.c: the command table, and the one place that prints errors. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caliber.h"
#include "cmd/cmd.h"
#include "base/fsutil.h"
#include "base/proc.h"
#include "base/suggest.h"

struct cmd_entry {
	const char *name;
	int (*fn)(int argc, const char **argv, struct cb_err *err);
	const char *summary;
};

static const struct cmd_entry commands[] = {
	{ "pin", cmd_pin, "fill a manifest's pins (tree digests, commits) from real trees" },
	{ "prepare", cmd_prepare, "validate a manifest, estimate, freeze the task matrix" },
	{ "demo", cmd_demo, "the main job: a canary on a GPU, or replay the shipped H200 run" },
	{ "run", cmd_run, "run a frozen campaign on one device into a sealed run root" },
	{ "worker", cmd_worker, "run one cell of one task by hand, as run does" },
	{ "plan", cmd_plan, "print the plugin plan a backend's capabilities call for" },
	{ "verify", cmd_verify, "recheck the seal of a run root" },
	{ "digest", cmd_digest, "tree digest for sources.*.tree_sha256" },
	{ "topology", cmd_topology, "count the topology op in a cell's IR (docs/design.md section 9)" },
	{ "reaccount", cmd_reaccount, "re-account a sealed run under a new launch floor" },
	{ "inventory", cmd_inventory, "inventory CSV from a corpus tree" },
	{ "report", cmd_report, "text, Markdown or HTML report of a sealed or derived run" },
	{ "diff", cmd_diff, "which topology ops changed, in which kernel, at which source line" },
	{ "compare", cmd_compare, "two sealed runs of the same corpus side by side, moves against both A/A bands" },
	{ "export", cmd_export, "a sealed run as JSON or CSV rows for other tools: times, intervals, verdicts" },
	{ "merge", cmd_merge, "join the sealed shards of one campaign into one sealed run" },
	{ "slurm", cmd_slurm, "a Slurm job array for the shards of a campaign, and its merge" },
};

/* The exit statuses of caliber.h, as `caliber --help` and the README list them. */
static const struct {
	int code;
	const char *meaning;
} exit_statuses[] = {
	{ CB_EXIT_OK, "success (a run that completed, whatever its verdicts but X, unless --fail-on says otherwise)" },
	{ CB_EXIT_FAIL, "the command failed; the message says why" },
	{ CB_EXIT_USAGE, "bad command line" },
	{ CB_EXIT_PREFLIGHT, "run: a preflight refused the batch; nothing was written" },
	{ CB_EXIT_STOPPED, "run: stopped by --stop-after or --deadline; continue with --resume" },
	{ CB_EXIT_GATE, "run, demo: a task is X (the first is named); run, report: --fail-on matched a verdict" },
	{ CB_EXIT_VERIFY, "verify, and report --fail-on: the seal (with verify --key, its signature) does not hold" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: caliber <command> [options]   (caliber <command> --help)\n\n"
		   "caliber runs frozen, auditable A/B campaigns of a GPU compiler change\n"
		   "over a corpus of operator workloads.\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n  --version  print the version and the commit it was built from\n"
		   "  -h, --help this list; `caliber <command> -h` for one command\n"
		   "\nenvironment:\n"
		   "  CALIBER_HOME  caliber's tree (backends/, python/, ops/, ...); by default the one\n"
		   "                beside the binary: the checkout it was built in, or PREFIX/share/caliber\n"
		   "\nexit status (every command):\n");
	for (i = 0; i < sizeof(exit_statuses) / sizeof(exit_statuses[0]); i++)
		fprintf(f, "  %d  %s\n", exit_statuses[i].code, exit_statuses[i].meaning);
}

/* caliber(1), for `make man` (hidden option --man): the commands and the
 * exit statuses of the tables above; each command's own page comes from
 * its option table (`caliber CMD --man`, opts.h). */
static void man_page(FILE *f)
{
	size_t i;

	fprintf(f, ".TH CALIBER 1 \"\" \"caliber %s\" \"caliber manual\"\n.SH NAME\n"
		   "caliber \\- frozen, auditable A/B campaigns of a GPU compiler change\n"
		   ".SH SYNOPSIS\n.B caliber\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n.br\n.B caliber\n\\-\\-version | \\-\\-help\n"
		   ".SH DESCRIPTION\ncaliber runs frozen, auditable A/B campaigns that measure how a GPU compiler\n"
		   "change behaves over a corpus of operator workloads: is each operator still\n"
		   "correct, did the kernels it actually runs lose layout conversions, and is it\n"
		   "faster, in both execution orders. Everything it decides is sealed in a run\n"
		   "root that anyone can check again without a GPU. Each command has its own\n"
		   "page, and answers \\fB\\-\\-help\\fR.\n.SH COMMANDS\n", cb_version());
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, ".TP\n.BR caliber\\-%s (1)\n%s\n", commands[i].name, commands[i].summary);
	fprintf(f, ".SH EXIT STATUS\n");
	for (i = 0; i < sizeof(exit_statuses) / sizeof(exit_statuses[0]); i++)
		fprintf(f, ".TP\n.B %d\n%s\n", exit_statuses[i].code, exit_statuses[i].meaning);
	fprintf(f, ".SH SEE ALSO\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, ".BR caliber\\-%s (1)%s\n", commands[i].name, i + 1 < sizeof(commands) / sizeof(commands[0]) ? "," : ";");
	fprintf(f, "docs/design.md and docs/formats.md in caliber's documentation.\n");
}

/* A word that names no command: the nearest command when it looks like a
 * typo of one, and where the list is, rather than the whole usage. */
static void unknown_command(const char *word)
{
	const char *names[sizeof(commands) / sizeof(commands[0])];
	const char *near;
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		names[i] = commands[i].name;
	near = cb_suggest(word, names, sizeof(commands) / sizeof(commands[0]));
	if (near)
		fprintf(stderr, "caliber: unknown command '%s' (did you mean %s?)\n", word, near);
	else
		fprintf(stderr, "caliber: unknown command '%s'; caliber --help lists the commands\n", word);
}

/* TMPDIR made absolute once, before anything uses it: the scratch folders
 * of workers live under it, and workers change directory. */
static int absolute_tmpdir(struct cb_err *err)
{
	const char *t = getenv("TMPDIR");
	char *abs = NULL;
	int rc;

	if (!t || !*t || t[0] == '/')
		return 0;
	if (cb_absolute(t, &abs, err) < 0)
		return cb_prefix(err, "TMPDIR");
	rc = setenv("TMPDIR", abs, 1);
	free(abs);
	return rc == 0 ? 0 : cb_fail(err, "TMPDIR: cannot set it: out of memory");
}

int main(int argc, char **argv)
{
	struct cb_err err;
	size_t i;
	int rc;

	if (argc < 2) {
		usage(stderr);
		return CB_EXIT_USAGE;
	}
	if (strcmp(argv[1], CB_LIFELINE_ARG) == 0) {
		/* caliber as the exec wrapper of a worker (proc.h); returns only on failure */
		err = (struct cb_err)CB_ERR_INIT;
		cb_lifeline_exec(argc, argv, &err);
		fprintf(stderr, "caliber: %s: %s\n", CB_LIFELINE_ARG, err.msg);
		return 127;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("caliber %s (commit %s)\n", cb_version(), cb_commit());
		return CB_EXIT_OK;
	}
	if (strcmp(argv[1], "--man") == 0) {
		man_page(stdout);
		return CB_EXIT_OK;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return CB_EXIT_OK;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) != 0)
			continue;
		err = (struct cb_err)CB_ERR_INIT;
		/* Commands take argv as const (cmd.h): the one cast is here. */
		rc = absolute_tmpdir(&err) < 0 ? CB_EXIT_FAIL : commands[i].fn(argc - 1, (const char **)argv + 1, &err);
		/* What a command printed is part of what it did: output that
		 * could not be written (a full disk, /dev/full, a closed pipe)
		 * fails the command. */
		if ((fflush(stdout) != 0 || ferror(stdout)) && rc == CB_EXIT_OK) {
			cb_fail(&err, "stdout: write error: %s", strerror(errno));
			rc = CB_EXIT_FAIL;
		}
		if (rc != CB_EXIT_OK && err.code != CB_ERR_NONE)
			fprintf(stderr, "caliber: %s: %s\n", commands[i].name, err.msg);
		return rc;
	}
	unknown_command(argv[1]);
	return CB_EXIT_USAGE;
}
