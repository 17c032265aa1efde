/* report_svg.h: the report's two plots as inline SVG (report_svg.c). */
#ifndef CB_REPORT_SVG_H
#define CB_REPORT_SVG_H

#include "base/buf.h"
#include "report.h"

/* The topology plot and the forest of speedups with their intervals, side
 * by side with their rows aligned, and a caption. */
void cb_report_plots(struct cb_buf *b, const struct cb_report *rp);

#endif
