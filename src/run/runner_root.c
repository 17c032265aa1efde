/* runner_root.c: the run root's own steps around the tasks of `caliber
 * run`: made whole with the frozen inputs at the start, prepared on
 * --resume (done tasks kept, interrupted ones moved aside), and tidied
 * before the seal (the workers' slots, what workers left). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "account/expect.h"
#include "base/fsutil.h"
#include "seal/guard.h"
#include "base/jsonio.h"
#include "campaign/matrix.h"
#include "seal/fixed.h"
#include "base/runroot.h"
#include "account/receipt.h"
#include "runner_int.h"
#include "seal/tidy.h"
#include "worker.h"

/* --resume: tasks with a receipt are done, and what they took is measured
 * (expect.h); every other one keeps nothing it left behind (moved aside
 * into interrupted/, never reused). */
int runner_prepare_resume(struct runner *rn, struct cb_task_result *res, struct cb_err *err)
{
	size_t i;

	for (i = 0; i < rn->ntasks; i++) {
		const json_t *task = json_array_get(rn->tasks, i);
		const char *id = cb_json_str(task, "id");
		char *tdir = cb_strdupf("%s/" CB_RUN_TASKS "/%s", rn->root, id);
		char *tjson = tdir ? cb_path_join(tdir, CB_RUN_TASK) : NULL;
		int rc = 0;

		if (!tjson) {
			free(tdir);
			return cb_fail(err, "out of memory");
		}
		if (cb_exists(tjson)) {
			json_t *j = cb_json_load_file(tjson, err);
			json_int_t ns = cb_json_int(j, "wall_ns", -1);

			rc = j ? cb_task_result_from_json(j, tjson, &res[i], err) : -1;
			if (rc == 0 && ns >= 0)
				cb_expect_so_far_add(&rn->so_far, (long long)(ns / 1000000), cb_json_int(task, "budget_s", 0));
			rn->done[i] = rc == 0;
			json_decref(j);
		} else if (!cb_exists(tdir)) {
			/* removed by hand (a task whose evidence was changed): redone */
			rc = cb_fixed_forget(&rn->fixed, tdir + strlen(rn->root) + 1, err);
		} else {
			char *aside = NULL;
			int k;
			char *adir = cb_path_join(rn->root, "interrupted");
			rc = adir ? cb_mkdir_p(adir, 0755, err) : cb_fail(err, "out of memory");
			for (k = 1; rc == 0; k++) {
				free(aside);
				aside = cb_strdupf("%s/%s-%d", adir, id, k);
				if (!aside || !cb_exists(aside))
					break;
			}
			if (rc == 0 && (!aside || rename(tdir, aside) < 0))
				rc = cb_fail(err, "%s: cannot move aside: %s", tdir, strerror(errno));
			/* what its cells fixed moved with it, and is fixed where it went */
			if (rc == 0 && (cb_fixed_forget(&rn->fixed, tdir + strlen(rn->root) + 1, err) < 0 ||
					cb_fixed_tree(&rn->fixed, aside + strlen(rn->root) + 1, err) < 0))
				rc = -1;
			else if (rc == 0)
				runner_note(rn, json_pack("{s:s, s:s, s:s}", "event", "resume-moved-aside", "task", id, "to", aside),
				     "resume: moved the interrupted %s aside to interrupted/%s-%d", id, id, k);
			free(aside);
			free(adir);
		}
		free(tdir);
		free(tjson);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Copy a frozen file into the run root, read-only. */
static int copy_frozen(const char *src, const char *root, const char *name, struct cb_err *err)
{
	char *buf = NULL, *dst = cb_path_join(root, name);
	size_t len;
	int rc = dst ? cb_read_file(src, &buf, &len, err) : cb_fail(err, "out of memory");

	if (rc == 0)
		rc = cb_write_atomic(dst, buf, len, 0444, err);
	free(buf);
	free(dst);
	return rc;
}

/* The run root with the frozen manifest, matrix and inventory in it. It
 * appears whole or not at all (built beside it, then renamed), so a run
 * root that exists can always be resumed. */
int runner_make_skeleton(const char *manifest, const char *matrix, const char *output, struct cb_err *err)
{
	const char *slash = strrchr(matrix, '/');
	char *inv = cb_strdupf("%.*s/%s", (int)(slash - matrix), matrix, CB_FROZEN_INVENTORY);
	char *tmp = cb_strdupf("%s.tmp.XXXXXX", output);
	struct cb_err ignored;
	int rc = -1, lock = -1;

	if (!inv || !tmp) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (cb_guard_mkdir_parent(&(struct cb_guard){ "--output-root", NULL, NULL }, output, 0755, err) < 0 ||
	    cb_remove_abandoned_temps(output, err) < 0)
		goto out;
	if (cb_mkdtemp_locked(tmp, &lock, err) < 0) {
		cb_prefix(err, "%s: cannot create the run root", output);
		free(tmp);
		tmp = NULL;
		goto out;
	}
	if (copy_frozen(manifest, tmp, CB_RUN_MANIFEST, err) < 0 || copy_frozen(matrix, tmp, CB_RUN_MATRIX, err) < 0 ||
	    copy_frozen(inv, tmp, CB_FROZEN_INVENTORY, err) < 0)
		goto out;
	if (chmod(tmp, 0755) < 0 || rename(tmp, output) < 0) {
		cb_fail(err, "%s: cannot create the run root: %s", output, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (rc < 0 && tmp)
		cb_rm_rf(tmp, &ignored);
	if (lock >= 0)
		close(lock);
	free(inv);
	free(tmp);
	return rc;
}

/* Remove the run's folder of worker slots (worker.h, CB_SLOTS_DIR),
 * which is never sealed: empty when every worker has gone, but for what a
 * worker wrote into its slot after its last request, or what workers of
 * a killed caliber left; each such slot is named in changes. */
int runner_remove_slots(const char *root, json_t *changes, struct cb_err *err)
{
	char *slots = cb_path_join(root, CB_SLOTS_DIR), **names = NULL;
	size_t n = 0, i;
	int rc = 0;

	if (!slots)
		return cb_fail(err, "out of memory");
	if (cb_is_dir(slots) && cb_list_dir(slots, &names, &n, err) < 0)
		rc = -1;
	for (i = 0; rc == 0 && i < n; i++) {
		char *what = cb_strdupf(CB_SLOTS_DIR "/%s: the slot of a worker that is gone, removed", names[i]);
		if (!what || json_array_append_new(changes, json_string(what)) < 0)
			rc = cb_fail(err, "out of memory");
		free(what);
	}
	if (rc == 0 && cb_exists(slots))
		rc = cb_rm_rf(slots, err);
	cb_strv_free(names, n);
	free(slots);
	return rc;
}

/* Before the seal: what a worker left outside its own cell folder (which
 * is tidied when the cell ends) that a seal cannot hold is taken out of
 * the whole root (tidy.h), said, and added to this invocation's "tidied"
 * in run.json, so that a run always ends sealed. No cell is blamed: the
 * tree does not say which worker put it there. */
int runner_tidy_before_seal(const struct runner *rn, struct cb_err *err)
{
	char *path = cb_path_join(rn->root, CB_RUN_RUN);
	json_t *changes = json_array(), *j = NULL, *invs, *tidied;
	size_t i;
	int rc = -1;

	if (!path || !changes) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (json_array_extend(changes, rn->planted) < 0 || runner_remove_slots(rn->root, changes, err) < 0 ||
	    cb_tidy_tree(rn->root, changes, err) < 0)
		goto out;
	rc = 0;
	if (!json_array_size(changes))
		goto out;
	for (i = 0; i < json_array_size(changes); i++)
		runner_note(rn, json_pack("{s:s, s:s}", "event", "tidied", "what", json_string_value(json_array_get(changes, i))),
		     "tidied: %s", json_string_value(json_array_get(changes, i)));
	rc = -1;
	if (!(j = cb_json_load_file(path, err)))
		goto out;
	invs = json_object_get(j, "invocations");
	tidied = json_object_get(json_array_get(invs, json_array_size(invs) - 1), "tidied");
	if (!json_is_array(tidied) || json_array_extend(tidied, changes) < 0)
		cb_fail(err, "%s: no invocation to add what was tidied to", path);
	else
		rc = cb_receipt_write(path, j, err);
out:
	json_decref(j);
	json_decref(changes);
	free(path);
	return rc;
}
