/* proc_int.h: what proc.c, proc_wait.c and proc_run.c share and nothing
 * else includes: the set of children caliber spawned, and the closing and
 * reaping of a child. See each function's comment where it is defined. */
#ifndef CB_PROC_INT_H
#define CB_PROC_INT_H

#include <sys/types.h>

#include "proc.h"

/* proc.c */
int proc_know(pid_t pid);
void proc_forget(pid_t pid);
int proc_is_known(pid_t pid);
void proc_close_fd(int *fd);

/* proc_wait.c */
int proc_reap_by(struct cb_child *c, long long deadline_ms);

#endif
