/* tlib.c: helpers shared by the C unit tests. */
#include "tlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"

const char *tl_root(void)
{
	const char *r = getenv("CALIBER_ROOT");

	return r && *r ? r : ".";
}

const char *tl_path(const char *rel)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%s/%s", tl_root(), rel);
	return buf;
}

char *tl_slurp(const char *path, size_t *len)
{
	struct cb_err err;
	char *buf;

	if (cb_read_file(path, &buf, len, &err) < 0) {
		fprintf(stderr, "tlib: %s\n", err.msg);
		abort();
	}
	return buf;
}

static char tmp_root[256];

static void cleanup(void)
{
	struct cb_err err;

	if (tmp_root[0])
		cb_rm_rf(tmp_root, &err);
}

const char *tl_tmpdir(void)
{
	static int n;
	static char dir[300];

	if (!tmp_root[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(tmp_root, sizeof(tmp_root), "%s/caliber-unit.XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(tmp_root))
			abort();
		atexit(cleanup);
	}
	snprintf(dir, sizeof(dir), "%s/%d", tmp_root, n++);
	{
		struct cb_err err;
		if (cb_mkdir_p(dir, 0755, &err) < 0)
			abort();
	}
	return dir;
}

char **tl_glob(const char *dir, const char *suffix, size_t *n)
{
	struct cb_err err;
	char **names, **out;
	size_t cnt, i, k = 0, sl = strlen(suffix);

	if (cb_list_dir(dir, &names, &cnt, &err) < 0) {
		fprintf(stderr, "tlib: %s\n", err.msg);
		abort();
	}
	out = calloc(cnt + 1, sizeof(*out));
	for (i = 0; i < cnt; i++) {
		size_t l = strlen(names[i]);
		if (l > sl && strcmp(names[i] + l - sl, suffix) == 0)
			out[k++] = names[i];
		else
			free(names[i]);
	}
	free(names);
	*n = k;
	return out;
}
