/* confine.c: the two ways a worker is confined (confine.h), through the
 * kernel's system calls (no library): Landlock (the ABI the kernel offers,
 * and a ruleset that leaves a process only the folders it may write), and
 * a mount namespace of the worker's own in which those folders are bound
 * onto themselves and every other mount is remounted read-only. */
#ifdef __linux__
#define _GNU_SOURCE
#endif
#include "confine.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/capability.h>
#include <linux/landlock.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#endif

#if defined(__linux__) && defined(SYS_landlock_create_ruleset)
#define CB_HAVE_LANDLOCK 1
#else
#define CB_HAVE_LANDLOCK 0
#endif

#if CB_HAVE_LANDLOCK
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

/* The ABI the running kernel offers; 0 with why filled when none. */
static int kernel_abi(char *why, size_t cap)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	if (abi > 0)
		return (int)abi;
	snprintf(why, cap, "this kernel has no Landlock (landlock_create_ruleset: %s)",
		 errno == ENOSYS ? "not built in" : errno == EOPNOTSUPP ? "disabled at boot" : strerror(errno));
	return 0;
}

/* Every right that writes, as far as ABI abi knows them: files written or
 * truncated, entries made or removed, files linked or moved between
 * folders (REFER, which also keeps a file from outside from being linked
 * in). Reading, listing and executing stay unhandled, so allowed. */
static unsigned long long write_rights(int abi)
{
	unsigned long long r = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
			       LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
			       LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
			       LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
			       LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	return r;
}

/* Allow rights beneath the folder open at dirfd in the ruleset fd; what
 * names dirfd in a message. */
static int allow_beneath(int fd, int dirfd, const char *what, unsigned long long rights, struct cb_err *err)
{
	struct landlock_path_beneath_attr pb;

	memset(&pb, 0, sizeof(pb));
	pb.allowed_access = rights;
	pb.parent_fd = dirfd;
	if (syscall(SYS_landlock_add_rule, fd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
		return cb_fail(err, "%s: landlock_add_rule: %s", what, strerror(errno));
	return 0;
}
#endif

/* cb_confine_self with Landlock ABI abi or the kernel's, whichever is
 * lower. */
static int landlock_self(int abi, size_t n, struct cb_err *err)
{
#if CB_HAVE_LANDLOCK
	struct landlock_ruleset_attr attr;
	char why[160], what[64];
	int have = kernel_abi(why, sizeof(why)), fd, dev, proc, rc = 0;
	unsigned long long rights;
	size_t i;

	if (!have)
		return cb_fail(err, "%s", why);
	if (abi > have)
		abi = have;
	rights = write_rights(abi);
	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = rights;
	fd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (fd < 0)
		return cb_fail(err, "landlock_create_ruleset: %s", strerror(errno));
	for (i = 0; rc == 0 && i < n; i++) {
		snprintf(what, sizeof(what), "folder %zu (descriptor %zu)", i + 1, CB_CONFINE_FD0 + i);
		rc = allow_beneath(fd, (int)(CB_CONFINE_FD0 + i), what, rights, err);
		close((int)(CB_CONFINE_FD0 + i));
	}
	/* /dev: a device is opened for writing (/dev/null, a GPU's nodes), and
	 * /dev/shm is where Python's and torch's processes share memory. */
	dev = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rc == 0 && dev < 0)
		rc = cb_fail(err, "/dev: %s", strerror(errno));
	if (rc == 0)
		rc = allow_beneath(fd, dev, "/dev", rights, err);
	if (dev >= 0)
		close(dev);
	/* /proc: CUDA's cuInit names its threads through
	 * /proc/<pid>/task/<tid>/comm and fails with error 304 ("OS call
	 * failed") where that write is refused: a confined worker saw no GPU.
	 * A process's own entries are the ones it may write there; Landlock
	 * keeps it from other processes' memory (its ptrace rule), and a file
	 * reached through /proc/<pid>/root is checked where it really is. */
	proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rc == 0 && proc < 0)
		rc = cb_fail(err, "/proc: %s", strerror(errno));
	if (rc == 0)
		rc = allow_beneath(fd, proc, "/proc", rights, err);
	if (proc >= 0)
		close(proc);
	if (rc == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		rc = cb_fail(err, "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
	if (rc == 0 && syscall(SYS_landlock_restrict_self, fd, 0) < 0)
		rc = cb_fail(err, "landlock_restrict_self: %s", strerror(errno));
	close(fd);
	return rc;
#else
	(void)abi;
	(void)n;
	return cb_fail(err, "Landlock is a Linux mechanism, and caliber was built without it");
#endif
}

#ifdef __linux__
/* A new mount namespace for the calling process, whose mounts are
 * private to it: as root (CAP_SYS_ADMIN) by itself; else, where the
 * kernel lets an unprivileged process, inside a user namespace of its own
 * that maps its user and group to themselves (so that files keep their
 * owners), which also locks the flags of every mount it copies. */
static int enter_namespace(struct cb_err *err)
{
	static const char *const files[] = { "/proc/self/setgroups", "/proc/self/uid_map", "/proc/self/gid_map" };
	char lines[3][64];
	unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
	size_t i;
	int fd, rc = 0;

	if (unshare(CLONE_NEWNS) < 0) {
		if (errno != EPERM)
			return cb_fail(err, "unshare(CLONE_NEWNS): %s", strerror(errno));
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			return cb_fail(err, "unshare(CLONE_NEWNS): not permitted, and in a user namespace: %s",
				       strerror(errno));
		snprintf(lines[0], sizeof(lines[0]), "deny");
		snprintf(lines[1], sizeof(lines[1]), "%u %u 1", uid, uid);
		snprintf(lines[2], sizeof(lines[2]), "%u %u 1", gid, gid);
		for (i = 0; rc == 0 && i < 3; i++) {
			fd = open(files[i], O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, lines[i], strlen(lines[i])) < 0)
				rc = cb_fail(err, "%s: %s", files[i], strerror(errno));
			if (fd >= 0)
				close(fd);
		}
		if (rc < 0)
			return rc;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return cb_fail(err, "make every mount private: %s", strerror(errno));
	return 0;
}

/* The mount points of this process's namespace (/proc/self/mountinfo),
 * into *points (n of them, each allocated; free with free_points). */
static int read_points(char ***points, size_t *n, struct cb_err *err)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char *line = NULL, point[PATH_MAX], **grown;
	size_t cap = 0;
	int rc = 0;

	*points = NULL;
	*n = 0;
	if (!f)
		return cb_fail(err, "/proc/self/mountinfo: %s", strerror(errno));
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		if (cb_confine_mountinfo_point(line, point, sizeof(point)) < 0) {
			rc = cb_fail(err, "/proc/self/mountinfo: a line without a mount point: %s", line);
		} else if (!(grown = realloc(*points, (*n + 1) * sizeof(**points))) ||
			   !(grown[*n] = strdup(point))) {
			if (grown)
				*points = grown;
			rc = cb_fail(err, "out of memory");
		} else {
			*points = grown;
			(*n)++;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

/* Free what read_points made. */
static void free_points(char **points, size_t n)
{
	while (n--)
		free(points[n]);
	free(points);
}

/* Bind the folder open at descriptor fd onto itself, with the mounts
 * beneath it (a namespace new to this process): a mount of its own, as
 * writable as the one it lies on, which the read-only pass leaves alone.
 * The descriptor was opened in the runner's namespace, which mount(2)
 * does not take; so the folder is entered by the path /proc gives for it
 * now and taken only when "." is that folder, since the runner may move
 * it meanwhile (a slot): a mount made on "." is made on that folder,
 * wherever it is moved later. Leaves the process in that folder; what
 * names it in a message. */
static int bind_self(int fd, const char *what, struct cb_err *err)
{
	char link[64], path[PATH_MAX] = "";
	struct stat want, got;
	ssize_t len;
	int tries;

	if (fstat(fd, &want) < 0)
		return cb_fail(err, "%s: %s", what, strerror(errno));
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	for (tries = 0; tries < 100; tries++) {
		len = readlink(link, path, sizeof(path) - 1);
		if (len < 0 || (size_t)len == sizeof(path) - 1)
			return cb_fail(err, "%s: %s: %s", what, link, len < 0 ? strerror(errno) : "too long");
		path[len] = '\0';
		if (chdir(path) == 0 && stat(".", &got) == 0 && got.st_dev == want.st_dev && got.st_ino == want.st_ino)
			break;
	}
	if (tries == 100)
		return cb_fail(err, "%s: %s is not the folder meant (moved 100 times)", what, path);
	if (mount(".", ".", NULL, MS_BIND | MS_REC, NULL) < 0)
		return cb_fail(err, "%s: bind %s onto itself: %s", what, path, strerror(errno));
	return 0;
}

/* Remount read-only each of the n mount points (read before the binds of
 * bind_self, so none of those) but /dev and the mounts beneath it, where
 * devices are opened for writing and /dev/shm is written, and /proc itself,
 * where CUDA's cuInit names its threads (mounts beneath /proc, such as a
 * container's /proc/sys, are remounted read-only). A mount already
 * read-only stays; one statvfs cannot reach (a mount point deleted, a
 * FUSE mount that refuses caliber's user) is as unreachable to the worker
 * and is left; any other that cannot be remounted is an error naming it. */
static int remount_readonly(char **points, size_t n, struct cb_err *err)
{
	struct statvfs vfs;
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcmp(points[i], "/dev") == 0 || strncmp(points[i], "/dev/", 5) == 0 ||
		    strcmp(points[i], "/proc") == 0)
			continue;
		if (statvfs(points[i], &vfs) < 0) {
			if (errno == ENOENT || errno == EACCES)
				continue;
			return cb_fail(err, "%s: %s", points[i], strerror(errno));
		}
		if (vfs.f_flag & ST_RDONLY)
			continue;
		if (mount(NULL, points[i], NULL, cb_confine_remount_flags(vfs.f_flag), NULL) < 0)
			return cb_fail(err, "remount %s read-only: %s", points[i], strerror(errno));
	}
	return 0;
}

/* Take CAP_SYS_ADMIN from the calling process and from all it starts
 * (its bounding set, then the sets it holds): a worker running as root
 * would otherwise remount its mounts writable again, or leave for
 * caliber's namespace (setns). */
static int drop_sys_admin(struct cb_err *err)
{
	struct __user_cap_header_struct h;
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	const unsigned bit = 1u << (CAP_SYS_ADMIN % 32);
	const int at = CAP_SYS_ADMIN / 32;

	if (prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) == 1 && prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) < 0)
		return cb_fail(err, "prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN): %s", strerror(errno));
	memset(&h, 0, sizeof(h));
	memset(d, 0, sizeof(d));
	h.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &h, d) < 0)
		return cb_fail(err, "capget: %s", strerror(errno));
	if (!((d[at].effective | d[at].permitted | d[at].inheritable) & bit))
		return 0;
	d[at].effective &= ~bit;
	d[at].permitted &= ~bit;
	d[at].inheritable &= ~bit;
	if (syscall(SYS_capset, &h, d) < 0)
		return cb_fail(err, "capset: %s", strerror(errno));
	return 0;
}

/* Confine the calling process, and all it starts, to writing beneath the
 * n folders open from CB_CONFINE_FD0 on and /dev: a mount namespace of
 * its own, those folders bound onto themselves, every other mount
 * remounted read-only, CAP_SYS_ADMIN gone and no_new_privs set. Keeps the
 * working directory (entered again by its path, so through the new
 * mounts where it lies beneath one); closes the descriptors. */
static int namespace_self(size_t n, struct cb_err *err)
{
	char **points = NULL, what[64], cwd[PATH_MAX];
	size_t npoints = 0, i;
	int here = -1, dev = -1, rc;

	rc = enter_namespace(err);
	if (rc == 0 && (!getcwd(cwd, sizeof(cwd)) || (here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0))
		rc = cb_fail(err, "the working directory: %s", strerror(errno));
	if (rc == 0)
		rc = read_points(&points, &npoints, err);
	for (i = 0; rc == 0 && i < n; i++) {
		snprintf(what, sizeof(what), "folder %zu (descriptor %zu)", i + 1, CB_CONFINE_FD0 + i);
		rc = bind_self((int)(CB_CONFINE_FD0 + i), what, err);
	}
	/* /dev: a device is opened for writing (/dev/null, a GPU's nodes), and
	 * /dev/shm is where Python's and torch's processes share memory. */
	if (rc == 0 && (dev = open("/dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = cb_fail(err, "/dev: %s", strerror(errno));
	if (rc == 0)
		rc = bind_self(dev, "/dev", err);
	if (rc == 0)
		rc = remount_readonly(points, npoints, err);
	if (rc == 0 && chdir(cwd) < 0 && fchdir(here) < 0)
		rc = cb_fail(err, "back to the working directory %s: %s", cwd, strerror(errno));
	if (rc == 0)
		rc = drop_sys_admin(err);
	if (rc == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		rc = cb_fail(err, "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
	free_points(points, npoints);
	if (dev >= 0)
		close(dev);
	if (here >= 0)
		close(here);
	for (i = 0; i < n; i++)
		close((int)(CB_CONFINE_FD0 + i));
	return rc;
}

/* Whether a child can confine itself in a mount namespace as the wrapper
 * will (namespace_self, with /dev the only folder): 1, else 0 with why
 * saying what refused it. */
static int namespace_works(char *why, size_t cap)
{
	struct cb_err e;
	int p[2], status = 0;
	ssize_t got, len = 0;
	pid_t pid;

	if (pipe(p) < 0) {
		snprintf(why, cap, "pipe: %s", strerror(errno));
		return 0;
	}
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (namespace_self(0, &e) < 0) {
			if (write(p[1], e.msg, strlen(e.msg)) < 0)
				_exit(2);
			_exit(1);
		}
		_exit(0);
	}
	close(p[1]);
	while (pid > 0 && (size_t)len + 1 < cap && (got = read(p[0], why + len, cap - 1 - (size_t)len)) > 0)
		len += got;
	why[len] = '\0';
	close(p[0]);
	if (pid < 0) {
		snprintf(why, cap, "fork: %s", strerror(errno));
		return 0;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 1;
	if (!len)
		snprintf(why, cap, "the child that tried ended with status %d", status);
	return 0;
}
#endif

int cb_confine_mode_parse(const char *word)
{
	static const char *const names[] = { "auto", "landlock", "namespace", "off" };
	int i;

	for (i = 0; i < 4; i++)
		if (strcmp(word, names[i]) == 0)
			return i;
	return -1;
}

const char *cb_confine_mode_name(enum cb_confine_mode mode)
{
	return mode == CB_CONFINE_LANDLOCK ? "landlock" : mode == CB_CONFINE_NAMESPACE ? "namespace" : "off";
}

void cb_confine_probe(enum cb_confine_mode want, struct cb_confine *c)
{
	char landlock[200] = "", ns[200] = "";

	memset(c, 0, sizeof(*c));
	c->mode = CB_CONFINE_OFF;
	if (want == CB_CONFINE_OFF) {
		snprintf(c->why, sizeof(c->why), "--no-confinement");
		return;
	}
	if (want != CB_CONFINE_NAMESPACE) {
#if CB_HAVE_LANDLOCK
		c->abi = kernel_abi(landlock, sizeof(landlock));
#else
		snprintf(landlock, sizeof(landlock), "Landlock is a Linux mechanism, and caliber was built without it");
#endif
		if (c->abi > 0) {
			c->mode = CB_CONFINE_LANDLOCK;
			return;
		}
		if (want == CB_CONFINE_LANDLOCK) {
			c->unavailable = 1;
			snprintf(c->why, sizeof(c->why), "--confinement landlock: %s", landlock);
			return;
		}
	}
#ifdef __linux__
	if (namespace_works(ns, sizeof(ns))) {
		c->mode = CB_CONFINE_NAMESPACE;
		return;
	}
#else
	snprintf(ns, sizeof(ns), "mount namespaces are a Linux mechanism");
#endif
	if (want == CB_CONFINE_NAMESPACE) {
		c->unavailable = 1;
		snprintf(c->why, sizeof(c->why), "--confinement namespace: no mount namespace here (%s)", ns);
	} else {
		snprintf(c->why, sizeof(c->why), "%s, and no mount namespace here (%s)", landlock, ns);
	}
}

void cb_confine_describe(const struct cb_confine *c, char *out, size_t cap)
{
	if (c->mode == CB_CONFINE_LANDLOCK)
		snprintf(out, cap, "confined (landlock ABI %d)", c->abi);
	else if (c->mode == CB_CONFINE_NAMESPACE)
		snprintf(out, cap, "confined (mount namespace)");
	else
		snprintf(out, cap, "not confined: %s", c->why);
}

int cb_confine_code(const struct cb_confine *c)
{
	return c->mode == CB_CONFINE_LANDLOCK ? c->abi : c->mode == CB_CONFINE_NAMESPACE ? CB_CONFINE_NS : 0;
}

int cb_confine_mountinfo_point(const char *line, char *out, size_t cap)
{
	const char *p = line;
	size_t k = 0;
	int field;
	char ch;

	for (field = 0; field < 4; field++) {
		if (!(p = strchr(p, ' ')))
			return -1;
		p++;
	}
	while (*p && *p != ' ' && *p != '\n') {
		ch = *p++;
		if (ch == '\\' && p[0] >= '0' && p[0] <= '3' && p[1] >= '0' && p[1] <= '7' && p[2] >= '0' && p[2] <= '7') {
			ch = (char)((p[0] - '0') * 64 + (p[1] - '0') * 8 + (p[2] - '0'));
			p += 3;
		}
		if (k + 1 >= cap)
			return -1;
		out[k++] = ch;
	}
	if (!k)
		return -1;
	out[k] = '\0';
	return 0;
}

unsigned long cb_confine_remount_flags(unsigned long f_flag)
{
#ifdef __linux__
	static const struct {
		unsigned long st, ms;
	} keep[] = {
		{ ST_NOSUID, MS_NOSUID }, { ST_NODEV, MS_NODEV }, { ST_NOEXEC, MS_NOEXEC },
		{ ST_NOATIME, MS_NOATIME }, { ST_NODIRATIME, MS_NODIRATIME }, { ST_RELATIME, MS_RELATIME },
	};
	unsigned long ms = MS_BIND | MS_REMOUNT | MS_RDONLY;
	size_t i;

	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (f_flag & keep[i].st)
			ms |= keep[i].ms;
	return ms;
#else
	(void)f_flag;
	return 0;
#endif
}

int cb_confine_self(int code, size_t n, struct cb_err *err)
{
#ifdef __linux__
	if (code == CB_CONFINE_NS)
		return namespace_self(n, err);
#endif
	return landlock_self(code, n, err);
}
