/* strindex.h: a sorted index of strings, for lookups and duplicate checks
 * in O(n log n) where a scan of every earlier row would be O(n^2) (issue
 * 14: 40k inventory rows took 5 s, 100k index.tsv rows 26 s). The index
 * borrows the strings: they must outlive it (caliber.h). */
#ifndef CB_STRINDEX_H
#define CB_STRINDEX_H

#include <stddef.h>

#include "caliber.h"

struct cb_strindex_entry {
	const char *s;
	size_t pos;                 /* its position in the array indexed */
};

/* Zeroed: an empty index. */
struct cb_strindex {
	struct cb_strindex_entry *v;   /* sorted by s (bytewise), then by pos */
	size_t n;
};

/* Index v[0..n). */
int cb_strindex_init(struct cb_strindex *x, const char *const *v, size_t n, struct cb_err *err);
void cb_strindex_release(struct cb_strindex *x);

/* The first string in array order that equals an earlier one: 1 with *dup
 * its position and *first that of its first occurrence, 0 when all differ. */
int cb_strindex_first_dup(const struct cb_strindex *x, size_t *dup, size_t *first);

/* The one lower bound of caliber: the index of the first of the n
 * elements of base (each size bytes, sorted so that cmp(element, key) < 0
 * holds for a leading run) with cmp(element, key) >= 0; n when none is.
 * cmp is strcmp's sign of the element against key. */
size_t cb_lower_bound_by(const void *base, size_t n, size_t size, int (*cmp)(const void *elem, const void *key),
			 const void *key);

/* cb_lower_bound_by for elements sorted bytewise by the string key(element):
 * the first whose string is >= s. */
size_t cb_lower_bound(const void *base, size_t n, size_t size, const char *(*key)(const void *), const char *s);

/* The position of the first occurrence of key: 1 and *pos, or 0. */
int cb_strindex_find(const struct cb_strindex *x, const char *key, size_t *pos);

#endif
