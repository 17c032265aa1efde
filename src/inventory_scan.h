/* inventory_scan.h: `caliber inventory`, the inventory of a corpus tree read
 * statically from its pytest files (docs/formats.md, "Inventory from a corpus
 * tree"), and the small Python scanner behind it. */
#ifndef CB_INVENTORY_SCAN_H
#define CB_INVENTORY_SCAN_H

#include <stddef.h>

#include "caliber.h"
#include "sha.h"

/* What a test's parametrization says about its dtypes. */
enum cb_py_dtypes {
	CB_PY_DTYPES_NONE,      /* no parameter named dtype */
	CB_PY_DTYPES_LITERAL,   /* every value a torch dtype written out: dtypes[] */
	CB_PY_DTYPES_ANY        /* a dtype parameter whose values are not written out */
};

/* One test pytest would collect from a file. */
struct cb_py_test {
	char *id;               /* node id after "file::": "test_x", "TestX::test_y" */
	size_t line;            /* of its def */
	char **marks;           /* op marks: plain @pytest.mark.NAME of the def, its classes
				 * and the module's pytestmark, pytest's own marks left out */
	size_t nmarks;
	enum cb_py_dtypes dtype_kind;
	char **dtypes;          /* canonical torch names ("float16"), sorted, unique */
	size_t ndtypes;
};

struct cb_py_file {
	struct cb_py_test *tests;   /* in source order */
	size_t ntests;
};

/* Scan one Python file (len bytes of buf, which need not be NUL-terminated):
 * tokenize it (strings of every kind, comments, continuations, brackets
 * across lines), then read its decorators, defs and classes. name is used in
 * errors ("name:line: what"). Refuses bytes that are not UTF-8, unterminated
 * strings and brackets, decorators not followed by a def or class, and two
 * tests with the same node id. */
int cb_pyscan(const char *buf, size_t len, const char *name, struct cb_py_file *f,
	      struct cb_err *err);
void cb_py_file_free(struct cb_py_file *f);

enum cb_corpus_layout { CB_LAYOUT_PER_OPERATOR, CB_LAYOUT_PER_CATEGORY };

/* The inventory of a corpus tree, ready to write. */
struct cb_corpus_inventory {
	enum cb_corpus_layout layout;
	char tree_sha256[CB_SHA256_HEX];
	char *csv;              /* the whole file, header first */
	size_t csv_len;
	size_t nrows;
	char **warnings;        /* ops left out, one line each */
	size_t nwarnings;
};

/* Read every test_*.py under DIR/benchmark and DIR/tests and build the
 * inventory; nothing is written. */
int cb_corpus_inventory(const char *dir, struct cb_corpus_inventory *inv, struct cb_err *err);
void cb_corpus_inventory_free(struct cb_corpus_inventory *inv);

const char *cb_corpus_layout_name(enum cb_corpus_layout layout);

#endif
