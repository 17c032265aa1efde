/* compare.c: two sealed runs side by side (compare.h). */
#include "compare.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/runroot.h"

#define CB_COMPARE_SCHEMA "caliber.compare/1"

static const char *const order_keys[CB_NORDERS] = { "a", "b" };

/* |v|, LLONG_MAX for LLONG_MIN (whose magnitude no long long holds): a
 * receipt may hold any integer. */
static long long magnitude(long long v)
{
	return v == LLONG_MIN ? LLONG_MAX : llabs(v);
}

/* x in ppm, rounded and saturated to +-LLONG_MAX (llround of what a long
 * long cannot hold is undefined; a speedup of -100 % or less makes x
 * infinite); NaN as 0. */
static long long ppm_saturated(double x)
{
	double p = x * 1e6;

	if (isnan(p))
		return 0;
	if (p >= 9.2e18)
		return LLONG_MAX;
	if (p <= -9.2e18)
		return -LLONG_MAX;
	return llround(p);
}

/* Read run k's receipt of task id into t: its result and, per timed
 * order, the A/A band's farthest edge from zero. */
static int load_task(const char *root, const char *id, int k, struct cb_compare_task *t, struct cb_err *err)
{
	char *p = cb_strdupf("%s/" CB_RUN_TASKS "/%s/" CB_RUN_TASK, root, id);
	json_t *doc = p ? cb_json_load_file(p, err) : NULL;
	int o, rc;

	if (!p)
		return cb_fail(err, "out of memory");
	rc = doc ? cb_task_result_from_json(doc, p, &t->r[k], err) : -1;
	for (o = 0; rc == 0 && o < CB_NORDERS; o++) {
		long long lo = magnitude(t->r[k].aa_lo_ppm[o]), hi = magnitude(t->r[k].aa_hi_ppm[o]);
		t->band_ppm[k][o] = lo > hi ? lo : hi;
	}
	t->in[k] = rc == 0;
	json_decref(doc);
	free(p);
	return rc;
}

/* What moved in task t, found in both runs. */
static void compare_task(struct cb_compare_task *t)
{
	int o, r;

	t->verdict_changed = t->r[0].verdict != t->r[1].verdict;
	t->topology_changed = t->r[0].have_topology != t->r[1].have_topology;
	for (r = 0; t->r[0].have_topology && t->r[1].have_topology && r < CB_NROLES; r++)
		t->topology_changed |= t->r[0].topology[r] != t->r[1].topology[r];
	for (o = 0; o < CB_NORDERS; o++) {
		double a = (double)t->r[0].speedup_ppm[o] / 1e6, b = (double)t->r[1].speedup_ppm[o] / 1e6;
		long long mag;

		t->both[o] = t->r[0].present[o] && t->r[1].present[o];
		if (!t->both[o])
			continue;
		t->move_ppm[o] = ppm_saturated((1 + b) / (1 + a) - 1);
		mag = magnitude(t->move_ppm[o]);
		t->moved[o] = mag > t->band_ppm[0][o] && mag > t->band_ppm[1][o];
	}
}

/* The task of c with id, or NULL. */
static struct cb_compare_task *find(struct cb_compare *c, const char *id)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (strcmp(c->t[i].id, id) == 0)
			return &c->t[i];
	return NULL;
}

int cb_compare_load(struct cb_compare *c, const struct cb_run_view *va, const struct cb_run_view *vb,
		    struct cb_err *err)
{
	const char *a = va->root, *b = vb->root, *root[2] = { va->root, vb->root };
	size_t i;
	int k;

	memset(c, 0, sizeof(*c));
	c->v[0] = va;
	c->v[1] = vb;
	c->t = calloc(c->v[0]->cs.ntasks + c->v[1]->cs.ntasks + 1, sizeof(*c->t));
	if (!c->t)
		return cb_fail(err, "out of memory");
	for (k = 0; k < 2; k++)
		for (i = 0; i < c->v[k]->cs.ntasks; i++) {
			const char *id = c->v[k]->cs.tasks[i].id;
			struct cb_compare_task *t = find(c, id);

			if (!cb_is_ident(id))
				return cb_fail(err, "%s/" CB_RUN_CAMPAIGN ": tasks[%zu]: '%s' is not a task name", root[k], i, id);
			if (t && t->in[k])
				return cb_fail(err, "%s/" CB_RUN_CAMPAIGN ": tasks[%zu]: '%s' is listed twice", root[k], i, id);
			if (!t)
				t = &c->t[c->n++];
			if (load_task(root[k], id, k, t, err) < 0)
				return -1;
			t->id = t->r[k].id;
		}
	for (i = 0; i < c->n; i++) {
		struct cb_compare_task *t = &c->t[i];
		if (t->in[0] && t->in[1] && strcmp(t->r[0].op, t->r[1].op) != 0)
			return cb_fail(err, "task %s: op '%s' in %s, '%s' in %s", t->id, t->r[0].op, a, t->r[1].op, b);
		if (!t->in[0] || !t->in[1]) {
			c->only[t->in[1]]++;
			continue;
		}
		compare_task(t);
		c->common++;
		c->verdicts += (size_t)t->verdict_changed;
		c->topologies += (size_t)t->topology_changed;
		c->moved += (size_t)(t->moved[0] || t->moved[1]);
	}
	if (!c->common)
		return cb_fail(err, "%s and %s have no task in common", a, b);
	return 0;
}

void cb_compare_release(struct cb_compare *c)
{
	size_t i;

	for (i = 0; c->t && i < c->n; i++) {
		cb_task_result_release(&c->t[i].r[0]);
		cb_task_result_release(&c->t[i].r[1]);
	}
	free(c->t);
	memset(c, 0, sizeof(*c));
}

/* ---- text ------------------------------------------------------------------ */

/* "3/3/1", or "-" without a topology. */
static void put_topology(struct cb_buf *b, const struct cb_task_result *r)
{
	if (r->have_topology)
		cb_buf_addf(b, "%lld/%lld/%lld", r->topology[CB_ROLE_BASELINE], r->topology[CB_ROLE_CONTROL],
			    r->topology[CB_ROLE_CANDIDATE]);
	else
		cb_buf_adds(b, "-");
}

/* A run's line of the header: what it is and where its sources came from. */
static void put_run(struct cb_buf *b, const struct cb_campaign_summary *cs, char name)
{
	const json_t *src = json_object_get(cs->doc, "sources");
	static const char *const keys[] = { "compiler", "corpus", "harness" };
	size_t i;

	cb_buf_addf(b, "%c: campaign %s (selection %s), %zu tasks, finished %s; seal holds\n", name, cs->campaign,
		    cs->selection, cs->ntasks, cb_json_str(cs->doc, "finished") ? cb_json_str(cs->doc, "finished") : "?");
	for (i = 0; i < 3; i++) {
		const json_t *s = json_object_get(src, keys[i]);
		const char *id = cb_json_str(s, "commit") ? cb_json_str(s, "commit") : cb_json_str(s, "tree_sha256");
		cb_buf_addf(b, "   %-8s %s %s\n", keys[i], cb_json_str(s, "commit") ? "commit" : "tree", id ? id : "?");
	}
}

/* One order of a task found in both runs: "+5.00% -> +5.10% (+0.10%,
 * bands 0.05% / 0.08%: moved)". */
static void put_order(struct cb_buf *b, const struct cb_compare_task *t, int o)
{
	char x[32], y[32], m[32], ba[32], bb[32];

	if (!t->both[o]) {
		cb_buf_addf(b, "round %s %s", order_keys[o], t->r[0].present[o] ? "timed in A only" :
			    t->r[1].present[o] ? "timed in B only" : "not timed");
		return;
	}
	cb_fmt_pct(t->r[0].speedup_ppm[o], x, sizeof(x));
	cb_fmt_pct(t->r[1].speedup_ppm[o], y, sizeof(y));
	cb_fmt_pct(t->move_ppm[o], m, sizeof(m));
	cb_fmt_pct(t->band_ppm[0][o], ba, sizeof(ba));
	cb_fmt_pct(t->band_ppm[1][o], bb, sizeof(bb));
	cb_buf_addf(b, "round %s %s -> %s (%s; A/A bands %s / %s: %s)", order_keys[o], x, y, m, ba + (ba[0] == '+'),
		    bb + (bb[0] == '+'),
		    t->moved[o] ? "moved beyond both" : "within the noise");
}

void cb_compare_text(struct cb_buf *b, const struct cb_compare *c)
{
	size_t i;
	int o;

	cb_buf_adds(b, "caliber compare: A against B\n");
	put_run(b, &c->v[0]->cs, 'A');
	put_run(b, &c->v[1]->cs, 'B');
	cb_buf_addf(b, "tasks: %zu in both, %zu only in A, %zu only in B; in both, %zu changed verdict, %zu changed "
		       "topology, %zu moved beyond both A/A bands\n\n", c->common, c->only[0], c->only[1], c->verdicts,
		    c->topologies, c->moved);
	for (i = 0; i < c->n; i++) {
		const struct cb_compare_task *t = &c->t[i];
		if (!t->in[0] || !t->in[1]) {
			cb_buf_addf(b, "%s: only in %c\n", t->id, t->in[0] ? 'A' : 'B');
			continue;
		}
		cb_buf_addf(b, "%s: %c -> %c%s, topology ", t->id, t->r[0].verdict, t->r[1].verdict,
			    t->verdict_changed ? " (changed)" : "");
		put_topology(b, &t->r[0]);
		cb_buf_adds(b, " -> ");
		put_topology(b, &t->r[1]);
		cb_buf_adds(b, t->topology_changed ? " (changed)\n" : "\n");
		for (o = 0; o < CB_NORDERS; o++) {
			if (!t->r[0].present[o] && !t->r[1].present[o])
				continue;
			cb_buf_adds(b, "  ");
			put_order(b, t, o);
			cb_buf_adds(b, "\n");
		}
	}
}

/* ---- JSON ------------------------------------------------------------------ */

/* One run's side of a task. */
static json_t *side_json(const struct cb_compare_task *t, int k)
{
	json_t *orders;
	int o;

	if (!t->in[k])
		return json_null();
	orders = json_object();
	for (o = 0; orders && o < CB_NORDERS; o++)
		json_object_set_new(orders, order_keys[o], t->r[k].present[o] ?
				    json_pack("{s:I, s:I, s:I, s:I}", "speedup_ppm", (json_int_t)t->r[k].speedup_ppm[o],
					      "lo_ppm", (json_int_t)t->r[k].lo_ppm[o], "hi_ppm", (json_int_t)t->r[k].hi_ppm[o],
					      "band_ppm", (json_int_t)t->band_ppm[k][o]) : json_null());
	return json_pack("{s:s#, s:s, s:o, s:o}", "verdict", &t->r[k].verdict, (int)1, "code", t->r[k].code,
			 "topology", t->r[k].have_topology ?
			 json_pack("{s:I, s:I, s:I}", "baseline", (json_int_t)t->r[k].topology[CB_ROLE_BASELINE],
				   "control", (json_int_t)t->r[k].topology[CB_ROLE_CONTROL], "candidate",
				   (json_int_t)t->r[k].topology[CB_ROLE_CANDIDATE]) : json_null(),
			 "orders", orders);
}

json_t *cb_compare_json(const struct cb_compare *c)
{
	json_t *tasks = json_array(), *runs = json_array();
	size_t i;
	int k, o;

	for (k = 0; runs && k < 2; k++)
		json_array_append_new(runs, json_pack("{s:s, s:s, s:s?, s:O?}", "campaign", c->v[k]->cs.campaign, "selection",
						      c->v[k]->cs.selection, "finished", cb_json_str(c->v[k]->cs.doc, "finished"),
						      "sources", json_object_get(c->v[k]->cs.doc, "sources")));
	for (i = 0; tasks && i < c->n; i++) {
		const struct cb_compare_task *t = &c->t[i];
		json_t *moves = json_object();
		for (o = 0; moves && o < CB_NORDERS; o++)
			json_object_set_new(moves, order_keys[o], t->both[o] ?
					    json_pack("{s:I, s:b}", "move_ppm", (json_int_t)t->move_ppm[o], "beyond_bands",
						      t->moved[o]) : json_null());
		json_array_append_new(tasks, json_pack("{s:s, s:o, s:o, s:b, s:b, s:o}", "task", t->id, "a", side_json(t, 0),
						       "b", side_json(t, 1), "verdict_changed", t->verdict_changed,
						       "topology_changed", t->topology_changed, "moves", moves));
	}
	return json_pack("{s:s, s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I}, s:o}", "schema", CB_COMPARE_SCHEMA, "runs",
			 runs, "summary", "common", (json_int_t)c->common, "only_a", (json_int_t)c->only[0], "only_b",
			 (json_int_t)c->only[1], "verdicts_changed", (json_int_t)c->verdicts, "topologies_changed",
			 (json_int_t)c->topologies, "moved", (json_int_t)c->moved, "tasks", tasks);
}
