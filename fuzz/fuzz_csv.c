/* libFuzzer target: the CSV reader and the inventory built on it. */
#include <stddef.h>
#include <stdint.h>

#include "base/csv.h"
#include "campaign/inventory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_csv csv;
	struct cb_inventory inv;
	struct cb_err err;

	if (cb_csv_parse((const char *)data, size, "fuzz.csv", &csv, &err) == 0)
		cb_csv_release(&csv);
	if (cb_inventory_parse((const char *)data, size, "fuzz.csv", &inv, &err) == 0)
		cb_inventory_release(&inv);
	return 0;
}
