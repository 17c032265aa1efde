/* jsonio.h: loading JSON strictly and writing it deterministically. */
#ifndef CB_JSONIO_H
#define CB_JSONIO_H

#include <stdio.h>

#include <jansson.h>

#include "caliber.h"

/* Parse a file with duplicate keys rejected, and a NUL byte (which jansson
 * would take for the end of the text). Errors name file, line and column.
 * Returns a new reference. */
json_t *cb_json_load_file(const char *path, struct cb_err *err);
json_t *cb_json_load_buf(const char *buf, size_t len, const char *name, struct cb_err *err);

/* Call each(line, lineno, ctx, err) for every non-empty line of the text
 * data (len bytes of path, one JSON document a line): a NUL byte in it is
 * refused, and the first call that returns < 0 ends the walk with -1. */
int cb_json_lines(const char *data, size_t len, const char *path,
		  int (*each)(const char *line, size_t lineno, void *ctx, struct cb_err *err), void *ctx,
		  struct cb_err *err);

/* Serialise deterministically: sorted keys, two-space indent, final newline.
 * Reals are refused (their printing is the library's choice, not ours): the
 * error names the JSON path of the first one. Caller frees the string. */
char *cb_json_dumps(const json_t *j, struct cb_err *err);

/* cb_json_dumps, then cb_write_atomic with the given mode. */
int cb_json_write_atomic(const char *path, const json_t *j, unsigned mode, struct cb_err *err);

/* Print j as one compact line with sorted keys (a JSON Lines event) and
 * release it (the reference is stolen). */
void cb_json_print_line(FILE *f, json_t *j);

/* A JSON string of s, which may hold anything a worker wrote (a file name,
 * a log line): s itself when it is valid UTF-8, else s with every byte
 * outside printable ASCII written as \xNN. NULL only when out of memory. */
json_t *cb_json_text(const char *s);

/* Small getters that borrow: NULL / fallback when absent or of another type. */
const char *cb_json_str(const json_t *obj, const char *key);
json_int_t cb_json_int(const json_t *obj, const char *key, json_int_t fallback);

#endif
