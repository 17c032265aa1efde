/* libFuzzer target: the topology ops of a module with their locations and
 * layouts (ttgir_ops.h) read from arbitrary bytes. The ops are exactly
 * those the counter counts, in order of their lines; no chain is longer
 * than its bound; an op has a source frame exactly when it has frames, and
 * that frame is one of them; every layout alias listed is defined once. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ttgir.h"
#include "ir/ttgir_ops.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const ops[] = { CB_DEFAULT_TOPOLOGY_OP, "a" };
	const char *text = (const char *)data;
	size_t i, k, lines = 1;

	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		struct cb_ir_module m;
		struct cb_err err;

		if (cb_ir_module_parse(text, size, ops[k], &m, &err) < 0)
			abort();
		if ((long long)m.nops != cb_ttgir_count(text, size, ops[k]))
			abort();
		for (i = 0; i < m.nops; i++) {
			const struct cb_ir_op *op = &m.ops[i];
			const struct cb_ir_frame *src = cb_ir_op_source(op);
			if (op->line < 1 || op->line > lines || (i && op->line <= m.ops[i - 1].line) || op->nframes > 64 ||
			    !op->result || (!src) != (op->nframes == 0) ||
			    (src && (src < op->frames || src >= op->frames + op->nframes)) ||
			    (op->src.text && (!op->src.def || !op->src.expanded)) || (op->unresolved && !op->loc))
				abort();
		}
		for (i = 0; i < m.nlayouts; i++)
			if (m.layouts[i].name[0] != '#' || (i && strcmp(m.layouts[i - 1].name, m.layouts[i].name) >= 0))
				abort();
		cb_ir_module_release(&m);
	}
	return 0;
}
