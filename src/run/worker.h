/* worker.h: one cell's worker processes (docs/design.md sections 6 and 7,
 * docs/formats.md "Worker session protocol" and "Worker lifetime"): their
 * clean environment with private caches, the requests they receive, and the
 * cell receipt of each request. By default every request runs in a process
 * of its own, started ahead of its turn; `caliber worker` runs a single
 * request by hand. */
#ifndef CB_WORKER_H
#define CB_WORKER_H

#include <stddef.h>

#include <jansson.h>

#include "caliber.h"
#include "account/evidence.h"
#include "campaign/manifest.h"
#include "campaign/matrix.h"
#include "campaign/plan.h"
#include "base/proc.h"

/* An environment under construction, "KEY=VALUE" strings. */
struct cb_env {
	char **v;       /* NULL-terminated */
	size_t n, cap;
};

int cb_env_set(struct cb_env *e, const char *key, const char *value);
void cb_env_release(struct cb_env *e);

/* Variables passed through from caliber's own environment when set. */
extern const char *const cb_env_passthrough[];

/* How the worker processes of a cell live (docs/formats.md, "Worker
 * lifetime"). A worker process fixes, for its whole life, things that move
 * timings by tenths of a percent (memory placement, allocator state,
 * addresses), so by default each request, and so each timed session, runs
 * in a process of its own, and the statistics' outer level is that process. */
enum cb_worker_mode {
	CB_WORKERS_SESSION,     /* a fresh process per request, started ahead of its turn; caches kept per cell */
	CB_WORKERS_PERSISTENT,  /* one process per cell for the whole run: sessions share it */
	CB_WORKERS_TASK         /* --isolate task: a fresh process and fresh caches per request, none ahead */
};

/* "session", "persistent", "isolate": a mode as receipts name it. */
const char *cb_worker_mode_name(enum cb_worker_mode mode);
/* The mode named by --workers (session, persistent, task); -1 for another name. */
int cb_worker_mode_parse(const char *name);

/* The most workers a cell keeps started ahead (--prestart). */
#define CB_PRESTART_MAX 4
/* How many it keeps by default. */
#define CB_PRESTART_DEFAULT 3

/* What stays the same for every worker of a run. The manifest, the
 * backend and the device string are borrowed from init's arguments and
 * must outlive the context (caliber.h); the rest is its own. */
struct cb_worker_ctx {
	const struct cb_manifest *m;
	const struct cb_backend *backend;
	const char *device;          /* value of the visibility variable */
	char *corpus;                /* absolute, symlink-free */
	char *build_root;            /* absolute, symlink-free */
	char *cell_root[CB_NROLES];  /* per cell (manifest order): its own compiler's root, absolute and
	                                symlink-free (it may not exist: preflight says so); NULL for a
	                                cell that runs sources.compiler at build_root */
	char *scratch;               /* private caches live under here; removed by release */
	int scratch_lock;            /* holds the scratch folder's lock while scratch is set (tidy.h) */
	char *command;               /* the session command line, split in place into worker_argv */
	const char **worker_argv;    /* its words, NULL-terminated */
	const char *plugins[CB_PLAN_MAX + 1];   /* the plan */
	size_t nplugins;
	enum cb_worker_mode mode;
	int prestart;                /* session mode: workers each cell keeps started ahead, 0..CB_PRESTART_MAX */
	char *preload;               /* CALIBER_PRELOAD of every worker: the modules it imports before its request */
	char *gpu_lock;              /* session mode: the device lock file in scratch (python/caliber_pytest/_gpu_lock.py) */
	int warmup_ahead;            /* requests carry CALIBER_WARMUP_NEXT */
	int confine_abi;             /* how workers are confined (cb_confine_code: a Landlock ABI, CB_CONFINE_NS
	                                for a mount namespace); 0: not confined */
	char *slots;                 /* confined: where each worker's slot waits between its requests
	                                (RUN/.slots, cb_worker_ctx_slots); NULL: not confined */
};

/* Set up a context: resolve the roots, create the scratch folder (under
 * $TMPDIR, "caliber-run.XXXXXX", locked while this caliber lives), split the worker command on spaces (no shell; default
 * "<python> -m caliber_pytest.session"), derive the plugin plan and what
 * workers preload (the backend's preload, the compiler's and the corpus's
 * import modules, the plan). warmup_ahead (each request names the next one
 * for parallel_warmup) is set only for persistent workers whose plan holds
 * caliber_pytest.parallel_warmup, while caliber's own PARALLEL_WARMUP_GPUS
 * is set and not blank: otherwise nothing would read CALIBER_WARMUP_NEXT
 * (a worker of another mode ends with its request), and requests stay as they were. */
int cb_worker_ctx_init(struct cb_worker_ctx *ctx, const struct cb_manifest *m,
		       const struct cb_backend *b, const char *corpus, const char *build_root,
		       const char *device, const char *python, const char *worker_cmd, enum cb_worker_mode mode,
		       int prestart, struct cb_err *err);
/* Point every cell that names its own compiler at the root the frozen
 * matrix records for it (cb_matrix_compiler_root), symlinks resolved. A
 * matrix that records none for such a cell leaves it NULL: the binding and
 * sources preflights refuse that campaign. */
int cb_worker_ctx_compilers(struct cb_worker_ctx *ctx, const json_t *matrix, struct cb_err *err);
/* Confine every worker started from now on as abi says (the run's
 * cb_confine_code: a Landlock ABI, or CB_CONFINE_NS for a mount
 * namespace; 0: not at all; confine.h): each may write only its private folder and its slot,
 * a folder made for it under RUN/.slots (made here) that becomes the
 * folder of each cell it serves for the time of its request
 * (cb_cell_run). */
int cb_worker_ctx_confine(struct cb_worker_ctx *ctx, int abi, const char *run_root, struct cb_err *err);

/* The name of the folder of slots in a run root; never sealed. */
#define CB_SLOTS_DIR ".slots"

/* Remove the scratch folder and free what init allocated. */
void cb_worker_ctx_release(struct cb_worker_ctx *ctx);

/* The compiler root cell runs: its own, or build_root. NULL only for a
 * cell that names a compiler the matrix gave no root for. */
const char *cb_worker_compiler_root(const struct cb_worker_ctx *ctx, const struct cb_cell *cell);
/* What a receipt says of the compiler cell ran (docs/formats.md): "pin"
 * (cells[i].compiler or sources.compiler), commit or tree_sha256, import
 * when declared, and root. A new reference. */
json_t *cb_worker_compiler_json(const struct cb_worker_ctx *ctx, const struct cb_cell *cell);

/* A cell's worker processes: the one serving (alive across requests in
 * persistent mode) and, in session mode, those started ahead of their turn. */
struct cb_cell_proc {
	const struct cb_cell *cell;
	struct cb_child child;
	int alive;
	long long started_ms;        /* when the serving worker was started ahead (CLOCK_MONOTONIC); -1: at its request */
	struct cb_child ahead[CB_PRESTART_MAX];   /* session mode: started, waiting for a request, oldest first */
	long long ahead_ms[CB_PRESTART_MAX];
	size_t nahead;
	int spawned;                 /* processes started for this cell so far */
	unsigned long long requests; /* requests sent to this cell's workers so far: n of the request ids */
	char *dir;                   /* its private folder (caches, HOME): one per process in task mode, else per cell */
	char *slot;                  /* confined: the serving worker's slot (cb_worker_ctx_confine), NULL when none */
	char *ahead_slot[CB_PRESTART_MAX];   /* and those of the workers waiting ahead */
	struct cb_env env;
	json_t *overlay;             /* what caliber set, for receipts */
};

/* Session mode: start workers of the cell until ctx->prestart of them wait
 * for a request, so that a request finds one that has paid for starting
 * Python and its preload while another cell was timed. Nothing in the
 * other modes. */
int cb_cell_proc_prestart(const struct cb_worker_ctx *ctx, struct cb_cell_proc *cp, struct cb_err *err);

/* Build the environment of a worker of cell from nothing: passed-through
 * variables, private HOME, caches, working directory and TMPDIR under dir, PYTHONPATH (with the cell's
 * compiler root, cb_worker_compiler_root), the pinned device, CALIBER_* and
 * the cell's overlay (with {harness}, {build_root} and {corpus} expanded,
 * {build_root} to the cell's compiler root). overlay receives every
 * variable caliber set. */
int cb_worker_env(const struct cb_worker_ctx *ctx, const struct cb_cell *cell, const char *dir,
		  struct cb_env *env, json_t **overlay, struct cb_err *err);

/* The request of one task, phase, cell and session (docs/formats.md):
 * pytest argv with -p for every planned plugin, and the per-request
 * environment. Session 1 of the baseline's correctness, round a and screen
 * records autotune decisions; every other request replays them (round b
 * round a's). Correctness and screen have one session. */
json_t *cb_worker_request(const struct cb_worker_ctx *ctx, const json_t *task,
			  const struct cb_workload *w, const struct cb_cell *cell, enum cb_phase p,
			  int session, const char *task_dir, struct cb_err *err);

/* Put CALIBER_WARMUP_NEXT into req's env (docs/formats.md): next, the
 * request of the same cell that comes after req and may need compiling, as
 * compact JSON {"argv", "env", "key": "<task>/<phase>"}, so that
 * parallel_warmup compiles it on another GPU while req is measured. */
int cb_worker_request_ahead(json_t *req, const json_t *next, struct cb_err *err);

/* The scratch folders' names: "<CB_SCRATCH_PREFIX>XXXXXX" under $TMPDIR. */
#define CB_SCRATCH_PREFIX "caliber-run."

/* The most bytes of a worker's stdout and stderr one worker.log takes;
 * the log then says where it was cut (proc.h, struct cb_sink). */
#define CB_WORKER_LOG_MAX (64ULL * 1024 * 1024)

/* Send one request to the cell's worker (when none is serving, one
 * started ahead, else a new one, through the lifeline wrapper: it dies with
 * caliber; in session mode another is then started ahead), with its id
 * "<task>/<phase>/<cell>/<n>" set in request, wait for its reply within
 * timeout_s, copy what it prints to <cell dir>/worker.log (at most
 * CB_WORKER_LOG_MAX bytes), decide the outcome, take out of the cell
 * folder what a seal cannot hold (tidy.h), and write <cell dir>/cell.json.
 * A timeout, a crash, or a reply that breaks the protocol (no or another
 * request's id, a second reply, a line over CB_REPLY_MAX) kills the
 * worker's process group and makes the cell a harness failure; the next
 * request starts a fresh worker. So does anything the cell folder held
 * that a seal cannot, and anything in found (NULL: none): what the caller
 * took out of the folder before the request (tidy.h, cb_tidy_fresh), which
 * heads the receipt's "removed". The cell ends when its worker has
 * answered and every process it left behind is gone (cb_reap_strays; the
 * receipt's "killed" names them); confined, its slot then leaves the
 * cell folder and what the worker wrote stays, out of its reach. Returns
 * -1 only on caliber's own failure. */
int cb_cell_run(const struct cb_worker_ctx *ctx, struct cb_cell_proc *cp, json_t *request,
		const char *task, enum cb_phase p, long long timeout_s, const json_t *found,
		enum cb_outcome *outcome, struct cb_err *err);

/* End a cell's workers: the serving one gets EOF on stdin, a short wait,
 * then is killed; those waiting ahead are killed. */
void cb_cell_proc_stop(struct cb_cell_proc *cp);
void cb_cell_proc_release(struct cb_cell_proc *cp);

#endif
