/* walk.c: sorted, link-safe tree listing. A run root holds a directory per
 * IR variant (11,000 of them in bench/reaccount.sh's run), so the listing is
 * spread over cb_pool_run's threads: each takes a directory from a shared
 * list, lists it, and adds the directories it finds to the list. An entry's
 * kind comes from its directory entry's d_type where the file system gives
 * one, else (and for its mode) from fstatat relative to its directory's
 * descriptor, never from its whole path.
 *
 * _DEFAULT_SOURCE must come before any header: d_type's DT_ names are not
 * POSIX (glibc and the BSDs have them). */
#define _DEFAULT_SOURCE
#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "pool.h"

struct walk_job {
	const char *root;
	int rootfd;
	int (*skip)(const char *name);
	int flags;
	pthread_mutex_t lock;
	pthread_cond_t changed;      /* a directory was queued, or the last busy thread finished */
	char **todo;                 /* directories still to list, relative ("" is the root) */
	size_t ntodo, captodo;
	size_t busy;                 /* threads listing a directory now */
	int failed;
	struct cb_err err;           /* the first failure */
	struct cb_tree out;          /* every thread's entries, appended when it stops */
};

/* One thread's entries. */
struct part {
	struct cb_tree t;
	size_t cap;
};

static int push(struct part *p, char *rel, enum cb_entry_kind kind, mode_t mode)
{
	if (p->t.n == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 256;
		struct cb_entry *v = realloc(p->t.v, ncap * sizeof(*v));
		if (!v)
			return -1;
		p->t.v = v;
		p->cap = ncap;
	}
	p->t.v[p->t.n].rel = rel;
	p->t.v[p->t.n].kind = kind;
	p->t.v[p->t.n].mode = mode;
	p->t.n++;
	return 0;
}

static enum cb_entry_kind kind_of_mode(mode_t m)
{
	return S_ISREG(m) ? CB_ENT_FILE : S_ISLNK(m) ? CB_ENT_LINK : S_ISDIR(m) ? CB_ENT_DIR : CB_ENT_OTHER;
}

/* The kind d_type says, or -1 when the file system did not say. */
static int kind_of_dirent(const struct dirent *de)
{
	switch (de->d_type) {
	case DT_REG: return CB_ENT_FILE;
	case DT_LNK: return CB_ENT_LINK;
	case DT_DIR: return CB_ENT_DIR;
	case DT_UNKNOWN: return -1;
	default: return CB_ENT_OTHER;
	}
}

/* Queue a copy of rel to be listed; the caller holds the lock. */
static int queue_dir(struct walk_job *job, const char *rel)
{
	char *copy = strdup(rel);

	if (copy && job->ntodo == job->captodo) {
		size_t ncap = job->captodo ? job->captodo * 2 : 64;
		char **v = realloc(job->todo, ncap * sizeof(*v));
		if (!v) {
			free(copy);
			copy = NULL;
		} else {
			job->todo = v;
			job->captodo = ncap;
		}
	}
	if (!copy)
		return -1;
	job->todo[job->ntodo++] = copy;
	pthread_cond_signal(&job->changed);
	return 0;
}

/* Keep entry crel (taken, freed on failure): a directory is queued to be
 * listed, and goes into p only with CB_WALK_DIRS; any other entry goes
 * into p. -1 when out of memory. */
static int keep_entry(struct walk_job *job, struct part *p, char *crel, enum cb_entry_kind kind,
		      mode_t mode)
{
	int rc = 0;

	if (kind == CB_ENT_DIR) {
		pthread_mutex_lock(&job->lock);
		rc = queue_dir(job, crel);
		pthread_mutex_unlock(&job->lock);
		if (rc == 0 && !(job->flags & CB_WALK_DIRS)) {
			free(crel);
			return 0;
		}
	}
	if (rc < 0 || push(p, crel, kind, mode) < 0) {
		free(crel);
		return -1;
	}
	return 0;
}

/* "<root>/<rel>/<name>: <what>" into err (rel and name may be empty): the
 * whole path, though the lookup that failed was relative. */
static int fail_at(struct cb_err *err, const struct walk_job *job, const char *rel,
		   const char *name, const char *what)
{
	return cb_fail(err, "%s%s%s%s%s: %s", job->root, rel[0] ? "/" : "", rel, name[0] ? "/" : "",
		       name, what);
}

/* List directory rel: its files, links and special files go into p, its
 * subdirectories (those skip keeps) into the job's list, and into p too
 * with CB_WALK_DIRS. Never follows a link: a directory is opened with
 * O_NOFOLLOW from the descriptor of the root, and an entry is examined,
 * when it is, with fstatat(AT_SYMLINK_NOFOLLOW). */
static int list_dir(struct walk_job *job, const char *rel, struct part *p, struct cb_err *err)
{
	int fd = openat(job->rootfd, rel[0] ? rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		rc = fail_at(err, job, rel, "", strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	while (rc == 0 && (errno = 0, de = readdir(d))) {
		int kind = kind_of_dirent(de);
		mode_t mode = 0;
		char *crel;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (kind < 0 || (job->flags & CB_WALK_MODES)) {
			struct stat st;
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				rc = fail_at(err, job, rel, de->d_name, strerror(errno));
				break;
			}
			kind = (int)kind_of_mode(st.st_mode);
			mode = job->flags & CB_WALK_MODES ? st.st_mode : 0;
		}
		if (kind == CB_ENT_DIR && job->skip && job->skip(de->d_name))
			continue;
		crel = rel[0] ? cb_path_join(rel, de->d_name) : strdup(de->d_name);
		if (!crel || keep_entry(job, p, crel, (enum cb_entry_kind)kind, mode) < 0)
			rc = cb_fail(err, "out of memory");
	}
	if (rc == 0 && errno)
		rc = fail_at(err, job, rel, "", strerror(errno));
	closedir(d);
	return rc;
}

/* One listing thread: take directories until none is queued and no thread
 * is listing one (which could queue more), or until one failed. */
static void *walk_worker(void *arg)
{
	struct walk_job *job = arg;
	struct part p = { { NULL, 0 }, 0 };
	struct cb_err err;
	int rc = 0;

	pthread_mutex_lock(&job->lock);
	for (;;) {
		char *rel;

		while (!job->failed && !job->ntodo && job->busy)
			pthread_cond_wait(&job->changed, &job->lock);
		if (job->failed || !job->ntodo)
			break;
		rel = job->todo[--job->ntodo];
		job->busy++;
		pthread_mutex_unlock(&job->lock);
		rc = list_dir(job, rel, &p, &err);
		free(rel);
		pthread_mutex_lock(&job->lock);
		job->busy--;
		if (rc < 0 && !job->failed) {
			job->failed = 1;
			job->err = err;
		}
		if (job->failed || (!job->ntodo && !job->busy))
			pthread_cond_broadcast(&job->changed);
	}
	/* Hand this thread's entries over, even after a failure, so that
	 * cb_walk frees them all in one place. */
	if (p.t.n) {
		struct cb_entry *v = realloc(job->out.v, (job->out.n + p.t.n) * sizeof(*v));
		if (v) {
			memcpy(v + job->out.n, p.t.v, p.t.n * sizeof(*v));
			job->out.v = v;
			job->out.n += p.t.n;
		} else {
			cb_tree_release(&p.t);
			if (!job->failed) {
				job->failed = 1;
				cb_fail(&job->err, "out of memory");
			}
		}
	}
	pthread_mutex_unlock(&job->lock);
	free(p.t.v);
	return NULL;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct cb_entry *)a)->rel, ((const struct cb_entry *)b)->rel);
}

int cb_walk(const char *root, int (*skip_dir)(const char *name), int flags, struct cb_tree *t,
	    struct cb_err *err)
{
	struct walk_job job;
	size_t i;

	memset(t, 0, sizeof(*t));
	if (!cb_is_dir(root))
		return cb_fail(err, "%s: not a directory", root);
	memset(&job, 0, sizeof(job));
	job.root = root;
	job.skip = skip_dir;
	job.flags = flags;
	job.rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (job.rootfd < 0)
		return cb_fail(err, "%s: %s", root, strerror(errno));
	pthread_mutex_init(&job.lock, NULL);
	pthread_cond_init(&job.changed, NULL);
	if (queue_dir(&job, "") < 0) {
		job.failed = 1;
		cb_fail(&job.err, "out of memory");
	}
	cb_pool_run(job.failed ? 1 : (size_t)-1, walk_worker, &job);
	close(job.rootfd);
	pthread_cond_destroy(&job.changed);
	pthread_mutex_destroy(&job.lock);
	for (i = 0; i < job.ntodo; i++)
		free(job.todo[i]);
	free(job.todo);
	*t = job.out;
	if (job.failed) {
		*err = job.err;
		cb_tree_release(t);
		return -1;
	}
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_entry);
	return 0;
}

void cb_tree_release(struct cb_tree *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		free(t->v[i].rel);
	free(t->v);
	memset(t, 0, sizeof(*t));
}
