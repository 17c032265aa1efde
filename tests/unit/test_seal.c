/* test_seal.c: verify with an observer, and the IR counted during the
 * verify that reaccount uses instead of reading the IR again.
 *
 * On the run root built from tests/golden/runs/basic/spec.json: an
 * observed verify reports what a plain one does, and the observer sees
 * every file it asks for exactly once with its whole content, and no
 * other; cb_evidence_verify_counted counts every cell .ttgir as the file
 * counter does, and task evidence loaded with those counts equals evidence
 * loaded by reading the files; a changed file fails the verify and leaves
 * no counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "account/evidence.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "campaign/manifest.h"
#include "runroot.h"
#include "seal/seal.h"
#include "tlib.h"
#include "ir/topology.h"
#include "base/walk.h"

/* cb_evidence_verify_counted, failing as cb_verify_or_fail does when the
 * seal does not hold (what the run view makes of it). */
static int counted_verify(const char *root, const char *op, struct cb_ttgir_counts *counts, struct cb_err *err)
{
	struct cb_verify_report rep;
	int rc;

	if (cb_evidence_verify_counted(root, op, counts, &rep, err) < 0)
		return -1;
	rc = cb_verify_fail(root, &rep, err);
	cb_verify_report_release(&rep);
	return rc;
}

/* A sealed run root built once per test. */
static char *build_run(void)
{
	char *root = cb_path_join(tl_tmpdir(), "run");
	struct cb_err err;

	if (rr_build(tl_path("tests/golden/runs/basic/spec.json"), root, &err) < 0)
		fail_msg("rr_build: %s", err.msg);
	return root;
}

/* ---- an observer that keeps what it sees --------------------------------- */

struct seen {
	char *rel;
	struct cb_buf data;
	int ended, ok;
};

struct recorder {
	pthread_mutex_t lock;
	struct seen *v[4096];
	size_t n;
};

/* Observe the .json files only, so that files left alone are tested too. */
static int wanted(const char *rel)
{
	size_t n = strlen(rel);

	return n > 5 && strcmp(rel + n - 5, ".json") == 0;
}

static void *rec_begin(const char *rel, void *ctx)
{
	struct recorder *r = ctx;
	struct seen *s;

	if (!wanted(rel))
		return NULL;
	s = calloc(1, sizeof(*s));
	assert_non_null(s);
	s->rel = strdup(rel);
	pthread_mutex_lock(&r->lock);
	assert_true(r->n < sizeof(r->v) / sizeof(r->v[0]));
	r->v[r->n++] = s;
	pthread_mutex_unlock(&r->lock);
	return s;
}

static void rec_chunk(void *state, const char *p, size_t n)
{
	struct seen *s = state;

	assert_false(s->ended);
	cb_buf_add(&s->data, p, n);
}

static void rec_end(void *state, int ok, void *ctx)
{
	struct seen *s = state;

	(void)ctx;
	s->ended++;
	s->ok = ok;
}

static int cmp_seen(const void *a, const void *b)
{
	return strcmp((*(struct seen *const *)a)->rel, (*(struct seen *const *)b)->rel);
}

/* Observed and plain verify agree; every wanted regular file was begun
 * once, ended once with its whole content, and nothing else was begun. */
static void observed_verify(void **state)
{
	struct recorder r = { PTHREAD_MUTEX_INITIALIZER, { NULL }, 0 };
	const struct cb_verify_observer obs = { rec_begin, rec_chunk, rec_end, &r, NULL };
	struct cb_verify_report plain, seen;
	char *root = build_run();
	struct cb_tree t;
	struct cb_err err;
	size_t i, k = 0;

	(void)state;
	assert_int_equal(cb_verify(root, &plain, &err), 0);
	assert_int_equal(cb_verify_observed(root, &obs, &seen, &err), 0);
	assert_true(cb_verify_holds(&plain));
	assert_true(cb_verify_holds(&seen));
	assert_int_equal(plain.nfiles, seen.nfiles);
	assert_int_equal(cb_walk(root, NULL, 0, &t, &err), 0);
	qsort(r.v, r.n, sizeof(r.v[0]), cmp_seen);
	for (i = 0; i < t.n; i++) {
		char *abs, *want;
		size_t len;

		if (t.v[i].kind != CB_ENT_FILE || !wanted(t.v[i].rel))
			continue;
		assert_true(k < r.n);
		assert_string_equal(r.v[k]->rel, t.v[i].rel);
		assert_int_equal(r.v[k]->ended, 1);
		assert_true(r.v[k]->ok);
		abs = cb_path_join(root, t.v[i].rel);
		want = tl_slurp(abs, &len);
		assert_int_equal(r.v[k]->data.len, len);
		assert_memory_equal(r.v[k]->data.data, want, len);
		free(want);
		free(abs);
		k++;
	}
	assert_true(k > 0);
	assert_int_equal(k, r.n);
	for (i = 0; i < r.n; i++) {
		cb_buf_release(&r.v[i]->data);
		free(r.v[i]->rel);
		free(r.v[i]);
	}
	pthread_mutex_destroy(&r.lock);
	cb_tree_release(&t);
	cb_verify_report_release(&plain);
	cb_verify_report_release(&seen);
	free(root);
}

/* ---- IR counted during the verify ---------------------------------------- */

/* Whether rel is tasks/<task>/cells/<cell>/ir/<variant>/<file>.ttgir. */
static int is_cell_ttgir(const char *rel)
{
	char a[256], b[256], c[256], f[256];
	int end = -1;
	size_t n;

	if (sscanf(rel, "tasks/%255[^/]/cells/%255[^/]/ir/%255[^/]/%255[^/]%n", a, b, c, f, &end) != 4 ||
	    end < 0 || rel[end] != '\0')
		return 0;
	n = strlen(f);
	return n > 6 && strcmp(f + n - 6, ".ttgir") == 0;
}

/* JSON text of a task's round-a topology, role by role. */
static char *topology_text(const struct cb_task_evidence *ev)
{
	struct cb_buf b = CB_BUF_INIT;
	struct cb_err err;
	size_t len;
	int r;

	for (r = 0; r < CB_NROLES; r++) {
		json_t *j = ev->have_topology[r] ? cb_topology_json(&ev->topology[r]) : NULL;
		char *s = j ? cb_json_dumps(j, &err) : NULL;

		cb_buf_addf(&b, "%d %s\n%s", ev->have_topology[r], ev->topology_error[r] ? ev->topology_error[r] : "", s ? s : "-\n");
		free(s);
		json_decref(j);
	}
	return cb_buf_detach(&b, &len);
}

/* For every task of the run at root: evidence loaded with counts (and
 * its listing) equals evidence read from the files. Adds to *scanned the
 * cells with a topology and to *unjoinable the reasons a cell could not be
 * joined (one per cell whose scan failed). */
static void same_evidence_both_ways(const char *root, const struct cb_manifest *m,
				    const struct cb_ttgir_counts *counts, size_t *scanned,
				    size_t *unjoinable)
{
	char *tasks = cb_path_join(root, "tasks"), **ids;
	struct cb_err err;
	size_t i, nids;

	assert_int_equal(cb_list_dir(tasks, &ids, &nids, &err), 0);
	for (i = 0; i < nids; i++) {
		struct cb_task_evidence read, counted;
		char *tdir = cb_strdupf("%s/tasks/%s", root, ids[i]), *a, *b;
		int r;

		if (!cb_is_dir(tdir)) {
			free(tdir);
			continue;
		}
		assert_int_equal(cb_evidence_load(tdir, ids[i], m, m->launch_floor, NULL, &read, &err), 0);
		assert_int_equal(cb_evidence_load(tdir, ids[i], m, m->launch_floor, counts, &counted,
							  &err), 0);
		for (r = 0; r < CB_NROLES; r++) {
			*scanned += (size_t)read.have_topology[r];
			*unjoinable += read.have_topology[r] ? read.topology[r].nunjoinable
							     : (size_t)(read.topology_error[r] != NULL);
		}
		a = topology_text(&read);
		b = topology_text(&counted);
		assert_string_equal(a, b);
		free(a);
		free(b);
		cb_evidence_release(&read);
		cb_evidence_release(&counted);
		free(tdir);
	}
	cb_strv_free(ids, nids);
	free(tasks);
}

/* Every cell .ttgir of the run is counted, as cb_ttgir_count_file counts
 * it; evidence from those counts equals evidence read from the files. A
 * wrong fused count fails here. */
static void verify_counting(void **state)
{
	struct cb_ttgir_counts counts;
	struct cb_manifest m;
	char *root = build_run(), *mpath = cb_path_join(root, "manifest.json");
	struct cb_tree t;
	struct cb_err err;
	size_t i, nttgir = 0, scanned = 0, unjoinable = 0;

	(void)state;
	assert_int_equal(cb_manifest_load(mpath, &m, &err), 0);
	assert_int_equal(counted_verify(root, m.topology_op, &counts, &err), 0);
	assert_string_equal(counts.op, m.topology_op);
	assert_int_equal(cb_walk(root, NULL, 0, &t, &err), 0);
	for (i = 0; i < t.n; i++) {
		char *abs = cb_strdupf("%s/%s", root, t.v[i].rel);
		long long want = -1, got = -1;

		if (is_cell_ttgir(t.v[i].rel)) {
			nttgir++;
			assert_int_equal(cb_ttgir_count_file(abs, m.topology_op, &want, &err), 0);
			if (cb_ttgir_counts_find(&counts, m.topology_op, abs, &got) < 0)
				fail_msg("%s was not counted", t.v[i].rel);
			assert_int_equal(got, want);
		} else {
			assert_int_equal(cb_ttgir_counts_find(&counts, m.topology_op, abs, &got), -1);
		}
		free(abs);
	}
	assert_true(nttgir > 0);
	assert_int_equal(counts.n, nttgir);

	same_evidence_both_ways(root, &m, &counts, &scanned, &unjoinable);
	assert_true(scanned > 0);
	cb_tree_release(&t);
	cb_ttgir_counts_release(&counts);
	cb_manifest_release(&m);
	free(mpath);
	free(root);
}

/* Make path (a directory or file) and everything under it writable again,
 * so that a sealed run can be changed and sealed anew. */
static void make_writable(const char *root)
{
	struct cb_tree t;
	struct cb_err err;
	size_t i;

	assert_int_equal(chmod(root, 0755), 0);
	assert_int_equal(cb_walk(root, NULL, CB_WALK_DIRS, &t, &err), 0);
	for (i = 0; i < t.n; i++) {
		char *abs = cb_path_join(root, t.v[i].rel);
		assert_int_equal(chmod(abs, t.v[i].kind == CB_ENT_DIR ? 0755 : 0644), 0);
		free(abs);
	}
	cb_tree_release(&t);
}

static void put_file(const char *root, const char *rel, const char *text)
{
	char *abs = cb_path_join(root, rel);
	struct cb_err err;

	if (cb_write_atomic(abs, text, strlen(text), 0644, &err) < 0)
		fail_msg("%s", err.msg);
	free(abs);
}

static void put_dir(const char *root, const char *rel)
{
	char *abs = cb_path_join(root, rel);

	assert_int_equal(mkdir(abs, 0755), 0);
	free(abs);
}

/* The joins list a cell's IR directories from the tree the verify walked
 * instead of the file system: on a run whose IR folders hold what a join
 * must sort out (a variant without a row, an empty variant, a name that
 * sorts between a variant and its files, a row without IR, stray files, a
 * nested folder, a folder named like IR), evidence from the listing equals
 * evidence read from the file system, cell by cell. */
static void listing_join_matches_file_system(void **state)
{
	static const char cell[] = "tasks/softmax_rows/cells/a-off/ir";
	static const char other[] = "tasks/softmax_rows/cells/a-mask0/ir";
	static const char ir[] = "#blocked = #ttg.blocked<{}>\n%1 = ttg.convert_layout %0 : t\n";
	struct cb_ttgir_counts counts;
	struct cb_manifest m;
	struct cb_err err;
	char *root = build_run(), *mpath = cb_path_join(root, "manifest.json"), *sums;
	char rel[256];
	size_t scanned = 0, unjoinable = 0;

	(void)state;
	make_writable(root);
	snprintf(rel, sizeof(rel), "%s/MEASURED-x", cell);
	put_dir(root, rel);
	snprintf(rel, sizeof(rel), "%s/MEASURED-x/k.ttgir", cell);
	put_file(root, rel, ir);
	snprintf(rel, sizeof(rel), "%s/EMPTY", cell);
	put_dir(root, rel);
	snprintf(rel, sizeof(rel), "%s/MEASURED/notes.txt", cell);
	put_file(root, rel, "not IR\n");
	snprintf(rel, sizeof(rel), "%s/MEASURED/deeper", cell);
	put_dir(root, rel);
	snprintf(rel, sizeof(rel), "%s/MEASURED/deeper/x.ttgir", cell);
	put_file(root, rel, ir);
	snprintf(rel, sizeof(rel), "%s/stray.ttgir", cell);
	put_file(root, rel, ir);
	snprintf(rel, sizeof(rel), "%s/index.tsv", cell);
	put_file(root, rel, "variant\tkernel\tlaunches\ttuning_launches\nGHOST\tk_ghost\t9\t0\n"
			    "MEASURED\tk_main\t40\t0\nRANDN\tk_randn\t1\t0\n");
	snprintf(rel, sizeof(rel), "%s/RANDN/folder.ttgir", other);
	put_dir(root, rel);
	sums = cb_path_join(root, "SHA256SUMS");
	assert_int_equal(unlink(sums), 0);
	if (cb_seal(root, &err) < 0)
		fail_msg("cb_seal: %s", err.msg);

	assert_int_equal(cb_manifest_load(mpath, &m, &err), 0);
	assert_int_equal(counted_verify(root, m.topology_op, &counts, &err), 0);
	assert_non_null(counts.root);
	assert_true(counts.listing.n > 0);
	same_evidence_both_ways(root, &m, &counts, &scanned, &unjoinable);
	/* MEASURED-x, EMPTY and GHOST in one cell, folder.ttgir's error in
	 * another, and the spec's own variant without a row. */
	assert_true(unjoinable >= 5);
	free(sums);
	cb_ttgir_counts_release(&counts);
	cb_manifest_release(&m);
	free(mpath);
	free(root);
}

/* A changed .ttgir fails the verify, naming it, and leaves counts empty. */
static void changed_ir_fails(void **state)
{
	struct cb_ttgir_counts counts;
	char *root = build_run(), *victim = NULL, want[4400];
	struct cb_tree t;
	struct cb_err err;
	size_t i;

	(void)state;
	assert_int_equal(cb_walk(root, NULL, 0, &t, &err), 0);
	for (i = 0; i < t.n && !victim; i++)
		if (is_cell_ttgir(t.v[i].rel))
			victim = strdup(t.v[i].rel);
	assert_non_null(victim);
	{
		char *abs = cb_path_join(root, victim);
		char *dir = strdup(abs);
		static const char extra[] = "%9 = ttg.convert_layout %0 : t\n";
		FILE *f;

		*strrchr(dir, '/') = '\0';
		assert_int_equal(chmod(dir, 0755), 0);
		assert_int_equal(chmod(abs, 0644), 0);
		f = fopen(abs, "a");
		assert_non_null(f);
		assert_int_equal(fwrite(extra, 1, sizeof(extra) - 1, f), sizeof(extra) - 1);
		assert_int_equal(fclose(f), 0);
		free(dir);
		free(abs);
	}
	assert_int_equal(counted_verify(root, CB_DEFAULT_TOPOLOGY_OP, &counts, &err), -1);
	snprintf(want, sizeof(want), "%s: seal does not hold: changed: %s", root, victim);
	assert_string_equal(err.msg, want);
	assert_int_equal(counts.n, 0);
	assert_null(counts.v);
	assert_int_equal(counted_verify(root, "bad op", &counts, &err), -1);
	assert_int_equal(counts.n, 0);
	cb_tree_release(&t);
	free(victim);
	free(root);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(observed_verify),
		cmocka_unit_test(verify_counting),
		cmocka_unit_test(listing_join_matches_file_system),
		cmocka_unit_test(changed_ir_fails),
	};

	return cmocka_run_group_tests_name("seal", tests, NULL, NULL);
}
