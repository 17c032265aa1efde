/* report_svg.c: the report's plots as inline SVG: the forest plot of every
 * task's speedup and interval in both orders, and the topology of every
 * task by cell, side by side on the same rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "base/jsonio.h"
#include "report.h"
#include "report_svg.h"

/* Forest-plot geometry; the topology plot shares the rows so that the two
 * figures read side by side. */
enum {
	ROW_H = 24, PLOT_TOP = 44, PLOT_BOTTOM = 40,
	FP_W = 890, FP_LABEL = 160, FP_RIGHT = 120,
	TP_W = 330, TP_LABEL = 150, TP_RIGHT = 40
};

/* Speedups span +-0.1% and +300% in one run: the x axis is symmetric
 * logarithmic, linear within +-SYMLOG_PPM and logarithmic beyond, so both
 * stay readable. */
#define SYMLOG_PPM 1000.0

/* The symmetric log of a speedup in ppm: sign(x) log10(1 + |x| / SYMLOG_PPM). */
static double symlog(double ppm)
{
	return ppm < 0 ? -log10(1.0 - ppm / SYMLOG_PPM) : log10(1.0 + ppm / SYMLOG_PPM);
}

/* The forest plot's x axis: symlog values s0..s1 onto pixels x0..x0+w. */
struct xscale {
	double s0, s1, x0, w;
};

/* Pixel x of a speedup in ppm. */
static double xpos(const struct xscale *x, double ppm)
{
	return x->x0 + (symlog(ppm) - x->s0) / (x->s1 - x->s0) * x->w;
}

/* The row label: the verdict as a coloured letter, then the task id. */
static void svg_row_label(struct cb_buf *b, const struct cb_report_task *t, double cy, int band, int width)
{
	if (band)
		cb_buf_addf(b, "<rect x=\"0\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"#f6f8fa\"/>\n",
			    cy - ROW_H / 2.0, width, ROW_H);
	cb_buf_addf(b, "<rect class=\"v-%c\" x=\"4\" y=\"%.1f\" width=\"16\" height=\"16\" rx=\"3\"/>"
		       "<text x=\"12\" y=\"%.1f\" fill=\"#fff\" font-size=\"11\" font-weight=\"700\" text-anchor=\"middle\">%c</text>"
		       "<text x=\"26\" y=\"%.1f\" font-size=\"12\">",
		    cb_report_verdict(t), cy - 8, cy + 4, cb_report_verdict(t), cy + 4);
	cb_html_esc(b, t->sealed.id);
	cb_buf_adds(b, "</text>\n");
}

/* Tick label of a decade on the symlog axis. */
static void tick_label(long long ppm, char *out, size_t cap)
{
	if (ppm == 0)
		snprintf(out, cap, "0");
	else if (ppm == 1000 || ppm == -1000)
		snprintf(out, cap, "%c0.1%%", ppm < 0 ? '-' : '+');
	else
		snprintf(out, cap, "%c%lld%%", ppm < 0 ? '-' : '+', (ppm < 0 ? -ppm : ppm) / 10000);
}

/* The forest plot: per task and timed order, the speedup (a: filled, b:
 * hollow) with its interval, the A/A deviation as a grey band around zero,
 * and the gain and regression thresholds. */
static void svg_forest(struct cb_buf *b, const struct cb_report *rp)
{
	static const long long ticks[] = { -1000000, -100000, -10000, -1000, 0, 1000, 10000, 100000, 1000000,
					   10000000, 100000000 };
	const json_t *th = cb_report_thresholds(rp);
	long long gain = cb_json_int(th, "gain_ppm", 0), reg = cb_json_int(th, "regression_ppm", 0);
	double lo = (double)(reg < 0 ? reg : 0), hi = (double)(gain > 0 ? gain : 0);
	int height = PLOT_TOP + (int)rp->n * ROW_H + PLOT_BOTTOM, o;
	struct xscale x;
	size_t i, k;

	for (i = 0; i < rp->n; i++)
		for (o = 0; o < CB_NORDERS; o++)
			if (rp->t[i].sealed.present[o]) {
				lo = fmin(lo, (double)rp->t[i].sealed.lo_ppm[o]);
				hi = fmax(hi, (double)rp->t[i].sealed.hi_ppm[o]);
			}
	/* The axis reaches the labelled decade beyond the furthest interval on
	 * each side, so every mark lies between two labelled ticks (a +300 %
	 * gain used to sit past the last label, +100 %). */
	for (k = 0; k < sizeof(ticks) / sizeof(ticks[0]); k++)
		if ((double)ticks[k] >= hi) {
			hi = (double)ticks[k];
			break;
		}
	for (k = sizeof(ticks) / sizeof(ticks[0]); k-- > 0;)
		if ((double)ticks[k] <= lo) {
			lo = (double)ticks[k];
			break;
		}
	x.s0 = symlog(lo) - 0.15;
	x.s1 = symlog(hi) + 0.15;
	x.x0 = FP_LABEL;
	x.w = FP_W - FP_LABEL - FP_RIGHT;
	cb_buf_addf(b, "<svg id=\"forest\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"speedup of every task in both orders\">\n",
		    FP_W, height, FP_W, height);
	/* Legend. */
	cb_buf_addf(b, "<text x=\"4\" y=\"14\" font-size=\"12\" font-weight=\"600\">speedup of the candidate over the baseline, %d%% interval</text>\n",
		    (int)(cb_json_int(th, "confidence_ppm", 950000) / 10000));
	cb_buf_adds(b, "<circle cx=\"548\" cy=\"10\" r=\"4\" fill=\"#57606a\" stroke=\"#57606a\"/><text x=\"556\" y=\"14\" font-size=\"11\">round a</text>"
		       "<circle cx=\"616\" cy=\"10\" r=\"4\" fill=\"#fff\" stroke=\"#57606a\" stroke-width=\"1.5\"/><text x=\"624\" y=\"14\" font-size=\"11\">round b</text>"
		       "<rect x=\"680\" y=\"7\" width=\"14\" height=\"6\" fill=\"#e6eaef\"/><text x=\"698\" y=\"14\" font-size=\"11\">±A/A deviation</text>\n");
	/* Grid, ticks and thresholds. */
	for (k = 0; k < sizeof(ticks) / sizeof(ticks[0]); k++) {
		double tx = xpos(&x, (double)ticks[k]);
		char label[32];
		if (symlog((double)ticks[k]) < x.s0 || symlog((double)ticks[k]) > x.s1)
			continue;
		tick_label(ticks[k], label, sizeof(label));
		cb_buf_addf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"1\"/>"
			       "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\" fill=\"#57606a\">%s</text>\n",
			    tx, tx, PLOT_TOP, height - PLOT_BOTTOM, ticks[k] ? "#eaeef2" : "#8c959f", tx,
			    height - PLOT_BOTTOM + 14, label);
	}
	cb_buf_addf(b, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\" fill=\"#57606a\">speedup (symmetric log scale, linear within ±0.1%%)</text>\n",
		    x.x0 + x.w / 2, height - 8);
	for (k = 0; k < 2; k++) {
		long long v = k ? reg : gain;
		double tx = xpos(&x, (double)v);
		char p[32];
		cb_fmt_pct(v, p, sizeof(p));
		cb_buf_addf(b, "<line class=\"threshold\" data-threshold=\"%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-dasharray=\"4 3\"/>"
			       "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"%s\" fill=\"%s\">%s %s</text>\n",
			    k ? "regression" : "gain", tx, tx, PLOT_TOP - 4, height - PLOT_BOTTOM,
			    k ? "#cf222e" : "#1a7f37", k ? tx - 3 : tx + 3, PLOT_TOP - 8, k ? "end" : "start",
			    k ? "#cf222e" : "#1a7f37", k ? "regression" : "gain", p);
	}
	for (i = 0; i < rp->n; i++) {
		const struct cb_report_task *t = &rp->t[i];
		const struct cb_task_result *r = &t->sealed;
		double cy = PLOT_TOP + ROW_H * (double)i + ROW_H / 2.0;
		char v = cb_report_verdict(t);

		svg_row_label(b, t, cy, (int)(i % 2), FP_W);
		if (!r->present[CB_ORDER_A] && !r->present[CB_ORDER_B])
			cb_buf_addf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#57606a\">not timed</text>\n",
				    xpos(&x, 0) + 6, cy + 4);
		for (o = 0; o < CB_NORDERS; o++) {
			double y = cy + (o ? 5 : -5), aa = (double)r->aa_ppm[o];
			char p[32], l[32], h[32], a[32];
			if (!r->present[o])
				continue;
			cb_fmt_pct(r->speedup_ppm[o], p, sizeof(p));
			cb_fmt_pct(r->lo_ppm[o], l, sizeof(l));
			cb_fmt_pct(r->hi_ppm[o], h, sizeof(h));
			cb_report_fmt_share(r->aa_ppm[o], a, sizeof(a));
			cb_buf_addf(b, "<rect class=\"aa\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"4\" fill=\"#e6eaef\"/>",
				    xpos(&x, -aa), y - 2, xpos(&x, aa) - xpos(&x, -aa));
			cb_buf_addf(b, "<line class=\"ci v-%c\" data-task=\"", v);
			cb_html_esc(b, r->id);
			cb_buf_addf(b, "\" data-order=\"%c\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke-width=\"2\"/>",
				    o ? 'b' : 'a', xpos(&x, (double)r->lo_ppm[o]), xpos(&x, (double)r->hi_ppm[o]), y, y);
			cb_buf_addf(b, "<circle class=\"pt%s v-%c\" data-task=\"", o ? " ob" : "", v);
			cb_html_esc(b, r->id);
			cb_buf_addf(b, "\" data-order=\"%c\" data-speedup-ppm=\"%lld\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" stroke-width=\"1.5\"><title>",
				    o ? 'b' : 'a', r->speedup_ppm[o], xpos(&x, (double)r->speedup_ppm[o]), y);
			cb_html_esc(b, r->id);
			cb_buf_addf(b, ", round %c: %s [%s, %s], A/A %s, %s timer</title></circle>", o ? 'b' : 'a', p,
				    l, h, a, r->timer[o]);
			/* The figure itself at the right: a log axis hides +321% vs +339%. */
			cb_buf_addf(b, "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\" fill=\"#57606a\">%c %s</text>\n",
				    FP_W - 6, y + 3.5, o ? 'b' : 'a', p);
		}
	}
	cb_buf_adds(b, "</svg>\n");
}

/* The topology plot: per task, the scoped count of each cell as a bar
 * (baseline, control, candidate), at the derived floor for a derived run. */
static void svg_topology(struct cb_buf *b, const struct cb_report *rp)
{
	int height = PLOT_TOP + (int)rp->n * ROW_H + PLOT_BOTTOM, r;
	double w = TP_W - TP_LABEL - TP_RIGHT;
	long long max = 1;
	size_t i;

	for (i = 0; i < rp->n; i++)
		for (r = 0; r < CB_NROLES; r++)
			if (rp->t[i].cell_have[r] && rp->t[i].cell_count[r] > max)
				max = rp->t[i].cell_count[r];
	cb_buf_addf(b, "<svg id=\"topology\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"topology per cell of every task\">\n",
		    TP_W, height, TP_W, height);
	cb_buf_addf(b, "<text x=\"4\" y=\"14\" font-size=\"12\" font-weight=\"600\">topology (scoped count, floor %lld)</text>\n",
		    rp->v->derived_dir ? rp->v->floor : rp->v->cs.launch_floor);
	for (r = 0; r < CB_NROLES; r++)
		cb_buf_addf(b, "<rect class=\"r-%s\" x=\"%d\" y=\"24\" width=\"10\" height=\"8\"/><text x=\"%d\" y=\"32\" font-size=\"11\">%s</text>\n",
			    cb_role_name((enum cb_role)r), 4 + r * 90, 18 + r * 90, cb_role_name((enum cb_role)r));
	cb_buf_addf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#8c959f\"/>"
		       "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\" fill=\"#57606a\">0</text>"
		       "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\" fill=\"#57606a\">%lld</text>\n",
		    TP_LABEL, TP_LABEL, PLOT_TOP, height - PLOT_BOTTOM, TP_LABEL, height - PLOT_BOTTOM + 14,
		    TP_LABEL + w, height - PLOT_BOTTOM + 14, max);
	for (i = 0; i < rp->n; i++) {
		const struct cb_report_task *t = &rp->t[i];
		double cy = PLOT_TOP + ROW_H * (double)i + ROW_H / 2.0;

		svg_row_label(b, t, cy, (int)(i % 2), TP_W);
		for (r = 0; r < CB_NROLES; r++) {
			long long c = t->cell_count[r];
			int have = t->cell_have[r];
			double y = cy - 9 + 6 * r, bw = have ? fmax(1.5, (double)c / (double)max * w) : 8;

			cb_buf_addf(b, "<rect class=\"topo r-%s%s\" data-task=\"", cb_role_name((enum cb_role)r),
				    have ? "" : " none");
			cb_html_esc(b, t->sealed.id);
			if (have)
				cb_buf_addf(b, "\" data-cell=\"%s\" data-count=\"%lld\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"5\"><title>%s: %lld</title></rect>",
					    cb_role_name((enum cb_role)r), c, TP_LABEL, y, bw, cb_role_name((enum cb_role)r), c);
			else
				cb_buf_addf(b, "\" data-cell=\"%s\" data-count=\"\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"5\" fill-opacity=\"0.25\"><title>%s: no topology</title></rect>",
					    cb_role_name((enum cb_role)r), TP_LABEL, y, bw, cb_role_name((enum cb_role)r));
		}
		cb_buf_addf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#57606a\">", TP_LABEL + w + 4, cy + 4);
		for (r = 0; r < CB_NROLES; r++) {
			cb_buf_adds(b, r ? "/" : "");
			if (t->cell_have[r])
				cb_buf_addf(b, "%lld", t->cell_count[r]);
			else
				cb_buf_adds(b, "–");
		}
		cb_buf_adds(b, "</text>\n");
	}
	cb_buf_adds(b, "</svg>\n");
}

/* Topology and forest plot side by side, rows aligned, with a caption. */
void cb_report_plots(struct cb_buf *b, const struct cb_report *rp)
{
	cb_buf_adds(b, "<section id=\"plots\">\n<h2>Topology and speedup</h2>\n<div class=\"plots\">\n<figure>\n");
	svg_topology(b, rp);
	cb_buf_adds(b, "</figure>\n<figure>\n");
	svg_forest(b, rp);
	cb_buf_adds(b, "<figcaption>Each dot is a task's geometric-mean speedup in one order (round a in manifest order, "
		       "round b reversed, timed only when the candidate's topology is below the baseline's); the bar is "
		       "its bootstrap interval. A verdict G needs both intervals right of the gain line and beyond the "
		       "A/A deviation; R both left of the regression line.</figcaption>\n</figure>\n</div>\n</section>\n");
}
