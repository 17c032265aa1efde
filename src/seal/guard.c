/* guard.c: the output guard (guard.h). */
#include "guard.h"

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/runroot.h"
#include "base/fsutil.h"
#include "seal.h"
#include "base/walk.h"

/* A folder by what names it on the machine, whatever the path. */
struct devino {
	dev_t dev;
	ino_t ino;
};

/* What the climb from a target looks for, and where it found it. */
struct climb {
	struct devino *run;  /* every folder of g->run, sorted (cmp_devino) */
	size_t nrun;
	int in_run;          /* found: a folder of g->run (1) or a sealed run (0) */
	size_t level;        /* how many folders above the deepest one reached */
};

/* qsort/bsearch order of folders: by device, then inode. */
static int cmp_devino(const void *a, const void *b)
{
	const struct devino *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The folders of the run root, by device and inode, sorted: with whole,
 * every one of them, so that a target lies in the run when it reaches any,
 * whether its path climbs through the root or not (a bind mount of one of
 * the run's folders does not); without, the root alone (what a folder just
 * made is checked against again, without walking the run a second time). A
 * run that cannot be opened protects nothing here (the command fails on it
 * itself); one that cannot be walked whole protects its root at least. */
static int run_folders(const char *run, int whole, struct climb *c, struct cb_err *err)
{
	struct cb_tree t;
	struct cb_err ignored;
	struct stat st;
	size_t i;
	int fd = run ? open(run, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return 0;
	}
	if (!whole || cb_walk(run, NULL, CB_WALK_DIRS, &t, &ignored) < 0)
		memset(&t, 0, sizeof(t));
	c->run = malloc((t.n + 1) * sizeof(*c->run));
	if (!c->run) {
		close(fd);
		cb_tree_release(&t);
		return cb_fail(err, "out of memory");
	}
	c->run[c->nrun++] = (struct devino){ st.st_dev, st.st_ino };
	for (i = 0; i < t.n; i++)
		if (t.v[i].kind == CB_ENT_DIR && fstatat(fd, t.v[i].rel, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode))
			c->run[c->nrun++] = (struct devino){ st.st_dev, st.st_ino };
	qsort(c->run, c->nrun, sizeof(*c->run), cmp_devino);
	close(fd);
	cb_tree_release(&t);
	return 0;
}

/* Whether the folder dirfd holds name as a regular file (never followed). */
static int holds_file(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* One folder of the climb: 1 when it is the run root read or a sealed run. */
static int visit(int fd, const struct stat *st, size_t level, void *ctx)
{
	struct climb *c = ctx;
	const struct devino key = { st->st_dev, st->st_ino };

	c->level = level;
	if (c->nrun && bsearch(&key, c->run, c->nrun, sizeof(*c->run), cmp_devino)) {
		c->in_run = 1;
		return 1;
	}
	if (holds_file(fd, CB_SUMS_FILE) && holds_file(fd, CB_RUN_CAMPAIGN)) {
		c->in_run = 0;
		return 1;
	}
	return 0;
}

/* The path of the folder level folders above the one reached by `reached`:
 * its real path with level names taken off (".." climbs the real path
 * lexically, bind mounts included); caller frees. */
static char *name_above(const char *reached, size_t level)
{
	char *real = realpath(reached, NULL), *slash;

	if (!real)
		return strdup(reached);
	while (level-- > 0 && (slash = strrchr(real, '/'))) {
		if (slash == real) {
			real[1] = '\0';
			break;
		}
		*slash = '\0';
	}
	return real;
}

/* Judge the target abs by the folder fd that it reaches (by `reached`):
 * refused when that folder or one above it is a folder of g->run (with
 * whole; else its root) or a sealed run. Messages name the target shown. */
static int judge(const struct cb_guard *g, const char *shown, int fd, const char *reached, int whole,
		 struct cb_err *err)
{
	struct climb c;
	const char *what = g->what ? g->what : "";
	const char *sp = g->what ? " " : "";
	char *name;
	int r;

	memset(&c, 0, sizeof(c));
	if (run_folders(g->run, whole, &c, err) < 0)
		return -1;
	r = cb_dir_climb(fd, visit, &c, err);
	free(c.run);
	if (r < 0)
		return cb_prefix(err, "%s%s%s", what, sp, shown);
	if (r == 0)
		return 0;
	if (c.in_run) {
		name = realpath(g->run, NULL);
		cb_fail(err, "%s%s%s: inside the run root %s (%s)", what, sp, shown, name ? name : g->run,
			g->why ? g->why : "it is read, never written to");
	} else {
		name = name_above(reached, c.level);
		cb_fail(err, "%s%s%s: inside the sealed run %s (a sealed run is never written to)", what, sp, shown,
			name ? name : "(out of memory)");
	}
	free(name);
	return -1;
}

/* Put the option that named the target in front of the message in err
 * ("-o /x: ..."), as the guard's own messages have it; returns -1. */
static int named(const struct cb_guard *g, struct cb_err *err)
{
	char msg[CB_ERR_MAX];

	if (!g->what)
		return -1;
	memcpy(msg, err->msg, sizeof(msg));
	return cb_fail(err, "%s %s", g->what, msg);
}

/* path made absolute for the guard; the error names the option. */
static int absolute(const struct cb_guard *g, const char *path, char **abs, struct cb_err *err)
{
	return cb_absolute(path, abs, err) == 0 ? 0 : named(g, err);
}

/* A file that has other names (a hard link) is refused as a target: what
 * caliber writes there would reach every name of it, wherever they are,
 * whether it is opened or replaced. */
static int hard_link(const struct cb_guard *g, const char *abs, struct cb_err *err)
{
	struct stat st;

	if (lstat(abs, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink < 2)
		return 0;
	return cb_fail(err, "%s%s%s: a hard link (%ju names); caliber never writes a file that has other names",
		       g->what ? g->what : "", g->what ? " " : "", abs, (uintmax_t)st.st_nlink);
}

int cb_guard_check(const struct cb_guard *g, const char *path, struct cb_err *err)
{
	char *abs = NULL, *reached = NULL;
	int fd = -1, rc = -1;

	if (absolute(g, path, &abs, err) < 0)
		return -1;
	if (hard_link(g, abs, err) < 0) {
		free(abs);
		return -1;
	}
	if (cb_dir_open(abs, 0, 0, &fd, NULL, &reached, err) < 0) {
		named(g, err);
	} else {
		rc = judge(g, abs, fd, reached, 1, err);
		close(fd);
	}
	free(reached);
	free(abs);
	return rc;
}

/* Make the folder abs and judge the folder made; messages name the
 * target shown (abs itself, or the file abs is to hold). */
static int make(const struct cb_guard *g, const char *shown, const char *abs, mode_t mode, struct cb_err *err)
{
	char *reached = NULL;
	int fd, rc;

	if (cb_dir_open(abs, 1, mode, &fd, NULL, &reached, err) < 0) {
		/* cb_dir_open names abs first: name the target instead. */
		size_t n = strlen(abs);
		if (strncmp(err->msg, abs, n) == 0 && strncmp(err->msg + n, ": ", 2) == 0) {
			char why[CB_ERR_MAX];
			snprintf(why, sizeof(why), "%s", err->msg + n + 2);
			cb_fail(err, "%s: %s", shown, why);
		}
		return named(g, err);
	}
	rc = judge(g, shown, fd, reached, 0, err);
	close(fd);
	free(reached);
	return rc;
}

int cb_guard_mkdir(const struct cb_guard *g, const char *dir, mode_t mode, struct cb_err *err)
{
	char *abs = NULL;
	int rc;

	if (cb_guard_check(g, dir, err) < 0 || absolute(g, dir, &abs, err) < 0)
		return -1;
	rc = make(g, abs, abs, mode, err);
	free(abs);
	return rc;
}

int cb_guard_mkdir_parent(const struct cb_guard *g, const char *file, mode_t mode, struct cb_err *err)
{
	char *abs = NULL, *dir = NULL, *slash;
	int rc;

	if (cb_guard_check(g, file, err) < 0 || absolute(g, file, &abs, err) < 0)
		return -1;
	dir = strdup(abs);
	if (!dir) {
		free(abs);
		return cb_fail(err, "out of memory");
	}
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	rc = make(g, abs, dir, mode, err);
	free(dir);
	free(abs);
	return rc;
}
