/* plan.c: backends and the plugin plan. */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/home.h"
#include "base/buf.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/schema.h"
#include "base/suggest.h"

/* Capability -> plugin, in plan order. A plugin joins the plan when its
 * backend declares the capability true. */
static const struct {
	const char *capability;
	const char *plugin;
	const char *why;
} plan_table[] = {
	{ "device_query", "caliber_pytest.device_setup", "pins and checks the one device" },
	{ "shape_injection", "caliber_pytest.shapes", "injects the workload's shapes and dtypes" },
	{ "autotune_replay", "caliber_pytest.autotune_record", "records autotune in the baseline, replays it elsewhere" },
	{ "triton_hooks", "caliber_pytest.ir_meta", "joins launches to variants, keeps their TTGIR" },
	{ "device_events", "caliber_pytest.timing", "device-event timing, graph capture where declared" },
	{ "peer_devices", "caliber_pytest.parallel_warmup", "compiles on other devices (PARALLEL_WARMUP_GPUS)" },
	{ "benchmark_compat", "caliber_pytest.compat", "routes a corpus's own benchmark timing to timing" },
};

#define NPLAN (sizeof(plan_table) / sizeof(plan_table[0]))
_Static_assert(NPLAN <= CB_PLAN_MAX, "CB_PLAN_MAX is too small for the plan table");

static const struct cb_field capability_fields[] = {
	{ "device_query", CB_J_BOOL, 1, 0, NULL, "the device can be queried (name, clocks)" },
	{ "shape_injection", CB_J_BOOL, 1, 0, NULL, "the corpus takes shapes from caliber" },
	{ "autotune_replay", CB_J_BOOL, 1, 0, NULL, "Triton's autotuner can be recorded and replayed" },
	{ "triton_hooks", CB_J_BOOL, 1, 0, NULL, "Triton's kernel_load_end_hook and launch_enter_hook" },
	{ "device_events", CB_J_BOOL, 1, 0, NULL, "device events time kernels" },
	{ "peer_devices", CB_J_BOOL, 1, 0, NULL, "other devices of the host can precompile" },
	{ "benchmark_compat", CB_J_BOOL, 1, 0, NULL, "a corpus's own benchmark timing can be adapted" },
	{ NULL, 0, 0, 0, NULL, NULL }
};

static const struct cb_field backend_fields[] = {
	{ "schema", CB_J_STRING, 1, 0, NULL, CB_BACKEND_SCHEMA },
	{ "name", CB_J_STRING, 1, 0, NULL, "backend name, the file's name" },
	{ "description", CB_J_STRING, 0, 0, NULL, "free text" },
	{ "visibility_env", CB_J_STRING, 1, 0, NULL, "variable that pins the device" },
	{ "count_devices", CB_J_ARRAY, 1, CB_J_STRING, NULL, "argv printing the number of visible devices; {device} is replaced" },
	{ "list_processes", CB_J_ARRAY, 1, CB_J_STRING, NULL, "argv listing other processes on the device; {device} is replaced" },
	{ "graph_capture", CB_J_BOOL, 1, 0, NULL, "graph capture is available" },
	{ "capabilities", CB_J_OBJECT, 1, 0, capability_fields, "what the plan is derived from" },
	{ "preload", CB_J_ARRAY, 0, CB_J_STRING, NULL, "modules a worker imports before its first request (e.g. torch)" },
	{ "device_name", CB_J_ARRAY, 0, CB_J_STRING, NULL, "argv printing the visible device's name; {device} is replaced" },
	{ NULL, 0, 0, 0, NULL, NULL }
};

/* NULL-terminated copy of a JSON array of strings (pointers into doc). */
static const char **argv_of(const json_t *a)
{
	size_t i, n = json_array_size(a);
	const char **v = calloc(n + 1, sizeof(*v));

	for (i = 0; v && i < n; i++)
		v[i] = json_string_value(json_array_get(a, i));
	return v;
}

/* Refuse backend name, which dir does not hold (path is the file that is
 * missing): the backends dir holds, the one name most likely misspells,
 * and the option that names another folder. */
static void no_backend(const char *dir, const char *name, const char *path, struct cb_err *err)
{
	struct cb_buf have = CB_BUF_INIT;
	struct cb_err ignored = CB_ERR_INIT;
	char **files = NULL;
	const char **names = NULL, *near = NULL;
	size_t n = 0, k = 0, i;

	if (cb_list_dir(dir, &files, &n, &ignored) == 0 && (names = calloc(n ? n : 1, sizeof(*names)))) {
		for (i = 0; i < n; i++) {
			size_t len = strlen(files[i]);
			if (len > 5 && strcmp(files[i] + len - 5, ".json") == 0) {
				files[i][len - 5] = '\0';
				names[k++] = files[i];
				cb_buf_addf(&have, "%s%s", have.len ? ", " : "", files[i]);
			}
		}
		near = cb_suggest(name, names, k);
	}
	cb_fail(err, "backend '%s': no file %s%s%s%s; %s%s; --backends DIR takes backends from another folder%s", name,
		path, near ? " (did you mean " : "", near ? near : "", near ? "?)" : "",
		k ? "the backends there: " : "no backend there", k ? have.data : "",
		cb_home_found() ? "" : " (caliber found no tree of its own above its binary: set CALIBER_HOME to it)");
	free(names);
	cb_strv_free(files, n);
	cb_buf_release(&have);
}

/* Whether s is a variable name: [A-Za-z_][A-Za-z0-9_]* (POSIX's, in the
 * C locale; isalpha would take the locale's letters). */
static int env_name(const char *s)
{
	const char *p;

	for (p = s; *p; p++)
		if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (p > s && *p >= '0' && *p <= '9')))
			return 0;
	return p > s;
}

int cb_backend_load(const char *dir, const char *name, struct cb_backend *b, struct cb_err *err)
{
	const char *schema;
	char *bdir = NULL;

	memset(b, 0, sizeof(*b));
	if (!dir) {
		bdir = cb_path_join(cb_home(), "backends");
		dir = bdir;
	}
	b->path = dir ? cb_strdupf("%s/%s.json", dir, name) : NULL;
	if (!b->path) {
		free(bdir);
		return cb_fail(err, "out of memory");
	}
	if (!cb_exists(b->path)) {
		no_backend(dir, name, b->path, err);
		free(bdir);
		goto fail;
	}
	free(bdir);
	b->doc = cb_json_load_file(b->path, err);
	if (!b->doc)
		goto fail;
	if (cb_schema_check(b->doc, backend_fields, "", err) < 0) {
		cb_prefix(err, "%s", b->path);
		goto fail;
	}
	schema = cb_json_str(b->doc, "schema");
	b->name = cb_json_str(b->doc, "name");
	if (strcmp(schema, CB_BACKEND_SCHEMA) != 0) {
		cb_fail(err, "%s: schema: expected '%s', got '%s'", b->path, CB_BACKEND_SCHEMA, schema);
		goto fail;
	}
	if (strcmp(b->name, name) != 0) {
		cb_fail(err, "%s: name: '%s' is not the file's name '%s'", b->path, b->name, name);
		goto fail;
	}
	b->visibility_env = cb_json_str(b->doc, "visibility_env");
	/* It is set in each worker's environment and expanded in the job
	 * script caliber slurm writes: a variable name, nothing a shell
	 * would read as more. */
	if (!env_name(b->visibility_env)) {
		cb_fail(err, "%s: visibility_env: '%s' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)", b->path,
			b->visibility_env);
		goto fail;
	}
	b->graph_capture = json_is_true(json_object_get(b->doc, "graph_capture"));
	b->capabilities = json_object_get(b->doc, "capabilities");
	if (json_array_size(json_object_get(b->doc, "count_devices")) == 0 ||
	    json_array_size(json_object_get(b->doc, "list_processes")) == 0) {
		cb_fail(err, "%s: count_devices and list_processes must be non-empty commands", b->path);
		goto fail;
	}
	b->count_devices = argv_of(json_object_get(b->doc, "count_devices"));
	b->list_processes = argv_of(json_object_get(b->doc, "list_processes"));
	b->preload = argv_of(json_object_get(b->doc, "preload"));
	b->device_name = json_array_size(json_object_get(b->doc, "device_name")) ?
		argv_of(json_object_get(b->doc, "device_name")) : NULL;
	if (!b->count_devices || !b->list_processes || !b->preload ||
	    (json_array_size(json_object_get(b->doc, "device_name")) && !b->device_name)) {
		cb_fail(err, "out of memory");
		goto fail;
	}
	return 0;
fail:
	cb_backend_release(b);
	return -1;
}

void cb_backend_release(struct cb_backend *b)
{
	if (!b)
		return;
	free(b->count_devices);
	free(b->list_processes);
	free(b->preload);
	free(b->device_name);
	json_decref(b->doc);
	free(b->path);
	memset(b, 0, sizeof(*b));
}

int cb_plan(const struct cb_backend *b, const char *plugins[], size_t cap, size_t *n)
{
	size_t i, k = 0;

	for (i = 0; i < NPLAN; i++)
		if (json_is_true(json_object_get(b->capabilities, plan_table[i].capability))) {
			if (k + 1 >= cap)
				return -1;
			plugins[k++] = plan_table[i].plugin;
		}
	plugins[k] = NULL;
	*n = k;
	return 0;
}

const char *cb_plan_why(const char *plugin, const char **capability)
{
	size_t i;

	for (i = 0; i < NPLAN; i++)
		if (strcmp(plan_table[i].plugin, plugin) == 0) {
			*capability = plan_table[i].capability;
			return plan_table[i].why;
		}
	*capability = "?";
	return "?";
}

