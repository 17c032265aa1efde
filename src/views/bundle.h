/* bundle.h: `caliber report --bundle DIR`: the HTML report with every
 * receipt and TTGIR file it links, copied beside it, so that the folder
 * can be attached to a pull request or moved anywhere and every link
 * still opens. */
#ifndef CB_BUNDLE_H
#define CB_BUNDLE_H

#include <stddef.h>

#include "caliber.h"
#include "report.h"

/* The folders of a bundle that hold the run's files and the derived run's,
 * as the page links them: the loaded report's href and dhref are set to
 * these before the page is written. */
#define CB_BUNDLE_RUN "run"
#define CB_BUNDLE_DERIVED "derived"

/* Write the bundle into dir, which must not exist: html (the page, len
 * bytes, rendered from rp with its links pointing into CB_BUNDLE_RUN and
 * CB_BUNDLE_DERIVED) as dir/report.html, and each file it links copied to
 * the path the link names. It is built in a folder beside dir and renamed
 * when whole, so dir appears complete or not at all. *nfiles gets the
 * number of files copied. */
int cb_report_bundle(const struct cb_report *rp, const char *html, size_t len, const char *dir, size_t *nfiles,
		     struct cb_err *err);

#endif
