/* guard.h: the output guard, the one check every command that writes makes
 * before it writes (prepare, run, worker, reaccount, report, inventory,
 * demo, and the commands to come): a sealed run is never written to.
 *
 * A target is judged by the folders it would land in, not by its string:
 * the path is walked down with file descriptors (cb_dir_open), and from the
 * deepest folder it reaches the guard climbs "..", comparing each folder by
 * device and inode with the folders of the run root the command reads, and
 * looking in each for a seal (SHA256SUMS and campaign.json, regular files).
 * A link, a bind mount (of the run or of one of its folders) or a ".."
 * that leads into the run is caught like the plain path; so is a link or
 * ".." into any sealed run, and a bind mount of a sealed run's root (a
 * bind mount of a folder inside another sealed run holds no seal and
 * climbs out of it: only the run a command reads is walked whole). Folders
 * are made with cb_dir_open (no link followed in the part it makes), and
 * the check is made again on the folder made. */
#ifndef CB_GUARD_H
#define CB_GUARD_H

#include <sys/types.h>

#include "caliber.h"

/* What a command protects besides every sealed run, and how its messages
 * name the target. Zeroed: a target named by its path alone, no run root
 * read. */
struct cb_guard {
	const char *what;   /* the option that named the target ("--output"), or NULL */
	const char *run;    /* a run root the command reads, refused as a target even
			     * unsealed (NULL: none) */
	const char *why;    /* said when the target lies in run, e.g. "a derived run is
			     * always written outside it" */
};

/* Whether path (a folder or a file, existing or not) may be written: it is
 * refused when it lies in a sealed run or in g->run, when it is a file with
 * other names (a hard link: writing it, in place or by rename, would reach
 * or cut off a name that may lie in a sealed run), and when it is PATH_MAX
 * bytes or longer or holds a name longer than NAME_MAX; the message names
 * the path, the run and the limit. */
int cb_guard_check(const struct cb_guard *g, const char *path, struct cb_err *err);

/* cb_guard_check, mkdir -p of dir (cb_dir_open: no link followed in what it
 * makes), and the check again on the folder made (against g->run's root
 * and every sealed run above it: the run is not walked a second time). */
int cb_guard_mkdir(const struct cb_guard *g, const char *dir, mode_t mode, struct cb_err *err);

/* cb_guard_check of file, then cb_guard_mkdir of the folder that holds it. */
int cb_guard_mkdir_parent(const struct cb_guard *g, const char *file, mode_t mode, struct cb_err *err);

#endif
