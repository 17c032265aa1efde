/* pool.c: start fn on a few threads, run it on this one too, join. */
#include "pool.h"

#include <pthread.h>
#include <unistd.h>

#define CB_POOL_MAX 8

size_t cb_pool_size(size_t items)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = ncpu < 1 ? 1 : ncpu > CB_POOL_MAX ? CB_POOL_MAX : (size_t)ncpu;

	if (n > items)
		n = items ? items : 1;
	return n;
}

void cb_pool_run(size_t items, void *(*fn)(void *), void *arg)
{
	pthread_t th[CB_POOL_MAX];
	size_t n = cb_pool_size(items), started = 0, k;

	for (k = 1; k < n && pthread_create(&th[k], NULL, fn, arg) == 0; k++)
		started = k;
	fn(arg);
	for (k = 1; k <= started; k++)
		pthread_join(th[k], NULL);
}
