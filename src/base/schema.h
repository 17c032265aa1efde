/* schema.h: JSON documents described as tables of fields and checked by one
 * routine: presence, type, and no unknown key (a typo must never silently
 * change a contract). Errors name the field by its JSON path, e.g.
 * "workloads[3].timeout_s: expected integer, got string". */
#ifndef CB_SCHEMA_H
#define CB_SCHEMA_H

#include <jansson.h>

#include "caliber.h"

enum cb_jtype {
	CB_J_STRING,
	CB_J_BOOL,
	CB_J_INT,
	CB_J_NUMBER,     /* integer or real */
	CB_J_OBJECT,     /* described by .fields */
	CB_J_ARRAY,      /* of .elem; when .elem is CB_J_OBJECT, elements follow .fields */
	CB_J_STRMAP      /* object whose values are all strings, keys free */
};

struct cb_field {
	const char *name;
	enum cb_jtype type;
	int required;
	enum cb_jtype elem;              /* CB_J_ARRAY only */
	const struct cb_field *fields;   /* CB_J_OBJECT, or arrays of objects; NULL-name terminated */
	const char *help;                /* one line, for documentation */
};

/* Check obj against fields; path is the JSON path of obj ("" at the top). */
int cb_schema_check(const json_t *obj, const struct cb_field *fields, const char *path,
		    struct cb_err *err);

/* "a.b" / "b" / "a[3]" helpers used by callers that report their own checks. */
const char *cb_jtype_name(const json_t *v);

#endif
