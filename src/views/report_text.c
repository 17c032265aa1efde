/* report_text.c: the report as text for a terminal and as Markdown for a
 * pull request: the same table of tasks, then the reasons (report.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account/aa.h"
#include "account/classify.h"
#include "base/jsonio.h"
#include "report.h"

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

/* Whether two strings, either NULL, are equal. */
static int same_text(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Text and Markdown escapes of receipt text: newlines flattened; for
 * Markdown also the characters that would start markup or HTML. */
static void put_text(struct cb_buf *b, const char *s, int md)
{
	for (; *s; s++) {
		if (*s == '\n' || *s == '\r')
			cb_buf_adds(b, " ");
		else if (md && strchr("\\|`*", *s))
			cb_buf_addf(b, "\\%c", *s);
		else if (md && *s == '<')
			cb_buf_adds(b, "&lt;");
		else if (md && *s == '&')
			cb_buf_adds(b, "&amp;");
		else
			cb_buf_add(b, s, 1);
	}
}

/* Text lines stay within this many columns where the words allow. */
enum { TEXT_WIDTH = 80 };

/* Append receipt text word by word, wrapping before TEXT_WIDTH: col is the
 * column the first word starts at, continuation lines are indented by
 * indent blanks. Newlines in the text are blanks. */
static void put_wrapped(struct cb_buf *b, size_t col, const char *s, size_t indent)
{
	int first = 1;

	for (;;) {
		size_t n;

		s += strspn(s, " \t\r\n");
		if (!*s)
			break;
		n = strcspn(s, " \t\r\n");
		if (!first && col + 1 + n > TEXT_WIDTH) {
			cb_buf_addf(b, "\n%*s", (int)indent, "");
			col = indent;
		} else if (!first) {
			cb_buf_adds(b, " ");
			col++;
		}
		cb_buf_add(b, s, n);
		col += n;
		s += n;
		first = 0;
	}
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
		put_wrapped(b, strlen("intervals: "), line, 4);
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
	put_text(b, rp->seal, md);
	if (rp->workers) {
		cb_buf_addf(b, "\n%sworkers: ", item);
		put_text(b, rp->workers, md);
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
			put_text(b, t->dreason, md);
		} else {
			size_t at = b->len;
			cb_buf_addf(b, "  %s: %c -> %c, topology %s: ", t->sealed.id, t->sealed.verdict, t->dverdict, topo);
			put_wrapped(b, b->len - at, t->dreason, 4);
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
			put_text(b, cb_report_reason(t), md);
		} else {
			size_t at = b->len;
			cb_buf_addf(b, "  %s %c %s: ", t->sealed.id, cb_report_verdict(t), cb_report_code(t));
			put_wrapped(b, b->len - at, cb_report_reason(t), 4);
		}
		cb_buf_adds(b, "\n");
	}
}

/* One cell's clocks in one order: "1965-1980" MHz, "1980" when steady,
 * "?" when unknown; with ", k throttled" when rows were left out. */
static void fmt_cell_clocks(const struct cb_report_clocks *c, char *out, size_t cap)
{
	int n;

	if (!c->known)
		n = snprintf(out, cap, "?");
	else if (c->sm_min == c->sm_max)
		n = snprintf(out, cap, "%lld", c->sm_min);
	else
		n = snprintf(out, cap, "%lld-%lld", c->sm_min, c->sm_max);
	if (c->throttled && n > 0 && (size_t)n < cap)
		snprintf(out + n, cap - (size_t)n, " (%zu throttled)", c->throttled);
}

/* Wrap the text line that starts at b->data + at ("  " and its words)
 * when it runs past TEXT_WIDTH, continuing lines indented by 4. */
static void wrap_line(struct cb_buf *b, size_t at)
{
	char *line;

	if (b->len - at <= TEXT_WIDTH)
		return;
	line = strdup(b->data + at + 2);
	b->len = at;
	b->data[at] = '\0';
	cb_buf_adds(b, "  ");
	if (line)
		put_wrapped(b, 2, line, 4);
	free(line);
}

/* Below the reasons: the SM clock while each task's rows ran, per order
 * and cell (baseline, control, candidate), its sessions, the rows measured
 * again or left out as throttled, and the rest taken before rows. Nothing
 * when no row recorded a clock. */
static void put_clocks(struct cb_buf *b, const struct cb_report *rp, int md)
{
	size_t i, shown = 0;
	int o, r;

	for (i = 0; i < rp->n; i++) {
		const struct cb_report_task *t = &rp->t[i];
		size_t retried = 0, throttled = 0, at = b->len;
		long long rested = 0;
		int known = 0;

		for (o = 0; o < CB_NORDERS; o++)
			for (r = 0; r < CB_NROLES; r++)
				known |= t->clocks[o][r].known;
		if (!known)
			continue;
		if (!shown++)
			cb_buf_adds(b, md ? "\n**Clocks** (SM MHz while the rows ran: baseline / control / candidate)\n\n"
					  : "\nclocks (SM MHz while the rows ran: baseline / control / candidate):\n");
		at = b->len;
		cb_buf_addf(b, md ? "- %s:" : "  %s:", t->sealed.id);
		for (o = 0; o < CB_NORDERS; o++) {
			if (!t->clocks[o][CB_ROLE_BASELINE].sessions)
				continue;
			cb_buf_addf(b, " round %c %zu session%s ", o ? 'b' : 'a', t->clocks[o][CB_ROLE_BASELINE].sessions,
				    t->clocks[o][CB_ROLE_BASELINE].sessions == 1 ? "" : "s");
			for (r = 0; r < CB_NROLES; r++) {
				char cell[64];
				fmt_cell_clocks(&t->clocks[o][r], cell, sizeof(cell));
				cb_buf_addf(b, "%s%s", r ? " / " : "", cell);
				retried += t->clocks[o][r].retried;
				throttled += t->clocks[o][r].throttled;
				rested += t->clocks[o][r].rested_ms;
			}
			cb_buf_adds(b, ";");
		}
		b->len--;
		b->data[b->len] = '\0';
		if (rested >= 50)     /* what "%.1f s" shows as 0.0 is no rest worth naming */
			cb_buf_addf(b, "; rested %.1f s", (double)rested / 1000.0);
		if (retried || throttled)
			cb_buf_addf(b, "; %zu row%s measured again, %zu left out as throttled", retried,
				    retried == 1 ? "" : "s", throttled);
		if (!md)
			wrap_line(b, at);
		cb_buf_adds(b, "\n");
	}
}

/* The layouts of the ops of a line that changed, "#a -> #b", each once. */
static void put_line_layouts(struct cb_buf *b, const struct cb_diff_line *l, int md)
{
	size_t i, j, shown = 0;

	for (i = 0; i < l->n; i++) {
		const struct cb_ir_op *op = l->ops[i].base ? l->ops[i].base : l->ops[i].cand;
		char one[512];
		int again = 0;

		if (l->ops[i].change == CB_CHANGE_KEPT)
			continue;
		snprintf(one, sizeof(one), "%s -> %s", op->src.text ? op->src.text : "?", op->dst.text ? op->dst.text : "?");
		for (j = 0; j < i; j++) {
			const struct cb_ir_op *o2 = l->ops[j].base ? l->ops[j].base : l->ops[j].cand;
			again |= l->ops[j].change != CB_CHANGE_KEPT && same_text(o2->src.text, op->src.text) &&
				 same_text(o2->dst.text, op->dst.text);
		}
		if (again)
			continue;
		cb_buf_adds(b, shown++ ? ", " : " (");
		put_text(b, one, md);
	}
	if (shown)
		cb_buf_adds(b, ")");
}

/* Below the reasons: for each task whose topology ops changed, each
 * kernel with its counts, the source lines where ops were removed or
 * added with their layouts, and its TTGIR files (caliber diff). */
static void put_where(struct cb_buf *b, const struct cb_report *rp, int md)
{
	size_t i, j, k, shown = 0;
	int r;

	for (i = 0; rp->diff && i < rp->n; i++) {
		const struct cb_diff_task *t = rp->t[i].diff;

		if (!t || (!t->removed && !t->added))
			continue;
		if (!shown++)
			cb_buf_addf(b, md ? "\n**Where the converts went** (`caliber diff`; kernels launched more than %lld time%s)\n\n"
					  : "\nwhere the converts went (caliber diff; kernels launched more than %lld time%s):\n",
				    rp->diff->v->floor, rp->diff->v->floor == 1 ? "" : "s");
		for (j = 0; j < t->nk; j++) {
			const struct cb_diff_kernel *kn = &t->k[j];
			if (!kn->removed && !kn->added)
				continue;
			cb_buf_adds(b, md ? "- " : "  ");
			put_text(b, t->id, md);
			cb_buf_addf(b, ": %s%s%s %zu -> %zu (%zu kept):", md ? "`" : "", kn->kernel, md ? "`" : "",
				    kn->ir[CB_ROLE_BASELINE].nops, kn->ir[CB_ROLE_CANDIDATE].nops, kn->kept);
			for (k = 0; k < kn->nlines; k++) {
				const struct cb_diff_line *l = &kn->lines[k];
				if (!l->removed && !l->added)
					continue;
				cb_buf_adds(b, md ? "\n  - " : "\n    ");
				if (l->file)
					cb_buf_addf(b, "%s%s:%lld%s:", md ? "`" : "", l->file, l->line, md ? "`" : "");
				else
					cb_buf_adds(b, "no location:");
				if (l->removed)
					cb_buf_addf(b, " %zu removed", l->removed);
				if (l->added)
					cb_buf_addf(b, "%s %zu added", l->removed ? "," : "", l->added);
				put_line_layouts(b, l, md);
			}
			/* A path is one word: in text it has a line of its own. */
			for (r = 0; r < CB_NROLES; r++)
				if (kn->ttgir[r] && r != CB_ROLE_CONTROL)
					cb_buf_addf(b, md ? "\n  - TTGIR of the %s: `%s`" : "\n    TTGIR of the %s:\n      %s",
						    cb_role_name((enum cb_role)r), kn->ttgir[r]);
			cb_buf_adds(b, "\n");
		}
	}
}

/* A median in microseconds, "-" when the cell has no such row. */
static void put_us(struct cb_buf *b, double ns)
{
	if (ns < 0)
		cb_buf_adds(b, "-");
	else
		cb_buf_addf(b, "%.2f", ns / 1000.0);
}

/* One order's rows of a task: "label b / c / k; ..." in microseconds. */
static void put_order_times(struct cb_buf *b, const struct cb_report_task *t, int o, const char *sep, int md)
{
	size_t i;
	int r;

	for (i = 0; i < t->ntimes[o]; i++) {
		cb_buf_adds(b, i ? sep : "");
		put_text(b, t->rows[o][i].label, md);
		cb_buf_adds(b, " ");
		for (r = 0; r < CB_NROLES; r++) {
			cb_buf_adds(b, r ? " / " : "");
			put_us(b, t->rows[o][i].cell[r].median_ns);
		}
	}
}

/* Below the reasons: the median of every row per cell, in microseconds,
 * sessions pooled, per task and order. Nothing when no row was timed. */
static void put_times(struct cb_buf *b, const struct cb_report *rp, int md)
{
	size_t i, shown = 0;
	int o;

	for (i = 0; i < rp->n; i++) {
		const struct cb_report_task *t = &rp->t[i];
		size_t at;

		if (!t->ntimes[CB_ORDER_A] && !t->ntimes[CB_ORDER_B])
			continue;
		if (!shown++)
			cb_buf_adds(b, md ? "\n**Times** (median µs per row, sessions pooled: baseline / control / candidate)\n\n"
					  : "\ntimes (median us per row, sessions pooled: baseline / control / candidate):\n");
		at = b->len;
		cb_buf_adds(b, md ? "- " : "  ");
		put_text(b, t->sealed.id, md);
		for (o = 0; o < CB_NORDERS; o++) {
			if (!t->ntimes[o])
				continue;
			cb_buf_addf(b, "%s round %c: ", o && t->ntimes[CB_ORDER_A] ? ";" : ":", o ? 'b' : 'a');
			put_order_times(b, t, o, ", ", md);
		}
		if (!md)
			wrap_line(b, at);
		cb_buf_adds(b, "\n");
	}
}

/* Seconds with one decimal, from ms. */
static void put_seconds(struct cb_buf *b, long long ms)
{
	cb_buf_addf(b, "%lld.%lld", ms / 1000, (ms % 1000) / 100);
}

/* The seconds cell r of task t spent compiling in phase p, or "-" when
 * some receipt of it has no compile.json its Triton listened for. */
static void put_compile(struct cb_buf *b, const struct cb_report_task *t, int p, int r)
{
	if (t->cell_runs[p][r] && t->cell_compiled[p][r] == t->cell_runs[p][r])
		put_seconds(b, t->cell_compile_us[p][r] / 1000);
	else
		cb_buf_adds(b, "-");
}

/* Last of all, where the time went: the cells' wall time of the whole run
 * per phase and the longest task, then per task its receipt's wall time
 * and, per phase, its cells' (sessions summed) with the share of each cell,
 * baseline / control / candidate, and, when the run recorded compile.json,
 * the part of it each cell spent compiling. Nothing when no cell receipt
 * recorded a wall time (runs built by the test tools). */
static void put_walls(struct cb_buf *b, const struct cb_report *rp, int md)
{
	long long sum[CB_NPHASES] = { 0 }, comp[CB_NPHASES] = { 0 }, all = 0, longest = -1;
	size_t i, at, runs = 0, ilong = 0;
	int p, r;

	for (i = 0; i < rp->n; i++) {
		for (p = 0; p < CB_NPHASES; p++)
			for (r = 0; r < CB_NROLES; r++) {
				sum[p] += rp->t[i].cell_ms[p][r];
				comp[p] += rp->t[i].cell_compile_us[p][r] / 1000;
				runs += rp->t[i].cell_runs[p][r];
			}
		if (rp->t[i].wall_ms > longest) {
			longest = rp->t[i].wall_ms;
			ilong = i;
		}
	}
	if (!runs)
		return;
	for (p = 0; p < CB_NPHASES; p++)
		all += sum[p];
	if (rp->compile_known)
		cb_buf_adds(b, md ? "\n**Wall time** (s; per phase the cells baseline / control / candidate, sessions summed; "
				    "compile: of that, Triton compiling, - unknown)\n\n"
				  : "\nwall time (s; per phase: baseline / control / candidate, sessions summed; compile: of "
				    "that, Triton compiling, - unknown):\n");
	else
		cb_buf_adds(b, md ? "\n**Wall time** (s; per phase the cells baseline / control / candidate, sessions summed)\n\n"
				  : "\nwall time (s; per phase: baseline / control / candidate, sessions summed):\n");
	cb_buf_adds(b, md ? "- all tasks, in cells " : "  all tasks, in cells ");
	put_seconds(b, all);
	cb_buf_adds(b, " s");
	for (p = 0; p < CB_NPHASES; p++)
		if (sum[p]) {
			cb_buf_addf(b, "%s %s ", p ? "," : ":", cb_phase_name((enum cb_phase)p));
			put_seconds(b, sum[p]);
			if (rp->compile_known) {
				cb_buf_adds(b, " (compile ");
				put_seconds(b, comp[p]);
				cb_buf_adds(b, ")");
			}
		}
	if (longest >= 0) {
		cb_buf_adds(b, "; the longest task ");
		put_text(b, rp->t[ilong].sealed.id, md);
		cb_buf_adds(b, " ");
		put_seconds(b, longest);
		cb_buf_adds(b, " s");
	}
	cb_buf_adds(b, "\n");
	for (i = 0; i < rp->n; i++) {
		const struct cb_report_task *t = &rp->t[i];
		int first = 1;

		at = b->len;
		cb_buf_adds(b, md ? "- " : "  ");
		put_text(b, t->sealed.id, md);
		if (t->wall_ms >= 0) {
			cb_buf_adds(b, " ");
			put_seconds(b, t->wall_ms);
			cb_buf_adds(b, " s");
		}
		for (p = 0; p < CB_NPHASES; p++) {
			long long ph = 0;
			for (r = 0; r < CB_NROLES; r++)
				ph += t->cell_ms[p][r];
			if (!t->cell_runs[p][CB_ROLE_BASELINE])
				continue;
			cb_buf_addf(b, "%s %s ", first ? ":" : ",", cb_phase_name((enum cb_phase)p));
			first = 0;
			put_seconds(b, ph);
			for (r = 0; r < CB_NROLES; r++) {
				cb_buf_adds(b, r ? " / " : " (");
				put_seconds(b, t->cell_ms[p][r]);
			}
			for (r = 0; rp->compile_known && r < CB_NROLES; r++) {
				cb_buf_adds(b, r ? " / " : "; compile ");
				put_compile(b, t, p, r);
			}
			cb_buf_adds(b, ")");
		}
		if (!md)
			wrap_line(b, at);
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

/* Rewrap, from byte at on, every line longer than TEXT_WIDTH at its
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
		if (n > TEXT_WIDTH && memchr(p + indent, ' ', n - indent) && (line = strndup(p + indent, n - indent))) {
			cb_buf_addf(&out, "%*s", (int)indent, "");
			put_wrapped(&out, indent, line, indent ? indent + 2 : 4);
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
	put_where(b, rp, 0);
	put_times(b, rp, 0);
	put_clocks(b, rp, 0);
	put_walls(b, rp, 0);
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
			put_text(b, rows[i].c[c], c == 0);
			cb_buf_adds(b, " |");
		}
		cb_buf_adds(b, "\n");
	}
	put_reasons(b, rp, 1);
	put_where(b, rp, 1);
	put_times(b, rp, 1);
	put_clocks(b, rp, 1);
	put_walls(b, rp, 1);
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
