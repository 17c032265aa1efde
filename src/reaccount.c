/* reaccount.c: `caliber reaccount RUN --floor N --output DIR` (SPEC section
 * 12): re-count the topology of a sealed run under another launch floor and
 * re-classify its tasks against the sealed correctness and timings, with no
 * device and no compiler. A derived verdict can only demote a topology
 * claim: the classifier, fed the sealed evidence, turns a vanished
 * reduction into B and a new reduction (which has no round-b timings) into
 * X; verdicts that do not rest on topology (X, K) are kept as sealed. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "evidence.h"
#include "fsutil.h"
#include "jsonio.h"
#include "manifest.h"
#include "opts.h"
#include "pool.h"
#include "receipt.h"
#include "seal.h"

struct task_pair {
	struct cb_task_result sealed, derived;
	json_t *excluded;              /* per role, variants left out at the new floor */
	int failed;                    /* 1: err says why; 2: equivalence fails, diff says how */
	struct cb_err err;
	char diff[1024];
};

/* The tasks of a run, accounted on the pool's threads: each takes the next
 * task index, and writes only its own task_pair. */
struct account_job {
	const char *run;
	const struct cb_campaign_summary *cs;
	const struct cb_manifest *m;
	const struct cb_ttgir_counts *counts;
	long long floor;
	struct task_pair *pairs;
	atomic_size_t next;
};

static json_t *topo_triplet(const struct cb_task_result *r)
{
	if (!r->have_topology)
		return json_null();
	return json_pack("{s:I, s:I, s:I}", "baseline", (json_int_t)r->topology[CB_ROLE_BASELINE],
			 "control", (json_int_t)r->topology[CB_ROLE_CONTROL], "candidate",
			 (json_int_t)r->topology[CB_ROLE_CANDIDATE]);
}

static json_t *excluded_json(const struct cb_task_evidence *ev)
{
	json_t *ex = json_object();
	int r;

	for (r = 0; r < CB_NROLES; r++) {
		json_t *list = json_array();
		size_t i;
		for (i = 0; ev->have_topology[r] && i < ev->topology[r].nv; i++)
			if (!ev->topology[r].v[i].scoped)
				json_array_append_new(list, json_string(ev->topology[r].v[i].name));
		json_object_set_new(ex, cb_role_name((enum cb_role)r), list);
	}
	return ex;
}

/* The first way in which a recomputation differs from the sealed receipt. */
static int first_difference(const struct cb_task_result *a, const struct cb_task_result *b,
			    char *out, size_t cap)
{
	int r;

	if (a->verdict != b->verdict || strcmp(a->code, b->code) != 0) {
		snprintf(out, cap, "task %s: sealed %c (%s), recomputed %c (%s)", a->id, a->verdict, a->code,
			 b->verdict, b->code);
		return 1;
	}
	if (a->have_topology != b->have_topology) {
		snprintf(out, cap, "task %s: topology joinable sealed %d, recomputed %d", a->id,
			 a->have_topology, b->have_topology);
		return 1;
	}
	for (r = 0; a->have_topology && r < CB_NROLES; r++)
		if (a->topology[r] != b->topology[r]) {
			snprintf(out, cap, "task %s: %s topology sealed %lld, recomputed %lld", a->id,
				 cb_role_name((enum cb_role)r), a->topology[r], b->topology[r]);
			return 1;
		}
	return 0;
}

/* Account task i: load its sealed receipt and evidence, check that the
 * run's own floor reproduces the receipt, then classify it at the new
 * floor. The outcome stays in job->pairs[i]. */
static void account_task(const struct account_job *job, size_t i)
{
	const struct cb_campaign_summary *cs = job->cs;
	struct task_pair *pair = &job->pairs[i];
	struct cb_task_evidence ev;
	struct cb_task_result again;
	struct cb_facts f;
	struct cb_figures fig;
	struct cb_verdict v;
	char *tdir = cb_strdupf("%s/tasks/%s", job->run, cs->tasks[i].id);
	char *tjson = tdir ? cb_path_join(tdir, "task.json") : NULL;
	int bad;

	pair->failed = 1;
	if (!tjson) {
		cb_fail(&pair->err, "out of memory");
		free(tdir);
		return;
	}
	if (cb_task_result_load(tjson, &pair->sealed, &pair->err) < 0 ||
	    cb_evidence_load_counted(tdir, cs->tasks[i].id, job->m, cs->launch_floor, job->counts, &ev,
				     &pair->err) < 0) {
		free(tdir);
		free(tjson);
		return;
	}
	free(tdir);
	free(tjson);
	/* Equivalence: at the run's own floor, reproduce the seal. */
	if (cb_facts_from_evidence(&ev, job->m, &f, &fig, &pair->err) < 0 ||
	    cb_task_result_fill(&ev, pair->sealed.op, &f, &fig, &again, &v, &pair->err) < 0) {
		cb_evidence_free(&ev);
		return;
	}
	bad = first_difference(&pair->sealed, &again, pair->diff, sizeof(pair->diff));
	cb_task_result_release(&again);
	if (bad) {
		cb_evidence_free(&ev);
		pair->failed = 2;
		return;
	}
	/* The new floor changes topology facts only. */
	cb_evidence_rescope(&ev, job->floor);
	cb_facts_topology(&ev, job->m, &f);
	bad = cb_task_result_fill(&ev, pair->sealed.op, &f, &fig, &pair->derived, &v, &pair->err) < 0;
	pair->excluded = excluded_json(&ev);
	cb_evidence_free(&ev);
	if (bad)
		return;
	/* X and K do not rest on topology: they stay as sealed. */
	if (pair->sealed.verdict == 'X' || pair->sealed.verdict == 'K') {
		pair->derived.verdict = pair->sealed.verdict;
		free(pair->derived.code);
		free(pair->derived.reason);
		pair->derived.code = strdup(pair->sealed.code);
		pair->derived.reason = strdup(pair->sealed.reason);
	}
	pair->failed = 0;
}

static void *account_worker(void *arg)
{
	struct account_job *job = arg;
	size_t i;

	while ((i = atomic_fetch_add(&job->next, 1)) < job->cs->ntasks)
		account_task(job, i);
	return NULL;
}

/* The checks before anything is accounted: output outside the run, a
 * campaign receipt, a seal that holds. With op (the manifest's topology
 * op), the verify also counts op in the cells' IR into counts, so that the
 * IR is read once; without (the manifest could not be read), it only
 * verifies, and counts stays empty. */
static int check_inputs(const char *run, const char *output, const char *op,
			struct cb_ttgir_counts *counts, struct cb_err *err)
{
	char *rrun = cb_resolve(run), *rout = cb_resolve(output), *receipt = NULL;
	int rc = -1;

	if (!rrun || !rout) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (!cb_is_dir(run)) {
		cb_fail(err, "%s: not a directory", run);
		goto out;
	}
	if (cb_path_within(rout, rrun)) {
		cb_fail(err, "--output %s: inside the run root %s (a derived run is always written outside it)",
			output, rrun);
		goto out;
	}
	receipt = cb_path_join(run, "campaign.json");
	if (!receipt || !cb_exists(receipt)) {
		cb_fail(err, "%s: no campaign receipt (campaign.json): not a run root", run);
		goto out;
	}
	if (op ? cb_evidence_verify_counting(run, op, counts, err) < 0 : cb_verify_or_fail(run, err) < 0)
		goto out;
	if (cb_exists(output) && (!cb_is_dir(output) || rmdir(output) < 0)) {
		cb_fail(err, "--output %s: already exists and is not an empty directory; refusing to overwrite",
			output);
		goto out;
	}
	rc = 0;
out:
	free(rrun);
	free(rout);
	free(receipt);
	return rc;
}

/* Read the campaign receipt and the manifest into cs and m. This comes
 * before the seal is checked, because the manifest names the op that the
 * verify counts; the manifest's digest is compared with the sealed
 * campaign receipt's once the seal holds, so the op used is a sealed one. */
static int load_run(const char *run, struct cb_campaign_summary *cs, struct cb_manifest *m,
		    struct cb_err *err)
{
	char *path = cb_path_join(run, "campaign.json");
	int rc = path ? cb_campaign_summary_load(path, cs, err) : cb_fail(err, "out of memory");

	free(path);
	if (rc < 0)
		return -1;
	path = cb_path_join(run, "manifest.json");
	rc = path ? cb_manifest_load(path, m, err) : cb_fail(err, "out of memory");
	free(path);
	return rc;
}

static const char reaccount_about[] =
	"Re-account a sealed run under a new measured launch floor: re-read each\n"
	"cell's IR and launch index, recompute the scoped topology, and re-run the\n"
	"classifier against the sealed correctness verdicts and timings (no device,\n"
	"no compiler). The seal is checked first; the output must lie outside the\n"
	"run root. At the run's own floor every sealed count and verdict must be\n"
	"reproduced ('equivalence: holds'), else the command fails. A derived\n"
	"verdict only demotes a topology claim: G, C or R become B when the\n"
	"reduction disappears; a reduction that appears only under the new floor\n"
	"becomes X (no round-b evidence). Writes DIR/derived.json, DIR/matrix.csv\n"
	"and DIR/matrix.md.";

int cmd_reaccount(int argc, char **argv, struct cb_err *err)
{
	struct cb_campaign_summary cs;
	struct cb_manifest m;
	struct cb_ttgir_counts counts;
	struct cb_err load_err;
	struct account_job job;
	struct task_pair *pairs = NULL;
	struct cb_task_result *derived = NULL;
	const char *output = NULL;
	long long floor = -1;
	struct cb_args args = CB_ARGS_INIT;
	char *path = NULL, diff[1024] = "";
	json_t *out = NULL, *tasks = NULL;
	size_t i, changed = 0;
	int loaded;
	const struct cb_opt opts[] = {
		{ "floor", CB_OPT_INT, &floor, "N", "the new measured launch floor (>= 0, required)" },
		{ "output", CB_OPT_PATH, &output, "DIR", "where the derived run goes (required, outside RUN)" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "reaccount", "RUN_ROOT --floor N --output DIR", reaccount_about,
					  opts, 1, 1 };
	int rc = cb_parse_opts(&spec, argc, argv, &args, err);

	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	memset(&cs, 0, sizeof(cs));
	memset(&m, 0, sizeof(m));
	memset(&counts, 0, sizeof(counts));
	rc = CB_EXIT_FAIL;
	if (floor < 0 || !output) {
		cb_fail(err, "--floor N (>= 0) and --output DIR are required");
		rc = CB_EXIT_USAGE;
		goto out;
	}
	/* A receipt or manifest that cannot be read is reported only after the
	 * checks, as when it was read after them. */
	loaded = load_run(args.pos[0], &cs, &m, &load_err) == 0;
	if (check_inputs(args.pos[0], output, loaded ? m.topology_op : NULL, &counts, err) < 0)
		goto out;
	if (!loaded) {
		*err = load_err;
		goto out;
	}
	if (strcmp(m.sha256, cs.manifest_sha256) != 0) {
		cb_fail(err, "%s: manifest.json does not match the campaign receipt's manifest_sha256", args.pos[0]);
		goto out;
	}
	pairs = calloc(cs.ntasks ? cs.ntasks : 1, sizeof(*pairs));
	derived = calloc(cs.ntasks ? cs.ntasks : 1, sizeof(*derived));
	if (!pairs || !derived) {
		cb_fail(err, "out of memory");
		goto out;
	}
	job.run = args.pos[0];
	job.cs = &cs;
	job.m = &m;
	job.counts = &counts;
	job.floor = floor;
	job.pairs = pairs;
	atomic_init(&job.next, 0);
	cb_pool_run(cs.ntasks, account_worker, &job);
	/* Reported as if the tasks had been accounted one after the other:
	 * the first task in run order that failed. */
	for (i = 0; i < cs.ntasks; i++) {
		if (pairs[i].failed == 2) {
			printf("equivalence: fails: %s\n", pairs[i].diff);
			cb_fail(err, "%s: equivalence fails at the run's own floor %lld: %s", args.pos[0],
				cs.launch_floor, pairs[i].diff);
			goto out;
		}
		if (pairs[i].failed) {
			*err = pairs[i].err;
			goto out;
		}
		derived[i] = pairs[i].derived;
	}
	printf("equivalence: holds (%zu tasks reproduced at the run's own floor %lld)\n", cs.ntasks,
	       cs.launch_floor);

	tasks = json_array();
	for (i = 0; i < cs.ntasks; i++) {
		const struct cb_task_result *s = &pairs[i].sealed, *d = &pairs[i].derived;
		int ch = s->verdict != d->verdict || first_difference(s, d, diff, sizeof(diff));

		changed += (size_t)(s->verdict != d->verdict);
		if (s->verdict != d->verdict)
			printf("%s: %c -> %c (%s)\n", s->id, s->verdict, d->verdict, d->reason);
		json_array_append_new(tasks, json_pack("{s:s, s:b, s:{s:s#, s:s, s:o}, s:{s:s#, s:s, s:s, s:o, s:O}}",
			"id", s->id, "changed", ch,
			"sealed", "verdict", &s->verdict, (int)1, "code", s->code, "topology", topo_triplet(s),
			"derived", "verdict", &d->verdict, (int)1, "code", d->code, "reason", d->reason,
			"topology", topo_triplet(d), "excluded", pairs[i].excluded));
	}
	out = cb_receipt_new(CB_DERIVED_SCHEMA);
	json_object_set_new(out, "run", json_pack("{s:s, s:s, s:s, s:I}", "root", args.pos[0], "campaign",
		cs.campaign, "manifest_sha256", cs.manifest_sha256, "sealed_floor", (json_int_t)cs.launch_floor));
	json_object_set_new(out, "floor", json_integer(floor));
	json_object_set_new(out, "equivalence", json_pack("{s:b, s:I}", "holds", 1, "checked_at_floor",
							  (json_int_t)cs.launch_floor));
	json_object_set_new(out, "changed", json_integer((json_int_t)changed));
	json_object_set_new(out, "tasks", tasks);
	tasks = NULL;
	path = cb_path_join(output, "derived.json");
	if (cb_mkdir_p(output, 0777, err) < 0 || !path || cb_receipt_write(path, out, err) < 0 ||
	    cb_write_verdict_matrix(output, derived, cs.ntasks, err) < 0)
		goto out;
	printf("reaccount: floor %lld: %zu of %zu tasks changed verdict; wrote %s/derived.json, matrix.csv, matrix.md\n",
	       floor, changed, cs.ntasks, output);
	rc = CB_EXIT_OK;
out:
	for (i = 0; pairs && i < cs.ntasks; i++) {
		cb_task_result_release(&pairs[i].sealed);
		cb_task_result_release(&pairs[i].derived);
		json_decref(pairs[i].excluded);
	}
	free(pairs);
	free(derived);
	json_decref(tasks);
	json_decref(out);
	cb_ttgir_counts_free(&counts);
	cb_manifest_free(&m);
	cb_campaign_summary_free(&cs);
	free(path);
	cb_args_release(&args);
	return rc;
}
