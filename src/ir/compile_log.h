/* compile_log.h: a cell's compile.json read (docs/formats.md, "compile.json
 * (ir_meta)"): what one request spent in Triton's compiler, as its
 * compilation listener reported it. */
#ifndef CB_COMPILE_LOG_H
#define CB_COMPILE_LOG_H

#include "caliber.h"

struct cb_compile_log {
	int listened;          /* the request's Triton has the listener: the counts are known */
	long long compiles;    /* kernels compiled */
	long long compile_us;  /* microseconds they took (Triton's CompileTimes.total) */
	long long cache_hits;  /* kernels loaded from the cell's on-disk cache */
	long long cache_hit_us;/* microseconds those lookups took */
};

/* Read <dir>/compile.json into out. Returns 1 when it was read, 0 when the
 * folder has none (a request from before the file, or a worker that does
 * not write it: unknown), -1 with err naming the file and the field when it
 * is not what ir_meta writes. */
int cb_compile_log_read(const char *dir, struct cb_compile_log *out, struct cb_err *err);

#endif
