/* bundle.c: the HTML report and the files it links, in one folder
 * (bundle.h). */
#include "bundle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "seal/guard.h"
#include "base/sha.h"

/* Whether every component of the relative path rel is a name: none
 * empty, "." or "..", so that it stays inside the bundle. */
static int safe_components(const char *rel)
{
	while (*rel) {
		size_t n = strcspn(rel, "/");
		if (n == 0 || (n == 1 && rel[0] == '.') || (n == 2 && rel[0] == '.' && rel[1] == '.'))
			return 0;
		rel += n;
		if (*rel == '/' && !*++rel)
			return 0;
	}
	return 1;
}

/* The path an href of the page names (its n bytes percent-decoded), or
 * NULL when it is no link into the bundle's folders: a fragment, or a
 * path that leaves them. */
static char *link_path(const char *href, size_t n)
{
	char *out = malloc(n + 1), *p = out;
	size_t i;

	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		if (href[i] == '%' && i + 2 < n && cb_hex_value(href[i + 1]) >= 0 && cb_hex_value(href[i + 2]) >= 0) {
			*p++ = (char)(cb_hex_value(href[i + 1]) * 16 + cb_hex_value(href[i + 2]));
			i += 2;
		} else {
			*p++ = href[i];
		}
	}
	*p = '\0';
	if ((size_t)(p - out) != strlen(out) || !safe_components(out) ||
	    (strncmp(out, CB_BUNDLE_RUN "/", strlen(CB_BUNDLE_RUN) + 1) != 0 &&
	     strncmp(out, CB_BUNDLE_DERIVED "/", strlen(CB_BUNDLE_DERIVED) + 1) != 0)) {
		free(out);
		return NULL;
	}
	return out;
}

/* Copy the file the bundle path rel stands for (under the run root or the
 * derived folder of rp) to tmp/rel, once. */
static int copy_linked(const struct cb_report *rp, const char *tmp, const char *rel, size_t *nfiles,
		       struct cb_err *err)
{
	int derived = strncmp(rel, CB_BUNDLE_DERIVED "/", strlen(CB_BUNDLE_DERIVED) + 1) == 0;
	const char *rest = rel + strlen(derived ? CB_BUNDLE_DERIVED : CB_BUNDLE_RUN) + 1;
	char *src = cb_path_join(derived ? rp->v->derived_dir : rp->v->root, rest), *dst = cb_path_join(tmp, rel);
	char *data = NULL, *slash;
	size_t len;
	int rc = -1;

	if (!src || !dst) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (cb_exists(dst)) {
		rc = 0;
		goto out;
	}
	slash = strrchr(dst, '/');
	*slash = '\0';
	if (cb_mkdir_p(dst, 0755, err) < 0)
		goto out;
	*slash = '/';
	if (cb_read_file(src, &data, &len, err) < 0 || cb_write_atomic(dst, data, len, 0644, err) < 0)
		goto out;
	(*nfiles)++;
	rc = 0;
out:
	free(data);
	free(src);
	free(dst);
	return rc;
}

/* Every file the page links, copied into tmp. */
static int copy_links(const struct cb_report *rp, const char *html, size_t len, const char *tmp, size_t *nfiles,
		      struct cb_err *err)
{
	static const char attr[] = "<a href=\"";
	const char *p = html, *end = html + len;

	while (p < end && (p = strstr(p, attr)) != NULL) {
		const char *q;
		char *rel;
		int rc;

		p += strlen(attr);
		if (!(q = strchr(p, '"')))
			break;
		rel = link_path(p, (size_t)(q - p));
		rc = rel ? copy_linked(rp, tmp, rel, nfiles, err) : 0;
		free(rel);
		if (rc < 0)
			return -1;
		p = q;
	}
	return 0;
}

int cb_report_bundle(const struct cb_report *rp, const char *html, size_t len, const char *dir, size_t *nfiles,
		     struct cb_err *err)
{
	const struct cb_guard g = { "--bundle", rp->v->root, "a sealed run is never written to" };
	char *tmp = NULL, *page = NULL;
	struct cb_err ignored;
	int rc = -1;

	*nfiles = 0;
	if (cb_exists(dir))
		return cb_fail(err, "--bundle %s: exists; a bundle is written into a folder of its own", dir);
	if (cb_guard_mkdir_parent(&g, dir, 0755, err) < 0)
		return -1;
	if (!(tmp = cb_strdupf("%s.tmp.XXXXXX", dir))) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (!mkdtemp(tmp)) {
		cb_fail(err, "--bundle %s: cannot create it: %s", dir, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	if (!(page = cb_path_join(tmp, "report.html"))) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (copy_links(rp, html, len, tmp, nfiles, err) < 0 || cb_write_atomic(page, html, len, 0644, err) < 0)
		goto out;
	if (rename(tmp, dir) < 0) {
		cb_fail(err, "--bundle %s: cannot create it: %s", dir, strerror(errno));
		goto out;
	}
	free(tmp);
	tmp = NULL;
	rc = 0;
out:
	if (tmp)
		cb_rm_rf(tmp, &ignored);
	free(tmp);
	free(page);
	return rc;
}
