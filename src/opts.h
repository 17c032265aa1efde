/* opts.h: one table per command describes its options, its usage and its
 * help text; one routine parses argv against it (fio's option table idea). */
#ifndef CB_OPTS_H
#define CB_OPTS_H

#include <stddef.h>

#include "caliber.h"

enum cb_opt_kind {
	CB_OPT_FLAG,   /* int *: set to 1 */
	CB_OPT_STR,    /* const char **: points into argv */
	CB_OPT_INT     /* long long *: decimal, checked */
};

struct cb_opt {
	const char *name;        /* long name without the dashes */
	enum cb_opt_kind kind;
	void *dst;
	const char *arg;         /* metavariable shown in help, e.g. "DIR" */
	const char *help;
};

struct cb_cmd_spec {
	const char *name;        /* command name, e.g. "prepare" */
	const char *usage;       /* everything after "caliber <name> " */
	const char *about;       /* what it does, shown by --help */
	const struct cb_opt *opts;   /* terminated by an entry with name NULL */
	size_t min_pos, max_pos;     /* positional arguments allowed */
};

/* Parse argv (argv[0] is the command name). `-o` is accepted for
 * `--output` in every command that has an "output" option. Positional arguments are
 * returned in pos (borrowed pointers into argv; the array is the caller's to
 * free). Returns 0 to go on, 1 when --help was printed (exit 0), -1 on a bad
 * command line. */
int cb_parse_opts(const struct cb_cmd_spec *spec, int argc, char **argv,
		  char ***pos, size_t *npos, struct cb_err *err);

/* Print the help text of spec to stdout. */
void cb_print_help(const struct cb_cmd_spec *spec);

#endif
