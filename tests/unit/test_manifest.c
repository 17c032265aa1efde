/* test_manifest.c: what a valid manifest loads into, and the inventory
 * check of each workload (refusals are covered by tests/bad). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "campaign/inventory.h"
#include "base/jsonio.h"
#include "campaign/manifest.h"
#include "campaign/matrix.h"
#include "tlib.h"

static void example_loads(void **state)
{
	struct cb_manifest m;
	struct cb_inventory inv;
	struct cb_err err;
	char *buf;
	size_t i, len;

	(void)state;
	assert_int_equal(cb_manifest_load(tl_path("campaigns/example/manifest.json"), &m, &err), 0);
	assert_string_equal(m.campaign, "example-rlc");
	assert_string_equal(m.sources[CB_SRC_COMPILER].import, "triton");
	assert_null(m.sources[CB_SRC_COMPILER].commit);
	assert_int_equal(strlen(m.sources[CB_SRC_CORPUS].commit), 40);
	assert_string_equal(m.topology_op, "ttg.convert_layout");
	assert_int_equal(m.launch_floor, 1);
	assert_int_equal(m.repeats, 7);
	assert_string_equal(cb_manifest_cell(&m, CB_ROLE_CONTROL)->name, "mask0");
	assert_string_equal(m.cells[2].name, "candidate");
	assert_true(m.gain > 0.049 && m.gain < 0.051);
	assert_int_equal(m.nworkloads, 4);
	assert_string_equal(m.workloads[2].k, "bfloat16");
	assert_non_null(m.workloads[2].reason);
	assert_int_equal(m.workloads[3].ndtypes, 2);
	assert_true(m.workloads[0].canary);
	assert_false(m.workloads[1].canary);
	assert_int_equal(strlen(m.sha256), 64);
	assert_int_equal(cb_read_file(tl_path("ops/inventory_main.csv"), &buf, &len, &err), 0);
	assert_int_equal(cb_inventory_parse(buf, len, "ops/inventory_main.csv", &inv, &err), 0);
	free(buf);
	for (i = 0; i < m.nworkloads; i++)
		assert_int_equal(cb_inventory_check_workload(&inv, &m.workloads[i], &err), 0);
	cb_inventory_release(&inv);
	cb_manifest_release(&m);
}

static void default_topology_op(void **state)
{
	struct cb_manifest m;
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_manifest_load(tl_path("tests/bad/base/manifest.json"), &m, &err), 0);
	assert_string_equal(m.topology_op, "ttg.convert_layout");
	assert_int_equal(m.workloads[1].nnode_ids, 1);
	cb_manifest_release(&m);
}

/* A workload the inventory does not know passes when it says why. */
static void inventory_reason_exempts(void **state)
{
	static const char inv_csv[] =
		"op,benchmark_file,benchmark_test,correctness_file,correctness_selector,dtypes,kind\n"
		"a,b/t.py,test_a,t/t.py,a,float16,pointwise\n";
	struct cb_inventory inv;
	struct cb_workload w;
	struct cb_err err;
	const char *dt[] = { "float16" };

	(void)state;
	assert_int_equal(cb_inventory_parse(inv_csv, sizeof(inv_csv) - 1, "inv.csv", &inv, &err), 0);
	memset(&w, 0, sizeof(w));
	w.id = w.op = "newop";
	w.dtypes = dt;
	w.ndtypes = 1;
	w.bench_target = "b/new.py::test_new";
	assert_int_equal(cb_inventory_check_workload(&inv, &w, &err), -1);
	w.inventory_reason = "upstream split the benchmark after the inventory was written";
	assert_int_equal(cb_inventory_check_workload(&inv, &w, &err), 0);
	cb_inventory_release(&inv);
}

/* The base manifest of the bad-input catalogue with each cell's compiler
 * set from comp[cell] (NULL: none), parsed. */
static int parse_with_compilers(json_t *const comp[CB_NROLES], struct cb_manifest *m, struct cb_err *err)
{
	json_error_t je;
	json_t *doc = json_load_file(tl_path("tests/bad/base/manifest.json"), JSON_REJECT_DUPLICATES, &je);
	char *text;
	int c, rc;

	assert_non_null(doc);
	for (c = 0; c < CB_NROLES; c++)
		if (comp[c])
			json_object_set(json_array_get(json_object_get(doc, "cells"), (size_t)c), "compiler", comp[c]);
	text = json_dumps(doc, 0);
	assert_non_null(text);
	rc = cb_manifest_parse(text, strlen(text), "builds.json", m, err);
	free(text);
	json_decref(doc);
	return rc;
}

/* A cell's own compiler loads with its identity and root as written, and
 * freezes into the matrix with the root made absolute: a relative one
 * against the folder prepare gives, which the matrix then records. */
static void cell_compilers_freeze(void **state)
{
	json_t *patched = json_pack("{s:s, s:s, s:s}", "tree_sha256",
				    "7c2e4a6b8d0f1e3c5a7b9d1f3e5c7a9b1d3f5e7c9a1b3d5f7e9c1a3b5d7f9e2a", "import", "triton",
				    "root", "builds/./patched/");
	json_t *stock = json_pack("{s:s, s:s}", "commit", "5b2e8c1d9f4a7e3b6c0d2f8a1e4b7c9d3f6a0e2b", "root", "/opt/stock");
	json_t *const comp[CB_NROLES] = { patched, patched, stock };
	json_t *const none[CB_NROLES] = { NULL, NULL, NULL };
	struct cb_manifest m;
	struct cb_inventory inv;
	struct cb_err err;
	json_t *mx;
	char *buf;
	size_t len;

	(void)state;
	assert_int_equal(cb_read_file(tl_path("tests/bad/base/inventory_main.csv"), &buf, &len, &err), 0);
	assert_int_equal(cb_inventory_parse(buf, len, "inventory_main.csv", &inv, &err), 0);
	free(buf);
	assert_int_equal(parse_with_compilers(comp, &m, &err), 0);
	assert_string_equal(m.cells[0].compiler_root, "builds/./patched/");
	assert_string_equal(m.cells[1].compiler.import, "triton");
	assert_null(m.cells[2].compiler.tree_sha256);
	assert_int_equal(strlen(m.cells[2].compiler.commit), 40);
	assert_null(m.cells[2].compiler.import);

	mx = cb_matrix_build(&m, &inv, CB_SEL_CANARY, NULL, &err);
	assert_null(mx);
	assert_string_equal(err.msg, "cells[0].compiler.root: 'builds/./patched/' is relative, and there is no manifest folder to resolve it against");
	mx = cb_matrix_build(&m, &inv, CB_SEL_CANARY, "/campaigns/x", &err);
	assert_non_null(mx);
	assert_string_equal(cb_matrix_compiler_root(mx, "off"), "/campaigns/x/builds/patched");
	assert_string_equal(cb_matrix_compiler_root(mx, "mask0"), "/campaigns/x/builds/patched");
	assert_string_equal(cb_matrix_compiler_root(mx, "candidate"), "/opt/stock");
	assert_string_equal(cb_json_str(mx, "compiler_root_base"), "/campaigns/x");
	assert_string_equal(cb_json_str(json_object_get(json_array_get(json_object_get(mx, "cells"), 2), "compiler"), "commit"),
			    "5b2e8c1d9f4a7e3b6c0d2f8a1e4b7c9d3f6a0e2b");
	json_decref(mx);
	cb_manifest_release(&m);

	/* Without cells of their own, the matrix is what it always was. */
	assert_int_equal(parse_with_compilers(none, &m, &err), 0);
	assert_null(m.cells[0].compiler_root);
	mx = cb_matrix_build(&m, &inv, CB_SEL_CANARY, "/campaigns/x", &err);
	assert_non_null(mx);
	assert_null(json_object_get(json_array_get(json_object_get(mx, "cells"), 0), "compiler"));
	assert_null(json_object_get(mx, "compiler_root_base"));
	assert_null(cb_matrix_compiler_root(mx, "off"));
	json_decref(mx);
	cb_manifest_release(&m);
	cb_inventory_release(&inv);
	json_decref(patched);
	json_decref(stock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(example_loads),
		cmocka_unit_test(default_topology_op),
		cmocka_unit_test(inventory_reason_exempts),
		cmocka_unit_test(cell_compilers_freeze),
	};

	return cmocka_run_group_tests_name("manifest", tests, NULL, NULL);
}
