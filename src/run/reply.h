/* reply.h: a worker's reply line (docs/formats.md, "Worker session
 * protocol"), parsed and matched to the request it must answer. Every
 * request carries an id; a reply counts only when it is one JSON object
 * that echoes that id (and, where it names them, the request's task and
 * phase), with an integer exit code. Anything else (no id, another
 * request's id, task or phase, a stale or extra reply, bad JSON) is the worker
 * breaking the protocol: a harness failure of the cell, never its answer. */
#ifndef CB_REPLY_H
#define CB_REPLY_H

#include <stddef.h>

#include "caliber.h"

/* A reply that answers its request. */
struct cb_reply {
	long long exit;          /* pytest's exit code, 0..255 */
	char *error;             /* the worker's "error", or NULL */
};

/* Parse line[0..len) (without its newline; a NUL byte inside is refused)
 * as the reply to the request with id want_id. On success fills r (release
 * with cb_reply_release); on failure err says how the line breaks the
 * protocol, quoting at most the start of it. */
int cb_reply_parse(const char *line, size_t len, const char *want_id, struct cb_reply *r,
		   struct cb_err *err);
void cb_reply_release(struct cb_reply *r);

#endif
