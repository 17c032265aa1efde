/* cmd/inventory.c: `caliber inventory --corpus DIR -o FILE`, the inventory
 * CSV of a corpus tree read statically (docs/design.md section 4). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cmd.h"
#include "base/fsutil.h"
#include "seal/guard.h"
#include "run/corpus.h"
#include "opts.h"

static const char inventory_about[] =
	"Write the inventory CSV (docs/design.md section 4) of the corpus tree DIR\n"
	"to FILE, read statically from its pytest files by Python's own parser\n"
	"(ast), without importing or running them: every test_*.py below\n"
	"DIR/benchmark and DIR/tests, their `def test*` functions (also async, also\n"
	"methods of Test* classes, node id TestX::test_y), the op marks on them\n"
	"(@pytest.mark.<op> on the def, its classes and pytestmark;\n"
	"pytest.param(..., marks=...) in their parametrize\n"
	"lists, pytest's own marks left out) and @pytest.mark.parametrize(\"dtype\", ...).\n"
	"Module-level lists and tuples, names bound to them (also imported from other\n"
	"files of DIR), + of them and comprehensions over them are evaluated\n"
	"statically; what needs running is unknown, with a warning naming file and\n"
	"line where it may hide op marks.\n"
	"\n"
	"One row per op marked on a benchmark test: the first such test in sorted\n"
	"path order, one marked itself before one where only a parametrized case is;\n"
	"the file under tests/ with a test of the same mark that is named\n"
	"like the benchmark file (else tests/test_<op>.py, else the first); the\n"
	"mark as selector, the dtypes of those tests (sorted; '*' when one of them\n"
	"does not list torch dtypes statically), the kind, the layout and the corpus\n"
	"tree digest (see docs/formats.md, \"Inventory from a corpus tree\"). The\n"
	"layout is per-category when most files directly in DIR/benchmark are named\n"
	"test_*_perf.py, else per-operator.\n"
	"\n"
	"An op with a benchmark test but no correctness test is left out, with a\n"
	"warning on stderr naming it. Nothing is written unless every file reads\n"
	"cleanly: UTF-8, valid Python for the interpreter (--python), no test defined\n"
	"twice in a file; FILE is replaced atomically and, when it exists, must be a\n"
	"regular file.";

int cmd_inventory(int argc, const char **argv, struct cb_err *err)
{
	const char *corpus = NULL, *output = NULL, *python = "python3";
	const struct cb_opt opts[] = {
		{ "corpus", CB_OPT_PATH, &corpus, "DIR", "the corpus tree, holding benchmark/ and tests/" },
		{ "output", CB_OPT_PATH, &output, "FILE", "the inventory CSV to write" },
		{ "python", CB_OPT_PROG, &python, "PATH", "interpreter that reads the test files (default python3)" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "inventory", "--corpus DIR -o FILE [--python PATH]", inventory_about,
					  opts, 0, 0 };
	const struct cb_guard g = { "-o", NULL, NULL };
	struct cb_corpus_inventory inv;
	struct stat st;
	struct cb_args args = CB_ARGS_INIT;
	char *rout, *rcorpus;
	size_t i;
	int rc;

	rc = cb_parse_opts(&spec, argc, argv, &args, err);
	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	rc = CB_EXIT_USAGE;
	if (!corpus || !output) {
		cb_fail(err, "--corpus DIR and -o FILE are both needed (see caliber inventory --help)");
		goto out;
	}
	rc = CB_EXIT_FAIL;
	if (cb_guard_check(&g, output, err) < 0)
		goto out;
	if (lstat(output, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* FILE is replaced by renaming a new file over it: that would put a
		 * regular file in place of a device, a link or a folder. */
		cb_fail(err, "-o %s: exists and is not a regular file", output);
		goto out;
	}
	if (cb_corpus_inventory(corpus, python, &inv, err) < 0)
		goto out;
	if (cb_guard_mkdir_parent(&g, output, 0755, err) < 0 ||
	    cb_write_atomic(output, inv.csv, inv.csv_len, 0644, err) < 0) {
		cb_corpus_inventory_release(&inv);
		goto out;
	}
	for (i = 0; i < inv.nwarnings; i++)
		fprintf(stderr, "caliber: inventory: warning: %s\n", inv.warnings[i]);
	rout = cb_resolve(output);
	rcorpus = cb_resolve(corpus);
	if (rout && rcorpus && cb_path_within(rout, rcorpus))
		fprintf(stderr, "caliber: inventory: warning: %s lies inside the corpus, whose digest it records"
			" as it was before the file was written\n", output);
	free(rout);
	free(rcorpus);
	printf("inventory: %zu ops from the %s corpus %s (tree sha256 %s), %zu left out: %s\n", inv.nrows,
	       cb_corpus_layout_name(inv.layout), corpus, inv.tree_sha256, inv.nleft, output);
	cb_corpus_inventory_release(&inv);
	rc = CB_EXIT_OK;
out:
	cb_args_release(&args);
	return rc;
}
