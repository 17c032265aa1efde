/* suggest.c: the nearest word for "did you mean" (suggest.h). */
#include "suggest.h"

#include <stdlib.h>
#include <string.h>

size_t cb_edit_distance(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b), i, j, d;
	/* Three rows of the table: two back (for swaps), one back, this one. */
	size_t *row = calloc(3 * (nb + 1), sizeof(*row)), *r2, *r1, *r0;

	if (!row)
		return (size_t)-1;
	r2 = row;
	r1 = row + nb + 1;
	r0 = row + 2 * (nb + 1);
	for (j = 0; j <= nb; j++)
		r1[j] = j;
	for (i = 1; i <= na; i++) {
		size_t *t;
		r0[0] = i;
		for (j = 1; j <= nb; j++) {
			size_t sub = r1[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = r1[j] + 1, ins = r0[j - 1] + 1;
			d = sub < del ? sub : del;
			d = d < ins ? d : ins;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && r2[j - 2] + 1 < d)
				d = r2[j - 2] + 1;
			r0[j] = d;
		}
		t = r2;
		r2 = r1;
		r1 = r0;
		r0 = t;
	}
	d = r1[nb];
	free(row);
	return d;
}

const char *cb_suggest(const char *word, const char *const *words, size_t n)
{
	size_t len = strlen(word), limit = len <= 3 ? 1 : len <= 6 ? 2 : 3, best = (size_t)-1, i;
	const char *near = NULL, *prefix_of = NULL;
	size_t prefixes = 0;

	for (i = 0; i < n; i++) {
		size_t d;
		if (strcmp(word, words[i]) == 0)
			return NULL;
		d = cb_edit_distance(word, words[i]);
		if (d <= limit && d < best) {
			best = d;
			near = words[i];
		}
		if (len >= 3 && strncmp(words[i], word, len) == 0) {
			prefixes++;
			prefix_of = words[i];
		}
	}
	return near ? near : prefixes == 1 ? prefix_of : NULL;
}
