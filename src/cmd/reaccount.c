/* cmd/reaccount.c: `caliber reaccount RUN --floor N --output DIR` (or
 * --scope time:P): a sealed run re-accounted under another scope
 * (reaccount.h), written outside it. */
#include <stdio.h>

#include "base/runroot.h"
#include "cmd.h"
#include "opts.h"
#include "account/reaccount.h"
#include "seal/seal.h"
#include "seal/sign.h"

static const char reaccount_about[] =
	"Re-account a sealed run under a new measured launch floor: re-read each\n"
	"cell's IR and launch index, recompute the scoped topology, and re-run the\n"
	"classifier against the sealed correctness verdicts and timings (no device,\n"
	"no compiler). The seal is checked first; the output must lie outside the\n"
	"run root. At the run's own floor every sealed count and verdict must be\n"
	"reproduced ('equivalence: holds'), else the command fails. A derived\n"
	"verdict only demotes a topology claim: G, C or R become B when the\n"
	"reduction disappears; a reduction that appears only under the new floor\n"
	"becomes X (no round-b evidence). With --scope time:P instead of --floor,\n"
	"a variant counts when it holds at least P % of its cell's GPU time in the\n"
	"profiled replays of round a (kernels.jsonl), and the command says which\n"
	"tasks count as they were sealed. With --key PUB.pem the seal's signature\n"
	"must hold for that key, as `caliber verify --key` checks it. Writes\n"
	"DIR/derived.json, DIR/matrix.csv and DIR/matrix.md.";

/* The tasks whose topology under a scope by time differs from the sealed one. */
static void print_counts(const struct cb_reaccount *ra, const char *scope)
{
	size_t i;

	printf("scope %s: %zu of %zu tasks count as sealed at floor %lld\n", scope, ra->same_counts, ra->ntasks,
	       ra->v->cs.launch_floor);
	for (i = 0; i < ra->ntasks; i++) {
		const struct cb_task_result *s = &ra->pairs[i].sealed, *d = &ra->pairs[i].derived;
		if (s->have_topology && d->have_topology &&
		    (s->topology[0] != d->topology[0] || s->topology[1] != d->topology[1] ||
		     s->topology[2] != d->topology[2]))
			printf("%s: topology %lld/%lld/%lld at floor %lld, %lld/%lld/%lld at %s\n", s->id, s->topology[0],
			       s->topology[1], s->topology[2], ra->v->cs.launch_floor, d->topology[0], d->topology[1],
			       d->topology[2], scope);
	}
}

int cmd_reaccount(int argc, const char **argv, struct cb_err *err)
{
	struct cb_reaccount ra = { 0 };
	struct cb_run_view v = { 0 };
	struct cb_scope scope = { 0, -1, 0 };
	const char *output = NULL, *time_scope = NULL, *key = NULL;
	char name[64], fp[CB_SHA256_HEX];
	struct cb_args args = CB_ARGS_INIT;
	size_t i;
	const struct cb_opt opts[] = {
		{ "floor", CB_OPT_INT, &scope.floor, "N", "the new measured launch floor (>= 0)" },
		{ "scope", CB_OPT_STR, &time_scope, "time:P",
		  "instead of --floor: count the variants holding at least P % of their cell's GPU time" },
		{ "output", CB_OPT_PATH, &output, "DIR", "where the derived run goes (required, outside RUN)" },
		{ "key", CB_OPT_PATH, &key, "PUB.pem", "the public key the seal's signature must hold for" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "reaccount", "RUN_ROOT (--floor N | --scope time:P) --output DIR [--key PUB.pem]",
					  reaccount_about, opts, 1, 1 };
	int rc = cb_parse_opts(&spec, argc, argv, &args, err);

	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	if ((scope.floor < 0) == !time_scope || !output) {
		cb_fail(err, "--floor N (>= 0) or --scope time:P, one of them, and --output DIR are required");
		cb_args_release(&args);
		return CB_EXIT_USAGE;
	}
	if (time_scope && cb_scope_parse_time(time_scope, &scope, err) < 0) {
		cb_args_release(&args);
		return CB_EXIT_USAGE;
	}
	cb_scope_name(&scope, name, sizeof(name));
	rc = CB_EXIT_FAIL;
	/* A key that cannot be read is a bad command, found before the work. */
	if (key && cb_key_fingerprint(key, fp, err) < 0) {
		cb_prefix(err, "--key");
		goto out;
	}
	if (key && cb_seal_signature(args.pos[0], key, fp, err) < 0)
		goto out;
	if (key)
		printf("signature: holds, key sha256:%s (%s)\n", fp, key);
	if (cb_run_view_open(&v, args.pos[0], NULL, CB_RUN_VIEW_ROOT_ONLY | CB_RUN_VIEW_COUNT, err) < 0)
		goto out;
	if (cb_reaccount(&v, output, &scope, &ra, err) < 0) {
		if (ra.diff[0])
			printf("equivalence: fails: %s\n", ra.diff);
		goto out;
	}
	printf("equivalence: holds (%zu tasks reproduced at the run's own floor %lld)\n", ra.ntasks,
	       ra.v->cs.launch_floor);
	if (scope.by_time)
		print_counts(&ra, name);
	for (i = 0; i < ra.ntasks; i++) {
		const struct cb_task_result *s = &ra.pairs[i].sealed, *d = &ra.pairs[i].derived;
		if (s->verdict != d->verdict)
			printf("%s: %c -> %c (%s)\n", s->id, s->verdict, d->verdict, d->reason);
	}
	if (cb_reaccount_write(&ra, output, err) < 0)
		goto out;
	printf("reaccount: %s: %zu of %zu tasks changed verdict; wrote %s/" CB_RUN_DERIVED ", " CB_RUN_MATRIX_CSV ", " CB_RUN_MATRIX_MD "\n",
	       name, ra.changed, ra.ntasks, output);
	rc = CB_EXIT_OK;
out:
	cb_reaccount_release(&ra);
	cb_run_view_release(&v);
	cb_args_release(&args);
	return rc;
}
