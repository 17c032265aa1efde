/* cmd/verify.c: `caliber verify RUN_ROOT [--key PUB.pem]`, the seal of a
 * run root checked again: every file that changed, is missing or is extra,
 * the seal's own digest, and with --key its signature. */
#include <stdio.h>

#include "cmd.h"
#include "opts.h"
#include "seal/seal.h"
#include "seal/sign.h"

static void print_list(const char *what, char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		printf("%s: %s\n", what, v[i]);
}

/* The signature of root's seal, printed in its one line when there is
 * one (cb_seal_signature_check). */
static int check_signature(const char *root, const char *pub, struct cb_err *err)
{
	char line[CB_ERR_MAX];

	if (cb_seal_signature_check(root, pub, line, sizeof(line), err) < 0)
		return -1;
	if (line[0])
		printf("%s\n", line);
	return 0;
}

static const char verify_about[] =
	"Recompute the seal of a run root: every file listed in SHA256SUMS is\n"
	"hashed again. Prints each file that changed, is missing or is extra, every\n"
	"symlink and special file (never followed), and for a run sealed in format\n"
	"2 (with SEAL) every folder that was not there when it was sealed and\n"
	"whether lines were removed from SHA256SUMS; a run sealed in format 1\n"
	"(no SEAL) holds only when its run.json names calibers from before SEAL\n"
	"existed (else SEAL was deleted with its line). Then the seal's own digest\n"
	"(SHA-256 of SHA256SUMS): record it elsewhere to anchor the run. With --key\n"
	"PUB.pem (an Ed25519 public key, PEM) the signature SHA256SUMS.sig that\n"
	"`caliber run --sign-key` wrote must hold for that key. Exit 0 when the seal\n"
	"(and with --key, its signature) holds, 6 when it does not.";

int cmd_verify(int argc, const char **argv, struct cb_err *err)
{
	struct cb_verify_report rep;
	struct cb_args args = CB_ARGS_INIT;
	const char *key = NULL;
	char what[512];
	const struct cb_opt opts[] = {
		{ "key", CB_OPT_PATH, &key, "PUB.pem", "the public key the seal's signature must hold for" },
		{ NULL, 0, NULL, NULL, NULL }
	};
	const struct cb_cmd_spec spec = { "verify", "RUN_ROOT [--key PUB.pem]", verify_about, opts, 1, 1 };
	struct cb_err sig_err = CB_ERR_INIT;
	char fp[CB_SHA256_HEX];
	int rc = cb_parse_opts(&spec, argc, argv, &args, err), sig_rc;

	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	/* A key that cannot be read is a bad command, found before the work. */
	if (key && cb_key_fingerprint(key, fp, err) < 0) {
		cb_prefix(err, "--key");
		cb_args_release(&args);
		return CB_EXIT_FAIL;
	}
	rc = cb_verify(args.pos[0], &rep, err);
	if (rc < 0) {
		cb_args_release(&args);
		return CB_EXIT_FAIL;
	}
	print_list("changed", rep.changed, rep.nchanged);
	print_list("missing", rep.missing, rep.nmissing);
	print_list("extra", rep.extra, rep.nextra);
	print_list("symlink", rep.links, rep.nlinks);
	print_list("special file", rep.specials, rep.nspecials);
	print_list("sums", rep.sums, rep.nsums);
	printf("seal: format %d, SHA256SUMS sha256 %s\n", rep.format, rep.digest);
	sig_rc = check_signature(args.pos[0], key, &sig_err);
	if (!cb_verify_holds(&rep)) {
		if (sig_rc < 0)
			printf("signature: %s\n", sig_err.msg);
		cb_verify_describe(&rep, what, sizeof(what));
		cb_fail(err, "%s: seal does not hold: %s", args.pos[0], what);
		rc = CB_EXIT_VERIFY;
	} else if (sig_rc < 0) {
		*err = sig_err;
		rc = CB_EXIT_VERIFY;
	} else {
		printf("verify: %s: seal holds (%zu files)\n", args.pos[0], rep.nfiles);
		rc = CB_EXIT_OK;
	}
	cb_verify_report_release(&rep);
	cb_args_release(&args);
	return rc;
}
