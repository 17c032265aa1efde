/* test_tidy.c: what a seal cannot hold, taken out (tidy.h). Caliber's
 * temporary names; a tree with a symlink, a FIFO, names a SHA256SUMS line
 * cannot hold, a temporary file and modes taken away, tidied into one
 * a seal takes, with each change said; a cell folder that is a link; a
 * seal that refuses a temporary file; and the folders of dead calibers
 * removed while a living one's stay. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "base/jsonio.h"
#include "seal/seal.h"
#include "seal/tidy.h"
#include "tlib.h"
#include "base/walk.h"

static void temp_names(void **state)
{
	(void)state;
	assert_true(cb_is_temp_name("matrix.md.tmp.Ab12Cd"));
	assert_true(cb_is_temp_name("SHA256SUMS.tmp.zzzzzz"));
	assert_true(cb_is_temp_name("x.tmp.000000"));
	assert_false(cb_is_temp_name(".tmp.Ab12Cd"));          /* nothing in front */
	assert_false(cb_is_temp_name("x.tmp.Ab12C"));          /* five */
	assert_false(cb_is_temp_name("x.tmp.Ab12Cde"));        /* seven */
	assert_false(cb_is_temp_name("x.tmp.Ab-2Cd"));         /* not mkstemp's */
	assert_false(cb_is_temp_name("x.tmp-Ab12Cd"));
	assert_false(cb_is_temp_name("timing.jsonl"));
}

/* path with text in it. */
static void put(const char *dir, const char *name, const char *text)
{
	char *p = cb_path_join(dir, name);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

static char *sub(const char *dir, const char *name)
{
	char *p = cb_path_join(dir, name);

	assert_non_null(p);
	return p;
}

static void tidy_a_hostile_cell(void **state)
{
	const char *want[] = {
		"a\\x0ab: a file whose name has a backslash or newline, removed",
		"back\\\\slash: a folder whose name has a backslash or newline, removed",
		"ir: a folder its owner could not list, made listable",
		"ir/planted: a symlink to '/etc/passwd', removed",
		"ir/sealed: a file its owner could not read, made readable",
		"pipe: a FIFO, removed",
		"task.json.tmp.Ab12Cd: a temporary file of an interrupted write, removed",
	};
	char *dir = sub(tl_tmpdir(), "cell"), *ir = sub(dir, "ir"), *p;
	struct cb_err err;
	struct cb_tree t;
	json_t *changes = json_array();
	size_t i;

	(void)state;
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(mkdir(ir, 0755), 0);
	put(dir, "timing.jsonl", "{}\n");
	put(dir, "a\nb", "x");
	put(dir, "task.json.tmp.Ab12Cd", "partial");
	put(ir, "index.tsv", "variant\tkernel\tlaunches\ttuning_launches\n");
	put(ir, "sealed", "x");
	p = sub(ir, "sealed");
	assert_int_equal(chmod(p, 0), 0);
	free(p);
	p = sub(ir, "planted");
	assert_int_equal(symlink("/etc/passwd", p), 0);
	free(p);
	p = sub(dir, "pipe");
	assert_int_equal(mkfifo(p, 0644), 0);
	free(p);
	p = sub(dir, "back\\slash");
	assert_int_equal(mkdir(p, 0755), 0);
	put(p, "inside", "x");
	free(p);
	assert_int_equal(chmod(ir, 0300), 0);
	if (cb_tidy_tree(dir, changes, &err) < 0)
		fail_msg("cb_tidy_tree: %s", err.msg);
	assert_int_equal(json_array_size(changes), sizeof(want) / sizeof(want[0]));
	for (i = 0; i < json_array_size(changes); i++)
		assert_string_equal(json_string_value(json_array_get(changes, i)), want[i]);
	/* what is left, a seal takes */
	if (cb_walk(dir, NULL, CB_WALK_DIRS, &t, &err) < 0)
		fail_msg("cb_walk: %s", err.msg);
	assert_int_equal(t.n, 4);   /* ir, ir/index.tsv, ir/sealed, timing.jsonl */
	for (i = 0; i < t.n; i++)
		assert_true(t.v[i].kind == CB_ENT_FILE || t.v[i].kind == CB_ENT_DIR);
	cb_tree_release(&t);
	/* a tidy tree stays as it is */
	json_array_clear(changes);
	assert_int_equal(cb_tidy_tree(dir, changes, &err), 0);
	assert_int_equal(json_array_size(changes), 0);
	json_decref(changes);
	free(ir);
	free(dir);
}

static void a_cell_folder_that_is_a_link_becomes_a_folder(void **state)
{
	char *tmp = strdup(tl_tmpdir()), *dir = sub(tmp, "linked-cell"), *target = sub(tmp, "elsewhere");
	json_t *changes = json_array();
	struct cb_err err;

	(void)state;
	assert_int_equal(mkdir(target, 0755), 0);
	put(target, "keep", "x");
	assert_int_equal(symlink(target, dir), 0);
	assert_int_equal(cb_tidy_tree(dir, changes, &err), 0);
	assert_string_equal(json_string_value(json_array_get(changes, 0)),
			    ".: a symlink in place of the folder, replaced by an empty folder");
	assert_true(cb_is_dir(dir));
	free(target);
	target = sub(tmp, "elsewhere/keep");
	assert_true(cb_exists(target));
	json_decref(changes);
	free(target);
	free(dir);
	free(tmp);
}

static void seal_refuses_a_temporary_file(void **state)
{
	char *root = sub(tl_tmpdir(), "root");
	struct cb_err err;

	(void)state;
	assert_int_equal(mkdir(root, 0755), 0);
	put(root, "campaign.json", "{}\n");
	put(root, "matrix.md.tmp.Ab12Cd", "partial");
	assert_int_equal(cb_seal(root, &err), -1);
	assert_string_equal(err.msg, "seal: matrix.md.tmp.Ab12Cd: a temporary file of an interrupted write cannot be sealed");
	free(root);
}

static void abandoned_folders_go_locked_ones_stay(void **state)
{
	char *tmp = strdup(tl_tmpdir()), *live = sub(tmp, "out.tmp.XXXXXX"), *dead = sub(tmp, "out.tmp.Ab12Cd");
	char *other = sub(tmp, "out.tmp.no_six"), *out = sub(tmp, "out");
	struct cb_err err;
	int lock;

	(void)state;
	assert_int_equal(cb_mkdtemp_locked(live, &lock, &err), 0);
	assert_int_equal(mkdir(dead, 0755), 0);
	put(dead, "manifest.json", "{}");
	assert_int_equal(mkdir(other, 0755), 0);
	assert_int_equal(cb_remove_abandoned_temps(out, &err), 0);
	assert_false(cb_exists(dead));
	assert_true(cb_is_dir(live));
	assert_true(cb_is_dir(other));
	/* once its caliber is gone (its lock released), the live one goes too */
	close(lock);
	assert_int_equal(cb_remove_if_abandoned(live, "out.tmp.", &err), 1);
	assert_false(cb_exists(live));
	assert_int_equal(cb_remove_if_abandoned(other, "out.tmp.", &err), 0);
	free(live);
	free(dead);
	free(other);
	free(out);
	free(tmp);
}

/* A cell folder about to start holds nothing: a link planted at its
 * worker.log (the target untouched), forged outputs and a folder go, each
 * said; a folder that is a link is replaced by an empty folder; one that
 * does not exist is made. */
static void a_fresh_cell_folder_is_emptied(void **state)
{
	const char *want[] = {
		"ir: a folder, removed before the cell started",
		"timing.jsonl: a file, removed before the cell started",
		"worker.log: a symlink to '/etc/passwd', removed before the cell started",
	};
	char *dir = sub(tl_tmpdir(), "fresh"), *ir = sub(dir, "ir"), *p, *elsewhere = sub(tl_tmpdir(), "elsewhere");
	struct cb_err err;
	struct stat st;
	json_t *changes = json_array();
	char **names = NULL;
	size_t i, n = 0;

	(void)state;
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(mkdir(ir, 0755), 0);
	put(ir, "index.tsv", "forged");
	put(dir, "timing.jsonl", "forged");
	p = sub(dir, "worker.log");
	assert_int_equal(symlink("/etc/passwd", p), 0);
	free(p);
	if (cb_tidy_fresh(dir, changes, &err) < 0)
		fail_msg("cb_tidy_fresh: %s", err.msg);
	assert_int_equal(json_array_size(changes), sizeof(want) / sizeof(want[0]));
	for (i = 0; i < json_array_size(changes); i++)
		assert_string_equal(json_string_value(json_array_get(changes, i)), want[i]);
	assert_int_equal(cb_list_dir(dir, &names, &n, &err), 0);
	assert_int_equal(n, 0);
	cb_strv_free(names, n);
	assert_int_equal(stat("/etc/passwd", &st), 0);
	/* the folder itself a link to another: replaced, the other untouched */
	json_array_clear(changes);
	assert_int_equal(mkdir(elsewhere, 0755), 0);
	put(elsewhere, "keep", "x");
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(symlink(elsewhere, dir), 0);
	if (cb_tidy_fresh(dir, changes, &err) < 0)
		fail_msg("cb_tidy_fresh: %s", err.msg);
	assert_int_equal(json_array_size(changes), 1);
	assert_true(strstr(json_string_value(json_array_get(changes, 0)), ": a symlink to '") != NULL);
	assert_true(strstr(json_string_value(json_array_get(changes, 0)),
			   "' in place of the folder, removed before the cell started") != NULL);
	assert_int_equal(lstat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	p = sub(elsewhere, "keep");
	assert_true(cb_exists(p));
	free(p);
	/* not there: made, nothing said */
	json_array_clear(changes);
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(cb_tidy_fresh(dir, changes, &err), 0);
	assert_int_equal(json_array_size(changes), 0);
	assert_true(cb_is_dir(dir));
	json_decref(changes);
	free(elsewhere);
	free(ir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(temp_names),
		cmocka_unit_test(tidy_a_hostile_cell),
		cmocka_unit_test(a_cell_folder_that_is_a_link_becomes_a_folder),
		cmocka_unit_test(a_fresh_cell_folder_is_emptied),
		cmocka_unit_test(seal_refuses_a_temporary_file),
		cmocka_unit_test(abandoned_folders_go_locked_ones_stay),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
