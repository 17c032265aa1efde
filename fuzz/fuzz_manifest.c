/* libFuzzer target: the manifest loader must refuse or accept any bytes
 * without crashing, leaking or reading out of bounds; and a manifest it
 * accepts must freeze into a task matrix (against an empty inventory, with
 * relative compiler roots resolved against a folder) or be refused. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "campaign/manifest.h"
#include "campaign/matrix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_manifest m;
	struct cb_inventory inv;
	struct cb_err err;

	if (cb_manifest_parse((const char *)data, size, "fuzz.json", &m, &err) == 0) {
		memset(&inv, 0, sizeof(inv));
		json_decref(cb_matrix_build(&m, &inv, CB_SEL_ALL, "/fuzz/campaign", &err));
		cb_manifest_release(&m);
	}
	return 0;
}
