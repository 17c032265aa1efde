/* cmd/topology.c: `caliber topology CELL_DIR`, one cell's scoped count of
 * the topology op, as JSON (docs/design.md section 9). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/runroot.h"
#include "opts.h"
#include "ir/topology.h"

static const char topology_about[] =
	"Count the topology op in a cell's IR and print the cell's topology as\n"
	"JSON (\"schema\": \"caliber.topology/1\"; docs/design.md section 9). Every\n"
	"ir/<variant>/ directory of CELL_DIR is joined with its row of\n"
	"ir/index.tsv; a variant counts the op over all its *.ttgir files. scoped\n"
	"sums the variants launched more than --floor times, total sums them all,\n"
	"excluded lists the others. The op counts as an operation (`%x = OP ...`,\n"
	"`%a, %b = OP ...`, `OP ...`, or the generic form `\"OP\"(...)`), never as a\n"
	"mention in loc(...), a string, an attribute or a comment. A directory\n"
	"without a row or a row without IR prints joinable false with the reasons\n"
	"(scoped and total are then null); a missing or malformed index and\n"
	"unreadable IR are errors. See docs/formats.md, \"Topology\".";

/* A task folder or a run root given where a cell folder belongs is
 * refused as what it is, with the cells it holds, rather than as a cell
 * without ir/index.tsv. */
static int not_a_cell(const char *dir, struct cb_err *err)
{
	char *ir = cb_path_join(dir, "ir"), *cells = cb_path_join(dir, CB_RUN_CELLS), *tasks = cb_path_join(dir, CB_RUN_TASKS);
	char **names = NULL;
	size_t n = 0, i;
	struct cb_buf list = CB_BUF_INIT;
	int rc = 0;

	if (!ir || !cells || !tasks)
		rc = cb_fail(err, "out of memory");
	else if (cb_is_dir(ir))
		rc = 0;
	else if (cb_is_dir(cells) && cb_list_dir(cells, &names, &n, err) == 0) {
		size_t sessions = 0;
		for (i = 0; i < n; i++) {
			if (strchr(names[i], '.')) { /* <round>-<cell>.s<k>: a later session of a cell */
				sessions++;
				continue;
			}
			cb_buf_addf(&list, "%s%s", list.len ? ", " : "", names[i]);
		}
		rc = cb_fail(err, "%s is a task folder, not a cell: its cells are %s/cells/<round>-<cell> (%s)%s", dir,
			     dir, list.len ? list.data : "none yet",
			     sessions ? "; later sessions, <round>-<cell>.s<k>, hold no IR" : "");
	} else if (cb_is_dir(tasks))
		rc = cb_fail(err, "%s is a run root, not a cell: a cell is %s/tasks/<task>/cells/<round>-<cell>", dir,
			     dir);
	cb_strv_free(names, n);
	cb_buf_release(&list);
	free(ir);
	free(cells);
	free(tasks);
	return rc;
}

int cmd_topology(int argc, const char **argv, struct cb_err *err)
{
	struct cb_topology t;
	struct cb_args args = CB_ARGS_INIT;
	char *text = NULL;
	json_t *j = NULL;
	long long opt_floor = 0;
	const char *opt_op = CB_DEFAULT_TOPOLOGY_OP;
	const struct cb_opt opts[] = {
		{ "floor", CB_OPT_INT, &opt_floor, "N", "scope to variants launched more than N times (default 0)" },
		{ "op", CB_OPT_STR, &opt_op, "OP", "operation to count (default " CB_DEFAULT_TOPOLOGY_OP ")" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "topology", "CELL_DIR [--floor N] [--op OP]", topology_about,
					  opts, 1, 1 };
	int rc = cb_parse_opts(&spec, argc, argv, &args, err);

	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	if (opt_floor < 0 || cb_topology_check_op(opt_op, err) < 0) {
		if (opt_floor < 0)
			cb_fail(err, "--floor: '%lld' is not a count >= 0", opt_floor);
		else
			cb_prefix(err, "--op");
		cb_args_release(&args);
		return CB_EXIT_USAGE;
	}
	if (not_a_cell(args.pos[0], err) < 0) {
		cb_args_release(&args);
		return CB_EXIT_FAIL;
	}
	rc = cb_topology_scan(args.pos[0], opt_op, opt_floor, &t, err);
	cb_args_release(&args);
	if (rc < 0)
		return CB_EXIT_FAIL;
	j = cb_topology_json(&t);
	cb_topology_release(&t);
	if (j && json_object_set_new(j, "schema", json_string(CB_TOPOLOGY_SCHEMA)) < 0) {
		json_decref(j);
		j = NULL;
	}
	text = j ? cb_json_dumps(j, err) : NULL;
	if (!j)
		cb_fail(err, "out of memory");
	if (text)
		fputs(text, stdout);
	rc = text ? CB_EXIT_OK : CB_EXIT_FAIL;
	json_decref(j);
	free(text);
	return rc;
}
