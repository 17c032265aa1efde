/* strindex.c: a sorted index of strings. */
#include "strindex.h"

#include <stdlib.h>
#include <string.h>

/* By string, then by position: equal strings stand in array order. */
static int cmp_entry(const void *a, const void *b)
{
	const struct cb_strindex_entry *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

int cb_strindex_init(struct cb_strindex *x, const char *const *v, size_t n, struct cb_err *err)
{
	size_t i;

	memset(x, 0, sizeof(*x));
	x->v = calloc(n ? n : 1, sizeof(*x->v));
	if (!x->v)
		return cb_fail(err, "out of memory");
	for (i = 0; i < n; i++) {
		x->v[i].s = v[i];
		x->v[i].pos = i;
	}
	x->n = n;
	if (n)
		qsort(x->v, n, sizeof(*x->v), cmp_entry);
	return 0;
}

void cb_strindex_release(struct cb_strindex *x)
{
	if (!x)
		return;
	free(x->v);
	memset(x, 0, sizeof(*x));
}

int cb_strindex_first_dup(const struct cb_strindex *x, size_t *dup, size_t *first)
{
	size_t i, start = 0;
	int found = 0;

	/* Within a run of equal strings the first entry is the first
	 * occurrence and the second the earliest repeat of it. */
	for (i = 1; i <= x->n; i++) {
		if (i < x->n && strcmp(x->v[i].s, x->v[start].s) == 0)
			continue;
		if (i - start > 1 && (!found || x->v[start + 1].pos < *dup)) {
			*dup = x->v[start + 1].pos;
			*first = x->v[start].pos;
			found = 1;
		}
		start = i;
	}
	return found;
}

size_t cb_lower_bound_by(const void *base, size_t n, size_t size, int (*cmp)(const void *elem, const void *key),
			 const void *key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp((const char *)base + mid * size, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A string key with the function that gives an element's string. */
struct str_key {
	const char *(*of)(const void *);
	const char *s;
};

/* strcmp of an element's string against a str_key's. */
static int cmp_str_key(const void *elem, const void *key)
{
	const struct str_key *k = key;

	return strcmp(k->of(elem), k->s);
}

size_t cb_lower_bound(const void *base, size_t n, size_t size, const char *(*key)(const void *), const char *s)
{
	const struct str_key k = { key, s };

	return cb_lower_bound_by(base, n, size, cmp_str_key, &k);
}

/* The string of an index entry, for cb_lower_bound. */
static const char *entry_key(const void *e)
{
	return ((const struct cb_strindex_entry *)e)->s;
}

int cb_strindex_find(const struct cb_strindex *x, const char *key, size_t *pos)
{
	size_t lo = cb_lower_bound(x->v, x->n, sizeof(*x->v), entry_key, key);

	if (lo == x->n || strcmp(x->v[lo].s, key) != 0)
		return 0;
	*pos = x->v[lo].pos;
	return 1;
}
