/* fsutil.c: files and paths. */
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

int cb_read_file(const char *path, char **buf, size_t *len, struct cb_err *err)
{
	struct stat st;
	char *data;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return cb_fail(err, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return cb_fail(err, "%s: not a regular file", path);
	}
	data = malloc((size_t)st.st_size + 1);
	if (!data) {
		close(fd);
		return cb_fail(err, "%s: out of memory", path);
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, data + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got != (size_t)st.st_size) {
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

int cb_mkdir_p(const char *path, mode_t mode, struct cb_err *err)
{
	char *copy = strdup(path);
	char *p;

	if (!copy)
		return cb_fail(err, "%s: out of memory", path);
	for (p = copy + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdir(copy, mode) < 0 && errno != EEXIST) {
				int e = errno;
				free(copy);
				return cb_fail(err, "%s: mkdir: %s", path, strerror(e));
			}
			*p = c;
			if (c == '\0')
				break;
		}
	}
	free(copy);
	if (!cb_is_dir(path))
		return cb_fail(err, "%s: not a directory", path);
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
 * bytes), handling "." and ".." lexically. */
static void push_component(char *out, const char *c, size_t n)
{
	size_t len = strlen(out);

	if (n == 0 || (n == 1 && c[0] == '.'))
		return;
	if (n == 2 && c[0] == '.' && c[1] == '.') {
		char *slash = strrchr(out, '/');
		if (slash && slash != out)
			*slash = '\0';
		else
			strcpy(out, "/");
		return;
	}
	if (len + n + 2 >= PATH_MAX)
		return;
	if (len > 1)
		out[len++] = '/';
	memcpy(out + len, c, n);
	out[len + n] = '\0';
}

/* Components are taken one at a time: while the path so far exists, the
 * next one is resolved by realpath() (so "link/.." means what the kernel
 * means by it); from the first missing component on, the rest is appended
 * lexically. */
char *cb_resolve(const char *path)
{
	char cur[PATH_MAX] = "/";
	char abs[PATH_MAX];
	int exists = 1;

	/* A path that does not fit is refused (NULL), never resolved cut. */
	if (path[0] == '/') {
		if (snprintf(abs, sizeof(abs), "%s", path) >= (int)sizeof(abs))
			return NULL;
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)) || snprintf(abs, sizeof(abs), "%s/%s", cwd, path) >= (int)sizeof(abs))
			return NULL;
	}
	for (const char *p = abs; *p;) {
		const char *q = strchr(p, '/');
		size_t n = q ? (size_t)(q - p) : strlen(p);

		if (n && exists) {
			char cand[PATH_MAX], real[PATH_MAX];
			struct stat st;

			if (snprintf(cand, sizeof(cand), "%s/%.*s", strcmp(cur, "/") ? cur : "", (int)n, p) >=
			    (int)sizeof(cand))
				return NULL;
			if (lstat(cand, &st) == 0 && realpath(cand, real))
				snprintf(cur, sizeof(cur), "%s", real);
			else
				exists = 0;
		}
		if (n && !exists)
			push_component(cur, p, n);
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

int cb_mkdir_parent(const char *path, mode_t mode, struct cb_err *err)
{
	char *dir = dir_of(path);
	int rc;

	if (!dir)
		return cb_fail(err, "%s: out of memory", path);
	rc = strcmp(dir, "/") == 0 || strcmp(dir, ".") == 0 ? 0 : cb_mkdir_p(dir, mode, err);
	free(dir);
	return rc;
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
