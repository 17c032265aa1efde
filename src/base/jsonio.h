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

/* One kind of row of a JSON Lines file, for cb_json_rows: its size; parse
 * fills a zeroed row from one line (path and lineno for its errors), and
 * leaves it for release to free even when it fails; name is the row's
 * name, which no two rows of a file may share. */
struct cb_json_row_kind {
	size_t size;
	int (*parse)(const char *line, const char *path, size_t lineno, void *row, struct cb_err *err);
	void (*release)(void *row);
	const char *(*name)(const void *row);
};

/* Every non-empty line of the text data (len bytes of path, one JSON
 * document a line) as a row of kind, into *rows (a new array of *n rows,
 * NULL when none; the caller releases each and frees it). A NUL byte, a
 * line parse refuses and a row named twice are refused ("path:line: row
 * 'x' appears twice"), and then nothing is kept. */
int cb_json_rows(const char *data, size_t len, const char *path, const struct cb_json_row_kind *kind,
		 void **rows, size_t *n, struct cb_err *err);

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
