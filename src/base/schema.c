/* schema.c: the one routine that walks field tables. */
#include "schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "suggest.h"

static const char *type_word(enum cb_jtype t)
{
	switch (t) {
	case CB_J_STRING: return "string";
	case CB_J_BOOL: return "boolean";
	case CB_J_INT: return "integer";
	case CB_J_NUMBER: return "number";
	case CB_J_OBJECT: return "object";
	case CB_J_ARRAY: return "array";
	case CB_J_STRMAP: return "object of strings";
	}
	return "?";
}

const char *cb_jtype_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "real";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_NULL: return "null";
	}
	return "?";
}

static int type_ok(const json_t *v, enum cb_jtype t)
{
	switch (t) {
	case CB_J_STRING: return json_is_string(v);
	case CB_J_BOOL: return json_is_boolean(v);
	case CB_J_INT: return json_is_integer(v);
	case CB_J_NUMBER: return json_is_number(v);
	case CB_J_OBJECT:
	case CB_J_STRMAP: return json_is_object(v);
	case CB_J_ARRAY: return json_is_array(v);
	}
	return 0;
}

static int check_value(const json_t *v, enum cb_jtype t, const struct cb_field *sub,
		       const char *path, struct cb_err *err);

static int check_array(const json_t *v, const struct cb_field *f, const char *path,
		       struct cb_err *err)
{
	size_t i;
	const json_t *e;

	json_array_foreach((json_t *)v, i, e) {
		char *p = cb_strdupf("%s[%zu]", path, i);
		int rc = p ? check_value(e, f->elem, f->fields, p, err) : cb_fail(err, "%s: out of memory", path);
		free(p);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int check_value(const json_t *v, enum cb_jtype t, const struct cb_field *sub,
		       const char *path, struct cb_err *err)
{
	if (!type_ok(v, t))
		return cb_fail(err, "%s: expected %s, got %s", path, type_word(t), cb_jtype_name(v));
	if (t == CB_J_OBJECT && sub)
		return cb_schema_check(v, sub, path, err);
	if (t == CB_J_STRMAP) {
		const char *k;
		const json_t *e;
		json_object_foreach((json_t *)v, k, e) {
			if (!json_is_string(e))
				return cb_fail(err, "%s.%s: expected string, got %s", path, k, cb_jtype_name(e));
		}
	}
	return 0;
}

/* One field of an object against its table entry; p is its JSON path. */
static int check_field(const json_t *obj, const struct cb_field *f, const char *p, struct cb_err *err)
{
	const json_t *v = json_object_get(obj, f->name);

	if (!v)
		return f->required ? cb_fail(err, "%s: missing", p) : 0;
	if (f->type != CB_J_ARRAY)
		return check_value(v, f->type, f->fields, p, err);
	if (!json_is_array(v))
		return cb_fail(err, "%s: expected array, got %s", p, cb_jtype_name(v));
	return check_array(v, f, p, err);
}

/* Refuse key, which no field of fields names, with the field it most
 * likely misspells (a typo must say what was meant, not only that it is
 * wrong). */
static int unknown_key(const struct cb_field *fields, const char *path, const char *key, struct cb_err *err)
{
	const char *names[64], *near;
	size_t n = 0;

	while (fields[n].name && n < sizeof(names) / sizeof(names[0])) {
		names[n] = fields[n].name;
		n++;
	}
	near = cb_suggest(key, names, n);
	if (near)
		return cb_fail(err, "%s%s%s: unknown key (did you mean %s?)", path, path[0] ? "." : "", key, near);
	return cb_fail(err, "%s%s%s: unknown key", path, path[0] ? "." : "", key);
}

int cb_schema_check(const json_t *obj, const struct cb_field *fields, const char *path,
		    struct cb_err *err)
{
	const char *sep = path[0] ? "." : "", *key;
	const struct cb_field *f;
	const json_t *v;

	if (!json_is_object(obj))
		return cb_fail(err, "%s: expected object, got %s", path[0] ? path : "(top)", cb_jtype_name(obj));
	json_object_foreach((json_t *)obj, key, v) {
		for (f = fields; f->name; f++)
			if (strcmp(f->name, key) == 0)
				break;
		if (!f->name)
			return unknown_key(fields, path, key, err);
	}
	for (f = fields; f->name; f++) {
		char *p = cb_strdupf("%s%s%s", path, sep, f->name);
		int rc = p ? check_field(obj, f, p, err) : cb_fail(err, "%s: out of memory", path);
		free(p);
		if (rc < 0)
			return -1;
	}
	return 0;
}
