/* receipt.c: reading and writing receipts. */
#include "receipt.h"

#include <stdlib.h>
#include <string.h>

#include "jsonio.h"

int cb_campaign_summary_load(const char *path, struct cb_campaign_summary *cs, struct cb_err *err)
{
	const json_t *tasks, *t;
	const char *schema;
	size_t i;

	memset(cs, 0, sizeof(*cs));
	cs->doc = cb_json_load_file(path, err);
	if (!cs->doc)
		return -1;
	schema = cb_json_str(cs->doc, "schema");
	if (!schema || strcmp(schema, CB_CAMPAIGN_SCHEMA) != 0) {
		cb_fail(err, "%s: schema: expected '%s', got '%s'", path, CB_CAMPAIGN_SCHEMA,
			schema ? schema : "(none)");
		goto fail;
	}
	cs->campaign = cb_json_str(cs->doc, "campaign");
	cs->selection = cb_json_str(cs->doc, "selection");
	cs->manifest_sha256 = cb_json_str(cs->doc, "manifest_sha256");
	cs->status = cb_json_str(cs->doc, "status");
	cs->launch_floor = cb_json_int(cs->doc, "launch_floor", -1);
	tasks = json_object_get(cs->doc, "tasks");
	if (!cs->campaign || !cs->selection || !cs->manifest_sha256 || !cs->status ||
	    cs->launch_floor < 0 || !json_is_array(tasks)) {
		cb_fail(err, "%s: not a complete campaign receipt (campaign, selection, manifest_sha256, status, launch_floor, tasks)",
			path);
		goto fail;
	}
	cs->ntasks = json_array_size(tasks);
	cs->tasks = calloc(cs->ntasks ? cs->ntasks : 1, sizeof(*cs->tasks));
	if (!cs->tasks) {
		cb_fail(err, "%s: out of memory", path);
		goto fail;
	}
	json_array_foreach(tasks, i, t) {
		cs->tasks[i].id = cb_json_str(t, "id");
		cs->tasks[i].verdict = cb_json_str(t, "verdict");
		cs->tasks[i].reason = cb_json_str(t, "reason");
		if (!cs->tasks[i].id || !cs->tasks[i].verdict || !cs->tasks[i].reason) {
			cb_fail(err, "%s: tasks[%zu]: id, verdict and reason are required", path, i);
			goto fail;
		}
	}
	return 0;
fail:
	cb_campaign_summary_free(cs);
	return -1;
}

void cb_campaign_summary_free(struct cb_campaign_summary *cs)
{
	if (!cs)
		return;
	free(cs->tasks);
	json_decref(cs->doc);
	memset(cs, 0, sizeof(*cs));
}
