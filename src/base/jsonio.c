/* jsonio.c: strict loading and deterministic writing of JSON. */
#include "jsonio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"

/* Read whole, then parse: json_load_file reads a character at a time
 * through stdio, which was a tenth of reaccount's time on its receipts. */
json_t *cb_json_load_file(const char *path, struct cb_err *err)
{
	char *buf;
	size_t len;
	json_t *j;

	if (cb_read_file(path, &buf, &len, err) < 0)
		return NULL;
	j = cb_json_load_buf(buf, len, path, err);
	free(buf);
	return j;
}

/* jansson takes a NUL byte for the end of the text ("... near end of
 * file"): one is refused first, at its own line and column. */
json_t *cb_json_load_buf(const char *buf, size_t len, const char *name, struct cb_err *err)
{
	const char *nul = memchr(buf, '\0', len), *p, *bol = buf;
	json_error_t je;
	json_t *j;
	size_t line = 1;

	if (nul) {
		for (p = buf; p < nul; p++)
			if (*p == '\n') {
				line++;
				bol = p + 1;
			}
		cb_fail(err, "%s:%zu:%zu: a NUL byte (JSON text holds none)", name, line, (size_t)(nul - bol) + 1);
		return NULL;
	}
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		cb_fail(err, "%s:%d:%d: %s", name, je.line, je.column, je.text);
	return j;
}

/* Find the first real in j and describe its path in buf. */
static int find_real(const json_t *j, char *path, size_t cap)
{
	size_t len = strlen(path);

	if (json_is_real(j))
		return 1;
	if (json_is_object(j)) {
		const char *k;
		const json_t *v;
		json_object_foreach((json_t *)j, k, v) {
			snprintf(path + len, cap - len, "%s%s", len ? "." : "", k);
			if (find_real(v, path, cap))
				return 1;
			path[len] = '\0';
		}
	} else if (json_is_array(j)) {
		size_t i;
		const json_t *v;
		json_array_foreach((json_t *)j, i, v) {
			snprintf(path + len, cap - len, "[%zu]", i);
			if (find_real(v, path, cap))
				return 1;
			path[len] = '\0';
		}
	}
	return 0;
}

char *cb_json_dumps(const json_t *j, struct cb_err *err)
{
	char path[512] = "";
	char *s, *out;
	size_t n;

	if (find_real(j, path, sizeof(path))) {
		cb_fail(err, "%s: a real number cannot be written deterministically; store integers",
			path[0] ? path : "(top)");
		return NULL;
	}
	s = json_dumps(j, JSON_SORT_KEYS | JSON_INDENT(2));
	if (!s) {
		cb_fail(err, "json: cannot serialise");
		return NULL;
	}
	n = strlen(s);
	out = realloc(s, n + 2);
	if (!out) {
		free(s);
		cb_fail(err, "json: out of memory");
		return NULL;
	}
	out[n] = '\n';
	out[n + 1] = '\0';
	return out;
}

int cb_json_write_atomic(const char *path, const json_t *j, unsigned mode, struct cb_err *err)
{
	char *s = cb_json_dumps(j, err);
	int rc;

	if (!s)
		return cb_prefix(err, "%s", path);
	rc = cb_write_atomic(path, s, strlen(s), (mode_t)mode, err);
	free(s);
	return rc;
}

const char *cb_json_str(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

json_int_t cb_json_int(const json_t *obj, const char *key, json_int_t fallback)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? json_integer_value(v) : fallback;
}

void cb_json_print_line(FILE *f, json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	if (s)
		fprintf(f, "%s\n", s);
	free(s);
	json_decref(j);
}

json_t *cb_json_text(const char *s)
{
	json_t *j = json_string(s);
	char *esc, *p;

	if (j || !s)
		return j;
	esc = malloc(4 * strlen(s) + 1);
	if (!esc)
		return NULL;
	for (p = esc; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c < 0x7f && c != '\\')
			*p++ = (char)c;
		else
			p += sprintf(p, "\\x%02x", c);
	}
	*p = '\0';
	j = json_string(esc);
	free(esc);
	return j;
}

/* The rows cb_json_rows has read so far. */
struct rows {
	const struct cb_json_row_kind *kind;
	const char *path;
	char *v;             /* n rows of kind->size bytes */
	size_t n;
};

/* Free every row read so far. */
static void rows_release(struct rows *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		r->kind->release(r->v + i * r->kind->size);
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

/* Parse one line into a new row at the end of r, unless its name was seen. */
static int add_row(struct rows *r, const char *line, size_t lineno, struct cb_err *err)
{
	const struct cb_json_row_kind *k = r->kind;
	char *v = realloc(r->v, (r->n + 1) * k->size), *row;
	size_t i;

	if (!v)
		return cb_fail(err, "%s: out of memory", r->path);
	r->v = v;
	row = v + r->n * k->size;
	memset(row, 0, k->size);
	if (k->parse(line, r->path, lineno, row, err) < 0) {
		k->release(row);
		return -1;
	}
	for (i = 0; i < r->n; i++)
		if (strcmp(k->name(v + i * k->size), k->name(row)) == 0) {
			cb_fail(err, "%s:%zu: row '%s' appears twice", r->path, lineno, k->name(row));
			k->release(row);
			return -1;
		}
	r->n++;
	return 0;
}

int cb_json_rows(const char *data, size_t len, const char *path, const struct cb_json_row_kind *kind,
		 void **rows, size_t *n, struct cb_err *err)
{
	struct rows r = { kind, path, NULL, 0 };
	char *buf = strndup(data, len), *p, *nl;
	size_t lineno = 0;
	int rc = 0;

	*rows = NULL;
	*n = 0;
	if (!buf)
		return cb_fail(err, "%s: out of memory", path);
	if (strlen(buf) != len) {
		free(buf);
		return cb_fail(err, "%s: a NUL byte in a text file", path);
	}
	for (p = buf; rc == 0 && *p; p = nl ? nl + 1 : p + strlen(p)) {
		lineno++;
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (*p)
			rc = add_row(&r, p, lineno, err);
		if (!nl)
			break;
	}
	free(buf);
	if (rc < 0) {
		rows_release(&r);
		return -1;
	}
	*rows = r.v;
	*n = r.n;
	return 0;
}
