/* cbtest: what CLI tests need that caliber deliberately has no command for
 * (a run root is sealed only by `caliber run`). Uses caliber's own library.
 *
 *   cbtest seal DIR          seal DIR as run does (SHA256SUMS, read-only)
 *   cbtest mkrun SPEC ROOT   build a sealed run root from a spec (tests/lib/runroot.h)
 */
#include <stdio.h>
#include <string.h>

#include "runroot.h"
#include "seal/seal.h"

int main(int argc, char **argv)
{
	struct cb_err err = CB_ERR_INIT;

	if (argc == 3 && strcmp(argv[1], "seal") == 0) {
		if (cb_seal(argv[2], &err) < 0) {
			fprintf(stderr, "cbtest: seal: %s\n", err.msg);
			return 1;
		}
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "mkrun") == 0) {
		if (rr_build(argv[2], argv[3], &err) < 0) {
			fprintf(stderr, "cbtest: mkrun: %s\n", err.msg);
			return 1;
		}
		return 0;
	}
	fprintf(stderr, "usage: cbtest seal DIR | cbtest mkrun SPEC ROOT\n");
	return 2;
}
