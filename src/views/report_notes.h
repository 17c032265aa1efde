/* report_notes.h: the parts of the text and Markdown report (report.h)
 * below its table of tasks, and the escapes and wrapping they share with
 * the table (report_text.c). Used by report_text.c and report_notes.c. */
#ifndef CB_REPORT_NOTES_H
#define CB_REPORT_NOTES_H

#include <stddef.h>

#include "base/buf.h"
#include "report.h"

/* Text lines stay within this many columns where the words allow. */
enum { CB_REPORT_TEXT_WIDTH = 80 };

/* Receipt text s appended to b: newlines flattened; for Markdown (md) also
 * the characters that would start markup or HTML escaped. */
void cb_report_put_text(struct cb_buf *b, const char *s, int md);

/* Receipt text appended word by word, wrapping before CB_REPORT_TEXT_WIDTH:
 * col is the column the first word starts at, continuation lines are
 * indented by indent blanks. Newlines in the text are blanks. */
void cb_report_put_wrapped(struct cb_buf *b, size_t col, const char *s, size_t indent);

/* Below the reasons, each only when it has something to say: the clocks
 * of every timed cell, where the topology changed (the run's diff), the
 * median of every row per cell, and where the wall time went. */
void cb_report_put_clocks(struct cb_buf *b, const struct cb_report *rp, int md);
void cb_report_put_where(struct cb_buf *b, const struct cb_report *rp, int md);
void cb_report_put_times(struct cb_buf *b, const struct cb_report *rp, int md);
void cb_report_put_walls(struct cb_buf *b, const struct cb_report *rp, int md);

#endif
