/* report_html.c: the report as one self-contained HTML page: its style,
 * the header with the campaign's facts, the verdict counts, the plots
 * (report_svg.c), the matrix and a section per task (report_task.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account/aa.h"
#include "base/runroot.h"
#include "account/classify.h"
#include "base/fsutil.h"
#include "html.h"
#include "base/jsonio.h"
#include "report.h"
#include "report_svg.h"
#include "report_task.h"
#include "seal/seal.h"

/* ------------------------------------------------------------------ */
/* HTML                                                                 */

/* Colours by verdict, and what each letter means, for badges, table
 * cells and plot marks alike: white on each background at WCAG AA
 * contrast (4.5:1 or more; tests/cli/contrast.js checks the page). */
static const struct verdict_style {
	char v;
	const char *bg, *fg, *tint;
} verdict_styles[] = {
	{ 'G', "#1a7f37", "#ffffff", "#dafbe1" },
	{ 'C', "#9a6700", "#ffffff", "#fff8c5" },
	{ 'B', "#656d76", "#ffffff", "#eaeef2" },
	{ 'R', "#cf222e", "#ffffff", "#ffebe9" },
	{ 'K', "#8250df", "#ffffff", "#fbefff" },
	{ 'X', "#24292f", "#ffffff", "#d0d7de" },
};

/* Colours by role (baseline, control, candidate) for bars and samples: the
 * control is a lighter baseline, since it compiles the same code. */
static const char *const role_colour[CB_NROLES] = { "#24292f", "#8c959f", "#0969da" };

/* The page's fixed style; the verdict and role colours are added from the
 * tables above by h_style(). */
static const char html_css[] =
	"body{font:13px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
	"color:#1f2328;margin:0 auto;padding:16px;max-width:1248px;background:#fff}\n"
	"h1{font-size:20px;margin:0 0 10px}h2{font-size:16px;margin:24px 0 8px;border-bottom:1px solid #d0d7de}\n"
	"h4{margin:12px 0 4px;font-size:13px}\n"
	"table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;vertical-align:top}\n"
	"table.facts th{color:#57606a;font-weight:600;white-space:nowrap}\n"
	"table.grid td,table.grid th{border:1px solid #d0d7de}table.grid th{background:#f6f8fa}\n"
	"td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
	"code,.mono{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:12px}\n"
	".hash{word-break:break-all}\n"
	".badge{display:inline-block;min-width:1.4em;text-align:center;border-radius:4px;font-weight:700;padding:0 4px}\n"
	".count{display:inline-block;margin:0 10px 6px 0;padding:4px 10px;border-radius:6px;font-size:14px}"
	".count.none{background:#f6f8fa;color:#57606a;box-shadow:inset 0 0 0 1px #d0d7de}\n"
	"caption{caption-side:top;text-align:left;color:#57606a;font-size:12px;padding:2px 0}\n"
	".seal-ok{color:#1a7f37;font-weight:600}.seal-bad{color:#cf222e;font-weight:700}\n"
	".plots{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start}\n"
	"figure{margin:0}figcaption{color:#57606a;font-size:12px;max-width:860px}\n"
	"svg text{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}\n"
	"details.task{border:1px solid #d0d7de;border-radius:6px;margin:4px 0;padding:2px 8px}\n"
	"details.task[open]{padding-bottom:8px}summary{cursor:pointer;padding:2px 0}\n"
	".muted{color:#57606a}.bad{color:#cf222e;font-weight:600}.ok{color:#1a7f37}\n"
	"ul.links{margin:0;padding-left:18px}\n"
	"table.matrix{width:100%}table.matrix td.nw,table.matrix th.nw{white-space:nowrap}"
	"table.matrix td.reason{min-width:200px}table.matrix td.verdict{text-align:center;font-weight:700;width:3.5em}\n"
	"table.rows td.key{max-width:320px;word-break:break-all}table.rows td.clk{white-space:nowrap}\n"
	"table.changed td{white-space:nowrap}table.changed td.lay{white-space:normal}\n";

/* A JSON value in one line for the header: objects as "key value · ...",
 * arrays joined by ", ", scalars as they are; escaped. */
static void h_json_inline(struct cb_buf *b, const json_t *j)
{
	const char *k;
	json_t *v;
	size_t i, n = 0;

	if (json_is_object(j)) {
		json_object_foreach((json_t *)j, k, v) {
			cb_buf_adds(b, n++ ? " · " : "");
			cb_html_esc(b, k);
			cb_buf_adds(b, " ");
			h_json_inline(b, v);
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) {
			cb_buf_adds(b, i ? ", " : "");
			h_json_inline(b, v);
		}
	} else if (json_is_string(j)) {
		cb_html_esc(b, json_string_value(j));
	} else if (json_is_integer(j)) {
		cb_buf_addf(b, "%lld", (long long)json_integer_value(j));
	} else if (json_is_boolean(j)) {
		cb_buf_adds(b, json_is_true(j) ? "true" : "false");
	} else {
		cb_buf_adds(b, "<span class=\"muted\">not recorded</span>");
	}
}

/* The <style> element: fixed rules, then one rule set per verdict and role
 * generated from the colour tables, so that a colour is written once. */
static void h_style(struct cb_buf *b)
{
	size_t i;
	int r;

	cb_buf_addf(b, "<style>\n%s", html_css);
	for (i = 0; i < sizeof(verdict_styles) / sizeof(verdict_styles[0]); i++) {
		const struct verdict_style *s = &verdict_styles[i];
		cb_buf_addf(b, ".v-%c{background:%s;color:%s}.t-%c{background:%s}"
			       "svg .v-%c{fill:%s;stroke:%s}svg .pt.ob.v-%c{fill:#fff}svg .ci.v-%c{stroke:%s}\n",
			    s->v, s->bg, s->fg, s->v, s->tint, s->v, s->bg, s->bg, s->v, s->v, s->bg);
	}
	for (r = 0; r < CB_NROLES; r++)
		cb_buf_addf(b, "svg .r-%s{fill:%s}", cb_role_name((enum cb_role)r), role_colour[r]);
	cb_buf_adds(b, "\n</style>\n");
}

/* The first device.json any task's round a baseline cell left (name,
 * driver, clocks at setup); one that cannot be read is passed over. */
static json_t *first_device_json(const struct cb_report *rp)
{
	size_t i;

	for (i = 0; i < rp->n; i++) {
		const json_t *cell = json_object_get(json_object_get(rp->t[i].doc, "cells"), "baseline");
		const char *name = cb_json_str(cell, "name");
		char *p = name ? cb_strdupf("%s/" CB_RUN_TASKS "/%s/" CB_RUN_CELLS "/a-%s/device.json", rp->v->root, rp->t[i].sealed.id, name)
			       : NULL;
		json_t *j = p && cb_exists(p) ? cb_json_load_file(p, NULL) : NULL;

		free(p);
		if (j)
			return j;
	}
	return NULL;
}

/* One header row: <tr><th scope="row">name</th><td>value</td></tr>, the value already
 * escaped HTML. */
static void h_fact_open(struct cb_buf *b, const char *name)
{
	cb_buf_addf(b, "<tr><th scope=\"row\">%s</th><td>", name);
}

/* The compilers of the cells that named their own (a campaign of two
 * builds), after the sources: each cell's pin, identity and root as its
 * receipts give them. Runs sealed before cells could name one say
 * nothing here. */
static void h_cell_compilers(struct cb_buf *b, const json_t *cells)
{
	const char *name;
	const json_t *c;

	json_object_foreach((json_t *)cells, name, c) {
		const char *pin = cb_json_str(c, "pin");
		if (!pin || strncmp(pin, "cells[", 6) != 0)
			continue;
		cb_buf_adds(b, "<br><b>cell ");
		cb_html_esc(b, name);
		cb_buf_adds(b, "</b> ");
		h_json_inline(b, c);
	}
}

/* The header's row of what the intervals resample. */
static void h_intervals(struct cb_buf *b, const struct cb_report *rp)
{
	char line[256];

	cb_report_fmt_intervals(rp, 1, line, sizeof(line));
	h_fact_open(b, "intervals");
	cb_html_esc(b, line);
	cb_buf_adds(b, "</td></tr>\n");
}

/* The header's A/A row: what identical code gave in this run (aa.h). */
static void h_aa(struct cb_buf *b, const struct cb_report *rp)
{
	char line[CB_AA_LINE_MAX];

	cb_report_fmt_aa(rp, line, sizeof(line));
	h_fact_open(b, "A/A");
	cb_buf_adds(b, "<span id=\"aa\">");
	cb_html_esc(b, line);
	cb_buf_adds(b, "</span></td></tr>\n");
}

/* The free A/A of identical binaries and the pre-screen, a fact each when
 * it applies. */
static void h_identity(struct cb_buf *b, const struct cb_report *rp)
{
	char aa[256], screen[160];

	cb_report_fmt_identity(rp, aa, sizeof(aa), screen, sizeof(screen));
	if (aa[0]) {
		h_fact_open(b, "A/A");
		cb_buf_adds(b, "<span id=\"aa-identical\">identical binaries: ");
		cb_html_esc(b, aa);
		cb_buf_adds(b, "</span></td></tr>\n");
	}
	if (screen[0]) {
		h_fact_open(b, "pre-screen");
		cb_buf_adds(b, "<span id=\"prescreen\">on: ");
		cb_html_esc(b, screen);
		cb_buf_adds(b, "</span></td></tr>\n");
	}
}

/* The header: campaign, seal, derived run, sources, device, timer, plugin
 * plan, thresholds, the intervals and the A/A line, who ran it, and links
 * to the run's own receipts. */
static void h_header(struct cb_buf *b, const struct cb_report *rp)
{
	const json_t *doc = rp->v->cs.doc, *src = json_object_get(doc, "sources"), *th = cb_report_thresholds(rp);
	const json_t *caliber = json_object_get(doc, "caliber"), *plan = json_object_get(doc, "plan"), *v;
	json_t *dev = first_device_json(rp);
	static const char *const sources[] = { "compiler", "corpus", "harness" };
	char gain[32], reg[32], conf[32];
	size_t i;

	cb_buf_adds(b, "<header>\n<h1>caliber report: ");
	cb_html_esc(b, rp->v->cs.campaign);
	cb_buf_adds(b, rp->v->derived_dir ? " <span class=\"muted\">(derived run)</span>" : "");
	cb_buf_adds(b, "</h1>\n<table class=\"facts\">\n<caption>The campaign, its seal, sources, device, timer and "
		       "thresholds</caption>\n");
	h_fact_open(b, "campaign");
	cb_html_esc(b, rp->v->cs.campaign);
	cb_buf_adds(b, " · selection ");
	cb_html_esc(b, rp->v->cs.selection);
	cb_buf_addf(b, " · %zu tasks · status ", rp->n);
	cb_html_esc(b, rp->v->cs.status);
	if (cb_json_str(doc, "finished")) {
		cb_buf_adds(b, " · finished ");
		cb_html_esc(b, cb_json_str(doc, "finished"));
	}
	cb_buf_adds(b, " · manifest sha256 <code class=\"hash\">");
	cb_html_esc(b, rp->v->cs.manifest_sha256);
	cb_buf_adds(b, "</code></td></tr>\n");
	h_fact_open(b, "seal");
	cb_buf_addf(b, "<span class=\"%s\" id=\"seal\">", rp->v->seal == CB_SEAL_HOLDS ? "seal-ok" : "seal-bad");
	cb_html_esc(b, rp->seal);
	cb_buf_adds(b, "</span> (<code>caliber verify</code> run by this report)</td></tr>\n");
	if (rp->workers) {
		h_fact_open(b, "workers");
		cb_html_esc(b, rp->workers);
		cb_buf_adds(b, "</td></tr>\n");
	}
	if (rp->v->derived_dir) {
		h_fact_open(b, "derived run");
		cb_buf_addf(b, "re-accounted at launch floor %lld (sealed at %lld); equivalence at the sealed floor %s; "
			       "%lld of %zu tasks changed verdict · ",
			    rp->v->floor, rp->v->sealed_floor,
			    json_is_true(json_object_get(json_object_get(rp->v->derived, "equivalence"), "holds")) ? "holds"
													   : "does not hold",
			    (long long)cb_json_int(rp->v->derived, "changed", 0), rp->n);
		cb_html_link(b, rp->v->derived_dir, rp->dhref, CB_RUN_DERIVED, CB_RUN_DERIVED);
		cb_buf_adds(b, "</td></tr>\n");
	}
	h_fact_open(b, "sources");
	for (i = 0; i < 3; i++) {
		const json_t *s = json_object_get(src, sources[i]), *root;
		cb_buf_addf(b, "%s<b>%s</b> ", i ? "<br>" : "", sources[i]);
		h_json_inline(b, s);
		root = json_object_get(json_object_get(doc, "roots"), sources[i]);
		if (json_is_string(root)) {
			cb_buf_adds(b, " <span class=\"muted\">at ");
			cb_html_esc(b, json_string_value(root));
			cb_buf_adds(b, "</span>");
		}
	}
	h_cell_compilers(b, json_object_get(json_object_get(doc, "roots"), "cells"));
	cb_buf_adds(b, "</td></tr>\n");
	h_fact_open(b, "device");
	if (dev) {
		cb_html_esc(b, cb_json_str(dev, "name") ? cb_json_str(dev, "name") : "?");
		cb_buf_adds(b, " · driver ");
		cb_html_esc(b, cb_json_str(dev, "driver") ? cb_json_str(dev, "driver") : "?");
		cb_buf_adds(b, " · ");
	}
	h_json_inline(b, json_object_get(doc, "device"));
	cb_buf_adds(b, "</td></tr>\n");
	h_fact_open(b, "timer");
	h_json_inline(b, json_object_get(doc, "timer"));
	cb_buf_adds(b, "</td></tr>\n");
	h_fact_open(b, "plugin plan");
	json_array_foreach(plan, i, v) {
		cb_buf_adds(b, i ? " → " : "");
		cb_buf_adds(b, "<code>");
		h_json_inline(b, v);
		cb_buf_adds(b, "</code>");
	}
	if (!json_array_size(plan))
		cb_buf_adds(b, "<span class=\"muted\">not recorded</span>");
	cb_buf_adds(b, "</td></tr>\n");
	cb_fmt_pct(cb_json_int(th, "gain_ppm", 0), gain, sizeof(gain));
	cb_fmt_pct(cb_json_int(th, "regression_ppm", 0), reg, sizeof(reg));
	cb_report_fmt_share(cb_json_int(th, "confidence_ppm", 0), conf, sizeof(conf));
	h_fact_open(b, "thresholds");
	cb_buf_addf(b, "gain %s · regression %s · confidence %s · launch floor %lld", gain, reg, conf,
		    rp->v->cs.launch_floor);
	if (cb_json_str(doc, "production_default_policy")) {
		cb_buf_adds(b, " · production default ");
		cb_html_esc(b, cb_json_str(doc, "production_default_policy"));
	}
	cb_buf_adds(b, "</td></tr>\n");
	h_intervals(b, rp);
	h_aa(b, rp);
	h_identity(b, rp);
	h_fact_open(b, "run by");
	cb_buf_adds(b, "caliber ");
	h_json_inline(b, caliber);
	if (json_object_get(doc, "worker")) {
		cb_buf_adds(b, " · worker ");
		h_json_inline(b, json_object_get(doc, "worker"));
	}
	cb_buf_adds(b, " · ");
	cb_html_link(b, rp->v->root, rp->href, CB_RUN_CAMPAIGN, CB_RUN_CAMPAIGN);
	cb_buf_adds(b, " · ");
	cb_html_link(b, rp->v->root, rp->href, CB_RUN_MATRIX_CSV, CB_RUN_MATRIX_CSV);
	cb_buf_adds(b, " · ");
	cb_html_link(b, rp->v->root, rp->href, CB_SUMS_FILE, CB_SUMS_FILE);
	cb_buf_adds(b, "</td></tr>\n</table>\n</header>\n");
	json_decref(dev);
}

/* The verdict counts as coloured badges, zero counts dimmed. */
static void h_counts(struct cb_buf *b, const struct cb_report *rp)
{
	size_t i;

	cb_buf_addf(b, "<section id=\"verdicts\">\n<h2>Verdicts%s</h2>\n", rp->v->derived_dir ? " (derived)" : "");
	for (i = 0; i < sizeof(verdict_styles) / sizeof(verdict_styles[0]); i++) {
		const struct verdict_style *s = &verdict_styles[i];
		size_t n = cb_report_count_verdict(rp, s->v, 0);
		cb_buf_addf(b, "<span class=\"count v-%c%s\" data-verdict=\"%c\" data-count=\"%zu\" title=\"%s\"><b>%c</b> %zu <small>%s</small></span>\n",
			    s->v, n ? "" : " none", s->v, n, cb_verdict_meaning(s->v), s->v, n, cb_verdict_meaning(s->v));
	}
	cb_buf_adds(b, "</section>\n");
}

/* One op's layouts in HTML: "#a → #b", escaped. */
static void h_layouts(struct cb_buf *b, const struct cb_ir_op *op)
{
	cb_html_esc(b, op->src.text ? op->src.text : "?");
	cb_buf_adds(b, " → ");
	cb_html_esc(b, op->dst.text ? op->dst.text : "?");
}

/* A kernel's share of its cell's GPU time, baseline → candidate ("—" unprofiled). */
static void h_kernel_share(struct cb_buf *b, const struct cb_diff_time *tm, const struct cb_diff_kernel *kn)
{
	int r, n = 0;

	if (!tm->known) {
		cb_buf_adds(b, "<td class=\"num muted\">—</td>");
		return;
	}
	cb_buf_adds(b, "<td class=\"num\">");
	for (r = 0; r < CB_NROLES; r++) {
		if (r == CB_ROLE_CONTROL)
			continue;
		cb_buf_adds(b, n++ ? " → " : "");
		if (kn->ns[r] >= 0 && tm->gpu_ns[r] > 0)
			cb_buf_addf(b, "%.1f%%", 100 * kn->ns[r] / tm->gpu_ns[r]);
		else
			cb_buf_adds(b, "—");
	}
	cb_buf_adds(b, "</td>");
}

/* A kernel's GPU time per call, baseline → candidate, and its change. */
static void h_kernel_time(struct cb_buf *b, const struct cb_diff_time *tm, const struct cb_diff_kernel *kn)
{
	const double nb = kn->ns[CB_ROLE_BASELINE], nk = kn->ns[CB_ROLE_CANDIDATE];

	if (!tm->known || nb < 0 || nk < 0) {
		cb_buf_adds(b, "<td class=\"num muted\">—</td>");
		return;
	}
	cb_buf_addf(b, "<td class=\"num\" title=\"GPU time per call, summed over %zu profiled row%s\">%.1f → %.1f µs",
		    tm->rows, tm->rows == 1 ? "" : "s", nb / 1000, nk / 1000);
	if (nb > 0)
		cb_buf_addf(b, " <span class=\"%s\">(%+.1f%%)</span>", nk < nb ? "ok" : nk > nb ? "bad" : "muted",
			    100 * (nk / nb - 1));
	cb_buf_adds(b, "</td>");
}

/* A kernel's resources, baseline → candidate where they differ. */
static void h_kernel_resources(struct cb_buf *b, const struct cb_diff_kernel *kn)
{
	static const char *const names[] = { "regs", "spills", "shared", "stages", "warps" };
	const struct cb_resources *x = &kn->res[CB_ROLE_BASELINE], *y = &kn->res[CB_ROLE_CANDIDATE];
	const long long bv[] = { x->regs, x->spills, x->shared, x->stages, x->warps };
	const long long kv[] = { y->regs, y->spills, y->shared, y->stages, y->warps };
	size_t i;

	if (!kn->have_res[CB_ROLE_BASELINE] || !kn->have_res[CB_ROLE_CANDIDATE]) {
		cb_buf_adds(b, "<td class=\"muted\">—</td>");
		return;
	}
	cb_buf_adds(b, "<td class=\"nw\">");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		cb_buf_addf(b, "%s%s ", i ? " · " : "", names[i]);
		if (bv[i] < 0)
			cb_buf_adds(b, "?");
		else
			cb_buf_addf(b, bv[i] != kv[i] ? "<b>%lld" : "%lld", bv[i]);
		if (bv[i] != kv[i]) {
			if (kv[i] < 0)
				cb_buf_adds(b, " → ?</b>");
			else
				cb_buf_addf(b, " → %lld</b>", kv[i]);
		}
	}
	cb_buf_adds(b, "</td>");
}

/* The tasks whose GPU time moved mostly in kernels whose converts did not
 * change (cb_diff_moved), as a paragraph; nothing when there are none. */
static void h_moved(struct cb_buf *b, const struct cb_report *rp)
{
	char what[512];
	size_t i, n = 0;

	for (i = 0; i < rp->n; i++) {
		const struct cb_diff_task *t = rp->t[i].diff;
		if (!t || cb_diff_moved(rp->diff, t, what, sizeof(what)) != 1)
			continue;
		cb_buf_adds(b, n++ ? "; " : "<p id=\"time-moved\">Where the time did not follow the converts, in the "
					     "profiled replay after the timed samples: ");
		cb_buf_adds(b, "<a href=\"#t-");
		cb_html_url(b, t->id);
		cb_buf_adds(b, "\">");
		cb_html_esc(b, t->id);
		cb_buf_adds(b, "</a> ");
		cb_html_esc(b, what);
	}
	if (n)
		cb_buf_adds(b, ".</p>\n");
}

/* The summary at the top, and where the converts went: the geometric-mean
 * speedups, the diff's counts, then a row per source line of a measured
 * kernel where ops were removed or added, with the kernel's share of its
 * cell's GPU time, its time and resources (baseline → candidate), the
 * layouts of each op and links to the TTGIR of the baseline and the
 * candidate; then the tasks whose time moved mostly in kernels whose
 * converts did not change. */
static void h_changed(struct cb_buf *b, const struct cb_report *rp)
{
	struct cb_diff_summary s;
	size_t i, j, k, o, n, ng;
	long long all = cb_report_geomean_ppm(rp, 0, &n), g = cb_report_geomean_ppm(rp, 'G', &ng);
	char pa[32], pg[32];
	int r;

	cb_fmt_pct(all, pa, sizeof(pa));
	cb_fmt_pct(g, pg, sizeof(pg));
	cb_buf_adds(b, "<section id=\"changed\">\n<h2>What changed</h2>\n<p id=\"geomean\">");
	if (n)
		cb_buf_addf(b, "Speedup, geometric mean over the timed orders: <b>%s</b> over %zu task%s", pa, n,
			    n == 1 ? "" : "s");
	if (ng)
		cb_buf_addf(b, "; <b>%s</b> over the %zu G task%s", pg, ng, ng == 1 ? "" : "s");
	cb_buf_adds(b, n ? ".</p>\n" : "No task was timed.</p>\n");
	if (!rp->diff) {
		cb_buf_adds(b, "<p class=\"bad\">Topology ops not compared: the seal does not hold.</p>\n</section>\n");
		return;
	}
	cb_diff_summarize(rp->diff, &s);
	cb_buf_addf(b, "<p id=\"diff-summary\"><b>%zu task%s lost converts</b>, %zu gained some: %zu removed and %zu added "
		       "in %zu kernel%s at %zu source line%s (<code>caliber diff</code>, kernels launched more than %lld "
		       "time%s, round a).</p>\n",
		    s.tasks_lost, s.tasks_lost == 1 ? "" : "s", s.tasks_gained, s.removed, s.added, s.kernels,
		    s.kernels == 1 ? "" : "s", s.lines, s.lines == 1 ? "" : "s", rp->diff->v->floor,
		    rp->diff->v->floor == 1 ? "" : "s");
	if (!s.lines) {
		h_moved(b, rp);
		cb_buf_adds(b, "</section>\n");
		return;
	}
	cb_buf_adds(b, "<table class=\"grid changed\"><caption>Each source line of a measured kernel where topology ops "
		       "were removed or added</caption>\n<tr><th scope=\"col\">task</th><th scope=\"col\">kernel</th>"
		       "<th scope=\"col\">converts b → k</th><th scope=\"col\" class=\"num\">share of GPU time b → k</th>"
		       "<th scope=\"col\" class=\"num\">time b → k</th><th scope=\"col\">resources b → k</th>"
		       "<th scope=\"col\">source line</th><th scope=\"col\">change</th><th scope=\"col\">layouts</th>"
		       "<th scope=\"col\">TTGIR</th></tr>\n");
	for (i = 0; i < rp->n; i++) {
		const struct cb_diff_task *t = rp->t[i].diff;
		for (j = 0; t && j < t->nk; j++) {
			const struct cb_diff_kernel *kn = &t->k[j];
			for (k = 0; k < kn->nlines; k++) {
				const struct cb_diff_line *l = &kn->lines[k];
				if (!l->removed && !l->added)
					continue;
				cb_buf_adds(b, "<tr class=\"changed\" data-task=\"");
				cb_html_esc(b, t->id);
				cb_buf_adds(b, "\"><td><a href=\"#t-");
				cb_html_url(b, t->id);
				cb_buf_adds(b, "\">");
				cb_html_esc(b, t->id);
				cb_buf_adds(b, "</a></td><td><code>");
				cb_html_esc(b, kn->kernel);
				cb_buf_addf(b, "</code></td><td class=\"num\">%zu → %zu</td>", kn->ir[CB_ROLE_BASELINE].nops,
					    kn->ir[CB_ROLE_CANDIDATE].nops);
				h_kernel_share(b, &t->time, kn);
				h_kernel_time(b, &t->time, kn);
				h_kernel_resources(b, kn);
				cb_buf_adds(b, "<td><code>");
				if (l->file) {
					cb_html_esc(b, l->file);
					cb_buf_addf(b, ":%lld", l->line);
				} else {
					cb_buf_adds(b, "no location");
				}
				cb_buf_adds(b, "</code></td><td>");
				if (l->removed)
					cb_buf_addf(b, "<span class=\"ok\">%zu removed</span>", l->removed);
				if (l->added)
					cb_buf_addf(b, "%s<span class=\"bad\">%zu added</span>", l->removed ? ", " : "", l->added);
				if (l->kept)
					cb_buf_addf(b, ", %zu kept", l->kept);
				cb_buf_adds(b, "</td><td class=\"mono lay\">");
				for (o = 0; o < l->n; o++) {
					const struct cb_diff_op *op = &l->ops[o];
					cb_buf_addf(b, "%s%s ", o ? "<br>" : "", op->change == CB_CHANGE_REMOVED ? "−" :
						    op->change == CB_CHANGE_ADDED ? "+" : "=");
					h_layouts(b, op->base ? op->base : op->cand);
					if (op->base && op->cand) {
						cb_buf_adds(b, " <span class=\"muted\">(candidate ");
						h_layouts(b, op->cand);
						cb_buf_adds(b, ")</span>");
					}
				}
				cb_buf_adds(b, "</td><td>");
				for (r = 0; r < CB_NROLES; r++) {
					if (!kn->ttgir[r] || r == CB_ROLE_CONTROL)
						continue;
					cb_buf_adds(b, r ? " · " : "");
					cb_html_link(b, rp->v->root, rp->href, kn->ttgir[r], cb_role_name((enum cb_role)r));
				}
				cb_buf_adds(b, "</td></tr>\n");
			}
		}
	}
	cb_buf_adds(b, "</table>\n");
	h_moved(b, rp);
	cb_buf_adds(b, "</section>\n");
}

/* Round a's median per row and cell, "b / c / k" µs, one row a line
 * (its shape in the title). */
static void h_row_times(struct cb_buf *b, const struct cb_report_task *t)
{
	size_t i;
	int r;

	if (!t->ntimes[CB_ORDER_A]) {
		cb_buf_adds(b, "<td class=\"num muted\">—</td>");
		return;
	}
	cb_buf_adds(b, "<td class=\"num\">");
	for (i = 0; i < t->ntimes[CB_ORDER_A]; i++) {
		const struct cb_report_row *row = &t->rows[CB_ORDER_A][i];
		cb_buf_adds(b, i ? "<br><span title=\"" : "<span title=\"");
		cb_html_esc(b, row->label);
		cb_buf_adds(b, "\">");
		for (r = 0; r < CB_NROLES; r++) {
			cb_buf_adds(b, r ? " / " : "");
			if (row->cell[r].median_ns < 0)
				cb_buf_adds(b, "—");
			else
				cb_buf_addf(b, "%.2f", row->cell[r].median_ns / 1000.0);
		}
		cb_buf_adds(b, "</span>");
	}
	cb_buf_adds(b, "</td>");
}

/* The verdict matrix: one row per task, the verdict cell coloured with its
 * reason as title, then code, topology, both orders, timer and reason. */
static void h_matrix(struct cb_buf *b, const struct cb_report *rp)
{
	size_t i;
	int o;

	cb_buf_adds(b, "<section id=\"matrix\">\n<h2>Verdict matrix</h2>\n<table class=\"grid matrix\">\n"
		       "<caption>One row per task, sorted by verdict and then by effect</caption>\n<tr><th scope=\"col\">task</th>");
	cb_buf_adds(b, rp->v->derived_dir ? "<th scope=\"col\">sealed</th><th scope=\"col\">derived</th>" : "<th scope=\"col\">verdict</th>");
	cb_buf_adds(b, "<th scope=\"col\">code</th><th scope=\"col\" class=\"nw\">topology b/c/k</th><th scope=\"col\" class=\"num\">round a</th><th scope=\"col\" class=\"num\">round b</th><th scope=\"col\" class=\"num\">round a median µs b / c / k</th><th scope=\"col\">timer</th><th scope=\"col\">reason</th></tr>\n");
	for (i = 0; i < rp->n; i++) {
		const struct cb_report_task *t = &rp->t[i];
		char topo[160], timer[32];

		cb_buf_adds(b, "<tr class=\"task\" data-task=\"");
		cb_html_esc(b, t->sealed.id);
		cb_buf_addf(b, "\" data-verdict=\"%c\"", cb_report_verdict(t));
		if (t->derived)
			cb_buf_addf(b, " data-sealed=\"%c\"", t->sealed.verdict);
		cb_buf_adds(b, "><td><a href=\"#t-");
		cb_html_url(b, t->sealed.id);
		cb_buf_adds(b, "\">");
		cb_html_esc(b, t->sealed.id);
		cb_buf_addf(b, "</a></td><td class=\"verdict v-%c\" title=\"", t->sealed.verdict);
		cb_html_esc(b, t->sealed.reason);
		cb_buf_addf(b, "\">%c</td>", t->sealed.verdict);
		if (t->derived) {
			cb_buf_addf(b, "<td class=\"verdict v-%c\" title=\"", t->dverdict);
			cb_html_esc(b, t->dreason);
			cb_buf_addf(b, "\">%c%s</td>", t->dverdict, t->changed ? " <small>changed</small>" : "");
		}
		cb_buf_adds(b, "<td class=\"nw\">");
		cb_html_esc(b, cb_report_code(t));
		cb_report_fmt_topology_col(t, 1, topo, sizeof(topo));
		cb_buf_adds(b, "</td><td class=\"mono nw\">");
		cb_html_esc(b, topo);
		cb_buf_adds(b, "</td>");
		for (o = 0; o < CB_NORDERS; o++) {
			char p[32], l[32], h[32];
			if (!t->sealed.present[o]) {
				cb_buf_adds(b, "<td class=\"num muted\">—</td>");
				continue;
			}
			cb_fmt_pct(t->sealed.speedup_ppm[o], p, sizeof(p));
			cb_fmt_pct(t->sealed.lo_ppm[o], l, sizeof(l));
			cb_fmt_pct(t->sealed.hi_ppm[o], h, sizeof(h));
			cb_buf_addf(b, "<td class=\"num\">%s<br><small class=\"muted\">[%s, %s]</small></td>", p, l, h);
		}
		h_row_times(b, t);
		cb_report_fmt_timer(&t->sealed, "—", timer, sizeof(timer));
		cb_buf_addf(b, "<td>%s</td><td class=\"reason t-%c\">", timer, cb_report_verdict(t));
		cb_html_esc(b, cb_report_reason(t));
		cb_buf_adds(b, "</td></tr>\n");
	}
	cb_buf_adds(b, "</table>\n</section>\n");
}

/* The HTML report, one self-contained page. */
void cb_report_html(struct cb_buf *b, const struct cb_report *rp)
{
	size_t i;

	cb_buf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>caliber report: ");
	cb_html_esc(b, rp->v->cs.campaign);
	cb_buf_adds(b, " (");
	cb_html_esc(b, rp->v->cs.selection);
	cb_buf_adds(b, rp->v->derived_dir ? ", derived" : "");
	cb_buf_adds(b, ")</title>\n");
	h_style(b);
	cb_buf_adds(b, "</head>\n<body>\n");
	h_header(b, rp);
	h_counts(b, rp);
	h_changed(b, rp);
	cb_report_plots(b, rp);
	h_matrix(b, rp);
	cb_buf_adds(b, "<section id=\"tasks\">\n<h2>Tasks</h2>\n");
	for (i = 0; i < rp->n; i++)
		cb_report_task_html(b, rp, &rp->t[i]);
	cb_buf_adds(b, "</section>\n<footer><p class=\"muted\">Written by <code>caliber report</code> from the receipts of this run; "
		       "links are relative to this file. A campaign proves dispatch correctness of its frozen corpus on "
		       "its device at its commits, its layout-topology response and its device-event latency, nothing "
		       "more.</p></footer>\n</body>\n</html>\n");
}

