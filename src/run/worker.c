/* worker.c: worker environments and requests; the facts of a cell's
 * request go to cb_cell_receipt_write (receipt.c). */
#include "worker.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/home.h"
#include "base/buf.h"
#include "base/fsutil.h"
#include "seal/guard.h"
#include "base/jsonio.h"
#include "base/runroot.h"
#include "account/receipt.h"
#include "reply.h"
#include "seal/tidy.h"

const char *cb_worker_mode_name(enum cb_worker_mode mode)
{
	static const char *const names[] = { "session", "persistent", "isolate" };

	return names[mode];
}

int cb_worker_mode_parse(const char *name)
{
	static const char *const names[] = { "session", "persistent", "task" };
	int i;

	for (i = 0; i < 3; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

const char *const cb_env_passthrough[] = {
	"PATH", "LANG", "LC_ALL", "TZ", "USER", "LOGNAME", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH",
	"PARALLEL_WARMUP_GPUS", "NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
	"NVSHMEM_DISABLE_NVLS", NULL
};

int cb_env_set(struct cb_env *e, const char *key, const char *value)
{
	size_t i, kl = strlen(key);
	char *kv = cb_strdupf("%s=%s", key, value);

	if (!kv)
		return -1;
	for (i = 0; i < e->n; i++)
		if (strncmp(e->v[i], key, kl) == 0 && e->v[i][kl] == '=') {
			free(e->v[i]);
			e->v[i] = kv;
			return 0;
		}
	if (e->n + 2 > e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 32;
		char **v = realloc(e->v, cap * sizeof(*v));
		if (!v) {
			free(kv);
			return -1;
		}
		e->v = v;
		e->cap = cap;
	}
	e->v[e->n++] = kv;
	e->v[e->n] = NULL;
	return 0;
}

void cb_env_release(struct cb_env *e)
{
	size_t i;

	if (!e)
		return;
	for (i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	memset(e, 0, sizeof(*e));
}

/* The position of cell in the manifest's cells, which ctx->cell_root
 * follows; CB_NROLES for a cell of another manifest. */
static size_t cell_index(const struct cb_worker_ctx *ctx, const struct cb_cell *cell)
{
	size_t c;

	for (c = 0; c < CB_NROLES && &ctx->m->cells[c] != cell; c++)
		;
	return c;
}

const char *cb_worker_compiler_root(const struct cb_worker_ctx *ctx, const struct cb_cell *cell)
{
	size_t c = cell_index(ctx, cell);

	if (!cell->compiler_root)
		return ctx->build_root;
	return c < CB_NROLES ? ctx->cell_root[c] : NULL;
}

json_t *cb_worker_compiler_json(const struct cb_worker_ctx *ctx, const struct cb_cell *cell)
{
	const struct cb_source *s = cell->compiler_root ? &cell->compiler : &ctx->m->sources[CB_SRC_COMPILER];
	const char *root = cb_worker_compiler_root(ctx, cell);
	json_t *j = cell->compiler_root ? json_sprintf("cells[%zu].compiler", cell_index(ctx, cell))
					: json_string("sources.compiler");

	j = json_pack("{s:o, s:o}", "pin", j, "root", root ? json_string(root) : json_null());
	json_object_set_new(j, s->commit ? "commit" : "tree_sha256", json_string(s->commit ? s->commit : s->tree_sha256));
	if (s->import)
		json_object_set_new(j, "import", json_string(s->import));
	return j;
}

/* value with {harness}, {build_root} (the cell's compiler root) and
 * {corpus} replaced. */
static char *expand(const struct cb_worker_ctx *ctx, const char *root, const char *value)
{
	static const char *const keys[] = { "{harness}", "{build_root}", "{corpus}" };
	const char *const vals[] = { cb_home(), root, ctx->corpus };

	return cb_substitute(value, keys, vals, 3);
}

/* The folder to put on PYTHONPATH so that a compiler's import module
 * resolves inside its root: the root itself when it holds the package,
 * its parent when it is the package. */
static char *build_root_path(const char *root, const char *mod)
{
	char *inside = mod ? cb_strdupf("%s/%s/__init__.py", root, mod) : NULL;
	char *self = cb_strdupf("%s/__init__.py", root);
	char *out;

	if (inside && cb_exists(inside))
		out = strdup(root);
	else if (self && cb_exists(self)) {
		const char *slash = strrchr(root, '/');
		out = slash && slash != root ? strndup(root, (size_t)(slash - root)) : strdup("/");
	} else
		out = strdup(root);
	free(inside);
	free(self);
	return out;
}

int cb_worker_env(const struct cb_worker_ctx *ctx, const struct cb_cell *cell, const char *dir,
		  struct cb_env *env, json_t **overlay, struct cb_err *err)
{
	static const char *const sub[] = { "home", "home/.cache", "triton", "flaggems", "work", "tmp" };
	static const char *const vars[] = { "HOME", "XDG_CACHE_HOME", "TRITON_CACHE_DIR", "FLAGGEMS_CACHE_DIR",
					    "CALIBER_WORK_DIR", "TMPDIR" };
	const char *k, *v, *root = cb_worker_compiler_root(ctx, cell);
	const struct cb_source *comp = cell->compiler_root ? &cell->compiler : &ctx->m->sources[CB_SRC_COMPILER];
	json_t *ov = json_object(), *jv;
	char *bpath = root ? build_root_path(root, comp->import) : NULL, *pp = NULL, *extra = NULL;
	size_t i;
	int rc = -1;

	memset(env, 0, sizeof(*env));
	if (!root) {
		json_decref(ov);
		return cb_fail(err, "cell %s: the task matrix records no root for its compiler", cell->name);
	}
	if (!ov || !bpath)
		goto oom;
	for (i = 0; cb_env_passthrough[i]; i++) {
		const char *val = getenv(cb_env_passthrough[i]);
		if (val && cb_env_set(env, cb_env_passthrough[i], val) < 0)
			goto oom;
	}
	/* What caliber sets, in the order it wins: caches and the working
	 * directory, paths, device, CALIBER_*, then the overlay (which may not
	 * touch CALIBER_*). */
	for (i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		char *p = cb_path_join(dir, sub[i]);
		if (!p || cb_mkdir_p(p, 0700, err) < 0) {
			free(p);
			goto fail;
		}
		json_object_set_new(ov, vars[i], json_string(p));
		free(p);
	}
	v = json_string_value(json_object_get(cell->env, "PYTHONPATH"));
	extra = v ? expand(ctx, root, v) : NULL;
	pp = cb_strdupf("%s/python:%s:%s%s%s", cb_home(), ctx->corpus, bpath, extra ? ":" : "",
			extra ? extra : "");
	if (!pp)
		goto oom;
	json_object_set_new(ov, "PYTHONPATH", json_string(pp));
	json_object_set_new(ov, "PYTHONDONTWRITEBYTECODE", json_string("1"));
	json_object_set_new(ov, "PYTHONUNBUFFERED", json_string("1"));
	json_object_set_new(ov, ctx->backend->visibility_env, json_string(ctx->device));
	json_object_set_new(ov, "CALIBER_REPLY_FD", json_string("3"));
	json_object_set_new(ov, "CALIBER_PRELOAD", json_string(ctx->preload));
	if (ctx->gpu_lock)
		json_object_set_new(ov, "CALIBER_GPU_LOCK", json_string(ctx->gpu_lock));
	/* pytest plugins installed beside the corpus stay out of its sessions
	 * (and out of a fresh worker's start): the plan names every plugin a
	 * request loads; an overlay may set this back to "". */
	json_object_set_new(ov, "PYTEST_DISABLE_PLUGIN_AUTOLOAD", json_string("1"));
	json_object_set_new(ov, "CALIBER_CORPUS", json_string(ctx->corpus));
	json_object_set_new(ov, "CALIBER_BACKEND", json_string(ctx->backend->name));
	json_object_set_new(ov, "CALIBER_GRAPH_CAPTURE",
			    json_string(ctx->backend->graph_capture && strcmp(ctx->m->graph_capture, "auto") == 0
					? "1" : "0"));
	json_object_foreach((json_t *)cell->env, k, jv) {
		char *val;
		if (strcmp(k, "PYTHONPATH") == 0)
			continue;
		val = expand(ctx, root, json_string_value(jv));
		if (!val)
			goto oom;
		json_object_set_new(ov, k, json_string(val));
		free(val);
	}
	json_object_foreach(ov, k, jv)
		if (cb_env_set(env, k, json_string_value(jv)) < 0)
			goto oom;
	*overlay = ov;
	ov = NULL;
	rc = 0;
	goto out;
oom:
	cb_fail(err, "worker environment: out of memory");
fail:
	cb_env_release(env);
out:
	json_decref(ov);
	free(bpath);
	free(pp);
	free(extra);
	return rc;
}

/* Join a workload's dtypes with ';'. */
static char *dtypes_of(const struct cb_workload *w)
{
	struct cb_buf b = CB_BUF_INIT;
	size_t i;

	for (i = 0; i < w->ndtypes; i++)
		cb_buf_addf(&b, "%s%s", i ? ";" : "", w->dtypes[i]);
	return cb_buf_detach(&b, NULL);
}

json_t *cb_worker_request(const struct cb_worker_ctx *ctx, const json_t *task,
			  const struct cb_workload *w, const struct cb_cell *cell, enum cb_phase p,
			  int session, const char *task_dir, struct cb_err *err)
{
	const struct cb_cell *base = cb_manifest_cell(ctx->m, CB_ROLE_BASELINE);
	const int record = cell->role == CB_ROLE_BASELINE && p != CB_PH_ROUND_B && session == 1;
	char *dir = cb_session_dir(task_dir, p, cell->name, session);
	char *rdir = cb_cell_dir(task_dir, p == CB_PH_ROUND_B ? CB_PH_ROUND_A : p, base->name);
	char *afile = NULL, *dt = dtypes_of(w), *shapes = NULL, *timer = NULL, sess[24];
	const char **args = cb_matrix_args(task, p == CB_PH_CORRECTNESS ? "correctness_args" : "benchmark_args");
	json_t *argv = json_pack("[s, s, s]", "-q", "-p", "no:cacheprovider"), *env, *req = NULL;
	size_t i;

	afile = record ? cb_path_join(dir, "autotune.jsonl") : rdir ? cb_path_join(rdir, "autotune.jsonl") : NULL;
	shapes = w->shapes ? json_dumps(w->shapes, JSON_COMPACT | JSON_SORT_KEYS) : strdup("{}");
	timer = json_dumps(json_object_get(ctx->m->doc, "timer"), JSON_COMPACT | JSON_SORT_KEYS);
	if (!dir || !rdir || !afile || !dt || !shapes || !timer || !args || !argv) {
		cb_fail(err, "request: out of memory");
		goto out;
	}
	for (i = 0; i < ctx->nplugins; i++) {
		json_array_append_new(argv, json_string("-p"));
		json_array_append_new(argv, json_string(ctx->plugins[i]));
	}
	for (i = 0; args[i]; i++)
		json_array_append_new(argv, json_string(args[i]));
	snprintf(sess, sizeof(sess), "%d", session);
	env = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
			"CALIBER_CELL_DIR", dir, "CALIBER_TASK", w->id, "CALIBER_CELL", cell->name,
			"CALIBER_ROLE", cb_role_name(cell->role), "CALIBER_PHASE", cb_phase_name(p),
			"CALIBER_SESSION", sess,
			"CALIBER_AUTOTUNE_MODE", record ? "record" : "replay", "CALIBER_AUTOTUNE_FILE", afile,
			"CALIBER_DTYPES", dt, "CALIBER_SHAPES", shapes, "CALIBER_TIMER", timer);
	if (env && p != CB_PH_CORRECTNESS && (p == CB_PH_ROUND_B || session > 1)) {
		/* A row's timer is the one the cell's first session chose (timing.py). */
		char *first = cb_cell_dir(task_dir, CB_PH_ROUND_A, cell->name);
		char *plan = first ? cb_path_join(first, CB_RUN_TIMING) : NULL;
		if (!plan || json_object_set_new(env, "CALIBER_TIMER_PLAN", json_string(plan)) < 0) {
			json_decref(env);
			env = NULL;
		}
		free(first);
		free(plan);
	}
	req = env ? json_pack("{s:o, s:s, s:s, s:o, s:s, s:i, s:s}", "argv", argv, "cell", cell->name, "dir", dir,
			      "env", env, "phase", cb_phase_name(p), "session", session, "task", w->id) : NULL;
	argv = NULL;
	if (!req)
		cb_fail(err, "request: out of memory");
out:
	json_decref(argv);
	free(args);
	free(dir);
	free(rdir);
	free(afile);
	free(dt);
	free(shapes);
	free(timer);
	return req;
}

int cb_worker_request_ahead(json_t *req, const json_t *next, struct cb_err *err)
{
	char *key = cb_strdupf("%s/%s", cb_json_str(next, "task"), cb_json_str(next, "phase"));
	json_t *ahead = key ? json_pack("{s:O, s:O, s:s}", "argv", json_object_get(next, "argv"), "env",
					json_object_get(next, "env"), "key", key) : NULL;
	char *text = ahead ? json_dumps(ahead, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	int rc = text && json_object_set_new(json_object_get(req, "env"), "CALIBER_WARMUP_NEXT",
					     json_string(text)) == 0 ? 0 : cb_fail(err, "request: out of memory");

	free(key);
	free(text);
	json_decref(ahead);
	return rc;
}

/* Whether caliber's own environment lists GPUs to warm up on: set and not
 * only blanks and commas, as parallel_warmup reads it. */
static int warmup_gpus_listed(void)
{
	const char *v = getenv("PARALLEL_WARMUP_GPUS");

	for (; v && *v; v++)
		if (*v != ',' && !isspace((unsigned char)*v))
			return 1;
	return 0;
}

/* CALIBER_PRELOAD: the backend's preload, the compiler's import module
 * (each cell's own, else sources.compiler's), the corpus's, then the plan,
 * space-separated, each once. A fresh string. */
static char *preload_of(const struct cb_manifest *m, const struct cb_backend *b, const char *const *plugins,
			size_t nplugins)
{
	struct cb_buf out = CB_BUF_INIT;
	const char *names[64];
	size_t n = 0, i, j, c;

	for (i = 0; b->preload && b->preload[i] && n < 32; i++)
		names[n++] = b->preload[i];
	for (c = 0; c < CB_NROLES; c++)
		if (m->cells[c].compiler_root && m->cells[c].compiler.import)
			names[n++] = m->cells[c].compiler.import;
	if (m->sources[CB_SRC_COMPILER].import)
		names[n++] = m->sources[CB_SRC_COMPILER].import;
	if (m->sources[CB_SRC_CORPUS].import)
		names[n++] = m->sources[CB_SRC_CORPUS].import;
	for (i = 0; i < nplugins && n < 64; i++)
		names[n++] = plugins[i];
	for (i = 0; i < n; i++) {
		for (j = 0; j < i && strcmp(names[j], names[i]) != 0; j++)
			;
		if (j == i)
			cb_buf_addf(&out, "%s%s", out.len ? " " : "", names[i]);
	}
	return cb_buf_detach(&out, NULL);
}

int cb_worker_ctx_init(struct cb_worker_ctx *ctx, const struct cb_manifest *m,
		       const struct cb_backend *b, const char *corpus, const char *build_root,
		       const char *device, const char *python, const char *worker_cmd, enum cb_worker_mode mode,
		       int prestart, struct cb_err *err)
{
	const char *tmp = getenv("TMPDIR");
	char *tok, *save = NULL;
	size_t n = 0, i;

	memset(ctx, 0, sizeof(*ctx));
	ctx->m = m;
	ctx->backend = b;
	ctx->device = device ? device : m->device_uuid ? m->device_uuid : "0";
	ctx->mode = mode;
	ctx->prestart = mode == CB_WORKERS_SESSION ? prestart : 0;
	ctx->corpus = cb_resolve(corpus);
	ctx->build_root = cb_resolve(build_root);
	ctx->scratch = cb_strdupf("%s/" CB_SCRATCH_PREFIX "XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ctx->command = worker_cmd ? strdup(worker_cmd) : cb_strdupf("%s -m caliber_pytest.session", python);
	ctx->worker_argv = ctx->command ? calloc(strlen(ctx->command) / 2 + 2, sizeof(*ctx->worker_argv)) : NULL;
	if (!ctx->corpus || !ctx->build_root || !ctx->scratch || !ctx->worker_argv) {
		cb_worker_ctx_release(ctx);
		return cb_fail(err, "out of memory");
	}
	if (cb_mkdtemp_locked(ctx->scratch, &ctx->scratch_lock, err) < 0) {
		cb_prefix(err, "cannot create the scratch folder");
		free(ctx->scratch);
		ctx->scratch = NULL;
		cb_worker_ctx_release(ctx);
		return -1;
	}
	/* A command of k bytes has at most k / 2 + 1 words. */
	for (tok = strtok_r(ctx->command, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		ctx->worker_argv[n++] = tok;
	if (n == 0) {
		cb_worker_ctx_release(ctx);
		return cb_fail(err, "--worker: empty command");
	}
	cb_plan(b, ctx->plugins, sizeof(ctx->plugins) / sizeof(ctx->plugins[0]), &ctx->nplugins);
	if (!(ctx->preload = preload_of(m, b, ctx->plugins, ctx->nplugins))) {
		cb_worker_ctx_release(ctx);
		return cb_fail(err, "out of memory");
	}
	if (ctx->prestart > 0) {
		int fd;
		ctx->gpu_lock = cb_path_join(ctx->scratch, "gpu.lock");
		fd = ctx->gpu_lock ? open(ctx->gpu_lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444) : -1;
		if (fd < 0) {
			cb_fail(err, "%s: %s", ctx->gpu_lock ? ctx->gpu_lock : "gpu.lock", strerror(errno));
			cb_worker_ctx_release(ctx);
			return -1;
		}
		close(fd);
	}
	if (mode == CB_WORKERS_PERSISTENT && warmup_gpus_listed())
		for (i = 0; i < ctx->nplugins; i++)
			if (strcmp(ctx->plugins[i], "caliber_pytest.parallel_warmup") == 0)
				ctx->warmup_ahead = 1;
	return 0;
}

int cb_worker_ctx_compilers(struct cb_worker_ctx *ctx, const json_t *matrix, struct cb_err *err)
{
	size_t c;

	for (c = 0; c < CB_NROLES; c++) {
		const char *root = ctx->m->cells[c].compiler_root ? cb_matrix_compiler_root(matrix, ctx->m->cells[c].name)
								  : NULL;
		free(ctx->cell_root[c]);
		ctx->cell_root[c] = root ? cb_resolve(root) : NULL;
		if (root && !ctx->cell_root[c])
			return cb_fail(err, "cell %s: compiler root %s cannot be resolved", ctx->m->cells[c].name, root);
	}
	return 0;
}

void cb_worker_ctx_release(struct cb_worker_ctx *ctx)
{
	size_t c;

	if (ctx->scratch) {
		struct cb_err ignored;
		cb_rm_rf(ctx->scratch, &ignored);
		close(ctx->scratch_lock);
	}
	for (c = 0; c < CB_NROLES; c++)
		free(ctx->cell_root[c]);
	free(ctx->corpus);
	free(ctx->build_root);
	free(ctx->scratch);
	free(ctx->command);
	free(ctx->worker_argv);
	free(ctx->preload);
	free(ctx->gpu_lock);
	free(ctx->slots);
	memset(ctx, 0, sizeof(*ctx));
}

int cb_worker_ctx_confine(struct cb_worker_ctx *ctx, int abi, const char *run_root, struct cb_err *err)
{
	free(ctx->slots);
	ctx->slots = NULL;
	ctx->confine_abi = 0;
	if (!abi)
		return 0;
	ctx->slots = cb_path_join(run_root, CB_SLOTS_DIR);
	if (!ctx->slots)
		return cb_fail(err, "out of memory");
	if (mkdir(ctx->slots, 0700) < 0 && errno != EEXIST)
		return cb_fail(err, "%s: %s", ctx->slots, strerror(errno));
	ctx->confine_abi = abi;
	return 0;
}

/* Remove the slot *slot of a worker that is gone (its processes with it),
 * and forget it. */
static void drop_slot(char **slot)
{
	struct cb_err ignored;

	if (*slot)
		cb_rm_rf(*slot, &ignored);
	free(*slot);
	*slot = NULL;
}

/* Start a worker of the cell into c. Its private folder (caches, HOME,
 * working directory, TMPDIR) and environment are the cell's for the whole
 * run, but fresh for every process in task mode. Confined, it gets a
 * fresh slot (*slot, under ctx->slots) and may write only there and in
 * its private folder. */
static int start_worker(const struct cb_worker_ctx *ctx, struct cb_cell_proc *cp, struct cb_child *c,
			char **slot, struct cb_err *err)
{
	const char *dirs[2];

	if (ctx->mode == CB_WORKERS_TASK || !cp->dir) {
		free(cp->dir);
		cb_env_release(&cp->env);
		json_decref(cp->overlay);
		cp->overlay = NULL;
		cp->dir = cb_strdupf("%s/%s-%d", ctx->scratch, cp->cell->name, cp->spawned);
		if (!cp->dir)
			return cb_fail(err, "out of memory");
		if (cb_worker_env(ctx, cp->cell, cp->dir, &cp->env, &cp->overlay, err) < 0)
			return -1;
	}
	*slot = NULL;
	if (ctx->slots) {
		*slot = cb_strdupf("%s/%s-%d", ctx->slots, cp->cell->name, cp->spawned);
		if (!*slot)
			return cb_fail(err, "out of memory");
		if (mkdir(*slot, 0755) < 0) {
			cb_fail(err, "%s: %s", *slot, strerror(errno));
			free(*slot);
			*slot = NULL;
			return -1;
		}
	}
	cp->spawned++;
	dirs[0] = cp->dir;
	dirs[1] = *slot;
	if (cb_child_spawn_confined(c, ctx->worker_argv, cp->env.v, CB_CHILD_REPLY | CB_CHILD_LIFELINE,
				    ctx->confine_abi, dirs, 2, err) < 0) {
		drop_slot(slot);
		return cb_prefix(err, "cell %s: worker", cp->cell->name);
	}
	return 0;
}

int cb_cell_proc_prestart(const struct cb_worker_ctx *ctx, struct cb_cell_proc *cp, struct cb_err *err)
{
	while (cp->nahead < (size_t)ctx->prestart && cp->nahead < CB_PRESTART_MAX) {
		memset(&cp->ahead[cp->nahead], 0, sizeof(cp->ahead[cp->nahead]));
		if (start_worker(ctx, cp, &cp->ahead[cp->nahead], &cp->ahead_slot[cp->nahead], err) < 0)
			return -1;
		cp->ahead_ms[cp->nahead++] = cb_mono_ms();
	}
	return 0;
}

/* The cell's serving worker: the oldest started ahead, else a new one. */
static int take_worker(const struct cb_worker_ctx *ctx, struct cb_cell_proc *cp, struct cb_err *err)
{
	if (cp->nahead) {
		cp->child = cp->ahead[0];
		cp->started_ms = cp->ahead_ms[0];
		cp->slot = cp->ahead_slot[0];
		memmove(&cp->ahead[0], &cp->ahead[1], (cp->nahead - 1) * sizeof(cp->ahead[0]));
		memmove(&cp->ahead_ms[0], &cp->ahead_ms[1], (cp->nahead - 1) * sizeof(cp->ahead_ms[0]));
		memmove(&cp->ahead_slot[0], &cp->ahead_slot[1], (cp->nahead - 1) * sizeof(cp->ahead_slot[0]));
		memset(&cp->ahead[--cp->nahead], 0, sizeof(cp->ahead[0]));
		cp->ahead_slot[cp->nahead] = NULL;
	} else {
		memset(&cp->child, 0, sizeof(cp->child));
		if (start_worker(ctx, cp, &cp->child, &cp->slot, err) < 0)
			return -1;
		cp->started_ms = -1;
	}
	cp->alive = 1;
	return 0;
}

/* Kill the workers waiting ahead. */
static void drop_ahead(struct cb_cell_proc *cp)
{
	while (cp->nahead) {
		cb_child_kill(&cp->ahead[--cp->nahead], 1000);
		cb_child_release(&cp->ahead[cp->nahead]);
		drop_slot(&cp->ahead_slot[cp->nahead]);
	}
}

/* End the cell's serving worker: EOF on stdin, a short wait, then kill;
 * the workers waiting ahead stay. */
static void stop_serving(struct cb_cell_proc *cp)
{
	enum cb_wait what;
	char *line = NULL;
	size_t len;
	struct cb_err err;

	if (!cp->alive)
		return;
	cb_child_close_stdin(&cp->child);
	if (cb_child_wait(&cp->child, NULL, cb_mono_ms() + 5000, &what, &line, &len, &err) == 0 &&
	    what != CB_WAIT_EXITED)
		cb_child_kill(&cp->child, 1000);
	free(line);
	cb_child_release(&cp->child);
	cp->alive = 0;
}

void cb_cell_proc_stop(struct cb_cell_proc *cp)
{
	drop_ahead(cp);
	stop_serving(cp);
	drop_slot(&cp->slot);
}

void cb_cell_proc_release(struct cb_cell_proc *cp)
{
	if (!cp)
		return;
	drop_ahead(cp);
	if (cp->alive) {
		cb_child_kill(&cp->child, 1000);
		cb_child_release(&cp->child);
		cp->alive = 0;
	}
	drop_slot(&cp->slot);
	cb_env_release(&cp->env);
	json_decref(cp->overlay);
	free(cp->dir);
	cp->overlay = NULL;
	cp->dir = NULL;
}

/* Make the serving worker's slot the cell folder dir (empty, made by the
 * runner): what the worker put in its slot before its request was not
 * written for this cell, and is taken out into removed (tidy.h) before
 * the slot takes dir's place. */
static int slot_in(struct cb_cell_proc *cp, const char *dir, json_t *removed, struct cb_err *err)
{
	if (cb_tidy_fresh(cp->slot, removed, err) < 0)
		return cb_prefix(err, "worker slot");
	if (rmdir(dir) < 0)
		return cb_fail(err, "%s: cannot make way for the worker's slot: %s", dir, strerror(errno));
	if (rename(cp->slot, dir) < 0)
		return cb_fail(err, "%s: cannot move the worker's slot %s there: %s", dir, cp->slot, strerror(errno));
	return 0;
}

/* The cell ends: the slot leaves the cell folder dir for its place under
 * .slots, and what is in it moves into a new folder at dir, which the
 * worker's rules do not reach (Landlock grants rights beneath a folder,
 * wherever it is moved, never beneath a folder made after). */
static int slot_out(struct cb_cell_proc *cp, const char *dir, struct cb_err *err)
{
	char **names = NULL;
	size_t n = 0, i;
	int rc = 0;

	if (rename(dir, cp->slot) < 0)
		return cb_fail(err, "%s: cannot move the worker's slot back to %s: %s", dir, cp->slot, strerror(errno));
	if (mkdir(dir, 0755) < 0)
		return cb_fail(err, "%s: %s", dir, strerror(errno));
	if (cb_list_dir(cp->slot, &names, &n, err) < 0)
		return -1;
	for (i = 0; i < n && rc == 0; i++) {
		char *from = cb_path_join(cp->slot, names[i]), *to = cb_path_join(dir, names[i]);
		if (!from || !to)
			rc = cb_fail(err, "out of memory");
		else if (rename(from, to) < 0)
			rc = cb_fail(err, "%s: cannot move into the cell folder: %s", from, strerror(errno));
		free(from);
		free(to);
	}
	cb_strv_free(names, n);
	return rc;
}

/* Sorted names of what the worker left in the cell folder. */
static json_t *outputs_of(const char *dir)
{
	json_t *a = json_array();
	char **names = NULL;
	size_t n = 0, i;
	struct cb_err err;

	if (cb_list_dir(dir, &names, &n, &err) == 0)
		for (i = 0; i < n; i++)
			if (strcmp(names[i], CB_RUN_CELL) != 0)
				json_array_append_new(a, cb_json_text(names[i]));
	cb_strv_free(names, n);
	return a;
}

static int file_in(const char *dir, const char *name)
{
	char *p = cb_path_join(dir, name);
	int r = p && cb_exists(p);

	free(p);
	return r;
}

/* The last line of the worker's log that says something, at most cap - 1
 * bytes of its end: for a failed request, pytest's error or summary, so
 * that a receipt says why without the log being opened. "" when none. */
static void log_tail(const char *log, char *out, size_t cap)
{
	char buf[4096], *end, *start;
	ssize_t n = 0;
	int fd = open(log, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	off_t size;

	out[0] = '\0';
	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	if (size > 0 && lseek(fd, size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0, SEEK_SET) >= 0)
		n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (end = buf + n; end > buf && isspace((unsigned char)end[-1]); end--)
		;
	*end = '\0';
	for (start = end; start > buf && start[-1] != '\n'; start--)
		;
	for (; *start && isspace((unsigned char)*start); start++)
		;
	if ((size_t)(end - start) >= cap) {
		memcpy(out, "...", 3);
		memcpy(out + 3, end - (cap - 4), cap - 3);
		return;
	}
	memcpy(out, start, (size_t)(end - start) + 1);
}

/* The outcome of a reply's pytest exit code. */
static enum cb_outcome outcome_of_exit(long long code)
{
	switch (code) {
	case 0: return CB_OUT_PASSED;
	case 1: return CB_OUT_FAILED;
	case 5: return CB_OUT_UNSUPPORTED;
	default: return CB_OUT_ERROR;
	}
}

/* Open a cell's worker.log for writing, emptied: never through a link (a
 * symlink is refused by O_NOFOLLOW; a hard link, which O_TRUNC would empty
 * wherever its other names are, is refused before anything is cut), and
 * only a regular file (O_NONBLOCK: a FIFO planted there cannot block). */
static int open_log(const char *log, int *fd, struct cb_err *err)
{
	struct stat st;
	int rc = 0;

	*fd = open(log, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
	if (*fd < 0)
		return cb_fail(err, "%s: %s", log,
			       errno == ELOOP ? "a symlink; caliber never writes through one" : strerror(errno));
	if (fstat(*fd, &st) < 0)
		rc = cb_fail(err, "%s: %s", log, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		rc = cb_fail(err, "%s: %s, not a regular file", log, cb_file_kind(st.st_mode));
	else if (st.st_nlink != 1)
		rc = cb_fail(err, "%s: a hard link (%ju names); caliber never writes a file that has other names", log,
			     (uintmax_t)st.st_nlink);
	else if (ftruncate(*fd, 0) < 0)
		rc = cb_fail(err, "%s: %s", log, strerror(errno));
	if (rc < 0) {
		close(*fd);
		*fd = -1;
	}
	return rc;
}

/* The request id of cp's next request (docs/formats.md): fresh string. */
static char *next_request_id(struct cb_cell_proc *cp, const char *task, enum cb_phase p)
{
	return cb_strdupf("%s/%s/%s/%llu", task, cb_phase_name(p), cp->cell->name, ++cp->requests);
}

/* Write all of req to the worker's stdin; a worker that died before
 * reading shows up as EXITED when its reply is waited for. */
static void send_request(struct cb_cell_proc *cp, const char *req)
{
	size_t n = strlen(req), done = 0;

	while (done < n) {
		ssize_t w = write(cp->child.in_fd, req + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
}

/* The deadline of a request with timeout_s (CLOCK_MONOTONIC ms), bounded
 * as the manifest bounds it, so that no timeout overflows. */
static long long deadline_of(long long timeout_s)
{
	if (timeout_s < 1)
		timeout_s = 1;
	if (timeout_s > CB_TIMEOUT_S_MAX)
		timeout_s = CB_TIMEOUT_S_MAX;
	return cb_mono_ms() + timeout_s * 1000;
}

/* The longest worker error a cell receipt quotes (a longer one is cut
 * and says so), and room for a detail: a protocol error of reply.h (at
 * most a struct cb_err message), a note of tidy.h, the end of the log. */
#define ERROR_QUOTE_MAX 1024
#define CELL_DETAIL_MAX (CB_ERR_MAX + 256)

/* What the wait for a reply gave, as an outcome and detail; *broke set
 * when the worker broke the protocol (it is killed then). */
static void judge_reply(struct cb_cell_proc *cp, enum cb_wait what, const char *line, size_t len,
			const char *id, long long timeout_s, enum cb_outcome *outcome, long long *pytest_exit,
			char *detail, size_t cap, int *broke)
{
	struct cb_reply reply = { 0, NULL };
	struct cb_err perr = CB_ERR_INIT;

	*broke = 0;
	if (what == CB_WAIT_OVERLONG) {
		*outcome = CB_OUT_ERROR;
		*broke = 1;
		snprintf(detail, cap, "a reply line longer than %d bytes (request '%s'); process group killed",
			 CB_REPLY_MAX, id);
	} else if (what == CB_WAIT_TIMEOUT) {
		*outcome = CB_OUT_TIMEOUT;
		snprintf(detail, cap, "no reply within %lld s; process group killed", timeout_s);
	} else if (what != CB_WAIT_REPLY) {
		*outcome = CB_OUT_CRASHED;
	} else if (cb_reply_parse(line, len, id, &reply, &perr) < 0) {
		*outcome = CB_OUT_ERROR;
		*broke = 1;
		snprintf(detail, cap, "%s; process group killed", perr.msg);
	} else if (cb_child_reply_pending(&cp->child)) {
		*outcome = CB_OUT_ERROR;
		*broke = 1;
		snprintf(detail, cap, "more than one reply to request '%s'; process group killed", id);
	} else {
		*pytest_exit = reply.exit;
		*outcome = outcome_of_exit(reply.exit);
		if (reply.error && strlen(reply.error) > ERROR_QUOTE_MAX)
			snprintf(detail, cap, "worker error: %.*s... (cut at %d bytes)", ERROR_QUOTE_MAX, reply.error,
				 ERROR_QUOTE_MAX);
		else if (reply.error)
			snprintf(detail, cap, "worker error: %s", reply.error);
		else
			snprintf(detail, cap, "pytest exit %lld", reply.exit);
	}
	cb_reply_release(&reply);
}

/* Take out of the cell folder what a seal cannot hold (tidy.h); when
 * anything was, or when removed holds anything already (what was taken
 * out before the request started, cb_tidy_fresh), the cell is a harness
 * failure that names the first. removed, with what was taken out now
 * appended, is the receipt's "removed". */
static int tidy_cell(const char *dir, json_t *removed, enum cb_outcome *outcome, char *detail,
		     size_t cap, struct cb_err *err)
{
	json_t *changes = json_array();
	size_t n, before = json_array_size(removed);

	if (!changes)
		return cb_fail(err, "out of memory");
	if (cb_tidy_tree(dir, changes, err) < 0) {
		json_decref(changes);
		return cb_prefix(err, "cell folder");
	}
	n = json_array_size(changes);
	if (before) {
		*outcome = CB_OUT_ERROR;
		snprintf(detail, cap, "the cell folder held what its worker did not leave: %s%s",
			 json_string_value(json_array_get(removed, 0)), before + n > 1 ? " (and more, see removed)" : "");
	} else if (n) {
		*outcome = CB_OUT_ERROR;
		snprintf(detail, cap, "the worker left what a seal cannot hold: %s%s", json_string_value(json_array_get(changes, 0)),
			 n > 1 ? " (and more, see removed)" : "");
	}
	json_array_extend(removed, changes);
	json_decref(changes);
	return 0;
}

int cb_cell_run(const struct cb_worker_ctx *ctx, struct cb_cell_proc *cp, json_t *request,
		const char *task, enum cb_phase p, long long timeout_s, const json_t *found,
		enum cb_outcome *outcome, struct cb_err *err)
{
	const char *dir = cb_json_str(request, "dir");
	char *log = cb_path_join(dir, "worker.log"), *line = NULL, *req = NULL, *id = NULL;
	char started[32], finished[32], detail[CELL_DETAIL_MAX] = "", how[64] = "";
	struct timespec t0;
	struct cb_sink sink;
	enum cb_wait what = CB_WAIT_EXITED;
	long long pytest_exit = -1;
	json_t *removed = found ? json_deep_copy(found) : json_array(), *killed = json_array();
	json_t *compiler = NULL, *outputs = NULL;
	size_t len = 0;
	long long ahead_ms = 0, reply_ns = -1;
	int fresh = 0, log_fd = -1, rc = -1, broke = 0, slotted = 0;

	/* The cell's folder goes through the output guard: a link that a
	 * worker (or anyone) left in the tree above it must not lead into a
	 * sealed run. */
	if (!log || !removed || !killed) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (cb_guard_mkdir(&(struct cb_guard){ NULL, NULL, NULL }, dir, 0755, err) < 0)
		goto out;
	if (!cp->alive) {
		if (take_worker(ctx, cp, err) < 0)
			goto out;
		fresh = 1;
	}
	if (cp->slot) {
		if (slot_in(cp, dir, removed, err) < 0)
			goto out;
		slotted = 1;
	}
	if (open_log(log, &log_fd, err) < 0)
		goto out;
	cb_now_utc(started);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ahead_ms = cp->started_ms < 0 ? 0 : cb_mono_ms() - cp->started_ms;
	id = next_request_id(cp, task, p);
	if (id && json_object_set_new(request, "id", json_string(id)) == 0) {
		char *j = json_dumps(request, JSON_COMPACT | JSON_SORT_KEYS);
		req = j ? cb_strdupf("%s\n", j) : NULL;
		free(j);
	}
	if (!req) {
		cb_fail(err, "out of memory");
		goto out;
	}
	send_request(cp, req);
	if (ctx->mode != CB_WORKERS_PERSISTENT)
		cb_child_close_stdin(&cp->child);
	if (cb_cell_proc_prestart(ctx, cp, err) < 0)
		goto out;
	cb_sink_init(&sink, log_fd, CB_WORKER_LOG_MAX);
	if (cb_child_wait(&cp->child, &sink, deadline_of(timeout_s), &what, &line, &len, err) < 0)
		goto out;
	if (what == CB_WAIT_REPLY)
		reply_ns = cb_mono_ns_since(&t0);
	judge_reply(cp, what, line, len, id, timeout_s, outcome, &pytest_exit, detail, sizeof(detail), &broke);
	if (what == CB_WAIT_TIMEOUT || broke) {
		cb_child_kill(&cp->child, 2000);
	} else if (what == CB_WAIT_EXITED) {
		size_t cut = cp->child.reply_len;
		cb_child_release(&cp->child);
		cb_describe_status(cp->child.status, how, sizeof(how));
		if (cut)
			snprintf(detail, sizeof(detail), "worker %s in the middle of its reply (%zu bytes, no newline)",
				 how, cut);
		else
			snprintf(detail, sizeof(detail), "worker %s without replying", how);
		cp->alive = 0;
	}
	/* A worker that timed out, crashed, erred or broke the protocol is not
	 * trusted again; but in persistent mode every worker ends here. */
	if (cp->alive && (ctx->mode != CB_WORKERS_PERSISTENT || *outcome == CB_OUT_TIMEOUT || *outcome == CB_OUT_ERROR)) {
		if (*outcome == CB_OUT_TIMEOUT || broke)
			cb_child_release(&cp->child);
		else
			stop_serving(cp);
		if (!how[0])
			cb_describe_status(cp->child.status, how, sizeof(how));
		cp->alive = 0;
	}
	/* The cell is over only when nothing its worker left runs on. */
	if (cb_reap_strays(cp->alive ? cp->child.pid : 0, killed, err) < 0) {
		cb_prefix(err, "cell %s of task %s", cp->cell->name, task);
		goto out;
	}
	if (slotted) {
		slotted = 0;
		if (slot_out(cp, dir, err) < 0)
			goto out;
		if (!cp->alive)
			drop_slot(&cp->slot);
	}
	if (broke) {
		/* the reply is not the answer: nothing the cell left counts */
	} else if (file_in(dir, "replay_miss.json")) {
		*outcome = CB_OUT_REPLAY_MISS;
		snprintf(detail, sizeof(detail), "autotune replay found no recorded config (replay_miss.json)");
	} else if (p != CB_PH_CORRECTNESS && *outcome == CB_OUT_PASSED &&
		   (!file_in(dir, CB_RUN_TIMING) || !file_in(dir, "ir/index.tsv"))) {
		*outcome = CB_OUT_MISSING_OUTPUT;
		snprintf(detail, sizeof(detail), "the benchmark passed but left no %s",
			 file_in(dir, CB_RUN_TIMING) ? "ir/index.tsv" : CB_RUN_TIMING);
	}
	close(log_fd);
	log_fd = -1;
	if (tidy_cell(dir, removed, outcome, detail, sizeof(detail), err) < 0)
		goto out;
	if (*outcome != CB_OUT_PASSED && *outcome != CB_OUT_REPLAY_MISS) {
		char tail[160];
		size_t used = strlen(detail);
		log_tail(log, tail, sizeof(tail));
		if (tail[0] && used + 4 < sizeof(detail))
			snprintf(detail + used, sizeof(detail) - used, ": %s", tail);
	}
	cb_now_utc(finished);
	compiler = cb_worker_compiler_json(ctx, cp->cell);
	outputs = outputs_of(dir);
	{
		const struct cb_cell_facts f = {
			.task = task, .cell = cp->cell->name, .role = cb_role_name(cp->cell->role),
			.phase = cb_phase_name(p), .request_id = id, .session = cb_json_int(request, "session", 1),
			.argv = json_object_get(request, "argv"), .env = json_object_get(request, "env"),
			.compiler = compiler, .worker_argv = ctx->worker_argv, .mode = cb_worker_mode_name(ctx->mode),
			.pid = cp->child.pid, .started_ahead_ms = fresh ? ahead_ms : 0, .fresh = fresh,
			.env_overlay = cp->overlay, .plugins = ctx->plugins, .nplugins = ctx->nplugins,
			.started = started, .finished = finished, .wall_ns = cb_mono_ns_since(&t0), .reply_ns = reply_ns,
			.timeout_s = timeout_s, .replied = what == CB_WAIT_REPLY, .timed_out = what == CB_WAIT_TIMEOUT,
			.pytest_exit = pytest_exit, .process = how[0] ? how : NULL,
			.log_bytes = sink.written, .log_cut_bytes = sink.dropped,
			.outcome = cb_outcome_name(*outcome), .detail = detail,
			.outputs = outputs, .removed = removed, .killed = killed
		};
		rc = cb_cell_receipt_write(dir, &f, err);
	}
out:
	if (slotted) {
		/* caliber failed mid-request: the worker goes, the slot leaves */
		struct cb_err ignored;
		if (cp->alive) {
			cb_child_kill(&cp->child, 1000);
			cb_child_release(&cp->child);
			cp->alive = 0;
		}
		cb_reap_strays(0, NULL, &ignored);
		if (slot_out(cp, dir, &ignored) == 0)
			drop_slot(&cp->slot);
	}
	if (log_fd >= 0)
		close(log_fd);
	json_decref(killed);
	json_decref(removed);
	json_decref(compiler);
	json_decref(outputs);
	free(line);
	free(req);
	free(log);
	free(id);
	return rc;
}
