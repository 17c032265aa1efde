/* html.h: the HTML primitives of the report's page (html.c). */
#ifndef CB_HTML_H
#define CB_HTML_H

#include "base/buf.h"

/* Text and attribute values with every character HTML gives a meaning
 * escaped. */
void cb_html_esc(struct cb_buf *b, const char *s);

/* A relative URL path: unreserved characters and '/' kept, the rest
 * percent-encoded (so it needs no HTML escape either). */
void cb_html_url(struct cb_buf *b, const char *s);

/* A link to rel under the folder dir is seen from the page as (href), or
 * the plain text when there is no such file. */
void cb_html_link(struct cb_buf *b, const char *dir, const char *href, const char *rel, const char *text);

/* A verdict letter as a coloured badge (its colours are in the page's
 * style, report_html.c). */
void cb_html_badge(struct cb_buf *b, char v);

#endif
