/* test_manifest.c: what a valid manifest loads into, and the inventory
 * check of each workload (refusals are covered by tests/bad). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "inventory.h"
#include "manifest.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(example_loads),
		cmocka_unit_test(default_topology_op),
		cmocka_unit_test(inventory_reason_exempts),
	};

	return cmocka_run_group_tests_name("manifest", tests, NULL, NULL);
}
