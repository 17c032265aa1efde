/* fsutil.h: files and paths, the way caliber needs them (atomic, no surprises). */
#ifndef CB_FSUTIL_H
#define CB_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "caliber.h"

/* Open an input for reading: it must be a regular file (links to one are
 * followed). A FIFO, a device or a folder is refused at once, named by its
 * kind, never waited on. *fd is the caller's to close; *size (may be NULL)
 * gets the file's size. */
int cb_open_input(const char *path, int *fd, off_t *size, struct cb_err *err);

/* Read a whole input (cb_open_input) into a NUL-terminated buffer (*len
 * excludes the NUL). */
int cb_read_file(const char *path, char **buf, size_t *len, struct cb_err *err);

/* "a FIFO", "a symlink", "a regular file", ...: what mode is, for messages. */
const char *cb_file_kind(mode_t mode);

/* Write data to path atomically: a temporary file in the same directory,
 * fsync, chmod to mode, rename over path, fsync of the directory. A reader
 * sees the old file or the whole new one, never a part. Refuses to replace
 * anything but a regular file. */
int cb_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
		    struct cb_err *err);

/* fsync a directory, so that a rename or create inside it is durable. */
int cb_fsync_dir(const char *dir, struct cb_err *err);

/* Walk path (absolute, or relative to the current directory) down from
 * "/" with file descriptors, as mkdir -p does: the components that exist
 * are entered as the kernel enters them (links followed); with create, the
 * first missing one and everything after it is made with mkdirat and
 * entered with O_NOFOLLOW, so that a link met there is refused, never
 * followed. Without create nothing is made: *missing (may be NULL) counts
 * the components below the deepest folder reached that are missing (".."
 * after a missing one cancels it; 0 when path is reached whole), and the
 * walk stops at the first component it cannot enter. *fd gets that folder
 * (the caller closes it); *reached (may be NULL; the caller frees it) the
 * path by which it was reached, links not resolved. A component longer
 * than NAME_MAX is refused, naming the limit. */
int cb_dir_open(const char *path, int create, mode_t mode, int *fd, size_t *missing, char **reached,
		struct cb_err *err);

/* Call visit(fd, st, level, ctx) for the folder fd (level 0, borrowed) and
 * for each folder above it in turn ("..", as the kernel climbs it: out of
 * a bind mount to where it is mounted), up to "/" or a folder whose parent
 * cannot be opened. Stops when visit returns non-zero and returns that
 * (-1: visit filled err); 0 when every folder was visited. */
struct stat;
int cb_dir_climb(int fd, int (*visit)(int fd, const struct stat *st, size_t level, void *ctx), void *ctx,
		 struct cb_err *err);

/* mkdir -p through cb_dir_open: no link is followed in the part it makes. */
int cb_mkdir_p(const char *path, mode_t mode, struct cb_err *err);

/* rm -rf that never follows symlinks; restores write permission on the way
 * (sealed trees are read-only). Missing path is not an error. */
int cb_rm_rf(const char *path, struct cb_err *err);

/* "a/b" from "a" and "b"; returns NULL only when out of memory. */
char *cb_path_join(const char *a, const char *b);

/* printf into a fresh string (caller frees); NULL only when out of memory. */
char *cb_strdupf(const char *fmt, ...) CB_PRINTF(1, 2);

int cb_is_dir(const char *path);
int cb_exists(const char *path);   /* lstat succeeds: links count, dangling too */
/* cb_exists of dir/name (0 when out of memory). */
int cb_exists_in(const char *dir, const char *name);

/* The absolute form of path, lexically: the current directory put in
 * front of a relative path, then empty and "." components and trailing
 * slashes dropped. ".." stays as it is, so the kernel resolves the result
 * exactly as it resolved path (the current directory is a physical path).
 * Refuses an empty path and one of PATH_MAX bytes or more, and says so. */
int cb_absolute(const char *path, char **out, struct cb_err *err);

/* Whether the absolute path names the file system's root once resolved
 * (cb_resolve): "/", "/..", "/tmp/../..", a link to "/" (a compiler root
 * there would have every file digested). 0 for a relative path. */
int cb_is_fs_root(const char *path);

/* Absolute, symlink-free form of path even when its tail does not exist
 * yet: the longest existing prefix is resolved with realpath() and the rest
 * appended after removing "." and ".." lexically. NULL when out of memory
 * (errno ENOMEM) or when the result would be PATH_MAX bytes or longer
 * (errno ENAMETOOLONG; never cut). A
 * string says where a path points, not whether writing there is safe: the
 * output guard (guard.h) decides that. */
char *cb_resolve(const char *path);

/* The longest prefix of the absolute path that exists (lstat), "/" at
 * worst; caller frees. NULL only when out of memory. */
char *cb_existing_ancestor(const char *path);

/* Whether resolved path `inner` is `outer` itself or lies below it. Both must
 * already be resolved (cb_resolve). */
int cb_path_within(const char *inner, const char *outer);

/* Directory entries of dir, sorted bytewise, without "." and "..". */
int cb_list_dir(const char *dir, char ***names, size_t *n, struct cb_err *err);
void cb_strv_free(char **v, size_t n);

#endif
