/* cmd/pin.c: `caliber pin TEMPLATE -o MANIFEST --compiler DIR [--cell
 * NAME=DIR ...] --corpus DIR`, a manifest's pins filled from real trees
 * (pin.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "base/fsutil.h"
#include "seal/guard.h"
#include "base/jsonio.h"
#include "opts.h"
#include "campaign/pin.h"

static const char pin_about[] =
	"Fill every pin of a manifest from the trees it names, and write the\n"
	"manifest: sources.compiler from --compiler DIR, sources.corpus from\n"
	"--corpus DIR, sources.harness from caliber itself, and each cell's own\n"
	"compiler. A tree_sha256 is the tree's digest (caliber digest); a commit is\n"
	"the HEAD of the git checkout the tree lies in, which must be clean there.\n"
	"A source the template pins by commit whose tree is in no git checkout is\n"
	"pinned by tree_sha256 instead (said on stdout). The harness is the commit\n"
	"this caliber was built from where caliber's tree is a checkout, else that\n"
	"tree's digest (an installed caliber).\n"
	"--cell NAME=DIR gives cell NAME a compiler of its own whose root is DIR\n"
	"(a campaign of two builds); a cell whose template names a compiler but no\n"
	"--cell runs the --compiler build, and the control runs the baseline's.\n"
	"A compiler's root is the package folder `import triton` resolves to in\n"
	"that build's environment (python3 -c 'import os, triton;\n"
	"print(os.path.dirname(triton.__file__))'); a corpus's root is the folder\n"
	"its benchmark and test paths are relative to. Whatever the template holds\n"
	"in a pin (a placeholder, an older pin) is replaced; everything else is\n"
	"kept. The result is checked as prepare checks a manifest before it is\n"
	"written (atomically; MANIFEST may be TEMPLATE itself).";

/* path (absolute) with links and ".." resolved (fsutil.h), kept in args;
 * NULL with err filled. */
static const char *resolved(struct cb_args *args, const char *what, const char *path, struct cb_err *err)
{
	char *r = cb_resolve(path), **owned;

	if (!r)
		return cb_fail(err, "%s %s: %s", what, path, strerror(errno)), NULL;
	owned = realloc(args->owned, (args->nowned + 1) * sizeof(*owned));
	if (!owned) {
		free(r);
		return cb_fail(err, "out of memory"), NULL;
	}
	args->owned = owned;
	args->owned[args->nowned++] = r;
	return r;
}

/* The --cell words as name and absolute root pairs, into cells (which
 * holds CB_OPT_LIST_MAX); roots are kept in args. */
static int split_cells(const struct cb_opt_list *l, struct cb_pin_cell *cells, struct cb_args *args,
		       struct cb_err *err)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		const char *eq = strchr(l->v[i], '=');
		char *name, *root = NULL, **owned;
		if (!eq || eq == l->v[i] || !eq[1])
			return cb_fail(err, "--cell: '%s' is not NAME=DIR", l->v[i]);
		name = strndup(l->v[i], (size_t)(eq - l->v[i]));
		owned = realloc(args->owned, (args->nowned + 2) * sizeof(*owned));
		if (!name || !owned) {
			free(name);
			return cb_fail(err, "out of memory");
		}
		args->owned = owned;
		args->owned[args->nowned++] = name;
		if (cb_absolute(eq + 1, &root, err) < 0)
			return cb_prefix(err, "--cell %s", name);
		args->owned[args->nowned++] = root;
		cells[i] = (struct cb_pin_cell){ name, root };
	}
	return 0;
}

int cmd_pin(int argc, const char **argv, struct cb_err *err)
{
	const struct cb_guard g = { "--output", NULL, NULL };
	const char *output = NULL, *compiler = NULL, *corpus = NULL;
	struct cb_opt_list cell_words = { { NULL }, 0 };
	struct cb_pin_cell cells[CB_OPT_LIST_MAX];
	struct cb_pin_opts o;
	struct cb_args args = CB_ARGS_INIT;
	struct cb_buf log = CB_BUF_INIT;
	int allow_dirty = 0, rc;
	size_t i;
	json_t *doc = NULL;
	char *text = NULL, *line, *nl;
	const struct cb_opt opts[] = {
		{ "output", CB_OPT_PATH, &output, "MANIFEST", "the pinned manifest to write (required)" },
		{ "compiler", CB_OPT_PATH, &compiler, "DIR", "sources.compiler's root, as run's --build-root (required)" },
		{ "corpus", CB_OPT_PATH, &corpus, "DIR", "sources.corpus's root, as run's --corpus (required)" },
		{ "cell", CB_OPT_LIST, &cell_words, "NAME=DIR", "cell NAME runs its own compiler, rooted at DIR (repeatable)" },
		{ "allow-dirty-harness", CB_OPT_FLAG, &allow_dirty, NULL,
		  "pin the commit of a caliber built from a dirty tree (run with it too)" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "pin", "TEMPLATE -o MANIFEST --compiler DIR [--cell NAME=DIR ...] --corpus DIR",
					  pin_about, opts, 1, 1 };

	rc = cb_parse_opts(&spec, argc, argv, &args, err);
	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	rc = CB_EXIT_USAGE;
	if (!output || !compiler || !corpus) {
		cb_fail(err, "%s is required", !output ? "-o MANIFEST" : !compiler ? "--compiler DIR" : "--corpus DIR");
		goto out;
	}
	if (split_cells(&cell_words, cells, &args, err) < 0)
		goto out;
	rc = CB_EXIT_FAIL;
	/* The trees are named as they are, links and ".." resolved: a root is
	 * written into the manifest. */
	if (!(compiler = resolved(&args, "--compiler", compiler, err)) || !(corpus = resolved(&args, "--corpus", corpus, err)))
		goto out;
	for (i = 0; i < cell_words.n; i++)
		if (!(cells[i].root = resolved(&args, "--cell", cells[i].root, err)))
			goto out;
	o = (struct cb_pin_opts){ compiler, corpus, cells, cell_words.n, allow_dirty };
	if (!(doc = cb_json_load_file(args.pos[0], err)))
		goto out;
	if (cb_pin(doc, &o, &log, err) < 0) {
		cb_prefix(err, "%s", args.pos[0]);
		goto out;
	}
	if (!(text = cb_pin_text(doc, args.pos[0], err)) || cb_guard_check(&g, output, err) < 0 ||
	    cb_write_atomic(output, text, strlen(text), 0644, err) < 0)
		goto out;
	for (line = log.data; line && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		printf("pin: %.*s\n", (int)(nl - line), line);
	}
	printf("pin: wrote %s\n", output);
	rc = CB_EXIT_OK;
out:
	free(text);
	json_decref(doc);
	cb_buf_release(&log);
	cb_args_release(&args);
	return rc;
}
