/* opts.c: the generic option parser behind every command. */
#include "opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cb_print_help(const struct cb_cmd_spec *spec)
{
	const struct cb_opt *o;

	printf("usage: caliber %s %s\n\n%s\n", spec->name, spec->usage, spec->about);
	if (spec->opts && spec->opts->name) {
		printf("\noptions:\n");
		for (o = spec->opts; o->name; o++) {
			char left[64];
			snprintf(left, sizeof(left), "%s--%s%s%s", strcmp(o->name, "output") ? "" : "-o, ",
				 o->name, o->arg ? " " : "", o->arg ? o->arg : "");
			printf("  %-26s %s\n", left, o->help);
		}
	}
	printf("  %-26s %s\n", "--help", "show this help and exit");
}

static const struct cb_opt *find_opt(const struct cb_opt *opts, const char *name, size_t n)
{
	const struct cb_opt *o;

	for (o = opts; o && o->name; o++)
		if (strlen(o->name) == n && strncmp(o->name, name, n) == 0)
			return o;
	return NULL;
}

/* Store value into the option's destination, checking integers. */
static int set_opt(const struct cb_opt *o, const char *value, struct cb_err *err)
{
	char *end;
	long long v;

	switch (o->kind) {
	case CB_OPT_FLAG:
		*(int *)o->dst = 1;
		return 0;
	case CB_OPT_STR:
		*(const char **)o->dst = value;
		return 0;
	case CB_OPT_INT:
		errno = 0;
		v = strtoll(value, &end, 10);
		if (errno || end == value || *end)
			return cb_fail(err, "--%s: '%s' is not an integer", o->name, value);
		*(long long *)o->dst = v;
		return 0;
	}
	return cb_fail(err, "--%s: unknown option kind", o->name);
}

int cb_parse_opts(const struct cb_cmd_spec *spec, int argc, char **argv,
		  char ***pos, size_t *npos, struct cb_err *err)
{
	char **p = calloc((size_t)argc + 1, sizeof(*p));
	size_t np = 0;
	int i, only_pos = 0;

	if (!p)
		return cb_fail(err, "out of memory");
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!only_pos && strcmp(a, "--") == 0) {
			only_pos = 1;
			continue;
		}
		/* -o is the one short option: --output, in every command that has one. */
		if (!only_pos && strcmp(a, "-o") == 0 && find_opt(spec->opts, "output", 6))
			a = "--output";
		if (!only_pos && strncmp(a, "--", 2) == 0) {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t n = eq ? (size_t)(eq - name) : strlen(name);
			const struct cb_opt *o;

			if (n == 4 && strncmp(name, "help", 4) == 0) {
				cb_print_help(spec);
				free(p);
				return 1;
			}
			o = find_opt(spec->opts, name, n);
			if (!o) {
				free(p);
				return cb_fail(err, "unknown option '%.*s' (see caliber %s --help)",
					       (int)(n + 2), a, spec->name);
			}
			if (o->kind == CB_OPT_FLAG) {
				if (eq) {
					free(p);
					return cb_fail(err, "--%s takes no value", o->name);
				}
				set_opt(o, NULL, err);
				continue;
			}
			if (!eq && i + 1 >= argc) {
				free(p);
				return cb_fail(err, "--%s needs a value (%s)", o->name, o->arg);
			}
			if (set_opt(o, eq ? eq + 1 : argv[++i], err) < 0) {
				free(p);
				return -1;
			}
			continue;
		}
		p[np++] = argv[i];
	}
	if (np < spec->min_pos || np > spec->max_pos) {
		free(p);
		return cb_fail(err, "usage: caliber %s %s", spec->name, spec->usage);
	}
	*pos = p;
	*npos = np;
	return 0;
}
