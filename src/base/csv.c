/* csv.c: RFC 4180 reader and field writer. */
#include "csv.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* Parser state: a cursor over the buffer that knows its line and column. */
struct cursor {
	const char *p, *end;
	size_t line, col;
	const char *name;
};

static int at_eol(const struct cursor *c)
{
	return c->p < c->end && (*c->p == '\n' || (*c->p == '\r' && c->p + 1 < c->end && c->p[1] == '\n'));
}

static void advance(struct cursor *c)
{
	if (*c->p == '\n') {
		c->line++;
		c->col = 1;
	} else {
		c->col++;
	}
	c->p++;
}

static void row_free(struct cb_csv_row *row)
{
	size_t j;

	for (j = 0; j < row->nfields; j++)
		free(row->fields[j]);
	free(row->fields);
}

static int add_field(struct cb_csv_row *row, struct cb_buf *field, const char *name, struct cb_err *err)
{
	char **f = realloc(row->fields, (row->nfields + 1) * sizeof(*f));
	char *s;

	if (!f)
		return cb_fail(err, "%s: out of memory", name);
	row->fields = f;
	s = cb_buf_detach(field, NULL);
	if (!s)
		return cb_fail(err, "%s: out of memory", name);
	row->fields[row->nfields++] = s;
	return 0;
}

/* Parse one field at the cursor into out; stops before ',' / EOL / EOF. */
static int parse_field(struct cursor *c, struct cb_buf *out, struct cb_err *err)
{
	if (c->p < c->end && *c->p == '"') {
		size_t qline = c->line, qcol = c->col;
		advance(c);
		for (;;) {
			if (c->p >= c->end)
				return cb_fail(err, "%s:%zu:%zu: quoted field is not closed", c->name, qline, qcol);
			if (*c->p == '"') {
				if (c->p + 1 < c->end && c->p[1] == '"') {
					cb_buf_add(out, "\"", 1);
					advance(c);
					advance(c);
					continue;
				}
				advance(c);
				break;
			}
			if (*c->p == '\0')
				return cb_fail(err, "%s:%zu:%zu: a NUL byte in a field", c->name, c->line, c->col);
			cb_buf_add(out, c->p, 1);
			advance(c);
		}
		if (c->p < c->end && *c->p != ',' && !at_eol(c))
			return cb_fail(err, "%s:%zu:%zu: unexpected character after closing quote",
				       c->name, c->line, c->col);
		return 0;
	}
	while (c->p < c->end && *c->p != ',' && !at_eol(c)) {
		if (*c->p == '"')
			return cb_fail(err, "%s:%zu:%zu: quote inside an unquoted field", c->name, c->line, c->col);
		if (*c->p == '\r' || *c->p == '\n')
			return cb_fail(err, "%s:%zu:%zu: bare carriage return", c->name, c->line, c->col);
		if (*c->p == '\0')
			return cb_fail(err, "%s:%zu:%zu: a NUL byte in a field", c->name, c->line, c->col);
		cb_buf_add(out, c->p, 1);
		advance(c);
	}
	return 0;
}

int cb_csv_parse(const char *buf, size_t len, const char *name, struct cb_csv *csv,
		 struct cb_err *err)
{
	struct cursor c = { buf, buf + len, 1, 1, name };
	struct cb_buf field = CB_BUF_INIT;

	memset(csv, 0, sizeof(*csv));
	if (len == 0)
		return cb_fail(err, "%s: empty file, expected a header row", name);
	/* An editor's invisible mark would otherwise become part of the first
	 * column's name. */
	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
		return cb_fail(err, "%s:1:1: starts with a UTF-8 byte order mark (EF BB BF); save it without one", name);
	while (c.p < c.end) {
		struct cb_csv_row row = { c.line, 0, NULL };
		struct cb_csv_row *rows;

		for (;;) {
			if (parse_field(&c, &field, err) < 0 || add_field(&row, &field, name, err) < 0) {
				cb_buf_release(&field);
				row_free(&row);
				cb_csv_release(csv);
				return -1;
			}
			if (c.p < c.end && *c.p == ',') {
				advance(&c);
				continue;
			}
			break;
		}
		if (c.p < c.end) {   /* at an end of line */
			if (*c.p == '\r')
				advance(&c);
			advance(&c);
		}
		if (csv->nrows && row.nfields != csv->rows[0].nfields) {
			size_t l = row.line, have = row.nfields, want = csv->rows[0].nfields;
			row_free(&row);
			cb_csv_release(csv);
			return cb_fail(err, "%s:%zu:1: %zu fields, the header has %zu", name, l, have, want);
		}
		rows = realloc(csv->rows, (csv->nrows + 1) * sizeof(*rows));
		if (!rows) {
			row_free(&row);
			cb_csv_release(csv);
			return cb_fail(err, "%s: out of memory", name);
		}
		csv->rows = rows;
		csv->rows[csv->nrows++] = row;
	}
	return 0;
}

void cb_csv_release(struct cb_csv *csv)
{
	size_t i;

	if (!csv)
		return;
	for (i = 0; i < csv->nrows; i++)
		row_free(&csv->rows[i]);
	free(csv->rows);
	memset(csv, 0, sizeof(*csv));
}

int cb_csv_put_field(struct cb_buf *b, const char *field)
{
	const char *s;

	if (!strpbrk(field, ",\"\r\n"))
		return cb_buf_adds(b, field);
	cb_buf_add(b, "\"", 1);
	for (s = field; *s; s++) {
		if (*s == '"')
			cb_buf_add(b, "\"", 1);
		cb_buf_add(b, s, 1);
	}
	return cb_buf_add(b, "\"", 1);
}
