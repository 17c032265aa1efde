/* report_words.c: the figures of a report's model (report.h) as words,
 * shared by every renderer: shares, speedups and intervals, timers,
 * topologies, what the intervals resample, the A/A lines and the mean
 * effect. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account/aa.h"
#include "base/jsonio.h"
#include "report.h"

/* The free A/A and the pre-screen of the run in words (report.h). */
void cb_report_fmt_identity(const struct cb_report *rp, char *aa, size_t aa_cap, char *screen, size_t screen_cap)
{
	struct cb_free_aa f = { 0, 0, 0, 0 };
	char line[160];
	size_t i;

	for (i = 0; i < rp->n; i++)
		cb_free_aa_add(&f, &rp->t[i].sealed);
	cb_free_aa_line(&f, line, sizeof(line));
	snprintf(aa, aa_cap, "%s", f.known ? line : "");
	if (json_is_true(json_object_get(rp->v->cs.doc, "prescreen")))
		snprintf(screen, screen_cap, "%zu of %zu tasks not timed (identical binaries)", f.screened, rp->n);
	else
		snprintf(screen, screen_cap, "%s", "");
}

/* The geometric mean effect of the timed tasks of verdict v (report.h). */
long long cb_report_geomean_ppm(const struct cb_report *rp, char v, size_t *n)
{
	double sum = 0;
	size_t i;

	*n = 0;
	for (i = 0; i < rp->n; i++)
		if (rp->t[i].timed && (!v || cb_report_verdict(&rp->t[i]) == v)) {
			sum += log1p(rp->t[i].effect);
			(*n)++;
		}
	return *n ? llround(expm1(sum / (double)*n) * 1e6) : 0;
}


/* ------------------------------------------------------------------ */
/* Figures as words                                                     */

/* "95%" from parts per million, with hundredths only when needed. */
void cb_report_fmt_share(long long ppm, char *out, size_t cap)
{
	if (ppm % 10000 == 0) {
		snprintf(out, cap, "%lld%%", ppm / 10000);
		return;
	}
	cb_fmt_pct(ppm, out, cap);
	if (out[0] == '+')
		memmove(out, out + 1, strlen(out));
}

/* "3/3/1" (baseline/control/candidate), or none when not joinable. */
static void fmt_topology(int have, const long long *topo, const char *none, char *out, size_t cap)
{
	if (have)
		snprintf(out, cap, "%lld/%lld/%lld", topo[CB_ROLE_BASELINE], topo[CB_ROLE_CONTROL],
			 topo[CB_ROLE_CANDIDATE]);
	else
		snprintf(out, cap, "%s", none);
}

/* One order's speedup and interval. Markdown keeps the matrix's form
 * ("+5.23% [+4.90%, +5.61%]"); text drops the % signs (the header has
 * them) and the blank after the comma so that a row fits 100 columns, and
 * right-aligns each number to width w so that the decimal points line up. */
void cb_report_fmt_order(const struct cb_task_result *r, int o, int md, int w, char *out, size_t cap)
{
	char p[32], lo[32], hi[32];

	if (!r->present[o]) {
		snprintf(out, cap, "%s", md ? "—" : "-");
		return;
	}
	cb_fmt_pct(r->speedup_ppm[o], p, sizeof(p));
	cb_fmt_pct(r->lo_ppm[o], lo, sizeof(lo));
	cb_fmt_pct(r->hi_ppm[o], hi, sizeof(hi));
	if (md) {
		snprintf(out, cap, "%s [%s, %s]", p, lo, hi);
		return;
	}
	p[strlen(p) - 1] = lo[strlen(lo) - 1] = hi[strlen(hi) - 1] = '\0';
	snprintf(out, cap, "%*s [%*s,%*s]", w, p, w, lo, w, hi);
}


/* The timer of the timed orders: "graph", or "graph/direct" when round a
 * and round b differ. */
void cb_report_fmt_timer(const struct cb_task_result *r, const char *none, char *out, size_t cap)
{
	if (r->present[CB_ORDER_A] && r->present[CB_ORDER_B] &&
	    strcmp(r->timer[CB_ORDER_A], r->timer[CB_ORDER_B]) != 0)
		snprintf(out, cap, "%s/%s", r->timer[CB_ORDER_A], r->timer[CB_ORDER_B]);
	else if (r->present[CB_ORDER_A] || r->present[CB_ORDER_B])
		snprintf(out, cap, "%s", r->timer[r->present[CB_ORDER_A] ? CB_ORDER_A : CB_ORDER_B]);
	else
		snprintf(out, cap, "%s", none);
}

/* "3" or "3 to 5": a range of counts. */
static void fmt_range(size_t lo, size_t hi, char *out, size_t cap)
{
	if (lo == hi)
		snprintf(out, cap, "%zu", lo);
	else
		snprintf(out, cap, "%zu to %zu", lo, hi);
}

/* What the outer level of the bootstrap samples under worker w (a
 * campaign receipt's "worker"): its session_unit, else what its mode
 * implies (runs sealed before the unit was recorded ran persistent or
 * isolated workers); NULL when w does not say. */
static const char *worker_unit(const json_t *w)
{
	const char *unit = cb_json_str(w, "session_unit"), *mode = cb_json_str(w, "mode");

	if (unit || !mode)
		return unit;
	return strcmp(mode, "isolate") == 0 ? "worker-process" : "session-in-persistent-process";
}

/* What the outer level samples in this run: by the campaign receipt's
 * worker, or in a merged run by its shards' when they agree; NULL when the
 * receipts do not say (runs of the test tools) or the shards differ. */
static const char *session_unit(const struct cb_report *rp)
{
	const json_t *shards = json_object_get(rp->v->cs.doc, "shards"), *sh;
	const char *unit = NULL;
	size_t i;

	if (json_object_get(rp->v->cs.doc, "worker") || !json_array_size(shards))
		return worker_unit(json_object_get(rp->v->cs.doc, "worker"));
	json_array_foreach(shards, i, sh) {
		const char *u = worker_unit(json_object_get(sh, "worker"));
		if (!u || (unit && strcmp(u, unit) != 0))
			return NULL;
		unit = u;
	}
	return unit;
}

/* What the run's intervals resample, in words (report.h). */
void cb_report_fmt_intervals(const struct cb_report *rp, int utf8, char *out, size_t cap)
{
	size_t i, smin = 0, smax = 0, rmin = 0, rmax = 0;
	const char *unit = session_unit(rp), *level;
	char conf[32], sessions[48], repeats[48];
	int o, r, one;

	for (i = 0; i < rp->n; i++) {
		const struct cb_report_task *t = &rp->t[i];
		for (o = 0; o < CB_NORDERS; o++)
			for (r = 0; t->sealed.present[o] && r < CB_NROLES; r++) {
				size_t k = t->clocks[o][r].sessions;
				smin = !smax || k < smin ? k : smin;
				smax = k > smax ? k : smax;
			}
		if (t->repeats_max) {
			rmin = !rmax || t->repeats_min < rmin ? t->repeats_min : rmin;
			rmax = t->repeats_max > rmax ? t->repeats_max : rmax;
		}
	}
	cb_fmt_share(cb_json_int(cb_report_thresholds(rp), "confidence_ppm", 0), conf, sizeof(conf));
	if (!smax) {
		snprintf(out, cap, "%s, no order timed; %lld bootstrap resamples", conf, rp->v->cs.resamples);
		return;
	}
	fmt_range(smin, smax, sessions, sizeof(sessions));
	fmt_range(rmin, rmax, repeats, sizeof(repeats));
	one = smax == 1;
	if (unit && strcmp(unit, "worker-process") == 0)
		level = one ? "worker process" : "worker processes";
	else if (unit)
		level = one ? "session of one worker process" : "sessions of one worker process";
	else
		level = one ? "session" : "sessions";
	snprintf(out, cap, "%s over %s %s %s %s repeats, %lld bootstrap resamples%s", conf, sessions, level,
		 utf8 ? "×" : "x", repeats, rp->v->cs.resamples,
		 unit && strcmp(unit, "worker-process") != 0 ? " (the process is not sampled)" : "");
}

/* The run's A/A line, from the sealed results of its tasks. */
void cb_report_fmt_aa(const struct cb_report *rp, char *out, size_t cap)
{
	struct cb_aa_count c;
	size_t i;

	memset(&c, 0, sizeof(c));
	for (i = 0; i < rp->n; i++)
		cb_aa_count_add(&c, &rp->t[i].sealed);
	cb_aa_line(&c, out, cap);
}

/* How many tasks have verdict v: the sealed verdicts, or the shown ones. */
size_t cb_report_count_verdict(const struct cb_report *rp, char v, int sealed)
{
	size_t i, n = 0;

	for (i = 0; i < rp->n; i++)
		n += (sealed ? rp->t[i].sealed.verdict : cb_report_verdict(&rp->t[i])) == v;
	return n;
}

/* The topology column: one triplet, or "sealed -> derived" when they differ. */
void cb_report_fmt_topology_col(const struct cb_report_task *t, int md, char *out, size_t cap)
{
	const char *none = md ? "—" : "-";
	char s[64], d[64];

	fmt_topology(t->sealed.have_topology, t->sealed.topology, none, s, sizeof(s));
	if (!t->derived) {
		snprintf(out, cap, "%s", s);
		return;
	}
	fmt_topology(t->dhave_topology, t->dtopology, none, d, sizeof(d));
	if (strcmp(s, d) == 0)
		snprintf(out, cap, "%s", s);
	else
		snprintf(out, cap, "%s%s%s", s, md ? " → " : "->", d);
}
