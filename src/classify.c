/* classify.c: the verdict table of SPEC section 10. */
#include "classify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"

/* Letter, meaning: every verdict the table can give, in its order. */
static const struct {
	char v;
	const char *meaning;
} verdicts[] = {
	{ 'X', "not assessed (harness, timeout, IR)" },
	{ 'K', "candidate incorrect" },
	{ 'B', "no topology reduction" },
	{ 'G', "stable gain" },
	{ 'R', "stable regression" },
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
			return cb_fail(err, "--fail-on: '%c' is not a verdict (X, K, B, G, R, C)", *s);
		if (!strchr(set, *s)) {
			set[n++] = *s;
			set[n] = '\0';
		}
	}
	return 0;
}

int cb_fail_on_hits(const char *set, char v)
{
	return v && strchr(set, v) != NULL;
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

/* "+5.23% [+4.90%, +5.61%] (A/A 0.08%)" for one order. */
static void describe_order(const struct cb_facts *f, int o, char *out, size_t cap)
{
	if (!f->order[o].present) {
		snprintf(out, cap, "not timed");
		return;
	}
	snprintf(out, cap, "%+.2f%% [%+.2f%%, %+.2f%%] (A/A %.2f%%)", 100 * f->order[o].point,
		 100 * f->order[o].lo, 100 * f->order[o].hi, 100 * f->order[o].aa);
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
	if (!cb_topology_reduced(f)) {
		set(v, 'B', "no-reduction");
		v->reason = cb_strdupf("candidate topology %lld is not below baseline %lld",
			 tk, tb);
		return;
	}
	if (!f->order[CB_ORDER_A].present || !f->order[CB_ORDER_B].present) {
		set(v, 'X', "no-round-b-evidence");
		v->reason = cb_strdupf("topology %lld -> %lld but round %s was not timed", tb, tk,
			 f->order[CB_ORDER_A].present ? "b" : "a");
		return;
	}
	for (o = 0; o < CB_NORDERS; o++) {
		double mag = fabs(f->order[o].point);
		v->stable_gain[o] = f->order[o].lo >= f->gain && mag > f->order[o].aa;
		v->stable_regression[o] = f->order[o].hi <= f->regression && mag > f->order[o].aa;
	}
	describe_order(f, CB_ORDER_A, a, sizeof(a));
	describe_order(f, CB_ORDER_B, b, sizeof(b));
	if (v->stable_gain[CB_ORDER_A] && v->stable_gain[CB_ORDER_B]) {
		set(v, 'G', "stable-gain");
		v->reason = cb_strdupf("topology %lld -> %lld; round a %s, round b %s: both clear gain %+.2f%%", tb, tk, a, b,
			 100 * f->gain);
	} else if (v->stable_regression[CB_ORDER_A] && v->stable_regression[CB_ORDER_B]) {
		set(v, 'R', "stable-regression");
		v->reason = cb_strdupf("topology %lld -> %lld; round a %s, round b %s: both clear regression %+.2f%%", tb, tk,
			 a, b, 100 * f->regression);
	} else {
		set(v, 'C', "not-stable");
		v->reason = cb_strdupf("topology %lld -> %lld; round a %s, round b %s: not a stable gain or regression in both orders",
			 tb, tk, a, b);
	}
}
