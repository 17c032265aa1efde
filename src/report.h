/* report.h: what `caliber report` shares with other commands. */
#ifndef CB_REPORT_H
#define CB_REPORT_H

#include "caliber.h"

/* Parse a --fail-on list such as "K,R,X" (letters, with commas or blanks
 * between them) into set, a NUL-terminated string of verdict letters; run
 * and report gate on it the same way. */
int cb_fail_on_parse(const char *s, char set[8], struct cb_err *err);

#endif
