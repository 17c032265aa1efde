/* plan.h: backends (backends/<name>.json) and the plugin plan derived from
 * their declared capabilities (docs/design.md section 7). The table in plan.c is the
 * only place that maps capabilities to plugins: no plugin list is spelled
 * out anywhere else. */
#ifndef CB_PLAN_H
#define CB_PLAN_H

#include <stddef.h>

#include <jansson.h>

#include "caliber.h"

#define CB_BACKEND_SCHEMA "caliber.backend/1"

struct cb_backend {
	json_t *doc;
	char *path;
	const char *name;
	const char *visibility_env;       /* e.g. CUDA_VISIBLE_DEVICES */
	const char **count_devices;       /* argv, NULL-terminated */
	const char **list_processes;      /* argv, NULL-terminated */
	int graph_capture;
	const json_t *capabilities;       /* object of booleans */
	const char **preload;             /* modules a worker imports ahead of its request, NULL-terminated (may be empty) */
	const char **device_name;         /* argv printing the visible device's name, NULL-terminated; NULL when absent */
};

/* Load DIR/<name>.json, validated like a manifest (unknown keys refused).
 * dir NULL means caliber's own backends/ folder. */
int cb_backend_load(const char *dir, const char *name, struct cb_backend *b, struct cb_err *err);
void cb_backend_release(struct cb_backend *b);

/* The ordered plugin list (pytest -p module names) the backend's
 * capabilities call for. Fills a NULL-terminated array of static strings;
 * *n may be 0, which callers must refuse. */
int cb_plan(const struct cb_backend *b, const char *plugins[], size_t cap, size_t *n);

/* The most plugins a plan holds. */
#define CB_PLAN_MAX 8

/* What a planned plugin does, and (through *capability) the capability
 * that brings it in. */
const char *cb_plan_why(const char *plugin, const char **capability);

#endif
