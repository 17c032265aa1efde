/* html.c: the HTML primitives every part of the report's page uses
 * (report_html.c, report_svg.c, report_task.c): escaping, links to files
 * of the run, verdict badges. */
#include "html.h"

#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"

/* Text and attribute values: every character HTML gives a meaning escaped. */
void cb_html_esc(struct cb_buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': cb_buf_adds(b, "&amp;"); break;
		case '<': cb_buf_adds(b, "&lt;"); break;
		case '>': cb_buf_adds(b, "&gt;"); break;
		case '"': cb_buf_adds(b, "&quot;"); break;
		case '\'': cb_buf_adds(b, "&#39;"); break;
		default: cb_buf_add(b, s, 1);
		}
	}
}

/* A relative URL path: unreserved characters and '/' kept, the rest
 * percent-encoded (so it needs no HTML escape either). */
void cb_html_url(struct cb_buf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    strchr("-._~/", ch))
			cb_buf_add(b, s, 1);
		else
			cb_buf_addf(b, "%%%02X", ch);
	}
}

/* <a href="PREFIX/rel">text</a> for a file of the run, when it exists. */
void cb_html_link(struct cb_buf *b, const char *dir, const char *href, const char *rel, const char *text)
{
	char *p = cb_path_join(dir, rel);

	if (p && cb_exists(p)) {
		cb_buf_adds(b, "<a href=\"");
		cb_html_url(b, href);
		cb_buf_adds(b, "/");
		cb_html_url(b, rel);
		cb_buf_adds(b, "\">");
		cb_html_esc(b, text);
		cb_buf_adds(b, "</a>");
	} else {
		cb_buf_adds(b, "<span class=\"muted\">");
		cb_html_esc(b, text);
		cb_buf_adds(b, " (absent)</span>");
	}
	free(p);
}

/* A verdict letter on its colour. */
void cb_html_badge(struct cb_buf *b, char v)
{
	cb_buf_addf(b, "<span class=\"badge v-%c\">%c</span>", v, v);
}
