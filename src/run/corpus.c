/* corpus.c: `caliber inventory --corpus DIR -o FILE`: the inventory
 * CSV of a corpus tree (docs/design.md section 4). The tree is walked here; its pytest
 * files are read statically by Python's own parser, in
 * python/caliber_pytest/inventory.py (one interpreter for the whole tree,
 * nothing of the corpus imported or run); the rows, the digest, the
 * messages and the atomic write are done here. */
#include "corpus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "base/home.h"
#include "base/buf.h"
#include "base/csv.h"
#include "base/digest.h"
#include "base/fsutil.h"
#include "campaign/inventory.h"
#include "base/jsonio.h"
#include "campaign/plan.h"
#include "base/proc.h"
#include "base/walk.h"
#include "worker.h"

/* The reader gets this long for the whole tree (FlagGems: about 2 s). */
#define READER_TIMEOUT_MS 600000

/* One test file: its path relative to the corpus and what the reader says
 * of it, "tests" borrowed from the reader's result. */
struct pyfile {
	char *rel;              /* "benchmark/test_abs.py" */
	const json_t *tests;    /* [{"id", "line", "marks", "param_marks", "dtype", "dtypes"}], checked */
};

/* The test files of benchmark/ or tests/. */
struct side {
	struct pyfile *v;
	size_t n, cap;
	size_t top, perf;       /* files directly in the folder; those named test_*_perf.py */
};

/* One row to be: an op and the benchmark test that carries it. */
struct op {
	const char *name;       /* borrowed from the reader's result */
	const struct pyfile *bf;
	const json_t *bt;
	size_t key[4];          /* where: file, test, marks (0) or param_marks (1), position */
};

/* v grown to hold more than n elements of size bytes (doubling), or NULL
 * when out of memory, v then left as it was. */
static void *grow(void *v, size_t n, size_t *cap, size_t size)
{
	size_t ncap;
	void *nv;

	if (n < *cap)
		return v;
	ncap = *cap ? *cap * 2 : 8;
	nv = realloc(v, ncap * size);
	if (nv)
		*cap = ncap;
	return nv;
}

/* The same folders the tree digest leaves out. */
static int skip_dir(const char *name)
{
	return strcmp(name, ".git") == 0 || strcmp(name, "__pycache__") == 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void side_free(struct side *sd)
{
	size_t i;

	for (i = 0; i < sd->n; i++)
		free(sd->v[i].rel);
	free(sd->v);
	memset(sd, 0, sizeof(*sd));
}

/* List every test_*.py below dir/sub (regular files; links are not
 * followed), in sorted path order. */
static int list_side(const char *dir, const char *sub, struct side *sd, struct cb_err *err)
{
	char *root = cb_path_join(dir, sub);
	struct cb_tree tree;
	size_t i;
	int rc, walked;

	if (!root)
		return cb_fail(err, "out of memory");
	rc = walked = cb_walk(root, skip_dir, 0, &tree, err);
	for (i = 0; rc == 0 && i < tree.n; i++) {
		const struct cb_entry *e = &tree.v[i];
		const char *base = strrchr(e->rel, '/') ? strrchr(e->rel, '/') + 1 : e->rel;
		struct pyfile *nv;

		if (e->kind != CB_ENT_FILE || strncmp(base, "test_", 5) != 0 || !ends_with(base, ".py"))
			continue;
		if (base == e->rel) {
			sd->top++;
			sd->perf += (size_t)ends_with(base, "_perf.py");
		}
		nv = grow(sd->v, sd->n, &sd->cap, sizeof(*nv));
		if (!nv) {
			rc = cb_fail(err, "out of memory");
			break;
		}
		sd->v = nv;
		sd->v[sd->n].tests = NULL;
		sd->v[sd->n].rel = cb_strdupf("%s/%s", sub, e->rel);
		if (!sd->v[sd->n++].rel)
			rc = cb_fail(err, "out of memory");
	}
	if (walked == 0)
		cb_tree_release(&tree);
	free(root);
	return rc;
}

/* ------------------------------------------------------------------ */
/* The reader                                                           */

/* Whether v is an array of strings. */
static int string_array(const json_t *v)
{
	size_t i;
	const json_t *s;

	if (!json_is_array(v))
		return 0;
	json_array_foreach(v, i, s)
		if (!json_is_string(s))
			return 0;
	return 1;
}

/* Check that one file's entry of the result is as the reader promises
 * (python/caliber_pytest/inventory.py), so that the rows can read it
 * without checks of their own; "where" names it in the error. */
static int check_entry(const json_t *entry, const char *where, struct cb_err *err)
{
	const json_t *tests = json_object_get(entry, "tests"), *ws = json_object_get(entry, "warnings"), *t;
	size_t i;

	if (!json_is_array(tests) || !json_is_array(ws))
		return cb_fail(err, "%s: no tests and warnings", where);
	json_array_foreach(tests, i, t) {
		const char *kind = json_string_value(json_object_get(t, "dtype"));
		if (!json_is_string(json_object_get(t, "id")) || json_integer_value(json_object_get(t, "line")) < 1 ||
		    !string_array(json_object_get(t, "marks")) || !string_array(json_object_get(t, "param_marks")) ||
		    !string_array(json_object_get(t, "dtypes")) || !kind ||
		    (strcmp(kind, "none") != 0 && strcmp(kind, "any") != 0 && strcmp(kind, "literal") != 0))
			return cb_fail(err, "%s: tests[%zu] is not {id, line, marks, param_marks, dtype, dtypes}", where, i);
	}
	json_array_foreach(ws, i, t)
		if (!json_is_string(json_object_get(t, "message")) || !json_is_integer(json_object_get(t, "line")))
			return cb_fail(err, "%s: warnings[%zu] is not {line, message}", where, i);
	return 0;
}

/* "DIR/REL:LINE: MESSAGE" (no ":LINE" when the line is null) for a
 * refusal or warning the reader reports on file rel. */
static char *at_line(const char *dir, const char *rel, const json_t *what)
{
	char *path = cb_path_join(dir, rel), *s;
	json_int_t line = json_integer_value(json_object_get(what, "line"));
	const char *msg = json_string_value(json_object_get(what, "message"));

	if (!path)
		return NULL;
	if (json_is_integer(json_object_get(what, "line")))
		s = cb_strdupf("%s:%lld: %s", path, (long long)line, msg ? msg : "?");
	else
		s = cb_strdupf("%s: %s", path, msg ? msg : "?");
	free(path);
	return s;
}

static int add_warning(struct cb_corpus_inventory *inv, size_t *cap, char *line, struct cb_err *err)
{
	char **nv = line ? grow(inv->warnings, inv->nwarnings, cap, sizeof(*nv)) : NULL;

	if (!nv) {
		free(line);
		return cb_fail(err, "out of memory");
	}
	inv->warnings = nv;
	inv->warnings[inv->nwarnings++] = line;
	return 0;
}

/* The environment of the reader: caliber's pass-through variables, its own
 * python/ folder as the only PYTHONPATH, no bytecode written, and no current
 * folder on sys.path (Python 3.11's PYTHONSAFEPATH), so that no file of the
 * folder caliber runs in (a corpus, say) is imported in place of a module. */
static int reader_env(struct cb_env *env, struct cb_err *err)
{
	char *pp = cb_path_join(cb_home(), "python");
	size_t i;
	int rc = pp ? 0 : -1;

	memset(env, 0, sizeof(*env));
	for (i = 0; rc == 0 && cb_env_passthrough[i]; i++) {
		const char *val = getenv(cb_env_passthrough[i]);
		if (val)
			rc = cb_env_set(env, cb_env_passthrough[i], val);
	}
	if (rc == 0)
		rc = cb_env_set(env, "PYTHONPATH", pp);
	if (rc == 0)
		rc = cb_env_set(env, "PYTHONDONTWRITEBYTECODE", "1");
	if (rc == 0)
		rc = cb_env_set(env, "PYTHONSAFEPATH", "1");
	free(pp);
	if (rc < 0) {
		cb_env_release(env);
		return cb_fail(err, "out of memory");
	}
	return 0;
}

/* Run `PYTHON -m caliber_pytest.inventory DIR RESULT FILE...` on the files
 * of sides[] and load RESULT, a private temporary file removed here. */
static json_t *run_reader(const char *dir, const char *python, struct side *const sides[], size_t nsides,
			  struct cb_err *err)
{
	const char *tmp = getenv("TMPDIR");
	char *result = cb_strdupf("%s/caliber-inventory.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	const char **argv = NULL;
	char *out = NULL, *who = cb_strdupf("%s -m caliber_pytest.inventory", python);
	struct cb_env env;
	json_t *res = NULL;
	size_t n = 0, total = 0, i, k;
	int fd;

	for (i = 0; i < nsides; i++)
		total += sides[i]->n;
	argv = calloc(total + 6, sizeof(*argv));
	if (!result || !argv || !who) {
		free(result);
		free(argv);
		free(who);
		cb_fail(err, "out of memory");
		return NULL;
	}
	fd = mkstemp(result);
	if (fd < 0) {
		cb_fail(err, "%s: cannot create a temporary file: %s", result, strerror(errno));
		free(result);
		free(argv);
		free(who);
		return NULL;
	}
	close(fd);
	argv[n++] = python;
	argv[n++] = "-m";
	argv[n++] = "caliber_pytest.inventory";
	argv[n++] = dir;
	argv[n++] = result;
	for (i = 0; i < nsides; i++)
		for (k = 0; k < sides[i]->n; k++)
			argv[n++] = sides[i]->v[k].rel;
	if (reader_env(&env, err) == 0 && cb_run_checked(argv, env.v, READER_TIMEOUT_MS, who, &out, err) == 0)
		res = cb_json_load_file(result, err);
	cb_env_release(&env);
	unlink(result);
	free(result);
	free(out);
	free(who);
	free(argv);
	return res;
}

/* The reader's refusal of a file, named by its index among the files of
 * sides[], as "DIR/REL:LINE: what". */
static int refusal(const char *dir, struct side *const sides[], size_t nsides, const json_t *refused,
		   struct cb_err *err)
{
	json_int_t f = json_integer_value(json_object_get(refused, "file"));
	char *msg;
	size_t i;

	for (i = 0; i < nsides && f >= 0; i++) {
		if ((size_t)f < sides[i]->n) {
			msg = at_line(dir, sides[i]->v[f].rel, refused);
			if (!msg)
				return cb_fail(err, "out of memory");
			cb_fail(err, "%s", msg);
			free(msg);
			return -1;
		}
		f -= (json_int_t)sides[i]->n;
	}
	return cb_fail(err, "caliber_pytest.inventory: a refusal of file %lld, which it was not given",
		       (long long)json_integer_value(json_object_get(refused, "file")));
}

/* Read every file of sides[] with the reader: their tests into the
 * sides, its warnings into inv; a file it refuses fails the whole
 * inventory with its message. *res keeps what the sides borrow. */
static int read_files(const char *dir, const char *python, struct side *const sides[], size_t nsides,
		      json_t **res, struct cb_corpus_inventory *inv, size_t *wcap, struct cb_err *err)
{
	const json_t *files, *refused;
	size_t i, k, idx = 0, w;
	int rc = 0;

	*res = run_reader(dir, python, sides, nsides, err);
	if (!*res)
		return -1;
	refused = json_object_get(*res, "error");
	files = json_object_get(*res, "files");
	if (refused)
		return refusal(dir, sides, nsides, refused, err);
	for (i = 0; i < nsides && rc == 0; i++)
		for (k = 0; k < sides[i]->n && rc == 0; k++, idx++) {
			const json_t *entry = json_array_get(files, idx), *wv, *one;
			char where[64];

			snprintf(where, sizeof(where), "caliber_pytest.inventory: files[%zu]", idx);
			if ((rc = check_entry(entry, where, err)) < 0)
				break;
			sides[i]->v[k].tests = json_object_get(entry, "tests");
			wv = json_object_get(entry, "warnings");
			json_array_foreach(wv, w, one)
				if ((rc = add_warning(inv, wcap, at_line(dir, sides[i]->v[k].rel, one), err)) < 0)
					break;
		}
	if (rc == 0 && json_array_size(files) != idx)
		rc = cb_fail(err, "caliber_pytest.inventory: %zu files read, %zu asked for", json_array_size(files), idx);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Rows                                                                 */

/* The two lists of marks of a test: set on it, and on some of its cases. */
static const char *const mark_lists[] = { "marks", "param_marks" };

/* Whether test t carries mark, on itself or on some of its cases (pytest's
 * -m selects those). */
static int has_mark(const json_t *t, const char *mark)
{
	const json_t *m;
	size_t i, k;

	for (k = 0; k < 2; k++)
		json_array_foreach(json_object_get(t, mark_lists[k]), i, m)
			if (strcmp(json_string_value(m), mark) == 0)
				return 1;
	return 0;
}

/* The dtypes of an op so far: any (a test has no dtype parameter, or one
 * not known), else the names listed, borrowed, possibly repeated. */
struct dtypes {
	int any;
	const char **v;
	size_t n, cap;
};

/* Add test t's dtypes to d. */
static int add_dtypes(const json_t *t, struct dtypes *d)
{
	const json_t *s;
	size_t i;

	if (strcmp(json_string_value(json_object_get(t, "dtype")), "literal") != 0) {
		d->any = 1;
		return 0;
	}
	json_array_foreach(json_object_get(t, "dtypes"), i, s) {
		const char **nv = grow(d->v, d->n, &d->cap, sizeof(*nv));
		if (!nv)
			return -1;
		d->v = nv;
		d->v[d->n++] = json_string_value(s);
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The dtypes column: '*', or the names sorted bytewise, each once. */
static char *dtypes_field(struct dtypes *d)
{
	struct cb_buf b = CB_BUF_INIT;
	size_t i;

	if (d->any)
		return strdup("*");
	qsort(d->v, d->n, sizeof(*d->v), cmp_str);
	for (i = 0; i < d->n; i++)
		if (!i || strcmp(d->v[i - 1], d->v[i]) != 0)
			cb_buf_addf(&b, "%s%s", b.len ? ";" : "", d->v[i]);
	return cb_buf_detach(&b, NULL);
}

/* The kind column: the category of a per-category file
 * ("benchmark/test_unary_pointwise_perf.py" gives unary_pointwise), the op
 * itself in the per-operator layout. */
static char *kind_of(enum cb_corpus_layout layout, const struct op *op)
{
	const char *base = strrchr(op->bf->rel, '/') + 1;
	size_t n = strlen(base) - strlen(".py");

	if (layout == CB_LAYOUT_PER_OPERATOR)
		return strdup(op->name);
	base += strlen("test_");
	n -= strlen("test_");
	if (n > 5 && memcmp(base + n - 5, "_perf", 5) == 0)
		n -= 5;
	else if (n > 4 && memcmp(base + n - 4, "_ops", 4) == 0)
		n -= 4;
	return n ? strndup(base, n) : strdup(op->name);
}

/* Whether file f holds a test marked with op's name. */
static int file_has_mark(const struct pyfile *f, const struct op *op)
{
	const json_t *t;
	size_t j;

	json_array_foreach(f->tests, j, t)
		if (has_mark(t, op->name))
			return 1;
	return 0;
}

/* The correctness file of op among those with a test of its mark: the one
 * named like its benchmark file (benchmark/test_softmax.py pairs with
 * tests/test_softmax.py, not with a vendor's tests/test_rdna4_softmax.py
 * that sorts first), else tests/test_<op>.py, else the first in sorted
 * order. NULL when no test carries the mark. */
static const struct pyfile *correctness_file(const struct side *tests, const struct op *op)
{
	const char *bbase = strrchr(op->bf->rel, '/');
	const struct pyfile *first = NULL;
	char *want = cb_strdupf("tests/test_%s.py", op->name);
	size_t i;

	bbase = bbase ? bbase + 1 : op->bf->rel;
	for (i = 0; i < tests->n; i++) {
		const struct pyfile *f = &tests->v[i];
		const char *base = strrchr(f->rel, '/');

		if (!file_has_mark(f, op))
			continue;
		if (strcmp(base ? base + 1 : f->rel, bbase) == 0) {
			free(want);
			return f;
		}
		if (!first || (want && strcmp(f->rel, want) == 0 && strcmp(first->rel, want) != 0))
			first = f;
	}
	free(want);
	return first;
}

/* One CSV row for op, or a warning when it has no correctness test or
 * no dtype at all. */
static int add_row(struct cb_corpus_inventory *inv, const struct side *tests, const struct op *op,
		   struct cb_buf *csv, size_t *wcap, struct cb_err *err)
{
	struct dtypes d = { 0, NULL, 0, 0 };
	const struct pyfile *cf = correctness_file(tests, op);
	const char *fields[CB_INV_NCOLS];
	const char *bt = json_string_value(json_object_get(op->bt, "id"));
	char *kindcol = NULL, *dtypes = NULL;
	const json_t *t;
	size_t i, j;
	int rc = 0;

	if (!cf) {
		inv->nleft++;
		return add_warning(inv, wcap,
				   cb_strdupf("op '%s' (%s::%s) has no test under tests/ marked '%s'; left out",
					      op->name, op->bf->rel, bt, op->name), err);
	}
	rc = add_dtypes(op->bt, &d);
	json_array_foreach(cf->tests, j, t)
		if (rc == 0 && has_mark(t, op->name))
			rc = add_dtypes(t, &d);
	if (rc == 0 && !d.any && !d.n) {
		inv->nleft++;
		free(d.v);
		return add_warning(inv, wcap,
				   cb_strdupf("op '%s' (%s::%s) is parametrized with no dtype at all; left out",
					      op->name, op->bf->rel, bt), err);
	}
	if (rc == 0) {
		dtypes = dtypes_field(&d);
		kindcol = kind_of(inv->layout, op);
	}
	fields[CB_INV_OP] = op->name;
	fields[CB_INV_BENCH_FILE] = op->bf->rel;
	fields[CB_INV_BENCH_TEST] = bt;
	fields[CB_INV_CORR_FILE] = cf->rel;
	fields[CB_INV_CORR_SELECTOR] = op->name;
	fields[CB_INV_DTYPES] = dtypes;
	fields[CB_INV_KIND] = kindcol;
	fields[CB_INV_LAYOUT] = cb_corpus_layout_name(inv->layout);
	fields[CB_INV_CORPUS_SHA] = inv->tree_sha256;
	for (i = 0; dtypes && kindcol && i < CB_INV_NCOLS; i++) {
		if (i)
			cb_buf_add(csv, ",", 1);
		cb_csv_put_field(csv, fields[i]);
	}
	cb_buf_add(csv, "\n", 1);
	inv->nrows++;
	rc = dtypes && kindcol && !csv->oom ? 0 : cb_fail(err, "out of memory");
	free(d.v);
	free(dtypes);
	free(kindcol);
	return rc;
}

const char *cb_corpus_layout_name(enum cb_corpus_layout layout)
{
	return layout == CB_LAYOUT_PER_CATEGORY ? "per-category" : "per-operator";
}

static int cmp_op(const void *a, const void *b)
{
	const struct op *x = a, *y = b;
	size_t i;

	for (i = 0; i < 4; i++)
		if (x->key[i] != y->key[i])
			return x->key[i] < y->key[i] ? -1 : 1;
	return 0;
}

/* The ops marked on benchmark tests, each with its benchmark test: the
 * first one marked with it (files in path order, tests in source order),
 * else, for an op that only some parametrized cases carry, the first test
 * with such a case: a test of its own beats a case in another op's table.
 * In the order of those tests, marks in the order read. */
static int collect_ops(const struct side *bench, struct op **ops, size_t *nops, struct cb_err *err)
{
	size_t cops = 0, pass, i, j, k, o;
	const json_t *t, *m;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < bench->n; i++)
			json_array_foreach(bench->v[i].tests, j, t)
				json_array_foreach(json_object_get(t, mark_lists[pass]), k, m) {
					const char *name = json_string_value(m);
					struct op *nv;

					for (o = 0; o < *nops && strcmp((*ops)[o].name, name) != 0; o++)
						;
					if (o < *nops)
						continue;
					nv = grow(*ops, *nops, &cops, sizeof(*nv));
					if (!nv)
						return cb_fail(err, "out of memory");
					*ops = nv;
					nv[*nops].name = name;
					nv[*nops].bf = &bench->v[i];
					nv[*nops].bt = t;
					nv[*nops].key[0] = i;
					nv[*nops].key[1] = j;
					nv[*nops].key[2] = pass;
					nv[*nops].key[3] = k;
					++*nops;
				}
	if (*nops)
		qsort(*ops, *nops, sizeof(**ops), cmp_op);
	return 0;
}

int cb_corpus_inventory(const char *dir, const char *python, struct cb_corpus_inventory *inv,
			struct cb_err *err)
{
	static const char *const subs[] = { "benchmark", "tests" };
	struct side bench, tests;
	struct side *const sides[] = { &bench, &tests };
	struct op *ops = NULL;
	struct cb_buf csv = CB_BUF_INIT;
	json_t *res = NULL;
	size_t nops = 0, wcap = 0, i, o;
	int rc = 0;

	memset(inv, 0, sizeof(*inv));
	memset(&bench, 0, sizeof(bench));
	memset(&tests, 0, sizeof(tests));
	if (!cb_is_dir(dir))
		return cb_fail(err, "%s: not a directory", dir);
	for (i = 0; i < 2; i++) {
		char *p = cb_path_join(dir, subs[i]);
		int ok = p && cb_is_dir(p);
		free(p);
		if (!ok)
			return cb_fail(err, "%s: no %s/ folder (a corpus has benchmark/ and tests/)", dir, subs[i]);
	}
	if (list_side(dir, "benchmark", &bench, err) < 0 || list_side(dir, "tests", &tests, err) < 0 ||
	    read_files(dir, python, sides, 2, &res, inv, &wcap, err) < 0 ||
	    cb_tree_digest(dir, inv->tree_sha256, err) < 0 || collect_ops(&bench, &ops, &nops, err) < 0) {
		rc = -1;
		goto out;
	}
	inv->layout = bench.perf * 2 > bench.top ? CB_LAYOUT_PER_CATEGORY : CB_LAYOUT_PER_OPERATOR;
	for (i = 0; i < CB_INV_NCOLS; i++)
		cb_buf_addf(&csv, "%s%s", i ? "," : "", cb_inv_columns[i]);
	cb_buf_add(&csv, "\n", 1);
	for (o = 0; o < nops && rc == 0; o++)
		rc = add_row(inv, &tests, &ops[o], &csv, &wcap, err);
	if (rc == 0 && !nops)
		rc = cb_fail(err, "%s: no test under benchmark/ carries an op mark (@pytest.mark.<op>)", dir);
	else if (rc == 0 && !inv->nrows)
		rc = cb_fail(err, "%s: none of the ops marked on benchmark tests (%zu) has a test under tests/ with the same mark",
			     dir, nops);
	if (rc == 0) {
		inv->csv = cb_buf_detach(&csv, &inv->csv_len);
		if (!inv->csv)
			rc = cb_fail(err, "out of memory");
	}
out:
	cb_buf_release(&csv);
	free(ops);
	json_decref(res);
	side_free(&bench);
	side_free(&tests);
	if (rc < 0)
		cb_corpus_inventory_release(inv);
	return rc;
}

void cb_corpus_inventory_release(struct cb_corpus_inventory *inv)
{
	if (!inv)
		return;
	free(inv->csv);
	cb_strv_free(inv->warnings, inv->nwarnings);
	memset(inv, 0, sizeof(*inv));
}

/* ------------------------------------------------------------------ */
/* The command                                                          */
