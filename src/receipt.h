/* receipt.h: cell, task and campaign receipts (SPEC section 11); their
 * fields are documented in docs/formats.md. */
#ifndef CB_RECEIPT_H
#define CB_RECEIPT_H

#include <jansson.h>

#include "caliber.h"

#define CB_CELL_SCHEMA "caliber.cell/1"
#define CB_TASK_SCHEMA "caliber.task/1"
#define CB_CAMPAIGN_SCHEMA "caliber.campaign/1"

/* What other commands need from a campaign receipt. Strings point into doc. */
struct cb_campaign_task {
	const char *id, *verdict, *reason;
};

struct cb_campaign_summary {
	json_t *doc;
	const char *campaign, *selection, *manifest_sha256, *status;
	long long launch_floor;
	struct cb_campaign_task *tasks;
	size_t ntasks;
};

/* Load a campaign receipt and check its shape. */
int cb_campaign_summary_load(const char *path, struct cb_campaign_summary *cs, struct cb_err *err);
void cb_campaign_summary_free(struct cb_campaign_summary *cs);

#endif
