/* reply.c: parsing a worker's reply and matching it to its request. */
#include "reply.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* Longest part of a bad reply quoted in a message, and the room its
 * escaped form may take. */
#define QUOTE_MAX 200
#define QUOTE_CAP (4 * QUOTE_MAX + 8)

/* The start of p[0..n) for a message: printable ASCII as it is, any other
 * byte as \xNN (a reply may hold anything; a message is one line of
 * text), "..." when cut. */
static const char *quote(const char *p, size_t n, char out[QUOTE_CAP])
{
	size_t i, k = 0;

	for (i = 0; i < n && i < QUOTE_MAX; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[k++] = (char)c;
		else
			k += (size_t)snprintf(out + k, QUOTE_CAP - k, "\\x%02x", c);
	}
	if (n > QUOTE_MAX)
		k += (size_t)snprintf(out + k, QUOTE_CAP - k, "...");
	out[k] = '\0';
	return out;
}

/* Whether the reply's key (task or phase) names what the request did: a
 * request's id is <task>/<phase>/<cell>/<n>, and field is its segment
 * (0: the task, 1: the phase). Absent is taken (the id already matched). */
static int names_request(const json_t *v, const char *want_id, int field)
{
	const char *p = want_id, *end;
	int i;

	for (i = 0; i < field && p; i++)
		p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL;
	if (!v)
		return 1;
	if (!p || !json_is_string(v))
		return 0;
	end = strchr(p, '/');
	return strlen(json_string_value(v)) == (size_t)(end ? end - p : (ptrdiff_t)strlen(p)) &&
	       strncmp(json_string_value(v), p, strlen(json_string_value(v))) == 0;
}

int cb_reply_parse(const char *line, size_t len, const char *want_id, struct cb_reply *r,
		   struct cb_err *err)
{
	char q[QUOTE_CAP], why[QUOTE_CAP];
	json_error_t je;
	json_t *j, *id, *ex, *er;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (memchr(line, '\0', len))
		return cb_fail(err, "malformed reply (a NUL byte in the line): %s", quote(line, len, q));
	j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return cb_fail(err, "malformed reply (%s): %s", quote(je.text, strlen(je.text), why), quote(line, len, q));
	id = json_object_get(j, "id");
	ex = json_object_get(j, "exit");
	er = json_object_get(j, "error");
	if (!json_is_object(j))
		cb_fail(err, "malformed reply (not a JSON object): %s", quote(line, len, q));
	else if (!id)
		cb_fail(err, "a reply without the request's id '%s': %s", want_id, quote(line, len, q));
	else if (!json_is_string(id))
		cb_fail(err, "a reply whose id is not a string (this request '%s'): %s", want_id, quote(line, len, q));
	else if (strcmp(json_string_value(id), want_id) != 0)
		cb_fail(err, "a reply to another request (id '%s', this request '%s'): a stale, extra or forged reply",
			quote(json_string_value(id), strlen(json_string_value(id)), q), want_id);
	else if (!names_request(json_object_get(j, "task"), want_id, 0) ||
		 !names_request(json_object_get(j, "phase"), want_id, 1))
		cb_fail(err, "a reply to request '%s' whose %s is not the request's: a forged reply: %s", want_id,
			names_request(json_object_get(j, "task"), want_id, 0) ? "phase" : "task", quote(line, len, q));
	else if (!json_is_integer(ex) || json_integer_value(ex) < 0 || json_integer_value(ex) > 255)
		cb_fail(err, "malformed reply (exit is not an exit code 0..255): %s", quote(line, len, q));
	else if (er && !json_is_string(er))
		cb_fail(err, "malformed reply (error is not a string): %s", quote(line, len, q));
	else if (er && !(r->error = strdup(json_string_value(er))))
		cb_fail(err, "reply: out of memory");
	else {
		r->exit = json_integer_value(ex);
		rc = 0;
	}
	json_decref(j);
	return rc;
}

void cb_reply_release(struct cb_reply *r)
{
	if (!r)
		return;
	free(r->error);
	memset(r, 0, sizeof(*r));
}
