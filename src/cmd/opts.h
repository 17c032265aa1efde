/* opts.h: one table per command describes its options, its usage and its
 * help text; one routine parses argv against it (fio's option table idea).
 *
 * Paths are made absolute here, once, at the boundary (docs/design.md section 2):
 * workers change directory, so nothing caliber hands a child may be
 * relative. A command sees every path option and every positional argument
 * as an absolute path. */
#ifndef CB_OPTS_H
#define CB_OPTS_H

#include <stddef.h>

#include <jansson.h>

#include "base/buf.h"
#include "caliber.h"

enum cb_opt_kind {
	CB_OPT_FLAG,   /* int *: set to 1 */
	CB_OPT_STR,    /* const char **: points into argv */
	CB_OPT_PATH,   /* const char **: the path made absolute (owned by the cb_args) */
	CB_OPT_PROG,   /* const char **: a program; made absolute when it names a path (holds a '/'),
			* else left to the PATH lookup */
	CB_OPT_CMD,    /* const char **: a command line split on spaces; every word holding a '/' is
			* made absolute */
	CB_OPT_INT,    /* long long *: decimal, checked */
	CB_OPT_LIST    /* struct cb_opt_list *: each use adds a word, as given (pointing into argv) */
};

/* The words of an option that may be given more than once. */
#define CB_OPT_LIST_MAX 8
struct cb_opt_list {
	const char *v[CB_OPT_LIST_MAX];
	size_t n;
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
	size_t min_pos, max_pos;     /* positional arguments allowed; every one is a path */
};

/* What cb_parse_opts leaves: the positional arguments (absolute paths, or
 * words as given; see cb_parse_opts_words) and every string it allocated
 * for them and for path options. */
struct cb_args {
	const char **pos;
	size_t npos;
	char **owned;
	size_t nowned;
};

#define CB_ARGS_INIT { NULL, 0, NULL, 0 }

/* Parse argv (argv[0] is the command name). `-h` is `--help`, and `-o` is
 * `--output` in every command that has an "output" option. Returns 0 to go
 * on, 1 when the help was printed (exit 0), -1 on a bad command line (a
 * path longer than PATH_MAX included). On 0 the caller releases args. */
int cb_parse_opts(const struct cb_cmd_spec *spec, int argc, const char **argv, struct cb_args *args,
		  struct cb_err *err);

/* cb_parse_opts for a command whose positional arguments from index
 * word_from on are words (a task name), kept exactly as given. */
int cb_parse_opts_words(const struct cb_cmd_spec *spec, size_t word_from, int argc, const char **argv,
			struct cb_args *args, struct cb_err *err);

/* Commands that print text or JSON (--format text|json): whether format
 * asks for JSON (*json), refusing any other word; and the output printed
 * to stdout, a JSON value (taken; NULL: out of memory) or a text buffer
 * (released). Each print returns CB_EXIT_OK or CB_EXIT_FAIL with err
 * filled. */
int cb_opt_format_json(const char *format, int *json, struct cb_err *err);
int cb_print_json(json_t *j, struct cb_err *err);
int cb_print_buf(struct cb_buf *b, struct cb_err *err);

/* Free what cb_parse_opts allocated; args is CB_ARGS_INIT again. */
void cb_args_release(struct cb_args *args);

/* Print the help text of spec to stdout. */
void cb_print_help(const struct cb_cmd_spec *spec);

/* Print spec as a man page (roff, man(7) macros) to stdout: NAME from the
 * first sentence of its about text, SYNOPSIS, the about text, and every
 * option of its table. `caliber CMD --man` (hidden) prints it; `make man`
 * writes man/caliber-CMD.1 with it. */
void cb_print_man(const struct cb_cmd_spec *spec, const char *version);

#endif
