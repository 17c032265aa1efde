/* confine.h: what a worker may write (docs/security.md). Each worker and
 * everything it starts may write only the folders the runner names (its
 * cell's slot, its private folder of caches, HOME, working directory and
 * TMPDIR), /dev and /proc (CUDA names its threads there); reading
 * stays allowed. Two kernel mechanisms do it:
 * Landlock (Linux 5.13+), and where the kernel has none, a mount namespace
 * of the worker's own in which every other mount is read-only. The runner
 * asks once which the machine offers (cb_confine_probe) and the lifeline
 * wrapper, in the child between fork and exec, restricts itself
 * (cb_confine_self). Elsewhere workers run unconfined, and every receipt
 * that says how workers ran says so. */
#ifndef CB_CONFINE_H
#define CB_CONFINE_H

#include <stddef.h>

#include "caliber.h"

/* How workers are confined: what --confinement asks for (AUTO: the first
 * of Landlock and a mount namespace that the machine offers, else OFF),
 * and, once probed, what they get. */
enum cb_confine_mode {
	CB_CONFINE_AUTO,
	CB_CONFINE_LANDLOCK,
	CB_CONFINE_NAMESPACE,
	CB_CONFINE_OFF
};

/* How a run's workers are confined, as decided before its preflights. */
struct cb_confine {
	enum cb_confine_mode mode; /* LANDLOCK, NAMESPACE or OFF */
	int abi;                   /* LANDLOCK: the ABI workers are confined with; else 0 */
	int unavailable;           /* the mode --confinement named is not on this machine: a refusal (why) */
	char why[448];             /* OFF: why not ("--no-confinement", "this kernel has no Landlock: ...") */
};

/* The mode --confinement names (auto, landlock, namespace, off); -1 for
 * any other word. */
int cb_confine_mode_parse(const char *word);

/* Decide how workers are confined when want is asked for: AUTO takes
 * Landlock where the kernel offers it, else a mount namespace where a
 * child can make one (it tries, as the wrapper will), else OFF saying
 * why; LANDLOCK and NAMESPACE take that mode or, where it is missing,
 * OFF with unavailable set and why naming the mode and the reason. */
void cb_confine_probe(enum cb_confine_mode want, struct cb_confine *c);

/* "confined (landlock ABI 7)", "confined (mount namespace)" or "not
 * confined: WHY": how the preflight line, run.json and the report name it,
 * in at most CB_CONFINE_HOW_MAX bytes. */
#define CB_CONFINE_HOW_MAX 480
void cb_confine_describe(const struct cb_confine *c, char *out, size_t cap);

/* The word run.json records the mode by ("landlock", "namespace", "off"). */
const char *cb_confine_mode_name(enum cb_confine_mode mode);

/* How the lifeline wrapper is told to confine (one integer, its argument
 * ABI): a Landlock ABI above 0, CB_CONFINE_NS for a mount namespace, 0
 * for not at all. cb_confine_code gives it for c. */
#define CB_CONFINE_NS (-1)
int cb_confine_code(const struct cb_confine *c);

/* The first descriptor at which a confined child finds the folders it
 * may write (opened by the runner, so that a folder moved between the
 * spawn and the wrapper's start is still the one meant). */
#define CB_CONFINE_FD0 4

/* Restrict the calling process, and whatever it starts from now on, to
 * writing beneath the n folders open at descriptors CB_CONFINE_FD0... (and
 * /dev and /proc), as code says (cb_confine_code, not 0): with Landlock ABI code or
 * the kernel's, whichever is lower, or in a mount namespace of its own.
 * Sets no_new_privs, and closes those descriptors. For the lifeline
 * wrapper, before exec. */
int cb_confine_self(int code, size_t n, struct cb_err *err);

/* The mount point of a line of /proc/self/mountinfo (its fifth field,
 * with the kernel's octal escapes of space, tab, newline and backslash
 * decoded) into out; -1 when the line has no such field or it does not
 * fit cap. */
int cb_confine_mountinfo_point(const char *line, char *out, size_t cap);

/* The mount(2) flags that remount a mount read-only where statvfs gives
 * it the flags f_flag: a bind remount keeping the flags that stay locked
 * on it (nosuid, nodev, noexec and its atime flags), which a remount must
 * repeat, since a remount without them clears them or, where they are
 * locked, is refused. */
unsigned long cb_confine_remount_flags(unsigned long f_flag);

#endif
