/* sums.c: SHA256SUMS and SEAL as text (sums.h). */
#include "sums.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/strindex.h"

int cb_sums_listable(const char *rel)
{
	return *rel && !strpbrk(rel, "\\\n");
}

int cb_sorted_has_below(const void *base, size_t n, size_t size, const char *(*key)(const void *),
			const char *dir)
{
	size_t len = strlen(dir), i;
	char *prefix = malloc(len + 2);
	int below;

	if (!prefix)
		return 1;   /* out of memory: claim the folder is used rather than refuse it */
	memcpy(prefix, dir, len);
	memcpy(prefix + len, "/", 2);
	i = cb_lower_bound(base, n, size, key, prefix);
	below = i < n && strncmp(key((const char *)base + i * size), prefix, len + 1) == 0;
	free(prefix);
	return below;
}

static const char *line_key(const void *p)
{
	return ((const struct cb_sum_line *)p)->rel;
}

size_t cb_sums_find(const struct cb_sums *s, const char *rel)
{
	size_t i = cb_lower_bound(s->v, s->n, sizeof(*s->v), line_key, rel);

	return i < s->n && strcmp(s->v[i].rel, rel) == 0 ? i : s->n;
}

/* By path, then by line: of two lines of one path the first comes first. */
static int cmp_line(const void *a, const void *b)
{
	const struct cb_sum_line *x = a, *y = b;
	int c = strcmp(x->rel, y->rel);

	return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

void cb_sums_release(struct cb_sums *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		free(s->v[i].rel);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

int cb_sums_parse(const char *buf, size_t len, const char *name, struct cb_sums *out, struct cb_err *err)
{
	const char *p = buf, *end = buf + len;
	size_t lineno = 0, cap = 0, i;

	out->v = NULL;
	out->n = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n;
		struct cb_sum_line *l;

		lineno++;
		if (!nl) {
			cb_sums_release(out);
			return cb_fail(err, "%s:%zu: line is not terminated", name, lineno);
		}
		n = (size_t)(nl - p);
		if (n < 67 || p[64] != ' ' || (p[65] != ' ' && p[65] != '*') || memchr(p, '\0', n)) {
			cb_sums_release(out);
			return cb_fail(err, "%s:%zu: not a sha256sum line", name, lineno);
		}
		if (out->n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct cb_sum_line *nv = realloc(out->v, ncap * sizeof(*nv));
			if (!nv) {
				cb_sums_release(out);
				return cb_fail(err, "%s: out of memory", name);
			}
			out->v = nv;
			cap = ncap;
		}
		l = &out->v[out->n];
		memcpy(l->hex, p, 64);
		l->hex[64] = '\0';
		if (!cb_is_hex(l->hex, 64)) {
			cb_sums_release(out);
			return cb_fail(err, "%s:%zu: not a SHA-256 digest", name, lineno);
		}
		l->rel = strndup(p + 66, n - 66);
		l->line = lineno;
		if (!l->rel) {
			cb_sums_release(out);
			return cb_fail(err, "%s: out of memory", name);
		}
		out->n++;
		p = nl + 1;
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_line);
	for (i = 1; i < out->n; i++)
		if (strcmp(out->v[i - 1].rel, out->v[i].rel) == 0) {
			size_t first = out->v[i - 1].line, again = out->v[i].line;
			char *rel = out->v[i].rel;
			out->v[i].rel = NULL;
			cb_sums_release(out);
			cb_fail(err, "%s:%zu: %s is listed twice (first on line %zu)", name, again, rel, first);
			free(rel);
			return -1;
		}
	return 0;
}

void cb_seal_record_release(struct cb_seal_record *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->ndirs; i++)
		free(r->dirs[i]);
	free(r->dirs);
	memset(r, 0, sizeof(*r));
}

/* "files N": N a decimal count without sign or leading zero. */
static int parse_count(const char *s, size_t n, size_t *out)
{
	size_t v = 0, i;

	if (n == 0 || n > 19 || (s[0] == '0' && n > 1))
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (size_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

int cb_seal_record_parse(const char *buf, size_t len, const char *name, struct cb_seal_record *out,
			 struct cb_err *err)
{
	static const char head[] = "caliber-seal ";
	const char *p = buf, *end = buf + len;
	size_t lineno = 0, cap = 0;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n;

		lineno++;
		if (!nl) {
			cb_seal_record_release(out);
			return cb_fail(err, "%s:%zu: line is not terminated", name, lineno);
		}
		n = (size_t)(nl - p);
		if (memchr(p, '\0', n)) {
			cb_seal_record_release(out);
			return cb_fail(err, "%s:%zu: a NUL byte", name, lineno);
		}
		if (lineno == 1) {
			if (n != sizeof(head) || memcmp(p, head, sizeof(head) - 1) != 0 || p[n - 1] != '0' + CB_SEAL_FORMAT) {
				cb_seal_record_release(out);
				return cb_fail(err, "%s:1: expected 'caliber-seal %d' (the seal formats this caliber reads: 1 without SEAL, 2)",
					       name, CB_SEAL_FORMAT);
			}
			out->format = CB_SEAL_FORMAT;
		} else if (lineno == 2) {
			if (n < 7 || memcmp(p, "files ", 6) != 0 || parse_count(p + 6, n - 6, &out->files) < 0 ||
			    out->files == 0) {
				cb_seal_record_release(out);
				return cb_fail(err, "%s:2: expected 'files N', N the lines of SHA256SUMS", name);
			}
		} else {
			char *dir, **nv;

			if (n < 5 || memcmp(p, "dir ", 4) != 0) {
				cb_seal_record_release(out);
				return cb_fail(err, "%s:%zu: expected 'dir PATH'", name, lineno);
			}
			dir = strndup(p + 4, n - 4);
			if (!dir) {
				cb_seal_record_release(out);
				return cb_fail(err, "%s: out of memory", name);
			}
			if (!cb_sums_listable(dir) || (out->ndirs && strcmp(out->dirs[out->ndirs - 1], dir) >= 0)) {
				free(dir);
				cb_seal_record_release(out);
				return cb_fail(err, "%s:%zu: folders are listed once each, sorted", name, lineno);
			}
			if (out->ndirs == cap) {
				cap = cap ? cap * 2 : 8;
				nv = realloc(out->dirs, cap * sizeof(*nv));
				if (!nv) {
					free(dir);
					cb_seal_record_release(out);
					return cb_fail(err, "%s: out of memory", name);
				}
				out->dirs = nv;
			}
			out->dirs[out->ndirs++] = dir;
		}
		p = nl + 1;
	}
	if (lineno < 2) {
		cb_seal_record_release(out);
		return cb_fail(err, "%s: incomplete: expected 'caliber-seal %d' and 'files N'", name, CB_SEAL_FORMAT);
	}
	return 0;
}

char *cb_seal_record_format(size_t files, char *const *dirs, size_t ndirs, size_t *len)
{
	struct cb_buf b = CB_BUF_INIT;
	size_t i;

	cb_buf_addf(&b, "caliber-seal %d\nfiles %zu\n", CB_SEAL_FORMAT, files);
	for (i = 0; i < ndirs; i++)
		cb_buf_addf(&b, "dir %s\n", dirs[i]);
	if (b.oom) {
		cb_buf_release(&b);
		return NULL;
	}
	return cb_buf_detach(&b, len);
}
