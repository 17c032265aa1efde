/* cmd/plan.c: `caliber plan --backend NAME`, the plugin plan a backend's
 * capabilities call for (docs/design.md section 7). */
#include <stdio.h>

#include "cmd.h"
#include "opts.h"
#include "campaign/plan.h"

static const char plan_about[] =
	"Print the ordered plugin plan (pytest -p modules) that a backend's declared\n"
	"capabilities call for, one per line, with --why the capability behind each.\n"
	"The plan is derived here and only here; the worker uses exactly this list.\n"
	"An empty plan is an error: pytest without plugins measures nothing.";

int cmd_plan(int argc, const char **argv, struct cb_err *err)
{
	const char *name = NULL, *dir = NULL;
	const char *plugins[CB_PLAN_MAX + 1];
	int why = 0;
	struct cb_backend b;
	struct cb_args args = CB_ARGS_INIT;
	size_t n, i;
	const struct cb_opt opts[] = {
		{ "backend", CB_OPT_STR, &name, "NAME", "backend name (required)" },
		{ "backends", CB_OPT_PATH, &dir, "DIR", "folder of backend files (default caliber's backends/)" },
		{ "why", CB_OPT_FLAG, &why, NULL, "also print the capability behind each plugin" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "plan", "--backend NAME [--backends DIR] [--why]", plan_about,
					  opts, 0, 0 };
	int rc = cb_parse_opts(&spec, argc, argv, &args, err);

	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	if (!name) {
		cb_args_release(&args);
		cb_fail(err, "--backend NAME is required");
		return CB_EXIT_USAGE;
	}
	rc = cb_backend_load(dir, name, &b, err);
	cb_args_release(&args);
	if (rc < 0)
		return CB_EXIT_FAIL;
	cb_plan(&b, plugins, CB_PLAN_MAX + 1, &n);
	if (n == 0) {
		cb_fail(err, "backend '%s' declares no capability: the plugin plan is empty", name);
		cb_backend_release(&b);
		return CB_EXIT_FAIL;
	}
	for (i = 0; i < n; i++) {
		if (!why) {
			printf("%s\n", plugins[i]);
			continue;
		}
		{
			const char *capability, *what = cb_plan_why(plugins[i], &capability);
			printf("%-32s %-18s %s\n", plugins[i], capability, what);
		}
	}
	cb_backend_release(&b);
	return CB_EXIT_OK;
}
