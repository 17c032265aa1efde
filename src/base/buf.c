/* buf.c: a growing byte buffer. */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Make room for extra more bytes plus the NUL. */
static int grow(struct cb_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1, cap;
	char *d;

	if (b->oom)
		return -1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	d = realloc(b->data, cap);
	if (!d) {
		b->oom = 1;
		return -1;
	}
	b->data = d;
	b->cap = cap;
	return 0;
}

int cb_buf_add(struct cb_buf *b, const void *data, size_t len)
{
	if (grow(b, len) < 0)
		return -1;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int cb_buf_adds(struct cb_buf *b, const char *s)
{
	return cb_buf_add(b, s, strlen(s));
}

int cb_buf_addf(struct cb_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || grow(b, (size_t)n) < 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void cb_buf_escape_controls(struct cb_buf *b, size_t from)
{
	struct cb_buf out = CB_BUF_INIT;
	size_t i;

	if (b->oom || !b->data || from >= b->len)
		return;
	for (i = from; i < b->len; i++) {
		unsigned char c = (unsigned char)b->data[i], next = i + 1 < b->len ? (unsigned char)b->data[i + 1] : 0;

		if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {
			cb_buf_addf(&out, "\\xc2\\x%02x", next);
			i++;
		} else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
			cb_buf_addf(&out, "\\x%02x", c);
		} else {
			cb_buf_add(&out, &b->data[i], 1);
		}
	}
	if (out.oom) {
		b->oom = 1;
	} else {
		b->len = from;
		b->data[from] = '\0';
		cb_buf_add(b, out.data ? out.data : "", out.len);
	}
	cb_buf_release(&out);
}

char *cb_buf_detach(struct cb_buf *b, size_t *len)
{
	char *d;

	if (b->oom) {
		cb_buf_release(b);
		return NULL;
	}
	if (!b->data) {
		if (grow(b, 0) < 0)
			return NULL;
		b->data[0] = '\0';
	}
	d = b->data;
	if (len)
		*len = b->len;
	b->data = NULL;
	b->len = b->cap = 0;
	return d;
}

void cb_buf_release(struct cb_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->oom = 0;
}

char *cb_substitute(const char *text, const char *const keys[], const char *const vals[], size_t n)
{
	struct cb_buf b = CB_BUF_INIT;
	const char *p = text;

	while (*p) {
		size_t k;
		for (k = 0; k < n; k++)
			if (strncmp(p, keys[k], strlen(keys[k])) == 0)
				break;
		if (k < n) {
			cb_buf_adds(&b, vals[k]);
			p += strlen(keys[k]);
		} else {
			cb_buf_add(&b, p++, 1);
		}
	}
	return cb_buf_detach(&b, NULL);
}
