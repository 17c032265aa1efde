/* opts.c: the generic option parser behind every command. */
#include "opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/suggest.h"

void cb_print_help(const struct cb_cmd_spec *spec)
{
	const struct cb_opt *o;

	printf("usage: caliber %s %s\n\n%s\n", spec->name, spec->usage, spec->about);
	printf("\noptions:\n");
	for (o = spec->opts; o && o->name; o++) {
		char left[64];
		snprintf(left, sizeof(left), "%s--%s%s%s", strcmp(o->name, "output") ? "" : "-o, ",
			 o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		printf("  %-26s %s\n", left, o->help);
	}
	printf("  %-26s %s\n", "-h, --help", "show this help and exit");
	if (spec->max_pos)
		printf("\nPaths may be relative to the current directory; caliber makes them absolute\n"
		       "before it starts anything.\n");
}

/* Text for roff: backslashes and hyphens escaped, and a line that would
 * start with a control character ('.' or '\'') guarded. */
static void roff_text(FILE *f, const char *s, size_t n, int bol)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (bol && (s[i] == '.' || s[i] == '\''))
			fputs("\\&", f);
		bol = 0;
		if (s[i] == '\\')
			fputs("\\e", f);
		else if (s[i] == '-')
			fputs("\\-", f);
		else
			fputc(s[i], f);
	}
}

/* The first sentence of an about text, for the NAME line: up to the
 * first ':' or '. ' outside parentheses, its line breaks as blanks. */
static void roff_summary(FILE *f, const char *about)
{
	const char *p;
	int depth = 0;

	for (p = about; *p; p++) {
		depth += (*p == '(') - (*p == ')');
		if (!depth && (*p == ':' || (*p == '.' && (p[1] == ' ' || p[1] == '\n' || !p[1]))))
			break;
	}
	for (; about < p; about++) {
		if (*about == '\n')
			fputc(' ', f);
		else
			roff_text(f, about, 1, 0);
	}
}

void cb_print_man(const struct cb_cmd_spec *spec, const char *version)
{
	const struct cb_opt *o;
	const char *line = spec->about, *c;
	int literal = 0;

	printf(".TH CALIBER\\-");
	for (c = spec->name; *c; c++)
		putchar(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
	printf(" 1 \"\" \"caliber %s\" \"caliber manual\"\n.SH NAME\ncaliber\\-%s \\- ", version, spec->name);
	roff_summary(stdout, spec->about);
	printf("\n.SH SYNOPSIS\n.B caliber %s\n", spec->name);
	roff_text(stdout, spec->usage, strlen(spec->usage), 1);
	printf("\n.SH DESCRIPTION\n");
	/* The about text as --help shows it: blank lines end paragraphs,
	 * indented lines (lists) are kept as they are laid out. */
	while (*line) {
		size_t n = strcspn(line, "\n");
		int indented = line[0] == ' ';
		if (!n) {
			printf("%s.PP\n", literal ? ".fi\n" : "");
			literal = 0;
		} else {
			if (indented != literal)
				printf("%s\n", indented ? ".nf" : ".fi");
			literal = indented;
			roff_text(stdout, line, n, 1);
			putchar('\n');
		}
		line += n + (line[n] == '\n');
	}
	if (literal)
		printf(".fi\n");
	printf(".SH OPTIONS\n");
	for (o = spec->opts; o && o->name; o++) {
		printf(".TP\n.B ");
		if (strcmp(o->name, "output") == 0)
			printf("\\-o, ");
		printf("\\-\\-");
		roff_text(stdout, o->name, strlen(o->name), 0);
		if (o->arg) {
			printf(" \\fI");
			roff_text(stdout, o->arg, strlen(o->arg), 0);
			printf("\\fR");
		}
		putchar('\n');
		roff_text(stdout, o->help, strlen(o->help), 1);
		putchar('\n');
	}
	printf(".TP\n.B \\-h, \\-\\-help\nshow this help and exit\n");
	if (spec->max_pos)
		printf(".PP\nPaths may be relative to the current directory; caliber makes them absolute\n"
		       "before it starts anything.\n");
	printf(".SH SEE ALSO\n.BR caliber (1);\ndocs/design.md (the design, by numbered section) and docs/formats.md\n"
	       "(every file caliber reads or writes) in caliber's documentation.\n");
}

static const struct cb_opt *find_opt(const struct cb_opt *opts, const char *name, size_t n)
{
	const struct cb_opt *o;

	for (o = opts; o && o->name; o++)
		if (strlen(o->name) == n && strncmp(o->name, name, n) == 0)
			return o;
	return NULL;
}

/* Keep s in args (it is freed by cb_args_release); returns s, or NULL
 * (s freed) when out of memory. */
static char *keep(struct cb_args *args, char *s)
{
	char **v;

	if (!s)
		return NULL;
	v = realloc(args->owned, (args->nowned + 1) * sizeof(*v));
	if (!v) {
		free(s);
		return NULL;
	}
	args->owned = v;
	args->owned[args->nowned++] = s;
	return s;
}

/* The absolute form of path, kept in args; NULL with err filled. */
static const char *absolute(struct cb_args *args, const char *what, const char *path, struct cb_err *err)
{
	char *abs = NULL;

	if (cb_absolute(path, &abs, err) < 0) {
		cb_prefix(err, "%s", what);
		return NULL;
	}
	if (!keep(args, abs)) {
		cb_fail(err, "out of memory");
		return NULL;
	}
	return abs;
}

/* cmd with every word holding a '/' made absolute, words joined by one space. */
static const char *absolute_words(struct cb_args *args, const char *what, const char *cmd, struct cb_err *err)
{
	char *copy = strdup(cmd), *tok, *save = NULL, *out = NULL;
	size_t len = 0;

	if (!copy)
		goto oom;
	for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *word = NULL, *grown;
		if (strchr(tok, '/') && cb_absolute(tok, &word, err) < 0) {
			cb_prefix(err, "%s", what);
			free(copy);
			free(out);
			return NULL;
		}
		grown = realloc(out, len + strlen(word ? word : tok) + 2);
		if (!grown) {
			free(word);
			goto oom;
		}
		out = grown;
		len += (size_t)sprintf(out + len, "%s%s", len ? " " : "", word ? word : tok);
		free(word);
	}
	free(copy);
	if (!out)
		return cb_fail(err, "%s: empty command", what), NULL;
	if (!keep(args, out))
		return cb_fail(err, "out of memory"), NULL;
	return out;
oom:
	free(copy);
	free(out);
	cb_fail(err, "out of memory");
	return NULL;
}

/* Store value into the option's destination: integers checked, paths made
 * absolute. */
static int set_opt(const struct cb_opt *o, const char *value, struct cb_args *args, struct cb_err *err)
{
	char what[64], *end;
	long long v;

	snprintf(what, sizeof(what), "--%s", o->name);
	switch (o->kind) {
	case CB_OPT_FLAG:
		*(int *)o->dst = 1;
		return 0;
	case CB_OPT_STR:
		*(const char **)o->dst = value;
		return 0;
	case CB_OPT_PROG:
		/* A bare name is looked up in PATH; a program named by its path
		 * is a path like any other. */
		if (!strchr(value, '/')) {
			*(const char **)o->dst = value;
			return 0;
		}
		return (*(const char **)o->dst = absolute(args, what, value, err)) ? 0 : -1;
	case CB_OPT_PATH:
		return (*(const char **)o->dst = absolute(args, what, value, err)) ? 0 : -1;
	case CB_OPT_CMD:
		return (*(const char **)o->dst = absolute_words(args, what, value, err)) ? 0 : -1;
	case CB_OPT_LIST: {
		struct cb_opt_list *l = o->dst;
		if (l->n >= CB_OPT_LIST_MAX)
			return cb_fail(err, "--%s: at most %d times", o->name, CB_OPT_LIST_MAX);
		l->v[l->n++] = value;
		return 0;
	}
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

void cb_args_release(struct cb_args *args)
{
	size_t i;

	for (i = 0; i < args->nowned; i++)
		free(args->owned[i]);
	free(args->owned);
	free(args->pos);
	*args = (struct cb_args)CB_ARGS_INIT;
}

/* Refuse the option word a (its first n bytes: "--name" without any
 * "=value", or "-X"), naming the option of spec it most likely misspells:
 * the short ones (-o where there is --output, -h) and every --name. */
static int unknown_option(const struct cb_cmd_spec *spec, const char *a, size_t n, struct cb_err *err)
{
	const char *words[64];
	char longs[62][40], word[64];
	const struct cb_opt *o;
	const char *near;
	size_t k = 0, l = 0;

	if (find_opt(spec->opts, "output", 6))
		words[k++] = "-o";
	words[k++] = "-h";
	words[k++] = "--help";
	for (o = spec->opts; o && o->name && l < sizeof(longs) / sizeof(longs[0]); o++) {
		snprintf(longs[l], sizeof(longs[l]), "--%s", o->name);
		words[k++] = longs[l++];
	}
	snprintf(word, sizeof(word), "%.*s", (int)n, a);
	near = cb_suggest(word, words, k);
	if (near)
		return cb_fail(err, "unknown option '%s' (did you mean %s? see caliber %s --help)", word, near,
			       spec->name);
	return cb_fail(err, "unknown option '%s' (see caliber %s --help)", word, spec->name);
}

/* One argument that names an option (a = "--name" or "--name=value");
 * *i advances past a value taken from the next argument. Returns 0, 1 for
 * --help, -1 on error. */
static int take_option(const struct cb_cmd_spec *spec, const char *a, int argc, const char **argv, int *i,
		       struct cb_args *args, struct cb_err *err)
{
	const char *name = a + 2, *eq = strchr(name, '=');
	size_t n = eq ? (size_t)(eq - name) : strlen(name);
	const struct cb_opt *o;

	if (n == 4 && strncmp(name, "help", 4) == 0) {
		cb_print_help(spec);
		return 1;
	}
	if (n == 3 && strncmp(name, "man", 3) == 0) {
		/* Hidden: the page `make man` writes (man/caliber-NAME.1). */
		cb_print_man(spec, cb_version());
		return 1;
	}
	o = find_opt(spec->opts, name, n);
	if (!o)
		return unknown_option(spec, a, n + 2, err);
	if (o->kind == CB_OPT_FLAG) {
		if (eq)
			return cb_fail(err, "--%s takes no value", o->name);
		return set_opt(o, NULL, args, err);
	}
	if (!eq && *i + 1 >= argc)
		return cb_fail(err, "--%s needs a value (%s)", o->name, o->arg);
	return set_opt(o, eq ? eq + 1 : argv[++*i], args, err);
}

int cb_parse_opts(const struct cb_cmd_spec *spec, int argc, const char **argv, struct cb_args *args,
		  struct cb_err *err)
{
	return cb_parse_opts_words(spec, spec->max_pos, argc, argv, args, err);
}

int cb_parse_opts_words(const struct cb_cmd_spec *spec, size_t word_from, int argc, const char **argv,
			struct cb_args *args, struct cb_err *err)
{
	int i, only_pos = 0, rc = 0;

	*args = (struct cb_args)CB_ARGS_INIT;
	args->pos = calloc((size_t)argc + 1, sizeof(*args->pos));
	if (!args->pos)
		return cb_fail(err, "out of memory");
	for (i = 1; i < argc && rc == 0; i++) {
		const char *a = argv[i];
		if (!only_pos && strcmp(a, "--") == 0) {
			only_pos = 1;
			continue;
		}
		/* The short options: -h for --help everywhere, -o for --output
		 * in every command that has one. */
		if (!only_pos && strcmp(a, "-h") == 0)
			a = "--help";
		else if (!only_pos && strcmp(a, "-o") == 0 && find_opt(spec->opts, "output", 6))
			a = "--output";
		if (!only_pos && strncmp(a, "--", 2) == 0) {
			rc = take_option(spec, a, argc, argv, &i, args, err);
			continue;
		}
		/* Any other word that starts with a dash is an option caliber
		 * does not have (a path that starts with one follows "--"). */
		if (!only_pos && a[0] == '-' && a[1]) {
			rc = unknown_option(spec, a, strlen(a), err);
			continue;
		}
		if (args->npos >= word_from)
			args->pos[args->npos++] = a;
		else if (!(args->pos[args->npos] = absolute(args, "argument", a, err)))
			rc = -1;
		else
			args->npos++;
	}
	if (rc == 0 && (args->npos < spec->min_pos || args->npos > spec->max_pos))
		rc = cb_fail(err, "usage: caliber %s %s", spec->name, spec->usage);
	if (rc != 0)
		cb_args_release(args);
	return rc;
}

int cb_opt_format_json(const char *format, int *json, struct cb_err *err)
{
	*json = strcmp(format, "json") == 0;
	if (!*json && strcmp(format, "text") != 0)
		return cb_fail(err, "--format: '%s' is not one of text, json", format);
	return 0;
}

/* out to stdout; CB_EXIT_FAIL when it is NULL (err already says why) or
 * cannot be written. Frees out. */
static int print_out(char *out, struct cb_err *err)
{
	int rc = CB_EXIT_FAIL;

	if (out && fputs(out, stdout) != EOF)
		rc = CB_EXIT_OK;
	else if (out)
		cb_fail(err, "stdout: write failed");
	free(out);
	return rc;
}

int cb_print_json(json_t *j, struct cb_err *err)
{
	char *out = j ? cb_json_dumps(j, err) : NULL;

	if (!j)
		cb_fail(err, "out of memory");
	json_decref(j);
	return print_out(out, err);
}

int cb_print_buf(struct cb_buf *b, struct cb_err *err)
{
	char *out = cb_buf_detach(b, NULL);

	if (!out)
		cb_fail(err, "out of memory");
	cb_buf_release(b);
	return print_out(out, err);
}
