/* report_text.c: the report as text for a terminal and as Markdown for a
 * pull request: the same table of tasks, then the reasons (report.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account/aa.h"
#include "account/classify.h"
#include "base/jsonio.h"
#include "report.h"
#include "report_notes.h"

/* ------------------------------------------------------------------ */
/* Text and Markdown: the same table                                   */

/* The width of the widest percentage of any timed order, without its %. */
static int number_width(const struct cb_report *rp)
{
	size_t i, k;
	int o, w = 0;

	for (i = 0; i < rp->n; i++)
		for (o = 0; o < CB_NORDERS; o++) {
			const struct cb_task_result *r = &rp->t[i].sealed;
			long long v[3] = { r->speedup_ppm[o], r->lo_ppm[o], r->hi_ppm[o] };
			for (k = 0; r->present[o] && k < 3; k++) {
				char p[32];
				cb_fmt_pct(v[k], p, sizeof(p));
				if ((int)strlen(p) - 1 > w)
					w = (int)strlen(p) - 1;
			}
		}
	return w;
}

/* The most columns a task table has (Markdown, derived: task, verdict,
 * topology, round a, round b, timer, times). */
enum { NCOL_MAX = 7 };

/* One line of the task table, cell by cell. */
struct row {
	char c[NCOL_MAX][192];
};

/* Round a's row medians of a task for a Markdown cell, one row per line
 * ("4096x4096x4096 927.86 / 928.21 / 220.43<br>..."), "—" when untimed. */
static void fmt_row_times(const struct cb_report_task *t, char *out, size_t cap)
{
	size_t i, len = 0;
	int r, n;

	snprintf(out, cap, "—");
	for (i = 0; i < t->ntimes[CB_ORDER_A]; i++) {
		const struct cb_report_row *row = &t->rows[CB_ORDER_A][i];
		n = snprintf(out + len, cap - len, "%s", i ? "<br>" : "");
		for (r = 0; n >= 0 && (size_t)n < cap - len && r < CB_NROLES; r++) {
			len += (size_t)n;
			if (row->cell[r].median_ns < 0)
				n = snprintf(out + len, cap - len, "%s-", r ? " / " : "");
			else
				n = snprintf(out + len, cap - len, "%s%.2f", r ? " / " : "", row->cell[r].median_ns / 1000.0);
		}
		if (n < 0 || (size_t)n >= cap - len)
			return;
		len += (size_t)n;
	}
}

/* The verdict cell: "G", or "G->B" where a derived run changed it (md:
 * "**G** stable-gain", "**G** → **B** no-reduction"). The text table
 * shows the letter alone to fit 80 columns: a letter's code is its only
 * one but for X (and B identical-binaries), whose codes the reasons give. */
static void fmt_verdict(const struct cb_report_task *t, int md, char *out, size_t cap)
{
	if (t->derived && t->dverdict != t->sealed.verdict)
		snprintf(out, cap, md ? "**%c** → **%c** %s" : "%c->%c", t->sealed.verdict, t->dverdict, t->dcode);
	else if (md)
		snprintf(out, cap, "**%c** %s", cb_report_verdict(t), cb_report_code(t));
	else
		snprintf(out, cap, "%c", cb_report_verdict(t));
}

/* Header and cells of the Markdown task table. In a derived run the
 * verdict and topology columns read "sealed → derived" where they
 * changed, so that a change stands out. Returns the number of rows
 * filled, the header included. */
static size_t table_rows_md(const struct cb_report *rp, struct row *rows)
{
	static const char *const head[NCOL_MAX] = { "task", "verdict", "topology b/c/k", "round a", "round b", "timer",
						    "round a µs b / c / k" };
	size_t i, k;

	for (k = 0; k < NCOL_MAX; k++)
		snprintf(rows[0].c[k], 192, "%s", head[k]);
	for (i = 0; i < rp->n; i++) {
		const struct cb_report_task *t = &rp->t[i];
		char (*c)[192] = rows[i + 1].c;

		snprintf(c[0], 192, "%s", t->sealed.id);
		fmt_verdict(t, 1, c[1], 192);
		cb_report_fmt_topology_col(t, 1, c[2], 192);
		cb_report_fmt_order(&t->sealed, CB_ORDER_A, 1, 0, c[3], 192);
		cb_report_fmt_order(&t->sealed, CB_ORDER_B, 1, 0, c[4], 192);
		cb_report_fmt_timer(&t->sealed, "—", c[5], 192);
		fmt_row_times(t, c[6], 192);
	}
	return rp->n + 1;
}

/* The columns of the text task table: one line per task and timed order
 * (round b under round a), so that it fits 80 columns. */
enum { TCOL_TASK, TCOL_VERDICT, TCOL_TOPO, TCOL_SPEEDUP, TCOL_TIMER, NTCOL };

/* Header and cells of the text task table; a task's round b line leaves
 * its first three columns empty. Returns the number of lines filled, the
 * header included (rows has room for 1 + 2 rp->n). */
static size_t table_rows_text(const struct cb_report *rp, struct row *rows)
{
	size_t i, n = 1;
	int w = number_width(rp), o;

	snprintf(rows[0].c[TCOL_TASK], 192, "task");
	snprintf(rows[0].c[TCOL_VERDICT], 192, "verdict");
	snprintf(rows[0].c[TCOL_TOPO], 192, "b/c/k");
	snprintf(rows[0].c[TCOL_SPEEDUP], 192, "round: speedup %% [interval]");
	snprintf(rows[0].c[TCOL_TIMER], 192, "timer");
	for (i = 0; i < rp->n; i++) {
		const struct cb_report_task *t = &rp->t[i];
		int shown = 0;

		for (o = 0; o < CB_NORDERS; o++) {
			char (*c)[192] = rows[n].c, fig[160];
			if (!t->sealed.present[o] && (o || t->sealed.present[CB_ORDER_B]))
				continue;
			memset(&rows[n], 0, sizeof(rows[n]));
			if (!shown++) {
				snprintf(c[TCOL_TASK], 192, "%s", t->sealed.id);
				fmt_verdict(t, 0, c[TCOL_VERDICT], 192);
				cb_report_fmt_topology_col(t, 0, c[TCOL_TOPO], 192);
			}
			cb_report_fmt_order(&t->sealed, o, 0, w, fig, sizeof(fig));
			if (t->sealed.present[o])
				snprintf(c[TCOL_SPEEDUP], 192, "%c %s", o ? 'b' : 'a', fig);
			else
				snprintf(c[TCOL_SPEEDUP], 192, "-");
			snprintf(c[TCOL_TIMER], 192, "%s", t->sealed.present[o] ? t->sealed.timer[o] : "-");
			n++;
		}
	}
	return n;
}

/* "G 5, C 0, B 27, R 0, K 0, X 0" (Markdown: letters in bold). */
static void put_counts(struct cb_buf *b, const struct cb_report *rp, int sealed, int md)
{
	const char *const order = CB_VERDICTS_READING, *v;

	for (v = order; *v; v++)
		cb_buf_addf(b, md ? "%s**%c** %zu" : "%s%c %zu", v == order ? "" : md ? " · " : ", ", *v,
			    cb_report_count_verdict(rp, *v, sealed));
}

/* "speedup, geometric mean over the timed orders: 32 tasks +26.81%; the
 * 5 G tasks +251.20%" (the G part only when there are G tasks). */
static void put_geomeans(struct cb_buf *b, const struct cb_report *rp, const char *item)
{
	size_t n, ng;
	long long all = cb_report_geomean_ppm(rp, 0, &n), g = cb_report_geomean_ppm(rp, 'G', &ng);
	char p[32];

	if (!n)
		return;
	cb_fmt_pct(all, p, sizeof(p));
	cb_buf_addf(b, "%sspeedup, geometric mean over the timed orders: %zu task%s %s", item, n, n == 1 ? "" : "s", p);
	if (ng) {
		cb_fmt_pct(g, p, sizeof(p));
		cb_buf_addf(b, "; the %zu G task%s %s", ng, ng == 1 ? "" : "s", p);
	}
	cb_buf_adds(b, "\n");
}

/* "what changed: 5 tasks lost converts, ..." (caliber diff's summary), or
 * why it is not shown. */
static void put_what_changed(struct cb_buf *b, const struct cb_report *rp, const char *item)
{
	struct cb_diff_summary s;

	if (!rp->diff) {
		cb_buf_addf(b, "%swhat changed: not compared, the seal does not hold\n", item);
		return;
	}
	cb_diff_summarize(rp->diff, &s);
	cb_buf_addf(b, "%swhat changed: %zu task%s lost converts, %zu gained: %zu removed, %zu added in %zu kernel%s at "
		       "%zu source line%s\n",
		    item, s.tasks_lost, s.tasks_lost == 1 ? "" : "s", s.tasks_gained, s.removed, s.added, s.kernels,
		    s.kernels == 1 ? "" : "s", s.lines, s.lines == 1 ? "" : "s");
}

/* "intervals: 95 % over 3 worker processes x 9 repeats, ...": what the
 * intervals resample. */
static void put_intervals(struct cb_buf *b, const struct cb_report *rp, const char *item, int md)
{
	char line[256];

	cb_report_fmt_intervals(rp, md, line, sizeof(line));
	cb_buf_addf(b, "%sintervals: ", item);
	if (md)
		cb_buf_adds(b, line);
	else
		cb_report_put_wrapped(b, strlen("intervals: "), line, 4);
	cb_buf_adds(b, "\n");
}

/* The A/A line: what identical code gave in this run (aa.h). */
static void put_aa(struct cb_buf *b, const struct cb_report *rp, const char *item)
{
	char line[CB_AA_LINE_MAX];

	cb_report_fmt_aa(rp, line, sizeof(line));
	cb_buf_addf(b, "%s%s\n", item, line);
}

/* The free A/A of identical binaries and how many tasks the pre-screen
 * left untimed, each on a line of its own when it applies. */
static void put_identity(struct cb_buf *b, const struct cb_report *rp, const char *item)
{
	char aa[256], screen[160];

	cb_report_fmt_identity(rp, aa, sizeof(aa), screen, sizeof(screen));
	if (aa[0])
		cb_buf_addf(b, "%sA/A (identical binaries): %s\n", item, aa);
	if (screen[0])
		cb_buf_addf(b, "%spre-screen on: %s\n", item, screen);
}

/* The lines above the table: campaign, seal, floor and thresholds, and
 * for a derived run what it re-accounted. */
static void put_summary_lines(struct cb_buf *b, const struct cb_report *rp, int md)
{
	const json_t *th = cb_report_thresholds(rp);
	char gain[32], reg[32], conf[32];
	const char *item = md ? "- " : "";

	cb_fmt_pct(cb_json_int(th, "gain_ppm", 0), gain, sizeof(gain));
	cb_fmt_pct(cb_json_int(th, "regression_ppm", 0), reg, sizeof(reg));
	cb_report_fmt_share(cb_json_int(th, "confidence_ppm", 0), conf, sizeof(conf));
	cb_buf_addf(b, "%sseal: ", item);
	cb_report_put_text(b, rp->seal, md);
	if (rp->workers) {
		cb_buf_addf(b, "\n%sworkers: ", item);
		cb_report_put_text(b, rp->workers, md);
	}
	cb_buf_addf(b, "\n%slaunch floor %lld; thresholds: gain %s, regression %s, confidence %s\n", item,
		    rp->v->cs.launch_floor, gain, reg, conf);
	if (rp->v->derived_dir) {
		const json_t *eq = json_object_get(rp->v->derived, "equivalence");
		cb_buf_addf(b, "%sderived run: floor %lld (sealed at floor %lld); equivalence %s at floor %lld\n"
			       "%s%lld of %zu tasks changed verdict; a change reads sealed%sderived\n",
			    item, rp->v->floor, rp->v->sealed_floor,
			    json_is_true(json_object_get(eq, "holds")) ? "holds" : "does not hold",
			    (long long)cb_json_int(eq, "checked_at_floor", rp->v->sealed_floor), item,
			    (long long)cb_json_int(rp->v->derived, "changed", 0), rp->n, md ? " → " : "->");
		cb_buf_addf(b, "%sverdicts, sealed: ", item);
		put_counts(b, rp, 1, md);
		cb_buf_addf(b, "\n%sverdicts, derived: ", item);
		put_counts(b, rp, 0, md);
	} else {
		cb_buf_addf(b, "%sverdicts: ", item);
		put_counts(b, rp, 1, md);
	}
	cb_buf_adds(b, "\n");
	put_intervals(b, rp, item, md);
	put_aa(b, rp, item);
	put_identity(b, rp, item);
	put_geomeans(b, rp, item);
	put_what_changed(b, rp, item);
}

/* Below the table: what changed and why (derived run), then the reason of
 * every verdict but B, whose reason is its topology column. */
static void put_reasons(struct cb_buf *b, const struct cb_report *rp, int md)
{
	size_t i, shown = 0;

	for (i = 0; rp->v->derived_dir && i < rp->n; i++) {
		const struct cb_report_task *t = &rp->t[i];
		char topo[160];

		if (!t->changed)
			continue;
		if (!shown++)
			cb_buf_addf(b, md ? "\n**Changed at floor %lld** (sealed at %lld):\n\n"
					  : "\nchanged at floor %lld (sealed at %lld):\n",
				    rp->v->floor, rp->v->sealed_floor);
		cb_report_fmt_topology_col(t, md, topo, sizeof(topo));
		if (md) {
			cb_buf_addf(b, "- %s: **%c** → **%c**, topology %s: ", t->sealed.id, t->sealed.verdict,
				    t->dverdict, topo);
			cb_report_put_text(b, t->dreason, md);
		} else {
			size_t at = b->len;
			cb_buf_addf(b, "  %s: %c -> %c, topology %s: ", t->sealed.id, t->sealed.verdict, t->dverdict, topo);
			cb_report_put_wrapped(b, b->len - at, t->dreason, 4);
		}
		cb_buf_adds(b, "\n");
	}
	shown = 0;
	for (i = 0; i < rp->n; i++) {
		const struct cb_report_task *t = &rp->t[i];

		if (cb_report_verdict(t) == 'B' && strcmp(cb_report_code(t), "no-reduction") == 0)
			continue;
		if (!shown++)
			cb_buf_adds(b, md ? "\n**Reasons**\n\n" : "\nreasons:\n");
		if (md) {
			cb_buf_addf(b, "- %s **%c**: ", t->sealed.id, cb_report_verdict(t));
			cb_report_put_text(b, cb_report_reason(t), md);
		} else {
			size_t at = b->len;
			cb_buf_addf(b, "  %s %c %s: ", t->sealed.id, cb_report_verdict(t), cb_report_code(t));
			cb_report_put_wrapped(b, b->len - at, cb_report_reason(t), 4);
		}
		cb_buf_adds(b, "\n");
	}
}

/* The task table as text, columns padded to their widest cell, two
 * blanks apart (caliber report, and the end of caliber demo). */
static void put_table_text(struct cb_buf *b, const struct cb_report *rp, struct row *rows)
{
	size_t n = table_rows_text(rp, rows), w[NTCOL] = { 0 }, i, c;

	for (i = 0; i < n; i++)
		for (c = 0; c < NTCOL; c++)
			if (strlen(rows[i].c[c]) > w[c])
				w[c] = strlen(rows[i].c[c]);
	for (i = 0; i < n; i++)
		for (c = 0; c < NTCOL; c++)
			if (c + 1 < NTCOL)
				cb_buf_addf(b, "%-*s  ", (int)w[c], rows[i].c[c]);
			else
				cb_buf_addf(b, "%s\n", rows[i].c[c]);
}

/* Rewrap, from byte at on, every line longer than CB_REPORT_TEXT_WIDTH at its
 * blanks, each continuation indented by 2 more than the line (4 at the
 * margin), as the renderers' own wrapping does: the lines
 * no renderer wrapped itself (the summary's). A line that is one word
 * after its indent (a path) is left whole. */
static void fit_width(struct cb_buf *b, size_t at)
{
	struct cb_buf out = CB_BUF_INIT;
	const char *p = b->data + at;
	char *line;

	while (*p) {
		size_t n = strcspn(p, "\n"), indent = strspn(p, " ");
		if (n > CB_REPORT_TEXT_WIDTH && memchr(p + indent, ' ', n - indent) && (line = strndup(p + indent, n - indent))) {
			cb_buf_addf(&out, "%*s", (int)indent, "");
			cb_report_put_wrapped(&out, indent, line, indent ? indent + 2 : 4);
			free(line);
		} else {
			cb_buf_add(&out, p, n);
		}
		p += n;
		if (*p == '\n') {
			cb_buf_adds(&out, "\n");
			p++;
		}
	}
	b->len = at;
	b->data[at] = '\0';
	if (out.data)
		cb_buf_adds(b, out.data);
	cb_buf_release(&out);
}

/* The text report: summary lines, the task table, then the reasons, where
 * the converts went, the times, clocks and wall times, within 80 columns. */
static void render_text(struct cb_buf *b, const struct cb_report *rp, struct row *rows)
{
	size_t at = b->len;

	cb_buf_addf(b, "caliber report: campaign %s (selection %s), %zu tasks\n", rp->v->cs.campaign,
		    rp->v->cs.selection, rp->n);
	put_summary_lines(b, rp, 0);
	cb_buf_adds(b, "\n");
	put_table_text(b, rp, rows);
	put_reasons(b, rp, 0);
	cb_report_put_where(b, rp, 0);
	cb_report_put_times(b, rp, 0);
	cb_report_put_clocks(b, rp, 0);
	cb_report_put_walls(b, rp, 0);
	fit_width(b, at);
}

/* The Markdown report: the same summary, table and reasons as text, as a
 * GitHub table (task ids escaped like receipt text). */
static void render_md(struct cb_buf *b, const struct cb_report *rp, struct row *rows)
{
	size_t ncol = NCOL_MAX, i, c;

	table_rows_md(rp, rows);
	cb_buf_addf(b, "### caliber report: `%s` (selection %s, %zu tasks)\n\n", rp->v->cs.campaign,
		    rp->v->cs.selection, rp->n);
	put_summary_lines(b, rp, 1);
	cb_buf_adds(b, "\n|");
	for (c = 0; c < ncol; c++)
		cb_buf_addf(b, " %s |", rows[0].c[c]);
	cb_buf_adds(b, "\n|");
	for (c = 0; c < ncol; c++)
		cb_buf_adds(b, "---|");
	cb_buf_adds(b, "\n");
	for (i = 1; i <= rp->n; i++) {
		cb_buf_adds(b, "|");
		for (c = 0; c < ncol; c++) {
			cb_buf_adds(b, " ");
			cb_report_put_text(b, rows[i].c[c], c == 0);
			cb_buf_adds(b, " |");
		}
		cb_buf_adds(b, "\n");
	}
	put_reasons(b, rp, 1);
	cb_report_put_where(b, rp, 1);
	cb_report_put_times(b, rp, 1);
	cb_report_put_clocks(b, rp, 1);
	cb_report_put_walls(b, rp, 1);
}


/* The rows of rp's table (a header and, in text, up to two per task), for
 * a renderer. */
static struct row *alloc_rows(const struct cb_report *rp, struct cb_err *err)
{
	struct row *rows = calloc(2 * rp->n + 1, sizeof(*rows));

	if (!rows)
		cb_fail(err, "out of memory");
	return rows;
}

/* Both render kernel names and source locations from the TTGIR a worker
 * wrote: control bytes in them are escaped (buf.h), as diff escapes them. */
int cb_report_text(struct cb_buf *b, const struct cb_report *rp, struct cb_err *err)
{
	struct row *rows = alloc_rows(rp, err);
	size_t from = b->len;

	if (!rows)
		return -1;
	render_text(b, rp, rows);
	cb_buf_escape_controls(b, from);
	free(rows);
	return 0;
}

int cb_report_md(struct cb_buf *b, const struct cb_report *rp, struct cb_err *err)
{
	struct row *rows = alloc_rows(rp, err);
	size_t from = b->len;

	if (!rows)
		return -1;
	render_md(b, rp, rows);
	cb_buf_escape_controls(b, from);
	free(rows);
	return 0;
}

int cb_report_table_text(struct cb_buf *b, const struct cb_report *rp, struct cb_err *err)
{
	struct row *rows = alloc_rows(rp, err);

	if (!rows)
		return -1;
	put_table_text(b, rp, rows);
	free(rows);
	return 0;
}
