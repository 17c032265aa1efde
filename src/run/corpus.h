/* corpus.h: `caliber inventory`, the inventory of a corpus tree read
 * statically from its pytest files (docs/formats.md, "Inventory from a corpus
 * tree") by Python's own parser, python/caliber_pytest/inventory.py. */
#ifndef CB_INVENTORY_SCAN_H
#define CB_INVENTORY_SCAN_H

#include <stddef.h>

#include "caliber.h"
#include "base/sha.h"

enum cb_corpus_layout { CB_LAYOUT_PER_OPERATOR, CB_LAYOUT_PER_CATEGORY };

/* The inventory of a corpus tree, ready to write. */
struct cb_corpus_inventory {
	enum cb_corpus_layout layout;
	char tree_sha256[CB_SHA256_HEX];
	char *csv;              /* the whole file, header first */
	size_t csv_len;
	size_t nrows;
	char **warnings;        /* what could not be read, then ops left out; one line each */
	size_t nwarnings;
	size_t nleft;           /* ops left out */
};

/* Read every test_*.py under DIR/benchmark and DIR/tests with
 * `python -m caliber_pytest.inventory` (caliber's own python/ folder on its
 * PYTHONPATH) and build the inventory; nothing is written. */
int cb_corpus_inventory(const char *dir, const char *python, struct cb_corpus_inventory *inv,
			struct cb_err *err);
void cb_corpus_inventory_release(struct cb_corpus_inventory *inv);

const char *cb_corpus_layout_name(enum cb_corpus_layout layout);

#endif
