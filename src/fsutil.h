/* fsutil.h: files and paths, the way caliber needs them (atomic, no surprises). */
#ifndef CB_FSUTIL_H
#define CB_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "caliber.h"

/* Read a whole file into a NUL-terminated buffer (*len excludes the NUL). */
int cb_read_file(const char *path, char **buf, size_t *len, struct cb_err *err);

/* Write data to path atomically: a temporary file in the same directory,
 * fsync, chmod to mode, rename over path, fsync of the directory. A reader
 * sees the old file or the whole new one, never a part. Refuses to replace
 * anything but a regular file. */
int cb_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
		    struct cb_err *err);

/* fsync a directory, so that a rename or create inside it is durable. */
int cb_fsync_dir(const char *dir, struct cb_err *err);

/* mkdir -p. */
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

/* The absolute form of path, lexically: the current directory put in
 * front of a relative path, then empty and "." components and trailing
 * slashes dropped. ".." stays as it is, so the kernel resolves the result
 * exactly as it resolved path (the current directory is a physical path).
 * Refuses an empty path and one of PATH_MAX bytes or more, and says so. */
int cb_absolute(const char *path, char **out, struct cb_err *err);

/* Absolute, symlink-free form of path even when its tail does not exist
 * yet: the longest existing prefix is resolved with realpath() and the rest
 * appended after removing "." and ".." lexically. */
char *cb_resolve(const char *path);

/* The longest prefix of the absolute path that exists (lstat), "/" at
 * worst; caller frees. NULL only when out of memory. */
char *cb_existing_ancestor(const char *path);

/* mkdir -p of the folder that holds path (its parent). */
int cb_mkdir_parent(const char *path, mode_t mode, struct cb_err *err);

/* Whether resolved path `inner` is `outer` itself or lies below it. Both must
 * already be resolved (cb_resolve). */
int cb_path_within(const char *inner, const char *outer);

/* Directory entries of dir, sorted bytewise, without "." and "..". */
int cb_list_dir(const char *dir, char ***names, size_t *n, struct cb_err *err);
void cb_strv_free(char **v, size_t n);

#endif
