/* home.c: finding caliber's own tree (home.h). */
#include "home.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"

/* Whether dir looks like caliber's tree. */
static int is_home(const char *dir)
{
	char *a = cb_path_join(dir, "backends"), *b = cb_path_join(dir, "python/caliber_pytest");
	int r = a && b && cb_is_dir(a) && cb_is_dir(b);

	free(a);
	free(b);
	return r;
}

/* Where the search for caliber's tree ended: 1 found (or CALIBER_HOME), 0
 * not found ("." is used), -1 not searched yet. */
static int home_found = -1;

const char *cb_home(void)
{
	static char home[PATH_MAX];
	char exe[PATH_MAX];
	const char *env = getenv("CALIBER_HOME");
	ssize_t n;
	int up;

	if (home[0])
		return home;
	home_found = 1;
	if (env && *env) {
		snprintf(home, sizeof(home), "%s", env);
		return home;
	}
	/* The folders above the binary: a checkout (caliber, build/normal/caliber)
	 * holds the tree itself, an installed prefix (bin/caliber) holds it in
	 * share/caliber. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		for (up = 0; up < 4; up++) {
			char *slash = strrchr(exe, '/'), *share;
			if (!slash || slash == exe)
				break;
			*slash = '\0';
			if (is_home(exe)) {
				snprintf(home, sizeof(home), "%s", exe);
				return home;
			}
			share = cb_path_join(exe, "share/caliber");
			if (share && is_home(share) && strlen(share) < sizeof(home)) {
				snprintf(home, sizeof(home), "%s", share);
				free(share);
				return home;
			}
			free(share);
		}
	}
	home_found = 0;
	snprintf(home, sizeof(home), ".");
	return home;
}

int cb_home_found(void)
{
	cb_home();
	return home_found == 1;
}
