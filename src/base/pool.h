/* pool.h: run one function on several threads at once. The work that
 * dominates caliber's offline commands (hashing a run root, listing it,
 * accounting its tasks) splits into independent items; each user hands
 * them out itself (an atomic counter or a locked queue), and this only
 * starts and joins the threads. */
#ifndef CB_POOL_H
#define CB_POOL_H

#include <stddef.h>

/* How many threads cb_pool_run uses for at most `items` pieces of work:
 * one per online CPU, at most 8, at most items, at least 1. */
size_t cb_pool_size(size_t items);

/* Call fn(arg) on cb_pool_size(items) threads, the caller's among them, and
 * return when every call has returned. Threads that cannot be started are
 * done without: fn must finish the work with however many run it. */
void cb_pool_run(size_t items, void *(*fn)(void *), void *arg);

#endif
