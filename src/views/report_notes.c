/* report_notes.c: what the text and Markdown report say below the table
 * of tasks (report_notes.h): the clocks, where the topology changed, the
 * row times and where the wall time went; and the escaping and wrapping of
 * receipt text that every text part of the report uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account/classify.h"
#include "base/jsonio.h"
#include "report.h"
#include "report_notes.h"

/* Text and Markdown escapes of receipt text: newlines flattened; for
 * Markdown also the characters that would start markup or HTML. */
void cb_report_put_text(struct cb_buf *b, const char *s, int md)
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

/* Append receipt text word by word, wrapping before CB_REPORT_TEXT_WIDTH: col is the
 * column the first word starts at, continuation lines are indented by
 * indent blanks. Newlines in the text are blanks. */
void cb_report_put_wrapped(struct cb_buf *b, size_t col, const char *s, size_t indent)
{
	int first = 1;

	for (;;) {
		size_t n;

		s += strspn(s, " \t\r\n");
		if (!*s)
			break;
		n = strcspn(s, " \t\r\n");
		if (!first && col + 1 + n > CB_REPORT_TEXT_WIDTH) {
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

/* Whether two strings, either NULL, are equal. */
static int same_text(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
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
 * when it runs past CB_REPORT_TEXT_WIDTH, continuing lines indented by 4. */
static void wrap_line(struct cb_buf *b, size_t at)
{
	char *line;

	if (b->len - at <= CB_REPORT_TEXT_WIDTH)
		return;
	line = strdup(b->data + at + 2);
	b->len = at;
	b->data[at] = '\0';
	cb_buf_adds(b, "  ");
	if (line)
		cb_report_put_wrapped(b, 2, line, 4);
	free(line);
}

/* Below the reasons: the SM clock while each task's rows ran, per order
 * and cell (baseline, control, candidate), its sessions, the rows measured
 * again or left out as throttled, and the rest taken before rows. Nothing
 * when no row recorded a clock. */
void cb_report_put_clocks(struct cb_buf *b, const struct cb_report *rp, int md)
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
		cb_report_put_text(b, one, md);
	}
	if (shown)
		cb_buf_adds(b, ")");
}

/* Below the reasons: for each task whose topology ops changed, each
 * kernel with its counts, the source lines where ops were removed or
 * added with their layouts, and its TTGIR files (caliber diff). */
void cb_report_put_where(struct cb_buf *b, const struct cb_report *rp, int md)
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
			cb_report_put_text(b, t->id, md);
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
		cb_report_put_text(b, t->rows[o][i].label, md);
		cb_buf_adds(b, " ");
		for (r = 0; r < CB_NROLES; r++) {
			cb_buf_adds(b, r ? " / " : "");
			put_us(b, t->rows[o][i].cell[r].median_ns);
		}
	}
}

/* Below the reasons: the median of every row per cell, in microseconds,
 * sessions pooled, per task and order. Nothing when no row was timed. */
void cb_report_put_times(struct cb_buf *b, const struct cb_report *rp, int md)
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
		cb_report_put_text(b, t->sealed.id, md);
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
void cb_report_put_walls(struct cb_buf *b, const struct cb_report *rp, int md)
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
		cb_report_put_text(b, rp->t[ilong].sealed.id, md);
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
		cb_report_put_text(b, t->sealed.id, md);
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
