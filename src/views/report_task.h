/* report_task.h: one task's section of the HTML report (report_task.c). */
#ifndef CB_REPORT_TASK_H
#define CB_REPORT_TASK_H

#include "base/buf.h"
#include "report.h"

/* The <details> section of task t: verdict and reason, topology per cell,
 * each order's rows with their samples, and links to the task's files. */
void cb_report_task_html(struct cb_buf *b, const struct cb_report *rp, const struct cb_report_task *t);

#endif
