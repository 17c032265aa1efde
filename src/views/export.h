/* export.h: a sealed run as rows for other tools (`caliber export`), one
 * row per task, order, cell and benchmark row: the row's absolute times
 * (median, min, max and interquartile range in microseconds, every session
 * pooled), the task's speedup and interval and its A/A figures in percent,
 * the cell's topology, and the task's verdict and reason
 * (docs/formats.md, "Export"; docs/schema/export.schema.json).
 *
 * The export is a view, never a receipt: nothing hashes or seals it, so it
 * is the one JSON caliber writes with decimals. Every decimal is an exact
 * count of a small unit (0.1 ns for times, 1 ppm for percentages) written
 * in its shortest form, so the same run gives the same bytes. */
#ifndef CB_EXPORT_H
#define CB_EXPORT_H

#include <jansson.h>

#include "base/buf.h"
#include "caliber.h"
#include "account/runview.h"

#define CB_EXPORT_SCHEMA "caliber.export/1"

/* The export document of the run root v opened (runview.h): a run whose
 * seal does not hold is refused (err names the first difference), then
 * every task's rows are read from the sealed files. A new reference, or
 * NULL with err filled. */
json_t *cb_export_run(const struct cb_run_view *v, struct cb_err *err);

/* The document as JSON text (sorted keys, two-space indentation, a final
 * newline); NULL with err filled when out of memory. */
char *cb_export_json_text(const json_t *doc, struct cb_err *err);

/* The document's rows as RFC 4180 CSV (CRLF, a header row, the columns of
 * cb_export_columns in that order), appended to b. */
void cb_export_csv(struct cb_buf *b, const json_t *doc);

/* The columns of a row, in CSV order, NULL-terminated. */
extern const char *const cb_export_columns[];

#endif
