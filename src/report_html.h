/* report_html.h: what the HTML renderer's files share (report_html.c,
 * report_svg.c, report_task.c). */
#ifndef CB_REPORT_HTML_H
#define CB_REPORT_HTML_H

#include "buf.h"
#include "report.h"

/* Text and attribute values with every character HTML gives a meaning
 * escaped. */
void cb_html_esc(struct cb_buf *b, const char *s);

/* A link to rel under the folder dir is seen from the page as (href), or
 * the plain text when there is no such file. */
void cb_html_link(struct cb_buf *b, const char *dir, const char *href, const char *rel, const char *text);

/* A verdict letter as a coloured badge. */
void cb_html_badge(struct cb_buf *b, char v);

/* The two plots (report_svg.c) and one task's section (report_task.c). */
void cb_report_plots(struct cb_buf *b, const struct cb_report *rp);
void cb_report_task_html(struct cb_buf *b, const struct cb_report *rp, const struct cb_report_task *t);

#endif
