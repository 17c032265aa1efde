/* worker.c: what every worker of a run shares (the context: roots,
 * scratch folder, command, plan, preload, confinement), each worker's
 * environment, and the requests it receives. A cell's worker processes
 * are worker_proc.c's, one request cb_cell_run's (worker_cell.c). */
#include "worker.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/home.h"
#include "base/buf.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/runroot.h"
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
