/* runner_note.c: what the runner says as it goes (runner_note), below the
 * task loop and the run root's steps that all speak through it. */
#include <stdarg.h>
#include <stdio.h>

#include <jansson.h>

#include "base/jsonio.h"
#include "runner_int.h"

/* A line for the user: the event itself with --json-progress (nothing else
 * is written to stdout then), else the text; nothing with --quiet, which
 * prints only errors and the closing verdict line (cb_run_verdicts). */
void runner_note(const struct runner *rn, json_t *event, const char *fmt, ...)
{
	va_list ap;

	if (rn->progress == PROGRESS_JSON) {
		cb_json_print_line(stdout, event);
	} else if (rn->progress == PROGRESS_QUIET) {
		json_decref(event);
	} else {
		json_decref(event);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	fflush(stdout);
}
