/* fsutil.c: files and paths.
 *
 * _GNU_SOURCE must come before any header: O_PATH (Linux) opens a folder
 * to search it without read permission on it, where POSIX's O_SEARCH is
 * missing. */
#define _GNU_SOURCE
#include "fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"

/* How a folder is opened to walk through it: O_SEARCH (POSIX) or O_PATH
 * (Linux) need no read permission on it; O_RDONLY is what is left. */
#if defined(O_SEARCH)
#define DIR_OPEN (O_SEARCH | O_DIRECTORY | O_CLOEXEC)
#elif defined(O_PATH)
#define DIR_OPEN (O_PATH | O_DIRECTORY | O_CLOEXEC)
#else
#define DIR_OPEN (O_RDONLY | O_DIRECTORY | O_CLOEXEC)
#endif

const char *cb_file_kind(mode_t mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISDIR(mode))
		return "a folder";
	if (S_ISLNK(mode))
		return "a symlink";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return "a special file";
}

/* O_NONBLOCK for the open only: a FIFO (or a device) then cannot hang
 * open() before fstat refuses it; a regular file is read blocking, as
 * always. Links are followed: a user's manifest may well be one, and what
 * a run root holds is checked by its seal, which refuses links. */
int cb_open_input(const char *path, int *fd, off_t *size, struct cb_err *err)
{
	struct stat st;
	int f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), flags;

	*fd = -1;
	if (f < 0)
		return cb_fail(err, "%s: %s", path, strerror(errno));
	if (fstat(f, &st) < 0) {
		int e = errno;
		close(f);
		return cb_fail(err, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(f);
		return cb_fail(err, "%s: %s, not a regular file", path, cb_file_kind(st.st_mode));
	}
	flags = fcntl(f, F_GETFL);
	if (flags < 0 || fcntl(f, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		int e = errno;
		close(f);
		return cb_fail(err, "%s: fcntl: %s", path, strerror(e));
	}
	*fd = f;
	if (size)
		*size = st.st_size;
	return 0;
}

int cb_read_file(const char *path, char **buf, size_t *len, struct cb_err *err)
{
	char *data;
	size_t got = 0;
	off_t size;
	int fd;

	if (cb_open_input(path, &fd, &size, err) < 0)
		return -1;
	data = malloc((size_t)size + 1);
	if (!data) {
		close(fd);
		return cb_fail(err, "%s: out of memory", path);
	}
	while (got < (size_t)size) {
		ssize_t r = read(fd, data + got, (size_t)size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got != (size_t)size) {
		free(data);
		return cb_fail(err, "%s: short read", path);
	}
	data[got] = '\0';
	*buf = data;
	if (len)
		*len = got;
	return 0;
}

/* Directory part of path ("." when there is none); caller frees. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

int cb_fsync_dir(const char *dir, struct cb_err *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return cb_fail(err, "%s: %s", dir, strerror(errno));
	if (fsync(fd) < 0 && errno != EINVAL) {
		int e = errno;
		close(fd);
		return cb_fail(err, "%s: fsync: %s", dir, strerror(e));
	}
	close(fd);
	return 0;
}

int cb_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
		    struct cb_err *err)
{
	char *dir = dir_of(path);
	char *tmp = cb_strdupf("%s.tmp.XXXXXX", path);
	const char *p = data;
	size_t done = 0;
	int fd, rc = -1;

	if (!dir || !tmp) {
		cb_fail(err, "%s: out of memory", path);
		goto out;
	}
	{
		/* Renaming over a device, a folder or a link would replace it
		 * (as root, even /dev/null): only regular files are replaced. */
		struct stat st;
		if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
			cb_fail(err, "%s: exists and is not a regular file; refusing to replace it", path);
			goto out;
		}
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		cb_fail(err, "%s: cannot create temporary file: %s", path, strerror(errno));
		goto out;
	}
	while (done < len) {
		ssize_t w = write(fd, p + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			cb_fail(err, "%s: write: %s", path, strerror(errno));
			close(fd);
			unlink(tmp);
			goto out;
		}
		done += (size_t)w;
	}
	if (fchmod(fd, mode) < 0 || fsync(fd) < 0) {
		cb_fail(err, "%s: %s", path, strerror(errno));
		close(fd);
		unlink(tmp);
		goto out;
	}
	close(fd);
	if (rename(tmp, path) < 0) {
		cb_fail(err, "%s: rename: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = cb_fsync_dir(dir, err);
out:
	free(dir);
	free(tmp);
	return rc;
}

/* The components are taken one at a time, each opened under the folder
 * before it. While they exist they are opened as the kernel would open
 * them, links followed; the first that is missing is made, and from there
 * on every component is opened with O_NOFOLLOW, so that a link planted
 * behind a missing component ("nothere/../link/x") is refused instead of
 * followed. Without create, a missing component and everything below it is
 * only counted (".." taking one back), and the walk stops at the first
 * component it cannot enter. */
int cb_dir_open(const char *path, int create, mode_t mode, int *fd, size_t *missing, char **reached,
		struct cb_err *err)
{
	struct cb_buf walked = CB_BUF_INIT;
	const char *p = path, *q;
	size_t miss = 0;
	int cur, made = 0;

	*fd = -1;
	if (reached)
		*reached = NULL;
	cur = open(path[0] == '/' ? "/" : ".", DIR_OPEN);
	if (cur < 0)
		return cb_fail(err, "%s: %s", path, strerror(errno));
	cb_buf_adds(&walked, path[0] == '/' ? "" : ".");
	for (; *p; p = q) {
		char name[NAME_MAX + 1];
		size_t n;
		int next, dotdot;

		while (*p == '/')
			p++;
		q = p + strcspn(p, "/");
		n = (size_t)(q - p);
		if (n == 0 || (n == 1 && p[0] == '.'))
			continue;
		if (n > NAME_MAX) {
			close(cur);
			cb_buf_release(&walked);
			return cb_fail(err, "%s: the name '%.32s...' is %zu bytes long, NAME_MAX is %d", path, p, n,
				       NAME_MAX);
		}
		memcpy(name, p, n);
		name[n] = '\0';
		dotdot = strcmp(name, "..") == 0;
		if (miss) {
			miss = dotdot ? miss - 1 : miss + 1;
			continue;
		}
		next = openat(cur, name, DIR_OPEN | (made ? O_NOFOLLOW : 0));
		if (next < 0 && errno == ENOENT) {
			made = 1;   /* made here, or without create: it would be */
			if (!create) {
				miss = 1;
				continue;
			}
			if (mkdirat(cur, name, mode) < 0 && errno != EEXIST) {
				int e = errno;
				close(cur);
				cb_buf_release(&walked);
				return cb_fail(err, "%s: mkdir: %s", path, strerror(e));
			}
			next = openat(cur, name, DIR_OPEN | O_NOFOLLOW);
		}
		if (next < 0) {
			int e = errno, link;
			struct stat st;

			link = made && fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
			if (!create && !link) {
				/* Not to be entered: what follows is not reached. */
				miss = 1;
				continue;
			}
			close(cur);
			cb_buf_release(&walked);
			if (link)
				return cb_fail(err, "%s: %.*s is a symlink after a folder that mkdir -p makes; "
					       "caliber follows no link there", path, (int)(q - path), path);
			return cb_fail(err, "%s: %s", path, e == ENOTDIR ? "not a directory" : strerror(e));
		}
		close(cur);
		cur = next;
		cb_buf_addf(&walked, "/%s", name);
	}
	*fd = cur;
	if (missing)
		*missing = miss;
	if (!walked.len)
		cb_buf_adds(&walked, "/");
	if (reached && !(*reached = cb_buf_detach(&walked, NULL))) {
		close(cur);
		*fd = -1;
		return cb_fail(err, "out of memory");
	}
	cb_buf_release(&walked);
	return 0;
}

int cb_dir_climb(int fd, int (*visit)(int fd, const struct stat *st, size_t level, void *ctx), void *ctx,
		 struct cb_err *err)
{
	struct stat st, up;
	size_t level;
	int cur = fd, r = 0;

	/* A folder is at most PATH_MAX / 2 levels deep ("/a" a level). */
	for (level = 0; level <= PATH_MAX / 2; level++) {
		int parent;

		if (fstat(cur, &st) < 0) {
			r = cb_fail(err, "fstat: %s", strerror(errno));
			break;
		}
		if ((r = visit(cur, &st, level, ctx)) != 0)
			break;
		/* "/" is its own parent; a parent that cannot be opened ends
		 * the climb: nothing above it can be seen. */
		parent = openat(cur, "..", DIR_OPEN);
		if (parent < 0 || fstat(parent, &up) < 0 || (up.st_dev == st.st_dev && up.st_ino == st.st_ino)) {
			if (parent >= 0)
				close(parent);
			break;
		}
		if (cur != fd)
			close(cur);
		cur = parent;
	}
	if (cur != fd)
		close(cur);
	return r < 0 ? -1 : r;
}

int cb_mkdir_p(const char *path, mode_t mode, struct cb_err *err)
{
	int fd;

	if (cb_dir_open(path, 1, mode, &fd, NULL, NULL, err) < 0)
		return -1;
	close(fd);
	return 0;
}

int cb_rm_rf(const char *path, struct cb_err *err)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : cb_fail(err, "%s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		char **names = NULL;
		size_t n = 0, i;

		chmod(path, 0700);
		if (cb_list_dir(path, &names, &n, err) < 0)
			return -1;
		for (i = 0; i < n; i++) {
			char *child = cb_path_join(path, names[i]);
			int rc = child ? cb_rm_rf(child, err) : cb_fail(err, "out of memory");
			free(child);
			if (rc < 0) {
				cb_strv_free(names, n);
				return -1;
			}
		}
		cb_strv_free(names, n);
		if (rmdir(path) < 0)
			return cb_fail(err, "%s: rmdir: %s", path, strerror(errno));
		return 0;
	}
	if (unlink(path) < 0)
		return cb_fail(err, "%s: unlink: %s", path, strerror(errno));
	return 0;
}

char *cb_path_join(const char *a, const char *b)
{
	size_t la = strlen(a);

	if (la && a[la - 1] == '/')
		return cb_strdupf("%s%s", a, b);
	return cb_strdupf("%s/%s", a, b);
}

char *cb_strdupf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	s = malloc((size_t)n + 1);
	if (!s)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

int cb_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int cb_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

int cb_exists_in(const char *dir, const char *name)
{
	char *p = cb_path_join(dir, name);
	int r = p && cb_exists(p);

	free(p);
	return r;
}

int cb_absolute(const char *path, char **out, struct cb_err *err)
{
	char cwd[PATH_MAX], *abs, *w;
	const char *p;
	size_t n;

	*out = NULL;
	if (!*path)
		return cb_fail(err, "an empty path");
	if (path[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return cb_fail(err, "%s: the current directory cannot be read: %s", path, strerror(errno));
	n = (path[0] == '/' ? 0 : strlen(cwd) + 1) + strlen(path);
	if (n >= PATH_MAX)
		return cb_fail(err, "%.64s...: the path is %zu bytes long, PATH_MAX is %d", path, n, PATH_MAX);
	abs = path[0] == '/' ? strdup(path) : cb_strdupf("%s/%s", cwd, path);
	if (!abs)
		return cb_fail(err, "out of memory");
	/* Rewrite in place: every component but "" and "." is copied once. */
	for (p = abs, w = abs; *p;) {
		const char *q = strchr(p, '/');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		if (len && !(len == 1 && p[0] == '.')) {
			*w++ = '/';
			memmove(w, p, len);
			w += len;
		}
		p += len;
		while (*p == '/')
			p++;
	}
	if (w == abs)
		*w++ = '/';
	*w = '\0';
	*out = abs;
	return 0;
}

/* Append component c (length n) to the absolute path in out (PATH_MAX
 * bytes), handling "." and ".." lexically; -1 when the result would not
 * fit (nothing is ever cut). */
static int push_component(char *out, const char *c, size_t n)
{
	size_t len = strlen(out);

	if (n == 0 || (n == 1 && c[0] == '.'))
		return 0;
	if (n == 2 && c[0] == '.' && c[1] == '.') {
		char *slash = strrchr(out, '/');
		if (slash && slash != out)
			*slash = '\0';
		else
			strcpy(out, "/");
		return 0;
	}
	if (len + n + 2 >= PATH_MAX)
		return -1;
	if (len > 1)
		out[len++] = '/';
	memcpy(out + len, c, n);
	out[len + n] = '\0';
	return 0;
}

/* Components are taken one at a time: while the path so far exists, the
 * next one is resolved by realpath() (so "link/.." means what the kernel
 * means by it); from the first missing component on, the rest is appended
 * lexically. */
/* cb_resolve's refusal of a path that does not fit: NULL, errno set. */
static char *too_long(void)
{
	errno = ENAMETOOLONG;
	return NULL;
}

char *cb_resolve(const char *path)
{
	char cur[PATH_MAX] = "/";
	char abs[PATH_MAX];
	int exists = 1;

	/* A path that does not fit is refused (NULL), never resolved cut. */
	if (path[0] == '/') {
		if (snprintf(abs, sizeof(abs), "%s", path) >= (int)sizeof(abs))
			return too_long();
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)))
			return NULL;
		if (snprintf(abs, sizeof(abs), "%s/%s", cwd, path) >= (int)sizeof(abs))
			return too_long();
	}
	for (const char *p = abs; *p;) {
		const char *q = strchr(p, '/');
		size_t n = q ? (size_t)(q - p) : strlen(p);

		if (n && exists) {
			char cand[PATH_MAX], real[PATH_MAX];
			struct stat st;

			if (snprintf(cand, sizeof(cand), "%s/%.*s", strcmp(cur, "/") ? cur : "", (int)n, p) >=
			    (int)sizeof(cand))
				return too_long();
			/* A dangling link counts as missing; a real path that does
			 * not fit is refused, not taken as missing. */
			if (lstat(cand, &st) == 0 && realpath(cand, real))
				snprintf(cur, sizeof(cur), "%s", real);
			else if (errno == ENOENT || errno == ENOTDIR)
				exists = 0;
			else
				return NULL;
		}
		if (n && !exists && push_component(cur, p, n) < 0)
			return too_long();
		p += n;
		while (*p == '/')
			p++;
	}
	return strdup(cur);
}

char *cb_existing_ancestor(const char *path)
{
	char *p = strdup(path), *slash;

	while (p && !cb_exists(p)) {
		slash = strrchr(p, '/');
		if (!slash || slash == p) {
			strcpy(p, "/");
			break;
		}
		*slash = '\0';
	}
	return p;
}

int cb_path_within(const char *inner, const char *outer)
{
	size_t n = strlen(outer);

	if (strcmp(outer, "/") == 0)
		return 1;
	return strncmp(inner, outer, n) == 0 && (inner[n] == '\0' || inner[n] == '/');
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cb_list_dir(const char *dir, char ***names, size_t *n, struct cb_err *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t cnt = 0, cap = 0;

	if (!d)
		return cb_fail(err, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (cnt == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nv = realloc(v, ncap * sizeof(*v));
			if (!nv)
				goto oom;
			v = nv;
			cap = ncap;
		}
		v[cnt] = strdup(de->d_name);
		if (!v[cnt])
			goto oom;
		cnt++;
	}
	closedir(d);
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_str);
	*names = v;
	*n = cnt;
	return 0;
oom:
	closedir(d);
	cb_strv_free(v, cnt);
	return cb_fail(err, "%s: out of memory", dir);
}

void cb_strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int cb_is_fs_root(const char *path)
{
	char *r = path[0] == '/' ? cb_resolve(path) : NULL;
	int is = r && strcmp(r, "/") == 0;

	free(r);
	return is;
}
