/* runview.c: a run opened and verified once (runview.h): which kind of run
 * a folder is, its derived.json, campaign receipt and manifest, and the one
 * pass over its sealed bytes that checks the seal and counts the op. */
#include "runview.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/runroot.h"
#include "evidence.h"

/* Read dir/derived.json into v (its schema and the fields report and diff
 * read) and find the run root it was derived from: run when given, else
 * its run.root as seen from the current directory, which must hold a
 * campaign receipt. */
static int derived_open(struct cb_run_view *v, const char *dir, const char *run, struct cb_err *err)
{
	char *p = cb_path_join(dir, CB_RUN_DERIVED), *receipt = NULL;
	const json_t *r, *sc;
	const char *schema, *root;
	int rc = -1;

	if (!p)
		return cb_fail(err, "out of memory");
	v->derived = cb_json_load_file(p, err);
	if (!v->derived)
		goto out;
	schema = cb_json_str(v->derived, "schema");
	if (!schema || strcmp(schema, CB_DERIVED_SCHEMA) != 0) {
		cb_fail(err, "%s: schema: expected '%s', got '%s'", p, CB_DERIVED_SCHEMA, schema ? schema : "(none)");
		goto out;
	}
	r = json_object_get(v->derived, "run");
	root = cb_json_str(r, "root");
	v->floor = cb_json_int(v->derived, "floor", -1);
	v->sealed_floor = cb_json_int(r, "sealed_floor", -1);
	if (!root || !cb_json_str(r, "campaign") || !cb_json_str(r, "manifest_sha256") || v->floor < 0 ||
	    v->sealed_floor < 0 || !json_is_array(json_object_get(v->derived, "tasks"))) {
		cb_fail(err, "%s: not a complete derived receipt (run.root, run.campaign, run.manifest_sha256, run.sealed_floor, floor, tasks)",
			p);
		goto out;
	}
	if ((sc = json_object_get(v->derived, "scope"))) {
		const char *kind = cb_json_str(sc, "kind");
		json_int_t share = cb_json_int(sc, "share_ppm", -1);
		if (!kind || strcmp(kind, "time") != 0 || share < 0 || share > 1000000) {
			cb_fail(err, "%s: scope: expected {\"kind\": \"time\", \"share_ppm\": 0 to 1000000}", p);
			goto out;
		}
		v->by_time = 1;
		v->share_ppm = (long long)share;
	}
	v->root = run ? run : root;
	receipt = cb_path_join(v->root, CB_RUN_CAMPAIGN);
	if (!receipt) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (!cb_is_dir(v->root) || !cb_exists(receipt)) {
		if (run)
			cb_fail(err, "--run %s: no campaign receipt (" CB_RUN_CAMPAIGN "): not a run root", run);
		else
			cb_fail(err, "%s: run.root '%s' is not a run root (no " CB_RUN_CAMPAIGN "); name it with --run DIR",
				p, root);
		goto out;
	}
	v->derived_dir = dir;
	rc = 0;
out:
	free(p);
	free(receipt);
	return rc;
}

/* Find what dir is: a derived run (then its run root) or a run root. */
static int locate(struct cb_run_view *v, const char *dir, const char *run, int flags, struct cb_err *err)
{
	if (!cb_is_dir(dir))
		return cb_fail(err, "%s: not a directory", dir);
	if (flags & CB_RUN_VIEW_ROOT_ONLY) {
		if (!cb_exists_in(dir, CB_RUN_CAMPAIGN))
			return cb_fail(err, "%s: no campaign receipt (" CB_RUN_CAMPAIGN "): not a run root", dir);
		v->root = dir;
		return 0;
	}
	if (cb_exists_in(dir, CB_RUN_DERIVED))
		return derived_open(v, dir, run, err);
	if (!cb_exists_in(dir, CB_RUN_CAMPAIGN))
		return cb_fail(err, "%s: neither a run root (no " CB_RUN_CAMPAIGN ") nor a derived run (no "
			       CB_RUN_DERIVED ")", dir);
	v->root = dir;
	return 0;
}

/* Read the campaign receipt and then the manifest; the first error is
 * kept in v->load_err. */
static int load_receipts(struct cb_run_view *v)
{
	char *p = cb_path_join(v->root, CB_RUN_CAMPAIGN);

	if (!p)
		return cb_fail(&v->load_err, "out of memory");
	v->have_cs = cb_campaign_summary_load(p, &v->cs, &v->load_err) == 0;
	free(p);
	if (!v->have_cs)
		return -1;
	if (!v->derived)
		v->floor = v->sealed_floor = v->cs.launch_floor;
	if (!(p = cb_path_join(v->root, CB_RUN_MANIFEST)))
		return cb_fail(&v->load_err, "out of memory");
	v->have_m = cb_manifest_load(p, &v->m, &v->load_err) == 0;
	free(p);
	return v->have_m ? 0 : -1;
}

/* The one pass over the sealed bytes: verify, counting the manifest's op
 * when asked and the op is one caliber counts (a refused op goes to
 * load_err and the seal is verified alone). */
static void check_seal(struct cb_run_view *v, int count)
{
	struct cb_err e = CB_ERR_INIT;
	int rc;

	if (count && v->have_m && cb_topology_check_op(v->m.topology_op, &v->load_err) < 0)
		v->op_refused = 1;
	if (count && v->have_m && !v->op_refused) {
		rc = cb_evidence_verify_counted(v->root, v->m.topology_op, &v->counts, &v->rep, &e);
		v->counted = rc == 0 && cb_verify_holds(&v->rep);
	} else {
		rc = cb_verify(v->root, &v->rep, &e);
	}
	if (rc < 0) {
		v->seal = CB_SEAL_UNCHECKED;
		v->seal_err = e;
		return;
	}
	v->seal = cb_verify_holds(&v->rep) ? CB_SEAL_HOLDS : CB_SEAL_BROKEN;
	cb_verify_fail(v->root, &v->rep, &v->seal_err);
}

int cb_run_view_open(struct cb_run_view *v, const char *dir, const char *run, int flags, struct cb_err *err)
{
	memset(v, 0, sizeof(*v));
	v->seal = CB_SEAL_UNCHECKED;
	if (locate(v, dir, run, flags, err) < 0)
		return -1;
	(void)load_receipts(v);
	check_seal(v, (flags & CB_RUN_VIEW_COUNT) != 0);
	return 0;
}

int cb_run_view_require(const struct cb_run_view *v, int need_m, struct cb_err *err)
{
	if (v->seal != CB_SEAL_HOLDS) {
		*err = v->seal_err;
		return -1;
	}
	if (!v->have_cs || (need_m && (!v->have_m || v->op_refused))) {
		*err = v->load_err;
		return -1;
	}
	if (need_m && strcmp(v->m.sha256, v->cs.manifest_sha256) != 0)
		return cb_fail(err, "%s: " CB_RUN_MANIFEST " does not match the campaign receipt's manifest_sha256",
			       v->root);
	return 0;
}

int cb_run_view_check_derived(const struct cb_run_view *v, struct cb_err *err)
{
	const json_t *r = json_object_get(v->derived, "run"), *tasks = json_object_get(v->derived, "tasks");
	const char *campaign = cb_json_str(r, "campaign"), *msha = cb_json_str(r, "manifest_sha256");
	const struct cb_campaign_summary *cs = &v->cs;

	if (!v->derived)
		return 0;
	if (strcmp(campaign, cs->campaign) != 0 || strcmp(msha, cs->manifest_sha256) != 0)
		return cb_fail(err, "%s/" CB_RUN_DERIVED ": derived from campaign %s (manifest %.12s), but %s holds campaign %s (manifest %.12s)",
			       v->derived_dir, campaign, msha, v->root, cs->campaign, cs->manifest_sha256);
	if (json_array_size(tasks) != cs->ntasks)
		return cb_fail(err, "%s/" CB_RUN_DERIVED ": %zu tasks, the run %zu", v->derived_dir,
			       json_array_size(tasks), cs->ntasks);
	return 0;
}

void cb_run_view_release(struct cb_run_view *v)
{
	if (!v)
		return;
	json_decref(v->derived);
	cb_campaign_summary_release(&v->cs);
	cb_manifest_release(&v->m);
	if (v->seal != CB_SEAL_UNCHECKED)
		cb_verify_report_release(&v->rep);
	if (v->counted)
		cb_ttgir_counts_release(&v->counts);
	memset(v, 0, sizeof(*v));
}
