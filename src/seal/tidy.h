/* tidy.h: what workers and killed calibers leave behind (issue 14).
 *
 * A seal holds regular files and folders only, under names a SHA256SUMS line
 * can hold, readable by their owner, and never a temporary file of a write
 * that was cut short. A worker can leave anything in its cell folder, and a
 * caliber killed mid-write leaves its temporary files; cb_tidy_tree takes
 * out what a seal cannot hold, when a cell ends and when a run resumes, and
 * says what it did, so that a campaign can always be sealed. A scratch
 * folder is locked by the caliber that made it while that caliber lives,
 * so that a later caliber removes only what a dead one left. */
#ifndef CB_TIDY_H
#define CB_TIDY_H

#include <jansson.h>

#include "caliber.h"

/* Whether name is one of caliber's temporary names, "<name>.tmp.XXXXXX"
 * with mkstemp's six letters or digits: a write or a folder that an
 * interrupted caliber did not finish. */
int cb_is_temp_name(const char *name);

/* Make the tree at dir hold only what a seal can: every symlink, FIFO,
 * socket or device node, every entry whose name has a backslash or a
 * newline, and every entry with a temporary name (cb_is_temp_name) is
 * removed; a file its owner cannot read, or a folder its owner cannot
 * list, gets that permission back. dir itself, when it is not a folder
 * (a link, a FIFO), is replaced by an empty folder; a dir that does not
 * exist is left so. Each change is appended to changes, a JSON array, as
 * "<path relative to dir>: <what it was>, <what was done>". Returns -1 only
 * when the tree cannot be read or changed. */
int cb_tidy_tree(const char *dir, json_t *changes, struct cb_err *err);

/* Make dir, the folder of a cell about to start, an empty folder: nothing
 * of the cell exists yet, so whatever is in it was put there by someone
 * else (a worker of another cell planting a link at this cell's worker.log
 * or forging its outputs). dir itself, when it is not a folder, is
 * replaced by an empty one; every entry in it is removed. Each change is
 * appended to changes as "<name>: <what it was>, removed before the cell
 * started". A dir that does not exist is made. */
int cb_tidy_fresh(const char *dir, json_t *changes, struct cb_err *err);

/* mkdtemp(template) and a lock on the new folder held through *lock_fd
 * (close-on-exec, so that children do not hold it) for as long as the
 * caller lives or keeps the descriptor open. */
int cb_mkdtemp_locked(char *template, int *lock_fd, struct cb_err *err);

/* Remove the folder at path when it is a real folder (not a link) whose
 * last component is "<prefix>XXXXXX" (a cb_mkdtemp_locked name) and
 * nobody holds its lock: what a caliber that died left. Returns 1 when it
 * was removed, 0 when left (not there, not such a folder, or locked), -1
 * on failure. */
int cb_remove_if_abandoned(const char *path, const char *prefix, struct cb_err *err);

/* Remove the abandoned siblings "<path>.tmp.XXXXXX" of path (see
 * cb_remove_if_abandoned): the half-built copies of path that a killed
 * caliber left beside it. */
int cb_remove_abandoned_temps(const char *path, struct cb_err *err);

/* What --resume tidies in the run root before it goes on: the tree (see
 * cb_tidy_tree: temporary files of writes an earlier caliber did not
 * finish, and whatever a worker left that a seal cannot hold), and the
 * scratch folders that earlier invocations recorded in run.json
 * ("scratch") and that no living caliber holds. Changes are appended to
 * changes, each scratch folder removed as "<path>: the scratch folder of an
 * earlier caliber, removed". */
int cb_tidy_resume(const char *root, const char *scratch_prefix, json_t *changes, struct cb_err *err);

#endif
