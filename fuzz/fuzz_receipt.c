/* libFuzzer target: the receipt readers (task receipt, campaign receipt)
 * and the timing.jsonl reader, over arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>

#include "account/evidence.h"
#include "base/jsonio.h"
#include "account/receipt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_task_result res;
	struct cb_campaign_summary cs;
	struct cb_timing t;
	struct cb_err err;
	json_t *j = cb_json_load_buf((const char *)data, size, "fuzz.json", &err);

	if (j) {
		if (cb_task_result_from_json(j, "fuzz.json", &res, &err) == 0)
			cb_task_result_release(&res);
		if (cb_campaign_summary_take(json_incref(j), "fuzz.json", &cs, &err) == 0)
			cb_campaign_summary_release(&cs);
		json_decref(j);
	}
	if (cb_timing_parse((const char *)data, size, "timing.jsonl", &t, &err) == 0)
		cb_timing_release(&t);
	return 0;
}
