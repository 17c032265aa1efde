/* compile_log.c: a cell's compile.json read. */
#include "compile_log.h"

#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "base/jsonio.h"

/* One count of the file: an integer >= 0. */
static int count(const json_t *j, const char *key, long long *out, const char *path, struct cb_err *err)
{
	const json_t *v = json_object_get(j, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return cb_fail(err, "%s: %s: expected an integer >= 0", path, key);
	*out = (long long)json_integer_value(v);
	return 0;
}

int cb_compile_log_read(const char *dir, struct cb_compile_log *out, struct cb_err *err)
{
	char *path = cb_path_join(dir, "compile.json");
	json_t *j = NULL;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!path)
		return cb_fail(err, "out of memory");
	if (!cb_exists(path)) {
		free(path);
		return 0;
	}
	j = cb_json_load_file(path, err);
	if (!j)
		goto out;
	if (!json_is_object(j)) {
		cb_fail(err, "%s: expected a JSON object", path);
		goto out;
	}
	if (!json_is_boolean(json_object_get(j, "listened"))) {
		cb_fail(err, "%s: listened: expected true or false", path);
		goto out;
	}
	out->listened = json_is_true(json_object_get(j, "listened"));
	if (count(j, "compiles", &out->compiles, path, err) < 0 ||
	    count(j, "compile_us", &out->compile_us, path, err) < 0 ||
	    count(j, "cache_hits", &out->cache_hits, path, err) < 0 ||
	    count(j, "cache_hit_us", &out->cache_hit_us, path, err) < 0)
		goto out;
	rc = 1;
out:
	json_decref(j);
	free(path);
	return rc;
}
