/* csv.h: a small RFC 4180 reader (quoted fields, doubled quotes, embedded
 * newlines, CRLF). Errors carry line and column. */
#ifndef CB_CSV_H
#define CB_CSV_H

#include <stddef.h>

#include "caliber.h"

struct cb_csv_row {
	size_t line;        /* 1-based line on which the record starts */
	size_t nfields;
	char **fields;      /* NUL-terminated, unescaped */
};

struct cb_csv {
	size_t nrows;       /* the header is rows[0] */
	struct cb_csv_row *rows;
};

/* Parse buf (len bytes). name is used in errors ("name:line:col: what").
 * Every record must have as many fields as the first. An empty final line
 * is allowed; blank lines elsewhere are records and therefore errors. A NUL
 * byte in a field and a byte order mark at the start are refused. */
int cb_csv_parse(const char *buf, size_t len, const char *name, struct cb_csv *csv,
		 struct cb_err *err);
void cb_csv_release(struct cb_csv *csv);

/* Append one field, quoted when it needs to be, to a growing string buffer;
 * used by writers so that what they write reads back the same. */
struct cb_buf;
int cb_csv_put_field(struct cb_buf *b, const char *field);

#endif
