/* tidy.c: removing what a seal cannot hold, and what dead calibers left. */
#include "tidy.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/runroot.h"
#include "base/fsutil.h"
#include "base/jsonio.h"

/* Whether s is exactly six ASCII letters or digits (mkstemp's XXXXXX). */
static int is_six_alnum(const char *s)
{
	size_t i;

	for (i = 0; i < 6; i++)
		if (!isalnum((unsigned char)s[i]))
			return 0;
	return s[6] == '\0';
}

int cb_is_temp_name(const char *name)
{
	size_t n = strlen(name);

	return n > 11 && memcmp(name + n - 11, ".tmp.", 5) == 0 && is_six_alnum(name + n - 6);
}

/* What a non-regular, non-folder entry is, in words. */
static const char *kind_of(mode_t m)
{
	return S_ISLNK(m) ? "a symlink" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m) || S_ISBLK(m) ? "a device node" : "a special file";
}

/* Append "<rel>: <what>" to changes, a line of text whatever the name
 * holds: a backslash in it written "\\", a control character as \xNN
 * (and bytes that are not UTF-8 likewise, cb_json_text). */
static int note(json_t *changes, const char *rel, const char *what, struct cb_err *err)
{
	char *s = malloc(4 * strlen(rel) + strlen(what) + 3), *p = s;
	int rc;

	if (s) {
		for (; *rel; rel++) {
			unsigned char c = (unsigned char)*rel;
			if (c == '\\')
				p += sprintf(p, "\\\\");
			else if (c < 0x20 || c == 0x7f)
				p += sprintf(p, "\\x%02x", c);
			else
				*p++ = (char)c;
		}
		sprintf(p, ": %s", what);
	}
	rc = s && json_array_append_new(changes, cb_json_text(s)) == 0 ? 0 : cb_fail(err, "out of memory");
	free(s);
	return rc;
}

/* Why entry abs (named name, lstat st) cannot be sealed, into why; "" when
 * it can (as far as the entry itself goes). */
static void unsealable(const char *abs, const char *name, const struct stat *st, char *why, size_t cap)
{
	why[0] = '\0';
	if (S_ISLNK(st->st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(abs, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		snprintf(why, cap, "a symlink to '%.200s%s'", target, n > 200 ? "..." : "");
	} else if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode)) {
		snprintf(why, cap, "%s", kind_of(st->st_mode));
	} else if (strpbrk(name, "\\\n")) {
		snprintf(why, cap, "a %s whose name has a backslash or newline", S_ISDIR(st->st_mode) ? "folder" : "file");
	} else if (cb_is_temp_name(name)) {
		snprintf(why, cap, "a temporary %s of an interrupted write", S_ISDIR(st->st_mode) ? "folder" : "file");
	}
}

/* cb_tidy_tree below the folder abs (rel: its path in the report, "" at
 * the top). */
static int tidy_dir(const char *abs, const char *rel, json_t *changes, struct cb_err *err)
{
	char **names = NULL;
	size_t n = 0, i;
	int rc = 0;

	if (cb_list_dir(abs, &names, &n, err) < 0)
		return -1;
	for (i = 0; i < n && rc == 0; i++) {
		char *cabs = cb_path_join(abs, names[i]);
		char *crel = *rel ? cb_strdupf("%s/%s", rel, names[i]) : strdup(names[i]);
		char why[320], what[400];
		struct stat st;

		if (!cabs || !crel) {
			rc = cb_fail(err, "out of memory");
		} else if (lstat(cabs, &st) < 0) {
			rc = errno == ENOENT ? 0 : cb_fail(err, "%s: %s", cabs, strerror(errno));
		} else {
			unsealable(cabs, names[i], &st, why, sizeof(why));
			if (why[0]) {
				snprintf(what, sizeof(what), "%s, removed", why);
				rc = cb_rm_rf(cabs, err) < 0 ? -1 : note(changes, crel, what, err);
			} else if (S_ISDIR(st.st_mode)) {
				if ((st.st_mode & 0700) != 0700) {
					if (chmod(cabs, (st.st_mode & 07777) | 0700) < 0)
						rc = cb_fail(err, "%s: chmod: %s", cabs, strerror(errno));
					else
						rc = note(changes, crel, "a folder its owner could not list, made listable", err);
				}
				if (rc == 0)
					rc = tidy_dir(cabs, crel, changes, err);
			} else if (!(st.st_mode & 0400)) {
				if (chmod(cabs, (st.st_mode & 07777) | 0400) < 0)
					rc = cb_fail(err, "%s: chmod: %s", cabs, strerror(errno));
				else
					rc = note(changes, crel, "a file its owner could not read, made readable", err);
			}
		}
		free(cabs);
		free(crel);
	}
	cb_strv_free(names, n);
	return rc;
}

int cb_tidy_tree(const char *dir, json_t *changes, struct cb_err *err)
{
	struct stat st;

	if (lstat(dir, &st) < 0)
		return errno == ENOENT ? 0 : cb_fail(err, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		char what[160];
		snprintf(what, sizeof(what), "%s in place of the folder, replaced by an empty folder",
			 kind_of(st.st_mode));
		if (unlink(dir) < 0 || mkdir(dir, 0755) < 0)
			return cb_fail(err, "%s: cannot replace %s by a folder: %s", dir, kind_of(st.st_mode),
				       strerror(errno));
		return note(changes, ".", what, err);
	}
	if ((st.st_mode & 0700) != 0700) {
		if (chmod(dir, (st.st_mode & 07777) | 0700) < 0)
			return cb_fail(err, "%s: chmod: %s", dir, strerror(errno));
		if (note(changes, ".", "a folder its owner could not list, made listable", err) < 0)
			return -1;
	}
	return tidy_dir(dir, "", changes, err);
}

int cb_tidy_fresh(const char *dir, json_t *changes, struct cb_err *err)
{
	char **names = NULL, why[320], what[400];
	size_t n = 0, i;
	struct stat st;
	int rc = 0;

	if (lstat(dir, &st) < 0) {
		if (errno != ENOENT)
			return cb_fail(err, "%s: %s", dir, strerror(errno));
	} else if (!S_ISDIR(st.st_mode)) {
		unsealable(dir, ".", &st, why, sizeof(why));
		snprintf(what, sizeof(what), "%s in place of the folder, removed before the cell started",
			 why[0] ? why : "a file");
		if (unlink(dir) < 0)
			return cb_fail(err, "%s: cannot remove %s: %s", dir, why[0] ? why : "a file", strerror(errno));
		if (note(changes, ".", what, err) < 0)
			return -1;
	}
	if (cb_mkdir_p(dir, 0755, err) < 0 || cb_list_dir(dir, &names, &n, err) < 0)
		return -1;
	for (i = 0; i < n && rc == 0; i++) {
		char *abs = cb_path_join(dir, names[i]);

		if (!abs) {
			rc = cb_fail(err, "out of memory");
		} else if (lstat(abs, &st) == 0) {
			unsealable(abs, names[i], &st, why, sizeof(why));
			snprintf(what, sizeof(what), "%s, removed before the cell started",
				 why[0] ? why : S_ISDIR(st.st_mode) ? "a folder" : "a file");
			rc = cb_rm_rf(abs, err) < 0 ? -1 : note(changes, names[i], what, err);
		}
		free(abs);
	}
	cb_strv_free(names, n);
	return rc;
}

int cb_mkdtemp_locked(char *template, int *lock_fd, struct cb_err *err)
{
	*lock_fd = -1;
	if (!mkdtemp(template))
		return cb_fail(err, "%s: %s", template, strerror(errno));
	*lock_fd = open(template, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*lock_fd < 0 || flock(*lock_fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		struct cb_err ignored;
		if (*lock_fd >= 0)
			close(*lock_fd);
		*lock_fd = -1;
		cb_rm_rf(template, &ignored);
		return cb_fail(err, "%s: cannot lock: %s", template, strerror(e));
	}
	return 0;
}

int cb_remove_if_abandoned(const char *path, const char *prefix, struct cb_err *err)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	size_t pl = strlen(prefix);
	struct stat st;
	int fd, rc;

	if (strncmp(base, prefix, pl) != 0 || !is_six_alnum(base + pl) || lstat(path, &st) < 0 ||
	    !S_ISDIR(st.st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return 0;
	}
	rc = cb_rm_rf(path, err);
	close(fd);
	return rc < 0 ? -1 : 1;
}

int cb_remove_abandoned_temps(const char *path, struct cb_err *err)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	char *prefix = cb_strdupf("%s.tmp.", slash ? slash + 1 : path), **names = NULL;
	size_t n = 0, i;
	int rc = 0;

	if (!dir || !prefix)
		rc = cb_fail(err, "out of memory");
	else if (cb_is_dir(dir) && cb_list_dir(dir, &names, &n, err) < 0)
		rc = -1;
	for (i = 0; i < n && rc == 0; i++) {
		char *p = strncmp(names[i], prefix, strlen(prefix)) == 0 ? cb_path_join(dir, names[i]) : NULL;
		if (p && cb_remove_if_abandoned(p, prefix, err) < 0)
			rc = -1;
		free(p);
	}
	cb_strv_free(names, n);
	free(dir);
	free(prefix);
	return rc;
}

int cb_tidy_resume(const char *root, const char *scratch_prefix, json_t *changes, struct cb_err *err)
{
	char *path = cb_path_join(root, CB_RUN_RUN);
	json_t *run = NULL, *inv;
	size_t i;
	int rc = 0;

	if (!path)
		return cb_fail(err, "out of memory");
	if (cb_tidy_tree(root, changes, err) < 0)
		rc = -1;
	else if (cb_exists(path) && !(run = cb_json_load_file(path, err)))
		rc = -1;
	json_array_foreach(json_object_get(run, "invocations"), i, inv) {
		const char *scratch = cb_json_str(inv, "scratch");
		int r;
		if (rc < 0 || !scratch || scratch[0] != '/')
			continue;
		r = cb_remove_if_abandoned(scratch, scratch_prefix, err);
		if (r < 0)
			rc = -1;
		else if (r > 0)
			rc = note(changes, scratch, "the scratch folder of an earlier caliber, removed", err);
	}
	json_decref(run);
	free(path);
	return rc;
}
