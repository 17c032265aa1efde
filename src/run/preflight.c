/* preflight.c: the checks before a batch starts, as one table. A check
 * returns 0 and appends what it found to ok (shown after "ok"), or -1 with
 * err saying why it fails (shown after "FAILED"). The checks of the device
 * and of the targets are preflight_device.c. */
#include "preflight.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/home.h"
#include "base/buf.h"
#include "base/digest.h"
#include "base/fsutil.h"
#include "seal/guard.h"
#include "base/jsonio.h"
#include "campaign/matrix.h"
#include "base/proc.h"
#include "base/runroot.h"
#include "seal/seal.h"
#include "preflight_int.h"

extern char **environ;

/* Run argv in env, capture stdout (cb_run_checked); a failure that says
 * the interpreter has no pytest also says how to name one that has it. */
static int capture(const char *const argv[], char *const envp[], long long timeout_ms, char **out,
		   struct cb_err *err)
{
	if (cb_run_checked(argv, envp, timeout_ms, NULL, out, err) < 0) {
		if (strstr(err->msg, "No module named 'pytest'") && strlen(err->msg) < sizeof(err->msg) - 200) {
			static const char hint[] = " (this interpreter has no pytest: name one that has it with --python, "
						   "e.g. /usr/bin/python3 with Debian's python3-pytest)";
			memcpy(err->msg + strlen(err->msg), hint, sizeof(hint));
		}
		return -1;
	}
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
char *preflight_chomp(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	return s;
}

/* A cell's environment, for checks that run "inside a cell". */
static int cell_env(struct cb_preflight *pf, const struct cb_cell *cell, struct cb_env *env, struct cb_err *err)
{
	char *dir = cb_path_join(pf->w->scratch, "preflight");
	json_t *overlay = NULL;
	int rc = dir ? cb_worker_env(pf->w, cell, dir, env, &overlay, err) : cb_fail(err, "out of memory");

	if (rc < 0)
		cb_prefix(err, "cannot build the cell environment");
	json_decref(overlay);
	free(dir);
	return rc;
}

/* Run a command in a cell's environment; its stdout into *out. */
int preflight_capture_in_cell(struct cb_preflight *pf, const struct cb_cell *cell, const char *const argv[],
		    long long timeout_ms, char **out, struct cb_err *err)
{
	struct cb_env env;
	int rc;

	if (cell_env(pf, cell, &env, err) < 0)
		return -1;
	rc = capture(argv, env.v, timeout_ms, out, err);
	cb_env_release(&env);
	return rc;
}

/* A backend command (count_devices, list_processes) for the pinned device,
 * in the baseline cell's environment. */
int preflight_backend_command(struct cb_preflight *pf, const char *const *cmd, long long timeout_ms, char **out,
		    struct cb_err *err)
{
	char **argv = device_argv(cmd, pf->w->device);
	int rc = argv ? preflight_capture_in_cell(pf, cb_manifest_cell(pf->w->m, CB_ROLE_BASELINE), (const char *const *)argv,
					timeout_ms, out, err)
		      : cb_fail(err, "out of memory");

	argv_free(argv);
	return rc;
}

/* With --shard, binding also deals the matrix: the shard must hold a
 * task, and the line says which. */
static int shard_of_matrix(struct cb_preflight *pf, struct cb_buf *ok, struct cb_err *err)
{
	json_t *tasks = cb_shard_tasks(json_object_get(pf->matrix, "tasks"), pf->shard, err);
	char name[32];

	cb_shard_name(pf->shard, name);
	if (!tasks)
		return cb_prefix(err, "--shard %s", name);
	cb_buf_addf(ok, "; shard %s: %zu of %zu tasks", name, json_array_size(tasks),
		    json_array_size(json_object_get(pf->matrix, "tasks")));
	json_decref(tasks);
	return 0;
}

/* binding: the matrix the runner loaded is bound to this manifest and
 * inventory (or why not), and the frozen files are read-only. */
static int check_binding(struct cb_preflight *pf, struct cb_buf *ok, struct cb_err *err)
{
	const char *files[] = { pf->manifest_path, pf->matrix_path, NULL };
	const char *slash = strrchr(pf->matrix_path, '/');
	char *inv = NULL;
	struct stat st;
	size_t i;

	if (!pf->matrix)
		return cb_fail(err, "%s", pf->bind_err ? pf->bind_err->msg : "no task matrix");
	inv = cb_strdupf("%.*s/%s", (int)(slash - pf->matrix_path), pf->matrix_path, CB_FROZEN_INVENTORY);
	if (!inv)
		return cb_fail(err, "out of memory");
	files[2] = inv;
	for (i = 0; i < 3; i++)
		if (stat(files[i], &st) == 0 && (st.st_mode & 0222)) {
			cb_fail(err, "%s is writable: a frozen campaign is read-only (edited after prepare?)", files[i]);
			free(inv);
			return -1;
		}
	free(inv);
	cb_buf_addf(ok, "matrix bound to manifest sha256 %.12s and inventory sha256 %.12s, read-only",
		    pf->w->m->sha256, cb_json_str(pf->matrix, "inventory_sha256"));
	return pf->shard && pf->shard->n ? shard_of_matrix(pf, ok, err) : 0;
}

/* What of caliber's own tree decides what a cell runs: the sources of the
 * binary, the plugins, the backends and the demo compiler. The rest
 * (campaigns and their sealed runs, docs, tests) may move on after a
 * campaign pinned the harness. */
static const char *const harness_paths[] = { "src", "python", "backends", "examples", "Makefile", NULL };

/* git -C dir <args...> -- <paths>; its stdout into *out. */
static int git(const char *dir, const char *const *args, const char *const *paths, char **out,
	       struct cb_err *err)
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
	return capture(argv, environ, 60000, out, err);
}

/* Cut a list of lines (git's file names) after its first, so a preflight
 * line stays one line; returns ", ..." when lines were cut, else "". */
const char *preflight_first_line(char *list)
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
static int same_as_commit(const char *label, const char *dir, const char *c, const char *const *paths,
			  struct cb_err *err)
{
	const char *verify[] = { "rev-parse", "--verify", "-q", NULL, NULL };
	const char *diff[] = { "diff", "--name-only", c, NULL };
	const char *others[] = { "ls-files", "--others", "--exclude-standard", NULL };
	const char *none[] = { NULL };
	char spec[64], *out = NULL;
	int rc = 0;

	snprintf(spec, sizeof(spec), "%.40s^{commit}", c);
	verify[3] = spec;
	if (git(dir, verify, none, &out, err) < 0)
		return cb_fail(err, "%s: commit %s is not in the repository of %s", label, c, dir);
	free(out);
	if (git(dir, diff, paths, &out, err) < 0)
		return cb_prefix(err, "%s", label);
	if (*preflight_chomp(out)) {
		const char *more = preflight_first_line(out);
		rc = cb_fail(err, "%s: %s differs from commit %.12s (%s%s)", label, dir, c, out, more);
	}
	free(out);
	if (rc < 0)
		return -1;
	if (git(dir, others, paths, &out, err) < 0)
		return cb_prefix(err, "%s", label);
	if (*preflight_chomp(out)) {
		const char *more = preflight_first_line(out);
		rc = cb_fail(err, "%s: untracked files in %s (%s%s)", label, dir, out, more);
	}
	free(out);
	return rc;
}

/* One source against its folder: what the pinned commit holds there, or
 * the pinned tree digest. label is its JSON path ("sources.corpus",
 * "cells[2].compiler"). */
static int check_one_source(const struct cb_source *s, const char *label, const char *dir,
			    const char *const *paths, struct cb_err *err)
{
	static const char *const here[] = { ".", NULL };
	char hex[CB_SHA256_HEX];

	if (!cb_is_dir(dir))
		return cb_fail(err, "%s: %s is not a directory", label, dir);
	if (!s->tree_sha256)
		return same_as_commit(label, dir, s->commit, paths ? paths : here, err);
	if (cb_tree_digest(dir, hex, err) < 0)
		return cb_prefix(err, "%s", label);
	if (strcmp(hex, s->tree_sha256) != 0)
		return cb_fail(err, "%s: %s has tree digest %s, the manifest pins %s", label, dir, hex,
			       s->tree_sha256);
	return 0;
}

/* The binary must come from a clean build whose harness paths are the
 * pinned commit's. */
static int check_binary(const struct cb_source *h, const char *home, int allow_dirty, struct cb_err *err)
{
	const char *built = cb_commit();
	const char *diff[] = { "diff", "--name-only", h->commit, NULL, NULL };
	char b[41], *out = NULL;
	int rc = 0;

	if (!cb_is_hex(built, 40) && !(strlen(built) > 40 && strncmp(built + 40, "+dirty", 6) == 0))
		return cb_fail(err, "sources.harness: this caliber was built from no known commit (%s)", built);
	memcpy(b, built, 40);
	b[40] = '\0';
	if (strstr(built, "+dirty") && !allow_dirty)
		return cb_fail(err, "sources.harness: this caliber was built from a dirty tree (%s)", built);
	if (strcmp(b, h->commit) == 0)
		return 0;
	diff[3] = b;
	if (git(home, diff, harness_paths, &out, err) < 0 || *preflight_chomp(out)) {
		const char *more = out ? preflight_first_line(out) : "";
		rc = cb_fail(err, "sources.harness: this caliber was built from %.12s, whose harness differs from the pinned %.12s%s%s%s",
			     b, h->commit, out && *out ? ": " : "", out ? out : "", more);
	}
	free(out);
	return rc;
}

/* Whether any cell names its own compiler (a campaign of two builds):
 * sources and imports then check, and print, every cell. */
static int cells_name_compilers(const struct cb_manifest *m)
{
	int c;

	for (c = 0; c < CB_NROLES; c++)
		if (m->cells[c].compiler_root)
			return 1;
	return 0;
}

/* Whether two pins name the same tree. */
static int same_pin(const struct cb_source *a, const struct cb_source *b)
{
	return !a->commit == !b->commit && (!a->commit || strcmp(a->commit, b->commit) == 0) &&
	       !a->tree_sha256 == !b->tree_sha256 && (!a->tree_sha256 || strcmp(a->tree_sha256, b->tree_sha256) == 0);
}

/* sources for every cell: the root of a cell's own compiler exists and
 * holds its pin; a cell without one runs sources.compiler, checked above.
 * A cell whose pin and root are an earlier cell's (the control runs the
 * baseline's) shares that cell's result rather than digesting the tree
 * twice. What each cell runs goes to ok, every failure to why. */
static void check_cell_sources(struct cb_preflight *pf, struct cb_buf *ok, struct cb_buf *why)
{
	const struct cb_manifest *m = pf->w->m;
	int failed[CB_NROLES] = { 0 };
	size_t c, d;

	for (c = 0; c < CB_NROLES; c++) {
		const struct cb_cell *cell = &m->cells[c];
		const char *root = cb_worker_compiler_root(pf->w, cell);
		struct cb_err one = CB_ERR_INIT;
		char label[48];

		snprintf(label, sizeof(label), "cells[%zu].compiler", c);
		for (d = 0; d < c; d++) {
			const char *r = cb_worker_compiler_root(pf->w, &m->cells[d]);
			if (cell->compiler_root && m->cells[d].compiler_root && root && r && strcmp(root, r) == 0 &&
			    same_pin(&cell->compiler, &m->cells[d].compiler))
				break;
		}
		if (!cell->compiler_root) {
			cb_buf_addf(ok, ", cell %s %s (sources.compiler)", cell->name, root);
		} else if (d < c) {
			failed[c] = failed[d];
			cb_buf_addf(ok, ", cell %s %s (%s, as cell %s)", cell->name, root, label, m->cells[d].name);
		} else {
			if (!root)
				cb_fail(&one, "%s: the task matrix records no root for it", label);
			else if (cb_is_fs_root(root))
				cb_fail(&one, "%s.root: '%s' is the file system's root, not a build's folder", label, root);
			else if (!cb_exists(root))
				cb_fail(&one, "%s.root: %s does not exist", label, root);
			else
				check_one_source(&cell->compiler, label, root, NULL, &one);
			failed[c] = one.code != CB_ERR_NONE;
			if (failed[c])
				cb_buf_addf(why, "%scell %s: %s", why->len ? "; " : "", cell->name, one.msg);
			else
				cb_buf_addf(ok, ", cell %s %s (%s)", cell->name, root, label);
		}
	}
}

/* sources: the compiler at --build-root, the corpus and caliber itself
 * against their pins (and the binary's own commit), then every cell's own
 * compiler; every failure is named, not only the first. */
static int check_sources(struct cb_preflight *pf, struct cb_buf *ok, struct cb_err *err)
{
	const struct cb_manifest *m = pf->w->m;
	const char *dirs[CB_NSOURCES] = { pf->w->build_root, pf->w->corpus, cb_home() };
	struct cb_buf why = CB_BUF_INIT, cells = CB_BUF_INIT;
	int i;

	/* Every source is checked, and every one that fails is named. */
	for (i = 0; i < CB_NSOURCES + 1; i++) {
		struct cb_err one = CB_ERR_INIT;
		char label[48];
		int rc = 0;

		if (i >= CB_SRC_HARNESS && pf->allow_dirty_harness)
			break;
		if (i < CB_NSOURCES) {
			snprintf(label, sizeof(label), "sources.%s", m->sources[i].name);
			rc = check_one_source(&m->sources[i], label, dirs[i], i == CB_SRC_HARNESS ? harness_paths : NULL,
					      &one);
		} else if (m->sources[CB_SRC_HARNESS].commit)
			rc = check_binary(&m->sources[CB_SRC_HARNESS], cb_home(), pf->allow_dirty_harness, &one);
		if (rc < 0)
			cb_buf_addf(&why, "%s%s", why.len ? "; " : "", one.msg);
	}
	if (cells_name_compilers(m))
		check_cell_sources(pf, &cells, &why);
	if (why.len) {
		cb_fail(err, "%s", why.data);
		cb_buf_release(&why);
		cb_buf_release(&cells);
		return -1;
	}
	cb_buf_addf(ok, "compiler %s, corpus %s, harness %s%s%s", dirs[0], dirs[1], dirs[2],
		    pf->allow_dirty_harness ? " (--allow-dirty-harness: harness not checked)" : "",
		    cells.data ? cells.data : "");
	cb_buf_release(&cells);
	return 0;
}

/* imports inside one cell's environment: every declared import (the
 * cell's compiler's, its own or sources.compiler's, the corpus's and the
 * harness's) resolves under its root, the compiler's being the cell's.
 * What each resolves to goes to ok. */
static int imports_in_cell(struct cb_preflight *pf, const struct cb_cell *cell, struct cb_buf *ok,
			   struct cb_err *err)
{
	static const char script[] =
		"import importlib, sys\n"
		"for name in sys.argv[1:]:\n"
		"    mod = importlib.import_module(name)\n"
		"    print(name + '\\t' + (getattr(mod, '__file__', None) or ''))\n";
	const struct cb_manifest *m = pf->w->m;
	const struct cb_source *srcs[CB_NSOURCES] = {
		cell->compiler_root ? &cell->compiler : &m->sources[CB_SRC_COMPILER], &m->sources[CB_SRC_CORPUS],
		&m->sources[CB_SRC_HARNESS]
	};
	const char *roots[CB_NSOURCES] = { cb_worker_compiler_root(pf->w, cell), pf->w->corpus, cb_home() };
	const char *argv[CB_NSOURCES + 4];
	char *out = NULL, *line, *save = NULL;
	size_t n = 0;
	int i, rc = 0;

	argv[n++] = pf->python;
	argv[n++] = "-c";
	argv[n++] = script;
	for (i = 0; i < CB_NSOURCES; i++)
		if (srcs[i]->import)
			argv[n++] = srcs[i]->import;
	argv[n] = NULL;
	if (n == 3) {
		cb_buf_adds(ok, "no source declares an import");
		return 0;
	}
	if (preflight_capture_in_cell(pf, cell, argv, 300000, &out, err) < 0)
		return -1;
	for (line = strtok_r(out, "\n", &save); line && rc == 0; line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t'), *file, *root = NULL;
		if (!tab)
			continue;
		*tab = '\0';
		file = cb_resolve(tab + 1);
		for (i = 0; i < CB_NSOURCES; i++)
			if (srcs[i]->import && strcmp(srcs[i]->import, line) == 0) {
				free(root);
				root = roots[i] ? cb_resolve(roots[i]) : NULL;
			}
		if (!file || !root || !cb_path_within(file, root))
			rc = cb_fail(err, "%s resolves to %s, outside its frozen root %s", line, tab + 1, root ? root : "?");
		else
			cb_buf_addf(ok, "%s%s -> %s", ok->len ? ", " : "", line, file);
		free(file);
		free(root);
	}
	free(out);
	return rc;
}

/* imports: in the baseline's environment; in a campaign of two builds, in
 * every cell's, each against its own compiler root. */
static int check_imports(struct cb_preflight *pf, struct cb_buf *ok, struct cb_err *err)
{
	const struct cb_manifest *m = pf->w->m;
	struct cb_buf why = CB_BUF_INIT;
	int c;

	if (!cells_name_compilers(m))
		return imports_in_cell(pf, cb_manifest_cell(m, CB_ROLE_BASELINE), ok, err);
	for (c = 0; c < CB_NROLES; c++) {
		struct cb_buf found = CB_BUF_INIT;
		struct cb_err one = CB_ERR_INIT;

		if (imports_in_cell(pf, &m->cells[c], &found, &one) < 0)
			cb_buf_addf(&why, "%scell %s: %s", why.len ? "; " : "", m->cells[c].name, one.msg);
		else
			cb_buf_addf(ok, "%scell %s: %s", ok->len ? "; " : "", m->cells[c].name, found.data ? found.data : "");
		cb_buf_release(&found);
	}
	if (!why.len)
		return 0;
	cb_fail(err, "%s", why.data);
	cb_buf_release(&why);
	return -1;
}

static int check_plugin_plan(struct cb_preflight *pf, struct cb_buf *ok, struct cb_err *err)
{
	size_t i;

	if (pf->w->nplugins == 0)
		return cb_fail(err, "backend '%s' declares no capability: the plugin plan is empty",
			       pf->w->backend->name);
	for (i = 0; i < pf->w->nplugins; i++)
		cb_buf_addf(ok, "%s%s", i ? " " : "", pf->w->plugins[i]);
	return 0;
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

static int check_output_root(struct cb_preflight *pf, struct cb_buf *ok, struct cb_err *err)
{
	const struct cb_guard g = { NULL, NULL, NULL };
	const char *root = pf->output_root;
	char *anc, *m, *x;
	int rc = 0;

	if (cb_is_sealed(root))
		return cb_fail(err, "%s is a sealed run: it is complete, nothing to resume or overwrite", root);
	if (cb_guard_check(&g, root, err) < 0)
		return -1;
	if (pf->resume) {
		m = cb_path_join(root, CB_RUN_MANIFEST);
		x = cb_path_join(root, CB_RUN_MATRIX);
		if (!m || !x || !cb_is_dir(root) || !same_file(m, pf->manifest_path) || !same_file(x, pf->matrix_path))
			rc = cb_fail(err, "--resume: %s is not a run of this manifest and matrix", root);
		else if (cb_shard_check_resume(root, pf->shard ? pf->shard : &(struct cb_shard){ 0, 0 }, err) < 0)
			rc = -1;
		else
			cb_buf_addf(ok, "%s resumes a run of this manifest and matrix", root);
		free(m);
		free(x);
		return rc;
	}
	if (cb_exists(root))
		return cb_fail(err, "%s exists (use --resume to continue a run there)", root);
	/* The run creates the folders above the root that are missing, so the
	 * nearest one that exists must be a folder it can write in. */
	anc = cb_existing_ancestor(root);
	if (!anc)
		return cb_fail(err, "%s: out of memory", root);
	if (!cb_is_dir(anc))
		rc = cb_fail(err, "%s cannot be created: %s is not a folder", root, anc);
	else if (access(anc, W_OK | X_OK) != 0)
		rc = cb_fail(err, "%s cannot be created: %s: %s", root, anc, strerror(errno));
	else if (strchr(root + strlen(anc) + 1, '/'))
		cb_buf_addf(ok, "%s will be created, with the folders missing below %s", root, anc);
	else
		cb_buf_addf(ok, "%s will be created", root);
	free(anc);
	return rc;
}

/* How workers will be confined (confine.h); a mode --confinement named
 * that this machine lacks is refused, naming why, and so is not at all
 * with --require-confinement. */
static int check_confinement(struct cb_preflight *pf, struct cb_buf *ok, struct cb_err *err)
{
	char how[CB_CONFINE_HOW_MAX];

	if (pf->confine->unavailable)
		return cb_fail(err, "workers: %s", pf->confine->why);
	cb_confine_describe(pf->confine, how, sizeof(how));
	if (pf->confine->mode == CB_CONFINE_OFF && pf->require_confinement)
		return cb_fail(err, "workers: %s, and --require-confinement refuses an unconfined run", how);
	cb_buf_addf(ok, "workers: %s", how);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(struct cb_preflight *pf, struct cb_buf *ok, struct cb_err *err);
} checks[] = {
	{ "binding", check_binding },
	{ "sources", check_sources },
	{ "imports", check_imports },
	{ "device-count", preflight_check_device_count },
	{ "targets", preflight_check_targets },
	{ "device-idle", preflight_check_device_idle },
	{ "plugin-plan", check_plugin_plan },
	{ "output-root", check_output_root },
	{ "confinement", check_confinement },
};

size_t cb_preflight_run(struct cb_preflight *pf, FILE *out)
{
	struct cb_buf failed = CB_BUF_INIT;
	size_t i;

	pf->failed = 0;
	pf->results = json_array();
	for (i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		struct cb_buf okb = CB_BUF_INIT;
		struct cb_err err = CB_ERR_INIT;
		int ok = checks[i].fn(pf, &okb, &err) == 0;
		const char *detail = ok ? (okb.data ? okb.data : "") : err.msg;

		if (pf->json)
			cb_json_print_line(out, json_pack("{s:s, s:s, s:b, s:s}", "event", "preflight", "check",
							  checks[i].name, "ok", ok, "detail", detail));
		else if (ok && !pf->quiet)
			fprintf(out, "preflight: %s: ok%s%s%s\n", checks[i].name, detail[0] ? " (" : "", detail,
				detail[0] ? ")" : "");
		else if (!ok)
			fprintf(out, "preflight: %s: FAILED: %s\n", checks[i].name, detail);
		fflush(out);
		json_array_append_new(pf->results, json_pack("{s:s, s:b, s:s}", "name", checks[i].name, "ok", ok,
							     "detail", detail));
		if (!ok) {
			pf->failed++;
			cb_buf_addf(&failed, "%s%s", failed.len ? ", " : "", checks[i].name);
		}
		cb_buf_release(&okb);
	}
	snprintf(pf->failed_names, sizeof(pf->failed_names), "%s", failed.data ? failed.data : "");
	cb_buf_release(&failed);
	return pf->failed;
}
