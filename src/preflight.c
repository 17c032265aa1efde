/* preflight.c: the checks before a batch starts, as one table. */
#include "preflight.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "digest.h"
#include "fsutil.h"
#include "jsonio.h"
#include "matrix.h"
#include "proc.h"
#include "seal.h"

extern char **environ;

#define WHY_MAX 1024

/* The last non-empty line of a child's stderr, trailing blanks cut: for a
 * Python traceback that is the exception, which is what a preflight line
 * should name. */
static const char *last_line(char *text)
{
	size_t n = strlen(text);
	char *nl;

	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
		text[--n] = '\0';
	nl = strrchr(text, '\n');
	return nl ? nl + 1 : text;
}

/* Run argv in env, capture stdout; a non-zero exit is a failure whose
 * reason quotes the first line of stderr. */
static int capture(const char *const argv[], char *const envp[], long long timeout_ms, char **out,
		   char *why, size_t cap)
{
	struct cb_err err;
	char *errout = NULL, how[64];
	int status = 0;

	if (cb_run_capture(argv, envp, timeout_ms, out, &errout, &status, &err) < 0) {
		snprintf(why, cap, "%s", err.msg);
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		const char *last = last_line(errout);
		cb_describe_status(status, how, sizeof(how));
		snprintf(why, cap, "%s %s%s%s", argv[0], how, last[0] ? ": " : "", last);
		free(errout);
		free(*out);
		*out = NULL;
		return -1;
	}
	free(errout);
	return 0;
}

/* A backend command with every "{device}" argument replaced by the pinned
 * device (nvidia-smi --id={device} lists one GPU's processes, not the
 * host's). Caller frees the array and its strings. */
static char **device_argv(const char *const *argv, const char *device)
{
	size_t n = 0, i;
	char **out;

	while (argv[n])
		n++;
	out = calloc(n + 1, sizeof(*out));
	for (i = 0; out && i < n; i++) {
		const char *at = strstr(argv[i], "{device}");
		out[i] = at ? cb_strdupf("%.*s%s%s", (int)(at - argv[i]), argv[i], device, at + 8) : strdup(argv[i]);
	}
	return out;
}

static void argv_free(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Trailing whitespace off s, in place. */
static char *chomp(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	return s;
}

/* The baseline cell's environment, for checks that run "inside a cell". */
static int cell_env(struct cb_preflight *pf, struct cb_env *env, char *why, size_t cap)
{
	const struct cb_cell *base = cb_manifest_cell(pf->w->m, CB_ROLE_BASELINE);
	char *dir = cb_path_join(pf->w->scratch, "preflight");
	json_t *overlay = NULL;
	struct cb_err err;
	int rc = dir ? cb_worker_env(pf->w, base, dir, env, &overlay, &err) : -1;

	if (rc < 0)
		snprintf(why, cap, "cannot build the cell environment: %s", dir ? err.msg : "out of memory");
	json_decref(overlay);
	free(dir);
	return rc;
}

static int check_binding(struct cb_preflight *pf, char *why, size_t cap)
{
	const char *files[] = { pf->manifest_path, pf->matrix_path, NULL };
	char *inv = NULL;
	struct cb_err err;
	struct stat st;
	size_t i;

	pf->matrix = cb_matrix_load_bound(pf->matrix_path, pf->w->m, &err);
	if (!pf->matrix) {
		snprintf(why, cap, "%s", err.msg);
		return -1;
	}
	{
		const char *slash = strrchr(pf->matrix_path, '/');
		inv = slash ? cb_strdupf("%.*s/%s", (int)(slash - pf->matrix_path), pf->matrix_path,
					 CB_FROZEN_INVENTORY) : strdup(CB_FROZEN_INVENTORY);
	}
	for (i = 0; i < 3; i++) {
		const char *f = i < 2 ? files[i] : inv;
		if (f && stat(f, &st) == 0 && (st.st_mode & 0222)) {
			snprintf(why, cap, "%s is writable: a frozen campaign is read-only (edited after prepare?)", f);
			free(inv);
			return -1;
		}
	}
	free(inv);
	snprintf(why, cap, "matrix bound to manifest sha256 %.12s and inventory sha256 %.12s, read-only",
		 pf->w->m->sha256, cb_json_str(pf->matrix, "inventory_sha256"));
	return 0;
}

/* What of caliber's own tree decides what a cell runs: the sources of the
 * binary, the plugins, the backends and the demo compiler. The rest
 * (campaigns and their sealed runs, docs, tests) may move on after a
 * campaign pinned the harness. */
static const char *const harness_paths[] = { "src", "python", "backends", "examples", "Makefile", NULL };

/* git -C dir <args...> -- <paths>; its stdout into *out. */
static int git(const char *dir, const char *const *args, const char *const *paths, char **out,
	       char *why, size_t cap)
{
	const char *argv[24];
	size_t n = 0;

	argv[n++] = "git";
	argv[n++] = "-C";
	argv[n++] = dir;
	while (*args && n < 12)
		argv[n++] = *args++;
	argv[n++] = "--";
	while (*paths && n < 23)
		argv[n++] = *paths++;
	argv[n] = NULL;
	return capture(argv, environ, 60000, out, why, cap);
}

/* Cut a list of lines (git's file names) after its first, so a preflight
 * line stays one line; returns ", ..." when lines were cut, else "". */
static const char *first_line(char *list)
{
	char *nl = strchr(list, '\n');

	if (!nl)
		return "";
	*nl = '\0';
	return ", ...";
}

/* The tree at dir (limited to paths) holds exactly what commit c holds
 * there: c is in its repository, nothing differs from it, nothing is
 * untracked. HEAD may have moved on (a corpus inside a repository that
 * commits its campaigns does). */
static int same_as_commit(const char *name, const char *dir, const char *c, const char *const *paths,
			  char *why, size_t cap)
{
	const char *verify[] = { "rev-parse", "--verify", "-q", NULL, NULL };
	const char *diff[] = { "diff", "--name-only", c, NULL };
	const char *others[] = { "ls-files", "--others", "--exclude-standard", NULL };
	const char *none[] = { NULL };
	char spec[64], sub[WHY_MAX], *out = NULL;

	snprintf(spec, sizeof(spec), "%s^{commit}", c);
	verify[3] = spec;
	if (git(dir, verify, none, &out, sub, sizeof(sub)) < 0) {
		snprintf(why, cap, "sources.%s: commit %s is not in the repository of %s", name, c, dir);
		return -1;
	}
	free(out);
	if (git(dir, diff, paths, &out, sub, sizeof(sub)) < 0) {
		snprintf(why, cap, "sources.%s: %s", name, sub);
		return -1;
	}
	if (*chomp(out)) {
		const char *more = first_line(out);
		snprintf(why, cap, "sources.%s: %s differs from commit %.12s (%s%s)", name, dir, c, out, more);
		free(out);
		return -1;
	}
	free(out);
	if (git(dir, others, paths, &out, sub, sizeof(sub)) < 0) {
		snprintf(why, cap, "sources.%s: %s", name, sub);
		return -1;
	}
	if (*chomp(out)) {
		char *nl = strchr(out, '\n');
		if (nl)
			*nl = '\0';
		snprintf(why, cap, "sources.%s: untracked files in %s (%s%s)", name, dir, out, nl ? ", ..." : "");
		free(out);
		return -1;
	}
	free(out);
	return 0;
}

/* One source against its folder: what the pinned commit holds there, or
 * the pinned tree digest. */
static int check_one_source(const struct cb_source *s, const char *dir, const char *const *paths,
			    char *why, size_t cap)
{
	static const char *const here[] = { ".", NULL };
	struct cb_err err;

	if (!cb_is_dir(dir)) {
		snprintf(why, cap, "sources.%s: %s is not a directory", s->name, dir);
		return -1;
	}
	if (s->tree_sha256) {
		char hex[CB_SHA256_HEX];
		if (cb_tree_digest(dir, hex, &err) < 0) {
			snprintf(why, cap, "sources.%s: %s", s->name, err.msg);
			return -1;
		}
		if (strcmp(hex, s->tree_sha256) != 0) {
			snprintf(why, cap, "sources.%s: %s has tree digest %s, the manifest pins %s", s->name, dir,
				 hex, s->tree_sha256);
			return -1;
		}
		return 0;
	}
	return same_as_commit(s->name, dir, s->commit, paths ? paths : here, why, cap);
}

/* The binary must come from a clean build whose harness paths are the
 * pinned commit's. */
static int check_binary(const struct cb_source *h, const char *home, int allow_dirty, char *why,
			size_t cap)
{
	const char *built = cb_commit();
	char b[41], sub[WHY_MAX], *out = NULL;

	if (!cb_is_hex(built, 40) && !(strlen(built) > 40 && strncmp(built + 40, "+dirty", 6) == 0)) {
		snprintf(why, cap, "sources.harness: this caliber was built from no known commit (%s)", built);
		return -1;
	}
	memcpy(b, built, 40);
	b[40] = '\0';
	if (strstr(built, "+dirty") && !allow_dirty) {
		snprintf(why, cap, "sources.harness: this caliber was built from a dirty tree (%s)", built);
		return -1;
	}
	if (strcmp(b, h->commit) != 0) {
		const char *diff[] = { "diff", "--name-only", h->commit, b, NULL };
		if (git(home, diff, harness_paths, &out, sub, sizeof(sub)) < 0 || *chomp(out)) {
			const char *more = out ? first_line(out) : "";
			snprintf(why, cap, "sources.harness: this caliber was built from %.12s, whose harness differs from the pinned %.12s%s%s%s",
				 b, h->commit, out && *out ? ": " : "", out ? out : "", more);
			free(out);
			return -1;
		}
		free(out);
	}
	return 0;
}

static int check_sources(struct cb_preflight *pf, char *why, size_t cap)
{
	const struct cb_manifest *m = pf->w->m;
	const char *dirs[CB_NSOURCES] = { pf->w->build_root, pf->w->corpus, cb_home() };
	size_t used = 0;
	int i, bad = 0;

	for (i = 0; i < CB_NSOURCES + 1; i++) {
		char one[WHY_MAX];
		int rc;

		if (i >= CB_SRC_HARNESS && pf->allow_dirty_harness)
			break;
		if (i < CB_NSOURCES)
			rc = check_one_source(&m->sources[i], dirs[i], i == CB_SRC_HARNESS ? harness_paths : NULL,
					      one, sizeof(one));
		else if (m->sources[CB_SRC_HARNESS].commit)
			rc = check_binary(&m->sources[CB_SRC_HARNESS], cb_home(), pf->allow_dirty_harness, one,
					  sizeof(one));
		else
			rc = 0;
		if (rc < 0) {
			used += (size_t)snprintf(why + used, cap - used, "%s%s", bad++ ? "; " : "", one);
			if (used >= cap)
				used = cap - 1;
		}
	}
	if (bad)
		return -1;
	snprintf(why, cap, "compiler %s, corpus %s, harness %s%s", dirs[0], dirs[1], dirs[2],
		 pf->allow_dirty_harness ? " (--allow-dirty-harness: harness not checked)" : "");
	return 0;
}

static int check_imports(struct cb_preflight *pf, char *why, size_t cap)
{
	static const char script[] =
		"import importlib, sys\n"
		"for name in sys.argv[1:]:\n"
		"    mod = importlib.import_module(name)\n"
		"    print(name + '\\t' + (getattr(mod, '__file__', None) or ''))\n";
	const struct cb_manifest *m = pf->w->m;
	const char *roots[CB_NSOURCES] = { pf->w->build_root, pf->w->corpus, cb_home() };
	const char *argv[CB_NSOURCES + 4];
	char *out = NULL, *line;
	struct cb_env env;
	size_t n = 0, used = 0;
	int i, rc = 0;

	argv[n++] = pf->python;
	argv[n++] = "-c";
	argv[n++] = script;
	for (i = 0; i < CB_NSOURCES; i++)
		if (m->sources[i].import)
			argv[n++] = m->sources[i].import;
	argv[n] = NULL;
	if (n == 3) {
		snprintf(why, cap, "no source declares an import");
		return 0;
	}
	if (cell_env(pf, &env, why, cap) < 0)
		return -1;
	rc = capture(argv, env.v, 300000, &out, why, cap);
	cb_env_release(&env);
	if (rc < 0)
		return -1;
	why[0] = '\0';
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		char *tab = strchr(line, '\t'), *file, *root = NULL;
		if (!tab)
			continue;
		*tab = '\0';
		file = cb_resolve(tab + 1);
		for (i = 0; i < CB_NSOURCES; i++)
			if (m->sources[i].import && strcmp(m->sources[i].import, line) == 0)
				root = cb_resolve(roots[i]);
		if (!file || !root || !cb_path_within(file, root)) {
			snprintf(why, cap, "%s resolves to %s, outside its frozen root %s", line, tab + 1,
				 root ? root : "?");
			free(file);
			free(root);
			free(out);
			return -1;
		}
		used += (size_t)snprintf(why + used, cap - used, "%s%s -> %s", used ? ", " : "", line, file);
		if (used >= cap)
			used = cap - 1;
		free(file);
		free(root);
	}
	free(out);
	return 0;
}

static int check_device_count(struct cb_preflight *pf, char *why, size_t cap)
{
	struct cb_env env;
	char *out = NULL;
	int rc;

	if (cell_env(pf, &env, why, cap) < 0)
		return -1;
	{
		char **argv = device_argv(pf->w->backend->count_devices, pf->w->device);
		rc = argv ? capture((const char *const *)argv, env.v, 300000, &out, why, cap) : -1;
		argv_free(argv);
	}
	cb_env_release(&env);
	if (rc < 0)
		return -1;
	if (strcmp(chomp(out), "1") != 0) {
		snprintf(why, cap, "%s=%s shows %s devices, expected exactly 1", pf->w->backend->visibility_env,
			 pf->w->device, out);
		free(out);
		return -1;
	}
	snprintf(why, cap, "1 device visible with %s=%s", pf->w->backend->visibility_env, pf->w->device);
	free(out);
	return 0;
}

/* The file part of a node id or file argument. */
static char *file_of(const char *arg)
{
	const char *sep = strstr(arg, "::");

	return sep ? strndup(arg, (size_t)(sep - arg)) : strdup(arg);
}

static int check_targets(struct cb_preflight *pf, char *why, size_t cap)
{
	static const char *const keys[] = { "benchmark_args", "correctness_args" };
	json_t *queries = json_array(), *task, *res = NULL;
	char *qpath = cb_path_join(pf->w->scratch, "targets-queries.json");
	char *rpath = cb_path_join(pf->w->scratch, "targets-result.json");
	struct cb_env env;
	struct cb_err err;
	size_t t, used = 0;
	int k, bad = 0;

	if (!pf->matrix) {
		snprintf(why, cap, "no bound task matrix to take targets from");
		goto fail;
	}
	json_array_foreach(json_object_get(pf->matrix, "tasks"), t, task) {
		for (k = 0; k < 2; k++) {
			const json_t *args = json_object_get(task, keys[k]);
			const char *first = json_string_value(json_array_get(args, 0));
			char *file = first ? file_of(first) : NULL, *abs = file ? cb_path_join(pf->w->corpus, file) : NULL;

			if (!abs || !cb_exists(abs)) {
				used += (size_t)snprintf(why + used, cap - used, "%stask %s %s: no file %s in the corpus",
							 bad++ ? "; " : "", cb_json_str(task, "id"),
							 k ? "correctness" : "benchmark", file ? file : "?");
				if (used >= cap)
					used = cap - 1;
			}
			free(file);
			free(abs);
			json_array_append_new(queries, json_pack("{s:s, s:O}", "id",
				k ? "correctness" : "benchmark", "args", args));
			json_object_set_new(json_array_get(queries, json_array_size(queries) - 1), "id",
					    json_sprintf("%s/%s", cb_json_str(task, "id"), k ? "correctness" : "benchmark"));
		}
	}
	if (bad)
		goto fail;
	{
		json_t *q = json_pack("{s:O}", "queries", queries);
		int wrc = qpath ? cb_json_write_atomic(qpath, q, 0644, &err) : -1;
		json_decref(q);
		if (wrc < 0) {
			snprintf(why, cap, "cannot write the queries: %s", qpath ? err.msg : "out of memory");
			goto fail;
		}
	}
	if (cell_env(pf, &env, why, cap) < 0)
		goto fail;
	{
		const char *argv[] = { pf->python, "-m", "caliber_pytest.collect", pf->w->corpus, qpath, rpath,
				       NULL };
		char *out = NULL;
		int rc = capture(argv, env.v, 600000, &out, why, cap);
		cb_env_release(&env);
		free(out);
		if (rc < 0)
			goto fail;
	}
	res = cb_json_load_file(rpath, &err);
	if (!res) {
		snprintf(why, cap, "collector wrote no result: %s", err.msg);
		goto fail;
	}
	json_array_foreach(queries, t, task) {
		const char *id = cb_json_str(task, "id");
		const json_t *r = json_object_get(json_object_get(res, "queries"), id);
		const json_t *missing = json_object_get(r, "missing"), *errors = json_object_get(r, "errors");
		char *args = json_dumps(json_object_get(task, "args"), JSON_COMPACT);

		if (json_array_size(missing))
			used += (size_t)snprintf(why + used, cap - used, "%s%s: %s not found", bad++ ? "; " : "", id,
						 json_string_value(json_array_get(missing, 0)));
		else if (json_array_size(errors))
			used += (size_t)snprintf(why + used, cap - used, "%s%s: %s", bad++ ? "; " : "", id,
						 json_string_value(json_array_get(errors, 0)));
		else if (cb_json_int(r, "count", 0) < 1)
			used += (size_t)snprintf(why + used, cap - used, "%s%s: no test selected by %s",
						 bad++ ? "; " : "", id, args ? args : "?");
		free(args);
		if (used >= cap)
			used = cap - 1;
	}
	if (bad)
		goto fail;
	snprintf(why, cap, "%zu selections resolve in %s (one collection)", json_array_size(queries),
		 pf->w->corpus);
	json_decref(res);
	json_decref(queries);
	free(qpath);
	free(rpath);
	return 0;
fail:
	json_decref(res);
	json_decref(queries);
	free(qpath);
	free(rpath);
	return -1;
}

static int check_device_idle(struct cb_preflight *pf, char *why, size_t cap)
{
	struct cb_env env;
	char *out = NULL;
	int rc;

	if (cell_env(pf, &env, why, cap) < 0)
		return -1;
	{
		char **argv = device_argv(pf->w->backend->list_processes, pf->w->device);
		rc = argv ? capture((const char *const *)argv, env.v, 60000, &out, why, cap) : -1;
		argv_free(argv);
	}
	cb_env_release(&env);
	if (rc < 0)
		return -1;
	if (*chomp(out)) {
		char *nl = strchr(out, '\n');
		if (nl)
			*nl = '\0';
		snprintf(why, cap, "other processes on the device: %s", out);
		free(out);
		return -1;
	}
	snprintf(why, cap, "no other process on the device");
	free(out);
	return 0;
}

static int check_plugin_plan(struct cb_preflight *pf, char *why, size_t cap)
{
	size_t i, used = 0;

	if (pf->w->nplugins == 0) {
		snprintf(why, cap, "backend '%s' declares no capability: the plugin plan is empty",
			 pf->w->backend->name);
		return -1;
	}
	for (i = 0; i < pf->w->nplugins && used < cap; i++)
		used += (size_t)snprintf(why + used, cap - used, "%s%s", i ? " " : "", pf->w->plugins[i]);
	return 0;
}

int cb_inside_sealed_run(const char *path)
{
	char *p = cb_resolve(path), *slash;
	int found = 0;

	while (p && !found) {
		char *sums = cb_path_join(p, "SHA256SUMS"), *camp = cb_path_join(p, "campaign.json");
		found = sums && camp && cb_exists(sums) && cb_exists(camp);
		free(sums);
		free(camp);
		slash = strrchr(p, '/');
		if (!slash || slash == p)
			break;
		*slash = '\0';
	}
	free(p);
	return found;
}

/* Whether a and b hold the same bytes. */
static int same_file(const char *a, const char *b)
{
	char *x = NULL, *y = NULL;
	size_t nx = 0, ny = 0;
	struct cb_err err;
	int same = cb_read_file(a, &x, &nx, &err) == 0 && cb_read_file(b, &y, &ny, &err) == 0 &&
		   nx == ny && memcmp(x, y, nx) == 0;

	free(x);
	free(y);
	return same;
}

static int check_output_root(struct cb_preflight *pf, char *why, size_t cap)
{
	const char *root = pf->output_root;

	if (cb_is_sealed(root)) {
		snprintf(why, cap, "%s is a sealed run: it is complete, nothing to resume or overwrite", root);
		return -1;
	}
	if (cb_inside_sealed_run(root)) {
		snprintf(why, cap, "%s is inside a sealed run", root);
		return -1;
	}
	if (!pf->resume) {
		char *anc;
		int rc = 0;
		if (cb_exists(root)) {
			snprintf(why, cap, "%s exists (use --resume to continue a run there)", root);
			return -1;
		}
		/* The run creates the folders above the root that are missing, so
		 * the nearest one that exists must be a folder it can write in. */
		anc = cb_existing_ancestor(root);
		if (!anc) {
			snprintf(why, cap, "%s: out of memory", root);
			return -1;
		}
		if (!cb_is_dir(anc)) {
			snprintf(why, cap, "%s cannot be created: %s is not a folder", root, anc);
			rc = -1;
		} else if (access(anc, W_OK | X_OK) != 0) {
			snprintf(why, cap, "%s cannot be created: %s: %s", root, anc, strerror(errno));
			rc = -1;
		} else if (strchr(root + strlen(anc) + 1, '/')) {
			snprintf(why, cap, "%s will be created, with the folders missing below %s", root, anc);
		} else {
			snprintf(why, cap, "%s will be created", root);
		}
		free(anc);
		return rc;
	}
	{
		char *m = cb_path_join(root, "manifest.json"), *x = cb_path_join(root, "task-matrix.json");
		int ok = m && x && cb_is_dir(root) && same_file(m, pf->manifest_path) &&
			 same_file(x, pf->matrix_path);
		free(m);
		free(x);
		if (!ok) {
			snprintf(why, cap, "--resume: %s is not a run of this manifest and matrix", root);
			return -1;
		}
	}
	snprintf(why, cap, "%s resumes a run of this manifest and matrix", root);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(struct cb_preflight *pf, char *why, size_t cap);
} checks[] = {
	{ "binding", check_binding },
	{ "sources", check_sources },
	{ "imports", check_imports },
	{ "device-count", check_device_count },
	{ "targets", check_targets },
	{ "device-idle", check_device_idle },
	{ "plugin-plan", check_plugin_plan },
	{ "output-root", check_output_root },
};

size_t cb_preflight_run(struct cb_preflight *pf, FILE *out)
{
	size_t i, used = 0;

	pf->failed = 0;
	pf->failed_names[0] = '\0';
	pf->results = json_array();
	for (i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		char why[WHY_MAX] = "";
		int ok = checks[i].fn(pf, why, sizeof(why)) == 0;

		if (pf->json)
			cb_json_print_line(out, json_pack("{s:s, s:s, s:b, s:s}", "event", "preflight", "check",
							  checks[i].name, "ok", ok, "detail", why));
		else if (ok)
			fprintf(out, "preflight: %s: ok%s%s%s\n", checks[i].name, why[0] ? " (" : "", why,
				why[0] ? ")" : "");
		else
			fprintf(out, "preflight: %s: FAILED: %s\n", checks[i].name, why);
		fflush(out);
		json_array_append_new(pf->results, json_pack("{s:s, s:b, s:s}", "name", checks[i].name,
							     "ok", ok, "detail", why));
		if (!ok) {
			pf->failed++;
			used += (size_t)snprintf(pf->failed_names + used, sizeof(pf->failed_names) - used, "%s%s",
						 used ? ", " : "", checks[i].name);
			if (used >= sizeof(pf->failed_names))
				used = sizeof(pf->failed_names) - 1;
		}
	}
	return pf->failed;
}
