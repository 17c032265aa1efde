/* confine.h: what a worker may write (docs/security.md). Where the kernel
 * has Landlock (Linux 5.13+), each worker and everything it starts may
 * write only the folders the runner names (its cell's slot, its private
 * folder of caches, HOME, working directory and TMPDIR), /dev and /proc
 * (CUDA names its threads there); reading
 * stays allowed. The runner asks once whether the kernel can (cb_confine_probe)
 * and the lifeline wrapper, in the child between fork and exec, restricts
 * itself (cb_confine_self). Elsewhere workers run unconfined, and every
 * receipt that says how workers ran says so. */
#ifndef CB_CONFINE_H
#define CB_CONFINE_H

#include <stddef.h>

#include "caliber.h"

/* How a run's workers are confined, as decided before its preflights. */
struct cb_confine {
	int abi;          /* the Landlock ABI workers are confined with; 0: not confined */
	char why[160];    /* abi 0: why not ("--no-confinement", "this kernel has no Landlock: ...") */
};

/* Decide how workers are confined: with Landlock where the kernel offers
 * it (and off is 0), else not, saying why. */
void cb_confine_probe(int off, struct cb_confine *c);

/* "confined (landlock ABI 7)" or "not confined: WHY": how the preflight
 * line, run.json and the report name it. */
void cb_confine_describe(const struct cb_confine *c, char *out, size_t cap);

/* The first descriptor at which a confined child finds the folders it
 * may write (opened by the runner, so that a folder moved between the
 * spawn and the wrapper's start is still the one meant). */
#define CB_CONFINE_FD0 4

/* Restrict the calling process, and whatever it starts from now on, to
 * writing beneath the n folders open at descriptors CB_CONFINE_FD0... (and
 * /dev and /proc), with Landlock ABI abi or the kernel's, whichever is lower; sets
 * no_new_privs as Landlock requires, and closes those descriptors. For the
 * lifeline wrapper, before exec. */
int cb_confine_self(int abi, size_t n, struct cb_err *err);

#endif
