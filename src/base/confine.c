/* confine.c: Landlock through its system calls (no library): the ABI the
 * kernel offers, and a ruleset that leaves a process only the folders it
 * may write (confine.h). */
#ifdef __linux__
#define _GNU_SOURCE
#endif
#include "confine.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

void cb_confine_probe(int off, struct cb_confine *c)
{
	memset(c, 0, sizeof(*c));
	if (off) {
		snprintf(c->why, sizeof(c->why), "--no-confinement");
		return;
	}
#if CB_HAVE_LANDLOCK
	c->abi = kernel_abi(c->why, sizeof(c->why));
#else
	snprintf(c->why, sizeof(c->why), "Landlock is a Linux mechanism, and caliber was built without it");
#endif
}

void cb_confine_describe(const struct cb_confine *c, char *out, size_t cap)
{
	if (c->abi > 0)
		snprintf(out, cap, "confined (landlock ABI %d)", c->abi);
	else
		snprintf(out, cap, "not confined: %s", c->why);
}

int cb_confine_self(int abi, size_t n, struct cb_err *err)
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
