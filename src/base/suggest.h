/* suggest.h: "did you mean ...?" for a word that names nothing: the
 * nearest of the words that do, when it is near enough to be a typo. */
#ifndef CB_SUGGEST_H
#define CB_SUGGEST_H

#include <stddef.h>

/* The edit distance of a and b: insertions, deletions, substitutions and
 * swaps of two neighbours, one each (optimal string alignment); letters
 * compared as they are. */
size_t cb_edit_distance(const char *a, const char *b);

/* The word of words[0..n) that word most likely misspells: the nearest by
 * cb_edit_distance within a distance that grows with the word's length
 * (1 up to 3 letters, 2 up to 6, else 3), or else the one word that it
 * begins (a prefix of at least 3 letters). NULL when none qualifies or
 * word is one of them; the first wins a tie. Borrowed from words. */
const char *cb_suggest(const char *word, const char *const *words, size_t n);

#endif
