/* facts.c: the classifier's facts from a task's loaded evidence (the
 * harness problem that makes it X, each order's timed rows and speedup,
 * its kernels and topology), and the task account that bundles both;
 * loading the evidence from the cell folders is evidence.c's. */
#include "evidence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/fsutil.h"
#include "base/runroot.h"

/* Rank of a harness problem: the order in which the X row of the verdict
 * table (docs/design.md section 10.3) lists them. The screen is none: one
 * that did not pass screens nothing out, and its task is timed. */
static int harness_rank(enum cb_outcome o, int phase)
{
	if (phase == CB_PH_SCREEN)
		return 0;
	switch (o) {
	case CB_OUT_UNSUPPORTED: return 1;
	case CB_OUT_TIMEOUT: return 2;
	case CB_OUT_CRASHED:
	case CB_OUT_ERROR:
	case CB_OUT_MISSING_OUTPUT: return 3;
	case CB_OUT_FAILED: return phase == CB_PH_CORRECTNESS ? 0 : 3;   /* a benchmark that fails */
	case CB_OUT_NOT_RUN: return phase == CB_PH_ROUND_B ? 0 : 3;      /* b runs only on a reduction */
	case CB_OUT_REPLAY_MISS: return 4;
	case CB_OUT_PASSED: return 0;
	}
	return 3;
}

static const char *const harness_codes[] = { NULL, "unsupported", "timeout", "harness-failure", "replay-miss" };

static const char *role_cell_name(const struct cb_manifest *m, int r)
{
	return cb_manifest_cell(m, (enum cb_role)r)->name;
}

/* The first harness problem by the spec's order, phases and cells in run
 * order; the rounds of a screened task were not run, by design. */
static void find_harness(const struct cb_task_evidence *ev, const struct cb_manifest *m,
			 struct cb_facts *f)
{
	int best = 0, p, c;

	for (p = 0; p < CB_NPHASES; p++)
		for (c = 0; c < CB_NROLES; c++) {
			enum cb_role r = m->cells[c].role;
			int rank = f->screened && p == CB_PH_ROUND_A ? 0 : harness_rank(ev->outcome[p][r], p);
			if (rank && (!best || rank < best)) {
				best = rank;
				free(f->harness_reason);
				f->harness_reason = cb_strdupf("%s in cell %s, %s%s: %s",
							       cb_outcome_name(ev->outcome[p][r]), m->cells[c].name,
							       p == CB_PH_CORRECTNESS ? "" : "round ",
							       cb_phase_name((enum cb_phase)p), ev->detail[p][r]);
			}
		}
	f->harness_code = harness_codes[best];
}

/* The rows one order compares: the baseline's first session gives them
 * and their order; every session of every cell must have timed each of
 * them with the same timer. A row found throttled in any session of any
 * cell is left out of the order (docs/design.md section 6), in all three cells alike.
 * at[r][i * nsessions + k] are the samples of row i in session k of role r. */
struct order_rows {
	const char **names;                     /* [n] */
	struct cb_samples *at[CB_NROLES];
	size_t nsessions[CB_NROLES];
	size_t n, throttled;
};

static void order_rows_release(struct order_rows *rows)
{
	int r;

	free(rows->names);
	for (r = 0; r < CB_NROLES; r++)
		free(rows->at[r]);
	memset(rows, 0, sizeof(*rows));
}

/* A harness failure in f with the given reason (owned; NULL: out of
 * memory). Returns 1, or -1 with err set when reason is NULL. */
static int order_fails(struct cb_facts *f, char *reason, struct cb_err *err)
{
	if (!reason)
		return cb_fail(err, "out of memory");
	f->harness_code = "harness-failure";
	free(f->harness_reason);
	f->harness_reason = reason;
	return 1;
}

/* A row's timer_reason as a message quotes it. */
static const char *reason_or_none(const char *reason)
{
	return reason && *reason ? reason : "no reason recorded";
}

/* " (session k)" for k > 1 (0-based index k - 1 given), "" for the first. */
static void session_suffix(size_t k, char out[32])
{
	if (k)
		snprintf(out, 32, " (session %zu)", k + 1);
	else
		out[0] = '\0';
}

/* Fill rows for order o. Returns 0 when built, 1 when the rows do not
 * match across cells and sessions (a harness failure, reported through
 * f), -1 on failure (out of memory). */
static int order_rows_build(const struct cb_task_evidence *ev, const struct cb_manifest *m, int o,
			    struct order_rows *rows, struct cb_facts *f, struct cb_err *err)
{
	const struct cb_timing *t1 = &ev->timing[o][CB_ROLE_BASELINE][0];
	const char *round = o ? "b" : "a";
	size_t i, k, keep = 0;
	int r;

	memset(rows, 0, sizeof(*rows));
	rows->names = calloc(t1->n ? t1->n : 1, sizeof(*rows->names));
	for (r = 0; r < CB_NROLES; r++) {
		rows->nsessions[r] = ev->nsessions[o][r];
		rows->at[r] = calloc(t1->n * rows->nsessions[r] + 1, sizeof(*rows->at[r]));
		if (!rows->at[r])
			return cb_fail(err, "out of memory");
	}
	if (!rows->names)
		return cb_fail(err, "out of memory");
	for (r = 0; r < CB_NROLES; r++)
		for (k = 0; k < rows->nsessions[r]; k++) {
			const struct cb_timing *t = &ev->timing[o][r][k];
			char sfx[32];

			session_suffix(k, sfx);
			if (t->n != t1->n)
				return order_fails(f, cb_strdupf("round %s: baseline has %zu timing rows, %s%s has %zu",
								 round, t1->n, role_cell_name(m, r), sfx, t->n),
						   err);
		}
	for (i = 0; i < t1->n; i++) {
		int throttled = 0;

		for (r = 0; r < CB_NROLES; r++)
			for (k = 0; k < rows->nsessions[r]; k++) {
				const struct cb_timing *t = &ev->timing[o][r][k];
				const struct cb_timing_row *row = NULL;
				size_t j;
				char sfx[32];

				for (j = 0; j < t->n && !row; j++)
					if (strcmp(t->rows[j].row, t1->rows[i].row) == 0)
						row = &t->rows[j];
				session_suffix(k, sfx);
				if (!row)
					return order_fails(f, cb_strdupf("round %s: row '%s' is missing in cell %s%s", round,
									 t1->rows[i].row, role_cell_name(m, r), sfx),
							   err);
				if (strcmp(row->timer, t1->rows[i].timer) != 0)
					return order_fails(f, cb_strdupf("round %s: row '%s' is timed differently in cell %s%s: "
									 "%s (%s) there, %s (%s) in the baseline's first session",
									 round, t1->rows[i].row, role_cell_name(m, r), sfx,
									 row->timer, reason_or_none(row->timer_reason),
									 t1->rows[i].timer, reason_or_none(t1->rows[i].timer_reason)),
							   err);
				throttled |= row->throttled;
				rows->at[r][keep * rows->nsessions[r] + k] = (struct cb_samples){ row->samples, row->n };
			}
		if (throttled) {
			rows->throttled++;
			continue;
		}
		rows->names[keep++] = t1->rows[i].row;
	}
	rows->n = keep;
	return 0;
}

/* Speedup of role `other` against the baseline over rows, seeded by the
 * task and seed_tag. */
static int order_speedup(const struct cb_task_evidence *ev, const struct cb_manifest *m, int resamples,
			 const struct order_rows *rows, enum cb_role other, const char *seed_tag,
			 struct cb_speedup *sp, struct cb_err *err)
{
	struct cb_cell_samples base = { rows->at[CB_ROLE_BASELINE], rows->n, rows->nsessions[CB_ROLE_BASELINE] };
	struct cb_cell_samples oth = { rows->at[other], rows->n, rows->nsessions[other] };
	uint64_t seed;

	if (cb_bootstrap_seed(ev->task, seed_tag, &seed, err) < 0)
		return -1;
	return cb_speedup(rows->names, &base, &oth, m->confidence, seed, resamples, sp, err);
}

/* At most this many reasons are listed for IR that cannot be joined; the
 * rest are counted. */
#define UNJOINABLE_LISTED 8

/* Where the GPU time moved between the baseline and the candidate, by the
 * kernels whose converts changed and those whose converts did not, under
 * the topology's present scope (kernels.h); unknown without both cells'
 * topology and profiled rows in common. */
static int facts_kernels(const struct cb_task_evidence *ev, struct cb_facts *f, struct cb_err *err)
{
	struct cb_time_moved mv;

	free(f->kernels.top);
	memset(&f->kernels, 0, sizeof(f->kernels));
	if (!ev->have_topology[CB_ROLE_BASELINE] || !ev->have_topology[CB_ROLE_CANDIDATE])
		return 0;
	if (cb_time_moved_of(&ev->kernels[CB_ROLE_BASELINE], &ev->kernels[CB_ROLE_CANDIDATE],
			     &ev->topology[CB_ROLE_BASELINE], &ev->topology[CB_ROLE_CANDIDATE], &mv, err) < 0)
		return -1;
	f->kernels.known = mv.known;
	f->kernels.saved = mv.base_ns - mv.cand_ns;
	f->kernels.unchanged = mv.unchanged_ns;
	f->kernels.changed = mv.changed;
	f->kernels.top = mv.top;
	mv.top = NULL;
	cb_time_moved_release(&mv);
	return 0;
}

int cb_facts_topology(const struct cb_task_evidence *ev, const struct cb_manifest *m,
		      struct cb_facts *f)
{
	struct cb_buf b = CB_BUF_INIT;
	struct cb_err err;
	size_t listed = 0, more = 0, k;
	int r;

	f->joinable = 1;
	free(f->unjoinable);
	f->unjoinable = NULL;
	free(f->identity_reason);
	f->identity_reason = ev->identity.reason ? strdup(ev->identity.reason) : NULL;
	f->identical = ev->identity.identical;
	f->screened = ev->from_screen && ev->identity.identical;
	for (r = 0; r < CB_NROLES; r++) {
		f->topology[r] = 0;
		if (ev->have_topology[r] && ev->topology[r].joinable) {
			f->topology[r] = ev->topology[r].scoped;
			continue;
		}
		f->joinable = 0;
		if (!ev->have_topology[r]) {
			cb_buf_addf(&b, "%s%s: %s", b.len ? "; " : "", role_cell_name(m, r),
				    ev->topology_error[r] ? ev->topology_error[r] : "no IR");
			listed++;
			continue;
		}
		for (k = 0; k < ev->topology[r].nunjoinable; k++) {
			if (listed == UNJOINABLE_LISTED) {
				more++;
				continue;
			}
			cb_buf_addf(&b, "%s%s: %s", b.len ? "; " : "", role_cell_name(m, r),
				    ev->topology[r].unjoinable[k]);
			listed++;
		}
	}
	if (more)
		cb_buf_addf(&b, "; and %zu more", more);
	f->unjoinable = f->joinable ? NULL : cb_buf_detach(&b, NULL);
	cb_buf_release(&b);
	return facts_kernels(ev, f, &err);
}

int cb_facts_from_evidence(const struct cb_task_evidence *ev, const struct cb_manifest *m, int resamples,
			   struct cb_facts *f, struct cb_figures *fig, struct cb_err *err)
{
	static const char *const tags[CB_NORDERS][2] = { { "a", "a-aa" }, { "b", "b-aa" } };
	int r, o;

	memset(f, 0, sizeof(*f));
	memset(fig, 0, sizeof(*fig));
	fig->resamples = resamples;
	fig->confidence = m->confidence;
	f->gain = m->gain;
	f->regression = m->regression;
	if (cb_facts_topology(ev, m, f) < 0)
		return cb_fail(err, "out of memory");
	find_harness(ev, m, f);
	for (r = 0; r < CB_NROLES; r++)
		f->correct[r] = ev->outcome[CB_PH_CORRECTNESS][r] == CB_OUT_PASSED;
	if (f->harness_code)
		return 0;
	for (o = 0; o < CB_NORDERS; o++) {
		int ph = o == CB_ORDER_A ? CB_PH_ROUND_A : CB_PH_ROUND_B;
		struct order_rows rows;
		int rc;

		if (ev->outcome[ph][CB_ROLE_BASELINE] != CB_OUT_PASSED ||
		    ev->outcome[ph][CB_ROLE_CONTROL] != CB_OUT_PASSED ||
		    ev->outcome[ph][CB_ROLE_CANDIDATE] != CB_OUT_PASSED)
			continue;
		rc = order_rows_build(ev, m, o, &rows, f, err);
		if (rc == 0 && rows.n == 0) {
			f->harness_code = "throttled";
			free(f->harness_reason);
			f->harness_reason = cb_strdupf("round %s: every one of its %zu rows ran throttled (below %.0f%% of the "
						       "maximum SM clock) in some cell and session, measured again or not",
						       o ? "b" : "a", rows.throttled, 100 * m->throttle_floor);
			rc = f->harness_reason ? 1 : cb_fail(err, "out of memory");
		}
		if (rc == 0 &&
		    (order_speedup(ev, m, resamples, &rows, CB_ROLE_CANDIDATE, tags[o][0], &fig->cand[o], err) < 0 ||
		     order_speedup(ev, m, resamples, &rows, CB_ROLE_CONTROL, tags[o][1], &fig->aa[o], err) < 0))
			rc = -1;
		if (rc == 0) {
			fig->present[o] = 1;
			f->order[o].present = 1;
			f->order[o].point = fig->cand[o].point;
			f->order[o].lo = fig->cand[o].lo;
			f->order[o].hi = fig->cand[o].hi;
			f->order[o].aa = fig->aa[o].point;
			f->order[o].aa_lo = fig->aa[o].lo;
			f->order[o].aa_hi = fig->aa[o].hi;
			f->order[o].rows = rows.n;
			f->order[o].throttled = rows.throttled;
		}
		order_rows_release(&rows);
		if (rc != 0)
			return rc < 0 ? -1 : 0;
	}
	return 0;
}

int cb_task_account(const char *task_dir, const char *task, const struct cb_manifest *m, long long floor,
		    int resamples, const struct cb_ttgir_counts *pre, struct cb_task_account *a, struct cb_err *err)
{
	memset(a, 0, sizeof(*a));
	if (cb_evidence_load(task_dir, task, m, floor, pre, &a->ev, err) < 0)
		return -1;
	if (cb_facts_from_evidence(&a->ev, m, resamples, &a->f, &a->fig, err) < 0) {
		cb_prefix(err, "task %s", task);
		cb_task_account_release(a);
		return -1;
	}
	cb_classify(&a->f, &a->v);
	return 0;
}

int cb_task_account_rescope(struct cb_task_account *a, const struct cb_manifest *m, long long floor,
			    struct cb_err *err)
{
	if (cb_evidence_rescope(&a->ev, m, floor, err) < 0)
		return -1;
	if (cb_facts_topology(&a->ev, m, &a->f) < 0)
		return cb_fail(err, "out of memory");
	cb_verdict_release(&a->v);
	cb_classify(&a->f, &a->v);
	return 0;
}

int cb_task_account_scope_time(struct cb_task_account *a, const struct cb_manifest *m, long long share_ppm,
			       struct cb_err *err)
{
	int r;

	for (r = 0; r < CB_NROLES; r++) {
		const struct cb_cell_kernels *ck = &a->ev.kernels[r];
		struct cb_kernel_sums s;

		if (!a->ev.have_topology[r])
			continue;
		if (ck->error)
			return cb_fail(err, "task %s: cell %s: %s", a->ev.task, role_cell_name(m, r), ck->error);
		if (!ck->n)
			return cb_fail(err, "task %s: cell %s: %s", a->ev.task, role_cell_name(m, r),
				       ck->present ? "no profiled replay of round a could be joined to its variants"
						   : "no kernels.jsonl in round a (a run made without the profiled replay)");
		if (cb_kernel_sums_of(ck, NULL, 0, &s, err) < 0)
			return -1;
		cb_kernels_scope_topology(&a->ev.topology[r], &s, share_ppm);
		cb_kernel_sums_release(&s);
	}
	if (cb_facts_topology(&a->ev, m, &a->f) < 0)
		return cb_fail(err, "out of memory");
	cb_verdict_release(&a->v);
	cb_classify(&a->f, &a->v);
	return 0;
}

void cb_task_account_release(struct cb_task_account *a)
{
	cb_evidence_release(&a->ev);
	cb_facts_release(&a->f);
	cb_verdict_release(&a->v);
	memset(a, 0, sizeof(*a));
}
