/* ttgir_ops.c: the topology ops of a TTGIR module with their locations and
 * layouts (ttgir_ops.h). The op lines are the ones ttgir.c counts; this
 * file reads what is on them, and the aliases (`#name = ...` lines) they
 * refer to, with a recursive descent over MLIR's location syntax:
 *
 *   loc      = 'unknown' | '#' alias | 'callsite(' loc 'at' loc ')'
 *            | 'fused' ('<' ... '>')? '[' loc (',' loc)* ']'
 *            | string ':' int (':' int)? ('to' (int? ':')? int)?
 *            | string ('(' loc ')')?
 *
 * An alias names `loc(<loc>)`. Every resolution has a budget of steps and
 * frames, so that aliases that refer to each other, or to themselves, end
 * it instead of looping or growing without bound. */
#define _GNU_SOURCE

#include "ttgir_ops.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/fsutil.h"
#include "base/sha.h"
#include "base/strindex.h"
#include "ttgir.h"

/* Bounds on one location's resolution and one layout's expansion. */
enum {
	MAX_DEPTH = 64,          /* nesting of locations and aliases */
	MAX_STEPS = 4096,        /* locations visited while resolving one op's loc */
	MAX_FRAMES = 64,         /* frames kept in one chain */
	MAX_EXPANDED = 1 << 16   /* bytes of one expanded layout */
};

/* `#name = value` at the start of a line: name without the '#'. */
struct alias {
	const char *name, *val;
	size_t nlen, vlen;
	size_t order;            /* its place in the file: the first definition wins */
};

struct ctx {
	struct alias *a;
	size_t n;
};

/* A chain being built, and what is left of its budget. */
struct frames {
	struct cb_ir_frame *v;
	size_t n, cap;
	int steps, fused, oom;
};

/* Characters of an alias name after its '#' (MLIR's bare-id, '.', '$', '-'). */
static int is_alias_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '.' || c == '$' || c == '-';
}

/* Blanks inside a line ('\r' of a CRLF line end among them). */
static int is_blank_char(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* p past the blanks that start p[0..e). */
static const char *skip_blanks(const char *p, const char *e)
{
	while (p < e && is_blank_char(*p))
		p++;
	return p;
}

/* Whether p[0..e) starts with the word s. */
static int starts(const char *p, const char *e, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(e - p) >= n && memcmp(p, s, n) == 0;
}

/* The end of the string that opens at p (a '"'), just past its closing
 * quote; NULL when it does not close on the line. */
static const char *string_end(const char *p, const char *e)
{
	for (p++; p < e; p++) {
		if (*p == '\\' && p + 1 < e)
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

/* The contents of the string p[0..e) (quotes included) with MLIR's escapes
 * undone: \XX (two hex digits) is that byte, \c is c; a NUL byte becomes
 * '?', so that the result is a C string. */
static char *unescape(const char *p, const char *e)
{
	char *out = malloc((size_t)(e - p) + 1), *o = out;

	if (!out)
		return NULL;
	for (p++, e--; p < e; p++) {
		char c = *p;
		if (c == '\\' && p + 1 < e) {
			int h = cb_hex_value(p[1]), l = p + 2 < e ? cb_hex_value(p[2]) : -1;
			if (h >= 0 && l >= 0) {
				c = (char)(h * 16 + l);
				p += 2;
			} else {
				c = *++p;
			}
		}
		*o++ = c ? c : '?';
	}
	*o = '\0';
	return out;
}

/* Decimal digits at *p into *v (capped, never overflowing); 0 when none. */
static int read_int(const char **p, const char *e, long long *v)
{
	const char *s = *p;

	*v = 0;
	while (*p < e && **p >= '0' && **p <= '9') {
		if (*v < 1000000000000LL)
			*v = *v * 10 + (**p - '0');
		(*p)++;
	}
	return *p > s;
}

/* Aliases by name, then by their place in the file. */
static int cmp_alias(const void *x, const void *y)
{
	const struct alias *a = x, *b = y;
	size_t n = a->nlen < b->nlen ? a->nlen : b->nlen;
	int c = memcmp(a->name, b->name, n);

	if (c)
		return c;
	if (a->nlen != b->nlen)
		return a->nlen < b->nlen ? -1 : 1;
	return (a->order > b->order) - (a->order < b->order);
}

/* An alias's name against a counted name (its order not looked at), for
 * cb_lower_bound_by: of equal names the first definition comes first. */
static int cmp_alias_name(const void *elem, const void *key)
{
	const struct alias *a = elem, *k = key;
	size_t n = a->nlen < k->nlen ? a->nlen : k->nlen;
	int d = memcmp(a->name, k->name, n);

	return d ? d : (a->nlen > k->nlen) - (a->nlen < k->nlen);
}

/* The first definition of alias name[0..n), or NULL. */
static const struct alias *find_alias(const struct ctx *c, const char *name, size_t n)
{
	const struct alias key = { .name = name, .nlen = n };
	size_t lo = cb_lower_bound_by(c->a, c->n, sizeof(*c->a), cmp_alias_name, &key);

	return lo < c->n && cmp_alias_name(&c->a[lo], &key) == 0 ? &c->a[lo] : NULL;
}

/* Every `#name = value` line of data into c, sorted by name. */
static int collect_aliases(const char *data, size_t len, struct ctx *c)
{
	const char *p = data, *end = data + len;
	size_t cap = 0;

	c->a = NULL;
	c->n = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end, *q = p + 1;

		if (*p == '#') {
			while (q < e && is_alias_char(*q))
				q++;
			if (q > p + 1 && (size_t)(e - q) >= 3 && memcmp(q, " = ", 3) == 0) {
				const char *v = q + 3, *ve = e;
				while (ve > v && is_blank_char(ve[-1]))
					ve--;
				if (c->n == cap) {
					struct alias *g = realloc(c->a, (cap = cap ? 2 * cap : 64) * sizeof(*g));
					if (!g)
						return -1;
					c->a = g;
				}
				c->a[c->n] = (struct alias){ p + 1, v, (size_t)(q - p - 1), (size_t)(ve - v), c->n };
				c->n++;
			}
		}
		p = nl ? nl + 1 : end;
	}
	if (c->n)
		qsort(c->a, c->n, sizeof(*c->a), cmp_alias);
	return 0;
}

/* ---- locations ---------------------------------------------------------- */

/* Free a chain's frames and zero it. */
static void frames_release(struct frames *fr)
{
	size_t i;

	for (i = 0; i < fr->n; i++) {
		free(fr->v[i].file);
		free(fr->v[i].name);
	}
	free(fr->v);
	memset(fr, 0, sizeof(*fr));
}

/* Append a frame for the file string s[0..se) at line:col. */
static void add_frame(struct frames *fr, const char *s, const char *se, long long line, long long col)
{
	struct cb_ir_frame *f;

	if (fr->n == MAX_FRAMES || fr->oom)
		return;
	if (fr->n == fr->cap) {
		size_t cap = fr->cap ? 2 * fr->cap : 8;
		f = realloc(fr->v, cap * sizeof(*f));
		if (!f) {
			fr->oom = 1;
			return;
		}
		fr->v = f;
		fr->cap = cap;
	}
	f = &fr->v[fr->n];
	f->file = unescape(s, se);
	f->line = line;
	f->col = col;
	f->name = NULL;
	if (!f->file)
		fr->oom = 1;
	else
		fr->n++;
}

static const char *parse_loc(const struct ctx *c, const char *p, const char *e, int depth, struct frames *fr);

/* `loc(` LOC `)` in p[0..e) (an alias's value); whether it reads whole. */
static int parse_wrapped(const struct ctx *c, const char *p, const char *e, int depth, struct frames *fr)
{
	p = skip_blanks(p, e);
	if (!starts(p, e, "loc("))
		return 0;
	p = parse_loc(c, p + 4, e, depth + 1, fr);
	p = p ? skip_blanks(p, e) : NULL;
	return p && p < e && *p == ')' && skip_blanks(p + 1, e) == e;
}

/* The members of a fused location, from just after its '['. The first
 * member that has frames gives them; the others are read and dropped. */
static const char *parse_fused(const struct ctx *c, const char *p, const char *e, int depth, struct frames *fr)
{
	size_t before = fr->n;

	fr->fused = 1;
	for (;;) {
		struct frames other = { NULL, 0, 0, fr->steps, 0, 0 };
		int mine = fr->n == before;

		p = parse_loc(c, p, e, depth + 1, mine ? fr : &other);
		if (!mine) {
			fr->steps = other.steps;
			fr->oom |= other.oom;
			frames_release(&other);
		}
		if (!p)
			return NULL;
		p = skip_blanks(p, e);
		if (p < e && *p == ']')
			return p + 1;
		if (p >= e || *p != ',')
			return NULL;
		p++;
	}
}

/* A file position after its string s[0..se): `:line(:col)?`, and a range's
 * end (`to line:col`, `to :col`, `to line`), which is read and dropped. */
static const char *parse_position(const char *s, const char *se, const char *p, const char *e, struct frames *fr)
{
	long long line, col = 0, dummy;
	const char *q;

	p++;
	if (!read_int(&p, e, &line))
		return NULL;
	if (p < e && *p == ':') {
		p++;
		if (!read_int(&p, e, &col))
			return NULL;
	}
	q = skip_blanks(p, e);
	if (starts(q, e, "to") && q + 2 < e && is_blank_char(q[2])) {
		q = skip_blanks(q + 2, e);
		(void)read_int(&q, e, &dummy);
		if (q < e && *q == ':') {
			q++;
			if (!read_int(&q, e, &dummy))
				return NULL;
		}
		p = q;
	}
	add_frame(fr, s, se, line, col);
	return p;
}

/* One location at p; returns where it ends, NULL when it cannot be read
 * (a syntax error, an undefined alias, the budget spent). */
static const char *parse_loc(const struct ctx *c, const char *p, const char *e, int depth, struct frames *fr)
{
	p = skip_blanks(p, e);
	if (depth > MAX_DEPTH || ++fr->steps > MAX_STEPS || p >= e)
		return NULL;
	if (starts(p, e, "unknown"))
		return p + 7;
	if (*p == '#') {
		const char *q = p + 1;
		const struct alias *a;

		while (q < e && is_alias_char(*q))
			q++;
		a = find_alias(c, p + 1, (size_t)(q - p - 1));
		return a && parse_wrapped(c, a->val, a->val + a->vlen, depth, fr) ? q : NULL;
	}
	if (starts(p, e, "callsite(")) {
		p = parse_loc(c, p + 9, e, depth + 1, fr);
		p = p ? skip_blanks(p, e) : NULL;
		if (!p || !starts(p, e, "at") || p + 2 >= e || !is_blank_char(p[2]))
			return NULL;
		p = parse_loc(c, p + 2, e, depth + 1, fr);
		p = p ? skip_blanks(p, e) : NULL;
		return p && p < e && *p == ')' ? p + 1 : NULL;
	}
	if (starts(p, e, "fused")) {
		p += 5;
		if (p < e && *p == '<') {
			int d = 0;
			for (; p < e; p++) {
				if (*p == '"' && !(p = string_end(p, e)))
					return NULL;
				d += *p == '<' ? 1 : *p == '>' ? -1 : 0;
				if (!d)
					break;
			}
			if (p++ >= e)
				return NULL;
		}
		p = skip_blanks(p, e);
		return p < e && *p == '[' ? parse_fused(c, p + 1, e, depth, fr) : NULL;
	}
	if (*p == '"') {
		const char *s = p, *se = string_end(p, e);
		size_t before = fr->n;

		if (!se)
			return NULL;
		if (se < e && *se == ':')
			return parse_position(s, se, se, e, fr);
		if (se >= e || *se != '(')
			return se;    /* a name with no location inside */
		p = parse_loc(c, se + 1, e, depth + 1, fr);
		p = p ? skip_blanks(p, e) : NULL;
		if (!p || p >= e || *p != ')')
			return NULL;
		if (fr->n > before && !fr->v[before].name && !(fr->v[before].name = unescape(s, se)))
			fr->oom = 1;
		return p + 1;
	}
	return NULL;
}

/* ---- layouts ------------------------------------------------------------ */

/* text[0..n) with every alias replaced by its definition, recursively (a
 * location alias is left as it is), into b; past MAX_EXPANDED bytes or
 * MAX_DEPTH levels the rest is copied as written. */
static void expand(const struct ctx *c, const char *p, const char *e, int depth, struct cb_buf *b)
{
	while (p < e) {
		const char *q = p + 1;
		const struct alias *a;

		if (*p == '"') {
			q = string_end(p, e);
			q = q ? q : e;
			cb_buf_add(b, p, (size_t)(q - p));
			p = q;
			continue;
		}
		if (*p != '#') {
			cb_buf_add(b, p, 1);
			p++;
			continue;
		}
		while (q < e && is_alias_char(*q))
			q++;
		a = find_alias(c, p + 1, (size_t)(q - p - 1));
		if (a && depth < MAX_DEPTH && b->len < MAX_EXPANDED && !starts(a->val, a->val + a->vlen, "loc("))
			expand(c, a->val, a->val + a->vlen, depth + 1, b);
		else
			cb_buf_add(b, p, (size_t)(q - p));
		p = q;
	}
}

/* The layout written p[0..e): its text, definition and expansion. */
static int set_layout(const struct ctx *c, const char *p, const char *e, struct cb_ir_layout *l)
{
	struct cb_buf b = CB_BUF_INIT;
	const struct alias *a = NULL;
	const char *q = p + 1;

	while (q < e && is_alias_char(*q))
		q++;
	if (*p == '#' && q == e)
		a = find_alias(c, p + 1, (size_t)(e - p - 1));
	l->text = strndup(p, (size_t)(e - p));
	l->def = a ? strndup(a->val, a->vlen) : strndup(p, (size_t)(e - p));
	expand(c, a ? a->val : p, a ? a->val + a->vlen : e, 0, &b);
	l->expanded = cb_buf_detach(&b, NULL);
	cb_buf_release(&b);
	return l->text && l->def && l->expanded ? 0 : -1;
}

/* The end of the bracketed group that opens at p ('<', '{', '[' or '('),
 * just past its closing bracket, strings skipped; *comma is set to the last
 * comma at its own level. NULL when it does not close. */
static const char *group_end(const char *p, const char *e, const char **comma)
{
	int d = 0;

	*comma = NULL;
	for (; p < e; p++) {
		if (*p == '"') {
			if (!(p = string_end(p, e)))
				return NULL;
			p--;
			continue;
		}
		if (strchr("<{[(", *p))
			d++;
		else if (strchr(">}])", *p) && !(*p == '>' && p[-1] == '-'))
			d--;
		else if (*p == ',' && d == 1)
			*comma = p;
		if (!d)
			return p + 1;
	}
	return NULL;
}

/* The source and destination layouts in p[0..e) (the op line after its
 * name, up to its location): the encoding of the first tensor type before
 * the top-level "->" and of the first after it. Pretty (`%x : tensor<..> ->
 * tensor<..>`) and generic (`: (tensor<..>) -> tensor<..>`) forms alike. */
static int read_layouts(const struct ctx *c, const char *p, const char *e, struct cb_ir_op *op)
{
	const char *start = p;
	int arrow = 0;

	while (p < e) {
		const char *q, *comma;

		if (*p == '"') {
			p = string_end(p, e);
			if (!p)
				return 0;
			continue;
		}
		if (starts(p, e, "->")) {
			arrow = 1;
			p += 2;
			continue;
		}
		if (strchr("{[", *p)) {
			if (!(p = group_end(p, e, &comma)))
				return 0;
			continue;
		}
		if (!starts(p, e, "tensor<") || (p > start && is_alias_char(p[-1]))) {
			p++;
			continue;
		}
		q = group_end(p + 6, e, &comma);
		if (!q)
			return 0;
		if (comma) {
			const char *s = skip_blanks(comma + 1, q - 1), *t = q - 1;
			struct cb_ir_layout *l = arrow ? &op->dst : &op->src;
			while (t > s && is_blank_char(t[-1]))
				t--;
			if (t > s && !l->text && set_layout(c, s, t, l) < 0)
				return -1;
		}
		if (arrow)
			return 0;
		p = q;
	}
	return 0;
}

/* ---- the ops ------------------------------------------------------------ */

/* Free what a layout holds. */
static void layout_release(struct cb_ir_layout *l)
{
	free(l->text);
	free(l->def);
	free(l->expanded);
}

/* Where the op line p[0..e)'s own location starts: the "loc(" whose
 * parenthesis closes at the end of the line (blanks aside), or e; *close
 * is set to that ')'. Strings are skipped, so a "loc(" in one is never
 * taken. */
static const char *find_loc(const char *p, const char *e, const char **close)
{
	const char *start = p, *comma;

	while (p < e) {
		if (*p == '"') {
			p = string_end(p, e);
			if (!p)
				return e;
			continue;
		}
		if (starts(p, e, "loc(") && (p == start || !is_alias_char(p[-1]))) {
			const char *q = group_end(p + 3, e, &comma);
			if (q && q[-1] == ')' && skip_blanks(q, e) == e) {
				*close = q - 1;
				return p;
			}
		}
		p++;
	}
	return e;
}

/* The loc written at p ("loc(" ... close, its ')'), resolved. */
static int read_loc(const struct ctx *c, const char *p, const char *close, struct cb_ir_op *op)
{
	struct frames fr = { NULL, 0, 0, 0, 0, 0 };
	const char *in = p + 4, *q;

	op->loc = strndup(in, (size_t)(close - in));
	if (!op->loc)
		return -1;
	q = parse_loc(c, in, close, 0, &fr);
	q = q ? skip_blanks(q, close) : NULL;
	if (fr.oom) {
		frames_release(&fr);
		return -1;
	}
	op->unresolved = q != close;
	op->fused = fr.fused;
	op->frames = fr.v;
	op->nframes = fr.n;
	return 0;
}

/* One op line p[0..e) (the line's end excluded) into op. */
static int read_op(const struct ctx *c, const char *p, const char *e, const char *opname, struct cb_ir_op *op)
{
	const char *close = NULL, *s = skip_blanks(p, e), *loc = find_loc(p, e, &close), *eq, *after;

	while (e > p && (e[-1] == '\r'))
		e--;
	if (s < e && *s == '%' && (eq = memchr(s, '=', (size_t)(e - s)))) {
		const char *t = eq;
		while (t > s && is_blank_char(t[-1]))
			t--;
		op->result = strndup(s, (size_t)(t - s));
		after = eq + 1;
	} else {
		op->result = strdup("");
		after = s;
	}
	if (!op->result)
		return -1;
	after = memmem(after, (size_t)(loc - after), opname, strlen(opname));
	if (after) {
		after += strlen(opname);
		after += after < loc && *after == '"';     /* the generic form's closing quote */
		if (read_layouts(c, after, loc, op) < 0)
			return -1;
	}
	return loc < e ? read_loc(c, loc, close, op) : 0;
}

/* Listed aliases by name. */
static int cmp_ir_alias(const void *x, const void *y)
{
	return strcmp(((const struct cb_ir_alias *)x)->name, ((const struct cb_ir_alias *)y)->name);
}

/* Add to m->layouts (room for c->n entries) every alias that p[0..e)
 * refers to and, through their definitions, every alias those refer to
 * (MAX_DEPTH levels deep); each once, however they refer to each other. */
static int add_layout_aliases(const struct ctx *c, const char *p, const char *e, int depth, struct cb_ir_module *m)
{
	while (p < e) {
		const char *q = p + 1;
		const struct alias *a;
		size_t i;

		if (*p == '"') {
			q = string_end(p, e);
			p = q ? q : e;
			continue;
		}
		if (*p != '#') {
			p++;
			continue;
		}
		while (q < e && is_alias_char(*q))
			q++;
		a = find_alias(c, p + 1, (size_t)(q - p - 1));
		p = q;
		if (!a || starts(a->val, a->val + a->vlen, "loc("))
			continue;
		for (i = 0; i < m->nlayouts; i++)
			if (strlen(m->layouts[i].name) == a->nlen + 1 && memcmp(m->layouts[i].name + 1, a->name, a->nlen) == 0)
				break;
		if (i < m->nlayouts)
			continue;
		m->layouts[m->nlayouts].name = strndup(a->name - 1, a->nlen + 1);
		m->layouts[m->nlayouts].def = strndup(a->val, a->vlen);
		if (!m->layouts[m->nlayouts++].name || !m->layouts[m->nlayouts - 1].def ||
		    (depth < MAX_DEPTH && add_layout_aliases(c, a->val, a->val + a->vlen, depth + 1, m) < 0))
			return -1;
	}
	return 0;
}

/* m->layouts from the layouts of m's ops, sorted. */
static int collect_layouts(const struct ctx *c, struct cb_ir_module *m)
{
	size_t i;
	int k;

	m->layouts = calloc(c->n ? c->n : 1, sizeof(*m->layouts));
	if (!m->layouts)
		return -1;
	for (i = 0; i < m->nops; i++)
		for (k = 0; k < 2; k++) {
			const char *t = k ? m->ops[i].dst.text : m->ops[i].src.text;
			if (t && add_layout_aliases(c, t, t + strlen(t), 0, m) < 0)
				return -1;
		}
	if (m->nlayouts)
		qsort(m->layouts, m->nlayouts, sizeof(*m->layouts), cmp_ir_alias);
	return 0;
}

void cb_ir_module_release(struct cb_ir_module *m)
{
	size_t i, k;

	if (!m)
		return;
	for (i = 0; i < m->nlayouts; i++) {
		free(m->layouts[i].name);
		free(m->layouts[i].def);
	}
	free(m->layouts);
	for (i = 0; i < m->nops; i++) {
		struct cb_ir_op *op = &m->ops[i];
		free(op->result);
		free(op->loc);
		layout_release(&op->src);
		layout_release(&op->dst);
		for (k = 0; k < op->nframes; k++) {
			free(op->frames[k].file);
			free(op->frames[k].name);
		}
		free(op->frames);
	}
	free(m->ops);
	memset(m, 0, sizeof(*m));
}

int cb_ir_module_parse(const char *data, size_t len, const char *op, struct cb_ir_module *m,
		       struct cb_err *err)
{
	struct ctx c;
	size_t *at = NULL, n = 0, i, line = 1;
	const char *seen = data, *end = data + len;
	int rc = 0;

	memset(m, 0, sizeof(*m));
	if (cb_ttgir_op_lines(data, len, op, &at, &n, err) < 0)
		return -1;
	if (collect_aliases(data, len, &c) < 0 || !(m->ops = calloc(n ? n : 1, sizeof(*m->ops)))) {
		free(c.a);
		free(at);
		return cb_fail(err, "out of memory");
	}
	for (i = 0; i < n && rc == 0; i++) {
		const char *p = data + at[i], *nl = memchr(p, '\n', (size_t)(end - p));
		const char *q;

		for (q = seen; (q = memchr(q, '\n', (size_t)(p - q))) != NULL; q++)
			line++;
		seen = p;
		m->ops[i].line = line;
		m->nops++;
		rc = read_op(&c, p, nl ? nl : end, op, &m->ops[i]);
	}
	if (rc == 0)
		rc = collect_layouts(&c, m);
	free(c.a);
	free(at);
	if (rc < 0) {
		cb_ir_module_release(m);
		return cb_fail(err, "out of memory");
	}
	return 0;
}

int cb_ir_module_load(const char *path, const char *op, struct cb_ir_module *m, struct cb_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	if (cb_read_file(path, &buf, &len, err) == 0 && (rc = cb_ir_module_parse(buf, len, op, m, err)) < 0)
		cb_prefix(err, "%s", path);
	free(buf);
	return rc;
}

const struct cb_ir_frame *cb_ir_op_source(const struct cb_ir_op *op)
{
	const char *file;
	size_t i;

	if (!op->nframes)
		return NULL;
	file = op->frames[op->nframes - 1].file;
	for (i = 0; i < op->nframes; i++)
		if (strcmp(op->frames[i].file, file) == 0)
			return &op->frames[i];
	return NULL;
}
