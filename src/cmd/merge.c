/* cmd/merge.c: `caliber merge SHARD... --output-root DIR`, sealed shards
 * of one frozen campaign joined into one sealed run (docs/design.md section 16); the
 * work is merge.h's. */
#include "cmd.h"
#include "run/merge.h"
#include "opts.h"

static const char merge_about[] =
	"Join the sealed shards of one frozen campaign (caliber run --shard K/N)\n"
	"into one sealed run root. Before anything is written, every shard must be\n"
	"sealed and complete, from the same manifest and task matrix (by hash),\n"
	"given once, holding the tasks the matrix deals it, and none of 1..N may be\n"
	"missing; --output-root must not exist. Each shard's seal is verified in\n"
	"the read that copies it. The merged run holds every task as its shard\n"
	"wrote it, shards/<K>/ with each shard's campaign.json, run.json and\n"
	"SHA256SUMS, a campaign receipt naming every shard with its host, device\n"
	"and times, and the verdict matrix a serial run of the matrix gives; then\n"
	"it is sealed. Anything in a shard that its deal does not name (another\n"
	"task's folder, a file no run writes) is refused. With --key PUB.pem every\n"
	"shard's signature (SHA256SUMS.sig) must hold for that key; each shard's\n"
	"signature is kept in shards/<K>/, and --sign-key KEY.pem signs the merged\n"
	"seal. verify, reaccount and report read it like any run.\n"
	"Exit status: 0 when merged and sealed; 1 when refused (nothing written).";

int cmd_merge(int argc, const char **argv, struct cb_err *err)
{
	/* Each option is bound straight into the struct cb_merge takes. */
	struct cb_merge_opts o = { .argc = argc, .argv = argv };
	struct cb_args args = CB_ARGS_INIT;
	const struct cb_opt opts[] = {
		{ .name = "output-root", .kind = CB_OPT_PATH, .dst = &o.output, .arg = "DIR",
		  .help = "the merged run root to create (required)" },
		{ .name = "key", .kind = CB_OPT_PATH, .dst = &o.key, .arg = "PUB.pem",
		  .help = "the public key every shard's signature must hold for" },
		{ .name = "sign-key", .kind = CB_OPT_PATH, .dst = &o.sign_key, .arg = "KEY.pem",
		  .help = "sign the merged seal with this Ed25519 private key (PEM)" },
		{ .name = "quiet", .kind = CB_OPT_FLAG, .dst = &o.quiet, .help = "no progress output" },
		{ .name = NULL }
	};
	const struct cb_cmd_spec spec = { "merge", "SHARD_ROOT... --output-root DIR [--key PUB.pem] [--sign-key KEY.pem]", merge_about, opts, 1,
					  (size_t)-1 };
	int rc = cb_parse_opts(&spec, argc, argv, &args, err);

	if (rc)
		return rc > 0 ? CB_EXIT_OK : CB_EXIT_USAGE;
	if (!o.output) {
		cb_fail(err, "--output-root is required");
		rc = CB_EXIT_USAGE;
	} else {
		o.shards = args.pos;
		o.nshards = args.npos;
		rc = cb_merge(&o, err) < 0 ? CB_EXIT_FAIL : CB_EXIT_OK;
	}
	cb_args_release(&args);
	return rc;
}
