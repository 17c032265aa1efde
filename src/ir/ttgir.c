/* ttgir.c: counting the topology op in TTGIR (ttgir.h).
 *
 * _GNU_SOURCE must come before any header: memmem() (POSIX.1-2024, a GNU
 * extension in glibc before that) and memrchr() (GNU, also in the BSDs)
 * are declared only with it. */
#define _GNU_SOURCE

#include "ttgir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "base/jsonio.h"

/* ---- counting the op in TTGIR ------------------------------------------ */

/* Where a line stands, read from its first byte, in the grammar of the
 * start of an operation line:
 *
 *   [ \t]* ( result ( [ \t]* ',' [ \t]* result )* [ \t]* '=' [ \t]* )? '"'? OP
 *   result = '%' [A-Za-z0-9_.$-]+ ( ':' [0-9]+ )?
 *
 * The op may begin in L_LINE or L_EQ (pretty form) and in L_QUOTE (generic
 * form). Any byte outside the grammar kills the line: what follows on it
 * is an operand, a type, an attribute, a string, a loc or a comment. */
enum lstate {
	L_DEAD,    /* this line cannot be an operation line of the op any more */
	L_LINE,    /* at the line start or in its leading whitespace */
	L_PCT,     /* after the '%' of a result: a name must follow */
	L_NAME,    /* in a result name */
	L_COLON,   /* after "%name:": a digit must follow */
	L_NUM,     /* in the N of "%name:N" */
	L_AFTER,   /* whitespace after a result */
	L_COMMA,   /* after the ',' between two results */
	L_EQ,      /* after the '=' that ends the results, and its whitespace */
	L_QUOTE    /* after the '"' that opens a generic op name */
};

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* Characters of an operation name (dialect '.' op), as --op accepts them. */
static int is_op_char(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       c == '.' || c == '$';
}

/* Characters of an SSA value name after '%' (MLIR's suffix-id). */
static int is_value_char(unsigned char c)
{
	return is_op_char(c) || c == '-';
}

static int is_blank(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* The state after a complete result, on byte c. */
static enum lstate after_result(unsigned char c)
{
	if (is_blank(c))
		return L_AFTER;
	return c == ',' ? L_COMMA : c == '=' ? L_EQ : L_DEAD;
}

static enum lstate step(enum lstate s, unsigned char c)
{
	switch (s) {
	case L_LINE:
		return is_blank(c) ? L_LINE : c == '%' ? L_PCT : c == '"' ? L_QUOTE : L_DEAD;
	case L_PCT:
		return is_value_char(c) ? L_NAME : L_DEAD;
	case L_NAME:
		return is_value_char(c) ? L_NAME : c == ':' ? L_COLON : after_result(c);
	case L_COLON:
		return is_digit(c) ? L_NUM : L_DEAD;
	case L_NUM:
		return is_digit(c) ? L_NUM : after_result(c);
	case L_AFTER:
		return after_result(c);
	case L_COMMA:
		return is_blank(c) ? L_COMMA : c == '%' ? L_PCT : L_DEAD;
	case L_EQ:
		return is_blank(c) ? L_EQ : c == '"' ? L_QUOTE : L_DEAD;
	case L_QUOTE:
	case L_DEAD:
		break;
	}
	return L_DEAD;
}

/* Run the grammar over p[0..end) from state s; stops early once dead, so a
 * line is read only as far as it could still be an operation line. */
static enum lstate walk(enum lstate s, const char *p, const char *end)
{
	while (p < end && s != L_DEAD)
		s = step(s, (unsigned char)*p++);
	return s;
}

/* Whether an occurrence of the op reached in state s, with the bytes after
 * it at after[0..end), is the line's operation. The pretty form needs a
 * byte that ends the name (so op_foo and op.bar do not count) or the end
 * of the data; the generic form needs the closing `"(`. */
static int op_ends_here(enum lstate s, const char *after, const char *end)
{
	if (s == L_QUOTE)
		return end - after >= 2 && after[0] == '"' && after[1] == '(';
	if (s != L_LINE && s != L_EQ)
		return 0;
	if (after == end)
		return 1;
	switch (*after) {
	case ' ': case '\t': case '(': case '<': case '{': case ':': case '\r': case '\n':
		return 1;
	default:
		return 0;
	}
}

struct scanner {
	const char *op;
	size_t oplen;
	enum lstate st;    /* state of the current line at the start of the next block */
	long long count;
	/* With base set (the whole data in one block), the offset of each
	 * counted line's first byte goes into at[0..nat); oom once that
	 * array could not grow. */
	const char *base;
	size_t *at, nat, cap;
	int oom;
};

/* Record where the operation found at q starts its line (s->base set). */
static void record_line(struct scanner *s, const char *q)
{
	const char *nl = memrchr(s->base, '\n', (size_t)(q - s->base));

	if (s->nat == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		size_t *v = realloc(s->at, cap * sizeof(*v));
		if (!v) {
			s->oom = 1;
			return;
		}
		s->at = v;
		s->cap = cap;
	}
	s->at[s->nat++] = nl ? (size_t)(nl + 1 - s->base) : 0;
}

/* Count the operations that start in p[0..n). p[n..avail) may be read as
 * lookahead (an occurrence starting before n ends beyond it); avail == n
 * only at the end of the data. s->st is the line state at p[0] on entry and
 * at p[n] on return, so blocks can follow each other.
 *
 * memmem finds the next occurrence; memrchr finds its line start by
 * scanning back only to the previous newline; the grammar then reads that
 * line from its start up to the occurrence, and memchr skips to the next
 * line once the line is counted or dead. Every byte is thus looked at a
 * bounded number of times, however long the line. An occurrence inside a
 * result name (%ttg.convert_layout = ...) leaves the line alive: the
 * search goes on one byte further. */
static void scan_block(struct scanner *s, const char *p, size_t n, size_t avail)
{
	const char *cur = p, *end = p + n;
	const char *stop = p + (n - 1 + s->oplen < avail ? n - 1 + s->oplen : avail);

	while (cur < end) {
		const char *q = memmem(cur, (size_t)(stop - cur), s->op, s->oplen);
		const char *upto = q ? q : end;
		const char *nl = memrchr(cur, '\n', (size_t)(upto - cur));
		enum lstate st = nl ? walk(L_LINE, nl + 1, upto) : walk(s->st, cur, upto);

		if (!q) {
			s->st = st;
			return;
		}
		if (st != L_DEAD && op_ends_here(st, q + s->oplen, p + avail)) {
			s->count++;
			if (s->base)
				record_line(s, q);
			st = L_DEAD;
		} else {
			st = step(st, (unsigned char)*q);
		}
		if (st != L_DEAD) {
			s->st = st;
			cur = q + 1;
			continue;
		}
		nl = memchr(q, '\n', (size_t)(end - q));
		if (!nl) {
			s->st = L_DEAD;
			return;
		}
		s->st = L_LINE;
		cur = nl + 1;
	}
}

int cb_topology_check_op(const char *op, struct cb_err *err)
{
	const char *c;

	if (!*op)
		return cb_fail(err, "the op name is empty");
	for (c = op; *c; c++)
		if (!is_op_char((unsigned char)*c))
			return cb_fail(err, "op '%s' is not an operation name (letters, digits, '_', '.', '$')",
				       op);
	return 0;
}

long long cb_ttgir_count(const char *data, size_t len, const char *op)
{
	struct scanner s = { op, strlen(op), L_LINE, 0, NULL, NULL, 0, 0, 0 };

	if (!len || !s.oplen)
		return 0;
	scan_block(&s, data, len, len);
	return s.count;
}

int cb_ttgir_op_lines(const char *data, size_t len, const char *op, size_t **at, size_t *n,
		      struct cb_err *err)
{
	struct scanner s = { op, strlen(op), L_LINE, 0, data, NULL, 0, 0, 0 };

	*at = NULL;
	*n = 0;
	if (cb_topology_check_op(op, err) < 0)
		return -1;
	if (len)
		scan_block(&s, data, len, len);
	if (s.oom) {
		free(s.at);
		return cb_fail(err, "out of memory");
	}
	*at = s.at;
	*n = s.nat;
	return 0;
}

/* read() want bytes into buf, retrying interrupted and short reads; *got
 * is less than want only when the file ended early (it shrank). */
static int fill(int fd, char *buf, size_t want, size_t *got, const char *path, struct cb_err *err)
{
	*got = 0;
	while (*got < want) {
		ssize_t r = read(fd, buf + *got, want - *got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return cb_fail(err, "%s: read: %s", path, strerror(errno));
		if (r == 0)
			break;
		*got += (size_t)r;
	}
	return 0;
}

/* One step over a full buffer of have bytes whose last keep bytes are
 * lookahead: scan up to the lookahead, move it to the front to start the
 * next chunk, and return the new fill (keep). Shared by the file counter
 * and the streaming one, so both scan at the same edges. */
static size_t scan_step(struct scanner *s, char *buf, size_t have, size_t keep)
{
	scan_block(s, buf, have - keep, have);
	memmove(buf, buf + have - keep, keep);
	return keep;
}

/* The file is read in chunks of CB_TTGIR_CHUNK bytes into one buffer that
 * also holds oplen + 1 bytes of lookahead; those bytes move to the front
 * and start the next chunk, so an occurrence across an edge is seen whole
 * and memory stays bounded whatever the file or line length. read() and not
 * mmap(): measured on 200 MB of TTGIR, mapping and unmapping pages cost 3x
 * the search itself, and a chunk this size stays in the CPU's cache. */
int cb_ttgir_count_file(const char *path, const char *op, long long *count, struct cb_err *err)
{
	struct scanner s = { op, strlen(op), L_LINE, 0, NULL, NULL, 0, 0, 0 };
	struct stat st;
	size_t keep = s.oplen + 1, cap, have = 0, left;
	char *buf;
	int fd, rc = 0;

	if (cb_topology_check_op(op, err) < 0)
		return -1;
	/* O_NOFOLLOW: a link is refused, never followed (ELOOP); O_NONBLOCK: a
	 * FIFO cannot hang the open before fstat refuses it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 && errno != ELOOP)
		return cb_fail(err, "%s: %s", path, strerror(errno));
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return cb_fail(err, "%s: not a regular file", path);
	}
	cap = ((size_t)st.st_size < CB_TTGIR_CHUNK ? (size_t)st.st_size : CB_TTGIR_CHUNK) + keep;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return cb_fail(err, "%s: out of memory", path);
	}
	/* The size from fstat says where the file ends, which saves the read()
	 * that would return 0 (a file is often read in one call). */
	left = (size_t)st.st_size;
	while (rc == 0) {
		size_t want = cap - have < left ? cap - have : left, got;

		rc = fill(fd, buf + have, want, &got, path, err);
		have += got;
		left = got < want ? 0 : left - got;
		if (rc < 0)
			break;
		if (!left) {
			if (have)
				scan_block(&s, buf, have, have);
			break;
		}
		have = scan_step(&s, buf, have, keep);
	}
	free(buf);
	close(fd);
	if (rc == 0)
		*count = s.count;
	return rc;
}

/* ---- counting as the data comes ---------------------------------------- */

/* The same buffer as cb_ttgir_count_file: pieces are copied in until
 * CB_TTGIR_CHUNK bytes and the lookahead are there, so blocks are scanned
 * at the same edges whatever the sizes of the pieces. */
struct cb_ttgir_counter {
	struct scanner s;      /* s.op points at op */
	char *op;
	char *buf;
	size_t keep, cap, have;
};

int cb_ttgir_counter_new(const char *op, struct cb_ttgir_counter **out, struct cb_err *err)
{
	struct cb_ttgir_counter *c;

	*out = NULL;
	if (cb_topology_check_op(op, err) < 0)
		return -1;
	c = calloc(1, sizeof(*c));
	if (c)
		c->op = strdup(op);
	if (c && c->op) {
		c->keep = strlen(op) + 1;
		c->cap = CB_TTGIR_CHUNK + c->keep;
		c->buf = malloc(c->cap);
	}
	if (!c || !c->op || !c->buf) {
		cb_ttgir_counter_free(c);
		return cb_fail(err, "out of memory");
	}
	c->s.op = c->op;
	c->s.oplen = c->keep - 1;
	c->s.st = L_LINE;
	*out = c;
	return 0;
}

void cb_ttgir_counter_feed(struct cb_ttgir_counter *c, const char *p, size_t n)
{
	while (n) {
		size_t k = c->cap - c->have < n ? c->cap - c->have : n;

		memcpy(c->buf + c->have, p, k);
		c->have += k;
		p += k;
		n -= k;
		if (c->have == c->cap)
			c->have = scan_step(&c->s, c->buf, c->have, c->keep);
	}
}

long long cb_ttgir_counter_result(struct cb_ttgir_counter *c)
{
	if (c->have)
		scan_block(&c->s, c->buf, c->have, c->have);
	c->have = 0;
	return c->s.count;
}

void cb_ttgir_counter_free(struct cb_ttgir_counter *c)
{
	if (!c)
		return;
	free(c->op);
	free(c->buf);
	free(c);
}

/* ---- counts made elsewhere ---------------------------------------------- */

int cb_ttgir_counts_init(struct cb_ttgir_counts *c, const char *op, struct cb_err *err)
{
	memset(c, 0, sizeof(*c));
	c->op = strdup(op);
	return c->op ? 0 : cb_fail(err, "out of memory");
}

int cb_ttgir_counts_add(struct cb_ttgir_counts *c, const char *path, long long count,
			struct cb_err *err)
{
	char *copy = strdup(path);

	if (copy && c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct cb_ttgir_count_entry *v = realloc(c->v, cap * sizeof(*v));
		if (!v) {
			free(copy);
			copy = NULL;
		} else {
			c->v = v;
			c->cap = cap;
		}
	}
	if (!copy)
		return cb_fail(err, "out of memory");
	c->v[c->n].path = copy;
	c->v[c->n].count = count;
	c->n++;
	return 0;
}

static int cmp_count_entry(const void *a, const void *b)
{
	return strcmp(((const struct cb_ttgir_count_entry *)a)->path,
		      ((const struct cb_ttgir_count_entry *)b)->path);
}

void cb_ttgir_counts_sort(struct cb_ttgir_counts *c)
{
	if (c->n)
		qsort(c->v, c->n, sizeof(*c->v), cmp_count_entry);
}

int cb_ttgir_counts_find(const struct cb_ttgir_counts *c, const char *op, const char *path,
			 long long *count)
{
	struct cb_ttgir_count_entry key, *hit;

	if (!c || !c->n || !c->op || strcmp(c->op, op) != 0)
		return -1;
	key.path = (char *)(uintptr_t)path;
	hit = bsearch(&key, c->v, c->n, sizeof(*c->v), cmp_count_entry);
	if (!hit)
		return -1;
	*count = hit->count;
	return 0;
}

void cb_ttgir_counts_release(struct cb_ttgir_counts *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
	free(c->op);
	free(c->root);
	cb_tree_release(&c->listing);
	memset(c, 0, sizeof(*c));
}

int cb_is_ttgir_name(const char *name)
{
	size_t n = strlen(name);

	return n > 6 && strcmp(name + n - 6, ".ttgir") == 0;
}
