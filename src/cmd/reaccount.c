/* cmd/reaccount.c: `caliber reaccount RUN --floor N --output DIR`: a sealed
 * run re-accounted under another launch floor (reaccount.h), written
 * outside it. */
#include <stdio.h>

#include "cmd.h"
#include "opts.h"
#include "reaccount.h"

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
	struct cb_reaccount ra;
	const char *output = NULL;
	long long floor = -1;
	struct cb_args args = CB_ARGS_INIT;
	size_t i;
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
	if (floor < 0 || !output) {
		cb_fail(err, "--floor N (>= 0) and --output DIR are required");
		cb_args_release(&args);
		return CB_EXIT_USAGE;
	}
	rc = CB_EXIT_FAIL;
	if (cb_reaccount(args.pos[0], output, floor, &ra, err) < 0) {
		if (ra.diff[0])
			printf("equivalence: fails: %s\n", ra.diff);
		goto out;
	}
	printf("equivalence: holds (%zu tasks reproduced at the run's own floor %lld)\n", ra.ntasks,
	       ra.cs.launch_floor);
	for (i = 0; i < ra.ntasks; i++) {
		const struct cb_task_result *s = &ra.pairs[i].sealed, *d = &ra.pairs[i].derived;
		if (s->verdict != d->verdict)
			printf("%s: %c -> %c (%s)\n", s->id, s->verdict, d->verdict, d->reason);
	}
	if (cb_reaccount_write(&ra, output, err) < 0)
		goto out;
	printf("reaccount: floor %lld: %zu of %zu tasks changed verdict; wrote %s/derived.json, matrix.csv, matrix.md\n",
	       floor, ra.changed, ra.ntasks, output);
	rc = CB_EXIT_OK;
out:
	cb_reaccount_release(&ra);
	cb_args_release(&args);
	return rc;
}
