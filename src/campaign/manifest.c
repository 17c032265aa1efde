/* manifest.c: loading and validating "caliber.manifest/1" (docs/design.md section 3).
 *
 * Shape (presence, types, unknown keys) is described by the tables below and
 * checked by schema.c, the bounds of every number by int_bounds and
 * real_bounds; the rules between fields follow in check_*() in the order
 * the spec states them. Every error names the field by JSON path. */
#include "manifest.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/schema.h"
#include "base/strindex.h"

/* A source identity, the same in sources.* and in a cell's compiler. */
#define IDENTITY_FIELDS \
	{ "commit", CB_J_STRING, 0, 0, NULL, "git commit (40 hex) of a clean tree" }, \
	{ "tree_sha256", CB_J_STRING, 0, 0, NULL, "caliber digest of any directory (64 hex)" }, \
	{ "import", CB_J_STRING, 0, 0, NULL, "Python module that must resolve inside it" }

static const struct cb_field source_fields[] = {
	IDENTITY_FIELDS,
	{ NULL, 0, 0, 0, NULL, NULL }
};

static const struct cb_field sources_fields[] = {
	{ "compiler", CB_J_OBJECT, 1, 0, source_fields, "the compiler under test" },
	{ "corpus", CB_J_OBJECT, 1, 0, source_fields, "the operator corpus" },
	{ "harness", CB_J_OBJECT, 1, 0, source_fields, "caliber itself" },
	{ NULL, 0, 0, 0, NULL, NULL }
};

static const struct cb_field device_fields[] = {
	{ "backend", CB_J_STRING, 1, 0, NULL, "a name under backends/" },
	{ "name", CB_J_STRING, 0, 0, NULL, "expected device name" },
	{ "uuid", CB_J_STRING, 0, 0, NULL, "the one physical device" },
	{ NULL, 0, 0, 0, NULL, NULL }
};

static const struct cb_field timer_fields[] = {
	{ "kind", CB_J_STRING, 1, 0, NULL, "native-event" },
	{ "graph_capture", CB_J_STRING, 1, 0, NULL, "auto or off" },
	{ "warmup_ms", CB_J_INT, 1, 0, NULL, "warm-up per row, ms" },
	{ "rep_ms", CB_J_INT, 1, 0, NULL, "timed budget per row, ms" },
	{ "repeats", CB_J_INT, 1, 0, NULL, "samples per row" },
	{ "sessions", CB_J_INT, 0, 0, NULL, "timed sessions per cell and round, default 3" },
	{ "max_sessions", CB_J_INT, 0, 0, NULL, "at most this many where a round is undecided, default sessions (none added)" },
	{ "throttle_floor", CB_J_NUMBER, 0, 0, NULL, "share of the maximum SM clock below which a row is throttled" },
	{ NULL, 0, 0, 0, NULL, NULL }
};

static const struct cb_field topology_fields[] = {
	{ "op", CB_J_STRING, 0, 0, NULL, "topology op, default ttg.convert_layout" },
	{ "measured_launch_floor", CB_J_INT, 1, 0, NULL, "variants launched more often count" },
	{ NULL, 0, 0, 0, NULL, NULL }
};

/* A cell's own compiler: a source identity plus where the build lies. */
static const struct cb_field cell_compiler_fields[] = {
	IDENTITY_FIELDS,
	{ "root", CB_J_STRING, 1, 0, NULL, "the build's folder, absolute or relative to the manifest's" },
	{ NULL, 0, 0, 0, NULL, NULL }
};

static const struct cb_field cell_fields[] = {
	{ "name", CB_J_STRING, 1, 0, NULL, "cell name" },
	{ "role", CB_J_STRING, 1, 0, NULL, "baseline, control or candidate" },
	{ "env", CB_J_STRMAP, 1, 0, NULL, "environment overlay" },
	{ "compiler", CB_J_OBJECT, 0, 0, cell_compiler_fields, "this cell's own compiler build" },
	{ NULL, 0, 0, 0, NULL, NULL }
};

static const struct cb_field thresholds_fields[] = {
	{ "gain", CB_J_NUMBER, 1, 0, NULL, "stable speedup needed for G, e.g. 0.05" },
	{ "regression", CB_J_NUMBER, 1, 0, NULL, "stable slowdown for R, e.g. -0.03" },
	{ "confidence", CB_J_NUMBER, 1, 0, NULL, "interval confidence, e.g. 0.95" },
	{ NULL, 0, 0, 0, NULL, NULL }
};

static const struct cb_field benchmark_fields[] = {
	{ "target", CB_J_STRING, 1, 0, NULL, "file.py::test" },
	{ "mark", CB_J_STRING, 0, 0, NULL, "-m expression, for files holding many operators" },
	{ NULL, 0, 0, 0, NULL, NULL }
};

static const struct cb_field correctness_fields[] = {
	{ "file", CB_J_STRING, 0, 0, NULL, "correctness file, default the inventory's" },
	{ "node_ids", CB_J_ARRAY, 0, CB_J_STRING, NULL, "pinned node ids" },
	{ "k", CB_J_STRING, 0, 0, NULL, "-k expression" },
	{ "options", CB_J_ARRAY, 0, CB_J_STRING, NULL, "the corpus's own pytest options, e.g. FlagGems' --quick" },
	{ NULL, 0, 0, 0, NULL, NULL }
};

static const struct cb_field shapes_fields[] = {
	{ "level", CB_J_STRING, 0, 0, NULL, "corpus shape level, e.g. core" },
	{ "file", CB_J_STRING, 0, 0, NULL, "corpus shape file" },
	{ "values", CB_J_ARRAY, 0, CB_J_ARRAY, NULL, "explicit shapes" },
	{ NULL, 0, 0, 0, NULL, NULL }
};

static const struct cb_field workload_fields[] = {
	{ "id", CB_J_STRING, 1, 0, NULL, "task id" },
	{ "op", CB_J_STRING, 1, 0, NULL, "operator (inventory op)" },
	{ "dtypes", CB_J_ARRAY, 1, CB_J_STRING, NULL, "dtypes measured" },
	{ "timeout_s", CB_J_INT, 1, 0, NULL, "per cell and phase" },
	{ "canary", CB_J_BOOL, 1, 0, NULL, "member of --selection canary" },
	{ "benchmark", CB_J_OBJECT, 1, 0, benchmark_fields, "benchmark target" },
	{ "correctness", CB_J_OBJECT, 1, 0, correctness_fields, "correctness selection" },
	{ "shapes", CB_J_OBJECT, 0, 0, shapes_fields, "shape selection" },
	{ "reason", CB_J_STRING, 0, 0, NULL, "why correctness is narrowed" },
	{ "inventory_reason", CB_J_STRING, 0, 0, NULL, "why the inventory does not know it" },
	{ NULL, 0, 0, 0, NULL, NULL }
};

static const struct cb_field manifest_fields[] = {
	{ "schema", CB_J_STRING, 1, 0, NULL, CB_MANIFEST_SCHEMA },
	{ "campaign", CB_J_STRING, 1, 0, NULL, "campaign id" },
	{ "description", CB_J_STRING, 0, 0, NULL, "free text" },
	{ "sources", CB_J_OBJECT, 1, 0, sources_fields, "pinned sources" },
	{ "device", CB_J_OBJECT, 1, 0, device_fields, "the one device" },
	{ "timer", CB_J_OBJECT, 1, 0, timer_fields, "timer contract" },
	{ "topology", CB_J_OBJECT, 1, 0, topology_fields, "topology accounting" },
	{ "cells", CB_J_ARRAY, 1, CB_J_OBJECT, cell_fields, "exactly three cells" },
	{ "thresholds", CB_J_OBJECT, 1, 0, thresholds_fields, "verdict thresholds" },
	{ "production_default_policy", CB_J_STRING, 1, 0, NULL, "unchanged-off" },
	{ "workloads", CB_J_ARRAY, 1, CB_J_OBJECT, workload_fields, "operators to measure" },
	{ NULL, 0, 0, 0, NULL, NULL }
};

/* What makes sense for every number of a manifest, each bound written
 * once (issue 14: a timeout of 2^63 - 1 s overflowed the budget, a gain of
 * 1e308 was sealed as gain_ppm -2^63). A path names the field, "[]"
 * standing for every element of an array; a field that is absent is the
 * schema's business (required or defaulted), a present one must be an
 * integer or a number within its bounds, and the message says them. */
static const struct int_bound {
	const char *path;
	long long lo, hi;
	const char *unit;
} int_bounds[] = {
	{ "timer.warmup_ms", 0, 60000, "ms per row" },
	{ "timer.rep_ms", 1, 60000, "ms per row" },
	{ "timer.repeats", 2, 10000, "samples per row" },
	{ "timer.sessions", 2, 64, "sessions per cell and round" },
	{ "timer.max_sessions", 2, 64, "sessions per cell and round" },
	{ "topology.measured_launch_floor", 0, 1000000000, "launches" },
	{ "workloads[].timeout_s", 1, CB_TIMEOUT_S_MAX, "seconds per cell and phase" },
	{ "workloads[].shapes.values[][]", 1, 2147483647, "elements per dimension" },
};

static const struct real_bound {
	const char *path;
	double lo;
	int lo_open;          /* > lo, else >= lo */
	double hi;
	int hi_open;          /* < hi, else <= hi */
} real_bounds[] = {
	{ "timer.throttle_floor", 0, 1, 1, 0 },
	{ "thresholds.gain", 0, 1, 10, 0 },
	{ "thresholds.regression", -1, 1, 0, 1 },
	{ "thresholds.confidence", 0.5, 0, 1, 1 },
};

/* One value a bound table names: v at JSON path at, against row i of
 * int_bounds (integer) or real_bounds. */
static int check_bound(const json_t *v, const char *at, int integer, size_t i, struct cb_err *err)
{
	if (integer) {
		const struct int_bound *b = &int_bounds[i];
		json_int_t x = json_integer_value(v);
		if (!json_is_integer(v))
			return cb_fail(err, "%s: expected integer, got %s", at, cb_jtype_name(v));
		if (x < b->lo || x > b->hi)
			return cb_fail(err, "%s: must be an integer from %lld to %lld (%s), got %lld", at, b->lo, b->hi,
				       b->unit, (long long)x);
	} else {
		const struct real_bound *b = &real_bounds[i];
		double x = json_number_value(v);
		if (!json_is_number(v))
			return cb_fail(err, "%s: expected number, got %s", at, cb_jtype_name(v));
		if (!(b->lo_open ? x > b->lo : x >= b->lo) || !(b->hi_open ? x < b->hi : x <= b->hi))
			return cb_fail(err, "%s: must be %s %g and %s %g, got %g", at, b->lo_open ? ">" : ">=", b->lo,
				       b->hi_open ? "<" : "<=", b->hi, x);
	}
	return 0;
}

/* Every value at the rest of path pattern p below v, whose JSON path is
 * at[0..len), checked against its bound (check_bound's integer, i). */
static int check_bounds_at(const json_t *v, const char *p, char *at, size_t len, size_t cap, int integer,
			   size_t i, struct cb_err *err)
{
	size_t k, n;
	const json_t *e;

	if (!*p)
		return check_bound(v, at, integer, i, err);
	if (p[0] == '[') {
		json_array_foreach((json_t *)v, k, e) {
			n = (size_t)snprintf(at + len, cap - len, "[%zu]", k);
			if (n >= cap - len)
				return cb_fail(err, "%.*s: path too long", (int)len, at);
			if (check_bounds_at(e, p + 2, at, len + n, cap, integer, i, err) < 0)
				return -1;
		}
		at[len] = '\0';
		return 0;
	}
	if (*p == '.')
		p++;
	n = strcspn(p, ".[");
	{
		char key[64];
		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		e = json_object_get(v, key);
		if (!e)
			return 0;
		k = (size_t)snprintf(at + len, cap - len, "%s%s", len ? "." : "", key);
		if (k >= cap - len)
			return cb_fail(err, "%.*s: path too long", (int)len, at);
	}
	return check_bounds_at(e, p + n, at, len + k, cap, integer, i, err);
}

/* Every number of the manifest within its bounds (int_bounds, real_bounds). */
static int check_numbers(const struct cb_manifest *m, struct cb_err *err)
{
	char at[256];
	size_t i;

	for (i = 0; i < sizeof(int_bounds) / sizeof(int_bounds[0]); i++) {
		at[0] = '\0';
		if (check_bounds_at(m->doc, int_bounds[i].path, at, 0, sizeof(at), 1, i, err) < 0)
			return -1;
	}
	for (i = 0; i < sizeof(real_bounds) / sizeof(real_bounds[0]); i++) {
		at[0] = '\0';
		if (check_bounds_at(m->doc, real_bounds[i].path, at, 0, sizeof(at), 0, i, err) < 0)
			return -1;
	}
	return 0;
}

static const char *const role_names[CB_NROLES] = { "baseline", "control", "candidate" };
static const char *const source_names[CB_NSOURCES] = { "compiler", "corpus", "harness" };

const char *cb_role_name(enum cb_role r)
{
	return (unsigned)r < CB_NROLES ? role_names[r] : "?";
}

int cb_is_ident(const char *s)
{
	const char *p;

	if (!s || !*s || *s == '.' || *s == '-')
		return 0;
	for (p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '_' && *p != '-')
			return 0;
	return 1;
}

/* The message for a name longer than CB_IDENT_MAX, after its field:
 * its start, its length, the limit. */
#define IDENT_TOO_LONG "'%.32s...' is %zu characters long; at most %d (it names a folder)"

static int is_env_name(const char *s)
{
	const char *p;

	if (!*s || isdigit((unsigned char)*s))
		return 0;
	for (p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return 0;
	return 1;
}

/* Read a source identity (commit or tree_sha256, optional import) from the
 * object s at JSON path `path` ("sources.compiler", "cells[2].compiler")
 * into src: exactly one of commit and tree_sha256, each well formed. */
static int check_identity(const json_t *s, const char *path, struct cb_source *src, struct cb_err *err)
{
	src->commit = cb_json_str(s, "commit");
	src->tree_sha256 = cb_json_str(s, "tree_sha256");
	src->import = cb_json_str(s, "import");
	if (!!src->commit == !!src->tree_sha256)
		return cb_fail(err, "%s: give exactly one of commit and tree_sha256", path);
	if (src->commit && !cb_is_hex(src->commit, 40))
		return cb_fail(err, "%s.commit: expected 40 lowercase hex digits, got '%s'", path, src->commit);
	if (src->tree_sha256 && !cb_is_hex(src->tree_sha256, 64))
		return cb_fail(err, "%s.tree_sha256: expected 64 lowercase hex digits, got '%s'", path,
			       src->tree_sha256);
	if (src->import && !*src->import)
		return cb_fail(err, "%s.import: must not be empty", path);
	return 0;
}

/* sources.compiler, sources.corpus and sources.harness, each an identity. */
static int check_sources(struct cb_manifest *m, struct cb_err *err)
{
	const json_t *sources = json_object_get(m->doc, "sources");
	char path[48];
	int i;

	for (i = 0; i < CB_NSOURCES; i++) {
		m->sources[i].name = source_names[i];
		snprintf(path, sizeof(path), "sources.%s", source_names[i]);
		if (check_identity(json_object_get(sources, source_names[i]), path, &m->sources[i], err) < 0)
			return -1;
	}
	return 0;
}

static int check_device_timer_topology(struct cb_manifest *m, struct cb_err *err)
{
	const json_t *dev = json_object_get(m->doc, "device");
	const json_t *timer = json_object_get(m->doc, "timer");
	const json_t *topo = json_object_get(m->doc, "topology");

	m->backend = cb_json_str(dev, "backend");
	m->device_name = cb_json_str(dev, "name");
	m->device_uuid = cb_json_str(dev, "uuid");
	if (!cb_is_ident(m->backend))
		return cb_fail(err, "device.backend: '%s' is not a backend name", m->backend);

	m->timer_kind = cb_json_str(timer, "kind");
	m->graph_capture = cb_json_str(timer, "graph_capture");
	m->warmup_ms = cb_json_int(timer, "warmup_ms", -1);
	m->rep_ms = cb_json_int(timer, "rep_ms", -1);
	m->repeats = cb_json_int(timer, "repeats", -1);
	if (strcmp(m->timer_kind, "native-event") != 0)
		return cb_fail(err, "timer.kind: expected 'native-event', got '%s'", m->timer_kind);
	if (strcmp(m->graph_capture, "auto") != 0 && strcmp(m->graph_capture, "off") != 0)
		return cb_fail(err, "timer.graph_capture: expected 'auto' or 'off', got '%s'",
			       m->graph_capture);
	/* sessions, max_sessions and throttle_floor are bounded with every
	 * other number (int_bounds, real_bounds); here they get their defaults,
	 * and max_sessions is no fewer than sessions. */
	m->sessions = cb_json_int(timer, "sessions", CB_DEFAULT_SESSIONS);
	m->max_sessions = cb_json_int(timer, "max_sessions", m->sessions);
	if (m->max_sessions < m->sessions)
		return cb_fail(err, "timer.max_sessions: must be at least timer.sessions (%lld), got %lld", m->sessions,
			       m->max_sessions);
	m->throttle_floor = json_object_get(timer, "throttle_floor")
				    ? json_number_value(json_object_get(timer, "throttle_floor"))
				    : CB_DEFAULT_THROTTLE_FLOOR;

	m->topology_op = cb_json_str(topo, "op");
	if (!m->topology_op)
		m->topology_op = "ttg.convert_layout";
	if (!*m->topology_op)
		return cb_fail(err, "topology.op: must not be empty");
	m->launch_floor = cb_json_int(topo, "measured_launch_floor", -1);
	return 0;
}

/* cells[i].compiler, when the cell names one: an identity as for
 * sources.compiler and a root that is not empty, nor "/" (which preflight
 * would digest whole before it failed). Where a relative root
 * points is for prepare to decide (the manifest's folder). */
static int check_cell_compiler(const json_t *c, size_t i, struct cb_cell *cell, struct cb_err *err)
{
	const json_t *cc = json_object_get(c, "compiler");
	char path[48];

	if (!cc)
		return 0;
	snprintf(path, sizeof(path), "cells[%zu].compiler", i);
	cell->compiler.name = "compiler";
	if (check_identity(cc, path, &cell->compiler, err) < 0)
		return -1;
	cell->compiler_root = cb_json_str(cc, "root");
	if (!*cell->compiler_root)
		return cb_fail(err, "%s.root: must not be empty", path);
	if (cb_is_fs_root(cell->compiler_root))
		return cb_fail(err, "%s.root: '%s' is the file system's root, not a build's folder", path,
			       cell->compiler_root);
	return 0;
}

/* Quote a manifest value for a message, or say it is absent. */
static const char *shown(const char *v, char *buf, size_t cap)
{
	if (!v)
		return "none";
	snprintf(buf, cap, "'%.200s%s'", v, strlen(v) > 200 ? "..." : "");
	return buf;
}

/* The control compiles what the baseline compiles (docs/design.md section 3): both
 * run sources.compiler, or both name the same compiler, field for field
 * (roots as written). A refusal names the control's field that differs. */
static int check_control_compiler(const struct cb_manifest *m, struct cb_err *err)
{
	static const char *const keys[] = { "commit", "tree_sha256", "import", "root" };
	const json_t *cells = json_object_get(m->doc, "cells"), *bc, *cc;
	size_t b = 0, c = 0, k;
	char x[256], y[256];

	for (k = 0; k < CB_NROLES; k++) {
		if (m->cells[k].role == CB_ROLE_BASELINE)
			b = k;
		else if (m->cells[k].role == CB_ROLE_CONTROL)
			c = k;
	}
	bc = json_object_get(json_array_get(cells, b), "compiler");
	cc = json_object_get(json_array_get(cells, c), "compiler");
	if (!bc && !cc)
		return 0;
	if (!cc)
		return cb_fail(err, "cells[%zu].compiler: missing: the control must run the baseline's compiler (cells[%zu].compiler)",
			       c, b);
	if (!bc)
		return cb_fail(err, "cells[%zu].compiler: the control must run the baseline's compiler, and the baseline (cells[%zu]) runs sources.compiler",
			       c, b);
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		const char *bv = cb_json_str(bc, keys[k]), *cv = cb_json_str(cc, keys[k]);

		if (!bv != !cv || (bv && strcmp(bv, cv) != 0))
			return cb_fail(err, "cells[%zu].compiler.%s: the control must run the baseline's compiler: %s here, %s in cells[%zu].compiler.%s",
				       c, keys[k], shown(cv, y, sizeof(y)), shown(bv, x, sizeof(x)), b, keys[k]);
	}
	return 0;
}

static int check_cells(struct cb_manifest *m, struct cb_err *err)
{
	const json_t *cells = json_object_get(m->doc, "cells");
	int seen[CB_NROLES] = { 0, 0, 0 };
	size_t i, j;

	if (json_array_size(cells) != CB_NROLES)
		return cb_fail(err, "cells: expected exactly three cells (baseline, control, candidate), got %zu",
			       json_array_size(cells));
	for (i = 0; i < CB_NROLES; i++) {
		const json_t *c = json_array_get(cells, i);
		const char *name = cb_json_str(c, "name");
		const char *role = cb_json_str(c, "role");
		const char *k;
		const json_t *v;
		int r;

		if (!cb_is_ident(name))
			return cb_fail(err, "cells[%zu].name: '%s' is not a valid name ([A-Za-z0-9._-])", i, name);
		if (strlen(name) > CB_IDENT_MAX)
			return cb_fail(err, "cells[%zu].name: " IDENT_TOO_LONG, i, name, strlen(name), CB_IDENT_MAX);
		for (j = 0; j < i; j++)
			if (strcmp(m->cells[j].name, name) == 0)
				return cb_fail(err, "cells[%zu].name: '%s' is used twice (first at cells[%zu])",
					       i, name, j);
		for (r = 0; r < CB_NROLES; r++)
			if (strcmp(role, role_names[r]) == 0)
				break;
		if (r == CB_NROLES)
			return cb_fail(err, "cells[%zu].role: expected baseline, control or candidate, got '%s'",
				       i, role);
		if (seen[r])
			return cb_fail(err, "cells[%zu].role: role '%s' appears twice", i, role);
		seen[r] = 1;
		m->cells[i].name = name;
		m->cells[i].role = (enum cb_role)r;
		m->cells[i].env = json_object_get(c, "env");
		json_object_foreach((json_t *)m->cells[i].env, k, v) {
			if (!is_env_name(k))
				return cb_fail(err, "cells[%zu].env.%s: not a variable name", i, k);
			if (strncmp(k, "CALIBER_", 8) == 0 && strncmp(k, "CALIBER_DEMO_", 13) != 0)
				return cb_fail(err, "cells[%zu].env.%s: CALIBER_* variables are reserved for caliber",
					       i, k);
		}
		if (check_cell_compiler(c, i, &m->cells[i], err) < 0)
			return -1;
	}
	return check_control_compiler(m, err);
}

static int check_thresholds(struct cb_manifest *m, struct cb_err *err)
{
	const json_t *t = json_object_get(m->doc, "thresholds");

	m->gain = json_number_value(json_object_get(t, "gain"));
	m->regression = json_number_value(json_object_get(t, "regression"));
	m->confidence = json_number_value(json_object_get(t, "confidence"));
	m->policy = cb_json_str(m->doc, "production_default_policy");
	if (strcmp(m->policy, "unchanged-off") != 0)
		return cb_fail(err, "production_default_policy: must be 'unchanged-off', got '%s'", m->policy);
	return 0;
}

/* Fill a NULL-terminated-free array of borrowed strings from a JSON array
 * already known to hold strings. */
static const char **str_array(const json_t *a, size_t *n)
{
	size_t i, cnt = json_array_size(a);
	const char **v = calloc(cnt ? cnt : 1, sizeof(*v));

	if (!v)
		return NULL;
	for (i = 0; i < cnt; i++)
		v[i] = json_string_value(json_array_get(a, i));
	*n = cnt;
	return v;
}

static int check_target(const char *t, const char *path, struct cb_err *err)
{
	const char *sep = t ? strstr(t, "::") : NULL;

	if (!sep || sep == t || !sep[2] || (size_t)(sep - t) < 4 || strncmp(sep - 3, ".py", 3) != 0)
		return cb_fail(err, "%s: expected 'file.py::test', got '%s'", path, t ? t : "");
	return 0;
}

static int check_workload(struct cb_manifest *m, size_t i, struct cb_err *err)
{
	const json_t *w = json_array_get(json_object_get(m->doc, "workloads"), i);
	const json_t *bench = json_object_get(w, "benchmark");
	const json_t *corr = json_object_get(w, "correctness");
	const json_t *nodes = json_object_get(corr, "node_ids");
	const json_t *options = json_object_get(corr, "options");
	struct cb_workload *wl = &m->workloads[i];
	char path[96];
	size_t j, k;

	wl->index = i;
	wl->id = cb_json_str(w, "id");
	wl->op = cb_json_str(w, "op");
	wl->timeout_s = cb_json_int(w, "timeout_s", 0);
	wl->canary = json_is_true(json_object_get(w, "canary"));
	wl->bench_target = cb_json_str(bench, "target");
	wl->bench_mark = cb_json_str(bench, "mark");
	wl->corr_file = cb_json_str(corr, "file");
	wl->k = cb_json_str(corr, "k");
	wl->reason = cb_json_str(w, "reason");
	wl->inventory_reason = cb_json_str(w, "inventory_reason");
	wl->shapes = json_object_get(w, "shapes");
	wl->dtypes = str_array(json_object_get(w, "dtypes"), &wl->ndtypes);
	if (!wl->dtypes)
		return cb_fail(err, "workloads[%zu]: out of memory", i);
	if (nodes) {
		wl->node_ids = str_array(nodes, &wl->nnode_ids);
		if (!wl->node_ids)
			return cb_fail(err, "workloads[%zu]: out of memory", i);
	}
	if (options) {
		wl->corr_options = str_array(options, &wl->ncorr_options);
		if (!wl->corr_options)
			return cb_fail(err, "workloads[%zu]: out of memory", i);
	}

	if (!cb_is_ident(wl->id))
		return cb_fail(err, "workloads[%zu].id: '%s' is not a valid id ([A-Za-z0-9._-])", i, wl->id);
	if (strlen(wl->id) > CB_IDENT_MAX)
		return cb_fail(err, "workloads[%zu].id: " IDENT_TOO_LONG, i, wl->id, strlen(wl->id), CB_IDENT_MAX);
	if (!*wl->op)
		return cb_fail(err, "workloads[%zu].op: must not be empty", i);
	if (wl->ndtypes == 0)
		return cb_fail(err, "workloads[%zu].dtypes: at least one dtype is required", i);
	for (j = 0; j < wl->ndtypes; j++) {
		if (!*wl->dtypes[j])
			return cb_fail(err, "workloads[%zu].dtypes[%zu]: must not be empty", i, j);
		for (k = 0; k < j; k++)
			if (strcmp(wl->dtypes[k], wl->dtypes[j]) == 0)
				return cb_fail(err, "workloads[%zu].dtypes[%zu]: '%s' is listed twice", i, j,
					       wl->dtypes[j]);
	}
	snprintf(path, sizeof(path), "workloads[%zu].benchmark.target", i);
	if (check_target(wl->bench_target, path, err) < 0)
		return -1;
	if (wl->bench_mark && !*wl->bench_mark)
		return cb_fail(err, "workloads[%zu].benchmark.mark: must not be empty", i);
	if (nodes && wl->k)
		return cb_fail(err, "workloads[%zu].correctness: node_ids and k are mutually exclusive", i);
	if (nodes && wl->nnode_ids == 0)
		return cb_fail(err, "workloads[%zu].correctness.node_ids: must not be empty", i);
	for (j = 0; j < wl->nnode_ids; j++) {
		snprintf(path, sizeof(path), "workloads[%zu].correctness.node_ids[%zu]", i, j);
		if (check_target(wl->node_ids[j], path, err) < 0)
			return -1;
	}
	if (wl->k && !*wl->k)
		return cb_fail(err, "workloads[%zu].correctness.k: must not be empty", i);
	if (wl->corr_file && (strlen(wl->corr_file) < 4 ||
			      strcmp(wl->corr_file + strlen(wl->corr_file) - 3, ".py") != 0))
		return cb_fail(err, "workloads[%zu].correctness.file: expected a .py file, got '%s'", i,
			       wl->corr_file);
	if (options && wl->ncorr_options == 0)
		return cb_fail(err, "workloads[%zu].correctness.options: must not be empty", i);
	for (j = 0; j < wl->ncorr_options; j++)
		if (wl->corr_options[j][0] != '-' || strcmp(wl->corr_options[j], "-") == 0)
			return cb_fail(err, "workloads[%zu].correctness.options[%zu]: '%s' is not an option (options start with '-')",
				       i, j, wl->corr_options[j]);
	if ((nodes || wl->k || options) && (!wl->reason || !*wl->reason))
		return cb_fail(err, "workloads[%zu].reason: required when correctness is narrowed (node_ids, k or options)", i);
	if (wl->reason && !*wl->reason)
		return cb_fail(err, "workloads[%zu].reason: must not be empty", i);
	if (wl->inventory_reason && !*wl->inventory_reason)
		return cb_fail(err, "workloads[%zu].inventory_reason: must not be empty", i);
	return 0;
}

/* No id of the first n workloads used twice, found in O(n log n). */
static int check_ids_unique(const struct cb_manifest *m, size_t n, struct cb_err *err)
{
	const char **ids = calloc(n ? n : 1, sizeof(*ids));
	struct cb_strindex x;
	size_t i, dup, first;
	int rc;

	if (!ids)
		return cb_fail(err, "workloads: out of memory");
	for (i = 0; i < n; i++)
		ids[i] = m->workloads[i].id;
	rc = cb_strindex_init(&x, ids, n, err);
	if (rc == 0 && cb_strindex_first_dup(&x, &dup, &first))
		rc = cb_fail(err, "workloads[%zu].id: '%s' is used twice (first at workloads[%zu])", dup,
			     m->workloads[dup].id, first);
	cb_strindex_release(&x);
	free(ids);
	return rc;
}

int cb_manifest_parse(const char *buf, size_t len, const char *name, struct cb_manifest *m,
		      struct cb_err *err)
{
	const char *schema;
	size_t i;
	int named = 1;   /* the error names the file already (the JSON parser's do) */

	memset(m, 0, sizeof(*m));
	m->path = strdup(name);
	if (!m->path)
		return cb_fail(err, "%s: out of memory", name);
	if (cb_sha256_hex(buf, len, m->sha256, err) < 0)
		goto fail;
	m->doc = cb_json_load_buf(buf, len, name, err);
	if (!m->doc)
		goto fail;
	named = 0;
	if (cb_schema_check(m->doc, manifest_fields, "", err) < 0 || check_numbers(m, err) < 0)
		goto fail;
	schema = cb_json_str(m->doc, "schema");
	if (strcmp(schema, CB_MANIFEST_SCHEMA) != 0) {
		cb_fail(err, "schema: expected '%s', got '%s'", CB_MANIFEST_SCHEMA, schema);
		goto fail;
	}
	m->campaign = cb_json_str(m->doc, "campaign");
	m->description = cb_json_str(m->doc, "description");
	if (!cb_is_ident(m->campaign)) {
		cb_fail(err, "campaign: '%s' is not a valid id ([A-Za-z0-9._-])", m->campaign);
		goto fail;
	}
	if (strlen(m->campaign) > CB_IDENT_MAX) {
		cb_fail(err, "campaign: " IDENT_TOO_LONG, m->campaign, strlen(m->campaign), CB_IDENT_MAX);
		goto fail;
	}
	if (check_sources(m, err) < 0 || check_device_timer_topology(m, err) < 0 ||
	    check_cells(m, err) < 0 || check_thresholds(m, err) < 0)
		goto fail;
	m->nworkloads = json_array_size(json_object_get(m->doc, "workloads"));
	if (m->nworkloads == 0) {
		cb_fail(err, "workloads: at least one workload is required");
		goto fail;
	}
	m->workloads = calloc(m->nworkloads, sizeof(*m->workloads));
	if (!m->workloads) {
		cb_fail(err, "workloads: out of memory");
		goto fail;
	}
	for (i = 0; i < m->nworkloads; i++)
		if (check_workload(m, i, err) < 0) {
			/* The first error in the file is the one named: an id used
			 * twice up to this workload (its id, when valid and not too
			 * long, is checked before the rest of it) comes first. */
			struct cb_err dup;
			const char *id = m->workloads[i].id;
			if (check_ids_unique(m, i + (cb_is_ident(id) && strlen(id) <= CB_IDENT_MAX ? 1 : 0), &dup) < 0)
				*err = dup;
			goto fail;
		}
	if (check_ids_unique(m, m->nworkloads, err) < 0)
		goto fail;
	return 0;
fail:
	if (!named)
		cb_prefix(err, "%s", name);
	cb_manifest_release(m);
	return -1;
}

int cb_manifest_load(const char *path, struct cb_manifest *m, struct cb_err *err)
{
	char *buf;
	size_t len;
	int rc;

	memset(m, 0, sizeof(*m));
	if (cb_read_file(path, &buf, &len, err) < 0)
		return -1;
	rc = cb_manifest_parse(buf, len, path, m, err);
	free(buf);
	return rc;
}

void cb_manifest_release(struct cb_manifest *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nworkloads && m->workloads; i++) {
		free(m->workloads[i].dtypes);
		free(m->workloads[i].node_ids);
		free(m->workloads[i].corr_options);
	}
	free(m->workloads);
	json_decref(m->doc);
	free(m->path);
	memset(m, 0, sizeof(*m));
}

const struct cb_cell *cb_manifest_cell(const struct cb_manifest *m, enum cb_role r)
{
	int i;

	for (i = 0; i < CB_NROLES; i++)
		if (m->cells[i].name && m->cells[i].role == r)
			return &m->cells[i];
	return NULL;
}

