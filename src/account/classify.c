/* classify.c: the verdict table of docs/design.md section 10. */
#include "classify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"

/* Letter, meaning: every verdict the table can give, in its order. */
static const struct {
	char v;
	const char *meaning;
} verdicts[] = {
	{ 'X', "not assessed (harness, timeout, IR)" },
	{ 'K', "candidate incorrect" },
	{ 'R', "stable regression" },
	{ 'B', "no topology reduction" },
	{ 'G', "stable gain" },
	{ 'C', "reduced, speedup not stable" },
};

_Static_assert(sizeof(verdicts) / sizeof(verdicts[0]) == sizeof(CB_VERDICTS) - 1,
	       "CB_VERDICTS lists the verdict table");

int cb_verdict_known(char v)
{
	return v && strchr(CB_VERDICTS, v) != NULL;
}

const char *cb_verdict_meaning(char v)
{
	size_t i;

	for (i = 0; i < sizeof(verdicts) / sizeof(verdicts[0]); i++)
		if (verdicts[i].v == v)
			return verdicts[i].meaning;
	return "not a verdict";
}

int cb_fail_on_parse(const char *s, char set[8], struct cb_err *err)
{
	size_t n = 0;

	set[0] = '\0';
	for (; s && *s; s++) {
		if (*s == ',' || *s == ' ')
			continue;
		if (!cb_verdict_known(*s) || n >= sizeof(CB_VERDICTS) - 1)
			return cb_fail(err, "--fail-on: '%c' is not a verdict (X, K, R, B, G, C)", *s);
		if (!strchr(set, *s)) {
			set[n++] = *s;
			set[n] = '\0';
		}
	}
	return 0;
}

void cb_gate_init(struct cb_gate *g, const char *letters, const char *set)
{
	memset(g, 0, sizeof(*g));
	g->letters = letters;
	g->set = set;
}

int cb_gate_add(struct cb_gate *g, const char *id, char v, struct cb_err *err)
{
	if (!v || !g->set || !strchr(g->set, v))
		return 0;
	g->hits++;
	if (cb_buf_addf(&g->names, "%s%s (%c)", g->names.len ? ", " : "", id, v) < 0)
		return cb_fail(err, "--fail-on: out of memory");
	return 0;
}

int cb_gate_judge(const struct cb_gate *g, struct cb_err *err)
{
	if (!g->hits)
		return 0;
	return cb_fail(err, "--fail-on %s: %zu task%s %s one of these verdicts: %s", g->letters, g->hits,
		       g->hits == 1 ? "" : "s", g->hits == 1 ? "has" : "have", g->names.data ? g->names.data : "");
}

void cb_gate_release(struct cb_gate *g)
{
	cb_buf_release(&g->names);
	memset(g, 0, sizeof(*g));
}

void cb_verdict_release(struct cb_verdict *v)
{
	free(v->reason);
	memset(v, 0, sizeof(*v));
}

void cb_facts_release(struct cb_facts *f)
{
	free(f->harness_reason);
	free(f->unjoinable);
	free(f->kernels.top);
	free(f->identity_reason);
	memset(f, 0, sizeof(*f));
}

int cb_topology_reduced(const struct cb_facts *f)
{
	return f->topology[CB_ROLE_CANDIDATE] < f->topology[CB_ROLE_BASELINE];
}

static void set(struct cb_verdict *v, char verdict, const char *code)
{
	v->verdict = verdict;
	v->code = code;
}

int cb_order_stability(const struct cb_facts *f, int o)
{
	if (!f->order[o].present)
		return 0;
	if (f->order[o].lo >= f->gain && f->order[o].lo > f->order[o].aa_hi)
		return 1;
	if (f->order[o].hi <= f->regression && f->order[o].hi < f->order[o].aa_lo)
		return -1;
	return 0;
}

/* Whether x, as the candidate's bound, would make a stable gain (1) or a
 * stable regression (-1) of order o: the rule of cb_order_stability. */
static int gain_at(const struct cb_facts *f, int o, double x)
{
	return x >= f->gain && x > f->order[o].aa_hi;
}

static int regression_at(const struct cb_facts *f, int o, double x)
{
	return x <= f->regression && x < f->order[o].aa_lo;
}

int cb_order_undecided(const struct cb_facts *f, int o, char *why, size_t cap)
{
	const double lo = f->order[o].lo, hi = f->order[o].hi, alo = f->order[o].aa_lo, ahi = f->order[o].aa_hi;
	const double smaller = f->gain < -f->regression ? f->gain : -f->regression;

	if (!f->order[o].present || f->harness_code || !f->joinable || !f->correct[CB_ROLE_BASELINE] ||
	    !f->correct[CB_ROLE_CONTROL] || !f->correct[CB_ROLE_CANDIDATE])
		return 0;
	if (cb_topology_reduced(f) && gain_at(f, o, hi) && !gain_at(f, o, lo)) {
		snprintf(why, cap, "the candidate's %+.2f%% [%+.2f%%, %+.2f%%] straddles a stable gain (at least gain "
			 "%+.2f%% and above the A/A band's %+.2f%%)", 100 * f->order[o].point, 100 * lo, 100 * hi,
			 100 * f->gain, 100 * ahi);
		return 1;
	}
	if (regression_at(f, o, lo) && !regression_at(f, o, hi)) {
		snprintf(why, cap, "the candidate's %+.2f%% [%+.2f%%, %+.2f%%] straddles a stable regression (at most "
			 "regression %+.2f%% and below the A/A band's %+.2f%%)", 100 * f->order[o].point, 100 * lo,
			 100 * hi, 100 * f->regression, 100 * alo);
		return 1;
	}
	if (ahi - alo > smaller) {
		snprintf(why, cap, "the A/A band [%+.2f%%, %+.2f%%] is %.2f%% wide, wider than the smaller threshold %.2f%%",
			 100 * alo, 100 * ahi, 100 * (ahi - alo), 100 * smaller);
		return 1;
	}
	return 0;
}

/* "+5.23% [+4.90%, +5.61%] (A/A +0.08% [-0.10%, +0.25%])" for one order,
 * with the rows left out as throttled when there are any. */
static void describe_order(const struct cb_facts *f, int o, char *out, size_t cap)
{
	int n;

	if (!f->order[o].present) {
		snprintf(out, cap, "not timed");
		return;
	}
	n = snprintf(out, cap, "%+.2f%% [%+.2f%%, %+.2f%%] (A/A %+.2f%% [%+.2f%%, %+.2f%%])",
		     100 * f->order[o].point, 100 * f->order[o].lo, 100 * f->order[o].hi, 100 * f->order[o].aa,
		     100 * f->order[o].aa_lo, 100 * f->order[o].aa_hi);
	if (f->order[o].throttled && n > 0 && (size_t)n < cap)
		snprintf(out + n, cap - (size_t)n, ", %zu of %zu rows left out as throttled", f->order[o].throttled,
			 f->order[o].rows + f->order[o].throttled);
}

/* The end of the reason of a task stably faster (faster) or slower in both
 * orders whose profiled GPU time moved mostly in kernels whose converts did
 * not change: the share of the time saved or lost there, and the kernel
 * that moved most. Nothing when the profile does not show the change, or
 * when no kernel's converts changed (then it says nothing new). */
static void add_kernel_note(const struct cb_facts *f, struct cb_verdict *v, int faster)
{
	const double saved = f->kernels.saved;
	double share;
	char *more;

	if (!v->reason || !f->kernels.known || !f->kernels.changed || !f->kernels.top || saved == 0 ||
	    (saved > 0) != faster)
		return;
	share = f->kernels.unchanged / saved;
	if (share <= 0.5)
		return;
	more = cb_strdupf("%s; %s, mostly in kernels whose converts did not change (%.0f%% of the GPU time %s, most in %s)",
			  v->reason, faster ? "faster" : "slower", 100 * share, faster ? "saved" : "lost",
			  f->kernels.top);
	free(v->reason);
	v->reason = more;
}

/* The R row of the table: a stable regression in both orders, whatever
 * the topology. */
static int classify_regression(const struct cb_facts *f, struct cb_verdict *v, const char *a, const char *b)
{
	const long long tb = f->topology[CB_ROLE_BASELINE], tk = f->topology[CB_ROLE_CANDIDATE];

	if (!v->stable_regression[CB_ORDER_A] || !v->stable_regression[CB_ORDER_B])
		return 0;
	set(v, 'R', "stable-regression");
	v->reason = cb_strdupf("topology %lld -> %lld; round a %s, round b %s: both clear regression %+.2f%% and the A/A band",
			       tb, tk, a, b, 100 * f->regression);
	add_kernel_note(f, v, 0);
	return 1;
}

/* The B row: no fewer topology ops; a candidate that is stably faster in
 * both orders all the same says so (faster, but not through fewer ops). */
static void classify_no_reduction(const struct cb_facts *f, struct cb_verdict *v, const char *a, const char *b)
{
	const long long tb = f->topology[CB_ROLE_BASELINE], tk = f->topology[CB_ROLE_CANDIDATE];

	set(v, 'B', "no-reduction");
	if (v->stable_gain[CB_ORDER_A] && v->stable_gain[CB_ORDER_B]) {
		v->reason = cb_strdupf("candidate topology %lld is not below baseline %lld, yet stably faster in both orders "
				       "(round a %s, round b %s): faster, but not through fewer topology ops",
				       tk, tb, a, b);
		add_kernel_note(f, v, 1);
	} else
		v->reason = cb_strdupf("candidate topology %lld is not below baseline %lld", tk, tb);
}

void cb_classify(const struct cb_facts *f, struct cb_verdict *v)
{
	char a[256], b[256];
	const long long tb = f->topology[CB_ROLE_BASELINE], tc = f->topology[CB_ROLE_CONTROL],
			tk = f->topology[CB_ROLE_CANDIDATE];
	int o;

	memset(v, 0, sizeof(*v));
	if (f->harness_code) {
		set(v, 'X', f->harness_code);
		v->reason = cb_strdupf("%s", f->harness_reason);
		return;
	}
	if (!f->joinable) {
		set(v, 'X', "unjoinable-ir");
		v->reason = cb_strdupf("IR cannot be joined to its launch index: %s",
			 f->unjoinable);
		return;
	}
	if (tc != tb) {
		set(v, 'X', "control-mismatch");
		v->reason = cb_strdupf("control topology %lld differs from baseline %lld: the control plane is broken", tc, tb);
		return;
	}
	if (!f->correct[CB_ROLE_BASELINE]) {
		set(v, 'X', "baseline-incorrect");
		v->reason = cb_strdupf("the baseline fails its correctness tests");
		return;
	}
	if (!f->correct[CB_ROLE_CONTROL]) {
		set(v, 'X', "control-incorrect");
		v->reason = cb_strdupf("the control fails correctness while the baseline passes: the control plane is broken");
		return;
	}
	if (!f->correct[CB_ROLE_CANDIDATE]) {
		set(v, 'K', "candidate-incorrect");
		v->reason = cb_strdupf("baseline and control pass correctness, the candidate fails");
		return;
	}
	if (f->screened) {
		set(v, 'B', "identical-binaries");
		v->reason = cb_strdupf("not timed: topology %lld -> %lld; %s", tb, tk, f->identity_reason);
		return;
	}
	for (o = 0; o < CB_NORDERS; o++) {
		v->stable_gain[o] = cb_order_stability(f, o) > 0;
		v->stable_regression[o] = cb_order_stability(f, o) < 0;
	}
	describe_order(f, CB_ORDER_A, a, sizeof(a));
	describe_order(f, CB_ORDER_B, b, sizeof(b));
	if (classify_regression(f, v, a, b))
		return;
	if (!cb_topology_reduced(f)) {
		classify_no_reduction(f, v, a, b);
		return;
	}
	if (!f->order[CB_ORDER_A].present || !f->order[CB_ORDER_B].present) {
		set(v, 'X', "no-round-b-evidence");
		v->reason = cb_strdupf("topology %lld -> %lld but round %s was not timed", tb, tk,
			 f->order[CB_ORDER_A].present ? "b" : "a");
		return;
	}
	if (v->stable_gain[CB_ORDER_A] && v->stable_gain[CB_ORDER_B]) {
		set(v, 'G', "stable-gain");
		v->reason = cb_strdupf("topology %lld -> %lld; round a %s, round b %s: both clear gain %+.2f%% and the A/A band",
				       tb, tk, a, b, 100 * f->gain);
		add_kernel_note(f, v, 1);
	} else {
		set(v, 'C', "not-stable");
		v->reason = cb_strdupf("topology %lld -> %lld; round a %s, round b %s: not a stable gain or regression in both orders",
			 tb, tk, a, b);
	}
}
