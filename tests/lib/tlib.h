/* tlib.h: helpers shared by the C unit tests (cmocka). */
#ifndef TLIB_H
#define TLIB_H

#include <stddef.h>

/* Repository root: $CALIBER_ROOT, else the current directory. */
const char *tl_root(void);
/* root-relative path, in a static buffer reused by the next call. */
const char *tl_path(const char *rel);
/* Whole file, NUL-terminated; aborts the test run when unreadable. */
char *tl_slurp(const char *path, size_t *len);
/* A fresh scratch directory (removed by tl_cleanup at exit). */
const char *tl_tmpdir(void);
/* Names in dir ending in suffix, sorted; *n set. */
char **tl_glob(const char *dir, const char *suffix, size_t *n);

#endif
