/* ttgir_ops.h: the topology ops of one TTGIR module as a compiler engineer
 * reads them (docs/design.md section 15, docs/formats.md "Topology ops"): for each
 * operation that topology accounting counts (ttgir.h), its line, its
 * result, its source and destination layouts as written in the module
 * (`#blocked`, `#mma`, an inline `#ttg.slice<...>`) with their definitions,
 * and its `loc(...)` resolved to a chain of `file:line:col` frames
 * (`#loc` aliases, callsite, fused and name locations followed).
 *
 * Reading is lenient where counting is strict: an op is always listed,
 * exactly as cb_ttgir_count counts it; a location or a type that cannot be
 * read leaves that part of the op empty (and says so), never an error. */
#ifndef CB_TTGIR_OPS_H
#define CB_TTGIR_OPS_H

#include <stddef.h>

#include "caliber.h"

/* One frame of a location: a file position, innermost first in a chain. */
struct cb_ir_frame {
	char *file;              /* as written in the module, escapes undone */
	long long line, col;
	char *name;              /* the name location around it ("acc"), or NULL */
};

/* A tensor encoding as the module writes it. */
struct cb_ir_layout {
	char *text;              /* "#mma", or the attribute written inline; NULL: none found */
	char *def;               /* what an alias stands for, as written; the text itself when inline */
	char *expanded;          /* def with every alias inside replaced by its definition, so that
				  * layouts compare across modules that number aliases differently */
};

/* One topology op. */
struct cb_ir_op {
	size_t line;             /* 1-based line of the file */
	char *result;            /* "%17" ("%a, %b" for several), "" when it has none */
	struct cb_ir_layout src, dst;
	char *loc;               /* the location as written after loc(, without the parentheses, or NULL */
	struct cb_ir_frame *frames;   /* the location resolved, innermost first; none when unknown */
	size_t nframes;
	int fused;               /* a fused location: frames are its first member that has any */
	int unresolved;          /* loc was written but could not be read (undefined alias, syntax) */
};

/* An alias a layout refers to, with its definition as written. */
struct cb_ir_alias {
	char *name;              /* "#blocked2" */
	char *def;               /* "#ttg.blocked<{...}>" */
};

struct cb_ir_module {
	struct cb_ir_op *ops;
	size_t nops;
	struct cb_ir_alias *layouts;  /* every alias the ops' layouts use, directly or through another
				       * alias, sorted by name */
	size_t nlayouts;
};

/* Read the ops named op (cb_topology_check_op) in TTGIR text data[0..len)
 * into m (zeroed first): as many, in the same order, as cb_ttgir_count
 * counts. Fails only on a bad op name or when out of memory. */
int cb_ir_module_parse(const char *data, size_t len, const char *op, struct cb_ir_module *m,
		       struct cb_err *err);
/* The same from a file; errors name path. */
int cb_ir_module_load(const char *path, const char *op, struct cb_ir_module *m, struct cb_err *err);
void cb_ir_module_release(struct cb_ir_module *m);

/* The frame an op is grouped by: the innermost frame in the file of the
 * outermost one. Everything a kernel calls is inlined into it, so the
 * outermost frame lies in the kernel's own function and its file is the
 * kernel's source; the innermost frame in that file is the line of the
 * kernel's source the op comes from (a frame of the compiler's library,
 * such as tl.zeros inside triton/language, is passed over). NULL when the
 * op has no frames. */
const struct cb_ir_frame *cb_ir_op_source(const struct cb_ir_op *op);

#endif
