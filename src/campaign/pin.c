/* pin.c: filling a manifest's pins from real trees (pin.h). */
#include "pin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "base/home.h"
#include "base/digest.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "manifest.h"
#include "plan.h"
#include "base/proc.h"
#include "base/sha.h"
#include "base/suggest.h"

extern char **environ;

enum kind { KIND_NONE, KIND_COMMIT, KIND_TREE };

/* The digests taken so far, by folder: cells share builds, and a tree is
 * read once. */
struct digests {
	char dir[8][4096];
	char hex[8][CB_SHA256_HEX];
	size_t n;
};

static int tree_of(struct digests *d, const char *dir, char hex[CB_SHA256_HEX], struct cb_err *err)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (strcmp(d->dir[i], dir) == 0) {
			memcpy(hex, d->hex[i], CB_SHA256_HEX);
			return 0;
		}
	if (cb_tree_digest(dir, hex, err) < 0)
		return -1;
	if (d->n < 8 && strlen(dir) < sizeof(d->dir[0])) {
		snprintf(d->dir[d->n], sizeof(d->dir[0]), "%s", dir);
		memcpy(d->hex[d->n++], hex, CB_SHA256_HEX);
	}
	return 0;
}

/* git -C dir ARGS...: its stdout (trailing newline cut) into *out; -1
 * when git fails or exits non-zero (err says how), *out NULL. */
static int git(const char *dir, const char *const *args, char **out, struct cb_err *err)
{
	const char *argv[16];
	char *errout = NULL, how[64];
	size_t n = 0, len;
	int status = 0, rc = 0;

	argv[n++] = "git";
	argv[n++] = "-C";
	argv[n++] = dir;
	while (*args && n < 15)
		argv[n++] = *args++;
	argv[n] = NULL;
	*out = NULL;
	if (cb_run_capture(argv, environ, 60000, out, &errout, &status, err) < 0)
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		cb_describe_status(status, how, sizeof(how));
		rc = cb_fail(err, "git -C %s %s %s", dir, argv[3], how);
		free(*out);
		*out = NULL;
	} else if ((len = strlen(*out)) && (*out)[len - 1] == '\n') {
		(*out)[len - 1] = '\0';
	}
	free(errout);
	return rc;
}

/* Whether dir lies in a git work tree. */
static int in_checkout(const char *dir)
{
	static const char *const args[] = { "rev-parse", "--is-inside-work-tree", NULL };
	struct cb_err ignored = CB_ERR_INIT;
	char *out = NULL;
	int yes = git(dir, args, &out, &ignored) == 0 && strcmp(out, "true") == 0;

	free(out);
	return yes;
}

/* The commit of the checkout dir lies in, which must be clean there:
 * nothing changed from it, nothing untracked (what the sources preflight
 * checks against the pin). */
static int checkout_commit(const char *label, const char *dir, char hex[41], struct cb_err *err)
{
	static const char *const head[] = { "rev-parse", "--verify", "-q", "HEAD^{commit}", NULL };
	static const char *const status[] = { "status", "--porcelain", "--untracked-files=all", "--", ".", NULL };
	char *out = NULL;
	int rc = 0;

	if (git(dir, head, &out, err) < 0)
		return cb_fail(err, "%s: %s is in a git checkout without a commit", label, dir);
	if (!cb_is_hex(out, 40))
		rc = cb_fail(err, "%s: git names the commit of %s '%s', not 40 hex digits", label, dir, out);
	else
		memcpy(hex, out, 41);
	free(out);
	if (rc < 0)
		return -1;
	if (git(dir, status, &out, err) < 0)
		return cb_prefix(err, "%s", label);
	if (*out) {
		char *nl = strchr(out, '\n');
		if (nl)
			*nl = '\0';
		rc = cb_fail(err, "%s: %s has changes or untracked files (%s%s): commit them, or pin it by tree_sha256",
			     label, dir, out, nl ? ", ..." : "");
	}
	free(out);
	return rc;
}

/* The pin kind a template's source object asks for. */
static int kind_of(const json_t *s, const char *label, enum kind *k, struct cb_err *err)
{
	int c = json_object_get(s, "commit") != NULL, t = json_object_get(s, "tree_sha256") != NULL;

	if (!json_is_object(s))
		return cb_fail(err, "%s: expected object", label);
	if (c && t)
		return cb_fail(err, "%s: give one of commit and tree_sha256 to say how it is pinned", label);
	*k = c ? KIND_COMMIT : t ? KIND_TREE : KIND_NONE;
	return 0;
}

/* Set s's pin to value, of kind k (the other kind's key removed). */
static int set_pin(json_t *s, enum kind k, const char *value, struct cb_err *err)
{
	json_object_del(s, k == KIND_COMMIT ? "tree_sha256" : "commit");
	if (json_object_set_new(s, k == KIND_COMMIT ? "commit" : "tree_sha256", json_string(value)) < 0)
		return cb_fail(err, "out of memory");
	return 0;
}

/* Pin the source object s (label its JSON path) from the tree dir: a
 * commit where the template asks for one (or for none, want_commit) and
 * dir is in a checkout, else the tree's digest. */
static int pin_tree(json_t *s, const char *label, const char *dir, int want_commit, struct digests *d,
		    struct cb_buf *log, struct cb_err *err)
{
	enum kind k;
	char hex[CB_SHA256_HEX];

	if (kind_of(s, label, &k, err) < 0)
		return -1;
	if (!cb_is_dir(dir))
		return cb_fail(err, "%s: %s is not a directory", label, dir);
	if (k == KIND_COMMIT || (k == KIND_NONE && want_commit)) {
		if (in_checkout(dir)) {
			if (checkout_commit(label, dir, hex, err) < 0 || set_pin(s, KIND_COMMIT, hex, err) < 0)
				return -1;
			cb_buf_addf(log, "%s: commit %s of %s\n", label, hex, dir);
			return 0;
		}
		if (k == KIND_COMMIT)
			cb_buf_addf(log, "%s: %s is in no git checkout: pinned by tree_sha256, not commit\n", label, dir);
	}
	if (tree_of(d, dir, hex, err) < 0 || set_pin(s, KIND_TREE, hex, err) < 0)
		return cb_prefix(err, "%s", label);
	cb_buf_addf(log, "%s: tree_sha256 %s of %s\n", label, hex, dir);
	return 0;
}

/* The harness is caliber itself: the commit the binary was built from,
 * where caliber's tree is a checkout (preflight compares them), else the
 * tree's digest (an installed caliber). */
static int pin_harness(json_t *s, int allow_dirty, struct digests *d, struct cb_buf *log, struct cb_err *err)
{
	const char *home = cb_home(), *built = cb_commit();
	char hex[41];
	enum kind k;

	if (kind_of(s, "sources.harness", &k, err) < 0)
		return -1;
	if (k == KIND_TREE || !in_checkout(home))
		return pin_tree(s, "sources.harness", home, 0, d, log, err);
	if (!cb_is_hex(built, 40) && !(allow_dirty && strlen(built) == 46 && strcmp(built + 40, "+dirty") == 0))
		return cb_fail(err, "sources.harness: this caliber was built from %s; build it from a clean checkout%s", built,
			       strstr(built, "+dirty") ? " (or pin with --allow-dirty-harness and run with it)" : "");
	memcpy(hex, built, 40);
	hex[40] = '\0';
	if (set_pin(s, KIND_COMMIT, hex, err) < 0)
		return -1;
	cb_buf_addf(log, "sources.harness: commit %s (this caliber was built from it%s), %s\n", hex,
		    strstr(built, "+dirty") ? ", with changes" : "", home);
	return 0;
}

/* The index of the --cell for cell name, or ncells. */
static size_t given_cell(const struct cb_pin_opts *o, const char *name)
{
	size_t i;

	for (i = 0; i < o->ncells; i++)
		if (strcmp(o->cells[i].name, name) == 0)
			return i;
	return o->ncells;
}

/* Every --cell names a cell of the template, once. */
static int check_given_cells(const json_t *cells, const struct cb_pin_opts *o, struct cb_err *err)
{
	const char *names[64];
	size_t n = 0, i, j;
	const json_t *c;

	json_array_foreach(cells, i, c) {
		if (!json_is_string(json_object_get(c, "name")))
			return cb_fail(err, "cells[%zu].name: expected string", i);
		if (n < 64)
			names[n++] = cb_json_str(c, "name");
	}
	for (i = 0; i < o->ncells; i++) {
		const char *near;
		for (j = 0; j < i; j++)
			if (strcmp(o->cells[j].name, o->cells[i].name) == 0)
				return cb_fail(err, "--cell %s: given twice", o->cells[i].name);
		for (j = 0; j < n && strcmp(names[j], o->cells[i].name) != 0; j++)
			;
		if (j < n)
			continue;
		near = cb_suggest(o->cells[i].name, names, n);
		return cb_fail(err, "--cell %s=...: the template has no cell '%s'%s%s%s", o->cells[i].name,
			       o->cells[i].name, near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
	}
	return 0;
}

/* Give cell c (index i) its own compiler at root: the template's compiler
 * object, else one made with sources.compiler's pin kind and import. */
static int pin_cell(json_t *c, size_t i, const char *root, const json_t *sc, struct digests *d, struct cb_buf *log,
		    struct cb_err *err)
{
	json_t *cc = json_object_get(c, "compiler");
	char label[96];
	enum kind k;

	snprintf(label, sizeof(label), "cells[%zu].compiler (cell %.32s)", i, cb_json_str(c, "name"));
	if (cb_is_fs_root(root))
		return cb_fail(err, "%s: '%s' is the file system's root, not a build's folder", label, root);
	if (!cc) {
		if (kind_of(sc, "sources.compiler", &k, err) < 0)
			return -1;
		cc = json_object();
		if (!cc || json_object_set_new(c, "compiler", cc) < 0 ||
		    json_object_set_new(cc, k == KIND_COMMIT ? "commit" : "tree_sha256", json_string("")) < 0 ||
		    (json_object_get(sc, "import") &&
		     json_object_set(cc, "import", json_object_get(sc, "import")) < 0))
			return cb_fail(err, "out of memory");
	}
	if (pin_tree(cc, label, root, 0, d, log, err) < 0)
		return -1;
	if (json_object_set_new(cc, "root", json_string(root)) < 0)
		return cb_fail(err, "out of memory");
	return 0;
}

/* The index of the cell with role, or the size of cells. */
static size_t cell_of_role(const json_t *cells, const char *role)
{
	size_t i;
	const json_t *c;

	json_array_foreach(cells, i, c)
		if (cb_json_str(c, "role") && strcmp(cb_json_str(c, "role"), role) == 0)
			return i;
	return json_array_size(cells);
}

/* The cells' compilers (pin.h). */
static int pin_cells(json_t *cells, const struct cb_pin_opts *o, const json_t *sc, struct digests *d,
		     struct cb_buf *log, struct cb_err *err)
{
	size_t n = json_array_size(cells), base = cell_of_role(cells, "baseline"), ctl = cell_of_role(cells, "control");
	size_t i, g;
	json_t *c;

	if (!json_is_array(cells))
		return cb_fail(err, "cells: expected array");
	if (check_given_cells(cells, o, err) < 0)
		return -1;
	json_array_foreach(cells, i, c) {
		if (!json_is_object(c))
			return cb_fail(err, "cells[%zu]: expected object", i);
		g = given_cell(o, cb_json_str(c, "name"));
		if (g < o->ncells) {
			if (pin_cell(c, i, o->cells[g].root, sc, d, log, err) < 0)
				return -1;
		} else if (i != ctl && json_object_get(c, "compiler")) {
			if (pin_cell(c, i, o->compiler, sc, d, log, err) < 0)
				return -1;
		}
	}
	if (ctl >= n || given_cell(o, cb_json_str(json_array_get(cells, ctl), "name")) < o->ncells)
		return 0;
	c = json_array_get(cells, ctl);
	if (base < n && json_object_get(json_array_get(cells, base), "compiler")) {
		json_t *copy = json_deep_copy(json_object_get(json_array_get(cells, base), "compiler"));
		if (!copy || json_object_set_new(c, "compiler", copy) < 0)
			return cb_fail(err, "out of memory");
		cb_buf_addf(log, "cells[%zu].compiler (cell %s): the baseline's, as the control's must be\n", ctl,
			    cb_json_str(c, "name"));
	} else if (json_object_get(c, "compiler")) {
		return cb_fail(err, "cells[%zu].compiler: the control must run the baseline's compiler, and the baseline runs "
				    "sources.compiler: give the baseline one with --cell, or take the control's out", ctl);
	}
	return 0;
}

int cb_pin(json_t *doc, const struct cb_pin_opts *o, struct cb_buf *log, struct cb_err *err)
{
	json_t *src = json_object_get(doc, "sources");
	struct digests *d;
	int rc = -1;

	if (!json_is_object(doc))
		return cb_fail(err, "expected a manifest (a JSON object)");
	if (!json_is_object(src))
		return cb_fail(err, "sources: %s", src ? "expected object" : "missing");
	d = calloc(1, sizeof(*d));
	if (!d)
		return cb_fail(err, "out of memory");
	if (pin_tree(json_object_get(src, "compiler"), "sources.compiler", o->compiler, 0, d, log, err) == 0 &&
	    pin_tree(json_object_get(src, "corpus"), "sources.corpus", o->corpus, 1, d, log, err) == 0 &&
	    pin_harness(json_object_get(src, "harness"), o->allow_dirty_harness, d, log, err) == 0)
		rc = json_object_get(doc, "cells") ? pin_cells(json_object_get(doc, "cells"), o,
							       json_object_get(src, "compiler"), d, log, err)
						   : 0;
	free(d);
	return rc;
}

/* The shortest text of the double x that reads back as x, in JSON's
 * syntax, and still a real ("2.0", not "2"): what Python's repr gives. */
static void real_text(double x, char out[32])
{
	int digits;

	for (digits = 1; digits < 17; digits++) {
		snprintf(out, 32, "%.*g", digits, x);
		if (strtod(out, NULL) == x)
			break;
	}
	snprintf(out, 32, "%.*g", digits, x);
	if (!strpbrk(out, ".e"))
		strcat(out, ".0");
}

/* The mark that stands for the real v in the dump: the string "\0<n>",
 * which no manifest can hold (NUL is refused), so that its place is found
 * without doubt; v's text goes to reals[n]. NULL when out of memory or
 * past cap. */
static json_t *mark_of(const json_t *v, char (*reals)[32], long *n, long cap)
{
	char mark[24];
	int len;

	if (*n >= cap)
		return NULL;
	real_text(json_real_value(v), reals[*n]);
	len = snprintf(mark, sizeof(mark), "%c%ld", '\0', (*n)++);
	return json_stringn(mark, (size_t)len);
}

/* Replace every real of j (a copy) by its mark; returns the next n, or
 * -1 when out of memory or past cap. */
static long mark_reals(json_t *j, char (*reals)[32], long n, long cap)
{
	const char *k;
	json_t *v, *m;
	size_t i;
	void *tmp;

	if (json_is_object(j))
		json_object_foreach_safe(j, tmp, k, v) {
			if (!json_is_real(v))
				n = mark_reals(v, reals, n, cap);
			else if (!(m = mark_of(v, reals, &n, cap)) || json_object_set_new(j, k, m) < 0)
				n = -1;
			if (n < 0)
				return -1;
		}
	if (json_is_array(j))
		json_array_foreach(j, i, v) {
			if (!json_is_real(v))
				n = mark_reals(v, reals, n, cap);
			else if (!(m = mark_of(v, reals, &n, cap)) || json_array_set_new(j, i, m) < 0)
				n = -1;
			if (n < 0)
				return -1;
		}
	return n;
}

char *cb_pin_text(const json_t *doc, const char *name, struct cb_err *err)
{
	enum { CAP = 256 };
	char (*reals)[32] = calloc(CAP, sizeof(*reals)), *s = NULL, *p;
	json_t *copy = json_deep_copy(doc);
	struct cb_buf out = CB_BUF_INIT;
	struct cb_manifest m;
	long n = copy && reals ? mark_reals(copy, reals, 0, CAP) : -1;

	if (n >= 0)
		s = json_dumps(copy, JSON_INDENT(2));
	json_decref(copy);
	if (!s) {
		free(reals);
		cb_fail(err, n < 0 ? "out of memory (or more than %d real numbers)" : "json: cannot serialise", CAP);
		return NULL;
	}
	/* Each mark is dumped as "\u0000<n>": put the real's text there. */
	for (p = s; *p;) {
		char *at = strstr(p, "\"\\u0000"), *end;
		long k;
		if (!at) {
			cb_buf_adds(&out, p);
			break;
		}
		k = strtol(at + 7, &end, 10);
		cb_buf_addf(&out, "%.*s%s", (int)(at - p), p, reals[k]);
		p = end + 1;
	}
	cb_buf_adds(&out, "\n");
	free(s);
	free(reals);
	memset(&m, 0, sizeof(m));
	if (!out.data) {
		cb_fail(err, "out of memory");
		return NULL;
	}
	if (cb_manifest_parse(out.data, out.len, name, &m, err) < 0) {
		cb_buf_release(&out);
		return NULL;
	}
	cb_manifest_release(&m);
	return cb_buf_detach(&out, NULL);
}
