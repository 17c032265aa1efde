/* libFuzzer target: the ir/index.tsv parser. What it accepts keeps the
 * promises of topology.h: no more rows than lines, named variants that are
 * directory names and listed once, counts >= 0. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_index ix;
	struct cb_err err;
	size_t i, j, lines = 0;

	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (cb_index_parse((const char *)data, size, "fuzz.tsv", &ix, &err) < 0) {
		if (ix.rows || ix.n || strncmp(err.msg, "fuzz.tsv", 8) != 0)
			abort();
		return 0;
	}
	if (ix.n > lines)
		abort();
	for (i = 0; i < ix.n; i++) {
		const struct cb_index_row *r = &ix.rows[i];
		if (!*r->variant || !*r->kernel || strchr(r->variant, '/') || r->launches < 0 ||
		    r->tuning_launches < 0 || r->line < 2 || r->line > lines + 1)
			abort();
		for (j = 0; j < i; j++)
			if (strcmp(ix.rows[j].variant, r->variant) == 0)
				abort();
	}
	cb_index_release(&ix);
	return 0;
}
