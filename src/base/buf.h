/* buf.h: a growing byte buffer (git's strbuf, smaller). */
#ifndef CB_BUF_H
#define CB_BUF_H

#include <stddef.h>

#include "caliber.h"

struct cb_buf {
	char *data;     /* NUL-terminated when non-NULL */
	size_t len, cap;
	int oom;        /* set once an allocation failed; later appends do nothing */
};

#define CB_BUF_INIT { NULL, 0, 0, 0 }

int cb_buf_add(struct cb_buf *b, const void *data, size_t len);
int cb_buf_adds(struct cb_buf *b, const char *s);
int cb_buf_addf(struct cb_buf *b, const char *fmt, ...) CB_PRINTF(2, 3);
/* text with every occurrence of keys[i] replaced by vals[i] (n pairs,
 * matched at each position in order); a fresh string, NULL when out of
 * memory. Used for {harness}-style overlays and @KEY@ templates. */
char *cb_substitute(const char *text, const char *const keys[], const char *const vals[], size_t n);

/* Rewrite the bytes of b from offset from on so that none drives a
 * terminal: each control byte but newline and tab (C0, DEL) and each
 * UTF-8 encoded C1 control becomes its \xNN escape. Text that a worker or
 * the code under test wrote (a TTGIR location, a kernel name) passes
 * through it before it is printed. */
void cb_buf_escape_controls(struct cb_buf *b, size_t from);

/* Hand the contents to the caller (never NULL unless out of memory) and reset. */
char *cb_buf_detach(struct cb_buf *b, size_t *len);
void cb_buf_release(struct cb_buf *b);

#endif
