/* main.c: the command table, and the one place that prints errors. */
#include <stdio.h>
#include <string.h>

#include "caliber.h"
#include "cmd.h"

struct cmd_entry {
	const char *name;
	int (*fn)(int argc, char **argv, struct cb_err *err);
	const char *summary;
};

static const struct cmd_entry commands[] = {
	{ "prepare", cmd_prepare, "validate a manifest, estimate, freeze the task matrix" },
	{ "demo", cmd_demo, "the main job: a canary on a GPU, or replay the shipped H200 run" },
	{ "run", cmd_run, "run a frozen campaign on one device into a sealed run root" },
	{ "worker", cmd_worker, "run one cell of one task by hand, as run does" },
	{ "plan", cmd_plan, "print the plugin plan a backend's capabilities call for" },
	{ "verify", cmd_verify, "recheck the seal of a run root" },
	{ "digest", cmd_digest, "tree digest for sources.*.tree_sha256" },
	{ "topology", cmd_topology, "count the topology op in a cell's IR (SPEC section 9)" },
	{ "reaccount", cmd_reaccount, "re-account a sealed run under a new launch floor" },
	{ "inventory", cmd_inventory, "inventory CSV from a corpus tree" },
	{ "report", cmd_report, "text, Markdown or HTML report of a sealed or derived run" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: caliber <command> [options]   (caliber <command> --help)\n\n"
		   "caliber runs frozen, auditable A/B campaigns of a GPU compiler change\n"
		   "over a corpus of operator workloads.\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n  --version  print the version and the commit it was built from\n");
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
	if (strcmp(argv[1], "--version") == 0) {
		printf("caliber %s (commit %s)\n", cb_version(), cb_commit());
		return CB_EXIT_OK;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return CB_EXIT_OK;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) != 0)
			continue;
		err.msg[0] = '\0';
		rc = commands[i].fn(argc - 1, argv + 1, &err);
		if (rc != CB_EXIT_OK && err.msg[0])
			fprintf(stderr, "caliber: %s: %s\n", commands[i].name, err.msg);
		fflush(stdout);
		return rc;
	}
	fprintf(stderr, "caliber: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return CB_EXIT_USAGE;
}
