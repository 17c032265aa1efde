/* inventory_scan.c: `caliber inventory --corpus DIR -o FILE`: the inventory
 * CSV of a corpus tree (SPEC section 4), read statically from its pytest
 * files by a small Python tokenizer and statement reader, no Python run. */
#include "inventory_scan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "cmd.h"
#include "csv.h"
#include "digest.h"
#include "fsutil.h"
#include "inventory.h"
#include "opts.h"
#include "walk.h"

/* Deeper nesting than this (f-strings in f-strings, brackets in brackets)
 * is read as "not literal" or refused, so hostile input cannot exhaust the
 * stack; CPython itself stops at 200 brackets. */
#define MAX_NEST 200

/* ------------------------------------------------------------------ */
/* Tokens                                                               */

enum tok_kind { T_NAME, T_NUMBER, T_STRING, T_OP, T_NEWLINE, T_END };

struct tok {
	enum tok_kind kind;
	const char *s;          /* its text in the buffer */
	size_t n;
	size_t line;
	size_t indent;          /* column of the first token of its logical line */
	int bol;                /* the first token of a logical line */
	int simple;             /* T_STRING: no f/b/t prefix, no backslash: value is v */
	const char *v;
	size_t vn;
};

struct bracket {
	char c;
	size_t line;
};

struct lexer {
	const char *name;
	const char *p, *end;
	size_t line;
	size_t nest;            /* f-string replacement fields open */
	struct tok *v;
	size_t n, cap;
	struct bracket *br;     /* brackets open, outermost first */
	size_t nbr, cbr;
};

/* Bytes of the line break at s (LF, CRLF or a lone CR, as Python reads
 * them), 0 when there is none. */
static size_t newline_at(const char *s, const char *end)
{
	if (s >= end)
		return 0;
	if (*s == '\n')
		return 1;
	if (*s == '\r')
		return s + 1 < end && s[1] == '\n' ? 2 : 1;
	return 0;
}

/* Length of the valid UTF-8 sequence at s, 0 when it is not one (overlong
 * forms, surrogates and values past U+10FFFF included). */
static size_t utf8_seq(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xBF;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4;
	else
		return 0;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (left < n || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

/* Python reads source as UTF-8 and refuses NUL bytes: name the line of the
 * first byte that breaks either rule. */
static int check_bytes(const char *buf, size_t len, const char *name, struct cb_err *err)
{
	const char *p = buf, *end = buf + len;
	size_t line = 1;

	while (p < end) {
		size_t nl = newline_at(p, end), n;

		if (nl) {
			p += nl;
			line++;
			continue;
		}
		if (*p == '\0')
			return cb_fail(err, "%s:%zu: a NUL byte (Python source cannot hold one)", name, line);
		n = utf8_seq((const unsigned char *)p, (size_t)(end - p));
		if (!n)
			return cb_fail(err, "%s:%zu: not UTF-8 (byte 0x%02x)", name, line,
				       (unsigned)(unsigned char)*p);
		p += n;
	}
	return 0;
}

static int is_ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static int is_ident_char(unsigned char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

/* Whether s (n bytes) is a string prefix Python accepts; sets fmt (f- and
 * t-strings hold replacement fields) and bytes (no text value). */
static int string_prefix(const char *s, size_t n, int *fmt, int *bytes)
{
	size_t i;
	int r = 0, f = 0, b = 0, u = 0;

	if (n > 2)
		return 0;
	for (i = 0; i < n; i++) {
		switch (s[i]) {
		case 'r': case 'R': r++; break;
		case 'f': case 'F': case 't': case 'T': f++; break;
		case 'b': case 'B': b++; break;
		case 'u': case 'U': u++; break;
		default: return 0;
		}
	}
	if (r > 1 || f > 1 || b > 1 || u > 1 || (u && n > 1) || (f && b))
		return 0;
	*fmt = f;
	*bytes = b;
	return 1;
}

static int push_tok(struct lexer *lx, const struct tok *t, struct cb_err *err)
{
	if (lx->n == lx->cap) {
		size_t ncap = lx->cap ? lx->cap * 2 : 256;
		struct tok *v = realloc(lx->v, ncap * sizeof(*v));
		if (!v)
			return cb_fail(err, "%s: out of memory", lx->name);
		lx->v = v;
		lx->cap = ncap;
	}
	lx->v[lx->n++] = *t;
	return 0;
}

static int unterminated(const struct lexer *lx, size_t open, struct cb_err *err)
{
	return cb_fail(err, "%s:%zu: unterminated string: the file ends before its closing quote",
		       lx->name, open);
}

static int scan_string(struct lexer *lx, int fmt, struct cb_err *err);

/* Scan an f-string's format spec (lx->p just past the ':') up to the '}'
 * that closes its field; a spec may hold fields of its own ("{x:{w}}"). */
static int scan_spec(struct lexer *lx, int triple, size_t open, struct cb_err *err);

/* Scan an f-string replacement field (lx->p just past its '{') up to the
 * '}' that closes it: brackets, nested strings (quoted the same way as the
 * outer one since Python 3.12), a conversion and a format spec. */
static int scan_field(struct lexer *lx, int triple, size_t open, struct cb_err *err)
{
	size_t depth = 0;

	if (++lx->nest > MAX_NEST)
		return cb_fail(err, "%s:%zu: f-strings nested more than %d deep", lx->name, lx->line, MAX_NEST);
	for (;;) {
		unsigned char c;
		size_t nl;

		if (lx->p >= lx->end)
			return unterminated(lx, open, err);
		c = (unsigned char)*lx->p;
		if ((nl = newline_at(lx->p, lx->end))) {
			lx->p += nl;
			lx->line++;
		} else if (c == '\\') {
			lx->p++;
			if ((nl = newline_at(lx->p, lx->end))) {
				lx->p += nl;
				lx->line++;
			} else if (lx->p < lx->end) {
				lx->p++;
			}
		} else if (c == '"' || c == '\'') {
			if (scan_string(lx, 0, err) < 0)
				return -1;
		} else if (is_ident_start(c)) {
			const char *s = lx->p;
			int f, b;

			while (lx->p < lx->end && is_ident_char((unsigned char)*lx->p))
				lx->p++;
			if (lx->p < lx->end && (*lx->p == '"' || *lx->p == '\'') &&
			    string_prefix(s, (size_t)(lx->p - s), &f, &b) &&
			    scan_string(lx, f, err) < 0)
				return -1;
		} else if (c == '(' || c == '[' || c == '{') {
			depth++;
			lx->p++;
		} else if (c == ')' || c == ']') {
			depth -= depth > 0;
			lx->p++;
		} else if (c == '}') {
			lx->p++;
			if (depth == 0) {
				lx->nest--;
				return 0;
			}
			depth--;
		} else if (c == ':' && depth == 0) {
			lx->p++;
			return scan_spec(lx, triple, open, err);
		} else {
			lx->p++;
		}
	}
}

static int scan_spec(struct lexer *lx, int triple, size_t open, struct cb_err *err)
{
	for (;;) {
		size_t nl;

		if (lx->p >= lx->end)
			return unterminated(lx, open, err);
		if ((nl = newline_at(lx->p, lx->end))) {
			if (!triple)
				return cb_fail(err, "%s:%zu: unterminated string: the line ends inside a format spec",
					       lx->name, open);
			lx->p += nl;
			lx->line++;
		} else if (*lx->p == '{') {
			lx->p++;
			if (scan_field(lx, triple, open, err) < 0)
				return -1;
		} else if (*lx->p == '}') {
			lx->p++;
			lx->nest--;
			return 0;
		} else {
			lx->p++;
		}
	}
}

/* Advance past the string literal whose opening quote is at lx->p (its
 * prefix already passed). fmt: an f- or t-string, whose replacement fields
 * are scanned as expressions so that quotes inside them do not end it. */
static int scan_string(struct lexer *lx, int fmt, struct cb_err *err)
{
	char q = *lx->p;
	size_t open = lx->line;
	int triple = lx->end - lx->p >= 3 && lx->p[1] == q && lx->p[2] == q;

	lx->p += triple ? 3 : 1;
	for (;;) {
		size_t nl;
		char c;

		if (lx->p >= lx->end)
			return unterminated(lx, open, err);
		c = *lx->p;
		if (c == '\\') {
			lx->p++;
			if (lx->p >= lx->end)
				return unterminated(lx, open, err);
			if (fmt && (*lx->p == '{' || *lx->p == '}'))
				continue;
			if ((nl = newline_at(lx->p, lx->end))) {
				lx->p += nl;
				lx->line++;
			} else {
				lx->p++;
			}
		} else if ((nl = newline_at(lx->p, lx->end))) {
			if (!triple)
				return cb_fail(err, "%s:%zu: unterminated string: the line ends before its closing quote",
					       lx->name, open);
			lx->p += nl;
			lx->line++;
		} else if (c == q) {
			if (!triple) {
				lx->p++;
				return 0;
			}
			if (lx->end - lx->p >= 3 && lx->p[1] == q && lx->p[2] == q) {
				lx->p += 3;
				return 0;
			}
			lx->p++;
		} else if (fmt && c == '{') {
			if (lx->p + 1 < lx->end && lx->p[1] == '{') {
				lx->p += 2;
				continue;
			}
			lx->p++;
			if (scan_field(lx, triple, open, err) < 0)
				return -1;
		} else {
			lx->p++;
		}
	}
}

/* A string token from its prefix at s to the end of the literal; lx->p is
 * at the opening quote. */
static int lex_string(struct lexer *lx, struct tok *t, const char *s, struct cb_err *err)
{
	const char *q = lx->p;
	size_t qlen = lx->end - q >= 3 && q[1] == q[0] && q[2] == q[0] ? 3 : 1;
	int fmt = 0, bytes = 0;

	string_prefix(s, (size_t)(q - s), &fmt, &bytes);
	if (scan_string(lx, fmt, err) < 0)
		return -1;
	t->kind = T_STRING;
	t->n = (size_t)(lx->p - s);
	t->v = q + qlen;
	t->vn = (size_t)(lx->p - qlen - t->v);
	t->simple = !fmt && !bytes && !memchr(t->v, '\\', t->vn);
	return 0;
}

/* Operators of more than one character, longest first. */
static const char *const long_ops[] = {
	"**=", "//=", ">>=", "<<=", "...",
	"**", "//", ">>", "<<", "<=", ">=", "==", "!=", "->", ":=",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@="
};

/* Open, close and match brackets; Python's own rule, with the line each
 * one opened on for the message. */
static int bracket(struct lexer *lx, char c, struct cb_err *err)
{
	static const char open[] = "([{", close[] = ")]}";
	const char *o = strchr(open, c);

	if (o) {
		if (lx->nbr == lx->cbr) {
			size_t ncap = lx->cbr ? lx->cbr * 2 : 16;
			struct bracket *v = realloc(lx->br, ncap * sizeof(*v));
			if (!v)
				return cb_fail(err, "%s: out of memory", lx->name);
			lx->br = v;
			lx->cbr = ncap;
		}
		lx->br[lx->nbr].c = c;
		lx->br[lx->nbr].line = lx->line;
		lx->nbr++;
		return 0;
	}
	if (!lx->nbr)
		return cb_fail(err, "%s:%zu: unmatched '%c'", lx->name, lx->line, c);
	lx->nbr--;
	if (close[strchr(open, lx->br[lx->nbr].c) - open] != c)
		return cb_fail(err, "%s:%zu: '%c' does not match '%c' opened at line %zu", lx->name,
			       lx->line, c, lx->br[lx->nbr].c, lx->br[lx->nbr].line);
	return 0;
}

/* One token starting at lx->p (not blank, not a comment, not a line
 * break) into t, lx->p moved past it. */
static int lex_token(struct lexer *lx, struct tok *t, struct cb_err *err)
{
	const char *s = lx->p;
	unsigned char c = (unsigned char)*s;
	size_t i;
	int fmt, bytes;

	if (c == '"' || c == '\'')
		return lex_string(lx, t, s, err);
	if (is_ident_start(c)) {
		while (lx->p < lx->end && is_ident_char((unsigned char)*lx->p))
			lx->p++;
		if (lx->p < lx->end && (*lx->p == '"' || *lx->p == '\'') &&
		    string_prefix(s, (size_t)(lx->p - s), &fmt, &bytes))
			return lex_string(lx, t, s, err);
		t->kind = T_NAME;
	} else if ((c >= '0' && c <= '9') || (c == '.' && s + 1 < lx->end && s[1] >= '0' && s[1] <= '9')) {
		int hex = c == '0' && s + 1 < lx->end && (s[1] == 'x' || s[1] == 'X');

		lx->p++;
		while (lx->p < lx->end && (is_ident_char((unsigned char)*lx->p) || *lx->p == '.' ||
					   ((*lx->p == '+' || *lx->p == '-') && !hex &&
					    (lx->p[-1] == 'e' || lx->p[-1] == 'E'))))
			lx->p++;
		t->kind = T_NUMBER;
	} else if (strchr("()[]{}", c)) {
		if (bracket(lx, (char)c, err) < 0)
			return -1;
		lx->p++;
		t->kind = T_OP;
	} else if (strchr("+-*/%@&|^~<>=!.,:;", c)) {
		lx->p++;
		for (i = 0; i < sizeof(long_ops) / sizeof(long_ops[0]); i++) {
			size_t n = strlen(long_ops[i]);
			if ((size_t)(lx->end - s) >= n && memcmp(s, long_ops[i], n) == 0) {
				lx->p = s + n;
				break;
			}
		}
		t->kind = T_OP;
	} else if (c >= 0x20 && c < 0x7f) {
		return cb_fail(err, "%s:%zu: invalid character '%c'", lx->name, lx->line, c);
	} else {
		return cb_fail(err, "%s:%zu: invalid character 0x%02x", lx->name, lx->line, (unsigned)c);
	}
	t->n = (size_t)(lx->p - s);
	return 0;
}

/* Tokenize the whole file: logical lines end in T_NEWLINE (never inside
 * brackets or after a backslash continuation), the first token of each
 * carries the line's indentation, comments and blank lines leave nothing. */
static int lex(struct lexer *lx, struct cb_err *err)
{
	size_t indent = 0;
	int bol = 1, have = 0;
	struct tok t;

	while (lx->p < lx->end) {
		char c = *lx->p;
		size_t nl;

		if (bol) {
			indent = 0;
			for (; lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\f'); lx->p++)
				indent = *lx->p == '\t' ? (indent / 8 + 1) * 8 : *lx->p == '\f' ? 0 : indent + 1;
			bol = 0;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\f') {
			lx->p++;
		} else if (c == '#') {
			while (lx->p < lx->end && !newline_at(lx->p, lx->end))
				lx->p++;
		} else if ((nl = newline_at(lx->p, lx->end))) {
			if (!lx->nbr) {
				if (have) {
					memset(&t, 0, sizeof(t));
					t.kind = T_NEWLINE;
					t.s = lx->p;
					t.line = lx->line;
					if (push_tok(lx, &t, err) < 0)
						return -1;
				}
				have = 0;
				bol = 1;
			}
			lx->p += nl;
			lx->line++;
		} else if (c == '\\') {
			nl = newline_at(lx->p + 1, lx->end);
			if (!nl)
				return cb_fail(err, "%s:%zu: a backslash outside a string must end its line",
					       lx->name, lx->line);
			lx->p += 1 + nl;
			lx->line++;
		} else {
			memset(&t, 0, sizeof(t));
			t.s = lx->p;
			t.line = lx->line;
			t.bol = !have;
			t.indent = indent;
			if (lex_token(lx, &t, err) < 0 || push_tok(lx, &t, err) < 0)
				return -1;
			have = 1;
		}
	}
	if (lx->nbr)
		return cb_fail(err, "%s:%zu: '%c' is never closed: the file ends first", lx->name,
			       lx->br[0].line, lx->br[0].c);
	memset(&t, 0, sizeof(t));
	t.s = lx->p;
	t.line = lx->line;
	t.kind = T_NEWLINE;
	if (have && push_tok(lx, &t, err) < 0)
		return -1;
	t.kind = T_END;
	return push_tok(lx, &t, err);
}

/* ------------------------------------------------------------------ */
/* Expressions: just enough of Python's to read decorators and          */
/* pytestmark: dotted names, calls, lists, tuples and strings; anything */
/* else is "other", skipped with its brackets balanced.                 */

enum nkind { N_OTHER, N_DOTTED, N_CALL, N_SEQ, N_STR };

struct item;

struct node {
	enum nkind kind;
	size_t tok;             /* N_DOTTED: its first name; N_STR: the string */
	size_t nparts;          /* N_DOTTED: names in "a.b.c" */
	int simple;             /* N_STR: one plain literal, no implicit concatenation */
	struct node *callee;    /* N_CALL */
	struct item *items;     /* N_CALL: arguments; N_SEQ: elements */
	size_t nitems;
};

struct item {
	const struct tok *kw;   /* keyword argument name; NULL when positional */
	int star;               /* *args or **kwargs */
	struct node *v;
};

/* Every allocation of one statement's parse, freed together. */
struct pool {
	void **v;
	size_t n, cap;
	int oom;
};

struct parser {
	const struct tok *t;
	size_t i, end;          /* tokens of the expression's statement */
	size_t depth;
	struct pool pool;
};

/* Returned when memory runs out: the parse goes on harmlessly and the
 * statement fails afterwards on pool.oom. */
static struct node oom_node;

/* v grown to hold more than n elements of size bytes (doubling), or NULL
 * when out of memory, v then left as it was. */
static void *grow(void *v, size_t n, size_t *cap, size_t size)
{
	size_t ncap;
	void *nv;

	if (n < *cap)
		return v;
	ncap = *cap ? *cap * 2 : 8;
	nv = realloc(v, ncap * size);
	if (nv)
		*cap = ncap;
	return nv;
}

static void *pool_alloc(struct pool *pl, size_t size)
{
	void **nv, *p;

	if (pl->oom)
		return NULL;
	nv = grow(pl->v, pl->n, &pl->cap, sizeof(*pl->v));
	p = nv ? calloc(1, size) : NULL;
	if (nv)
		pl->v = nv;
	if (!p) {
		pl->oom = 1;
		return NULL;
	}
	pl->v[pl->n++] = p;
	return p;
}

static void pool_clear(struct pool *pl)
{
	size_t i;

	for (i = 0; i < pl->n; i++)
		free(pl->v[i]);
	pl->n = 0;
}

static int tok_op(const struct tok *t, char c)
{
	return t->kind == T_OP && t->n == 1 && t->s[0] == c;
}

static int tok_is(const struct tok *t, const char *s)
{
	return t->n == strlen(s) && memcmp(t->s, s, t->n) == 0;
}

static int tok_name(const struct tok *t, const char *s)
{
	return t->kind == T_NAME && tok_is(t, s);
}

/* Whether the parser stands where an expression in a list, a call or a
 * statement ends. */
static int ends_expr(const struct parser *p)
{
	const struct tok *t = &p->t[p->i];

	return p->i >= p->end || tok_op(t, ',') || tok_op(t, ')') || tok_op(t, ']') || tok_op(t, '}');
}

/* Skip the rest of an expression that is not read, brackets balanced (the
 * tokenizer has matched them already). */
static void skip_expr(struct parser *p)
{
	size_t depth = 0;

	while (p->i < p->end && (depth || !ends_expr(p))) {
		const struct tok *t = &p->t[p->i];
		if (tok_op(t, '(') || tok_op(t, '[') || tok_op(t, '{'))
			depth++;
		else if (tok_op(t, ')') || tok_op(t, ']') || tok_op(t, '}'))
			depth--;
		p->i++;
	}
}

/* A zeroed node from the statement's pool; oom_node when memory runs out,
 * so that callers need no check of their own. */
static struct node *new_node(struct parser *p, enum nkind kind)
{
	struct node *n = pool_alloc(&p->pool, sizeof(*n));

	if (!n)
		return &oom_node;
	n->kind = kind;
	return n;
}

/* Append an item to a call or sequence; the array it outgrows stays in the
 * pool until the statement is done. */
static void add_item(struct parser *p, struct node *n, const struct item *it)
{
	struct item *v;

	if (n == &oom_node)
		return;
	v = pool_alloc(&p->pool, (n->nitems + 1) * sizeof(*v));
	if (!v)
		return;
	if (n->nitems)
		memcpy(v, n->items, n->nitems * sizeof(*v));
	v[n->nitems++] = *it;
	n->items = v;
}

static struct node *parse_expr(struct parser *p);

/* The items up to the closing bracket (p->i just past the opening one)
 * into n; keywords when kw. Returns whether a comma ended the last item. */
static int parse_items(struct parser *p, struct node *n, char closer, int kw)
{
	int comma = 0;

	while (p->i < p->end) {
		struct item it = { NULL, 0, NULL };

		if (tok_op(&p->t[p->i], closer)) {
			p->i++;
			break;
		}
		if (tok_op(&p->t[p->i], '*') || tok_is(&p->t[p->i], "**")) {
			it.star = 1;
			p->i++;
		} else if (kw && p->t[p->i].kind == T_NAME && p->i + 1 < p->end && tok_op(&p->t[p->i + 1], '=')) {
			it.kw = &p->t[p->i];
			p->i += 2;
		}
		it.v = parse_expr(p);
		add_item(p, n, &it);
		comma = p->i < p->end && tok_op(&p->t[p->i], ',');
		if (comma || (p->i < p->end && !tok_op(&p->t[p->i], closer)))
			p->i++;
	}
	return comma;
}

/* An atom and its trailers: a dotted name, a call, a list, a tuple, a
 * string; what is none of them becomes N_OTHER. */
static struct node *parse_primary(struct parser *p)
{
	const struct tok *t = &p->t[p->i];
	struct node *n;

	if (p->i >= p->end || ++p->depth > MAX_NEST) {
		skip_expr(p);
		n = new_node(p, N_OTHER);
	} else if (t->kind == T_NAME) {
		n = new_node(p, N_DOTTED);
		n->tok = p->i++;
		n->nparts = 1;
		while (p->i + 1 < p->end && tok_op(&p->t[p->i], '.') && p->t[p->i + 1].kind == T_NAME) {
			n->nparts++;
			p->i += 2;
		}
	} else if (t->kind == T_STRING) {
		n = new_node(p, N_STR);
		n->tok = p->i++;
		n->simple = t->simple;
		for (; p->i < p->end && p->t[p->i].kind == T_STRING; p->i++)
			n->simple = 0;
	} else if (tok_op(t, '(') || tok_op(t, '[')) {
		int comma;

		n = new_node(p, N_SEQ);
		p->i++;
		comma = parse_items(p, n, tok_op(t, '(') ? ')' : ']', 0);
		if (tok_op(t, '(') && n->nitems == 1 && !comma && !n->items[0].star)
			n = n->items[0].v;
	} else {
		if (t->kind == T_NUMBER)
			p->i++;
		skip_expr(p);
		n = new_node(p, N_OTHER);
	}
	while (p->i < p->end && n->kind != N_OTHER && tok_op(&p->t[p->i], '(')) {
		struct node *call = new_node(p, N_CALL);

		call->callee = n;
		p->i++;
		parse_items(p, call, ')', 1);
		n = call;
	}
	p->depth--;
	return n;
}

/* One expression up to a ',' or a closing bracket; an operator, a
 * subscript or a comprehension after the primary makes it N_OTHER. */
static struct node *parse_expr(struct parser *p)
{
	struct node *n = parse_primary(p);

	if (ends_expr(p))
		return n;
	skip_expr(p);
	return new_node(p, N_OTHER);
}

/* The name tokens of a dotted node, part k. */
static const struct tok *part(const struct parser *p, const struct node *n, size_t k)
{
	return &p->t[n->tok + 2 * k];
}

/* "pytest.mark.NAME" (n may be a call's callee): the NAME token, else NULL. */
static const struct tok *mark_of(const struct parser *p, const struct node *n)
{
	if (n->kind != N_DOTTED || n->nparts != 3 || !tok_is(part(p, n, 0), "pytest") ||
	    !tok_is(part(p, n, 1), "mark"))
		return NULL;
	return part(p, n, 2);
}

/* ------------------------------------------------------------------ */
/* Marks and dtypes                                                     */

/* torch dtypes by canonical name, sorted bytewise: a set of them is a bit
 * mask, and its names come out sorted. */
static const char *const dtype_names[] = {
	"bfloat16", "bool", "complex128", "complex32", "complex64", "float16", "float32",
	"float4_e2m1fn_x2", "float64", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
	"float8_e5m2fnuz", "float8_e8m0fnu", "int16", "int32", "int64", "int8", "qint32", "qint8",
	"quint2x4", "quint4x2", "quint8", "uint16", "uint32", "uint64", "uint8"
};

static const struct {
	const char *alias, *name;
} dtype_aliases[] = {
	{ "half", "float16" }, { "float", "float32" }, { "double", "float64" },
	{ "chalf", "complex32" }, { "cfloat", "complex64" }, { "cdouble", "complex128" },
	{ "short", "int16" }, { "int", "int32" }, { "long", "int64" }
};

/* pytest's own marks: never an operator. */
static const char *const pytest_marks[] = {
	"parametrize", "skipif", "skip", "xfail", "usefixtures", "filterwarnings", "timeout"
};

/* The bit of the dtype named s (n bytes), 0 when torch has none of that name. */
static uint32_t dtype_lookup(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(dtype_names) / sizeof(dtype_names[0]); i++)
		if (strlen(dtype_names[i]) == n && memcmp(dtype_names[i], s, n) == 0)
			return (uint32_t)1 << i;
	return 0;
}

/* The bit of "torch.NAME" (aliases such as torch.half resolved), 0 when n
 * is not a torch dtype written out. */
static uint32_t dtype_bit(const struct parser *p, const struct node *n)
{
	const struct tok *name;
	size_t i;

	if (n->kind != N_DOTTED || n->nparts != 2 || !tok_is(part(p, n, 0), "torch"))
		return 0;
	name = part(p, n, 1);
	for (i = 0; i < sizeof(dtype_aliases) / sizeof(dtype_aliases[0]); i++)
		if (tok_is(name, dtype_aliases[i].alias))
			return dtype_lookup(dtype_aliases[i].name, strlen(dtype_aliases[i].name));
	return dtype_lookup(name->s, name->n);
}

/* An op is a mark named by a plain ASCII identifier (it becomes a CSV
 * field and a `-m` selector) that is not one of pytest's own. */
static int is_op_mark(const struct tok *name)
{
	size_t i;

	for (i = 0; i < name->n; i++)
		if ((unsigned char)name->s[i] >= 0x80)
			return 0;
	for (i = 0; i < sizeof(pytest_marks) / sizeof(pytest_marks[0]); i++)
		if (tok_is(name, pytest_marks[i]))
			return 0;
	return 1;
}

/* Marks and dtypes gathered for a def, a class or a module. */
struct attrs {
	char **marks;
	size_t nmarks, cmarks;
	enum cb_py_dtypes kind;
	uint32_t dtypes;        /* bits of dtype_names[], when kind is LITERAL */
};

static int attrs_add_mark(struct attrs *a, const char *s, size_t n)
{
	char **nv;
	size_t i;

	for (i = 0; i < a->nmarks; i++)
		if (strlen(a->marks[i]) == n && memcmp(a->marks[i], s, n) == 0)
			return 0;
	nv = grow(a->marks, a->nmarks, &a->cmarks, sizeof(*nv));
	if (!nv)
		return -1;
	a->marks = nv;
	a->marks[a->nmarks] = strndup(s, n);
	return a->marks[a->nmarks++] ? 0 : -1;
}

/* Combine what one parametrization says about dtype: not written out wins,
 * written-out sets add up. */
static void attrs_dtypes(struct attrs *a, enum cb_py_dtypes kind, uint32_t bits)
{
	if (kind == CB_PY_DTYPES_NONE)
		return;
	if (kind == CB_PY_DTYPES_ANY || a->kind == CB_PY_DTYPES_ANY) {
		a->kind = CB_PY_DTYPES_ANY;
		return;
	}
	a->kind = CB_PY_DTYPES_LITERAL;
	a->dtypes |= bits;
}

/* Add src's marks and dtypes to dst: a test gets those of its classes and
 * of its module on top of its own. */
static int attrs_merge(struct attrs *dst, const struct attrs *src)
{
	size_t i;

	for (i = 0; i < src->nmarks; i++)
		if (attrs_add_mark(dst, src->marks[i], strlen(src->marks[i])) < 0)
			return -1;
	attrs_dtypes(dst, src->kind, src->dtypes);
	return 0;
}

static void attrs_free(struct attrs *a)
{
	cb_strv_free(a->marks, a->nmarks);
	memset(a, 0, sizeof(*a));
}

/* A call's argument by position or by keyword; NULL when absent or when a
 * *args or **kwargs makes it unknowable. */
static const struct node *call_arg(const struct node *call, size_t pos, const char *kw)
{
	size_t i, k = 0;

	for (i = 0; i < call->nitems; i++) {
		const struct item *it = &call->items[i];
		if (it->star)
			return NULL;
		if (it->kw ? tok_is(it->kw, kw) : k++ == pos)
			return it->v;
	}
	return NULL;
}

/* Whether name (n bytes, blanks around it allowed) is "dtype". */
static int is_dtype_name(const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n == 5 && memcmp(s, "dtype", 5) == 0;
}

/* Where "dtype" stands among a parametrize call's argument names and how
 * many there are: 1 found, 0 not among them, -1 when the names are not
 * written out. As in pytest, values are tuples (*tuples set) unless the
 * names are one string holding a single name. */
static int dtype_position(const struct parser *p, const struct node *names, size_t *pos,
			  size_t *count, int *tuples)
{
	int found = 0;
	size_t i;

	*count = 0;
	*tuples = 1;
	if (names->kind == N_STR && names->simple) {
		const struct tok *t = &p->t[names->tok];
		const char *s = t->v, *end = t->v + t->vn;

		for (;;) {
			const char *c = memchr(s, ',', (size_t)(end - s));
			const char *e = c ? c : end;
			const char *q;

			for (q = s; q < e && (*q == ' ' || *q == '\t'); q++)
				;
			if (q < e) {
				if (is_dtype_name(s, (size_t)(e - s))) {
					*pos = *count;
					found = 1;
				}
				++*count;
			}
			if (!c)
				break;
			s = c + 1;
		}
		*tuples = *count > 1;
		return found;
	}
	if (names->kind != N_SEQ)
		return -1;
	for (i = 0; i < names->nitems; i++) {
		const struct node *v = names->items[i].v;
		if (names->items[i].star || v->kind != N_STR || !v->simple)
			return -1;
		if (p->t[v->tok].vn == 5 && memcmp(p->t[v->tok].v, "dtype", 5) == 0) {
			*pos = i;
			found = 1;
		}
	}
	*count = names->nitems;
	return found;
}

/* Value number pos of one parametrize entry with count names: the entry
 * itself (a single name, not as tuples), an element of a tuple or list, a
 * positional argument of pytest.param. NULL when it is written some other
 * way. */
static const struct node *entry_value(const struct parser *p, const struct node *v, size_t pos,
				      size_t count, int tuples)
{
	const struct node *c = v->kind == N_CALL ? v->callee : NULL;
	size_t i, k = 0;

	if (c && c->kind == N_DOTTED && c->nparts == 2 && tok_is(part(p, c, 0), "pytest") &&
	    tok_is(part(p, c, 1), "param")) {
		const struct node *got = NULL;
		for (i = 0; i < v->nitems; i++) {
			if (v->items[i].star)
				return NULL;
			if (!v->items[i].kw && k++ == pos)
				got = v->items[i].v;
		}
		return k == count ? got : NULL;
	}
	if (!tuples)
		return v;
	if (v->kind != N_SEQ || v->nitems != count)
		return NULL;
	for (i = 0; i < count; i++)
		if (v->items[i].star)
			return NULL;
	return v->items[pos].v;
}

/* What a parametrize call says about dtype: NONE when it does not name
 * it, LITERAL with bits when every value is a torch dtype written out, ANY
 * otherwise. */
static enum cb_py_dtypes parametrize_dtypes(const struct parser *p, const struct node *call,
					    uint32_t *bits)
{
	const struct node *names = call_arg(call, 0, "argnames");
	const struct node *values = call_arg(call, 1, "argvalues");
	size_t pos = 0, count, i;
	int found, tuples;

	*bits = 0;
	if (!names)
		return CB_PY_DTYPES_ANY;
	found = dtype_position(p, names, &pos, &count, &tuples);
	if (found == 0)
		return CB_PY_DTYPES_NONE;
	if (found < 0 || !values || values->kind != N_SEQ)
		return CB_PY_DTYPES_ANY;
	for (i = 0; i < values->nitems; i++) {
		const struct node *val = values->items[i].star ? NULL :
					 entry_value(p, values->items[i].v, pos, count, tuples);
		uint32_t bit = val ? dtype_bit(p, val) : 0;
		if (!bit)
			return CB_PY_DTYPES_ANY;
		*bits |= bit;
	}
	return CB_PY_DTYPES_LITERAL;
}

/* What one decorator, or one entry of a pytestmark, adds to a: an op mark
 * (plain pytest.mark.NAME, not one of pytest's own) or the dtypes of a
 * parametrize. Everything else is left alone. */
static int apply_mark(const struct parser *p, const struct node *n, struct attrs *a)
{
	const struct tok *m = mark_of(p, n);
	uint32_t bits;

	if (m)
		return is_op_mark(m) ? attrs_add_mark(a, m->s, m->n) : 0;
	if (n->kind == N_CALL && (m = mark_of(p, n->callee)) && tok_is(m, "parametrize")) {
		enum cb_py_dtypes kind = parametrize_dtypes(p, n, &bits);
		attrs_dtypes(a, kind, bits);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Statements: decorators, defs, classes and pytestmark, with the        */
/* nesting that decides which defs pytest collects.                     */

struct cls {
	size_t parent;          /* index + 1 of the enclosing class, 0 for none */
	const struct tok *name;
	int collect;            /* pytest collects its tests (Test*, nested in such only) */
	struct attrs deco, pmark;
};

struct blk {
	size_t indent;
	size_t cls;             /* index + 1 of a class; 0 for a def */
};

struct deco {
	size_t start, end;      /* tokens of the statement, '@' first */
};

struct rawtest {
	char *id;
	size_t line;
	size_t cls;             /* index + 1 of its class, 0 at module level */
	struct attrs own;
};

struct reader {
	const char *name;
	struct parser ps;
	struct deco *deco;      /* decorators waiting for their def or class */
	size_t ndeco, cdeco;
	struct blk *stack;      /* defs and classes open at this point */
	size_t nstack, cstack;
	struct cls *cls;
	size_t ncls, ccls;
	struct rawtest *tests;
	size_t ntests, ctests;
	struct attrs module;    /* the module's pytestmark */
};

static int oom(const struct reader *r, struct cb_err *err)
{
	return cb_fail(err, "%s: out of memory", r->name);
}

/* Parse the expression of tokens [start, end) and apply it as a mark (or,
 * for a list or tuple, each of its elements) to a. */
static int apply_expr(struct reader *r, size_t start, size_t end, int seq_ok, struct attrs *a,
		      struct cb_err *err)
{
	struct parser *p = &r->ps;
	struct node *n;
	size_t i;
	int rc = 0;

	p->i = start;
	p->end = end;
	p->depth = 0;
	n = parse_expr(p);
	if (seq_ok && n->kind == N_SEQ) {
		for (i = 0; i < n->nitems && rc == 0; i++)
			rc = apply_mark(p, n->items[i].v, a);
	} else {
		rc = apply_mark(p, n, a);
	}
	if (p->pool.oom)
		rc = -1;
	pool_clear(&p->pool);
	p->pool.oom = 0;
	return rc < 0 ? oom(r, err) : 0;
}

/* The decorators waiting so far, applied to a def or class. */
static int take_decorators(struct reader *r, struct attrs *a, struct cb_err *err)
{
	size_t i;

	for (i = 0; i < r->ndeco; i++)
		if (apply_expr(r, r->deco[i].start + 1, r->deco[i].end, 0, a, err) < 0)
			return -1;
	r->ndeco = 0;
	return 0;
}

/* The first decorator waiting names itself in a message: its first line,
 * at most 60 bytes. */
static int dangling(const struct reader *r, const char *what, struct cb_err *err)
{
	const struct tok *t = r->ps.t;
	const struct deco *d = &r->deco[0];
	const char *a = t[d->start].s, *b = t[d->end - 1].s + t[d->end - 1].n, *q;
	int cut = 0;

	for (q = a; q < b; q++)
		if (*q == '\n' || *q == '\r') {
			b = q;
			cut = 1;
		}
	while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
		b--;
	if (b - a > 60) {
		b = a + 60;
		while (b > a && ((unsigned char)*b & 0xC0) == 0x80)
			b--;
		cut = 1;
	}
	return cb_fail(err, "%s:%zu: decorator %.*s%s is not followed by a def or class (%s)", r->name,
		       t[d->start].line, (int)(b - a), a, cut ? "..." : "", what);
}

static int push_block(struct reader *r, size_t indent, size_t cls, struct cb_err *err)
{
	struct blk *nv = grow(r->stack, r->nstack, &r->cstack, sizeof(*nv));

	if (!nv)
		return oom(r, err);
	r->stack = nv;
	r->stack[r->nstack].indent = indent;
	r->stack[r->nstack].cls = cls;
	r->nstack++;
	return 0;
}

/* Whether a def or class at this point is collected by pytest: at module
 * level (inside if/try/with too) or directly in a collected class. */
static int collected_here(const struct reader *r)
{
	const struct blk *top = r->nstack ? &r->stack[r->nstack - 1] : NULL;

	return !top || (top->cls && r->cls[top->cls - 1].collect);
}

/* "TestA::TestB::test_x" for a def named name in class cls (index + 1). */
static char *node_id(const struct reader *r, size_t cls, const struct tok *name)
{
	struct cb_buf b = CB_BUF_INIT;
	size_t c, depth = 0, k;

	for (c = cls; c; c = r->cls[c - 1].parent)
		depth++;
	for (k = depth; k > 0; k--) {
		size_t j;
		for (c = cls, j = 1; j < k; j++)
			c = r->cls[c - 1].parent;
		cb_buf_add(&b, r->cls[c - 1].name->s, r->cls[c - 1].name->n);
		cb_buf_adds(&b, "::");
	}
	cb_buf_add(&b, name->s, name->n);
	return cb_buf_detach(&b, NULL);
}

/* A def (tokens [d, e), d at "def"; line of the statement): a test when
 * pytest would collect it, and a block either way. */
static int def_statement(struct reader *r, size_t d, size_t e, size_t line, size_t indent,
			 struct cb_err *err)
{
	const struct tok *name = &r->ps.t[d + 1];
	size_t cls = r->nstack ? r->stack[r->nstack - 1].cls : 0;
	struct attrs own = { NULL, 0, 0, CB_PY_DTYPES_NONE, 0 };
	struct rawtest *nv;
	char *id;
	size_t i;

	if (d + 1 >= e || name->kind != T_NAME)
		return cb_fail(err, "%s:%zu: 'def' is not followed by a name", r->name, line);
	if (take_decorators(r, &own, err) < 0) {
		attrs_free(&own);
		return -1;
	}
	if (!collected_here(r) || name->n < 4 || memcmp(name->s, "test", 4) != 0) {
		attrs_free(&own);
		return push_block(r, indent, 0, err);
	}
	id = node_id(r, cls, name);
	nv = id ? grow(r->tests, r->ntests, &r->ctests, sizeof(*nv)) : NULL;
	if (!nv) {
		free(id);
		attrs_free(&own);
		return oom(r, err);
	}
	r->tests = nv;
	for (i = 0; i < r->ntests; i++)
		if (strcmp(r->tests[i].id, id) == 0) {
			cb_fail(err, "%s:%zu: test '%s' is defined twice, at lines %zu and %zu", r->name, line,
				id, r->tests[i].line, line);
			free(id);
			attrs_free(&own);
			return -1;
		}
	r->tests[r->ntests].id = id;
	r->tests[r->ntests].line = line;
	r->tests[r->ntests].cls = cls;
	r->tests[r->ntests].own = own;
	r->ntests++;
	return push_block(r, indent, 0, err);
}

/* A class (tokens [s, e)): its decorators and whether pytest collects it. */
static int class_statement(struct reader *r, size_t s, size_t e, size_t indent, struct cb_err *err)
{
	const struct tok *name = &r->ps.t[s + 1];
	struct cls *nv, *c;

	if (s + 1 >= e || name->kind != T_NAME)
		return cb_fail(err, "%s:%zu: 'class' is not followed by a name", r->name, r->ps.t[s].line);
	nv = grow(r->cls, r->ncls, &r->ccls, sizeof(*nv));
	if (!nv)
		return oom(r, err);
	r->cls = nv;
	c = &r->cls[r->ncls];
	memset(c, 0, sizeof(*c));
	c->parent = r->nstack ? r->stack[r->nstack - 1].cls : 0;
	c->name = name;
	c->collect = collected_here(r) && name->n >= 4 && memcmp(name->s, "Test", 4) == 0;
	r->ncls++;
	if (take_decorators(r, &c->deco, err) < 0)
		return -1;
	return push_block(r, indent, r->ncls, err);
}

/* One statement, tokens [s, e), at indentation indent. */
static int statement(struct reader *r, size_t s, size_t e, size_t indent, struct cb_err *err)
{
	const struct tok *t = r->ps.t;
	size_t d = s;

	while (r->nstack && r->stack[r->nstack - 1].indent >= indent)
		r->nstack--;
	if (tok_op(&t[s], '@')) {
		struct deco *nv = grow(r->deco, r->ndeco, &r->cdeco, sizeof(*nv));
		if (!nv)
			return oom(r, err);
		r->deco = nv;
		r->deco[r->ndeco].start = s;
		r->deco[r->ndeco].end = e;
		r->ndeco++;
		return 0;
	}
	if (tok_name(&t[s], "async") && s + 1 < e && tok_name(&t[s + 1], "def"))
		d = s + 1;
	if (tok_name(&t[d], "def"))
		return def_statement(r, d, e, t[s].line, indent, err);
	if (tok_name(&t[s], "class"))
		return class_statement(r, s, e, indent, err);
	if (r->ndeco) {
		char what[64];
		snprintf(what, sizeof(what), "line %zu is not one", t[s].line);
		return dangling(r, what, err);
	}
	if (tok_name(&t[s], "pytestmark") && s + 2 < e && tok_op(&t[s + 1], '=')) {
		const struct blk *top = r->nstack ? &r->stack[r->nstack - 1] : NULL;
		struct attrs *a = !top ? &r->module : top->cls ? &r->cls[top->cls - 1].pmark : NULL;

		if (a) {
			attrs_free(a);
			return apply_expr(r, s + 2, e, 1, a, err);
		}
	}
	return 0;
}

/* Split the tokens into statements (logical lines, and ';' outside
 * brackets) and read each. */
static int read_statements(struct reader *r, struct cb_err *err)
{
	const struct tok *t = r->ps.t;
	size_t i = 0, indent = 0;

	while (t[i].kind != T_END) {
		size_t e = i, depth = 0;

		if (t[i].kind == T_NEWLINE) {
			i++;
			continue;
		}
		if (t[i].bol)
			indent = t[i].indent;
		for (; t[e].kind != T_NEWLINE && (depth || !tok_op(&t[e], ';')); e++) {
			if (tok_op(&t[e], '(') || tok_op(&t[e], '[') || tok_op(&t[e], '{'))
				depth++;
			else if (tok_op(&t[e], ')') || tok_op(&t[e], ']') || tok_op(&t[e], '}'))
				depth--;
		}
		if (statement(r, i, e, indent, err) < 0)
			return -1;
		i = e + 1;
	}
	return r->ndeco ? dangling(r, "the file ends", err) : 0;
}

/* The tests read, with the marks and dtypes of their classes and module. */
static int finish_tests(struct reader *r, struct cb_py_file *f, struct cb_err *err)
{
	size_t i, k;

	f->tests = calloc(r->ntests ? r->ntests : 1, sizeof(*f->tests));
	if (!f->tests)
		return oom(r, err);
	for (i = 0; i < r->ntests; i++) {
		struct rawtest *rt = &r->tests[i];
		struct cb_py_test *pt = &f->tests[f->ntests++];
		struct attrs *a = &rt->own;
		size_t c;
		int rc = 0;

		for (c = rt->cls; c && rc == 0; c = r->cls[c - 1].parent)
			rc = attrs_merge(a, &r->cls[c - 1].deco) | attrs_merge(a, &r->cls[c - 1].pmark);
		if (rc || attrs_merge(a, &r->module) < 0)
			return oom(r, err);
		pt->id = rt->id;
		rt->id = NULL;
		pt->line = rt->line;
		pt->marks = a->marks;
		pt->nmarks = a->nmarks;
		a->marks = NULL;
		a->nmarks = 0;
		pt->dtype_kind = a->kind;
		if (a->kind != CB_PY_DTYPES_LITERAL)
			continue;
		pt->dtypes = calloc(sizeof(dtype_names) / sizeof(dtype_names[0]), sizeof(*pt->dtypes));
		if (!pt->dtypes)
			return oom(r, err);
		for (k = 0; k < sizeof(dtype_names) / sizeof(dtype_names[0]); k++)
			if (a->dtypes & ((uint32_t)1 << k) &&
			    !(pt->dtypes[pt->ndtypes++] = strdup(dtype_names[k])))
				return oom(r, err);
	}
	return 0;
}

int cb_pyscan(const char *buf, size_t len, const char *name, struct cb_py_file *f,
	      struct cb_err *err)
{
	struct lexer lx;
	struct reader r;
	size_t i;
	int rc;

	memset(f, 0, sizeof(*f));
	memset(&lx, 0, sizeof(lx));
	memset(&r, 0, sizeof(r));
	lx.name = r.name = name;
	lx.p = buf;
	lx.end = buf + len;
	lx.line = 1;
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		lx.p += 3;
	rc = check_bytes(buf, len, name, err);
	if (rc == 0)
		rc = lex(&lx, err);
	if (rc == 0) {
		r.ps.t = lx.v;
		rc = read_statements(&r, err);
	}
	if (rc == 0)
		rc = finish_tests(&r, f, err);
	for (i = 0; i < r.ntests; i++) {
		free(r.tests[i].id);
		attrs_free(&r.tests[i].own);
	}
	for (i = 0; i < r.ncls; i++) {
		attrs_free(&r.cls[i].deco);
		attrs_free(&r.cls[i].pmark);
	}
	attrs_free(&r.module);
	pool_clear(&r.ps.pool);
	free(r.ps.pool.v);
	free(r.tests);
	free(r.cls);
	free(r.stack);
	free(r.deco);
	free(lx.v);
	free(lx.br);
	if (rc < 0)
		cb_py_file_free(f);
	return rc;
}

void cb_py_file_free(struct cb_py_file *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->ntests && f->tests; i++) {
		free(f->tests[i].id);
		cb_strv_free(f->tests[i].marks, f->tests[i].nmarks);
		cb_strv_free(f->tests[i].dtypes, f->tests[i].ndtypes);
	}
	free(f->tests);
	memset(f, 0, sizeof(*f));
}

/* ------------------------------------------------------------------ */
/* The corpus tree                                                      */

struct pyfile {
	char *rel;              /* relative to the corpus: "benchmark/test_abs.py" */
	struct cb_py_file f;
};

/* The test files of benchmark/ or tests/. */
struct side {
	struct pyfile *v;
	size_t n, cap;
	size_t top, perf;       /* files directly in the folder; those named test_*_perf.py */
};

/* One row to be: an op and the benchmark test that first carries it. */
struct op {
	const char *name;       /* borrowed from the scanned files */
	const struct pyfile *bf;
	const struct cb_py_test *bt;
};

/* The same folders the tree digest leaves out. */
static int skip_dir(const char *name)
{
	return strcmp(name, ".git") == 0 || strcmp(name, "__pycache__") == 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void side_free(struct side *sd)
{
	size_t i;

	for (i = 0; i < sd->n; i++) {
		free(sd->v[i].rel);
		cb_py_file_free(&sd->v[i].f);
	}
	free(sd->v);
	memset(sd, 0, sizeof(*sd));
}

/* Read and scan every test_*.py below dir/sub (regular files; links are
 * not followed), in sorted path order. */
static int read_side(const char *dir, const char *sub, struct side *sd, struct cb_err *err)
{
	char *root = cb_path_join(dir, sub);
	struct cb_tree tree;
	size_t i;
	int rc, walked;

	if (!root)
		return cb_fail(err, "out of memory");
	rc = walked = cb_walk(root, skip_dir, 0, &tree, err);
	for (i = 0; rc == 0 && i < tree.n; i++) {
		const struct cb_entry *e = &tree.v[i];
		const char *base = strrchr(e->rel, '/') ? strrchr(e->rel, '/') + 1 : e->rel;
		struct pyfile *nv;
		char *abs, *buf = NULL;
		size_t len;

		if (e->kind != CB_ENT_FILE || strncmp(base, "test_", 5) != 0 || !ends_with(base, ".py"))
			continue;
		if (base == e->rel) {
			sd->top++;
			sd->perf += (size_t)ends_with(base, "_perf.py");
		}
		nv = grow(sd->v, sd->n, &sd->cap, sizeof(*nv));
		if (!nv) {
			rc = cb_fail(err, "out of memory");
			break;
		}
		sd->v = nv;
		memset(&sd->v[sd->n], 0, sizeof(sd->v[sd->n]));
		abs = cb_path_join(root, e->rel);
		sd->v[sd->n].rel = cb_strdupf("%s/%s", sub, e->rel);
		if (!abs || !sd->v[sd->n].rel)
			rc = cb_fail(err, "out of memory");
		else if ((rc = cb_read_file(abs, &buf, &len, err)) == 0)
			rc = cb_pyscan(buf, len, abs, &sd->v[sd->n].f, err);
		sd->n++;
		free(buf);
		free(abs);
	}
	if (walked == 0)
		cb_tree_free(&tree);
	free(root);
	return rc;
}

static int has_mark(const struct cb_py_test *t, const char *mark)
{
	size_t i;

	for (i = 0; i < t->nmarks; i++)
		if (strcmp(t->marks[i], mark) == 0)
			return 1;
	return 0;
}

/* Add test t's dtypes to (kind, bits): a test without a dtype parameter,
 * or with one not written out, makes the op's dtypes '*'. */
static void add_dtypes(const struct cb_py_test *t, enum cb_py_dtypes *kind, uint32_t *bits)
{
	size_t i;

	if (t->dtype_kind != CB_PY_DTYPES_LITERAL) {
		*kind = CB_PY_DTYPES_ANY;
		return;
	}
	for (i = 0; i < t->ndtypes; i++)
		*bits |= dtype_lookup(t->dtypes[i], strlen(t->dtypes[i]));
}

/* The kind column: the category of a per-category file
 * ("benchmark/test_unary_pointwise_perf.py" gives unary_pointwise), the op
 * itself in the per-operator layout. */
static char *kind_of(enum cb_corpus_layout layout, const struct op *op)
{
	const char *base = strrchr(op->bf->rel, '/') + 1;
	size_t n = strlen(base) - strlen(".py");

	if (layout == CB_LAYOUT_PER_OPERATOR)
		return strdup(op->name);
	base += strlen("test_");
	n -= strlen("test_");
	if (n > 5 && memcmp(base + n - 5, "_perf", 5) == 0)
		n -= 5;
	else if (n > 4 && memcmp(base + n - 4, "_ops", 4) == 0)
		n -= 4;
	return n ? strndup(base, n) : strdup(op->name);
}

static int add_warning(struct cb_corpus_inventory *inv, size_t *cap, char *line, struct cb_err *err)
{
	char **nv = line ? grow(inv->warnings, inv->nwarnings, cap, sizeof(*nv)) : NULL;

	if (!nv) {
		free(line);
		return cb_fail(err, "out of memory");
	}
	inv->warnings = nv;
	inv->warnings[inv->nwarnings++] = line;
	return 0;
}

/* Whether file f holds a test marked with op's name. */
static int file_has_mark(const struct pyfile *f, const struct op *op)
{
	size_t j;

	for (j = 0; j < f->f.ntests; j++)
		if (has_mark(&f->f.tests[j], op->name))
			return 1;
	return 0;
}

/* The correctness file of op among those with a test of its mark: the one
 * named like its benchmark file (benchmark/test_softmax.py pairs with
 * tests/test_softmax.py, not with a vendor's tests/test_rdna4_softmax.py
 * that sorts first), else tests/test_<op>.py, else the first in sorted
 * order. NULL when no test carries the mark. */
static const struct pyfile *correctness_file(const struct side *tests, const struct op *op)
{
	const char *bbase = strrchr(op->bf->rel, '/');
	const struct pyfile *first = NULL;
	char *want = cb_strdupf("tests/test_%s.py", op->name);
	size_t i;

	bbase = bbase ? bbase + 1 : op->bf->rel;
	for (i = 0; i < tests->n; i++) {
		const struct pyfile *f = &tests->v[i];
		const char *base = strrchr(f->rel, '/');

		if (!file_has_mark(f, op))
			continue;
		if (strcmp(base ? base + 1 : f->rel, bbase) == 0) {
			free(want);
			return f;
		}
		if (!first || (want && strcmp(f->rel, want) == 0 && strcmp(first->rel, want) != 0))
			first = f;
	}
	free(want);
	return first;
}

/* One CSV row for op, or a warning when it has no correctness test or
 * no dtype at all. */
static int add_row(struct cb_corpus_inventory *inv, const struct side *tests, const struct op *op,
		   struct cb_buf *csv, size_t *wcap, struct cb_err *err)
{
	enum cb_py_dtypes kind = CB_PY_DTYPES_LITERAL;
	uint32_t bits = 0;
	const struct pyfile *cf = NULL;
	struct cb_buf dt = CB_BUF_INIT;
	const char *fields[CB_INV_NCOLS];
	char *kindcol, *dtypes;
	size_t i, j;

	cf = correctness_file(tests, op);
	if (!cf)
		return add_warning(inv, wcap,
				   cb_strdupf("op '%s' (%s::%s) has no test under tests/ marked '%s'; left out",
					      op->name, op->bf->rel, op->bt->id, op->name), err);
	add_dtypes(op->bt, &kind, &bits);
	for (j = 0; j < cf->f.ntests; j++)
		if (has_mark(&cf->f.tests[j], op->name))
			add_dtypes(&cf->f.tests[j], &kind, &bits);
	if (kind == CB_PY_DTYPES_LITERAL && !bits)
		return add_warning(inv, wcap,
				   cb_strdupf("op '%s' (%s::%s) is parametrized with no dtype at all; left out",
					      op->name, op->bf->rel, op->bt->id), err);
	if (kind != CB_PY_DTYPES_LITERAL)
		cb_buf_adds(&dt, "*");
	for (i = 0; kind == CB_PY_DTYPES_LITERAL && i < sizeof(dtype_names) / sizeof(dtype_names[0]); i++)
		if (bits & ((uint32_t)1 << i))
			cb_buf_addf(&dt, "%s%s", dt.len ? ";" : "", dtype_names[i]);
	dtypes = cb_buf_detach(&dt, NULL);
	kindcol = kind_of(inv->layout, op);
	fields[CB_INV_OP] = op->name;
	fields[CB_INV_BENCH_FILE] = op->bf->rel;
	fields[CB_INV_BENCH_TEST] = op->bt->id;
	fields[CB_INV_CORR_FILE] = cf->rel;
	fields[CB_INV_CORR_SELECTOR] = op->name;
	fields[CB_INV_DTYPES] = dtypes;
	fields[CB_INV_KIND] = kindcol;
	fields[CB_INV_LAYOUT] = cb_corpus_layout_name(inv->layout);
	fields[CB_INV_CORPUS_SHA] = inv->tree_sha256;
	for (i = 0; dtypes && kindcol && i < CB_INV_NCOLS; i++) {
		if (i)
			cb_buf_add(csv, ",", 1);
		cb_csv_put_field(csv, fields[i]);
	}
	cb_buf_add(csv, "\n", 1);
	inv->nrows++;
	free(dtypes);
	free(kindcol);
	return dtypes && kindcol && !csv->oom ? 0 : cb_fail(err, "out of memory");
}

const char *cb_corpus_layout_name(enum cb_corpus_layout layout)
{
	return layout == CB_LAYOUT_PER_CATEGORY ? "per-category" : "per-operator";
}

int cb_corpus_inventory(const char *dir, struct cb_corpus_inventory *inv, struct cb_err *err)
{
	static const char *const subs[] = { "benchmark", "tests" };
	struct side bench, tests;
	struct op *ops = NULL;
	struct cb_buf csv = CB_BUF_INIT;
	size_t nops = 0, cops = 0, wcap = 0, i, j, k, o;
	int rc = 0;

	memset(inv, 0, sizeof(*inv));
	memset(&bench, 0, sizeof(bench));
	memset(&tests, 0, sizeof(tests));
	if (!cb_is_dir(dir))
		return cb_fail(err, "%s: not a directory", dir);
	for (i = 0; i < 2; i++) {
		char *p = cb_path_join(dir, subs[i]);
		int ok = p && cb_is_dir(p);
		free(p);
		if (!ok)
			return cb_fail(err, "%s: no %s/ folder (a corpus has benchmark/ and tests/)", dir, subs[i]);
	}
	if (read_side(dir, "benchmark", &bench, err) < 0 || read_side(dir, "tests", &tests, err) < 0 ||
	    cb_tree_digest(dir, inv->tree_sha256, err) < 0) {
		rc = -1;
		goto out;
	}
	inv->layout = bench.perf * 2 > bench.top ? CB_LAYOUT_PER_CATEGORY : CB_LAYOUT_PER_OPERATOR;
	for (i = 0; i < bench.n; i++)
		for (j = 0; j < bench.v[i].f.ntests; j++)
			for (k = 0; k < bench.v[i].f.tests[j].nmarks; k++) {
				const char *m = bench.v[i].f.tests[j].marks[k];
				struct op *nv;

				for (o = 0; o < nops && strcmp(ops[o].name, m) != 0; o++)
					;
				if (o < nops)
					continue;
				nv = grow(ops, nops, &cops, sizeof(*nv));
				if (!nv) {
					rc = cb_fail(err, "out of memory");
					goto out;
				}
				ops = nv;
				ops[nops].name = m;
				ops[nops].bf = &bench.v[i];
				ops[nops].bt = &bench.v[i].f.tests[j];
				nops++;
			}
	for (i = 0; i < CB_INV_NCOLS; i++)
		cb_buf_addf(&csv, "%s%s", i ? "," : "", cb_inv_columns[i]);
	cb_buf_add(&csv, "\n", 1);
	for (o = 0; o < nops && rc == 0; o++)
		rc = add_row(inv, &tests, &ops[o], &csv, &wcap, err);
	if (rc == 0 && !nops)
		rc = cb_fail(err, "%s: no test under benchmark/ carries an op mark (@pytest.mark.<op>)", dir);
	else if (rc == 0 && !inv->nrows)
		rc = cb_fail(err, "%s: none of the ops marked on benchmark tests (%zu) has a test under tests/ with the same mark",
			     dir, nops);
	if (rc == 0) {
		inv->csv = cb_buf_detach(&csv, &inv->csv_len);
		if (!inv->csv)
			rc = cb_fail(err, "out of memory");
	}
out:
	cb_buf_release(&csv);
	free(ops);
	side_free(&bench);
	side_free(&tests);
	if (rc < 0)
		cb_corpus_inventory_free(inv);
	return rc;
}

void cb_corpus_inventory_free(struct cb_corpus_inventory *inv)
{
	if (!inv)
		return;
	free(inv->csv);
	cb_strv_free(inv->warnings, inv->nwarnings);
	memset(inv, 0, sizeof(*inv));
}

/* ------------------------------------------------------------------ */
/* The command                                                          */

static const char inventory_about[] =
	"Write the inventory CSV (SPEC section 4) of the corpus tree DIR to FILE,\n"
	"read statically from its pytest files, without running Python: every\n"
	"test_*.py below DIR/benchmark and DIR/tests, their `def test*` functions\n"
	"(also async, also methods of Test* classes, node id TestX::test_y), the\n"
	"plain @pytest.mark.<op> marks on them, their classes and pytestmark\n"
	"(pytest's own marks left out), and @pytest.mark.parametrize(\"dtype\", ...).\n"
	"\n"
	"One row per op marked on a benchmark test: the first such test in sorted\n"
	"path order; the file under tests/ with a test of the same mark that is named\n"
	"like the benchmark file (else tests/test_<op>.py, else the first); the\n"
	"mark as selector, the dtypes of those tests (sorted; '*' when one of them\n"
	"does not list torch dtypes literally), the kind, the layout and the corpus\n"
	"tree digest (see docs/formats.md, \"Inventory from a corpus tree\"). The\n"
	"layout is per-category when most files directly in DIR/benchmark are named\n"
	"test_*_perf.py, else per-operator.\n"
	"\n"
	"An op with a benchmark test but no correctness test is left out, with a\n"
	"warning on stderr naming it. Nothing is written unless every file reads\n"
	"cleanly: UTF-8, strings and brackets closed, each decorator followed by a\n"
	"def or class, no test defined twice in a file; FILE is replaced atomically\n"
	"and, when it exists, must be a regular file.";

int cmd_inventory(int argc, char **argv, struct cb_err *err)
{
	const char *corpus = NULL, *output = NULL;
	const struct cb_opt opts[] = {
		{ "corpus", CB_OPT_PATH, &corpus, "DIR", "the corpus tree, holding benchmark/ and tests/" },
		{ "output", CB_OPT_PATH, &output, "FILE", "the inventory CSV to write" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "inventory", "--corpus DIR -o FILE", inventory_about, opts, 0, 0 };
	struct cb_corpus_inventory inv;
	struct stat st;
	struct cb_args args = CB_ARGS_INIT;
	char *rout, *rcorpus;
	size_t i;
	int rc;

	rc = cb_parse_opts(&spec, argc, argv, &args, err);
	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	rc = CB_EXIT_USAGE;
	if (!corpus || !output) {
		cb_fail(err, "--corpus DIR and -o FILE are both needed (see caliber inventory --help)");
		goto out;
	}
	rc = CB_EXIT_FAIL;
	if (lstat(output, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* FILE is replaced by renaming a new file over it: that would put a
		 * regular file in place of a device, a link or a folder. */
		cb_fail(err, "-o %s: exists and is not a regular file", output);
		goto out;
	}
	if (cb_corpus_inventory(corpus, &inv, err) < 0)
		goto out;
	if (cb_write_atomic(output, inv.csv, inv.csv_len, 0644, err) < 0) {
		cb_corpus_inventory_free(&inv);
		goto out;
	}
	for (i = 0; i < inv.nwarnings; i++)
		fprintf(stderr, "caliber: inventory: warning: %s\n", inv.warnings[i]);
	rout = cb_resolve(output);
	rcorpus = cb_resolve(corpus);
	if (rout && rcorpus && cb_path_within(rout, rcorpus))
		fprintf(stderr, "caliber: inventory: warning: %s lies inside the corpus, whose digest it records"
			" as it was before the file was written\n", output);
	free(rout);
	free(rcorpus);
	printf("inventory: %zu ops from the %s corpus %s (tree sha256 %s), %zu left out: %s\n", inv.nrows,
	       cb_corpus_layout_name(inv.layout), corpus, inv.tree_sha256, inv.nwarnings, output);
	cb_corpus_inventory_free(&inv);
	rc = CB_EXIT_OK;
out:
	cb_args_release(&args);
	return rc;
}
