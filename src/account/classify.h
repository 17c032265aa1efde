/* classify.h: the verdict of a task (docs/design.md section 10), from the facts the
 * runner or reaccount gathered. Exactly the spec's table, first match wins:
 *
 *   X  unsupported, timeout, harness failure, replay miss, control mismatch,
 *      unjoinable IR, baseline incorrect, every row throttled (also:
 *      control incorrect, and a reduction without round-b timings)
 *   K  baseline and control correct, candidate incorrect
 *   R  correct, stable regression <= regression in both orders, whatever
 *      the topology
 *   B  correct, candidate topology not below baseline (also: correct and
 *      not timed, its binaries identical in every cell: run --prescreen)
 *   G  topology below baseline, stable speedup >= gain in both orders
 *   C  topology below baseline, otherwise
 *
 * A task stably faster in both orders (G, or a B faster all the same) or
 * stably slower (R), some of whose kernels' converts changed, and whose
 * profiled GPU time moved mostly (more than half) in kernels whose
 * converts did not, says so at the end of its reason: "faster, mostly in
 * kernels whose converts did not change".
 *
 * A speedup is stable in an order when its whole interval clears both the
 * threshold and the A/A band of that order (the interval of the control
 * against the baseline, which compile the same code): a gain when
 * lo >= gain and lo > the band's hi, a regression when hi <= regression
 * and hi < the band's lo. */
#ifndef CB_CLASSIFY_H
#define CB_CLASSIFY_H

#include "caliber.h"
#include "base/buf.h"
#include "campaign/manifest.h"

/* The verdict letters in the order of the table above: the classifier's
 * first match wins in this order. */
#define CB_VERDICTS "XKRBGC"

/* The same letters in the order a reader scans a campaign: what gained
 * first, what could not be assessed last (reports and summaries). */
#define CB_VERDICTS_READING "GCBRKX"

/* Whether v is a verdict letter. */
int cb_verdict_known(char v);

/* What a verdict letter means, in a few words ("stable gain", ...). */
const char *cb_verdict_meaning(char v);

/* Parse a --fail-on list such as "K,R,X" (letters, with commas or blanks
 * between them) into set, a NUL-terminated string of verdict letters: run
 * and report gate on it alike. */
int cb_fail_on_parse(const char *s, char set[8], struct cb_err *err);

/* The --fail-on gate, the one that run, run --devices and report share:
 * fed each task's id and verdict (cb_gate_add), then judged once
 * (cb_gate_judge), so that all three catch the same verdicts and say so in
 * the same words. letters (the option as given, for the message) and set
 * (its cb_fail_on_parse) are borrowed and must outlive the gate. */
struct cb_gate {
	const char *letters, *set;
	size_t hits;
	struct cb_buf names;       /* "id (V), ..." of the tasks caught */
};

/* Prepare g for a gate on set (empty: a gate that catches nothing). */
void cb_gate_init(struct cb_gate *g, const char *letters, const char *set);

/* Count task id if its verdict v is in the gate's set; an empty verdict
 * ('\0', a task not yet judged) is never caught. Returns -1 (out of
 * memory) with err filled. */
int cb_gate_add(struct cb_gate *g, const char *id, char v, struct cb_err *err);

/* 0 when no task was caught; otherwise -1 with err saying "--fail-on
 * LETTERS: N tasks have one of these verdicts: id (V), ...". */
int cb_gate_judge(const struct cb_gate *g, struct cb_err *err);
void cb_gate_release(struct cb_gate *g);

enum cb_order { CB_ORDER_A, CB_ORDER_B, CB_NORDERS };

/* What the classifier looks at. harness_code is NULL when every cell and
 * phase ran to completion; otherwise one of "unsupported", "timeout",
 * "harness-failure", "replay-miss", "throttled", with harness_reason
 * saying where. */
struct cb_facts {
	const char *harness_code;
	char *harness_reason;            /* owned; NULL when harness_code is */
	int correct[CB_NROLES];          /* 1 when the correctness phase passed */
	int joinable;                    /* topology of every round-a cell joined */
	char *unjoinable;                /* owned: names, when not joinable */
	long long topology[CB_NROLES];   /* scoped counts, round a (the screen's when screened) */
	int identical;                   /* identical by construction (identity.h) */
	int screened;                    /* identical, and not timed (run --prescreen) */
	char *identity_reason;           /* owned: what the identity found, or NULL */
	struct {
		int present;                 /* this order was timed */
		double point, lo, hi;        /* candidate vs baseline */
		double aa, aa_lo, aa_hi;     /* control vs baseline: the A/A band */
		size_t rows, throttled;      /* rows compared, rows left out as throttled */
	} order[CB_NORDERS];
	double gain, regression;
	struct {
		int known;                   /* baseline and candidate profiled rows in common */
		double saved;                /* GPU ns per call the candidate saves, over those rows */
		double unchanged;            /* of it, in kernels whose converts did not change */
		size_t changed;              /* kernels whose converts changed */
		char *top;                   /* owned: of those, the one that moved most the way the whole did */
	} kernels;                       /* where the GPU time moved (kernels.h, cb_time_moved) */
};

struct cb_verdict {
	char verdict;                    /* 'X', 'K', 'B', 'G', 'R', 'C' */
	const char *code;                /* reason code, e.g. "stable-gain" */
	char *reason;                    /* owned: the figures behind it, in words (NULL: out of memory) */
	int stable_gain[CB_NORDERS];
	int stable_regression[CB_NORDERS];
};

/* Classify f into v, which is overwritten (release a verdict before it is
 * classified again). */
void cb_classify(const struct cb_facts *f, struct cb_verdict *v);
void cb_verdict_release(struct cb_verdict *v);
void cb_facts_release(struct cb_facts *f);

/* Whether the candidate's scoped topology is below the baseline's: the
 * condition for G and C, and one of the two for round b. */
int cb_topology_reduced(const struct cb_facts *f);

/* Order o of f: 1 for a stable gain, -1 for a stable regression, 0 when
 * neither or when o was not timed (the rule above). Round a's answer is
 * the other condition for round b. */
int cb_order_stability(const struct cb_facts *f, int o);

/* Whether order o of f is undecided in a way that more sessions (more
 * worker processes, by default) can settle: the runner then times one
 * more session of every cell, up to timer.max_sessions (runner_task.c). It is,
 * first match wins, when
 *   - the candidate's interval straddles a stable gain: its upper end
 *     would make one (hi >= gain and hi > the A/A band's hi), its lower
 *     end does not;
 *   - it straddles a stable regression: its lower end would make one
 *     (lo <= regression and lo < the band's lo), its upper end does not;
 *   - the A/A band is wide against the thresholds: aa_hi - aa_lo exceeds
 *     the smaller of gain and -regression, so that identical code alone
 *     spreads over more than the smallest effect the campaign calls.
 * Only where the verdict can still turn on the timings: never for a task
 * with a harness problem, IR that cannot be joined or a cell that failed
 * correctness (X or K whatever they show), and a gain only where the
 * candidate's topology is below the baseline's (else B whatever its
 * speedup). Returns 1 with why (cap bytes) saying which, in words, else 0
 * (also when o was not timed). */
int cb_order_undecided(const struct cb_facts *f, int o, char *why, size_t cap);

#endif
