/* preflight_int.h: what preflight.c and preflight_device.c share and
 * nothing else includes: running a command in a cell or through the
 * backend, trimming its output, and the checks of the device and the
 * targets that preflight.c's table lists. */
#ifndef CB_PREFLIGHT_INT_H
#define CB_PREFLIGHT_INT_H

#include "base/buf.h"
#include "campaign/manifest.h"
#include "preflight.h"

/* preflight.c */
char *preflight_chomp(char *s);
int preflight_capture_in_cell(struct cb_preflight *pf, const struct cb_cell *cell, const char *const argv[],
		    long long timeout_ms, char **out, struct cb_err *err);
int preflight_backend_command(struct cb_preflight *pf, const char *const *cmd, long long timeout_ms, char **out,
		    struct cb_err *err);
const char *preflight_first_line(char *list);

/* preflight_device.c */
int preflight_check_device_count(struct cb_preflight *pf, struct cb_buf *ok, struct cb_err *err);
int preflight_check_targets(struct cb_preflight *pf, struct cb_buf *ok, struct cb_err *err);
int preflight_check_device_idle(struct cb_preflight *pf, struct cb_buf *ok, struct cb_err *err);

#endif
