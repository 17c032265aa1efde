/* manifest.h: the campaign contract, "caliber.manifest/1" (docs/design.md section 3). */
#ifndef CB_MANIFEST_H
#define CB_MANIFEST_H

#include <jansson.h>

#include "caliber.h"
#include "base/sha.h"

#define CB_MANIFEST_SCHEMA "caliber.manifest/1"

enum cb_role { CB_ROLE_BASELINE, CB_ROLE_CONTROL, CB_ROLE_CANDIDATE, CB_NROLES };

/* The three sources a campaign pins; order is the manifest's field order. */
enum cb_source_kind { CB_SRC_COMPILER, CB_SRC_CORPUS, CB_SRC_HARNESS, CB_NSOURCES };

struct cb_source {
	const char *name;          /* "compiler", "corpus", "harness" */
	const char *commit;        /* 40 hex, or NULL */
	const char *tree_sha256;   /* 64 hex, or NULL */
	const char *import;        /* Python module that must resolve inside it, or NULL */
};

struct cb_cell {
	const char *name;
	enum cb_role role;
	const json_t *env;         /* object of strings, borrowed from the document */
	/* The cell's own compiler build ("compiler" in the manifest): its
	 * identity as for sources.compiler, and its root as the manifest gives
	 * it (relative to the manifest's folder, or absolute). compiler_root is
	 * NULL for a cell that runs sources.compiler at --build-root. */
	struct cb_source compiler;
	const char *compiler_root;
};

struct cb_workload {
	size_t index;              /* position in the manifest's workloads array */
	const char *id;
	const char *op;
	const char **dtypes;
	size_t ndtypes;
	long long timeout_s;
	int canary;
	const char *bench_target;  /* "file.py::test" */
	const char *bench_mark;    /* optional -m expression for the benchmark, or NULL */
	const char *corr_file;     /* optional correctness file, or NULL (inventory's) */
	const char **node_ids;     /* pinned correctness node ids, or NULL */
	size_t nnode_ids;
	const char *k;             /* correctness -k expression, or NULL */
	const char **corr_options; /* pytest options added to the correctness selection (e.g. --quick), or NULL */
	size_t ncorr_options;
	const char *reason;
	const char *inventory_reason;
	const json_t *shapes;      /* optional object, borrowed */
};

/* Every string field points into doc, which the manifest owns. */
/* timer.sessions and timer.throttle_floor when the manifest leaves them out
 * (docs/design.md section 3). */
#define CB_DEFAULT_SESSIONS 3
#define CB_DEFAULT_THROTTLE_FLOOR 0.9

struct cb_manifest {
	json_t *doc;
	char *path;
	char sha256[CB_SHA256_HEX];   /* of the file's bytes */
	const char *campaign;
	const char *description;
	struct cb_source sources[CB_NSOURCES];
	const char *backend, *device_name, *device_uuid;
	const char *timer_kind, *graph_capture;
	long long warmup_ms, rep_ms, repeats;
	long long sessions;           /* timer.sessions: timed sessions per cell and round */
	long long max_sessions;       /* timer.max_sessions: at most this many where a round is undecided (runner_task.c) */
	double throttle_floor;        /* timer.throttle_floor */
	const char *topology_op;
	long long launch_floor;
	struct cb_cell cells[CB_NROLES];   /* in manifest order */
	double gain, regression, confidence;
	const char *policy;
	struct cb_workload *workloads;
	size_t nworkloads;
};

/* The longest timeout_s of a workload: a day per cell and phase. */
#define CB_TIMEOUT_S_MAX 86400

/* Load and validate a manifest file; every rule of docs/design.md section 3. */
int cb_manifest_load(const char *path, struct cb_manifest *m, struct cb_err *err);
/* The same from bytes already read (name is used in errors). */
int cb_manifest_parse(const char *buf, size_t len, const char *name, struct cb_manifest *m,
		      struct cb_err *err);
void cb_manifest_release(struct cb_manifest *m);

const char *cb_role_name(enum cb_role r);
/* The cell of a role (roles are unique in a valid manifest). */
const struct cb_cell *cb_manifest_cell(const struct cb_manifest *m, enum cb_role r);

/* Names used in paths (campaign, cell and workload ids): [A-Za-z0-9._-],
 * not starting with '.' or '-'. */
int cb_is_ident(const char *s);

/* The longest such name a manifest may give: each names a folder
 * (tasks/<id>, <phase>-<cell>, <campaign>-<selection>), which must stay far
 * below NAME_MAX and leave PATH_MAX room for what is written below it. */
#define CB_IDENT_MAX 128

#endif
