/* libFuzzer target: the worker reply parser (reply.h). What it takes keeps
 * the protocol's promises: a JSON object without a NUL byte whose id is the
 * request's and whose exit is an exit code; what it refuses leaves the
 * reply empty and says why in one line. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "run/reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char want[] = "gain/a/candidate/2";
	const char *line = (const char *)data;
	struct cb_reply r;
	struct cb_err err = CB_ERR_INIT;
	json_t *j;

	if (cb_reply_parse(line, size, want, &r, &err) < 0) {
		if (r.error || r.exit || !err.msg[0] || err.code != CB_ERR_FAIL || strchr(err.msg, '\n') != NULL)
			abort();
		return 0;
	}
	j = json_loadb(line, size, JSON_REJECT_DUPLICATES, NULL);
	if (memchr(line, '\0', size) || !json_is_object(j) || r.exit < 0 || r.exit > 255 ||
	    strcmp(json_string_value(json_object_get(j, "id")), want) != 0 ||
	    json_integer_value(json_object_get(j, "exit")) != r.exit ||
	    !!r.error != !!json_object_get(j, "error"))
		abort();
	json_decref(j);
	cb_reply_release(&r);
	return 0;
}
