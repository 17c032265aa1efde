/* test_fsutil.c: path resolution (what "inside the run root" means), the
 * descriptor walk under mkdir -p, inputs that are not regular files,
 * atomic writes and listing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "tlib.h"

static void resolve_follows_links_and_dotdot(void **state)
{
	char root[PATH_MAX], p[PATH_MAX + 64], q[PATH_MAX + 64], *r, *rr;
	struct cb_err err;

	(void)state;
	assert_non_null(realpath(tl_tmpdir(), root));
	snprintf(p, sizeof(p), "%s/run/tasks", root);
	assert_int_equal(cb_mkdir_p(p, 0755, &err), 0);
	snprintf(p, sizeof(p), "%s/run", root);
	snprintf(q, sizeof(q), "%s/alias", root);
	assert_int_equal(symlink(p, q), 0);

	/* a link into the run root resolves inside it */
	snprintf(q, sizeof(q), "%s/alias/tasks/new/deeper", root);
	r = cb_resolve(q);
	rr = cb_resolve(p);
	assert_true(cb_path_within(r, rr));
	free(r);
	/* ".." climbs out lexically from a missing tail */
	snprintf(q, sizeof(q), "%s/run/missing/../../elsewhere", root);
	r = cb_resolve(q);
	assert_false(cb_path_within(r, rr));
	snprintf(p, sizeof(p), "%s/elsewhere", root);
	assert_string_equal(r, p);
	free(r);
	/* "link/.." is the parent of the link's target, as the kernel says */
	snprintf(q, sizeof(q), "%s/alias/tasks/..", root);
	r = cb_resolve(q);
	assert_string_equal(r, rr);
	free(r);
	/* the root itself counts as within; a sibling with a common prefix does not */
	assert_true(cb_path_within(rr, rr));
	snprintf(p, sizeof(p), "%s-sibling", rr);
	assert_false(cb_path_within(p, rr));
	free(rr);
}

static void atomic_write_replaces_whole_file(void **state)
{
	const char *dir = tl_tmpdir();
	char path[512], **names;
	struct cb_err err;
	struct stat st;
	size_t n, len;
	char *got;

	(void)state;
	snprintf(path, sizeof(path), "%s/receipt.json", dir);
	assert_int_equal(cb_write_atomic(path, "old\n", 4, 0644, &err), 0);
	assert_int_equal(cb_write_atomic(path, "new content\n", 12, 0444, &err), 0);
	got = tl_slurp(path, &len);
	assert_string_equal(got, "new content\n");
	free(got);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0444);
	/* no temporary file is left behind */
	assert_int_equal(cb_list_dir(dir, &names, &n, &err), 0);
	assert_int_equal(n, 1);
	cb_strv_free(names, n);
}

/* An atomic write never replaces a device, folder or link by renaming over it. */
static void atomic_write_refuses_non_regular_targets(void **state)
{
	const char *dir = tl_tmpdir();
	char link[512], sub[512];
	struct cb_err err;

	(void)state;
	snprintf(link, sizeof(link), "%s/null-link", dir);
	snprintf(sub, sizeof(sub), "%s/folder", dir);
	assert_int_equal(symlink("/dev/null", link), 0);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(cb_write_atomic(link, "x", 1, 0644, &err), -1);
	assert_non_null(strstr(err.msg, "exists and is not a regular file"));
	assert_int_equal(cb_write_atomic(sub, "x", 1, 0644, &err), -1);
	assert_int_equal(cb_write_atomic("/dev/null", "x", 1, 0644, &err), -1);
	assert_true(cb_is_dir(sub));
}

static void write_into_missing_dir_fails_naming_it(void **state)
{
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_write_atomic("/nonexistent-dir/x.json", "x", 1, 0644, &err), -1);
	assert_non_null(strstr(err.msg, "/nonexistent-dir/x.json"));
}

/* mkdir -p enters existing links as the kernel does, refuses one met
 * after a folder it made (nothere/../link), and without create only counts
 * what is missing. */
static void dir_open_follows_no_link_after_a_made_folder(void **state)
{
	char root[PATH_MAX], p[PATH_MAX + 64], q[PATH_MAX + 512], *reached = NULL;
	struct cb_err err;
	size_t missing = 9;
	int fd;

	(void)state;
	assert_non_null(realpath(tl_tmpdir(), root));
	snprintf(p, sizeof(p), "%s/walk/target", root);
	assert_int_equal(cb_mkdir_p(p, 0755, &err), 0);
	snprintf(q, sizeof(q), "%s/walk/link", root);
	assert_int_equal(symlink("target", q), 0);

	/* an existing link is entered: the folder made lies in its target */
	snprintf(q, sizeof(q), "%s/walk/link/made", root);
	assert_int_equal(cb_mkdir_p(q, 0755, &err), 0);
	snprintf(q, sizeof(q), "%s/walk/target/made", root);
	assert_true(cb_is_dir(q));
	/* a link behind a missing folder is refused, and nothing is made */
	snprintf(q, sizeof(q), "%s/walk/nothere/../link/x", root);
	assert_int_equal(cb_dir_open(q, 0, 0, &fd, &missing, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "/walk/nothere/../link is a symlink after a folder that mkdir -p makes"));
	snprintf(p, sizeof(p), "%s/walk/nothere", root);
	assert_false(cb_exists(p));
	assert_int_equal(cb_mkdir_p(q, 0755, &err), -1);
	assert_non_null(strstr(err.msg, "caliber follows no link there"));
	snprintf(p, sizeof(p), "%s/walk/target/x", root);
	assert_false(cb_exists(p));
	/* without create: the deepest folder, the path to it, what is missing */
	snprintf(q, sizeof(q), "%s/walk/target/a/b/../c", root);
	assert_int_equal(cb_dir_open(q, 0, 0, &fd, &missing, &reached, &err), 0);
	close(fd);
	assert_int_equal(missing, 2);
	snprintf(p, sizeof(p), "%s/walk/target", root);
	assert_string_equal(reached, p);
	free(reached);
	/* a name longer than NAME_MAX is refused, naming the limit */
	snprintf(q, sizeof(q), "%s/%0300d", root, 0);
	assert_int_equal(cb_mkdir_p(q, 0755, &err), -1);
	assert_non_null(strstr(err.msg, "is 300 bytes long, NAME_MAX is 255"));
}

/* A real path that does not fit PATH_MAX is refused (NULL, ENAMETOOLONG),
 * never cut down to a shorter one. */
static void resolve_refuses_what_does_not_fit(void **state)
{
	char root[PATH_MAX], p[PATH_MAX + 512], link[PATH_MAX + 512];
	struct cb_err err;
	size_t len;

	(void)state;
	assert_non_null(realpath(tl_tmpdir(), root));
	len = (size_t)snprintf(p, sizeof(p), "%s/long", root);
	while (len + 201 < PATH_MAX - 4) {
		p[len] = '/';
		memset(p + len + 1, 'd', 200);
		len += 201;
		p[len] = '\0';
	}
	assert_int_equal(cb_mkdir_p(p, 0755, &err), 0);
	snprintf(link, sizeof(link), "%s/deep", root);
	assert_int_equal(symlink(p, link), 0);
	/* "m" is missing and fits; the name after it does not */
	len = (size_t)snprintf(link, sizeof(link), "%s/deep/m/", root);
	memset(link + len, 'x', 250);
	link[len + 250] = '\0';
	errno = 0;
	assert_null(cb_resolve(link));
	assert_int_equal(errno, ENAMETOOLONG);
}

/* A FIFO is refused at once, named as one, never waited on. */
static void read_file_refuses_a_fifo_at_once(void **state)
{
	char fifo[PATH_MAX + 16], want[PATH_MAX + 64], *buf = NULL;
	struct cb_err err;

	(void)state;
	snprintf(fifo, sizeof(fifo), "%s/fifo", tl_tmpdir());
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(cb_read_file(fifo, &buf, NULL, &err), -1);
	snprintf(want, sizeof(want), "%s: a FIFO, not a regular file", fifo);
	assert_string_equal(err.msg, want);
	assert_int_equal(cb_read_file(tl_tmpdir(), &buf, NULL, &err), -1);
	assert_non_null(strstr(err.msg, ": a folder, not a regular file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(resolve_follows_links_and_dotdot),
		cmocka_unit_test(atomic_write_replaces_whole_file),
		cmocka_unit_test(atomic_write_refuses_non_regular_targets),
		cmocka_unit_test(write_into_missing_dir_fails_naming_it),
		cmocka_unit_test(dir_open_follows_no_link_after_a_made_folder),
		cmocka_unit_test(resolve_refuses_what_does_not_fit),
		cmocka_unit_test(read_file_refuses_a_fifo_at_once),
	};

	return cmocka_run_group_tests_name("fsutil", tests, NULL, NULL);
}
