/* devices.h: `caliber run --devices LIST` (docs/design.md section 16): one shard per
 * listed device of this host, in parallel, each a `caliber run --shard
 * K/N --device D` of its own (a child process of this caliber, pinned
 * through the backend's visibility variable and preflighted on its own
 * device), merged into --output-root at the end. */
#ifndef CB_DEVICES_H
#define CB_DEVICES_H

#include "caliber.h"
#include "runner.h"

/* Run o's campaign over the devices of list ("0,1,2,3": visibility
 * values, each once): every shard's preflights first, all in parallel (one
 * refused: exit 3, nothing written); then the shards, in parallel, into
 * <output>.shards/<K>, their output shown line by line under "shard K/N";
 * then the merge into o->output. With o->resume, shards that exist resume
 * and a merged root that exists is done. Returns the exit status as
 * cb_run does (4 when a shard stopped at its deadline). */
int cb_run_devices(const struct cb_run_opts *o, const char *list, struct cb_err *err);

#endif
