/* report_task.c: the HTML section of one task: its verdict and reason,
 * each order's rows with the samples of every cell, the clocks, the
 * variants counted or left out, and links to every receipt. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account/evidence.h"
#include "base/runroot.h"
#include "base/fsutil.h"
#include "html.h"
#include "base/jsonio.h"
#include "report.h"
#include "report_task.h"

/* "SM 1980→1965 MHz · mem 3201 MHz" from a row's clocks; "?" where the
 * device could not say. */
static void fmt_clocks(const struct cb_timing_row *row, char *out, size_t cap)
{
	const struct cb_timing_clocks *c = &row->clocks;
	char part[2][64];
	int k;

	if (!c->recorded) {
		snprintf(out, cap, "not recorded");
		return;
	}
	for (k = 0; k < 2; k++) {
		long long x = k ? c->mem_before : c->sm_before, y = k ? c->mem_after : c->sm_after;
		char xs[24] = "?", ys[24] = "?";
		if (x >= 0)
			snprintf(xs, sizeof(xs), "%lld", x);
		if (y >= 0)
			snprintf(ys, sizeof(ys), "%lld", y);
		if (strcmp(xs, ys) == 0)
			snprintf(part[k], sizeof(part[k]), "%s %s MHz", k ? "mem" : "SM", xs);
		else
			snprintf(part[k], sizeof(part[k]), "%s %s→%s MHz", k ? "mem" : "SM", xs, ys);
	}
	snprintf(out, cap, "%s · %s", part[0], part[1]);
}

/* "<td>role (cell name)</td>", the name left out when it is the role's. */
static void h_cell_name(struct cb_buf *b, int role, const char *name)
{
	const char *r = cb_role_name((enum cb_role)role);

	cb_buf_addf(b, "<td>%s", r);
	if (strcmp(r, name) != 0) {
		cb_buf_adds(b, " <span class=\"muted\">(");
		cb_html_esc(b, name);
		cb_buf_adds(b, ")</span>");
	}
	cb_buf_adds(b, "</td>");
}

/* A row's samples in one cell as a strip of dots on the row's shared
 * scale [lo, hi] (ns), with the median as a tick. */
static void svg_strip(struct cb_buf *b, const struct cb_report_task *t, char order, int role, const int64_t *s, size_t n,
		      double med, double lo, double hi)
{
	const double W = 240, pad = 6;
	double span = hi > lo ? hi - lo : 1;
	size_t i;

	cb_buf_addf(b, "<svg class=\"strip\" width=\"%d\" height=\"14\" viewBox=\"0 0 %d 14\" role=\"img\" "
		       "aria-label=\"%zu samples of the %s, round %c, median %.3f µs, on a scale of %.3f to %.3f µs\">"
		       "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"7\" y2=\"7\" stroke=\"#eaeef2\"/>",
		    (int)W, (int)W, n, cb_role_name((enum cb_role)role), order, med / 1000, lo / 1000, hi / 1000, pad, W - pad);
	for (i = 0; i < n; i++) {
		double x = hi > lo ? pad + ((double)s[i] - lo) / span * (W - 2 * pad) : W / 2;
		cb_buf_addf(b, "<circle class=\"sample r-%s\" data-task=\"", cb_role_name((enum cb_role)role));
		cb_html_esc(b, t->sealed.id);
		cb_buf_addf(b, "\" data-order=\"%c\" data-cell=\"%s\" cx=\"%.1f\" cy=\"7\" r=\"2.5\" fill-opacity=\"0.7\"/>",
			    order, cb_role_name((enum cb_role)role), x);
	}
	cb_buf_addf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"1\" y2=\"13\" stroke=\"#1f2328\" stroke-width=\"1.5\"/></svg>",
		    hi > lo ? pad + (med - lo) / span * (W - 2 * pad) : W / 2, hi > lo ? pad + (med - lo) / span * (W - 2 * pad) : W / 2);
}

/* The rows of one order (the report's model of them): per benchmark row
 * and cell the median, the timer and why, the clocks, and the samples as a
 * strip plot, in the order of the first cell timed; before them, each
 * cell's timing.jsonl that is absent or could not be read. */
static void h_order_rows(struct cb_buf *b, const struct cb_report_task *t, int o,
			 const char *const names[CB_NROLES])
{
	size_t i, k;
	int r;

	cb_buf_addf(b, "<h4>Round %c</h4>\n", o ? 'b' : 'a');
	for (r = 0; r < CB_NROLES; r++) {
		if (t->timing_error[o][r]) {
			cb_buf_adds(b, "<p class=\"bad\">");
			cb_html_esc(b, t->timing_error[o][r]);
			cb_buf_adds(b, "</p>\n");
		} else if (!t->timing_seen[o][r]) {
			cb_buf_addf(b, "<p class=\"muted\">" CB_RUN_TASKS "/");
			cb_html_esc(b, t->sealed.id);
			cb_buf_addf(b, "/" CB_RUN_CELLS "/%s-", o ? "b" : "a");
			cb_html_esc(b, names[r]);
			cb_buf_adds(b, "/" CB_RUN_TIMING ": absent</p>\n");
		}
	}
	if (!t->nrows[o])
		return;
	cb_buf_addf(b, "<table class=\"grid rows\"><caption>Round %c of ", o ? 'b' : 'a');
	cb_html_esc(b, t->sealed.id);
	cb_buf_adds(b, ": each benchmark row's median and samples per cell, every session pooled</caption>\n<tr><th scope=\"col\">row</th><th scope=\"col\">cell</th><th scope=\"col\" class=\"num\">median</th><th scope=\"col\" class=\"num\">n</th><th scope=\"col\">timer</th><th scope=\"col\">clocks</th><th scope=\"col\">samples</th></tr>\n");
	for (i = 0; i < t->nrows[o]; i++) {
		const struct cb_report_row *row = &t->rows[o][i];
		double lo = 0, hi = 0;
		int first = 1;

		for (r = 0; r < CB_NROLES; r++)
			for (k = 0; k < row->cell[r].n; k++) {
				double x = (double)row->cell[r].samples[k];
				lo = first || x < lo ? x : lo;
				hi = first || x > hi ? x : hi;
				first = 0;
			}
		for (r = 0; r < CB_NROLES; r++) {
			const struct cb_report_cell_row *c = &row->cell[r];
			char clocks[160];

			cb_buf_adds(b, "<tr>");
			if (r == 0) {
				cb_buf_adds(b, "<td rowspan=\"3\" class=\"mono key\">");
				cb_html_esc(b, row->key);
				cb_buf_addf(b, "<br><span class=\"muted\">scale %.3f–%.3f µs</span></td>", lo / 1000, hi / 1000);
			}
			h_cell_name(b, r, names[r]);
			if (!c->first) {
				cb_buf_adds(b, "<td colspan=\"5\" class=\"muted\">no such row</td></tr>\n");
				continue;
			}
			fmt_clocks(c->first, clocks, sizeof(clocks));
			cb_buf_addf(b, "<td class=\"num\">%.3f µs</td><td class=\"num\">%zu", c->median_ns / 1000, c->n);
			if (c->sessions > 1)
				cb_buf_addf(b, " <span class=\"muted\">in %zu sessions</span>", c->sessions);
			cb_buf_adds(b, "</td><td>");
			cb_html_esc(b, c->first->timer);
			cb_buf_adds(b, " <span class=\"muted\">");
			cb_html_esc(b, c->first->timer_reason);
			cb_buf_adds(b, "</span></td><td class=\"clk\">");
			cb_html_esc(b, clocks);
			cb_buf_adds(b, "</td><td>");
			svg_strip(b, t, o ? 'b' : 'a', r, c->samples, c->n, c->median_ns, lo, hi);
			cb_buf_adds(b, "</td></tr>\n");
		}
	}
	cb_buf_adds(b, "</table>\n");
}

/* Names of the variants in list, each with its kernel and launches as the
 * topology's variants record them. */
static void h_variants(struct cb_buf *b, const json_t *list, const json_t *topo)
{
	const json_t *v, *w;
	size_t i, k;

	if (!json_array_size(list)) {
		cb_buf_adds(b, "<span class=\"muted\">none</span>");
		return;
	}
	json_array_foreach(list, i, v) {
		const char *name = json_string_value(v);
		cb_buf_adds(b, i ? "<br>" : "");
		cb_buf_adds(b, "<code class=\"hash\">");
		cb_html_esc(b, name ? name : "?");
		cb_buf_adds(b, "</code>");
		json_array_foreach(json_object_get(topo, "variants"), k, w) {
			if (!name || !cb_json_str(w, "variant") || strcmp(cb_json_str(w, "variant"), name) != 0)
				continue;
			cb_buf_adds(b, " <span class=\"muted\">");
			cb_html_esc(b, cb_json_str(w, "kernel") ? cb_json_str(w, "kernel") : "?");
			cb_buf_addf(b, ", %lld launches, %lld tuning, %lld converts</span>",
				    (long long)cb_json_int(w, "launches", 0), (long long)cb_json_int(w, "tuning_launches", 0),
				    (long long)cb_json_int(w, "count", 0));
		}
	}
}

/* One phase's outcome of cell r of task t: the word, coloured, its detail,
 * and the wall time of the cell's receipts in that phase (runs of them, the
 * sessions of a round, summed), with, when the run recorded compile.json
 * (compile), the part spent compiling ("-" unknown). */
static void h_outcome(struct cb_buf *b, const json_t *phase, const struct cb_report_task *t, size_t p, int r,
		      int compile)
{
	const char *o = cb_json_str(phase, "outcome"), *d = cb_json_str(phase, "detail");
	long long ms = t->cell_ms[p][r], us = t->cell_compile_us[p][r];
	size_t runs = t->cell_runs[p][r];

	cb_buf_addf(b, "<td><span class=\"%s\">", o && strcmp(o, "passed") == 0 ? "ok"
						    : o && strcmp(o, "not-run") == 0 ? "muted" : "bad");
	cb_html_esc(b, o ? o : "?");
	cb_buf_adds(b, "</span>");
	if (d && *d && (!o || strcmp(d, o) != 0)) {
		cb_buf_adds(b, "<br><small class=\"muted\">");
		cb_html_esc(b, d);
		cb_buf_adds(b, "</small>");
	}
	if (runs)
		cb_buf_addf(b, "<br><small class=\"muted\">%lld.%lld s%s", ms / 1000, (ms % 1000) / 100,
			    runs > 1 ? " in all sessions" : "");
	if (runs && compile && t->cell_compiled[p][r] == runs)
		cb_buf_addf(b, " (compile %lld.%lld s)", us / 1000000, (us % 1000000) / 100000);
	else if (runs && compile)
		cb_buf_adds(b, " (compile -)");
	if (runs)
		cb_buf_adds(b, "</small>");
	cb_buf_adds(b, "</td>");
}

/* One order's sessions and SM clock range per cell, from the report
 * model, with rows measured again or left out as throttled flagged. */
static void h_order_clocks(struct cb_buf *b, const struct cb_report_task *t, int o)
{
	int r;

	cb_buf_addf(b, "%zu · ", t->clocks[o][CB_ROLE_BASELINE].sessions);
	for (r = 0; r < CB_NROLES; r++) {
		const struct cb_report_clocks *c = &t->clocks[o][r];
		cb_buf_adds(b, r ? " / " : "");
		if (!c->known)
			cb_buf_adds(b, "?");
		else if (c->sm_min == c->sm_max)
			cb_buf_addf(b, "%lld", c->sm_min);
		else
			cb_buf_addf(b, "%lld–%lld", c->sm_min, c->sm_max);
		if (c->throttled)
			cb_buf_addf(b, " <span class=\"bad\">%zu throttled</span>", c->throttled);
		else if (c->retried)
			cb_buf_addf(b, " <span class=\"muted\">%zu again</span>", c->retried);
	}
}

/* Per task: a <details> with the verdict and its reason, the cells
 * (correctness and outcomes, topology, excluded variants), both orders'
 * figures, the rows with their samples, and links to every receipt. */
void cb_report_task_html(struct cb_buf *b, const struct cb_report *rp, const struct cb_report_task *t)
{
	static const char *const phases[CB_NPHASES] = { "correctness", "a", "b", "screen" };
	const json_t *cells = json_object_get(t->doc, "cells"), *topo = json_object_get(t->doc, "topology");
	const json_t *orders = json_object_get(t->doc, "orders");
	const char *names[CB_NROLES];
	char *tdir = cb_strdupf("%s/" CB_RUN_TASKS "/%s", rp->v->root, t->sealed.id);
	char *thref = cb_strdupf("%s/" CB_RUN_TASKS "/%s", rp->href, t->sealed.id);
	int r, o, screen = 0;
	size_t p;

	for (r = 0; r < CB_NROLES; r++) {
		const char *n = cb_json_str(json_object_get(cells, cb_role_name((enum cb_role)r)), "name");
		names[r] = n && cb_is_ident(n) ? n : cb_role_name((enum cb_role)r);
	}
	cb_buf_adds(b, "<details class=\"task\" id=\"t-");
	cb_html_esc(b, t->sealed.id);
	cb_buf_adds(b, "\" data-task=\"");
	cb_html_esc(b, t->sealed.id);
	cb_buf_addf(b, "\" data-verdict=\"%c\"><summary>", cb_report_verdict(t));
	if (t->derived) {
		cb_html_badge(b, t->sealed.verdict);
		cb_buf_adds(b, " → ");
	}
	cb_html_badge(b, cb_report_verdict(t));
	cb_buf_adds(b, " <b>");
	cb_html_esc(b, t->sealed.id);
	cb_buf_adds(b, "</b> <span class=\"muted\">");
	cb_html_esc(b, cb_report_code(t));
	cb_buf_adds(b, "</span> — ");
	cb_html_esc(b, cb_report_reason(t));
	cb_buf_adds(b, "</summary>\n");
	if (t->derived) {
		cb_buf_adds(b, "<p>Sealed: ");
		cb_html_badge(b, t->sealed.verdict);
		cb_buf_adds(b, " ");
		cb_html_esc(b, t->sealed.code);
		cb_buf_adds(b, " — ");
		cb_html_esc(b, t->sealed.reason);
		cb_buf_addf(b, "<br>Derived at floor %lld: ", rp->v->floor);
		cb_html_badge(b, t->dverdict);
		cb_buf_adds(b, " ");
		cb_html_esc(b, t->dcode);
		cb_buf_adds(b, " — ");
		cb_html_esc(b, t->dreason);
		cb_buf_addf(b, "%s</p>\n", t->changed ? " <b>(changed)</b>" : " (unchanged)");
	}
	cb_buf_adds(b, "<h4>Cells");
	if (t->wall_ms >= 0)
		cb_buf_addf(b, " <small class=\"muted\">(the task took %lld.%lld s)</small>", t->wall_ms / 1000,
			    (t->wall_ms % 1000) / 100);
	for (r = 0; r < CB_NROLES; r++)
		screen |= json_object_get(json_object_get(json_object_get(cells, cb_role_name((enum cb_role)r)), "phases"),
					  "screen") != NULL;
	cb_buf_adds(b, "</h4>\n<table class=\"grid\"><caption>The cells of ");
	cb_html_esc(b, t->sealed.id);
	cb_buf_adds(b, ": outcome by phase, topology and the variants left out</caption>\n<tr><th scope=\"col\">role</th><th scope=\"col\">cell</th><th scope=\"col\">correctness</th><th scope=\"col\">round a</th><th scope=\"col\">round b</th>");
	if (screen)
		cb_buf_adds(b, "<th scope=\"col\">screen (--prescreen)</th>");
	cb_buf_addf(b, "<th scope=\"col\">topology (scoped / total, floor %lld)</th><th scope=\"col\">excluded variants (launches &le; floor)</th>",
		    rp->v->cs.launch_floor);
	if (t->derived)
		cb_buf_addf(b, "<th scope=\"col\">topology at floor %lld</th><th scope=\"col\">excluded at floor %lld</th>", rp->v->floor, rp->v->floor);
	cb_buf_adds(b, "</tr>\n");
	for (r = 0; r < CB_NROLES; r++) {
		const char *role = cb_role_name((enum cb_role)r);
		const json_t *c = json_object_get(cells, role), *tp = json_object_get(topo, role);

		cb_buf_addf(b, "<tr><td>%s</td><td>", role);
		cb_html_esc(b, names[r]);
		cb_buf_adds(b, "</td>");
		for (p = 0; p < (size_t)(CB_PH_ROUND_B + 1 + screen); p++)
			h_outcome(b, json_object_get(json_object_get(c, "phases"), phases[p]), t, p, r,
				  rp->compile_known);
		cb_buf_adds(b, "<td>");
		if (json_is_true(json_object_get(tp, "joinable")))
			cb_buf_addf(b, "%lld / %lld", (long long)cb_json_int(tp, "scoped", 0),
				    (long long)cb_json_int(tp, "total", 0));
		else if (json_is_object(tp)) {
			const json_t *u;
			size_t k;
			cb_buf_adds(b, "<span class=\"bad\">");
			cb_html_esc(b, cb_json_str(tp, "error") ? cb_json_str(tp, "error") : "not joinable");
			json_array_foreach(json_object_get(tp, "unjoinable"), k, u) {
				cb_buf_adds(b, "<br>");
				cb_html_esc(b, json_is_string(u) ? json_string_value(u) : "?");
			}
			cb_buf_adds(b, "</span>");
		}
		cb_buf_adds(b, "</td><td>");
		h_variants(b, json_object_get(tp, "excluded"), tp);
		cb_buf_adds(b, "</td>");
		if (t->derived) {
			cb_buf_adds(b, "<td>");
			if (t->dhave_topology)
				cb_buf_addf(b, "%lld", t->dtopology[r]);
			else
				cb_buf_adds(b, "<span class=\"muted\">none</span>");
			cb_buf_adds(b, "</td><td>");
			h_variants(b, json_object_get(t->dexcluded, role), tp);
			cb_buf_adds(b, "</td>");
		}
		cb_buf_adds(b, "</tr>\n");
	}
	cb_buf_adds(b, "</table>\n<h4>Speedup by order</h4>\n<table class=\"grid\"><caption>Speedup of ");
	cb_html_esc(b, t->sealed.id);
	cb_buf_adds(b, " in each order, against its A/A band</caption>\n<tr><th scope=\"col\">order</th><th scope=\"col\" class=\"num\">candidate vs baseline</th><th scope=\"col\" class=\"num\">A/A: control vs baseline</th><th scope=\"col\">stable gain</th><th scope=\"col\">stable regression</th><th scope=\"col\">timer</th><th scope=\"col\" class=\"num\">rows</th><th scope=\"col\">sessions · SM MHz (b / c / k)</th></tr>\n");
	for (o = 0; o < CB_NORDERS; o++) {
		const json_t *x = json_object_get(orders, o ? "b" : "a");
		char s[160], a[160], aa_lo[32], aa_hi[32];

		cb_buf_addf(b, "<tr><td>round %c</td>", o ? 'b' : 'a');
		if (!json_is_true(json_object_get(x, "present"))) {
			cb_buf_addf(b, "<td colspan=\"7\" class=\"muted\">not timed%s</td></tr>\n",
				    o ? " (round b runs when the candidate's topology is below the baseline's or round a "
					"shows a stable gain or regression)" : "");
			continue;
		}
		cb_report_fmt_order(&t->sealed, o, 1, 0, s, sizeof(s));
		cb_fmt_pct(cb_json_int(x, "aa_speedup_ppm", 0), a, sizeof(a));
		cb_fmt_pct(cb_json_int(x, "aa_lo_ppm", 0), aa_lo, sizeof(aa_lo));
		cb_fmt_pct(cb_json_int(x, "aa_hi_ppm", 0), aa_hi, sizeof(aa_hi));
		cb_buf_addf(b, "<td class=\"num\">%s</td><td class=\"num\">%s [%s, %s]</td><td>%s</td><td>%s</td><td>",
			    s, a, aa_lo, aa_hi, json_is_true(json_object_get(x, "stable_gain")) ? "yes" : "no",
			    json_is_true(json_object_get(x, "stable_regression")) ? "yes" : "no");
		cb_html_esc(b, t->sealed.timer[o]);
		cb_buf_addf(b, "</td><td class=\"num\">%lld", (long long)cb_json_int(x, "rows", 0));
		if (cb_json_int(x, "throttled_rows", 0))
			cb_buf_addf(b, " <span class=\"bad\">(%lld left out: throttled)</span>",
				    (long long)cb_json_int(x, "throttled_rows", 0));
		cb_buf_adds(b, "</td><td class=\"clk\">");
		h_order_clocks(b, t, o);
		cb_buf_adds(b, "</td></tr>\n");
	}
	cb_buf_adds(b, "</table>\n");
	for (o = 0; o < CB_NORDERS; o++) {
		int timed = 0;
		for (r = 0; r < CB_NROLES; r++)
			timed |= t->timing_seen[o][r];
		if (timed)
			h_order_rows(b, t, o, names);
	}
	cb_buf_adds(b, "<h4>Receipts</h4>\n<ul class=\"links\"><li>");
	if (tdir && thref)
		cb_html_link(b, tdir, thref, CB_RUN_TASK, CB_RUN_TASK);
	cb_buf_adds(b, "</li>\n");
	for (p = 0; p < CB_NPHASES; p++)
		for (r = 0; r < CB_NROLES; r++) {
			static const char *const files[] = { CB_RUN_CELL, "worker.log", CB_RUN_TIMING, "device.json",
							     "autotune.jsonl", "ir/index.tsv", "ir/binaries.tsv",
							     "replay_miss.json" };
			char *cdir = cb_strdupf(CB_RUN_CELLS "/%s-%s", phases[p], names[r]);
			char *full = cdir && tdir ? cb_path_join(tdir, cdir) : NULL;
			char *chref = cdir && thref ? cb_strdupf("%s/%s", thref, cdir) : NULL;
			size_t f, shown = 0;

			if (full && chref && cb_is_dir(full)) {
				cb_buf_adds(b, "<li><span class=\"mono\">");
				cb_html_esc(b, cdir);
				cb_buf_adds(b, "/</span>: ");
				for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
					if (!cb_report_has_file(full, files[f]))
						continue;
					cb_buf_adds(b, shown++ ? " · " : "");
					cb_html_link(b, full, chref, files[f], files[f]);
				}
				cb_buf_adds(b, "</li>\n");
			}
			free(cdir);
			free(full);
			free(chref);
		}
	cb_buf_adds(b, "</ul>\n</details>\n");
	free(tdir);
	free(thref);
}
