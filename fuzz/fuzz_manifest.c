/* libFuzzer target: the manifest loader must refuse or accept any bytes
 * without crashing, leaking or reading out of bounds. */
#include <stddef.h>
#include <stdint.h>

#include "manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_manifest m;
	struct cb_err err;

	if (cb_manifest_parse((const char *)data, size, "fuzz.json", &m, &err) == 0)
		cb_manifest_release(&m);
	return 0;
}
