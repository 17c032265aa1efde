/* walk.c: sorted, link-safe tree listing. */
#include "walk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsutil.h"

static int push(struct cb_tree *t, size_t *cap, char *rel, const struct stat *st)
{
	if (t->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		struct cb_entry *v = realloc(t->v, ncap * sizeof(*v));
		if (!v)
			return -1;
		t->v = v;
		*cap = ncap;
	}
	t->v[t->n].rel = rel;
	t->v[t->n].kind = S_ISREG(st->st_mode) ? CB_ENT_FILE :
			  S_ISLNK(st->st_mode) ? CB_ENT_LINK : CB_ENT_OTHER;
	t->v[t->n].mode = st->st_mode;
	t->v[t->n].size = st->st_size;
	t->n++;
	return 0;
}

static int walk_dir(const char *root, const char *rel, int (*skip)(const char *),
		    struct cb_tree *t, size_t *cap, struct cb_err *err)
{
	char *dir = rel[0] ? cb_path_join(root, rel) : strdup(root);
	char **names = NULL;
	size_t n = 0, i;
	int rc = 0;

	if (!dir)
		return cb_fail(err, "out of memory");
	if (cb_list_dir(dir, &names, &n, err) < 0) {
		free(dir);
		return -1;
	}
	for (i = 0; i < n && rc == 0; i++) {
		char *crel = rel[0] ? cb_path_join(rel, names[i]) : strdup(names[i]);
		char *abs = crel ? cb_path_join(root, crel) : NULL;
		struct stat st;

		if (!abs) {
			free(crel);
			rc = cb_fail(err, "out of memory");
			break;
		}
		if (lstat(abs, &st) < 0) {
			rc = cb_fail(err, "%s: %s", abs, strerror(errno));
			free(crel);
		} else if (S_ISDIR(st.st_mode)) {
			if (!(skip && skip(names[i])))
				rc = walk_dir(root, crel, skip, t, cap, err);
			free(crel);
		} else if (push(t, cap, crel, &st) < 0) {
			free(crel);
			rc = cb_fail(err, "out of memory");
		}
		free(abs);
	}
	cb_strv_free(names, n);
	free(dir);
	return rc;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct cb_entry *)a)->rel, ((const struct cb_entry *)b)->rel);
}

int cb_walk(const char *root, int (*skip_dir)(const char *name), struct cb_tree *t,
	    struct cb_err *err)
{
	size_t cap = 0;

	memset(t, 0, sizeof(*t));
	if (!cb_is_dir(root))
		return cb_fail(err, "%s: not a directory", root);
	if (walk_dir(root, "", skip_dir, t, &cap, err) < 0) {
		cb_tree_free(t);
		return -1;
	}
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_entry);
	return 0;
}

void cb_tree_free(struct cb_tree *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		free(t->v[i].rel);
	free(t->v);
	memset(t, 0, sizeof(*t));
}
