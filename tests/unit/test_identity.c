/* test_identity.c: identical by construction (docs/design.md section 19, identity.h).
 *
 * Data-driven: each case of tests/golden/identity/cases.json is three
 * cells written into a scratch folder (ir/index.tsv, ir/binaries.tsv,
 * autotune.jsonl, a .ttgir per variant), scanned and compared at its floor;
 * the identity must be known or not, identical or not, for the reason the
 * case gives. Then the binaries.tsv parser's refusals with their exact
 * messages, what it accepts, and the receipt's JSON form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "base/fsutil.h"
#include "campaign/identity.h"
#include "base/jsonio.h"
#include "campaign/manifest.h"
#include "tlib.h"

#define OP "ttg.convert_layout"
#define BIN_HDR "variant\tkernel\tbinary\tbinary_sha256\tcode_sha256\tttgir_sha256\tlaunch\n"
#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static json_t *cases;
static struct cb_manifest manifest;

/* Write text to dir/name, making dir. */
static void put(const char *dir, const char *name, const char *text)
{
	char path[5200];
	struct cb_err err;

	assert_int_equal(cb_mkdir_p(dir, 0755, &err), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(cb_write_atomic(path, text, strlen(text), 0644, &err), 0);
}

/* Lines of a JSON array of strings, each ending in '\n', after head. */
static char *lines(const char *head, const json_t *a)
{
	struct cb_buf b = CB_BUF_INIT;
	const json_t *v;
	size_t i;

	cb_buf_adds(&b, head);
	json_array_foreach(a, i, v)
		cb_buf_addf(&b, "%s\n", json_string_value(v));
	return cb_buf_detach(&b, NULL);
}

/* The cell of one role of a case, written into dir. */
static void write_cell(const char *dir, const json_t *spec)
{
	const json_t *row;
	char ir[4500], *text;
	size_t i;

	snprintf(ir, sizeof(ir), "%s/ir", dir);
	text = lines("variant\tkernel\tlaunches\ttuning_launches\n", json_object_get(spec, "index"));
	put(ir, "index.tsv", text);
	free(text);
	json_array_foreach(json_object_get(spec, "index"), i, row) {
		char vdir[4800], name[256];
		const char *r = json_string_value(row), *tab = strchr(r, '\t'), *tab2 = strchr(tab + 1, '\t');
		snprintf(vdir, sizeof(vdir), "%s/%.*s", ir, (int)(tab - r), r);
		snprintf(name, sizeof(name), "%.*s.ttgir", (int)(tab2 - tab - 1), tab + 1);
		put(vdir, name, "module {\n}\n");
	}
	if (json_object_get(spec, "binaries")) {
		text = lines(BIN_HDR, json_object_get(spec, "binaries"));
		put(ir, "binaries.tsv", text);
		free(text);
	}
	if (json_object_get(spec, "autotune")) {
		text = lines("", json_object_get(spec, "autotune"));
		put(dir, "autotune.jsonl", text);
		free(text);
	}
}

static void golden_case(void **state)
{
	const json_t *c = *state, *expect = json_object_get(c, "expect");
	const long long floor = json_integer_value(json_object_get(c, "floor"));
	struct cb_identity_cell cells[CB_NROLES];
	struct cb_topology topo[CB_NROLES];
	struct cb_identity id;
	struct cb_err err;
	char root[4200], *slash;
	json_t *j;
	int r;

	snprintf(root, sizeof(root), "%s/%s", tl_tmpdir(), json_string_value(json_object_get(c, "name")));
	for (slash = root + strlen(tl_tmpdir()) + 1; (slash = strchr(slash, '/')) != NULL;)
		*slash = '_';
	for (r = 0; r < CB_NROLES; r++) {
		char dir[4400];
		snprintf(dir, sizeof(dir), "%s/%s", root, cb_manifest_cell(&manifest, (enum cb_role)r)->name);
		write_cell(dir, json_object_get(json_object_get(c, "cells"), cb_role_name((enum cb_role)r)));
		assert_int_equal(cb_topology_scan(dir, OP, floor, &topo[r], &err), 0);
		assert_true(topo[r].joinable);
		assert_int_equal(cb_identity_cell_load(dir, &cells[r], &err), 0);
	}
	assert_int_equal(cb_identity_compare(cells, topo, floor, &manifest, &id, &err), 0);
	assert_int_equal(id.known, json_is_true(json_object_get(expect, "known")));
	assert_int_equal(id.identical, json_is_true(json_object_get(expect, "identical")));
	assert_non_null(id.reason);
	if (json_object_get(expect, "reason"))
		assert_string_equal(id.reason, json_string_value(json_object_get(expect, "reason")));
	else if (!strstr(id.reason, json_string_value(json_object_get(expect, "reason_has"))))
		fail_msg("reason '%s' lacks '%s'", id.reason, json_string_value(json_object_get(expect, "reason_has")));
	for (r = 0; json_object_get(expect, "measured") && r < CB_NROLES; r++)
		assert_int_equal(id.nk[r], json_integer_value(json_array_get(json_object_get(expect, "measured"), (size_t)r)));
	j = cb_identity_json(&id, "a");
	assert_non_null(j);
	assert_int_equal(json_is_true(json_object_get(j, "identical")), id.identical);
	assert_string_equal(cb_json_str(j, "reason"), id.reason);
	for (r = 0; r < CB_NROLES; r++)
		assert_int_equal(json_array_size(json_object_get(json_object_get(j, "cells"), cb_role_name((enum cb_role)r))),
				 id.nk[r]);
	json_decref(j);
	cb_identity_release(&id);
	for (r = 0; r < CB_NROLES; r++) {
		cb_identity_cell_release(&cells[r]);
		cb_topology_release(&topo[r]);
	}
}

/* ---- the parser ---------------------------------------------------------- */

static const struct {
	const char *what, *in, *msg;
} bad_binaries[] = {
	{ "empty file", "",
	  "b.tsv: empty file, expected the header variant, kernel, binary, binary_sha256, code_sha256, ttgir_sha256, launch (tab-separated)" },
	{ "header missing a column", "variant\tkernel\tbinary\tbinary_sha256\tcode_sha256\tttgir_sha256\n",
	  "b.tsv:1: missing column 'launch'" },
	{ "header without the code digest", "variant\tkernel\tbinary\tbinary_sha256\tttgir_sha256\tlaunch\n",
	  "b.tsv:1: missing column 'launch'" },
	{ "header with another name", "variant\tkernel\tcubin\tbinary_sha256\tcode_sha256\tttgir_sha256\tlaunch\n",
	  "b.tsv:1: column 3 is 'cubin', expected 'binary'" },
	{ "row with an extra column", BIN_HDR "A\tk\tk.cubin\t-\t-\t-\t-\tx\n", "b.tsv:2: extra column after 'launch'" },
	{ "empty field", BIN_HDR "A\tk\t\t-\t-\t-\t-\n", "b.tsv:2: binary is empty" },
	{ "a digest in capitals", BIN_HDR "A\tk\tk.cubin\t" "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" "\t-\t-\t-\n",
	  "b.tsv:2: binary_sha256: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' is neither '-' nor a sha256 (64 lowercase hex digits)" },
	{ "a code digest with a blank", BIN_HDR "A\tk\tk.cubin\t-\t " SHA_A "\t-\t-\n",
	  "b.tsv:2: code_sha256: ' aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' is neither '-' nor a sha256 (64 lowercase hex digits)" },
	{ "a short digest", BIN_HDR "A\tk\tk.cubin\t-\t-\tabc\t-\n",
	  "b.tsv:2: ttgir_sha256: 'abc' is neither '-' nor a sha256 (64 lowercase hex digits)" },
	{ "duplicate variant", BIN_HDR "A\tk\t-\t-\t-\t-\t-\nB\tk\t-\t-\t-\t-\t-\nA\tk\t-\t-\t-\t-\t-\n",
	  "b.tsv:4: variant 'A' is already listed at line 2" },
	{ "empty line", BIN_HDR "A\tk\t-\t-\t-\t-\t-\n\n", "b.tsv:3: empty line" },
	{ "carriage return inside", BIN_HDR "A\tk\r\t-\t-\t-\t-\t-\n", "b.tsv:2: NUL byte or carriage return inside a line" },
};

static void binaries_refusal(void **state)
{
	size_t i = (size_t)(uintptr_t)*state;
	struct cb_binaries b;
	struct cb_err err;

	assert_int_equal(cb_binaries_parse(bad_binaries[i].in, strlen(bad_binaries[i].in), "b.tsv", &b, &err), -1);
	assert_string_equal(err.msg, bad_binaries[i].msg);
	assert_null(b.rows);
	cb_binaries_release(&b);
}

/* CRLF and no final newline; rows come out sorted by variant; "-" fields. */
static void binaries_accepts(void **state)
{
	static const char in[] = "variant\tkernel\tbinary\tbinary_sha256\tcode_sha256\tttgir_sha256\tlaunch\r\n"
				 "ZZ\t_k\t_k.cubin\t" SHA_A "\t" SHA_A "\t" SHA_A "\tnum_warps=4\r\nAA\t_j\t-\t-\t-\t-\t-";
	struct cb_binaries b;
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_binaries_parse(in, sizeof(in) - 1, "b.tsv", &b, &err), 0);
	assert_int_equal(b.n, 2);
	assert_string_equal(b.rows[0].variant, "AA");
	assert_string_equal(b.rows[0].binary_sha256, CB_BINARY_NONE);
	assert_string_equal(b.rows[1].code_sha256, SHA_A);
	assert_int_equal(b.rows[0].line, 3);
	assert_string_equal(b.rows[1].launch, "num_warps=4");
	cb_binaries_release(&b);
	cb_binaries_release(NULL);
	assert_int_equal(cb_binaries_load("/nonexistent/binaries.tsv", &b, &err), -1);
	assert_string_equal(err.msg, "/nonexistent/binaries.tsv: No such file or directory");
}

/* An autotune.jsonl line that is not a JSON object leaves the identity
 * unknown, the line named. */
static void decisions_refused(void **state)
{
	char dir[4200], ir[4300], msg[4400];
	struct cb_identity_cell c;
	struct cb_err err;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/decisions", tl_tmpdir());
	snprintf(ir, sizeof(ir), "%s/ir", dir);
	put(ir, "binaries.tsv", BIN_HDR);
	put(dir, "autotune.jsonl", "{\"kernel\": \"a\"}\n[1, 2]\n");
	assert_int_equal(cb_identity_cell_load(dir, &c, &err), 0);
	assert_false(c.have);
	snprintf(msg, sizeof(msg), "%s/autotune.jsonl:2: not a JSON object", dir);
	assert_string_equal(c.missing, msg);
	cb_identity_cell_release(&c);
}

int main(void)
{
	const struct CMUnitTest fixed[] = {
		cmocka_unit_test(binaries_accepts),
		cmocka_unit_test(decisions_refused),
	};
	size_t nbad = sizeof(bad_binaries) / sizeof(bad_binaries[0]), nfixed = sizeof(fixed) / sizeof(fixed[0]);
	struct CMUnitTest *tests;
	struct cb_err err;
	const json_t *c;
	size_t i, k = 0;
	int rc;

	cases = cb_json_load_file(tl_path("tests/golden/identity/cases.json"), &err);
	if (!cases || cb_manifest_load(tl_path("tests/bad/base/manifest.json"), &manifest, &err) < 0) {
		fprintf(stderr, "test_identity: %s\n", err.msg);
		return 1;
	}
	tests = calloc(json_array_size(json_object_get(cases, "cases")) + nbad + nfixed, sizeof(*tests));
	json_array_foreach(json_object_get(cases, "cases"), i, c) {
		tests[k].name = json_string_value(json_object_get(c, "name"));
		tests[k].test_func = golden_case;
		tests[k++].initial_state = (void *)(uintptr_t)c;
	}
	for (i = 0; i < nbad; i++) {
		tests[k].name = bad_binaries[i].what;
		tests[k].test_func = binaries_refusal;
		tests[k++].initial_state = (void *)(uintptr_t)i;
	}
	for (i = 0; i < nfixed; i++)
		tests[k++] = fixed[i];
	rc = _cmocka_run_group_tests("identity", tests, k, NULL, NULL);
	free(tests);
	cb_manifest_release(&manifest);
	json_decref(cases);
	return rc;
}
