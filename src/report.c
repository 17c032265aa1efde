/* report.c: `caliber report RUN [--format text|md|html] [-o FILE]
 * [--fail-on VERDICTS]`: what a sealed run, or a derived run written by
 * reaccount, found: for a terminal (text), a pull request (Markdown) or a
 * browser (one self-contained HTML file with inline CSS and SVG).
 *
 * Everything shown comes from the receipts and the files the worker left;
 * the report adds nothing but sample medians and layout, and never the time
 * or a path of the machine it runs on, so the same run gives the same bytes.
 * The seal is checked again (cb_verify) and its status stated, never
 * assumed: a report of a run whose seal does not hold says so first. */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmd.h"
#include "fsutil.h"
#include "jsonio.h"
#include "opts.h"
#include "receipt.h"
#include "seal.h"

/* Moved here from runner.c unchanged, so that run and report read --fail-on
 * alike (report.h). */
int cb_fail_on_parse(const char *s, char set[8], struct cb_err *err)
{
	size_t n = 0;

	set[0] = '\0';
	for (; s && *s; s++) {
		if (*s == ',' || *s == ' ')
			continue;
		if (!strchr("XKBGRC", *s) || n >= 6)
			return cb_fail(err, "--fail-on: '%c' is not a verdict (X, K, B, G, R, C)", *s);
		set[n++] = *s;
		set[n] = '\0';
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The run as the report sees it                                       */

/* Verdicts in the order a reader scans them: what gained first, what
 * could not be assessed last. */
static const char verdict_order[] = "GCBRKX";

/* One task: its sealed receipt and, in a derived run, what reaccount made
 * of it. */
struct rtask {
	struct cb_task_result sealed;   /* from tasks/<id>/task.json */
	json_t *doc;                    /* that receipt, for the figures the result leaves out */
	int derived;                    /* a derived verdict exists (derived run) */
	char dverdict;
	const char *dcode, *dreason;    /* borrowed from derived.json */
	int dhave_topology;
	long long dtopology[CB_NROLES];
	int changed;                    /* verdict or counts differ from the seal */
	const json_t *dexcluded;        /* variants left out at the new floor, per role */
	int cell_have[CB_NROLES];       /* the topology plot: per cell, the count shown, */
	long long cell_count[CB_NROLES];/* the sealed one, or the derived at its floor */
};

/* Everything a report is written from; zeroed is empty. */
struct report {
	const char *root;               /* the run root, as the files are opened */
	const char *derived_dir;        /* NULL for a sealed run */
	json_t *dj;                     /* derived.json */
	long long floor, sealed_floor;  /* derived run: new and sealed launch floor */
	struct cb_campaign_summary cs;
	struct rtask *t;
	size_t n;
	char seal[CB_ERR_MAX];          /* the seal's status in words */
	char *href;                     /* the run root seen from where the report goes */
	char *dhref;                    /* the derived folder, likewise */
};

/* The verdict, code and reason a task is shown and gated by: the derived
 * ones in a derived run, else the sealed ones. */
static char verdict_of(const struct rtask *t)
{
	return t->derived ? t->dverdict : t->sealed.verdict;
}

static const char *code_of(const struct rtask *t)
{
	return t->derived ? t->dcode : t->sealed.code;
}

static const char *reason_of(const struct rtask *t)
{
	return t->derived ? t->dreason : t->sealed.reason;
}

/* Free what the report holds and zero it. */
static void report_release(struct report *rp)
{
	size_t i;

	for (i = 0; rp->t && i < rp->n; i++) {
		cb_task_result_release(&rp->t[i].sealed);
		json_decref(rp->t[i].doc);
	}
	free(rp->t);
	json_decref(rp->dj);
	cb_campaign_summary_free(&rp->cs);
	free(rp->href);
	free(rp->dhref);
	memset(rp, 0, sizeof(*rp));
}

/* Whether dir holds the named file. */
static int has_file(const char *dir, const char *name)
{
	char *p = cb_path_join(dir, name);
	int r = p && cb_exists(p);

	free(p);
	return r;
}

/* Read tasks/<id>/task.json of every task the campaign receipt lists. */
static int load_tasks(struct report *rp, struct cb_err *err)
{
	size_t i;
	int r;

	rp->t = calloc(rp->cs.ntasks ? rp->cs.ntasks : 1, sizeof(*rp->t));
	if (!rp->t)
		return cb_fail(err, "out of memory");
	rp->n = rp->cs.ntasks;
	for (i = 0; i < rp->n; i++) {
		const char *id = rp->cs.tasks[i].id;
		char *p;
		int rc;

		if (!cb_is_ident(id))
			return cb_fail(err, "%s/campaign.json: tasks[%zu]: '%s' is not a task name", rp->root, i, id);
		p = cb_strdupf("%s/tasks/%s/task.json", rp->root, id);
		if (!p)
			return cb_fail(err, "out of memory");
		rp->t[i].doc = cb_json_load_file(p, err);
		rc = rp->t[i].doc ? cb_task_result_from_json(rp->t[i].doc, p, &rp->t[i].sealed, err) : -1;
		if (rc == 0 && strcmp(rp->t[i].sealed.id, id) != 0)
			rc = cb_fail(err, "%s: names task '%s', the campaign receipt '%s'", p, rp->t[i].sealed.id, id);
		free(p);
		if (rc < 0)
			return -1;
		for (r = 0; r < CB_NROLES; r++) {
			const json_t *tp = json_object_get(json_object_get(rp->t[i].doc, "topology"),
							   cb_role_name((enum cb_role)r));
			rp->t[i].cell_have[r] = json_is_true(json_object_get(tp, "joinable"));
			rp->t[i].cell_count[r] = cb_json_int(tp, "scoped", 0);
		}
	}
	return 0;
}

/* Read DIR/derived.json and find the run root it was derived from: --run
 * when given, else its run.root seen from the current directory. */
static int load_derived(struct report *rp, const char *dir, const char *run, struct cb_err *err)
{
	char *p = cb_path_join(dir, "derived.json");
	const json_t *r;
	const char *schema, *root;
	int rc = -1;

	if (!p)
		return cb_fail(err, "out of memory");
	rp->derived_dir = dir;
	rp->dj = cb_json_load_file(p, err);
	if (!rp->dj)
		goto out;
	schema = cb_json_str(rp->dj, "schema");
	if (!schema || strcmp(schema, CB_DERIVED_SCHEMA) != 0) {
		cb_fail(err, "%s: schema: expected '%s', got '%s'", p, CB_DERIVED_SCHEMA, schema ? schema : "(none)");
		goto out;
	}
	r = json_object_get(rp->dj, "run");
	root = cb_json_str(r, "root");
	rp->floor = cb_json_int(rp->dj, "floor", -1);
	rp->sealed_floor = cb_json_int(r, "sealed_floor", -1);
	if (!root || !cb_json_str(r, "campaign") || !cb_json_str(r, "manifest_sha256") || rp->floor < 0 ||
	    rp->sealed_floor < 0 || !json_is_array(json_object_get(rp->dj, "tasks"))) {
		cb_fail(err, "%s: not a complete derived receipt (run.root, run.campaign, run.manifest_sha256, run.sealed_floor, floor, tasks)",
			p);
		goto out;
	}
	rp->root = run ? run : root;
	if (!cb_is_dir(rp->root) || !has_file(rp->root, "campaign.json")) {
		if (run)
			cb_fail(err, "--run %s: no campaign receipt (campaign.json): not a run root", run);
		else
			cb_fail(err, "%s: run.root '%s' is not a run root (no campaign.json); name it with --run DIR",
				p, root);
		goto out;
	}
	rc = 0;
out:
	free(p);
	return rc;
}

/* Attach each derived.json task to its sealed task, after checking that
 * the derived run comes from this very campaign. */
static int attach_derived(struct report *rp, struct cb_err *err)
{
	const json_t *r = json_object_get(rp->dj, "run"), *tasks = json_object_get(rp->dj, "tasks"), *d;
	const char *campaign = cb_json_str(r, "campaign"), *msha = cb_json_str(r, "manifest_sha256");
	size_t i, k;

	if (strcmp(campaign, rp->cs.campaign) != 0 || strcmp(msha, rp->cs.manifest_sha256) != 0)
		return cb_fail(err, "%s/derived.json: derived from campaign %s (manifest %.12s), but %s holds campaign %s (manifest %.12s)",
			       rp->derived_dir, campaign, msha, rp->root, rp->cs.campaign, rp->cs.manifest_sha256);
	if (json_array_size(tasks) != rp->n)
		return cb_fail(err, "%s/derived.json: %zu tasks, the run %zu", rp->derived_dir,
			       json_array_size(tasks), rp->n);
	json_array_foreach(tasks, i, d) {
		const json_t *dv = json_object_get(d, "derived"), *topo = json_object_get(dv, "topology");
		const char *id = cb_json_str(d, "id"), *v = cb_json_str(dv, "verdict");
		struct rtask *t = NULL;
		int role;

		for (k = 0; id && k < rp->n && !t; k++)
			if (strcmp(rp->t[k].sealed.id, id) == 0 && !rp->t[k].derived)
				t = &rp->t[k];
		if (!t)
			return cb_fail(err, "%s/derived.json: tasks[%zu]: task '%s' is not in the run (or listed twice)",
				       rp->derived_dir, i, id ? id : "(none)");
		if (!v || strlen(v) != 1 || !strchr("XKBGRC", v[0]) || !cb_json_str(dv, "code") ||
		    !cb_json_str(dv, "reason"))
			return cb_fail(err, "%s/derived.json: tasks[%zu]: derived verdict, code and reason are required",
				       rp->derived_dir, i);
		t->derived = 1;
		t->dverdict = v[0];
		t->dcode = cb_json_str(dv, "code");
		t->dreason = cb_json_str(dv, "reason");
		t->dhave_topology = json_is_object(topo);
		for (role = 0; role < CB_NROLES; role++) {
			t->dtopology[role] = cb_json_int(topo, cb_role_name((enum cb_role)role), 0);
			t->cell_have[role] = t->dhave_topology;
			t->cell_count[role] = t->dtopology[role];
		}
		t->changed = json_is_true(json_object_get(d, "changed"));
		t->dexcluded = json_object_get(dv, "excluded");
	}
	return 0;
}

/* The seal's status in words, from cb_verify: it holds, it does not (and
 * the first difference), or it cannot be checked (and why). */
/* Check the seal of the run; rp->seal says what was found, in words.
 * Returns 1 when it holds. */
static int seal_status(struct report *rp)
{
	struct cb_verify_report v;
	struct cb_err e;
	size_t n = strlen(rp->root);
	int holds;

	e.msg[0] = '\0';
	if (cb_verify(rp->root, &v, &e) < 0) {
		/* Say it without the path we were given: the run is the subject. */
		const char *m = strncmp(e.msg, rp->root, n) == 0 && e.msg[n] == ':' ? e.msg + n + 2 : e.msg;
		snprintf(rp->seal, sizeof(rp->seal), "cannot be checked: %s", m);
		return 0;
	}
	holds = cb_verify_holds(&v);
	if (holds)
		snprintf(rp->seal, sizeof(rp->seal), "holds (%zu files)", v.nfiles);
	else
		snprintf(rp->seal, sizeof(rp->seal), "does not hold: %s: %s (%zu changed, %zu missing, %zu extra, %zu symlinks)",
			 v.nchanged ? "changed" : v.nmissing ? "missing" : v.nextra ? "extra" : "symlink",
			 v.nchanged ? v.changed[0] : v.nmissing ? v.missing[0] : v.nextra ? v.extra[0] : v.links[0],
			 v.nchanged, v.nmissing, v.nextra, v.nlinks);
	cb_verify_report_free(&v);
	return holds;
}

/* The thresholds the verdicts used: the campaign receipt's, else (a run
 * built by the test tools) the first task receipt's. */
static const json_t *thresholds(const struct report *rp)
{
	const json_t *th = json_object_get(rp->cs.doc, "thresholds");

	if (!th && rp->n)
		th = json_object_get(rp->t[0].doc, "thresholds");
	return th;
}

/* ------------------------------------------------------------------ */
/* Figures as words                                                     */

/* "95%" from parts per million, with hundredths only when needed. */
static void fmt_share(long long ppm, char *out, size_t cap)
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
static void fmt_order(const struct cb_task_result *r, int o, int md, int w, char *out, size_t cap)
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

/* The width of the widest percentage of any timed order, without its %. */
static int number_width(const struct report *rp)
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

/* The timer of the timed orders: "graph", or "graph/direct" when round a
 * and round b differ. */
static void fmt_timer(const struct cb_task_result *r, const char *none, char *out, size_t cap)
{
	if (r->present[CB_ORDER_A] && r->present[CB_ORDER_B] &&
	    strcmp(r->timer[CB_ORDER_A], r->timer[CB_ORDER_B]) != 0)
		snprintf(out, cap, "%s/%s", r->timer[CB_ORDER_A], r->timer[CB_ORDER_B]);
	else if (r->present[CB_ORDER_A] || r->present[CB_ORDER_B])
		snprintf(out, cap, "%s", r->timer[r->present[CB_ORDER_A] ? CB_ORDER_A : CB_ORDER_B]);
	else
		snprintf(out, cap, "%s", none);
}

/* How many tasks have verdict v: the sealed verdicts, or the shown ones. */
static size_t count_verdict(const struct report *rp, char v, int sealed)
{
	size_t i, n = 0;

	for (i = 0; i < rp->n; i++)
		n += (sealed ? rp->t[i].sealed.verdict : verdict_of(&rp->t[i])) == v;
	return n;
}

/* The topology column: one triplet, or "sealed -> derived" when they differ. */
static void fmt_topology_col(const struct rtask *t, int md, char *out, size_t cap)
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

/* ------------------------------------------------------------------ */
/* Text and Markdown: the same table                                   */

/* The most columns a task table has (derived: task, verdict, topology,
 * round a, round b, timer) with room to spare. */
enum { NCOL_MAX = 7 };

/* One line of the task table, cell by cell. */
struct row {
	char c[NCOL_MAX][192];
};

/* Header and cells of the task table; md selects Markdown's spelling. In
 * a derived run the verdict and topology columns read "sealed->derived"
 * where they changed, so that a change stands out. Returns the number of
 * columns. */
static size_t table_rows(const struct report *rp, int md, struct row *rows)
{
	size_t i, n = 0;
	int w = md ? 0 : number_width(rp);

	snprintf(rows[0].c[n++], 192, "task");
	snprintf(rows[0].c[n++], 192, "verdict");
	snprintf(rows[0].c[n++], 192, "%s", md ? "topology b/c/k" : "b/c/k");
	snprintf(rows[0].c[n++], 192, "%s", md ? "round a" : "round a %");
	snprintf(rows[0].c[n++], 192, "%s", md ? "round b" : "round b %");
	snprintf(rows[0].c[n++], 192, "timer");
	for (i = 0; i < rp->n; i++) {
		const struct rtask *t = &rp->t[i];
		char (*c)[192] = rows[i + 1].c;
		size_t k = 0;

		snprintf(c[k++], 192, "%s", t->sealed.id);
		if (t->derived && t->dverdict != t->sealed.verdict)
			snprintf(c[k++], 192, md ? "**%c** → **%c** %s" : "%c->%c %s", t->sealed.verdict, t->dverdict,
				 t->dcode);
		else if (t->derived)
			snprintf(c[k++], 192, md ? "**%c** %s" : "%c %s", t->dverdict, t->dcode);
		else
			snprintf(c[k++], 192, md ? "**%c** %s" : "%c %s", t->sealed.verdict, t->sealed.code);
		fmt_topology_col(t, md, c[k++], 192);
		fmt_order(&t->sealed, CB_ORDER_A, md, w, c[k++], 192);
		fmt_order(&t->sealed, CB_ORDER_B, md, w, c[k++], 192);
		fmt_timer(&t->sealed, md ? "—" : "-", c[k++], 192);
	}
	return n;
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
enum { TEXT_WIDTH = 100 };

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
static void put_counts(struct cb_buf *b, const struct report *rp, int sealed, int md)
{
	const char *v;

	for (v = verdict_order; *v; v++)
		cb_buf_addf(b, md ? "%s**%c** %zu" : "%s%c %zu", v == verdict_order ? "" : md ? " · " : ", ", *v,
			    count_verdict(rp, *v, sealed));
}

/* The lines above the table: campaign, seal, floor and thresholds, and
 * for a derived run what it re-accounted. */
static void put_summary_lines(struct cb_buf *b, const struct report *rp, int md)
{
	const json_t *th = thresholds(rp);
	char gain[32], reg[32], conf[32];
	const char *item = md ? "- " : "";

	cb_fmt_pct(cb_json_int(th, "gain_ppm", 0), gain, sizeof(gain));
	cb_fmt_pct(cb_json_int(th, "regression_ppm", 0), reg, sizeof(reg));
	fmt_share(cb_json_int(th, "confidence_ppm", 0), conf, sizeof(conf));
	cb_buf_addf(b, "%sseal: ", item);
	put_text(b, rp->seal, md);
	cb_buf_addf(b, "\n%slaunch floor %lld; thresholds: gain %s, regression %s, confidence %s\n", item,
		    rp->cs.launch_floor, gain, reg, conf);
	if (rp->derived_dir) {
		const json_t *eq = json_object_get(rp->dj, "equivalence");
		cb_buf_addf(b, "%sderived run: floor %lld (sealed at floor %lld); equivalence %s at floor %lld\n"
			       "%s%lld of %zu tasks changed verdict; a change reads sealed%sderived\n",
			    item, rp->floor, rp->sealed_floor,
			    json_is_true(json_object_get(eq, "holds")) ? "holds" : "does not hold",
			    (long long)cb_json_int(eq, "checked_at_floor", rp->sealed_floor), item,
			    (long long)cb_json_int(rp->dj, "changed", 0), rp->n, md ? " → " : "->");
		cb_buf_addf(b, "%sverdicts, sealed: ", item);
		put_counts(b, rp, 1, md);
		cb_buf_addf(b, "\n%sverdicts, derived: ", item);
		put_counts(b, rp, 0, md);
	} else {
		cb_buf_addf(b, "%sverdicts: ", item);
		put_counts(b, rp, 1, md);
	}
	cb_buf_adds(b, "\n");
}

/* Below the table: what changed and why (derived run), then the reason of
 * every verdict but B, whose reason is its topology column. */
static void put_reasons(struct cb_buf *b, const struct report *rp, int md)
{
	size_t i, shown = 0;

	for (i = 0; rp->derived_dir && i < rp->n; i++) {
		const struct rtask *t = &rp->t[i];
		char topo[160];

		if (!t->changed)
			continue;
		if (!shown++)
			cb_buf_addf(b, md ? "\n**Changed at floor %lld** (sealed at %lld):\n\n"
					  : "\nchanged at floor %lld (sealed at %lld):\n",
				    rp->floor, rp->sealed_floor);
		fmt_topology_col(t, md, topo, sizeof(topo));
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
		const struct rtask *t = &rp->t[i];

		if (verdict_of(t) == 'B')
			continue;
		if (!shown++)
			cb_buf_adds(b, md ? "\n**Reasons**\n\n" : "\nreasons:\n");
		if (md) {
			cb_buf_addf(b, "- %s **%c**: ", t->sealed.id, verdict_of(t));
			put_text(b, reason_of(t), md);
		} else {
			size_t at = b->len;
			cb_buf_addf(b, "  %s %c: ", t->sealed.id, verdict_of(t));
			put_wrapped(b, b->len - at, reason_of(t), 4);
		}
		cb_buf_adds(b, "\n");
	}
}

/* The text report: summary lines, the aligned task table, the reasons.
 * rows has room for every task and the header. */
static void render_text(struct cb_buf *b, const struct report *rp, struct row *rows)
{
	size_t ncol = table_rows(rp, 0, rows), w[NCOL_MAX] = { 0 }, i, c, total = 0;
	int gap;

	cb_buf_addf(b, "caliber report: campaign %s (selection %s), %zu tasks\n", rp->cs.campaign,
		    rp->cs.selection, rp->n);
	put_summary_lines(b, rp, 0);
	for (i = 0; i <= rp->n; i++)
		for (c = 0; c < ncol; c++)
			if (strlen(rows[i].c[c]) > w[c])
				w[c] = strlen(rows[i].c[c]);
	/* Two blanks between columns, one when two would pass TEXT_WIDTH. */
	for (c = 0; c < ncol; c++)
		total += w[c] + 2;
	gap = total - 2 > TEXT_WIDTH ? 1 : 2;
	cb_buf_adds(b, "\n");
	for (i = 0; i <= rp->n; i++)
		for (c = 0; c < ncol; c++)
			if (c + 1 < ncol)
				cb_buf_addf(b, "%-*s%*s", (int)w[c], rows[i].c[c], gap, "");
			else
				cb_buf_addf(b, "%s\n", rows[i].c[c]);
	put_reasons(b, rp, 0);
}

/* The Markdown report: the same summary, table and reasons as text, as a
 * GitHub table (task ids escaped like receipt text). */
static void render_md(struct cb_buf *b, const struct report *rp, struct row *rows)
{
	size_t ncol = table_rows(rp, 1, rows), i, c;

	cb_buf_addf(b, "### caliber report: `%s` (selection %s, %zu tasks)\n\n", rp->cs.campaign,
		    rp->cs.selection, rp->n);
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
}

/* ------------------------------------------------------------------ */
/* HTML                                                                 */

/* Colours by verdict, and what each letter means, for badges, table
 * cells and plot marks alike. */
static const struct verdict_style {
	char v;
	const char *meaning, *bg, *fg, *tint;
} verdict_styles[] = {
	{ 'G', "stable gain", "#1a7f37", "#ffffff", "#dafbe1" },
	{ 'C', "reduced, speedup not stable", "#bf8700", "#ffffff", "#fff8c5" },
	{ 'B', "no topology reduction", "#6e7781", "#ffffff", "#eaeef2" },
	{ 'R', "stable regression", "#cf222e", "#ffffff", "#ffebe9" },
	{ 'K', "candidate incorrect", "#8250df", "#ffffff", "#fbefff" },
	{ 'X', "not assessed (harness, timeout, IR)", "#24292f", "#ffffff", "#d0d7de" },
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
	".count.none{opacity:.3}\n"
	".seal-ok{color:#1a7f37;font-weight:600}.seal-bad{color:#cf222e;font-weight:700}\n"
	".plots{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start}\n"
	"figure{margin:0}figcaption{color:#57606a;font-size:12px;max-width:860px}\n"
	"svg text{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}\n"
	"details.task{border:1px solid #d0d7de;border-radius:6px;margin:4px 0;padding:2px 8px}\n"
	"details.task[open]{padding-bottom:8px}summary{cursor:pointer;padding:2px 0}\n"
	".muted{color:#57606a}.bad{color:#cf222e;font-weight:600}.ok{color:#1a7f37}\n"
	"ul.links{margin:0;padding-left:18px}\n"
	"table.matrix{width:100%}table.matrix td.nw,table.matrix th.nw{white-space:nowrap}"
	"table.matrix td.reason{min-width:300px}table.matrix td.verdict{text-align:center;font-weight:700;width:3.5em}\n"
	"table.rows td.key{max-width:320px;word-break:break-all}table.rows td.clk{white-space:nowrap}\n";

/* Text and attribute values: every character HTML gives a meaning escaped. */
static void h_esc(struct cb_buf *b, const char *s)
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
static void h_url(struct cb_buf *b, const char *s)
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
static void h_link(struct cb_buf *b, const char *dir, const char *href, const char *rel, const char *text)
{
	char *p = cb_path_join(dir, rel);

	if (p && cb_exists(p)) {
		cb_buf_adds(b, "<a href=\"");
		h_url(b, href);
		cb_buf_adds(b, "/");
		h_url(b, rel);
		cb_buf_adds(b, "\">");
		h_esc(b, text);
		cb_buf_adds(b, "</a>");
	} else {
		cb_buf_adds(b, "<span class=\"muted\">");
		h_esc(b, text);
		cb_buf_adds(b, " (absent)</span>");
	}
	free(p);
}

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
			h_esc(b, k);
			cb_buf_adds(b, " ");
			h_json_inline(b, v);
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) {
			cb_buf_adds(b, i ? ", " : "");
			h_json_inline(b, v);
		}
	} else if (json_is_string(j)) {
		h_esc(b, json_string_value(j));
	} else if (json_is_integer(j)) {
		cb_buf_addf(b, "%lld", (long long)json_integer_value(j));
	} else if (json_is_boolean(j)) {
		cb_buf_adds(b, json_is_true(j) ? "true" : "false");
	} else {
		cb_buf_adds(b, "<span class=\"muted\">not recorded</span>");
	}
}

/* A verdict letter on its colour. */
static void h_badge(struct cb_buf *b, char v)
{
	cb_buf_addf(b, "<span class=\"badge v-%c\">%c</span>", v, v);
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
static json_t *first_device_json(const struct report *rp)
{
	size_t i;

	for (i = 0; i < rp->n; i++) {
		const json_t *cell = json_object_get(json_object_get(rp->t[i].doc, "cells"), "baseline");
		const char *name = cb_json_str(cell, "name");
		char *p = name ? cb_strdupf("%s/tasks/%s/cells/a-%s/device.json", rp->root, rp->t[i].sealed.id, name)
			       : NULL;
		json_t *j = p && cb_exists(p) ? cb_json_load_file(p, NULL) : NULL;

		free(p);
		if (j)
			return j;
	}
	return NULL;
}

/* One header row: <tr><th>name</th><td>value</td></tr>, the value already
 * escaped HTML. */
static void h_fact_open(struct cb_buf *b, const char *name)
{
	cb_buf_addf(b, "<tr><th>%s</th><td>", name);
}

/* The header: campaign, seal, derived run, sources, device, timer, plugin
 * plan, thresholds, who ran it, and links to the run's own receipts. */
static void h_header(struct cb_buf *b, const struct report *rp)
{
	const json_t *doc = rp->cs.doc, *src = json_object_get(doc, "sources"), *th = thresholds(rp);
	const json_t *caliber = json_object_get(doc, "caliber"), *plan = json_object_get(doc, "plan"), *v;
	json_t *dev = first_device_json(rp);
	static const char *const sources[] = { "compiler", "corpus", "harness" };
	char gain[32], reg[32], conf[32];
	size_t i;

	cb_buf_adds(b, "<header>\n<h1>caliber report: ");
	h_esc(b, rp->cs.campaign);
	cb_buf_adds(b, rp->derived_dir ? " <span class=\"muted\">(derived run)</span>" : "");
	cb_buf_adds(b, "</h1>\n<table class=\"facts\">\n");
	h_fact_open(b, "campaign");
	h_esc(b, rp->cs.campaign);
	cb_buf_adds(b, " · selection ");
	h_esc(b, rp->cs.selection);
	cb_buf_addf(b, " · %zu tasks · status ", rp->n);
	h_esc(b, rp->cs.status);
	if (cb_json_str(doc, "finished")) {
		cb_buf_adds(b, " · finished ");
		h_esc(b, cb_json_str(doc, "finished"));
	}
	cb_buf_adds(b, " · manifest sha256 <code class=\"hash\">");
	h_esc(b, rp->cs.manifest_sha256);
	cb_buf_adds(b, "</code></td></tr>\n");
	h_fact_open(b, "seal");
	cb_buf_addf(b, "<span class=\"%s\" id=\"seal\">", strncmp(rp->seal, "holds", 5) == 0 ? "seal-ok" : "seal-bad");
	h_esc(b, rp->seal);
	cb_buf_adds(b, "</span> (<code>caliber verify</code> run by this report)</td></tr>\n");
	if (rp->derived_dir) {
		h_fact_open(b, "derived run");
		cb_buf_addf(b, "re-accounted at launch floor %lld (sealed at %lld); equivalence at the sealed floor %s; "
			       "%lld of %zu tasks changed verdict · ",
			    rp->floor, rp->sealed_floor,
			    json_is_true(json_object_get(json_object_get(rp->dj, "equivalence"), "holds")) ? "holds"
													   : "does not hold",
			    (long long)cb_json_int(rp->dj, "changed", 0), rp->n);
		h_link(b, rp->derived_dir, rp->dhref, "derived.json", "derived.json");
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
			h_esc(b, json_string_value(root));
			cb_buf_adds(b, "</span>");
		}
	}
	cb_buf_adds(b, "</td></tr>\n");
	h_fact_open(b, "device");
	if (dev) {
		h_esc(b, cb_json_str(dev, "name") ? cb_json_str(dev, "name") : "?");
		cb_buf_adds(b, " · driver ");
		h_esc(b, cb_json_str(dev, "driver") ? cb_json_str(dev, "driver") : "?");
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
	fmt_share(cb_json_int(th, "confidence_ppm", 0), conf, sizeof(conf));
	h_fact_open(b, "thresholds");
	cb_buf_addf(b, "gain %s · regression %s · confidence %s · launch floor %lld", gain, reg, conf,
		    rp->cs.launch_floor);
	if (cb_json_str(doc, "production_default_policy")) {
		cb_buf_adds(b, " · production default ");
		h_esc(b, cb_json_str(doc, "production_default_policy"));
	}
	cb_buf_adds(b, "</td></tr>\n");
	h_fact_open(b, "run by");
	cb_buf_adds(b, "caliber ");
	h_json_inline(b, caliber);
	if (json_object_get(doc, "worker")) {
		cb_buf_adds(b, " · worker ");
		h_json_inline(b, json_object_get(doc, "worker"));
	}
	cb_buf_adds(b, " · ");
	h_link(b, rp->root, rp->href, "campaign.json", "campaign.json");
	cb_buf_adds(b, " · ");
	h_link(b, rp->root, rp->href, "matrix.csv", "matrix.csv");
	cb_buf_adds(b, " · ");
	h_link(b, rp->root, rp->href, CB_SUMS_FILE, CB_SUMS_FILE);
	cb_buf_adds(b, "</td></tr>\n</table>\n</header>\n");
	json_decref(dev);
}

/* The verdict counts as coloured badges, zero counts dimmed. */
static void h_counts(struct cb_buf *b, const struct report *rp)
{
	size_t i;

	cb_buf_addf(b, "<section id=\"verdicts\">\n<h2>Verdicts%s</h2>\n", rp->derived_dir ? " (derived)" : "");
	for (i = 0; i < sizeof(verdict_styles) / sizeof(verdict_styles[0]); i++) {
		const struct verdict_style *s = &verdict_styles[i];
		size_t n = count_verdict(rp, s->v, 0);
		cb_buf_addf(b, "<span class=\"count v-%c%s\" data-verdict=\"%c\" data-count=\"%zu\" title=\"%s\"><b>%c</b> %zu <small>%s</small></span>\n",
			    s->v, n ? "" : " none", s->v, n, s->meaning, s->v, n, s->meaning);
	}
	cb_buf_adds(b, "</section>\n");
}

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
static void svg_row_label(struct cb_buf *b, const struct rtask *t, double cy, int band, int width)
{
	if (band)
		cb_buf_addf(b, "<rect x=\"0\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"#f6f8fa\"/>\n",
			    cy - ROW_H / 2.0, width, ROW_H);
	cb_buf_addf(b, "<rect class=\"v-%c\" x=\"4\" y=\"%.1f\" width=\"16\" height=\"16\" rx=\"3\"/>"
		       "<text x=\"12\" y=\"%.1f\" fill=\"#fff\" font-size=\"11\" font-weight=\"700\" text-anchor=\"middle\">%c</text>"
		       "<text x=\"26\" y=\"%.1f\" font-size=\"12\">",
		    verdict_of(t), cy - 8, cy + 4, verdict_of(t), cy + 4);
	h_esc(b, t->sealed.id);
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
static void svg_forest(struct cb_buf *b, const struct report *rp)
{
	static const long long ticks[] = { -1000000, -100000, -10000, -1000, 0, 1000, 10000, 100000, 1000000,
					   10000000, 100000000 };
	const json_t *th = thresholds(rp);
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
		const struct rtask *t = &rp->t[i];
		const struct cb_task_result *r = &t->sealed;
		double cy = PLOT_TOP + ROW_H * (double)i + ROW_H / 2.0;
		char v = verdict_of(t);

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
			fmt_share(r->aa_ppm[o], a, sizeof(a));
			cb_buf_addf(b, "<rect class=\"aa\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"4\" fill=\"#e6eaef\"/>",
				    xpos(&x, -aa), y - 2, xpos(&x, aa) - xpos(&x, -aa));
			cb_buf_addf(b, "<line class=\"ci v-%c\" data-task=\"", v);
			h_esc(b, r->id);
			cb_buf_addf(b, "\" data-order=\"%c\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke-width=\"2\"/>",
				    o ? 'b' : 'a', xpos(&x, (double)r->lo_ppm[o]), xpos(&x, (double)r->hi_ppm[o]), y, y);
			cb_buf_addf(b, "<circle class=\"pt%s v-%c\" data-task=\"", o ? " ob" : "", v);
			h_esc(b, r->id);
			cb_buf_addf(b, "\" data-order=\"%c\" data-speedup-ppm=\"%lld\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" stroke-width=\"1.5\"><title>",
				    o ? 'b' : 'a', r->speedup_ppm[o], xpos(&x, (double)r->speedup_ppm[o]), y);
			h_esc(b, r->id);
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
static void svg_topology(struct cb_buf *b, const struct report *rp)
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
		    rp->derived_dir ? rp->floor : rp->cs.launch_floor);
	for (r = 0; r < CB_NROLES; r++)
		cb_buf_addf(b, "<rect class=\"r-%s\" x=\"%d\" y=\"24\" width=\"10\" height=\"8\"/><text x=\"%d\" y=\"32\" font-size=\"11\">%s</text>\n",
			    cb_role_name((enum cb_role)r), 4 + r * 90, 18 + r * 90, cb_role_name((enum cb_role)r));
	cb_buf_addf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#8c959f\"/>"
		       "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\" fill=\"#57606a\">0</text>"
		       "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\" fill=\"#57606a\">%lld</text>\n",
		    TP_LABEL, TP_LABEL, PLOT_TOP, height - PLOT_BOTTOM, TP_LABEL, height - PLOT_BOTTOM + 14,
		    TP_LABEL + w, height - PLOT_BOTTOM + 14, max);
	for (i = 0; i < rp->n; i++) {
		const struct rtask *t = &rp->t[i];
		double cy = PLOT_TOP + ROW_H * (double)i + ROW_H / 2.0;

		svg_row_label(b, t, cy, (int)(i % 2), TP_W);
		for (r = 0; r < CB_NROLES; r++) {
			long long c = t->cell_count[r];
			int have = t->cell_have[r];
			double y = cy - 9 + 6 * r, bw = have ? fmax(1.5, (double)c / (double)max * w) : 8;

			cb_buf_addf(b, "<rect class=\"topo r-%s%s\" data-task=\"", cb_role_name((enum cb_role)r),
				    have ? "" : " none");
			h_esc(b, t->sealed.id);
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
static void h_plots(struct cb_buf *b, const struct report *rp)
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

/* The verdict matrix: one row per task, the verdict cell coloured with its
 * reason as title, then code, topology, both orders, timer and reason. */
static void h_matrix(struct cb_buf *b, const struct report *rp)
{
	size_t i;
	int o;

	cb_buf_adds(b, "<section id=\"matrix\">\n<h2>Verdict matrix</h2>\n<table class=\"grid matrix\">\n<tr><th>task</th>");
	cb_buf_adds(b, rp->derived_dir ? "<th>sealed</th><th>derived</th>" : "<th>verdict</th>");
	cb_buf_adds(b, "<th>code</th><th class=\"nw\">topology b/c/k</th><th class=\"num\">round a</th><th class=\"num\">round b</th><th>timer</th><th>reason</th></tr>\n");
	for (i = 0; i < rp->n; i++) {
		const struct rtask *t = &rp->t[i];
		char topo[160], timer[32];

		cb_buf_adds(b, "<tr class=\"task\" data-task=\"");
		h_esc(b, t->sealed.id);
		cb_buf_addf(b, "\" data-verdict=\"%c\"", verdict_of(t));
		if (t->derived)
			cb_buf_addf(b, " data-sealed=\"%c\"", t->sealed.verdict);
		cb_buf_adds(b, "><td><a href=\"#t-");
		h_url(b, t->sealed.id);
		cb_buf_adds(b, "\">");
		h_esc(b, t->sealed.id);
		cb_buf_addf(b, "</a></td><td class=\"verdict v-%c\" title=\"", t->sealed.verdict);
		h_esc(b, t->sealed.reason);
		cb_buf_addf(b, "\">%c</td>", t->sealed.verdict);
		if (t->derived) {
			cb_buf_addf(b, "<td class=\"verdict v-%c\" title=\"", t->dverdict);
			h_esc(b, t->dreason);
			cb_buf_addf(b, "\">%c%s</td>", t->dverdict, t->changed ? " <small>changed</small>" : "");
		}
		cb_buf_adds(b, "<td class=\"nw\">");
		h_esc(b, code_of(t));
		fmt_topology_col(t, 1, topo, sizeof(topo));
		cb_buf_adds(b, "</td><td class=\"mono nw\">");
		h_esc(b, topo);
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
			cb_buf_addf(b, "<td class=\"num\">%s <small class=\"muted\">[%s, %s]</small></td>", p, l, h);
		}
		fmt_timer(&t->sealed, "—", timer, sizeof(timer));
		cb_buf_addf(b, "<td>%s</td><td class=\"reason t-%c\">", timer, verdict_of(t));
		h_esc(b, reason_of(t));
		cb_buf_adds(b, "</td></tr>\n");
	}
	cb_buf_adds(b, "</table>\n</section>\n");
}

/* Every line of a JSON Lines file as an array of objects (a new
 * reference); name is used in errors. NULL with err filled when the file
 * cannot be read or a line is not an object. */
static json_t *load_jsonl(const char *path, const char *name, struct cb_err *err)
{
	char *buf, *p, *end;
	size_t len, line = 1;
	json_t *arr;

	if (cb_read_file(path, &buf, &len, err) < 0)
		return NULL;
	arr = json_array();
	for (p = buf, end = buf + len; p < end; line++) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char where[512];
		json_t *j;

		snprintf(where, sizeof(where), "%s:%zu", name, line);
		j = n ? cb_json_load_buf(p, n, where, err) : NULL;
		if (n && (!j || !json_is_object(j))) {
			if (j)
				cb_fail(err, "%s: not a JSON object", where);
			json_decref(j);
			json_decref(arr);
			free(buf);
			return NULL;
		}
		if (j)
			json_array_append_new(arr, j);
		p += n + 1;
	}
	free(buf);
	return arr;
}

/* qsort order of long long. */
static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* Samples of a timing row as integers; the median in *med. Returns the
 * count (0 when there are none). */
static size_t row_samples(const json_t *row, long long *out, size_t cap, double *med)
{
	const json_t *s = json_object_get(row, "samples_ns"), *v;
	long long *sorted;
	size_t i, n = 0;

	json_array_foreach(s, i, v)
		if (json_is_integer(v) && n < cap)
			out[n++] = (long long)json_integer_value(v);
	*med = 0;
	if (!n || !(sorted = malloc(n * sizeof(*sorted))))
		return n;
	memcpy(sorted, out, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_ll);
	*med = n % 2 ? (double)sorted[n / 2] : ((double)sorted[n / 2 - 1] + (double)sorted[n / 2]) / 2.0;
	free(sorted);
	return n;
}

/* "SM 1980→1965 MHz · mem 3201 MHz" from a row's clocks; "?" where the
 * device could not say. */
static void fmt_clocks(const json_t *row, char *out, size_t cap)
{
	const json_t *c = json_object_get(row, "clocks");
	const json_t *bf = json_object_get(c, "before"), *af = json_object_get(c, "after");
	char part[2][64];
	int k;

	if (!json_is_object(c)) {
		snprintf(out, cap, "not recorded");
		return;
	}
	for (k = 0; k < 2; k++) {
		const char *key = k ? "mem_mhz" : "sm_mhz";
		json_int_t x = cb_json_int(bf, key, -1), y = cb_json_int(af, key, -1);
		char xs[24] = "?", ys[24] = "?";
		if (x >= 0)
			snprintf(xs, sizeof(xs), "%lld", (long long)x);
		if (y >= 0)
			snprintf(ys, sizeof(ys), "%lld", (long long)y);
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
		h_esc(b, name);
		cb_buf_adds(b, ")</span>");
	}
	cb_buf_adds(b, "</td>");
}

/* A row's samples in one cell as a strip of dots on the row's shared
 * scale [lo, hi] (ns), with the median as a tick. */
static void svg_strip(struct cb_buf *b, const struct rtask *t, char order, int role, const long long *s, size_t n,
		      double med, double lo, double hi)
{
	const double W = 240, pad = 6;
	double span = hi > lo ? hi - lo : 1;
	size_t i;

	cb_buf_addf(b, "<svg class=\"strip\" width=\"%d\" height=\"14\" viewBox=\"0 0 %d 14\">"
		       "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"7\" y2=\"7\" stroke=\"#eaeef2\"/>",
		    (int)W, (int)W, pad, W - pad);
	for (i = 0; i < n; i++) {
		double x = hi > lo ? pad + ((double)s[i] - lo) / span * (W - 2 * pad) : W / 2;
		cb_buf_addf(b, "<circle class=\"sample r-%s\" data-task=\"", cb_role_name((enum cb_role)role));
		h_esc(b, t->sealed.id);
		cb_buf_addf(b, "\" data-order=\"%c\" data-cell=\"%s\" cx=\"%.1f\" cy=\"7\" r=\"2.5\" fill-opacity=\"0.7\"/>",
			    order, cb_role_name((enum cb_role)role), x);
	}
	cb_buf_addf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"1\" y2=\"13\" stroke=\"#1f2328\" stroke-width=\"1.5\"/></svg>",
		    hi > lo ? pad + (med - lo) / span * (W - 2 * pad) : W / 2, hi > lo ? pad + (med - lo) / span * (W - 2 * pad) : W / 2);
}

/* The rows of one order: per benchmark row and cell the median, the
 * timer and why, the clocks, and the samples as a strip plot. Rows are
 * matched across cells by their "row" key, in the baseline's order. */
static void h_order_rows(struct cb_buf *b, const struct report *rp, const struct rtask *t, int o,
			 const char *const names[CB_NROLES])
{
	enum { MAXS = 4096 };
	json_t *rows[CB_NROLES] = { NULL };
	long long *s = malloc(MAXS * sizeof(*s));
	size_t i, any = 0;
	int r;

	cb_buf_addf(b, "<h4>Round %c</h4>\n", o ? 'b' : 'a');
	for (r = 0; r < CB_NROLES; r++) {
		char *rel = cb_strdupf("tasks/%s/cells/%c-%s/timing.jsonl", t->sealed.id, o ? 'b' : 'a', names[r]);
		char *p = rel ? cb_path_join(rp->root, rel) : NULL;
		struct cb_err e;

		if (p && cb_exists(p)) {
			rows[r] = load_jsonl(p, rel, &e);
			if (!rows[r]) {
				cb_buf_adds(b, "<p class=\"bad\">");
				h_esc(b, e.msg);
				cb_buf_adds(b, "</p>\n");
			}
		} else {
			cb_buf_adds(b, "<p class=\"muted\">");
			h_esc(b, rel ? rel : "timing.jsonl");
			cb_buf_adds(b, ": absent</p>\n");
		}
		free(rel);
		free(p);
	}
	if (!s)
		goto out;
	for (r = 0; r < CB_NROLES; r++)
		any += json_array_size(rows[r]);
	if (!any)
		goto out;
	cb_buf_adds(b, "<table class=\"grid rows\"><tr><th>row</th><th>cell</th><th class=\"num\">median</th><th class=\"num\">n</th><th>timer</th><th>clocks</th><th>samples</th></tr>\n");
	for (i = 0; i < json_array_size(rows[0] ? rows[0] : rows[2] ? rows[2] : rows[1]); i++) {
		const json_t *base = json_array_get(rows[0] ? rows[0] : rows[2] ? rows[2] : rows[1], i);
		const char *key = cb_json_str(base, "row");
		const json_t *cell[CB_NROLES];
		double lo = 0, hi = 0, med;
		int first = 1;

		for (r = 0; r < CB_NROLES; r++) {
			size_t k, n;
			cell[r] = NULL;
			for (k = 0; key && k < json_array_size(rows[r]) && !cell[r]; k++)
				if (cb_json_str(json_array_get(rows[r], k), "row") &&
				    strcmp(cb_json_str(json_array_get(rows[r], k), "row"), key) == 0)
					cell[r] = json_array_get(rows[r], k);
			n = cell[r] ? row_samples(cell[r], s, MAXS, &med) : 0;
			for (k = 0; k < n; k++) {
				lo = first || (double)s[k] < lo ? (double)s[k] : lo;
				hi = first || (double)s[k] > hi ? (double)s[k] : hi;
				first = 0;
			}
		}
		for (r = 0; r < CB_NROLES; r++) {
			char clocks[160];
			size_t n;

			cb_buf_adds(b, "<tr>");
			if (r == 0) {
				cb_buf_adds(b, "<td rowspan=\"3\" class=\"mono key\">");
				h_esc(b, key ? key : "(no row key)");
				cb_buf_addf(b, "<br><span class=\"muted\">scale %.3f–%.3f µs</span></td>", lo / 1000, hi / 1000);
			}
			h_cell_name(b, r, names[r]);
			if (!cell[r]) {
				cb_buf_adds(b, "<td colspan=\"5\" class=\"muted\">no such row</td></tr>\n");
				continue;
			}
			n = row_samples(cell[r], s, MAXS, &med);
			fmt_clocks(cell[r], clocks, sizeof(clocks));
			cb_buf_addf(b, "<td class=\"num\">%.3f µs</td><td class=\"num\">%zu</td><td>", med / 1000, n);
			h_esc(b, cb_json_str(cell[r], "timer") ? cb_json_str(cell[r], "timer") : "?");
			cb_buf_adds(b, " <span class=\"muted\">");
			h_esc(b, cb_json_str(cell[r], "timer_reason") ? cb_json_str(cell[r], "timer_reason") : "");
			cb_buf_adds(b, "</span></td><td class=\"clk\">");
			h_esc(b, clocks);
			cb_buf_adds(b, "</td><td>");
			svg_strip(b, t, o ? 'b' : 'a', r, s, n, med, lo, hi);
			cb_buf_adds(b, "</td></tr>\n");
		}
	}
	cb_buf_adds(b, "</table>\n");
out:
	for (r = 0; r < CB_NROLES; r++)
		json_decref(rows[r]);
	free(s);
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
		h_esc(b, name ? name : "?");
		cb_buf_adds(b, "</code>");
		json_array_foreach(json_object_get(topo, "variants"), k, w) {
			if (!name || !cb_json_str(w, "variant") || strcmp(cb_json_str(w, "variant"), name) != 0)
				continue;
			cb_buf_adds(b, " <span class=\"muted\">");
			h_esc(b, cb_json_str(w, "kernel") ? cb_json_str(w, "kernel") : "?");
			cb_buf_addf(b, ", %lld launches, %lld tuning, %lld converts</span>",
				    (long long)cb_json_int(w, "launches", 0), (long long)cb_json_int(w, "tuning_launches", 0),
				    (long long)cb_json_int(w, "count", 0));
		}
	}
}

/* One phase's outcome of one cell: the word, coloured, and its detail. */
static void h_outcome(struct cb_buf *b, const json_t *phase)
{
	const char *o = cb_json_str(phase, "outcome"), *d = cb_json_str(phase, "detail");

	cb_buf_addf(b, "<td><span class=\"%s\">", o && strcmp(o, "passed") == 0 ? "ok"
						    : o && strcmp(o, "not-run") == 0 ? "muted" : "bad");
	h_esc(b, o ? o : "?");
	cb_buf_adds(b, "</span>");
	if (d && *d && (!o || strcmp(d, o) != 0)) {
		cb_buf_adds(b, "<br><small class=\"muted\">");
		h_esc(b, d);
		cb_buf_adds(b, "</small>");
	}
	cb_buf_adds(b, "</td>");
}

/* Per task: a <details> with the verdict and its reason, the cells
 * (correctness and outcomes, topology, excluded variants), both orders'
 * figures, the rows with their samples, and links to every receipt. */
static void h_task(struct cb_buf *b, const struct report *rp, const struct rtask *t)
{
	static const char *const phases[] = { "correctness", "a", "b" };
	const json_t *cells = json_object_get(t->doc, "cells"), *topo = json_object_get(t->doc, "topology");
	const json_t *orders = json_object_get(t->doc, "orders");
	const char *names[CB_NROLES];
	char *tdir = cb_strdupf("%s/tasks/%s", rp->root, t->sealed.id);
	char *thref = cb_strdupf("%s/tasks/%s", rp->href, t->sealed.id);
	int r, o;
	size_t p;

	for (r = 0; r < CB_NROLES; r++) {
		const char *n = cb_json_str(json_object_get(cells, cb_role_name((enum cb_role)r)), "name");
		names[r] = n && cb_is_ident(n) ? n : cb_role_name((enum cb_role)r);
	}
	cb_buf_adds(b, "<details class=\"task\" id=\"t-");
	h_esc(b, t->sealed.id);
	cb_buf_adds(b, "\" data-task=\"");
	h_esc(b, t->sealed.id);
	cb_buf_addf(b, "\" data-verdict=\"%c\"><summary>", verdict_of(t));
	if (t->derived) {
		h_badge(b, t->sealed.verdict);
		cb_buf_adds(b, " → ");
	}
	h_badge(b, verdict_of(t));
	cb_buf_adds(b, " <b>");
	h_esc(b, t->sealed.id);
	cb_buf_adds(b, "</b> <span class=\"muted\">");
	h_esc(b, code_of(t));
	cb_buf_adds(b, "</span> — ");
	h_esc(b, reason_of(t));
	cb_buf_adds(b, "</summary>\n");
	if (t->derived) {
		cb_buf_adds(b, "<p>Sealed: ");
		h_badge(b, t->sealed.verdict);
		cb_buf_adds(b, " ");
		h_esc(b, t->sealed.code);
		cb_buf_adds(b, " — ");
		h_esc(b, t->sealed.reason);
		cb_buf_addf(b, "<br>Derived at floor %lld: ", rp->floor);
		h_badge(b, t->dverdict);
		cb_buf_adds(b, " ");
		h_esc(b, t->dcode);
		cb_buf_adds(b, " — ");
		h_esc(b, t->dreason);
		cb_buf_addf(b, "%s</p>\n", t->changed ? " <b>(changed)</b>" : " (unchanged)");
	}
	cb_buf_adds(b, "<h4>Cells</h4>\n<table class=\"grid\"><tr><th>role</th><th>cell</th><th>correctness</th><th>round a</th><th>round b</th>");
	cb_buf_addf(b, "<th>topology (scoped / total, floor %lld)</th><th>excluded variants (launches &le; floor)</th>",
		    rp->cs.launch_floor);
	if (t->derived)
		cb_buf_addf(b, "<th>topology at floor %lld</th><th>excluded at floor %lld</th>", rp->floor, rp->floor);
	cb_buf_adds(b, "</tr>\n");
	for (r = 0; r < CB_NROLES; r++) {
		const char *role = cb_role_name((enum cb_role)r);
		const json_t *c = json_object_get(cells, role), *tp = json_object_get(topo, role);

		cb_buf_addf(b, "<tr><td>%s</td><td>", role);
		h_esc(b, names[r]);
		cb_buf_adds(b, "</td>");
		for (p = 0; p < 3; p++)
			h_outcome(b, json_object_get(json_object_get(c, "phases"), phases[p]));
		cb_buf_adds(b, "<td>");
		if (json_is_true(json_object_get(tp, "joinable")))
			cb_buf_addf(b, "%lld / %lld", (long long)cb_json_int(tp, "scoped", 0),
				    (long long)cb_json_int(tp, "total", 0));
		else if (json_is_object(tp)) {
			const json_t *u;
			size_t k;
			cb_buf_adds(b, "<span class=\"bad\">");
			h_esc(b, cb_json_str(tp, "error") ? cb_json_str(tp, "error") : "not joinable");
			json_array_foreach(json_object_get(tp, "unjoinable"), k, u) {
				cb_buf_adds(b, "<br>");
				h_esc(b, json_is_string(u) ? json_string_value(u) : "?");
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
	cb_buf_adds(b, "</table>\n<h4>Speedup by order</h4>\n<table class=\"grid\"><tr><th>order</th><th class=\"num\">candidate vs baseline</th><th class=\"num\">A/A: control vs baseline</th><th>stable gain</th><th>stable regression</th><th>timer</th><th class=\"num\">rows</th></tr>\n");
	for (o = 0; o < CB_NORDERS; o++) {
		const json_t *x = json_object_get(orders, o ? "b" : "a");
		char s[160], a[160], aa_lo[32], aa_hi[32];

		cb_buf_addf(b, "<tr><td>round %c</td>", o ? 'b' : 'a');
		if (!json_is_true(json_object_get(x, "present"))) {
			cb_buf_addf(b, "<td colspan=\"6\" class=\"muted\">not timed%s</td></tr>\n",
				    o ? " (round b runs only when the candidate's topology is below the baseline's)" : "");
			continue;
		}
		fmt_order(&t->sealed, o, 1, 0, s, sizeof(s));
		cb_fmt_pct(cb_json_int(x, "aa_speedup_ppm", 0), a, sizeof(a));
		cb_fmt_pct(cb_json_int(x, "aa_lo_ppm", 0), aa_lo, sizeof(aa_lo));
		cb_fmt_pct(cb_json_int(x, "aa_hi_ppm", 0), aa_hi, sizeof(aa_hi));
		cb_buf_addf(b, "<td class=\"num\">%s</td><td class=\"num\">%s [%s, %s]</td><td>%s</td><td>%s</td><td>",
			    s, a, aa_lo, aa_hi, json_is_true(json_object_get(x, "stable_gain")) ? "yes" : "no",
			    json_is_true(json_object_get(x, "stable_regression")) ? "yes" : "no");
		h_esc(b, t->sealed.timer[o]);
		cb_buf_addf(b, "</td><td class=\"num\">%lld</td></tr>\n", (long long)cb_json_int(x, "rows", 0));
	}
	cb_buf_adds(b, "</table>\n");
	for (o = 0; o < CB_NORDERS; o++) {
		int timed = 0;
		for (r = 0; r < CB_NROLES && tdir; r++) {
			char *rel = cb_strdupf("cells/%c-%s/timing.jsonl", o ? 'b' : 'a', names[r]);
			timed |= rel && has_file(tdir, rel);
			free(rel);
		}
		if (timed)
			h_order_rows(b, rp, t, o, names);
	}
	cb_buf_adds(b, "<h4>Receipts</h4>\n<ul class=\"links\"><li>");
	if (tdir && thref)
		h_link(b, tdir, thref, "task.json", "task.json");
	cb_buf_adds(b, "</li>\n");
	for (p = 0; p < 3; p++)
		for (r = 0; r < CB_NROLES; r++) {
			static const char *const files[] = { "cell.json", "worker.log", "timing.jsonl", "device.json",
							     "autotune.jsonl", "ir/index.tsv", "replay_miss.json" };
			char *cdir = cb_strdupf("cells/%s-%s", phases[p], names[r]);
			char *full = cdir && tdir ? cb_path_join(tdir, cdir) : NULL;
			char *chref = cdir && thref ? cb_strdupf("%s/%s", thref, cdir) : NULL;
			size_t f, shown = 0;

			if (full && chref && cb_is_dir(full)) {
				cb_buf_adds(b, "<li><span class=\"mono\">");
				h_esc(b, cdir);
				cb_buf_adds(b, "/</span>: ");
				for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
					if (!has_file(full, files[f]))
						continue;
					cb_buf_adds(b, shown++ ? " · " : "");
					h_link(b, full, chref, files[f], files[f]);
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

/* The HTML report, one self-contained page. */
static void render_html(struct cb_buf *b, const struct report *rp)
{
	size_t i;

	cb_buf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>caliber report: ");
	h_esc(b, rp->cs.campaign);
	cb_buf_adds(b, " (");
	h_esc(b, rp->cs.selection);
	cb_buf_adds(b, rp->derived_dir ? ", derived" : "");
	cb_buf_adds(b, ")</title>\n");
	h_style(b);
	cb_buf_adds(b, "</head>\n<body>\n");
	h_header(b, rp);
	h_counts(b, rp);
	h_plots(b, rp);
	h_matrix(b, rp);
	cb_buf_adds(b, "<section id=\"tasks\">\n<h2>Tasks</h2>\n");
	for (i = 0; i < rp->n; i++)
		h_task(b, rp, &rp->t[i]);
	cb_buf_adds(b, "</section>\n<footer><p class=\"muted\">Written by <code>caliber report</code> from the receipts of this run; "
		       "links are relative to this file. A campaign proves dispatch correctness of its frozen corpus on "
		       "its device at its commits, its layout-topology response and its device-event latency, nothing "
		       "more.</p></footer>\n</body>\n</html>\n");
}

/* ------------------------------------------------------------------ */
/* The command                                                          */

/* The formats; formats[] is indexed by them and names their file
 * extensions. */
enum format { FMT_TEXT, FMT_MD, FMT_HTML };

static const struct {
	const char *name, *ext1, *ext2;
	enum format f;
} formats[] = {
	{ "text", ".txt", NULL, FMT_TEXT },
	{ "md", ".md", ".markdown", FMT_MD },
	{ "html", ".html", ".htm", FMT_HTML },
};

/* The format a -o FILE's extension asks for; text when it names none. */
static enum format format_of_file(const char *path)
{
	size_t i, n = strlen(path);

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		const char *e1 = formats[i].ext1, *e2 = formats[i].ext2;
		if ((n > strlen(e1) && strcmp(path + n - strlen(e1), e1) == 0) ||
		    (e2 && n > strlen(e2) && strcmp(path + n - strlen(e2), e2) == 0))
			return formats[i].f;
	}
	return FMT_TEXT;
}

/* Path of directory `to` as seen from directory `from`, both absolute and
 * resolved: "..", "../x/y" or "." (a relative link that survives moving
 * both together). */
static char *rel_path(const char *from, const char *to)
{
	struct cb_buf b = CB_BUF_INIT;
	size_t fn, tn;

	for (;;) {
		while (*from == '/')
			from++;
		while (*to == '/')
			to++;
		fn = strcspn(from, "/");
		tn = strcspn(to, "/");
		if (!fn || fn != tn || strncmp(from, to, fn) != 0)
			break;
		from += fn;
		to += tn;
	}
	while (*from) {
		from += strcspn(from, "/");
		cb_buf_adds(&b, b.len ? "/.." : "..");
		while (*from == '/')
			from++;
	}
	if (*to)
		cb_buf_addf(&b, "%s%s", b.len ? "/" : "", to);
	if (!b.len)
		cb_buf_adds(&b, ".");
	return cb_buf_detach(&b, NULL);
}

/* Links from the report to the run (and derived folder): relative to the
 * folder the report is written to, or to the current one for stdout. */
static int make_hrefs(struct report *rp, const char *output, struct cb_err *err)
{
	char *out = cb_resolve(output ? output : "./report"), *root = cb_resolve(rp->root);
	char *droot = rp->derived_dir ? cb_resolve(rp->derived_dir) : NULL, *slash;
	int rc = -1;

	if (!out || !root || (rp->derived_dir && !droot)) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (output && cb_path_within(out, root)) {
		cb_fail(err, "-o %s: inside the run root %s (a sealed run is never written to)", output, root);
		goto out;
	}
	slash = strrchr(out, '/');
	if (slash == out)
		slash[1] = '\0';
	else
		*slash = '\0';
	rp->href = rel_path(out, root);
	rp->dhref = droot ? rel_path(out, droot) : NULL;
	rc = rp->href && (!droot || rp->dhref) ? 0 : cb_fail(err, "out of memory");
out:
	free(out);
	free(root);
	free(droot);
	return rc;
}

static const char report_about[] =
	"Report what a run found: a sealed run root, or a derived run that\n"
	"'caliber reaccount' wrote (then sealed and derived verdicts side by side,\n"
	"with what changed and why). The seal of the run is checked again and its\n"
	"status stated first. Formats:\n"
	"  text  verdict counts, then one aligned row per task: verdict and reason\n"
	"        code, topology baseline/control/candidate, speedup and interval in\n"
	"        round a and round b, timer (the default)\n"
	"  md    the same tables in GitHub Markdown, for a pull request\n"
	"  html  one self-contained file (inline CSS and SVG, no script, nothing\n"
	"        fetched): header, verdict matrix, topology and forest plots, and\n"
	"        per task its cells, rows, samples and links to the receipts\n"
	"Without --format the format follows -o's extension (.md, .html), else\n"
	"text. -o FILE is written atomically; without it the report goes to\n"
	"stdout. Links in HTML are relative to FILE's folder.\n"
	"A derived run names its run root in derived.json (run.root, as given to\n"
	"reaccount, taken from the current directory); --run DIR points at it\n"
	"from elsewhere.\n"
	"Exit status: 0 whatever the verdicts, unless --fail-on VERDICTS (e.g.\n"
	"K,R,X) names one that a task has (for a derived run: its derived\n"
	"verdict): then 5, after the report is written.";

/* caliber report: load the run (and derived run), check the seal, render,
 * write, then gate on --fail-on. */
int cmd_report(int argc, char **argv, struct cb_err *err)
{
	struct report rp;
	struct cb_buf b = CB_BUF_INIT;
	struct row *rows = NULL;
	const char *format = NULL, *output = NULL, *fail_on = NULL, *run = NULL;
	struct cb_args args = CB_ARGS_INIT;
	char fail_set[8] = "", *data = NULL, *path = NULL;
	enum format fmt = FMT_TEXT;
	size_t i, len, hits = 0;
	int rc;
	const struct cb_opt opts[] = {
		{ "format", CB_OPT_STR, &format, "FMT", "text, md or html (default: from -o's extension, else text)" },
		{ "output", CB_OPT_PATH, &output, "FILE", "write the report there, not to stdout" },
		{ "fail-on", CB_OPT_STR, &fail_on, "VERDICTS", "exit 5 when a task has one of these (e.g. K,R,X)" },
		{ "run", CB_OPT_PATH, &run, "DIR", "derived run: the run root, when derived.json's run.root is elsewhere" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "report", "RUN_ROOT|DERIVED_DIR [--format text|md|html] [-o FILE] [--fail-on VERDICTS]",
					  report_about, opts, 1, 1 };

	rc = cb_parse_opts(&spec, argc, argv, &args, err);
	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	memset(&rp, 0, sizeof(rp));
	rc = CB_EXIT_USAGE;
	if (cb_fail_on_parse(fail_on, fail_set, err) < 0)
		goto out;
	if (format) {
		for (i = 0; i < sizeof(formats) / sizeof(formats[0]) && strcmp(formats[i].name, format) != 0; i++)
			;
		if (i == sizeof(formats) / sizeof(formats[0])) {
			cb_fail(err, "--format: '%s' is not one of text, md, html", format);
			goto out;
		}
		fmt = formats[i].f;
	} else if (output) {
		fmt = format_of_file(output);
	}
	rc = CB_EXIT_FAIL;
	if (!cb_is_dir(args.pos[0])) {
		cb_fail(err, "%s: not a directory", args.pos[0]);
		goto out;
	}
	if (has_file(args.pos[0], "derived.json")) {
		if (load_derived(&rp, args.pos[0], run, err) < 0)
			goto out;
	} else if (run) {
		cb_fail(err, "--run DIR applies to a derived run only, and %s holds no derived.json", args.pos[0]);
		rc = CB_EXIT_USAGE;
		goto out;
	} else if (!has_file(args.pos[0], "campaign.json")) {
		cb_fail(err, "%s: neither a run root (no campaign.json) nor a derived run (no derived.json)", args.pos[0]);
		goto out;
	} else {
		rp.root = args.pos[0];
	}
	path = cb_path_join(rp.root, "campaign.json");
	if (!path) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (cb_campaign_summary_load(path, &rp.cs, err) < 0)
		goto out;
	if (load_tasks(&rp, err) < 0 || (rp.dj && attach_derived(&rp, err) < 0) ||
	    make_hrefs(&rp, output, err) < 0)
		goto out;
	if (!seal_status(&rp) && fail_set[0]) {
		/* A gate never passes a run whose receipts cannot be trusted, and
		 * writes nothing for it. */
		cb_fail(err, "--fail-on %s: %s: the seal %s; a run that does not verify passes no gate", fail_on,
			rp.root, rp.seal);
		rc = CB_EXIT_VERIFY;
		goto out;
	}
	rows = calloc(rp.n + 1, sizeof(*rows));
	if (!rows) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (fmt == FMT_TEXT)
		render_text(&b, &rp, rows);
	else if (fmt == FMT_MD)
		render_md(&b, &rp, rows);
	else
		render_html(&b, &rp);
	data = cb_buf_detach(&b, &len);
	if (!data) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (output) {
		if (cb_mkdir_parent(output, 0755, err) < 0 || cb_write_atomic(output, data, len, 0644, err) < 0)
			goto out;
		printf("report: wrote %s (%s, %zu tasks; seal %s)\n", output, formats[fmt].name, rp.n, rp.seal);
	} else if (fwrite(data, 1, len, stdout) != len) {
		cb_fail(err, "stdout: write failed");
		goto out;
	}
	rc = CB_EXIT_OK;
	for (i = 0; fail_set[0] && i < rp.n; i++)
		hits += strchr(fail_set, verdict_of(&rp.t[i])) != NULL;
	if (hits) {
		struct cb_buf names = CB_BUF_INIT;
		for (i = 0; i < rp.n; i++)
			if (strchr(fail_set, verdict_of(&rp.t[i])))
				cb_buf_addf(&names, "%s%s (%c)", names.len ? ", " : "", rp.t[i].sealed.id, verdict_of(&rp.t[i]));
		cb_fail(err, "--fail-on %s: %zu task%s %s one of these verdicts: %s", fail_on, hits,
			hits == 1 ? "" : "s", hits == 1 ? "has" : "have", names.data ? names.data : "");
		cb_buf_release(&names);
		rc = CB_EXIT_GATE;
	}
out:
	free(path);
	free(data);
	free(rows);
	cb_buf_release(&b);
	report_release(&rp);
	cb_args_release(&args);
	return rc;
}
